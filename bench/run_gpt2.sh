#!/usr/bin/env bash
# GPT-2 124M, Stepformer (bench_gpt2, already built) beside its PyTorch twin (torch_gpt2.py) on the
# same random weights, in alternating rounds: load, the traced 32-token forward (ms, trace MB), the
# untraced 32-token forward, KV-cache generation tokens/s on 1 and 2 threads, the medians and the
# ratios (bench/gpt2_report.py). Builds nothing.
#
#   bench/run_gpt2.sh [BUILD_DIR] [--rounds 3] [--allow-reference-blas] [--keep DIR]
#                     [--checkpoint PATH] [--gen 64] [--repeats 5]      (default BUILD_DIR: build)
#
# Run scripts/bench_setup.sh first (OpenBLAS for torch, perf, the benchmarks built). PyTorch runs with
# its threads pinned (OMP/OPENBLAS/MKL_NUM_THREADS = torch.set_num_threads = OpenBLAS's pool = N); the
# script refuses to compare when torch is on the reference BLAS, unless --allow-reference-blas.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="$here/../build"
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then
  build="$1"
  shift
fi
bin="$build/bench/bench_gpt2"
if [ ! -x "$bin" ]; then
  echo "$(basename "$0"): $bin not found; build it first: scripts/bench_setup.sh $build" \
    "(or cmake --build $build --target bench_gpt2)" >&2
  exit 1
fi
exec /usr/bin/python3 "$here/gpt2_report.py" "$bin" "$@"
