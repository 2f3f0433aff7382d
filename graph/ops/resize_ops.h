#pragma once
/// Resize resolved at compile time. Resize is separable: along each axis, output position o reads
/// a few input positions ("taps") with fixed weights, and an output element is the sum over all
/// tap combinations of the input element times the product of the per-axis weights. The taps and
/// weights depend only on shapes and attributes, so they are computed here once, in double
/// precision, following the ONNX reference (onnx/reference/ops/op_resize.py); the reference
/// implementation (graph/ops/resize.cpp) and the kernel emitters (codegen/*/resize_kernels.cpp)
/// both apply the same ResizePlan.
#include <cstdint>
#include <vector>

#include "graph/graph.h"
#include "graph/status.h"

namespace aotc {

enum class ResizeMode { kNearest, kLinear, kCubic };

/// One axis of a Resize.
struct ResizeAxis {
  int64_t in = 0;   ///< Input extent.
  int64_t out = 0;  ///< Output extent.
  /// True when the axis is copied unchanged (out == in, one tap of weight 1 at o).
  bool identity = true;
  int taps = 1;  ///< Taps per output position (the same for every position of the axis).
  /// Tap t of output position o reads input index index[o * taps + t], already clamped into
  /// [0, in), with weight weight[o * taps + t]. Nearest mode has one tap of weight 1.
  std::vector<int64_t> index;
  std::vector<double> weight;
  /// Empty, or one flag per output position that takes the extrapolation value instead
  /// (tf_crop_and_resize positions outside the input).
  std::vector<bool> extrapolated;
};

struct ResizePlan {
  ResizeMode mode = ResizeMode::kNearest;
  double extrapolation_value = 0;
  std::vector<ResizeAxis> axes;  ///< One per input axis.
};

/// Computes the plan of a Resize whose scales / sizes (and roi for tf_crop_and_resize) are
/// constants and whose input dims are static. Errors name the node.
Expected<ResizePlan> resolve_resize(const Node& node);

}  // namespace aotc
