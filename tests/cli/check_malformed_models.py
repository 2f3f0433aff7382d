#!/usr/bin/env python3
"""Malformed models against `aotc compile`, `aotc inspect` and `aotc eval` (run by ctest as
CliMalformedModels): one model per class of input that once crashed, hung or tricked the compiler
(docs/robustness.md), and every file kept in tests/fuzz/regressions/ (models the fuzzers and the
mutation runs found).

Each run must end within its time limit with exit 1 or 2 (exit 0 is allowed only where a case
says so), no signal, an error of one line `aotc: error: <model path>: ...` naming the node where a
case names one, no raw control bytes on stdout or stderr, and no package directory left behind.

  python3 tests/cli/check_malformed_models.py path/to/aotc [--only SUBSTRING]
"""
import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import onnx
from onnx import TensorProto, helper

ROOT = Path(__file__).resolve().parents[2]
REGRESSIONS = ROOT / "tests" / "fuzz" / "regressions"
# A hang is a command that never ends (the cases here once took minutes or were killed at 21 GB);
# the slowest legitimate refusal, the nested loops' expanded-node budget, takes 3.4 s on a quiet
# Zen 4 and passed 30 s on CI's loaded 2 cores, so the bound leaves room for a loaded machine.
TIME_LIMIT_S = 120
INT64_MAX = 2**63 - 1


def vi(name, dims, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, dims)


def model(nodes, inputs, outputs, opset=17, initializers=(), functions=(), extra_opsets=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, 1) for d in extra_opsets]
    m = helper.make_model(graph, opset_imports=opsets, functions=list(functions))
    m.ir_version = 8
    return m


def ints(name, values):
    return helper.make_tensor(name, TensorProto.INT64, [len(values)], values)


# --- the cases: (name, ModelProto or bytes, commands, the node the error must name or None) -----

def missing_inputs_cases():
    """An op given fewer inputs than its schema requires (each once crashed its converter)."""
    x = vi("x", [1, 4, 2, 2])
    y = vi("y", [1, 4, 2, 2])
    ops = {
        "Cast": {"to": TensorProto.FLOAT}, "CastLike": {}, "CenterCropPad": {},
        "DepthToSpace": {"blocksize": 2}, "Dropout": {}, "Flatten": {}, "InstanceNormalization": {},
        "SoftmaxCrossEntropyLoss": {}, "SpaceToDepth": {"blocksize": 2}, "Squeeze": {}, "Tile": {},
        "Unsqueeze": {},
    }
    cases = []
    for op, attrs in ops.items():
        # No inputs at all, and the first input named by an empty string.
        for inputs, tag in (([], "none"), ([""], "empty")):
            n = helper.make_node(op, inputs, ["y"], name=f"{op.lower()}_node", **attrs)
            cases.append((f"missing-inputs-{op}-{tag}", model([n], [x], [y], opset=18), ALL, f"{op.lower()}_node"))
    return cases


def wrong_output_count_cases():
    x = vi("x", [2, 3])
    relu = helper.make_node("Relu", ["x"], ["y", "z"], name="relu2")
    dropout = helper.make_node("Dropout", ["x"], ["y", "m", "extra"], name="dropout3")
    none = helper.make_node("Relu", ["x"], [], name="relu0")
    return [
        ("too-many-outputs-Relu", model([relu], [x], [vi("y", [2, 3])]), ALL, "relu2"),
        ("too-many-outputs-Dropout", model([dropout], [x], [vi("y", [2, 3])]), ALL, "dropout3"),
        ("no-outputs-Relu", model([none, helper.make_node("Relu", ["x"], ["y"])], [x], [vi("y", [2, 3])]),
         ALL, "relu0"),
    ]


def attribute_type_cases():
    """Cast's `to` was a STRING in Cast-1; at opset 13 a STRING or FLOAT `to` once tripped an
    internal assertion."""
    x = vi("x", [2])
    cases = []
    for tag, attr in (("string", helper.make_attribute("to", "FLOAT")),
                      ("float", helper.make_attribute("to", 1.0))):
        n = helper.make_node("Cast", ["x"], ["y"], name="cast_to")
        n.attribute.append(attr)
        cases.append((f"cast-to-{tag}", model([n], [x], [vi("y", [2])], opset=13), ALL, "cast_to"))
    n = helper.make_node("Cast", ["x"], ["y"], name="cast_no_to")
    cases.append(("cast-without-to", model([n], [x], [vi("y", [2])], opset=13), ALL, "cast_no_to"))
    return cases


def external_data_cases(tmp):
    """Initializers declaring 2^40 elements with external data that is refused (absolute,
    outside the folder, missing) or too short: the sizes are checked before allocating."""
    (tmp / "short.bin").write_bytes(b"\0" * 16)
    cases = []
    for tag, location in (("absolute", "/etc/hostname"), ("parent", "../x.bin"), ("missing", "nope.bin"),
                          ("short", "short.bin")):
        w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[2**20, 2**20],
                        data_location=TensorProto.EXTERNAL)
        w.external_data.add(key="location", value=location)
        n = helper.make_node("Add", ["x", "w"], ["y"], name="add_w")
        m = model([n], [vi("x", [1])], [vi("y", [2**20, 2**20])], initializers=[w])
        cases.append((f"external-data-terabytes-{tag}", m, ["compile", "eval"], None))
    return cases


def eval_generated_input_cases():
    """`aotc eval` without --input generates the declared input: 2^39 floats are 2 TiB."""
    n = helper.make_node("Relu", ["x"], ["y"], name="relu")
    big = [2**20, 2**19]
    return [("eval-huge-declared-input", model([n], [vi("x", big)], [vi("y", big)]), ["eval"], None)]


def inliner_cases():
    """Model-local functions, each calling the next ten times, nine deep: 10^9 nodes from a model
    of a few KB. The inliner stops at its node limit."""
    functions = []
    depth = 9
    for level in range(depth):
        if level == depth - 1:
            body = [helper.make_node("Relu", ["a"], ["b"])]
        else:
            body, prev = [], "a"
            for k in range(10):
                out = "b" if k == 9 else f"t{k}"
                body.append(helper.make_node(f"f{level + 1}", [prev], [out], domain="local"))
                prev = out
        functions.append(helper.make_function("local", f"f{level}", ["a"], ["b"], body,
                                              [helper.make_opsetid("", 17), helper.make_opsetid("local", 1)]))
    call = helper.make_node("f0", ["x"], ["y"], domain="local", name="call_f0")
    m = model([call], [vi("x", [2])], [vi("y", [2])], functions=functions, extra_opsets=["local"])
    return [("inline-exponential", m, ["compile", "eval"], "call_f0")]


def nested_loop_cases():
    """Two nested Loops of 1000 trips each that carry a sequence, so both are unrolled at compile
    time: a model of under 1 KB that once took 21 GB and was killed. One grows its sequence each
    iteration (quadratic copies: the sequence-element budget stops it), one inserts and erases
    (constant length: the expanded-node budget stops it)."""
    trips = 1000

    def body(name, first, grows):
        nodes = list(first) + [
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Cast", ["iter"], ["iterf"], to=TensorProto.FLOAT),
            helper.make_node("SequenceInsert", ["seq_mid", "iterf"], ["seq_grown" if not grows else "seq_out"]),
        ]
        if not grows:
            nodes.append(helper.make_node("SequenceErase", ["seq_grown"], ["seq_out"]))
        return helper.make_graph(
            nodes, name,
            [vi("iter", [], TensorProto.INT64), vi("cond_in", [], TensorProto.BOOL),
             helper.make_tensor_sequence_value_info("seq_in", TensorProto.FLOAT, None)],
            [vi("cond_out", [], TensorProto.BOOL),
             helper.make_tensor_sequence_value_info("seq_out", TensorProto.FLOAT, None)])

    def constants(prefix):
        return [helper.make_node("Constant", [], [f"{prefix}n"],
                                 value=helper.make_tensor("v", TensorProto.INT64, [], [trips])),
                helper.make_node("Constant", [], [f"{prefix}c"],
                                 value=helper.make_tensor("v", TensorProto.BOOL, [], [True]))]

    cases = []
    for grows, tag in ((True, "growing-sequence"), (False, "constant-sequence")):
        inner = body("inner", [helper.make_node("Identity", ["seq_in"], ["seq_mid"])], grows)
        outer = body("outer", constants("i") + [
            helper.make_node("Loop", ["in", "ic", "seq_in"], ["seq_mid"], body=inner, name="inner_loop")], grows)
        nodes = constants("") + [
            helper.make_node("SequenceEmpty", [], ["s0"], dtype=TensorProto.FLOAT),
            helper.make_node("Loop", ["n", "c", "s0"], ["s1"], body=outer, name="outer_loop"),
            helper.make_node("SequenceLength", ["s1"], ["len"])]
        cases.append((f"nested-unrolled-loops-{tag}", model(nodes, [], [vi("len", [], TensorProto.INT64)]),
                      ["compile", "eval"], "outer_loop"))
    return cases


def shape_overflow_cases():
    """Shape arithmetic past int64: products of dims, blocksize², repeats, pads."""
    x = vi("x", [2, 2, 2, 2])
    cases = []
    reshape = helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape_big")
    for tag, shape in (("product", [2**62, 4, 1, 1]), ("wraps-to-16", [2**62, 2**2, 2**62, 2**2]),
                       ("minus-one", [2**62, 2**62, -1])):
        cases.append((f"reshape-overflow-{tag}",
                      model([reshape], [x], [vi("y", None)], initializers=[ints("s", shape)]), ALL, "reshape_big"))
    # 17 x b wraps around to exactly the input's 16 elements: the reshape looked valid, and the
    # transpose after it walked 2^64 strides over a 16-element buffer.
    b = 16 * pow(17, -1, 2**64) % 2**64
    wrapped = [helper.make_node("Reshape", ["x", "s"], ["r"], name="reshape_wraps"),
               helper.make_node("Transpose", ["r"], ["y"], name="transpose", perm=[1, 0])]
    cases.append(("reshape-wraps-to-input-count",
                  model(wrapped, [x], [vi("y", None)], initializers=[ints("s", [17, b])]), ALL, "reshape_wraps"))
    tile = helper.make_node("Tile", ["x", "r"], ["y"], name="tile_big")
    for tag, reps in (("wrap", [2**62, 4, 1, 1]), ("huge", [2**40, 2**40, 1, 1]), ("max", [INT64_MAX, 1, 1, 1])):
        cases.append((f"tile-overflow-{tag}",
                      model([tile], [x], [vi("y", None)], initializers=[ints("r", reps)]), ALL, "tile_big"))
    pad = helper.make_node("Pad", ["x", "p"], ["y"], name="pad_big")
    for tag, pads in (("min", [-2**63, 0, 0, 0, 0, 0, 0, 0]), ("max", [INT64_MAX, 0, 0, 0, INT64_MAX, 0, 0, 0]),
                      ("sum", [2**62, 0, 0, 0, 2**62, 0, 0, 0])):
        cases.append((f"pad-overflow-{tag}",
                      model([pad], [x], [vi("y", None)], initializers=[ints("p", pads)]), ALL, "pad_big"))
    for op in ("DepthToSpace", "SpaceToDepth"):
        # blocksize² = 2^64 wraps to 0, which divided the channels.
        n = helper.make_node(op, ["x"], ["y"], name=f"{op.lower()}_big", blocksize=2**32)
        cases.append((f"{op}-blocksize-2^32", model([n], [x], [vi("y", None)]), ALL, f"{op.lower()}_big"))
    expand = helper.make_node("Expand", ["x", "s"], ["y"], name="expand_big")
    cases.append(("expand-2^48-elements",
                  model([expand], [vi("x", [1, 1, 1, 1])], [vi("y", None)],
                        initializers=[ints("s", [2**24, 2**24, 1, 1])]),
                  ALL, "expand_big"))
    return cases


def untrusted_name_cases():
    """Names with newlines, binary bytes and terminal escapes must be printed escaped."""
    evil = "evil\n\x1b[31mred\x1b[0m\x07\x00\xff"
    x = vi("x", [2])
    n = helper.make_node("NoSuchOp", ["x"], ["y"], name=evil)
    m1 = model([n], [x], [vi("y", [2])])
    n2 = helper.make_node("Relu", ["x\n\x1b[2J"], ["y"], name="relu")
    m2 = model([n2], [x], [vi("y", [2])])
    # A value-info name with escapes, for inspect's listing.
    m3 = model([helper.make_node("Relu", ["x\x1b[2J"], ["y"])], [vi("x\x1b[2J", [2])], [vi("y", [2])])
    raw = []
    for m in (m1, m2, m3):
        raw.append(m.SerializeToString())
    return [
            ("name-escapes-unsupported-op", raw[0], ALL, None),
            ("name-escapes-undefined-input", raw[1], ALL, "relu"),
            ("name-escapes-inspect", raw[2], ["inspect"], None)]


ALL = ["compile", "inspect", "eval"]
EXIT_ZERO_OK = {"inspect"}  # inspect reports on a model; it refuses only what it cannot read


def run_case(aotc, tmp, name, content, commands, node, failures):
    path = tmp / f"{name}.onnx"
    data = content if isinstance(content, bytes) else content.SerializeToString()
    path.write_bytes(data)
    for command in commands:
        out = tmp / f"out_{name}_{command}"
        args = {"compile": [aotc, "compile", str(path), "--target", "x86-64", "-o", str(out)],
                "inspect": [aotc, "inspect", str(path)],
                "eval": [aotc, "eval", str(path), "--output-dir", str(out)]}[command]
        label = f"{name} ({command})"
        try:
            p = subprocess.run(args, capture_output=True, timeout=TIME_LIMIT_S)
        except subprocess.TimeoutExpired:
            failures.append(f"{label}: no answer within {TIME_LIMIT_S} s (a hang)")
            continue
        stderr = p.stderr.decode("utf-8", "replace")
        problem = None
        if p.returncode < 0 or p.returncode > 2:
            problem = f"exit {p.returncode} (a crash)"
        elif p.returncode == 0 and command not in EXIT_ZERO_OK:
            problem = "exit 0: the model was accepted"
        elif any(b < 0x20 and b not in (0x0a,) or b == 0x7f for b in p.stdout + p.stderr):
            problem = "raw control bytes in the output"
        elif p.returncode != 0:
            lines = stderr.strip().split("\n")
            if len(lines) != 1 or not lines[0].startswith(f"aotc: error: {path}: "):
                problem = "the error is not one line 'aotc: error: <model path>: ...'"
            elif node and f"node '{node}" not in lines[0]:
                problem = f"the error does not name node '{node}'"
            elif "internal error" in lines[0]:
                problem = "an internal error"
        if command == "compile" and out.exists():
            problem = problem or "a package directory was left behind"
        if problem:
            failures.append(f"{label}: {problem}\n  exit {p.returncode}, stderr: {stderr.strip()[:400]!r}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("aotc", nargs="?", default="build/aotc")
    parser.add_argument("--only", default="", help="run the cases whose name contains this")
    args = parser.parse_args()
    aotc = os.path.abspath(args.aotc)
    failures = []
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        cases = (missing_inputs_cases() + wrong_output_count_cases() + attribute_type_cases() +
                 external_data_cases(tmp) + eval_generated_input_cases() + inliner_cases() + nested_loop_cases() +
                 shape_overflow_cases() + untrusted_name_cases())
        for f in sorted(REGRESSIONS.glob("*")) if REGRESSIONS.is_dir() else []:
            if f.suffix != ".md":
                cases.append((f"regression-{f.name}", f.read_bytes(), ALL, None))
        cases = [c for c in cases if args.only in c[0]]
        for name, content, commands, node in cases:
            run_case(aotc, tmp, name, content, commands, node, failures)
        print(f"check_malformed_models: {len(cases)} models, {len(failures)} failures")
    for f in failures:
        print("FAILED:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
