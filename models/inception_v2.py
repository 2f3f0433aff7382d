#!/usr/bin/env python3
"""An Inception-v2-shaped CNN (BN-Inception, Ioffe and Szegedy 2015, table 1).

  input   input [batch, 3, resolution, resolution] float
  output  logits [batch, classes]

Stem: Conv 7x7/2 (64) + BN + Relu, MaxPool 3x3/2, Conv 1x1 (64) and 3x3 (192) + BN + Relu,
MaxPool 3x3/2. Ten inception modules (3a-3c, 4a-4e, 5a-5b), each the concatenation of up to four
branches: a 1x1; a 1x1 reduction then a 3x3; a 1x1 reduction then two 3x3s (the factorised 5x5);
an average (max in 5b) pooling 3x3 then a 1x1 projection. Modules 3c and 4e halve the plane: their
3x3 branches run at stride 2 and a MaxPool 3x3/2 replaces the pooling branch. Every conv has a
BatchNormalization (folded by aotc) and a Relu. GlobalAveragePool, Flatten, Gemm. Branches of
different widths meeting at concatenations, 3x3 convolutions over 14 x 14 and 7 x 7 planes and
average pools: the hold-out CNN onnxruntime beat aotc on by 1.24x on an Intel Xeon (issue 26).
The full size is at 224x224 (11 M parameters); the test size keeps every module at 96 x 96 and a
quarter of the width.
"""
import dataclasses

from onnx import TensorProto

from builder import GraphBuilder, run_cli
from cnn import batch_norm, classifier, conv, sample_image

# name, (1x1, (3x3 reduce, 3x3), (double reduce, double 3x3), (pool, projection), stride), as
# BN-Inception's table 1; a zero width leaves the branch out, stride 2 halves the plane.
MODULES = (
    ("3a", 64, (64, 64), (64, 96), ("avg", 32), 1),
    ("3b", 64, (64, 96), (64, 96), ("avg", 64), 1),
    ("3c", 0, (128, 160), (64, 96), ("max", 0), 2),
    ("4a", 224, (64, 96), (96, 128), ("avg", 128), 1),
    ("4b", 192, (96, 128), (96, 128), ("avg", 128), 1),
    ("4c", 160, (128, 160), (128, 160), ("avg", 128), 1),
    ("4d", 96, (128, 192), (160, 192), ("avg", 128), 1),
    ("4e", 0, (128, 192), (192, 256), ("max", 0), 2),
    ("5a", 352, (192, 320), (160, 224), ("avg", 128), 1),
    ("5b", 352, (192, 320), (192, 224), ("max", 128), 1),
)


@dataclasses.dataclass(frozen=True)
class InceptionConfig:
    width_mult: float
    resolution: int
    classes: int
    batch: int
    weight_seed: int = 6


CONFIGS = {
    "test": InceptionConfig(width_mult=0.25, resolution=96, classes=10, batch=1),
    "full": InceptionConfig(width_mult=1.0, resolution=224, classes=1000, batch=1),
}


def conv_bn_relu(b, x, c_in, c_out, kernel, stride=1, name="conv"):
    with b.scope(name):
        y = batch_norm(b, conv(b, x, c_in, c_out, kernel, stride), c_out, "bn")
    return b.op("Relu", y)


def inception(b, x, c_in, spec, scale):
    _, one, (red3, out3), (red_d, out_d), (pool, proj), stride = spec
    branches, c_out = [], 0
    if one:
        branches.append(conv_bn_relu(b, x, c_in, scale(one), 1, name="1x1"))
        c_out += scale(one)
    y = conv_bn_relu(b, x, c_in, scale(red3), 1, name="3x3_reduce")
    branches.append(conv_bn_relu(b, y, scale(red3), scale(out3), 3, stride, name="3x3"))
    c_out += scale(out3)
    y = conv_bn_relu(b, x, c_in, scale(red_d), 1, name="double_3x3_reduce")
    y = conv_bn_relu(b, y, scale(red_d), scale(out_d), 3, name="double_3x3_1")
    branches.append(conv_bn_relu(b, y, scale(out_d), scale(out_d), 3, stride, name="double_3x3_2"))
    c_out += scale(out_d)
    pool_op = "AveragePool" if pool == "avg" else "MaxPool"
    pads = [1, 1, 1, 1]
    y = b.op(pool_op, x, kernel_shape=[3, 3], strides=[stride, stride], pads=pads,
             **({"count_include_pad": 0} if pool == "avg" else {}))
    if proj:
        y = conv_bn_relu(b, y, c_in, scale(proj), 1, name="pool_proj")
        c_out += scale(proj)
    else:
        c_out += c_in
    branches.append(y)
    return b.op("Concat", *branches, axis=1), c_out


def build(cfg):
    b = GraphBuilder("inception_v2", seed=cfg.weight_seed, opset=17)
    x = b.input("input", TensorProto.FLOAT, [cfg.batch, 3, cfg.resolution, cfg.resolution])
    scale = lambda c: max(8, int(c * cfg.width_mult) // 8 * 8)  # noqa: E731
    x = conv_bn_relu(b, x, 3, scale(64), 7, 2, name="conv1")
    x = b.op("MaxPool", x, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    x = conv_bn_relu(b, x, scale(64), scale(64), 1, name="conv2_reduce")
    x = conv_bn_relu(b, x, scale(64), scale(192), 3, name="conv2")
    x = b.op("MaxPool", x, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    c_in = scale(192)
    for spec in MODULES:
        with b.scope(f"inception_{spec[0]}"):
            x, c_in = inception(b, x, c_in, spec, scale)
    logits = classifier(b, x, c_in, cfg.classes)
    b.output(logits, "logits", TensorProto.FLOAT, [cfg.batch, cfg.classes])
    return b.model(f"Inception-v2-shaped CNN: {cfg}")


def sample_inputs(cfg, rng):
    return sample_image(cfg.batch, cfg.resolution, rng)


if __name__ == "__main__":
    run_cli(__doc__, CONFIGS, build, sample_inputs, "inception_v2")
