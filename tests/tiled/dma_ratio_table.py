#!/usr/bin/env python3
"""Prints, per model and tile count, the DMA bytes per inference after legalize-distribution
beside always spilling to DDR, from the report.json of `aotc compile --target npu-tiled`
(docs/npu-tiled.md). Compiles only; nothing runs.

Usage: dma_ratio_table.py --aotc build/aotc --tiles 2,4,6 build/models/models/*.onnx
"""
import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path


def size(b):
    return f"{b / 1e6:.2f} MB" if b >= 1e6 else f"{b / 1e3:.1f} KB"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--aotc", default="build/aotc")
    ap.add_argument("--tiles", default="2,4,6")
    ap.add_argument("models", nargs="+")
    args = ap.parse_args()
    print("| model | tiles | repairs | DMA after legalization | always spilling | ratio |")
    print("|---|---|---|---|---|---|")
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for m in args.models:
            for tiles in args.tiles.split(","):
                pkg = Path(tmp) / f"{Path(m).stem}_{tiles}"
                p = subprocess.run([args.aotc, "compile", m, "--target", "npu-tiled", "--tiles", tiles, "-o",
                                    str(pkg)], capture_output=True, text=True)
                if p.returncode != 0:
                    failed += 1
                    print(f"| {Path(m).stem} | {tiles} | compile failed: {' '.join(p.stderr.split())[:200]} | | | |")
                    continue
                d = json.loads((pkg / "report.json").read_text()).get("distribution")
                if not d:
                    print(f"| {Path(m).stem} | {tiles} | (no distribution section) | | | |")
                    continue
                r = d["repairs"]
                repairs = ", ".join(f"{n} {k.replace('_', '-')}" for k, n in r.items() if n) or "none"
                after, spill = d["dma_bytes_per_inference"], d["always_spill_dma_bytes"]
                print(f"| {Path(m).stem} | {tiles} | {repairs} | {size(after)} | {size(spill)} | "
                      f"{after / spill:.2f} |", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
