#!/usr/bin/env python3
"""Compile-only sweep of a Qwen2-style decoder layer on npu-tiled: every prompt length given is
compiled for the tiles given, and legalize-distribution must place every kernel at every length
(chips.md §3.5: a Qwen2-7B prefill stopped at one prompt length on a 4-tile NPU). Prints a table
of the repairs chosen per band of lengths with the same repairs, and the DMA bytes per inference
after legalization beside always spilling to DDR.

The layer: Qwen2-7B's attention widths (28 query heads, 4 KV heads, head dim 128, hidden 3584),
RMSNorm, rotary embeddings, a causal mask, the new keys and values as outputs (the KV cache a
prefill writes), a SiLU MLP narrowed to 512 and a 256-word vocabulary (models/llama.py's
builder; Qwen2's q/k/v biases are not written by it). The lengths are one bucketed compile
(--buckets seq=...), so the weights are read once.

Usage: sweep_qwen2_distribution.py --aotc build/aotc [--lengths 1-512] [--tiles 4] [--work DIR]
The full sweep (1-512) takes about 40 minutes on 2 cores; the suite runs a sample.
"""
import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def parse_lengths(text):
    out = []
    for part in text.split(","):
        if "-" in part:
            a, b = part.split("-")
            out.extend(range(int(a), int(b) + 1))
        else:
            out.append(int(part))
    return sorted(set(out))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--aotc", default="build/aotc")
    ap.add_argument("--lengths", default="1-512")
    ap.add_argument("--tiles", type=int, default=4)
    ap.add_argument("--work", default="build/qwen2_sweep")
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    model = work / "qwen2_layer.onnx"
    if not model.exists():
        subprocess.run([sys.executable, str(ROOT / "models" / "llama.py"), "--size", "test", "--vocab", "256",
                        "--hidden", "3584", "--layers", "1", "--heads", "28", "--kv-heads", "4",
                        "--intermediate", "512", "--max-positions", "512", "--batch", "1", "--seq", "16",
                        "--past", "0", "--cache", "0", "--seq-symbol", "seq", "-o", str(model)],
                       check=True, capture_output=True)
    lengths = parse_lengths(args.lengths)
    p = subprocess.run([args.aotc, "compile", str(model), "--target", "npu-tiled", "--tiles", str(args.tiles),
                        "-o", str(work / "package"), "--buckets", "seq=" + ",".join(map(str, lengths)),
                        "--print-ir-after=legalize-distribution"], capture_output=True, text=True)
    headers = re.findall(r"// ----- IR after legalize-distribution \(step \d+ of \d+\) \[seq=(\d+)\]: (.*) -----",
                         p.stderr)
    # The repairs of each length: kind and consumer, from the printed graphs.
    graphs = re.split(r"// ----- IR after legalize-distribution", p.stderr)[1:]
    rows = {}
    for (n, stats), text in zip(headers, graphs):
        repairs = re.findall(r'Redistribute\(%([^)]+)\) \{bytes = (\d+), repair = "([a-z-]+)"\}', text)
        kinds = {}
        for _, _, kind in repairs:
            kinds[kind] = kinds.get(kind, 0) + 1
        after = re.search(r"([\d.]+ [KMG]?B) DMA after legalization", stats)
        spill = re.search(r"([\d.]+ [KMG]?B) DMA always spilling", stats)
        rows[int(n)] = (tuple(sorted(kinds.items())), after.group(1) if after else "?",
                        spill.group(1) if spill else "?")
    failures = []
    missing = [n for n in lengths if n not in rows]
    if missing:
        failures.append(f"no legalized graph at {len(missing)} lengths (first {missing[:5]}): "
                        + " ".join(p.stderr.split())[-600:])
    # Legalization done, the package is rendered (tests/tiled/run_qwen2_layer.py runs it).
    if p.returncode != 0:
        failures.append("the compile failed: " + " ".join(p.stderr.split())[-600:])
    print(f"| prompt lengths | repairs ({args.tiles} tiles) | DMA after legalization | always spilling |")
    print("|---|---|---|---|")
    band = []
    def flush():
        if not band:
            return
        a, b = band[0], band[-1]
        kinds = ", ".join(f"{c} {k}" for k, c in rows[a][0]) or "none"
        span = f"{a}" if a == b else f"{a}-{b}"
        print(f"| {span} ({len(band)} compiled) | {kinds} | {rows[a][1]} .. {rows[b][1]} | {rows[a][2]} .. {rows[b][2]} |")
    for n in sorted(rows):
        if band and rows[n][0] != rows[band[-1]][0]:
            flush()
            band = []
        band.append(n)
    flush()
    for f in failures:
        print("FAIL", f)
    print(f"sweep: {len(rows)} of {len(lengths)} lengths legalized, {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
