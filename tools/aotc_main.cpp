// The aotc command line. Each subcommand lives in its own file (see tools/commands.h).
#include <CLI/CLI.hpp>

#include "tools/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"aotc: ahead-of-time compiler from ONNX models to self-contained packages per chip"};
  app.require_subcommand(1);
  aotc::tools::add_compile_command(app);
  aotc::tools::add_tune_command(app);
  aotc::tools::add_inspect_command(app);
  aotc::tools::add_targets_command(app);
  aotc::tools::add_ops_command(app);
  aotc::tools::add_eval_command(app);
  aotc::tools::add_opt_command(app);
  CLI11_PARSE(app, argc, argv);
  return 0;
}
