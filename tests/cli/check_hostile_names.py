#!/usr/bin/env python3
"""Names that try to break out of generated code (run by ctest as CliHostileNames).

ONNX names are arbitrary strings, and aotc writes them into generated sources: comments, string
tables, messages. A name holding `*/`, a newline, a quote or a trailing backslash could end a
comment or a string literal early, and whatever follows would be compiled into the package (code
injection from a model file). A small model whose graph, node, value and initializer names carry
such payloads is compiled for every kind of target; then

  - no generated source may contain the payload as code: each is lexed as C/C++ (backslash-newline
    splicing, comments, string and character literals removed) and the payload must not remain;
    every JSON file must parse;
  - the packages of the targets that run here (x86-64, OpenCL on PoCL, the Ascend and MLU
    emulations) are built in one CMake project and run, and their outputs match numpy;
  - the CUDA package's sources are scanned only (nvcc is not needed for the scan).

  python3 tests/cli/check_hostile_names.py path/to/aotc
"""
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

PAYLOAD = "INJECTED_PAYLOAD();"
# Each name attacks one way out: a block comment, a line comment (newline, trailing backslash that
# continues the comment onto the next line), a string literal, the preprocessor, a trigraph.
X = f"x*/ {PAYLOAD} /*"
MID = f"mid\n{PAYLOAD} //"
W = f'w" {PAYLOAD} "'
Y = "y\\"
NODE_RELU = f"relu\r\n#define relu {PAYLOAD}"
NODE_MUL = f"mul ??/\n{PAYLOAD} NOT_UTF8"
# Protobuf does not check that names are UTF-8: bytes that are not are written over this
# placeholder (same length) in the serialised model, and must be escaped like the rest.
NOT_UTF8 = (b"NOT_UTF8", b"\xff\xfe\x80\xc3\x28*/\\")
GRAPH = f"graph */ {PAYLOAD} /*"

RUNNABLE = {"x86-64": [], "opencl": [], "ascend-910b": [], "mlu370": ["-DAOTC_MLU_NUMERICS=ieee"]}
SCANNED_ONLY = ["cuda-sm90"]


def hostile_model(path):
    w = numpy_helper.from_array(np.array([1.5, -2.0, 0.25, 3.0], dtype=np.float32), W)
    nodes = [helper.make_node("Relu", [X], [MID], name=NODE_RELU),
             helper.make_node("Mul", [MID, W], [Y], name=NODE_MUL)]
    graph = helper.make_graph(nodes, GRAPH, [helper.make_tensor_value_info(X, TensorProto.FLOAT, [2, 4])],
                              [helper.make_tensor_value_info(Y, TensorProto.FLOAT, [2, 4])], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    data = model.SerializeToString()
    assert len(NOT_UTF8[0]) == len(NOT_UTF8[1]) and data.count(NOT_UTF8[0]) == 1
    path.write_bytes(data.replace(*NOT_UTF8))
    return w


SOURCE_SUFFIXES = {".c", ".cc", ".cpp", ".h", ".hpp", ".cu", ".cuh", ".cl", ".mlu"}


def code_outside_comments_and_literals(text):
    """The text the C/C++ compiler sees as code: lines spliced at backslash-newline (translation
    phase 2, before comments end), then comments and string and character literals removed."""
    text = text.replace("\\\n", "")
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            out.append(" ")
        elif c in "\"'":
            i += 1
            while i < n and text[i] != c and text[i] != "\n":
                i += 2 if text[i] == "\\" else 1
            i += 1
            out.append(" ")
        else:
            out.append(c)
            i += 1
    return "".join(out)


def escaped_payload_lines(package):
    """Where the payload reached code in the package's generated sources (the runtime stub is
    copied, not generated), and JSON files that do not parse."""
    bad = []
    for f in sorted(package.rglob("*")):
        if not f.is_file() or "runtime_stub" in f.parts:
            continue
        rel = f.relative_to(package)
        if f.suffix == ".json":
            try:
                json.loads(f.read_text())
            except ValueError as e:
                bad.append(f"{rel}: not valid JSON ({e})")
        elif f.suffix in SOURCE_SUFFIXES or f.name.endswith(".in"):
            code = code_outside_comments_and_literals(f.read_text(errors="replace"))
            for line in code.splitlines():
                # A sanitised identifier (k0_mul_____INJECTED_PAYLOAD___) is harmless; the call is not.
                if re.search(r"INJECTED_PAYLOAD\s*\(", line):
                    bad.append(f"{rel}: {line.strip()[:120]}")
    return bad


def main():
    aotc = Path(sys.argv[1]).resolve()
    failures = []

    def check(ok, what):
        print(("ok: " if ok else "FAILED: ") + what)
        if not ok:
            failures.append(what)

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        w = hostile_model(work / "hostile.onnx")
        x = np.array([[1.0, -1.0, 2.0, -3.0], [0.5, 4.0, -0.5, 1.0]], dtype=np.float32)
        (work / "x.pb").write_bytes(numpy_helper.from_array(x, X).SerializeToString())
        expected = np.maximum(x, 0) * numpy_helper.to_array(w)

        compiled = []
        for target in list(RUNNABLE) + SCANNED_ONLY:
            name = "hostile_" + re.sub(r"\W", "_", target)
            r = subprocess.run([str(aotc), "compile", str(work / "hostile.onnx"), "--target", target,
                                "-o", str(work / name), "--name", name], capture_output=True, text=True)
            check(r.returncode == 0, f"{target}: compiles ({r.returncode}: {r.stderr.strip()[:200]})")
            if r.returncode != 0:
                continue
            bad = escaped_payload_lines(work / name)
            check(not bad, f"{target}: no name escapes a comment or string in the generated files"
                  + "".join(f"\n    {b}" for b in bad[:8]))
            if target in RUNNABLE:
                compiled.append((target, name))

        # One CMake project per package: the NPU packages take their numeric model as a cache
        # option, so they cannot share one configure.
        for target, name in compiled:
            build = work / f"build_{name}"
            cfg = subprocess.run(["cmake", "-S", str(work / name), "-B", str(build), "-G", "Ninja",
                                  "-DCMAKE_BUILD_TYPE=Release"] + RUNNABLE[target], capture_output=True, text=True)
            b = cfg if cfg.returncode else subprocess.run(["cmake", "--build", str(build)], capture_output=True,
                                                          text=True)
            check(b.returncode == 0, f"{target}: the package builds" +
                  ("" if b.returncode == 0 else "\n" + (b.stdout + b.stderr)[-1500:]))
            if b.returncode != 0:
                continue
            out = work / f"out_{name}"
            run = subprocess.run([str(build / f"{name}_run"), "--input", str(work / "x.pb"),
                                  "--weights", str(work / name / f"{name}.weights"), "--output-dir", str(out)],
                                 capture_output=True, text=True)
            check(run.returncode == 0, f"{target}: the runner exits 0 ({run.returncode}: {run.stderr.strip()[:300]})")
            if run.returncode == 0:
                got = numpy_helper.to_array(onnx.load_tensor(str(out / "output_0.pb")))
                check(got.shape == expected.shape and np.allclose(got, expected, rtol=1e-6, atol=0),
                      f"{target}: output matches numpy")

    print(f"{'FAILED' if failures else 'passed'}: {len(failures)} of the checks failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
