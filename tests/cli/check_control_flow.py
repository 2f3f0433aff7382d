#!/usr/bin/env python3
"""Run-time control flow end to end (run by ctest as CliControlFlow).

One model holds the cases, each an output: an If on a run-time condition whose then-branch runs a
Loop that reads a value from two graphs up (captures through nested regions); a Loop with a
run-time trip count whose body computes its own condition (it stops early, or runs its trip
count); a Scan read backwards with its stacked output on axis 1. Compiled for x86-64, built once,
and run on input sets that take each path: both branches, trip counts 3, 0, negative and 10^12
(the body's condition stops it), each output compared with onnxruntime (exact, as the arithmetic
is small integers in float). Then:
  - a device target refuses the run-time If and Loop with a message naming them;
  - `aotc inspect` counts the nodes inside the subgraphs.

  python3 tests/cli/check_control_flow.py path/to/aotc
"""
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def loop_body_adding(name, addend):
    """Loop body: acc + addend, condition passed through."""
    return helper.make_graph(
        [helper.make_node("Identity", ["cin"], ["cout"]), helper.make_node("Add", [f"{name}_acc", addend], [f"{name}_next"])],
        f"{name}_body",
        [helper.make_tensor_value_info("i", I64, []), helper.make_tensor_value_info("cin", B, []),
         helper.make_tensor_value_info(f"{name}_acc", F, [3])],
        [helper.make_tensor_value_info("cout", B, []), helper.make_tensor_value_info(f"{name}_next", F, [3])])


def model(path):
    # out_if: c ? (Loop m times: acc += x, from zeros) : 2 x
    then_g = helper.make_graph(
        [helper.make_node("Loop", ["m", "", "zeros"], ["looped"], body=loop_body_adding("inner", "x"))],
        "then", [], [helper.make_tensor_value_info("looped", F, [3])])
    else_g = helper.make_graph([helper.make_node("Add", ["x", "x"], ["doubled"])], "else", [],
                               [helper.make_tensor_value_info("doubled", F, [3])])
    # out_until: acc += x while sum(acc) < 30, at most m times
    until_body = helper.make_graph(
        [helper.make_node("Add", ["u_acc", "x"], ["u_next"]),
         helper.make_node("ReduceSum", ["u_next"], ["u_sum"], keepdims=0),
         helper.make_node("Less", ["u_sum", "limit"], ["u_cond"])],
        "until_body",
        [helper.make_tensor_value_info("j", I64, []), helper.make_tensor_value_info("u_cin", B, []),
         helper.make_tensor_value_info("u_acc", F, [3])],
        [helper.make_tensor_value_info("u_cond", B, []), helper.make_tensor_value_info("u_next", F, [3])])
    # out_scan: running sums of the rows of data, read last row first, stacked on axis 1
    scan_body = helper.make_graph(
        [helper.make_node("Add", ["s_acc", "row"], ["s_next"]), helper.make_node("Identity", ["s_next"], ["s_out"])],
        "scan_body", [helper.make_tensor_value_info("s_acc", F, [2]), helper.make_tensor_value_info("row", F, [2])],
        [helper.make_tensor_value_info("s_next", F, [2]), helper.make_tensor_value_info("s_out", F, [2])])
    nodes = [
        helper.make_node("If", ["c"], ["out_if"], name="branch", then_branch=then_g, else_branch=else_g),
        helper.make_node("Loop", ["m", "", "zeros"], ["out_until"], name="until", body=until_body),
        helper.make_node("Scan", ["zeros2", "data"], ["scan_final", "out_scan"], name="rows", body=scan_body,
                         num_scan_inputs=1, scan_input_directions=[1], scan_output_axes=[1]),
    ]
    inits = [numpy_helper.from_array(np.zeros(3, np.float32), "zeros"),
             numpy_helper.from_array(np.zeros(2, np.float32), "zeros2"),
             numpy_helper.from_array(np.array(30, np.float32), "limit")]
    graph = helper.make_graph(
        nodes, "control_flow",
        [helper.make_tensor_value_info("x", F, [3]), helper.make_tensor_value_info("c", B, []),
         helper.make_tensor_value_info("m", I64, []), helper.make_tensor_value_info("data", F, [4, 2])],
        [helper.make_tensor_value_info("out_if", F, [3]), helper.make_tensor_value_info("out_until", F, [3]),
         helper.make_tensor_value_info("out_scan", F, [2, 4])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, str(path))


def main():
    aotc = Path(sys.argv[1]).resolve()
    failures = []

    def check(ok, what):
        print(("ok: " if ok else "FAILED: ") + what)
        if not ok:
            failures.append(what)

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        model(work / "cf.onnx")
        subprocess.run([str(aotc), "compile", str(work / "cf.onnx"), "--target", "x86-64", "-o", str(work / "cf"),
                        "--name", "cf"], check=True, capture_output=True)
        subprocess.run(["cmake", "-S", str(work / "cf"), "-B", str(work / "build"), "-G", "Ninja",
                        "-DCMAKE_BUILD_TYPE=Release"], check=True, capture_output=True)
        subprocess.run(["ninja", "-C", str(work / "build")], check=True, capture_output=True)
        session = ort.InferenceSession(str(work / "cf.onnx"), providers=["CPUExecutionProvider"])
        data = np.arange(8, dtype=np.float32).reshape(4, 2)
        # With m = 10^12 the If takes its else-branch: only the loop whose condition stops it runs.
        cases = [(True, 3), (False, 3), (True, 0), (True, -4), (False, 10**12)]
        for k, (c, m) in enumerate(cases):
            feeds = {"x": np.array([1, 2, 0.5], np.float32), "c": np.array(c), "m": np.array(m, np.int64), "data": data}
            expected = session.run(None, feeds)
            args = []
            for name, value in feeds.items():
                f = work / f"in_{k}_{name}.pb"
                f.write_bytes(numpy_helper.from_array(value, name).SerializeToString())
                args += ["--input", str(f)]
            out_dir = work / f"out_{k}"
            run = subprocess.run([str(work / "build" / "cf_run")] + args + ["--output-dir", str(out_dir)],
                                 capture_output=True, text=True, timeout=60)
            check(run.returncode == 0, f"case c={c} m={m}: runner exits 0 ({run.stderr.strip()})")
            if run.returncode != 0:
                continue
            for j, exp in enumerate(expected):
                t = onnx.TensorProto()
                t.ParseFromString((out_dir / f"output_{j}.pb").read_bytes())
                got = numpy_helper.to_array(t)
                check(got.shape == exp.shape and np.array_equal(got, exp),
                      f"case c={c} m={m}: output {j} {got.tolist()} == onnxruntime {exp.tolist()}")

        device = subprocess.run([str(aotc), "compile", str(work / "cf.onnx"), "--target", "opencl", "-o",
                                 str(work / "device")], capture_output=True, text=True)
        check(device.returncode == 2 and "run-time control flow" in device.stderr and "'branch'" in device.stderr
              and "'until'" in device.stderr,
              f"opencl refuses the run-time If and Loop by name (exit 2): {device.returncode} '{device.stderr.strip()}'")

        inspect = subprocess.run([str(aotc), "inspect", str(work / "cf.onnx")], capture_output=True, text=True)
        check(inspect.returncode == 0 and "12 nodes (9 inside subgraphs)" in inspect.stdout
              and "every op has a converter" in inspect.stdout,
              f"inspect counts the subgraphs' nodes: {inspect.stdout.strip()}")

    print(f"{'FAILED' if failures else 'passed'}: {len(failures)} of the checks failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
