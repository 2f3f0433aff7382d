#!/usr/bin/env python3
"""`aotc compile` and the NCHWc layout end to end (run by ctest as CliLayout).

Compiles, without running, a small MobileNet-style chain (stem, 1x1, depthwise, 1x1) and checks
  - on x86-64-avx512 the layout pass blocks the images between the convolutions (the IR printed
    after legalize-layout has {NCHW8c} values, the statistics say so, the generated source calls
    the NCHWc depthwise kernel), while the graph's input and output stay row-major;
  - with --plain-layout, and on x86-64-avx2 and x86-64 (no NCHWc kernels), nothing is blocked.
Compiling needs no AVX-512 CPU, so this runs wherever the tests do (the NCHWc kernels' results
are checked against onnxruntime by tests/simd/check_simd_kernels.py where the CPU has AVX-512).

  python3 tests/cli/check_layout.py path/to/aotc
"""
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def chain_model(path):
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal(s).astype(np.float32), n)
             for n, s in [("w0", (16, 3, 3, 3)), ("w1", (32, 16, 1, 1)), ("wd", (32, 1, 3, 3)),
                          ("w2", (16, 32, 1, 1))]]
    nodes = [helper.make_node("Conv", ["x", "w0"], ["s"], name="stem", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["s"], ["sr"], name="stem_relu"),
             helper.make_node("Conv", ["sr", "w1"], ["e"], name="expand"),
             helper.make_node("Conv", ["e", "wd"], ["d"], name="depthwise", group=32, pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["d", "w2"], ["y"], name="project")]
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 16, 16])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def compile_chain(aotc, model, out, target, *extra):
    p = subprocess.run([aotc, "compile", str(model), "--target", target, "-o", str(out), "--name", "chain",
                        "--print-ir-after", "legalize-layout", *extra], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"FAILED: aotc compile --target {target} {' '.join(extra)}: {p.stderr.strip()}")
    source = (out / "src" / "chain.cpp").read_text()
    return p.stderr, source


def main():
    aotc = sys.argv[1] if len(sys.argv) > 1 else "build/aotc"
    failures = []

    def check(ok, what):
        print(f"{'ok' if ok else 'FAILED'}: {what}")
        if not ok:
            failures.append(what)

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        model = tmp / "chain.onnx"
        chain_model(model)
        ir, source = compile_chain(aotc, model, tmp / "avx512", "x86-64-avx512")
        check("3 values blocked, 1 NCHWc regions" in ir, "x86-64-avx512: the pass blocks sr, e and d")
        check("f32[1x32x16x16]{NCHW8c}" in ir, "x86-64-avx512: the IR shows the blocked layout")
        check("%x: f32[1x3x16x16])" in ir and "%y: f32[1x16x16x16])" in ir,
              "x86-64-avx512: the graph's input and output stay row-major")
        check("aotc_simd::depthwise_blocked<" in source, "x86-64-avx512: the NCHWc depthwise kernel is used")
        for target, extra in [("x86-64-avx512", ["--plain-layout"]), ("x86-64-avx2", []), ("x86-64", [])]:
            ir, source = compile_chain(aotc, model, tmp / f"{target}{len(extra)}", target, *extra)
            name = f"{target} {' '.join(extra)}".strip()
            check("NCHW8c" not in ir and re.search(r"IR after legalize-layout \(step \d+ of \d+\): no change", ir),
                  f"{name}: nothing is blocked")
            check("depthwise_blocked" not in source and "BlockedPixels" not in source,
                  f"{name}: no NCHWc kernel in the source")
    print(f"{'all checks passed' if not failures else f'{len(failures)} checks failed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
