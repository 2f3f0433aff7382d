#!/usr/bin/env bash
# The whole test suite: set-up and build, unit and golden tests, the ONNX node conformance suite
# end to end (regenerates docs/conformance.md), the 9 light models and the models/ builders' test
# sizes against onnxruntime.
# Each suite runs even when an earlier one failed; the exit status is non-zero if any failed.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh || exit 1

status=0
echo "== unit and golden tests"
(cd build && ctest --output-on-failure -j"$(nproc)") || status=1

echo "== runtime stub: TensorProto reader on every ONNX test file (ASan/UBSan), packages built via runtime.cmake"
python3 tests/runtime/check_node_tests.py || status=1
python3 tests/runtime/check_runner_packages.py || status=1

echo "== ONNX node conformance (x86-64)"
python3 tests/conformance/run_node_tests.py --aotc build/aotc --target x86-64 \
  --work build/conformance --report docs/conformance.md || status=1

echo "== light models against onnxruntime (x86-64)"
python3 tests/models/run_light_models.py --aotc build/aotc --target x86-64 \
  --work build/light_models || status=1

echo "== models/ (BERT, Llama, ResNet-50, MobileNetV2, MLP; test sizes) against onnxruntime (x86-64)"
python3 tests/models/run_models.py --aotc build/aotc --target x86-64 --work build/models || status=1

echo "== SIMD target (x86-64-avx2): node tests of the ops with SIMD kernels, models/ on 2 threads, SIMD kernel edge cases"
python3 tests/conformance/run_node_tests.py --aotc build/aotc --target x86-64-avx2 \
  --work build/conformance_avx2 --filter 'matmul|gemm|conv' || status=1
python3 tests/models/run_models.py --aotc build/aotc --target x86-64-avx2 --threads 2 \
  --work build/models_avx2 || status=1
python3 tests/simd/check_simd_kernels.py --aotc build/aotc --target x86-64-avx2 \
  --work build/simd_kernels || status=1
[ $status -eq 0 ] && echo "test.sh: all suites passed" || echo "test.sh: FAILURES above"
exit $status
