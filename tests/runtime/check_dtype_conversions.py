#!/usr/bin/env python3
"""Checks runtime_stub/aotc_dtypes.h bit for bit against the ONNX reference conversions.

The oracle is what the ONNX Cast reference implementation (onnx/reference/ops/op_cast.py) and
the ONNX test data use: onnx.numpy_helper.saturate_cast (saturate=1), ml_dtypes' astype
(saturate=0, float4e2m1, int4/int2) and onnx.numpy_helper.to_float8e8m0 (float8e8m0, every
saturate and round_mode). Inputs: every float16 value, every float8/float4 value and the
midpoints between neighbours (with the float32 and float64 values just around them), powers of
two across the whole float range, specials, and a few hundred thousand random float32 and
float64 bit patterns. Decoding is checked for all 256 (or 16) codes of every type.

Float-to-4/2-bit-integer conversion is compared where the ONNX spec defines it (finite values
inside the int32 range; outside it, ml_dtypes' own result is platform behaviour).

Usage: python3 tests/runtime/check_dtype_conversions.py     (needs gcc; exit status 1 on a mismatch)
"""
import os
import subprocess
import sys
import tempfile
import warnings

import ml_dtypes as md
import numpy as np
from onnx.numpy_helper import saturate_cast, to_float8e8m0

HERE = os.path.dirname(os.path.abspath(__file__))
STUB = os.path.join(HERE, "..", "..", "runtime_stub")
F8 = [md.float8_e4m3fn, md.float8_e4m3fnuz, md.float8_e5m2, md.float8_e5m2fnuz]
MODES = ["up", "down", "nearest"]  # AOTC_E8M0_ROUND_UP, _DOWN, _NEAREST


def inputs():
    parts = [np.arange(1 << 16, dtype=np.uint16).view(np.float16).astype(np.float64)]
    for t in F8 + [md.float4_e2m1fn, md.float8_e8m0fnu]:
        values = np.arange(256 if t != md.float4_e2m1fn else 16, dtype=np.uint8).view(t)
        v = np.sort(values.astype(np.float64)[np.isfinite(values.astype(np.float64))])
        mids = (v[1:] + v[:-1]) / 2
        for x in (v, mids):
            parts.append(x)
            for dt in (np.float32, np.float64):
                y = x.astype(dt)
                parts += [np.nextafter(y, dt(np.inf)).astype(np.float64),
                          np.nextafter(y, dt(-np.inf)).astype(np.float64)]
    powers = 2.0 ** np.arange(-160, 140, dtype=np.float64)
    parts += [powers, powers * 1.5, powers * 1.25, powers * 1.75, powers * 1.0625]
    parts.append(np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e300, -1e300, 5e-324]))
    rng = np.random.default_rng(1)
    parts.append(rng.integers(0, 1 << 32, 300000, dtype=np.uint64).astype(np.uint32)
                 .view(np.float32).astype(np.float64))
    doubles = rng.integers(0, 1 << 63, 200000, dtype=np.uint64)
    # Keep the exponents where the formats live (2^-160 .. 2^140) so few are trivially 0 or inf.
    doubles = (doubles & np.uint64(0x800FFFFFFFFFFFFF)) | (
        rng.integers(1023 - 160, 1023 + 140, doubles.size, dtype=np.uint64) << np.uint64(52))
    parts.append(doubles.view(np.float64))
    parts.append(-np.concatenate(parts))
    return np.concatenate(parts)


def expected_encodings(x):
    cols = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for saturate in (True, False):
            for t in F8:
                y = saturate_cast(x, t) if saturate else x.astype(t)
                cols.append(y.view(np.uint8))
            for mode in MODES:
                cols.append(to_float8e8m0(x, saturate, mode).view(np.uint8))
        cols.append(x.astype(md.float4_e2m1fn).view(np.uint8))
        cols.append(x.astype(md.int4).view(np.uint8))
        cols.append(x.astype(md.int2).view(np.uint8))
    return np.stack(cols, axis=1)


NAMES = ([f"{t.__name__} saturate=1" for t in F8] + [f"e8m0 saturate=1 {m}" for m in MODES] +
         [f"{t.__name__} saturate=0" for t in F8] + [f"e8m0 saturate=0 {m}" for m in MODES] +
         ["float4_e2m1fn", "int4 (low bits)", "int2 (low bits)"])


def check_decode(driver, tmp):
    out = os.path.join(tmp, "decoded.bin")
    subprocess.run([driver, "decode", out], check=True)
    raw = np.fromfile(out, dtype=np.uint8)
    floats = raw[: 256 * 24].view(np.float32).reshape(256, 6)
    ints = raw[256 * 24:].view(np.int32).reshape(16, 4)
    failures = 0
    codes = np.arange(256, dtype=np.uint8)
    for k, t in enumerate(F8 + [md.float8_e8m0fnu, md.float4_e2m1fn]):
        c = codes & 15 if t == md.float4_e2m1fn else codes
        want = c.view(t).astype(np.float32)
        got = floats[:, k]
        same = (got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))
        for i in np.flatnonzero(~same)[:5]:
            print(f"DECODE MISMATCH {t.__name__} code 0x{i:02x}: got {got[i]}, want {want[i]}")
        failures += int((~same).sum())
    c16 = np.arange(16, dtype=np.uint8)
    for k, (t, c) in enumerate([(md.int4, c16), (md.uint4, c16), (md.int2, c16 & 3),
                                (md.uint2, c16 & 3)]):
        want = c.view(t).astype(np.int32)
        bad = np.flatnonzero(ints[:, k] != want)
        for i in bad[:5]:
            print(f"DECODE MISMATCH {t.__name__} code {i}: got {ints[i, k]}, want {want[i]}")
        failures += bad.size
    return failures


def main():
    with tempfile.TemporaryDirectory() as tmp:
        driver = os.path.join(tmp, "driver")
        subprocess.run(["gcc", "-std=c99", "-O1", "-Wall", "-Wextra", "-Werror",
                        "-fsanitize=undefined", "-fno-sanitize-recover=all", "-I", STUB,
                        os.path.join(HERE, "dtype_conversion_driver.c"), "-o", driver],
                       check=True)
        with np.errstate(invalid="ignore"):
            x = inputs()
        x.astype("<f8").tofile(os.path.join(tmp, "in.bin"))
        subprocess.run([driver, "encode", os.path.join(tmp, "in.bin"),
                        os.path.join(tmp, "out.bin")], check=True)
        got = np.fromfile(os.path.join(tmp, "out.bin"), dtype=np.uint8).reshape(x.size, -1)
        want = expected_encodings(x)
        assert got.shape == want.shape, (got.shape, want.shape)
        defined = np.isfinite(x) & (np.abs(x) < 2.0 ** 31 - 1)
        mismatch = got != want
        mismatch[~defined, -2:] = False
        failures = 0
        for k, name in enumerate(NAMES):
            bad = np.flatnonzero(mismatch[:, k])
            for i in bad[:5]:
                print(f"ENCODE MISMATCH {name}: x = {x[i]!r} ({x[i].hex()}): "
                      f"got 0x{got[i, k]:02x}, want 0x{want[i, k]:02x}")
            failures += bad.size
        failures += check_decode(driver, tmp)
        print(f"{x.size} inputs x {len(NAMES)} encodings and all codes decoded: "
              f"{failures} mismatches")
        sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
