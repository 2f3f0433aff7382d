#!/usr/bin/env python3
"""Writes the TensorProto fixtures that tests/unit/runtime_stub_test.cpp decodes.

For each case: fixtures/<case>.pb (a serialized TensorProto), fixtures/<case>.bin (its elements as
the dense little-endian bytes the runtime stub must produce, computed here with numpy, i.e.
independently of the C code) and a line "<case> <onnx dtype> <dim>..." in fixtures/manifest.txt.

Two kinds of cases: real files from the ONNX backend node tests (all use raw_data), and tensors
built with onnx.helper.make_tensor(raw=False), which exercise the typed repeated fields
(float_data, int32_data, int64_data, double_data, uint64_data) and their per-dtype rules.

Run from anywhere: python3 tests/runtime/make_fixtures.py
"""
import os
import shutil

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fixtures")
NODE = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node")

# Small real conformance files, one per dtype family the runner meets most.
REAL = {
    "node_float": "test_abs/test_data_set_0/input_0.pb",
    "node_int64": "test_affine_grid_2d/test_data_set_0/input_1.pb",
    "node_bool": "test_and2d/test_data_set_0/input_0.pb",
    "node_float16": "test_attention_4d_gqa_with_past_and_present_fp16/test_data_set_0/input_3.pb",
    "node_double": "test_ai_onnx_ml_tree_ensemble_single_tree/test_data_set_0/input_0.pb",
    "node_bfloat16": "test_cast_BFLOAT16_to_FLOAT/test_data_set_0/input_0.pb",
    "node_int4": "test_cast_FLOAT16_to_INT4/test_data_set_0/output_0.pb",
    "node_uint64": "test_bitshift_left_uint64/test_data_set_0/input_0.pb",
    "node_int16_typed": "test_quantizelinear_blocked_symmetric/test_data_set_0/output_0.pb",
}


SUB_BYTE = (TensorProto.INT4, TensorProto.UINT4, TensorProto.FLOAT4E2M1, TensorProto.INT2,
            TensorProto.UINT2)


def dense_bytes(t):
    """The stub's expected output for a TensorProto, computed with numpy_helper: the elements in
    memory layout, where 4- and 2-bit types take one byte each holding their code in the low bits
    (ml_dtypes' own layout, so the array's bytes are exactly that)."""
    arr = numpy_helper.to_array(t)
    if t.data_type in SUB_BYTE:
        assert arr.dtype.itemsize == 1, arr.dtype
        return (arr.view(np.uint8) & ((1 << (4 if t.data_type < 25 else 2)) - 1)).tobytes()
    return arr.astype(arr.dtype.newbyteorder("<")).tobytes()


def typed_cases():
    """TensorProtos whose payload lives in the typed fields, not raw_data."""
    f = np.array([[1.5, -2.25, 3.0], [0.0, -0.0, 1e-8]], dtype=np.float32)
    h = np.array([1.0, -65504.0, 6e-8, 0.333], dtype=np.float16)
    yield "typed_float", helper.make_tensor("f", TensorProto.FLOAT, f.shape, f.ravel())
    yield "typed_double", helper.make_tensor("d", TensorProto.DOUBLE, [3], [1.0 / 3, -1e300, 2.0])
    yield "typed_int64", helper.make_tensor("i", TensorProto.INT64, [4], [0, -1, 2**62, -(2**63)])
    yield "typed_int32", helper.make_tensor("i32", TensorProto.INT32, [3],
                                            [-(2**31), 7, 2**31 - 1])
    yield "typed_int8", helper.make_tensor("i8", TensorProto.INT8, [4], [-128, -1, 0, 127])
    yield "typed_int16", helper.make_tensor("i16", TensorProto.INT16, [2], [-32768, 32767])
    yield "typed_uint8", helper.make_tensor("u8", TensorProto.UINT8, [3], [0, 128, 255])
    yield "typed_uint16", helper.make_tensor("u16", TensorProto.UINT16, [2], [1, 65535])
    yield "typed_bool", helper.make_tensor("b", TensorProto.BOOL, [2, 2], [True, False, False, True])
    yield "typed_float16", helper.make_tensor("h", TensorProto.FLOAT16, [4], h)
    yield "typed_bfloat16", helper.make_tensor("bf", TensorProto.BFLOAT16, [2], [1.0, -3.5])
    yield "typed_uint32", helper.make_tensor("u32", TensorProto.UINT32, [2], [0, 2**32 - 1])
    yield "typed_uint64", helper.make_tensor("u64", TensorProto.UINT64, [2], [1, 2**64 - 1])
    yield "typed_int4", helper.make_tensor("i4", TensorProto.INT4, [5], [-8, 7, 0, -1, 3])
    yield "typed_uint2", helper.make_tensor("u2", TensorProto.UINT2, [2, 3], [0, 1, 2, 3, 3, 1])
    yield "typed_float8e5m2", helper.make_tensor("f8", TensorProto.FLOAT8E5M2, [3],
                                                 [1.0, -57344.0, 0.0001])
    yield "typed_complex64", helper.make_tensor("c", TensorProto.COMPLEX64, [2], [1 + 2j, -3 - 4j])
    yield "typed_scalar", helper.make_tensor("s", TensorProto.FLOAT, [], [42.0])
    yield "typed_empty", helper.make_tensor("e", TensorProto.FLOAT, [2, 0], [])


def from_array_cases():
    """What the reference serializer writes for runner outputs; the stub's writer must match
    these byte for byte (the test re-encodes each case and compares)."""
    yield "fromarray_float", numpy_helper.from_array(
        (np.arange(6, dtype=np.float32) / 6).reshape(2, 3), name="y")
    yield "fromarray_int64", numpy_helper.from_array(
        np.array([300, -5], dtype=np.int64), name="idx")
    yield "fromarray_bool_scalar", numpy_helper.from_array(np.array(True), name="flag")
    yield "fromarray_empty", numpy_helper.from_array(np.zeros((0, 3), dtype=np.float16), name="e")
    # Packed on the wire (the last byte half or three-quarters full), one per byte in memory.
    yield "fromarray_int4", numpy_helper.from_array(
        np.array([-8, 7, 0, -1, 3], dtype=ml_dtypes.int4), name="q")
    yield "fromarray_uint2", numpy_helper.from_array(
        np.array([[3, 0, 1], [2, 2, 1], [0, 3, 3]], dtype=ml_dtypes.uint2), name="u")
    yield "fromarray_float8e4m3fn", numpy_helper.from_array(
        np.array([448, -0.0, np.nan, 0.0625], dtype=ml_dtypes.float8_e4m3fn), name="f8")


def main():
    os.makedirs(OUT, exist_ok=True)
    lines = []
    cases = []
    for name, rel in REAL.items():
        t = TensorProto()
        with open(os.path.join(NODE, rel), "rb") as fp:
            t.ParseFromString(fp.read())
        shutil.copyfile(os.path.join(NODE, rel), os.path.join(OUT, name + ".pb"))
        cases.append((name, t))
    for name, t in typed_cases():
        assert not t.HasField("raw_data"), name
        with open(os.path.join(OUT, name + ".pb"), "wb") as fp:
            fp.write(t.SerializeToString())
        cases.append((name, t))
    for name, t in from_array_cases():
        with open(os.path.join(OUT, name + ".pb"), "wb") as fp:
            fp.write(t.SerializeToString())
        cases.append((name, t))
    for name, t in cases:
        with open(os.path.join(OUT, name + ".bin"), "wb") as fp:
            fp.write(dense_bytes(t))
        lines.append(" ".join([name, str(t.data_type)] + [str(d) for d in t.dims]))
    with open(os.path.join(OUT, "manifest.txt"), "w") as fp:
        fp.write("# generated by tests/runtime/make_fixtures.py: <case> <onnx dtype> <dims...>\n")
        fp.write("\n".join(lines) + "\n")
    print(f"wrote {len(cases)} cases to {OUT}")


if __name__ == "__main__":
    main()
