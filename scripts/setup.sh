#!/usr/bin/env bash
# Installs what aotc needs on a fresh Debian 12 machine (idempotent) and builds the compiler into
# build/. Used by scripts/demo.sh and scripts/test.sh; safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

DEBIAN_PACKAGES=(g++ cmake ninja-build python3 python3-pip libonnx-dev libprotobuf-dev
                 protobuf-compiler libfmt-dev libcli11-dev libgtest-dev libzstd-dev zstd nlohmann-json3-dev
                 opencl-headers ocl-icd-opencl-dev pocl-opencl-icd
                 clang  # clang: the libFuzzer harnesses (tests/fuzz/)
                 chromium)  # headless, for the verify.html check (tests/verify/check_verify.py)
missing=()
for p in "${DEBIAN_PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Python is only used by the tests (oracles and test data), never by the compiler.
# onnx 1.22.0 is pinned: it is the last release that ships the backend node-test data.
if ! python3 - <<'PY' 2>/dev/null
import onnx, onnxruntime, numpy
assert onnx.__version__ == "1.22.0"
PY
then
  echo "setup: installing Python test dependencies"
  python3 -m pip install -q -r tests/requirements.txt 2>/dev/null ||
    python3 -m pip install -q --break-system-packages -r tests/requirements.txt
fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"
