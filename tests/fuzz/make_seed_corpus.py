#!/usr/bin/env python3
"""Seed corpora for the fuzzers from the ONNX node tests of the installed onnx package: every
model.onnx (importer harness) and every input_*.pb / output_*.pb (TensorProto reader harness),
copied under OUT/model and OUT/tensor_proto with content-hashed names (duplicates dropped), plus
the kept regressions (tests/fuzz/regressions/).

  python3 tests/fuzz/make_seed_corpus.py OUT
"""
import hashlib
import os
import sys
from pathlib import Path

import onnx.backend.test

NODE_TESTS = Path(onnx.backend.test.__file__).parent / "data" / "node"
REGRESSIONS = Path(__file__).resolve().parent / "regressions"


def copy(src, folder):
    data = src.read_bytes()
    dst = folder / hashlib.sha1(data).hexdigest()
    if not dst.exists():
        dst.write_bytes(data)


def main():
    out = Path(sys.argv[1])
    models, tensors = out / "model", out / "tensor_proto"
    models.mkdir(parents=True, exist_ok=True)
    tensors.mkdir(parents=True, exist_ok=True)
    for test in sorted(NODE_TESTS.iterdir()):
        if (test / "model.onnx").exists():
            copy(test / "model.onnx", models)
        for pb in sorted(test.glob("test_data_set_*/*.pb")):
            copy(pb, tensors)
    if REGRESSIONS.is_dir():
        for f in sorted(REGRESSIONS.iterdir()):
            if f.suffix != ".md":
                copy(f, tensors if f.name.startswith("tensor_proto") else models)
    print(f"{out}: {len(os.listdir(models))} models, {len(os.listdir(tensors))} tensors")


if __name__ == "__main__":
    main()
