#!/usr/bin/env python3
"""Checks the error paths of npu-tiled packages end to end, on aotc's host emulation of the tile API.

  1. A model whose ops have no tile kernel is refused at compile time (exit code 2), the message
     listing the op types and naming the nodes.
  2. A package built with AOTC_NPU_CMX_BYTES below what a kernel plans runs to a clean failure:
     the runner exits non-zero with a message naming the kernel, its node, the tile, the bytes and
     AOTC_NPU_CMX_BYTES -- never a crash.
  3. A package built with AOTC_TILE_TEST_ACCESS_SHIFT=1 (a test-only option: every DDR access is
     checked one element further on) fails naming the kernel, the tile, the tensor and the element
     outside the tile's slices of its distribution.
  4. A package built with less DDR (AOTC_NPU_DDR_BYTES) than its weights need fails at init with
     a message giving the sizes.
  5. The same package built with the defaults runs and matches numpy, on 2, 4 and 6 tiles.

Usage: check_tiled_package.py --aotc build/aotc --work build/tiled_package_checks
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
    ap.add_argument("--work", default="build/tiled_package_checks")
    args = ap.parse_args()
    aotc, work = Path(args.aotc).resolve(), Path(args.work).resolve()
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)

    # 1. Refusal at compile time.
    check_refusal(aotc, work, "npu-tiled")

    compiled = compile_softmax(aotc, work, "npu-tiled", ["--tiles", "4"])
    if compiled is None:
        return 1
    pkg, w, x = compiled
    plans = (pkg / "tile_plans.txt").read_text()
    check("tile plan 'softmax_rows'" in plans and "tile plan 'matmul'" in plans,
          "tile_plans.txt shows the softmax rows and the matmul kernels")
    kernels = (pkg / "src" / "softmax_kernels.cpp").read_text()
    check('#include "aotc_tile_api.h"' in kernels and "aotc_tile::dma_in(" in kernels and
          "aotc_tile::matmul(" in kernels, "the kernels are written against the tile API")
    host = (pkg / "src" / "softmax.cpp").read_text()
    check("kScheduleSlices" in host and "#segmented(" in host,
          "the host source carries every launch's slices of the distributions as data")

    # 2. A CMX smaller than the kernels plan: a status naming the kernel, node and bytes.
    if build(pkg, work / "build_small_cmx", ["-DAOTC_NPU_CMX_BYTES=4096"]):
        p = run_softmax(work, work / "build_small_cmx", "out_small_cmx")
        msg = " ".join((p.stderr + p.stdout).split())
        check(p.returncode > 0, f"the run fails with a status, not a crash (exit {p.returncode})")
        check("kernel k0_matmul_matmul" in msg and "of node 'project'" in msg and "(tile 0 of " in msg,
              f"the message names the kernel, its node and the tile: {msg[:600]}")
        check("AOTC_NPU_CMX_BYTES" in msg and "more than the 4096 bytes there are" in msg,
              "the message names the bytes, the capacity and the option")

    # 3. An access outside a tile's slices (provoked by the test-only shift).
    if build(pkg, work / "build_shifted", ["-DAOTC_TILE_TEST_ACCESS_SHIFT=1"]):
        p = run_softmax(work, work / "build_shifted", "out_shifted")
        msg = " ".join((p.stderr + p.stdout).split())
        check(p.returncode > 0, f"the run fails with a status, not a crash (exit {p.returncode})")
        check("kernel k" in msg and "(tile " in msg and "tensor '" in msg and "at element " in msg and
              "outside tile " in msg and "slices" in msg and "#segmented(" in msg,
              f"the message names the kernel, the tile, the tensor, the element and the distribution: {msg[:700]}")

    # 4. Less DDR than the weights: init fails with the sizes.
    check_small_device_memory(work, pkg, "AOTC_NPU_DDR_BYTES", "build_small_ddr")

    # 5. The defaults: it runs and matches numpy, on every tile count.
    for tiles in (4, 2, 6):
        if tiles != 4:
            pkg = work / f"softmax_{tiles}"
            from npu_package_checks import run as run_cmd
            p = run_cmd([aotc, "compile", work / "softmax.onnx", "--target", "npu-tiled", "--tiles", str(tiles),
                         "-o", pkg, "--name", "softmax"])
            check(p.returncode == 0, f"compile for {tiles} tiles: {p.stderr.strip()[:300]}")
            if p.returncode != 0:
                continue
        bdir = work / f"build_{tiles}"
        if build(pkg, bdir, []):
            p = run_softmax(work, bdir, f"out_{tiles}")
            check(p.returncode == 0, f"the package runs on {tiles} tiles: {p.stderr.strip()[:300]}")
            if p.returncode == 0:
                err = relative_l2(read_output(work / f"out_{tiles}"), softmax_reference(x, w))
                check(err < 1e-5, f"{tiles} tiles: the output matches numpy (relative L2 error {err:.2e})")

    print(f"check_tiled_package: {len(FAILURES)} failure(s)")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
