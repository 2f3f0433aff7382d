// Op family 'stateful': ops of recurrent decoders that carry a state from one call to the next
// as an extra input and output.
//   - CausalConvWithState (ONNX CausalConvWithState-27): a depthwise causal 1-D convolution of
//     [B, C, L] with weight [C, 1, K] over the past K - 1 steps (past_state, zeros when absent)
//     followed by the input, optional bias and SiLU (silu or its alias swish); present_state
//     is the last K - 1 steps of that padded sequence.
//   - LinearAttention (ONNX LinearAttention-27): the recurrent form of linear attention with the
//     linear, gated (decay: S *= exp(g)), delta (v := beta (v - S^T k)) and gated_delta update
//     rules, grouped query heads, and the [B, Hkv, dk, dv] state; chunk_size is a tuning hint
//     with no effect on the result.
// References compute in double; the ONNX reference computes in float32.
#include <algorithm>
#include <cmath>

#include "graph/ops/all_ops.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/stateful_ops.h"

namespace aotc {
namespace {

bool float_type(DType t) { return is_float(t) && !is_storage_only(t); }

// --- CausalConvWithState ------------------------------------------------------------------------

Status infer_causal_conv(InferContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  const TensorType& w = ctx.input_type(1);
  if (x.rank() != 3 || !is_static(x.shape) || !float_type(x.dtype))
    return ctx.error("input must be a static float [B, C, L] tensor, got {}", x.to_string());
  const std::vector<int64_t> xd = static_dims(x.shape);
  if (w.rank() != 3 || !is_static(w.shape) || w.dtype != x.dtype)
    return ctx.error("weight must be a static [C, 1, K] tensor of the input's dtype, got {}", w.to_string());
  const std::vector<int64_t> wd = static_dims(w.shape);
  if (wd[0] != xd[1] || wd[1] != 1 || wd[2] < 1)
    return ctx.error("weight {} must be [{}, 1, K] with K >= 1", w.to_string(), xd[1]);
  if (ctx.has_input(2)) {
    const TensorType& b = ctx.input_type(2);
    if (b.rank() != 1 || b.shape[0] != Dim(xd[1]) || b.dtype != x.dtype)
      return ctx.error("bias must be [{}], got {}", xd[1], b.to_string());
  }
  const Shape state = make_shape({xd[0], xd[1], wd[2] - 1});
  if (ctx.has_input(3)) {
    const TensorType& p = ctx.input_type(3);
    if (p.shape != state || p.dtype != x.dtype)
      return ctx.error("past_state must be {}, got {}", shape_to_string(state), p.to_string());
  }
  const std::string act = ctx.attrs().get_string("activation", "none");
  if (act != "none" && act != "silu" && act != "swish")
    return ctx.error("activation '{}' is not none, silu or swish", act);
  ctx.set_output_type(0, x);
  if (ctx.node().num_outputs() > 1) ctx.set_output_type(1, TensorType{x.dtype, state});
  return Status::ok();
}

Expected<std::vector<TensorData>> reference_causal_conv(const Node& node,
                                                        const std::vector<const TensorData*>& in) {
  const TensorData& x = *in[0];
  const TensorData& w = *in[1];
  const TensorData* bias = in.size() > 2 ? in[2] : nullptr;
  const TensorData* past = in.size() > 3 ? in[3] : nullptr;
  const int64_t batch = x.dims()[0], channels = x.dims()[1], len = x.dims()[2], k = w.dims()[2];
  const bool silu = node.attrs().get_string("activation", "none") != "none";
  TensorData y(x.dtype(), x.dims());
  TensorData state(x.dtype(), {batch, channels, k - 1});
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t c = 0; c < channels; ++c) {
      // Position p of the padded sequence: past steps first, then the input.
      auto padded = [&](int64_t p) {
        if (p < k - 1) return past ? past->get_double((b * channels + c) * (k - 1) + p) : 0.0;
        return x.get_double((b * channels + c) * len + p - (k - 1));
      };
      for (int64_t t = 0; t < len; ++t) {
        double acc = bias ? bias->get_double(c) : 0.0;
        for (int64_t j = 0; j < k; ++j) acc += w.get_double(c * k + j) * padded(t + j);
        if (silu) acc = acc / (1.0 + std::exp(-acc));
        y.set_double((b * channels + c) * len + t, acc);
      }
      for (int64_t s = 0; s < k - 1; ++s)
        state.set_double((b * channels + c) * (k - 1) + s, padded(len + s));
    }
  std::vector<TensorData> out;
  out.push_back(std::move(y));
  out.push_back(std::move(state));
  out.resize(node.num_outputs());
  return out;
}

// --- LinearAttention ----------------------------------------------------------------------------

Expected<LinearAttentionParams> linear_attention_params(InferContext& ctx) {
  LinearAttentionParams p;
  const std::string rule = ctx.attrs().get_string("update_rule", "gated_delta");
  if (rule != "linear" && rule != "gated" && rule != "delta" && rule != "gated_delta")
    return ctx.error("update_rule '{}' is not linear, gated, delta or gated_delta", rule);
  p.gating = rule == "gated" || rule == "gated_delta";
  p.delta = rule == "delta" || rule == "gated_delta";
  p.q_heads = ctx.attrs().get_int("q_num_heads", 0);
  p.kv_heads = ctx.attrs().get_int("kv_num_heads", 0);
  if (p.q_heads <= 0 || p.kv_heads <= 0 || p.q_heads % p.kv_heads != 0)
    return ctx.error("q_num_heads {} must be a positive multiple of kv_num_heads {}", p.q_heads,
                     p.kv_heads);
  for (int i = 0; i < 3; ++i) {
    const TensorType& t = ctx.input_type(i);
    if (t.rank() != 3 || !is_static(t.shape) || !float_type(t.dtype))
      return ctx.error("query, key and value must be static float [B, T, H * D] tensors, got {}",
                       t.to_string());
  }
  const std::vector<int64_t> q = static_dims(ctx.input_type(0).shape);
  const std::vector<int64_t> kk = static_dims(ctx.input_type(1).shape);
  const std::vector<int64_t> v = static_dims(ctx.input_type(2).shape);
  p.batch = q[0];
  p.steps = q[1];
  if (q[2] % p.q_heads != 0 || v[2] % p.kv_heads != 0)
    return ctx.error("the hidden sizes {} and {} are not multiples of the head counts", q[2], v[2]);
  p.dk = q[2] / p.q_heads;
  p.dv = v[2] / p.kv_heads;
  if (kk != std::vector<int64_t>{p.batch, p.steps, p.kv_heads * p.dk} || v[0] != p.batch || v[1] != p.steps)
    return ctx.error("key {} and value {} do not match query {}", ctx.input_type(1).to_string(),
                     ctx.input_type(2).to_string(), ctx.input_type(0).to_string());
  p.has_past = ctx.has_input(3);
  if (p.has_past) {
    const TensorType& s = ctx.input_type(3);
    if (s.shape != make_shape({p.batch, p.kv_heads, p.dk, p.dv}) || !float_type(s.dtype))
      return ctx.error("past_state must be [{}, {}, {}, {}], got {}", p.batch, p.kv_heads, p.dk,
                       p.dv, s.to_string());
  }
  if (p.gating != ctx.has_input(4))
    return ctx.error("update_rule '{}' {} the decay input", rule, p.gating ? "requires" : "forbids");
  if (p.delta != ctx.has_input(5))
    return ctx.error("update_rule '{}' {} the beta input", rule, p.delta ? "requires" : "forbids");
  if (p.gating) {
    const TensorType& d = ctx.input_type(4);
    if (d.rank() != 3 || !is_static(d.shape) || !float_type(d.dtype))
      return ctx.error("decay must be a static float rank-3 tensor, got {}", d.to_string());
    const int64_t last = d.shape[2].value;
    if (d.shape[0].value != p.batch || d.shape[1].value != p.steps ||
        (last != p.kv_heads && last != p.kv_heads * p.dk))
      return ctx.error("decay {} must be [{}, {}, {} or {}]", d.to_string(), p.batch, p.steps,
                       p.kv_heads, p.kv_heads * p.dk);
    p.decay_per_key = last == p.kv_heads * p.dk && last != p.kv_heads;
  }
  if (p.delta) {
    const TensorType& b = ctx.input_type(5);
    if (b.rank() != 3 || !is_static(b.shape) || !float_type(b.dtype))
      return ctx.error("beta must be a static float rank-3 tensor, got {}", b.to_string());
    const int64_t last = b.shape[2].value;
    if (b.shape[0].value != p.batch || b.shape[1].value != p.steps || (last != p.kv_heads && last != 1))
      return ctx.error("beta {} must be [{}, {}, {} or 1]", b.to_string(), p.batch, p.steps, p.kv_heads);
    p.beta_heads = last;
  }
  const double scale = ctx.attrs().get_float("scale", 0.0);
  p.scale = scale == 0.0 ? 1.0 / std::sqrt(static_cast<double>(p.dk)) : scale;
  return p;
}

Status infer_linear_attention(InferContext& ctx) {
  AOTC_ASSIGN_OR_RETURN(LinearAttentionParams p, linear_attention_params(ctx));
  const DType t = ctx.input_type(0).dtype;
  ctx.set_output_type(0, TensorType{t, make_shape({p.batch, p.steps, p.q_heads * p.dv})});
  if (ctx.node().num_outputs() > 1)
    ctx.set_output_type(1, TensorType{p.has_past ? ctx.input_type(3).dtype : t,
                                      make_shape({p.batch, p.kv_heads, p.dk, p.dv})});
  return Status::ok();
}

Expected<std::vector<TensorData>> reference_linear_attention(const Node& node,
                                                             const std::vector<const TensorData*>& in) {
  AOTC_ASSIGN_OR_RETURN(LinearAttentionParams p, resolve_linear_attention(node));
  const TensorData &q = *in[0], &k = *in[1], &v = *in[2];
  const int64_t group = p.q_heads / p.kv_heads;
  TensorData y(node.output(0)->dtype(), {p.batch, p.steps, p.q_heads * p.dv});
  TensorData present(p.has_past ? in[3]->dtype() : q.dtype(), {p.batch, p.kv_heads, p.dk, p.dv});
  std::vector<double> s(p.dk * p.dv), vt(p.dv);
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.kv_heads; ++h) {
      const int64_t base = (b * p.kv_heads + h) * p.dk * p.dv;
      for (int64_t i = 0; i < p.dk * p.dv; ++i) s[i] = p.has_past ? in[3]->get_double(base + i) : 0.0;
      for (int64_t t = 0; t < p.steps; ++t) {
        const int64_t row = b * p.steps + t;
        auto key = [&](int64_t d) { return k.get_double((row * p.kv_heads + h) * p.dk + d); };
        if (p.gating)
          for (int64_t d = 0; d < p.dk; ++d) {
            const double g = p.decay_per_key ? in[4]->get_double((row * p.kv_heads + h) * p.dk + d)
                                             : in[4]->get_double(row * p.kv_heads + h);
            const double e = std::exp(g);
            for (int64_t m = 0; m < p.dv; ++m) s[d * p.dv + m] *= e;
          }
        for (int64_t m = 0; m < p.dv; ++m) vt[m] = v.get_double((row * p.kv_heads + h) * p.dv + m);
        if (p.delta) {
          const double beta = in[5]->get_double(row * p.beta_heads + (p.beta_heads == 1 ? 0 : h));
          for (int64_t m = 0; m < p.dv; ++m) {
            double r = 0;
            for (int64_t d = 0; d < p.dk; ++d) r += s[d * p.dv + m] * key(d);
            vt[m] = beta * (vt[m] - r);
          }
        }
        for (int64_t d = 0; d < p.dk; ++d)
          for (int64_t m = 0; m < p.dv; ++m) s[d * p.dv + m] += key(d) * vt[m];
        for (int64_t g = 0; g < group; ++g) {
          const int64_t hq = h * group + g;
          for (int64_t m = 0; m < p.dv; ++m) {
            double acc = 0;
            for (int64_t d = 0; d < p.dk; ++d)
              acc += q.get_double((row * p.q_heads + hq) * p.dk + d) * s[d * p.dv + m];
            y.set_double((row * p.q_heads + hq) * p.dv + m, p.scale * acc);
          }
        }
      }
      for (int64_t i = 0; i < p.dk * p.dv; ++i) present.set_double(base + i, s[i]);
    }
  std::vector<TensorData> out;
  out.push_back(std::move(y));
  out.push_back(std::move(present));
  out.resize(node.num_outputs());
  return out;
}

}  // namespace

Expected<LinearAttentionParams> resolve_linear_attention(const Node& node) {
  InferContext ctx(node);
  return linear_attention_params(ctx);
}

void register_stateful_ops(OpRegistry& r) {
  r.add(OpDef{.name = "CausalConvWithState",
              .min_inputs = 2,
              .max_inputs = 4,
              .min_outputs = 1,
              .max_outputs = 2,
              .attrs = {{"activation", AttrKind::kString}},
              .infer = infer_causal_conv,
              .reference = reference_causal_conv,
              .summary = "Depthwise causal 1-D convolution over a carried state of the last K - 1 "
                         "steps, optional bias and SiLU; returns the new state."});
  r.add(OpDef{.name = "LinearAttention",
              .min_inputs = 3,
              .max_inputs = 6,
              .min_outputs = 1,
              .max_outputs = 2,
              .attrs = {{"chunk_size", AttrKind::kInt},
                        {"kv_num_heads", AttrKind::kInt, true},
                        {"q_num_heads", AttrKind::kInt, true},
                        {"scale", AttrKind::kFloat},
                        {"update_rule", AttrKind::kString}},
              .infer = infer_linear_attention,
              .reference = reference_linear_attention,
              .summary = "Recurrent linear attention (linear, gated, delta, gated_delta rules) "
                         "with a carried [B, Hkv, dk, dv] state."});
}

}  // namespace aotc
