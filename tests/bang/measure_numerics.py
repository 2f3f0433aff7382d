#!/usr/bin/env python3
"""Measures the error of the MLU370 numeric model against onnxruntime on a deep stack.

Builds a residual stack of `--layers` blocks (h = LayerNorm(h + Relu(h W_i + b_i)), width
`--width`, batch `--batch`, seeded weights), compiles it for mlu370 once, builds the package
with -DAOTC_MLU_NUMERICS=ieee and =mlu370, runs both on the same input and prints the relative L2
error of each against onnxruntime after every --every layers (the stack's outputs), so the growth
of the error with depth is visible. docs/bang.md quotes its output.

Usage: measure_numerics.py --aotc build/aotc --work build/mlu_numerics [--layers 32]
"""
import argparse
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper


def stack(path, layers, width, batch, every):
    rng = np.random.default_rng(11)
    nodes, inits, outputs = [], [], []
    h = "x"
    for i in range(layers):
        w = (rng.standard_normal((width, width)) / np.sqrt(width)).astype(np.float32)
        b = (rng.standard_normal(width) * 0.1).astype(np.float32)
        g = (1 + rng.standard_normal(width) * 0.1).astype(np.float32)
        beta = (rng.standard_normal(width) * 0.1).astype(np.float32)
        inits += [numpy_helper.from_array(a, f"{n}{i}") for a, n in ((w, "w"), (b, "b"), (g, "g"), (beta, "beta"))]
        nodes += [helper.make_node("MatMul", [h, f"w{i}"], [f"m{i}"], name=f"matmul{i}"),
                  helper.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}"], name=f"bias{i}"),
                  helper.make_node("Relu", [f"a{i}"], [f"r{i}"], name=f"relu{i}"),
                  helper.make_node("Add", [h, f"r{i}"], [f"s{i}"], name=f"residual{i}"),
                  helper.make_node("LayerNormalization", [f"s{i}", f"g{i}", f"beta{i}"], [f"h{i}"],
                                   name=f"norm{i}", axis=-1, epsilon=1e-5)]
        h = f"h{i}"
        if (i + 1) % every == 0 or i + 1 == layers:
            outputs.append(helper.make_tensor_value_info(h, TensorProto.FLOAT, [batch, width]))
    graph = helper.make_graph(nodes, "deep_stack",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, width])],
                              outputs, inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return [o.name for o in outputs]


def run(cmd, **kw):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--aotc", default="build/aotc")
    ap.add_argument("--work", default="build/mlu_numerics")
    ap.add_argument("--layers", type=int, default=32)
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--every", type=int, default=8)
    args = ap.parse_args()
    aotc, work = Path(args.aotc).resolve(), Path(args.work).resolve()
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    names = stack(work / "stack.onnx", args.layers, args.width, args.batch, args.every)
    x = np.random.default_rng(5).standard_normal((args.batch, args.width)).astype(np.float32)
    (work / "x.pb").write_bytes(numpy_helper.from_array(x, "x").SerializeToString())
    ref = ort.InferenceSession(str(work / "stack.onnx"), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    p = run([aotc, "compile", work / "stack.onnx", "--target", "mlu370", "-o", work / "pkg", "--name", "stack"])
    if p.returncode != 0:
        print(p.stderr)
        return 1
    errors = {}
    for numerics in ("ieee", "mlu370"):
        b = work / f"build_{numerics}"
        p = run(["cmake", "-S", work / "pkg", "-B", b, "-DCMAKE_BUILD_TYPE=Release", f"-DAOTC_MLU_NUMERICS={numerics}"])
        if p.returncode == 0:
            p = run(["cmake", "--build", b, "-j2"])
        if p.returncode != 0:
            print(p.stdout[-2000:], p.stderr[-2000:])
            return 1
        out = work / f"out_{numerics}"
        p = run([b / "stack_run", "--input", work / "x.pb", "--output-dir", out], timeout=1200)
        if p.returncode != 0:
            print(p.stderr[-2000:])
            return 1
        errs = []
        for k, r in enumerate(ref):
            t = onnx.TensorProto()
            t.ParseFromString((out / f"output_{k}.pb").read_bytes())
            y = numpy_helper.to_array(t).astype(np.float64)
            errs.append(float(np.linalg.norm(y - r) / np.linalg.norm(r)))
        errors[numerics] = errs
    print(f"deep stack: {args.layers} x (MatMul {args.width}x{args.width} + bias + Relu + residual + "
          f"LayerNorm), batch {args.batch}; relative L2 error vs onnxruntime {ort.__version__}")
    print("| after layer | ieee | mlu370 |")
    print("|---|---|---|")
    for k, n in enumerate(names):
        print(f"| {int(n[1:]) + 1} | {errors['ieee'][k]:.2e} | {errors['mlu370'][k]:.2e} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
