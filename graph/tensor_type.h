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

/// How a tensor is spread across compute tiles (DESIGN.md §5, Intel NPU compiler vocabulary).
/// kWhole means one place (DDR, or a single core) holds it; kSegmented: each tile owns a slice
/// along `axis`; kOverlapped: slices plus the halo a window op needs (neighbouring tiles' memory
/// slices overlap); kDuplicated: every tile holds all of it; kSegmentedDuplicated: segmented
/// over groups of tiles, each group's tiles holding the same slice (more tiles than slices:
/// clustering).
enum class DistributionMode : uint8_t { kWhole, kSegmented, kOverlapped, kDuplicated, kSegmentedDuplicated };

/// One tile's part of a distributed tensor along the distribution's axis: elements
/// [offset, offset + extent) of that axis, every element of the other axes.
struct TileSlice {
  int64_t offset = 0;
  int64_t extent = 0;
  bool operator==(const TileSlice&) const = default;
};

struct Distribution {
  DistributionMode mode = DistributionMode::kWhole;
  int axis = -1;        ///< Axis split across tiles for segmented/overlapped.
  int num_tiles = 1;
  /// Per tile (empty when not given): the slice the tile computes (owns), and the slice it holds
  /// in its memory (compute plus halo for kOverlapped; the whole axis for kDuplicated).
  std::vector<TileSlice> compute, memory;
  bool operator==(const Distribution&) const = default;

  /// The per-tile shapes and offsets in every axis of a tensor of `dims` (the compute or memory
  /// slices spelled out: full extent and offset 0 on the other axes).
  std::vector<std::vector<int64_t>> shapes(const std::vector<int64_t>& dims, bool memory_side) const;
  std::vector<std::vector<int64_t>> offsets(const std::vector<int64_t>& dims, bool memory_side) const;
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
