#!/usr/bin/env bash
# Runs the encoder-decoder benchmarks, C++ (bench_ed, already built) and PyTorch (torch_ed.py),
# one after the other, and prints them side by side with the ratios C++ / PyTorch: training
# tokens/s (16 pairs, ℓ_z = ℓ_x = 64, Adam) and Algorithm 15's generation tokens/s (greedy, 4
# contexts, re-encoding z every step as the paper does, and reuse_encoding) at L_enc = L_dec = 2,
# d_e=64, H=4, d_attn=d_mid=16, d_mlp=256, ℓ_max=64, N_V=64, one thread. Builds nothing.
#
#   bench/run_ed.sh [BUILD_DIR]      (default: build; the binary is BUILD_DIR/bench/bench_ed)
#
# "wall" is elapsed time, "CPU" the process's CPU time: on a busy machine they differ, and CPU
# time is the fairer comparison. The weights are random on both sides (different ones), so how
# many tokens a context gets before eos_token may differ: both count the tokens they generated.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=bench/run_pair_common.sh
source "$here/run_pair_common.sh"
run_pair "${1:-$here/../build}" bench_ed torch_ed.py
"$py" "$here/pair_report.py" "$cpp_json" "$torch_json" \
  "encoder-decoder (Algorithm 8), L_enc=L_dec=2 d_e=64 H=4 d_attn=d_mid=16 d_mlp=256 ℓ=64 N_V=64, float32, one thread" \
  "train step, 16×(64+64), Adam=BM_EdTrainStep=train" \
  "generate, re-encoding (paper)=BM_EdGenerate/reuse:0=generate" \
  "generate, reuse_encoding=BM_EdGenerate/reuse:1=generate_reuse"
