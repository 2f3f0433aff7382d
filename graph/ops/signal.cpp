// Op family 'signal': spectral transforms and the tables they use.
//   - DFT (ONNX DFT-20: dft_length and axis are inputs, both compile-time; the frontend turns
//     DFT-17's axis attribute into an input): forward or inverse discrete Fourier transform of
//     real ([..., 1]) or complex ([..., 2]) signals along one axis, with the one-sided forms
//     (numpy rfft's first L / 2 + 1 bins, and irfft's real result from one-sided input).
//   - STFT (ONNX STFT-17): windowed DFTs of frames of a [batch, length, 1 or 2] signal;
//     frame_step and frame_length are compile-time inputs (they set the output shape).
//   - HannWindow, HammingWindow, BlackmanWindow (ONNX *-17): the window of length `size` (a
//     compile-time input), periodic or symmetric.
//   - MelWeightMatrix (ONNX MelWeightMatrix-17): the triangular mel filter bank; every input is
//     a compile-time input (two set the shape), so the node always folds to a constant.
// References compute in double as sums over the definition (no FFT), with angles reduced
// exactly: the twiddle of bin k and sample t is that of (k * t) mod L. MelWeightMatrix follows
// the ONNX reference step for step (float32 mel bounds, integer bin edges).
#include <algorithm>
#include <cmath>
#include <numbers>

#include "graph/ops/all_ops.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/signal_ops.h"

namespace aotc {
namespace {

Expected<int64_t> scalar_input(InferContext& ctx, int i, const std::string& role) {
  const TensorData* t = ctx.require_constant(i, role);
  if (!t) return ctx.needs_constant_status();
  if (t->num_elements() != 1 || is_float(t->dtype()))
    return ctx.error("input '{}' must be one integer, got {}", role, t->type().to_string());
  return t->get_int64(0);
}

Expected<DType> output_datatype(const Node& node, DType def) {
  if (!node.attrs().has("output_datatype")) return def;
  std::string name = node.attrs().get_string("output_datatype", "");
  std::optional<DType> t = parse_dtype(name);
  if (!t || !is_float(*t) || is_storage_only(*t))
    return unsupported("{}: output_datatype '{}' is not float16, bfloat16, float or double",
                       node.describe(), name);
  return *t;
}

// --- Windows ------------------------------------------------------------------------------------

Status infer_window(InferContext& ctx) {
  AOTC_ASSIGN_OR_RETURN(int64_t size, scalar_input(ctx, 0, "size"));
  if (size < 0) return ctx.error("size {} is negative", size);
  AOTC_ASSIGN_OR_RETURN(DType t, output_datatype(ctx.node(), DType::kFloat32));
  ctx.set_output_type(0, TensorType{t, make_shape({size})});
  return Status::ok();
}

double window_value(const std::string& op, double n, double n1) {
  const double pi = std::numbers::pi;
  if (op == "HannWindow") {
    const double s = std::sin(pi * n / n1);
    return s * s;
  }
  if (op == "HammingWindow") return 25.0 / 46.0 - (1.0 - 25.0 / 46.0) * std::cos(2 * pi * n / n1);
  return 0.42 - 0.5 * std::cos(2 * pi * n / n1) + 0.08 * std::cos(4 * pi * n / n1);
}

Expected<std::vector<TensorData>> reference_window(const Node& node,
                                                   const std::vector<const TensorData*>&) {
  const int64_t size = static_dims(node.output(0)->shape())[0];
  const bool periodic = node.attrs().get_int("periodic", 1) != 0;
  const double n1 = static_cast<double>(periodic ? size : size - 1);
  TensorData y(node.output(0)->dtype(), {size});
  for (int64_t i = 0; i < size; ++i)
    y.set_double(i, window_value(node.op(), static_cast<double>(i), n1));
  return std::vector<TensorData>{std::move(y)};
}

// --- MelWeightMatrix ----------------------------------------------------------------------------

Status infer_mel(InferContext& ctx) {
  AOTC_ASSIGN_OR_RETURN(int64_t mel, scalar_input(ctx, 0, "num_mel_bins"));
  AOTC_ASSIGN_OR_RETURN(int64_t dft, scalar_input(ctx, 1, "dft_length"));
  AOTC_ASSIGN_OR_RETURN(int64_t rate, scalar_input(ctx, 2, "sample_rate"));
  for (int i = 3; i < 5; ++i) {
    const TensorData* t = ctx.require_constant(
        i, i == 3 ? "lower_edge_hertz, computed at compile time" : "upper_edge_hertz, computed at compile time");
    if (!t) return ctx.needs_constant_status();
    if (t->num_elements() != 1 || !is_float(t->dtype()))
      return ctx.error("input {} must be one float, got {}", i, t->type().to_string());
  }
  if (mel <= 0 || dft <= 0 || rate <= 0)
    return ctx.error("num_mel_bins {}, dft_length {} and sample_rate {} must be positive", mel,
                     dft, rate);
  AOTC_ASSIGN_OR_RETURN(DType t, output_datatype(ctx.node(), DType::kFloat32));
  ctx.set_output_type(0, TensorType{t, make_shape({dft / 2 + 1, mel})});
  return Status::ok();
}

Expected<std::vector<TensorData>> reference_mel(const Node& node,
                                                const std::vector<const TensorData*>& in) {
  const int64_t mel = in[0]->get_int64(0), dft = in[1]->get_int64(0), rate = in[2]->get_int64(0);
  const int64_t bins = dft / 2 + 1;
  // The reference's mel bounds are float32 (its inputs' type) ...
  const float lower = static_cast<float>(in[3]->get_double(0));
  const float upper = static_cast<float>(in[4]->get_double(0));
  const float low_mel = 2595.0f * std::log10(1.0f + lower / 700.0f);
  const float high_mel = 2595.0f * std::log10(1.0f + upper / 700.0f);
  const float step = (high_mel - low_mel) / static_cast<float>(mel + 2);
  // ... and the bin edges float64, floored by integer division, then truncated.
  std::vector<int64_t> edge(mel + 2);
  for (int64_t i = 0; i < mel + 2; ++i) {
    double f = static_cast<double>(i) * static_cast<double>(step) + static_cast<double>(low_mel);
    f = 700.0 * (std::pow(10.0, f / 2595.0) - 1.0);
    edge[i] = static_cast<int64_t>(std::floor(static_cast<double>(dft + 1) * f /
                                              static_cast<double>(rate)));
  }
  std::vector<double> out(bins * mel, 0.0);
  auto set = [&](int64_t j, int64_t i, double v) -> Status {
    if (j < 0 || j >= bins)
      return unsupported("{}: mel bin {} reaches spectrogram bin {}, outside [0, {})",
                         node.describe(), i, j, bins);
    out[j * mel + i] = v;
    return Status::ok();
  };
  for (int64_t i = 0; i < mel; ++i) {
    const int64_t lo = edge[i], center = edge[i + 1], hi = edge[i + 2];
    if (center - lo == 0) {
      AOTC_RETURN_IF_ERROR(set(center, i, 1.0));
    } else {
      for (int64_t j = lo; j <= center; ++j)
        AOTC_RETURN_IF_ERROR(set(j, i, static_cast<double>(j - lo) / static_cast<double>(center - lo)));
    }
    if (hi - center > 0)
      for (int64_t j = center; j < hi; ++j)
        AOTC_RETURN_IF_ERROR(set(j, i, static_cast<double>(hi - j) / static_cast<double>(hi - center)));
  }
  TensorData y(node.output(0)->dtype(), {bins, mel});
  for (int64_t i = 0; i < bins * mel; ++i) y.set_double(i, out[i]);
  return std::vector<TensorData>{std::move(y)};
}

// --- DFT ----------------------------------------------------------------------------------------

Expected<DftParams> dft_params(InferContext& ctx, std::vector<int64_t>* out_dims) {
  const TensorType& x = ctx.input_type(0);
  if (!is_float(x.dtype) || is_storage_only(x.dtype))
    return ctx.error("input must be a float tensor, got {}", x.to_string());
  if (x.rank() < 2) return ctx.error("input must have rank >= 2, got {}", x.to_string());
  if (!is_static(x.shape)) return ctx.unsupported_error("needs a static shape, got {}", x.to_string());
  std::vector<int64_t> dims = static_dims(x.shape);
  const int rank = x.rank();
  if (dims.back() != 1 && dims.back() != 2)
    return ctx.error("the last axis of {} must be 1 (real) or 2 (complex)", x.to_string());
  int64_t axis_value = -2;
  if (ctx.has_input(2)) {
    AOTC_ASSIGN_OR_RETURN(axis_value, scalar_input(ctx, 2, "axis"));
  }
  std::optional<int> axis = normalize_axis(axis_value, rank);
  if (!axis || *axis == rank - 1)
    return ctx.error("axis {} is not an axis of {} before the last", axis_value, x.to_string());
  DftParams p;
  p.inverse = ctx.attrs().get_int("inverse", 0) != 0;
  p.onesided = ctx.attrs().get_int("onesided", 0) != 0;
  p.outer = product(dims, 0, *axis);
  p.n_in = dims[*axis];
  p.inner = product(dims, *axis + 1, rank - 1);
  p.c_in = dims.back();
  p.length = p.inverse && p.onesided ? 2 * (p.n_in - 1) : p.n_in;
  if (ctx.has_input(1)) {
    AOTC_ASSIGN_OR_RETURN(p.length, scalar_input(ctx, 1, "dft_length"));
  }
  if (p.length < 1) return ctx.error("dft_length {} must be positive", p.length);
  p.n_out = !p.inverse && p.onesided ? p.length / 2 + 1 : p.length;
  p.c_out = p.inverse && p.onesided ? 1 : 2;
  if (out_dims) {
    *out_dims = dims;
    (*out_dims)[*axis] = p.n_out;
    out_dims->back() = p.c_out;
  }
  return p;
}

Status infer_dft(InferContext& ctx) {
  std::vector<int64_t> dims;
  AOTC_ASSIGN_OR_RETURN(DftParams p, dft_params(ctx, &dims));
  (void)p;
  ctx.set_output_type(0, TensorType{ctx.input_type(0).dtype, make_shape(dims)});
  return Status::ok();
}

/// exp(sign * 2 pi i * j / L) for j in [0, L).
void twiddles(int64_t length, std::vector<double>& c, std::vector<double>& s) {
  c.resize(length);
  s.resize(length);
  for (int64_t j = 0; j < length; ++j) {
    const double a = 2.0 * std::numbers::pi * static_cast<double>(j) / static_cast<double>(length);
    c[j] = std::cos(a);
    s[j] = std::sin(a);
  }
}

Expected<std::vector<TensorData>> reference_dft(const Node& node,
                                                const std::vector<const TensorData*>& in) {
  AOTC_ASSIGN_OR_RETURN(DftParams p, resolve_dft(node));
  const TensorData& x = *in[0];
  TensorData y(node.output(0)->dtype(), static_dims(node.output(0)->shape()));
  std::vector<double> c, s;
  twiddles(p.length, c, s);
  auto xr = [&](int64_t o, int64_t t, int64_t i) { return x.get_double(((o * p.n_in + t) * p.inner + i) * p.c_in); };
  auto xi = [&](int64_t o, int64_t t, int64_t i) {
    return p.c_in == 2 ? x.get_double(((o * p.n_in + t) * p.inner + i) * 2 + 1) : 0.0;
  };
  const double L = static_cast<double>(p.length);
  for (int64_t o = 0; o < p.outer; ++o)
    for (int64_t i = 0; i < p.inner; ++i)
      for (int64_t k = 0; k < p.n_out; ++k) {
        double re = 0, im = 0;
        if (p.inverse && p.onesided) {
          const int64_t m = std::min(p.n_in, p.length / 2 + 1);
          for (int64_t f = 0; f < m; ++f) {
            const int64_t j = (f * k) % p.length;
            const double w = (f == 0 || (p.length % 2 == 0 && f == p.length / 2)) ? 1.0 : 2.0;
            re += w * (xr(o, f, i) * c[j] - xi(o, f, i) * s[j]);
          }
          y.set_double((o * p.n_out + k) * p.inner + i, re / L);
          continue;
        }
        const int64_t m = std::min(p.n_in, p.length);
        for (int64_t t = 0; t < m; ++t) {
          const int64_t j = (k * t) % p.length;
          const double a = xr(o, t, i), b = xi(o, t, i);
          if (p.inverse) {
            re += a * c[j] - b * s[j];
            im += a * s[j] + b * c[j];
          } else {
            re += a * c[j] + b * s[j];
            im += b * c[j] - a * s[j];
          }
        }
        if (p.inverse) {
          re /= L;
          im /= L;
        }
        const int64_t at = ((o * p.n_out + k) * p.inner + i) * 2;
        y.set_double(at, re);
        y.set_double(at + 1, im);
      }
  return std::vector<TensorData>{std::move(y)};
}

// --- STFT ---------------------------------------------------------------------------------------

Expected<StftParams> stft_params(InferContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  if (!is_float(x.dtype) || is_storage_only(x.dtype))
    return ctx.error("signal must be a float tensor, got {}", x.to_string());
  if (x.rank() != 3 || !is_static(x.shape))
    return ctx.error("signal must be a static [batch, length, 1 or 2] tensor, got {}",
                     x.to_string());
  std::vector<int64_t> dims = static_dims(x.shape);
  if (dims[2] != 1 && dims[2] != 2)
    return ctx.error("the last axis of signal {} must be 1 or 2", x.to_string());
  StftParams p;
  p.batch = dims[0];
  p.length = dims[1];
  p.c_in = dims[2];
  AOTC_ASSIGN_OR_RETURN(p.step, scalar_input(ctx, 1, "frame_step"));
  if (p.step < 1) return ctx.error("frame_step {} must be positive", p.step);
  p.has_window = ctx.has_input(2);
  int64_t window_length = -1;
  if (p.has_window) {
    const TensorType& w = ctx.input_type(2);
    if (w.rank() != 1 || !w.shape[0].is_static())
      return ctx.error("window must be a static 1-D tensor, got {}", w.to_string());
    window_length = w.shape[0].value;
  }
  if (ctx.has_input(3)) {
    AOTC_ASSIGN_OR_RETURN(p.frame_length, scalar_input(ctx, 3, "frame_length"));
    if (window_length >= 0 && window_length != p.frame_length)
      return ctx.error("window has {} samples but frame_length is {}", window_length,
                       p.frame_length);
  } else {
    p.frame_length = window_length >= 0 ? window_length : p.length;
  }
  if (p.frame_length < 1 || p.frame_length > p.length)
    return ctx.error("frame_length {} must be in [1, {}]", p.frame_length, p.length);
  p.frames = 1 + (p.length - p.frame_length) / p.step;
  p.bins = ctx.attrs().get_int("onesided", 1) != 0 ? p.frame_length / 2 + 1 : p.frame_length;
  return p;
}

Status infer_stft(InferContext& ctx) {
  AOTC_ASSIGN_OR_RETURN(StftParams p, stft_params(ctx));
  ctx.set_output_type(0, TensorType{ctx.input_type(0).dtype, make_shape({p.batch, p.frames, p.bins, 2})});
  return Status::ok();
}

Expected<std::vector<TensorData>> reference_stft(const Node& node,
                                                 const std::vector<const TensorData*>& in) {
  AOTC_ASSIGN_OR_RETURN(StftParams p, resolve_stft(node));
  const TensorData& x = *in[0];
  TensorData y(node.output(0)->dtype(), {p.batch, p.frames, p.bins, 2});
  std::vector<double> c, s;
  twiddles(p.frame_length, c, s);
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t f = 0; f < p.frames; ++f)
      for (int64_t k = 0; k < p.bins; ++k) {
        double re = 0, im = 0;
        for (int64_t t = 0; t < p.frame_length; ++t) {
          const int64_t at = (b * p.length + f * p.step + t) * p.c_in;
          const double w = p.has_window ? in[2]->get_double(t) : 1.0;
          const double a = x.get_double(at) * w, bb = p.c_in == 2 ? x.get_double(at + 1) * w : 0.0;
          const int64_t j = (k * t) % p.frame_length;
          re += a * c[j] + bb * s[j];
          im += bb * c[j] - a * s[j];
        }
        const int64_t at = ((b * p.frames + f) * p.bins + k) * 2;
        y.set_double(at, re);
        y.set_double(at + 1, im);
      }
  return std::vector<TensorData>{std::move(y)};
}

}  // namespace

Expected<DftParams> resolve_dft(const Node& node) {
  InferContext ctx(node);
  return dft_params(ctx, nullptr);
}

Expected<StftParams> resolve_stft(const Node& node) {
  InferContext ctx(node);
  return stft_params(ctx);
}

std::string window_expression(const std::string& op, const std::string& n, const std::string& n1) {
  const std::string pi = "3.14159265358979323846";
  if (op == "HannWindow")
    return fmt::format("std::pow(std::sin({} * {} / {}), 2.0)", pi, n, n1);
  if (op == "HammingWindow")
    return fmt::format("(25.0 / 46.0 - (1.0 - 25.0 / 46.0) * std::cos(2.0 * {} * {} / {}))", pi,
                       n, n1);
  return fmt::format(
      "(0.42 - 0.5 * std::cos(2.0 * {0} * {1} / {2}) + 0.08 * std::cos(4.0 * {0} * {1} / {2}))",
      pi, n, n1);
}

void register_signal_ops(OpRegistry& r) {
  for (const char* name : {"HannWindow", "HammingWindow", "BlackmanWindow"}) {
    r.add(OpDef{.name = name,
                .attrs = {{"periodic", AttrKind::kInt}, {"output_datatype", AttrKind::kString}},
                .infer = infer_window,
                .reference = reference_window,
                .summary = "A window of length `size` (a compile-time input), periodic or "
                           "symmetric."});
  }
  r.add(OpDef{.name = "MelWeightMatrix",
              .min_inputs = 5,
              .max_inputs = 5,
              .attrs = {{"output_datatype", AttrKind::kString}},
              .infer = infer_mel,
              .reference = reference_mel,
              .summary = "The triangular mel filter bank [dft_length / 2 + 1, num_mel_bins]; "
                         "every input is a compile-time input."});
  r.add(OpDef{.name = "DFT",
              .min_inputs = 1,
              .max_inputs = 3,
              .attrs = {{"inverse", AttrKind::kInt}, {"onesided", AttrKind::kInt}},
              .infer = infer_dft,
              .reference = reference_dft,
              .flops = [](const Node& node) -> int64_t {
                Expected<DftParams> p = resolve_dft(node);
                if (!p) return 0;
                return 8 * p->outer * p->inner * p->n_out * std::min(p->n_in, p->length);
              },
              .summary = "Discrete Fourier transform (forward, inverse, one-sided) along one "
                         "axis; dft_length and axis are compile-time inputs."});
  r.add(OpDef{.name = "STFT",
              .min_inputs = 2,
              .max_inputs = 4,
              .attrs = {{"onesided", AttrKind::kInt}},
              .infer = infer_stft,
              .reference = reference_stft,
              .flops = [](const Node& node) -> int64_t {
                Expected<StftParams> p = resolve_stft(node);
                if (!p) return 0;
                return 8 * p->batch * p->frames * p->bins * p->frame_length;
              },
              .summary = "Short-time Fourier transform of [batch, length, 1 or 2] signals; "
                         "frame_step and frame_length are compile-time inputs."});
}

}  // namespace aotc
