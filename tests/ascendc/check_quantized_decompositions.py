#!/usr/bin/env python3
"""The quantized rewrites of decompose-for-target on an NPU target, against onnxruntime.

passes/decompose_quantized.cpp turns QuantizeLinear / DequantizeLinear into f32 arithmetic and the
importer's integer products (MatMulInteger, ConvInteger) into f32 products chunked over their depth
so that every partial sum is an integer f32 holds exactly. One package holds the cases that take
each branch:

  - MatMulInteger u8 x i8 with zero points and K = 600: two chunks of at most 2^24 / (255 * 128),
    the i32 result a graph output (chunks added in i32), and the same product scaled to f32
    (chunks added in f32);
  - ConvInteger u8 x u8 with zero points, 64 channels of 3 x 3 taps: chunks of 28 channels;
  - DynamicQuantizeLinear of a [40000] row (longer than the vector memory holds: the two-stage
    ReduceMax / ReduceMin; the scale's Equal / Where on the vector unit, the zero point's Round);
  - QuantizeLinear per axis to i8, DequantizeLinear per tensor from u8;
  - Round of halves, negatives and floats past 2^23 and 2^31 (the vector conversion's rint mode on
    ascend-910b, with the clamp to 2^23; the scalar unit's aotc_rintf on mlu370): exact.

The integer accumulators must equal onnxruntime's exactly; 8-bit results may differ by one step
(a division that is a reciprocal and a product on the MLU370 may round a half step either way);
float results within relative L2 1e-6.

  python3 tests/ascendc/check_quantized_decompositions.py --aotc build/aotc --target ascend-910b --work DIR
"""
import argparse
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "npu"))
from npu_package_checks import compile_and_build_model  # noqa: E402

M, K, N = 6, 600, 10
C, HW, OC = 64, 6, 5
L = 40000
# 2^47 + 2^24 + 2^25: x - 2^23 there is a tie that rounds away from x.
ROUND_CASES = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, -0.3, 8388607.5, -8388607.5, 8388609.0, 1e10, -3e9,
               3.4e38, 1e-40, 123.456, 2.0**47 + 2.0**24, 2.0**47 + 3 * 2.0**24, -(2.0**47 + 2.0**24), 0.7]
R = 64


def model():
    rng = np.random.default_rng(5)
    u8 = lambda *s: rng.integers(0, 256, s).astype(np.uint8)  # noqa: E731
    inits = [numpy_helper.from_array(rng.integers(-127, 128, (K, N)).astype(np.int8), "B"),
             numpy_helper.from_array(np.array(3, np.int8), "b_zp"),
             numpy_helper.from_array(u8(OC, C, 3, 3), "W"),
             numpy_helper.from_array(np.array(131, np.uint8), "w_zp"),
             numpy_helper.from_array(np.array(0.02, np.float32), "ab_scale"),
             numpy_helper.from_array((rng.random(4) * 0.1 + 0.01).astype(np.float32), "q_scale"),
             numpy_helper.from_array(np.array([0, -3, 7, 100], np.int8), "q_zp"),
             numpy_helper.from_array(np.array(0.05, np.float32), "d_scale"),
             numpy_helper.from_array(np.array(17, np.uint8), "d_zp")]
    nodes = [
        helper.make_node("MatMulInteger", ["a", "B", "a_zp", "b_zp"], ["acc"], name="matmul_integer"),
        helper.make_node("Cast", ["acc"], ["acc_f"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["acc_f", "ab_scale"], ["scaled"]),
        helper.make_node("ConvInteger", ["x", "W", "x_zp", "w_zp"], ["conv"], pads=[1, 1, 1, 1], name="conv_integer"),
        helper.make_node("DynamicQuantizeLinear", ["row"], ["row_q", "row_scale", "row_zp"], name="dynamic"),
        helper.make_node("QuantizeLinear", ["v", "q_scale", "q_zp"], ["v_q"], axis=1, name="quantize"),
        helper.make_node("DequantizeLinear", ["d", "d_scale", "d_zp"], ["d_f"], name="dequantize"),
        helper.make_node("Round", ["r"], ["r_round"], name="round"),
    ]
    f, i32 = TensorProto.FLOAT, TensorProto.INT32
    outputs = [("acc", i32, [M, N]), ("scaled", f, [M, N]), ("conv", i32, [1, OC, HW, HW]),
               ("row_q", TensorProto.UINT8, [L]), ("row_scale", f, []), ("row_zp", TensorProto.UINT8, []),
               ("v_q", TensorProto.INT8, [3, 4, 5]), ("d_f", f, [7, 9]), ("r_round", f, [R])]
    inputs = [("a", TensorProto.UINT8, [M, K]), ("a_zp", TensorProto.UINT8, []),
              ("x", TensorProto.UINT8, [1, C, HW, HW]), ("x_zp", TensorProto.UINT8, []),
              ("row", f, [L]), ("v", f, [3, 4, 5]), ("d", TensorProto.UINT8, [7, 9]), ("r", f, [R])]
    graph = helper.make_graph(nodes, "quantized", [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                              [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--aotc", default="build/aotc")
    ap.add_argument("--target", default="ascend-910b")
    ap.add_argument("--work", default="build/quantized_decompositions")
    args = ap.parse_args()
    work = Path(args.work)
    compile_and_build_model(args.aotc, model(), args.target, work)
    rng = np.random.default_rng(8)
    feeds = {"a": rng.integers(0, 256, (M, K)).astype(np.uint8), "a_zp": np.array(201, np.uint8),
             "x": rng.integers(0, 256, (1, C, HW, HW)).astype(np.uint8), "x_zp": np.array(9, np.uint8),
             "row": (rng.standard_normal(L) * 3 + 0.5).astype(np.float32),
             "v": (rng.standard_normal((3, 4, 5)) * 4).astype(np.float32),
             "d": rng.integers(0, 256, (7, 9)).astype(np.uint8),
             "r": np.concatenate([np.array(ROUND_CASES, np.float32),
                                  (rng.standard_normal(R - len(ROUND_CASES)) * 20).astype(np.float32)])}
    files = []
    for k, (name, value) in enumerate(feeds.items()):
        path = work / f"in_{k}.pb"
        path.write_bytes(numpy_helper.from_array(value, name).SerializeToString())
        files += ["--input", str(path)]
    out = work / "out"
    r = subprocess.run([str(work / "build" / "m_run")] + files + ["--output-dir", str(out)], capture_output=True,
                       text=True)
    if r.returncode != 0:
        raise SystemExit(f"FAILED: run: exit {r.returncode}\n{(r.stdout + r.stderr)[-2000:]}")
    sess = ort.InferenceSession(str(work / "m.onnx"), providers=["CPUExecutionProvider"])
    expected = sess.run(None, feeds)
    failures = 0
    for k, (o, want) in enumerate(zip(sess.get_outputs(), expected)):
        got = numpy_helper.to_array(onnx.load_tensor(str(out / f"output_{k}.pb")))
        if got.shape != want.shape or got.dtype != want.dtype:
            ok, what = False, f"{got.dtype}{list(got.shape)}, expected {want.dtype}{list(want.shape)}"
        elif want.dtype == np.int32:
            diff = int(np.count_nonzero(got != want))
            ok, what = diff == 0, f"{diff} of {want.size} accumulators differ"
        elif want.dtype in (np.uint8, np.int8):
            steps = np.abs(got.astype(np.int64) - want.astype(np.int64))
            ok, what = int(steps.max(initial=0)) <= 1, f"{int((steps > 0).sum())} of {want.size} one step off"
        elif o.name == "r_round":
            diff = int(np.count_nonzero(got != want))
            ok, what = diff == 0, f"{diff} of {want.size} rounded values differ"
        else:
            err = float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30))
            ok, what = err <= 1e-6, f"relative L2 {err:.2e}"
        failures += not ok
        print(f"{'ok' if ok else 'FAILED'}: {o.name}: {what}")
    print(f"quantized decompositions on {args.target}: {'all passed' if not failures else f'{failures} failed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
