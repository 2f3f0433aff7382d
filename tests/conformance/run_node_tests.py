#!/usr/bin/env python3
"""Runs the ONNX backend node tests (onnx==1.22.0 data) through aotc, end to end.

For every test folder (model.onnx + test_data_set_0/{input,output}_K.pb) it:
  1. compiles the model with `aotc compile --target T`; when the compiler says an input must be
     known at compile time (ONNX tests feed shapes, axes and pads as graph inputs), it binds that
     input to the test's input file with --const-input and compiles again;
  2. builds all packages in ONE CMake super-project (add_subdirectory per package), so the runtime
     stub is compiled once and the build is parallel;
  3. runs each package's runner on the test inputs and compares with the expected outputs using
     the ONNX runner's rule: exact shape and dtype, then rtol 1e-3, atol 1e-7.

With --mode eval it runs `aotc eval` (the reference interpreter) instead of building packages,
which checks the reference implementations on their own.

--stage splits the package mode between two machines, for targets whose device is elsewhere (a
CUDA GPU): `--stage prepare` does step 1 and copies each compiled test's data into the work folder
with a manifest.json; `--stage run --work W` on the device machine (onnx and numpy there, no aotc)
does steps 2 and 3 from that folder alone. The default, `--stage all`, does both here.

Outcomes: pass; skip (the compiler refuses the model as unsupported, exit code 2; the reason is its
message); xfail (listed in expected_failures_<target>.txt with a reason, and failed); fail (anything
else, including a compiler crash). The exit status is non-zero when any test fails unexpectedly or
an expected failure passes (so the list stays honest).
"""
import argparse
import collections
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from device_stages import add_stage_arguments, read_manifest, runner_command, write_manifest  # noqa: E402
NODE_DATA = Path(onnx.__file__).parent / "backend" / "test" / "data" / "node"
CONST_INPUT_RE = re.compile(r"--const-input[ =]([A-Za-z0-9_./:\-]+?)=")
EXIT_UNSUPPORTED = 2


class Result:
    def __init__(self, name, status, reason="", op=""):
        self.name, self.status, self.reason, self.op = name, status, reason, op

    def as_dict(self):
        return {"test": self.name, "op": self.op, "status": self.status, "reason": self.reason}


def one_line(text, limit=300):
    text = " ".join(text.strip().split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def load_expected_failures(target):
    path = HERE / f"expected_failures_{target}.txt"
    out = {}
    if path.exists():
        for line in path.read_text().splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, _, reason = line.partition(" ")
            out[name] = reason.strip() or "(no reason given)"
    return out


def graph_inputs(model):
    """Non-initializer graph inputs in order (test input_K.pb files follow this order)."""
    inits = {i.name for i in model.graph.initializer}
    return [i.name for i in model.graph.input if i.name not in inits]


def first_op(model):
    return model.graph.node[0].op_type if model.graph.node else ""


def compile_test(aotc, target, test_dir, pkg_dir, name, extra_args):
    """Compiles one test; returns (ok, message, runtime_input_files, exit_code)."""
    model_path = test_dir / "model.onnx"
    model = onnx.load(str(model_path), load_external_data=False)
    inputs = graph_inputs(model)
    data_dir = test_dir / "test_data_set_0"
    input_files = {n: data_dir / f"input_{k}.pb" for k, n in enumerate(inputs)}
    bound = []
    for _ in range(len(inputs) + 1):
        cmd = [str(aotc), "compile", str(model_path), "--target", target, "-o", str(pkg_dir),
               "--name", name] + extra_args
        for b in bound:
            cmd += ["--const-input", f"{b}={input_files[b]}"]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        except subprocess.TimeoutExpired:
            return False, "compiler timed out after 300 s", [], -1
        if p.returncode == 0:
            runtime = [str(input_files[n]) for n in inputs if n not in bound]
            return True, "", runtime, 0
        msg = one_line(p.stderr or p.stdout)
        wanted = [m for m in CONST_INPUT_RE.findall(p.stderr) if m in input_files and m not in bound]
        if not wanted:
            return False, msg, [], p.returncode
        bound += wanted
    return False, "could not bind compile-time inputs", [], 1


def output_kinds(model):
    """'tensor', 'sequence' or 'optional' for each graph output: aotc writes one output file per
    tensor a sequence or optional holds (frontend/static_values.h)."""
    kinds = []
    for o in model.graph.output:
        t = o.type
        kinds.append("sequence" if t.HasField("sequence_type") else "optional" if t.HasField("optional_type")
                     else "tensor")
    return kinds


def expected_tensors(path, kind):
    """The expected TensorProtos of one output file of the given kind."""
    data = path.read_bytes()
    if kind == "sequence":
        seq = onnx.SequenceProto()
        seq.ParseFromString(data)
        return list(seq.tensor_values)
    if kind == "optional":
        opt = onnx.OptionalProto()
        opt.ParseFromString(data)
        if opt.HasField("tensor_value"):
            return [opt.tensor_value]
        return list(opt.sequence_value.tensor_values) if opt.HasField("sequence_value") else []
    t = onnx.TensorProto()
    t.ParseFromString(data)
    return [t]


def compare(expected_files, actual_dir, kinds=None):
    """Returns '' when all outputs match, else the first mismatch described on one line."""
    produced = 0  # output files of the package: one per tensor (sequences and optionals flattened)
    for k, ef in enumerate(expected_files):
        for exp_t in expected_tensors(ef, kinds[k] if kinds else "tensor"):
            af = Path(actual_dir) / f"output_{produced}.pb"
            produced += 1
            if not af.exists():
                return f"output_{produced - 1}.pb was not written"
            act_t = onnx.TensorProto()
            act_t.ParseFromString(af.read_bytes())
            diff = compare_tensor(k, exp_t, act_t)
            if diff:
                return diff
    return ""


def compare_tensor(k, exp_t, act_t):
    """'' when the tensors match by the ONNX runner's rule, else the mismatch on one line."""
    try:
        exp, act = numpy_helper.to_array(exp_t), numpy_helper.to_array(act_t)
    except Exception as e:  # noqa: BLE001 - report any decoding problem as a mismatch
        return f"output {k}: cannot decode: {e}"
    if exp.dtype != act.dtype:
        return f"output {k}: dtype {act.dtype} != expected {exp.dtype}"
    if exp.shape != act.shape:
        return f"output {k}: shape {act.shape} != expected {exp.shape}"
    if exp.dtype.kind == "V" and "float" in exp.dtype.name:
        # ml_dtypes floats (bfloat16, float8, float4): numpy sees opaque records, so NaN would
        # never equal NaN; compare their exact float32 values as the ONNX runner's allclose does.
        exp, act = exp.astype(np.float32), act.astype(np.float32)
    try:
        if exp.dtype.kind in "fc":
            np.testing.assert_allclose(act, exp, rtol=1e-3, atol=1e-7)
        else:
            np.testing.assert_array_equal(act, exp)
    except AssertionError as e:
        lines = [l for l in str(e).splitlines() if "Mismatched" in l or "Max abs" in l or "Max rel" in l]
        return f"output {k}: values differ ({'; '.join(l.strip() for l in lines)})"
    return ""


def write_superproject(work, names):
    lines = ["# generated by tests/conformance/run_node_tests.py: builds every package at once",
             "cmake_minimum_required(VERSION 3.16)", "project(aotc_conformance C CXX)"]
    for n in names:
        lines.append(f"add_subdirectory(pkgs/{n} {n})")
    (work / "CMakeLists.txt").write_text("\n".join(lines) + "\n")


def find_runner(build_dir, name):
    for cand in (build_dir / name / f"{name}_run", build_dir / f"{name}_run"):
        if cand.exists():
            return cand
    hits = list((build_dir / name).rglob(f"{name}_run")) if (build_dir / name).exists() else []
    return hits[0] if hits else None


def run_one(cmd, timeout=120):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, one_line(p.stderr or p.stdout)
    except subprocess.TimeoutExpired:
        return -1, f"timed out after {timeout} s"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--aotc", default="build/aotc", help="path to the aotc binary")
    ap.add_argument("--target", default="x86-64")
    ap.add_argument("--mode", choices=["package", "eval"], default="package")
    ap.add_argument("--work", default="build/conformance", help="scratch folder (wiped)")
    ap.add_argument("--filter", default="", help="regex on test names")
    ap.add_argument("--tests", default="",
                    help="file naming the tests to run, one per line, '#' comments (e.g. tier1_tests.txt)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--sanitize", action="store_true",
                    help="build the packages with AddressSanitizer and UndefinedBehaviorSanitizer "
                         "(any report fails the test: docs/robustness.md)")
    ap.add_argument("--report", default="", help="write a Markdown report here (docs/conformance.md)")
    ap.add_argument("--cmake-define", action="append", default=[], metavar="NAME=VALUE",
                    help="a -D option for the packages' CMake configure (repeatable), e.g. "
                         "AOTC_MLU_NUMERICS=ieee")
    ap.add_argument("--json", default="", help="write per-test results as JSON here")
    add_stage_arguments(ap, "the packages, the test inputs and expected outputs")
    args = ap.parse_args()
    if args.stage != "all" and args.mode != "package":
        ap.error("--stage prepare/run applies to --mode package")

    work = Path(args.work).resolve()
    t0 = time.time()
    if args.stage == "run":
        manifest = read_manifest(ap, work, args.target)
        results = {n: Result(n, st, why) for n, (st, why) in manifest["results"].items()}
        ops = manifest["ops"]
        compiled = {n: [str(work / f) for f in t["inputs"]] for n, t in manifest["tests"].items()}
        expected_outputs = {n: [work / f for f in t["expected"]] for n, t in manifest["tests"].items()}
        kinds = {n: t.get("kinds") for n, t in manifest["tests"].items()}
        (work / "out").mkdir()
        print(f"conformance: running {len(compiled)} prepared packages, target {args.target}", flush=True)
        return build_run_and_report(args, work, t0, results, ops, compiled, expected_outputs, kinds)

    aotc = Path(args.aotc).resolve()
    if work.exists():
        shutil.rmtree(work)
    (work / "pkgs").mkdir(parents=True)
    (work / "out").mkdir()
    pattern = re.compile(args.filter) if args.filter else None
    listed = None
    if args.tests:
        path = Path(args.tests)
        if not path.exists() and (HERE / args.tests).exists():
            path = HERE / args.tests
        listed = {l.split("#")[0].strip() for l in path.read_text().splitlines()} - {""}
    tests = sorted(d for d in NODE_DATA.iterdir() if (d / "model.onnx").exists()
                   and (not pattern or pattern.search(d.name))
                   and (listed is None or d.name in listed))
    print(f"conformance: {len(tests)} node tests, target {args.target}, mode {args.mode}", flush=True)

    results = {}
    ops = {}
    kinds = {}  # name -> output kinds
    compiled = {}  # name -> runtime input files

    def do_compile(test_dir):
        name = test_dir.name
        try:
            model = onnx.load(str(test_dir / "model.onnx"), load_external_data=False)
            ops[name] = first_op(model)
            kinds[name] = output_kinds(model)
        except Exception as e:  # noqa: BLE001 - a model onnx itself cannot read is still reported
            ops[name] = "?"
        if args.mode == "eval":
            return name, compile_eval(aotc, test_dir, work / "out" / name)
        ok, msg, runtime_inputs, code = compile_test(aotc, args.target, test_dir,
                                                     work / "pkgs" / name, name, [])
        if ok:
            return name, ("compiled", runtime_inputs)
        if code == EXIT_UNSUPPORTED:
            return name, ("skip", msg)
        if code < 0 or code > 128 or code == -6:
            return name, ("fail", f"compiler crashed or hung (exit {code}): {msg}")
        return name, ("fail", f"compile error: {msg}")

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for name, (state, payload) in pool.map(do_compile, tests):
            if state == "compiled":
                compiled[name] = payload
            elif state == "evaluated":
                results[name] = Result(name, "pass")
            else:
                results[name] = Result(name, state, payload)
    print(f"conformance: compiled {len(compiled)} packages in {time.time() - t0:.0f} s", flush=True)

    expected_outputs = {}
    for name in compiled:
        data = NODE_DATA / name / "test_data_set_0"
        expected_outputs[name] = sorted(data.glob("output_*.pb"), key=lambda p: int(p.stem.split("_")[1]))
    if args.stage == "prepare":
        store_prepared_tests(work, args.target, results, ops, compiled, expected_outputs, kinds)
        print(f"conformance: prepared {len(compiled)} packages in {work} for `--stage run` "
              f"({len(results)} tests already decided here)")
        return 0
    return build_run_and_report(args, work, t0, results, ops, compiled, expected_outputs, kinds)


def store_prepared_tests(work, target, results, ops, compiled, expected_outputs, kinds):
    """Copies each compiled test's data into `work` and lists it, with paths relative to `work`."""
    tests = {}
    for name, inputs in compiled.items():
        data = work / "data" / name
        data.mkdir(parents=True)
        rel = []
        for f in list(inputs) + list(expected_outputs[name]):
            shutil.copy(f, data / Path(f).name)
            rel.append(str((data / Path(f).name).relative_to(work)))
        tests[name] = {"inputs": rel[:len(inputs)], "expected": rel[len(inputs):], "kinds": kinds.get(name)}
    write_manifest(work, target, onnx=onnx.__version__, tests=tests, ops=ops,
                   results={n: [r.status, r.reason] for n, r in results.items()})


def build_run_and_report(args, work, t0, results, ops, compiled, expected_outputs, kinds):
    """Builds the compiled packages in one super-project, runs and compares them, reports."""
    expected_failures = load_expected_failures(args.target)
    if args.mode == "package" and compiled:
        names = sorted(compiled)
        write_superproject(work, names)
        build = work / "build"
        flags = []
        if args.sanitize:
            san = "-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
            flags = [f"-DCMAKE_C_FLAGS={san}", f"-DCMAKE_CXX_FLAGS={san}", f"-DCMAKE_EXE_LINKER_FLAGS={san}"]
        cfg = subprocess.run(["cmake", "-S", str(work), "-B", str(build), "-G", "Ninja",
                              "-DCMAKE_BUILD_TYPE=Release"] + flags + [f"-D{d}" for d in args.cmake_define],
                             capture_output=True, text=True)
        if cfg.returncode != 0:
            print(cfg.stdout[-3000:], cfg.stderr[-3000:])
            for n in names:
                results[n] = Result(n, "fail", "super-project configure failed")
            compiled = {}
        else:
            b = subprocess.run(["ninja", "-C", str(build), "-k", "0", f"-j{args.jobs}"],
                               capture_output=True, text=True)
            (work / "build.log").write_text(b.stdout + b.stderr)
        print(f"conformance: built packages at {time.time() - t0:.0f} s", flush=True)

        def do_run(name):
            runner = find_runner(work / "build", name)
            if runner is None:
                return name, "fail", "package did not build (see build.log)"
            out = work / "out" / name
            cmd = runner_command(args, runner) + ["--output-dir", str(out)]
            for f in compiled[name]:
                cmd += ["--input", f]
            code, msg = run_one(cmd)
            if code != 0:
                return name, "fail", f"runner failed (exit {code}): {msg}"
            diff = compare(expected_outputs[name], out, kinds.get(name))
            return name, ("fail" if diff else "pass"), diff

        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            for name, status, reason in pool.map(do_run, sorted(compiled)):
                results[name] = Result(name, status, reason)

    # Apply the expected-failure list.
    unexpected = []
    for name, r in results.items():
        r.op = ops.get(name, "")
        if name in expected_failures:
            if r.status == "fail":
                r.status, r.reason = "xfail", expected_failures[name]
            elif r.status == "pass":
                r.status, r.reason = "xpass", "listed as expected failure but passes: remove it"
                unexpected.append(r)
        elif r.status == "fail":
            unexpected.append(r)

    counts = collections.Counter(r.status for r in results.values())
    elapsed = time.time() - t0
    summary = ", ".join(f"{counts[s]} {s}" for s in ("pass", "fail", "xfail", "xpass", "skip"))
    for r in sorted(unexpected, key=lambda r: r.name):
        print(f"UNEXPECTED {r.status.upper()}: {r.name}: {r.reason}")
    print(f"conformance ({args.target}, {args.mode}): {summary} of {len(results)} in {elapsed:.0f} s")

    if args.json:
        Path(args.json).write_text(json.dumps([results[n].as_dict() for n in sorted(results)], indent=1))
    if args.report:
        write_report(Path(args.report), args, results, counts, elapsed)
    # The plain closing line CI reads: passed vs unexpected failures.
    print(f"{counts['pass']} passed, {len(unexpected)} failed, {counts['skip'] + counts['xfail']} skipped")
    return 1 if unexpected else 0


def compile_eval(aotc, test_dir, out_dir):
    """--mode eval: run the reference interpreter and compare."""
    model = onnx.load(str(test_dir / "model.onnx"), load_external_data=False)
    inputs = graph_inputs(model)
    data = test_dir / "test_data_set_0"
    bound = []
    for _ in range(len(inputs) + 1):
        cmd = [str(aotc), "eval", str(test_dir / "model.onnx"), "--output-dir", str(out_dir)]
        for k, n in enumerate(inputs):
            flag = "--const-input" if n in bound else "--input"
            cmd += [flag, f"{n}={data / f'input_{k}.pb'}" if n in bound else str(data / f"input_{k}.pb")]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        except subprocess.TimeoutExpired:
            return ("fail", "eval timed out")
        if p.returncode == 0:
            exp = sorted(data.glob("output_*.pb"), key=lambda q: int(q.stem.split("_")[1]))
            diff = compare(exp, out_dir, output_kinds(model))
            return ("fail", diff) if diff else ("evaluated", None)
        wanted = [m for m in CONST_INPUT_RE.findall(p.stderr) if m in inputs and m not in bound]
        if not wanted:
            msg = one_line(p.stderr or p.stdout)
            return ("skip", msg) if p.returncode == EXIT_UNSUPPORTED else ("fail", f"eval error: {msg}")
        bound += wanted
    return ("fail", "could not bind compile-time inputs")


def write_report(path, args, results, counts, elapsed):
    by_op = collections.defaultdict(collections.Counter)
    for r in results.values():
        by_op[r.op][r.status] += 1
    lines = [
        "# ONNX node conformance",
        "",
        "Generated by `tests/conformance/run_node_tests.py` (do not edit by hand): the ONNX backend",
        f"node tests of onnx {onnx.__version__} compiled end to end for target `{args.target}`",
        f"(mode `{args.mode}`), built, run and compared with the ONNX rule (exact shape and dtype,",
        "then rtol 1e-3, atol 1e-7).",
        "",
        "| outcome | tests |",
        "|---|---|",
    ]
    for s, meaning in (("pass", "pass"), ("fail", "fail (unexpected)"), ("xfail", "known failure, reason below"),
                       ("xpass", "listed as failing but passes"), ("skip", "refused as unsupported, reason below")):
        lines.append(f"| {meaning} | {counts[s]} |")
    lines += [f"| **total** | {len(results)} |", "", f"Wall time: {elapsed:.0f} s.", "",
              "## By first op of the test model", "", "| op | pass | fail | xfail | skip |", "|---|---|---|---|---|"]
    for op in sorted(by_op):
        c = by_op[op]
        lines.append(f"| {op or '?'} | {c['pass']} | {c['fail'] + c['xpass']} | {c['xfail']} | {c['skip']} |")
    lines += ["", "## Every test", "", "| test | outcome | reason |", "|---|---|---|"]
    for n in sorted(results):
        r = results[n]
        reason = r.reason.replace("|", "\\|")
        lines.append(f"| {n} | {r.status} | {reason} |")
    path.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
