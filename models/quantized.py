#!/usr/bin/env python3
"""Models as onnxruntime's dynamic quantizer writes them: another models/ script's model passed
through onnxruntime.quantization.quantize_dynamic, the tool users run to shrink a float model
(weights to 8 bits, activations quantized at run time).

  base bert: BERT (models/bert.py) with every MatMul as DynamicQuantizeLinear + MatMulInteger +
             Cast + Mul by the two scales, the embedding Gathers reading DequantizeLinear'd
             8-bit tables;
  base crnn: the CRNN recogniser (models/crnn.py) with its convolutions as
             DynamicQuantizeLinear + ConvInteger, its LSTMs as com.microsoft DynamicQuantizeLSTM
             (8-bit W and R, transposed) and the projections as MatMulInteger (what the ddddocr
             captcha reader ships as common_old.onnx).

Inputs and outputs are the base model's. `weight_type` is QInt8 or QUInt8, `per_channel` the
quantizer's option. The quantizer is deterministic: the same base model gives the same bytes.
"""
import dataclasses
import tempfile
from pathlib import Path

import onnx

import bert
import crnn
from builder import run_cli

BASES = {"bert": bert, "crnn": crnn}


@dataclasses.dataclass(frozen=True)
class QuantizedConfig:
    base: str = "bert"
    size: str = "test"  # the base model's size
    weight_type: str = "QInt8"
    per_channel: int = 0


CONFIGS = {
    "test": QuantizedConfig(),
    "full": QuantizedConfig(size="full"),
}


def build(cfg):
    from onnxruntime.quantization import QuantType, quantize_dynamic

    base = BASES[cfg.base]
    model = base.build(base.CONFIGS[cfg.size])
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "float.onnx", Path(tmp) / "quantized.onnx"
        onnx.save(model, str(src))
        quantize_dynamic(str(src), str(dst), weight_type=QuantType[cfg.weight_type],
                         per_channel=bool(cfg.per_channel))
        return onnx.load(str(dst))


def sample_inputs(cfg, rng):
    base = BASES[cfg.base]
    return base.sample_inputs(base.CONFIGS[cfg.size], rng)


if __name__ == "__main__":
    run_cli(__doc__, CONFIGS, build, sample_inputs, "quantized")
