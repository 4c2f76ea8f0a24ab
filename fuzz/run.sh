#!/usr/bin/env bash
# Runs each libFuzzer target for SECONDS (default 30), or for RUNS inputs with RUNS=N, on a working copy of
# its seed corpus (fuzz/corpus/<target>/; new inputs go to build-asan/corpus/<target>/, the committed seeds
# stay as they are). The targets come from the one hardening build (scripts/hardening_build.sh, build-asan).
# Fails on any crash, leak, sanitizer report, timeout (> 10 s for one input) or memory limit; a crashing
# input is left in build-asan/artifacts/, the logs in build-asan/fuzz-logs/.
#
# Memory ("no allocation beyond 2× the file size plus the model", docs/hardening.md): each target gets a
# longest input (-max_len) and a largest single allocation (-malloc_limit_mb) of 2 × max_len plus the
# largest model that input can make or open, rounded up to whole MiB; -rss_limit_mb bounds the process.
# Usage: fuzz/run.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-30}
shift || true
ALL=(fuzz_checkpoint fuzz_safetensors fuzz_ecosystem fuzz_hf_config fuzz_tokenizer_gpt2
     fuzz_tokenizer_wordpiece fuzz_tokenizer_json fuzz_session fuzz_npy fuzz_actions fuzz_meta_pkl fuzz_vocab_txt)
TARGETS=("${@:-${ALL[@]}}")

# target → "max_len malloc_limit_mb rss_limit_mb"
limits() {
  case $1 in
    # A checkpoint is its own model: 2 × 64 KiB + 64 KiB < 1 MiB.
    fuzz_checkpoint|fuzz_safetensors|fuzz_npy) echo "65536 1 512" ;;
    # config.json + model.safetensors (≤ 64 KiB together) and the test data's tokenizer files (< 8 KiB).
    fuzz_ecosystem) echo "65536 1 512" ;;
    # Text files of ≤ 16 KiB: no model.
    fuzz_hf_config|fuzz_tokenizer_gpt2|fuzz_tokenizer_wordpiece|fuzz_tokenizer_json|fuzz_session) echo "16384 1 512" ;;
    # meta.pkl (≤ 16 KiB; nanoGPT's character meta.pkl is 0.4–0.6 KiB): no model. Its pickle machine keeps at
    # most one 48-byte object per 2 bytes (≤ 8208 objects, 394 KB; the vector's capacity ≤ 16384 × 48 =
    # 786 KB) and copies out at most the file's bytes: < 1 MiB for the largest single allocation.
    # vocab.txt (≤ 16 KiB, a token list): its lines and the tokenizer's map, < 1 MiB.
    fuzz_meta_pkl|fuzz_vocab_txt) echo "16384 1 512" ;;
    # A script of ≤ 4 KiB on the bundled models: the largest, assets/ed.safetensors, is 2.9 MB (≈ 0.74 M
    # float parameters); 2 × 4 KiB + 2.9 MB < 4 MiB.
    fuzz_actions) echo "4096 4 1024" ;;
    *) echo "unknown fuzz target $1" >&2; return 1 ;;
  esac
}

bash scripts/hardening_build.sh "${TARGETS[@]}"

mkdir -p build-asan/artifacts build-asan/fuzz-logs
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}

# One target: its own corpus copy, limits and log; prints one line and fails on any finding.
run_one() {
  local t=$1 max_len malloc_mb rss_mb budget start runs
  read -r max_len malloc_mb rss_mb < <(limits "$t")
  local work=build-asan/corpus/$t
  mkdir -p "$work"
  if [[ -n ${RUNS:-} ]]; then budget=(-runs="$RUNS"); else budget=(-max_total_time="$SECONDS_EACH"); fi
  start=$(date +%s)
  if ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     "build-asan/fuzz/$t" "${budget[@]}" -max_len="$max_len" -malloc_limit_mb="$malloc_mb" -rss_limit_mb="$rss_mb" \
       -timeout=10 -print_final_stats=1 -artifact_prefix="build-asan/artifacts/$t-" "$work" "fuzz/corpus/$t" \
       >"build-asan/fuzz-logs/$t.log" 2>&1; then
    runs=$(grep -a -o 'stat::number_of_executed_units: *[0-9]*' "build-asan/fuzz-logs/$t.log" | grep -o '[0-9]*$' || echo "?")
    echo "$t: ok, $runs inputs in $(( $(date +%s) - start )) s (max_len $max_len, malloc_limit $malloc_mb MiB)"
  else
    tail -n 60 "build-asan/fuzz-logs/$t.log"
    echo "$t: FAILED after $(( $(date +%s) - start )) s (log: build-asan/fuzz-logs/$t.log)"
    return 1
  fi
}

# One target per core at a time.
status=0
total_start=$(date +%s)
running=0
for t in "${TARGETS[@]}"; do
  run_one "$t" &
  running=$((running + 1))
  if ((running >= JOBS)); then
    wait -n || status=1
    running=$((running - 1))
  fi
done
while ((running > 0)); do
  wait -n || status=1
  running=$((running - 1))
done
echo "fuzz: ${#TARGETS[@]} targets in $(( $(date +%s) - total_start )) s, $JOBS at a time"
exit $status
