// `aotc opt`.
#include "tools/commands.h"

namespace aotc::tools {

void add_opt_command(CLI::App& app) { app.add_subcommand("opt", "(not yet implemented)"); }

}  // namespace aotc::tools
