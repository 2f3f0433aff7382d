// `aotc inspect`.
#include "tools/commands.h"

namespace aotc::tools {

void add_inspect_command(CLI::App& app) { app.add_subcommand("inspect", "(not yet implemented)"); }

}  // namespace aotc::tools
