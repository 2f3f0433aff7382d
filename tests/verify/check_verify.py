#!/usr/bin/env python3
"""Checks `aotc verify` on models built to diverge at a known node (tests/verify/make_models.py),
on models that must name nothing, the --poison-arena catch of an injected uninitialised read, the
--baseline regression exit and the bad-input errors.

  tests/verify/check_verify.py build/aotc [--work DIR] [--npu mlu370]

Each case compiles, builds and runs one small package (~5 s on x86-64, ~20 s on an emulated NPU).
"""
import argparse
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import headless_browser  # noqa: E402
import make_models  # noqa: E402

failures = []


def verify(aotc, work, model, target, name, *extra, expect_rc=0):
    out = work / name
    cmd = [str(aotc), "verify", str(work / "models" / f"{model}.onnx"), "--target", target, "-o", str(out), *extra]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != expect_rc:
        failures.append(f"{name}: exit {p.returncode}, expected {expect_rc}: {' '.join(cmd)}\n{p.stdout}{p.stderr}")
        return None, p
    report = json.loads((out / "verify.json").read_text()) if (out / "verify.json").exists() else None
    return report, p


def expect_first(aotc, work, model, target, name, value, *extra):
    """value: the value of the first divergent kernel, or None for a model that must name nothing."""
    report, p = verify(aotc, work, model, target, name, "--input", str(work / "models" / "x.pb"), *extra)
    if report is None:
        return None
    got = report["first_divergent_value"]
    status = "ok" if got == value else "FAIL"
    print(f"{status}: {name}: first divergent {got!r} (expected {value!r}), node {report['first_divergent_node']!r}")
    if got != value:
        failures.append(f"{name}: first divergent value {got!r}, expected {value!r}\n{p.stdout}")
    for field in ("target", "precision", "tolerance", "first_divergent_node"):
        if field not in report:
            failures.append(f"{name}: verify.json lacks '{field}'")
    for node in report["nodes"]:
        if node["compared"]:
            for field in ("node", "op", "max_abs", "max_rel", "p99_rel", "amplification"):
                if field not in node:
                    failures.append(f"{name}: a node of verify.json lacks '{field}'")
    html = (work / name / "verify.html").read_text()
    if "<svg id='depth'" not in html or "class='hist'" not in html or "class='cdf'" not in html:
        failures.append(f"{name}: verify.html lacks the depth, histogram or CDF plot")
    return report


def check_poison(aotc, work):
    """An injected uninitialised read: the Relu kernel writes only its positive results, and the
    zeros it skips are right only by the luck of zeroed memory. --poison-arena catches it."""
    results = {}
    for poison in (False, True):
        pkg = work / f"relu_pkg_{'poison' if poison else 'plain'}"
        args = [str(aotc), "compile", str(work / "models" / "relu.onnx"), "-t", "x86-64", "-o", str(pkg),
                "--dump-kernels"] + (["--poison-arena"] if poison else [])
        subprocess.run(args, check=True, capture_output=True)
        src = next((pkg / "src").glob("*.cpp"))
        text = src.read_text()
        # The kernel of node 'r': its store becomes conditional (the bug).
        m = re.search(r"AOTC_KERNEL void k\d+_r\(.*?\n}\n", text, re.S)
        assert m, "no kernel of node 'r' in " + str(src)
        body = m.group(0)
        store = re.search(r"\n(\s*)(out0\[i\] = [^\n]*;)", body)
        assert store, "no store in the kernel of node 'r':\n" + body
        buggy = body.replace(store.group(0), f"\n{store.group(1)}if (in0[i] > 0.0f) {store.group(2)}")
        src.write_text(text.replace(body, buggy))
        extra = ["--poison-arena"] if poison else []
        report, p = verify(aotc, work, "relu", "x86-64", f"relu_verify_{'poison' if poison else 'plain'}",
                           "--package", str(pkg), *extra)
        results[poison] = report and report["first_divergent_node"]
    ok = results[False] is None and results[True] == "r"
    print(f"{'ok' if ok else 'FAIL'}: injected uninitialised read: without --poison-arena {results[False]!r} "
          f"(expected None), with it {results[True]!r} (expected 'r')")
    if not ok:
        failures.append(f"poison: {results}")


def check_in_browser(page):
    """Loads verify.html in headless Chromium and checks that the rendered page has the depth plot
    and shows the first divergent node's histogram and CDF (the selector's script ran)."""
    dom, why = headless_browser.dump_dom(page)
    if dom is None:
        print(f"skip: headless browser check: {why}")
        return
    shown = re.search(r'<div class="node-plots" id="plots-(\d+)" style="display: block;?">', dom)
    ok = 'id="depth"' in dom and shown is not None and 'class="hist"' in dom and 'class="cdf"' in dom
    print(f"{'ok' if ok else 'FAIL'}: verify.html in headless Chromium: depth plot, node {shown and shown.group(1)} "
          "histogram and CDF shown")
    if not ok:
        failures.append("verify.html in Chromium: " + dom[:2000])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("aotc")
    ap.add_argument("--work", default="/tmp/aotc_verify_check")
    ap.add_argument("--npu", default="mlu370", help="the emulated NPU target with the mlu370 numeric model")
    args = ap.parse_args()
    aotc, work = Path(args.aotc).resolve(), Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    make_models.main_into(work / "models")

    # fp32 on x86-64: nothing diverges at the default tolerance.
    expect_first(aotc, work, "cancel_fused", "x86-64", "cancel_fused_x86", None, "--tolerance", "3e-5")
    expect_first(aotc, work, "denormal", "x86-64", "denormal_x86", None)
    expect_first(aotc, work, "plain", "x86-64", "plain_x86", None)
    # mlu370's numeric model: 20-bit mantissas in x + 64 - 64, flushed subnormals.
    expect_first(aotc, work, "cancel_fused", args.npu, "cancel_fused_npu", "unshifted", "--tolerance", "3e-5")
    expect_first(aotc, work, "denormal", args.npu, "denormal_npu", "tiny")
    expect_first(aotc, work, "plain", args.npu, "plain_npu", None)
    # fp16 storage: cancellation after a stored x + 64, overflow past 65504.
    expect_first(aotc, work, "cancel", args.npu, "cancel_fp16", "unshifted", "--precision", "fp16")
    expect_first(aotc, work, "overflow", args.npu, "overflow_fp16", "big", "--precision", "fp16")
    # --keep-fp32 auto brings the output back within the tolerance.
    report = expect_first(aotc, work, "cancel", args.npu, "cancel_fp16_auto", None, "--precision", "fp16",
                          "--keep-fp32", "auto", "--tolerance", "2e-3")
    if report is not None:
        print(f"     --keep-fp32 auto kept {report['keep_fp32']}")

    check_poison(aotc, work)
    check_in_browser(work / "cancel_fp16" / "verify.html")

    # --baseline: the x86-64 errors of cancel_fused against mlu370's grow; against themselves not.
    base = work / "cancel_fused_x86" / "verify.json"
    _, p = verify(aotc, work, "cancel_fused", args.npu, "baseline_grown", "--input", str(work / "models" / "x.pb"),
                  "--baseline", str(base), expect_rc=3)
    print(f"{'ok' if p.returncode == 3 else 'FAIL'}: --baseline with grown errors exits {p.returncode} (expected 3)")
    _, p = verify(aotc, work, "cancel_fused", "x86-64", "baseline_same", "--input", str(work / "models" / "x.pb"),
                  "--baseline", str(base))
    print(f"{'ok' if p.returncode == 0 else 'FAIL'}: --baseline with the same errors exits {p.returncode} (expected 0)")

    # Bad input: one line naming the input; CUDA cannot run here.
    _, p = verify(aotc, work, "plain", "x86-64", "bad_input", "--input", str(work / "models" / "x_wrong.pb"),
                  expect_rc=1)
    line = p.stderr.strip()
    ok = "input 'x'" in line and "shape" in line and len(line.splitlines()) == 1
    print(f"{'ok' if ok else 'FAIL'}: mismatched input: {line}")
    if not ok:
        failures.append(f"bad input message: {line!r}")
    _, p = verify(aotc, work, "plain", "cuda-sm80", "cuda", expect_rc=2)
    print(f"{'ok' if p.returncode == 2 else 'FAIL'}: cuda-sm80 without a GPU: {p.stderr.strip()}")

    if failures:
        print("\n".join(failures), file=sys.stderr)
        print(f"check_verify: {len(failures)} failures", file=sys.stderr)
        return 1
    print("check_verify: all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
