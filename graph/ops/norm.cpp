// Op family 'norm': BatchNormalization, LayerNormalization, GroupNormalization,
// RMSNormalization, MeanVarianceNormalization, LpNormalization, Softmax, LogSoftmax and LRN, in
// their latest ONNX forms (BatchNormalization-15, LayerNormalization-17, GroupNormalization-21,
// RMSNormalization-23, MeanVarianceNormalization-13, LpNormalization-22, Softmax/LogSoftmax-13,
// LRN-13). Older forms are rewritten by frontend/converters/norm.cpp (for example the 2-D
// coercion of Softmax before opset 13 becomes Reshape -> Softmax -> Reshape, and
// InstanceNormalization becomes GroupNormalization with one group per channel).
//
// The reference implementations compute in double precision whatever the input dtype; a
// stash_type (the precision ONNX asks for the statistics) is checked but only ever exceeded.
#include <fmt/ranges.h>

#include <cmath>
#include <limits>

#include "graph/ops/all_ops.h"
#include "graph/ops/op_helpers.h"

namespace aotc {
namespace {

Status require_float(const InferContext& ctx, int i, const char* role) {
  DType t = ctx.input_type(i).dtype;
  if (!is_float(t))
    return ctx.error("{} must be a floating-point tensor, got {}", role, dtype_name(t));
  return Status::ok();
}

// --- BatchNormalization ----------------------------------------------------------------------

/// The channel axis: 1 for N x C x D1... inputs. A 1-D input is its own channel axis, which is
/// what the ONNX reference's numpy broadcasting of the [C] operands amounts to.
int bn_channel_axis(int rank) { return rank >= 2 ? 1 : 0; }

Status infer_batch_norm(InferContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  if (x.rank() < 1) return ctx.error("X must have rank >= 1, got a scalar");
  AOTC_RETURN_IF_ERROR(require_float(ctx, 0, "X"));
  const Dim& channels = x.shape[bn_channel_axis(x.rank())];
  static const char* kRoles[] = {"X", "scale", "B", "input_mean", "input_var"};
  for (int i = 1; i <= 4; ++i) {
    AOTC_RETURN_IF_ERROR(require_float(ctx, i, kRoles[i]));
    const TensorType& t = ctx.input_type(i);
    if (t.rank() != 1 || !(t.shape[0] == channels))
      return ctx.error("{} must have shape [{}] (one value per channel), got {}", kRoles[i],
                       shape_to_string({channels}), t.to_string());
  }
  // BatchNormalization-15 lets scale/B (T1) and mean/var (T2) differ from X (T), in pairs.
  if (ctx.input_type(1).dtype != ctx.input_type(2).dtype)
    return ctx.error("scale and B must have the same dtype");
  if (ctx.input_type(3).dtype != ctx.input_type(4).dtype)
    return ctx.error("input_mean and input_var must have the same dtype");

  bool training = ctx.attrs().get_int("training_mode", 0) != 0;
  if (!training && ctx.node().num_outputs() > 1)
    return ctx.error("outputs running_mean and running_var are only produced when training_mode=1");
  ctx.set_output_type(0, x);
  for (int i = 1; i < ctx.node().num_outputs(); ++i) ctx.set_output_type(i, ctx.input_type(3));
  return Status::ok();
}

Expected<std::vector<TensorData>> reference_batch_norm(const Node& node,
                                                       const std::vector<const TensorData*>& in) {
  const TensorData& x = *in[0];
  const TensorData &scale = *in[1], &bias = *in[2], &in_mean = *in[3], &in_var = *in[4];
  double eps = node.attrs().get_float("epsilon", 1e-5);
  double momentum = node.attrs().get_float("momentum", 0.9);
  bool training = node.attrs().get_int("training_mode", 0) != 0;
  int axis = bn_channel_axis(x.rank());
  int64_t outer = product(x.dims(), 0, axis), channels = x.dims()[axis],
          inner = product(x.dims(), axis + 1);

  std::vector<double> mean(channels), var(channels);
  for (int64_t c = 0; c < channels; ++c) {
    if (!training) {
      mean[c] = in_mean.get_double(c);
      var[c] = in_var.get_double(c);
      continue;
    }
    // Training mode normalises with the batch statistics (population variance, as the spec's
    // reference does) and blends them into the running statistics.
    double sum = 0, sq = 0, n = static_cast<double>(outer * inner);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) sum += x.get_double((o * channels + c) * inner + i);
    mean[c] = sum / n;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        double d = x.get_double((o * channels + c) * inner + i) - mean[c];
        sq += d * d;
      }
    var[c] = sq / n;
  }

  TensorData y(x.dtype(), x.dims());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < channels; ++c) {
      double a = scale.get_double(c) / std::sqrt(var[c] + eps);
      double b = bias.get_double(c) - mean[c] * a;
      for (int64_t i = 0; i < inner; ++i) {
        int64_t k = (o * channels + c) * inner + i;
        y.set_double(k, x.get_double(k) * a + b);
      }
    }
  std::vector<TensorData> out;
  out.push_back(std::move(y));
  for (int k = 1; k < node.num_outputs(); ++k) {
    const TensorData& running = k == 1 ? in_mean : in_var;
    const std::vector<double>& batch = k == 1 ? mean : var;
    TensorData r(running.dtype(), running.dims());
    for (int64_t c = 0; c < channels; ++c)
      r.set_double(c, running.get_double(c) * momentum + batch[c] * (1 - momentum));
    out.push_back(std::move(r));
  }
  return out;
}

// --- LayerNormalization ----------------------------------------------------------------------

/// The IR dtype of an ONNX TensorProto.DataType number allowed for stash_type.
std::optional<DType> stash_dtype(int64_t onnx_type) {
  switch (onnx_type) {
    case 1:
      return DType::kFloat32;
    case 10:
      return DType::kFloat16;
    case 11:
      return DType::kFloat64;
    case 16:
      return DType::kBFloat16;
    default:
      return std::nullopt;
  }
}

/// True when `s` broadcasts unidirectionally (numpy rules, right-aligned) to `target`.
bool broadcasts_to(const Shape& s, const Shape& target) {
  if (s.size() > target.size()) return false;
  size_t off = target.size() - s.size();
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i].is_static() && s[i].value == 1) continue;
    if (!(s[i] == target[off + i])) return false;
  }
  return true;
}

Status infer_layer_norm(InferContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  AOTC_RETURN_IF_ERROR(require_float(ctx, 0, "X"));
  if (x.rank() < 1) return ctx.error("X must have rank >= 1, got a scalar");
  int64_t axis_attr = ctx.attrs().get_int("axis", -1);
  std::optional<int> axis = normalize_axis(axis_attr, x.rank());
  if (!axis) return ctx.error("axis {} is out of range for a rank-{} input", axis_attr, x.rank());
  Shape normalized(x.shape.begin() + *axis, x.shape.end());
  for (int i = 1; i <= 2 && ctx.has_input(i); ++i) {
    const char* role = i == 1 ? "Scale" : "B";
    AOTC_RETURN_IF_ERROR(require_float(ctx, i, role));
    if (!broadcasts_to(ctx.input_type(i).shape, normalized))
      return ctx.error("{} of shape {} does not broadcast to the normalized shape {}", role,
                       shape_to_string(ctx.input_type(i).shape), shape_to_string(normalized));
  }
  int64_t stash = ctx.attrs().get_int("stash_type", 1);
  std::optional<DType> stash_t = stash_dtype(stash);
  if (!stash_t) return ctx.error("stash_type {} is not a floating-point ONNX dtype", stash);

  ctx.set_output_type(0, x);
  TensorType stat{*stash_t, Shape(x.shape.begin(), x.shape.begin() + *axis)};
  stat.shape.resize(x.shape.size(), Dim(1));
  for (int i = 1; i < ctx.node().num_outputs(); ++i) ctx.set_output_type(i, stat);
  return Status::ok();
}

/// For each position in `target` dims, the flat index into a tensor of dims `s` broadcast to it.
std::vector<int64_t> broadcast_index_map(const std::vector<int64_t>& s,
                                         const std::vector<int64_t>& target) {
  std::vector<int64_t> strides = broadcast_strides(s, target);
  std::vector<int64_t> map;
  for_each_index(target, [&](const std::vector<int64_t>& idx) {
    int64_t k = 0;
    for (size_t i = 0; i < idx.size(); ++i) k += idx[i] * strides[i];
    map.push_back(k);
  });
  return map;
}

Expected<std::vector<TensorData>> reference_layer_norm(const Node& node,
                                                       const std::vector<const TensorData*>& in) {
  const TensorData& x = *in[0];
  int axis = *normalize_axis(node.attrs().get_int("axis", -1), x.rank());
  double eps = node.attrs().get_float("epsilon", 1e-5);
  std::vector<int64_t> norm_dims(x.dims().begin() + axis, x.dims().end());
  int64_t outer = product(x.dims(), 0, axis), inner = product(norm_dims);
  std::vector<int64_t> scale_map = broadcast_index_map(in[1]->dims(), norm_dims);
  const TensorData* bias = in.size() > 2 ? in[2] : nullptr;
  std::vector<int64_t> bias_map =
      bias ? broadcast_index_map(bias->dims(), norm_dims) : std::vector<int64_t>{};

  TensorData y(x.dtype(), x.dims());
  std::vector<TensorData> stats;
  for (int k = 1; k < node.num_outputs(); ++k)
    stats.emplace_back(node.output(k)->dtype(), static_dims(node.output(k)->shape()));
  for (int64_t o = 0; o < outer; ++o) {
    double sum = 0, sq = 0;
    for (int64_t j = 0; j < inner; ++j) sum += x.get_double(o * inner + j);
    double mean = sum / static_cast<double>(inner);
    for (int64_t j = 0; j < inner; ++j) {
      double d = x.get_double(o * inner + j) - mean;
      sq += d * d;
    }
    double inv_std = 1.0 / std::sqrt(sq / static_cast<double>(inner) + eps);
    for (int64_t j = 0; j < inner; ++j) {
      double v = (x.get_double(o * inner + j) - mean) * inv_std * in[1]->get_double(scale_map[j]);
      if (bias) v += bias->get_double(bias_map[j]);
      y.set_double(o * inner + j, v);
    }
    if (stats.size() > 0) stats[0].set_double(o, mean);
    if (stats.size() > 1) stats[1].set_double(o, inv_std);
  }
  std::vector<TensorData> out;
  out.push_back(std::move(y));
  for (TensorData& s : stats) out.push_back(std::move(s));
  return out;
}

// --- GroupNormalization ----------------------------------------------------------------------

Status infer_group_norm(InferContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  AOTC_RETURN_IF_ERROR(require_float(ctx, 0, "X"));
  if (x.rank() < 2) return ctx.error("X must have rank >= 2 (N x C x ...), got {}", x.to_string());
  int64_t groups = ctx.attrs().get_int("num_groups", 0);
  if (groups < 1) return ctx.error("num_groups must be >= 1, got {}", groups);
  const Dim& channels = x.shape[1];
  if (!channels.is_static())
    return ctx.unsupported_error("the channel count of X {} must be static to form groups",
                                 x.to_string());
  if (channels.value % groups != 0)
    return ctx.error("num_groups {} does not divide the {} channels of X", groups, channels.value);
  static const char* kRoles[] = {"X", "scale", "bias"};
  for (int i = 1; i <= 2; ++i) {
    const TensorType& t = ctx.input_type(i);
    if (t.dtype != x.dtype)
      return ctx.error("{} must have X's dtype {}, got {}", kRoles[i], dtype_name(x.dtype),
                       t.to_string());
    if (t.rank() != 1 || !(t.shape[0] == channels))
      return ctx.error("{} must have shape [{}] (one value per channel), got {}", kRoles[i],
                       channels.value, t.to_string());
  }
  int64_t stash = ctx.attrs().get_int("stash_type", 1);
  if (!stash_dtype(stash))
    return ctx.error("stash_type {} is not a floating-point ONNX dtype", stash);
  ctx.set_output_type(0, x);
  return Status::ok();
}

/// Mean and population variance of `n` elements of `x` from `begin` with stride 1, in double.
/// Two passes, so that a large mean does not cancel the variance.
std::pair<double, double> moments(const TensorData& x, int64_t begin, int64_t n) {
  double sum = 0, sq = 0;
  for (int64_t j = 0; j < n; ++j) sum += x.get_double(begin + j);
  double mean = sum / static_cast<double>(n);
  for (int64_t j = 0; j < n; ++j) {
    double d = x.get_double(begin + j) - mean;
    sq += d * d;
  }
  return {mean, sq / static_cast<double>(n)};
}

Expected<std::vector<TensorData>> reference_group_norm(const Node& node,
                                                       const std::vector<const TensorData*>& in) {
  const TensorData &x = *in[0], &scale = *in[1], &bias = *in[2];
  int64_t groups = node.attrs().get_int("num_groups", 1);
  double eps = node.attrs().get_float("epsilon", 1e-5);
  int64_t batch = x.dims()[0], channels = x.dims()[1], spatial = product(x.dims(), 2);
  int64_t per_group = channels / groups;
  // The channels of a group are adjacent, so each (n, group) is one contiguous block.
  int64_t block = per_group * spatial;
  TensorData y(x.dtype(), x.dims());
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t g = 0; g < groups; ++g) {
      int64_t begin = (n * groups + g) * block;
      auto [mean, var] = moments(x, begin, block);
      double inv_std = 1.0 / std::sqrt(var + eps);
      for (int64_t j = 0; j < block; ++j) {
        int64_t c = g * per_group + j / spatial;
        y.set_double(begin + j, (x.get_double(begin + j) - mean) * inv_std * scale.get_double(c) +
                                    bias.get_double(c));
      }
    }
  return std::vector<TensorData>{std::move(y)};
}

// --- RMSNormalization ------------------------------------------------------------------------

Status infer_rms_norm(InferContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  AOTC_RETURN_IF_ERROR(require_float(ctx, 0, "X"));
  AOTC_RETURN_IF_ERROR(require_float(ctx, 1, "scale"));
  if (x.rank() < 1) return ctx.error("X must have rank >= 1, got a scalar");
  int64_t axis_attr = ctx.attrs().get_int("axis", -1);
  if (!normalize_axis(axis_attr, x.rank()))
    return ctx.error("axis {} is out of range for a rank-{} input", axis_attr, x.rank());
  // RMSNormalization-23 lets Scale broadcast to all of X (not only to the normalized axes).
  const TensorType& scale = ctx.input_type(1);
  if (!broadcasts_to(scale.shape, x.shape))
    return ctx.error("scale of shape {} does not broadcast to X {}", shape_to_string(scale.shape),
                     x.to_string());
  int64_t stash = ctx.attrs().get_int("stash_type", 1);
  if (!stash_dtype(stash))
    return ctx.error("stash_type {} is not a floating-point ONNX dtype", stash);
  ctx.set_output_type(0, TensorType{scale.dtype, x.shape});  // Y has Scale's dtype (V)
  return Status::ok();
}

Expected<std::vector<TensorData>> reference_rms_norm(const Node& node,
                                                     const std::vector<const TensorData*>& in) {
  const TensorData &x = *in[0], &scale = *in[1];
  int axis = *normalize_axis(node.attrs().get_int("axis", -1), x.rank());
  double eps = node.attrs().get_float("epsilon", 1e-5);
  int64_t rows = product(x.dims(), 0, axis), cols = product(x.dims(), axis);
  std::vector<int64_t> scale_map = broadcast_index_map(scale.dims(), x.dims());
  TensorData y(scale.dtype(), x.dims());
  for (int64_t r = 0; r < rows; ++r) {
    double sq = 0;
    for (int64_t c = 0; c < cols; ++c)
      sq += x.get_double(r * cols + c) * x.get_double(r * cols + c);
    double inv_rms = 1.0 / std::sqrt(sq / static_cast<double>(cols) + eps);
    for (int64_t c = 0; c < cols; ++c) {
      int64_t i = r * cols + c;
      y.set_double(i, x.get_double(i) * inv_rms * scale.get_double(scale_map[i]));
    }
  }
  return std::vector<TensorData>{std::move(y)};
}

// --- MeanVarianceNormalization ---------------------------------------------------------------

/// The axes MVN reduces, as a mask over X's axes; nullopt when an axis is out of range.
std::optional<std::vector<bool>> mvn_axes(const Attributes& attrs, int rank) {
  std::vector<bool> reduced(rank, false);
  for (int64_t a : attrs.get_ints("axes", {0, 2, 3})) {
    std::optional<int> axis = normalize_axis(a, rank);
    if (!axis) return std::nullopt;
    reduced[*axis] = true;
  }
  return reduced;
}

Status infer_mvn(InferContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  AOTC_RETURN_IF_ERROR(require_float(ctx, 0, "X"));
  if (!mvn_axes(ctx.attrs(), x.rank()))
    return ctx.error("axes [{}] are out of range for a rank-{} input",
                     fmt::join(ctx.attrs().get_ints("axes", {0, 2, 3}), ", "), x.rank());
  ctx.set_output_type(0, x);
  return Status::ok();
}

/// MeanVarianceNormalization-13's function body: (X - mean) / (sqrt(variance) + 1e-9). The
/// epsilon is added to the standard deviation, not to the variance as in the other norms.
constexpr double kMvnEpsilon = 1e-9;

Expected<std::vector<TensorData>> reference_mvn(const Node& node,
                                                const std::vector<const TensorData*>& in) {
  const TensorData& x = *in[0];
  std::vector<bool> reduced = *mvn_axes(node.attrs(), x.rank());
  // Group the flat indices by their kept coordinates: one group per output statistic.
  std::vector<int64_t> kept_dims = x.dims();
  for (int i = 0; i < x.rank(); ++i)
    if (reduced[i]) kept_dims[i] = 1;
  std::vector<int64_t> kept_strides = row_major_strides(kept_dims);
  std::vector<std::vector<int64_t>> groups(static_cast<size_t>(product(kept_dims)));
  int64_t flat = 0;
  for_each_index(x.dims(), [&](const std::vector<int64_t>& idx) {
    int64_t g = 0;
    for (int i = 0; i < x.rank(); ++i)
      if (!reduced[i]) g += idx[i] * kept_strides[i];
    groups[g].push_back(flat++);
  });
  TensorData y(x.dtype(), x.dims());
  for (const std::vector<int64_t>& group : groups) {
    if (group.empty()) continue;
    double sum = 0, sq = 0, n = static_cast<double>(group.size());
    for (int64_t i : group) sum += x.get_double(i);
    double mean = sum / n;
    for (int64_t i : group) sq += (x.get_double(i) - mean) * (x.get_double(i) - mean);
    double denom = std::sqrt(sq / n) + kMvnEpsilon;
    for (int64_t i : group) y.set_double(i, (x.get_double(i) - mean) / denom);
  }
  return std::vector<TensorData>{std::move(y)};
}

// --- LpNormalization -------------------------------------------------------------------------

Status infer_lp_norm(InferContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  AOTC_RETURN_IF_ERROR(require_float(ctx, 0, "input"));
  int64_t axis = ctx.attrs().get_int("axis", -1);
  if (!normalize_axis(axis, x.rank()))
    return ctx.error("axis {} is out of range for a rank-{} input", axis, x.rank());
  int64_t p = ctx.attrs().get_int("p", 2);
  if (p != 1 && p != 2) return ctx.error("p must be 1 or 2, got {}", p);
  ctx.set_output_type(0, x);
  return Status::ok();
}

/// x / ||x||_p along one axis; a zero norm gives zeros (LpNormalization-22), not NaN.
Expected<std::vector<TensorData>> reference_lp_norm(const Node& node,
                                                    const std::vector<const TensorData*>& in) {
  const TensorData& x = *in[0];
  int axis = *normalize_axis(node.attrs().get_int("axis", -1), x.rank());
  bool l1 = node.attrs().get_int("p", 2) == 1;
  int64_t outer = product(x.dims(), 0, axis), n = x.dims()[axis],
          inner = product(x.dims(), axis + 1);
  TensorData y(x.dtype(), x.dims());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t k) { return (o * n + k) * inner + i; };
      double acc = 0;
      for (int64_t k = 0; k < n; ++k)
        acc += l1 ? std::fabs(x.get_double(at(k))) : x.get_double(at(k)) * x.get_double(at(k));
      double norm = l1 ? acc : std::sqrt(acc);
      for (int64_t k = 0; k < n; ++k)
        y.set_double(at(k), norm == 0 ? 0.0 : x.get_double(at(k)) / norm);
    }
  return std::vector<TensorData>{std::move(y)};
}

// --- Softmax / LogSoftmax --------------------------------------------------------------------

Status infer_softmax(InferContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  AOTC_RETURN_IF_ERROR(require_float(ctx, 0, "input"));
  int64_t axis = ctx.attrs().get_int("axis", -1);
  // A scalar has no axis; ONNX shape inference accepts it only for axis 0 / -1 with rank >= 1.
  if (!normalize_axis(axis, x.rank()))
    return ctx.error("axis {} is out of range for a rank-{} input", axis, x.rank());
  ctx.set_output_type(0, x);
  return Status::ok();
}

/// Softmax along one axis with max subtraction, so that large inputs do not overflow exp.
Expected<std::vector<TensorData>> reference_softmax(const Node& node,
                                                    const std::vector<const TensorData*>& in,
                                                    bool log) {
  const TensorData& x = *in[0];
  int axis = *normalize_axis(node.attrs().get_int("axis", -1), x.rank());
  int64_t outer = product(x.dims(), 0, axis), n = x.dims()[axis],
          inner = product(x.dims(), axis + 1);
  TensorData y(x.dtype(), x.dims());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t k) { return (o * n + k) * inner + i; };
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t k = 0; k < n; ++k) mx = std::max(mx, x.get_double(at(k)));
      double sum = 0;
      for (int64_t k = 0; k < n; ++k) sum += std::exp(x.get_double(at(k)) - mx);
      for (int64_t k = 0; k < n; ++k) {
        double shifted = x.get_double(at(k)) - mx;
        y.set_double(at(k), log ? shifted - std::log(sum) : std::exp(shifted) / sum);
      }
    }
  return std::vector<TensorData>{std::move(y)};
}

// --- LRN -------------------------------------------------------------------------------------

Status infer_lrn(InferContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  AOTC_RETURN_IF_ERROR(require_float(ctx, 0, "X"));
  if (x.rank() < 2) return ctx.error("X must have rank >= 2 (N x C x ...), got rank {}", x.rank());
  int64_t size = ctx.attrs().get_int("size", 0);
  if (size < 1) return ctx.error("size must be >= 1, got {}", size);
  ctx.set_output_type(0, x);
  return Status::ok();
}

/// The channel window of LRN around channel c, per the spec:
/// [max(0, c - floor((size-1)/2)), min(C-1, c + ceil((size-1)/2))].
std::pair<int64_t, int64_t> lrn_window(int64_t c, int64_t channels, int64_t size) {
  return {std::max<int64_t>(0, c - (size - 1) / 2), std::min<int64_t>(channels - 1, c + size / 2)};
}

Expected<std::vector<TensorData>> reference_lrn(const Node& node,
                                                const std::vector<const TensorData*>& in) {
  const TensorData& x = *in[0];
  int64_t size = node.attrs().get_int("size", 1);
  double alpha = node.attrs().get_float("alpha", 1e-4), beta = node.attrs().get_float("beta", 0.75),
         bias = node.attrs().get_float("bias", 1.0);
  int64_t batch = x.dims()[0], channels = x.dims()[1], inner = product(x.dims(), 2);
  TensorData y(x.dtype(), x.dims());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t c = 0; c < channels; ++c) {
      auto [lo, hi] = lrn_window(c, channels, size);
      for (int64_t i = 0; i < inner; ++i) {
        double sq = 0;
        for (int64_t k = lo; k <= hi; ++k) {
          double v = x.get_double((b * channels + k) * inner + i);
          sq += v * v;
        }
        int64_t at = (b * channels + c) * inner + i;
        y.set_double(
            at, x.get_double(at) / std::pow(bias + alpha / static_cast<double>(size) * sq, beta));
      }
    }
  return std::vector<TensorData>{std::move(y)};
}

// --- Padding rules ---------------------------------------------------------------------------

/// A normalisation whose statistics run over the axes in `over`: padding along one of them would
/// enter the statistics (and their element count), which no neutral value fixes; padding along
/// the other axes stays in its rows. Results 1.. (LayerNormalization's Mean and InvStdDev) keep
/// the leading axes of X.
PaddingResult statistics_padding(const PaddingQuery& q, const std::vector<bool>& over,
                                 const char* what) {
  for (const PaddedAxis& p : q.operand(0)) {
    if (p.axis < static_cast<int>(over.size()) && over[p.axis]) {
      return PaddingResult::unsafe(fmt::format(
          "computes its {} over the padded {}: the padding would enter them", what,
          describe_padded_axis(p)));
    }
  }
  for (int i = 1; i < q.num_operands(); ++i) {
    if (!q.operand(i).empty())
      return PaddingResult::unsafe(fmt::format("has a padded parameter (operand {})", i));
  }
  PaddingResult r = PaddingResult::safe(q.operand(0));
  for (PaddedAxis& p : r.outputs[0]) p.fill.reset();
  for (int o = 1; o < q.node().num_outputs(); ++o) r.outputs.push_back(r.outputs[0]);
  return r;
}

std::vector<bool> axes_from(int axis, int rank) {
  std::vector<bool> over(rank, false);
  for (int a = axis; a < rank; ++a) over[a] = true;
  return over;
}

int attr_axis(const Node& node, int64_t fallback) {
  const int rank = node.input(0)->rank();
  return normalize_axis(node.attrs().get_int("axis", fallback), rank).value_or(0);
}

/// Softmax and LogSoftmax along a padded axis: -inf in the padded positions makes their
/// exponentials 0, so the valid ones normalise among themselves; the results there are then 0
/// (Softmax) or -inf (LogSoftmax).
PaddingResult softmax_padding(const PaddingQuery& q, bool log) {
  const int axis = attr_axis(q.node(), -1);
  PaddingResult r = PaddingResult::safe(q.operand(0));
  for (PaddedAxis& p : r.outputs[0]) p.fill.reset();
  if (const PaddedAxis* p = q.padded(0, axis)) {
    r.mask(0, *p, axis, -std::numeric_limits<double>::infinity(),
           fmt::format("normalises along the padded {}: -inf there weighs nothing",
                       describe_padded_axis(*p)));
    for (PaddedAxis& o : r.outputs[0])
      if (o.axis == axis) o.fill = log ? -std::numeric_limits<double>::infinity() : 0.0;
  }
  return r;
}

/// LpNormalization along a padded axis: zeros there add nothing to the norm.
PaddingResult lp_norm_padding(const PaddingQuery& q) {
  const int axis = attr_axis(q.node(), -1);
  PaddingResult r = PaddingResult::safe(q.operand(0));
  for (PaddedAxis& p : r.outputs[0]) p.fill.reset();
  if (const PaddedAxis* p = q.padded(0, axis)) {
    r.mask(0, *p, axis, 0.0,
           fmt::format("takes the norm along the padded {}: zeros there add nothing",
                       describe_padded_axis(*p)));
    for (PaddedAxis& o : r.outputs[0])
      if (o.axis == axis) o.fill = 0.0;
  }
  return r;
}

/// Inference BatchNormalization is per channel: only its channel axis must not be padded (its
/// parameters have one value per channel). Training mode takes statistics over every other axis.
PaddingResult batch_norm_padding(const PaddingQuery& q) {
  const int rank = q.node().input(0)->rank();
  std::vector<bool> over(rank, false);
  over[bn_channel_axis(rank)] = true;
  if (q.node().attrs().get_int("training_mode", 0) != 0) over.assign(rank, true);
  PaddingResult r = statistics_padding(q, over, "per-channel statistics");
  if (r.verdict == PaddingVerdict::kUnsafe) return r;
  r.outputs.assign(q.node().num_outputs(), {});
  r.outputs[0] = q.operand(0);
  for (PaddedAxis& p : r.outputs[0]) p.fill.reset();
  return r;
}

}  // namespace

void register_norm_ops(OpRegistry& r) {
  {
    OpDef def;
    def.name = "BatchNormalization";
    def.min_inputs = def.max_inputs = 5;
    def.max_outputs = 3;
    def.attrs = {{"epsilon", AttrKind::kFloat},
                 {"momentum", AttrKind::kFloat},
                 {"training_mode", AttrKind::kInt}};
    def.infer = infer_batch_norm;
    def.reference = reference_batch_norm;
    def.padding = batch_norm_padding;
    def.summary =
        "Per-channel normalisation (channel axis 1); training_mode=1 uses batch statistics.";
    r.add(std::move(def));
  }
  {
    OpDef def;
    def.name = "LayerNormalization";
    def.min_inputs = 2;
    def.max_inputs = 3;
    def.max_outputs = 3;
    def.attrs = {
        {"axis", AttrKind::kInt}, {"epsilon", AttrKind::kFloat}, {"stash_type", AttrKind::kInt}};
    def.infer = infer_layer_norm;
    def.reference = reference_layer_norm;
    def.padding = [](const PaddingQuery& q) {
      return statistics_padding(q, axes_from(attr_axis(q.node(), -1), q.node().input(0)->rank()),
                                "mean and variance");
    };
    def.summary = "Normalises over the axes from `axis` on; optional Mean and InvStdDev outputs.";
    r.add(std::move(def));
  }
  {
    OpDef def;
    def.name = "GroupNormalization";
    def.min_inputs = def.max_inputs = 3;
    def.attrs = {{"num_groups", AttrKind::kInt, true},
                 {"epsilon", AttrKind::kFloat},
                 {"stash_type", AttrKind::kInt}};
    def.infer = infer_group_norm;
    def.reference = reference_group_norm;
    def.padding = [](const PaddingQuery& q) {
      return statistics_padding(q, axes_from(1, q.node().input(0)->rank()), "group statistics");
    };
    def.summary =
        "Normalises each group of adjacent channels per instance; scale and bias per channel.";
    r.add(std::move(def));
  }
  {
    OpDef def;
    def.name = "RMSNormalization";
    def.min_inputs = def.max_inputs = 2;
    def.attrs = {
        {"axis", AttrKind::kInt}, {"epsilon", AttrKind::kFloat}, {"stash_type", AttrKind::kInt}};
    def.infer = infer_rms_norm;
    def.reference = reference_rms_norm;
    def.padding = [](const PaddingQuery& q) {
      return statistics_padding(q, axes_from(attr_axis(q.node(), -1), q.node().input(0)->rank()),
                                "mean square");
    };
    def.summary = "x / sqrt(mean(x^2) + epsilon) * scale over the axes from `axis` on.";
    r.add(std::move(def));
  }
  {
    OpDef def;
    def.name = "MeanVarianceNormalization";
    def.attrs = {{"axes", AttrKind::kInts}};
    def.infer = infer_mvn;
    def.reference = reference_mvn;
    def.padding = [](const PaddingQuery& q) {
      const int rank = q.node().input(0)->rank();
      return statistics_padding(q, mvn_axes(q.node().attrs(), rank).value_or(std::vector<bool>(rank, true)),
                                "mean and variance");
    };
    def.summary = "(x - mean) / (std + 1e-9) over `axes` (default 0, 2, 3).";
    r.add(std::move(def));
  }
  {
    OpDef def;
    def.name = "LpNormalization";
    def.attrs = {{"axis", AttrKind::kInt}, {"p", AttrKind::kInt}};
    def.infer = infer_lp_norm;
    def.reference = reference_lp_norm;
    def.padding = lp_norm_padding;
    def.summary = "x / ||x||_p along one axis (p = 1 or 2); a zero norm gives zeros.";
    r.add(std::move(def));
  }
  for (bool log : {false, true}) {
    OpDef def;
    def.name = log ? "LogSoftmax" : "Softmax";
    def.attrs = {{"axis", AttrKind::kInt}};
    def.infer = infer_softmax;
    def.reference = [log](const Node& node, const std::vector<const TensorData*>& in) {
      return reference_softmax(node, in, log);
    };
    def.padding = [log](const PaddingQuery& q) { return softmax_padding(q, log); };
    def.summary =
        log ? "log(softmax(x)) along one axis." : "Softmax along one axis (max-subtracted).";
    r.add(std::move(def));
  }
  {
    OpDef def;
    def.name = "LRN";
    def.attrs = {{"size", AttrKind::kInt, true},
                 {"alpha", AttrKind::kFloat},
                 {"beta", AttrKind::kFloat},
                 {"bias", AttrKind::kFloat}};
    def.infer = infer_lrn;
    def.reference = reference_lrn;
    def.padding = [](const PaddingQuery& q) {
      std::vector<bool> over(q.node().input(0)->rank(), false);
      if (over.size() > 1) over[1] = true;
      return statistics_padding(q, over, "window sums across channels");
    };
    def.summary = "Local response normalisation across channels.";
    r.add(std::move(def));
  }
}

}  // namespace aotc
