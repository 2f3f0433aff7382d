#pragma once
/// ConvTranspose geometry, shared by shape inference, the reference implementation
/// (graph/ops/conv_transpose.cpp) and the kernel emitters (codegen/*/conv_transpose_kernels.cpp),
/// so they agree on where every input element lands.
#include <cstdint>
#include <utility>
#include <vector>

#include "graph/graph.h"
#include "graph/status.h"

namespace aotc {

struct ConvTransposeGeometry {
  int64_t in_channels = 0, out_channels = 0, group = 1;
  std::vector<int64_t> input;   ///< Spatial extents of X.
  std::vector<int64_t> kernel;  ///< Spatial extents of W.
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pad_begin;  ///< Leading padding removed from the full output (may be < 0).
  std::vector<int64_t> output;     ///< Spatial extents of Y.

  int rank() const { return static_cast<int>(input.size()); }
  /// The output position that input position `i`, tap `k` on `axis` adds to (may lie outside).
  int64_t output_pos(int axis, int64_t i, int64_t k) const {
    return i * strides[axis] + k * dilations[axis] - pad_begin[axis];
  }
  /// The half-open range of input positions whose tap `k` on `axis` lands inside the output.
  std::pair<int64_t, int64_t> valid_inputs(int axis, int64_t k) const;
};

/// Validates a ConvTranspose node (dtypes, W's layout C x M/group x k..., attributes) and
/// computes its geometry with the ONNX rules: explicit pads; auto_pad SAME_UPPER / SAME_LOWER
/// (output = input * stride); or output_shape, from which the pads follow (the odd element of the
/// total padding going last for SAME_UPPER and first otherwise). Errors name the node.
Expected<ConvTransposeGeometry> conv_transpose_geometry(const Node& node);

}  // namespace aotc
