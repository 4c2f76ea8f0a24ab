# Sourced by bench/run_forward.sh and bench/run_train.sh: runs one C++ benchmark (already
# built) and its PyTorch twin, one after the other, leaving their JSON results in
# $cpp_json (a file) and $torch_json (a string). Builds nothing.
#
#   run_pair BUILD_DIR BENCH_TARGET TORCH_SCRIPT
py=/usr/bin/python3  # Debian's interpreter: it has torch and numpy
# One thread for every library: OpenMP (torch, Eigen were it parallel), OpenBLAS, MKL.
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1

run_pair() {
  local build="$1" target="$2" script="$3" here
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
  local bin="$build/bench/$target"
  if [ ! -x "$bin" ]; then
    echo "$(basename "$0"): $bin not found; build it first: cmake --build $build --target $target" >&2
    exit 1
  fi
  # Debian's torch is built with BLAS_INFO=generic: it uses whatever libblas.so.3 is, the slow
  # reference BLAS unless OpenBLAS is installed.
  if ! dpkg-query -W -f='${Status}' libopenblas0-pthread 2>/dev/null | grep -q "ok installed"; then
    echo "$(basename "$0"): libopenblas0-pthread is not installed: PyTorch runs on the reference BLAS" \
      "(apt-get install libopenblas0-pthread gives it OpenBLAS)" >&2
  fi
  cpp_json="$(mktemp)"
  trap 'rm -f "$cpp_json"' EXIT
  echo "running $bin ..." >&2
  "$bin" --benchmark_out="$cpp_json" --benchmark_out_format=json >&2
  echo "running bench/$script ..." >&2
  torch_json="$("$py" "$here/$script" --json)"
}
