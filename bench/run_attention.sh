#!/usr/bin/env bash
# Runs the attention benchmark (bench_attention, already built): Algorithm 5 on Eigen with 1
# and 2 threads, and on the GPU with the teaching and the fused compute shaders, for each kind of
# attention (causal, bidirectional, cross-attention with ℓ_z = ℓ_x/2 and 2·ℓ_x, causal with RoPE,
# causal with ALiBi; H = 8, d_attn = 64) at ℓ_x = 64, 256, 1024, 4096; then, per kind × ℓ × GPU
# form, the speed-up over Eigen on 2 threads, whether Ṽ equals core's within the tolerance, and the
# targets (bench/attention_report.py: fused ≥ 20× at ℓ_x = 4096, teaching ≥ 2× at ℓ_x ≥ 1024; "not
# measured here" on a software renderer). Prints the CPU first. Builds nothing
# (scripts/bench_setup.sh does). Extra arguments go to the program (--lengths, --max-l,
# --min-time, --kinds). Exits non-zero when a GPU row is wrong.
#
#   bench/run_attention.sh [BUILD_DIR] [ARGS…]     (default: build)
#   STEPFORMER_EGL_PLATFORM=device bench/run_attention.sh build --max-l 4096   # a machine with a GPU
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
# The CPU that the Eigen rows (and llvmpipe's shaders) ran on.
cpu() {
  local model avx512=no
  model="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
  grep -qw avx512f /proc/cpuinfo && avx512=yes
  echo "CPU: ${model:-unknown}, $(nproc) CPUs, AVX-512: $avx512"
}
{ cpu; "$bin" "$@"; } | /usr/bin/python3 "$here/attention_report.py"
