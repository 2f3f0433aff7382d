#!/usr/bin/env python3
"""1- and 2-thread latency of a small CNN with and without a competing CPU load, aotc against
onnxruntime in the same run.

    python3 bench/threads_under_load.py                       # SqueezeNet 1.1, target host
    python3 bench/threads_under_load.py --models mobilenet_v2 --rounds 7 --burners 2

A package built with --threads 2 splits its heavy kernels in two; on a machine whose cores are
busy with other processes its second thread is often not running. This measures what that
costs: the model is compiled for 1 and 2 threads, and the two runners and onnxruntime sessions
at 1 and 2 intra-op threads are timed in rotating rounds, first on the quiet machine, then
while --burners processes (default: one per core) spin at the same priority. Every figure is a
median of per-round medians; the table gives each latency and the 2-thread / 1-thread ratio
per side (above 1: the second thread costs more than it brings). The machine (`aotc targets`)
and the load averages are printed above it. Speed is reported here, never asserted.
"""
import argparse
import multiprocessing
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as bench  # noqa: E402  (bench/run.py: model builders, runner and onnxruntime timing)


def burn():
    while True:
        pass


def compile_and_build(aotc, target, built, threads, work):
    pkgs = work / "pkgs"
    pkgs.mkdir(parents=True, exist_ok=True)
    names = []
    for name, (path, _, _, _) in built.items():
        for t in threads:
            pkg = f"{name}_t{t}"
            cmd = [str(aotc), "compile", str(path), "--target", target, "-o", str(pkgs / pkg),
                   "--name", pkg, "--threads", str(t)]
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode != 0:
                sys.exit(f"bench: aotc compile of {name} failed: {p.stderr.strip()}")
            names.append(pkg)
    (work / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.16)\nproject(aotc_bench_load C CXX)\n" +
        "".join(f"add_subdirectory(pkgs/{n} {n})\n" for n in names))
    subprocess.run(["cmake", "-S", str(work), "-B", str(work / "build"), "-G", "Ninja",
                    "-DCMAKE_BUILD_TYPE=Release"], check=True, capture_output=True)
    b = subprocess.run(["ninja", "-C", str(work / "build"), "-j2"], capture_output=True, text=True)
    if b.returncode != 0:
        (work / "build.log").write_text(b.stdout + b.stderr)
        sys.exit(f"bench: packages did not build; see {work / 'build.log'}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--aotc", default=str(bench.ROOT / "build" / "aotc"))
    ap.add_argument("--target", default="host")
    ap.add_argument("--work", default=str(bench.ROOT / "build" / "bench_load"))
    ap.add_argument("--models", default="squeezenet", help="comma-separated, from bench/run.py's models")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=20, help="timed runs per measurement")
    ap.add_argument("--burners", type=int, default=os.cpu_count() or 2,
                    help="spinning processes of the loaded half (default: one per core)")
    args = ap.parse_args()

    names = [m for m in args.models.split(",") if m]
    unknown = [m for m in names if m not in bench.MODELS]
    if unknown:
        ap.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(bench.MODELS)}")
    aotc, work = Path(args.aotc).resolve(), Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    threads = [1, 2]
    built = bench.build_models(names, work, rebuild=False)
    compile_and_build(aotc, args.target, built, threads, work)
    sessions = {(n, t): bench.ort_session(built[n][0], t) for n in names for t in threads}

    print(f"machine: {bench.machine_description(aotc, args.target)}")
    load_before = os.getloadavg()
    results = {}  # (model, condition, side, threads) -> [per-round medians]
    for condition in ("quiet", "loaded"):
        burners = []
        if condition == "loaded":
            burners = [multiprocessing.Process(target=burn, daemon=True) for _ in range(args.burners)]
            for b in burners:
                b.start()
            time.sleep(1.0)
        try:
            for r in range(args.rounds):
                for name in names:
                    _, inputs, files, _ = built[name]
                    jobs = [(side, t) for side in ("aotc", "ort") for t in threads]
                    jobs = jobs[r % len(jobs):] + jobs[:r % len(jobs)]  # rotate: drift hits all alike
                    for side, t in jobs:
                        if side == "aotc":
                            ms = bench.time_aotc(work, f"{name}_t{t}", files, args.runs)
                        else:
                            ms = bench.time_ort(sessions[(name, t)], inputs, args.runs)
                        results.setdefault((name, condition, side, t), []).append(ms)
                bench.log(f"bench: {condition} round {r + 1}/{args.rounds} done")
        finally:
            for b in burners:
                b.terminate()
    load_after = os.getloadavg()

    print(f"load average (1, 5, 15 min) {' '.join(f'{x:.2f}' for x in load_before)} before, "
          f"{' '.join(f'{x:.2f}' for x in load_after)} after; loaded half: {args.burners} spinning "
          f"processes on {os.cpu_count()} cores; {args.rounds} rounds of {args.runs} runs")
    print()
    print("| model | load | aotc 1t ms | aotc 2t ms | aotc 2t/1t | ORT 1t ms | ORT 2t ms | ORT 2t/1t |")
    print("|---|---|---|---|---|---|---|---|")
    for name in names:
        for condition in ("quiet", "loaded"):
            m = {(side, t): statistics.median(results[(name, condition, side, t)])
                 for side in ("aotc", "ort") for t in threads}
            print(f"| {name} | {condition} | {m[('aotc', 1)]:.2f} | {m[('aotc', 2)]:.2f} | "
                  f"{m[('aotc', 2)] / m[('aotc', 1)]:.2f} | {m[('ort', 1)]:.2f} | {m[('ort', 2)]:.2f} | "
                  f"{m[('ort', 2)] / m[('ort', 1)]:.2f} |")


if __name__ == "__main__":
    main()
