#!/usr/bin/env python3
"""Cross-checks the runtime stub's TensorProto reader against onnx.numpy_helper on every tensor
file of the ONNX backend node tests (several thousand real .pb files).

Builds tests/runtime/tensor_proto_driver.c with the stub under AddressSanitizer and
UndefinedBehaviorSanitizer (each message is decoded from an exact-size heap copy, so a read past
the end is caught), decodes every file whose graph value is a tensor, and compares data type,
dims and the dense element bytes with numpy. String tensors must be refused as unsupported.

Usage: python3 tests/runtime/check_node_tests.py [-v]     (exit status 1 on any mismatch)
"""
import os
import subprocess
import sys
import tempfile

import onnx
from onnx import TensorProto

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_fixtures import NODE, dense_bytes  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
STUB = os.path.join(HERE, "..", "..", "runtime_stub")


def tensor_files():
    """(path, TensorProto) for each node-test file that holds a tensor graph input/output."""
    for test in sorted(os.listdir(NODE)):
        model_path = os.path.join(NODE, test, "model.onnx")
        if not os.path.exists(model_path):
            continue
        graph = onnx.load(model_path, load_external_data=False).graph
        for data_set in sorted(os.listdir(os.path.join(NODE, test))):
            folder = os.path.join(NODE, test, data_set)
            if not data_set.startswith("test_data_set"):
                continue
            for kind, values in (("input", graph.input), ("output", graph.output)):
                for k, value in enumerate(values):
                    path = os.path.join(folder, f"{kind}_{k}.pb")
                    if not os.path.exists(path) or not value.type.HasField("tensor_type"):
                        continue
                    t = TensorProto()
                    with open(path, "rb") as fp:
                        t.ParseFromString(fp.read())
                    yield path, t


def main():
    verbose = "-v" in sys.argv
    with tempfile.TemporaryDirectory() as tmp:
        driver = os.path.join(tmp, "driver")
        subprocess.run(["gcc", "-std=c99", "-O1", "-g", "-Wall", "-Wextra", "-Werror",
                        "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
                        "-I", STUB, os.path.join(HERE, "tensor_proto_driver.c"),
                        os.path.join(STUB, "aotc_tensor_proto.c"), "-o", driver], check=True)
        cases = list(tensor_files())
        lines = "".join(f"{path} {os.path.join(tmp, str(i))}.bin\n"
                        for i, (path, _) in enumerate(cases))
        run = subprocess.run([driver], input=lines, capture_output=True, text=True)
        if run.returncode != 0:
            print(run.stderr)
            sys.exit(f"driver failed with status {run.returncode}")
        results = run.stdout.splitlines()
        assert len(results) == len(cases), (len(results), len(cases))

        failures, refused = 0, 0
        for i, ((path, t), result) in enumerate(zip(cases, results)):
            words = result.split()
            rel = os.path.relpath(path, NODE)
            if t.data_type == TensorProto.STRING:
                ok = words[:2] == ["error", "8"]
                refused += ok
            elif words[0] != "ok":
                ok = False
            else:
                with open(os.path.join(tmp, f"{i}.bin"), "rb") as fp:
                    got = fp.read()
                ok = (int(words[1]) == t.data_type and [int(w) for w in words[3:]] == list(t.dims)
                      and got == dense_bytes(t))
            if not ok:
                failures += 1
                print(f"MISMATCH {rel}: stub says '{result}'")
            elif verbose:
                print(f"ok {rel}")
        print(f"{len(cases)} tensor files: {len(cases) - failures - refused} decoded identically, "
              f"{refused} string tensors refused, {failures} mismatches")
        sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
