#!/usr/bin/env python3
"""Checks the error paths of ascend-910b packages end to end, on aotc's host emulation of Ascend C.

  1. A model whose ops have no Ascend C kernel is refused at compile time (exit code 2), the
     message listing the op types and naming the nodes.
  2. A package built with AOTC_ASCEND_UB_BYTES below what a kernel plans runs to a clean failure:
     the runner exits non-zero with a message naming the kernel, its node, the buffer, the bytes
     it needs and the capacity -- never a crash.
  3. A package built with less device memory (AOTC_ASCEND_HBM_BYTES) than its weights need fails
     at init with a message giving the sizes.
  4. The same package built with the defaults runs and matches numpy.

Usage: check_ascend_package.py --aotc build/aotc --work build/ascend_package_checks
"""
import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

FAILURES = []


def check(condition, what):
    print(f"{'ok  ' if condition else 'FAIL'} {what}", flush=True)
    if not condition:
        FAILURES.append(what)


def save(model, path):
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))
    return path


def softmax_model(path):
    """x[64, 1000] -> MatMul(W[1000, 1000]) -> Softmax: 4 MB of weights, rows of 1000 floats."""
    rng = np.random.default_rng(7)
    w = numpy_helper.from_array((rng.standard_normal((1000, 1000)) * 0.03).astype(np.float32), "w")
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["h"], name="project"),
         helper.make_node("Softmax", ["h"], ["y"], axis=-1, name="probabilities")],
        "softmax_rows", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 1000])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64, 1000])], [w])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    return numpy_helper.to_array(w)


def unsupported_model(path):
    # Ops with no tile plan on this target: a cubic Resize (nearest ones with integer factors are
    # box copies) and a TopK.
    g = helper.make_graph(
        [helper.make_node("Resize", ["x", "", "scales"], ["r"], name="up1", mode="cubic"),
         helper.make_node("TopK", ["r", "k"], ["y", "i"], name="top1", axis=3)],
        "refused", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 5, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 10, 2]),
         helper.make_tensor_value_info("i", TensorProto.INT64, [1, 1, 10, 2])],
        [numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales"),
         numpy_helper.from_array(np.array([2], np.int64), "k")])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)


def run(cmd, **kw):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)


def build(pkg, build_dir, options):
    p = run(["cmake", "-S", pkg, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release"] + options)
    if p.returncode == 0:
        p = run(["cmake", "--build", build_dir, "-j2"])
    check(p.returncode == 0, f"build {build_dir.name} ({' '.join(options) or 'defaults'})")
    if p.returncode != 0:
        print(p.stdout[-3000:], p.stderr[-3000:])
    return p.returncode == 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--aotc", default="build/aotc")
    ap.add_argument("--work", default="build/ascend_package_checks")
    args = ap.parse_args()
    aotc, work = Path(args.aotc).resolve(), Path(args.work).resolve()
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)

    # 1. Refusal at compile time.
    unsupported_model(work / "refused.onnx")
    p = run([aotc, "compile", work / "refused.onnx", "--target", "ascend-910b", "-o", work / "refused"])
    msg = " ".join(p.stderr.split())
    check(p.returncode == 2, f"an unsupported model exits with 2 (got {p.returncode})")
    check("target ascend-910b cannot compile 2 of 2 nodes (op types: Resize, TopK)" in msg and
          "node 'up1'" in msg and "node 'top1'" in msg,
          f"the refusal lists the op types and names the nodes: {msg[:400]}")
    check(not (work / "refused").exists(), "no package is left behind")

    # The package of the other checks.
    w = softmax_model(work / "softmax.onnx")
    pkg = work / "softmax"
    p = run([aotc, "compile", work / "softmax.onnx", "--target", "ascend-910b", "-o", pkg,
             "--name", "softmax"])
    check(p.returncode == 0, f"compile the softmax model: {p.stderr.strip()[:300]}")
    if p.returncode != 0:
        return 1
    plans = (pkg / "tile_plans.txt").read_text()
    check("tile plan 'softmax_rows'" in plans and "tile plan 'matmul'" in plans,
          "tile_plans.txt shows the softmax rows and the matmul kernels")
    x = np.random.default_rng(3).standard_normal((64, 1000)).astype(np.float32)
    (work / "x.pb").write_bytes(numpy_helper.from_array(x, "x").SerializeToString())

    # 2. A UB smaller than the softmax kernel plans: a status naming the kernel and buffer.
    if build(pkg, work / "build_small_ub", ["-DAOTC_ASCEND_UB_BYTES=4096"]):
        p = run([work / "build_small_ub" / "softmax_run", "--input", work / "x.pb", "--output-dir",
                 work / "out_small_ub"], timeout=300)
        msg = " ".join((p.stderr + p.stdout).split())
        check(p.returncode not in (0,) and p.returncode > 0,
              f"the run fails with a status, not a crash (exit {p.returncode})")
        check("kernel k1_softmax_softmax_rows" in msg and "of node 'probabilities'" in msg,
              f"the message names the kernel and its node: {msg[:600]}")
        check("AOTC_ASCEND_UB_BYTES" in msg and "holds 4096 B" in msg and "on-chip buffer '" in msg,
              "the message names the buffer, the bytes and the capacity")

    # 3. Less device memory than the weights: init fails with the sizes.
    if build(pkg, work / "build_small_hbm", ["-DAOTC_ASCEND_HBM_BYTES=1000000"]):
        p = run([work / "build_small_hbm" / "softmax_run", "--input", work / "x.pb", "--output-dir",
                 work / "out_small_hbm"], timeout=300)
        msg = " ".join((p.stderr + p.stdout).split())
        check(p.returncode > 0, f"init fails with a status (exit {p.returncode})")
        check(re.search(r"needs \d+ bytes of device memory \(weights 4000\d\d\d, arena \d+, inputs and "
                        r"outputs \d+\), more than the 1000000 bytes free", msg) is not None,
              f"the message gives the sizes: {msg[:500]}")

    # 4. The defaults: it runs and matches numpy.
    if build(pkg, work / "build", []):
        p = run([work / "build" / "softmax_run", "--input", work / "x.pb", "--output-dir", work / "out"],
                timeout=300)
        check(p.returncode == 0, f"the package runs: {p.stderr.strip()[:300]}")
        if p.returncode == 0:
            t = onnx.TensorProto()
            t.ParseFromString((work / "out" / "output_0.pb").read_bytes())
            y = numpy_helper.to_array(t)
            h = x.astype(np.float64) @ w.astype(np.float64)
            e = np.exp(h - h.max(axis=1, keepdims=True))
            ref = e / e.sum(axis=1, keepdims=True)
            err = float(np.linalg.norm(y - ref) / np.linalg.norm(ref))
            check(err < 1e-5, f"the output matches numpy (relative L2 error {err:.2e})")

    print(f"check_ascend_package: {len(FAILURES)} failure(s)")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
