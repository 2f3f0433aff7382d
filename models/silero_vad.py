#!/usr/bin/env python3
"""A streaming voice-activity detector in the style of Silero VAD v5, as its ONNX export is
written: one chunk of audio in, a speech probability and the LSTM state out, the state fed back
in with the next chunk.

  inputs  input [batch, samples] float, state [2, batch, hidden] float (h and c stacked),
          sr int64 scalar (the sample rate: 16000 or 8000)
  outputs output [batch, 1] speech probability, stateN [2, batch, hidden]

The graph is an `If` on `Equal(sr, 16000)` whose two branches are the 16 kHz and 8 kHz networks,
each with its own weights as initializers of the branch (the export keeps them there): reflect
`Pad`, an STFT as a strided `Conv` over a fixed DFT basis, magnitude (`Slice` real and
imaginary halves, `Pow 2`, `Add`, `Sqrt`), an encoder of four `Conv` + `Relu` (two with stride
2), then the decoder: the state split with `Gather`, `Unsqueeze` to one time step, an `LSTM`
with initial_h / initial_c whose Y_h and Y_c are `Concat`ed into the new state, `Relu`, a 1x1
`Conv`, `Sigmoid` and `ReduceMean` over time. The 8 kHz network reads the same chunk with a
window and hop half as long.
"""
import dataclasses

import numpy as np
from onnx import TensorProto, helper

from builder import GraphBuilder, run_cli


@dataclasses.dataclass(frozen=True)
class VadConfig:
    samples: int  # samples per chunk
    window: int   # STFT window of the 16 kHz network (the 8 kHz one uses half)
    hidden: int   # LSTM width (the encoder's last width too)
    width: int    # encoder widths: width, width / 2, width / 2, hidden
    batch: int
    weight_seed: int = 23


CONFIGS = {
    "test": VadConfig(samples=512, window=128, hidden=32, width=32, batch=2),
    "full": VadConfig(samples=512, window=256, hidden=128, width=128, batch=1),
}


def dft_basis(window):
    """The real and imaginary DFT rows (window // 2 + 1 each) under a Hann window, as a Conv
    weight [2 (window // 2 + 1), 1, window]."""
    n = np.arange(window)
    bins = np.arange(window // 2 + 1)[:, None]
    hann = 0.5 - 0.5 * np.cos(2 * np.pi * n / window)
    real = np.cos(2 * np.pi * bins * n / window) * hann
    imag = -np.sin(2 * np.pi * bins * n / window) * hann
    return np.concatenate([real, imag])[:, None, :].astype(np.float32)


def branch(cfg, window, seed, tag):
    """The network for one sample rate, as a subgraph reading the outer `input` and `state`."""
    b = GraphBuilder(f"vad_{tag}", seed=seed, opset=16)
    hop, bins = window // 2, window // 2 + 1
    with b.scope(f"_model_{tag}.stft"):
        padded = b.op("Pad", "input", b.i64([0, 0, 0, window // 4]), mode="reflect")
        x = b.op("Unsqueeze", padded, b.i64([1]))
        spec = b.op("Conv", x, b.const(dft_basis(window), b.param_name("forward_basis_buffer")), strides=[hop])
        real = b.op("Slice", spec, b.i64([0]), b.i64([bins]), b.i64([1]))
        imag = b.op("Slice", spec, b.i64([bins]), b.i64([2 * bins]), b.i64([1]))
        power = b.op("Add", b.op("Pow", real, b.f32(2.0)), b.op("Pow", imag, b.f32(2.0)))
        x = b.op("Sqrt", power)
    widths = [cfg.width, cfg.width // 2, cfg.width // 2, cfg.hidden]
    strides = [1, 2, 2, 1]
    c_in = bins
    for k, (c_out, s) in enumerate(zip(widths, strides)):
        with b.scope(f"_model_{tag}.encoder.{k}"):
            w = b.normal((c_out, c_in, 3), np.sqrt(2.0 / (3 * c_in)), "reparam_conv.weight")
            bias = b.normal((c_out,), 0.02, "reparam_conv.bias")
            x = b.op("Relu", b.op("Conv", x, w, bias, kernel_shape=[3], pads=[1, 1], strides=[s]))
        c_in = c_out
    h = cfg.hidden
    with b.scope(f"_model_{tag}.decoder"):
        # The encoder's last frame is the LSTM's one time step: [batch, hidden, T] -> [1, batch, hidden].
        frame = b.op("Gather", x, b.i64(-1), axis=2)
        step = b.op("Unsqueeze", frame, b.i64([0]))
        h0 = b.op("Unsqueeze", b.op("Gather", "state", b.i64(0), axis=0), b.i64([0]))
        c0 = b.op("Unsqueeze", b.op("Gather", "state", b.i64(1), axis=0), b.i64([0]))
        w = b.normal((1, 4 * h, h), 1.0 / np.sqrt(h), "rnn.weight_ih")
        r = b.normal((1, 4 * h, h), 1.0 / np.sqrt(h), "rnn.weight_hh")
        bias = b.normal((1, 8 * h), 0.1, "rnn.bias")
        _, yh, yc = b.op("LSTM", step, w, r, bias, None, h0, c0, outputs=3, hidden_size=h)
        new_state = b.op("Concat", yh, yc, axis=0)
        y = b.op("Relu", b.op("Squeeze", yh, b.i64([0])))
        y = b.op("Unsqueeze", y, b.i64([2]))
        y = b.op("Conv", y, b.normal((1, h, 1), 1.0 / np.sqrt(h), "decoder.2.weight"),
                 b.normal((1,), 0.1, "decoder.2.bias"), kernel_shape=[1])
        y = b.op("Sigmoid", y)
        prob = b.op("ReduceMean", b.op("Squeeze", y, b.i64([1])), axes=[1], keepdims=1)
    b.nodes.append(helper.make_node("Identity", [prob], [f"{tag}_output"]))
    b.nodes.append(helper.make_node("Identity", [new_state], [f"{tag}_state"]))
    return helper.make_graph(
        b.nodes, f"{tag}_branch", [],
        [helper.make_tensor_value_info(f"{tag}_output", TensorProto.FLOAT, [cfg.batch, 1]),
         helper.make_tensor_value_info(f"{tag}_state", TensorProto.FLOAT, [2, cfg.batch, h])],
        b.initializers)


def build(cfg):
    b = GraphBuilder("silero_vad", seed=cfg.weight_seed, opset=16)
    b.input("input", TensorProto.FLOAT, [cfg.batch, cfg.samples])
    b.input("state", TensorProto.FLOAT, [2, cfg.batch, cfg.hidden])
    b.input("sr", TensorProto.INT64, [])
    is_16k = b.op("Equal", "sr", b.i64(16000))
    then_g = branch(cfg, cfg.window, cfg.weight_seed + 1, "16k")
    else_g = branch(cfg, cfg.window // 2, cfg.weight_seed + 2, "8k")
    out, state = b.op("If", is_16k, outputs=2, then_branch=then_g, else_branch=else_g)
    b.output(out, "output", TensorProto.FLOAT, [cfg.batch, 1])
    b.output(state, "stateN", TensorProto.FLOAT, [2, cfg.batch, cfg.hidden])
    return b.model(f"Silero-VAD-style detector: {cfg}")


def sample_inputs(cfg, rng, sample_rate=16000):
    t = np.arange(cfg.samples) / sample_rate
    tone = 0.3 * np.sin(2 * np.pi * 440 * t)
    audio = tone[None, :] + 0.05 * rng.standard_normal((cfg.batch, cfg.samples))
    return {"input": audio.astype(np.float32),
            "state": (0.5 * rng.standard_normal((2, cfg.batch, cfg.hidden))).astype(np.float32),
            "sr": np.array(sample_rate, np.int64)}


if __name__ == "__main__":
    run_cli(__doc__, CONFIGS, build, sample_inputs, "silero_vad")
