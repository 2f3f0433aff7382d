#!/usr/bin/env python3
"""A BERT-style encoder with a sequence-classification head, in the op vocabulary that
torch.onnx.export and HF optimum write for transformers' BertForSequenceClassification.

  inputs   input_ids, attention_mask, token_type_ids   int64 [batch, seq]
  outputs  last_hidden_state [batch, seq, hidden], pooler_output [batch, hidden],
           logits [batch, labels]

Embeddings: word, position and segment tables read with Gather; position ids are a Slice of a
constant [1, max_positions] buffer whose end comes from Shape(input_ids) (as exported).
Extended attention mask: Unsqueeze -> Cast -> Sub(1, m) -> Mul(float32 min), added to the scores.
Self-attention: MatMul + Add projections, Reshape/Transpose into heads, K transposed twice (as
torch writes `permute` then `transpose(-1, -2)`), Div by sqrt(head_dim), Softmax, MatMul.
LayerNormalization is written either as the fused opset-17 op or decomposed as
ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add (older exports); GELU either exactly,
0.5*x*(1+erf(x/sqrt(2))), or in its tanh approximation (or as the opset-20 Gelu op, --gelu op).
The pooler reads token 0 with Gather and applies Gemm + Tanh; the classifier is a Gemm.

Weights are seeded; dense weights have std gain/sqrt(fan_in). Query and key projections have
gain 1.5, so the scores have a standard deviation near 2: attention is peaked (largest
probability about 0.2 over 128 keys in every layer of the full size) but not saturated. The
projections back into the residual stream have gain 0.3, as trained networks' residual branches
are small against the stream; with unit gain, twelve post-LayerNorm layers of random attention
average the tokens into one vector (rank collapse) and the model would test little.
"""
import dataclasses
import math

import numpy as np
from onnx import TensorProto

from builder import FLOAT_MIN, GraphBuilder, linear_weight, run_cli


QK_GAIN = 1.5
RESIDUAL_GAIN = 0.3


@dataclasses.dataclass(frozen=True)
class BertConfig:
    vocab: int
    hidden: int
    layers: int
    heads: int
    intermediate: int
    max_positions: int
    type_vocab: int
    labels: int
    batch: int
    seq: int
    # 'fused', 'decomposed', or 'mixed' (even layers and the embeddings fused, odd decomposed).
    layernorm: str
    # 'erf', 'tanh', 'mixed' (even layers erf, odd layers tanh), or 'op': the opset-20 Gelu op,
    # exact in even layers and approximate='tanh' in odd ones.
    gelu: str
    eps: float = 1e-12
    weight_seed: int = 1
    # When set, the sequence axis of the inputs and of last_hidden_state is this symbolic dim
    # (dim_param) instead of `seq`: the model then runs at any length up to max_positions, as
    # exporters write it with dynamic axes (aotc compile --buckets compiles it at a few sizes).
    seq_symbol: str = ""


CONFIGS = {
    "test": BertConfig(vocab=512, hidden=128, layers=2, heads=4, intermediate=512, max_positions=64,
                       type_vocab=2, labels=3, batch=2, seq=32, layernorm="mixed", gelu="mixed"),
    # bert-base-uncased as torch.onnx.export (opset 17) writes it: fused LayerNormalization,
    # exact (erf) GELU.
    "full": BertConfig(vocab=30522, hidden=768, layers=12, heads=12, intermediate=3072,
                       max_positions=512, type_vocab=2, labels=2, batch=1, seq=128,
                       layernorm="fused", gelu="erf"),
    # The test widths with a dynamic sequence axis of up to 512 tokens (the bucketing tests).
    "dynamic": BertConfig(vocab=512, hidden=128, layers=2, heads=4, intermediate=512, max_positions=512,
                          type_vocab=2, labels=3, batch=2, seq=32, layernorm="mixed", gelu="mixed",
                          seq_symbol="seq"),
}


def opset(cfg):
    return 20 if cfg.gelu == "op" else 17


def reduce_mean_last(b, x):
    """ReduceMean over the last axis, keepdims; axes became an input in opset 18."""
    if b.opset >= 18:
        return b.op("ReduceMean", x, b.i64([-1]), keepdims=1)
    return b.op("ReduceMean", x, axes=[-1], keepdims=1)


def layer_norm(b, x, cfg, fused):
    h = cfg.hidden
    gamma = b.uniform((h,), 0.8, 1.2, "weight")
    beta = b.normal((h,), 0.05, "bias")
    if fused:
        return b.op("LayerNormalization", x, gamma, beta, axis=-1, epsilon=cfg.eps)
    # transformers' original BertLayerNorm, as exported before opset 17.
    mean = reduce_mean_last(b, x)
    centred = b.op("Sub", x, mean)
    var = reduce_mean_last(b, b.op("Pow", centred, b.f32(2.0)))
    std = b.op("Sqrt", b.op("Add", var, b.f32(cfg.eps)))
    normed = b.op("Div", centred, std)
    return b.op("Add", b.op("Mul", normed, gamma), beta)


def gelu(b, x, exact, fused):
    if fused:
        return b.op("Gelu", x, approximate="none" if exact else "tanh")
    if exact:
        # 0.5 * x * (1 + erf(x / sqrt(2)))
        erf = b.op("Erf", b.op("Div", x, b.f32(math.sqrt(2.0))))
        return b.op("Mul", b.op("Mul", x, b.op("Add", erf, b.f32(1.0))), b.f32(0.5))
    # 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
    cube = b.op("Pow", x, b.f32(3.0))
    inner = b.op("Mul", b.op("Add", x, b.op("Mul", cube, b.f32(0.044715))), b.f32(math.sqrt(2.0 / math.pi)))
    return b.op("Mul", b.op("Mul", b.op("Add", b.op("Tanh", inner), b.f32(1.0)), x), b.f32(0.5))


def dense(b, x, fan_in, fan_out, name, gain=1.0):
    """torch.nn.Linear on a 3-D input: MatMul with the [in, out] weight, then Add of the bias."""
    with b.scope(name):
        w = linear_weight(b, fan_in, fan_out, "weight", gain=gain)
        bias = b.normal((fan_out,), 0.02, "bias")
        return b.op("Add", b.op("MatMul", x, w), bias)


def self_attention(b, x, mask, cfg):
    hd = cfg.hidden // cfg.heads
    heads_shape = b.i64([0, 0, cfg.heads, hd])

    def split_heads(t):
        return b.op("Transpose", b.op("Reshape", t, heads_shape), perm=[0, 2, 1, 3])

    q = split_heads(dense(b, x, cfg.hidden, cfg.hidden, "query", QK_GAIN))
    k = split_heads(dense(b, x, cfg.hidden, cfg.hidden, "key", QK_GAIN))
    v = split_heads(dense(b, x, cfg.hidden, cfg.hidden, "value"))
    scores = b.op("MatMul", q, b.op("Transpose", k, perm=[0, 1, 3, 2]))
    scores = b.op("Add", b.op("Div", scores, b.f32(math.sqrt(hd))), mask)
    probs = b.op("Softmax", scores, axis=-1)
    context = b.op("Transpose", b.op("MatMul", probs, v), perm=[0, 2, 1, 3])
    return b.op("Reshape", context, b.i64([0, 0, cfg.hidden]))


def encoder_layer(b, x, mask, cfg, k):
    fused = cfg.layernorm == "fused" or (cfg.layernorm == "mixed" and k % 2 == 0)
    exact = cfg.gelu == "erf" or (cfg.gelu in ("mixed", "op") and k % 2 == 0)
    with b.scope("attention"):
        with b.scope("self"):
            context = self_attention(b, x, mask, cfg)
        with b.scope("output"):
            attn = b.op("Add", dense(b, context, cfg.hidden, cfg.hidden, "dense", RESIDUAL_GAIN), x)
            with b.scope("LayerNorm"):
                attn = layer_norm(b, attn, cfg, fused)
    with b.scope("intermediate"):
        inter = gelu(b, dense(b, attn, cfg.hidden, cfg.intermediate, "dense"), exact, cfg.gelu == "op")
    with b.scope("output"):
        out = b.op("Add", dense(b, inter, cfg.intermediate, cfg.hidden, "dense", RESIDUAL_GAIN), attn)
        with b.scope("LayerNorm"):
            return layer_norm(b, out, cfg, fused)


def build(cfg):
    checks = (("layernorm", ("fused", "decomposed", "mixed")), ("gelu", ("erf", "tanh", "mixed", "op")))
    for field, allowed in checks:
        if getattr(cfg, field) not in allowed:
            raise SystemExit(f"bert: --{field} must be one of {', '.join(allowed)}")
    b = GraphBuilder("bert", seed=cfg.weight_seed, opset=opset(cfg))
    B, S, H = cfg.batch, cfg.seq_symbol or cfg.seq, cfg.hidden
    input_ids = b.input("input_ids", TensorProto.INT64, [B, S])
    attention_mask = b.input("attention_mask", TensorProto.INT64, [B, S])
    token_type_ids = b.input("token_type_ids", TensorProto.INT64, [B, S])

    with b.scope("bert"):
        with b.scope("embeddings"):
            words = b.op("Gather", b.normal((cfg.vocab, H), 1.0, "word_embeddings.weight"), input_ids)
            # position_ids = self.position_ids[:, :seq_length], the length read from the input's shape.
            seq_len = b.op("Gather", b.op("Shape", input_ids), b.i64(1), axis=0)
            position_buffer = b.i64(np.arange(cfg.max_positions)[None, :], "bert.embeddings.position_ids")
            position_ids = b.op("Slice", position_buffer, b.i64([0]), b.op("Unsqueeze", seq_len, b.i64([0])),
                                b.i64([1]))
            positions = b.op("Gather", b.normal((cfg.max_positions, H), 1.0, "position_embeddings.weight"),
                             position_ids)
            types = b.op("Gather", b.normal((cfg.type_vocab, H), 1.0, "token_type_embeddings.weight"),
                         token_type_ids)
            x = b.op("Add", b.op("Add", words, types), positions)
            with b.scope("LayerNorm"):
                x = layer_norm(b, x, cfg, cfg.layernorm != "decomposed")

        # get_extended_attention_mask: [B, S] -> [B, 1, 1, S], (1 - mask) * finfo.min
        extended = b.op("Cast", b.op("Unsqueeze", attention_mask, b.i64([1, 2])), to=TensorProto.FLOAT)
        mask = b.op("Mul", b.op("Sub", b.f32(1.0), extended), b.f32(FLOAT_MIN))

        for k in range(cfg.layers):
            with b.scope(f"encoder.layer.{k}"):
                x = encoder_layer(b, x, mask, cfg, k)
        last_hidden = x

        with b.scope("pooler"):
            first = b.op("Gather", last_hidden, b.i64(0), axis=1)
            with b.scope("dense"):
                w = linear_weight(b, H, H, "weight", transposed=True)
                pooled = b.op("Tanh", b.op("Gemm", first, w, b.normal((H,), 0.02, "bias"), transB=1))

    with b.scope("classifier"):
        w = linear_weight(b, H, cfg.labels, "weight", transposed=True)
        logits = b.op("Gemm", pooled, w, b.normal((cfg.labels,), 0.02, "bias"), transB=1)

    b.output(last_hidden, "last_hidden_state", TensorProto.FLOAT, [B, S, H])
    b.output(pooled, "pooler_output", TensorProto.FLOAT, [B, H])
    b.output(logits, "logits", TensorProto.FLOAT, [B, cfg.labels])
    return b.model(f"BERT-style encoder: {cfg}")


def sample_inputs(cfg, rng):
    """Random token ids, segment ids with a second segment, and right padding in row 1+."""
    B, S = cfg.batch, cfg.seq
    input_ids = rng.integers(0, cfg.vocab, (B, S), dtype=np.int64)
    token_type_ids = np.zeros((B, S), np.int64)
    token_type_ids[:, S // 2:] = 1
    attention_mask = np.ones((B, S), np.int64)
    for r in range(1, B):
        attention_mask[r, S - min(S - 1, 3 * r):] = 0  # padding keeps at least one real token
    return {"input_ids": input_ids, "attention_mask": attention_mask, "token_type_ids": token_type_ids}


if __name__ == "__main__":
    run_cli(__doc__, CONFIGS, build, sample_inputs, "bert")
