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
import sys
from pathlib import Path

from onnx import TensorProto, helper

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "npu"))
from npu_package_checks import (FAILURES, build, check, check_refusal, check_small_device_memory,  # noqa: E402
                                compile_softmax, read_output, relative_l2, run, run_softmax, save,
                                softmax_reference)


def double_model(path):
    g = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["s"], name="sum64"),
         helper.make_node("Mul", ["s", "b"], ["y"], name="product64")],
        "doubles", [helper.make_tensor_value_info("a", TensorProto.DOUBLE, [4]),
                    helper.make_tensor_value_info("b", TensorProto.DOUBLE, [4])],
        [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [4])])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)


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
    check_refusal(aotc, work, "mlu370")
    double_model(work / "doubles.onnx")
    p = run([aotc, "compile", work / "doubles.onnx", "--target", "mlu370", "-o", work / "doubles"])
    msg = " ".join(p.stderr.split())
    # (Add and Mul fuse into one node, named after the last.)
    check(p.returncode == 2 and "float64 is not computed on the MLU370" in msg and "node 'product64'" in msg,
          f"a float64 model is refused naming its nodes (exit {p.returncode}): {msg[:400]}")

    compiled = compile_softmax(aotc, work, "mlu370")
    if compiled is None:
        return 1
    pkg, w, x = compiled
    plans = (pkg / "tile_plans.txt").read_text()
    check("tile plan 'softmax_rows'" in plans and "tile plan 'matmul'" in plans,
          "tile_plans.txt shows the softmax rows and the matmul kernels")
    src = (pkg / "src" / "softmax_kernels.mlu").read_text()
    check("__mlu_global__ void" in src and "__bang_matmul(" in src and "__memcpy_async(" in src and
          "<<<dim, type, queue>>>" in src and "__bang_div(" not in src.replace("aotc_bang_div(", ""),
          "the kernels are BANG C: __mlu_global__, __memcpy_async, __bang_matmul, <<<>>>, no __bang_div")

    # 2. Less NRAM than the softmax kernel plans: a status naming the kernel and the memory.
    if build(pkg, work / "build_small_nram", ["-DAOTC_MLU_NRAM_BYTES=4096"]):
        p = run_softmax(work, work / "build_small_nram", "out_small_nram")
        msg = " ".join((p.stderr + p.stdout).split())
        check(p.returncode > 0, f"the run fails with a status, not a crash (exit {p.returncode})")
        check(re.search(r"kernel k\d+_\w+ \(src/softmax_kernels\.mlu:\d+\) of node '(project|probabilities)'", msg)
              is not None, f"the message names the kernel and its node: {msg[:600]}")
        check("AOTC_MLU_NRAM_BYTES" in msg and "more than the 4096 bytes there are" in msg,
              "the message names the memory, the bytes and the capacity macro")

    # 3. Less device memory than the weights: init fails with the sizes.
    check_small_device_memory(work, pkg, "AOTC_MLU_DDR_BYTES", "build_small_ddr")

    # 4. IEEE and the MLU370 numeric model against numpy.
    ref = softmax_reference(x, w)
    errors = {}
    for numerics in ("ieee", "mlu370"):
        bdir = work / f"build_{numerics}"
        if not build(pkg, bdir, [f"-DAOTC_MLU_NUMERICS={numerics}"]):
            continue
        p = run_softmax(work, bdir, f"out_{numerics}", timeout=600)
        check(p.returncode == 0, f"the package runs ({numerics}): {p.stderr.strip()[:300]}")
        if p.returncode == 0:
            errors[numerics] = relative_l2(read_output(work / f"out_{numerics}"), ref)
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
