#!/bin/sh
# The two models of lesson 10, "Why pre-LN trains more stably" (assets/lessons/10-…): one GPT
# configuration at initialisation (stepformer-cli init, seed 1), once pre-LN (the paper's Algorithm
# 10) and once post-LN (GPT-1, a variant). Eight layers, so that the gradient has a long way back;
# small sizes, so that the checkpoints stay small (about 430 KB each). The lesson's notes quote
# numbers the Gradient flow tab computes for these files and the prompt "hello world=": rerunning
# this script with other settings means checking the notes again (tests/app/test_gui_gradient_flow.cpp
# asserts what they say).
# Usage: scripts/make_ln_lesson_models.sh [path/to/stepformer-cli]   (default: build/stepformer-cli)
set -eu
cli=${1:-build/stepformer-cli}
dir=$(dirname "$0")/../assets/lessons
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for pos in pre post; do
  printf '{"arch": "gpt", "L": 8, "H": 4, "d_e": 32, "d_attn": 8, "d_mid": 8, "d_mlp": 128, "l_max": 64, "norm_position": "%s"}\n' \
    "$pos" > "$tmp/$pos.json"
  "$cli" init --config "$tmp/$pos.json" --seed 1 --out "$dir/$pos-ln-init.safetensors"
done
