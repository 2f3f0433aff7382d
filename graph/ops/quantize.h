#pragma once
/// Shared facts of QuantizeLinear and DequantizeLinear (graph/ops/quantize.cpp) that their kernel
/// emitters need too: which scale and zero point each element uses, and the value range of
/// each quantized dtype.
#include <cstdint>
#include <optional>
#include <vector>

#include "graph/dtype.h"
#include "graph/graph.h"

namespace aotc {

/// How the elements of x map onto the elements of the scale and zero point.
///   per-tensor: one scale;
///   per-axis:   a 1-D scale of x.shape[axis] values;
///   blocked:    a scale of x's rank whose `axis` extent is ceil(D / block_size), every scale
///               covering block_size consecutive positions along `axis`.
struct QuantGranularity {
  enum class Kind { kPerTensor, kPerAxis, kBlocked };
  Kind kind = Kind::kPerTensor;
  int axis = 0;
  int64_t block_size = 1;
  int64_t axis_extent = 1;        ///< D: x.shape[axis].
  int64_t scale_axis_extent = 1;  ///< The scale's extent along `axis` (D, or ceil(D / block)).
  int64_t inner = 1;              ///< Product of x's dims after `axis`.

  /// The index into the scale / zero point for flat index `i` of x.
  int64_t scale_index(int64_t i) const;
};

/// The granularity of a QuantizeLinear / DequantizeLinear node that has passed inference (static
/// shapes).
QuantGranularity quant_granularity(const Node& node);

/// The saturation bounds of an integer dtype that QuantizeLinear produces.
struct IntegerRange {
  int64_t lowest;
  int64_t highest;
};
/// The range of `t` when QuantizeLinear can produce it as an integer (i8, u8, i16, u16 and the
/// sub-byte i4, u4, i2, u2), else nullopt.
std::optional<IntegerRange> quantized_integer_range(DType t);

/// The float formats QuantizeLinear can produce and DequantizeLinear read: the float8 types
/// (x / scale converted to the format, saturating unless `saturate` is 0; their zero point is
/// zero by definition) and float4e2m1 (x / scale + zero_point, converted; always saturating).
bool is_quantized_float(DType t);

}  // namespace aotc
