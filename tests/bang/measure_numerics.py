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
import time
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
    ap.add_argument("--compensated", action="store_true",
                    help="also build the stack with --accumulate compensated and print the share of "
                         "the mlu370-vs-IEEE gap it closes")
    ap.add_argument("--require-closed", type=float, default=None, metavar="PERCENT",
                    help="with --compensated: exit 1 unless the last output's gap closed is at least this")
    args = ap.parse_args()
    aotc, work = Path(args.aotc).resolve(), Path(args.work).resolve()
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    names = stack(work / "stack.onnx", args.layers, args.width, args.batch, args.every)
    x = np.random.default_rng(5).standard_normal((args.batch, args.width)).astype(np.float32)
    (work / "x.pb").write_bytes(numpy_helper.from_array(x, "x").SerializeToString())
    ref = ort.InferenceSession(str(work / "stack.onnx"), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    # Packages: plain sums and, with --compensated, --accumulate compensated.
    variants = [("plain", [])] + ([("compensated", ["--accumulate", "compensated"])] if args.compensated else [])
    for kind, flags in variants:
        p = run([aotc, "compile", work / "stack.onnx", "--target", "mlu370", "-o", work / f"pkg_{kind}",
                 "--name", "stack"] + flags)
        if p.returncode != 0:
            print(p.stderr)
            return 1
    errors, seconds = {}, {}
    for kind, _ in variants:
        for numerics in ("ieee", "mlu370"):
            b = work / f"build_{kind}_{numerics}"
            p = run(["cmake", "-S", work / f"pkg_{kind}", "-B", b, "-DCMAKE_BUILD_TYPE=Release",
                     f"-DAOTC_MLU_NUMERICS={numerics}"])
            if p.returncode == 0:
                p = run(["cmake", "--build", b, "-j2"])
            if p.returncode != 0:
                print(p.stdout[-2000:], p.stderr[-2000:])
                return 1
            out = work / f"out_{kind}_{numerics}"
            t0 = time.time()
            p = run([b / "stack_run", "--input", work / "x.pb", "--output-dir", out], timeout=1200)
            seconds[kind, numerics] = time.time() - t0
            if p.returncode != 0:
                print(p.stderr[-2000:])
                return 1
            errs = []
            for k, r in enumerate(ref):
                t = onnx.TensorProto()
                t.ParseFromString((out / f"output_{k}.pb").read_bytes())
                y = numpy_helper.to_array(t).astype(np.float64)
                errs.append(float(np.linalg.norm(y - r) / np.linalg.norm(r)))
            errors[kind, numerics] = errs
    print(f"deep stack: {args.layers} x (MatMul {args.width}x{args.width} + bias + Relu + residual + "
          f"LayerNorm), batch {args.batch}; relative L2 error vs onnxruntime {ort.__version__}")
    if not args.compensated:
        print("| after layer | ieee | mlu370 |")
        print("|---|---|---|")
        for k, n in enumerate(names):
            print(f"| {int(n[1:]) + 1} | {errors['plain', 'ieee'][k]:.2e} | {errors['plain', 'mlu370'][k]:.2e} |")
        return 0
    # The gap: what the MLU370 model loses against IEEE; closed: the share compensation wins back.
    print("| after layer | ieee | mlu370 | mlu370, compensated | gap closed | ieee, compensated |")
    print("|---|---|---|---|---|---|")
    for k, n in enumerate(names):
        ieee, mlu = errors["plain", "ieee"][k], errors["plain", "mlu370"][k]
        comp = errors["compensated", "mlu370"][k]
        closed = (mlu - comp) / (mlu - ieee) if mlu > ieee else float("nan")
        print(f"| {int(n[1:]) + 1} | {ieee:.2e} | {mlu:.2e} | {comp:.2e} | {100 * closed:.0f}% | "
              f"{errors['compensated', 'ieee'][k]:.2e} |")
    closed_last = None
    ieee, mlu = errors["plain", "ieee"][-1], errors["plain", "mlu370"][-1]
    if mlu > ieee:
        closed_last = 100 * (mlu - errors["compensated", "mlu370"][-1]) / (mlu - ieee)
    print(f"runner wall time (emulation, one run): plain {seconds['plain', 'mlu370']:.2f} s, compensated "
          f"{seconds['compensated', 'mlu370']:.2f} s (mlu370 numerics)")
    if args.require_closed is not None and not (closed_last is not None and closed_last >= args.require_closed):
        print(f"FAILED: compensation closed {closed_last}% of the gap, less than {args.require_closed}%")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
