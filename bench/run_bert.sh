#!/usr/bin/env bash
# BERT (Algorithm 9), C++ (bench_bert) against its PyTorch twin (torch_bert.py) on 1 and 2
# threads, alternating: the untraced forward pass (16×64 tokens), the traced one (C++ only) and
# masked-LM training (p_mask 0.15, Adam) at d_e=64, L=2, H=4, d_attn=d_mid=16, d_mlp=256,
# d_f=64, ℓ=64, N_V=64, batches of 16, with the targets. Builds nothing.
#
#   bench/run_bert.sh [BUILD_DIR] [--rounds 3] [--threads 1,2] [--seconds 3] [--allow-reference-blas]
#
# Run scripts/bench_setup.sh first (OpenBLAS for torch, perf, the benchmarks built).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=bench/run_pair_common.sh
source "$here/run_pair_common.sh" "$@"
run_pair bench_bert torch_bert.py \
  "BERT (Algorithm 9), d_e=64 L=2 H=4 d_attn=d_mid=16 d_mlp=256 d_f=64 ℓ=64 N_V=64, float32" \
  "forward untraced, 16×64 tokens=BM_BertForwardUntraced=forward=targets" \
  "forward traced, 1×64 tokens=BM_BertForwardTraced=-" \
  "masked-LM train step, 16×64, Adam=BM_BertTrainStep=train=targets"
