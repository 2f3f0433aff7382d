#pragma once
/// The bucketing driver (docs/buckets.md): a model with symbolic input dims compiled once per
/// combination of bucket sizes, each time through the frontend (which binds the sizes and marks
/// the padded axes) and the whole pass pipeline (whose mask-padding pass makes the padding
/// safe). codegen/compiler.cpp then packages the graphs as one package.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "frontend/onnx_importer.h"
#include "graph/graph.h"
#include "graph/status.h"
#include "passes/pipeline.h"

namespace onnx {
class ModelProto;
}

namespace aotc {

/// A symbolic dimension compiled at several sizes (`--buckets SYMBOL=SIZES`).
struct BucketAxis {
  std::string symbol;          ///< A dim_param of the model's graph inputs.
  std::vector<int64_t> sizes;  ///< Positive and increasing.
};

/// One graph of a bucketed package: the model compiled with each bucketed symbol at a size.
struct BucketGraph {
  std::vector<int64_t> sizes;  ///< In the order of the symbols.
  std::unique_ptr<Graph> graph;
};

/// The most schedules (combinations of bucket sizes) one package holds.
inline constexpr size_t kMaxBucketSchedules = 256;

/// Every combination of the axes' sizes, the first axis varying slowest: the schedules of a
/// bucketed package in dispatch order.
std::vector<std::vector<int64_t>> bucket_combinations(const std::vector<BucketAxis>& axes);

/// "seq=16, batch=2" for messages.
std::string bucket_sizes_text(const std::vector<std::string>& symbols, const std::vector<int64_t>& sizes);

/// "seq=16,32,64" (several axes joined by " --buckets ") for messages naming the flag.
std::string buckets_flag_text(const std::vector<BucketAxis>& axes);

/// Checks the --buckets lists before anything is imported: positive increasing sizes of
/// distinct symbols that the model's graph inputs have, and not too many combinations. Errors
/// are one line naming the flag.
Status check_bucket_axes(const std::vector<BucketAxis>& axes, const onnx::ModelProto& model);

/// Imports the model and runs the pipeline once per combination of sizes (bucket_combinations
/// order). Weights equal to an earlier graph's are shared with it, so the graphs hold one copy.
/// Before mask-padding, the constants of consecutive graphs are compared: a constant computed
/// from the length (a Reshape target, position ids, a causal mask) must hold the same values at
/// the positions both sizes have, unless only shape inference reads it; otherwise the bucket
/// would compute with the bucket size where the model computes with the actual one, and the
/// compile fails naming the constant. Errors name the model, the flag and the sizes.
Expected<std::vector<BucketGraph>> compile_buckets(const std::vector<BucketAxis>& axes,
                                                   const onnx::ModelProto& model,
                                                   const std::string& model_path,
                                                   const frontend::ImportOptions& import,
                                                   const PipelineOptions& pipeline);

}  // namespace aotc
