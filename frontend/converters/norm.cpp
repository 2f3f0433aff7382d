// ONNX -> core op converters for the 'norm' family: BatchNormalization, LayerNormalization,
// Softmax, LogSoftmax and LRN. The core ops follow the latest ONNX forms (see graph/ops/norm.cpp);
// what differs between versions is handled here.
#include "frontend/converters/all_converters.h"
#include "graph/ops/op_helpers.h"

namespace aotc::frontend {
namespace {

/// Returns `values` followed by nullptr for each ONNX output the core node does not produce.
std::vector<Value*> pad_outputs(std::vector<Value*> values, int num_outputs) {
  values.resize(std::max<size_t>(values.size(), static_cast<size_t>(num_outputs)), nullptr);
  return values;
}

/// BatchNormalization-1..9: inference only. The extra outputs of those versions (mean, var,
/// saved_mean, saved_var) exist only for training, which those versions select outside the graph
/// (is_test before 7, the framework after); like ONNX Runtime, aotc runs them in inference mode
/// and leaves those outputs unproduced, so a model that reads them fails to import.
Expected<std::vector<Value*>> convert_batch_norm_legacy(ConvertContext& ctx) {
  if (ctx.attrs().get_int("spatial", 1) == 0)
    return ctx.unsupported_error("spatial=0 (per-activation statistics) is not supported");
  Attributes attrs;
  attrs.set("epsilon", ctx.attrs().get_float("epsilon", 1e-5));
  AOTC_ASSIGN_OR_RETURN(Value * y, ctx.emit1("BatchNormalization", ctx.inputs(), attrs));
  return pad_outputs({y}, ctx.num_outputs());
}

/// BatchNormalization-14/15: the core op itself. Inference mode has one output; the optional
/// running_mean/running_var outputs are only defined with training_mode=1.
Expected<std::vector<Value*>> convert_batch_norm(ConvertContext& ctx) {
  Attributes attrs;
  attrs.set("epsilon", ctx.attrs().get_float("epsilon", 1e-5));
  bool training = ctx.attrs().get_int("training_mode", 0) != 0;
  int num_outputs = 1;
  if (training) {
    attrs.set("training_mode", int64_t{1});
    attrs.set("momentum", ctx.attrs().get_float("momentum", 0.9));
    num_outputs = std::max(1, std::min(3, ctx.num_outputs()));
  }
  AOTC_ASSIGN_OR_RETURN(std::vector<Value*> out,
                        ctx.emit("BatchNormalization", ctx.inputs(), attrs, num_outputs));
  return pad_outputs(std::move(out), ctx.num_outputs());
}

/// Softmax, LogSoftmax and Hardmax before opset 13 coerce the input to 2-D, [prod(d[:axis]),
/// prod(d[axis:])], and normalise each row (Hardmax: mark its maximum). That equals the opset-13
/// op on `axis` when every dim after `axis` is 1 (the classifier heads of the light models,
/// [1,1000,1,1]); otherwise it is spelled Reshape -> op(axis=1) -> Reshape back.
Expected<std::vector<Value*>> convert_softmax_coerced(ConvertContext& ctx) {
  Value* x = ctx.input(0);
  const Shape& shape = x->shape();
  int rank = x->rank();
  int64_t axis_attr = ctx.attrs().get_int("axis", 1);
  // Before opset 13 an axis equal to the rank was accepted (it makes every row one element).
  std::optional<int> axis = axis_attr == rank ? std::optional<int>(rank) : normalize_axis(axis_attr, rank);
  if (!axis || rank == 0) return ctx.error("axis {} is out of range for a rank-{} input", axis_attr, rank);

  bool trailing_ones = *axis < rank;
  for (int i = *axis + 1; i < rank; ++i)
    trailing_ones = trailing_ones && shape[i].is_static() && shape[i].value == 1;
  if (trailing_ones) {
    Attributes attrs;
    attrs.set("axis", int64_t{*axis});
    AOTC_ASSIGN_OR_RETURN(Value * y, ctx.emit1(ctx.op_type(), {x}, attrs));
    return std::vector<Value*>{y};
  }
  if (!is_static(shape))
    return ctx.unsupported_error(
        "coercing input {} to 2-D at axis {} needs static dims (opset < 13 semantics); bind the "
        "symbolic dims or use opset 13", x->type().to_string(), *axis);
  std::vector<int64_t> dims = static_dims(shape);
  std::vector<int64_t> rows_cols = {product(dims, 0, *axis), product(dims, *axis)};
  Value* shape_2d = ctx.constant(TensorData::from_int64(rows_cols), "shape_2d");
  Value* shape_nd = ctx.constant(TensorData::from_int64(dims), "shape_nd");
  AOTC_ASSIGN_OR_RETURN(Value * x2, ctx.emit1("Reshape", {x, shape_2d}));
  Attributes attrs;
  attrs.set("axis", int64_t{1});
  AOTC_ASSIGN_OR_RETURN(Value * y2, ctx.emit1(ctx.op_type(), {x2}, attrs));
  AOTC_ASSIGN_OR_RETURN(Value * y, ctx.emit1("Reshape", {y2, shape_nd}));
  return std::vector<Value*>{y};
}

/// Ops whose ONNX form at this version is the core op's form.
Expected<std::vector<Value*>> convert_direct(ConvertContext& ctx) {
  return ctx.emit(ctx.op_type(), ctx.inputs(), ctx.attrs(), ctx.num_outputs());
}

}  // namespace

void register_norm_converters(ConverterRegistry& r) {
  r.add("BatchNormalization", 1, convert_batch_norm_legacy);
  r.add("BatchNormalization", 14, convert_batch_norm);
  r.add_direct("LayerNormalization");
  for (const char* op : {"Softmax", "LogSoftmax", "Hardmax"}) {
    r.add(op, 1, convert_softmax_coerced);
    r.add(op, 13, convert_direct);
  }
  r.add_direct("LRN");
}

}  // namespace aotc::frontend
