#!/usr/bin/env python3
"""Writes the small models `aotc verify` is tested on (tests/verify/check_verify.py), each built
to diverge at a known node on a known target and precision, or nowhere, and their input x.pb:
uniform in [0.5, 1), so that relative errors are not dominated by values near zero.

  cancel.onnx    Transpose, x + 64 (kernel 'shift'), Transpose, - 64 ('unshift'), Softmax:
                 mantissa bits lost in 'shifted' show up as a large relative error in 'unshifted'
                 (fp16 storage: first divergent 'unshift').
  cancel_fused   the same without the middle Transpose: one fused kernel computes x + 64 - 64,
                 exact in fp32 but not with mlu370's 20-bit mantissas (first divergent 'unshift').
  denormal.onnx  x * 1e-20 * 1e-19 ('tiny', subnormal results), Transpose, * 1e19 * 1e20: mlu370
                 flushes subnormals to zero (first divergent 'tiny').
  overflow.onnx  x * 1e5 ('big', up to 1e5 > 65504), Transpose, * 1e-5: fp16 storage overflows to
                 inf (first divergent 'big').
  relu.onnx      Transpose, Relu ('r'), Transpose: the --poison-arena check injects a bug into 'r'.
  plain.onnx     MatMul, Add, Relu, MatMul, Softmax with weights of moderate size: diverges nowhere.
"""
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(out, name, nodes, consts, x_shape, y_shape):
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)],
        [numpy_helper.from_array(np.asarray(v, np.float32), k) for k, v in consts.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(out / f"{name}.onnx"))


def main():
    main_into(Path(sys.argv[1] if len(sys.argv) > 1 else "."))


def main_into(out):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    node = helper.make_node
    T = lambda i, o, n: node("Transpose", [i], [o], name=n, perm=[1, 0])
    save(out, "cancel", [T("x", "t", "t"), node("Add", ["t", "c"], ["shifted"], name="shift"),
                         T("shifted", "shifted_t", "shifted_t"),
                         node("Sub", ["shifted_t", "c"], ["unshifted"], name="unshift"),
                         node("Softmax", ["unshifted"], ["y"], name="soft", axis=1)],
         {"c": 64.0}, [8, 64], [8, 64])
    save(out, "cancel_fused", [T("x", "t", "t"), node("Add", ["t", "c"], ["shifted"], name="shift"),
                               node("Sub", ["shifted", "c"], ["unshifted"], name="unshift"),
                               node("Softmax", ["unshifted"], ["y"], name="soft", axis=1)],
         {"c": 64.0}, [8, 64], [64, 8])
    save(out, "denormal", [T("x", "t", "t"), node("Mul", ["t", "a"], ["small"], name="scale_down"),
                           node("Mul", ["small", "b"], ["tiny"], name="tiny"),
                           T("tiny", "tiny_t", "tiny_t"), node("Mul", ["tiny_t", "c"], ["up"], name="scale_up"),
                           node("Mul", ["up", "d"], ["y"], name="restore")],
         {"a": 1e-20, "b": 1e-19, "c": 1e19, "d": 1e20}, [8, 64], [8, 64])
    save(out, "overflow", [T("x", "t", "t"), node("Mul", ["t", "a"], ["big"], name="big"),
                           T("big", "big_t", "big_t"), node("Mul", ["big_t", "b"], ["y"], name="small")],
         {"a": 1e5, "b": 1e-5}, [8, 64], [8, 64])
    rng = np.random.default_rng(1)
    save(out, "plain", [node("MatMul", ["x", "w1"], ["h"], name="fc1"), node("Add", ["h", "b1"], ["hb"], name="bias1"),
                        node("Relu", ["hb"], ["r"], name="relu1"), node("MatMul", ["r", "w2"], ["z"], name="fc2"),
                        node("Softmax", ["z"], ["y"], name="soft", axis=1)],
         {"w1": rng.uniform(-0.2, 0.2, (64, 32)), "b1": rng.uniform(0, 0.1, (32,)),
          "w2": rng.uniform(-0.2, 0.2, (32, 16))}, [8, 64], [8, 16])
    save(out, "relu", [T("x", "t", "t"), node("Relu", ["t"], ["r"], name="r"), T("r", "y", "back")],
         {}, [8, 64], [8, 64])
    x = np.random.default_rng(0).uniform(0.5, 1.0, (8, 64)).astype(np.float32)
    onnx.save_tensor(numpy_helper.from_array(x, "x"), str(out / "x.pb"))
    onnx.save_tensor(numpy_helper.from_array(x.reshape(16, 32), "x"), str(out / "x_wrong.pb"))


if __name__ == "__main__":
    main()
