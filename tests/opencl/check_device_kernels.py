#!/usr/bin/env python3
"""Device kernels of the OpenCL target against aotc's reference implementations, on PoCL.

The ONNX node tests cover each op on small shapes; this builds the shapes they miss: tiles with
ragged edges, thin products (one row, a handful of channels), grouped and depthwise convolutions,
broadcast batches, fused epilogues that read a residual written over in place, long rows for the
reductions, f16 and f64 operands and wrapping integer products. Each case is a small ONNX model
with seeded random inputs; its package runs on the OpenCL device and `aotc eval` (the
double-precision reference interpreter, which shares no code with the kernels) gives the
expected outputs. All packages build in one CMake super-project.

With --target cuda-sm90 --build-only the same packages are compiled with nvcc instead (no GPU);
their f16 and bf16 MatMul and Conv kernels multiply on the tensor cores. That variant runs here
with --compiler build/aotc_matrix_emulation --target opencl-matrix-emulation: the same kernels
with the tensor cores emulated in OpenCL C (tests/opencl/matrix_unit_emulation.cpp).

For a device on another machine (a CUDA GPU), --stage prepare compiles the packages and writes
the references and a manifest.json into --work; --stage run, on the device's machine, builds,
runs and compares from that folder alone (numpy and onnx there, no aotc).

Usage: python3 tests/opencl/check_device_kernels.py [--aotc build/aotc] [--work DIR]
           [--target opencl] [--compiler AOTC] [--filter REGEX] [--build-only]
           [--stage all|prepare|run]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from device_stages import add_stage_arguments, read_manifest, runner_command, write_manifest  # noqa: E402

F32, F16, F64, I32 = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.INT32
BF16 = TensorProto.BFLOAT16
NP = {F32: np.float32, F16: np.float16, F64: np.float64, I32: np.int32,
      BF16: helper.tensor_dtype_to_np_dtype(BF16)}


def model(name, nodes, inputs, outputs, inits=(), opset=18):
    g = helper.make_graph(nodes, name,
                          [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                          [helper.make_tensor_value_info(n, t, None) for n, t in outputs],
                          initializer=list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def init(rng, name, shape, dtype=np.float32, scale=0.5):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(dtype), name)


def cases(rng):
    """(name, model, tolerance) for every case."""
    out = []
    node = helper.make_node
    # Conv with bias and Relu fused at the store; 17x17 leaves ragged tiles everywhere.
    out.append(("conv_bias_relu", model(
        "conv_bias_relu",
        [node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]), node("Relu", ["c"], ["y"])],
        [("x", F32, [2, 3, 17, 17])], [("y", F32)],
        [init(rng, "w", [5, 3, 3, 3]), init(rng, "b", [5])]), 1e-4))
    # Depthwise, strided, dilated, asymmetric padding.
    out.append(("conv_depthwise", model(
        "conv_depthwise",
        [node("Conv", ["x", "w"], ["y"], group=8, strides=[2, 1], dilations=[1, 2],
              pads=[0, 2, 1, 1])],
        [("x", F32, [1, 8, 11, 13])], [("y", F32)], [init(rng, "w", [8, 1, 3, 3])]), 1e-4))
    # Grouped 1-D convolution with many output channels (several tile rows).
    out.append(("conv1d_groups", model(
        "conv1d_groups", [node("Conv", ["x", "w", "b"], ["y"], group=2, pads=[2, 2])],
        [("x", F32, [3, 6, 40])], [("y", F32)],
        [init(rng, "w", [130, 3, 5]), init(rng, "b", [130])]), 1e-4))
    # A residual block: Conv + Add(residual) + Relu in one kernel whose result is written over
    # the residual's buffer (it dies there), so the epilogue reads what the store overwrites.
    out.append(("conv_residual", model(
        "conv_residual",
        [node("Relu", ["x"], ["r"]), node("MaxPool", ["x"], ["skip"], kernel_shape=[1, 1]),
         node("Conv", ["r", "w"], ["c"], pads=[1, 1, 1, 1]), node("Add", ["c", "skip"], ["s"]),
         node("Relu", ["s"], ["t"]), node("Conv", ["t", "w"], ["y"], pads=[1, 1, 1, 1])],
        [("x", F32, [1, 4, 9, 9])], [("y", F32)], [init(rng, "w", [4, 4, 3, 3])]), 1e-4))
    # 3-D convolution.
    out.append(("conv3d", model(
        "conv3d", [node("Conv", ["x", "w"], ["y"], pads=[1, 0, 1, 1, 0, 1], strides=[1, 2, 1])],
        [("x", F32, [1, 2, 5, 6, 7])], [("y", F32)], [init(rng, "w", [3, 2, 3, 2, 3])]), 1e-4))
    # MatMul with broadcast batches and K, M, N off the tile sizes.
    out.append(("matmul_broadcast", model(
        "matmul_broadcast", [node("MatMul", ["a", "b"], ["y"])],
        [("a", F32, [2, 1, 67, 35]), ("b", F32, [3, 35, 70])], [("y", F32)]), 1e-4))
    # A matrix-vector product (one row): the tiles widen along N.
    out.append(("gemv", model(
        "gemv", [node("MatMul", ["a", "w"], ["m"]), node("Add", ["m", "b"], ["y"])],
        [("a", F32, [1, 300])], [("y", F32)],
        [init(rng, "w", [300, 1000], scale=0.1), init(rng, "b", [1000])]), 1e-4))
    # Gemm (transposed B, alpha, beta, bias) with Tanh fused.
    out.append(("gemm_tanh", model(
        "gemm_tanh",
        [node("Gemm", ["a", "w", "c"], ["g"], transB=1, alpha=0.5, beta=2.0),
         node("Tanh", ["g"], ["y"])],
        [("a", F32, [33, 64])], [("y", F32)],
        [init(rng, "w", [50, 64], scale=0.2), init(rng, "c", [50])]), 1e-4))
    # f16 operands accumulate in float; f64 stays double.
    out.append(("matmul_f16", model(
        "matmul_f16", [node("MatMul", ["a", "b"], ["y"])],
        [("a", F16, [20, 48]), ("b", F16, [48, 24])], [("y", F16)]), 2e-3))
    out.append(("conv_f64", model(
        "conv_f64", [node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])],
        [("x", F64, [1, 3, 8, 8])], [("y", F64)], [init(rng, "w", [4, 3, 3, 3], np.float64)]), 1e-12))
    # f16 and bf16 products on matrix units (CUDA's tensor cores): M, N and K off the 16x16x16
    # fragments and the 64x64x32 blocks, broadcast batches, a fused epilogue, a thin product,
    # and convolutions whose B slices are gathered (padding, strides, groups) with a bias.
    out.append(("matmul_f16_batched", model(
        "matmul_f16_batched", [node("MatMul", ["a", "b"], ["y"])],
        [("a", F16, [2, 1, 67, 45]), ("b", F16, [3, 45, 70])], [("y", F16)]), 2e-3))
    out.append(("matmul_bf16_bias_gelu", model(
        "matmul_bf16_bias_gelu",
        [node("MatMul", ["a", "w"], ["m"]), node("Add", ["m", "b"], ["s"]),
         node("Gelu", ["s"], ["y"])],
        [("a", BF16, [3, 37, 100])], [("y", BF16)],
        [init(rng, "w", [100, 83], NP[BF16], 0.2), init(rng, "b", [83], NP[BF16])], opset=20), 2e-2))
    out.append(("gemv_f16", model(
        "gemv_f16", [node("MatMul", ["a", "w"], ["y"])],
        [("a", F16, [1, 129])], [("y", F16)], [init(rng, "w", [129, 300], np.float16, 0.2)]), 2e-3))
    out.append(("conv_f16_bias_relu", model(
        "conv_f16_bias_relu",
        [node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]), node("Relu", ["c"], ["y"])],
        [("x", F16, [2, 3, 17, 17])], [("y", F16)],
        [init(rng, "w", [21, 3, 3, 3], np.float16), init(rng, "b", [21], np.float16)]), 2e-3))
    out.append(("conv_bf16_groups", model(
        "conv_bf16_groups",
        [node("Conv", ["x", "w", "b"], ["y"], group=2, strides=[2, 1], pads=[0, 2, 1, 1])],
        [("x", BF16, [1, 10, 11, 13])], [("y", BF16)],
        [init(rng, "w", [34, 5, 3, 3], NP[BF16], 0.3), init(rng, "b", [34], NP[BF16])]), 2e-2))
    # bf16 is stored as its bits and computed in float, rounded to nearest even when stored.
    out.append(("softmax_bf16", model(
        "softmax_bf16", [node("Softmax", ["x"], ["y"], axis=-1)],
        [("x", BF16, [6, 70])], [("y", BF16)]), 1e-2))
    # Integer products wrap modulo 2^32, as the reference does.
    out.append(("matmul_i32_wraps", model(
        "matmul_i32_wraps", [node("MatMul", ["a", "b"], ["y"])],
        [("a", I32, [5, 9]), ("b", I32, [9, 4])], [("y", I32)]), 0))
    # Long and short rows for the row kernels.
    out.append(("softmax_axis1", model(
        "softmax_axis1", [node("Softmax", ["x"], ["y"], axis=1)],
        [("x", F32, [2, 300, 3])], [("y", F32)]), 1e-5))
    out.append(("log_softmax_long", model(
        "log_softmax_long", [node("LogSoftmax", ["x"], ["y"], axis=-1)],
        [("x", F32, [3, 5000])], [("y", F32)]), 1e-5))
    out.append(("layer_norm", model(
        "layer_norm", [node("LayerNormalization", ["x", "s", "b"], ["y"], axis=-2)],
        [("x", F32, [3, 20, 50])], [("y", F32)],
        [init(rng, "s", [20, 50]), init(rng, "b", [50])], opset=17), 1e-4))
    out.append(("reduce_mean_axes", model(
        "reduce_mean_axes",
        [node("ReduceMean", ["x", "axes"], ["y"], keepdims=1)],
        [("x", F32, [4, 30, 5, 70])], [("y", F32)],
        [numpy_helper.from_array(np.array([0, 2], np.int64), "axes")]), 1e-5))
    out.append(("reduce_max_all", model(
        "reduce_max_all", [node("ReduceMax", ["x"], ["y"], keepdims=0)],
        [("x", F32, [7, 3000])], [("y", F32)]), 0))
    # Pools: indices, ceil mode, padding counted or not.
    out.append(("maxpool_indices", model(
        "maxpool_indices",
        [node("MaxPool", ["x"], ["y", "i"], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)],
        [("x", F32, [2, 3, 10, 9])], [("y", F32), ("i", TensorProto.INT64)]), 0))
    out.append(("avgpool_pad", model(
        "avgpool_pad",
        [node("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
              count_include_pad=1)],
        [("x", F32, [1, 2, 7, 7])], [("y", F32)]), 1e-5))
    out.append(("global_pools", model(
        "global_pools",
        [node("GlobalAveragePool", ["x"], ["a"]), node("GlobalMaxPool", ["x"], ["m"]),
         node("Add", ["a", "m"], ["y"])],
        [("x", F32, [2, 5, 33, 33])], [("y", F32)]), 1e-5))
    # An elementwise chain with broadcasting, fused into one kernel.
    out.append(("elementwise_chain", model(
        "elementwise_chain",
        [node("Mul", ["x", "s"], ["m"]), node("Add", ["m", "b"], ["a"]),
         node("Sigmoid", ["a"], ["g"]), node("Mul", ["a", "g"], ["y"])],
        [("x", F32, [2, 8, 5, 5])], [("y", F32)],
        [init(rng, "s", [8, 1, 1]), init(rng, "b", [1, 8, 1, 1])]), 1e-5))
    # Round trips through every storage-only type: the float8/float4 encoders and decoders, the
    # 4- and 2-bit integer wrap, with saturation off for the float8 types that have inf or NaN.
    casts, outs = [], []
    for k, (to, saturate) in enumerate([(TensorProto.FLOAT8E4M3FN, 0), (TensorProto.FLOAT8E4M3FNUZ, 1),
                                        (TensorProto.FLOAT8E5M2, 0), (TensorProto.FLOAT8E5M2FNUZ, 1),
                                        (TensorProto.FLOAT8E8M0, 1), (TensorProto.FLOAT4E2M1, 1),
                                        (TensorProto.INT4, 1), (TensorProto.UINT4, 1),
                                        (TensorProto.INT2, 1), (TensorProto.UINT2, 1)]):
        attrs = {"saturate": saturate} if to not in (TensorProto.INT4, TensorProto.UINT4,
                                                     TensorProto.INT2, TensorProto.UINT2) else {}
        casts += [node("Mul", ["x", "scale"], [f"s{k}"]),
                  node("Cast", [f"s{k}"], [f"c{k}"], to=to, **attrs),
                  node("Cast", [f"c{k}"], [f"y{k}"], to=F32)]
        outs.append((f"y{k}", F32))
    out.append(("cast_storage_only", model(
        "cast_storage_only", casts, [("x", F32, [4, 257])], outs,
        [numpy_helper.from_array(np.array(40.0, np.float32), "scale")], opset=25), 0))
    return out


def random_input(rng, vi):
    t = vi.type.tensor_type
    shape = [d.dim_value for d in t.shape.dim]
    dtype = NP[t.elem_type]
    if dtype == np.int32:
        return rng.integers(-2**31, 2**31 - 1, size=shape, dtype=np.int64).astype(np.int32)
    return rng.standard_normal(shape).astype(dtype)


def read(path):
    t = onnx.TensorProto()
    t.ParseFromString(Path(path).read_bytes())
    return numpy_helper.to_array(t)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--aotc", default="build/aotc")
    ap.add_argument("--work", default="build/opencl_kernels")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--target", default="opencl")
    ap.add_argument("--compiler", help="the aotc that compiles the packages (default: --aotc, "
                    "which always computes the reference)")
    ap.add_argument("--filter", help="only the cases whose name this regex finds")
    ap.add_argument("--build-only", action="store_true",
                    help="build the packages without running them (no device here)")
    add_stage_arguments(ap, "the packages, inputs and references")
    args = ap.parse_args()
    if args.build_only and args.stage != "all":
        ap.error("--build-only and --stage exclude each other")
    aotc, work = Path(args.aotc).resolve(), Path(args.work).resolve()
    compiler = Path(args.compiler).resolve() if args.compiler else aotc
    if args.stage == "run":
        manifest = read_manifest(ap, work, args.target)
        inputs = {n: [work / f for f in files] for n, files in manifest["inputs"].items()}
        return build_and_check(args, work, manifest["cases"], manifest["failures"], inputs,
                               manifest["tolerance"])
    if work.exists():
        shutil.rmtree(work)
    (work / "pkgs").mkdir(parents=True)
    rng = np.random.default_rng(7)
    failures, inputs, tolerance = {}, {}, {}
    all_cases = cases(rng)
    if args.filter:
        all_cases = [c for c in all_cases if re.search(args.filter, c[0])]
    for name, m, tol in all_cases:
        path = work / f"{name}.onnx"
        onnx.save(m, str(path))
        tolerance[name] = tol
        inputs[name] = []
        for k, vi in enumerate(m.graph.input):
            f = work / f"{name}_input_{k}.pb"
            f.write_bytes(numpy_helper.from_array(random_input(rng, vi), vi.name).SerializeToString())
            inputs[name].append(f)
        ref = subprocess.run([str(aotc), "eval", str(path), "-o", str(work / "ref" / name)] +
                             [a for f in inputs[name] for a in ("--input", str(f))],
                             capture_output=True, text=True)
        if ref.returncode != 0:
            failures[name] = "aotc eval failed: " + ref.stderr.strip()
            continue
        p = subprocess.run([str(compiler), "compile", str(path), "--target", args.target, "-o",
                            str(work / "pkgs" / name), "--name", name], capture_output=True, text=True)
        if p.returncode != 0:
            failures[name] = "compile failed: " + p.stderr.strip()
    case_names = [n for n, _, _ in all_cases]
    if args.stage == "prepare":
        write_manifest(work, args.target, cases=case_names, failures=failures, tolerance=tolerance,
                       inputs={n: [str(f.relative_to(work)) for f in files] for n, files in inputs.items()})
        print(f"device kernels ({args.target}): prepared {len(case_names) - len(failures)} "
              f"packages in {work} for `--stage run`")
        return 0
    return build_and_check(args, work, case_names, failures, inputs, tolerance)


def build_and_check(args, work, case_names, failures, inputs, tolerance):
    """Builds the compiled cases in one super-project, runs them, compares with work/ref."""
    built = [n for n in case_names if n not in failures]
    (work / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.16)\nproject(aotc_opencl_kernels C CXX)\n" +
        "".join(f"add_subdirectory(pkgs/{n} {n})\n" for n in built))
    subprocess.run(["cmake", "-S", str(work), "-B", str(work / "build"), "-G", "Ninja",
                    "-DCMAKE_BUILD_TYPE=Release"], check=True, capture_output=True)
    b = subprocess.run(["ninja", "-C", str(work / "build"), "-k", "0", f"-j{args.jobs}"],
                       capture_output=True, text=True)
    (work / "build.log").write_text(b.stdout + b.stderr)
    for name in built:
        runner = work / "build" / name / f"{name}_run"
        if not runner.exists():
            failures[name] = "package did not build (see build.log)"
            continue
        if args.build_only:
            print(f"device kernels ({args.target}): {name}: built", flush=True)
            continue
        cmd = runner_command(args, runner) + ["--output-dir", str(work / "out" / name)]
        for f in inputs[name]:
            cmd += ["--input", str(f)]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if p.returncode != 0:
            failures[name] = "runner failed: " + " ".join(p.stderr.split())[:600]
            continue
        for ref_file in sorted((work / "ref" / name).glob("output_*.pb")):
            expected, actual = read(ref_file), read(work / "out" / name / ref_file.name)
            tol = tolerance[name]
            ok = expected.shape == actual.shape and expected.dtype == actual.dtype and (
                np.array_equal(actual, expected) if tol == 0 else
                np.allclose(actual.astype(np.float64), expected.astype(np.float64), rtol=tol, atol=tol))
            if not ok:
                diff = np.abs(actual.astype(np.float64) - expected.astype(np.float64)).max() \
                    if expected.shape == actual.shape else "shape"
                failures[name] = f"{ref_file.name}: differs from the reference (max |diff| {diff})"
        print(f"device kernels ({args.target}): {name}: {'FAILED' if name in failures else 'ok'}",
              flush=True)
    for name, why in failures.items():
        print(f"FAILED {name}: {why}")
    print(f"{len(case_names) - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
