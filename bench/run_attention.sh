#!/usr/bin/env bash
# Runs the attention benchmark (bench_attention, already built): Algorithm 5 on Eigen with 1
# and 2 threads, and on the GPU with the teaching and the fused compute shaders, for
# ℓ = 64, 256, 1024, 4096 (H = 8, d_attn = 64, causal), then each GPU form's speed-up over Eigen
# on 2 threads and the targets (bench/attention_report.py: fused ≥ 20× at ℓ = 4096, teaching ≥ 2×
# at ℓ ≥ 1024). Builds nothing (scripts/bench_setup.sh does). Extra arguments go to the program
# (--lengths, --max-l, --min-time).
#
#   bench/run_attention.sh [BUILD_DIR] [ARGS…]     (default: build)
#
# Headless: the GL context comes from EGL (a GPU's EGL device when there is one, else Mesa's
# surfaceless platform), so no X server is needed, on a GPU machine either. On Mesa's
# llvmpipe (no GPU) the shaders run on the CPU, slower than Eigen; the GPU rows then stop at
# ℓ = 256 unless --max-l is given. STEPFORMER_EGL_PLATFORM=device|surfaceless picks the
# platform; LIBGL_ALWAYS_SOFTWARE=1 with surfaceless forces llvmpipe on a GPU machine.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="$here/../build"
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then
  build="$1"
  shift
fi
bin="$build/bench/bench_attention"
if [ ! -x "$bin" ]; then
  echo "run_attention.sh: $bin not found; build it first: scripts/bench_setup.sh $build" \
    "(or cmake --build $build --target bench_attention)" >&2
  exit 1
fi
"$bin" "$@" | /usr/bin/python3 "$here/attention_report.py"
