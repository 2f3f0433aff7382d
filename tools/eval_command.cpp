// `aotc eval`.
#include "tools/commands.h"

namespace aotc::tools {

void add_eval_command(CLI::App& app) { app.add_subcommand("eval", "(not yet implemented)"); }

}  // namespace aotc::tools
