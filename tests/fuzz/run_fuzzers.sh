#!/usr/bin/env bash
# Runs both libFuzzer harnesses (tests/fuzz/build_fuzzers.sh builds them) for SECONDS each
# (default 60), or for RUNS executions each with --runs RUNS, from the seed corpus (the ONNX node
# tests, tests/fuzz/make_seed_corpus.py) and the corpus earlier runs grew in build-fuzz/corpus_*.
# A crash, a hang (10 s on one input), an allocation over 2 GiB or more than 4 GiB resident is a
# failure: the input is written to build-fuzz/artifacts/; keep it in tests/fuzz/regressions/
# (docs/robustness.md). Exit status non-zero if either harness failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=build-fuzz
limit="-max_total_time=${1:-60}"
[ "${1:-}" = "--runs" ] && limit="-runs=$2"
[ -d "$OUT/seeds" ] || python3 tests/fuzz/make_seed_corpus.py "$OUT/seeds" || exit 1
mkdir -p "$OUT/artifacts" "$OUT/corpus_model" "$OUT/corpus_tensor_proto"
common=(-timeout=10 -rss_limit_mb=4096 -malloc_limit_mb=2048 -dict=tests/fuzz/onnx.dict
        -artifact_prefix="$OUT/artifacts/" -print_final_stats=1 "$limit")
status=0
for h in tensor_proto:fuzz_tensor_proto_reader model:fuzz_model_importer; do
  corpus=${h%%:*}
  harness=${h##*:}
  extra=()
  [ "$corpus" = model ] && extra=(-max_len=262144)
  echo "== $harness ($limit)"
  "$OUT/$harness" "${common[@]}" "${extra[@]}" "$OUT/corpus_$corpus" "$OUT/seeds/$corpus" \
    > "$OUT/$harness.log" 2>&1 || { status=1; tail -40 "$OUT/$harness.log"; }
  grep -E "^stat::number_of_executed_units|^Done" "$OUT/$harness.log" | tr '\n' ' '
  echo
done
exit $status
