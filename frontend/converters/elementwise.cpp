// ONNX -> core op converters for the 'elementwise' family, opset 7 onwards.
//
// Most elementwise ops map 1:1 onto the core op of the same name: across opsets 7..27 their
// versions only widen the accepted dtypes (Add-14 adds int8/int16, Pow-12 mixed dtypes, ...) or,
// for Sum/Max/Min/Mean-8, add broadcasting, and the core ops implement the widest form. The
// converters below handle what did change: Clip's bounds moved from attributes to inputs (opset
// 11), Cast's target is an ONNX dtype number, and Identity / inference-mode Dropout become aliases.
#include "frontend/converters/all_converters.h"
#include "frontend/tensor_proto.h"
#include "passes/constant_evaluator.h"

namespace aotc::frontend {
namespace {

/// A Cast (or nothing, when the dtype already matches) of `x` to `to`. The node's `saturate`
/// (Cast-19+, CastLike-19+) and `round_mode` (Cast-24+, CastLike-25+) are kept only where they
/// change the result: saturate for float8 targets, round_mode for float8e8m0.
Expected<std::vector<Value*>> emit_cast(ConvertContext& ctx, Value* x, DType to) {
  // A cast to the operand's own dtype is an identity; aliasing it avoids a copy kernel.
  if (x->dtype() == to) return std::vector<Value*>{x};
  Attributes attrs;
  attrs.set("to", std::string(dtype_name(to)));
  bool float8 = is_storage_only(to) && is_float(to) && to != DType::kFloat4E2M1;
  if (float8 && ctx.attrs().get_int("saturate", 1) == 0) attrs.set("saturate", int64_t{0});
  if (to == DType::kFloat8E8M0) {
    std::string round_mode = ctx.attrs().get_string("round_mode", "up");
    if (!parse_e8m0_rounding(round_mode))
      return ctx.error(
          "attribute 'round_mode' is \"{}\"; it must be \"up\", \"down\" or \"nearest\"",
          round_mode);
    if (round_mode != "up") attrs.set("round_mode", round_mode);
  }
  return ctx.emit("Cast", {x}, std::move(attrs));
}

/// Cast-6 .. Cast-25: attribute `to` holds a TensorProto.DataType number.
Expected<std::vector<Value*>> convert_cast(ConvertContext& ctx) {
  if (!ctx.attrs().has("to")) return ctx.error("required attribute 'to' is missing");
  int64_t onnx_to = ctx.attrs().get_int("to", 0);
  std::optional<DType> to = dtype_from_onnx(static_cast<int>(onnx_to));
  if (!to) {
    return ctx.unsupported_error("cast to {} is not supported: aotc has no {} tensors",
                                 onnx_dtype_name(static_cast<int>(onnx_to)),
                                 onnx_dtype_name(static_cast<int>(onnx_to)));
  }
  return emit_cast(ctx, ctx.input(0), *to);
}

/// CastLike-15+: the target dtype is that of input 1 (whose values are never read).
Expected<std::vector<Value*>> convert_cast_like(ConvertContext& ctx) {
  if (!ctx.input(1)) return ctx.error("input 1 ('target_type') is required");
  return emit_cast(ctx, ctx.input(0), ctx.input(1)->dtype());
}

/// Clip-6: the bounds are float attributes defaulting to -/+FLT_MAX. A missing attribute
/// becomes a missing input (no bound) rather than a FLT_MAX constant, which would turn into inf
/// for f16 and is meaningless for f64.
Expected<std::vector<Value*>> convert_clip_6(ConvertContext& ctx) {
  Value* x = ctx.input(0);
  std::vector<Value*> inputs = {x, nullptr, nullptr};
  const char* names[] = {"min", "max"};
  for (int i = 0; i < 2; ++i) {
    if (!ctx.attrs().has(names[i])) continue;
    double bound = ctx.attrs().get_float(names[i], 0.0);
    inputs[i + 1] = ctx.constant(TensorData::filled(x->dtype(), {}, bound), names[i]);
  }
  while (inputs.back() == nullptr) inputs.pop_back();
  return ctx.emit("Clip", std::move(inputs));
}

/// The value of an optional scalar operand of Dropout, folded if its producer allows it.
/// nullopt when the operand is absent; an error when it cannot be known at compile time.
Expected<std::optional<double>> dropout_operand(ConvertContext& ctx, int i, const char* role) {
  Value* v = ctx.input(i);
  if (!v) return std::optional<double>{};
  if (!v->is_constant()) {
    if (Value* folded = fold_to_constant(ctx.graph(), v)) v = folded;
  }
  if (!v->is_constant()) {
    return Status::error(
        ErrorKind::kNeedsConstant,
        fmt::format("node '{}' ({}): input '{}' ({}) must be known at compile time, since aotc "
                    "compiles inference graphs and only an inference-mode Dropout is an "
                    "identity; bind it with --const-input",
                    ctx.node_name(), ctx.op_type(), v->name(), role));
  }
  if (v->constant_data()->num_elements() != 1)
    return ctx.error("input '{}' ({}) must be a scalar", v->name(), role);
  return std::optional<double>{v->constant_data()->get_double(0)};
}

/// Dropout is an identity at inference. Opsets 7..11 have no training mode at all (the ratio
/// attribute only matters for training); from opset 12, a training_mode input that is true with
/// a non-zero ratio would drop random elements, which a deterministic compiled program cannot
/// reproduce, so it is refused. The optional mask output is all true (nothing dropped); before
/// opset 10 it had the data's dtype, so it is all ones there.
Expected<std::vector<Value*>> convert_dropout(ConvertContext& ctx) {
  Value* x = ctx.input(0);
  if (ctx.opset() >= 12) {
    AOTC_ASSIGN_OR_RETURN(std::optional<double> training, dropout_operand(ctx, 2, "training_mode"));
    if (training && *training != 0) {
      AOTC_ASSIGN_OR_RETURN(std::optional<double> ratio, dropout_operand(ctx, 1, "ratio"));
      double r = ratio ? *ratio : 0.5;  // the spec's default ratio
      if (r != 0) {
        return ctx.unsupported_error(
            "training_mode is true with ratio {}: random dropout cannot be compiled (only "
            "inference-mode Dropout, an identity, is supported)",
            r);
      }
    }
  }
  std::vector<Value*> out = {x};
  if (ctx.num_outputs() > 1) {
    if (!is_static(x->shape())) {
      return ctx.unsupported_error("the mask output needs a static input shape, got [{}]",
                                   shape_to_string(x->shape()));
    }
    DType mask_type = ctx.opset() >= 10 ? DType::kBool : x->dtype();
    out.push_back(
        ctx.constant(TensorData::filled(mask_type, static_dims(x->shape()), 1.0), "mask"));
  }
  return out;
}

/// Shrink-9 accepts integer tensors too, with float bias and lambd; the core op computes in
/// floating point only, so integer inputs are refused rather than given a guessed rounding.
Expected<std::vector<Value*>> convert_shrink(ConvertContext& ctx) {
  Value* x = ctx.input(0);
  if (x && !is_float(x->dtype())) {
    return ctx.unsupported_error("Shrink on {} tensors is not supported (only floating-point)",
                                 dtype_name(x->dtype()));
  }
  return ctx.emit("Shrink", ctx.inputs(), ctx.attrs());
}

}  // namespace

void register_elementwise_converters(ConverterRegistry& r) {
  // Ops whose versions 7..27 only widened dtypes (or added broadcasting: Min/Max/Mean-8,
  // PRelu-7; attributes and defaults are unchanged since the consumed_inputs removal of opset 6).
  // clang-format off
  static const char* const kDirect[] = {
      "Add", "Sub", "Mul", "Div", "Pow", "Mod", "Sum", "Max", "Min", "Mean", "Where",
      "Sqrt", "Exp", "Log", "Erf", "Tanh", "Sigmoid", "Relu", "Neg", "Abs", "Sign", "Reciprocal",
      "Floor", "Ceil", "Round", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh",
      "Asinh", "Acosh", "Atanh",
      "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Not", "And", "Or", "Xor",
      "IsNaN", "IsInf",
      "Gelu", "LeakyRelu", "PRelu", "Elu", "Celu", "Selu", "HardSigmoid", "HardSwish",
      "Softplus", "Softsign", "Mish", "ThresholdedRelu", "Swish",
      "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot",
  };
  // clang-format on
  for (const char* op : kDirect) {
    r.add_direct(op);
  }
  r.add("Shrink", 9, convert_shrink);
  // Clip-11 onwards takes the bounds as optional inputs, exactly like the core op.
  r.add("Clip", 6, convert_clip_6);
  r.add("Clip", 11, [](ConvertContext& ctx) -> Expected<std::vector<Value*>> {
    return ctx.emit("Clip", ctx.inputs());
  });
  r.add("Cast", 6, convert_cast);
  r.add("CastLike", 15, convert_cast_like);
  r.add("Identity", 1, [](ConvertContext& ctx) -> Expected<std::vector<Value*>> {
    return std::vector<Value*>{ctx.input(0)};
  });
  r.add("Dropout", 7, convert_dropout);
}

}  // namespace aotc::frontend
