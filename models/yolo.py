#!/usr/bin/env python3
"""A YOLOv8-style detector (ultralytics YOLOv8n), in the op vocabulary of its ONNX export.

  input   images [batch, 3, resolution, resolution] float
  output  output0 [batch, 4 + classes, anchors] float   (boxes cx, cy, w, h in pixels, class scores)

As `yolo export format=onnx` writes it (opset 17, BatchNormalization folded into the convolutions):
every Conv block is Conv (with bias) -> Sigmoid -> Mul (SiLU); C2f blocks split the 1x1
convolution's output in two (Split), chain bottlenecks (two 3x3 blocks, residual Add in the
backbone) and concatenate every stage before a 1x1; SPPF is three chained MaxPool 5x5 stride 1
concatenated; the neck upsamples by nearest Resize and concatenates with the backbone's
features; the detection head has two branches per scale (64 box-distribution channels, `classes`
class channels), reshaped and concatenated over the three scales, then DFL (softmax over 16 bins,
a fixed 1x1 convolution by 0..15) and dist2bbox against constant anchor points and strides.

The full size is YOLOv8n at 640x640 with 80 classes (3.2 M parameters, 8400 anchors); the test
size is the same network at 160x160.
"""
import dataclasses
import math

import numpy as np
from onnx import TensorProto

from builder import GraphBuilder, run_cli
from cnn import sample_image


@dataclasses.dataclass(frozen=True)
class YoloConfig:
    width: float          # channel multiplier (YOLOv8n: 0.25)
    depth: float          # bottleneck-count multiplier (YOLOv8n: 0.33)
    max_channels: int     # channel cap (YOLOv8n: 1024)
    resolution: int
    classes: int
    batch: int
    weight_seed: int = 8


CONFIGS = {
    "test": YoloConfig(width=0.25, depth=0.33, max_channels=1024, resolution=160, classes=80, batch=1),
    "full": YoloConfig(width=0.25, depth=0.33, max_channels=1024, resolution=640, classes=80, batch=1),
}

REG_MAX = 16
STRIDES = (8, 16, 32)


def channels(cfg, c):
    return int(math.ceil(min(c, cfg.max_channels) * cfg.width / 8) * 8)


def repeats(cfg, n):
    return max(round(n * cfg.depth), 1)


def conv(b, x, c_in, c_out, kernel, stride=1, name="conv", activation=True):
    """ultralytics Conv: Conv2d with BN folded (so with a bias) and SiLU as Sigmoid * x."""
    fan_in = c_in * kernel * kernel
    with b.scope(name):
        # He initialisation keeps the activations O(1) through the depth (std 0.1 to 1 at every
        # stage): a gain of 1.05 already grows them tenfold and saturates the class sigmoids,
        # which would hide errors; 0.9 lets them fade into the biases.
        w = b.normal((c_out, c_in, kernel, kernel), np.sqrt(2.0 / fan_in), "conv.weight")
        bias = b.normal((c_out,), 0.1, "conv.bias")
    pad = kernel // 2
    y = b.op("Conv", x, w, bias, kernel_shape=[kernel, kernel], strides=[stride, stride],
             pads=[pad] * 4, dilations=[1, 1], group=1)
    return b.op("Mul", y, b.op("Sigmoid", y)) if activation else y


def bottleneck(b, x, c, shortcut):
    y = conv(b, x, c, c, 3, name="cv1")
    y = conv(b, y, c, c, 3, name="cv2")
    return b.op("Add", x, y) if shortcut else y


def c2f(b, x, c_in, c_out, n, shortcut):
    c = c_out // 2
    y = conv(b, x, c_in, 2 * c, 1, name="cv1")
    parts = list(b.op("Split", y, b.i64([c, c]), axis=1, outputs=2))
    for k in range(n):
        with b.scope(f"m.{k}"):
            parts.append(bottleneck(b, parts[-1], c, shortcut))
    return conv(b, b.op("Concat", *parts, axis=1), (2 + n) * c, c_out, 1, name="cv2")


def sppf(b, x, c_in, c_out):
    c = c_in // 2
    y = conv(b, x, c_in, c, 1, name="cv1")
    pools = [y]
    for _ in range(3):
        pools.append(b.op("MaxPool", pools[-1], kernel_shape=[5, 5], strides=[1, 1], pads=[2] * 4,
                          dilations=[1, 1], ceil_mode=0))
    return conv(b, b.op("Concat", *pools, axis=1), 4 * c, c_out, 1, name="cv2")


def upsample(b, x):
    return b.op("Resize", x, b.const(np.zeros(0, np.float32), b.unique("roi")),
                b.f32([1.0, 1.0, 2.0, 2.0]), coordinate_transformation_mode="asymmetric",
                mode="nearest", nearest_mode="floor")


def detect(b, cfg, features, chans):
    """The Detect head: per scale cv2 (box distribution) and cv3 (classes), then DFL and
    dist2bbox over all anchors."""
    c2 = max(16, chans[0] // 4, REG_MAX * 4)
    c3 = max(chans[0], min(cfg.classes, 100))
    flat = []
    for i, (x, c) in enumerate(zip(features, chans)):
        with b.scope(f"cv2.{i}"):
            box = conv(b, x, c, c2, 3, name="0")
            box = conv(b, box, c2, c2, 3, name="1")
            box = conv(b, box, c2, 4 * REG_MAX, 1, name="2", activation=False)
        with b.scope(f"cv3.{i}"):
            cls = conv(b, x, c, c3, 3, name="0")
            cls = conv(b, cls, c3, c3, 3, name="1")
            cls = conv(b, cls, c3, cfg.classes, 1, name="2", activation=False)
        y = b.op("Concat", box, cls, axis=1)
        flat.append(b.op("Reshape", y, b.i64([cfg.batch, 4 * REG_MAX + cfg.classes, -1])))
    y = b.op("Concat", *flat, axis=2)
    box, cls = b.op("Split", y, b.i64([4 * REG_MAX, cfg.classes]), axis=1, outputs=2)

    # DFL: softmax over the 16 bins of each side, expectation by a 1x1 convolution with 0..15.
    anchors = sum((cfg.resolution // s) ** 2 for s in STRIDES)
    d = b.op("Reshape", box, b.i64([cfg.batch, 4, REG_MAX, anchors]))
    d = b.op("Softmax", b.op("Transpose", d, perm=[0, 2, 1, 3]), axis=1)
    bins = b.const(np.arange(REG_MAX, dtype=np.float32).reshape(1, REG_MAX, 1, 1), "dfl.conv.weight")
    d = b.op("Conv", d, bins, kernel_shape=[1, 1], strides=[1, 1], pads=[0] * 4, dilations=[1, 1], group=1)
    d = b.op("Reshape", d, b.i64([cfg.batch, 4, anchors]))

    # dist2bbox (xywh) against the anchor points, scaled by each anchor's stride.
    points, strides = [], []
    for s in STRIDES:
        n = cfg.resolution // s
        sy, sx = np.meshgrid(np.arange(n, dtype=np.float32) + 0.5, np.arange(n, dtype=np.float32) + 0.5,
                             indexing="ij")
        points.append(np.stack([sx.ravel(), sy.ravel()]))
        strides.append(np.full((1, n * n), s, np.float32))
    anchor_points = b.const(np.concatenate(points, axis=1)[None], "anchors")
    stride_row = b.const(np.concatenate(strides, axis=1)[None], "strides")
    lt, rb = b.op("Split", d, b.i64([2, 2]), axis=1, outputs=2)
    x1y1 = b.op("Sub", anchor_points, lt)
    x2y2 = b.op("Add", anchor_points, rb)
    centre = b.op("Div", b.op("Add", x1y1, x2y2), b.f32(2.0))
    size = b.op("Sub", x2y2, x1y1)
    boxes = b.op("Mul", b.op("Concat", centre, size, axis=1), stride_row)
    return b.op("Concat", boxes, b.op("Sigmoid", cls), axis=1), anchors


def build(cfg):
    b = GraphBuilder("yolov8", seed=cfg.weight_seed, opset=17)
    x = b.input("images", TensorProto.FLOAT, [cfg.batch, 3, cfg.resolution, cfg.resolution])
    ch = {k: channels(cfg, k) for k in (64, 128, 256, 512, 1024)}
    with b.scope("model.0"):
        x = conv(b, x, 3, ch[64], 3, 2)
    with b.scope("model.1"):
        x = conv(b, x, ch[64], ch[128], 3, 2)
    with b.scope("model.2"):
        x = c2f(b, x, ch[128], ch[128], repeats(cfg, 3), True)
    with b.scope("model.3"):
        x = conv(b, x, ch[128], ch[256], 3, 2)
    with b.scope("model.4"):
        p3 = c2f(b, x, ch[256], ch[256], repeats(cfg, 6), True)
    with b.scope("model.5"):
        x = conv(b, p3, ch[256], ch[512], 3, 2)
    with b.scope("model.6"):
        p4 = c2f(b, x, ch[512], ch[512], repeats(cfg, 6), True)
    with b.scope("model.7"):
        x = conv(b, p4, ch[512], ch[1024], 3, 2)
    with b.scope("model.8"):
        x = c2f(b, x, ch[1024], ch[1024], repeats(cfg, 3), True)
    with b.scope("model.9"):
        p5 = sppf(b, x, ch[1024], ch[1024])

    x = b.op("Concat", upsample(b, p5), p4, axis=1)
    with b.scope("model.12"):
        h4 = c2f(b, x, ch[1024] + ch[512], ch[512], repeats(cfg, 3), False)
    x = b.op("Concat", upsample(b, h4), p3, axis=1)
    with b.scope("model.15"):
        out3 = c2f(b, x, ch[512] + ch[256], ch[256], repeats(cfg, 3), False)
    with b.scope("model.16"):
        x = conv(b, out3, ch[256], ch[256], 3, 2)
    x = b.op("Concat", x, h4, axis=1)
    with b.scope("model.18"):
        out4 = c2f(b, x, ch[256] + ch[512], ch[512], repeats(cfg, 3), False)
    with b.scope("model.19"):
        x = conv(b, out4, ch[512], ch[512], 3, 2)
    x = b.op("Concat", x, p5, axis=1)
    with b.scope("model.21"):
        out5 = c2f(b, x, ch[512] + ch[1024], ch[1024], repeats(cfg, 3), False)

    with b.scope("model.22"):
        y, anchors = detect(b, cfg, [out3, out4, out5], [ch[256], ch[512], ch[1024]])
    b.output(y, "output0", TensorProto.FLOAT, [cfg.batch, 4 + cfg.classes, anchors])
    return b.model(f"YOLOv8-style detector: {cfg}")


def sample_inputs(cfg, rng):
    return {"images": sample_image(cfg.batch, cfg.resolution, rng)["input"]}


if __name__ == "__main__":
    run_cli(__doc__, CONFIGS, build, sample_inputs, "yolov8")
