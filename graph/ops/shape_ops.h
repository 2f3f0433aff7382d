#pragma once
/// Parameters of the data-movement ops (graph/ops/shape.cpp) resolved from a node whose operands
/// are known: the reference implementations and the kernel emitters (codegen/*/shape_kernels.cpp)
/// share these so that the oracle and the generated code read the operands the same way.
#include <cstdint>
#include <vector>

#include "graph/graph.h"
#include "graph/ops/padding_rules.h"
#include "graph/status.h"

namespace aotc {

/// Transpose's permutation: the `perm` attribute, or the reversed axes when it is absent.
std::vector<int64_t> transpose_perm(const Node& node);

/// A Slice resolved against its input's static dims: for every input axis, the first index read,
/// the step and the number of output elements (unsliced axes have start 0, step 1, full count).
struct SliceBox {
  std::vector<int64_t> starts;
  std::vector<int64_t> steps;
  std::vector<int64_t> counts;
};
/// Resolves a Slice whose starts/ends/axes/steps inputs are constants and whose input dims are
/// static (ONNX clamping rules, negative indices and steps).
Expected<SliceBox> resolve_slice(const Node& node);

/// Split's output extents along the split axis (from the `split` input or the equal-chunks rule).
Expected<std::vector<int64_t>> split_sizes(const Node& node);

/// The axis of Concat or Split, made non-negative against the input rank.
int normalized_axis_attr(const Node& node);

/// A box copy between two strided tensors, in elements: for every index i of `dims`,
/// dst[dst_offset + sum(i*dst_strides)] = src[src_offset + sum(i*src_strides)]. Every data
/// movement op (Transpose, Slice, Expand, Concat, Split) is one or more such copies.
struct CopyBox {
  std::vector<int64_t> dims;
  int64_t src_offset = 0;
  std::vector<int64_t> src_strides;
  int64_t dst_offset = 0;
  std::vector<int64_t> dst_strides;

  /// Drops unit axes and merges neighbouring axes that are contiguous in both tensors, so
  /// that the copy is expressed with the fewest loops (a contiguous copy becomes one axis).
  CopyBox simplified() const;
  /// Number of elements copied.
  int64_t num_elements() const;
};

/// The copies that implement a data-movement node (Transpose, Slice, Expand, Concat, Split)
/// with static shapes and constant operands; copy k reads input `input` and writes output
/// `output`. Reshape is a plain contiguous copy and is not described here.
struct NodeCopy {
  int input = 0;
  int output = 0;
  CopyBox box;
};
Expected<std::vector<NodeCopy>> data_movement_copies(const Node& node);

/// The padding rules of the data-movement ops (graph/ops/shape_padding.cpp).
PaddingResult reshape_padding(const PaddingQuery& q);
PaddingResult transpose_padding(const PaddingQuery& q);
PaddingResult concat_padding(const PaddingQuery& q);
PaddingResult slice_padding(const PaddingQuery& q);
PaddingResult split_padding(const PaddingQuery& q);
PaddingResult expand_padding(const PaddingQuery& q);
/// Shape and Size: unsafe when they read a padded extent.
PaddingResult shape_of_padding(const PaddingQuery& q);

}  // namespace aotc
