#!/usr/bin/env python3
"""End-to-end check of runtime.cmake and the runner, the way packages use them.

Builds a CMake super-project holding two hand-written "packages" (y = w * x, w from the
weights), each with its own copy of runtime_stub/ like aotc writes it: package a has raw
weights, package b zstd-compressed ones (it sets AOTC_RUNTIME_WITH_ZSTD before the include,
after a already defined the shared targets without zstd). Then runs both runners on inputs
written with onnx.numpy_helper, from another folder so that the default weights file is found
next to the executable, and compares the output_0.pb files with numpy; /dev/zero as an input
must be refused by its size.

Usage: python3 tests/runtime/check_runner_packages.py      (needs cmake, ninja, zstd on PATH)
"""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

STUB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "runtime_stub")

MODEL_SOURCE = r"""
#include <string.h>
#include "aotc_runner.h"

static const int64_t kDims[2] = {2, 3};
static const aotc_tensor_desc kInput = {"x", 1, 2, kDims, 24};
static const aotc_tensor_desc kOutput = {"y", 1, 2, kDims, 24};

static aotc_status init(void* ctx, void* arena, const void* weights) {
  if (((uintptr_t)arena | (uintptr_t)weights) % 64) return AOTC_ERR_MISALIGNED;
  memcpy(ctx, weights, 4);
  return AOTC_OK;
}

static aotc_status run(void* ctx, const void* const* inputs, void* const* outputs) {
  float w;
  memcpy(&w, ctx, 4);
  for (int i = 0; i < 6; ++i) ((float*)outputs[0])[i] = w * ((const float*)inputs[0])[i];
  return AOTC_OK;
}

int main(int argc, char** argv) {
  aotc_model_desc m = {"NAME", 256, 4, 1, &kInput, 1, &kOutput, NULL, "NAME.weights", 4, init, run};
  return aotc_runner_main(argc, argv, &m);
}
"""

PACKAGE_CMAKE = """
{zstd}include(${{CMAKE_CURRENT_SOURCE_DIR}}/runtime_stub/runtime.cmake)
add_executable({name}_run main.c)
target_link_libraries({name}_run PRIVATE aotc_runner)
"""


def main():
    root = tempfile.mkdtemp(prefix="aotc_rt_packages_")
    with open(os.path.join(root, "CMakeLists.txt"), "w") as fp:
        fp.write("cmake_minimum_required(VERSION 3.16)\nproject(super LANGUAGES C CXX)\n"
                 "add_subdirectory(a)\nadd_subdirectory(b)\n")
    for name, zstd in (("a", ""), ("b", "set(AOTC_RUNTIME_WITH_ZSTD ON)\n")):
        pkg = os.path.join(root, name)
        shutil.copytree(STUB, os.path.join(pkg, "runtime_stub"))
        with open(os.path.join(pkg, "main.c"), "w") as fp:
            fp.write(MODEL_SOURCE.replace("NAME", name))
        with open(os.path.join(pkg, "CMakeLists.txt"), "w") as fp:
            fp.write(PACKAGE_CMAKE.format(name=name, zstd=zstd))
    build = os.path.join(root, "build")
    subprocess.run(["cmake", "-S", root, "-B", build, "-G", "Ninja"], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run(["ninja", "-C", build], check=True, stdout=subprocess.DEVNULL)

    # Weights next to each executable: raw for a, zstd for b.
    np.array([2.5], dtype=np.float32).tofile(os.path.join(build, "a", "a.weights"))
    raw_b = os.path.join(root, "b.raw")
    np.array([-4.0], dtype=np.float32).tofile(raw_b)
    subprocess.run(["zstd", "-q", "-f", raw_b, "-o", os.path.join(build, "b", "b.weights")],
                   check=True)

    x = np.array([[1, 2, 3], [-1, 0.5, 1e-3]], dtype=np.float32)
    elsewhere = os.path.join(root, "cwd")
    os.makedirs(elsewhere)
    with open(os.path.join(elsewhere, "x.pb"), "wb") as fp:
        fp.write(numpy_helper.from_array(x, name="x").SerializeToString())

    failures = 0
    for name, w in (("a", 2.5), ("b", -4.0)):
        exe = os.path.join(build, name, f"{name}_run")
        run = subprocess.run([exe, "--input", "x.pb", "--output-dir", "out", "--bench", "5"],
                             cwd=elsewhere, capture_output=True, text=True)
        t = onnx.TensorProto()
        ok = run.returncode == 0 and "(min " in run.stdout and "5 runs)" in run.stdout
        if ok:
            with open(os.path.join(elsewhere, "out", "output_0.pb"), "rb") as fp:
                t.ParseFromString(fp.read())
            y = numpy_helper.to_array(t)
            ok = t.name == "y" and y.dtype == np.float32 and np.array_equal(y, np.float32(w) * x)
        # --print shows the values and the argmax, formatted like printf's %.6g.
        printed = subprocess.run([exe, "--input", "x.pb", "--output-dir", "out", "--print"],
                                 cwd=elsewhere, capture_output=True, text=True).stdout.strip()
        y = (np.float32(w) * x).ravel()
        want = (f"output 0 'y' FLOAT[2,3]: " + " ".join("%.6g" % v for v in y) +
                f"; largest {'%.6g' % y.max()} at flat index {int(y.argmax())}")
        if printed != want:
            print(f"package {name}: --print printed {printed!r}, expected {want!r}")
            ok = False
        # An input file without end (/dev/zero) is refused at the size a TensorProto of the
        # input's shape can take, not read until memory runs out (the limit: 4 GiB of address space).
        endless = subprocess.run(["bash", "-c", 'ulimit -v 4194304; exec "$0" --input /dev/zero --output-dir out',
                                  exe], cwd=elsewhere, capture_output=True, text=True, timeout=60)
        if endless.returncode != 1 or "is larger than" not in endless.stderr:
            print(f"package {name}: --input /dev/zero: exit {endless.returncode}, {endless.stderr.strip()!r}")
            ok = False
        status = "ok" if ok else "FAILED"
        print(f"package {name}: {status}: {run.stdout.strip()} {run.stderr.strip()}")
        failures += not ok
        shutil.rmtree(os.path.join(elsewhere, "out"), ignore_errors=True)
    shutil.rmtree(root)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
