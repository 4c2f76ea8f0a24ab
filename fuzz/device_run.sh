#!/usr/bin/env bash
# Runs the fuzz targets in parallel, one core each, on a machine away from this build tree (a copy of the
# repository plus the binaries of the hardening build, e.g. the stripped copies that docs/hardening.md's
# "Fuzzing on a many-core machine" describes). Each target runs for SECONDS or 1,000,000 inputs, whichever
# comes first, with fuzz/run.sh's limits (fuzz/limits.sh), on a working copy of its seed corpus.
#
# Usage: fuzz/device_run.sh BIN_DIR SECONDS [TARGET...]     (default: every target found in BIN_DIR)
#   OUT   where the results go (default ./fuzz-out); JOBS targets at a time (default: the cores).
# Into $OUT, few files (a results folder may bring back only a handful):
#   summary.txt       one line a target: status, inputs, seconds, exec/s, the last cov:/ft:, when cov: last
#                     grew (seconds after the start, and the input count), crash artifacts
#   logs.tar.gz       each target's libFuzzer output, every line prefixed by its time in seconds
#   artifacts.tar.gz  the inputs that crashed, leaked, timed out or ran out of memory (only when there are)
#   corpus.tar.gz     the new inputs each target found (when under 16 MiB), to merge into fuzz/corpus later
# Exit status: 0 when no target found anything.
# A stack trace there names functions (strip --strip-debug keeps the symbol table); for file:line, run
# `llvm-symbolizer --obj=build-asan/fuzz/TARGET 0xOFFSET` here with the unstripped binary of the same build.
set -uo pipefail
export LC_ALL=C  # EPOCHREALTIME with a '.'
[[ -n ${EPOCHREALTIME:-} ]] || { echo "fuzz/device_run.sh needs bash 5 (EPOCHREALTIME)" >&2; exit 2; }
REPO=$(cd "$(dirname "$0")/.." && pwd)
BIN_DIR=$(cd "${1:?usage: fuzz/device_run.sh BIN_DIR SECONDS [TARGET...]}" && pwd)
SECONDS_EACH=${2:?usage: fuzz/device_run.sh BIN_DIR SECONDS [TARGET...]}
shift 2
# shellcheck source=fuzz/limits.sh
source "$REPO/fuzz/limits.sh"
OUT=$(mkdir -p "${OUT:-fuzz-out}" && cd "${OUT:-fuzz-out}" && pwd)
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
RUNS_EACH=1000000
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/logs" "$WORK/artifacts" "$WORK/corpus" "$WORK/lines"

TARGETS=()
for t in "${@:-${FUZZ_TARGETS[@]}}"; do
  if [[ -x $BIN_DIR/$t ]]; then TARGETS+=("$t"); else echo "$t: not in $BIN_DIR, skipped" | tee -a "$WORK/skipped"; fi
done

# Where the binaries find what they read: the bundled models (fuzz_actions) and the test data's tokenizer
# files (fuzz_ecosystem) are this copy's, not the build tree's.
export STEPFORMER_DATA_DIR=$REPO STEPFORMER_FUZZ_TEST_DATA=$REPO/tests/data
export ASAN_OPTIONS=$FUZZ_ASAN_OPTIONS UBSAN_OPTIONS=$FUZZ_UBSAN_OPTIONS
# Besides libc, libm, libstdc++ and libgcc_s the binaries need libz and libpcre2-8 (linked in through
# core's dependencies); BIN_DIR/lib may bring copies, used only where the machine lacks a library.
if [[ -d $BIN_DIR/lib ]] && ((${#TARGETS[@]} > 0)) && ldd "$BIN_DIR/${TARGETS[0]}" | grep -q "not found"; then
  export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$BIN_DIR/lib
fi
# LeakSanitizer stops the process's threads with ptrace at exit; some sandboxes (gVisor) refuse, and every
# target would then "fail". One probe: if LSan cannot run there, the run goes on without leak checks and
# the summary says so.
NOTE=""
if ((${#TARGETS[@]} > 0)) && "$BIN_DIR/${TARGETS[0]}" -runs=1 "$REPO/fuzz/corpus/${TARGETS[0]}" 2>&1 |
     grep -q -E "LeakSanitizer has encountered a fatal error|LeakSanitizer does not work under ptrace"; then
  ASAN_OPTIONS=${FUZZ_ASAN_OPTIONS/detect_leaks=1/detect_leaks=0}
  NOTE="# LeakSanitizer cannot run on this machine: no leak checks (ASAN_OPTIONS=$ASAN_OPTIONS)"
  echo "$NOTE"
fi

# Prefixes each line with the seconds since START (bash's clock: no process per line).
stamp() {
  local start=$1 line now
  while IFS= read -r line; do
    now=${EPOCHREALTIME/./}
    printf '%d.%01d %s\n' $(((now - start) / 1000000)) $((((now - start) / 100000) % 10)) "$line"
  done
}

# One target: fuzz, then its line of the summary (into $WORK/lines/TARGET).
run_one() {
  local t=$1 max_len malloc_mb rss_mb start rc
  read -r max_len malloc_mb rss_mb < <(limits "$t")
  mkdir -p "$WORK/corpus/$t"
  start=${EPOCHREALTIME/./}
  "$BIN_DIR/$t" -runs=$RUNS_EACH -max_total_time="$SECONDS_EACH" -max_len="$max_len" -malloc_limit_mb="$malloc_mb" \
    -rss_limit_mb="$rss_mb" -timeout="$FUZZ_TIMEOUT" -print_final_stats=1 -artifact_prefix="$WORK/artifacts/$t-" \
    "$WORK/corpus/$t" "$REPO/fuzz/corpus/$t" 2>&1 | stamp "$start" >"$WORK/logs/$t.log"
  rc=${PIPESTATUS[0]}
  summarize "$t" "$rc" "$(((${EPOCHREALTIME/./} - start) / 1000000))" >"$WORK/lines/$t"
}

# TARGET RC SECONDS → "TARGET STATUS inputs N in S s (E/s) cov: C ft: F, cov last grew at T s (#N), crashes K".
# libFuzzer's progress lines read "#N <event> cov: C ft: F ... exec/s: E ...".
summarize() {
  local t=$1 rc=$2 secs=$3 log=$WORK/logs/$1.log status finding crashes
  crashes=$(find "$WORK/artifacts" -name "$t-*" | wc -l)
  status=ok
  if ((rc != 0)); then
    finding=$(grep -a -m1 -o -E 'ERROR: [A-Za-z]+Sanitizer: [a-z-]+|ERROR: libFuzzer: [a-z-]+|runtime error: .{0,60}' "$log")
    status="FAILED(rc $rc: ${finding:-see log})"
  fi
  awk -v t="$t" -v status="$status" -v secs="$secs" -v crashes="$crashes" '
    /stat::number_of_executed_units:/ { units = $NF }
    $2 ~ /^#[0-9]+$/ {
      n = substr($2, 2)
      for (i = 3; i < NF; i++) {
        if ($i == "cov:") c = $(i + 1)
        if ($i == "ft:") f = $(i + 1)
      }
      if (c != "" && c + 0 > cov + 0) { cov = c; grew_t = $1; grew_n = n }
      ft = f; last = n
    }
    END {
      if (units == "") units = last
      rate = secs > 0 ? int(units / secs) : units
      printf "%-26s %s: %s inputs in %s s (%s/s), cov: %s ft: %s, cov last grew at %s s (#%s), crash artifacts: %d\n",
             t, status, units, secs, rate, cov, ft, grew_t, grew_n, crashes
    }' "$log"
}

echo "fuzz/device_run.sh: ${#TARGETS[@]} targets, ${SECONDS_EACH} s or $RUNS_EACH inputs each, $JOBS at a time, $(date -u)"
status=0
running=0
for t in "${TARGETS[@]}"; do
  run_one "$t" &
  running=$((running + 1))
  if ((running >= JOBS)); then wait -n; running=$((running - 1)); fi
done
wait

{
  echo "# fuzz/device_run.sh $SECONDS_EACH s or $RUNS_EACH inputs a target, $JOBS at a time, $(nproc) cores, $(date -u)"
  [[ -n $NOTE ]] && echo "$NOTE"
  [[ -f $WORK/skipped ]] && cat "$WORK/skipped"
  for t in "${TARGETS[@]}"; do cat "$WORK/lines/$t"; done
} >"$OUT/summary.txt"
cat "$OUT/summary.txt"
grep -q FAILED "$OUT/summary.txt" && status=1

tar -C "$WORK" -czf "$OUT/logs.tar.gz" logs
if [[ -n $(ls -A "$WORK/artifacts") ]]; then tar -C "$WORK" -czf "$OUT/artifacts.tar.gz" artifacts; fi
tar -C "$WORK" -czf "$WORK/corpus.tar.gz" corpus
if (($(stat -c %s "$WORK/corpus.tar.gz") < 16 * 1024 * 1024)); then
  mv "$WORK/corpus.tar.gz" "$OUT/"
else
  echo "corpus.tar.gz over 16 MiB: not kept" | tee -a "$OUT/summary.txt"
fi
exit $status
