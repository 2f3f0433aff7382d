// ONNX -> core op converters for quantized integer arithmetic: DynamicQuantizeLinear,
// MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv, and the com.microsoft ops that
// onnxruntime's quantization tools and graph optimizer write (MatMulIntegerToFloat,
// DynamicQuantizeMatMul, QLinearAdd, QLinearMul, QLinearSigmoid, QLinearLeakyRelu,
// QLinearConcat, QLinearGlobalAveragePool, QLinearAveragePool).
//
// Each becomes core ops that compute what onnxruntime computes (its CPU kernels in
// core/providers/cpu/quantization and contrib_ops/cpu/quantization, with MLAS):
//  - integer products exactly: operands minus their zero points in int32 (MatMul) or in double
//    (Conv; every product and sum of 8-bit values is an integer a double holds exactly), so the
//    int32 accumulators are onnxruntime's;
//  - DynamicQuantizeLinear as its GetQuantizationParameter: min and max widened to include 0,
//    scale (max - min) / 255 in float (1 when max == min), zero point round-half-even of
//    clamp(-min / scale, 0, 255), then QuantizeLinear (x / scale rounded half to even);
//  - requantization (QLinearMatMul, QLinearConv) as accumulator x (x_scale * w_scale / y_scale)
//    with that multiplier formed in the scales' float type, the product in double (the ONNX
//    reference), rounded half to even, plus the zero point, saturated;
//  - MatMulIntegerToFloat as float(accumulator) x (a_scale * b_scale) + bias in float.
// The elementwise ops that QLinearAdd and friends need fuse into one loop per node.
#include "frontend/converters/all_converters.h"
#include "graph/ops/quantize.h"

namespace aotc::frontend {
namespace {

/// Emits core ops for one ONNX node.
class Lowering {
 public:
  explicit Lowering(ConvertContext& ctx) : ctx_(ctx) {}

  Expected<Value*> op(const std::string& name, std::vector<Value*> in, Attributes a = {}) {
    return ctx_.emit1(name, std::move(in), std::move(a));
  }
  Expected<Value*> cast(Value* v, DType to) {
    if (v->dtype() == to) return v;
    Attributes a;
    a.set("to", std::string(dtype_name(to)));
    return op("Cast", {v}, a);
  }
  Value* scalar(DType t, double v, const std::string& hint) {
    return ctx_.constant(TensorData::filled(t, {}, v), hint);
  }
  /// `v` with shape `dims` (same elements).
  Expected<Value*> reshape(Value* v, const std::vector<int64_t>& dims) {
    return op("Reshape", {v, ctx_.constant(TensorData::from_int64(dims), "shape")});
  }
  /// `x` minus zero point `zp` (absent: x), both converted to `t` first.
  Expected<Value*> centered(Value* x, Value* zp, DType t) {
    AOTC_ASSIGN_OR_RETURN(Value * xc, cast(x, t));
    if (!zp) return xc;
    AOTC_ASSIGN_OR_RETURN(Value * zc, cast(zp, t));
    return op("Sub", {xc, zc});
  }
  /// A per-row quantization parameter of a matrix operand ([M] for [.., M, K]) as [M, 1], so
  /// that it broadcasts along rows; scalars and N-D ones stay as they are.
  Expected<Value*> per_row(Value* v, const Value* matrix) {
    if (!v || v->rank() != 1 || matrix->rank() < 2 || element_count(v->shape()) == std::optional<int64_t>(1)) return v;
    return reshape(v, {v->shape()[0].value, 1});
  }
  /// A per-channel parameter of a convolution ([M]) shaped to broadcast over `rank`-D tensors
  /// along axis 1 ([1, M, 1, ..]) or, for weights, along axis 0 ([M, 1, 1, ..]).
  Expected<Value*> per_channel(Value* v, int rank, int axis) {
    if (!v || v->rank() != 1 || element_count(v->shape()) == std::optional<int64_t>(1)) return v;
    std::vector<int64_t> dims(static_cast<size_t>(rank), 1);
    dims[static_cast<size_t>(axis)] = v->shape()[0].value;
    return reshape(v, dims);
  }
  /// saturate(round_half_even(acc * multiplier) + zero_point) as dtype `to`, in double.
  Expected<Value*> requantize(Value* acc, Value* multiplier, Value* zp, DType to) {
    auto range = quantized_integer_range(to);
    if (!range) return ctx_.error("the quantized output must be an 8- or 16-bit integer, got {}", dtype_name(to));
    AOTC_ASSIGN_OR_RETURN(Value * a, cast(acc, DType::kFloat64));
    AOTC_ASSIGN_OR_RETURN(Value * m, cast(multiplier, DType::kFloat64));
    AOTC_ASSIGN_OR_RETURN(Value * v, op("Mul", {a, m}));
    AOTC_ASSIGN_OR_RETURN(v, op("Round", {v}));
    if (zp) {
      AOTC_ASSIGN_OR_RETURN(Value * z, cast(zp, DType::kFloat64));
      AOTC_ASSIGN_OR_RETURN(v, op("Add", {v, z}));
    }
    AOTC_ASSIGN_OR_RETURN(v, op("Clip", {v, scalar(DType::kFloat64, static_cast<double>(range->lowest), "lowest"),
                                         scalar(DType::kFloat64, static_cast<double>(range->highest), "highest")}));
    return cast(v, to);
  }
  ConvertContext& ctx() { return ctx_; }

 private:
  ConvertContext& ctx_;
};

Status check_8bit(ConvertContext& ctx, const Value* v, const char* role) {
  if (v && v->dtype() != DType::kUInt8 && v->dtype() != DType::kInt8)
    return ctx.error("{} must be uint8 or int8, got {}", role, v->type().to_string());
  return Status::ok();
}

/// The exact int32 product of two quantized matrices: (A - a_zp) (B - b_zp).
Expected<Value*> integer_matmul(Lowering& l, Value* a, Value* a_zp, Value* b, Value* b_zp) {
  AOTC_RETURN_IF_ERROR(check_8bit(l.ctx(), a, "A"));
  AOTC_RETURN_IF_ERROR(check_8bit(l.ctx(), b, "B"));
  AOTC_ASSIGN_OR_RETURN(Value * azp, l.per_row(a_zp, a));
  AOTC_ASSIGN_OR_RETURN(Value * ac, l.centered(a, azp, DType::kInt32));
  AOTC_ASSIGN_OR_RETURN(Value * bc, l.centered(b, b_zp, DType::kInt32));
  return l.op("MatMul", {ac, bc});
}

/// ONNX Conv's attributes as the core Conv takes them.
Attributes conv_attrs(const ConvertContext& ctx) {
  Attributes a;
  for (const auto& [name, value] : ctx.attrs().all())
    if (name == "auto_pad" || name == "dilations" || name == "group" || name == "kernel_shape" || name == "pads" ||
        name == "strides")
      a.set(name, value);
  return a;
}

/// The exact accumulators of a quantized convolution, in double: Conv(x - x_zp, w - w_zp) + B.
Expected<Value*> integer_conv(Lowering& l, Value* x, Value* x_zp, Value* w, Value* w_zp, Value* bias) {
  AOTC_RETURN_IF_ERROR(check_8bit(l.ctx(), x, "x"));
  AOTC_RETURN_IF_ERROR(check_8bit(l.ctx(), w, "w"));
  AOTC_ASSIGN_OR_RETURN(Value * xc, l.centered(x, x_zp, DType::kFloat64));
  AOTC_ASSIGN_OR_RETURN(Value * wzp, l.per_channel(w_zp, w->rank(), 0));
  AOTC_ASSIGN_OR_RETURN(Value * wc, l.centered(w, wzp, DType::kFloat64));
  std::vector<Value*> in{xc, wc};
  if (bias) {
    AOTC_ASSIGN_OR_RETURN(Value * bd, l.cast(bias, DType::kFloat64));
    in.push_back(bd);
  }
  return l.op("Conv", in, conv_attrs(l.ctx()));
}

// ---- ai.onnx -----------------------------------------------------------------------------------

/// DynamicQuantizeLinear(x) -> (y, y_scale, y_zero_point), uint8, as onnxruntime computes it.
Expected<std::vector<Value*>> quantize_dynamically(Lowering& l, Value* x) {
  if (x->dtype() != DType::kFloat32) return l.ctx().error("x must be float32, got {}", x->type().to_string());
  Attributes all;
  all.set("keepdims", int64_t{0});
  const DType f = DType::kFloat32;
  AOTC_ASSIGN_OR_RETURN(Value * mx, l.op("ReduceMax", {x}, all));
  AOTC_ASSIGN_OR_RETURN(Value * mn, l.op("ReduceMin", {x}, all));
  AOTC_ASSIGN_OR_RETURN(mx, l.op("Max", {mx, l.scalar(f, 0, "zero")}));
  AOTC_ASSIGN_OR_RETURN(mn, l.op("Min", {mn, l.scalar(f, 0, "zero")}));
  AOTC_ASSIGN_OR_RETURN(Value * range, l.op("Sub", {mx, mn}));
  AOTC_ASSIGN_OR_RETURN(Value * step, l.op("Div", {range, l.scalar(f, 255, "levels")}));
  AOTC_ASSIGN_OR_RETURN(Value * flat, l.op("Equal", {mx, mn}));
  AOTC_ASSIGN_OR_RETURN(Value * scale, l.op("Where", {flat, l.scalar(f, 1, "one"), step}));
  AOTC_ASSIGN_OR_RETURN(Value * q, l.op("Div", {mn, scale}));
  AOTC_ASSIGN_OR_RETURN(q, l.op("Neg", {q}));
  AOTC_ASSIGN_OR_RETURN(q, l.op("Clip", {q, l.scalar(f, 0, "qmin"), l.scalar(f, 255, "qmax")}));
  AOTC_ASSIGN_OR_RETURN(q, l.op("Round", {q}));
  AOTC_ASSIGN_OR_RETURN(Value * zp, l.cast(q, DType::kUInt8));
  AOTC_ASSIGN_OR_RETURN(Value * y, l.op("QuantizeLinear", {x, scale, zp}));
  return std::vector<Value*>{y, scale, zp};
}

Expected<std::vector<Value*>> convert_dynamic_quantize_linear(ConvertContext& ctx) {
  Lowering l(ctx);
  AOTC_ASSIGN_OR_RETURN(std::vector<Value*> out, quantize_dynamically(l, ctx.input(0)));
  out.resize(static_cast<size_t>(ctx.num_outputs()));
  return out;
}

Expected<std::vector<Value*>> convert_matmul_integer(ConvertContext& ctx) {
  Lowering l(ctx);
  AOTC_ASSIGN_OR_RETURN(Value * y, integer_matmul(l, ctx.input(0), ctx.input(2), ctx.input(1), ctx.input(3)));
  return std::vector<Value*>{y};
}

Expected<std::vector<Value*>> convert_conv_integer(ConvertContext& ctx) {
  Lowering l(ctx);
  AOTC_ASSIGN_OR_RETURN(Value * acc, integer_conv(l, ctx.input(0), ctx.input(2), ctx.input(1), ctx.input(3), nullptr));
  AOTC_ASSIGN_OR_RETURN(Value * y, l.cast(acc, DType::kInt32));
  return std::vector<Value*>{y};
}

/// x_scale * w_scale / y_scale in the scales' float type (per-row or per-column scales keep
/// their broadcasting shapes).
Expected<Value*> output_multiplier(Lowering& l, Value* a_scale, Value* b_scale, Value* y_scale) {
  AOTC_ASSIGN_OR_RETURN(Value * ab, l.op("Mul", {a_scale, b_scale}));
  return l.op("Div", {ab, y_scale});
}

Expected<std::vector<Value*>> convert_qlinear_matmul(ConvertContext& ctx) {
  Lowering l(ctx);
  Value* a = ctx.input(0);
  Value* b = ctx.input(3);
  if (!ctx.input(7)) return ctx.error("y_zero_point is required");
  AOTC_ASSIGN_OR_RETURN(Value * acc, integer_matmul(l, a, ctx.input(2), b, ctx.input(5)));
  AOTC_ASSIGN_OR_RETURN(Value * a_scale, l.per_row(ctx.input(1), a));
  AOTC_ASSIGN_OR_RETURN(Value * m, output_multiplier(l, a_scale, ctx.input(4), ctx.input(6)));
  AOTC_ASSIGN_OR_RETURN(Value * y, l.requantize(acc, m, ctx.input(7), ctx.input(7)->dtype()));
  return std::vector<Value*>{y};
}

Expected<std::vector<Value*>> convert_qlinear_conv(ConvertContext& ctx) {
  Lowering l(ctx);
  Value* x = ctx.input(0);
  Value* w = ctx.input(3);
  if (!ctx.input(7)) return ctx.error("y_zero_point is required");
  AOTC_ASSIGN_OR_RETURN(Value * acc, integer_conv(l, x, ctx.input(2), w, ctx.input(5), ctx.input(8)));
  AOTC_ASSIGN_OR_RETURN(Value * w_scale, l.per_channel(ctx.input(4), x->rank(), 1));
  AOTC_ASSIGN_OR_RETURN(Value * m, output_multiplier(l, ctx.input(1), w_scale, ctx.input(6)));
  AOTC_ASSIGN_OR_RETURN(Value * y, l.requantize(acc, m, ctx.input(7), ctx.input(7)->dtype()));
  return std::vector<Value*>{y};
}

// ---- com.microsoft -----------------------------------------------------------------------------

/// float(acc) * (a_scale * b_scale) + bias, in float.
Expected<Value*> integer_to_float(Lowering& l, Value* acc, Value* a_scale, Value* b_scale, Value* bias) {
  AOTC_ASSIGN_OR_RETURN(Value * f, l.cast(acc, a_scale->dtype()));
  AOTC_ASSIGN_OR_RETURN(Value * scale, l.op("Mul", {a_scale, b_scale}));
  AOTC_ASSIGN_OR_RETURN(Value * y, l.op("Mul", {f, scale}));
  if (bias) {
    AOTC_ASSIGN_OR_RETURN(y, l.op("Add", {y, bias}));
  }
  return y;
}

/// MatMulIntegerToFloat(A, B, a_scale, b_scale, a_zero_point, b_zero_point, bias).
Expected<std::vector<Value*>> convert_matmul_integer_to_float(ConvertContext& ctx) {
  Lowering l(ctx);
  Value* a = ctx.input(0);
  AOTC_ASSIGN_OR_RETURN(Value * acc, integer_matmul(l, a, ctx.input(4), ctx.input(1), ctx.input(5)));
  AOTC_ASSIGN_OR_RETURN(Value * a_scale, l.per_row(ctx.input(2), a));
  AOTC_ASSIGN_OR_RETURN(Value * y, integer_to_float(l, acc, a_scale, ctx.input(3), ctx.input(6)));
  return std::vector<Value*>{y};
}

/// DynamicQuantizeMatMul(A, B, b_scale, b_zero_point, bias): A quantized to uint8 as
/// DynamicQuantizeLinear does, then MatMulIntegerToFloat.
Expected<std::vector<Value*>> convert_dynamic_quantize_matmul(ConvertContext& ctx) {
  Lowering l(ctx);
  AOTC_ASSIGN_OR_RETURN(std::vector<Value*> qa, quantize_dynamically(l, ctx.input(0)));
  AOTC_ASSIGN_OR_RETURN(Value * acc, integer_matmul(l, qa[0], qa[2], ctx.input(1), ctx.input(3)));
  AOTC_ASSIGN_OR_RETURN(Value * y, integer_to_float(l, acc, qa[1], ctx.input(2), ctx.input(4)));
  return std::vector<Value*>{y};
}

/// (x - zp) * scale in float.
Expected<Value*> dequantize(Lowering& l, Value* x, Value* scale, Value* zp) {
  std::vector<Value*> in{x, scale};
  if (zp) in.push_back(zp);
  return l.op("DequantizeLinear", in);
}

/// round_half_even(x / scale) + zp, saturated to zp's type (uint8 when zp is absent).
Expected<Value*> quantize(Lowering& l, Value* x, Value* scale, Value* zp) {
  std::vector<Value*> in{x, scale};
  if (zp) in.push_back(zp);
  return l.op("QuantizeLinear", in);
}

/// QLinearAdd / QLinearMul (A, A_scale, A_zp, B, B_scale, B_zp, C_scale, C_zp), as MLAS: the
/// operands centred and scaled relative to C's scale in float, combined, rounded, offset.
Expected<std::vector<Value*>> convert_qlinear_binary(ConvertContext& ctx) {
  Lowering l(ctx);
  const bool add = ctx.op_type() == "QLinearAdd";
  Value* a = ctx.input(0);
  Value* b = ctx.input(3);
  Value* c_scale = ctx.input(6);
  Value* c_zp = ctx.input(7);
  AOTC_RETURN_IF_ERROR(check_8bit(ctx, a, "A"));
  AOTC_RETURN_IF_ERROR(check_8bit(ctx, b, "B"));
  const DType f = DType::kFloat32;
  AOTC_ASSIGN_OR_RETURN(Value * ac, l.centered(a, ctx.input(2), f));
  AOTC_ASSIGN_OR_RETURN(Value * bc, l.centered(b, ctx.input(5), f));
  Value* value = nullptr;
  if (add) {
    AOTC_ASSIGN_OR_RETURN(Value * ra, l.op("Div", {ctx.input(1), c_scale}));
    AOTC_ASSIGN_OR_RETURN(Value * rb, l.op("Div", {ctx.input(4), c_scale}));
    AOTC_ASSIGN_OR_RETURN(Value * sa, l.op("Mul", {ra, ac}));
    AOTC_ASSIGN_OR_RETURN(Value * sb, l.op("Mul", {rb, bc}));
    AOTC_ASSIGN_OR_RETURN(value, l.op("Add", {sa, sb}));
  } else {
    AOTC_ASSIGN_OR_RETURN(Value * ratio, output_multiplier(l, ctx.input(1), ctx.input(4), c_scale));
    AOTC_ASSIGN_OR_RETURN(Value * prod, l.op("Mul", {ac, bc}));
    AOTC_ASSIGN_OR_RETURN(value, l.op("Mul", {prod, ratio}));
  }
  const DType out = c_zp ? c_zp->dtype() : a->dtype();
  AOTC_ASSIGN_OR_RETURN(Value * r, l.op("Round", {value}));
  if (c_zp) {
    AOTC_ASSIGN_OR_RETURN(Value * z, l.cast(c_zp, f));
    AOTC_ASSIGN_OR_RETURN(r, l.op("Add", {r, z}));
  }
  auto range = quantized_integer_range(out);
  AOTC_ASSIGN_OR_RETURN(r, l.op("Clip", {r, l.scalar(f, static_cast<double>(range->lowest), "lowest"),
                                         l.scalar(f, static_cast<double>(range->highest), "highest")}));
  AOTC_ASSIGN_OR_RETURN(Value * y, l.cast(r, out));
  return std::vector<Value*>{y};
}

/// QLinearSigmoid / QLinearLeakyRelu (X, X_scale, X_zp, Y_scale, Y_zp): onnxruntime's lookup
/// table holds quantize(f(dequantize(x))) for every code, which is what this computes.
Expected<std::vector<Value*>> convert_qlinear_unary(ConvertContext& ctx) {
  Lowering l(ctx);
  AOTC_RETURN_IF_ERROR(check_8bit(ctx, ctx.input(0), "X"));
  AOTC_ASSIGN_OR_RETURN(Value * x, dequantize(l, ctx.input(0), ctx.input(1), ctx.input(2)));
  Value* fx = nullptr;
  if (ctx.op_type() == "QLinearSigmoid") {
    AOTC_ASSIGN_OR_RETURN(fx, l.op("Sigmoid", {x}));
  } else {
    Attributes a;
    a.set("alpha", ctx.attrs().get_float("alpha", double{0.01f}));
    AOTC_ASSIGN_OR_RETURN(fx, l.op("LeakyRelu", {x}, a));
  }
  Value* zp = ctx.input(4) ? ctx.input(4) : l.scalar(ctx.input(0)->dtype(), 0, "zero_point");
  AOTC_ASSIGN_OR_RETURN(Value * y, quantize(l, fx, ctx.input(3), zp));
  return std::vector<Value*>{y};
}

/// QLinearConcat(Y_scale, Y_zp, X0, X0_scale, X0_zp, X1, ...) {axis}.
Expected<std::vector<Value*>> convert_qlinear_concat(ConvertContext& ctx) {
  Lowering l(ctx);
  if (ctx.num_inputs() < 5 || (ctx.num_inputs() - 2) % 3 != 0)
    return ctx.error("takes Y_scale, Y_zero_point and triples of (X, X_scale, X_zero_point), got {} inputs",
                     ctx.num_inputs());
  std::vector<Value*> parts;
  for (int i = 2; i < ctx.num_inputs(); i += 3) {
    AOTC_RETURN_IF_ERROR(check_8bit(ctx, ctx.input(i), "an input"));
    AOTC_ASSIGN_OR_RETURN(Value * x, dequantize(l, ctx.input(i), ctx.input(i + 1), ctx.input(i + 2)));
    parts.push_back(x);
  }
  Attributes a;
  a.set("axis", ctx.attrs().get_int("axis", 0));
  AOTC_ASSIGN_OR_RETURN(Value * cat, l.op("Concat", parts, a));
  AOTC_ASSIGN_OR_RETURN(Value * y, quantize(l, cat, ctx.input(0), ctx.input(1)));
  return std::vector<Value*>{y};
}

/// QLinearGlobalAveragePool(X, x_scale, x_zp, y_scale, y_zp) {channels_last}: the mean of the
/// dequantized values, quantized.
Expected<std::vector<Value*>> convert_qlinear_global_average_pool(ConvertContext& ctx) {
  Lowering l(ctx);
  if (ctx.attrs().get_int("channels_last", 0) != 0)
    return ctx.unsupported_error("channels_last = 1 is not supported");
  AOTC_RETURN_IF_ERROR(check_8bit(ctx, ctx.input(0), "X"));
  AOTC_ASSIGN_OR_RETURN(Value * x, dequantize(l, ctx.input(0), ctx.input(1), ctx.input(2)));
  AOTC_ASSIGN_OR_RETURN(Value * mean, l.op("GlobalAveragePool", {x}));
  Value* zp = ctx.input(4) ? ctx.input(4) : l.scalar(ctx.input(0)->dtype(), 0, "zero_point");
  AOTC_ASSIGN_OR_RETURN(Value * y, quantize(l, mean, ctx.input(3), zp));
  return std::vector<Value*>{y};
}

/// QLinearAveragePool(X, x_scale, x_zp, y_scale, y_zp) with AveragePool's attributes.
Expected<std::vector<Value*>> convert_qlinear_average_pool(ConvertContext& ctx) {
  Lowering l(ctx);
  if (ctx.attrs().get_int("channels_last", 0) != 0)
    return ctx.unsupported_error("channels_last = 1 is not supported");
  AOTC_RETURN_IF_ERROR(check_8bit(ctx, ctx.input(0), "X"));
  AOTC_ASSIGN_OR_RETURN(Value * x, dequantize(l, ctx.input(0), ctx.input(1), ctx.input(2)));
  Attributes a = ctx.attrs();
  a.erase("channels_last");
  AOTC_ASSIGN_OR_RETURN(Value * avg, l.op("AveragePool", {x}, a));
  Value* zp = ctx.input(4) ? ctx.input(4) : l.scalar(ctx.input(0)->dtype(), 0, "zero_point");
  AOTC_ASSIGN_OR_RETURN(Value * y, quantize(l, avg, ctx.input(3), zp));
  return std::vector<Value*>{y};
}

}  // namespace

void register_integer_converters(ConverterRegistry& r) {
  r.add("DynamicQuantizeLinear", 11, convert_dynamic_quantize_linear);
  r.add("MatMulInteger", 10, convert_matmul_integer);
  r.add("ConvInteger", 10, convert_conv_integer);
  r.add("QLinearMatMul", 10, convert_qlinear_matmul);
  r.add("QLinearConv", 10, convert_qlinear_conv);
  const std::string ms = "com.microsoft";
  r.add(ms, "MatMulIntegerToFloat", 1, convert_matmul_integer_to_float);
  r.add(ms, "DynamicQuantizeMatMul", 1, convert_dynamic_quantize_matmul);
  r.add(ms, "QLinearAdd", 1, convert_qlinear_binary);
  r.add(ms, "QLinearMul", 1, convert_qlinear_binary);
  r.add(ms, "QLinearSigmoid", 1, convert_qlinear_unary);
  r.add(ms, "QLinearLeakyRelu", 1, convert_qlinear_unary);
  r.add(ms, "QLinearConcat", 1, convert_qlinear_concat);
  r.add(ms, "QLinearGlobalAveragePool", 1, convert_qlinear_global_average_pool);
  r.add(ms, "QLinearAveragePool", 1, convert_qlinear_average_pool);
}

}  // namespace aotc::frontend
