#pragma once
/// The command-line flags that bind graph inputs at import time (`--shape`, `--const-input`),
/// shared by the subcommands that read ONNX models, and the CLI's error exit.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "frontend/onnx_importer.h"
#include "graph/status.h"

namespace aotc::tools {

struct ImportFlags {
  std::vector<std::string> shapes;        ///< "NAME=1x3x224x224"
  std::vector<std::string> const_inputs;  ///< "NAME=FILE.pb"

  /// Registers --shape and --const-input on `cmd`.
  void add_to(CLI::App* cmd);
  /// Parses the flags and reads the --const-input files.
  Expected<frontend::ImportOptions> resolve() const;
};

/// Prints "aotc: error: MESSAGE" on one line and ends the subcommand with exit code 2 for
/// unsupported models (the conformance harness skips those) or 1 for any other error.
[[noreturn]] void fail(const Status& status);

}  // namespace aotc::tools
