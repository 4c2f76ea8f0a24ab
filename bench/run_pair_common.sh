# shellcheck shell=bash
# Sourced by bench/run_forward.sh, run_train.sh, run_bert.sh and run_ed.sh with their arguments:
#
#   bench/run_X.sh [BUILD_DIR] [--rounds 3] [--threads 1,2] [--seconds 3] [--allow-reference-blas]
#
# BUILD_DIR (default: build) holds the benchmark, already built: scripts/bench_setup.sh builds
# them and installs what the comparison needs (OpenBLAS for torch, perf). The other arguments go to
# bench/pair_report.py, which alternates C++ and PyTorch runs on 1 and 2 threads, every library
# held to that count, and prints medians, ratios, scaling, the GEMM ceilings and the targets. It
# refuses to compare when torch is on the reference BLAS, unless --allow-reference-blas.
py=/usr/bin/python3  # Debian's interpreter: it has torch and numpy
build="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build"
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then
  build="$1"
  shift
fi
pair_args=("$@")

# run_pair TARGET TWIN TITLE ROW...: pair_report.py on BUILD_DIR/bench/TARGET and bench/TWIN.
run_pair() {
  local target="$1" twin="$2" here
  shift 2
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
  local bin="$build/bench/$target"
  if [ ! -x "$bin" ]; then
    echo "$(basename "$0"): $bin not found; build it first: scripts/bench_setup.sh $build" \
      "(or cmake --build $build --target $target)" >&2
    exit 1
  fi
  "$py" "$here/pair_report.py" "$bin" "$here/$twin" "$@" "${pair_args[@]}"
}
