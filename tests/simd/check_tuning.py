#!/usr/bin/env python3
"""Checks that tuned packages compute what untuned ones do (`aotc tune`, docs/tuning.md).

1. Tunes the four heaviest kernels of a small CNN-and-MatMul model on this machine (`aotc tune
   --threads 1,2 --kernels 4`: a fixed amount of work, whatever the machine's load), compiles it
   with and without the tuning file, builds and runs both, and requires each output within a relative L2 error of 1e-5 of onnxruntime's, and the tuned
   compile to report records for the model's kernels.
2. The sweep: `aotc tune --list` names every kernel's candidates for the SIMD kernel cases of
   tests/simd/check_simd_kernels.py (odd geometries, strides, dilations, ragged tiles, NCHWc
   chains, K-blocked products); for k = 1 .. --sweep a tuning file gives every kernel its k-th
   candidate (the cost model's choice where it has fewer), and the package compiled with it must
   match onnxruntime as above. So every alternative that a tuning may pick has run on these
   cases, whatever the timings say.
3. The errors of --tuning: a corrupt file is a one-line error naming it (exit 1); a file from
   another machine compiles with the cost model and a warning naming both machines.

The last line reads "N passed, M failed"; the exit status is non-zero on any failure.
Full sweep (every candidate of the default four): --sweep 3.
"""
import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parent))
import check_simd_kernels  # noqa: E402

TOLERANCE = 1e-5


def small_model(rng):
    """A stem, two 3x3s and a 1x1 with a residual (an NCHWc chain on AVX-512), the last 1x1 back
    to row-major, and a MatMul with a bias: kernels with tile, form, blocking and split choices."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 40, 40])
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [50, 320])
    inits, nodes = [], []

    def weight(name, shape):
        fan_in = int(np.prod(shape[1:]))
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32), name))
        return name

    def conv(name, x_in, w_shape, stride=1, pad=1):
        nodes.append(helper.make_node("Conv", [x_in, weight(name + "_w", w_shape)], [name], strides=[stride, stride],
                                      pads=[pad] * 4))
        nodes.append(helper.make_node("Relu", [name], [name + "_r"]))
        return name + "_r"

    s = conv("stem", "x", [32, 3, 3, 3], 2)
    c1 = conv("c1", s, [64, 32, 3, 3])
    c2 = conv("c2", c1, [64, 64, 3, 3])
    nodes.append(helper.make_node("Conv", [c2, weight("p_w", [32, 64, 1, 1])], ["p"]))
    nodes.append(helper.make_node("Add", ["p", s], ["res"]))
    nodes.append(helper.make_node("Conv", ["res", weight("out_w", [48, 32, 1, 1])], ["y"]))
    inits.append(numpy_helper.from_array((rng.standard_normal((320, 200)) * 0.05).astype(np.float32), "b"))
    inits.append(numpy_helper.from_array(rng.standard_normal(200).astype(np.float32), "bias"))
    nodes.append(helper.make_node("MatMul", ["a", "b"], ["mm"]))
    nodes.append(helper.make_node("Add", ["mm", "bias"], ["z"]))
    graph = helper.make_graph(nodes, "tuning_check", [x, a],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("z", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    feeds = {"x": rng.standard_normal((1, 3, 40, 40)).astype(np.float32),
             "a": rng.standard_normal((50, 320)).astype(np.float32)}
    return model, feeds


def rel_l2(actual, expected):
    a, e = actual.astype(np.float64).ravel(), expected.astype(np.float64).ravel()
    return float(np.linalg.norm(a - e) / max(np.linalg.norm(e), 1e-30))


class Check:
    def __init__(self, aotc, target, work):
        self.aotc, self.target, self.work = aotc, target, work
        self.passed = self.failed = 0

    def result(self, ok, what):
        print(f"{what}: {'ok' if ok else 'FAILED'}")
        self.passed, self.failed = self.passed + ok, self.failed + (not ok)

    def aotc_run(self, *args):
        return subprocess.run([str(self.aotc), *map(str, args)], capture_output=True, text=True)

    def compile(self, model, name, threads, tuning=None):
        cmd = ["compile", model, "--target", self.target, "-o", self.work / "pkgs" / name, "--name", name,
               "--threads", threads]
        if tuning:
            cmd += ["--tuning", tuning]
        p = self.aotc_run(*cmd)
        if p.returncode != 0:
            self.result(False, f"{name}: aotc compile: {p.stderr.strip()}")
            return None
        return p

    def build(self, names):
        (self.work / "CMakeLists.txt").write_text(
            "cmake_minimum_required(VERSION 3.16)\nproject(aotc_tuning_check C CXX)\n" +
            "".join(f"add_subdirectory(pkgs/{n} {n})\n" for n in names))
        subprocess.run(["cmake", "-S", str(self.work), "-B", str(self.work / "build"), "-G", "Ninja",
                        "-DCMAKE_BUILD_TYPE=Release"], check=True, capture_output=True)
        b = subprocess.run(["ninja", "-C", str(self.work / "build")], capture_output=True, text=True)
        if b.returncode != 0:
            self.result(False, f"the packages build: {b.stdout[-2000:]}")
            return False
        return True

    def compare(self, name, model, input_files, expected):
        out = self.work / "out" / name
        cmd = [str(self.work / "build" / name / f"{name}_run")]
        cmd += [a for f in input_files for a in ("--input", str(f))] + ["--output-dir", str(out)]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            self.result(False, f"{name} runner: {p.stderr.strip()[:300]}")
            return
        worst = 0.0
        for k, exp in enumerate(expected):
            t = onnx.TensorProto()
            t.ParseFromString((out / f"output_{k}.pb").read_bytes())
            worst = max(worst, rel_l2(numpy_helper.to_array(t), exp))
        self.result(worst <= TOLERANCE, f"{name}: {len(expected)} outputs, worst relative L2 error {worst:.2e}")


def reference(model, feeds, work, stem):
    import onnxruntime as ort
    path = work / f"{stem}.onnx"
    onnx.save(model, str(path))
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    expected = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"]).run(None, feeds)
    files = []
    for k, vi in enumerate(model.graph.input):
        f = work / f"{stem}_inputs" / f"input_{k}.pb"
        f.parent.mkdir(exist_ok=True)
        f.write_bytes(numpy_helper.from_array(feeds[vi.name], vi.name).SerializeToString())
        files.append(f)
    return path, expected, files


def sweep_files(check, model_path, threads, sweep):
    """Tuning files giving every kernel its k-th candidate, k = 1 .. sweep, from `aotc tune --list`."""
    p = check.aotc_run("tune", model_path, "--target", check.target, "--threads", threads, "--list",
                       "-o", check.work / "unused.json")
    if p.returncode != 0:
        check.result(False, f"aotc tune --list: {p.stderr.strip()}")
        return []
    listing = json.loads(p.stdout)
    kernels = listing["kernels"]
    check.result(len(kernels) > 0, f"aotc tune --list names {len(kernels)} kernels with candidates")
    files = []
    for k in range(1, sweep + 1):
        records = [{"kernel": e["kernel"], "threads": e["threads"], "params": e["candidates"][k]
                    if k < len(e["candidates"]) else "", "ms": 0, "cost_model_ms": 0, "candidates": []}
                   for e in kernels]
        doc = {"format": "aotc-tuning-1", "machines": [{"signature": listing["signature"], "kernels": records}]}
        f = check.work / f"sweep{k}.json"
        f.write_text(json.dumps(doc))
        files.append(f)
    return files


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--aotc", default="build/aotc")
    ap.add_argument("--target", default="host")
    ap.add_argument("--work", default="build/tuning_check")
    ap.add_argument("--kernels", type=int, default=4,
                    help="kernels of the small model tuned (the heaviest: the two heaviest at 1 and 2 threads)")
    ap.add_argument("--budget", type=float, default=900,
                    help="seconds the tuning may take at most (a bound for a stalled machine; --kernels sets the work)")
    ap.add_argument("--sweep", type=int, default=2, help="candidates swept over the SIMD kernel cases")
    args = ap.parse_args()
    aotc, work = Path(args.aotc).resolve(), Path(args.work).resolve()
    if work.exists():
        shutil.rmtree(work)
    (work / "pkgs").mkdir(parents=True)
    check = Check(aotc, args.target, work)

    # 1. A real tuning of a small model.
    model, feeds = small_model(np.random.default_rng(11))
    small, small_expected, small_inputs = reference(model, feeds, work, "small")
    tuning = work / "tuning.json"
    p = check.aotc_run("tune", small, "--target", args.target, "--threads", "1,2", "--kernels", args.kernels,
                       "--budget", args.budget, "--candidates", 3, "--rounds", 3, "-o", tuning, "--quiet")
    check.result(p.returncode == 0 and tuning.exists() and f"{args.kernels} kernels timed" in p.stdout,
                 f"aotc tune --kernels {args.kernels}: {p.stdout.strip()}" + (f" {p.stderr.strip()}" if p.returncode else ""))
    names = []
    for t in (1, 2):
        if check.compile(small, f"small_t{t}", t):
            names.append(f"small_t{t}")
        c = check.compile(small, f"small_t{t}_tuned", t, tuning)
        if c:
            names.append(f"small_t{t}_tuned")
            check.result("kernels of this model have records" in c.stdout and " 0 kernels" not in c.stdout,
                         f"the tuned compile at {t} thread(s) finds records: {c.stdout.strip().splitlines()[0]}")

    # 2. The sweep over the SIMD kernel cases.
    simd_model, simd_feeds = check_simd_kernels.build_model(np.random.default_rng(7))
    simd, simd_expected, simd_inputs = reference(simd_model, simd_feeds, work, "simd")
    sweep_names = []
    for k, f in enumerate(sweep_files(check, simd, "2", args.sweep), start=1):
        if check.compile(simd, f"simd_sweep{k}", 2, f):
            sweep_names.append(f"simd_sweep{k}")

    if check.build(names + sweep_names):
        for n in names:
            check.compare(n, small, small_inputs, small_expected)
        for n in sweep_names:
            check.compare(n, simd, simd_inputs, simd_expected)

    # 3. Errors and warnings of --tuning.
    corrupt = work / "corrupt.json"
    corrupt.write_text('{"format": "aotc-tuning-1", "machines": [')
    p = check.aotc_run("compile", small, "--target", args.target, "-o", work / "x", "--tuning", corrupt)
    lines = p.stderr.strip().splitlines()
    check.result(p.returncode == 1 and len(lines) == 1 and str(corrupt) in lines[0] and "line 1, column" in lines[0],
                 f"a corrupt tuning file: {p.stderr.strip()}")
    elsewhere = json.loads(tuning.read_text()) if tuning.exists() else None
    if elsewhere:
        for m in elsewhere["machines"]:
            m["signature"]["cpu"] = "Some Other CPU (GenuineIntel family 6 model 143 stepping 8)"
        other = work / "other_machine.json"
        other.write_text(json.dumps(elsewhere))
        p = check.aotc_run("compile", small, "--target", args.target, "-o", work / "y", "--tuning", other)
        check.result(p.returncode == 0 and "warning" in p.stderr and "Some Other CPU" in p.stderr
                     and "cost model" in p.stderr, f"a file from another machine: {p.stderr.strip()[:200]}")
    print(f"{check.passed} passed, {check.failed} failed")
    return 1 if check.failed else 0


if __name__ == "__main__":
    sys.exit(main())
