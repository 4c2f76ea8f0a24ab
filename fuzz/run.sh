#!/usr/bin/env bash
# Runs each libFuzzer target for SECONDS (default 30), or for RUNS inputs with RUNS=N, on a working copy of
# its seed corpus (fuzz/corpus/<target>/; new inputs go to build-asan/corpus/<target>/, the committed seeds
# stay as they are). The targets come from the one hardening build (scripts/hardening_build.sh, build-asan).
# Fails on any crash, leak, sanitizer report, timeout (> 10 s for one input) or memory limit; a crashing
# input is left in build-asan/artifacts/, the logs in build-asan/fuzz-logs/.
# The targets and their limits: fuzz/limits.sh (shared with fuzz/device_run.sh).
# Usage: fuzz/run.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-30}
shift || true
# shellcheck source=fuzz/limits.sh
source fuzz/limits.sh
TARGETS=("${@:-${FUZZ_TARGETS[@]}}")

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
  if ASAN_OPTIONS=$FUZZ_ASAN_OPTIONS UBSAN_OPTIONS=$FUZZ_UBSAN_OPTIONS \
     "build-asan/fuzz/$t" "${budget[@]}" -max_len="$max_len" -malloc_limit_mb="$malloc_mb" -rss_limit_mb="$rss_mb" \
       -timeout="$FUZZ_TIMEOUT" -print_final_stats=1 -artifact_prefix="build-asan/artifacts/$t-" "$work" "fuzz/corpus/$t" \
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
