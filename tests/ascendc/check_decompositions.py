#!/usr/bin/env python3
"""The decompose-for-target rewrites on an NPU target, against onnxruntime (run by scripts/test.sh).

NPU targets have no kernel for LSTM, a run-time If or Pad; passes/decompose_for_target.h rewrites
them into nodes they have: the LSTM unrolled over its steps, the If as both branches and a Where,
the Pad as Gathers / Concats. One package holds the cases that exercise the rewrites' branches:

  - LSTM forward with sequence_lens of different lengths (masked steps: the state stays, Y = 0);
  - LSTM reverse with initial state and peepholes;
  - LSTM bidirectional with a bias (batch-major layout = 1, which onnxruntime does not run, is
    the node test test_lstm_batchwise);
  - If on a bool graph input whose branches compute different things (run with true and false);
  - Pad reflect and edge, and constant (not on the last axis) with the pad value a graph input;
  - BatchNormalization in training mode (the batch statistics over axes 0 and 2 of [T, B, I],
    and the running mean and variance).

Every output must match onnxruntime within relative L2 1e-5 in both runs.

  python3 tests/ascendc/check_decompositions.py --aotc build/aotc --target ascend-910b --work DIR
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

T, B, I, H = 5, 4, 6, 8


def model():
    rng = np.random.default_rng(11)

    def w(name, *shape, scale=0.4):
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)

    inits = [w("W1", 1, 4 * H, I), w("R1", 1, 4 * H, H), w("B1", 1, 8 * H),
             w("W2", 1, 4 * H, I), w("R2", 1, 4 * H, H), w("P2", 1, 3 * H),
             w("h2", 1, B, H), w("c2", 1, B, H),
             w("W3", 2, 4 * H, I), w("R3", 2, 4 * H, H), w("B3", 2, 8 * H),
             w("then_w", B, I), numpy_helper.from_array(np.array([0, 1, 2, 0, 2, 1], np.int64), "pads"),
             numpy_helper.from_array(np.array([1, 0, 2, 1], np.int64), "pads_axes"),
             numpy_helper.from_array(np.array([0, 1], np.int64), "axes01"),
             w("bn_s", B), w("bn_b", B), w("bn_m", B),
             numpy_helper.from_array((rng.random(B) + 0.5).astype(np.float32), "bn_v")]
    # Elementwise tails, which the fusions would merge into a Where: the rewrite selects by copy.
    then_g = helper.make_graph([helper.make_node("Mul", ["x0", "then_w"], ["t_out"])], "then", [],
                               [helper.make_tensor_value_info("t_out", TensorProto.FLOAT, [B, I])])
    else_g = helper.make_graph([helper.make_node("Sigmoid", ["x0"], ["e_out"])], "else", [],
                               [helper.make_tensor_value_info("e_out", TensorProto.FLOAT, [B, I])])
    nodes = [
        helper.make_node("LSTM", ["x", "W1", "R1", "B1", "lens"], ["y1", "yh1", "yc1"], hidden_size=H, name="forward"),
        helper.make_node("LSTM", ["x", "W2", "R2", "", "", "h2", "c2", "P2"], ["y2", "yh2", "yc2"], hidden_size=H,
                         direction="reverse", name="reverse"),
        helper.make_node("LSTM", ["x", "W3", "R3", "B3"], ["y3", "yh3"], hidden_size=H, direction="bidirectional",
                         name="bidirectional"),
        helper.make_node("Gather", ["x", "zero"], ["x0"], axis=0),
        helper.make_node("If", ["cond"], ["picked"], then_branch=then_g, else_branch=else_g, name="if"),
        helper.make_node("Pad", ["x", "pads"], ["reflect"], mode="reflect", name="pad_reflect"),
        helper.make_node("Pad", ["x", "pads"], ["edge"], mode="edge", name="pad_edge"),
        helper.make_node("Pad", ["x", "pads_axes", "fill", "axes01"], ["constant"], mode="constant", name="pad_constant"),
        helper.make_node("BatchNormalization", ["x", "bn_s", "bn_b", "bn_m", "bn_v"], ["bn_y", "bn_mean", "bn_var"],
                         training_mode=1, epsilon=1e-3, momentum=0.8, name="bn_training"),
    ]
    inits.append(numpy_helper.from_array(np.array(0, np.int64), "zero"))
    f = TensorProto.FLOAT
    outputs = [("y1", [T, 1, B, H]), ("yh1", [1, B, H]), ("yc1", [1, B, H]), ("y2", [T, 1, B, H]),
               ("yh2", [1, B, H]), ("yc2", [1, B, H]), ("y3", [T, 2, B, H]), ("yh3", [2, B, H]),
               ("picked", [B, I]), ("reflect", [T, B + 3, I + 3]), ("edge", [T, B + 3, I + 3]),
               ("constant", [T + 3, B + 1, I]), ("bn_y", [T, B, I]), ("bn_mean", [B]), ("bn_var", [B])]
    graph = helper.make_graph(nodes, "decompositions",
                              [helper.make_tensor_value_info("x", f, [T, B, I]),
                               helper.make_tensor_value_info("lens", TensorProto.INT32, [B]),
                               helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
                               helper.make_tensor_value_info("fill", f, [])],
                              [helper.make_tensor_value_info(n, f, s) for n, s in outputs], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--aotc", default="build/aotc")
    ap.add_argument("--target", default="ascend-910b")
    ap.add_argument("--work", default="build/decompositions")
    args = ap.parse_args()
    work = Path(args.work)
    compile_and_build_model(args.aotc, model(), args.target, work)
    rng = np.random.default_rng(3)
    sess = ort.InferenceSession(str(work / "m.onnx"), providers=["CPUExecutionProvider"])
    failures = 0
    for cond in (True, False):
        feeds = {"x": rng.standard_normal((T, B, I)).astype(np.float32), "lens": np.array([5, 2, 3, 1], np.int32),
                 "cond": np.array(cond), "fill": np.array(-1.5, np.float32)}
        files = []
        for k, (name, value) in enumerate(feeds.items()):
            path = work / f"in_{cond}_{k}.pb"
            path.write_bytes(numpy_helper.from_array(value, name).SerializeToString())
            files += ["--input", str(path)]
        out = work / f"out_{cond}"
        r = subprocess.run([str(work / "build" / "m_run")] + files + ["--output-dir", str(out)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"FAILED: run (cond {cond}): exit {r.returncode}\n{(r.stdout + r.stderr)[-2000:]}")
        expected = sess.run(None, feeds)
        for k, (o, want) in enumerate(zip(sess.get_outputs(), expected)):
            got = numpy_helper.to_array(onnx.load_tensor(str(out / f"output_{k}.pb")))
            err = float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30)) if got.shape == want.shape else None
            ok = err is not None and err <= 1e-5
            failures += not ok
            print(f"{'ok' if ok else 'FAILED'}: cond {cond}: {o.name}: "
                  + (f"relative L2 {err:.2e}" if err is not None else f"shape {got.shape}, expected {want.shape}"))
    print(f"decompositions on {args.target}: {'all passed' if not failures else f'{failures} failed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
