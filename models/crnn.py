#!/usr/bin/env python3
"""A CRNN text-line recogniser (Shi et al.; the architecture of many OCR recognisers and captcha
readers), as torch.onnx.export writes it: convolutions over a text-line image, its columns read
as a sequence by two bidirectional LSTMs, per-column class scores for CTC decoding.

  input   image [batch, 1, 32, width] float (a grey text line, height 32)
  output  log_probs [width / 4 + 1, batch, classes]: CTC log-probabilities per column

Convolutions: `Conv` 3x3 + `BatchNormalization` + `Relu` blocks with `MaxPool` 2x2, then 2x1
pools (stride (2, 1), padding (0, 1)) that keep the horizontal resolution, and a final 2x2
`Conv` that brings the height to 1. The feature map becomes a sequence with `Squeeze` and
`Transpose` ([T, batch, channels]); each bidirectional `LSTM` (no initial state) is followed by
torch's `Transpose` + `Reshape` of Y [T, 2, batch, hidden] into [T, batch, 2 hidden] and a
`MatMul` + `Add` projection; `LogSoftmax` over the classes.
"""
import dataclasses

import numpy as np
from onnx import TensorProto

from builder import GraphBuilder, run_cli


@dataclasses.dataclass(frozen=True)
class CrnnConfig:
    width: int     # image width (pixels)
    channels: int  # width of the first conv block (then x2, x4, x4, x8, x8, x8 as in CRNN)
    hidden: int    # LSTM width
    classes: int   # CTC classes (blank included)
    batch: int
    weight_seed: int = 31


CONFIGS = {
    "test": CrnnConfig(width=64, channels=8, hidden=32, classes=37, batch=2),
    "full": CrnnConfig(width=256, channels=64, hidden=256, classes=6625, batch=1),
}


def conv_block(b, x, c_in, c_out, kernel, pad, batch_norm, name):
    with b.scope(name):
        w = b.normal((c_out, c_in, kernel, kernel), np.sqrt(2.0 / (c_in * kernel * kernel)), "weight")
        bias = None if batch_norm else b.normal((c_out,), 0.02, "bias")
        x = b.op("Conv", x, w, *([bias] if bias else []), kernel_shape=[kernel, kernel], pads=[pad] * 4)
        if batch_norm:
            x = b.op("BatchNormalization", x, b.uniform((c_out,), 0.8, 1.2, "bn.weight"),
                     b.normal((c_out,), 0.05, "bn.bias"), b.normal((c_out,), 0.05, "bn.running_mean"),
                     b.uniform((c_out,), 0.8, 1.2, "bn.running_var"), epsilon=1e-5)
        return b.op("Relu", x)


def bidirectional_lstm(b, x, c_in, hidden, c_out, name):
    """torch's BidirectionalLSTM module: LSTM, then Linear over both directions."""
    with b.scope(name):
        w = b.normal((2, 4 * hidden, c_in), 1.0 / np.sqrt(c_in), "rnn.weight_ih")
        r = b.normal((2, 4 * hidden, hidden), 1.0 / np.sqrt(hidden), "rnn.weight_hh")
        bias = b.normal((2, 8 * hidden), 0.1, "rnn.bias")
        y = b.op("LSTM", x, w, r, bias, direction="bidirectional", hidden_size=hidden)
        y = b.op("Transpose", y, perm=[0, 2, 1, 3])  # [T, batch, 2, hidden]
        y = b.op("Reshape", y, b.i64([0, 0, -1]))
        proj = b.normal((2 * hidden, c_out), 1.0 / np.sqrt(2 * hidden), "embedding.weight")
        return b.op("Add", b.op("MatMul", y, proj), b.normal((c_out,), 0.02, "embedding.bias"))


def build(cfg):
    b = GraphBuilder("crnn", seed=cfg.weight_seed, opset=17)
    x = b.input("image", TensorProto.FLOAT, [cfg.batch, 1, 32, cfg.width])
    c = cfg.channels
    x = conv_block(b, x, 1, c, 3, 1, False, "cnn.conv0")
    x = b.op("MaxPool", x, kernel_shape=[2, 2], strides=[2, 2])
    x = conv_block(b, x, c, 2 * c, 3, 1, False, "cnn.conv1")
    x = b.op("MaxPool", x, kernel_shape=[2, 2], strides=[2, 2])
    x = conv_block(b, x, 2 * c, 4 * c, 3, 1, True, "cnn.conv2")
    x = conv_block(b, x, 4 * c, 4 * c, 3, 1, False, "cnn.conv3")
    x = b.op("MaxPool", x, kernel_shape=[2, 2], strides=[2, 1], pads=[0, 1, 0, 1])
    x = conv_block(b, x, 4 * c, 8 * c, 3, 1, True, "cnn.conv4")
    x = conv_block(b, x, 8 * c, 8 * c, 3, 1, False, "cnn.conv5")
    x = b.op("MaxPool", x, kernel_shape=[2, 2], strides=[2, 1], pads=[0, 1, 0, 1])
    x = conv_block(b, x, 8 * c, 8 * c, 2, 0, True, "cnn.conv6")  # height 2 -> 1
    seq = b.op("Transpose", b.op("Squeeze", x, b.i64([2])), perm=[2, 0, 1])  # [T, batch, 8c]
    seq = bidirectional_lstm(b, seq, 8 * c, cfg.hidden, cfg.hidden, "rnn.0")
    seq = bidirectional_lstm(b, seq, cfg.hidden, cfg.hidden, cfg.classes, "rnn.1")
    out = b.op("LogSoftmax", seq, axis=2)
    steps = cfg.width // 4 + 1
    b.output(out, "log_probs", TensorProto.FLOAT, [steps, cfg.batch, cfg.classes])
    return b.model(f"CRNN text recogniser: {cfg}")


def sample_inputs(cfg, rng):
    # A bright line with dark strokes: the background near 1, strokes near 0.
    image = 0.9 - 0.6 * (rng.random((cfg.batch, 1, 32, cfg.width)) < 0.2)
    return {"image": (image + 0.05 * rng.standard_normal(image.shape)).astype(np.float32)}


if __name__ == "__main__":
    run_cli(__doc__, CONFIGS, build, sample_inputs, "crnn")
