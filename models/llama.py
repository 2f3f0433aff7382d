#!/usr/bin/env python3
"""A Llama-style decoder stack with a KV cache, in the op vocabulary that torch.onnx.export and
HF optimum write for transformers' LlamaForCausalLM (one decoding step with past keys/values).

  inputs   input_ids [batch, seq], attention_mask [batch, past + seq], position_ids [batch, seq]
           (int64); past_key_values.<i>.key / .value [batch, kv_heads, past, head_dim]
  outputs  logits [batch, seq, vocab]; present.<i>.key / .value [batch, kv_heads, past + seq, head_dim]

RMSNorm decomposed (Cast, Pow 2, ReduceMean, Add eps, Sqrt, then Reciprocal as torch writes
rsqrt, or Div(1, .) as older exports do; Mul, Mul weight). Rotary embeddings decomposed: cos/sin
tables gathered by position_ids, rotate_half as Slice/Slice/Neg/Concat, then Mul/Mul/Add.
Grouped-query attention: present = Concat(past, new) along the sequence axis, KV heads repeated
with Unsqueeze/Expand/Reshape (transformers' repeat_kv) or with Tile; scores scaled by
Mul(1/sqrt(head_dim)). SiLU MLP: down(gate * Sigmoid(gate) * up).

The causal mask comes in the two forms exporters write:
  trilu  ConstantOfShape(min) -> Trilu(upper, k = past + 1), padding folded in with
         Equal(attention_mask, 0) -> Where (transformers >= 4.36, sdpa path);
  range  Range/Add/Reshape/Less -> Where, Concat with zeros for the past, Expand, plus the
         expanded padding mask via Cast/Sub/Cast(bool)/Where and an Add (transformers 4.30).
The builder can also write RMSNorm as the opset-23 RMSNormalization op (--rmsnorm op).

Weights are seeded; dense weights have std 1/sqrt(fan_in), embeddings and values unit scale;
query and key projections (and the cached keys) have gain 1.5, so the scores have a standard
deviation near 2 and the softmax is peaked but not saturated.
"""
import dataclasses
import math

import numpy as np
from onnx import TensorProto

from builder import FLOAT_MIN, GraphBuilder, fill_value, linear_weight, run_cli

INT64_MAX = np.iinfo(np.int64).max  # the Slice end torch writes for x[..., d:]
QK_GAIN = 1.5  # scores with a standard deviation near 2: peaked attention, not saturated


@dataclasses.dataclass(frozen=True)
class LlamaConfig:
    vocab: int
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    intermediate: int
    max_positions: int
    batch: int
    seq: int
    past: int
    mask: str  # 'trilu' or 'range'
    repeat_kv: str  # 'expand' or 'tile'
    rmsnorm: str  # 'reciprocal', 'div' (decomposed) or 'op' (RMSNormalization, opset 23)
    rope_theta: float = 10000.0
    eps: float = 1e-5
    weight_seed: int = 2
    # 0: a prefill graph without a cache (no past_key_values inputs; present.* are the new keys
    # and values), as exporters write the first step.
    cache: int = 1
    # When set, the sequence axis of the inputs and outputs is this symbolic dim (dim_param):
    # the model runs at any length up to max_positions (aotc compile --buckets).
    seq_symbol: str = ""

    @property
    def head_dim(self):
        return self.hidden // self.heads


CONFIGS = {
    "test": LlamaConfig(vocab=256, hidden=128, layers=2, heads=8, kv_heads=2, intermediate=352,
                        max_positions=64, batch=2, seq=8, past=24, mask="trilu", repeat_kv="expand",
                        rmsnorm="reciprocal"),
    # TinyLlama-1.1B widths (hidden 2048, 32 query heads sharing 4 KV heads, SiLU MLP 5632,
    # vocabulary 32000), two layers, one decoding step after 127 cached tokens.
    "full": LlamaConfig(vocab=32000, hidden=2048, layers=2, heads=32, kv_heads=4, intermediate=5632,
                        max_positions=2048, batch=1, seq=1, past=127, mask="trilu",
                        repeat_kv="expand", rmsnorm="reciprocal"),
    # The test widths as a prefill step of up to 512 tokens with a dynamic sequence axis (the
    # bucketing tests).
    "prefill": LlamaConfig(vocab=256, hidden=128, layers=2, heads=8, kv_heads=2, intermediate=352,
                           max_positions=512, batch=2, seq=16, past=0, mask="trilu",
                           repeat_kv="expand", rmsnorm="reciprocal", cache=0, seq_symbol="seq"),
}

# The second test model: the same stack as older exports write it.
LEGACY = dict(mask="range", repeat_kv="tile", rmsnorm="div")


def rms_norm(b, x, cfg, name):
    with b.scope(name):
        weight = b.uniform((cfg.hidden,), 0.8, 1.2, "weight")
        if cfg.rmsnorm == "op":
            return b.op("RMSNormalization", x, weight, axis=-1, epsilon=cfg.eps)
        xf = b.op("Cast", x, to=TensorProto.FLOAT)
        var = b.op("ReduceMean", b.op("Pow", xf, b.f32(2.0)), b.i64([-1]), keepdims=1)
        std = b.op("Sqrt", b.op("Add", var, b.f32(cfg.eps)))
        inv = b.op("Reciprocal", std) if cfg.rmsnorm == "reciprocal" else b.op("Div", b.f32(1.0), std)
        return b.op("Mul", weight, b.op("Cast", b.op("Mul", xf, inv), to=TensorProto.FLOAT))


def rotary_tables(b, cfg):
    """cos/sin caches [max_positions, head_dim] (transformers' cos_cached/sin_cached buffers)."""
    d = cfg.head_dim
    inv_freq = 1.0 / (cfg.rope_theta ** (np.arange(0, d, 2, dtype=np.float64) / d))
    freqs = np.outer(np.arange(cfg.max_positions, dtype=np.float64), inv_freq)
    emb = np.concatenate([freqs, freqs], axis=-1)
    return (b.f32(np.cos(emb).astype(np.float32), "model.rotary_emb.cos_cached"),
            b.f32(np.sin(emb).astype(np.float32), "model.rotary_emb.sin_cached"))


def apply_rotary(b, x, cos, sin, cfg):
    half = cfg.head_dim // 2
    x1 = b.op("Slice", x, b.i64([0]), b.i64([half]), b.i64([3]), b.i64([1]))
    x2 = b.op("Slice", x, b.i64([half]), b.i64([INT64_MAX]), b.i64([3]), b.i64([1]))
    rotated = b.op("Concat", b.op("Neg", x2), x1, axis=-1)
    return b.op("Add", b.op("Mul", x, cos), b.op("Mul", rotated, sin))


def dim(b, x, axis):
    """A 1-element int64 tensor holding dimension `axis` of `x`, read with Shape/Gather."""
    return b.op("Unsqueeze", b.op("Gather", b.op("Shape", x), b.i64(axis), axis=0), b.i64([0]))


def past_length(b, past_key):
    """The cached length: read from the cache's shape, or 0 in a prefill graph without one."""
    return b.i64([0]) if past_key is None else dim(b, past_key, 2)


def causal_mask_trilu(b, input_ids, attention_mask, past_key, cfg):
    seq, past = dim(b, input_ids, 1), past_length(b, past_key)
    total = b.op("Add", seq, past)
    full = b.op("ConstantOfShape", b.op("Concat", seq, total, axis=0),
                value=fill_value(FLOAT_MIN))
    # Keys j > past + i are in the future of query i: keep min above diagonal past + 1.
    diagonal = b.op("Squeeze", b.op("Add", past, b.i64([1])), b.i64([0]))
    causal = b.op("Unsqueeze", b.op("Trilu", full, diagonal, upper=1), b.i64([0, 1]))
    padding = b.op("Equal", b.op("Unsqueeze", attention_mask, b.i64([1, 2])), b.i64(0))
    return b.op("Where", padding, b.f32(FLOAT_MIN), causal)


def causal_mask_range(b, input_ids, attention_mask, past_key, cfg):
    seq, past = dim(b, input_ids, 1), past_length(b, past_key)
    # _make_causal_mask: mask.masked_fill_(arange < (arange + 1).view(-1, 1), 0), zeros for the past.
    square = b.op("ConstantOfShape", b.op("Concat", seq, seq, axis=0), value=fill_value(FLOAT_MIN))
    cond = b.op("Range", b.i64(0), b.op("Squeeze", seq, b.i64([0])), b.i64(1))
    column = b.op("Reshape", b.op("Add", cond, b.i64(1)), b.op("Concat", seq, b.i64([1]), axis=0))
    below = b.op("Less", cond, column)
    square = b.op("Where", below, b.f32(0.0), square)
    zeros = b.op("ConstantOfShape", b.op("Concat", seq, past, axis=0), value=fill_value(0.0))
    causal = b.op("Concat", zeros, square, axis=-1)
    total = b.op("Add", seq, past)
    target = b.op("Concat", dim(b, input_ids, 0), b.i64([1]), seq, total, axis=0)
    causal = b.op("Expand", b.op("Unsqueeze", causal, b.i64([0, 1])), target)
    # _expand_mask: inverted = 1 - mask; inverted.masked_fill(inverted.bool(), min).
    expanded = b.op("Expand", b.op("Unsqueeze", attention_mask, b.i64([1, 2])), target)
    inverted = b.op("Sub", b.f32(1.0), b.op("Cast", expanded, to=TensorProto.FLOAT))
    padding = b.op("Where", b.op("Cast", inverted, to=TensorProto.BOOL), b.f32(FLOAT_MIN), inverted)
    return b.op("Add", padding, causal)


def repeat_kv(b, x, cfg):
    n_rep = cfg.heads // cfg.kv_heads
    if n_rep == 1:
        return x
    x = b.op("Unsqueeze", x, b.i64([2]))  # [B, KV, 1, T, D]
    if cfg.repeat_kv == "tile":
        x = b.op("Tile", x, b.i64([1, 1, n_rep, 1, 1]))
    else:
        shape = b.op("Shape", x)
        target = b.op("Concat", b.op("Slice", shape, b.i64([0]), b.i64([2])), b.i64([n_rep]),
                      b.op("Slice", shape, b.i64([3]), b.i64([5])), axis=0)
        x = b.op("Expand", x, target)
    return b.op("Reshape", x, b.i64([0, cfg.heads, -1, cfg.head_dim]))


def attention(b, x, mask, cos, sin, past_key, past_value, cfg):
    D = cfg.head_dim

    def project(heads, name, gain=1.0):
        with b.scope(name):
            t = b.op("MatMul", x, linear_weight(b, cfg.hidden, heads * D, "weight", gain=gain))
        return b.op("Transpose", b.op("Reshape", t, b.i64([0, 0, heads, D])), perm=[0, 2, 1, 3])

    q = apply_rotary(b, project(cfg.heads, "q_proj", QK_GAIN), cos, sin, cfg)
    k = apply_rotary(b, project(cfg.kv_heads, "k_proj", QK_GAIN), cos, sin, cfg)
    v = project(cfg.kv_heads, "v_proj")
    present_key = k if past_key is None else b.op("Concat", past_key, k, axis=2)
    present_value = v if past_value is None else b.op("Concat", past_value, v, axis=2)
    keys, values = repeat_kv(b, present_key, cfg), repeat_kv(b, present_value, cfg)
    scores = b.op("MatMul", q, b.op("Transpose", keys, perm=[0, 1, 3, 2]))
    scores = b.op("Add", b.op("Mul", scores, b.f32(1.0 / math.sqrt(D))), mask)
    probs = b.op("Softmax", scores, axis=-1)
    context = b.op("Transpose", b.op("MatMul", probs, values), perm=[0, 2, 1, 3])
    context = b.op("Reshape", context, b.i64([0, 0, cfg.heads * D]))
    with b.scope("o_proj"):
        out = b.op("MatMul", context, linear_weight(b, cfg.heads * D, cfg.hidden, "weight"))
    return out, present_key, present_value


def mlp(b, x, cfg):
    with b.scope("gate_proj"):
        gate = b.op("MatMul", x, linear_weight(b, cfg.hidden, cfg.intermediate, "weight"))
    with b.scope("up_proj"):
        up = b.op("MatMul", x, linear_weight(b, cfg.hidden, cfg.intermediate, "weight"))
    act = b.op("Mul", gate, b.op("Sigmoid", gate))  # SiLU as torch.onnx writes it
    with b.scope("down_proj"):
        return b.op("MatMul", b.op("Mul", act, up), linear_weight(b, cfg.intermediate, cfg.hidden, "weight"))


def build(cfg):
    checks = (("mask", ("trilu", "range")), ("repeat_kv", ("expand", "tile")),
              ("rmsnorm", ("reciprocal", "div", "op")))
    for field, allowed in checks:
        if getattr(cfg, field) not in allowed:
            raise SystemExit(f"llama: --{field.replace('_', '-')} must be one of {', '.join(allowed)}")
    if cfg.heads % cfg.kv_heads or cfg.hidden % cfg.heads or cfg.head_dim % 2:
        raise SystemExit("llama: heads must divide hidden, kv_heads divide heads, head_dim be even")
    if cfg.past + cfg.seq > cfg.max_positions:
        raise SystemExit("llama: past + seq exceeds max_positions")
    b = GraphBuilder("llama", seed=cfg.weight_seed, opset=23 if cfg.rmsnorm == "op" else 18)
    if not cfg.cache and cfg.past:
        raise SystemExit("llama: a graph without a cache (--cache 0) has no past")
    B, P, KV, D = cfg.batch, cfg.past, cfg.kv_heads, cfg.head_dim
    S = cfg.seq_symbol or cfg.seq
    T = S if P == 0 else (f"{P} + {S}" if cfg.seq_symbol else P + S)  # the keys: past and new
    input_ids = b.input("input_ids", TensorProto.INT64, [B, S])
    attention_mask = b.input("attention_mask", TensorProto.INT64, [B, T])
    position_ids = b.input("position_ids", TensorProto.INT64, [B, S])
    past = []
    for i in range(cfg.layers):
        if not cfg.cache:
            past.append((None, None))
            continue
        past.append((b.input(f"past_key_values.{i}.key", TensorProto.FLOAT, [B, KV, P, D]),
                     b.input(f"past_key_values.{i}.value", TensorProto.FLOAT, [B, KV, P, D])))

    presents = []
    with b.scope("model"):
        x = b.op("Gather", b.normal((cfg.vocab, cfg.hidden), 1.0, "embed_tokens.weight"), input_ids)
        make_mask = causal_mask_trilu if cfg.mask == "trilu" else causal_mask_range
        mask = make_mask(b, input_ids, attention_mask, past[0][0], cfg)
        cos_table, sin_table = rotary_tables(b, cfg)
        cos = b.op("Unsqueeze", b.op("Gather", cos_table, position_ids), b.i64([1]))  # [B, 1, S, D]
        sin = b.op("Unsqueeze", b.op("Gather", sin_table, position_ids), b.i64([1]))
        for i in range(cfg.layers):
            with b.scope(f"layers.{i}"):
                h = rms_norm(b, x, cfg, "input_layernorm")
                with b.scope("self_attn"):
                    attn, pk, pv = attention(b, h, mask, cos, sin, past[i][0], past[i][1], cfg)
                presents.append((pk, pv))
                x = b.op("Add", x, attn)
                h = rms_norm(b, x, cfg, "post_attention_layernorm")
                with b.scope("mlp"):
                    x = b.op("Add", x, mlp(b, h, cfg))
        x = rms_norm(b, x, cfg, "norm")
    with b.scope("lm_head"):
        logits = b.op("MatMul", x, linear_weight(b, cfg.hidden, cfg.vocab, "weight"))

    b.output(logits, "logits", TensorProto.FLOAT, [B, S, cfg.vocab])
    for i, (pk, pv) in enumerate(presents):
        b.output(pk, f"present.{i}.key", TensorProto.FLOAT, [B, KV, T, D])
        b.output(pv, f"present.{i}.value", TensorProto.FLOAT, [B, KV, T, D])
    return b.model(f"Llama-style decoder: {cfg}")


def sample_inputs(cfg, rng):
    """Random tokens and cache; row r > 0 is left-padded by 2r positions of the past, and its
    position ids count only the real tokens, as transformers computes them."""
    B, S, P = cfg.batch, cfg.seq, cfg.past
    attention_mask = np.ones((B, P + S), np.int64)
    for r in range(1, B):
        attention_mask[r, :min(P, 2 * r)] = 0
    positions = np.maximum(np.cumsum(attention_mask, axis=1) - 1, 0)[:, P:]
    inputs = {"input_ids": rng.integers(0, cfg.vocab, (B, S), dtype=np.int64),
              "attention_mask": attention_mask, "position_ids": positions.astype(np.int64)}
    for i in range(cfg.layers if cfg.cache else 0):
        for kind in ("key", "value"):
            std = QK_GAIN if kind == "key" else 1.0  # as k_proj would have produced them
            inputs[f"past_key_values.{i}.{kind}"] = rng.normal(
                0.0, std, (B, cfg.kv_heads, P, cfg.head_dim)).astype(np.float32)
    return inputs


if __name__ == "__main__":
    run_cli(__doc__, CONFIGS, build, sample_inputs, "llama")
