#!/usr/bin/env bash
# The encoder-decoder (Algorithm 8), C++ (bench_ed) against its PyTorch twin (torch_ed.py) on 1
# and 2 threads, alternating: training tokens/s (16 pairs, ℓ_z = ℓ_x = 64, Adam) with the
# targets, and Algorithm 15's generation tokens/s (greedy, 4 contexts, re-encoding z every step
# as the paper does, and reuse_encoding) at L_enc = L_dec = 2, d_e=64, H=4, d_attn=d_mid=16,
# d_mlp=256, ℓ_max=64, N_V=64. Builds nothing. The weights are random on both sides (different
# ones), so how many tokens a context gets before eos_token may differ: both count the tokens
# they generated.
#
#   bench/run_ed.sh [BUILD_DIR] [--rounds 3] [--threads 1,2] [--seconds 3] [--allow-reference-blas]
#
# Run scripts/bench_setup.sh first (OpenBLAS for torch, perf, the benchmarks built).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=bench/run_pair_common.sh
source "$here/run_pair_common.sh" "$@"
run_pair bench_ed torch_ed.py \
  "encoder-decoder (Algorithm 8), L_enc=L_dec=2 d_e=64 H=4 d_attn=d_mid=16 d_mlp=256 ℓ=64 N_V=64, float32" \
  "train step, 16×(64+64), Adam=BM_EdTrainStep=train=targets" \
  "generate, re-encoding z (the paper)=BM_EdGenerate/reuse:0=generate" \
  "generate, reuse_encoding=BM_EdGenerate/reuse:1=generate_reuse"
