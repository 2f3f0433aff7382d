#pragma once
/// The per-kernel dump behind `aotc verify` (`aotc compile --dump-kernels`): every value a kernel
/// leaves in memory becomes an extra graph output of the final graph, so each target's runner
/// writes it as output_<k>.pb after the run, whatever memory (arena, device) it lives in. The
/// dump manifest maps each output file to its kernel and value. Values are exposed after the
/// fusions and before layout legalization, so fused kernels are compared at their outputs and
/// blocked (NCHWc) values come back row-major.
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/status.h"

namespace aotc::codegen {

struct DumpedValue {
  int output_index = 0;       ///< The runner's output_<k>.pb.
  std::string value;          ///< The graph value's name (the reference interpreter's, too).
  std::string node;           ///< The kernel (node of the final graph) that writes it.
  std::string op;             ///< Its op ("Fused" for fused kernels).
  std::vector<std::string> inputs;  ///< The kernel's non-constant operands, by value name.
  bool model_output = false;  ///< One of the model's own outputs.
};

/// Makes every non-constant node output of `graph` a graph output (the model's own outputs keep
/// their places first) and returns one entry per graph output, in schedule order of the kernels.
std::vector<DumpedValue> expose_kernel_outputs(Graph& graph);

/// The manifest the package carries as dump_manifest.json.
std::string dump_manifest_json(const std::vector<DumpedValue>& dumped);
/// Reads a package's dump_manifest.json back.
Expected<std::vector<DumpedValue>> read_dump_manifest(const std::string& path);

}  // namespace aotc::codegen
