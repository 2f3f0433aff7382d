// `aotc targets`.
#include "tools/commands.h"

namespace aotc::tools {

void add_targets_command(CLI::App& app) { app.add_subcommand("targets", "(not yet implemented)"); }

}  // namespace aotc::tools
