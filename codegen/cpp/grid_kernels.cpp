// Portable C++ kernel bodies for the 'grid' op family (graph/ops/grid.cpp).
//
// GridSample: per output point, the taps of each spatial axis (1, 2 or 4), their weights and
// their element offsets are computed once, then every channel sums the tensor product of the
// taps. The arithmetic is the reference's, step for step (coordinates rounded to float as the
// ONNX reference stores them, sums in double). Run-time coordinates never index out of bounds:
// zeros padding skips out-of-range taps, border and reflection padding clamp after mapping, and
// a non-finite or huge coordinate becomes an index far out of range before that.
// AffineGrid: one small matrix-vector product per output point.
#include <algorithm>

#include "codegen/cpp/cpp_kernel.h"
#include "graph/ops/grid_ops.h"
#include "graph/ops/op_helpers.h"

namespace aotc::codegen {
namespace {

using Mode = GridSampleParams::Mode;
using Pad = GridSampleParams::Padding;

std::string double_list(const std::vector<double>& v) {
  std::string s = "{";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + fmt::format("{:.17g}", v[i]);
  return s + "}";
}

Status emit_grid_sample(CppKernel& k) {
  AOTC_ASSIGN_OR_RETURN(GridSampleParams p, resolve_grid_sample(k.node));
  CodeWriter& w = k.w;
  const DType xt = k.node.input(0)->dtype(), gt = k.node.input(1)->dtype();
  const int nd = p.spatial(), taps = p.taps();
  const int64_t in_count = product(p.in_dims), out_count = product(p.out_dims);
  int64_t combos = 1;
  for (int d = 0; d < nd; ++d) combos *= taps;
  static const char* kModes[] = {"linear", "nearest", "cubic"};
  static const char* kPads[] = {"zeros", "border", "reflection"};
  w.line("// GridSample: {} interpolation, {} padding, align_corners = {}; {} spatial axes.",
         kModes[static_cast<int>(p.mode)], kPads[static_cast<int>(p.padding)],
         p.align_corners ? 1 : 0, nd);
  if (p.n * p.c * out_count == 0) {
    w.line("// Nothing to write: the result is empty.");
    return Status::ok();
  }
  std::vector<double> lo, hi, len;
  for (int d = 0; d < nd; ++d) {
    lo.push_back(p.lower(d));
    hi.push_back(p.upper(d));
    len.push_back(static_cast<double>(p.in_dims[d]));
  }
  w.line("constexpr int64_t kN = {}, kC = {}, kIn = {}, kOut = {}, kCombos = {};", p.n, p.c,
         in_count, out_count, combos);
  w.line("constexpr int kD = {}, kTaps = {};", nd, taps);
  w.line("static const int64_t kDims[kD] = {};", int_list(p.in_dims));
  w.line("static const int64_t kStrides[kD] = {};", int_list(row_major_strides(p.in_dims)));
  w.line("static const double kLo[kD] = {}, kHi[kD] = {};", double_list(lo), double_list(hi));
  // Reflection about [lo, hi] as the reference's _gs_reflect, with the fold count's parity
  // taken in double so that no huge value is converted to an integer.
  w.raw_line("auto reflect = [](double x, double lo, double hi) -> double {");
  w.raw_line("  const double range = hi - lo;");
  w.raw_line("  if (!(range > 0)) return lo;");
  w.raw_line("  if (x < lo) {");
  w.raw_line("    const double dx = lo - x, q = std::floor(dx / range), r = dx - q * range;");
  w.raw_line("    return std::fmod(q, 2.0) == 0 ? lo + r : hi - r;");
  w.raw_line("  }");
  w.raw_line("  if (x > hi) {");
  w.raw_line("    const double dx = x - hi, q = std::floor(dx / range), r = dx - q * range;");
  w.raw_line("    return std::fmod(q, 2.0) == 0 ? hi - r : lo + r;");
  w.raw_line("  }");
  w.raw_line("  return x;");
  w.raw_line("};");
  w.raw_line(
      "auto to_index = [](double f) -> int64_t { return f >= -1e15 && f <= 1e15 ? "
      "static_cast<int64_t>(f) : -(int64_t{1} << 50); };");
  w.open("for (int64_t n = 0; n < kN; ++n)");
  w.open("for (int64_t o = 0; o < kOut; ++o)");
  w.line("int64_t off[kD][kTaps];");
  w.line("double wt[kD][kTaps];");
  w.line("bool ok[kD][kTaps];");
  w.open("for (int d = 0; d < kD; ++d)");
  w.line("const double len = static_cast<double>(kDims[d]);");
  w.line("const double v = static_cast<double>({});",
         load(gt, k.in[1], "(n * kOut + o) * kD + (kD - 1 - d)"));
  if (p.align_corners)
    w.line("double x = static_cast<float>((v + 1.0) / 2.0 * (len - 1.0));");
  else
    w.line("double x = static_cast<float>(((v + 1.0) * len - 1.0) / 2.0);");
  if (p.mode == Mode::kNearest) w.line("x = std::nearbyint(x);");
  if (p.padding == Pad::kBorder)
    w.line("if (x < kLo[d] || x > kHi[d]) x = std::min(std::max(x, 0.0), len - 1.0);");
  if (p.padding == Pad::kReflection)
    w.line("if (x < kLo[d] || x > kHi[d]) x = static_cast<float>(reflect(x, kLo[d], kHi[d]));");
  switch (p.mode) {
    case Mode::kNearest:
      w.line("const int64_t base = to_index(std::trunc(x));");
      w.line("wt[d][0] = 1.0;");
      break;
    case Mode::kLinear:
      w.line("const double f = std::floor(x), t = x - f;");
      w.line("const int64_t base = to_index(f);");
      w.line("wt[d][0] = 1.0 - t;");
      w.line("wt[d][1] = t;");
      break;
    case Mode::kCubic:
      w.line("const double f = std::floor(x), t = std::fabs(x - f), a = -0.75;");
      w.line("const int64_t base = to_index(f) - 1;");
      w.line("wt[d][0] = ((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a;");
      w.line("wt[d][1] = ((a + 2) * t - (a + 3)) * t * t + 1;");
      w.line("wt[d][2] = ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1;");
      w.line("wt[d][3] = ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a;");
      break;
  }
  w.open("for (int t = 0; t < kTaps; ++t)");
  w.line("int64_t i = base + t;");
  if (p.padding == Pad::kZeros) {
    w.line("ok[d][t] = i >= 0 && i < kDims[d];");
    w.line("off[d][t] = ok[d][t] ? i * kStrides[d] : 0;");
  } else {
    if (p.padding == Pad::kReflection)
      w.line(
          "if (i < 0 || i >= kDims[d]) i = static_cast<int64_t>(reflect(static_cast<double>(i), "
          "kLo[d], kHi[d]));");
    w.line("i = std::min<int64_t>(std::max<int64_t>(i, 0), kDims[d] - 1);");
    w.line("ok[d][t] = true;");
    w.line("off[d][t] = i * kStrides[d];");
  }
  w.close();
  w.close();
  w.open("for (int64_t c = 0; c < kC; ++c)");
  w.line("const int64_t plane = (n * kC + c) * kIn;");
  w.line("double acc = 0;");
  w.open("for (int64_t combo = 0; combo < kCombos; ++combo)");
  w.line("int64_t r = combo, offset = 0;");
  w.line("double weight = 1;");
  w.line("bool valid = true;");
  w.open("for (int d = kD - 1; d >= 0; --d)");
  w.line("const int t = static_cast<int>(r % kTaps);");
  w.line("r /= kTaps;");
  w.line("offset += off[d][t];");
  w.line("weight *= wt[d][t];");
  w.line("valid = valid && ok[d][t];");
  w.close();
  w.line("if (valid) acc += weight * static_cast<double>({});", load(xt, k.in[0], "plane + offset"));
  w.close();
  w.line("{}", store(xt, k.out[0], "(n * kC + c) * kOut + o",
                     fmt::format("static_cast<{}>(acc)", compute_type(xt))));
  w.close();
  w.close();
  w.close();
  return Status::ok();
}

Status emit_affine_grid(CppKernel& k) {
  const TensorType& y = k.node.output(0)->type();
  const DType t = y.dtype;
  std::vector<int64_t> dims = static_dims(y.shape);
  const int nd = static_cast<int>(dims.size()) - 2;
  std::vector<int64_t> spatial(dims.begin() + 1, dims.end() - 1);
  const bool align = k.node.attrs().get_int("align_corners", 0) != 0;
  CodeWriter& w = k.w;
  w.line("// AffineGrid: {} grid{} of {} points, align_corners = {}.", dims[0],
         dims[0] == 1 ? "" : "s", shape_to_string(make_shape(spatial)), align ? 1 : 0);
  if (product(dims) == 0) {
    w.line("// Nothing to write: the result is empty.");
    return Status::ok();
  }
  w.line("constexpr int64_t kN = {}, kPoints = {};", dims[0], product(spatial));
  w.line("constexpr int kD = {};", nd);
  w.line("static const int64_t kDims[kD] = {};", int_list(spatial));
  w.open("for (int64_t n = 0; n < kN; ++n)");
  w.open("for (int64_t p = 0; p < kPoints; ++p)");
  w.line("double h[kD + 1];");
  w.line("h[kD] = 1.0;");
  w.line("int64_t rest = p;");
  w.open("for (int axis = kD - 1; axis >= 0; --axis)");
  w.line("const double len = static_cast<double>(kDims[axis]);");
  w.line("const double i = static_cast<double>(rest % kDims[axis]);");
  w.line("rest /= kDims[axis];");
  if (align)
    w.line("h[kD - 1 - axis] = len > 1 ? -1.0 + 2.0 * i / (len - 1) : -1.0;");
  else
    w.line("h[kD - 1 - axis] = -1.0 + (2.0 * i + 1.0) / len;");
  w.close();
  w.open("for (int r = 0; r < kD; ++r)");
  w.line("double acc = 0;");
  w.line("for (int j = 0; j <= kD; ++j) acc += static_cast<double>({}) * h[j];",
         load(k.node.input(0)->dtype(), k.in[0], "(n * kD + r) * (kD + 1) + j"));
  w.line("{}", store(t, k.out[0], "(n * kPoints + p) * kD + r",
                     fmt::format("static_cast<{}>(acc)", compute_type(t))));
  w.close();
  w.close();
  w.close();
  return Status::ok();
}

/// RoiAlign, the reference's arithmetic per sample. A batch index outside [0, N) is clamped, a
/// non-finite sample point counts as outside the image, and the sampling grid of a region
/// (ceil(size / bins) without sampling_ratio) is capped at the image's extent plus one so that
/// a wild region cannot make the loop run for ever.
Status emit_roi_align(CppKernel& k) {
  const Node& node = k.node;
  const TensorType& x = node.input(0)->type();
  const TensorType& y = node.output(0)->type();
  if (!is_static(x.shape) || !is_static(y.shape))
    return unsupported("{}: needs static shapes, got X {} and Y {}", node.describe(), x.to_string(),
                       y.to_string());
  const std::vector<int64_t> xd = static_dims(x.shape), yd = static_dims(y.shape);
  const int64_t ratio = node.attrs().get_int("sampling_ratio", 0);
  const double scale = node.attrs().get_float("spatial_scale", 1.0);
  const bool half = node.attrs().get_string("coordinate_transformation_mode", "half_pixel") == "half_pixel";
  const bool is_max = node.attrs().get_string("mode", "avg") == "max";
  const DType rt = node.input(1)->dtype();
  CodeWriter& w = k.w;
  w.line("// RoiAlign: {} of {} region(s) of {} into {}x{} bins, sampling ratio {}.",
         is_max ? "max" : "average", yd[0], x.to_string(), yd[2], yd[3], ratio);
  if (product(yd) == 0) return Status::ok();
  if (product(xd) == 0) return unsupported("{}: samples an empty image", node.describe());
  w.line("constexpr int64_t kBatch = {}, kC = {}, kH = {}, kW = {}, kRois = {}, kOH = {}, kOW = {};",
         xd[0], xd[1], xd[2], xd[3], yd[0], yd[2], yd[3]);
  w.line("const double scale = {:.17g}, off = {};", scale, half ? "0.5" : "0.0");
  w.open("for (int64_t n = 0; n < kRois; ++n)");
  w.line("int64_t b = static_cast<int64_t>({}[n]);", k.in[2]);
  w.line("b = b < 0 ? 0 : (b >= kBatch ? kBatch - 1 : b);");
  w.line("const double sw = static_cast<double>({}) * scale - off, sh = static_cast<double>({}) * scale - off;",
         load(rt, k.in[1], "n * 4"), load(rt, k.in[1], "n * 4 + 1"));
  w.line("const double ew = static_cast<double>({}) * scale - off, eh = static_cast<double>({}) * scale - off;",
         load(rt, k.in[1], "n * 4 + 2"), load(rt, k.in[1], "n * 4 + 3"));
  w.line("double rw = ew - sw, rh = eh - sh;");
  if (!half) {
    w.line("rw = std::max(rw, 1.0);");
    w.line("rh = std::max(rh, 1.0);");
  }
  w.line("const double bh = rh / kOH, bw = rw / kOW;");
  if (ratio > 0) {
    w.line("const int64_t gh = {0}, gw = {0};", ratio);
  } else {
    w.line("const double ch = std::ceil(rh / kOH), cw = std::ceil(rw / kOW);");
    w.line("const int64_t gh = ch >= 0 && ch <= kH + 1 ? static_cast<int64_t>(ch) : (ch > 0 ? kH + 1 : 0);");
    w.line("const int64_t gw = cw >= 0 && cw <= kW + 1 ? static_cast<int64_t>(cw) : (cw > 0 ? kW + 1 : 0);");
  }
  w.line("const double count = static_cast<double>(gh * gw > 1 ? gh * gw : 1);");
  w.open("for (int64_t c = 0; c < kC; ++c)");
  w.line("const int64_t plane = (b * kC + c) * kH * kW;");
  w.open("for (int64_t ph = 0; ph < kOH; ++ph)");
  w.open("for (int64_t pw = 0; pw < kOW; ++pw)");
  w.line("double acc = 0;");
  w.line("bool first = true;");
  w.open("for (int64_t iy = 0; iy < gh; ++iy)");
  w.open("for (int64_t ix = 0; ix < gw; ++ix)");
  w.line("double yy = sh + ph * bh + (iy + 0.5) * bh / gh;");
  w.line("double xx = sw + pw * bw + (ix + 0.5) * bw / gw;");
  w.line("double v0 = 0, v1 = 0, v2 = 0, v3 = 0;");
  w.open("if (yy >= -1.0 && yy <= kH && xx >= -1.0 && xx <= kW)");
  w.line("yy = std::max(yy, 0.0);");
  w.line("xx = std::max(xx, 0.0);");
  w.line("int64_t yl = static_cast<int64_t>(yy), xl = static_cast<int64_t>(xx), yh, xh;");
  w.line("if (yl >= kH - 1) {{ yh = yl = kH - 1; yy = static_cast<double>(yl); }} else {{ yh = yl + 1; }}");
  w.line("if (xl >= kW - 1) {{ xh = xl = kW - 1; xx = static_cast<double>(xl); }} else {{ xh = xl + 1; }}");
  w.line("const double ly = yy - yl, lx = xx - xl, hy = 1.0 - ly, hx = 1.0 - lx;");
  const DType xt = x.dtype;
  w.line("v0 = hy * hx * static_cast<double>({});", load(xt, k.in[0], "plane + yl * kW + xl"));
  w.line("v1 = hy * lx * static_cast<double>({});", load(xt, k.in[0], "plane + yl * kW + xh"));
  w.line("v2 = ly * hx * static_cast<double>({});", load(xt, k.in[0], "plane + yh * kW + xl"));
  w.line("v3 = ly * lx * static_cast<double>({});", load(xt, k.in[0], "plane + yh * kW + xh"));
  w.close();
  if (is_max) {
    w.line("const double m = std::max(std::max(v0, v1), std::max(v2, v3));");
    w.line("acc = first ? m : std::max(acc, m);");
    w.line("first = false;");
  } else {
    w.line("acc += v0 + v1 + v2 + v3;");
  }
  w.close();
  w.close();
  w.line("(void)first;");
  w.line("{}", store(xt, k.out[0], "((n * kC + c) * kOH + ph) * kOW + pw",
                     fmt::format("static_cast<{}>({})", compute_type(xt), is_max ? "acc" : "acc / count")));
  w.close();
  w.close();
  w.close();
  w.close();
  return Status::ok();
}

}  // namespace

void register_grid_cpp_kernels(CppKernelRegistry& r) {
  r.add("GridSample", emit_grid_sample);
  r.add("AffineGrid", emit_affine_grid);
  r.add("RoiAlign", emit_roi_align);
}

}  // namespace aotc::codegen
