"""One package through `aotc verify`, with the suite's checks: no divergent node at the tolerance,
no node's error grown beyond its baseline (or the baseline written). Used by
tests/verify/verify_models.py and tests/models/run_models.py --verify-baselines."""
import json
import subprocess
import time
from pathlib import Path


def verify_package(aotc, model, target, package, runner, inputs, out, tolerance, baseline_dir=None,
                   baseline_tag=None, write_baselines=False, t0=None):
    """Runs `aotc verify` on a built package (compiled with --dump-kernels) and checks that it names
    no divergent node at `tolerance` and, with `baseline_dir`, that no node's error grew beyond its
    baseline <baseline_dir>/<tag or target>/<model>.json (or writes that baseline). Returns None
    or a failure message."""
    name = Path(model).stem
    t0 = t0 or time.time()
    cmd = [str(aotc), "verify", str(model), "-t", target, "-o", str(out), "--package", str(package),
           "--runner", str(runner), "--tolerance", str(tolerance)]
    for f in inputs:
        cmd += ["--input", str(f)]
    baseline = Path(baseline_dir) / (baseline_tag or target) / f"{name}.json" if baseline_dir else None
    if baseline and not write_baselines:
        if not baseline.exists():
            print(f"FAIL: {name}: no baseline {baseline}", flush=True)
            return f"{name}: no baseline {baseline}: write it with --write-baselines (docs/verify.md)"
        cmd += ["--baseline", str(baseline)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        print(f"FAIL: {name}: aotc verify exit {p.returncode}", flush=True)
        return f"{name}: aotc verify exited {p.returncode}:\n{p.stdout[-3000:]}{p.stderr[-2000:]}"
    report = json.loads((Path(out) / "verify.json").read_text())
    compared = [n for n in report["nodes"] if n["compared"]]
    first = report["first_divergent_node"]
    if not compared:  # a package whose kernels dumped nothing verifies nothing: a failure, not a pass
        print(f"FAIL: verify {name} on {target}: no kernel output compared", flush=True)
        return f"{name}: aotc verify compared no kernel output (was the package compiled with --dump-kernels?)"
    worst = max(compared, key=lambda n: float(n["max_rel"]) if not isinstance(n["max_rel"], str) else 1e300)
    print(f"{'ok' if first is None else 'FAIL'}: verify {name} on {target}: {len(compared)} kernel outputs "
          f"compared, worst max_rel {worst['max_rel']} ({worst['node']}), first divergent {first!r} "
          f"({time.time() - t0:.0f} s)", flush=True)
    if write_baselines and baseline:
        baseline.parent.mkdir(parents=True, exist_ok=True)
        # What --baseline reads (each node's max_rel), without the work folder's paths.
        slim = dict(report, model=f"{name}.onnx", nodes=[{k: n.get(k) for k in ("node", "op", "value", "compared", "max_rel")}
                                                        for n in report["nodes"]])
        baseline.write_text(json.dumps(slim, indent=1) + "\n")
        print(f"     wrote {baseline}", flush=True)
    if first is not None:
        return f"{name}: first divergent node {first!r} at tolerance {tolerance}"
    return None

