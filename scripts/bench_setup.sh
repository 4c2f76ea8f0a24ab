#!/usr/bin/env bash
# Prepares the benchmarks (bench/run_*.sh): installs from Debian 12 packages, only what is missing,
# OpenBLAS for the PyTorch twins (libopenblas0-pthread: Debian's torch is built with BLAS_INFO=generic
# and calls whatever libblas.so.3 is, the reference BLAS at about 2 GFLOP/s without it) and perf
# (linux-perf, to see where the time goes); checks that libblas.so.3 now resolves to OpenBLAS for
# torch; then builds the benchmark programs into ./build or BUILD_DIR. The rest of the toolchain and
# libraries come from scripts/setup.sh.
#
#   scripts/bench_setup.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"

PACKAGES=(
  libopenblas0-pthread  # OpenBLAS behind libblas.so.3, for torch (the twins' fair anchor)
  linux-perf            # perf record / perf report
  libbenchmark-dev python3-torch python3-numpy cmake g++ make  # the benchmarks and their twins
)
# shellcheck source=scripts/install_missing.sh
source scripts/install_missing.sh
install_missing bench_setup "${PACKAGES[@]}"

# What torch multiplies with, as the twins see it (bench/twin.py --blas).
blas="$(/usr/bin/python3 bench/twin.py --blas)"
kind="$(/usr/bin/python3 -c 'import json, sys; print(json.loads(sys.argv[1])["blas_kind"])' "$blas")"
if [ "$kind" != "OpenBLAS" ]; then
  echo "bench_setup: torch still multiplies with $kind; point libblas.so.3 at OpenBLAS:" >&2
  echo "  sudo update-alternatives --auto libblas.so.3-x86_64-linux-gnu" >&2
  exit 1
fi
echo "bench_setup: torch multiplies with OpenBLAS"

JOBS=$(nproc 2>/dev/null || echo 2)
targets=(bench_forward bench_train bench_bert bench_ed bench_gpt2 bench_backprop bench_flash_attention
         bench_random_feature_attention)
mkdir -p "$build"
log="$build/bench_setup.log"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DSTEPFORMER_BENCH=ON > "$log" 2>&1 \
  || { cat "$log"; exit 1; }
# bench_attention exists when the GPU library is configured (STEPFORMER_GPU, the default).
if [[ "$(cmake --build "$build" --target help)" == *bench_attention* ]]; then targets+=(bench_attention); fi
cmake --build "$build" -j"$JOBS" --target "${targets[@]}" >> "$log" 2>&1 \
  || { tail -n 60 "$log"; echo "bench_setup: build failed (full log: $log)"; exit 1; }
echo "bench_setup: built ${targets[*]} in $build/bench (log: $log); now bench/run_train.sh $build (and the other bench/run_*.sh)"
