// The aotc command line. Each subcommand lives in its own file (see tools/commands.h).
#include <cstdio>
#include <new>

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
  aotc::tools::add_verify_command(app);
  aotc::tools::add_compare_command(app);
  try {
    CLI11_PARSE(app, argc, argv);
  } catch (const std::bad_alloc&) {
    // A backstop: sizes are checked before allocating (docs/robustness.md), so this is a bug.
    std::fprintf(stderr, "aotc: error: out of memory\n");
    return 1;
  }
  return 0;
}
