// ONNX -> core op converters for the 'pad' family.
//
// Pad-2 carries pads and the fill value as attributes; Pad-11 moved them to inputs (the form of
// the core op); Pad-13 added bf16, Pad-18 the `axes` input, Pad-19 the wrap mode and Pad-21 to
// Pad-25 more dtypes. From Pad-11 on, each version only adds what the core op already accepts,
// so one converter serves them all.
//
// CenterCropPad-18 becomes one core Pad whose negative pads crop: per axis, the difference
// between the input extent and the requested one, half (rounded down) before and the rest after,
// as the ONNX reference does.
#include <fmt/ranges.h>

#include "frontend/converters/all_converters.h"
#include "frontend/converters/constant_operands.h"
#include "graph/ops/op_helpers.h"

namespace aotc::frontend {
namespace {

using Values = std::vector<Value*>;

Expected<Values> convert_pad_2(ConvertContext& ctx) {
  if (!ctx.attrs().has("pads")) return ctx.error("required attribute 'pads' is missing");
  Value* x = ctx.input(0);
  Values inputs = {x, ctx.constant(TensorData::from_int64(ctx.attrs().get_ints("pads")), "pads")};
  double value = ctx.attrs().get_float("value", 0.0);
  if (value != 0.0)
    inputs.push_back(ctx.constant(TensorData::filled(x->dtype(), {}, value), "value"));
  Attributes attrs;
  attrs.set("mode", ctx.attrs().get_string("mode", "constant"));
  return ctx.emit("Pad", inputs, attrs);
}

Expected<Values> convert_center_crop_pad(ConvertContext& ctx) {
  Value* x = ctx.input(0);
  const int rank = x->rank();
  AOTC_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> shape, constant_ints(ctx, 1, "shape"));
  if (!shape) return ctx.error("required input 'shape' is missing");
  std::vector<int64_t> axes = ctx.attrs().get_ints("axes");
  if (!ctx.attrs().has("axes"))
    for (int i = 0; i < rank; ++i) axes.push_back(i);
  if (shape->size() != axes.size())
    return ctx.error("shape has {} values but there are {} axes", shape->size(), axes.size());

  std::vector<int64_t> pads(2 * rank, 0);
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < axes.size(); ++i) {
    std::optional<int> a = normalize_axis(axes[i], rank);
    if (!a)
      return ctx.error("axis {} is out of range for input {}", axes[i], x->type().to_string());
    if (seen[*a]) return ctx.error("axis {} appears twice in axes [{}]", *a, fmt::join(axes, ", "));
    seen[*a] = true;
    int64_t want = (*shape)[i];
    if (want < 0) return ctx.error("shape [{}] has a negative extent", fmt::join(*shape, ", "));
    const Dim& d = x->shape()[*a];
    if (!d.is_static()) {
      return ctx.unsupported_error("axis {} of {} is symbolic; CenterCropPad needs its extent", *a,
                                   x->type().to_string());
    }
    // Positive: padding; negative: cropping. The odd element goes to the end either way.
    int64_t diff = want - d.value;
    int64_t half = (diff >= 0 ? diff : -diff) / 2;
    int64_t lead = diff >= 0 ? half : -half;
    pads[*a] = lead;
    pads[*a + rank] = diff - lead;
  }
  Attributes attrs;
  attrs.set("mode", std::string("constant"));
  return ctx.emit("Pad", {x, ctx.constant(TensorData::from_int64(pads), "pads")}, attrs);
}

}  // namespace

void register_pad_converters(ConverterRegistry& r) {
  r.add("Pad", 2, convert_pad_2);
  r.add("Pad", 11, [](ConvertContext& ctx) { return ctx.emit("Pad", ctx.inputs(), ctx.attrs()); });
  r.add("CenterCropPad", 18, convert_center_crop_pad);
}

}  // namespace aotc::frontend
