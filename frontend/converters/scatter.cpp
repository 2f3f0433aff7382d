// ONNX -> core op converters for the 'scatter' family (graph/ops/scatter.cpp), opset 7 onwards.
//
// ScatterElements-11/13/16/18 and ScatterND-11/13/16/18 only add dtypes and reductions (add and
// mul from 16, max and min from 18), which the core ops implement in their widest form, so every
// version maps onto them unchanged. Scatter-9 (removed in 11) is ScatterElements without a
// reduction. OneHot-11 is the core op; OneHot-9 treats negative indices as out of range (an
// all-off row) where 11 counts them from the end, so its negative indices are first replaced by
// depth, which is out of range in both versions.
#include "frontend/converters/all_converters.h"
#include "passes/constant_evaluator.h"

namespace aotc::frontend {
namespace {

Expected<std::vector<Value*>> convert_scatter_9(ConvertContext& ctx) {
  Attributes attrs;
  attrs.set("axis", ctx.attrs().get_int("axis", 0));
  AOTC_ASSIGN_OR_RETURN(Value * y, ctx.emit1("ScatterElements", ctx.inputs(), attrs));
  return std::vector<Value*>{y};
}

Expected<std::vector<Value*>> convert_one_hot_9(ConvertContext& ctx) {
  Value* indices = ctx.input(0);
  Value* depth = ctx.input(1);
  if (!indices || !depth) return ctx.error("inputs 'indices' and 'depth' are required");
  std::vector<Value*> inputs = ctx.inputs();
  if (indices->dtype() != DType::kBool && !is_unsigned_integer(indices->dtype())) {
    if (!depth->is_constant())
      if (Value* folded = fold_to_constant(ctx.graph(), depth)) depth = folded;
    if (!depth->is_constant() || depth->constant_data()->num_elements() != 1)
      return Status::error(
          ErrorKind::kNeedsConstant,
          fmt::format("node '{}' ({}): input '{}' (depth, the extent of the new axis) must be "
                      "known at compile time",
                      ctx.node_name(), ctx.op_type(), depth->name()));
    double d = depth->constant_data()->get_double(0);
    // In a wide type (int64 or f64) the sentinel `depth` is exact and every index keeps its value.
    DType t = is_float(indices->dtype()) ? DType::kFloat64 : DType::kInt64;
    Value* wide = indices;
    if (indices->dtype() != t) {
      Attributes cast;
      cast.set("to", std::string(dtype_name(t)));
      AOTC_ASSIGN_OR_RETURN(wide, ctx.emit1("Cast", {indices}, cast));
    }
    // Clip(indices, -1, 0) is -1 exactly where the index truncates to a negative integer.
    Value* lo = ctx.constant(TensorData::filled(t, {}, -1.0), "minus_one");
    Value* hi = ctx.constant(TensorData::filled(t, {}, 0.0), "zero");
    AOTC_ASSIGN_OR_RETURN(Value * clipped, ctx.emit1("Clip", {wide, lo, hi}));
    AOTC_ASSIGN_OR_RETURN(Value * negative, ctx.emit1("Equal", {clipped, lo}));
    Value* out_of_range = ctx.constant(TensorData::filled(t, {}, d), "out_of_range");
    AOTC_ASSIGN_OR_RETURN(inputs[0], ctx.emit1("Where", {negative, out_of_range, wide}));
  }
  Attributes attrs;
  attrs.set("axis", ctx.attrs().get_int("axis", -1));
  AOTC_ASSIGN_OR_RETURN(Value * y, ctx.emit1("OneHot", inputs, attrs));
  return std::vector<Value*>{y};
}

}  // namespace

void register_scatter_converters(ConverterRegistry& r) {
  r.add_direct("ScatterElements");
  r.add_direct("ScatterND");
  r.add("Scatter", 9, convert_scatter_9);
  r.add("OneHot", 9, convert_one_hot_9);
  r.add("OneHot", 11, [](ConvertContext& ctx) -> Expected<std::vector<Value*>> {
    return ctx.emit("OneHot", ctx.inputs(), ctx.attrs(), 1);
  });
}

}  // namespace aotc::frontend
