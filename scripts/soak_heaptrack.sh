#!/usr/bin/env bash
# What the settled state holds (docs/soak.md, session 21): runs the app's monkey under heaptrack for
# MINUTES, settles it (SIGUSR1, as scripts/soak.sh does), lets it stop itself right after its settled line
# (STEPFORMER_MONKEY_STOP_SETTLED) and kills it, so that heaptrack's "leaked" is exactly what the settled
# state holds. Two runs of one seed, a short and a long one, compared with scripts/heap_diff.py, show what
# the app kept in between.
#
#   scripts/soak_heaptrack.sh MINUTES SEED OUT      (MINUTES ≥ 1; then: scripts/heap_diff.py OUT_SHORT OUT_LONG)
#   env: APP (default build/app/stepformer), SIZE (default 1280x800)
set -euo pipefail
MINUTES=$1 SEED=$2
ROOT=$(cd "$(dirname "$0")/.." && pwd)
APP=$(realpath "${APP:-$ROOT/build/app/stepformer}")
SIZE=${SIZE:-1280x800}
command -v heaptrack > /dev/null || { echo "soak_heaptrack: needs heaptrack (apt-get install heaptrack)" >&2; exit 1; }
OUT=$(mkdir -p "$3" && realpath "$3")
WORK=$(mktemp -d /tmp/stepformer-heap.XXXXXX)
XVFB_PID=''
trap '[[ -n $XVFB_PID ]] && kill $XVFB_PID 2>/dev/null; rm -rf "$WORK"' EXIT
# shellcheck source=scripts/xvfb_display.sh
source "$ROOT/scripts/xvfb_display.sh"
start_xvfb "$WORK" "$SIZE" soak_heaptrack
LOG=$OUT/app.log
(cd "$WORK" && HOME=$WORK XDG_CONFIG_HOME=$WORK STEPFORMER_MONKEY_SETTLE=$WORK/start.stepformer STEPFORMER_MONKEY_STOP_SETTLED=1 \
  exec heaptrack -o "$OUT/heaptrack" "$APP" --no-ini --size "$SIZE" --monkey "$SEED:forever:1") > "$LOG" 2>&1 &
HEAPTRACK_PID=$!
# The app itself is heaptrack's child: the process running $APP with this run's HOME.
APP_PID=''
for _ in $(seq 100); do
  for p in $(pgrep -f "^$APP .*--monkey $SEED:forever" || true); do
    grep -qz "^HOME=$WORK$" "/proc/$p/environ" 2> /dev/null && APP_PID=$p
  done
  [[ -n $APP_PID ]] && break
  sleep 0.2
done
[[ -n $APP_PID ]] || { echo "soak_heaptrack: the app did not start: $(cat "$LOG")" >&2; exit 1; }
sleep $((MINUTES * 60))
kill -USR1 "$APP_PID"
for _ in $(seq 600); do grep -q '^State:.*T' "/proc/$APP_PID/status" 2> /dev/null && break; sleep 0.2; done
grep '^monkey: settled' "$LOG" || { echo "soak_heaptrack: no settled line: $(tail -5 "$LOG")" >&2; exit 1; }
kill -9 "$APP_PID"
wait "$HEAPTRACK_PID" || true
heaptrack_print -f "$OUT"/heaptrack.*zst -p 0 -a 0 -T 0 --flamegraph-cost-type leaked -F "$OUT/held.stacks" > /dev/null
echo "soak_heaptrack: what the settled state holds, by allocation stack: $OUT/held.stacks"
