// ONNX -> core op converters for the 'norm' family: BatchNormalization, LayerNormalization,
// InstanceNormalization, GroupNormalization, RMSNormalization, MeanVarianceNormalization,
// LpNormalization, Softmax, LogSoftmax and LRN. The core ops follow the latest ONNX forms (see
// graph/ops/norm.cpp); what differs between versions is handled here.
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
  std::optional<int> axis =
      axis_attr == rank ? std::optional<int>(rank) : normalize_axis(axis_attr, rank);
  if (!axis || rank == 0)
    return ctx.error("axis {} is out of range for a rank-{} input", axis_attr, rank);

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
        "symbolic dims or use opset 13",
        x->type().to_string(), *axis);
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

/// InstanceNormalization-1/6/22 is GroupNormalization with one group per channel: each group
/// is then a single channel, normalised over its spatial extent, with per-channel scale and B.
Expected<std::vector<Value*>> convert_instance_norm(ConvertContext& ctx) {
  Value* x = ctx.input(0);
  if (x->rank() < 2)
    return ctx.error("input must have rank >= 2 (N x C x ...), got {}", x->type().to_string());
  const Dim& channels = x->shape()[1];
  if (!channels.is_static())
    return ctx.unsupported_error("the channel count of {} must be static", x->type().to_string());
  Attributes attrs;
  attrs.set("epsilon", ctx.attrs().get_float("epsilon", 1e-5));
  attrs.set("num_groups", channels.value);
  AOTC_ASSIGN_OR_RETURN(Value * y, ctx.emit1("GroupNormalization", ctx.inputs(), attrs));
  return std::vector<Value*>{y};
}

/// GroupNormalization-18 takes scale and bias per group ([G]); the core op (version 21) takes
/// them per channel, so each value is repeated for the C/G channels of its group:
/// Reshape [G, 1] -> Expand [G, C/G] -> Reshape [C]. Constant operands fold to constants.
Expected<std::vector<Value*>> convert_group_norm_18(ConvertContext& ctx) {
  Value* x = ctx.input(0);
  int64_t groups = ctx.attrs().get_int("num_groups", 0);
  if (x->rank() < 2)
    return ctx.error("X must have rank >= 2 (N x C x ...), got {}", x->type().to_string());
  const Dim& channels = x->shape()[1];
  if (!channels.is_static())
    return ctx.unsupported_error("the channel count of {} must be static", x->type().to_string());
  if (groups < 1 || channels.value % groups != 0)
    return ctx.error("num_groups {} does not divide the {} channels of X", groups, channels.value);
  std::vector<Value*> inputs = {x};
  for (int i = 1; i <= 2; ++i) {
    Value* v = ctx.input(i);
    if (!v || v->rank() != 1 || !(v->shape()[0] == Dim(groups)))
      return ctx.error("{} must have shape [{}] (one value per group) in opset 18",
                       i == 1 ? "scale" : "bias", groups);
    Value* grid = ctx.constant(TensorData::from_int64({groups, 1}), "group_column");
    Value* repeat =
        ctx.constant(TensorData::from_int64({groups, channels.value / groups}), "group_repeat");
    Value* flat = ctx.constant(TensorData::from_int64({channels.value}), "per_channel");
    AOTC_ASSIGN_OR_RETURN(Value * column, ctx.emit1("Reshape", {v, grid}));
    AOTC_ASSIGN_OR_RETURN(Value * repeated, ctx.emit1("Expand", {column, repeat}));
    AOTC_ASSIGN_OR_RETURN(Value * per_channel, ctx.emit1("Reshape", {repeated, flat}));
    inputs.push_back(per_channel);
  }
  AOTC_ASSIGN_OR_RETURN(Value * y, ctx.emit1("GroupNormalization", inputs, ctx.attrs()));
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
  r.add("InstanceNormalization", 1, convert_instance_norm);
  r.add("GroupNormalization", 18, convert_group_norm_18);
  r.add("GroupNormalization", 21, convert_direct);
  r.add("RMSNormalization", 23, convert_direct);
  // MeanVarianceNormalization-13 and LpNormalization-22 only widened the dtypes.
  r.add("MeanVarianceNormalization", 9, convert_direct);
  r.add("LpNormalization", 1, convert_direct);
}

}  // namespace aotc::frontend
