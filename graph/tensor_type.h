#pragma once
/// The type of an IR value: dtype, shape (static or named symbolic dims) and the placement
/// facts (layout, distribution) that later passes fill in.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph/dtype.h"

namespace aotc {

/// One dimension: a static extent (>= 0) or a named symbolic extent such as "seq_len".
struct Dim {
  int64_t value = 0;      ///< The extent when static.
  std::string symbol;     ///< Non-empty for a symbolic dim.

  Dim() = default;
  Dim(int64_t v) : value(v) {}  // NOLINT: a static dim converts implicitly
  static Dim symbolic(std::string name) {
    Dim d;
    d.value = -1;
    d.symbol = std::move(name);
    return d;
  }
  bool is_static() const { return symbol.empty(); }
  bool operator==(const Dim&) const = default;
};

using Shape = std::vector<Dim>;

bool is_static(const Shape& s);
/// The dims of a static shape as integers. Asserts that the shape is static.
std::vector<int64_t> static_dims(const Shape& s);
Shape make_shape(const std::vector<int64_t>& dims);
/// Product of the dims, or nullopt when symbolic or when it overflows int64.
std::optional<int64_t> element_count(const Shape& s);
/// "2x3x?seq" style spelling used in messages and in the IR text.
std::string shape_to_string(const Shape& s);

/// Memory layout of a tensor. Values are row-major (NCHW for images) unless the layout
/// legalization pass (passes/legalize_layout.cpp) blocks them: kNCHWc holds an N x C x H x W
/// image as N x C/c x H x W x c, `c` (TensorType::channel_block) channels of one pixel
/// contiguous, so that a vector of channels is one load (C a multiple of c).
enum class Layout : uint8_t { kRowMajor, kNCHWc };

/// How a tensor is spread across compute tiles (DESIGN.md §5). kWhole means one tile holds it.
enum class DistributionMode : uint8_t { kWhole, kSegmented, kOverlapped, kDuplicated };

struct Distribution {
  DistributionMode mode = DistributionMode::kWhole;
  int axis = -1;        ///< Axis split across tiles for segmented/overlapped.
  int num_tiles = 1;
  bool operator==(const Distribution&) const = default;
};

struct TensorType {
  DType dtype = DType::kFloat32;
  Shape shape;
  Layout layout = Layout::kRowMajor;
  int channel_block = 0;  ///< c of kNCHWc; 0 for row-major.
  Distribution distribution;

  int rank() const { return static_cast<int>(shape.size()); }
  bool operator==(const TensorType&) const = default;
  /// "f32[1x3x224x224]", "f32[1x32x112x112]{NCHW8c}" when blocked.
  std::string to_string() const;
};

}  // namespace aotc
