#!/usr/bin/env python3
"""The OpenCL target's error paths, end to end on PoCL: every one ends in an error code and a
message that says what failed, never in an abort.

  1. A model with ops the target has no kernel for is refused at compile time (exit 2) with the
     op types and the nodes.
  2. Kernels that fail to build at init (here: a package whose kernel source was damaged after
     it was written) make init return AOTC_ERR_KERNEL_BUILD; the runner prints the kernel file
     and the device compiler's log and exits 1.
  3. A model whose device arena exceeds what the device can allocate makes init return
     AOTC_ERR_OUT_OF_MEMORY, naming the buffer and both sizes.
  4. AOTC_OPENCL_DEVICE naming a device that does not exist gives AOTC_ERR_NO_DEVICE.

Usage: python3 tests/opencl/check_device_errors.py [--aotc build/aotc] [--work DIR]
"""
import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(path, nodes, inputs, outputs, inits=()):
    g = helper.make_graph(nodes, path.stem,
                          [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
                          [helper.make_tensor_value_info(n, t, None) for n, t in outputs],
                          initializer=list(inits))
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]), str(path))
    return path


class Checker:
    def __init__(self):
        self.failures = []

    def expect(self, what, condition, detail):
        print(f"opencl errors: {what}: {'ok' if condition else 'FAILED'}", flush=True)
        if not condition:
            self.failures.append(f"{what}: {detail}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--aotc", default="build/aotc")
    ap.add_argument("--work", default="build/opencl_errors")
    args = ap.parse_args()
    aotc, work = Path(args.aotc).resolve(), Path(args.work).resolve()
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    check = Checker()
    node = helper.make_node

    # 1. Refused at compile time, naming every refused op and node.
    refused = save(work / "refused.onnx",
                   [node("Relu", ["x"], ["r"], name="relu"),
                    node("CumSum", ["r", "axis"], ["c"], name="running_sum"),
                    node("Hardmax", ["c"], ["y"], name="one_hot_max", axis=1)],
                   [("x", [4, 5])], [("y", TensorProto.FLOAT)],
                   [numpy_helper.from_array(np.array(1, np.int64), "axis")])
    p = subprocess.run([str(aotc), "compile", str(refused), "--target", "opencl", "-o",
                        str(work / "refused_pkg")], capture_output=True, text=True)
    message = p.stderr
    check.expect("unsupported ops are refused with exit code 2", p.returncode == 2,
                 f"exit {p.returncode}: {message}")
    check.expect("the refusal names the ops and nodes",
                 all(s in message for s in ("target opencl", "CumSum", "Hardmax", "'running_sum'",
                                            "'one_hot_max'")) and "'relu'" not in message, message)
    check.expect("nothing is written for a refused model", not (work / "refused_pkg").exists(),
                 "a package folder was written")

    # Two packages that build: one whose kernels get damaged, one whose arena is too large.
    save(work / "broken.onnx", [node("Relu", ["x"], ["y"])], [("x", [8])], [("y", TensorProto.FLOAT)])
    huge = 131072  # a [huge, huge] float intermediate: 64 GiB, more than one buffer may hold
    save(work / "huge.onnx",
         [node("Expand", ["x", "shape"], ["e"]), node("ReduceSum", ["e"], ["y"], keepdims=0)],
         [("x", [1])], [("y", TensorProto.FLOAT)],
         [numpy_helper.from_array(np.array([huge, huge], np.int64), "shape")])
    for name in ("broken", "huge"):
        p = subprocess.run([str(aotc), "compile", str(work / f"{name}.onnx"), "--target", "opencl",
                            "-o", str(work / "pkgs" / name), "--name", name],
                           capture_output=True, text=True)
        if p.returncode != 0:
            print(f"FAILED: compiling {name}: {p.stderr}")
            return 1
    kernels = work / "pkgs" / "broken" / "src" / "broken.cl"
    kernels.write_text(kernels.read_text() + "\nthis line is not OpenCL C;\n")
    (work / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.16)\nproject(aotc_opencl_errors C CXX)\n"
        "add_subdirectory(pkgs/broken broken)\nadd_subdirectory(pkgs/huge huge)\n")
    subprocess.run(["cmake", "-S", str(work), "-B", str(work / "build"), "-G", "Ninja",
                    "-DCMAKE_BUILD_TYPE=Release"], check=True, capture_output=True)
    subprocess.run(["ninja", "-C", str(work / "build")], check=True, capture_output=True)
    x8 = work / "x8.pb"
    x8.write_bytes(numpy_helper.from_array(np.ones(8, np.float32), "x").SerializeToString())
    x1 = work / "x1.pb"
    x1.write_bytes(numpy_helper.from_array(np.ones(1, np.float32), "x").SerializeToString())

    def run(name, input_file, env=None):
        return subprocess.run([str(work / "build" / name / f"{name}_run"), "--input", str(input_file),
                               "--output-dir", str(work / "out" / name)],
                              capture_output=True, text=True, env=env, timeout=300)

    # 2. Kernels that do not build.
    p = run("broken", x8)
    check.expect("a kernel build failure exits with status 1, not a signal", p.returncode == 1,
                 f"exit {p.returncode}: {p.stderr}")
    check.expect("the build failure names the kernel source and shows the log",
                 "failed to build" in p.stderr and "src/broken.cl" in p.stderr and
                 "CL_BUILD_PROGRAM_FAILURE" in p.stderr and "error" in p.stderr.split("log:")[-1],
                 p.stderr)

    # 3. More device memory than the device allocates.
    p = run("huge", x1)
    check.expect("a device arena that does not fit exits with status 1", p.returncode == 1,
                 f"exit {p.returncode}: {p.stderr}")
    check.expect("the allocation failure names the buffer and the sizes",
                 "arena" in p.stderr and str(huge * huge * 4) in p.stderr, p.stderr)

    # 4. No such device.
    env = dict(os.environ, AOTC_OPENCL_DEVICE="0:99")
    p = run("broken", x8, env)
    check.expect("a missing device exits with status 1", p.returncode == 1,
                 f"exit {p.returncode}: {p.stderr}")
    check.expect("the missing device is named", "AOTC_OPENCL_DEVICE=0:99" in p.stderr, p.stderr)

    for f in check.failures:
        print(f"FAILED {f}")
    print(f"{len(check.failures)} failed")
    return 1 if check.failures else 0


if __name__ == "__main__":
    sys.exit(main())
