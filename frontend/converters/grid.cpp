// ONNX -> core op converters for the 'grid' family (graph/ops/grid.cpp).
//
// GridSample-16 spelled the modes bilinear and bicubic and was 4-D only; GridSample-20 renamed
// them linear and cubic and allowed 5-D; GridSample-22 only added dtypes. The core op takes the
// newer spelling. AffineGrid-20 is the only version and maps 1:1.

#include "frontend/converters/all_converters.h"

namespace aotc::frontend {
namespace {

Expected<std::vector<Value*>> convert_grid_sample_16(ConvertContext& ctx) {
  Attributes attrs = ctx.attrs();
  std::string mode = attrs.get_string("mode", "bilinear");
  if (mode == "bilinear") mode = "linear";
  else if (mode == "bicubic") mode = "cubic";
  else if (mode != "nearest") return ctx.error("mode '{}' is not bilinear, nearest or bicubic", mode);
  attrs.set("mode", mode);
  return ctx.emit("GridSample", {ctx.input(0), ctx.input(1)}, std::move(attrs));
}

/// RoiAlign-10 predates coordinate_transformation_mode; it computed what is now
/// output_half_pixel. RoiAlign-16 added the attribute (default half_pixel), 22 only dtypes.
Expected<std::vector<Value*>> convert_roi_align_10(ConvertContext& ctx) {
  Attributes attrs = ctx.attrs();
  attrs.set("coordinate_transformation_mode", std::string("output_half_pixel"));
  return ctx.emit("RoiAlign", ctx.inputs(), std::move(attrs));
}

}  // namespace

void register_grid_converters(ConverterRegistry& r) {
  r.add("GridSample", 16, convert_grid_sample_16);
  r.add("GridSample", 20, [](ConvertContext& ctx) -> Expected<std::vector<Value*>> {
    return ctx.emit("GridSample", ctx.inputs(), ctx.attrs());
  });
  r.add_direct("AffineGrid");
  r.add("RoiAlign", 10, convert_roi_align_10);
  r.add("RoiAlign", 16, [](ConvertContext& ctx) -> Expected<std::vector<Value*>> {
    return ctx.emit("RoiAlign", ctx.inputs(), ctx.attrs());
  });
}

}  // namespace aotc::frontend
