#!/usr/bin/env bash
# Builds the libFuzzer targets with clang into build-fuzz and runs each for SECONDS (default 30) on a copy
# of its seed corpus (fuzz/corpus/<target>/). Fails on any crash, leak, sanitizer report, timeout (> 10 s
# for one input) or out-of-memory (> 2048 MB). A crashing input is left in build-fuzz/artifacts/.
# Usage: fuzz/run.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-30}
shift || true
ALL=(fuzz_checkpoint fuzz_safetensors fuzz_ecosystem fuzz_hf_config fuzz_tokenizer_gpt2
     fuzz_tokenizer_wordpiece fuzz_tokenizer_json fuzz_session fuzz_npy)
TARGETS=("${@:-${ALL[@]}}")
CXX=${CXX:-$(command -v clang++ || command -v clang++-14)}
CC=${CC:-$(command -v clang || command -v clang-14)}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}

cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Hardening -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
  -DSTEPFORMER_FUZZ=ON -DSTEPFORMER_TESTS=OFF >/dev/null
cmake --build build-fuzz -j"$JOBS" --target "${TARGETS[@]}"

mkdir -p build-fuzz/artifacts build-fuzz/logs
status=0
for t in "${TARGETS[@]}"; do
  work=build-fuzz/corpus/$t
  mkdir -p "$work"
  # New inputs go to the working copy; the committed seeds stay as they are.
  start=$(date +%s)
  if ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     "build-fuzz/fuzz/$t" -max_total_time="$SECONDS_EACH" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
       -artifact_prefix="build-fuzz/artifacts/$t-" "$work" "fuzz/corpus/$t" >"build-fuzz/logs/$t.log" 2>&1; then
    result=ok
  else
    result=FAILED
    status=1
    tail -n 60 "build-fuzz/logs/$t.log"
  fi
  runs=$(grep -a -o 'stat::number_of_executed_units: *[0-9]*' "build-fuzz/logs/$t.log" | grep -o '[0-9]*$' || echo "?")
  echo "$t: $result, $runs inputs in $(( $(date +%s) - start )) s"
done
exit $status
