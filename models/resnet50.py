#!/usr/bin/env python3
"""A ResNet-50-shaped CNN (torchvision resnet50, v1.5: the stride sits in the 3x3 conv).

  input   input [batch, 3, resolution, resolution] float
  output  logits [batch, classes]

Stem Conv 7x7/2 + BatchNormalization + Relu + MaxPool 3x3/2; four stages of 3, 4, 6, 3
bottleneck blocks (1x1, 3x3, 1x1 convs with BatchNormalization, a 1x1/stride projection with
BatchNormalization on the first block of each stage, residual Add, Relu); GlobalAveragePool,
Flatten, Gemm. The full size is ResNet-50 itself at 224x224 (25.6 M parameters); the test size
keeps every layer and the 224x224 input at a quarter of the width.
"""
import dataclasses

from onnx import TensorProto

from builder import GraphBuilder, run_cli
from cnn import batch_norm, classifier, conv, sample_image

STAGES = (3, 4, 6, 3)
EXPANSION = 4


@dataclasses.dataclass(frozen=True)
class ResNetConfig:
    width: int  # channels of the stem and the first stage's bottleneck (64 in ResNet-50)
    resolution: int
    classes: int
    batch: int
    weight_seed: int = 3


CONFIGS = {
    "test": ResNetConfig(width=16, resolution=224, classes=10, batch=1),
    "full": ResNetConfig(width=64, resolution=224, classes=1000, batch=1),
}


def bottleneck(b, x, c_in, planes, stride):
    c_out = planes * EXPANSION
    y = b.op("Relu", batch_norm(b, conv(b, x, c_in, planes, 1, name="conv1"), planes, "bn1"))
    y = b.op("Relu", batch_norm(b, conv(b, y, planes, planes, 3, stride, name="conv2"), planes, "bn2"))
    y = batch_norm(b, conv(b, y, planes, c_out, 1, name="conv3"), c_out, "bn3", residual_end=True)
    if stride != 1 or c_in != c_out:
        with b.scope("downsample"):
            x = batch_norm(b, conv(b, x, c_in, c_out, 1, stride, name="0"), c_out, "1")
    return b.op("Relu", b.op("Add", y, x))


def build(cfg):
    b = GraphBuilder("resnet50", seed=cfg.weight_seed, opset=17)
    x = b.input("input", TensorProto.FLOAT, [cfg.batch, 3, cfg.resolution, cfg.resolution])
    w = cfg.width
    x = b.op("Relu", batch_norm(b, conv(b, x, 3, w, 7, 2, name="conv1"), w, "bn1"))
    x = b.op("MaxPool", x, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    c_in = w
    for s, blocks in enumerate(STAGES):
        planes = w * 2 ** s
        for k in range(blocks):
            with b.scope(f"layer{s + 1}.{k}"):
                x = bottleneck(b, x, c_in, planes, 2 if (k == 0 and s > 0) else 1)
            c_in = planes * EXPANSION
    logits = classifier(b, x, c_in, cfg.classes)
    b.output(logits, "logits", TensorProto.FLOAT, [cfg.batch, cfg.classes])
    return b.model(f"ResNet-50-shaped CNN: {cfg}")


def sample_inputs(cfg, rng):
    return sample_image(cfg.batch, cfg.resolution, rng)


if __name__ == "__main__":
    run_cli(__doc__, CONFIGS, build, sample_inputs, "resnet50")
