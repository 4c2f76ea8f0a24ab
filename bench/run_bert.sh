#!/usr/bin/env bash
# Runs the BERT benchmarks, C++ (bench_bert, already built) and PyTorch (torch_bert.py), one
# after the other, and prints them side by side with the ratios C++ / PyTorch: the forward pass
# (untraced tokens/s, traced time per call) and training tokens/s (masked LM, p_mask 0.15, Adam)
# at d_e=64, L=2, H=4, d_attn=d_mid=16, d_mlp=256, d_f=64, ℓ=64, N_V=64, batches of 16, one
# thread. Builds nothing.
#
#   bench/run_bert.sh [BUILD_DIR]      (default: build; the binary is BUILD_DIR/bench/bench_bert)
#
# "wall" is elapsed time, "CPU" the process's CPU time: on a busy machine they differ, and CPU
# time is the fairer comparison.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=bench/run_pair_common.sh
source "$here/run_pair_common.sh"
run_pair "${1:-$here/../build}" bench_bert torch_bert.py
"$py" "$here/pair_report.py" "$cpp_json" "$torch_json" \
  "BERT (Algorithm 9), d_e=64 L=2 H=4 d_attn=d_mid=16 d_mlp=256 d_f=64 ℓ=64 N_V=64, float32, one thread" \
  "forward, 16×64 tokens=BM_BertForwardUntraced=forward" \
  "forward traced, 1×64 tokens=BM_BertForwardTraced=-" \
  "train step, 16×64, Adam=BM_BertTrainStep=train"
