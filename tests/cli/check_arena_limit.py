#!/usr/bin/env python3
"""`aotc compile --arena-limit` end to end (run by ctest as CliArenaLimit).

On a small model whose memory plan is known by hand, checks that
  - a limit at the arena size, or above it in binary units (1M), compiles, and the header
    #defines exactly that size;
  - a limit below the bytes live at the peak fails (exit 1) with a message naming the peak step
    and node, the buffers live there with their sizes, the excess and that no placement can fit;
  - a limit that is not a byte count is refused with a message that says so.

  python3 tests/cli/check_arena_limit.py path/to/aotc
"""
import subprocess
import sys
import tempfile
from pathlib import Path

import onnx
from onnx import TensorProto, helper


def chain_model(path):
    """a = Softmax(x), b = Transpose(x), c = MatMul(a, b), y = Softmax(c) on f32[64x64] (16 KiB
    each; none of them fuses with another).

    The MatMul reads a and b while it writes c, so the peak is at step 3 of 4, node 'matmul',
    with a, b and c live (48 KiB) and the MatMul kernel's scratch, one row of 64 f32 accumulators
    (256 B): 49408 bytes, which is also the arena (the lower bound is reached)."""
    t = lambda name: helper.make_tensor_value_info(name, TensorProto.FLOAT, [64, 64])  # noqa: E731
    nodes = [helper.make_node("Softmax", ["x"], ["a"], name="softmax_x"),
             helper.make_node("Transpose", ["x"], ["b"], name="transpose"),
             helper.make_node("MatMul", ["a", "b"], ["c"], name="matmul"),
             helper.make_node("Softmax", ["c"], ["y"], name="softmax_c")]
    graph = helper.make_graph(nodes, "chain", [t("x")], [t("y")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def compile_with(aotc, model, out, limit):
    return subprocess.run([aotc, "compile", str(model), "--target", "x86-64", "-o", str(out),
                           "--name", "chain", "--arena-limit", limit],
                          capture_output=True, text=True)


def main():
    aotc = sys.argv[1] if len(sys.argv) > 1 else "build/aotc"
    failures = []

    def expect(cond, what, proc):
        if not cond:
            failures.append(f"{what}\n  exit {proc.returncode}, stderr: {proc.stderr.strip()}")

    with tempfile.TemporaryDirectory() as tmp:
        model = Path(tmp) / "chain.onnx"
        chain_model(model)

        fits = compile_with(aotc, model, Path(tmp) / "fits", "49408")
        expect(fits.returncode == 0, "a limit equal to the arena (49408) must compile", fits)
        if fits.returncode == 0:
            header = (Path(tmp) / "fits" / "include" / "chain.h").read_text()
            expect("#define CHAIN_ARENA_BYTES 49408u" in header,
                   "the header must #define the 49408-byte arena", fits)

        binary = compile_with(aotc, model, Path(tmp) / "binary", "1M")
        expect(binary.returncode == 0, "a limit in binary units (1M) must compile", binary)

        over = compile_with(aotc, model, Path(tmp) / "over", "20000")
        message = over.stderr.strip()
        expect(over.returncode == 1, "an unmeetable limit must fail with exit status 1", over)
        for part in ["the arena needs 49408 bytes, 29408 more than --arena-limit 20000",
                     "no placement can fit: 49408 bytes are live at once at the peak, 29408 more "
                     "than the limit",
                     "The peak is at step 3 of 4, node 'matmul' (MatMul), where 4 buffers are "
                     "live: 'a' 16384 B, 'b' 16384 B, 'c' 16384 B, 'scratch of matmul' 256 B"]:
            expect(part in message, f"the message must say: {part}", over)
        expect(not (Path(tmp) / "over").exists(), "a failed compile must write no package", over)

        bad = compile_with(aotc, model, Path(tmp) / "bad", "lots")
        expect(bad.returncode != 0 and "--arena-limit: 'lots' is not a byte count" in bad.stderr,
               "a limit that is no byte count must be refused by name", bad)

    for f in failures:
        print("FAILED:", f)
    print("check_arena_limit:", "FAILED" if failures else "passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
