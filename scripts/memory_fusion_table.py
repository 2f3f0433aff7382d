#!/usr/bin/env python3
"""Compiles models with aotc and tabulates fusion and memory planning from their report.json.

For each model: ONNX nodes against kernels (after fusion), Fused kernels, arena against the lower
bound (the most bytes live at one step) and against no reuse at all, and the placement that won.
The default set is the 9 ONNX "light" models (onnx/backend/test/data/light) and the models of
models/ at the sizes tests/models/run_models.py tests them (built here by the same builders, with
the same configurations); ONNX files named on the command line replace that set.

  python3 scripts/memory_fusion_table.py --aotc build/aotc > table.md
  python3 scripts/memory_fusion_table.py --markdown-into docs/memory-and-fusion.md
  python3 scripts/memory_fusion_table.py --size full --markdown-into docs/memory-and-fusion.md
  python3 scripts/memory_fusion_table.py --traces tests/unit/data/memory_traces

--size full builds the models/ builders at their benchmark sizes (minutes and gigabytes) and
tabulates only those (the light models have one size). --traces also writes each model's memory
trace (buffer sizes and live steps of the final kernel schedule, from the package's
memory_plan.csv) for the planner's unit tests. --markdown-into FILE replaces the table between the
markers `<!-- table: begin -->` and `<!-- table: end -->` in FILE (`table full` for --size full).
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import onnx

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
LIGHT_MODELS = ["bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50",
                "shufflenet", "squeezenet", "vgg19", "zfnet512"]


def default_models(root, folder, size):
    """The light models, then the models/ builders' configurations of `size` saved into
    `folder`."""
    models = []
    if size == "test":
        models = [m for m in (LIGHT / f"light_{n}.onnx" for n in LIGHT_MODELS) if m.exists()]
    sys.path.insert(0, str(root / "tests" / "models"))
    import dataclasses
    from run_models import MODELS, save  # noqa: E402 (the test script owns the configurations)
    for name, (module, overrides) in MODELS.items():
        path = folder / f"{name}.onnx"
        save(module.build(dataclasses.replace(module.CONFIGS[size], **overrides)), path)
        models.append(path)
    return models


def with_real_weights(model_path, folder, root):
    """The light models stand in ConstantOfShape placeholders for their large weights; a few are
    too large to fold (vgg19's fc6) and would be computed into the arena at run time. Like
    tests/models/run_light_models.py, give them seeded random initializers instead, so the figures
    are those of the real networks."""
    if model_path.parent != LIGHT:
        return model_path
    sys.path.insert(0, str(root / "tests" / "models"))
    from run_light_models import randomize  # noqa: E402 (the test script owns the recipe)
    model = onnx.load(str(model_path))
    randomize(model, seed=1)
    out = folder / model_path.name
    onnx.save(model, str(out))
    return out


def compile_model(aotc, model, out_dir, extra):
    cmd = [aotc, "compile", str(model), "--target", "x86-64", "-o", str(out_dir), "--name", "m"] + extra
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        return None, proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "failed"
    return json.loads((out_dir / "report.json").read_text()), None


def write_trace(package, name, memory, path):
    """The trace as `bytes first last` lines. When the plan reached the lower bound, that bound
    is the proven optimum (the plan is the witness) and is recorded as `# optimal N`."""
    with open(package / "memory_plan.csv") as f:
        f.readline()
        rows = list(csv.DictReader(f))
    with open(path, "w") as out:
        out.write(f"# memory trace of {name}: the buffers of its final kernel schedule (aotc compile\n")
        out.write("# --target x86-64), written by scripts/memory_fusion_table.py --traces\n")
        out.write(f"# lower_bound {memory['lower_bound_bytes']}\n")
        if memory["arena_bytes"] == memory["lower_bound_bytes"]:
            out.write(f"# optimal {memory['lower_bound_bytes']}\n")
        out.write("# bytes first_step last_step\n")
        for r in rows:
            out.write(f"{r['bytes']} {r['first_step']} {r['last_step']}\n")


def kib(n):
    return f"{n / 1024:,.1f}"


def main():
    root = Path(__file__).resolve().parent.parent
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="*", help="ONNX models (default: the light models and the models/ builders)")
    ap.add_argument("--aotc", default=str(root / "build" / "aotc"))
    ap.add_argument("--traces", help="folder to write one <model>.trace per model into")
    ap.add_argument("--markdown-into", help="replace the table between the markers in this file")
    ap.add_argument("--aotc-arg", action="append", default=[], help="extra argument for aotc compile")
    ap.add_argument("--size", choices=("test", "full"), default="test",
                    help="configuration of the models/ builders (full: the benchmark sizes)")
    args = ap.parse_args()

    lines = ["| model | ONNX nodes | kernels | Fused | arena KiB | lower bound KiB | arena / bound | "
             "no reuse KiB | placement |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    worst, failed = 0.0, False
    with tempfile.TemporaryDirectory() as tmp:
        models = [Path(m) for m in args.models] or default_models(root, Path(tmp), args.size)
        for model in models:
            name = model.stem
            out = Path(tmp) / name
            source = with_real_weights(model, Path(tmp), root)
            report, error = compile_model(args.aotc, source, out, args.aotc_arg)
            if report is None:
                lines.append(f"| {name} | | | | | | | | failed: {error} |")
                print(f"{name}: {error}", file=sys.stderr)
                failed = True
                continue
            m = report["memory"]
            ratio = m["arena_bytes"] / m["lower_bound_bytes"] if m["lower_bound_bytes"] else 1.0
            worst = max(worst, ratio)
            lines.append(f"| {name} | {report['onnx_nodes']} | {report['kernels']} | "
                         f"{report['ops'].get('Fused', 0)} | {kib(m['arena_bytes'])} | "
                         f"{kib(m['lower_bound_bytes'])} | {ratio:.3f} | {kib(m['unshared_bytes'])} | "
                         f"{m['placement']} |")
            if args.traces:
                os.makedirs(args.traces, exist_ok=True)
                write_trace(out, name, m, Path(args.traces) / f"{name}.trace")
    table = "\n".join(lines) + "\n"
    if args.markdown_into:
        doc = Path(args.markdown_into).read_text()
        marker = "table" if args.size == "test" else "table full"
        begin, end = f"<!-- {marker}: begin -->\n", f"<!-- {marker}: end -->"
        if begin not in doc or end not in doc:
            sys.exit(f"{args.markdown_into}: the markers {begin.strip()} and {end} are missing")
        head, rest = doc.split(begin, 1)
        Path(args.markdown_into).write_text(head + begin + table + end + rest.split(end, 1)[1])
    else:
        sys.stdout.write(table)
    print(f"worst arena / lower bound: {worst:.3f}", file=sys.stderr)
    # The figure the planner must reach on every model (tests/models/memory_plan_check.py).
    return 1 if failed or worst > 1.05 else 0


if __name__ == "__main__":
    sys.exit(main())
