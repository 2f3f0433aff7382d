// ONNX -> core op converters for the 'resize' family: Resize-10..19 and Upsample-7/9 become the
// core Resize (Resize-19 semantics, graph/ops/resize.cpp).
//
//   - Upsample-7 (scales attribute), Upsample-9 (scales input) and Resize-10 (X, scales) predate
//     coordinate_transformation_mode: their output position y reads input position y / scale,
//     the nearest element being the one below it. That is the core op's asymmetric transform
//     with nearest_mode floor, which is what ONNX's own version converter (Resize 10 -> 11)
//     writes. Upsample's "bilinear" spelling is the linear mode.
//   - Resize-11 added roi, sizes and the attributes; Resize-13 made roi and scales optional;
//     Resize-18 added antialias, axes and keep_aspect_ratio_policy; Resize-19 the
//     half_pixel_symmetric transform. Each only adds what the core op accepts, so one converter
//     serves 11 and later. It drops the operands older exporters fill with empty tensors (roi
//     and scales when unused), and roi entirely unless tf_crop_and_resize reads it.
#include "frontend/converters/all_converters.h"
#include "graph/ops/op_helpers.h"

namespace aotc::frontend {
namespace {

using Values = std::vector<Value*>;

/// True for an absent operand or an empty tensor (the "not given" of Resize-11/13 models).
bool absent_or_empty(const Value* v) {
  if (!v) return true;
  std::optional<int64_t> n = element_count(v->shape());
  return n && *n == 0;
}

/// The core Resize of the pre-11 forms: asymmetric coordinates, nearest rounding down.
Expected<Values> emit_legacy_resize(ConvertContext& ctx, Value* scales) {
  std::string mode = ctx.attrs().get_string("mode", "nearest");
  if (mode == "bilinear" || mode == "trilinear") mode = "linear";
  if (mode != "nearest" && mode != "linear")
    return ctx.error("mode '{}' is not nearest or linear", mode);
  Attributes attrs;
  attrs.set("mode", mode);
  attrs.set("coordinate_transformation_mode", std::string("asymmetric"));
  if (mode == "nearest") attrs.set("nearest_mode", std::string("floor"));
  return ctx.emit("Resize", {ctx.input(0), nullptr, scales}, std::move(attrs));
}

Expected<Values> convert_upsample_7(ConvertContext& ctx) {
  if (!ctx.attrs().has("scales")) return ctx.error("required attribute 'scales' is missing");
  std::vector<float> scales;
  for (double s : ctx.attrs().get_floats("scales")) scales.push_back(static_cast<float>(s));
  const int64_t n = static_cast<int64_t>(scales.size());
  return emit_legacy_resize(ctx, ctx.constant(TensorData::from_float(scales, {n}), "scales"));
}

Expected<Values> convert_scales_input(ConvertContext& ctx) {
  if (!ctx.input(1)) return ctx.error("required input 'scales' is missing");
  return emit_legacy_resize(ctx, ctx.input(1));
}

Expected<Values> convert_resize_11(ConvertContext& ctx) {
  const bool crop = ctx.attrs().get_string("coordinate_transformation_mode", "half_pixel") ==
                    "tf_crop_and_resize";
  Value* roi = ctx.input(1);
  Value* scales = ctx.input(2);
  Value* sizes = ctx.input(3);
  Values inputs = {ctx.input(0), crop && !absent_or_empty(roi) ? roi : nullptr,
                   absent_or_empty(scales) ? nullptr : scales,
                   absent_or_empty(sizes) ? nullptr : sizes};
  while (inputs.size() > 1 && inputs.back() == nullptr) inputs.pop_back();
  return ctx.emit("Resize", std::move(inputs), ctx.attrs());
}

}  // namespace

void register_resize_converters(ConverterRegistry& r) {
  r.add("Upsample", 7, convert_upsample_7);
  r.add("Upsample", 9, convert_scales_input);
  r.add("Resize", 10, convert_scales_input);
  r.add("Resize", 11, convert_resize_11);
}

}  // namespace aotc::frontend
