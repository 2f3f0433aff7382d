#!/usr/bin/env python3
"""`aotc compile --precision`, `--keep-fp32` and `--accumulate` at compile time (ctest CliPrecision).

On a small model (MatMul with K=128, bias, Relu, Softmax) checks that
  - ascend-910b fp16 stores weights and activations as f16 and keeps the interface f32: the IR
    after lower-precision has f32 inputs/outputs, f16 weights and an f16 MatMul; the package's
    tile plans take f16 operands with f32 cube sums;
  - --keep-fp32 NODE keeps that node f32 with Casts around it (all the core nodes the importer
    made of it: a Gemm's MatMul and bias Add); an unknown name is refused;
  - targets that do not offer a width or compensated sums refuse the flag with one line;
  - mlu370 with --accumulate compensated renders compensated sums (the reduction and the k steps of
    the matrix product, in k steps of 1) that the plain package does not have.

  python3 tests/cli/check_precision.py path/to/aotc
"""
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def small_model(path):
    rng = np.random.default_rng(7)
    w = numpy_helper.from_array(rng.standard_normal((128, 64)).astype(np.float32) / 11, "w")
    b = numpy_helper.from_array(rng.standard_normal(64).astype(np.float32), "b")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"], name="project"),
             helper.make_node("Add", ["m", "b"], ["a"], name="bias"),
             helper.make_node("Relu", ["a"], ["r"], name="relu"),
             helper.make_node("Softmax", ["r"], ["y"], name="softmax", axis=-1)]
    graph = helper.make_graph(nodes, "small", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [32, 128])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [32, 64])], [w, b])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))


def gemm_model(path):
    """A Gemm with a bias, which the importer splits into a MatMul 'fc' and an Add 'fc_Add'."""
    rng = np.random.default_rng(7)
    w = numpy_helper.from_array(rng.standard_normal((16, 128)).astype(np.float32), "gw")
    b = numpy_helper.from_array(rng.standard_normal(16).astype(np.float32), "gb")
    nodes = [helper.make_node("Gemm", ["x", "gw", "gb"], ["g"], name="fc", transB=1),
             helper.make_node("Relu", ["g"], ["y"], name="relu")]
    graph = helper.make_graph(nodes, "gemm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [32, 128])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [32, 16])], [w, b])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))


def integer_model(path):
    """An int32 accumulator dequantized the way decompose-for-target computes 8-bit products: the
    sum converted to float (values past fp16's 2^11 exact integers and its 65504), scaled, then
    requantized (x / s rounded, offset). Only the scaling's result may be stored at 16 bits."""
    s = numpy_helper.from_array(np.array(0.001, np.float32), "s")
    z = numpy_helper.from_array(np.array(3.0, np.float32), "z")
    c = numpy_helper.from_array(np.array(64.0, np.float32), "c")
    nodes = [helper.make_node("Cast", ["acc"], ["acc_f"], name="widen", to=TensorProto.FLOAT),
             helper.make_node("Mul", ["acc_f", "s"], ["y"], name="scale"),
             helper.make_node("Div", ["y", "s"], ["q"], name="divide"),
             helper.make_node("Round", ["q"], ["r"], name="round"),
             helper.make_node("Add", ["r", "z"], ["o"], name="offset"),
             helper.make_node("Add", ["y", "c"], ["v"], name="shift")]
    graph = helper.make_graph(nodes, "integer", [helper.make_tensor_value_info("acc", TensorProto.INT32, [8, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, 16]),
                               helper.make_tensor_value_info("o", TensorProto.FLOAT, [8, 16]),
                               helper.make_tensor_value_info("v", TensorProto.FLOAT, [8, 16])], [s, z, c])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))


failures = []


def check(cond, what):
    print(("ok: " if cond else "FAILED: ") + what)
    if not cond:
        failures.append(what)


def main():
    aotc = sys.argv[1] if len(sys.argv) > 1 else "build/aotc"
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        model = tmp / "small.onnx"
        small_model(model)

        def compile_(target, *flags, out="pkg"):
            return subprocess.run([aotc, "compile", str(model), "-t", target, "-o", str(tmp / out)] + list(flags),
                                  capture_output=True, text=True)

        p = compile_("ascend-910b", "--precision", "fp16", "--print-ir-after", "lower-precision")
        check(p.returncode == 0, "ascend-910b --precision fp16 compiles")
        ir = p.stderr
        check("graph @small(%x: f32[32x128]) -> (%y: f32[32x64])" in ir, "the interface stays f32")
        check(re.search(r"%w_fp16 = const f16\[128x64\]", ir) is not None, "the weight is converted to f16 at compile time")
        check(re.search(r"= MatMul\(%x_fp16, %w_fp16\) : f16\[32x64\]", ir) is not None, "the MatMul takes f16 operands")
        plans = (tmp / "pkg" / "tile_plans.txt").read_text() if p.returncode == 0 else ""
        check("f16 operands, f32 sums" in plans, "the cube plan multiplies f16 with f32 sums")

        p = compile_("ascend-910b", "--precision", "fp16", "--keep-fp32", "project", "--print-ir-after", "lower-precision")
        check(p.returncode == 0 and re.search(r"= MatMul\(%x, %w\) : f32\[32x64\] @project", p.stderr) is not None,
              "--keep-fp32 project keeps the MatMul f32")
        check(re.search(r"Cast\(%m\) \{to = \"f16\"\}", p.stderr) is not None, "its result is cast to f16 for the nodes after it")

        # Every core node of a kept ONNX node stays f32 (light ShuffleNet's logits Gemm was NaN in
        # fp16 when its bias Add was lowered and added values past fp16's range).
        gemm = tmp / "gemm.onnx"
        gemm_model(gemm)
        p = subprocess.run([aotc, "compile", str(gemm), "-t", "ascend-910b", "-o", str(tmp / "gemm_pkg"), "--precision",
                            "fp16", "--keep-fp32", "fc", "--print-ir-after", "lower-precision"],
                           capture_output=True, text=True)
        check(p.returncode == 0 and re.search(r"= Add\(%fc_MatMul, %gb\) : f32\[32x16\] @fc_Add", p.stderr) is not None,
              "--keep-fp32 fc keeps the Add the importer split off the Gemm f32 too")

        # Integer arithmetic carried in floats stays f32 (bert_quantized was NaN in fp16: its
        # int32 sums stored as f16 overflowed); the first non-integral result is lowered.
        integer = tmp / "integer.onnx"
        integer_model(integer)
        p = subprocess.run([aotc, "compile", str(integer), "-t", "ascend-910b", "-o", str(tmp / "integer_pkg"),
                            "--precision", "fp16", "--print-ir-after", "lower-precision"], capture_output=True, text=True)
        check(p.returncode == 0 and re.search(r"= Cast\(%acc\) \{to = \"f32\"\} : f32\[8x16\] @widen", p.stderr) is not None,
              "an int32 converted to float stays f32 at fp16 storage")
        check(re.search(r"= Mul\(%acc_f_fp16, %s_fp16\) : f16\[8x16\] @scale", p.stderr) is not None,
              "its scaled (non-integral) result is stored in f16")
        check(re.search(r"= Div\(%y_fp32, %s\) : f32\[8x16\] @divide", p.stderr) is not None
              and re.search(r"= Round\(%q\) : f32\[8x16\] @round", p.stderr) is not None
              and re.search(r"= Add\(%r, %z\) : f32\[8x16\] @offset", p.stderr) is not None,
              "the value to round, the rounding and the offset stay f32")
        check(re.search(r"= Add\(%y_fp16, %c_fp16\) : f16\[8x16\] @shift", p.stderr) is not None,
              "an activation plus an integer constant is stored in f16 (not integral)")
        if p.returncode != 0 or "@widen" not in p.stderr:
            print(p.stderr[-3000:])

        p = compile_("ascend-910b", "--precision", "fp16", "--keep-fp32", "nosuch")
        check(p.returncode == 1 and "no node named nosuch" in p.stderr and p.stderr.count("\n") == 1,
              "an unknown --keep-fp32 name is refused in one line")
        p = compile_("x86-64", "--precision", "fp16")
        check(p.returncode == 1 and "not offered by target x86-64" in p.stderr and p.stderr.count("\n") == 1,
              "x86-64 refuses --precision fp16 in one line")
        p = compile_("mlu370", "--precision", "bf16")
        check(p.returncode == 1 and "not offered by target mlu370" in p.stderr, "mlu370 refuses bf16")
        p = compile_("ascend-910b", "--keep-fp32", "project")
        check(p.returncode == 1 and "needs --precision" in p.stderr, "--keep-fp32 without --precision is refused")
        p = compile_("x86-64", "--accumulate", "compensated")
        check(p.returncode == 1 and "not offered by target x86-64" in p.stderr, "x86-64 refuses --accumulate compensated")

        p = compile_("mlu370", out="plain")
        q = compile_("mlu370", "--accumulate", "compensated", out="comp")
        check(p.returncode == 0 and q.returncode == 0, "mlu370 compiles with plain and compensated sums")
        if p.returncode == 0 and q.returncode == 0:
            plain = (tmp / "plain" / "src" / "small_kernels.mlu").read_text()
            comp = (tmp / "comp" / "src" / "small_kernels.mlu").read_text()
            check("aotc_bang_reduce_sum_compensated(" in comp
                  and "aotc_bang_reduce_sum_compensated(" not in plain.split("__mlu_global__", 1)[1],
                  "the compensated package's Softmax sums with compensation")
            body = comp.split("__mlu_global__", 1)[1]
            check("aotc_bang_matmul_step_compensated(" in body and "aotc_bang_finish_sum(" in body,
                  "its MatMul takes split-operand k steps and finishes the block's sum to 24 bits")
            check("K in 128 steps of 1" in (tmp / "comp" / "tile_plans.txt").read_text(),
                  "its MatMul takes k steps of 1")
    print(f"{len(failures)} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
