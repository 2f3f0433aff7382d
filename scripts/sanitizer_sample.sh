#!/usr/bin/env bash
# The sanitizer sample (docs/robustness.md): the node tests of tests/fuzz/sanitizer_sample.txt and
# one small model (examples/mnist_cnn.onnx) compiled into packages that are built with
# AddressSanitizer and UndefinedBehaviorSanitizer and run (any report fails). With --compiler the
# compiler doing it is itself the ASan/UBSan build (graph/, frontend/ and passes/ instrumented:
# tests/fuzz/build_fuzzers.sh --instrumented), which then also compiles a sample of models/ (the
# packages checked against onnxruntime by run_models.py) and refuses the malformed models of
# tests/cli/check_malformed_models.py.
set -uo pipefail
cd "$(dirname "$0")/.."
AOTC=build/aotc
if [ "${1:-}" = "--compiler" ]; then
  # -O0: half the compile time of -O1 for the same checks (the suite's budget; docs/robustness.md).
  SANITIZER_OPT=-O0 tests/fuzz/build_fuzzers.sh --instrumented || exit 1
  AOTC=build-fuzz/aotc_asan
fi
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
status=0
python3 tests/conformance/run_node_tests.py --aotc "$AOTC" --target x86-64 --sanitize \
  --tests tests/fuzz/sanitizer_sample.txt --work build/sanitizer_sample --jobs 2 || status=1

work=build/sanitizer_sample_model
rm -rf "$work"
if "$AOTC" compile examples/mnist_cnn.onnx --target x86-64 -o "$work/pkg" >/dev/null &&
   cmake -S "$work/pkg" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS="$SAN" \
     -DCMAKE_CXX_FLAGS="$SAN" -DCMAKE_EXE_LINKER_FLAGS="$SAN" >/dev/null &&
   cmake --build "$work/build" >/dev/null &&
   "$work/build/mnist_cnn_run" --input examples/mnist_cnn_input_0.pb --output-dir "$work/out" \
     --weights "$work/pkg/mnist_cnn.weights" --bench 3 >/dev/null; then
  echo "sanitizer sample: examples/mnist_cnn.onnx built and ran under ASan/UBSan"
else
  echo "FAILED: sanitizer sample: examples/mnist_cnn.onnx under ASan/UBSan"
  status=1
fi
if [ "$AOTC" != build/aotc ]; then
  python3 tests/models/run_models.py --aotc "$AOTC" --target x86-64 --jobs 2 \
    --models mlp,bert,llama,squeezenet,crnn,silero_vad,bert_quantized --work build/sanitizer_models || status=1
  python3 tests/cli/check_malformed_models.py "$AOTC" || status=1
fi
exit $status
