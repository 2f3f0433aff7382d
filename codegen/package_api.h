#pragma once
/// Pieces of the plain C API that every package shares, whatever its target: the #defines that
/// describe each graph input and output in include/<name>.h, and the tensor tables the runner
/// program hands to runtime_stub/aotc_runner.h.
#include <string>
#include <vector>

#include "graph/graph.h"

namespace aotc::codegen {

/// `s` in upper case (package names are C identifiers, so this gives the macro prefix).
std::string upper_identifier(std::string s);

/// Text from the model (node and value names) made safe for `//` and `/* */` comments.
std::string comment_text(const std::string& s);

/// For each value k: a comment, then <UNAME>_<KIND><k>_ONNX_DTYPE, _RANK, _DIMS and _BYTES.
/// `kind` is "input" or "output".
std::string tensor_defines(const std::string& uname, const std::string& kind,
                           const std::vector<Value*>& values);

/// The runner's aotc_tensor_desc table for the values, built from the header's defines: appends
/// its definitions to `tables` and returns the table's name ("nullptr" when there are none).
/// `table` names it: "Input" gives kInputs with dims arrays kInput0Dims, ...
std::string tensor_table(const std::string& uname, const std::string& kind,
                         const std::string& table, const std::vector<Value*>& values,
                         std::string& tables);

/// The runner main's tables of inputs and outputs (the TENSOR_TABLES, INPUTS_TABLE and
/// OUTPUTS_TABLE of the runner templates).
struct RunnerTables {
  std::string definitions;
  std::string inputs;
  std::string outputs;
};
RunnerTables runner_tables(const std::string& uname, const Graph& graph);

}  // namespace aotc::codegen
