#pragma once
/// Sliding-window geometry shared by Conv and the pooling ops: the output extent and the
/// effective leading/trailing padding of every spatial axis, resolved from the ONNX attributes
/// kernel_shape, strides, dilations, pads, auto_pad and ceil_mode. Shape inference, the reference
/// implementations and the kernel emitters all read the geometry from here, so they cannot
/// disagree about where a window starts.
#include <cstdint>
#include <utility>
#include <vector>

#include "graph/graph.h"
#include "graph/ops/padding_rules.h"
#include "graph/status.h"

namespace aotc {

struct WindowGeometry {
  std::vector<int64_t> input;      ///< Spatial extents of the input.
  std::vector<int64_t> kernel;     ///< Window taps per axis (before dilation).
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pad_begin;  ///< Effective leading padding (auto_pad resolved).
  std::vector<int64_t> pad_end;    ///< Effective trailing padding (auto_pad resolved).
  std::vector<int64_t> output;     ///< Spatial extents of the output.

  int rank() const { return static_cast<int>(input.size()); }
  /// Input coordinate read by output position `o`, tap `k` on `axis` (may lie in the padding).
  int64_t input_pos(int axis, int64_t o, int64_t k) const {
    return o * strides[axis] + k * dilations[axis] - pad_begin[axis];
  }
  /// The half-open range of output positions whose tap `k` on `axis` reads inside the input.
  /// Kernels iterate over this range instead of testing bounds for every element.
  std::pair<int64_t, int64_t> valid_outputs(int axis, int64_t k) const;
  /// True when no padding is applied on any axis.
  bool unpadded() const;
  /// The same geometry with unit axes (extent 1, no padding) prepended up to `rank` axes, so
  /// that 1-D and 2-D windows can run through 3-D loops.
  WindowGeometry with_leading_unit_axes(int rank) const;
};

/// Options of window_geometry that differ between the ops.
struct WindowOptions {
  bool allow_ceil_mode = false;  ///< Pools accept ceil_mode; Conv does not.
};

/// Reads and validates the window attributes of `node` for an input with the given static
/// spatial extents and kernel extents (kernel_shape, or the weight's spatial dims for Conv), and
/// computes the geometry with the ONNX rules: explicit pads with floor (or ceil, where windows
/// that would start in the trailing padding are dropped), SAME_UPPER / SAME_LOWER (output =
/// ceil(in / stride), the odd pad element going last / first) and VALID. Errors name the node.
Expected<WindowGeometry> window_geometry(const Node& node, const std::vector<int64_t>& input,
                                         const std::vector<int64_t>& kernel,
                                         WindowOptions options = {});

/// The static spatial dims (dims 2..) of a value of shape N x C x spatial..., or an unsupported
/// error naming the node when one of them is symbolic.
Expected<std::vector<int64_t>> static_spatial_dims(const Node& node, const Shape& shape);

/// The padding rule of the windowed ops (N x C x spatial...): the batch axis passes its padding
/// through; so does a spatial axis whose window is one tap with stride 1 and no padding (each
/// output reads the input at its own position). A wider window, a stride or padding along a
/// padded axis reads across the end of the valid data: unsafe. `mixes_channels`: the op
/// contracts over the channel axis (Conv), which must then not be padded.
PaddingResult window_padding(const PaddingQuery& q, const WindowGeometry& g, bool mixes_channels);

}  // namespace aotc
