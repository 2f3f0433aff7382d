#!/usr/bin/env python3
"""`aotc compile --profile` and the runner's --profile end to end (run by ctest as CliProfile).

On a small model of four kernels (Conv+Relu fused, MaxPool, MatMul, Softmax) compiled for
x86-64 with and without --profile, checks that
  - the profiled runner prints one row per kernel call, labelled "node (Op)", each node once,
    with the run count (the first run plus --bench N), non-negative times and shares that add
    up to 100%, slowest first;
  - both packages write bit-identical outputs (the timers change nothing);
  - the runner of a package compiled without --profile refuses --profile (exit 2) and says how
    to get it; `aotc compile --profile` for a device target is refused (exit 1) with a reason.

  python3 tests/cli/check_profile.py path/to/aotc
"""
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def small_model(path):
    rng = np.random.default_rng(3)
    w = numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32), "w")
    m = numpy_helper.from_array(rng.standard_normal((8, 5)).astype(np.float32), "m")
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("MatMul", ["p", "m"], ["q"], name="project"),
        helper.make_node("Softmax", ["q"], ["y"], name="softmax", axis=-1),
    ]
    graph = helper.make_graph(nodes, "profiled", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 8, 5])], [w, m])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def main():
    aotc = Path(sys.argv[1]).resolve()
    failures = []

    def check(ok, what):
        print(("ok: " if ok else "FAILED: ") + what)
        if not ok:
            failures.append(what)

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        small_model(work / "profiled.onnx")
        for name, extra in (("timed", ["--profile"]), ("plain", [])):
            subprocess.run([str(aotc), "compile", str(work / "profiled.onnx"), "--target", "x86-64",
                            "-o", str(work / name), "--name", name] + extra, check=True, capture_output=True)
        (work / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.16)\nproject(profiled C CXX)\n"
                                             "add_subdirectory(timed)\nadd_subdirectory(plain)\n")
        subprocess.run(["cmake", "-S", str(work), "-B", str(work / "build"), "-G", "Ninja",
                        "-DCMAKE_BUILD_TYPE=Release"], check=True, capture_output=True)
        subprocess.run(["ninja", "-C", str(work / "build")], check=True, capture_output=True)

        timed = subprocess.run([str(work / "build" / "timed" / "timed_run"), "--output-dir", str(work / "out_timed"),
                                "--bench", "3", "--profile"], capture_output=True, text=True)
        check(timed.returncode == 0, f"profiled runner exits 0 (got {timed.returncode}: {timed.stderr.strip()})")
        lines = timed.stdout.splitlines()
        header = next((l for l in lines if l.startswith("profile:")), "")
        check(re.search(r"profile: 4 timed nodes, 4 runs", header) is not None,
              f"header names 4 timed nodes and 4 runs: '{header}'")
        rows = [re.match(r"\s*([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+(.+)$", l) for l in lines]
        rows = [r for r in rows if r and r.group(4) != "in all timed nodes"]
        labels = sorted(r.group(4) for r in rows)
        check(labels == sorted(["relu (Fused)", "pool (MaxPool)", "project (MatMul)", "softmax (Softmax)"]),
              f"one row per kernel call, each labelled 'node (Op)': {labels}")
        ms = [float(r.group(1)) for r in rows]
        check(all(m >= 0 for m in ms) and ms == sorted(ms, reverse=True), f"times non-negative, slowest first: {ms}")
        total = sum(float(r.group(2)) for r in rows)
        check(abs(total - 100.0) < 0.1, f"shares add up to 100% (got {total:.2f})")

        plain = subprocess.run([str(work / "build" / "plain" / "plain_run"), "--output-dir", str(work / "out_plain")],
                               capture_output=True, text=True)
        check(plain.returncode == 0, "unprofiled runner exits 0")
        same = (work / "out_timed" / "output_0.pb").read_bytes() == (work / "out_plain" / "output_0.pb").read_bytes()
        check(same, "profiled and unprofiled packages write identical outputs")

        refused = subprocess.run([str(work / "build" / "plain" / "plain_run"), "--profile",
                                  "--output-dir", str(work / "out_plain")], capture_output=True, text=True)
        check(refused.returncode == 2 and "aotc compile --profile" in refused.stderr,
              f"unprofiled runner refuses --profile with exit 2 and says how: {refused.returncode} '{refused.stderr.strip()}'")

        device = subprocess.run([str(aotc), "compile", str(work / "profiled.onnx"), "--target", "opencl",
                                 "-o", str(work / "device"), "--profile"], capture_output=True, text=True)
        check(device.returncode == 1 and "--profile" in device.stderr and "opencl" in device.stderr,
              f"--profile for a device target exits 1 naming the flag and target: {device.returncode} '{device.stderr.strip()}'")

    print(f"{'FAILED' if failures else 'passed'}: {len(failures)} of the checks failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
