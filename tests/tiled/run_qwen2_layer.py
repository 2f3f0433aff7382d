#!/usr/bin/env python3
"""Runs the Qwen2-style decoder layer of sweep_qwen2_distribution.py (28 query heads, 4 KV heads,
head dim 128, hidden 3584; RMSNorm, rotary, causal mask, the new keys and values as outputs) as an
npu-tiled package on aotc's emulation of the tile API, at a few prompt lengths in one bucketed
package, and compares every output with onnxruntime (relative L2 within --tolerance). Each
launch's tiles are checked against their slices of the legalized distributions as they run, so a
length whose legalization is wrong fails with the kernel, tile, tensor and element.

Usage: run_qwen2_layer.py --aotc build/aotc --tiles 4 --lengths 1,7,17,64
"""
import argparse
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

ROOT = Path(__file__).resolve().parents[2]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--aotc", default="build/aotc")
    ap.add_argument("--lengths", default="1,7,17,64")
    ap.add_argument("--tiles", type=int, default=4)
    ap.add_argument("--tolerance", type=float, default=1e-4)
    ap.add_argument("--work", default="build/qwen2_run")
    args = ap.parse_args()
    work = Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    model = work / "qwen2_layer.onnx"
    if not model.exists():
        subprocess.run([sys.executable, str(ROOT / "models" / "llama.py"), "--size", "test", "--vocab", "256",
                        "--hidden", "3584", "--layers", "1", "--heads", "28", "--kv-heads", "4",
                        "--intermediate", "512", "--max-positions", "512", "--batch", "1", "--seq", "16",
                        "--past", "0", "--cache", "0", "--seq-symbol", "seq", "-o", str(model)],
                       check=True, capture_output=True)
    lengths = sorted({int(n) for n in args.lengths.split(",")})
    pkg, build = work / f"package_{args.tiles}", work / f"build_{args.tiles}"
    p = subprocess.run([args.aotc, "compile", str(model), "--target", "npu-tiled", "--tiles", str(args.tiles),
                        "-o", str(pkg), "--name", "qwen2", "--buckets", "seq=" + ",".join(map(str, lengths))],
                       capture_output=True, text=True)
    if p.returncode != 0:
        print("FAIL compile:", " ".join(p.stderr.split())[-800:])
        return 1
    for cmd in (["cmake", "-S", pkg, "-B", build, "-DCMAKE_BUILD_TYPE=Release"], ["cmake", "--build", build, "-j2"]):
        b = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
        if b.returncode != 0:
            print("FAIL build:", b.stdout[-2000:], b.stderr[-2000:])
            return 1
    m = onnx.load(str(model))
    inits = {i.name for i in m.graph.initializer}
    inputs = [i for i in m.graph.input if i.name not in inits]
    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    failures = 0
    rng = np.random.default_rng(5)
    for n in lengths:
        feeds = {}
        for i in inputs:
            if i.name == "input_ids":
                feeds[i.name] = rng.integers(0, 256, (1, n)).astype(np.int64)
            elif i.name == "attention_mask":
                feeds[i.name] = np.ones((1, n), np.int64)
            elif i.name == "position_ids":
                feeds[i.name] = np.arange(n, dtype=np.int64)[None, :]
            else:
                raise SystemExit(f"unexpected input {i.name}")
        files = []
        for name, value in feeds.items():
            f = work / f"in_{n}_{name}.pb"
            f.write_bytes(numpy_helper.from_array(value, name).SerializeToString())
            files += ["--input", str(f)]
        out_dir = work / f"out_{args.tiles}_{n}"
        r = subprocess.run([str(build / "qwen2_run"), *files, "--output-dir", str(out_dir)], capture_output=True,
                           text=True, timeout=1800)
        if r.returncode != 0:
            print(f"FAIL length {n}: the run failed: {' '.join((r.stderr + r.stdout).split())[-800:]}")
            failures += 1
            continue
        expected = session.run(None, feeds)
        worst = 0.0
        for k, ref in enumerate(expected):
            t = onnx.TensorProto()
            t.ParseFromString((out_dir / f"output_{k}.pb").read_bytes())
            got = numpy_helper.to_array(t)
            ref = ref.astype(np.float64)
            err = float(np.linalg.norm(got - ref) / max(np.linalg.norm(ref), 1e-30)) if got.shape == ref.shape else 1.0
            worst = max(worst, err)
        ok = worst <= args.tolerance
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} length {n}, {args.tiles} tiles: worst relative L2 {worst:.2e} "
              f"over {len(expected)} outputs")
    print(f"run_qwen2_layer: {len(lengths) - failures} of {len(lengths)} lengths match onnxruntime")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
