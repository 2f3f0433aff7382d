#!/usr/bin/env python3
"""Checks bucketed packages (aotc compile --buckets, docs/buckets.md) against onnxruntime run at
the exact length, for every length of a sweep.

For each model (a BERT-style encoder and a Llama-style prefill step, built by models/ with a
dynamic sequence axis 'seq' of up to 512 tokens) this script
  1. compiles it once with --buckets seq=16,32,64,128,256,512 (or --buckets) and builds the
     package;
  2. for every length n of the sweep (all of 1..512 with --lengths all; bucket boundaries and a
     few others with --lengths sample), draws seeded inputs of that length, runs onnxruntime on
     them (one session per model, graph optimisations off so it evaluates the graph as written)
     and runs the package's runner on them, all lengths of a chunk in one runner process
     (--run-list), which takes the inputs at their actual length and writes the outputs at it;
  3. requires every output to have onnxruntime's shape and dtype and a relative L2 error
     <= 1e-4.
Prints one line per model ("bert: 512/512 lengths within 1e-04, worst 3.1e-07 at n = 200") and,
last, "N passed, M failed". Exit status is non-zero on any failure.
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
import llama  # noqa: E402
from builder import save  # noqa: E402

TOLERANCE = 1e-4
DEFAULT_BUCKETS = "seq=16,32,64,128,256,512"
MAX_LENGTH = 512
# Bucket boundaries (both sides), the extremes and a few lengths inside buckets.
SAMPLE = [1, 2, 7, 15, 16, 17, 31, 32, 33, 50, 64, 65, 100, 127, 128, 129, 200, 255, 256, 257,
          384, 511, 512]


def bert_inputs(cfg, n, rng):
    ids = rng.integers(0, cfg.vocab, (cfg.batch, n), dtype=np.int64)
    types = np.zeros((cfg.batch, n), np.int64)
    types[:, n // 2:] = 1
    mask = np.ones((cfg.batch, n), np.int64)
    mask[1:, max(1, n - n // 4):] = 0  # the second row has padding of its own inside the length
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}


def llama_inputs(cfg, n, rng):
    positions = np.tile(np.arange(n, dtype=np.int64), (cfg.batch, 1))
    return {"input_ids": rng.integers(0, cfg.vocab, (cfg.batch, n), dtype=np.int64),
            "attention_mask": np.ones((cfg.batch, n), np.int64), "position_ids": positions}


# name -> (builder module, configuration, input generator)
MODELS = {
    "bert": (bert, bert.CONFIGS["dynamic"], bert_inputs),
    "llama_prefill": (llama, llama.CONFIGS["prefill"], llama_inputs),
}


def rel_l2(actual, expected):
    a, e = actual.astype(np.float64).ravel(), expected.astype(np.float64).ravel()
    return float(np.linalg.norm(a - e) / max(np.linalg.norm(e), 1e-30))


def read_tensor(path):
    t = onnx.TensorProto()
    t.ParseFromString(path.read_bytes())
    return numpy_helper.to_array(t)


def lengths_of(spec):
    if spec == "all":
        return list(range(1, MAX_LENGTH + 1))
    if spec == "sample":
        return SAMPLE
    return sorted({int(x) for x in spec.split(",") if x})


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--aotc", default="build/aotc")
    ap.add_argument("--target", default="host")
    ap.add_argument("--work", default="build/buckets")
    ap.add_argument("--models", default=",".join(MODELS), help="comma-separated subset of: " + ", ".join(MODELS))
    ap.add_argument("--buckets", default=DEFAULT_BUCKETS, help="the --buckets flag to compile with")
    ap.add_argument("--lengths", default="all", help="all (1..512), sample, or a comma-separated list")
    ap.add_argument("--chunk", type=int, default=64, help="lengths per runner process")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = ap.parse_args()
    import onnxruntime as ort

    names = [m for m in args.models.split(",") if m]
    unknown = [m for m in names if m not in MODELS]
    if unknown:
        ap.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(MODELS)}")
    lengths = lengths_of(args.lengths)
    aotc, work = Path(args.aotc).resolve(), Path(args.work).resolve()
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    t0 = time.time()
    failed = []
    for name in names:
        module, cfg, make_inputs = MODELS[name]
        model = module.build(cfg)
        path = work / f"{name}.onnx"
        save(model, path)
        pkg = work / f"{name}_pkg"
        p = subprocess.run([str(aotc), "compile", str(path), "--target", args.target, "-o", str(pkg),
                            "--name", name, "--buckets", args.buckets], capture_output=True, text=True)
        if p.returncode != 0:
            print(f"FAILED {name}: compile: {' '.join(p.stderr.split())[:600]}", flush=True)
            failed.append(name)
            continue
        b = subprocess.run(["cmake", "-S", str(pkg), "-B", str(pkg / "build"), "-G", "Ninja",
                            "-DCMAKE_BUILD_TYPE=Release"], capture_output=True, text=True)
        if b.returncode == 0:
            b = subprocess.run(["ninja", "-C", str(pkg / "build"), f"-j{args.jobs}"], capture_output=True, text=True)
        runner = pkg / "build" / f"{name}_run"
        if b.returncode != 0 or not runner.exists():
            (work / f"{name}_build.log").write_text(b.stdout + b.stderr)
            print(f"FAILED {name}: the package did not build (see {work / f'{name}_build.log'})", flush=True)
            failed.append(name)
            continue
        print(f"buckets: {name}: compiled and built ({time.time() - t0:.0f} s)", flush=True)

        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
        input_names = [i.name for i in model.graph.input]
        output_names = [o.name for o in model.graph.output]
        errors, worst = [], (0.0, 0)
        for c in range(0, len(lengths), args.chunk):
            chunk = lengths[c:c + args.chunk]
            chunk_dir = work / f"{name}_chunk"
            if chunk_dir.exists():
                shutil.rmtree(chunk_dir)
            expected, lines = {}, []
            for n in chunk:
                inputs = make_inputs(cfg, n, np.random.default_rng(1000 + n))
                expected[n] = sess.run(None, inputs)
                run_dir = chunk_dir / str(n)
                run_dir.mkdir(parents=True)
                files = []
                for k, iname in enumerate(input_names):
                    f = run_dir / f"input_{k}.pb"
                    f.write_bytes(numpy_helper.from_array(inputs[iname], iname).SerializeToString())
                    files.append(f)
                lines.append(" ".join(f"--input {f}" for f in files) + f" --output-dir {run_dir / 'out'}")
            run_list = chunk_dir / "runs.txt"
            run_list.write_text("\n".join(lines) + "\n")
            p = subprocess.run([str(runner), "--run-list", str(run_list)], capture_output=True, text=True,
                               timeout=1800)
            if p.returncode != 0:
                errors.append(f"runner failed on lengths {chunk[0]}..{chunk[-1]}: {' '.join(p.stderr.split())[:400]}")
                break
            for n in chunk:
                for k, oname in enumerate(output_names):
                    actual = read_tensor(chunk_dir / str(n) / "out" / f"output_{k}.pb")
                    exp = expected[n][k]
                    if actual.shape != exp.shape or actual.dtype != exp.dtype:
                        errors.append(f"n = {n}: output '{oname}' is {actual.dtype}{list(actual.shape)}, "
                                      f"onnxruntime gives {exp.dtype}{list(exp.shape)}")
                        continue
                    err = rel_l2(actual, exp)
                    if err > worst[0]:
                        worst = (err, n)
                    if not err <= TOLERANCE:
                        errors.append(f"n = {n}: output '{oname}': relative L2 error {err:.2e}")
            shutil.rmtree(chunk_dir)
        bad = {int(e.split(":")[0].split("=")[1]) for e in errors if e.startswith("n = ")}
        ok = len(lengths) - len(bad) if not any(e.startswith("runner") for e in errors) else 0
        print(f"buckets: {name}: {ok}/{len(lengths)} lengths within {TOLERANCE:.0e}, worst relative L2 "
              f"{worst[0]:.1e} at n = {worst[1]} ({args.target}, {args.buckets}; {time.time() - t0:.0f} s)",
              flush=True)
        if errors:
            for e in errors[:10]:
                print(f"  {e}")
            failed.append(name)
    print(f"{len(names) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
