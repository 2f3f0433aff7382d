#!/usr/bin/env python3
"""Per-layer time of an aotc package against onnxruntime's own profile of the same model.

    python3 bench/compare_layers.py MODEL.onnx RUNNER [--input X.pb]... [--weights W] [--threads N]

RUNNER is the `<name>_run` of a package compiled with `aotc compile --profile` (same model,
same --threads). The script runs it with `--bench RUNS --profile`, runs an onnxruntime session
(all graph optimisations, enable_profiling) RUNS times on the same inputs, and prints one line
per aotc node: aotc ms, onnxruntime ms (median over runs of its kernel time), their ratio, the
node. onnxruntime names its nodes after their outputs; a node is matched by its name plus
"_output_0" (Conv nodes also as the BatchNormalization or Add they absorbed), with or without
ORT's "_nchwc" suffix; a fused node left over then takes the onnxruntime node named after the
nearest output upstream of it in the model that no other row took (ResNet's Conv + BN + Add +
Relu, which aotc names after the Relu and onnxruntime after the BatchNormalization).
Unmatched onnxruntime nodes are summed at the end. The two are timed one
after the other, not alternately: compare ratios between layers of one run, and repeat it before
trusting a difference of less than 10% (see docs/performance.md).
"""
import argparse
import collections
import json
import re
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

import onnx
import onnxruntime as ort
from onnx import numpy_helper


def load_inputs(model, files):
    feeds = {}
    inits = {i.name for i in model.graph.initializer}
    graph_inputs = [vi for vi in model.graph.input if vi.name not in inits]
    if files and len(files) != len(graph_inputs):
        raise SystemExit(f"expected {len(graph_inputs)} --input files, got {len(files)}")
    for vi, f in zip(graph_inputs, files):
        t = onnx.TensorProto()
        t.ParseFromString(Path(f).read_bytes())
        feeds[vi.name] = numpy_helper.to_array(t)
    return feeds


def ort_node_ms(model_path, feeds, threads, runs):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.enable_profiling = True
    # onnxruntime writes its profile into the working folder unless given a prefix elsewhere.
    scratch = tempfile.mkdtemp(prefix="aotc_compare_layers_")
    so.profile_file_prefix = str(Path(scratch) / "onnxruntime_profile")
    sess = ort.InferenceSession(model_path, so, providers=["CPUExecutionProvider"])
    for _ in range(runs + 1):
        sess.run(None, feeds)
    profile = Path(sess.end_profiling())
    events = json.loads(profile.read_text())
    shutil.rmtree(scratch, ignore_errors=True)
    durations = collections.defaultdict(list)
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            durations[e["name"][: -len("_kernel_time")]].append(e["dur"] / 1000.0)
    return {k: statistics.median(v[-runs:]) for k, v in durations.items()}


def aotc_node_ms(runner, files, weights, runs):
    cmd = [runner] + (["--weights", weights] if weights else [])
    cmd += [a for f in files for a in ("--input", f)] + ["--output-dir", "/tmp/aotc_compare_layers",
                                                         "--bench", str(runs), "--profile"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        m = re.match(r"\s*([0-9.]+)\s+[0-9.]+\s+[0-9.]+\s+(.+) \((\w+)\)$", line)
        if m:
            rows.append((float(m.group(1)), m.group(2), m.group(3)))
    if not rows:
        raise SystemExit(f"{runner} printed no profile: was the package compiled with --profile?")
    return rows


def ort_key(name, ort_ms):
    for base in (name, name.replace("/Conv", "/BatchNormalization"), name.replace("/Conv", "/Add")):
        for key in (base + "_output_0_nchwc", base + "_output_0"):
            if key in ort_ms:
                return key
    return None


class Producers:
    """The ONNX model's nodes by name and by output, built once."""

    def __init__(self, model):
        self.of_output = {o: n for n in model.graph.node for o in n.output}
        self.by_name = {n.name: n for n in model.graph.node}


def upstream_outputs(producers, name, depth=3):
    """Outputs of the ONNX nodes that feed node `name`, nearest first (up to `depth` steps): a
    fused node of either side may be named after any member, e.g. aotc's 'layer1.0/Relu_2' (Conv,
    BatchNormalization, Add, Relu) is onnxruntime's 'layer1.0/BatchNormalization_2_output_0'."""
    producer = producers.of_output
    frontier, seen, found = [producers.by_name.get(name)], set(), []
    for _ in range(depth):
        nxt = []
        for node in filter(None, frontier):
            for i in node.input:
                p = producer.get(i)
                if p is not None and p.name not in seen:
                    seen.add(p.name)
                    found.extend(p.output)
                    nxt.append(p)
        frontier = nxt
    return found


def fallback_key(producers, name, ort_ms, used):
    """An onnxruntime node no direct match took, named after an output upstream of `name`."""
    for out in upstream_outputs(producers, name):
        for key in (out + "_nchwc", out):
            if key in ort_ms and key not in used:
                return key
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("runner")
    ap.add_argument("--input", action="append", default=[], help="input TensorProto, in graph-input order")
    ap.add_argument("--weights", help="the package's weights file (default: the runner's own default)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()

    model = onnx.load(args.model, load_external_data=False)
    feeds = load_inputs(model, args.input)
    if not args.input:
        raise SystemExit("give the inputs with --input (the runner and onnxruntime must see the same data)")
    aotc_rows = aotc_node_ms(args.runner, args.input, args.weights, args.runs)
    ort_ms = ort_node_ms(args.model, feeds, args.threads, args.runs)

    # Direct matches first, so that a fallback never takes a node another row is named after.
    keys = {name: ort_key(name, ort_ms) for _, name, _ in aotc_rows}
    used = {k for k in keys.values() if k}
    producers = Producers(model)
    for _, name, op in aotc_rows:
        if not keys[name] and op == "Fused":
            keys[name] = fallback_key(producers, name, ort_ms, used)
            if keys[name]:
                used.add(keys[name])
    total_aotc = total_ort = unmatched_aotc = 0.0
    print(f"{'aotc ms':>9} {'ORT ms':>9} {'ratio':>6}  node (op)")
    for ms, name, op in aotc_rows:
        key = keys[name]
        if key:
            total_aotc += ms
            total_ort += ort_ms[key]
            print(f"{ms:9.3f} {ort_ms[key]:9.3f} {ms / ort_ms[key]:6.2f}  {name} ({op})")
        else:
            unmatched_aotc += ms
            print(f"{ms:9.3f} {'-':>9} {'-':>6}  {name} ({op})")
    rest = {k: v for k, v in ort_ms.items() if k not in used}
    print(f"{total_aotc:9.3f} {total_ort:9.3f} {total_aotc / max(total_ort, 1e-9):6.2f}  matched nodes")
    print(f"{unmatched_aotc:9.3f} {sum(rest.values()):9.3f}         nodes without a match on the other side "
          f"(onnxruntime: {len(rest)}, e.g. a fused residual Add)")


if __name__ == "__main__":
    main()
