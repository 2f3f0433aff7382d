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
  6. A model with fewer rows, channels and matrix rows than tiles (a 3x3 image of 2 channels, a
     Conv to 4 channels, a product of 2 rows) compiles for 6 tiles -- some tiles idle or holding
     copies -- and its package runs within its slices and matches numpy.

Usage: check_tiled_package.py --aotc build/aotc --work build/tiled_package_checks
"""
import argparse
import re
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "npu"))
from npu_package_checks import (FAILURES, build, check, check_refusal, check_small_device_memory,  # noqa: E402
                                compile_softmax, read_output, relative_l2, run, run_softmax, save,
                                softmax_reference)
import numpy as np  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402


def few_rows_model(path):
    """x[1, 2, 3, 3] -> Conv(4 channels, 3x3, pads 1) -> Relu -> Reshape [4, 9] -> MatMul [9, 5]
    -> Softmax, then a product of 2 rows: fewer rows, channels and matrix rows than 6 tiles."""
    rng = np.random.default_rng(11)
    w = rng.standard_normal((4, 2, 3, 3)).astype(np.float32) * 0.5
    b = rng.standard_normal(4).astype(np.float32)
    m = rng.standard_normal((9, 5)).astype(np.float32) * 0.5
    q = rng.standard_normal((2, 4)).astype(np.float32)
    g = helper.make_graph(
        [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], name="conv"),
         helper.make_node("Relu", ["c"], ["r"], name="relu"),
         helper.make_node("Reshape", ["r", "shape"], ["f"], name="flatten"),
         helper.make_node("MatMul", ["f", "m"], ["h"], name="project"),
         helper.make_node("Softmax", ["h"], ["s"], axis=-1, name="probabilities"),
         helper.make_node("MatMul", ["q", "s"], ["y"], name="mix")],
        "few_rows", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b"), numpy_helper.from_array(m, "m"),
         numpy_helper.from_array(q, "q"), numpy_helper.from_array(np.array([4, 9], np.int64), "shape")])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    return w, b, m, q


def few_rows_reference(x, w, b, m, q):
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    c = np.zeros((4, 3, 3))
    for o in range(4):
        for i in range(3):
            for j in range(3):
                c[o, i, j] = (xp[0, :, i:i + 3, j:j + 3] * w[o]).sum() + b[o]
    h = np.maximum(c, 0).reshape(4, 9) @ m
    e = np.exp(h - h.max(axis=1, keepdims=True))
    return q.astype(np.float64) @ (e / e.sum(axis=1, keepdims=True))


def check_more_tiles_than_rows(aotc, work):
    w, b, m, q = few_rows_model(work / "few_rows.onnx")
    pkg = work / "few_rows"
    p = run([aotc, "compile", work / "few_rows.onnx", "--target", "npu-tiled", "--tiles", "6", "-o", pkg,
             "--name", "few_rows", "--print-ir-after=legalize-distribution"])
    check(p.returncode == 0, "a model with fewer rows than tiles compiles for 6 tiles" +
          (f": {p.stderr.strip()[-300:]}" if p.returncode else ""))
    if p.returncode != 0:
        return
    ir = p.stdout + p.stderr
    check(re.search(r"0:0\b", ir) is not None or "segmented|duplicated" in ir,
          "some tile holds nothing or a copy (more tiles than slices)")
    x = np.random.default_rng(5).standard_normal((1, 2, 3, 3)).astype(np.float32)
    (work / "few_rows_x.pb").write_bytes(numpy_helper.from_array(x, "x").SerializeToString())
    if build(pkg, work / "build_few_rows", []):
        p = run([work / "build_few_rows" / "few_rows_run", "--input", work / "few_rows_x.pb", "--output-dir",
                 work / "out_few_rows"], timeout=300)
        check(p.returncode == 0, f"the package runs on 6 tiles within its slices: {p.stderr.strip()[:300]}")
        if p.returncode == 0:
            err = relative_l2(read_output(work / "out_few_rows"), few_rows_reference(x, w, b, m, q))
            check(err < 1e-5, f"6 tiles, fewer rows: the output matches numpy (relative L2 error {err:.2e})")


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
            p = run([aotc, "compile", work / "softmax.onnx", "--target", "npu-tiled", "--tiles", str(tiles),
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

    # 6. More tiles than rows.
    check_more_tiles_than_rows(aotc, work)

    print(f"check_tiled_package: {len(FAILURES)} failure(s)")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
