// Op family 'resize': Resize in its latest ONNX form (Resize-19): modes nearest, linear and
// cubic; the coordinate transformations half_pixel, half_pixel_symmetric, pytorch_half_pixel,
// align_corners, asymmetric and tf_crop_and_resize (plus Resize-11's tf_half_pixel_for_nn, which
// no later mode expresses); nearest_mode, cubic_coeff_a, exclude_outside, extrapolation_value,
// antialias, axes and keep_aspect_ratio_policy. `scales` or `sizes` (and `roi` for
// tf_crop_and_resize) are compile-time inputs. The frontend maps Resize-10/11/13/18 and
// Upsample-7/9 onto this op (frontend/converters/resize.cpp).
//
// The ONNX reference implementation (onnx/reference/ops/op_resize.py) is the specification
// followed here, including where it differs from ONNX Runtime: align_corners and the
// output_width == 1 tests use the real-valued output width scale * in, not the integer extent.
// Deliberate differences, both in nearest mode: it reads the chosen input element instead of
// summing it with weight 1 and its neighbour with weight 0 (so an infinite neighbour does not turn
// it into NaN), and exclude_outside, which only re-weights taps, leaves it alone (as in ONNX
// Runtime) rather than zeroing a position whose nearest tap lies just outside the input.
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "graph/ops/all_ops.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/resize_ops.h"

namespace aotc {
namespace {

enum class CoordinateMode {
  kHalfPixel,
  kHalfPixelSymmetric,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfCropAndResize,
  kTfHalfPixelForNn,
};
enum class NearestMode { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };
enum class AspectPolicy { kStretch, kNotLarger, kNotSmaller };

struct ResizeAttrs {
  ResizeMode mode = ResizeMode::kNearest;
  CoordinateMode coordinates = CoordinateMode::kHalfPixel;
  NearestMode nearest = NearestMode::kRoundPreferFloor;
  AspectPolicy policy = AspectPolicy::kStretch;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;
  double extrapolation_value = 0;
  std::vector<int> axes;  ///< Normalized; all axes in order when the attribute is absent.
};

template <typename E>
std::optional<E> lookup(const std::string& s,
                        std::initializer_list<std::pair<const char*, E>> table) {
  for (const auto& [name, value] : table)
    if (s == name) return value;
  return std::nullopt;
}

Expected<ResizeAttrs> read_resize_attrs(const InferContext& ctx) {
  const Attributes& at = ctx.attrs();
  ResizeAttrs a;
  const std::string mode = at.get_string("mode", "nearest");
  auto m = lookup<ResizeMode>(mode, {{"nearest", ResizeMode::kNearest},
                                     {"linear", ResizeMode::kLinear},
                                     {"cubic", ResizeMode::kCubic}});
  if (!m) return ctx.error("mode '{}' is not nearest, linear or cubic", mode);
  a.mode = *m;
  const std::string ctm = at.get_string("coordinate_transformation_mode", "half_pixel");
  auto c =
      lookup<CoordinateMode>(ctm, {{"half_pixel", CoordinateMode::kHalfPixel},
                                   {"half_pixel_symmetric", CoordinateMode::kHalfPixelSymmetric},
                                   {"pytorch_half_pixel", CoordinateMode::kPytorchHalfPixel},
                                   {"align_corners", CoordinateMode::kAlignCorners},
                                   {"asymmetric", CoordinateMode::kAsymmetric},
                                   {"tf_crop_and_resize", CoordinateMode::kTfCropAndResize},
                                   {"tf_half_pixel_for_nn", CoordinateMode::kTfHalfPixelForNn}});
  if (!c) return ctx.error("coordinate_transformation_mode '{}' is not one ONNX defines", ctm);
  a.coordinates = *c;
  const std::string nm = at.get_string("nearest_mode", "round_prefer_floor");
  auto n = lookup<NearestMode>(nm, {{"round_prefer_floor", NearestMode::kRoundPreferFloor},
                                    {"round_prefer_ceil", NearestMode::kRoundPreferCeil},
                                    {"floor", NearestMode::kFloor},
                                    {"ceil", NearestMode::kCeil}});
  if (!n)
    return ctx.error(
        "nearest_mode '{}' is not round_prefer_floor, round_prefer_ceil, floor or ceil", nm);
  a.nearest = *n;
  const std::string kp = at.get_string("keep_aspect_ratio_policy", "stretch");
  auto p = lookup<AspectPolicy>(kp, {{"stretch", AspectPolicy::kStretch},
                                     {"not_larger", AspectPolicy::kNotLarger},
                                     {"not_smaller", AspectPolicy::kNotSmaller}});
  if (!p)
    return ctx.error("keep_aspect_ratio_policy '{}' is not stretch, not_larger or not_smaller", kp);
  a.policy = *p;
  a.cubic_a = at.get_float("cubic_coeff_a", -0.75);
  a.extrapolation_value = at.get_float("extrapolation_value", 0.0);
  for (const char* flag : {"exclude_outside", "antialias"}) {
    int64_t v = at.get_int(flag, 0);
    if (v != 0 && v != 1) return ctx.error("attribute '{}' = {} must be 0 or 1", flag, v);
  }
  a.exclude_outside = at.get_int("exclude_outside", 0) != 0;
  a.antialias = at.get_int("antialias", 0) != 0;
  if (a.antialias && a.mode == ResizeMode::kNearest)
    return ctx.error("antialias applies to the linear and cubic modes, not nearest");

  const int rank = ctx.input_type(0).rank();
  if (!at.has("axes")) {
    for (int i = 0; i < rank; ++i) a.axes.push_back(i);
  } else {
    std::vector<int64_t> axes = at.get_ints("axes");
    std::vector<bool> seen(rank, false);
    for (int64_t v : axes) {
      std::optional<int> axis = normalize_axis(v, rank);
      if (!axis) return ctx.error("axis {} is out of range for rank {}", v, rank);
      if (seen[*axis])
        return ctx.error("axis {} appears twice in axes [{}]", *axis, fmt::join(axes, ", "));
      seen[*axis] = true;
      a.axes.push_back(*axis);
    }
  }
  return a;
}

/// Per input axis: the scale, the output extent (a Dim, so untouched symbolic axes survive) and
/// the roi bounds (0 and 1 unless tf_crop_and_resize gives others).
struct ResizeTargets {
  std::vector<double> scale;
  Shape out;
  std::vector<double> roi_start, roi_end;
};

Expected<ResizeTargets> read_resize_targets(InferContext& ctx, const ResizeAttrs& a) {
  const TensorType& x = ctx.input_type(0);
  const int rank = x.rank();
  const size_t n = a.axes.size();
  ResizeTargets t;
  t.scale.assign(rank, 1.0);
  t.out = x.shape;
  t.roi_start.assign(rank, 0.0);
  t.roi_end.assign(rank, 1.0);

  const bool has_scales = ctx.has_input(2), has_sizes = ctx.has_input(3);
  if (has_scales == has_sizes)
    return ctx.error("exactly one of 'scales' and 'sizes' must be given");
  auto static_extent = [&](int axis) -> Expected<int64_t> {
    if (!x.shape[axis].is_static())
      return ctx.unsupported_error("resizing symbolic dim {} of {}", axis, x.to_string());
    return x.shape[axis].value;
  };

  if (has_scales) {
    const TensorData* s = ctx.require_constant(2, "scales");
    if (!s) return ctx.needs_constant_status();
    if (s->rank() != 1 || !is_float(s->dtype()) || static_cast<size_t>(s->num_elements()) != n)
      return ctx.error(
          "'scales' must be a 1-D float tensor with {} values (one per resized axis), got {}", n,
          s->type().to_string());
    // keep_aspect_ratio_policy only concerns sizes; with scales the reference ignores it.
    for (size_t i = 0; i < n; ++i) {
      const int axis = a.axes[i];
      const double scale = s->get_double(static_cast<int64_t>(i));
      if (!(scale > 0) || !std::isfinite(scale))
        return ctx.error("scale {} for axis {} must be positive", scale, axis);
      t.scale[axis] = scale;
      if (scale == 1.0) continue;  // the extent (static or symbolic) stays
      AOTC_ASSIGN_OR_RETURN(int64_t in, static_extent(axis));
      const double out = std::floor(scale * static_cast<double>(in));
      if (out > static_cast<double>(int64_t{1} << 40))
        return ctx.error("scale {} makes axis {} absurdly large", scale, axis);
      t.out[axis] = Dim(static_cast<int64_t>(out));
    }
  } else {
    const TensorData* s = ctx.require_constant(3, "sizes");
    if (!s) return ctx.needs_constant_status();
    if (s->rank() != 1 || s->dtype() != DType::kInt64 ||
        static_cast<size_t>(s->num_elements()) != n)
      return ctx.error(
          "'sizes' must be a 1-D int64 tensor with {} values (one per resized axis), got {}", n,
          s->type().to_string());
    std::vector<int64_t> in(n);
    for (size_t i = 0; i < n; ++i) {
      const int axis = a.axes[i];
      const int64_t size = s->get_int64(static_cast<int64_t>(i));
      if (size < 0) return ctx.error("size {} for axis {} is negative", size, axis);
      AOTC_ASSIGN_OR_RETURN(in[i], static_extent(axis));
      if (in[i] == 0) return ctx.error("axis {} is empty, so no scale reaches size {}", axis, size);
      t.scale[axis] = static_cast<double>(size) / static_cast<double>(in[i]);
      t.out[axis] = Dim(size);
    }
    if (a.policy != AspectPolicy::kStretch && n > 0) {
      // One scale for all resized axes: the smallest (not_larger) or largest (not_smaller); the
      // extents are then rounded half up.
      double common = t.scale[a.axes[0]];
      for (int axis : a.axes)
        common = a.policy == AspectPolicy::kNotLarger ? std::min(common, t.scale[axis])
                                                      : std::max(common, t.scale[axis]);
      for (size_t i = 0; i < n; ++i) {
        t.scale[a.axes[i]] = common;
        t.out[a.axes[i]] = Dim(static_cast<int64_t>(common * static_cast<double>(in[i]) + 0.5));
      }
    }
  }

  if (a.coordinates == CoordinateMode::kTfCropAndResize) {
    const TensorData* roi = ctx.require_constant(1, "roi");
    if (!roi) return ctx.needs_constant_status();
    if (roi->rank() != 1 || !is_float(roi->dtype()) ||
        static_cast<size_t>(roi->num_elements()) != 2 * n)
      return ctx.error(
          "'roi' must be a 1-D float tensor with {} values (starts, then ends), got {}", 2 * n,
          roi->type().to_string());
    for (size_t i = 0; i < n; ++i) {
      t.roi_start[a.axes[i]] = roi->get_double(static_cast<int64_t>(i));
      t.roi_end[a.axes[i]] = roi->get_double(static_cast<int64_t>(i + n));
    }
  }
  return t;
}

/// The range of the integer dtypes Resize accepts (all exact in double).
std::pair<double, double> integer_bounds(DType t) {
  switch (t) {
    case DType::kInt8:
      return {-128, 127};
    case DType::kUInt8:
      return {0, 255};
    case DType::kInt16:
      return {-32768, 32767};
    case DType::kUInt16:
      return {0, 65535};
    case DType::kInt32:
      return {-2147483648.0, 2147483647.0};
    case DType::kUInt32:
      return {0, 4294967295.0};
    default:
      return {0, 0};
  }
}

Status infer_resize(InferContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  if (x.dtype == DType::kBool || x.dtype == DType::kInt64 || x.dtype == DType::kUInt64)
    return ctx.unsupported_error(
        "Resize of {} data is not supported (floats and integers up to 32 bits are)",
        dtype_name(x.dtype));
  AOTC_ASSIGN_OR_RETURN(ResizeAttrs a, read_resize_attrs(ctx));
  AOTC_ASSIGN_OR_RETURN(ResizeTargets t, read_resize_targets(ctx, a));
  ctx.set_output_type(0, TensorType{x.dtype, std::move(t.out)});
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Taps and weights of one axis (op_resize.py: _compute_x_ori, the *_coeffs functions and
// _interpolate_1d_along_axis).

struct AxisGeometry {
  int64_t in = 0, out = 0;
  double scale = 1;
  double roi_start = 0, roi_end = 1;
};

/// The input coordinate of output position y; sets *outside for tf_crop_and_resize positions
/// that fall outside the input.
double source_coordinate(CoordinateMode mode, const AxisGeometry& g, double y, bool* outside) {
  const double in = static_cast<double>(g.in);
  const double out_width = g.scale * in;  // real-valued, as the reference uses it
  *outside = false;
  switch (mode) {
    case CoordinateMode::kHalfPixel:
      return (y + 0.5) / g.scale - 0.5;
    case CoordinateMode::kHalfPixelSymmetric: {
      const double adjustment = static_cast<double>(g.out) / out_width;
      const double offset = in / 2 * (1 - adjustment);
      return offset + (y + 0.5) / g.scale - 0.5;
    }
    case CoordinateMode::kPytorchHalfPixel:
      return out_width == 1 ? -0.5 : (y + 0.5) / g.scale - 0.5;
    case CoordinateMode::kAlignCorners:
      return out_width == 1 ? 0.0 : y * (in - 1) / (out_width - 1);
    case CoordinateMode::kAsymmetric:
      return y / g.scale;
    case CoordinateMode::kTfHalfPixelForNn:
      return (y + 0.5) / g.scale;
    case CoordinateMode::kTfCropAndResize: {
      double x = out_width == 1 ? (g.roi_end - g.roi_start) * (in - 1) / 2
                                : y * (g.roi_end - g.roi_start) * (in - 1) / (out_width - 1);
      x += g.roi_start * (in - 1);
      *outside = x < 0 || x > in - 1;
      return x;
    }
  }
  return 0;
}

double cubic_kernel(double x, double a) {
  x = std::fabs(x);
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0;
}

/// The weights of the taps around a point whose fractional position is `ratio` in (0, 1].
std::vector<double> tap_weights(const ResizeAttrs& a, double ratio, double scale) {
  switch (a.mode) {
    case ResizeMode::kNearest: {
      if (ratio == 1) return {0, 1};
      bool up = false;
      switch (a.nearest) {
        case NearestMode::kRoundPreferFloor:
          up = ratio > 0.5;
          break;
        case NearestMode::kRoundPreferCeil:
          up = ratio >= 0.5;
          break;
        case NearestMode::kFloor:
          up = false;
          break;
        case NearestMode::kCeil:
          up = true;
          break;
      }
      return {up ? 0.0 : 1.0, up ? 1.0 : 0.0};
    }
    case ResizeMode::kLinear: {
      if (!a.antialias) return {1 - ratio, ratio};
      // A triangle filter stretched by 1 / scale when downsampling.
      const double s = std::min(scale, 1.0);
      const int64_t start = static_cast<int64_t>(std::floor(-1 / s) + 1);
      const int64_t footprint = 2 - 2 * start;
      std::vector<double> w;
      double sum = 0;
      for (int64_t i = start; i < start + footprint; ++i) {
        w.push_back(std::clamp(1 - std::fabs((static_cast<double>(i) - ratio) * s), 0.0, 1.0));
        sum += w.back();
      }
      for (double& v : w) v /= sum;
      return w;
    }
    case ResizeMode::kCubic: {
      const double A = a.cubic_a;
      if (!a.antialias) {
        const double r = ratio, q = 1 - ratio;
        return {((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A,
                ((A + 2) * r - (A + 3)) * r * r + 1, ((A + 2) * q - (A + 3)) * q * q + 1,
                ((A * (q + 1) - 5 * A) * (q + 1) + 8 * A) * (q + 1) - 4 * A};
      }
      const double s = std::min(scale, 1.0);
      const int64_t start = static_cast<int64_t>(std::floor(-2 / s) + 1);
      const int64_t end = 2 - start;
      std::vector<double> w;
      double sum = 0;
      for (int64_t i = start; i < end; ++i) {
        w.push_back(cubic_kernel(s * (static_cast<double>(i) - ratio), A));
        sum += w.back();
      }
      for (double& v : w) v /= sum;
      return w;
    }
  }
  return {};
}

ResizeAxis plan_axis(const ResizeAttrs& a, const AxisGeometry& g) {
  ResizeAxis axis;
  axis.in = g.in;
  axis.out = g.out;
  // The reference skips axes that it would copy unchanged.
  const bool default_roi = std::fabs(g.roi_start) <= 1e-9 && std::fabs(g.roi_end - 1) <= 1e-9;
  if (std::fabs(g.scale - 1) <= 1e-9 && g.out == g.in && default_roi) return axis;
  axis.identity = false;
  axis.taps = 0;
  bool any_outside = false;
  std::vector<bool> outside_flags(g.out, false);
  for (int64_t o = 0; o < g.out; ++o) {
    bool outside = false;
    const double x = source_coordinate(a.coordinates, g, static_cast<double>(o), &outside);
    outside_flags[o] = outside;
    any_outside |= outside;
    const double x_floor = std::floor(x);
    // The tap left of x is preferred: an integer x has ratio 1, not 0.
    const double ratio = x == x_floor ? 1.0 : x - x_floor;
    std::vector<double> w = tap_weights(a, ratio, g.scale);
    const int64_t n = static_cast<int64_t>(w.size());
    // The n input positions nearest to x, ties going to the smaller index, computed on the
    // edge-padded axis exactly as the reference does.
    const int64_t pad = (n + 1) / 2;
    const double x_padded = x + static_cast<double>(pad);
    const double p = std::floor(x_padded);
    const double frac = x_padded - p;
    int64_t offset;
    if (n % 2 == 0)
      offset = frac == 0 ? -(n / 2) : -(n / 2) + 1;
    else
      offset = frac <= 0.5 ? -((n - 1) / 2) : -((n - 1) / 2) + 1;
    const int64_t first = static_cast<int64_t>(p) + offset - pad;
    if (a.exclude_outside && a.mode != ResizeMode::kNearest) {
      double sum = 0;
      for (int64_t t = 0; t < n; ++t) {
        if (first + t < 0 || first + t >= g.in) w[t] = 0;
        sum += w[t];
      }
      if (sum != 0)
        for (double& v : w) v /= sum;
    }
    std::vector<int64_t> index(n);
    for (int64_t t = 0; t < n; ++t) index[t] = std::clamp<int64_t>(first + t, 0, g.in - 1);
    if (a.mode == ResizeMode::kNearest) {
      // One tap: the one of weight 1.
      index = {w[0] == 1 ? index[0] : index[1]};
      w = {1.0};
    }
    if (axis.taps == 0) axis.taps = static_cast<int>(w.size());
    AOTC_INTERNAL_ASSERT(axis.taps == static_cast<int>(w.size()), "Resize taps vary along an axis");
    axis.index.insert(axis.index.end(), index.begin(), index.end());
    axis.weight.insert(axis.weight.end(), w.begin(), w.end());
  }
  if (axis.taps == 0) axis.taps = 1;  // an empty axis
  if (any_outside) axis.extrapolated = std::move(outside_flags);
  return axis;
}

// ---------------------------------------------------------------------------------------------
// Reference: the tensor product of the per-axis taps, in double precision.

Expected<std::vector<TensorData>> reference_resize(const Node& node,
                                                   const std::vector<const TensorData*>& in) {
  AOTC_ASSIGN_OR_RETURN(ResizePlan plan, resolve_resize(node));
  const DType t = node.output(0)->dtype();
  const int rank = static_cast<int>(plan.axes.size());
  std::vector<int64_t> in_dims, out_dims;
  for (const ResizeAxis& a : plan.axes) {
    in_dims.push_back(a.in);
    out_dims.push_back(a.out);
  }
  const std::vector<int64_t> strides = row_major_strides(in_dims);
  const std::vector<double> x = in[0]->to_double_vector();
  TensorData y(t, out_dims);
  int64_t flat = 0;
  for_each_index(out_dims, [&](const std::vector<int64_t>& o) {
    bool outside = false;
    for (int a = 0; a < rank; ++a)
      if (!plan.axes[a].extrapolated.empty() && plan.axes[a].extrapolated[o[a]]) outside = true;
    double value = plan.extrapolation_value;
    if (!outside) {
      // Sum over every combination of taps (a counter over the axes' tap counts).
      value = 0;
      std::vector<int> tap(rank, 0);
      while (true) {
        double w = 1;
        int64_t offset = 0;
        for (int a = 0; a < rank; ++a) {
          const ResizeAxis& ax = plan.axes[a];
          if (ax.identity) {
            offset += o[a] * strides[a];
            continue;
          }
          const int64_t k = o[a] * ax.taps + tap[a];
          w *= ax.weight[k];
          offset += ax.index[k] * strides[a];
        }
        value += w * x[offset];
        int a = rank - 1;
        while (a >= 0 && ++tap[a] >= plan.axes[a].taps) tap[a--] = 0;
        if (a < 0) break;
      }
    }
    if (is_integer(t)) {
      // The reference rounds half to even and saturates (onnx.numpy_helper.saturate_cast).
      auto [lo, hi] = integer_bounds(t);
      value = std::clamp(std::nearbyint(value), lo, hi);
    }
    y.set_double(flat++, value);
  });
  return std::vector<TensorData>{std::move(y)};
}

}  // namespace

Expected<ResizePlan> resolve_resize(const Node& node) {
  InferContext ctx(node);
  Expected<ResizeAttrs> attrs = read_resize_attrs(ctx);
  if (!attrs) return attrs.status();
  Expected<ResizeTargets> targets = read_resize_targets(ctx, *attrs);
  if (!ctx.needs_constant_status().is_ok()) return ctx.needs_constant_status();
  if (!targets) return targets.status();
  const Shape& shape = node.input(0)->shape();
  if (!is_static(shape))
    return unsupported("{}: needs a static input shape, got {}", node.describe(),
                       shape_to_string(shape));
  const std::vector<int64_t> in = static_dims(shape);
  const std::vector<int64_t> out = static_dims(targets->out);
  ResizePlan plan;
  plan.mode = attrs->mode;
  plan.extrapolation_value = attrs->extrapolation_value;
  for (size_t a = 0; a < in.size(); ++a) {
    AxisGeometry g{in[a], out[a], targets->scale[a], targets->roi_start[a], targets->roi_end[a]};
    plan.axes.push_back(plan_axis(*attrs, g));
  }
  return plan;
}

void register_resize_ops(OpRegistry& r) {
  r.add(OpDef{.name = "Resize",
              .min_inputs = 1,
              .max_inputs = 4,
              .attrs = {{"antialias", AttrKind::kInt},
                        {"axes", AttrKind::kInts},
                        {"coordinate_transformation_mode", AttrKind::kString},
                        {"cubic_coeff_a", AttrKind::kFloat},
                        {"exclude_outside", AttrKind::kInt},
                        {"extrapolation_value", AttrKind::kFloat},
                        {"keep_aspect_ratio_policy", AttrKind::kString},
                        {"mode", AttrKind::kString},
                        {"nearest_mode", AttrKind::kString}},
              .infer = infer_resize,
              .reference = reference_resize,
              .summary = "Resizes by nearest, (bi/tri)linear or cubic interpolation (scales or "
                         "sizes known at compile time)."});
}

}  // namespace aotc
