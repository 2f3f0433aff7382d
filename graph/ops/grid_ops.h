#pragma once
/// Shared by graph/ops/grid.cpp and the kernels of codegen/cpp/grid_kernels.cpp: the resolved
/// form of a GridSample node (ONNX GridSample-22 semantics, 4-D and 5-D).
#include <cstdint>
#include <vector>

#include "graph/graph.h"
#include "graph/status.h"

namespace aotc {

struct GridSampleParams {
  enum class Mode { kLinear, kNearest, kCubic } mode = Mode::kLinear;
  enum class Padding { kZeros, kBorder, kReflection } padding = Padding::kZeros;
  bool align_corners = false;
  int64_t n = 0, c = 0;
  std::vector<int64_t> in_dims;   ///< Spatial dims of X (D, H, W or H, W).
  std::vector<int64_t> out_dims;  ///< Spatial dims of the grid and of Y.

  int spatial() const { return static_cast<int>(in_dims.size()); }
  /// Taps per spatial axis: 1 (nearest), 2 (linear) or 4 (cubic).
  int taps() const { return mode == Mode::kNearest ? 1 : mode == Mode::kLinear ? 2 : 4; }
  /// The reflection (and padding test) bounds of axis d: [-0.5, len - 0.5], or [0, len - 1]
  /// with align_corners.
  double lower(int d) const { return align_corners ? 0.0 : -0.5; }
  double upper(int d) const {
    return align_corners ? static_cast<double>(in_dims[d]) - 1.0
                         : static_cast<double>(in_dims[d]) - 0.5;
  }
};

/// Reads the attributes and static shapes of a GridSample node.
Expected<GridSampleParams> resolve_grid_sample(const Node& node);

}  // namespace aotc
