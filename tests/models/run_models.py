#!/usr/bin/env python3
"""Builds the test-size models of models/ and checks aotc against onnxruntime on them.

For each model (see docs/models.md) this script
  1. builds it with its models/<script>.py at the 'test' size (or --size full, the benchmark
     configuration: minutes and gigabytes rather than seconds) with seeded weights, and draws seeded
     sample inputs (token ids, masks with padding, KV cache, images);
  2. runs onnxruntime on them (the oracle);
  3. compiles it with `aotc compile --target T` and checks the package's memory plan
     (memory_plan_check.py: no overlapping live buffers, arena <= 1.05 x the lower bound), then
     builds all packages in one CMake super-project;
  4. runs each package's runner on the same inputs and requires, for every output, the same
     shape and dtype and a relative L2 error <= 1e-4 (float32);
  5. with --verify-baselines DIR, also runs `aotc verify` on each package (compiled with
     --dump-kernels): every kernel's outputs against the float64 reference, no divergent node at
     --verify-tolerance and no node's error grown beyond 2x its baseline DIR/<target>/<model>.json
     (tests/verify/verify_models.py's check, on the packages this script already built).
Quantized models (models/quantized.py) are held to "within one quantization step": the 8-bit
activations their DynamicQuantizeLinear nodes compute are exposed as extra outputs and may
differ from onnxruntime's by at most one step (a float rounding at a half step may fall either
way, onnxruntime's own vectorised sigmoid and tanh included); the float outputs that such a step
moves get a relative L2 tolerance of 1e-3.
A model listed in tests/models/expected_failures_<target>.txt ("name reason") may fail without
failing the run; one that is listed but passes fails it, so the list stays honest.
Exit status is non-zero on any unexpected failure; the last line reads "N passed, M failed".
"""
import argparse
import dataclasses
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "models"))
import bert  # noqa: E402
import crnn  # noqa: E402
import inception_v2  # noqa: E402
import llama  # noqa: E402
import mlp  # noqa: E402
import mobilenet_v2  # noqa: E402
import quantized  # noqa: E402
import resnet50  # noqa: E402
import silero_vad  # noqa: E402
import squeezenet  # noqa: E402
import yolo  # noqa: E402
from builder import count_ops, save, write_inputs  # noqa: E402
from precision_range import out_of_range_nodes, storage_rounded_run  # noqa: E402
from memory_plan_check import check_package  # noqa: E402
sys.path.insert(0, str(HERE.parent / "verify"))
from package_verification import verify_package  # noqa: E402

TOLERANCE = 1e-4
# --precision fp16/bf16 stores activations and weights at 16 bits: 11 and 8 significant bits.
PRECISION_TOLERANCE = {"fp32": 1e-4, "fp16": 1e-2, "bf16": 5e-2}
QUANTIZED_TOLERANCE = 1e-3  # float outputs downstream of 8-bit activations that may differ by a step
# Quantized models at 16 bits: which values flip a step moves with summation order and rounding
# points (bert_quantized's logits read 1.5e-2 to 2.5e-2 across equivalent lowerings, against
# 2.3e-2 for onnxruntime with rounded activations), so the bound is a margin over that run.
STORAGE_MARGIN = 1.5

# name -> (builder module, overrides of its 'test' configuration)
MODELS = {
    "mlp": (mlp, {}),
    "bert": (bert, {}),
    "bert_gelu_op": (bert, dict(gelu="op")),
    "llama": (llama, {}),
    "llama_legacy": (llama, llama.LEGACY),
    "llama_rmsnorm_op": (llama, dict(rmsnorm="op")),
    "mobilenet_v2": (mobilenet_v2, {}),
    "resnet50": (resnet50, {}),
    "silero_vad": (silero_vad, {}),
    "crnn": (crnn, {}),
    "bert_quantized": (quantized, dict(base="bert")),
    "crnn_quantized": (quantized, dict(base="crnn", weight_type="QUInt8")),
    "squeezenet": (squeezenet, {}),
    "inception_v2": (inception_v2, {}),
    "yolov8": (yolo, {}),
}


def input_rng(name):
    """The sample inputs' generator of a model, seeded by its place in MODELS (not in --models):
    the same inputs for any list, so verify baselines hold (tests/verify/verify_models.py too)."""
    return np.random.default_rng(100 + list(MODELS).index(name))


def load_expected_failures(target):
    path = HERE / f"expected_failures_{target}.txt"
    listed = {}
    if path.exists():
        for line in path.read_text().splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                name, _, reason = line.partition(" ")
                listed[name] = reason.strip()
    return listed


def rel_l2(actual, expected):
    a, e = actual.astype(np.float64).ravel(), expected.astype(np.float64).ravel()
    return float(np.linalg.norm(a - e) / max(np.linalg.norm(e), 1e-30))


def expose_quantized_activations(model):
    """Adds every DynamicQuantizeLinear's 8-bit result as a graph output; returns their names."""
    from onnx import helper
    names = [n.output[0] for n in model.graph.node if n.op_type == "DynamicQuantizeLinear" and n.output[0]]
    for name in names:
        model.graph.output.append(helper.make_tensor_value_info(name, onnx.TensorProto.UINT8, None))
    return set(names)


def compare(outputs, expected, out_dir, name, quantized=frozenset(), storage_rounded=None):
    """Compares the runner's output_<k>.pb files with onnxruntime's; returns error strings.
    Outputs named in `quantized` are 8-bit activations: they may differ by one step.
    `storage_rounded` (quantized models at 16 bits): onnxruntime's outputs with every activation
    rounded to the storage width (precision_range.storage_rounded_run). 8-bit quantizers reading
    16-bit activations flip steps, and the flips compound: the model's error at that width is the
    storage's, not the compiler's. Then a float output passes within the width's tolerance or
    within STORAGE_MARGIN x that run's own error, and an 8-bit output within twice that run's
    largest step count (a compiler that stored an int32 sum at 16 bits was 100-255 steps off)."""
    errors = []
    tolerance = max(QUANTIZED_TOLERANCE, TOLERANCE) if quantized else TOLERANCE
    for k, (vi, exp) in enumerate(zip(outputs, expected)):
        path = out_dir / f"output_{k}.pb"
        if not path.exists():
            errors.append(f"output {k} '{vi.name}' was not written")
            continue
        t = onnx.TensorProto()
        t.ParseFromString(path.read_bytes())
        actual = numpy_helper.to_array(t)
        if actual.shape != exp.shape or actual.dtype != exp.dtype:
            errors.append(f"output {k} '{vi.name}' is {actual.dtype}{list(actual.shape)}, onnxruntime "
                          f"gives {exp.dtype}{list(exp.shape)}")
            continue
        rounded = storage_rounded[k] if storage_rounded is not None else None
        if vi.name in quantized:
            steps = np.abs(actual.astype(np.int64) - exp.astype(np.int64))
            allowed, why = 1, ""
            if rounded is not None:
                storage_steps = int(np.abs(rounded.astype(np.int64) - exp.astype(np.int64)).max(initial=0))
                allowed, why = max(1, 2 * storage_steps), f"; storage-rounded onnxruntime {storage_steps}"
            ok = steps.max(initial=0) <= allowed
            print(f"models: {name}: {vi.name}: {int((steps > 0).sum())} of {steps.size} 8-bit values off, "
                  f"at most {int(steps.max(initial=0))} steps{why} ({'ok' if ok else 'FAILED'})", flush=True)
            if not ok:
                errors.append(f"output {k} '{vi.name}': {int(steps.max())} quantization steps off")
            continue
        err = rel_l2(actual, exp)
        limit, why = tolerance, ""
        if rounded is not None:
            storage_err = rel_l2(rounded, exp)
            limit = max(tolerance, STORAGE_MARGIN * storage_err)
            why = f", storage-rounded onnxruntime {storage_err:.2e}"
        ok = err <= limit
        print(f"models: {name}: {vi.name}: relative L2 error {err:.2e} ({'ok' if ok else 'FAILED'}), "
              f"|expected| {np.linalg.norm(exp):.3g}{why}", flush=True)
        if not ok:
            errors.append(f"output {k} '{vi.name}': relative L2 error {err:.2e} > {limit:.2e}")
    return errors


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--aotc", default="build/aotc")
    ap.add_argument("--target", default="x86-64")
    ap.add_argument("--work", default="build/models")
    ap.add_argument("--models", default=",".join(MODELS),
                    help="comma-separated subset of: " + ", ".join(MODELS))
    ap.add_argument("--size", choices=("test", "full"), default="test")
    ap.add_argument("--threads", type=int, default=1, help="aotc compile --threads N")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--precision", choices=("fp32", "fp16", "bf16"), default="fp32",
                    help="aotc compile --precision (the tolerance follows unless --tolerance is given)")
    ap.add_argument("--tolerance", type=float, default=None,
                    help="relative L2 bound; default 1e-4 for fp32, 1e-2 for fp16, 5e-2 for bf16")
    ap.add_argument("--compile-arg", action="append", default=[], metavar="ARG",
                    help="an extra argument for aotc compile (repeatable), e.g. --compile-arg=--accumulate=compensated")
    ap.add_argument("--cmake-define", action="append", default=[], metavar="NAME=VALUE",
                    help="a -D option for the packages' CMake configure (repeatable), e.g. "
                         "AOTC_MLU_NUMERICS=ieee")
    ap.add_argument("--verify-baselines", metavar="DIR",
                    help="also run aotc verify on every package against DIR/<tag>/<model>.json (docs/verify.md)")
    ap.add_argument("--baseline-tag", help="the baselines' subfolder (default: the target)")
    ap.add_argument("--verify-tolerance", default="1e-3", help="aotc verify --tolerance (default 1e-3)")
    ap.add_argument("--write-baselines", action="store_true",
                    help="with --verify-baselines: write each verify.json as the model's baseline")
    args = ap.parse_args()
    global TOLERANCE
    TOLERANCE = args.tolerance if args.tolerance is not None else PRECISION_TOLERANCE[args.precision]
    import onnxruntime as ort

    names = [m for m in args.models.split(",") if m]
    unknown = [m for m in names if m not in MODELS]
    if unknown:
        ap.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(MODELS)}")
    aotc, work = Path(args.aotc).resolve(), Path(args.work).resolve()
    if work.exists():
        shutil.rmtree(work)
    (work / "pkgs").mkdir(parents=True)
    failures, memory_errors, compiled, expected, input_files, graphs = {}, {}, [], {}, {}, {}
    quantized_outputs = {}
    storage_rounded = {}  # quantized models at 16 bits: onnxruntime with rounded activations
    t0 = time.time()
    for name in names:
        module, overrides = MODELS[name]
        cfg = dataclasses.replace(module.CONFIGS[args.size], **overrides)
        model = module.build(cfg)
        quantized_outputs[name] = expose_quantized_activations(model) if module is quantized else set()
        path = work / "models" / f"{name}.onnx"
        path.parent.mkdir(exist_ok=True)
        save(model, path)
        graphs[name] = model.graph
        inputs = module.sample_inputs(cfg, input_rng(name))
        input_files[name] = write_inputs(model, inputs, work / "inputs" / name)
        so = ort.SessionOptions()
        # The oracle evaluates the graph as written: no fusions (ORT would fuse LayerNorm/GELU).
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
        expected[name] = sess.run(None, inputs)
        if module is quantized and args.precision != "fp32":
            storage_rounded[name] = storage_rounded_run(model, inputs, args.precision)
        keep = out_of_range_nodes(model, inputs, args.precision)
        if keep:
            print(f"models: {name}: {len(keep)} of {len(model.graph.node)} nodes kept fp32 (values beyond "
                  f"{args.precision}'s range)", flush=True)
        p = subprocess.run([str(aotc), "compile", str(path), "--target", args.target, "-o",
                            str(work / "pkgs" / name), "--name", name,
                            "--precision", args.precision] + (["--keep-fp32", ",".join(keep)] if keep else []) +
                           args.compile_arg + ["--threads", str(args.threads)] +
                           (["--dump-kernels"] if args.verify_baselines else []),
                           capture_output=True, text=True)
        if p.returncode != 0:
            failures[name] = "compile failed: " + " ".join(p.stderr.split())[:400]
        else:
            compiled.append(name)
            memory_errors[name] = check_package(work / "pkgs" / name)
        ops = count_ops(model)
        print(f"models: {name}: {len(model.graph.node)} nodes, {len(ops)} op types, compile "
              f"{'ok' if p.returncode == 0 else 'FAILED'} ({time.time() - t0:.0f} s)", flush=True)

    if compiled:
        (work / "CMakeLists.txt").write_text(
            "cmake_minimum_required(VERSION 3.16)\nproject(aotc_models C CXX)\n" +
            "".join(f"add_subdirectory(pkgs/{n} {n})\n" for n in compiled))
        subprocess.run(["cmake", "-S", str(work), "-B", str(work / "build"), "-G", "Ninja",
                        "-DCMAKE_BUILD_TYPE=Release"] + [f"-D{d}" for d in args.cmake_define],
                       check=True, capture_output=True)
        b = subprocess.run(["ninja", "-C", str(work / "build"), "-k", "0", f"-j{args.jobs}"],
                           capture_output=True, text=True)
        (work / "build.log").write_text(b.stdout + b.stderr)
        print(f"models: packages built ({time.time() - t0:.0f} s)", flush=True)

    for name in compiled:
        runner = work / "build" / name / f"{name}_run"
        if not runner.exists():
            failures[name] = f"package did not build (see {work / 'build.log'})"
            continue
        out = work / "out" / name
        cmd = [str(runner)] + [a for f in input_files[name] for a in ("--input", str(f))]
        cmd += ["--output-dir", str(out)]
        t1 = time.time()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        except subprocess.TimeoutExpired:
            failures[name] = "runner took longer than 900 s"
            continue
        if p.returncode != 0:
            failures[name] = "runner failed: " + " ".join(p.stderr.split())[:400]
            continue
        print(f"models: {name}: run {time.time() - t1:.1f} s", flush=True)
        errors = compare(graphs[name].output, expected[name], out, name, quantized_outputs[name],
                         storage_rounded.get(name))
        if args.verify_baselines:
            failure = verify_package(aotc, work / "models" / f"{name}.onnx", args.target, work / "pkgs" / name,
                                     runner, input_files[name], work / "verify" / name, args.verify_tolerance,
                                     args.verify_baselines, args.baseline_tag, args.write_baselines, t0)
            if failure:
                errors.append(failure)
        if errors:
            failures[name] = "; ".join(errors)

    # The memory plan must be sound and within 5% of the lower bound whatever the numerics say.
    for name, errors in memory_errors.items():
        if errors:
            why = "memory plan: " + "; ".join(errors[:3])
            failures[name] = f"{failures[name]}; {why}" if name in failures else why
    listed = load_expected_failures(args.target)
    unexpected, xfail = {}, {}
    for name in names:
        if name in failures and name in listed:
            xfail[name] = listed[name]
        elif name in failures:
            unexpected[name] = failures[name]
        elif name in listed:
            unexpected[name] = "listed in expected_failures_{} but passes: remove it".format(args.target)
    for name, why in xfail.items():
        print(f"expected failure {name}: {failures[name]} (listed: {why})")
    for name, why in unexpected.items():
        print(f"FAILED model {name}: {why}")
    passed = sum(1 for n in names if n not in failures and n not in listed)
    print(f"models: {len(xfail)} expected failures, {time.time() - t0:.0f} s in all")
    print(f"{passed} passed, {len(unexpected)} failed")
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
