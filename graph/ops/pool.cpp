// Op family 'pool': MaxPool (with the optional Indices output), AveragePool, LpPool,
// GlobalAveragePool and GlobalMaxPool, following the latest ONNX versions (MaxPool-22,
// AveragePool-22, LpPool-22, Global*-22), with 1 to 3 spatial axes. Window geometry (auto_pad,
// ceil_mode, dilations) lives in graph/ops/window.h, shared with Conv and the kernel emitters.
//
// Window rules, as ONNX Runtime and the ONNX test data define them:
//   - a window reads the taps start + k * dilation that fall inside the input;
//   - MaxPool keeps the first maximum in row-major tap order (strict >), and Indices holds its
//     flat position in X (spatial part column-major when storage_order = 1);
//   - AveragePool divides by the taps inside the input (count_include_pad = 0) or by the taps
//     inside the explicitly padded input (count_include_pad = 1); the extra positions ceil_mode
//     adds past the trailing padding are never counted;
//   - LpPool is (sum of |x|^p over the taps inside the input)^(1/p): padding adds nothing. (The
//     ONNX reference scales an average by the full kernel size, which differs at padded borders;
//     the ONNX test data and ONNX Runtime compute the plain norm.)
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "graph/ops/all_ops.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/window.h"

namespace aotc {
namespace {

constexpr int kMaxSpatialRank = 3;

Status check_pool_input(const Node& node, bool allow_int8) {
  const TensorType& x = node.input(0)->type();
  bool ok = is_float(x.dtype) || (allow_int8 && (x.dtype == DType::kInt8 || x.dtype == DType::kUInt8));
  if (!ok)
    return invalid_model("{}: input X has dtype {}, but {} accepts f16, bf16, f32, f64{}",
                         node.describe(), dtype_name(x.dtype), node.op(), allow_int8 ? ", i8, u8" : "");
  if (x.rank() < 3)
    return invalid_model("{}: input X must have rank >= 3 (N x C x spatial...), got {}",
                         node.describe(), x.to_string());
  if (x.rank() - 2 > kMaxSpatialRank)
    return unsupported("{}: {} spatial axes; aotc supports {} with 1 to {}", node.describe(),
                       x.rank() - 2, node.op(), kMaxSpatialRank);
  return Status::ok();
}

/// Validates a windowed pool (MaxPool, AveragePool) and returns its geometry.
Expected<WindowGeometry> pool_window(const Node& node) {
  AOTC_RETURN_IF_ERROR(check_pool_input(node, node.op() == "MaxPool"));
  const Shape& x = node.input(0)->shape();
  AOTC_ASSIGN_OR_RETURN(std::vector<int64_t> spatial, static_spatial_dims(node, x));
  std::vector<int64_t> kernel = node.attrs().get_ints("kernel_shape");
  if (kernel.size() != spatial.size())
    return invalid_model("{}: kernel_shape has {} values but X {} has {} spatial axes",
                         node.describe(), kernel.size(), shape_to_string(x), spatial.size());
  for (const char* flag : {"storage_order", "count_include_pad"}) {
    int64_t v = node.attrs().get_int(flag, 0);
    if (v != 0 && v != 1)
      return invalid_model("{}: attribute '{}' = {} must be 0 or 1", node.describe(), flag, v);
  }
  return window_geometry(node, spatial, kernel, WindowOptions{.allow_ceil_mode = true});
}

/// LpPool's exponent p (an integer >= 1).
Expected<int64_t> lp_exponent(const Node& node) {
  int64_t p = node.attrs().get_int("p", 2);
  if (p < 1) return invalid_model("{}: attribute 'p' = {} must be >= 1", node.describe(), p);
  return p;
}

Status infer_window_pool(InferContext& ctx) {
  AOTC_ASSIGN_OR_RETURN(WindowGeometry g, pool_window(ctx.node()));
  if (ctx.node().op() == "LpPool") AOTC_RETURN_IF_ERROR(lp_exponent(ctx.node()).status());
  const TensorType& x = ctx.input_type(0);
  Shape out{x.shape[0], x.shape[1]};
  for (int64_t o : g.output) out.push_back(Dim(o));
  ctx.set_output_type(0, TensorType{x.dtype, out});
  if (ctx.node().num_outputs() > 1) ctx.set_output_type(1, TensorType{DType::kInt64, out});
  return Status::ok();
}

Status infer_global_pool(InferContext& ctx) {
  AOTC_RETURN_IF_ERROR(check_pool_input(ctx.node(), false));
  const TensorType& x = ctx.input_type(0);
  Shape out{x.shape[0], x.shape[1]};
  out.resize(x.shape.size(), Dim(1));
  ctx.set_output_type(0, TensorType{x.dtype, out});
  return Status::ok();
}

enum class PoolKind { kMax, kAverage, kLp };

/// MaxPool and AveragePool in double precision, on 3-D geometry (leading unit axes added).
Expected<std::vector<TensorData>> window_pool_reference(const Node& node,
                                                        const std::vector<const TensorData*>& in,
                                                        PoolKind kind) {
  AOTC_ASSIGN_OR_RETURN(WindowGeometry geometry, pool_window(node));
  const int spatial_rank = geometry.rank();
  const WindowGeometry g = geometry.with_leading_unit_axes(3);
  const bool include_pad = node.attrs().get_int("count_include_pad", 0) != 0;
  const bool column_major = node.attrs().get_int("storage_order", 0) != 0;
  const double exponent =
      kind == PoolKind::kLp ? static_cast<double>(node.attrs().get_int("p", 2)) : 1.0;
  const std::vector<double> x = in[0]->to_double_vector();
  const int64_t planes = in[0]->dims()[0] * in[0]->dims()[1];
  const int64_t in_plane = g.input[0] * g.input[1] * g.input[2];
  const int64_t out_plane = g.output[0] * g.output[1] * g.output[2];

  TensorData y(node.output(0)->dtype(), static_dims(node.output(0)->shape()));
  TensorData indices;
  if (node.num_outputs() > 1) indices = TensorData(DType::kInt64, static_dims(node.output(1)->shape()));

  // Flat spatial offset of input position p in X's plane, as Indices reports it.
  auto index_of = [&](const int64_t p[3]) {
    if (!column_major) return (p[0] * g.input[1] + p[1]) * g.input[2] + p[2];
    // Column-major over the model's own spatial axes: the first of them varies fastest.
    int64_t idx = 0, stride = 1;
    for (int a = 3 - spatial_rank; a < 3; ++a) {
      idx += p[a] * stride;
      stride *= g.input[a];
    }
    return idx;
  };

  for (int64_t plane = 0; plane < planes; ++plane) {
    const double* xp = x.data() + plane * in_plane;
    int64_t out_index = plane * out_plane;
    for (int64_t o0 = 0; o0 < g.output[0]; ++o0)
      for (int64_t o1 = 0; o1 < g.output[1]; ++o1)
        for (int64_t o2 = 0; o2 < g.output[2]; ++o2, ++out_index) {
          const int64_t o[3] = {o0, o1, o2};
          double best = 0, sum = 0;
          int64_t best_index = -1, valid = 0, padded = 1;
          for (int a = 0; a < 3; ++a) {
            // Taps inside the explicitly padded extent count for count_include_pad.
            int64_t n = 0;
            for (int64_t k = 0; k < g.kernel[a]; ++k)
              if (g.input_pos(a, o[a], k) < g.input[a] + g.pad_end[a]) ++n;
            padded *= n;
          }
          for (int64_t k0 = 0; k0 < g.kernel[0]; ++k0)
            for (int64_t k1 = 0; k1 < g.kernel[1]; ++k1)
              for (int64_t k2 = 0; k2 < g.kernel[2]; ++k2) {
                const int64_t p[3] = {g.input_pos(0, o0, k0), g.input_pos(1, o1, k1),
                                      g.input_pos(2, o2, k2)};
                bool inside = true;
                for (int a = 0; a < 3; ++a) inside = inside && p[a] >= 0 && p[a] < g.input[a];
                if (!inside) continue;
                const double v = xp[(p[0] * g.input[1] + p[1]) * g.input[2] + p[2]];
                if (kind == PoolKind::kMax) {
                  if (best_index < 0 || v > best) {
                    best = v;
                    best_index = plane * in_plane + index_of(p);
                  }
                } else if (kind == PoolKind::kLp) {
                  sum += std::pow(std::fabs(v), exponent);
                } else {
                  sum += v;
                }
                ++valid;
              }
          if (kind == PoolKind::kMax) {
            // A window that reads no input (possible with dilations inside the padding) yields
            // 0 and index -1, as in the ONNX reference.
            y.set_double(out_index, best);
            if (node.num_outputs() > 1) indices.set_int64(out_index, best_index);
          } else if (kind == PoolKind::kLp) {
            y.set_double(out_index, std::pow(sum, 1.0 / exponent));
          } else {
            y.set_double(out_index, sum / static_cast<double>(include_pad ? padded : valid));
          }
        }
  }
  std::vector<TensorData> out{std::move(y)};
  if (node.num_outputs() > 1) out.push_back(std::move(indices));
  return out;
}

Expected<std::vector<TensorData>> global_pool_reference(const Node& node,
                                                        const std::vector<const TensorData*>& in,
                                                        PoolKind kind) {
  const std::vector<int64_t>& dims = in[0]->dims();
  const int64_t planes = dims[0] * dims[1];
  const int64_t plane_size = product(dims, 2);
  TensorData y(node.output(0)->dtype(), static_dims(node.output(0)->shape()));
  for (int64_t plane = 0; plane < planes; ++plane) {
    double acc = kind == PoolKind::kMax ? -std::numeric_limits<double>::infinity() : 0.0;
    for (int64_t i = 0; i < plane_size; ++i) {
      double v = in[0]->get_double(plane * plane_size + i);
      acc = kind == PoolKind::kMax ? std::max(acc, v) : acc + v;
    }
    y.set_double(plane, kind == PoolKind::kMax ? acc : acc / static_cast<double>(plane_size));
  }
  return std::vector<TensorData>{std::move(y)};
}

PaddingResult window_pool_padding(const PaddingQuery& q) {
  auto g = pool_window(q.node());
  if (!g) return PaddingResult::unsafe(g.status().message());
  return window_padding(q, *g, false);
}

/// Global pools reduce every spatial axis: a padded one gets -inf (max) or 0 and a rescale to
/// the actual count (average).
PaddingResult global_pool_padding(const PaddingQuery& q, PoolKind kind) {
  Padding kept;
  for (const PaddedAxis& p : q.operand(0))
    if (p.axis < 2) kept.push_back(PaddedAxis{p.axis, p.symbol, p.offset, std::nullopt});
  PaddingResult r = PaddingResult::safe(kept);
  for (const PaddedAxis& p : q.operand(0)) {
    if (p.axis < 2) continue;
    if (kind == PoolKind::kAverage) {
      if (r.rescale) return PaddingResult::unsafe("averages over two padded axes");
      r.rescale = MeanRescale{p.symbol, p.offset, q.node().input(0)->shape()[p.axis].value};
    }
    r.mask(0, p, p.axis, kind == PoolKind::kMax ? -std::numeric_limits<double>::infinity() : 0.0,
           fmt::format("pools over the padded {}: the neutral element there changes nothing",
                       describe_padded_axis(p)));
  }
  return r;
}

}  // namespace

void register_pool_ops(OpRegistry& r) {
  const std::vector<AttrSpec> window_attrs = {
      {"auto_pad", AttrKind::kString}, {"ceil_mode", AttrKind::kInt},
      {"dilations", AttrKind::kInts},  {"kernel_shape", AttrKind::kInts, true},
      {"pads", AttrKind::kInts},       {"strides", AttrKind::kInts}};

  OpDef max_pool;
  max_pool.name = "MaxPool";
  max_pool.max_outputs = 2;
  max_pool.attrs = window_attrs;
  max_pool.attrs.push_back({"storage_order", AttrKind::kInt});
  max_pool.infer = infer_window_pool;
  max_pool.padding = window_pool_padding;
  max_pool.reference = [](const Node& n, const std::vector<const TensorData*>& in) {
    return window_pool_reference(n, in, PoolKind::kMax);
  };
  max_pool.summary = "sliding-window maximum, optionally with the flat index of each maximum";
  r.add(std::move(max_pool));

  OpDef avg_pool;
  avg_pool.name = "AveragePool";
  avg_pool.attrs = window_attrs;
  avg_pool.attrs.push_back({"count_include_pad", AttrKind::kInt});
  avg_pool.infer = infer_window_pool;
  avg_pool.padding = window_pool_padding;
  avg_pool.reference = [](const Node& n, const std::vector<const TensorData*>& in) {
    return window_pool_reference(n, in, PoolKind::kAverage);
  };
  avg_pool.summary = "sliding-window mean";
  r.add(std::move(avg_pool));

  OpDef lp_pool;
  lp_pool.name = "LpPool";
  lp_pool.attrs = window_attrs;
  lp_pool.attrs.push_back({"p", AttrKind::kInt});
  lp_pool.infer = infer_window_pool;
  lp_pool.padding = window_pool_padding;
  lp_pool.reference = [](const Node& n, const std::vector<const TensorData*>& in) {
    return window_pool_reference(n, in, PoolKind::kLp);
  };
  lp_pool.summary = "sliding-window p-norm (sum of |x|^p over the window, to the power 1/p)";
  r.add(std::move(lp_pool));

  OpDef gap;
  gap.name = "GlobalAveragePool";
  gap.infer = infer_global_pool;
  gap.padding = [](const PaddingQuery& q) { return global_pool_padding(q, PoolKind::kAverage); };
  gap.reference = [](const Node& n, const std::vector<const TensorData*>& in) {
    return global_pool_reference(n, in, PoolKind::kAverage);
  };
  gap.summary = "mean over all spatial axes";
  r.add(std::move(gap));

  OpDef gmp;
  gmp.name = "GlobalMaxPool";
  gmp.infer = infer_global_pool;
  gmp.padding = [](const PaddingQuery& q) { return global_pool_padding(q, PoolKind::kMax); };
  gmp.reference = [](const Node& n, const std::vector<const TensorData*>& in) {
    return global_pool_reference(n, in, PoolKind::kMax);
  };
  gmp.summary = "maximum over all spatial axes";
  r.add(std::move(gmp));
}

}  // namespace aotc
