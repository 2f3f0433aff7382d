#!/usr/bin/env python3
"""A small multi-layer perceptron classifier, as torch.onnx.export writes nn.Sequential of
Linear/ReLU layers on a 2-D input.

  input   input [batch, features] float
  outputs logits [batch, classes], log_probs [batch, classes] (LogSoftmax)

Each hidden layer is Gemm(transB=1) with a bias, then Relu; the last Gemm gives the logits.
Weights use He initialisation, so activations stay O(1).
"""
import dataclasses

import numpy as np
from onnx import TensorProto

from builder import GraphBuilder, run_cli


@dataclasses.dataclass(frozen=True)
class MlpConfig:
    features: int
    hidden: int
    depth: int  # hidden layers
    classes: int
    batch: int
    weight_seed: int = 5


CONFIGS = {
    "test": MlpConfig(features=64, hidden=128, depth=2, classes=10, batch=4),
    "full": MlpConfig(features=784, hidden=1024, depth=3, classes=10, batch=64),
}


def linear(b, x, fan_in, fan_out, gain=2.0):
    w = b.normal((fan_out, fan_in), np.sqrt(gain / fan_in), "weight")
    return b.op("Gemm", x, w, b.normal((fan_out,), 0.02, "bias"), transB=1)


def build(cfg):
    b = GraphBuilder("mlp", seed=cfg.weight_seed, opset=17)
    x = b.input("input", TensorProto.FLOAT, [cfg.batch, cfg.features])
    width = cfg.features
    for k in range(cfg.depth):
        with b.scope(f"layers.{2 * k}"):
            x = b.op("Relu", linear(b, x, width, cfg.hidden))
        width = cfg.hidden
    with b.scope(f"layers.{2 * cfg.depth}"):
        logits = linear(b, x, width, cfg.classes, gain=1.0)
    log_probs = b.op("LogSoftmax", logits, axis=-1)
    b.output(logits, "logits", TensorProto.FLOAT, [cfg.batch, cfg.classes])
    b.output(log_probs, "log_probs", TensorProto.FLOAT, [cfg.batch, cfg.classes])
    return b.model(f"MLP: {cfg}")


def sample_inputs(cfg, rng):
    return {"input": rng.normal(0.0, 1.0, (cfg.batch, cfg.features)).astype(np.float32)}


if __name__ == "__main__":
    run_cli(__doc__, CONFIGS, build, sample_inputs, "mlp")
