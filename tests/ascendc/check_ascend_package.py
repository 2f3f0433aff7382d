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
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "npu"))
from npu_package_checks import (FAILURES, build, check, check_refusal, check_small_device_memory,  # noqa: E402
                                compile_softmax, read_output, relative_l2, run_softmax, softmax_reference)


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
    check_refusal(aotc, work, "ascend-910b")

    compiled = compile_softmax(aotc, work, "ascend-910b")
    if compiled is None:
        return 1
    pkg, w, x = compiled
    plans = (pkg / "tile_plans.txt").read_text()
    check("tile plan 'softmax_rows'" in plans and "tile plan 'matmul'" in plans,
          "tile_plans.txt shows the softmax rows and the matmul kernels")

    # 2. A UB smaller than the softmax kernel plans: a status naming the kernel and buffer.
    if build(pkg, work / "build_small_ub", ["-DAOTC_ASCEND_UB_BYTES=4096"]):
        p = run_softmax(work, work / "build_small_ub", "out_small_ub")
        msg = " ".join((p.stderr + p.stdout).split())
        check(p.returncode not in (0,) and p.returncode > 0,
              f"the run fails with a status, not a crash (exit {p.returncode})")
        check("kernel k1_softmax_softmax_rows" in msg and "of node 'probabilities'" in msg,
              f"the message names the kernel and its node: {msg[:600]}")
        check("AOTC_ASCEND_UB_BYTES" in msg and "holds 4096 B" in msg and "on-chip buffer '" in msg,
              "the message names the buffer, the bytes and the capacity")

    # 3. Less device memory than the weights: init fails with the sizes.
    check_small_device_memory(work, pkg, "AOTC_ASCEND_HBM_BYTES", "build_small_hbm")

    # 4. The defaults: it runs and matches numpy.
    if build(pkg, work / "build", []):
        p = run_softmax(work, work / "build", "out")
        check(p.returncode == 0, f"the package runs: {p.stderr.strip()[:300]}")
        if p.returncode == 0:
            err = relative_l2(read_output(work / "out"), softmax_reference(x, w))
            check(err < 1e-5, f"the output matches numpy (relative L2 error {err:.2e})")

    print(f"check_ascend_package: {len(FAILURES)} failure(s)")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
