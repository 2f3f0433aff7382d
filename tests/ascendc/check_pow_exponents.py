#!/usr/bin/env python3
"""Pow with constant exponents on the NPU vector units, against numpy (run by scripts/test.sh).

The vector units have no pow instruction: the tile lowering (codegen/tile/vector_lowering.cpp)
multiplies for integer exponents (repeated squaring, a reciprocal for negative ones) and computes
exp(e ln x) for the others. The cases that tell the two apart are negative bases (x^3 of -2 is
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
    onnx.save(model, str(work / "pow.onnx"))
    (work / "x.pb").write_bytes(numpy_helper.from_array(x, "x").SerializeToString())

    steps = [[args.aotc, "compile", str(work / "pow.onnx"), "--target", args.target, "-o", str(work / "pkg"),
              "--name", "pow_exponents"],
             ["cmake", "-S", str(work / "pkg"), "-B", str(work / "build"), "-G", "Ninja",
              "-DCMAKE_BUILD_TYPE=Release"] + DEFINES.get(args.target, []),
             ["cmake", "--build", str(work / "build")],
             [str(work / "build" / "pow_exponents_run"), "--input", str(work / "x.pb"), "--output-dir",
              str(work / "out")]]
    for cmd in steps:
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            print(f"FAILED: {' '.join(cmd[:3])}: exit {p.returncode}\n{(p.stdout + p.stderr)[-2000:]}")
            return 1

    failures = 0
    with np.errstate(all="ignore"):
        for k, e in enumerate(EXPONENTS):
            want = np.power(x.astype(np.float64), e)
            got = numpy_helper.to_array(onnx.load_tensor(str(work / "out" / f"output_{k}.pb"))).astype(np.float64)
            same_special = np.array_equal(np.isnan(got), np.isnan(want)) and \
                np.array_equal(np.isposinf(got), np.isposinf(want)) and np.array_equal(np.isneginf(got), np.isneginf(want))
            finite = np.isfinite(want) & np.isfinite(got)
            rel = np.abs(got[finite] - want[finite]) / np.maximum(np.abs(want[finite]), 1e-30)
            worst = float(rel.max()) if rel.size else 0.0
            ok = same_special and worst <= 1e-5
            failures += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {args.target}: x^{e:g}: worst relative error {worst:.1e}"
                  + ("" if same_special else f"; NaN/inf differ: got {got.tolist()}, want {want.tolist()}"))
    print(f"check_pow_exponents ({args.target}): {len(EXPONENTS) - failures} of {len(EXPONENTS)} exponents match numpy")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
