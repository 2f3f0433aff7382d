#!/usr/bin/env python3
"""Runs `aotc verify` on models/ at their test sizes for one target: compiles every package with
--dump-kernels, builds them in one CMake project, then verifies each against the reference
interpreter on the models' sample inputs, and checks that the report names no divergent node at
--tolerance (and, with --baseline-dir, that no node's error grew beyond 2x its baseline).

  tests/verify/verify_models.py --aotc build/aotc --target x86-64 --models mlp,bert

Baselines (docs/verify.md): tests/verify/baselines/<tag>/<model>.json, the tag being the target
(or --baseline-tag, e.g. mlu370-ieee for the IEEE build). The suite runs with
--baseline-dir tests/verify/baselines: a model whose node errors grew beyond 2x its baseline
fails, and so does a model without a baseline. Refresh them, after a change that is meant to move
the errors, with the same command and --write-baselines.
"""
import argparse
import dataclasses
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "models"))
import run_models  # noqa: E402  (the models/ table and builders)
from builder import save, write_inputs  # noqa: E402
from package_verification import verify_package  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aotc", default="build/aotc")
    ap.add_argument("--target", default="x86-64")
    ap.add_argument("--models", default="mlp,bert")
    ap.add_argument("--tolerance", default="1e-3")
    ap.add_argument("--cmake-define", action="append", default=[])
    ap.add_argument("--baseline-dir", help="folder of <tag>/<model>.json baselines (slimmed verify.json files)")
    ap.add_argument("--baseline-tag", help="the baselines' subfolder (default: the target)")
    ap.add_argument("--write-baselines", action="store_true", help="write each verify.json into --baseline-dir")
    ap.add_argument("--work", default="build/verify_models")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    aotc, work = Path(args.aotc).resolve(), Path(args.work).resolve()
    shutil.rmtree(work, ignore_errors=True)
    (work / "pkgs").mkdir(parents=True)
    t0 = time.time()
    names, inputs, failures = [m for m in args.models.split(",") if m], {}, []
    for name in names:
        module, overrides = run_models.MODELS[name]
        cfg = dataclasses.replace(module.CONFIGS["test"], **overrides)
        model = module.build(cfg)
        path = work / "models" / f"{name}.onnx"
        save(model, path)
        inputs[name] = write_inputs(model, module.sample_inputs(cfg, run_models.input_rng(name)), work / "inputs" / name)
        subprocess.run([str(aotc), "compile", str(path), "-t", args.target, "-o", str(work / "pkgs" / name),
                        "--name", name, "--dump-kernels"], check=True, capture_output=True)
    (work / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.16)\nproject(aotc_verify C CXX)\n" +
                                         "".join(f"add_subdirectory(pkgs/{n} {n})\n" for n in names))
    subprocess.run(["cmake", "-S", str(work), "-B", str(work / "build"), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release"] +
                   [f"-D{d}" for d in args.cmake_define], check=True, capture_output=True)
    subprocess.run(["ninja", "-C", str(work / "build"), f"-j{args.jobs}"], check=True, capture_output=True)
    print(f"verify_models: {len(names)} packages compiled and built ({time.time() - t0:.0f} s)", flush=True)
    for name in names:
        failure = verify_package(aotc, work / "models" / f"{name}.onnx", args.target, work / "pkgs" / name,
                                 work / "build" / name / f"{name}_run", inputs[name], work / "verify" / name,
                                 args.tolerance, args.baseline_dir, args.baseline_tag, args.write_baselines, t0)
        if failure:
            failures.append(failure)
    if failures:
        print("\n".join(failures), file=sys.stderr)
        return 1
    print(f"verify_models: all {len(names)} models verified on {args.target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
