// Op family 'attention': Attention (ONNX 24) and RotaryEmbedding (ONNX 23), in their latest
// forms, 3-D and 4-D inputs alike (the 3-D forms are read with strides, never transposed).
//
// The reference implementations compute in double precision and follow the ONNX reference
// (onnx/reference/ops/op_attention.py, op_rotary_embedding.py) step by step.
#include "graph/ops/attention.h"

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

/// Requires the dims of input i to be static (the kernels bake them in).
Status require_static(const InferContext& ctx, int i, const char* role) {
  if (!is_static(ctx.input_type(i).shape))
    return ctx.unsupported_error("{} {} must have a static shape", role,
                                 ctx.input_type(i).to_string());
  return Status::ok();
}

// --- RotaryEmbedding -------------------------------------------------------------------------

Status infer_rotary(InferContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  AOTC_RETURN_IF_ERROR(require_float(ctx, 0, "X"));
  for (int i = 0; i < ctx.num_inputs(); ++i)
    if (ctx.has_input(i))
      AOTC_RETURN_IF_ERROR(require_static(ctx, i,
                                          i == 0   ? "X"
                                          : i == 3 ? "position_ids"
                                                   : "cache"));
  if (x.rank() != 3 && x.rank() != 4)
    return ctx.error("X must be 3-D or 4-D, got {}", x.to_string());
  for (int i = 1; i <= 2; ++i)
    if (ctx.input_type(i).dtype != x.dtype)
      return ctx.error("{} must have X's dtype {}", i == 1 ? "cos_cache" : "sin_cache",
                       dtype_name(x.dtype));
  if (ctx.input_type(1).shape != ctx.input_type(2).shape)
    return ctx.error("cos_cache {} and sin_cache {} must have the same shape",
                     ctx.input_type(1).to_string(), ctx.input_type(2).to_string());

  std::vector<int64_t> dims = static_dims(x.shape);
  int64_t num_heads = ctx.attrs().get_int("num_heads", 0);
  int64_t batch = dims[0], seq = x.rank() == 4 ? dims[2] : dims[1], head_size = dims.back();
  if (x.rank() == 3) {
    if (num_heads < 1) return ctx.error("num_heads is required (and >= 1) for a 3-D X");
    if (dims[2] % num_heads != 0)
      return ctx.error("the hidden size {} of X is not a multiple of num_heads {}", dims[2],
                       num_heads);
    head_size = dims[2] / num_heads;
  } else if (num_heads != 0 && num_heads != dims[1]) {
    return ctx.error("num_heads {} differs from the {} heads of the 4-D X", num_heads, dims[1]);
  }
  int64_t rotary_dim = ctx.attrs().get_int("rotary_embedding_dim", 0);
  if (rotary_dim == 0) rotary_dim = head_size;
  if (rotary_dim < 0 || rotary_dim > head_size || rotary_dim % 2 != 0)
    return ctx.error("rotary_embedding_dim {} must be even and at most the head size {}",
                     rotary_dim, head_size);

  std::vector<int64_t> cache = static_dims(ctx.input_type(1).shape);
  if (ctx.has_input(3)) {
    const TensorType& pos = ctx.input_type(3);
    if (pos.dtype != DType::kInt64)
      return ctx.error("position_ids must be i64, got {}", pos.to_string());
    if (static_dims(pos.shape) != std::vector<int64_t>{batch, seq})
      return ctx.error("position_ids must have shape [{}x{}] (batch x sequence), got {}", batch,
                       seq, pos.to_string());
    if (cache.size() != 2 || cache[1] != rotary_dim / 2)
      return ctx.error("with position_ids the caches must be [max_position, {}], got {}",
                       rotary_dim / 2, ctx.input_type(1).to_string());
  } else if (cache != std::vector<int64_t>{batch, seq, rotary_dim / 2}) {
    return ctx.error(
        "without position_ids the caches must be [{}x{}x{}] (batch x sequence x rotary_dim / 2), "
        "got {}",
        batch, seq, rotary_dim / 2, ctx.input_type(1).to_string());
  }
  ctx.set_output_type(0, x);
  return Status::ok();
}

/// Rotates one row: pairs (x1, x2) are halves [i, i + rot/2] or neighbours [2i, 2i + 1].
Expected<std::vector<TensorData>> reference_rotary(const Node& node,
                                                   const std::vector<const TensorData*>& in) {
  const TensorData &x = *in[0], &cos_cache = *in[1], &sin_cache = *in[2];
  const TensorData* position_ids = in.size() > 3 ? in[3] : nullptr;
  RotaryLayout l = rotary_layout(node);
  int64_t half = l.rotary_dim / 2;
  TensorData y(x.dtype(), x.dims());
  for (int64_t b = 0; b < l.batch; ++b)
    for (int64_t s = 0; s < l.seq; ++s) {
      int64_t cache_row = b * l.seq + s;
      if (position_ids) {
        cache_row = position_ids->get_int64(b * l.seq + s);
        if (cache_row < 0 || cache_row >= l.max_position)
          return invalid_model("{}: position id {} is outside the {} rows of the caches",
                               node.describe(), cache_row, l.max_position);
      }
      for (int64_t h = 0; h < l.heads; ++h) {
        int64_t row = b * l.batch_stride + s * l.seq_stride + h * l.head_stride;
        for (int64_t i = 0; i < half; ++i) {
          double c = cos_cache.get_double(cache_row * half + i),
                 sn = sin_cache.get_double(cache_row * half + i);
          int64_t i1 = l.interleaved ? 2 * i : i, i2 = l.interleaved ? 2 * i + 1 : i + half;
          double x1 = x.get_double(row + i1), x2 = x.get_double(row + i2);
          y.set_double(row + i1, c * x1 - sn * x2);
          y.set_double(row + i2, sn * x1 + c * x2);
        }
        for (int64_t i = l.rotary_dim; i < l.head_size; ++i)
          y.set_double(row + i, x.get_double(row + i));
      }
    }
  return std::vector<TensorData>{std::move(y)};
}

// --- Attention -------------------------------------------------------------------------------

/// The float dtype named by the string attribute `name`, or nullopt when absent.
Expected<std::optional<DType>> float_dtype_attr(const InferContext& ctx, const char* name) {
  if (!ctx.attrs().has(name)) return std::optional<DType>{};
  std::optional<DType> t = parse_dtype(ctx.attrs().get_string(name, ""));
  if (!t || !is_float(*t))
    return ctx.error("{} must name a float dtype, got '{}'", name,
                     ctx.attrs().get_string(name, ""));
  return t;
}

/// [batch, heads, seq, size] of a 4-D operand, or of a 3-D [batch, seq, heads * size] one.
Expected<std::vector<int64_t>> heads_view(const InferContext& ctx, int i, const char* role,
                                          int64_t heads) {
  std::vector<int64_t> d = static_dims(ctx.input_type(i).shape);
  if (d.size() == 4) return d;
  if (d[2] % heads != 0)
    return ctx.error("the hidden size {} of {} is not a multiple of its {} heads", d[2], role,
                     heads);
  return std::vector<int64_t>{d[0], heads, d[1], d[2] / heads};
}

Status infer_attention(InferContext& ctx) {
  static const char* kRoles[] = {
      "Q", "K", "V", "attn_mask", "past_key", "past_value", "nonpad_kv_seqlen"};
  for (int i = 0; i < ctx.num_inputs(); ++i)
    if (ctx.has_input(i)) AOTC_RETURN_IF_ERROR(require_static(ctx, i, kRoles[i]));
  for (int i = 0; i < 3; ++i) {
    if (!ctx.has_input(i)) return ctx.error("input {} is required", kRoles[i]);
    AOTC_RETURN_IF_ERROR(require_float(ctx, i, kRoles[i]));
  }
  const TensorType &q = ctx.input_type(0), &k = ctx.input_type(1), &v = ctx.input_type(2);
  if (k.dtype != q.dtype)
    return ctx.error("K must have Q's dtype {}, got {}", dtype_name(q.dtype), k.to_string());
  int rank = q.rank();
  if ((rank != 3 && rank != 4) || k.rank() != rank || v.rank() != rank)
    return ctx.error("Q, K and V must all be 3-D or all 4-D, got {}, {} and {}", q.to_string(),
                     k.to_string(), v.to_string());
  int64_t q_heads = ctx.attrs().get_int("q_num_heads", 0),
          kv_heads = ctx.attrs().get_int("kv_num_heads", 0);
  if (rank == 3 && (q_heads < 1 || kv_heads < 1))
    return ctx.error("3-D inputs need q_num_heads and kv_num_heads (>= 1), got {} and {}", q_heads,
                     kv_heads);
  if (rank == 4) {
    if ((q_heads != 0 && q_heads != q.shape[1].value) ||
        (kv_heads != 0 && kv_heads != k.shape[1].value))
      return ctx.error("q_num_heads {} / kv_num_heads {} differ from the heads of Q {} / K {}",
                       q_heads, kv_heads, q.to_string(), k.to_string());
    q_heads = q.shape[1].value;
    kv_heads = k.shape[1].value;
  }
  AOTC_ASSIGN_OR_RETURN(std::vector<int64_t> qd, heads_view(ctx, 0, "Q", q_heads));
  AOTC_ASSIGN_OR_RETURN(std::vector<int64_t> kd, heads_view(ctx, 1, "K", kv_heads));
  AOTC_ASSIGN_OR_RETURN(std::vector<int64_t> vd, heads_view(ctx, 2, "V", kv_heads));
  int64_t batch = qd[0], q_seq = qd[2], head_size = qd[3], kv_seq = kd[2], v_head_size = vd[3];
  if (kd[0] != batch || vd[0] != batch)
    return ctx.error("Q, K and V must have the same batch size");
  if (kd[3] != head_size)
    return ctx.error("K's head size {} differs from Q's {}", kd[3], head_size);
  if (vd[1] != kv_heads || vd[2] != kv_seq)
    return ctx.error("V {} must have K's heads and sequence length ({} and {})", v.to_string(),
                     kv_heads, kv_seq);
  if (head_size == 0 || v_head_size == 0)
    return ctx.unsupported_error("empty heads (Q {}, V {}) are not supported", q.to_string(),
                                 v.to_string());
  if (q_heads % kv_heads != 0)
    return ctx.error(
        "q_num_heads {} is not a multiple of kv_num_heads {} (grouped-query attention)", q_heads,
        kv_heads);

  int64_t past = 0;
  if (ctx.has_input(4) != ctx.has_input(5))
    return ctx.error("past_key and past_value must be given together");
  if (ctx.has_input(4)) {
    const TensorType &pk = ctx.input_type(4), &pv = ctx.input_type(5);
    if (pk.rank() != 4 || pv.rank() != 4) return ctx.error("past_key and past_value must be 4-D");
    past = pk.shape[2].value;
    if (static_dims(pk.shape) != std::vector<int64_t>{batch, kv_heads, past, head_size} ||
        static_dims(pv.shape) != std::vector<int64_t>{batch, kv_heads, past, v_head_size})
      return ctx.error("past_key {} / past_value {} must be [{}x{}xPx{}] / [{}x{}xPx{}]",
                       pk.to_string(), pv.to_string(), batch, kv_heads, head_size, batch, kv_heads,
                       v_head_size);
    if (pk.dtype != k.dtype || pv.dtype != v.dtype)
      return ctx.error("past_key / past_value must have K's / V's dtype");
  }
  int64_t total = past + kv_seq;
  if (ctx.has_input(3)) {
    const TensorType& m = ctx.input_type(3);
    if (m.dtype != DType::kBool && !is_float(m.dtype))
      return ctx.error("attn_mask must be bool or float, got {}", m.to_string());
    std::vector<int64_t> md = static_dims(m.shape), want = {batch, q_heads, q_seq, total};
    bool fits = md.size() >= 1 && md.size() <= 4 && md.back() <= total;
    for (size_t i = 0; fits && i + 1 < md.size(); ++i) {
      int64_t w = want[4 - md.size() + i];
      fits = md[i] == 1 || md[i] == w;
    }
    if (!fits)
      return ctx.error(
          "attn_mask {} does not broadcast to [{}x{}x{}x{}] (a shorter last axis is padded)",
          m.to_string(), batch, q_heads, q_seq, total);
  }
  if (ctx.has_input(6)) {
    const TensorType& n = ctx.input_type(6);
    if (n.dtype != DType::kInt64 || static_dims(n.shape) != std::vector<int64_t>{batch})
      return ctx.error("nonpad_kv_seqlen must be i64[{}], got {}", batch, n.to_string());
  }
  int64_t mode = ctx.attrs().get_int("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3) return ctx.error("qk_matmul_output_mode must be 0..3, got {}", mode);
  if (ctx.attrs().get_float("softcap", 0.0) < 0) return ctx.error("softcap must be >= 0");
  AOTC_RETURN_IF_ERROR(float_dtype_attr(ctx, "softmax_precision").status());

  Shape y = rank == 4 ? make_shape({batch, q_heads, q_seq, v_head_size})
                      : make_shape({batch, q_seq, q_heads * v_head_size});
  ctx.set_output_type(0, TensorType{q.dtype, y});
  if (ctx.node().num_outputs() > 1)
    ctx.set_output_type(1, TensorType{k.dtype, make_shape({batch, kv_heads, total, head_size})});
  if (ctx.node().num_outputs() > 2)
    ctx.set_output_type(2, TensorType{v.dtype, make_shape({batch, kv_heads, total, v_head_size})});
  if (ctx.node().num_outputs() > 3)
    ctx.set_output_type(3, TensorType{q.dtype, make_shape({batch, q_heads, q_seq, total})});
  return Status::ok();
}

/// The ONNX reference, row by row in double: scores Q.K^T * scale, softcap, the bias of the
/// mask (attn_mask, its -inf padding, is_causal, nonpad_kv_seqlen), softmax, then the weighted
/// sum of V. A row whose keys are all masked is 0/0 = NaN, as in the ONNX reference.
Expected<std::vector<TensorData>> reference_attention(const Node& node,
                                                      const std::vector<const TensorData*>& in) {
  auto input = [&](int i) { return static_cast<int>(in.size()) > i ? in[i] : nullptr; };
  const TensorData &q = *in[0], &k = *in[1], &v = *in[2];
  const TensorData *mask = input(3), *past_key = input(4), *past_value = input(5),
                   *nonpad = input(6);
  AttentionLayout l = attention_layout(node);
  const double kNegInf = -std::numeric_limits<double>::infinity();
  RowStrides past_k = l.cache_strides(l.past_seq, l.head_size),
             past_v = l.cache_strides(l.past_seq, l.v_head_size);
  // The key and value rows of key position j: the past cache first, then the new K and V.
  auto key = [&](int64_t b, int64_t h, int64_t j, int64_t d) {
    return j < l.past_seq ? past_key->get_double(past_k.at(b, h, j) + d)
                          : k.get_double(l.k.at(b, h, j - l.past_seq) + d);
  };
  auto value = [&](int64_t b, int64_t h, int64_t j, int64_t d) {
    return j < l.past_seq ? past_value->get_double(past_v.at(b, h, j) + d)
                          : v.get_double(l.v.at(b, h, j - l.past_seq) + d);
  };

  std::vector<TensorData> out;
  for (int i = 0; i < node.num_outputs(); ++i)
    out.emplace_back(node.output(i)->dtype(), static_dims(node.output(i)->shape()));
  for (int i = 1; i <= 2 && i < node.num_outputs(); ++i) {  // present_key / present_value
    int64_t size = i == 1 ? l.head_size : l.v_head_size;
    RowStrides present = l.cache_strides(l.total_seq, size);
    for (int64_t b = 0; b < l.batch; ++b)
      for (int64_t h = 0; h < l.kv_heads; ++h)
        for (int64_t j = 0; j < l.total_seq; ++j)
          for (int64_t d = 0; d < size; ++d)
            out[i].set_double(present.at(b, h, j) + d,
                              i == 1 ? key(b, h, j, d) : value(b, h, j, d));
  }

  std::vector<double> scores(l.total_seq);
  for (int64_t b = 0; b < l.batch; ++b)
    for (int64_t h = 0; h < l.q_heads; ++h)
      for (int64_t s = 0; s < l.q_seq; ++s) {
        int64_t kvh = l.kv_head(h), qk_row = ((b * l.q_heads + h) * l.q_seq + s) * l.total_seq;
        for (int64_t j = 0; j < l.total_seq; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < l.head_size; ++d)
            dot += q.get_double(l.q.at(b, h, s) + d) * key(b, kvh, j, d);
          double score = dot * l.scale;
          if (l.qk_output_mode == 0 && out.size() > 3) out[3].set_double(qk_row + j, score);
          if (l.softcap > 0) score = l.softcap * std::tanh(score / l.softcap);
          if (l.qk_output_mode == 1 && out.size() > 3) out[3].set_double(qk_row + j, score);
          if (l.has_mask) {
            if (j >= l.mask_len) {
              score += kNegInf;
            } else {
              int64_t at = l.mask.at(b, h, s) + j;
              score += l.mask_is_bool ? (mask->get_double(at) != 0 ? 0.0 : kNegInf)
                                      : mask->get_double(at);
            }
          }
          if (l.causal && j > s + l.past_seq) score += kNegInf;
          if (nonpad && j >= nonpad->get_int64(b)) score += kNegInf;
          if (l.qk_output_mode == 2 && out.size() > 3) out[3].set_double(qk_row + j, score);
          scores[j] = score;
        }
        double mx = kNegInf, sum = 0;
        for (double x : scores) mx = std::max(mx, x);
        for (double& x : scores) sum += (x = std::exp(x - mx));
        for (double& x : scores) x /= sum;
        if (l.qk_output_mode == 3 && out.size() > 3)
          for (int64_t j = 0; j < l.total_seq; ++j) out[3].set_double(qk_row + j, scores[j]);
        for (int64_t d = 0; d < l.v_head_size; ++d) {
          double acc = 0;
          for (int64_t j = 0; j < l.total_seq; ++j) acc += scores[j] * value(b, kvh, j, d);
          out[0].set_double(l.y.at(b, h, s) + d, acc);
        }
      }
  return out;
}

}  // namespace

RotaryLayout rotary_layout(const Node& node) {
  std::vector<int64_t> dims = static_dims(node.input(0)->shape());
  RotaryLayout l;
  l.batch = dims[0];
  if (dims.size() == 4) {  // [batch, heads, seq, head]
    l.heads = dims[1];
    l.seq = dims[2];
    l.head_size = dims[3];
    l.batch_stride = l.heads * l.seq * l.head_size;
    l.head_stride = l.seq * l.head_size;
    l.seq_stride = l.head_size;
  } else {  // [batch, seq, heads * head]
    l.seq = dims[1];
    l.heads = node.attrs().get_int("num_heads", 1);
    l.head_size = dims[2] / l.heads;
    l.batch_stride = l.seq * dims[2];
    l.seq_stride = dims[2];
    l.head_stride = l.head_size;
  }
  l.rotary_dim = node.attrs().get_int("rotary_embedding_dim", 0);
  if (l.rotary_dim == 0) l.rotary_dim = l.head_size;
  l.interleaved = node.attrs().get_int("interleaved", 0) != 0;
  l.has_position_ids = node.num_inputs() > 3 && node.input(3) != nullptr;
  if (l.has_position_ids) l.max_position = static_dims(node.input(1)->shape())[0];
  return l;
}

AttentionLayout attention_layout(const Node& node) {
  const Attributes& attrs = node.attrs();
  std::vector<int64_t> qd = static_dims(node.input(0)->shape()),
                       kd = static_dims(node.input(1)->shape()),
                       vd = static_dims(node.input(2)->shape());
  AttentionLayout l;
  l.batch = qd[0];
  if (qd.size() == 4) {  // [batch, heads, seq, size]
    l.q_heads = qd[1];
    l.kv_heads = kd[1];
    l.q_seq = qd[2];
    l.kv_seq = kd[2];
    l.head_size = qd[3];
    l.v_head_size = vd[3];
  } else {  // [batch, seq, heads * size]
    l.q_heads = attrs.get_int("q_num_heads", 1);
    l.kv_heads = attrs.get_int("kv_num_heads", 1);
    l.q_seq = qd[1];
    l.kv_seq = kd[1];
    l.head_size = qd[2] / l.q_heads;
    l.v_head_size = vd[2] / l.kv_heads;
  }
  auto strides = [&](int64_t heads, int64_t seq, int64_t size) {
    return qd.size() == 4 ? RowStrides{heads * seq * size, seq * size, size}
                          : RowStrides{seq * heads * size, size, heads * size};
  };
  l.q = strides(l.q_heads, l.q_seq, l.head_size);
  l.k = strides(l.kv_heads, l.kv_seq, l.head_size);
  l.v = strides(l.kv_heads, l.kv_seq, l.v_head_size);
  l.y = strides(l.q_heads, l.q_seq, l.v_head_size);
  auto input = [&](int i) { return node.num_inputs() > i ? node.input(i) : nullptr; };
  l.has_past = input(4) != nullptr;
  l.past_seq = l.has_past ? static_dims(input(4)->shape())[2] : 0;
  l.total_seq = l.past_seq + l.kv_seq;
  l.has_nonpad = input(6) != nullptr;
  l.scale = attrs.has("scale") ? attrs.get_float("scale", 1.0)
                               : 1.0 / std::sqrt(static_cast<double>(l.head_size));
  l.softcap = attrs.get_float("softcap", 0.0);
  l.causal = attrs.get_int("is_causal", 0) != 0;
  l.qk_output_mode = static_cast<int>(attrs.get_int("qk_matmul_output_mode", 0));
  if (const Value* mask = input(3)) {
    l.has_mask = true;
    l.mask_is_bool = mask->dtype() == DType::kBool;
    // Right-align the mask's dims with [batch, q heads, q seq, keys]; broadcast axes stride 0.
    std::vector<int64_t> md = static_dims(mask->shape()), full(4 - md.size(), 1);
    full.insert(full.end(), md.begin(), md.end());
    std::vector<int64_t> st = row_major_strides(full);
    for (int i = 0; i < 3; ++i)
      if (full[i] == 1) st[i] = 0;
    l.mask = {st[0], st[1], st[2]};
    l.mask_len = full[3];
  }
  return l;
}

void register_attention_ops(OpRegistry& r) {
  {
    OpDef def;
    def.name = "Attention";
    def.min_inputs = 3;
    def.max_inputs = 7;
    def.max_outputs = 4;
    def.attrs = {{"is_causal", AttrKind::kInt},
                 {"kv_num_heads", AttrKind::kInt},
                 {"q_num_heads", AttrKind::kInt},
                 {"qk_matmul_output_mode", AttrKind::kInt},
                 {"scale", AttrKind::kFloat},
                 {"softcap", AttrKind::kFloat},
                 {"softmax_precision", AttrKind::kString}};
    def.infer = infer_attention;
    def.reference = reference_attention;
    def.summary =
        "Scaled dot-product attention (3-D or 4-D, grouped-query, mask, causal, softcap, KV "
        "cache).";
    r.add(std::move(def));
  }
  {
    OpDef def;
    def.name = "RotaryEmbedding";
    def.min_inputs = 3;
    def.max_inputs = 4;
    def.attrs = {{"interleaved", AttrKind::kInt},
                 {"rotary_embedding_dim", AttrKind::kInt},
                 {"num_heads", AttrKind::kInt}};
    def.infer = infer_rotary;
    def.reference = reference_rotary;
    def.summary =
        "Rotary position embedding of each head (halves or interleaved pairs), 3-D or 4-D.";
    r.add(std::move(def));
  }
}

}  // namespace aotc
