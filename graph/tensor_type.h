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

/// Padding along one axis of a value computed at a bucket size (docs/buckets.md): the elements
/// at positions >= offset + length(symbol) along `axis` are padding, where length(symbol) is the
/// actual size of the bucketed symbol at run time (at most the bucket size). Padding elements
/// hold whatever the computation left there, unless `fill` says they all hold one value.
/// The mask-padding pass fills these facts in.
struct PaddedAxis {
  int axis = 0;
  std::string symbol;
  int64_t offset = 0;
  std::optional<double> fill;
  bool operator==(const PaddedAxis&) const = default;
};

/// The padded axes of a value, by increasing axis, at most one fact per axis (empty: none).
using Padding = std::vector<PaddedAxis>;

struct TensorType {
  DType dtype = DType::kFloat32;
  Shape shape;
  Layout layout = Layout::kRowMajor;
  int channel_block = 0;  ///< c of kNCHWc; 0 for row-major.
  Distribution distribution;
  /// Which elements are padding (bucketed compiles only; a content fact, like layout a
  /// placement fact, that shape inference does not compute).
  Padding padding;

  int rank() const { return static_cast<int>(shape.size()); }
  bool operator==(const TensorType&) const = default;
  /// "f32[1x3x224x224]", "f32[1x32x112x112]{NCHW8c}" when blocked, "f32[2x16]pad(1:seq)"
  /// when padded.
  std::string to_string() const;
};

/// "pad(1:seq, 3:seq+24=0.0)" ("" for no padding): the IR text's spelling of padding facts
/// (docs/ir-text.md). Symbols of other characters than [A-Za-z0-9_] are quoted.
std::string padding_to_string(const Padding& padding);

}  // namespace aotc
