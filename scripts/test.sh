#!/usr/bin/env bash
# The whole test suite: set-up and build, unit and golden tests, fuzzing and sanitizer samples, the ONNX node conformance suite
# end to end (regenerates docs/conformance.md), the 9 light models and the models/ builders' test
# sizes against onnxruntime; bucketed packages at every length; the SIMD targets (AVX2, and AVX-512 where the CPU has it) on the
# ops with SIMD kernels, the light models, the models and the kernel edge cases; then the OpenCL target on PoCL (the CPU as an OpenCL device): the
# node tests of the tier-1 ops, its device kernels and error paths, and the 9 light models; the
# Ascend target on its emulation; the light models' CUDA packages built with nvcc; `aotc tune` on
# this machine.
# Each suite runs even when an earlier one failed; the exit status is non-zero if any failed.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh || exit 1

status=0
# Every failing step is recorded with its line here, and the list is printed at the end, so the
# last lines of a long log (all CI keeps) say what failed.
failures=()
suite_failed() {
  status=1
  failures+=("${current_section%%:*}: line $1: $(sed -n "$1p" "$0" | sed 's/^ *//; s/ *|| suite_failed.*//')")
}
# Each suite's heading carries the time since the script started (set-up and build included), so a
# run's log shows what each suite costs against CI's limit.
section() { current_section="$*"; printf '== [%dm%02ds] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }
section "unit and golden tests"
(cd build && ctest --output-on-failure -j"$(nproc)") || suite_failed $LINENO

section "runtime stub: TensorProto reader on every ONNX test file (ASan/UBSan), packages built via runtime.cmake"
python3 tests/runtime/check_node_tests.py || suite_failed $LINENO
python3 tests/runtime/check_runner_packages.py || suite_failed $LINENO

# Robustness (docs/robustness.md): the compiler's input-reading code (graph/, frontend/, passes/)
# built with ASan/UBSan and coverage (tests/fuzz/build_fuzzers.sh --instrumented: the importer
# harness and aotc_asan); that compiler compiles a sample of node tests and models/ into packages
# that are built and run under ASan/UBSan, and refuses the malformed models; then the libFuzzer
# harnesses of the importer + pipeline and of the runtime stub's TensorProto reader run for 20 s
# each from the node tests' seeds and the kept regressions. Long runs: docs/robustness.md.
section "robustness: the compiler under ASan/UBSan on node tests, models and malformed models; packages under ASan/UBSan; fuzzers (20 s each)"
scripts/sanitizer_sample.sh --compiler || suite_failed $LINENO
tests/fuzz/run_fuzzers.sh 20 || suite_failed $LINENO

section "ONNX node conformance (x86-64)"
python3 tests/conformance/run_node_tests.py --aotc build/aotc --target x86-64 \
  --work build/conformance --report docs/conformance.md || suite_failed $LINENO

section "light models against onnxruntime (x86-64)"
python3 tests/models/run_light_models.py --aotc build/aotc --target x86-64 \
  --work build/light_models || suite_failed $LINENO

# Every models/ builder at its test size against onnxruntime, and each package's kernels through
# aotc verify against the float64 reference and the baselines of tests/verify/baselines/<target>/
# (docs/verify.md); the same on every runnable target below.
section "models/ (every builder; test sizes) against onnxruntime and through aotc verify (x86-64)"
python3 tests/models/run_models.py --aotc build/aotc --target x86-64 --work build/models \
  --verify-baselines tests/verify/baselines || suite_failed $LINENO

# Shape buckets (docs/buckets.md): one package per model with --buckets seq=16,...,512, every
# length 1..512 against onnxruntime at that length on the host target (x86-64-avx512 where the CPU
# has it, else AVX2), a sample of lengths (bucket boundaries) on x86-64 and on OpenCL (PoCL).
section "shape buckets: BERT and Llama prefill, every length 1..512 (host), a sample on x86-64 and OpenCL"
python3 tests/models/check_buckets.py --aotc build/aotc --target host --work build/buckets || suite_failed $LINENO
python3 tests/models/check_buckets.py --aotc build/aotc --target x86-64 --lengths sample \
  --work build/buckets_x86 || suite_failed $LINENO
python3 tests/models/check_buckets.py --aotc build/aotc --target opencl --lengths sample \
  --work build/buckets_opencl || suite_failed $LINENO

# The ops with SIMD kernels (their node tests), six of the light models (other model structures
# through the SIMD kernels and, on AVX-512, NCHWc regions: Inception's branches up to their
# concatenations, SqueezeNet's fire modules, DenseNet, ShuffleNet's channel shuffles; AlexNet,
# VGG-19 and ZFNet, 1.1 GB of weights between them, add nothing the others do not cover), models/
# on 2 threads and the SIMD kernel edge cases on one SIMD target ($1); work folders build/*_$2.
SIMD_LIGHT_MODELS=densenet121,inception_v1,inception_v2,resnet50,shufflenet,squeezenet
simd_suites() {
  python3 tests/conformance/run_node_tests.py --aotc build/aotc --target "$1" \
    --work "build/conformance_$2" --filter 'matmul|gemm|conv' || suite_failed $LINENO
  python3 tests/models/run_light_models.py --aotc build/aotc --target "$1" \
    --models "$SIMD_LIGHT_MODELS" --work "build/light_models_$2" || suite_failed $LINENO
  python3 tests/models/run_models.py --aotc build/aotc --target "$1" --threads 2 \
    --work "build/models_$2" --verify-baselines tests/verify/baselines || suite_failed $LINENO
  python3 tests/simd/check_simd_kernels.py --aotc build/aotc --target "$1" \
    --work "build/simd_kernels_$2" || suite_failed $LINENO
}

section "SIMD target (x86-64-avx2): node tests of the ops with SIMD kernels, light models, models/ on 2 threads, SIMD kernel edge cases"
simd_suites x86-64-avx2 avx2

# The same suites on AVX-512, where the CPU has it (the host target then resolves to
# x86-64-avx512); on a CPU without it they cannot run, and the step says it was skipped.
if build/aotc targets | grep -q "here x86-64-avx512"; then
  section "SIMD target (x86-64-avx512): node tests of the ops with SIMD kernels, light models, models/ on 2 threads, SIMD kernel edge cases"
  simd_suites x86-64-avx512 avx512
else
  section "SIMD target (x86-64-avx512): skipped, this CPU has no AVX-512 (aotc targets: host is not x86-64-avx512)"
fi

# `aotc tune` on this machine (host): a small model's four heaviest kernels tuned and compiled with
# its records, and the SIMD kernel cases compiled with every kernel forced to its first and
# second candidate, all against onnxruntime; the errors of --tuning (docs/tuning.md). Full
# sweep of every candidate: --sweep 3.
section "aotc tune (host): a short tuning, candidate sweeps over the SIMD kernel cases, --tuning errors"
python3 tests/simd/check_tuning.py --aotc build/aotc --target host --work build/tuning_check || suite_failed $LINENO

# OpenCL on PoCL. The node tests are the 436 of the tier-1 ops (tests/conformance/tier1_tests.txt),
# not all 1765: PoCL compiles every distinct kernel when a package first runs, which makes each
# test about a second, and the full suite runs on x86-64 above. They, the device kernel cases and
# the 9 light models go through scripts/device_checks.sh in its two stages, as for a GPU on another
# machine (docs/device-checks.md), so that path is tested here too.
section "OpenCL on PoCL: node tests of the tier-1 ops, device kernels against the reference, light models (device_checks.sh prepare, then run)"
rm -rf build/device_checks_opencl
scripts/device_checks.sh prepare opencl build/device_checks_opencl &&
  scripts/device_checks.sh run opencl build/device_checks_opencl || suite_failed $LINENO

section "OpenCL on PoCL: models/ against onnxruntime and through aotc verify"
python3 tests/models/run_models.py --aotc build/aotc --target opencl --work build/models_opencl \
  --verify-baselines tests/verify/baselines || suite_failed $LINENO

# Pad, Resize and ConvTranspose are not tier-1 ops: a sample of their node tests, one per mode
# (all 56 with --filter '^test_(constant_pad|edge_pad|reflect_pad|wrap_pad|resize|convtranspose)').
section "OpenCL on PoCL: a sample of the Pad, Resize and ConvTranspose node tests"
python3 tests/conformance/run_node_tests.py --aotc build/aotc --target opencl --work build/opencl_layout_ops \
  --filter '^test_((constant|edge|reflect|wrap)_pad|resize_upsample_scales_(nearest|linear|cubic)|resize_tf_crop_and_resize|convtranspose(_pads|_group_2|_3d)?)$' || suite_failed $LINENO

section "OpenCL on PoCL: error paths, emulated tensor cores"
python3 tests/opencl/check_device_errors.py --aotc build/aotc --work build/opencl_errors || suite_failed $LINENO
# The tensor-core GEMM of the CUDA targets, its fragments emulated in OpenCL C (no GPU here).
python3 tests/opencl/check_device_kernels.py --aotc build/aotc --compiler build/aotc_matrix_emulation \
  --target opencl-matrix-emulation --filter '_b?f16' --work build/matrix_emulation || suite_failed $LINENO

# Ascend (ascend-910b) on aotc's host emulation of Ascend C (packages build against it by default;
# its rule tests ran with the unit tests, build/aotc_ascendc_emulation_tests): the package's error
# paths, every models/ builder (with aotc verify and its baselines), and a sample of the node
# tests, one or two per tile planner (every package builds its kernels against the emulation, so
# the full tier-1 list is a separate run: run_node_tests.py --target ascend-910b --tests tests/conformance/tier1_tests.txt).
section "Ascend (ascend-910b) on the Ascend C emulation: package error paths, models/ through aotc verify, a sample of the node tests"
python3 tests/ascendc/check_ascend_package.py --aotc build/aotc --work build/ascend_package_checks || suite_failed $LINENO
# CRNN and Silero VAD: LSTMs unrolled, the sample rate's If if-converted (passes/decompose_for_target.h);
# SqueezeNet, ResNet-50, Inception-v2, MobileNetV2 and YOLO: convolutions on the cube; the two
# quantized models: Q/DQ as arithmetic, integer products as exact f32 chunks, DynamicQuantizeLSTM
# unrolled (tests/ascendc/check_quantized_decompositions.py checks each rewrite).
python3 tests/models/run_models.py --aotc build/aotc --target ascend-910b --work build/models_ascend \
  --verify-baselines tests/verify/baselines || suite_failed $LINENO
python3 tests/conformance/run_node_tests.py --aotc build/aotc --target ascend-910b \
  --tests tests/ascendc/node_tests_sample.txt --work build/conformance_ascend || suite_failed $LINENO
# Pow's constant exponents on the vector unit (integer: products; others: exp(e ln x)), with
# negative and zero bases, on both NPU targets (one small package each).
# The decompose-for-target rewrites (LSTM unrolled with sequence_lens, peepholes, both directions;
# a run-time If taken both ways; Pad reflect, edge, constant; training-mode BatchNormalization)
# against onnxruntime, one package each.
for npu in ascend-910b mlu370; do
  python3 tests/ascendc/check_pow_exponents.py --aotc build/aotc --target $npu --work build/pow_$npu || suite_failed $LINENO
  python3 tests/ascendc/check_decompositions.py --aotc build/aotc --target $npu --work build/decompositions_$npu || suite_failed $LINENO
done

# Cambricon MLU370 (mlu370) on aotc's host emulation of BANG C and CNRT (its rule tests ran with the
# unit tests, build/aotc_bang_emulation_tests): the package's error paths and numeric model, every
# models/ builder (with aotc verify and its baselines) and the node-test sample under IEEE numerics
# (-DAOTC_MLU_NUMERICS=ieee; the MLU370 model's error is measured in docs/bang.md). About 3 minutes.
section "Cambricon MLU370 (mlu370) on the BANG C emulation: package error paths, numerics, models/ through aotc verify, a sample of the node tests"
python3 tests/bang/check_mlu_package.py --aotc build/aotc --work build/mlu_package_checks || suite_failed $LINENO
python3 tests/models/run_models.py --aotc build/aotc --target mlu370 --cmake-define AOTC_MLU_NUMERICS=ieee \
  --work build/models_mlu --verify-baselines tests/verify/baselines --baseline-tag mlu370-ieee || suite_failed $LINENO
python3 tests/conformance/run_node_tests.py --aotc build/aotc --target mlu370 \
  --tests tests/ascendc/node_tests_sample.txt --cmake-define AOTC_MLU_NUMERICS=ieee \
  --work build/conformance_mlu || suite_failed $LINENO

# Precision (docs/precision.md): models/ MLP stored in fp16 on ascend-910b within relative L2 1e-2,
# the quantized BERT and CRNN within it or 1.5x onnxruntime's own error with fp16-rounded activations;
# --accumulate compensated on mlu370: an 8-layer stack under the MLU370 model must close at least
# 95% of its error gap to IEEE (100% measured, 94% with the earlier Kahan sums), and models/ MLP
# compensated must be within relative L2 2e-6 of onnxruntime (3.2e-7 measured; the MLU370 model
# without compensation 3.0e-5, IEEE 4.3e-7). About 2.5 minutes. The full figures: docs/precision.md
# and docs/bang.md (run_light_models.py / run_models.py --precision fp16, measure_numerics.py
# --layers 24 --width 256 --compensated, run_models.py --target mlu370 with and without
# --compile-arg=--accumulate=compensated).
section "Precision: fp16 MLP and quantized models on ascend-910b, compensated sums on mlu370 (8-layer stack, MLP)"
python3 tests/models/run_models.py --aotc build/aotc --target ascend-910b --precision fp16 \
  --models mlp,bert_quantized,crnn_quantized --work build/models_ascend_fp16 || suite_failed $LINENO
python3 tests/bang/measure_numerics.py --aotc build/aotc --work build/mlu_compensated --layers 8 \
  --width 128 --batch 8 --every 8 --compensated --require-closed 95 || suite_failed $LINENO
python3 tests/models/run_models.py --aotc build/aotc --target mlu370 --models mlp --tolerance 2e-6 \
  --compile-arg=--accumulate=compensated --work build/models_mlu_compensated || suite_failed $LINENO

# npu-tiled (docs/npu-tiled.md) on aotc's emulation of the tile API, which checks every tile's DDR
# accesses against its slices of the legalized distributions (its golden tests and the
# emulation's rule tests, build/aotc_tile_emulation_tests, ran with the unit tests): the package's
# error paths (CMX too small, an injected out-of-slice access), every models/ builder on 4 tiles
# (with aotc verify and its baselines), MLP and BERT on 2 and 6 tiles, the node-test sample, and
# a Qwen2-style decoder layer (28 query heads, 4 KV heads):
# legalized and rendered at a sample of prompt lengths in one bucketed compile, and run against
# onnxruntime at three lengths. About 6 minutes; the full sweep is --lengths 1-512 (about 40
# minutes), tier-1 node tests: run_node_tests.py --target npu-tiled --tests
# tests/conformance/tier1_tests.txt.
section "npu-tiled on the tile API emulation: package error paths, models/ through aotc verify on 4 tiles, MLP and BERT on 2 and 6, SqueezeNet on 6 tiles, node-test sample, a Qwen2-style layer swept and run"
python3 tests/tiled/check_tiled_package.py --aotc build/aotc --work build/tiled_package_checks || suite_failed $LINENO
python3 tests/models/run_models.py --aotc build/aotc --target npu-tiled --work build/models_tiled_4 \
  --verify-baselines tests/verify/baselines || suite_failed $LINENO
for tiles in 2 6; do
  python3 tests/models/run_models.py --aotc build/aotc --target npu-tiled --models mlp,bert \
    --compile-arg=--tiles --compile-arg=$tiles --work build/models_tiled_$tiles || suite_failed $LINENO
done
python3 tests/conformance/run_node_tests.py --aotc build/aotc --target npu-tiled \
  --tests tests/ascendc/node_tests_sample.txt --work build/conformance_tiled || suite_failed $LINENO
# One light CNN split over 6 tiles (halo exchanges and DDR round trips between its convolutions):
# SqueezeNet, about 1 minute; all 9 on 2, 4 and 6 tiles in docs/npu-tiled.md.
python3 tests/models/run_light_models.py --aotc build/aotc --target npu-tiled --models squeezenet \
  --compile-arg=--tiles --compile-arg=6 --work build/light_models_tiled_6 || suite_failed $LINENO
python3 tests/tiled/sweep_qwen2_distribution.py --aotc build/aotc --tiles 4 \
  --lengths 1,2,3,7,16,17,64,100,255,333,336,512 --work build/qwen2_sweep || suite_failed $LINENO
python3 tests/tiled/run_qwen2_layer.py --aotc build/aotc --tiles 4 --lengths 1,7,17 \
  --work build/qwen2_run || suite_failed $LINENO

# aotc verify (docs/verify.md): models built to diverge at a known node on x86-64 and mlu370 (fp32
# and fp16), models that must name nothing, an injected uninitialised read caught by
# --poison-arena, --baseline and bad input (~4 minutes); models/ on every runnable target went
# through aotc verify and their baselines in each target's run_models.py above. aotc compare
# (docs/compare.md): a small model on x86-64, both emulated NPUs and cuda-sm80, its page in
# headless Chromium, bad input (~1 minute).
section "aotc verify and compare: divergence at known nodes, --poison-arena, --baseline; compare.html"
python3 tests/verify/check_verify.py build/aotc --work build/verify_checks || suite_failed $LINENO
python3 tests/compare/check_compare.py build/aotc --work build/compare_checks || suite_failed $LINENO

# CUDA: no GPU here, so the light models' packages are compiled by nvcc for sm_90 and not run.
section "CUDA packages built with nvcc (cuda-sm90, tensor-core cases for cuda-sm80; not run): light models, device kernel cases"
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
if command -v nvcc >/dev/null; then
  python3 tests/models/run_light_models.py --aotc build/aotc --target cuda-sm90 --build-only \
    --work build/light_models_cuda || suite_failed $LINENO
  python3 tests/opencl/check_device_kernels.py --aotc build/aotc --target cuda-sm90 --build-only \
    --work build/cuda_kernels || suite_failed $LINENO
  python3 tests/opencl/check_device_kernels.py --aotc build/aotc --target cuda-sm80 --build-only \
    --filter '^(matmul|gemv|conv)_b?f16' --work build/cuda80_kernels || suite_failed $LINENO
else
  echo "FAILED: nvcc not found (install the CUDA toolkit): the CUDA packages cannot be built"
  suite_failed $LINENO
fi

section "done"
if [ $status -eq 0 ]; then
  echo "test.sh: all suites passed"
else
  echo "test.sh: ${#failures[@]} step(s) FAILED (their output is above):"
  printf '  %s\n' "${failures[@]}"
fi
exit $status
