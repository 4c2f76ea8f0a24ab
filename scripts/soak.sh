#!/usr/bin/env bash
# Soak test of the app (docs/soak.md): runs stepformer under Xvfb with the monkey
# (--monkey SEED:forever:K) for MINUTES, samples its resident memory (VmRSS of /proc/PID/status)
# at every minute of wall clock into a CSV (minute,rss_kib,settled_kib,heap_kib), then stops it with SIGTERM and prints the
# monkey's summary and the growth after the first five minutes, (last − @5min) / @5min, against
# the 5% target. settled_kib is the monkey's RSS when, right after each sample, SIGUSR1 sends it
# back to its start state (STEPFORMER_MONKEY_SETTLE, app/monkey.hpp): the target is judged on it,
# since raw RSS swings by hundreds of MiB with what happens to be open; heap_kib is what malloc has
# handed out then (growth there is memory kept; RSS growth without it is fragmentation).
#
#   scripts/soak.sh [MINUTES=60] [SEED=1]
#   env: APP (default build/app/stepformer), OUT (folder for soak.csv and app.log; default
#        build/soak), PER_FRAME (monkey actions a frame, default 1), SIZE (default 1280x800)
# Exit: 0 no crash and settled growth < 5%; 1 the app crashed or did not run; 2 growth ≥ 5%.
set -euo pipefail
MINUTES=${1:-60}
SEED=${2:-1}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
APP=$(realpath "${APP:-$ROOT/build/app/stepformer}")
OUT=$(mkdir -p "${OUT:-$ROOT/build/soak}" && realpath "${OUT:-$ROOT/build/soak}")
PER_FRAME=${PER_FRAME:-1}
SIZE=${SIZE:-1280x800}
[[ -x $APP ]] || { echo "soak: no app at $APP (build the stepformer target, or set APP)" >&2; exit 1; }

# The app's files (sessions and exports the monkey writes, settings) go to a scratch folder.
WORK=$(mktemp -d /tmp/stepformer-soak.XXXXXX)
CSV=$OUT/soak.csv
LOG=$OUT/app.log
XVFB_PID='' APP_PID=''
cleanup() {
  [[ -n $APP_PID ]] && kill "$APP_PID" 2>/dev/null || true
  [[ -n $XVFB_PID ]] && kill "$XVFB_PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# shellcheck source=scripts/xvfb_display.sh
source "$ROOT/scripts/xvfb_display.sh"
start_xvfb "$WORK" "$SIZE" soak

echo "soak: $APP --monkey $SEED:forever:$PER_FRAME for $MINUTES min on display $DISPLAY; CSV $CSV"
(cd "$WORK" && HOME=$WORK XDG_CONFIG_HOME=$WORK STEPFORMER_MONKEY_SETTLE=$WORK/start.stepformer exec "$APP" --no-ini --size "$SIZE" \
  --monkey "$SEED:forever:$PER_FRAME") > "$LOG" 2>&1 &
APP_PID=$!

rss() { awk '/^VmRSS:/ {print $2}' "/proc/$APP_PID/status" 2>/dev/null; }
# Sends SIGUSR1 and waits (up to two minutes: a long trace is awaited) for the next settled line.
settled() {
  local before
  before=$(grep -c '^monkey: settled' "$LOG" || true)
  kill -USR1 "$APP_PID" 2>/dev/null || return 0
  for _ in $(seq 240); do
    (($(grep -c '^monkey: settled' "$LOG" || true) > before)) && break
    kill -0 "$APP_PID" 2>/dev/null || return 0
    sleep 0.5
  done
  grep '^monkey: settled' "$LOG" | tail -n1 | sed -E 's/.*VmRSS ([0-9]+) KiB, heap in use ([0-9]+) KiB.*/\1,\2/'
}
echo "minute,rss_kib,settled_kib,heap_kib" > "$CSV"
crashed=0
START=$SECONDS
for m in $(seq 0 "$MINUTES"); do
  if ((m > 0)); then
    # Sleep to minute m of the run's wall clock (the settling above is part of the minute, so that
    # MINUTES samples take MINUTES minutes), in short naps, so that a crash is noticed at once.
    end=$((START + 60 * m))
    while ((SECONDS < end)) && kill -0 "$APP_PID" 2>/dev/null; do sleep 1; done
  fi
  r=$(rss)
  if [[ -z $r ]]; then crashed=1; break; fi
  ((m == 0)) && sleep 5  # the start state is saved on the first frame
  s=$(settled)
  if [[ -z $s ]]; then crashed=1; break; fi
  echo "$m,$r,$s" >> "$CSV"
  echo "soak: minute $m: VmRSS $r KiB, settled (VmRSS, heap in use) $s KiB"
done

status=0
if ((crashed == 0)); then
  kill -TERM "$APP_PID"
fi
wait "$APP_PID" || status=$?
APP_PID=''
cat "$LOG" | grep '^monkey:' || true
if ((crashed || status != 0)); then
  echo "soak: FAIL: the app ended with status $status before the $MINUTES minutes were up or on SIGTERM" >&2
  tail -n 20 "$LOG" >&2
  exit 1
fi

# Growth after the first five minutes (or after minute 0 when the run is shorter), of the settled
# RSS (the target) and of the raw samples; the raw floor (least RSS of the last ten samples
# against the least of the ten from minute 5) is printed too (docs/soak.md).
awk -F, -v minutes="$MINUTES" 'NR > 1 { rss[$1] = $2; settled[$1] = $3; heap[$1] = $4; last = $1 }
  function least(from, to,   m, i) { m = -1; for (i = from; i <= to; ++i) if (i in rss && (m < 0 || rss[i] < m)) m = rss[i]; return m }
  END {
    base = minutes >= 5 ? 5 : 0
    g = (settled[last] - settled[base]) / settled[base] * 100
    printf "soak: settled RSS %d KiB at minute %d, %d KiB at minute %d: growth %+.2f%% (target < 5%%)\n", settled[base], base, settled[last], last, g
    printf "soak: settled heap in use %d KiB at minute %d, %d KiB at minute %d: %+.2f%%\n", heap[base], base, heap[last], last, (heap[last] - heap[base]) / heap[base] * 100
    printf "soak: raw RSS %d KiB at minute %d, %d KiB at minute %d: %+.2f%%\n", rss[base], base, rss[last], last, (rss[last] - rss[base]) / rss[base] * 100
    a = least(base, base + 9); b = least(last - 9, last)
    printf "soak: raw floor (least RSS) %d KiB in minutes %d-%d, %d KiB in minutes %d-%d: %+.2f%%\n", a, base, base + 9, b, last - 9, last, (b - a) / a * 100
    exit g >= 5 ? 2 : 0
  }' "$CSV"
