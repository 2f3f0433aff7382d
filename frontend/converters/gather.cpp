// ONNX -> core op converters for the 'gather' family (graph/ops/gather.cpp), opset 7 onwards.
//
// Gather-1/11/13, GatherElements-11/13 and GatherND-11/12/13 differ only in what they document or
// add (negative indices from 11, GatherND's batch_dims from 12, bfloat16 from 13), all of which
// the core ops accept, so every version maps onto them unchanged.
//
// Compress (9, 11: negative axis) is not a core op: its condition decides the output shape, so it
// must be known at compile time, and then Compress is a Gather at the constant positions of the
// true entries (after flattening the input when no axis is given).
#include "frontend/converters/all_converters.h"
#include "graph/ops/op_helpers.h"
#include "passes/constant_evaluator.h"

namespace aotc::frontend {
namespace {

Expected<std::vector<Value*>> convert_compress(ConvertContext& ctx) {
  Value* x = ctx.input(0);
  Value* condition = ctx.input(1);
  if (!condition) return ctx.error("input 1 ('condition') is required");
  if (!condition->is_constant())
    if (Value* folded = fold_to_constant(ctx.graph(), condition)) condition = folded;
  if (!condition->is_constant())
    return Status::error(
        ErrorKind::kNeedsConstant,
        fmt::format("node '{}' ({}): input '{}' (condition, which sets the output shape) must "
                    "be known at compile time",
                    ctx.node_name(), ctx.op_type(), condition->name()));
  const TensorData& cond = *condition->constant_data();
  if (cond.rank() != 1) return ctx.error("condition must be 1-D, got {}", cond.type().to_string());

  Value* source = x;
  int64_t axis = 0;
  if (ctx.attrs().has("axis")) {
    int64_t attr = ctx.attrs().get_int("axis", 0);
    std::optional<int> a = normalize_axis(attr, x->rank());
    if (!a) return ctx.error("axis {} is out of range for input {}", attr, x->type().to_string());
    axis = *a;
  } else {
    // No axis: select from the flattened input.
    Value* flat_shape = ctx.constant(TensorData::from_int64({-1}), "flat_shape");
    AOTC_ASSIGN_OR_RETURN(source, ctx.emit1("Reshape", {x, flat_shape}));
  }
  const Dim& extent = source->shape()[axis];
  std::vector<int64_t> positions;
  for (int64_t i = 0; i < cond.num_elements(); ++i) {
    if (cond.get_double(i) == 0.0) continue;
    // A condition longer than the axis may only be false past its end (numpy's rule).
    if (extent.is_static() && i >= extent.value)
      return ctx.error("condition is true at position {}, past the end of axis {} (extent {})", i,
                       axis, extent.value);
    positions.push_back(i);
  }
  Value* indices = ctx.constant(
      TensorData::from_int64(positions, {static_cast<int64_t>(positions.size())}), "positions");
  Attributes attrs;
  attrs.set("axis", axis);
  AOTC_ASSIGN_OR_RETURN(Value * y, ctx.emit1("Gather", {source, indices}, attrs));
  return std::vector<Value*>{y};
}

}  // namespace

void register_gather_converters(ConverterRegistry& r) {
  r.add_direct("Gather");
  r.add_direct("GatherElements");
  r.add_direct("GatherND");
  r.add("Compress", 9, convert_compress);
}

}  // namespace aotc::frontend
