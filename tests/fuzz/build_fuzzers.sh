#!/usr/bin/env bash
# Builds the libFuzzer harnesses (clang 14) into build-fuzz/ (docs/robustness.md):
#   fuzz_tensor_proto_reader  runtime_stub/aotc_tensor_proto.c, with ASan and UBSan
#   fuzz_model_importer       the importer and the pass pipeline. By default only the harness is
#                             instrumented and the compiler comes from build/libaotc_core.a (gcc,
#                             `cmake --build build --target aotc_core` first): a minute to build, it
#                             finds crashes, hangs, bad_alloc and internal errors but no silent
#                             overflow and no coverage inside the compiler. With --instrumented,
#                             graph/, frontend/ and passes/ are compiled with coverage, ASan and
#                             UBSan too (about 90 files: 20-30 minutes on 2 cores, ccache helps):
#                             the build for long runs.
#   aotc_asan                 with --instrumented, also the aotc CLI on those objects (the
#                             sanitizer sample of scripts/sanitizer_sample.sh)
# JOBS=N sets the parallel compiles (default 2). SANITIZER_OPT sets the optimisation of the
# instrumented code (default -O1, the speed long fuzz runs want; scripts/test.sh builds with -O0,
# which compiles in about half the time: what a short suite run wants).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=build-fuzz
INSTRUMENTED=0
[ "${1:-}" = "--instrumented" ] && INSTRUMENTED=1
mkdir -p "$OUT/obj"
CCACHE=$(command -v ccache || true)
SAN="-g ${SANITIZER_OPT:--O1} -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined"
DEFS="-DAOTC_VERSION=\"0.1.0\" -DFMT_SHARED -DONNX_ML=1 -DONNX_NAMESPACE=onnx -I."
LIBS="-lonnx_proto -lprotobuf -lfmt -lzstd -lpthread"
[ -f build/libaotc_core.a ] || { echo "build_fuzzers.sh: build/libaotc_core.a missing: cmake --build build --target aotc_core"; exit 1; }

clang $SAN -fsanitize=fuzzer -Iruntime_stub tests/fuzz/fuzz_tensor_proto_reader.c \
  runtime_stub/aotc_tensor_proto.c -o "$OUT/fuzz_tensor_proto_reader"

HARNESS_FLAGS="$SAN -fsanitize=fuzzer-no-link -std=c++20 $DEFS"
$CCACHE clang++ $HARNESS_FLAGS -c tests/fuzz/fuzz_model_importer.cpp -o "$OUT/obj/fuzz_model_importer.o"
objects=()
if [ $INSTRUMENTED = 1 ]; then
  # Objects listed before the archive win: the archive supplies only what they do not define
  # (codegen/, targets/, the embedded files).
  mapfile -t sources < <(ls graph/*.cpp graph/ops/*.cpp frontend/*.cpp frontend/converters/*.cpp passes/*.cpp)
  printf '%s\n' "${sources[@]}" | xargs -P "${JOBS:-2}" -I{} sh -c \
    'o="$0/obj/$(echo {} | tr / _).o"; '"$CCACHE"' clang++ '"$HARNESS_FLAGS"' -c {} -o "$o"' "$OUT"
  for s in "${sources[@]}"; do objects+=("$OUT/obj/$(echo "$s" | tr / _).o"); done
  ls tools/*.cpp | xargs -P "${JOBS:-2}" -I{} sh -c \
    'o="$0/obj/$(echo {} | tr / _).o"; '"$CCACHE"' clang++ '"$SAN -std=c++20 $DEFS"' -c {} -o "$o"' "$OUT"
  tools=()
  for s in tools/*.cpp; do tools+=("$OUT/obj/$(echo "$s" | tr / _).o"); done
  clang++ $SAN "${tools[@]}" "${objects[@]}" build/libaotc_core.a $LIBS -o "$OUT/aotc_asan"
fi
clang++ $SAN -fsanitize=fuzzer "$OUT/obj/fuzz_model_importer.o" "${objects[@]}" build/libaotc_core.a $LIBS \
  -o "$OUT/fuzz_model_importer"
echo "build_fuzzers.sh: built $OUT/fuzz_tensor_proto_reader and $OUT/fuzz_model_importer$([ $INSTRUMENTED = 1 ] && echo ' (instrumented) and aotc_asan')"
