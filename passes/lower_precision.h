#pragma once
/// Reduced-precision storage (`aotc compile --precision fp16|bf16`, `--keep-fp32 NODE,...`): the
/// float32 values a model computes are stored at 16 bits, its float32 weights converted at
/// compile time; graph inputs and outputs stay float32 at the package boundary (a Cast at entry
/// and exit). How each kernel computes at that width is the target's (its `accumulation` facts:
/// on the NPU targets matrix sums in f32, vector math in f32 between conversions).
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/status.h"
#include "passes/passes.h"
#include "targets/target.h"

namespace aotc {

/// What `--precision` and `--keep-fp32` ask for. The API other tools build on (`aotc verify
/// --keep-fp32 auto` picks the node list): fill it in CompileOptions::precision.
struct PrecisionOptions {
  /// The storage width of float32 values: kFloat32 (no change), kFloat16 or kBFloat16.
  DType storage = DType::kFloat32;
  /// Names of ONNX nodes (as in the model) whose kernels stay float32: their float operands are
  /// converted back to float32 before them and their results to `storage` after them.
  std::vector<std::string> keep_fp32;

  bool reduced() const { return storage != DType::kFloat32; }
};

/// "fp32", "fp16", "bf16" -> the dtype; an error naming the accepted spellings otherwise.
Expected<DType> parse_precision(const std::string& text);
/// The flag's spelling of a storage dtype ("fp16").
const char* precision_name(DType storage);

/// Checks that `target` offers the storage width (TargetFacts::precisions), with a one-line
/// error naming the target and what it offers.
Status check_precision_supported(const PrecisionOptions& options, const TargetFacts& target);

/// Rewrites `graph` for options.storage. A node is lowered when its float32 results become
/// options.storage with its float32 operands converted, shape inference accepts that and the
/// target (when given) has a kernel for it at that width; otherwise it stays float32 and Casts
/// go around it. Nodes named in keep_fp32 stay float32 (compile_model checks the names against
/// the ONNX model; a named node the importer folded into a constant has nothing to keep).
/// Constants read only at the lower width are converted in place of a Cast.
Expected<bool> lower_precision(Graph& graph, const PrecisionOptions& options, const Target* target,
                               PassStatistics& stats);

}  // namespace aotc
