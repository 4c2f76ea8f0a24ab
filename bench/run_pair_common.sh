# Sourced by bench/run_forward.sh and bench/run_train.sh: runs one C++ benchmark (already
# built) and its PyTorch twin, one after the other, leaving their JSON results in
# $cpp_json (a file) and $torch_json (a string). Builds nothing.
#
#   run_pair BUILD_DIR BENCH_TARGET TORCH_SCRIPT
py=/usr/bin/python3  # Debian's interpreter: it has torch and numpy

run_pair() {
  local build="$1" target="$2" script="$3" here
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
  local bin="$build/bench/$target"
  if [ ! -x "$bin" ]; then
    echo "$(basename "$0"): $bin not found; build it first: cmake --build $build --target $target" >&2
    exit 1
  fi
  cpp_json="$(mktemp)"
  trap 'rm -f "$cpp_json"' EXIT
  echo "running $bin ..." >&2
  "$bin" --benchmark_out="$cpp_json" --benchmark_out_format=json >&2
  echo "running bench/$script ..." >&2
  torch_json="$("$py" "$here/$script" --json)"
}
