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
import json
import shutil
import subprocess
import sys
import time
import zlib
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "models"))
import run_models  # noqa: E402  (the models/ table and builders)
from builder import save, write_inputs  # noqa: E402


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
        # Seeded by the model's name, not its place in --models: a baseline holds for any list.
        inputs[name] = write_inputs(model, module.sample_inputs(cfg, np.random.default_rng(zlib.crc32(name.encode()))),
                                    work / "inputs" / name)
        subprocess.run([str(aotc), "compile", str(path), "-t", args.target, "-o", str(work / "pkgs" / name),
                        "--name", name, "--dump-kernels"], check=True, capture_output=True)
    (work / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.16)\nproject(aotc_verify C CXX)\n" +
                                         "".join(f"add_subdirectory(pkgs/{n} {n})\n" for n in names))
    subprocess.run(["cmake", "-S", str(work), "-B", str(work / "build"), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release"] +
                   [f"-D{d}" for d in args.cmake_define], check=True, capture_output=True)
    subprocess.run(["ninja", "-C", str(work / "build"), f"-j{args.jobs}"], check=True, capture_output=True)
    print(f"verify_models: {len(names)} packages compiled and built ({time.time() - t0:.0f} s)", flush=True)
    for name in names:
        out = work / "verify" / name
        cmd = [str(aotc), "verify", str(work / "models" / f"{name}.onnx"), "-t", args.target, "-o", str(out),
               "--package", str(work / "pkgs" / name), "--runner", str(work / "build" / name / f"{name}_run"),
               "--tolerance", args.tolerance]
        for f in inputs[name]:
            cmd += ["--input", str(f)]
        baseline = Path(args.baseline_dir) / (args.baseline_tag or args.target) / f"{name}.json" if args.baseline_dir else None
        if baseline and not args.write_baselines:
            if not baseline.exists():
                failures.append(f"{name}: no baseline {baseline}: write it with --write-baselines (docs/verify.md)")
                print(f"FAIL: {name}: no baseline {baseline}", flush=True)
                continue
            cmd += ["--baseline", str(baseline)]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            failures.append(f"{name}: aotc verify exited {p.returncode}:\n{p.stdout[-3000:]}{p.stderr[-2000:]}")
            print(f"FAIL: {name}: exit {p.returncode}", flush=True)
            continue
        report = json.loads((out / "verify.json").read_text())
        compared = [n for n in report["nodes"] if n["compared"]]
        worst = max(compared, key=lambda n: float(n["max_rel"]) if not isinstance(n["max_rel"], str) else 1e300)
        first = report["first_divergent_node"]
        print(f"{'ok' if first is None else 'FAIL'}: {name} on {args.target}: {len(compared)} kernel outputs "
              f"compared, worst max_rel {worst['max_rel']} ({worst['node']}), first divergent {first!r} "
              f"({time.time() - t0:.0f} s)", flush=True)
        if first is not None:
            failures.append(f"{name}: first divergent node {first!r} at tolerance {args.tolerance}")
        if args.write_baselines and baseline:
            baseline.parent.mkdir(parents=True, exist_ok=True)
            # What --baseline reads (each node's max_rel), without the work folder's paths.
            slim = dict(report, model=f"{name}.onnx", nodes=[{k: n.get(k) for k in ("node", "op", "value", "compared", "max_rel")}
                                                            for n in report["nodes"]])
            baseline.write_text(json.dumps(slim, indent=1) + "\n")
            print(f"     wrote {baseline}", flush=True)
    if failures:
        print("\n".join(failures), file=sys.stderr)
        return 1
    print(f"verify_models: all {len(names)} models verified on {args.target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
