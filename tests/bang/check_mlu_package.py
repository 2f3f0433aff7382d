#!/usr/bin/env python3
"""Checks the error paths and the numeric model of mlu370 packages end to end, on aotc's host
emulation of BANG C and CNRT.

  1. A model whose ops have no BANG C kernel is refused at compile time (exit code 2), the
     message listing the op types and naming the nodes; a float64 model is refused naming its
     nodes.
  2. A package built with AOTC_MLU_NRAM_BYTES below what a kernel plans runs to a clean failure:
     the runner exits non-zero with a message naming the kernel, its node, the memory, the bytes
     and the capacity macro -- never a crash.
  3. A package built with less device memory (AOTC_MLU_DDR_BYTES) than its weights need fails at
     init with a message giving the sizes.
  4. Built with -DAOTC_MLU_NUMERICS=ieee it matches numpy to fp32 accuracy; built with the
     defaults (the MLU370 numeric model) it still matches to 1e-3 but measurably worse than IEEE
     (the model is applied end to end).

Usage: check_mlu_package.py --aotc build/aotc --work build/mlu_package_checks
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


def double_model(path):
    g = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["s"], name="sum64"),
         helper.make_node("Mul", ["s", "b"], ["y"], name="product64")],
        "doubles", [helper.make_tensor_value_info("a", TensorProto.DOUBLE, [4]),
                    helper.make_tensor_value_info("b", TensorProto.DOUBLE, [4])],
        [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [4])])
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
    ap.add_argument("--work", default="build/mlu_package_checks")
    args = ap.parse_args()
    aotc, work = Path(args.aotc).resolve(), Path(args.work).resolve()
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)

    # 1. Refusals at compile time.
    unsupported_model(work / "refused.onnx")
    p = run([aotc, "compile", work / "refused.onnx", "--target", "mlu370", "-o", work / "refused"])
    msg = " ".join(p.stderr.split())
    check(p.returncode == 2, f"an unsupported model exits with 2 (got {p.returncode})")
    check("target mlu370 cannot compile 2 of 2 nodes (op types: Resize, TopK)" in msg and
          "node 'up1'" in msg and "node 'top1'" in msg,
          f"the refusal lists the op types and names the nodes: {msg[:400]}")
    check(not (work / "refused").exists(), "no package is left behind")
    double_model(work / "doubles.onnx")
    p = run([aotc, "compile", work / "doubles.onnx", "--target", "mlu370", "-o", work / "doubles"])
    msg = " ".join(p.stderr.split())
    # (Add and Mul fuse into one node, named after the last.)
    check(p.returncode == 2 and "float64 is not computed on the MLU370" in msg and "node 'product64'" in msg,
          f"a float64 model is refused naming its nodes (exit {p.returncode}): {msg[:400]}")

    # The package of the other checks.
    w = softmax_model(work / "softmax.onnx")
    pkg = work / "softmax"
    p = run([aotc, "compile", work / "softmax.onnx", "--target", "mlu370", "-o", pkg, "--name", "softmax"])
    check(p.returncode == 0, f"compile the softmax model: {p.stderr.strip()[:300]}")
    if p.returncode != 0:
        return 1
    plans = (pkg / "tile_plans.txt").read_text()
    check("tile plan 'softmax_rows'" in plans and "tile plan 'matmul'" in plans,
          "tile_plans.txt shows the softmax rows and the matmul kernels")
    src = (pkg / "src" / "softmax_kernels.mlu").read_text()
    check("__mlu_global__ void" in src and "__bang_matmul(" in src and "__memcpy_async(" in src and
          "<<<dim, type, queue>>>" in src and "__bang_div(" not in src.replace("aotc_bang_div(", ""),
          "the kernels are BANG C: __mlu_global__, __memcpy_async, __bang_matmul, <<<>>>, no __bang_div")
    x = np.random.default_rng(3).standard_normal((64, 1000)).astype(np.float32)
    (work / "x.pb").write_bytes(numpy_helper.from_array(x, "x").SerializeToString())

    # 2. Less NRAM than the softmax kernel plans: a status naming the kernel and the memory.
    if build(pkg, work / "build_small_nram", ["-DAOTC_MLU_NRAM_BYTES=4096"]):
        p = run([work / "build_small_nram" / "softmax_run", "--input", work / "x.pb", "--output-dir",
                 work / "out_small_nram"], timeout=300)
        msg = " ".join((p.stderr + p.stdout).split())
        check(p.returncode > 0, f"the run fails with a status, not a crash (exit {p.returncode})")
        check(re.search(r"kernel k\d+_\w+ \(src/softmax_kernels\.mlu:\d+\) of node '(project|probabilities)'", msg)
              is not None, f"the message names the kernel and its node: {msg[:600]}")
        check("AOTC_MLU_NRAM_BYTES" in msg and "more than the 4096 bytes there are" in msg,
              "the message names the memory, the bytes and the capacity macro")

    # 3. Less device memory than the weights: init fails with the sizes.
    if build(pkg, work / "build_small_ddr", ["-DAOTC_MLU_DDR_BYTES=1000000"]):
        p = run([work / "build_small_ddr" / "softmax_run", "--input", work / "x.pb", "--output-dir",
                 work / "out_small_ddr"], timeout=300)
        msg = " ".join((p.stderr + p.stdout).split())
        check(p.returncode > 0, f"init fails with a status (exit {p.returncode})")
        check(re.search(r"needs \d+ bytes of device memory \(weights 4000\d\d\d, arena \d+, inputs and "
                        r"outputs \d+\), more than the 1000000 bytes free", msg) is not None,
              f"the message gives the sizes: {msg[:500]}")

    # 4. IEEE and the MLU370 numeric model against numpy.
    h = x.astype(np.float64) @ w.astype(np.float64)
    e = np.exp(h - h.max(axis=1, keepdims=True))
    ref = e / e.sum(axis=1, keepdims=True)
    errors = {}
    for numerics in ("ieee", "mlu370"):
        bdir = work / f"build_{numerics}"
        if not build(pkg, bdir, [f"-DAOTC_MLU_NUMERICS={numerics}"]):
            continue
        out = work / f"out_{numerics}"
        p = run([bdir / "softmax_run", "--input", work / "x.pb", "--output-dir", out], timeout=600)
        check(p.returncode == 0, f"the package runs ({numerics}): {p.stderr.strip()[:300]}")
        if p.returncode == 0:
            t = onnx.TensorProto()
            t.ParseFromString((out / "output_0.pb").read_bytes())
            y = numpy_helper.to_array(t)
            errors[numerics] = float(np.linalg.norm(y - ref) / np.linalg.norm(ref))
    if "ieee" in errors:
        check(errors["ieee"] < 1e-5, f"IEEE numerics match numpy (relative L2 error {errors['ieee']:.2e})")
    if "mlu370" in errors:
        check(errors["mlu370"] < 1e-3, f"the MLU370 model stays within 1e-3 (relative L2 error {errors['mlu370']:.2e})")
    if len(errors) == 2:
        check(errors["mlu370"] > 2 * errors["ieee"],
              f"the MLU370 model is applied: its error {errors['mlu370']:.2e} exceeds IEEE's {errors['ieee']:.2e}")

    print(f"check_mlu_package: {len(FAILURES)} failure(s)")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
