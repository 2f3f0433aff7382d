// Op family 'grid': sampling an image at the normalized coordinates of a grid, and making such
// grids.
//   - GridSample (ONNX GridSample-22 semantics; the frontend maps GridSample-16's bilinear and
//     bicubic spellings): Y[n, c, p] samples X[n, c] at the point grid[n, p] (x first, i.e. the
//     last spatial axis first) with nearest, linear or cubic (Keys, a = -0.75) interpolation and
//     zeros, border or reflection padding, for 2 or 3 spatial axes.
//   - AffineGrid (ONNX AffineGrid-20): the grid of an affine transform theta applied to the
//     regular grid of `size` (a compile-time input: it is the output shape).
//   - RoiAlign (ONNX RoiAlign-22): the average (or max) of bilinear samples on a regular grid in
//     each bin of each region of interest, as the ONNX reference (Detectron's RoIAlign) computes
//     it, max mode included (the largest of the weighted corner values, not of the samples).
//
// The arithmetic follows the ONNX reference implementation (itself PyTorch's GridSampler.h):
// unnormalized coordinates are rounded to float as the reference stores them in a float32 array,
// nearest mode rounds half to even and then truncates, and out-of-range taps read 0 (zeros), the
// clamped element (border) or the element reflected about the bounds (reflection).
#include <algorithm>
#include <cmath>

#include <fmt/ranges.h>

#include "graph/ops/all_ops.h"
#include "graph/ops/grid_ops.h"
#include "graph/ops/op_helpers.h"

namespace aotc {
namespace {

using Mode = GridSampleParams::Mode;
using Pad = GridSampleParams::Padding;

Status infer_grid_sample(InferContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  const TensorType& grid = ctx.input_type(1);
  if (x.rank() != 4 && x.rank() != 5)
    return ctx.unsupported_error("X must be 4-D or 5-D, got {}", x.to_string());
  if (grid.rank() != x.rank())
    return ctx.error("grid {} must have the rank of X {}", grid.to_string(), x.to_string());
  if (!is_float(x.dtype) || is_storage_only(x.dtype) || !is_float(grid.dtype) ||
      is_storage_only(grid.dtype))
    return ctx.error("X and grid must be float tensors, got {} and {}", x.to_string(),
                     grid.to_string());
  const Dim& last = grid.shape.back();
  if (last.is_static() && last.value != x.rank() - 2)
    return ctx.error("the last axis of grid {} must have {} coordinates", grid.to_string(),
                     x.rank() - 2);
  const std::string mode = ctx.attrs().get_string("mode", "linear");
  if (mode != "linear" && mode != "nearest" && mode != "cubic")
    return ctx.error("mode '{}' is not linear, nearest or cubic", mode);
  const std::string pad = ctx.attrs().get_string("padding_mode", "zeros");
  if (pad != "zeros" && pad != "border" && pad != "reflection")
    return ctx.error("padding_mode '{}' is not zeros, border or reflection", pad);
  Shape out = {grid.shape[0], x.shape[1]};
  for (int d = 1; d + 1 < grid.rank(); ++d) out.push_back(grid.shape[d]);
  ctx.set_output_type(0, TensorType{x.dtype, out});
  return Status::ok();
}

double denormalize(double v, int64_t len, bool align) {
  return align ? (v + 1.0) / 2.0 * static_cast<double>(len - 1)
               : ((v + 1.0) * static_cast<double>(len) - 1.0) / 2.0;
}

/// Reflects x about the bounds until it lies within them (the reference's _gs_reflect).
double reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (!(range > 0)) return lo;
  if (x < lo) {
    const double dx = lo - x, q = std::floor(dx / range), r = dx - q * range;
    return std::fmod(q, 2.0) == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const double dx = x - hi, q = std::floor(dx / range), r = dx - q * range;
    return std::fmod(q, 2.0) == 0 ? hi - r : lo + r;
  }
  return x;
}

/// An integer index for a coordinate, or one far out of range for a non-finite or huge one.
int64_t to_index(double f) { return f >= -1e15 && f <= 1e15 ? static_cast<int64_t>(f) : -(int64_t{1} << 50); }

void cubic_coeffs(double t, double c[4]) {
  const double a = -0.75;
  t = std::fabs(t);
  c[0] = ((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a;
  c[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
  c[2] = ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1;
  c[3] = ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a;
}

Expected<std::vector<TensorData>> reference_grid_sample(const Node& node,
                                                        const std::vector<const TensorData*>& in) {
  AOTC_ASSIGN_OR_RETURN(GridSampleParams p, resolve_grid_sample(node));
  const TensorData& x = *in[0];
  const TensorData& grid = *in[1];
  const int nd = p.spatial(), taps = p.taps();
  const int64_t in_count = product(p.in_dims), out_count = product(p.out_dims);
  const std::vector<int64_t> strides = row_major_strides(p.in_dims);
  std::vector<int64_t> out_dims = {p.n, p.c};
  out_dims.insert(out_dims.end(), p.out_dims.begin(), p.out_dims.end());
  TensorData y(x.dtype(), out_dims);
  int64_t combos = 1;
  for (int d = 0; d < nd; ++d) combos *= taps;
  std::vector<int64_t> off(nd * 4);
  std::vector<double> wt(nd * 4);
  std::vector<char> ok(nd * 4);
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t o = 0; o < out_count; ++o) {
      for (int d = 0; d < nd; ++d) {
        const double len = static_cast<double>(p.in_dims[d]);
        const double v = grid.get_double((n * out_count + o) * nd + (nd - 1 - d));
        double xc = static_cast<float>(denormalize(v, p.in_dims[d], p.align_corners));
        if (p.mode == Mode::kNearest) xc = std::nearbyint(xc);
        if (xc < p.lower(d) || xc > p.upper(d)) {
          if (p.padding == Pad::kBorder) xc = std::clamp(xc, 0.0, len - 1.0);
          if (p.padding == Pad::kReflection)
            xc = static_cast<float>(reflect(xc, p.lower(d), p.upper(d)));
        }
        int64_t base;
        if (p.mode == Mode::kNearest) {
          base = to_index(std::trunc(xc));
          wt[d * 4] = 1.0;
        } else {
          const double f = std::floor(xc);
          base = to_index(f) - (p.mode == Mode::kCubic ? 1 : 0);
          if (p.mode == Mode::kLinear) {
            wt[d * 4] = 1.0 - (xc - f);
            wt[d * 4 + 1] = xc - f;
          } else {
            cubic_coeffs(xc - f, &wt[d * 4]);
          }
        }
        for (int t = 0; t < taps; ++t) {
          int64_t i = base + t;
          bool valid = true;
          if (p.padding == Pad::kZeros) {
            valid = i >= 0 && i < p.in_dims[d];
          } else {
            if (p.padding == Pad::kReflection && (i < 0 || i >= p.in_dims[d]))
              i = static_cast<int64_t>(reflect(static_cast<double>(i), p.lower(d), p.upper(d)));
            i = std::clamp<int64_t>(i, 0, p.in_dims[d] - 1);
          }
          off[d * 4 + t] = valid ? i * strides[d] : 0;
          ok[d * 4 + t] = valid;
        }
      }
      for (int64_t c = 0; c < p.c; ++c) {
        const int64_t plane = (n * p.c + c) * in_count;
        double acc = 0;
        for (int64_t combo = 0; combo < combos; ++combo) {
          int64_t r = combo, offset = 0;
          double w = 1;
          bool valid = true;
          for (int d = nd - 1; d >= 0; --d) {
            const int t = static_cast<int>(r % taps);
            r /= taps;
            offset += off[d * 4 + t];
            w *= wt[d * 4 + t];
            valid = valid && ok[d * 4 + t];
          }
          if (valid) acc += w * x.get_double(plane + offset);
        }
        y.set_double((n * p.c + c) * out_count + o, acc);
      }
    }
  return std::vector<TensorData>{std::move(y)};
}

// --- AffineGrid ---------------------------------------------------------------------------------

Expected<std::vector<int64_t>> affine_grid_size(InferContext& ctx) {
  const TensorData* size = ctx.require_constant(1, "size, the shape of the sampled image");
  if (!size) return ctx.needs_constant_status();
  std::vector<int64_t> s = size->to_int64_vector();
  if (s.size() != 4 && s.size() != 5)
    return ctx.error("size must have 4 or 5 values (N, C, [D,] H, W), got {}", s.size());
  for (int64_t v : s)
    if (v < 0) return ctx.error("size has a negative extent {}", v);
  return s;
}

Status infer_affine_grid(InferContext& ctx) {
  const TensorType& theta = ctx.input_type(0);
  AOTC_ASSIGN_OR_RETURN(std::vector<int64_t> size, affine_grid_size(ctx));
  const int64_t nd = static_cast<int64_t>(size.size()) - 2;
  if (theta.rank() != 3 || !is_float(theta.dtype) || is_storage_only(theta.dtype))
    return ctx.error("theta must be a float [N, {}, {}] tensor, got {}", nd, nd + 1,
                     theta.to_string());
  const Shape want = make_shape({size[0], nd, nd + 1});
  for (int i = 0; i < 3; ++i)
    if (theta.shape[i].is_static() && theta.shape[i].value != want[i].value)
      return ctx.error("theta {} must be [{}, {}, {}] for size [{}]", theta.to_string(), size[0],
                       nd, nd + 1, fmt::join(size, ", "));
  std::vector<int64_t> out = {size[0]};
  out.insert(out.end(), size.begin() + 2, size.end());
  out.push_back(nd);
  ctx.set_output_type(0, TensorType{theta.dtype, make_shape(out)});
  return Status::ok();
}

Expected<std::vector<TensorData>> reference_affine_grid(const Node& node,
                                                        const std::vector<const TensorData*>& in) {
  const TensorData& theta = *in[0];
  const std::vector<int64_t> dims = static_dims(node.output(0)->shape());
  const bool align = node.attrs().get_int("align_corners", 0) != 0;
  const int nd = static_cast<int>(dims.size()) - 2;
  std::vector<int64_t> spatial(dims.begin() + 1, dims.end() - 1);
  TensorData y(node.output(0)->dtype(), dims);
  const int64_t points = product(spatial);
  for (int64_t n = 0; n < dims[0]; ++n) {
    int64_t p = 0;
    for_each_index(spatial, [&](const std::vector<int64_t>& idx) {
      // Homogeneous point (x, y[, z], 1): the last spatial axis first.
      std::vector<double> h(nd + 1, 1.0);
      for (int d = 0; d < nd; ++d) {
        const int axis = nd - 1 - d;
        const double len = static_cast<double>(spatial[axis]), i = static_cast<double>(idx[axis]);
        h[d] = align ? (len > 1 ? -1.0 + 2.0 * i / (len - 1) : -1.0) : -1.0 + (2.0 * i + 1.0) / len;
      }
      for (int r = 0; r < nd; ++r) {
        double acc = 0;
        for (int j = 0; j <= nd; ++j) acc += theta.get_double((n * nd + r) * (nd + 1) + j) * h[j];
        y.set_double((n * points + p) * nd + r, acc);
      }
      ++p;
    });
  }
  return std::vector<TensorData>{std::move(y)};
}

// --- RoiAlign -----------------------------------------------------------------------------------

Status infer_roi_align(InferContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  const TensorType& rois = ctx.input_type(1);
  const TensorType& idx = ctx.input_type(2);
  if (x.rank() != 4 || !is_float(x.dtype) || is_storage_only(x.dtype))
    return ctx.error("X must be a float [N, C, H, W] tensor, got {}", x.to_string());
  if (rois.rank() != 2 || !is_float(rois.dtype) || is_storage_only(rois.dtype) ||
      (rois.shape[1].is_static() && rois.shape[1].value != 4))
    return ctx.error("rois must be a float [num_rois, 4] tensor, got {}", rois.to_string());
  if (idx.rank() != 1 || is_float(idx.dtype))
    return ctx.error("batch_indices must be a 1-D integer tensor, got {}", idx.to_string());
  const std::string mode = ctx.attrs().get_string("mode", "avg");
  if (mode != "avg" && mode != "max") return ctx.error("mode '{}' is not avg or max", mode);
  const std::string ct = ctx.attrs().get_string("coordinate_transformation_mode", "half_pixel");
  if (ct != "half_pixel" && ct != "output_half_pixel")
    return ctx.error("coordinate_transformation_mode '{}' is not half_pixel or output_half_pixel", ct);
  const int64_t oh = ctx.attrs().get_int("output_height", 1), ow = ctx.attrs().get_int("output_width", 1);
  if (oh < 1 || ow < 1) return ctx.error("output_height and output_width must be positive");
  ctx.set_output_type(0, TensorType{x.dtype, Shape{rois.shape[0], x.shape[1], Dim(oh), Dim(ow)}});
  return Status::ok();
}

Expected<std::vector<TensorData>> reference_roi_align(const Node& node,
                                                      const std::vector<const TensorData*>& in) {
  const TensorData& x = *in[0];
  const TensorData& rois = *in[1];
  const std::vector<int64_t>& xd = x.dims();
  const int64_t batch = xd[0], channels = xd[1], height = xd[2], width = xd[3];
  const int64_t n_rois = rois.dims()[0];
  const int64_t oh = node.attrs().get_int("output_height", 1), ow = node.attrs().get_int("output_width", 1);
  const int64_t ratio = node.attrs().get_int("sampling_ratio", 0);
  const double scale = node.attrs().get_float("spatial_scale", 1.0);
  const bool half = node.attrs().get_string("coordinate_transformation_mode", "half_pixel") == "half_pixel";
  const bool is_max = node.attrs().get_string("mode", "avg") == "max";
  TensorData y(x.dtype(), {n_rois, channels, oh, ow});
  for (int64_t n = 0; n < n_rois; ++n) {
    const int64_t b = in[2]->get_int64(n);
    if (b < 0 || b >= batch)
      return invalid_model("{}: batch index {} of roi {} is outside [0, {})", node.describe(), b, n, batch);
    const double off = half ? 0.5 : 0.0;
    const double sw = rois.get_double(n * 4) * scale - off, sh = rois.get_double(n * 4 + 1) * scale - off;
    const double ew = rois.get_double(n * 4 + 2) * scale - off, eh = rois.get_double(n * 4 + 3) * scale - off;
    double rw = ew - sw, rh = eh - sh;
    if (!half) {
      rw = std::max(rw, 1.0);
      rh = std::max(rh, 1.0);
    }
    const double bh = rh / static_cast<double>(oh), bw = rw / static_cast<double>(ow);
    const int64_t gh = ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(rh / static_cast<double>(oh)));
    const int64_t gw = ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(rw / static_cast<double>(ow)));
    const double count = static_cast<double>(std::max<int64_t>(gh * gw, 1));
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t plane = (b * channels + c) * height * width;
      for (int64_t ph = 0; ph < oh; ++ph)
        for (int64_t pw = 0; pw < ow; ++pw) {
          double acc = 0;
          bool first = true;
          for (int64_t iy = 0; iy < gh; ++iy)
            for (int64_t ix = 0; ix < gw; ++ix) {
              double yy = sh + static_cast<double>(ph) * bh + (static_cast<double>(iy) + 0.5) * bh / static_cast<double>(gh);
              double xx = sw + static_cast<double>(pw) * bw + (static_cast<double>(ix) + 0.5) * bw / static_cast<double>(gw);
              double v[4] = {0, 0, 0, 0};
              if (yy >= -1.0 && yy <= static_cast<double>(height) && xx >= -1.0 && xx <= static_cast<double>(width)) {
                yy = std::max(yy, 0.0);
                xx = std::max(xx, 0.0);
                int64_t yl = static_cast<int64_t>(yy), xl = static_cast<int64_t>(xx), yh, xh;
                if (yl >= height - 1) { yh = yl = height - 1; yy = static_cast<double>(yl); } else { yh = yl + 1; }
                if (xl >= width - 1) { xh = xl = width - 1; xx = static_cast<double>(xl); } else { xh = xl + 1; }
                const double ly = yy - static_cast<double>(yl), lx = xx - static_cast<double>(xl);
                const double hy = 1.0 - ly, hx = 1.0 - lx;
                v[0] = hy * hx * x.get_double(plane + yl * width + xl);
                v[1] = hy * lx * x.get_double(plane + yl * width + xh);
                v[2] = ly * hx * x.get_double(plane + yh * width + xl);
                v[3] = ly * lx * x.get_double(plane + yh * width + xh);
              } else {
                for (double& e : v) e = 0.0 * x.get_double(plane);
              }
              if (is_max) {
                const double m = std::max(std::max(v[0], v[1]), std::max(v[2], v[3]));
                acc = first ? m : std::max(acc, m);
                first = false;
              } else {
                acc += v[0] + v[1] + v[2] + v[3];
              }
            }
          y.set_double(((n * channels + c) * oh + ph) * ow + pw, is_max ? acc : acc / count);
        }
    }
  }
  return std::vector<TensorData>{std::move(y)};
}

}  // namespace

Expected<GridSampleParams> resolve_grid_sample(const Node& node) {
  const Shape& xs = node.input(0)->shape();
  const Shape& gs = node.input(1)->shape();
  if (!is_static(xs) || !is_static(gs))
    return unsupported("{}: needs static shapes, got X {} and grid {}", node.describe(),
                       shape_to_string(xs), shape_to_string(gs));
  GridSampleParams p;
  const std::string mode = node.attrs().get_string("mode", "linear");
  p.mode = mode == "nearest" ? Mode::kNearest : mode == "cubic" ? Mode::kCubic : Mode::kLinear;
  const std::string pad = node.attrs().get_string("padding_mode", "zeros");
  p.padding = pad == "border" ? Pad::kBorder : pad == "reflection" ? Pad::kReflection : Pad::kZeros;
  p.align_corners = node.attrs().get_int("align_corners", 0) != 0;
  std::vector<int64_t> x = static_dims(xs), g = static_dims(gs);
  p.n = x[0];
  p.c = x[1];
  p.in_dims.assign(x.begin() + 2, x.end());
  p.out_dims.assign(g.begin() + 1, g.end() - 1);
  if (g[0] != x[0])
    return invalid_model("{}: grid {} and X {} have different batch sizes", node.describe(),
                         shape_to_string(gs), shape_to_string(xs));
  if (product(x) == 0 && product(p.out_dims) * p.n * p.c != 0)
    return unsupported("{}: samples an empty image", node.describe());
  return p;
}

void register_grid_ops(OpRegistry& r) {
  r.add(OpDef{.name = "GridSample",
              .min_inputs = 2,
              .max_inputs = 2,
              .attrs = {{"mode", AttrKind::kString},
                        {"padding_mode", AttrKind::kString},
                        {"align_corners", AttrKind::kInt}},
              .infer = infer_grid_sample,
              .reference = reference_grid_sample,
              .summary = "Samples X at the normalized points of a grid (nearest, linear, cubic; "
                         "zeros, border, reflection padding)."});
  r.add(OpDef{.name = "AffineGrid",
              .min_inputs = 2,
              .max_inputs = 2,
              .attrs = {{"align_corners", AttrKind::kInt}},
              .infer = infer_affine_grid,
              .reference = reference_affine_grid,
              .summary = "The sampling grid of affine transforms theta over an image of `size` "
                         "(a compile-time input)."});
  r.add(OpDef{.name = "RoiAlign",
              .min_inputs = 3,
              .max_inputs = 3,
              .attrs = {{"coordinate_transformation_mode", AttrKind::kString},
                        {"mode", AttrKind::kString},
                        {"output_height", AttrKind::kInt},
                        {"output_width", AttrKind::kInt},
                        {"sampling_ratio", AttrKind::kInt},
                        {"spatial_scale", AttrKind::kFloat}},
              .infer = infer_roi_align,
              .reference = reference_roi_align,
              .summary = "Average (or max) of bilinear samples in each bin of each region of "
                         "interest."});
}

}  // namespace aotc
