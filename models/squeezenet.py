#!/usr/bin/env python3
"""A SqueezeNet-1.1-shaped CNN (torchvision squeezenet1_1).

  input   input [batch, 3, resolution, resolution] float
  output  logits [batch, classes]

Stem Conv 3x3/2 (64 channels, with bias) + Relu + MaxPool 3x3/2 (ceil_mode); eight fire modules,
each a squeeze 1x1 (s channels) + Relu feeding an expand 1x1 (e) + Relu and an expand 3x3 (e,
padded) + Relu whose results are concatenated, with MaxPool 3x3/2 (ceil_mode) after the second
and the fourth; a 1x1 classifier conv + Relu, GlobalAveragePool, Flatten. No BatchNormalization:
every conv has its bias, as in the original. Many small convolutions over small channel counts
(16 to 64 squeeze channels) and concatenations: the hold-out CNN where per-kernel choices matter
most (issue 26 measured aotc 1.53x onnxruntime on an Intel Xeon). The full size is SqueezeNet 1.1
at 224x224 (1.2 M parameters); the test size keeps every layer at 96 x 96 and half the width.
"""
import dataclasses

import numpy as np
from onnx import TensorProto

from builder import GraphBuilder, run_cli
from cnn import sample_image

# (squeeze channels, expand channels of each branch), the fire modules of SqueezeNet 1.1; a
# MaxPool 3x3/2 follows the fire modules listed in POOL_AFTER.
FIRES = ((16, 64), (16, 64), (32, 128), (32, 128), (48, 192), (48, 192), (64, 256), (64, 256))
POOL_AFTER = (1, 3)


@dataclasses.dataclass(frozen=True)
class SqueezeNetConfig:
    width_mult: float
    resolution: int
    classes: int
    batch: int
    weight_seed: int = 5


CONFIGS = {
    "test": SqueezeNetConfig(width_mult=0.5, resolution=96, classes=10, batch=1),
    "full": SqueezeNetConfig(width_mult=1.0, resolution=224, classes=1000, batch=1),
}


def conv_relu(b, x, c_in, c_out, kernel, stride=1, name="conv"):
    """Conv with bias (He-scaled weights) + Relu, padded to keep the plane at stride 1."""
    with b.scope(name):
        w = b.normal((c_out, c_in, kernel, kernel), np.sqrt(2.0 / (c_in * kernel * kernel)), "weight")
        bias = b.normal((c_out,), 0.05, "bias")
    pad = (kernel - 1) // 2 if stride == 1 else 0
    y = b.op("Conv", x, w, bias, kernel_shape=[kernel, kernel], strides=[stride, stride], pads=[pad] * 4)
    return b.op("Relu", y)


def fire(b, x, c_in, squeeze, expand):
    s = conv_relu(b, x, c_in, squeeze, 1, name="squeeze")
    e1 = conv_relu(b, s, squeeze, expand, 1, name="expand1x1")
    e3 = conv_relu(b, s, squeeze, expand, 3, name="expand3x3")
    return b.op("Concat", e1, e3, axis=1)


def max_pool(b, x):
    return b.op("MaxPool", x, kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)


def build(cfg):
    b = GraphBuilder("squeezenet", seed=cfg.weight_seed, opset=17)
    x = b.input("input", TensorProto.FLOAT, [cfg.batch, 3, cfg.resolution, cfg.resolution])
    scale = lambda c: max(8, int(c * cfg.width_mult))  # noqa: E731
    stem = scale(64)
    x = max_pool(b, conv_relu(b, x, 3, stem, 3, 2, name="features.0"))
    c_in = stem
    for k, (squeeze, expand) in enumerate(FIRES):
        with b.scope(f"fire{k}"):
            x = fire(b, x, c_in, scale(squeeze), scale(expand))
        c_in = 2 * scale(expand)
        if k in POOL_AFTER:
            x = max_pool(b, x)
    x = conv_relu(b, x, c_in, cfg.classes, 1, name="classifier.1")
    logits = b.op("Flatten", b.op("GlobalAveragePool", x), axis=1)
    b.output(logits, "logits", TensorProto.FLOAT, [cfg.batch, cfg.classes])
    return b.model(f"SqueezeNet-1.1-shaped CNN: {cfg}")


def sample_inputs(cfg, rng):
    return sample_image(cfg.batch, cfg.resolution, rng)


if __name__ == "__main__":
    run_cli(__doc__, CONFIGS, build, sample_inputs, "squeezenet")
