#!/usr/bin/env python3
"""Times aotc packages, untuned and tuned, against onnxruntime on the benchmark models, in the
same run.

One command (from the repository root, after building aotc):

    python3 bench/run.py                       # all models, 1 and 2 threads, target host
    python3 bench/run.py --models resnet50 --threads 1 --rounds 5
    python3 bench/run.py --models holdout      # the hold-out set of issue 26

For each model of models/ at its benchmark size it
  1. builds the ONNX model with its builder (cached in --work; same seed, same bytes);
  2. tunes it on this machine, `aotc tune --threads 1,2 --budget S -o WORK/tuning/MODEL.json`
     (the file is kept: a later run reuses its records and tunes nothing again, and says so;
     --retune starts it afresh), and notes the seconds the tuning took;
  3. compiles it with `aotc compile --target T --threads N` for each thread count, untuned (the
     cost model alone) and with --tuning, and builds all packages in one CMake super-project
     (Release);
  4. measures, in rounds that rotate the order of the three, the untuned and the tuned runner
     (`--bench RUNS`, the median of RUNS timed runs after one untimed run) and an onnxruntime
     session on the same inputs (all graph optimisations, intra-op threads N, the median of RUNS
     runs after one warm-up, then a 0.2 s pause so that its spinning workers are asleep before
     aotc runs);
  5. prints a Markdown table: the medians over rounds, the ratios to onnxruntime (below 1: aotc
     is faster), the percent of this machine's fp32 FMA peak the tuned package reaches (GFLOP
     counted from the model's Conv, MatMul and Gemm nodes; the peak measured by
     bench/fma_peak.cpp at the same thread count) and the tuning time; above it the machine
     (`aotc targets`: CPU, ISA, FMA rates), onnxruntime's version and the load averages (uptime)
     before and after.
The machine is shared, so every figure is a median, and the peak is the best of short runs
before and after the timings.
Speed is reported here, never asserted.

The hold-out set (--models holdout): ResNet-50, SqueezeNet 1.1, Inception-v2 (BN-Inception), a
two-layer Llama decoding step at TinyLlama width and a MiniLM-L6-H384 encoder (sequence 128): the
CNNs, encoders and decoder block on which the packages tuned by hand for one AMD Zen 4 were
measured on an Intel Xeon (issue 26).
"""
import argparse
import dataclasses
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import shape_inference

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "models"))
import bert  # noqa: E402
import inception_v2  # noqa: E402
import llama  # noqa: E402
import mlp  # noqa: E402
import mobilenet_v2  # noqa: E402
import resnet50  # noqa: E402
import squeezenet  # noqa: E402
from builder import save, write_inputs  # noqa: E402

# name -> (builder module, overrides of its 'full' configuration, what the row measures)
MODELS = {
    "resnet50": (resnet50, {}, "ResNet-50, 224x224, batch 1"),
    "mobilenet_v2": (mobilenet_v2, {}, "MobileNetV2 1.0, 224x224, batch 1"),
    "bert": (bert, {}, "BERT-base encoder, sequence 128, batch 1"),
    "llama": (llama, dict(layers=1), "Llama decoder block (TinyLlama width), one decoding step"),
    "mlp": (mlp, {}, "MLP 784-1024x3-10, batch 64"),
    "squeezenet": (squeezenet, {}, "SqueezeNet 1.1, 224x224, batch 1"),
    "inception_v2": (inception_v2, {}, "Inception-v2 (BN-Inception), 224x224, batch 1"),
    "llama2": (llama, {}, "two Llama decoder blocks (TinyLlama width), one decoding step"),
    "minilm": (bert, dict(hidden=384, layers=6, heads=12, intermediate=1536),
               "MiniLM-L6-H384 encoder, sequence 128, batch 1"),
}
# The hold-out set of issue 26 (CNNs, encoders and a decoder block measured on an Intel Xeon).
HOLDOUT = ["resnet50", "squeezenet", "inception_v2", "llama2", "minilm"]


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def model_gflop(path, inputs):
    """GFLOP of one run: 2 x multiply-adds of every Conv, MatMul and Gemm. Shapes come from ONNX
    shape inference, and where it cannot tell (shapes computed at run time) from one onnxruntime
    run that returns those operands too."""
    model = onnx.load(str(path))
    m = shape_inference.infer_shapes(model)
    shapes = {}
    for vi in list(m.graph.input) + list(m.graph.value_info) + list(m.graph.output):
        dims = [d.dim_value for d in vi.type.tensor_type.shape.dim]
        if dims and all(d > 0 for d in dims):
            shapes[vi.name] = dims
    for init in m.graph.initializer:
        shapes[init.name] = list(init.dims)
    for name, value in inputs.items():
        shapes[name] = list(value.shape)
    heavy = [n for n in m.graph.node if n.op_type in ("Conv", "MatMul", "Gemm")]
    missing = sorted({v for n in heavy for v in (n.input[0], n.input[1], n.output[0]) if v not in shapes})
    if missing:
        import onnxruntime as ort
        probe = onnx.ModelProto.FromString(model.SerializeToString())
        known = {o.name for o in probe.graph.output}
        for name in missing:
            if name not in known:
                probe.graph.output.append(onnx.ValueInfoProto(name=name))
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        sess = ort.InferenceSession(probe.SerializeToString(), so, providers=["CPUExecutionProvider"])
        names = [o.name for o in sess.get_outputs()]
        for name, value in zip(names, sess.run(names, inputs)):
            shapes.setdefault(name, list(value.shape))
    macs = 0
    for n in heavy:
        a, w, y = shapes[n.input[0]], shapes[n.input[1]], shapes[n.output[0]]
        if n.op_type == "Conv":
            macs += int(np.prod(y)) * int(np.prod(w[1:]))
        else:
            trans_a = any(at.name == "transA" and at.i for at in n.attribute)
            k = a[-2] if trans_a and n.op_type == "Gemm" else a[-1]
            macs += int(np.prod(y)) * k
    return 2.0 * macs / 1e9


def measure_peak(work, threads):
    exe = work / "fma_peak"
    subprocess.run(["g++", "-O2", "-march=native", "-pthread", str(ROOT / "bench" / "fma_peak.cpp"),
                    "-o", str(exe)], check=True)
    peak = {}
    out = subprocess.run([str(exe), str(max(threads)), "5"], check=True, capture_output=True,
                         text=True).stdout
    for line in out.splitlines():
        isa, t, gflops = line.split()
        peak[int(t)] = max(peak.get(int(t), 0.0), float(gflops))
    # Thread counts between 1 and the largest measured: scale the one-thread peak.
    for t in threads:
        peak.setdefault(t, peak[1] * t)
    return peak, out.strip().replace("\n", "; ")


def build_models(names, work, rebuild):
    built = {}
    for k, name in enumerate(names):
        module, overrides, _ = MODELS[name]
        cfg = dataclasses.replace(module.CONFIGS["full"], **overrides)
        path = work / "models" / f"{name}.onnx"
        inputs = module.sample_inputs(cfg, np.random.default_rng(200 + k))
        if rebuild or not path.exists():
            t0 = time.time()
            model = module.build(cfg)
            save(model, path)
            log(f"bench: built {name} ({time.time() - t0:.0f} s)")
        model = onnx.load(str(path), load_external_data=False)
        files = write_inputs(model, inputs, work / "inputs" / name)
        built[name] = (path, inputs, files, model_gflop(path, inputs))
    return built


def tune_models(aotc, target, built, threads, work, budget, retune):
    """`aotc tune` per model into WORK/tuning/MODEL.json; {name: (file, seconds, summary)}.
    A file from an earlier run is kept and its kernels are not timed again (seconds then covers
    only what was left), unless `retune`."""
    tuned = {}
    (work / "tuning").mkdir(parents=True, exist_ok=True)
    for name, (path, _, _, _) in built.items():
        out = work / "tuning" / f"{name}.json"
        if retune and out.exists():
            out.unlink()
        cmd = [str(aotc), "tune", str(path), "--target", target, "--threads", ",".join(map(str, threads)),
               "--budget", str(budget), "-o", str(out), "--quiet"]
        t0 = time.time()
        p = subprocess.run(cmd, capture_output=True, text=True)
        seconds = time.time() - t0
        if p.returncode != 0:
            sys.exit(f"bench: aotc tune of {name} failed: {p.stderr.strip()}")
        summary = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
        log(f"bench: tuned {name} in {seconds:.0f} s: {summary}")
        tuned[name] = (out, seconds, summary)
    return tuned


def compile_packages(aotc, target, built, threads, work, tuned):
    """Packages NAME_tT (the cost model alone) and NAME_tT_tuned (with the model's tuning file)."""
    pkgs = work / "pkgs"
    if pkgs.exists():
        shutil.rmtree(pkgs)
    pkgs.mkdir(parents=True)
    names = []
    for name, (path, _, _, _) in built.items():
        for t in threads:
            for variant in ("", "_tuned"):
                pkg = f"{name}_t{t}{variant}"
                cmd = [str(aotc), "compile", str(path), "--target", target, "-o", str(pkgs / pkg),
                       "--name", pkg, "--threads", str(t)]
                if variant:
                    cmd += ["--tuning", str(tuned[name][0])]
                t0 = time.time()
                p = subprocess.run(cmd, capture_output=True, text=True)
                if p.returncode != 0:
                    sys.exit(f"bench: aotc compile of {name} failed: {p.stderr.strip()}")
                if "warning" in p.stderr:
                    log(f"bench: {pkg}: {p.stderr.strip()}")
                log(f"bench: compiled {pkg} ({time.time() - t0:.0f} s)")
                names.append(pkg)
    (work / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.16)\nproject(aotc_bench C CXX)\n" +
        "".join(f"add_subdirectory(pkgs/{n} {n})\n" for n in names))
    subprocess.run(["cmake", "-S", str(work), "-B", str(work / "build"), "-G", "Ninja",
                    "-DCMAKE_BUILD_TYPE=Release"], check=True, capture_output=True)
    t0 = time.time()
    b = subprocess.run(["ninja", "-C", str(work / "build"), "-j2"], capture_output=True, text=True)
    if b.returncode != 0:
        (work / "build.log").write_text(b.stdout + b.stderr)
        sys.exit(f"bench: packages did not build; see {work / 'build.log'}")
    log(f"bench: packages built ({time.time() - t0:.0f} s)")


def machine_description(aotc, target):
    """The target's machine lines of `aotc targets` (cpu, isa, FMA rates, caches)."""
    out = subprocess.run([str(aotc), "targets"], capture_output=True, text=True).stdout
    if "\n" + target + "\n" not in "\n" + out:
        return target
    block = ("\n" + out).split("\n" + target + "\n", 1)[1].split("\n  dtypes", 1)[0]
    keep = [line.strip() for line in block.splitlines()
            if line.strip().startswith(("cpu:", "isa:", "vector FMA", "memory:", "the machine"))]
    return "; ".join(keep)


def load_average():
    return os.getloadavg()


def time_aotc(work, pkg, files, runs):
    runner = work / "build" / pkg / f"{pkg}_run"
    cmd = [str(runner)] + [a for f in files for a in ("--input", str(f))]
    cmd += ["--output-dir", str(work / "out" / pkg), "--bench", str(runs)]
    p = subprocess.run(cmd, capture_output=True, text=True, check=True)
    m = re.search(r"median ([0-9.]+) ms", p.stdout)
    if not m:
        sys.exit(f"bench: unexpected runner output: {p.stdout}")
    return float(m.group(1))


def ort_session(path, threads):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def time_ort(sess, inputs, runs):
    sess.run(None, inputs)  # warm-up
    ms = []
    for _ in range(runs):
        t0 = time.perf_counter()
        sess.run(None, inputs)
        ms.append((time.perf_counter() - t0) * 1e3)
    # onnxruntime's intra-op workers spin for a while after a run; an aotc runner started at once
    # shares the cores with them (MLP at 2 threads: 5.4-6.8 ms right after onnxruntime, 3.1-3.3
    # ms after a 0.2 s pause or alone). Let them go to sleep before anything else is timed.
    time.sleep(ORT_SPIN_SETTLE_S)
    return statistics.median(ms)


ORT_SPIN_SETTLE_S = 0.2


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--aotc", default=str(ROOT / "build" / "aotc"))
    ap.add_argument("--target", default="host")
    ap.add_argument("--work", default=str(ROOT / "build" / "bench"))
    ap.add_argument("--models", default=",".join(MODELS),
                    help="comma-separated subset of: " + ", ".join(MODELS) + "; or 'holdout' for " + ", ".join(HOLDOUT))
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    ap.add_argument("--rounds", type=int, default=3, help="rotating untuned/tuned/ORT rounds per row")
    ap.add_argument("--seconds", type=float, default=1.0, help="target time of one measurement")
    ap.add_argument("--tune-budget", type=float, default=600, help="seconds `aotc tune` may take per model")
    ap.add_argument("--retune", action="store_true", help="tune again from scratch (else earlier files are reused)")
    ap.add_argument("--rebuild-models", action="store_true")
    args = ap.parse_args()

    names = HOLDOUT if args.models == "holdout" else [m for m in args.models.split(",") if m]
    unknown = [m for m in names if m not in MODELS]
    if unknown:
        ap.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(MODELS)}")
    threads = [int(t) for t in args.threads.split(",") if t]
    aotc, work = Path(args.aotc).resolve(), Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)

    import onnxruntime as ort
    load_before = load_average()
    peak, peak_text = measure_peak(work, threads)
    log(f"bench: fp32 FMA peak (GFLOP/s, isa threads value): {peak_text}")
    built = build_models(names, work, args.rebuild_models)
    tuned = tune_models(aotc, args.target, built, threads, work, args.tune_budget, args.retune)
    compile_packages(aotc, args.target, built, threads, work, tuned)

    rows = []
    for name, (path, inputs, files, gflop) in built.items():
        for t in threads:
            pkg = f"{name}_t{t}"
            sess = ort_session(path, t)
            # Size each measurement to about --seconds, from one run of each.
            probe = max(time_aotc(work, pkg, files, 1), time_ort(sess, inputs, 1))
            runs = int(min(200, max(3, args.seconds * 1e3 / max(probe, 1e-3))))
            timers = {
                "untuned": lambda: time_aotc(work, pkg, files, runs),
                "tuned": lambda: time_aotc(work, pkg + "_tuned", files, runs),
                "ort": lambda: time_ort(sess, inputs, runs),
            }
            ms = {k: [] for k in timers}
            order = list(timers)
            for r in range(args.rounds):
                # Rotate which goes first, so drift in the machine's load hits all three alike.
                for k in order[r % 3:] + order[:r % 3]:
                    ms[k].append(timers[k]())
            med = {k: statistics.median(v) for k, v in ms.items()}
            log(f"bench: {pkg}: untuned {med['untuned']:.2f} ms {ms['untuned']}, tuned {med['tuned']:.2f} ms "
                f"{ms['tuned']}, ORT {med['ort']:.2f} ms {ms['ort']}")
            rows.append((name, t, gflop, med["untuned"], med["tuned"], med["ort"]))
            del sess

    # The peak again after the timings, keeping each thread count's best: one measurement can
    # catch a vCPU busy elsewhere (a 2-thread peak of 102 GFLOP/s, 204 a minute later), which
    # made the 2-thread "% of peak" read above 100%.
    peak_after, peak_after_text = measure_peak(work, threads)
    log(f"bench: fp32 FMA peak after the timings: {peak_after_text}")
    peak = {t: max(peak[t], peak_after[t]) for t in peak}
    load_after = load_average()
    print(f"machine: {machine_description(aotc, args.target)}")
    print(f"aotc target `{args.target}`, onnxruntime {ort.__version__}; medians of {args.rounds} rotating rounds; "
          f"peak fp32 FMA GFLOP/s: " + ", ".join(f"{peak[t]:.0f} at {t} thread{'s' if t > 1 else ''}" for t in threads)
          + f"; load average (1, 5, 15 min) {' '.join(f'{x:.2f}' for x in load_before)} before, "
          f"{' '.join(f'{x:.2f}' for x in load_after)} after")
    print()
    print("| model | GFLOP | threads | untuned ms | tuned ms | ORT ms | untuned/ORT | tuned/ORT | tuned % of peak "
          "| tuning s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, t, gflop, u, a, o in rows:
        pa = 100 * gflop / (a / 1e3) / peak[t]
        print(f"| {name} | {gflop:.2f} | {t} | {u:.2f} | {a:.2f} | {o:.2f} | {u / o:.2f} | {a / o:.2f} | {pa:.0f}% "
              f"| {tuned[name][1]:.0f} |")
    print()
    for name in built:
        print(f"- {name}: {tuned[name][2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
