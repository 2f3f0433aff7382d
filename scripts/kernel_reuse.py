#!/usr/bin/env python3
"""Kernel reuse of the mlu370 target (issue 23 item 6): how much of it is shared tile plans.

1. Kernels: compiles each given model for mlu370 and counts the kernels of its BANG C source
   (`__mlu_global__` functions of src/<name>_kernels.mlu) and the launches of tile_plans.txt
   (one "=== launch" per launch, each naming its plan's kernel), and how many of the source's
   kernels are named by a tile plan: the share that come from the shared plans.
2. Lines: non-blank, non-comment lines of what is mlu370's own (the BANG C dialect and emitter,
   its package templates and runtime with the emulation, targets/mlu370/) against what it
   reuses: the tile-kernel layer (codegen/tile/) and the device-package files of codegen/device/
   that the BANG C sources include.

Usage: scripts/kernel_reuse.py --aotc build/aotc MODEL.onnx [MODEL.onnx ...]
"""
import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def code_lines(path):
    n, block = 0, False
    for raw in path.read_text(errors="replace").splitlines():
        line = raw.strip()
        if block:
            if "*/" in line:
                block = False
            continue
        if not line or line.startswith("//") or line.startswith("#") and path.suffix in (".cmake", ".txt"):
            continue
        if line.startswith("/*"):
            block = "*/" not in line
            continue
        n += 1
    return n


def files(*patterns):
    out = []
    for p in patterns:
        out += sorted(f for f in ROOT.glob(p) if f.is_file())
    return out


def included_device_files(sources):
    seen = set()
    for f in sources:
        for m in re.finditer(r'#include "(codegen/device/[^"]+)"', f.read_text(errors="replace")):
            base = ROOT / m.group(1)
            for g in (base, base.with_suffix(".cpp")):
                if g.exists():
                    seen.add(g)
    return sorted(seen)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--aotc", default="build/aotc")
    ap.add_argument("models", nargs="*")
    args = ap.parse_args()

    own = files("codegen/bang/*.cpp", "codegen/bang/*.h", "codegen/bang/templates/*",
                "codegen/bang/runtime/**/*", "targets/mlu370/*")
    dialect = files("codegen/bang/bang_dialect.*")
    tile = files("codegen/tile/*.cpp", "codegen/tile/*.h")
    device = included_device_files(files("codegen/bang/*.cpp") + tile)
    own_n, dialect_n = sum(map(code_lines, own)), sum(map(code_lines, dialect))
    target_n = sum(map(code_lines, files("targets/mlu370/*")))
    tile_n, device_n = sum(map(code_lines, tile)), sum(map(code_lines, device))
    print(f"lines: BANG C dialect {dialect_n}, target facts {target_n}, all mlu370-only code {own_n} "
          f"(dialect, emitter, templates, runtime and emulation, target)")
    print(f"lines reused: tile-kernel layer {tile_n} (codegen/tile), device-package files {device_n} "
          f"({', '.join(str(f.relative_to(ROOT)) for f in device)})")
    print(f"reuse ratio: {tile_n + device_n} shared lines for {dialect_n + target_n} lines of dialect + target "
          f"({(tile_n + device_n) / (dialect_n + target_n):.1f}x); {100 * (tile_n + device_n) / (own_n + tile_n + device_n):.0f}% "
          f"of all the code behind mlu370 packages is shared")

    total_kernels = total_planned = 0
    with tempfile.TemporaryDirectory() as tmp:
        for model in args.models:
            pkg = Path(tmp) / Path(model).stem
            p = subprocess.run([args.aotc, "compile", model, "--target", "mlu370", "-o", str(pkg),
                                "--name", "m"], capture_output=True, text=True)
            if p.returncode != 0:
                print(f"{model}: compile failed: {p.stderr.strip()[:300]}")
                continue
            source = (pkg / "src" / "m_kernels.mlu").read_text()
            kernels = set(re.findall(r"__mlu_global__\s+void\s+(\w+)\s*\(", source))
            planned = set(re.findall(r"^=== launch \d+: .*, kernel (\w+)$", (pkg / "tile_plans.txt").read_text(), re.M))
            total_kernels += len(kernels)
            total_planned += len(kernels & planned)
            print(f"{Path(model).name}: {len(kernels)} BANG C kernels, {len(kernels & planned)} from shared tile plans")
    if total_kernels:
        print(f"kernels from shared tile plans: {total_planned} of {total_kernels} "
              f"({100 * total_planned / total_kernels:.0f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
