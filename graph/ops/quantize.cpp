// Op family 'quantize': QuantizeLinear and DequantizeLinear in their latest ONNX form (version
// 25): per-tensor, per-axis and blocked scales, an optional zero point, `output_dtype`, and
// QuantizeLinear's `precision` (the dtype the division runs in). Dtype attributes are IR dtype
// names, as for Cast; the frontend translates ONNX's TensorProto numbers.
//
//   QuantizeLinear:   y = saturate(round_half_even(x / scale) + zero_point)
//   DequantizeLinear: y = (x - zero_point) * scale
//
// The integer quantized dtypes are i8, u8, i16, u16, i4, u4, i2, u2 (and i32 as a
// DequantizeLinear input). The float ones (float8, float4e2m1) follow the ONNX reference
// (onnx/reference/ops/op_quantize_linear.py): QuantizeLinear converts x / scale to the format as
// Cast does (round to nearest even; float8 saturates unless `saturate` = 0), adding the zero
// point only for float4; DequantizeLinear decodes and multiplies, subtracting the zero point
// only for float4. A float8 zero point must be zero: a constant nonzero one is an error.
//
// The references follow the precision the spec asks for where it decides results: the quotient
// x / scale is formed in the precision dtype before it is rounded to an integer, since a quotient
// computed more precisely can round to a neighbouring integer (2.4999999 instead of 2.5).
// Dequantization computes (x - zero_point) * scale in double and rounds once to the output.
#include "graph/ops/quantize.h"

#include <cmath>

#include "graph/float16.h"
#include "graph/ops/all_ops.h"
#include "graph/ops/op_helpers.h"

namespace aotc {

int64_t QuantGranularity::scale_index(int64_t i) const {
  switch (kind) {
    case Kind::kPerTensor:
      return 0;
    case Kind::kPerAxis:
      return (i / inner) % axis_extent;
    case Kind::kBlocked: {
      int64_t outer = i / (axis_extent * inner), a = (i / inner) % axis_extent, r = i % inner;
      return (outer * scale_axis_extent + a / block_size) * inner + r;
    }
  }
  return 0;
}

std::optional<IntegerRange> quantized_integer_range(DType t) {
  switch (t) {
    case DType::kInt8:
      return IntegerRange{-128, 127};
    case DType::kUInt8:
      return IntegerRange{0, 255};
    case DType::kInt16:
      return IntegerRange{-32768, 32767};
    case DType::kUInt16:
      return IntegerRange{0, 65535};
    case DType::kInt4:
      return IntegerRange{-8, 7};
    case DType::kUInt4:
      return IntegerRange{0, 15};
    case DType::kInt2:
      return IntegerRange{-2, 1};
    case DType::kUInt2:
      return IntegerRange{0, 3};
    default:
      return std::nullopt;
  }
}

bool is_quantized_float(DType t) {
  switch (t) {
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
    case DType::kFloat4E2M1:
      return true;
    default:
      return false;
  }
}

namespace {

bool is_float8(DType t) { return is_quantized_float(t) && t != DType::kFloat4E2M1; }

/// A one-element scale is per-tensor whatever its rank, as in the ONNX reference.
bool is_single_value(const Shape& s) {
  for (const Dim& d : s)
    if (!(d == Dim(1))) return false;
  return true;
}

/// A float8 zero point carries no information (the formats are symmetric): a constant one must be
/// all zeros, as the ONNX reference demands.
Status check_float8_zero_point(InferContext& ctx, DType quantized, const char* zero_role) {
  if (!is_float8(quantized) || !ctx.has_input(2)) return Status::ok();
  if (const TensorData* zp = ctx.input_value(2)) {
    for (int64_t i = 0; i < zp->num_elements(); ++i)
      if (zp->get_double(i) != 0.0)
        return ctx.error("{} must be zero for {}, got {} at element {}", zero_role,
                         dtype_name(quantized), zp->get_double(i), i);
  }
  return Status::ok();
}

/// Checks the scale (input 1) and zero point (input 2) against x (input 0) and the `axis` and
/// `block_size` attributes.
Status check_scale_and_zero_point(InferContext& ctx, const char* scale_role,
                                  const char* zero_role) {
  const TensorType& x = ctx.input_type(0);
  const TensorType& scale = ctx.input_type(1);
  if (!is_float(scale.dtype))
    return ctx.unsupported_error("{} must be f32, f16, bf16 or f64, got {}", scale_role,
                                 scale.to_string());
  // A one-element zero point goes with a one-element scale whatever their ranks ([] and [1] are
  // both per-tensor, as the ONNX reference and onnxruntime accept).
  const bool both_single =
      ctx.has_input(2) && is_single_value(scale.shape) && is_single_value(ctx.input_type(2).shape);
  if (ctx.has_input(2) && !both_single && ctx.input_type(2).shape != scale.shape)
    return ctx.error("{} {} must have the shape of {} {}", zero_role, ctx.input_type(2).to_string(),
                     scale_role, scale.to_string());
  int64_t block = ctx.attrs().get_int("block_size", 0);
  if (block < 0) return ctx.error("block_size must be >= 0, got {}", block);
  if (is_single_value(scale.shape)) return Status::ok();

  int64_t axis_attr = ctx.attrs().get_int("axis", 1);
  std::optional<int> axis = normalize_axis(axis_attr, x.rank());
  if (!axis) return ctx.error("axis {} is out of range for x {}", axis_attr, x.to_string());
  const Dim& extent = x.shape[*axis];
  if (block == 0) {
    if (scale.rank() != 1 || !(scale.shape[0] == extent))
      return ctx.error(
          "a per-axis {} must have shape [{}] (x's axis {}), got {}; blocked scales need "
          "block_size",
          scale_role, shape_to_string({extent}), *axis, scale.to_string());
    return Status::ok();
  }
  if (scale.rank() != x.rank())
    return ctx.error("a blocked {} must have x's rank {}, got {}", scale_role, x.rank(),
                     scale.to_string());
  for (int i = 0; i < x.rank(); ++i) {
    if (i == *axis) continue;
    if (!(scale.shape[i] == x.shape[i]))
      return ctx.error("blocked {} {} must match x {} except on axis {}", scale_role,
                       scale.to_string(), x.to_string(), *axis);
  }
  if (!extent.is_static() || !scale.shape[*axis].is_static())
    return ctx.unsupported_error("blocked quantization needs a static extent on axis {}", *axis);
  int64_t blocks = (extent.value + block - 1) / block;
  if (scale.shape[*axis].value != blocks)
    return ctx.error("block_size {} splits x's axis {} of {} into {} blocks, but {} has {}", block,
                     *axis, extent.value, blocks, scale_role, scale.shape[*axis].value);
  return Status::ok();
}

/// An IR dtype named by a dtype attribute, nullopt when the attribute is absent.
Expected<std::optional<DType>> dtype_attr(const InferContext& ctx, const char* name) {
  if (!ctx.attrs().has(name)) return std::optional<DType>{};
  std::string s = ctx.attrs().get_string(name, "");
  std::optional<DType> t = parse_dtype(s);
  if (!t) return ctx.error("{} '{}' is not a dtype", name, s);
  return t;
}

// --- QuantizeLinear --------------------------------------------------------------------------

Status infer_quantize(InferContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  if (!is_float(x.dtype) && x.dtype != DType::kInt32)
    return ctx.error("x must be a float or i32 tensor, got {}", x.to_string());
  AOTC_RETURN_IF_ERROR(check_scale_and_zero_point(ctx, "y_scale", "y_zero_point"));
  AOTC_ASSIGN_OR_RETURN(std::optional<DType> output_dtype, dtype_attr(ctx, "output_dtype"));
  AOTC_ASSIGN_OR_RETURN(std::optional<DType> precision, dtype_attr(ctx, "precision"));
  if (precision && !is_float(*precision))
    return ctx.unsupported_error("precision {} is not supported; use a float dtype",
                                 dtype_name(*precision));
  DType y = DType::kUInt8;  // with neither a zero point nor output_dtype
  if (ctx.has_input(2)) {
    y = ctx.input_type(2).dtype;
    if (output_dtype && *output_dtype != y)
      return ctx.error("output_dtype {} differs from y_zero_point's dtype {}",
                       dtype_name(*output_dtype), dtype_name(y));
  } else if (output_dtype) {
    y = *output_dtype;
  }
  if (!quantized_integer_range(y) && !is_quantized_float(y))
    return ctx.unsupported_error(
        "quantizing to {} is not supported (i8, u8, i16, u16, i4, u4, i2, u2, float8, f4e2m1)",
        dtype_name(y));
  AOTC_RETURN_IF_ERROR(check_float8_zero_point(ctx, y, "y_zero_point"));
  ctx.set_output_type(0, TensorType{y, x.shape});
  return Status::ok();
}

/// `v` rounded to the nearest value of float dtype `t`.
double round_to(DType t, double v) {
  switch (t) {
    case DType::kFloat32:
      return static_cast<float>(v);
    case DType::kFloat16:
      return half_to_float(float_to_half(static_cast<float>(v)));
    case DType::kBFloat16:
      return bfloat16_to_float(float_to_bfloat16(static_cast<float>(v)));
    default:
      return v;
  }
}

/// The precision of QuantizeLinear's division: the `precision` attribute, else y_scale's dtype.
DType division_precision(const Node& node) {
  std::string p = node.attrs().get_string("precision", "");
  return p.empty() ? node.input(1)->dtype() : *parse_dtype(p);
}

Expected<std::vector<TensorData>> reference_quantize(const Node& node,
                                                     const std::vector<const TensorData*>& in) {
  const TensorData &x = *in[0], &scale = *in[1];
  const TensorData* zero = in.size() > 2 ? in[2] : nullptr;
  QuantGranularity g = quant_granularity(node);
  DType p = division_precision(node);
  DType yt = node.output(0)->dtype();
  TensorData y(yt, x.dims());
  if (is_quantized_float(yt)) {
    CastMode mode;
    mode.saturate = node.attrs().get_int("saturate", 1) != 0;
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      int64_t s = g.scale_index(i);
      double q = round_to(p, round_to(p, x.get_double(i)) / round_to(p, scale.get_double(s)));
      // The reference divides in float32 (or the precision dtype) and converts from there.
      double v = static_cast<float>(q);
      if (yt == DType::kFloat4E2M1 && zero) v = static_cast<float>(v + zero->get_double(s));
      y.set_double(i, v, mode);
    }
    return std::vector<TensorData>{std::move(y)};
  }
  IntegerRange range = *quantized_integer_range(yt);
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    int64_t s = g.scale_index(i);
    double q = round_to(p, round_to(p, x.get_double(i)) / round_to(p, scale.get_double(s)));
    double zp = zero ? zero->get_double(s) : 0.0;
    // nearbyint rounds halves to even in the default rounding mode. NaN has no integer; it
    // quantizes to the zero point (the quantized 0) rather than to an arbitrary bound.
    double v = std::isnan(q) ? zp : std::nearbyint(q) + zp;
    v = std::min(std::max(v, static_cast<double>(range.lowest)),
                 static_cast<double>(range.highest));
    y.set_int64(i, static_cast<int64_t>(v));
  }
  return std::vector<TensorData>{std::move(y)};
}

// --- DequantizeLinear ------------------------------------------------------------------------

Status infer_dequantize(InferContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  if (!quantized_integer_range(x.dtype) && !is_quantized_float(x.dtype) && x.dtype != DType::kInt32)
    return ctx.unsupported_error(
        "dequantizing {} is not supported (i8, u8, i16, u16, i32, i4, u4, i2, u2, float8, "
        "f4e2m1)",
        dtype_name(x.dtype));
  AOTC_RETURN_IF_ERROR(check_scale_and_zero_point(ctx, "x_scale", "x_zero_point"));
  if (ctx.has_input(2) && ctx.input_type(2).dtype != x.dtype)
    return ctx.error("x_zero_point must have x's dtype {}, got {}", dtype_name(x.dtype),
                     ctx.input_type(2).to_string());
  AOTC_RETURN_IF_ERROR(check_float8_zero_point(ctx, x.dtype, "x_zero_point"));
  AOTC_ASSIGN_OR_RETURN(std::optional<DType> output_dtype, dtype_attr(ctx, "output_dtype"));
  DType y = output_dtype.value_or(ctx.input_type(1).dtype);
  if (!is_float(y)) return ctx.error("output_dtype must be a float dtype, got {}", dtype_name(y));
  ctx.set_output_type(0, TensorType{y, x.shape});
  return Status::ok();
}

Expected<std::vector<TensorData>> reference_dequantize(const Node& node,
                                                       const std::vector<const TensorData*>& in) {
  const TensorData &x = *in[0], &scale = *in[1];
  const TensorData* zero = in.size() > 2 ? in[2] : nullptr;
  QuantGranularity g = quant_granularity(node);
  TensorData y(node.output(0)->dtype(), x.dims());
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    int64_t s = g.scale_index(i);
    if (is_quantized_float(x.dtype())) {
      // Decoded codes are exact in double; float8 has no zero point to subtract.
      double zp = zero && x.dtype() == DType::kFloat4E2M1 ? zero->get_double(s) : 0.0;
      y.set_double(i, (x.get_double(i) - zp) * scale.get_double(s));
      continue;
    }
    int64_t diff = x.get_int64(i) - (zero ? zero->get_int64(s) : 0);  // exact: |x|, |zp| < 2^32
    y.set_double(i, static_cast<double>(diff) * scale.get_double(s));
  }
  return std::vector<TensorData>{std::move(y)};
}

}  // namespace

QuantGranularity quant_granularity(const Node& node) {
  std::vector<int64_t> x = static_dims(node.input(0)->shape());
  std::vector<int64_t> scale = static_dims(node.input(1)->shape());
  QuantGranularity g;
  if (product(scale) == 1) return g;
  g.axis = *normalize_axis(node.attrs().get_int("axis", 1), static_cast<int>(x.size()));
  g.axis_extent = x[g.axis];
  g.inner = product(x, g.axis + 1);
  int64_t block = node.attrs().get_int("block_size", 0);
  if (block == 0) {
    g.kind = QuantGranularity::Kind::kPerAxis;
    g.scale_axis_extent = g.axis_extent;
  } else {
    g.kind = QuantGranularity::Kind::kBlocked;
    g.block_size = block;
    g.scale_axis_extent = scale[g.axis];
  }
  return g;
}

namespace {

/// With constant (unpadded) scales and zero points, every result element is its input element
/// converted: padding stays in place.
PaddingResult quantize_padding(const PaddingQuery& q) {
  for (int i = 1; i < q.num_operands(); ++i)
    if (!q.operand(i).empty())
      return PaddingResult::unsafe(fmt::format("has a padded scale or zero point (operand {})", i));
  Padding out = q.operand(0);
  for (PaddedAxis& p : out) p.fill.reset();
  return PaddingResult::safe(std::move(out));
}

}  // namespace

void register_quantize_ops(OpRegistry& r) {
  {
    OpDef def;
    def.name = "QuantizeLinear";
    def.min_inputs = 2;
    def.max_inputs = 3;
    def.attrs = {{"axis", AttrKind::kInt},
                 {"block_size", AttrKind::kInt},
                 {"output_dtype", AttrKind::kString},
                 {"precision", AttrKind::kString},
                 {"saturate", AttrKind::kInt}};
    def.infer = infer_quantize;
    def.reference = reference_quantize;
    def.padding = quantize_padding;
    def.summary =
        "saturate(round_half_even(x / scale) + zero_point); per-tensor, per-axis or blocked.";
    r.add(std::move(def));
  }
  {
    OpDef def;
    def.name = "DequantizeLinear";
    def.min_inputs = 2;
    def.max_inputs = 3;
    def.attrs = {{"axis", AttrKind::kInt},
                 {"block_size", AttrKind::kInt},
                 {"output_dtype", AttrKind::kString}};
    def.infer = infer_dequantize;
    def.reference = reference_dequantize;
    def.padding = quantize_padding;
    def.summary = "(x - zero_point) * scale; per-tensor, per-axis or blocked.";
    r.add(std::move(def));
  }
}

}  // namespace aotc
