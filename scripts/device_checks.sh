#!/usr/bin/env bash
# Runs the device test suites for a target whose device is on another machine (a CUDA GPU).
#
#   scripts/device_checks.sh prepare TARGET DIR   # here: aotc compiles, references are computed
#   scripts/device_checks.sh run TARGET DIR       # on the device's machine: build, run, compare
#
# `prepare` needs build/aotc, onnx, onnxruntime and numpy; it leaves in DIR the packages, the
# inputs, the expected outputs and a manifest per suite. Copy DIR to the device's machine (it is
# self-contained, paths inside are relative) and call `run` there: it needs cmake, ninja, the
# target's toolchain (nvcc for CUDA), python3 with numpy and onnx, and no aotc.
# Suites: the tier-1 ONNX node tests, the light models (LIGHT_MODELS=a,b,... picks some: the
# large ones carry hundreds of MB of weights) and the device kernel cases.
set -u
cd "$(dirname "$0")/.."
if [ $# -ne 3 ] || { [ "$1" != prepare ] && [ "$1" != run ]; }; then
  echo "usage: $0 prepare|run TARGET DIR" >&2
  exit 2
fi
stage=$1 target=$2 dir=$3
mkdir -p "$dir"
status=0
wrap=${RUNNER_WRAPPER:-}
python3 tests/conformance/run_node_tests.py --stage "$stage" --target "$target" \
  --tests tier1_tests.txt --work "$dir/node" --report "$dir/node_report.md" \
  --runner-wrapper "$wrap" || status=1
python3 tests/models/run_light_models.py --stage "$stage" --target "$target" \
  --work "$dir/light" --runner-wrapper "$wrap" ${LIGHT_MODELS:+--models "$LIGHT_MODELS"} || status=1
python3 tests/opencl/check_device_kernels.py --stage "$stage" --target "$target" \
  --work "$dir/kernels" --runner-wrapper "$wrap" || status=1
exit $status
