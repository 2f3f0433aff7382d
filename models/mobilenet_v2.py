#!/usr/bin/env python3
"""A MobileNetV2-shaped CNN (torchvision mobilenet_v2).

  input   input [batch, 3, resolution, resolution] float
  output  logits [batch, classes]

Stem Conv 3x3/2 + BatchNormalization + ReLU6 (Clip 0..6 with min/max inputs, opset >= 11);
17 inverted-residual blocks: 1x1 expansion (factor 6) + BN + ReLU6, depthwise 3x3 conv
(group = channels) + BN + ReLU6, 1x1 linear projection + BN, residual Add where stride is 1 and
the channel count is unchanged; a 1x1 conv to 1280 features + BN + ReLU6; GlobalAveragePool,
Flatten, Gemm. The full size is MobileNetV2 1.0 at 224x224 (3.5 M parameters); the test size
keeps every block and the 224x224 input at half the width.
"""
import dataclasses

from onnx import TensorProto

from builder import GraphBuilder, run_cli
from cnn import batch_norm, classifier, conv, sample_image

# (expansion t, output channels c, repeats n, first stride s), MobileNetV2 table 2.
BLOCKS = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
          (6, 160, 3, 2), (6, 320, 1, 1))


@dataclasses.dataclass(frozen=True)
class MobileNetConfig:
    width_mult: float
    resolution: int
    classes: int
    batch: int
    weight_seed: int = 4


CONFIGS = {
    "test": MobileNetConfig(width_mult=0.5, resolution=224, classes=10, batch=1),
    "full": MobileNetConfig(width_mult=1.0, resolution=224, classes=1000, batch=1),
}


def make_divisible(v, divisor=8):
    """torchvision's _make_divisible: round channels to a multiple of 8, never below 90%."""
    new_v = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return new_v + divisor if new_v < 0.9 * v else new_v


def relu6(b, x):
    return b.op("Clip", x, b.f32(0.0), b.f32(6.0))


def conv_bn(b, x, c_in, c_out, kernel, stride=1, group=1, activation=True, residual_end=False):
    y = batch_norm(b, conv(b, x, c_in, c_out, kernel, stride, group, name="0"), c_out, "1",
                   residual_end=residual_end)
    return relu6(b, y) if activation else y


def inverted_residual(b, x, c_in, c_out, stride, expand):
    hidden = c_in * expand
    y, k = x, 0
    if expand != 1:
        with b.scope(f"conv.{k}"):
            y = conv_bn(b, y, c_in, hidden, 1)
        k += 1
    with b.scope(f"conv.{k}"):
        y = conv_bn(b, y, hidden, hidden, 3, stride, group=hidden)
    residual = stride == 1 and c_in == c_out
    y = conv(b, y, hidden, c_out, 1, name=f"conv.{k + 1}")
    y = batch_norm(b, y, c_out, f"conv.{k + 2}", residual_end=residual)
    return b.op("Add", x, y) if residual else y


def build(cfg):
    b = GraphBuilder("mobilenet_v2", seed=cfg.weight_seed, opset=17)
    x = b.input("input", TensorProto.FLOAT, [cfg.batch, 3, cfg.resolution, cfg.resolution])
    c_in = make_divisible(32 * cfg.width_mult)
    with b.scope("features.0"):
        x = conv_bn(b, x, 3, c_in, 3, 2)
    index = 1
    for t, c, n, s in BLOCKS:
        c_out = make_divisible(c * cfg.width_mult)
        for k in range(n):
            with b.scope(f"features.{index}"):
                x = inverted_residual(b, x, c_in, c_out, s if k == 0 else 1, t)
            c_in, index = c_out, index + 1
    last = make_divisible(1280 * max(1.0, cfg.width_mult))
    with b.scope(f"features.{index}"):
        x = conv_bn(b, x, c_in, last, 1)
    logits = classifier(b, x, last, cfg.classes, name="classifier.1")
    b.output(logits, "logits", TensorProto.FLOAT, [cfg.batch, cfg.classes])
    return b.model(f"MobileNetV2-shaped CNN: {cfg}")


def sample_inputs(cfg, rng):
    return sample_image(cfg.batch, cfg.resolution, rng)


if __name__ == "__main__":
    run_cli(__doc__, CONFIGS, build, sample_inputs, "mobilenet_v2")
