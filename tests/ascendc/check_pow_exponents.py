#!/usr/bin/env python3
"""Pow with constant exponents on the NPU vector units, against numpy (run by scripts/test.sh).

The vector units have no pow instruction: the tile lowering (codegen/tile/vector_lowering.cpp)
multiplies for integer exponents (repeated squaring, a reciprocal for negative ones) and computes
exp(e ln x) for the others; a tensor exponent takes exp(y ln|x|) with the sign and NaN of a
negative base made arithmetically (parity through floor in i32), on targets whose vector unit
converts f32 to i32 (ascend-910b; mlu370 refuses it at compile time, which is checked too). The cases that tell the two apart are negative bases (x^3 of -2 is
-8, while exp(3 ln -2) is NaN), zero (x^-2 is inf, x^0 is 1, x^0.75 is 0) and negative
non-integer exponents (LRN's x^-0.75). One package per target holds every exponent; its outputs
must match numpy within 1e-5 relative, with NaN and inf exactly where numpy has them.

  python3 tests/ascendc/check_pow_exponents.py --aotc build/aotc --target ascend-910b --work DIR
"""
import argparse
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

EXPONENTS = [0.0, 1.0, 2.0, 3.0, 4.0, 7.0, -1.0, -2.0, -3.0, 0.5, -0.5, 0.75, -0.75, 1.5, 2.5, -2.25]
DEFINES = {"mlu370": ["-DAOTC_MLU_NUMERICS=ieee"]}
TENSOR_EXPONENT_REFUSED = {"mlu370"}
# (base, exponent) pairs for the tensor exponent: negative bases with odd, even and non-integer
# exponents, zeros, the clamp at 2^24, infinities.
PAIRS = [(-2, 3), (-2, 2), (-2, -3), (-2, -2), (-2, 0.5), (-8, 1 / 3), (-1.5, 7), (-1, 1e9 + 1), (-3, 2**24 + 2),
         (0, 0), (0, 2), (0, -2), (0, 0.5), (-0.0, 3), (2, 0), (2, -1), (10, 30), (10, -30), (0.5, 100),
         (3, 2.5), (1e-3, -1.5), (-1e-3, 3), (float("inf"), 2), (float("inf"), -2), (-float("inf"), 3),
         (7, 1e-30), (-7, 0), (1.0, 123.456), (40, 20), (-40, 21)]


def compare(got, want):
    """Whether got matches want: NaN and infinities at the same places, 1e-5 relative elsewhere."""
    same_special = np.array_equal(np.isnan(got), np.isnan(want)) and \
        np.array_equal(np.isposinf(got), np.isposinf(want)) and np.array_equal(np.isneginf(got), np.isneginf(want))
    finite = np.isfinite(want) & np.isfinite(got)
    rel = np.abs(got[finite] - want[finite]) / np.maximum(np.abs(want[finite]), 1e-30)
    return same_special, float(rel.max()) if rel.size else 0.0


def run_package(args, work, model, name, inputs):
    """Compiles, builds and runs `model`; returns (outputs, None) or (None, the compiler's result)."""
    onnx.save(model, str(work / f"{name}.onnx"))
    files = []
    for k, (input_name, value) in enumerate(inputs):
        files += ["--input", str(work / f"{name}_in{k}.pb")]
        (work / f"{name}_in{k}.pb").write_bytes(numpy_helper.from_array(value, input_name).SerializeToString())
    p = subprocess.run([args.aotc, "compile", str(work / f"{name}.onnx"), "--target", args.target, "-o",
                        str(work / name), "--name", name], capture_output=True, text=True)
    if p.returncode != 0:
        return None, p
    for cmd in (["cmake", "-S", str(work / name), "-B", str(work / f"build_{name}"), "-G", "Ninja",
                 "-DCMAKE_BUILD_TYPE=Release"] + DEFINES.get(args.target, []),
                ["cmake", "--build", str(work / f"build_{name}")],
                [str(work / f"build_{name}" / f"{name}_run")] + files + ["--output-dir", str(work / f"out_{name}")]):
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"FAILED: {' '.join(cmd[:3])}: exit {r.returncode}\n{(r.stdout + r.stderr)[-2000:]}")
    outputs = sorted((work / f"out_{name}").glob("output_*.pb"), key=lambda f: int(f.stem.split("_")[1]))
    return [numpy_helper.to_array(onnx.load_tensor(str(f))) for f in outputs], None


def tensor_exponent(args, work):
    """Pow(x, y) with y a graph input: 0 or 1 failures."""
    x = np.array([b for b, _ in PAIRS], dtype=np.float32)
    y = np.array([e for _, e in PAIRS], dtype=np.float32)
    graph = helper.make_graph([helper.make_node("Pow", ["x", "y"], ["z"], name="pow_tensor")], "pow_tensor",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [x.size]),
                               helper.make_tensor_value_info("y", TensorProto.FLOAT, [y.size])],
                              [helper.make_tensor_value_info("z", TensorProto.FLOAT, [x.size])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    outputs, refused = run_package(args, work, model, "pow_tensor", [("x", x), ("y", y)])
    if args.target in TENSOR_EXPONENT_REFUSED:
        ok = refused is not None and refused.returncode == 2 and "constant exponents only" in refused.stderr
        print(f"{'ok  ' if ok else 'FAIL'} {args.target}: a tensor exponent is refused at compile time"
              + ("" if ok else f" (exit {refused.returncode if refused else 0})"))
        return 0 if ok else 1
    if refused is not None:
        print(f"FAIL {args.target}: Pow with a tensor exponent does not compile: {refused.stderr.strip()}")
        return 1
    with np.errstate(all="ignore"):
        want = np.power(x.astype(np.float64), y.astype(np.float64)).astype(np.float32).astype(np.float64)
    got = outputs[0].astype(np.float64)
    same_special, worst = compare(got, want)
    ok = same_special and worst <= 1e-5
    print(f"{'ok  ' if ok else 'FAIL'} {args.target}: x^y for {len(PAIRS)} pairs: worst relative error {worst:.1e}"
          + ("" if same_special else "; NaN/inf differ: " + ", ".join(
              f"{b:g}^{e:g} = {g:g} (want {w:g})" for (b, e), g, w in zip(PAIRS, got, want)
              if not (np.isnan(g) and np.isnan(w)) and not (g == w) and not (np.isfinite(g) and np.isfinite(w)))))
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aotc", default="build/aotc")
    ap.add_argument("--target", default="ascend-910b")
    ap.add_argument("--work", default="build/pow_exponents")
    args = ap.parse_args()
    work = Path(args.work).resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)

    x = np.array([-3.0, -2.0, -1.5, -1.0, -0.5, -0.0, 0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 7.5, 1e-3, 40.0],
                 dtype=np.float32)
    nodes, outputs = [], []
    for k, e in enumerate(EXPONENTS):
        nodes.append(helper.make_node("Constant", [], [f"e{k}"],
                                      value=helper.make_tensor(f"ev{k}", TensorProto.FLOAT, [], [e])))
        nodes.append(helper.make_node("Pow", ["x", f"e{k}"], [f"y{k}"], name=f"pow_{k}"))
        outputs.append(helper.make_tensor_value_info(f"y{k}", TensorProto.FLOAT, [x.size]))
    graph = helper.make_graph(nodes, "pow_exponents", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [x.size])],
                              outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    outputs, refused = run_package(args, work, model, "pow_exponents", [("x", x)])
    if refused is not None:
        print(f"FAILED: constant exponents do not compile: {refused.stderr.strip()}")
        return 1

    failures = tensor_exponent(args, work)
    with np.errstate(all="ignore"):
        for k, e in enumerate(EXPONENTS):
            want = np.power(x.astype(np.float64), e)
            same_special, worst = compare(outputs[k].astype(np.float64), want)
            ok = same_special and worst <= 1e-5
            failures += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {args.target}: x^{e:g}: worst relative error {worst:.1e}"
                  + ("" if same_special else f"; NaN/inf differ: got {outputs[k].tolist()}, want {want.tolist()}"))
    print(f"check_pow_exponents ({args.target}): {failures} failures ({len(EXPONENTS)} constant exponents, "
          f"{len(PAIRS)} base and exponent pairs)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
