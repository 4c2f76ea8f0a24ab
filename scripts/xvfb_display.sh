# Sourced by scripts/soak.sh and scripts/soak_heaptrack.sh. start_xvfb WORK SIZE WHO starts an X server of the
# script's own (so that the app's PID is the one whose memory is read), sets XVFB_PID (for the caller's trap)
# and exports DISPLAY; exits with Xvfb's log, under WHO's name, when it did not start.
# shellcheck shell=bash disable=SC2034
start_xvfb() {
  local work=$1 size=$2 who=$3
  exec 3> "$work/display"
  Xvfb -displayfd 3 -screen 0 "${size}x24" -nolisten tcp > "$work/xvfb.log" 2>&1 &
  XVFB_PID=$!
  for _ in $(seq 50); do [[ -s $work/display ]] && break; sleep 0.1; done
  [[ -s $work/display ]] || { echo "$who: Xvfb did not start:" >&2; cat "$work/xvfb.log" >&2; exit 1; }
  DISPLAY=:$(head -n1 "$work/display")
  export DISPLAY
}
