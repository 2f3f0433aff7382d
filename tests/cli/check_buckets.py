#!/usr/bin/env python3
"""`aotc compile --buckets` end to end on small models (run by ctest as CliBuckets).

  - the flag's errors: a symbol no input has, sizes that do not increase or are below 1, a
    malformed list, a symbol given twice, a model whose shapes cannot hold a bucket; a model
    with a convolution along the padded axis is refused naming the node (exit 2), and so is one
    that divides by its length (read with Shape: a bucket would divide by the bucket size);
  - a package with buckets 2, 4, 8 of 'seq' (a Softmax and a mean over the padded axis, so both
    a -inf mask and a rescaled mean run) gives numpy's results at every size 1..8 through the
    runner, which takes inputs of any size and writes outputs at that size; so does a package
    with two bucketed symbols (batch and seq, a schedule per combination);
  - sizes the package cannot run return error statuses and messages naming the symbol and the
    limit: above the largest bucket (the runner, and <name>_run_dims through a C driver, which
    must not touch the buffers), and inputs that disagree about the symbol.

  python3 tests/cli/check_buckets.py path/to/aotc
"""
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(graph, path, opset=18):
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), path)


def pool_model(path):
    """y = Softmax(a + b, axis 0), m = ReduceMean(a, axis 0) for a, b f32[seq, 4]."""
    t = lambda name, dims: helper.make_tensor_value_info(name, TensorProto.FLOAT, dims)  # noqa: E731
    axes = numpy_helper.from_array(np.array([0], np.int64), "axes")
    nodes = [helper.make_node("Add", ["a", "b"], ["s"], name="add"),
             helper.make_node("Softmax", ["s"], ["y"], name="softmax", axis=0),
             helper.make_node("ReduceMean", ["a", "axes"], ["m"], name="mean", keepdims=0)]
    save(helper.make_graph(nodes, "pool", [t("a", ["seq", 4]), t("b", ["seq", 4])],
                           [t("y", ["seq", 4]), t("m", [4])], [axes]), path)


def pair_model(path):
    """Two symbols: y = Softmax(x, axis 1), s = ReduceSum(x, axis 1) for x f32[batch, seq]."""
    t = lambda name, dims: helper.make_tensor_value_info(name, TensorProto.FLOAT, dims)  # noqa: E731
    axes = numpy_helper.from_array(np.array([1], np.int64), "axes")
    nodes = [helper.make_node("Softmax", ["x"], ["y"], name="softmax", axis=1),
             helper.make_node("ReduceSum", ["x", "axes"], ["s"], name="sum", keepdims=0)]
    save(helper.make_graph(nodes, "pair", [t("x", ["batch", "seq"])], [t("y", ["batch", "seq"]), t("s", ["batch"])],
                           [axes]), path)


def fixed_model(path):
    """x f32[seq, 4] + a constant f32[3, 4]: only seq = 3 (or 1) fits."""
    c = numpy_helper.from_array(np.ones((3, 4), np.float32), "c")
    save(helper.make_graph([helper.make_node("Add", ["x", "c"], ["y"], name="add_fixed")], "fixed",
                           [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["seq", 4])],
                           [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["seq", 4])], [c]), path)


def length_model(path):
    """y = x / seq, the length read with Shape and used as a value (a hand-written mean)."""
    zero = numpy_helper.from_array(np.array(0, np.int64), "zero")
    nodes = [helper.make_node("Shape", ["x"], ["shape"], name="shape"),
             helper.make_node("Gather", ["shape", "zero"], ["len"], name="length", axis=0),
             helper.make_node("Cast", ["len"], ["len_f"], name="to_float", to=TensorProto.FLOAT),
             helper.make_node("Div", ["x", "len_f"], ["y"], name="divide")]
    save(helper.make_graph(nodes, "length", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["seq", 4])],
                           [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["seq", 4])], [zero]), path)


def conv_model(path):
    """A 3-tap 1-D convolution along the sequence axis of x f32[1, 2, seq]."""
    w = numpy_helper.from_array(np.ones((2, 2, 3), np.float32), "w")
    save(helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"], name="conv_seq", pads=[1, 1])], "conv",
                           [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, "seq"])],
                           [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, "seq"])], [w]), path)


C_DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pool.h"

/* Sizes above the largest bucket and below 1 return a status without touching the buffers. */
int main(int argc, char** argv) {
  static pool_context ctx;
  void* arena = aligned_alloc(64, (POOL_ARENA_BYTES + 63) / 64 * 64);
  void* weights = aligned_alloc(64, (POOL_WEIGHTS_BYTES + 63) / 64 * 64 + 64);
  if (argc < 2 || aotc_load_weights_file(argv[1], weights, POOL_WEIGHTS_BYTES) != AOTC_OK) return 11;
  if (pool_init(&ctx, arena, weights) != AOTC_OK) return 10;
  float a[8 * 4], b[8 * 4], y[8 * 4], m[4];
  memset(y, 0x7f, sizeof y);
  const void* inputs[2] = {a, b};
  void* outputs[2] = {y, m};
  int64_t too_large[1] = {9}, zero[1] = {0};
  char why[256];
  aotc_status st = pool_run_dims(&ctx, too_large, inputs, outputs);
  aotc_buckets_check(pool_buckets(), too_large, why, sizeof why);
  printf("too large: %d %s\n", st, why);
  if (st != AOTC_ERR_TOO_LARGE) return 1;
  st = pool_run_dims(&ctx, zero, inputs, outputs);
  aotc_buckets_check(pool_buckets(), zero, why, sizeof why);
  printf("zero: %d %s\n", st, why);
  if (st != AOTC_ERR_MISMATCH) return 2;
  for (size_t i = 0; i < sizeof y; ++i)
    if (((unsigned char*)y)[i] != 0x7f) return 3;
  int64_t shape[2];
  int64_t five[1] = {5};
  aotc_buckets_shape(pool_buckets(), 1, 0, five, shape);
  printf("output 0 at seq = 5: %lld x %lld\n", (long long)shape[0], (long long)shape[1]);
  return shape[0] == 5 && shape[1] == 4 ? 0 : 4;
}
"""


def main():
    aotc = sys.argv[1] if len(sys.argv) > 1 else "build/aotc"
    failures = []

    def expect(cond, what, proc=None):
        if not cond:
            detail = f"\n  exit {proc.returncode}, stderr: {proc.stderr.strip()}" if proc is not None else ""
            failures.append(what + detail)

    def compile_with(model, out, *flags):
        return subprocess.run([aotc, "compile", str(model), "--target", "x86-64", "-o", str(out), *flags],
                              capture_output=True, text=True)

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        pool, fixed, conv, length = tmp / "pool.onnx", tmp / "fixed.onnx", tmp / "conv.onnx", tmp / "length.onnx"
        pool_model(pool)
        fixed_model(fixed)
        conv_model(conv)
        length_model(length)

        for flags, code, message in [
            (["--buckets", "len=4,8"], 1,
             "--buckets len=4,8: no graph input has a dimension named 'len' (symbolic dims of the inputs: seq)"),
            (["--buckets", "seq=8,4"], 1, "--buckets seq=8,4: bucket sizes must increase, but 4 follows 8"),
            (["--buckets", "seq=0,4"], 1, "--buckets seq=0,4: bucket sizes must be at least 1, got 0"),
            (["--buckets", "seq=4,,8"], 1, "--buckets 'seq=4,,8': expected SYMBOL=SIZES"),
            (["--buckets", "seq=4", "--buckets", "seq=8"], 1, "--buckets given twice for symbol 'seq'"),
        ]:
            p = compile_with(pool, tmp / "bad", *flags)
            expect(p.returncode == code and message in p.stderr and p.stderr.count("\n") == 1,
                   f"{' '.join(flags)}: expected exit {code} and the one-line message '{message}'", p)
        p = compile_with(fixed, tmp / "bad", "--buckets", "seq=4")
        expect(p.returncode == 1 and "fixed.onnx: --buckets seq=4: at seq = 4 (sizes 1..4): node 'add_fixed'" in p.stderr,
               "a model whose shapes cannot hold the bucket must be refused naming the flag, size and node", p)
        p = compile_with(conv, tmp / "bad", "--buckets", "seq=8")
        expect(p.returncode == 2 and "padding is not safe for bucketing: node 'conv_seq' (Conv) slides a window of 3 taps"
               in p.stderr, "a convolution along the padded axis must be refused (exit 2) naming the node", p)
        p = compile_with(length, tmp / "bad", "--buckets", "seq=2,4")
        expect(p.returncode == 2 and "(read by node 'divide' (Div)) is computed from the length as a value: its "
               "element [] is 1 at seq=1 but 2 at seq=2" in p.stderr,
               "the length used as a value must be refused naming the constant, its reader and the values", p)
        expect(not (tmp / "bad").exists(), "a failed compile must write no package")

        pkg = tmp / "pool_pkg"
        p = compile_with(pool, pkg, "--buckets", "seq=2,4,8", "--name", "pool")
        expect(p.returncode == 0, "the pool model must compile with --buckets seq=2,4,8", p)
        if p.returncode != 0:
            return report(failures)
        subprocess.run(["cmake", "-S", str(pkg), "-B", str(pkg / "build"), "-G", "Ninja",
                        "-DCMAKE_BUILD_TYPE=Release"], check=True, capture_output=True)
        subprocess.run(["ninja", "-C", str(pkg / "build")], check=True, capture_output=True)
        runner = pkg / "build" / "pool_run"
        rng = np.random.default_rng(3)
        for n in range(1, 9):
            a = rng.normal(size=(n, 4)).astype(np.float32)
            b = rng.normal(size=(n, 4)).astype(np.float32)
            files = []
            for name, value in (("a", a), ("b", b)):
                f = tmp / f"{name}{n}.pb"
                f.write_bytes(numpy_helper.from_array(value, name).SerializeToString())
                files += ["--input", str(f)]
            out = tmp / f"out{n}"
            r = subprocess.run([str(runner), *files, "--output-dir", str(out)], capture_output=True, text=True)
            expect(r.returncode == 0, f"the runner must run seq = {n}", r)
            if r.returncode != 0:
                continue
            s = a + b
            e = np.exp(s - s.max(axis=0))
            want = [e / e.sum(axis=0), a.mean(axis=0)]
            for k, w in enumerate(want):
                t = onnx.TensorProto()
                t.ParseFromString((out / f"output_{k}.pb").read_bytes())
                got = numpy_helper.to_array(t)
                expect(got.shape == w.shape and np.allclose(got, w, rtol=1e-5, atol=1e-6),
                       f"seq = {n}: output {k} is {got.shape} {got.ravel()[:4]}, numpy {w.shape} {w.ravel()[:4]}")

        big = tmp / "big.pb"
        big.write_bytes(numpy_helper.from_array(np.zeros((9, 4), np.float32), "a").SerializeToString())
        r = subprocess.run([str(runner), "--input", str(big), "--input", str(big), "--output-dir", str(tmp / "o")],
                           capture_output=True, text=True)
        expect(r.returncode == 1 and "seq = 9 is above the largest bucket 8 that 'pool' was compiled for" in r.stderr,
               "an input above the largest bucket must be refused naming the symbol and the limit", r)
        r = subprocess.run([str(runner), "--input", str(tmp / "a3.pb"), "--input", str(tmp / "b5.pb"),
                            "--output-dir", str(tmp / "o")], capture_output=True, text=True)
        expect(r.returncode == 1 and "input 1 'b' has seq = 5 at axis 0 but input 0 'a' has seq = 3" in r.stderr,
               "inputs that disagree about the symbol must be refused naming both", r)

        # Two symbols, two bucket lists: a schedule per combination, each size picked on its own.
        pair = tmp / "pair.onnx"
        pair_model(pair)
        pkg2 = tmp / "pair_pkg"
        p = compile_with(pair, pkg2, "--buckets", "batch=1,2", "--buckets", "seq=2,4", "--name", "pair")
        expect(p.returncode == 0, "a model with two bucketed symbols must compile", p)
        if p.returncode == 0:
            report_json = (pkg2 / "report.json").read_text()
            expect('"symbols": ["batch", "seq"]' in report_json and report_json.count('"sizes": [') == 4,
                   "report.json must list the two symbols and the 4 schedules")
            subprocess.run(["cmake", "-S", str(pkg2), "-B", str(pkg2 / "build"), "-G", "Ninja",
                            "-DCMAKE_BUILD_TYPE=Release"], check=True, capture_output=True)
            subprocess.run(["ninja", "-C", str(pkg2 / "build")], check=True, capture_output=True)
            for b, n in ((1, 1), (2, 3), (1, 4), (2, 2)):
                x = rng.normal(size=(b, n)).astype(np.float32)
                f = tmp / f"x{b}_{n}.pb"
                f.write_bytes(numpy_helper.from_array(x, "x").SerializeToString())
                out = tmp / f"pair{b}_{n}"
                r = subprocess.run([str(pkg2 / "build" / "pair_run"), "--input", str(f), "--output-dir", str(out)],
                                   capture_output=True, text=True)
                expect(r.returncode == 0, f"the two-symbol package must run batch = {b}, seq = {n}", r)
                if r.returncode != 0:
                    continue
                e = np.exp(x - x.max(axis=1, keepdims=True))
                for k, w in enumerate([e / e.sum(axis=1, keepdims=True), x.sum(axis=1)]):
                    t = onnx.TensorProto()
                    t.ParseFromString((out / f"output_{k}.pb").read_bytes())
                    got = numpy_helper.to_array(t)
                    expect(got.shape == w.shape and np.allclose(got, w, rtol=1e-5, atol=1e-6),
                           f"batch = {b}, seq = {n}: output {k} is {got.shape}, numpy {w.shape}")

        driver = tmp / "driver.c"
        driver.write_text(C_DRIVER)
        lib = pkg / "build" / "libpool.a"
        runtime = next((pkg / "build").rglob("libaotc_runtime.a"))
        c = subprocess.run(["cc", "-std=c11", str(driver), "-I", str(pkg / "include"), "-I", str(pkg / "runtime_stub"),
                            str(lib), str(runtime), "-lstdc++", "-lm", "-o", str(tmp / "driver")],
                           capture_output=True, text=True)
        expect(c.returncode == 0, "the C driver must build against the package", c)
        if c.returncode == 0:
            d = subprocess.run([str(tmp / "driver"), str(pkg / "pool.weights")], capture_output=True, text=True)
            expect(d.returncode == 0 and "seq = 9 is above the largest bucket 8" in d.stdout
                   and "seq = 0: a size must be at least 1" in d.stdout,
                   f"pool_run_dims must return statuses for sizes it cannot run (driver said: {d.stdout.strip()})", d)
    return report(failures)


def report(failures):
    for f in failures:
        print("FAILED:", f)
    print("check_buckets: ok" if not failures else f"check_buckets: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
