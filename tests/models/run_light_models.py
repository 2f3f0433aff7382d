#!/usr/bin/env python3
"""Compiles the 9 ONNX "light" models with aotc and compares them with onnxruntime.

The light models (onnx/backend/test/data/light, opset 9) ship with their large weights replaced by
ConstantOfShape(0.02) placeholders, so their reference outputs are constant and test almost no
numerics. This script swaps every placeholder for a seeded random initializer shaped for its
consumer (He-scaled conv and dense weights, well-conditioned batch-norm parameters), then:
  1. runs the model with onnxruntime on a seeded random input (the oracle);
  2. compiles it with `aotc compile --target T`, checks the package's memory plan
     (memory_plan_check.py: no overlapping live buffers, arena <= 1.05 x the lower bound) and
     builds all packages in one CMake super-project;
  3. runs each package's runner and requires relative L2 error <= 1e-4 against onnxruntime.
With --build-only it stops after step 2 and requires every package to build (targets whose device
is not on this machine, such as the CUDA ones in CI). --stage prepare does step 1 and the compile
with the memory-plan check, and leaves in --work everything step 3 needs (packages, inputs,
onnxruntime's outputs, manifest.json); --stage run on the device's machine then builds, runs and
compares from that folder alone, without aotc. Exit status is non-zero when any model fails.
A last line "N passed, M failed" summarises.
"""
import argparse
import concurrent.futures
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parent))
from memory_plan_check import check_package  # noqa: E402
from precision_range import out_of_range_nodes  # noqa: E402
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from device_stages import add_stage_arguments, read_manifest, runner_command, write_manifest  # noqa: E402

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
MODELS = ["bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50",
          "shufflenet", "squeezenet", "vgg19", "zfnet512"]
TOLERANCE = 1e-4
# --precision fp16/bf16 stores activations and weights at 16 bits: 11 and 8 significant bits.
PRECISION_TOLERANCE = {"fp32": 1e-4, "fp16": 1e-2, "bf16": 5e-2}


def consumers(graph, name, through=("Unsqueeze", "Reshape", "Squeeze")):
    """(op_type, input index) of the nodes that use `name`, looking through shape-only ops."""
    out = []
    for node in graph.node:
        for i, inp in enumerate(node.input):
            if inp == name:
                if node.op_type in through:
                    out += consumers(graph, node.output[0], through)
                else:
                    out.append((node.op_type, i))
    return out


def random_weight(rng, shape, uses):
    """Random data for a placeholder, scaled for how it is used so activations stay O(1)."""
    shape = tuple(int(d) for d in shape)
    op, idx = uses[0] if uses else ("", -1)
    if op in ("Conv", "Gemm", "MatMul") and idx == 1 and len(shape) >= 2:
        fan_in = int(np.prod(shape[1:])) if op != "MatMul" else shape[0]
        return rng.normal(0.0, np.sqrt(2.0 / fan_in), shape)
    if op == "BatchNormalization":
        if idx in (1,):
            return rng.uniform(0.8, 1.2, shape)
        if idx == 4:
            return rng.uniform(0.5, 1.5, shape)
        return rng.normal(0.0, 0.1, shape)
    if op == "Mul":
        return rng.uniform(0.8, 1.2, shape)
    return rng.normal(0.0, 0.05, shape)


def randomize(model, seed):
    """Replaces every ConstantOfShape fed by a constant shape with a random initializer."""
    rng = np.random.default_rng(seed)
    g = model.graph
    inits = {i.name: i for i in g.initializer}
    keep, replaced = [], 0
    for node in g.node:
        if node.op_type == "ConstantOfShape" and node.input[0] in inits:
            shape = numpy_helper.to_array(inits[node.input[0]])
            data = random_weight(rng, shape, consumers(g, node.output[0])).astype(np.float32)
            g.initializer.append(numpy_helper.from_array(data, node.output[0]))
            replaced += 1
        else:
            keep.append(node)
    del g.node[:]
    g.node.extend(keep)
    return replaced


def expose_logits(model):
    """Adds the input of a final Softmax as a second graph output.

    Random weights in deep residual nets (resnet50, shufflenet) give logits large enough that the
    softmax saturates to one-hot, which would compare equal even if every layer were slightly wrong;
    the logits themselves are compared too."""
    g = model.graph
    producers = {o: n for n in g.node for o in n.output}
    last = producers.get(g.output[0].name)
    if last is None or last.op_type != "Softmax":
        return False
    g.output.append(onnx.helper.make_tensor_value_info(last.input[0], onnx.TensorProto.FLOAT, None))
    return True


def rel_l2(actual, expected):
    a, e = actual.astype(np.float64).ravel(), expected.astype(np.float64).ravel()
    return float(np.linalg.norm(a - e) / max(np.linalg.norm(e), 1e-30))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--aotc", default="build/aotc")
    ap.add_argument("--target", default="x86-64")
    ap.add_argument("--work", default="build/light_models")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--precision", choices=("fp32", "fp16", "bf16"), default="fp32",
                    help="aotc compile --precision (the tolerance follows unless --tolerance is given)")
    ap.add_argument("--tolerance", type=float, default=None,
                    help="relative L2 bound; default 1e-4 for fp32, 1e-2 for fp16, 5e-2 for bf16")
    ap.add_argument("--compile-arg", action="append", default=[], metavar="ARG",
                    help="an extra argument for aotc compile (repeatable), e.g. --compile-arg=--accumulate=compensated")
    ap.add_argument("--build-only", action="store_true",
                    help="compile and build the packages, do not run them (no device here)")
    ap.add_argument("--cmake-define", action="append", default=[], metavar="NAME=VALUE",
                    help="a -D option for the packages' CMake configure (repeatable), e.g. "
                         "AOTC_MLU_NUMERICS=ieee")
    add_stage_arguments(ap, "the packages, inputs and onnxruntime's outputs")
    args = ap.parse_args()
    global TOLERANCE
    TOLERANCE = args.tolerance if args.tolerance is not None else PRECISION_TOLERANCE[args.precision]
    if args.build_only and args.stage != "all":
        ap.error("--build-only and --stage exclude each other")

    aotc, work = Path(args.aotc).resolve(), Path(args.work).resolve()
    t0 = time.time()
    if args.stage == "run":
        manifest = read_manifest(ap, work, args.target)
        names, failures, compiled = manifest["models"], manifest["failures"], manifest["compiled"]
        inputs = {n: work / f for n, f in manifest["inputs"].items()}
        expected = {n: [read_tensor(work / f) for f in files] for n, files in manifest["expected"].items()}
        return build_and_check(args, work, t0, names, failures, compiled, inputs, expected)

    import onnxruntime as ort
    if work.exists():
        shutil.rmtree(work)
    (work / "pkgs").mkdir(parents=True)
    names = [m for m in args.models.split(",") if m]
    failures, memory_errors, compiled, expected, inputs = {}, {}, [], {}, {}
    for k, name in enumerate(names):
        model = onnx.load(str(LIGHT / f"light_{name}.onnx"))
        n = randomize(model, seed=1000 + k)
        expose_logits(model)
        model_dir = work / "models"
        model_dir.mkdir(exist_ok=True)
        path = model_dir / f"{name}.onnx"
        onnx.save(model, str(path))
        rng = np.random.default_rng(k)
        # Opset-9 models list their initializers among the graph inputs too: the data input is
        # the one that no initializer provides.
        init_names = {i.name for i in model.graph.initializer}
        inp = next(i for i in model.graph.input if i.name not in init_names)
        shape = [d.dim_value for d in inp.type.tensor_type.shape.dim]
        x = rng.uniform(0.0, 1.0, shape).astype(np.float32)
        (work / f"{name}_input.pb").write_bytes(numpy_helper.from_array(x, inp.name).SerializeToString())
        inputs[name] = work / f"{name}_input.pb"
        if not args.build_only:  # --stage prepare stores these for the device's machine
            so = ort.SessionOptions()
            so.log_severity_level = 3  # the opset-9 models list unused initializers: one warning each
            sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
            expected[name] = sess.run(None, {inp.name: x})
        keep = out_of_range_nodes(model, {inp.name: x}, args.precision)
        if keep:
            print(f"light: {name}: {len(keep)} of {len(model.graph.node)} nodes kept fp32 (values beyond "
                  f"{args.precision}'s range)", flush=True)
        p = subprocess.run([str(aotc), "compile", str(path), "--target", args.target, "-o",
                            str(work / "pkgs" / name), "--name", name,
                            "--precision", args.precision] + (["--keep-fp32", ",".join(keep)] if keep else []) +
                           args.compile_arg, capture_output=True, text=True)
        if p.returncode != 0:
            failures[name] = "compile failed: " + " ".join(p.stderr.split())[:400]
        else:
            compiled.append(name)
            memory_errors[name] = check_package(work / "pkgs" / name)
        print(f"light: {name}: {n} placeholders randomized, compile "
              f"{'ok' if p.returncode == 0 else 'FAILED'} ({time.time() - t0:.0f} s)", flush=True)

    # The memory plan must be sound and within 5% of the lower bound whatever the numerics say.
    for name, errors in memory_errors.items():
        if errors:
            why = "memory plan: " + "; ".join(errors[:3])
            failures[name] = f"{failures[name]}; {why}" if name in failures else why
    if args.stage == "prepare":
        stored = {}
        for name in compiled:
            stored[name] = []
            for k, tensor in enumerate(expected[name]):
                f = work / "expected" / name / f"output_{k}.pb"
                f.parent.mkdir(parents=True, exist_ok=True)
                f.write_bytes(numpy_helper.from_array(tensor).SerializeToString())
                stored[name].append(str(f.relative_to(work)))
        write_manifest(work, args.target, models=names, failures=failures, compiled=compiled,
                       inputs={n: str(inputs[n].relative_to(work)) for n in compiled},
                       expected=stored)
        print(f"light: prepared {len(compiled)} packages in {work} for `--stage run`")
        return 0
    return build_and_check(args, work, t0, names, failures, compiled, inputs, expected)


def read_tensor(path):
    t = onnx.TensorProto()
    t.ParseFromString(Path(path).read_bytes())
    return numpy_helper.to_array(t)


def build_and_check(args, work, t0, names, failures, compiled, inputs, expected):
    """Builds the compiled packages in one super-project, runs them and compares with `expected`."""
    if compiled:
        (work / "CMakeLists.txt").write_text(
            "cmake_minimum_required(VERSION 3.16)\nproject(aotc_light_models C CXX)\n" +
            "".join(f"add_subdirectory(pkgs/{n} {n})\n" for n in compiled))
        subprocess.run(["cmake", "-S", str(work), "-B", str(work / "build"), "-G", "Ninja",
                        "-DCMAKE_BUILD_TYPE=Release"] + [f"-D{d}" for d in args.cmake_define],
                       check=True, capture_output=True)
        b = subprocess.run(["ninja", "-C", str(work / "build"), "-k", "0", f"-j{args.jobs}"],
                           capture_output=True, text=True)
        (work / "build.log").write_text(b.stdout + b.stderr)
        print(f"light: packages built ({time.time() - t0:.0f} s)", flush=True)

    def check(name):
        """Runs one package; returns (lines to print, failure or None)."""
        runner = work / "build" / name / f"{name}_run"
        if not runner.exists():
            return [], "package did not build (see build.log)"
        if args.build_only:
            return [f"light: {name}: package built"], None
        out = work / "out" / name
        t1 = time.time()
        p = subprocess.run(runner_command(args, runner) +
                           ["--input", str(inputs[name]), "--output-dir", str(out)],
                           capture_output=True, text=True, timeout=900)
        if p.returncode != 0:
            return [], "runner failed: " + " ".join(p.stderr.split())[:400]
        lines, errors = [], []
        for k, exp in enumerate(expected[name]):
            actual = read_tensor(out / f"output_{k}.pb")
            if actual.shape != exp.shape or actual.dtype != exp.dtype:
                errors.append(f"output {k} is {actual.dtype}{list(actual.shape)}, onnxruntime gives "
                              f"{exp.dtype}{list(exp.shape)}")
                continue
            err = rel_l2(actual, exp)
            lines.append(f"light: {name}: output {k}: relative L2 error {err:.2e} "
                         f"({'ok' if err <= TOLERANCE else 'FAILED'}), |expected| "
                         f"{np.linalg.norm(exp):.3g}")
            if not err <= TOLERANCE:  # NaN fails too
                errors.append(f"output {k}: relative L2 error {err:.2e} > {TOLERANCE:g}")
        lines.append(f"light: {name}: run {time.time() - t1:.1f} s")
        return lines, "; ".join(errors) or None

    # Packages run side by side: a device package's first run compiles its kernels (OpenCL on
    # PoCL), on one core each.
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for name, (lines, failure) in zip(compiled, pool.map(check, compiled)):
            for line in lines:
                print(line, flush=True)
            if failure:  # keeps a memory-plan failure found at compile time
                failures[name] = f"{failures[name]}; {failure}" if name in failures else failure

    for name, why in failures.items():
        print(f"FAILED light model {name}: {why}")
    passed = len(names) - len(failures)
    print(f"{passed} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
