#!/usr/bin/env python3
"""The padding overhead of bucket sets: the FLOPs a bucketed package spends at the bucket that
runs each length n, against the FLOPs of the model compiled at exactly n, averaged over
n = 1..512 (docs/buckets.md, "Figures").

FLOPs are the compiler's own count (report.json "flops": 2 per multiply-add of the products, one
per element of the other kernels; masks included in the bucketed packages). A transformer's
FLOPs at length n are a polynomial of degree 2 in n (projections linear, attention quadratic),
so the exact-length figure comes from compiles at three lengths (--shape), checked at a fourth;
each bucket set is compiled once with --buckets and its schedules' FLOPs read from report.json.
Two averages: the mean of the per-length ratios (what a call costs on average, lengths uniform),
and the ratio of the sums (what a stream of calls at every length costs, long ones weighing
more).

  python3 scripts/bucket_overhead.py --aotc build/aotc [--models bert,llama_prefill,bert_base]
"""
import argparse
import dataclasses
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "models"))
import bert  # noqa: E402
import llama  # noqa: E402
from builder import save  # noqa: E402

MODELS = {
    "bert": (bert, bert.CONFIGS["dynamic"]),
    "llama_prefill": (llama, llama.CONFIGS["prefill"]),
    "bert_base": (bert, dataclasses.replace(bert.CONFIGS["full"], seq_symbol="seq")),
}
BUCKET_SETS = {
    "default (6)": [16, 32, 64, 128, 256, 512],
    "pow2:512 (10)": [1 << k for k in range(10)],
    "half steps (11)": [16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512],
    "multiples of 32 (16)": list(range(32, 513, 32)),
}
MAX = 512


def compile_report(aotc, model, out, flags):
    p = subprocess.run([aotc, "compile", str(model), "--target", "x86-64", "-o", str(out), *flags],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"aotc compile {' '.join(flags)} failed: {p.stderr.strip()}")
    return json.loads((Path(out) / "report.json").read_text())


def exact_flops(aotc, model, inputs, tmp):
    """FLOPs at lengths 1..MAX from a quadratic through three compiles, checked at a fourth."""
    def at(n):
        flags = [a for name, batch in inputs for a in ("--shape", f"{name}={batch}x{n}")]
        return compile_report(aotc, model, tmp / f"exact{n}", flags)["flops"]
    points = [16, 256, 512]
    coeffs = np.polyfit(points, [at(n) for n in points], 2)
    check = at(100)
    fitted = np.polyval(coeffs, 100)
    if abs(fitted - check) > 1e-9 * check + 1:
        raise SystemExit(f"FLOPs are not quadratic in the length: {check} at 100, the fit says {fitted}")
    return {n: float(np.polyval(coeffs, n)) for n in range(1, MAX + 1)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--aotc", default="build/aotc")
    ap.add_argument("--models", default="bert,llama_prefill")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for name in args.models.split(","):
            module, cfg = MODELS[name]
            model = tmp / f"{name}.onnx"
            save(module.build(cfg), model)
            inputs = [("input_ids", cfg.batch), ("attention_mask", cfg.batch)]
            inputs.append(("token_type_ids", cfg.batch) if module is bert else ("position_ids", cfg.batch))
            exact = exact_flops(args.aotc, model, inputs, tmp)
            for label, sizes in BUCKET_SETS.items():
                report = compile_report(args.aotc, model, tmp / "bucketed",
                                        ["--buckets", "seq=" + ",".join(map(str, sizes))])
                flops = {s["sizes"][0]: s["flops"] for s in report["buckets"]["schedules"]}
                spent = [flops[min(b for b in sizes if b >= n)] for n in range(1, MAX + 1)]
                needed = [exact[n] for n in range(1, MAX + 1)]
                ratios = np.array(spent) / np.array(needed)
                total = sum(spent) / sum(needed)
                rows.append((name, label, float(ratios.mean()), total, float(ratios.max())))
                print(f"{name:14s} {label:22s} mean {ratios.mean():.3f}x  total {total:.3f}x  worst "
                      f"{ratios.max():.2f}x", flush=True)
    print("\n| model | buckets | FLOPs at the bucket / at the exact length, mean over n = 1..512 | "
          "all FLOPs of the 512 runs / those at exact lengths | worst n |")
    print("|---|---|---|---|---|")
    for name, label, mean, total, worst in rows:
        print(f"| {name} | {label} | {mean:.3f} | {total:.3f} | {worst:.2f} |")


if __name__ == "__main__":
    sys.exit(main())
