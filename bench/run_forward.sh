#!/usr/bin/env bash
# Algorithm 10's forward pass, P ← DTransformer(x | θ), C++ (bench_forward) against its PyTorch
# twin (torch_forward.py) on 1 and 2 threads, alternating: untraced tokens/s (16×64 tokens per
# call) with the targets, and the traced 64-token pass (C++ only). Builds nothing.
#
#   bench/run_forward.sh [BUILD_DIR] [--rounds 3] [--threads 1,2] [--seconds 3] [--allow-reference-blas]
#
# Run scripts/bench_setup.sh first (OpenBLAS for torch, perf, the benchmarks built).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=bench/run_pair_common.sh
source "$here/run_pair_common.sh" "$@"
run_pair bench_forward torch_forward.py \
  "forward pass (Algorithm 10), d_e=64 L=2 H=4 d_attn=d_mid=16 d_mlp=256 ℓ=64 N_V=64, float32" \
  "forward untraced, 16×64 tokens=BM_ForwardUntraced=forward=targets" \
  "forward traced, 1×64 tokens=BM_ForwardTraced=-"
