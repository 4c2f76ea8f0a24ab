#!/usr/bin/env bash
# Training tokens/s of the reference configuration (d_e=64, L=2, H=4, d_attn=d_mid=16, d_mlp=256,
# ℓ=64, N_V=64, minibatches of 16, Adam), C++ (bench_train) against its PyTorch twin
# (torch_train.py) on 1 and 2 threads, alternating; the fraction of the GEMM ceilings (Eigen's
# BM_Gemm1024 and OpenBLAS's, measured in the same run) and the targets. Builds nothing.
#
#   bench/run_train.sh [BUILD_DIR] [--rounds 3] [--threads 1,2] [--seconds 3] [--allow-reference-blas]
#
# Run scripts/bench_setup.sh first (OpenBLAS for torch, perf, the benchmarks built).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=bench/run_pair_common.sh
source "$here/run_pair_common.sh" "$@"
run_pair bench_train torch_train.py \
  "training (Algorithm 13, practical mode), d_e=64 L=2 H=4 d_attn=d_mid=16 d_mlp=256 ℓ=64 N_V=64, minibatches of 16, Adam, float32" \
  "train step, 16×64 tokens, Adam=BM_TrainStep=train=targets"
