// `aotc compile`.
#include "tools/commands.h"

namespace aotc::tools {

void add_compile_command(CLI::App& app) { app.add_subcommand("compile", "(not yet implemented)"); }

}  // namespace aotc::tools
