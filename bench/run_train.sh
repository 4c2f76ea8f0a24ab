#!/usr/bin/env bash
# Runs the training benchmarks, C++ (bench_train, already built) and PyTorch (torch_train.py),
# one after the other, and prints them side by side: training tokens/s of the reference
# configuration (d_e=64, L=2, H=4, d_attn=d_mid=16, d_mlp=256, ℓ=64, N_V=64, minibatches of 16,
# Adam), one thread; the ratio; the FLOPs of a step and the fraction of the machine's
# matrix-multiply ceiling (an Eigen 1024×1024 f32 GEMM, measured in the same run). Builds nothing.
#
#   bench/run_train.sh [BUILD_DIR]      (default: build; the binary is BUILD_DIR/bench/bench_train)
#
# "wall" is elapsed time, "CPU" the process's CPU time: on a busy machine they differ, and CPU
# time is the fairer comparison (the target, ≥ 10× PyTorch, is judged on it).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=bench/run_pair_common.sh
source "$here/run_pair_common.sh"
run_pair "${1:-$here/../build}" bench_train torch_train.py

"$py" - "$cpp_json" "$torch_json" <<'PY'
import json, sys
cpp = {b["name"].split("/")[0]: b for b in json.load(open(sys.argv[1]))["benchmarks"]}
torch = json.loads(sys.argv[2])
unit = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
def ms(b, key):
    return b[key] * unit[b.get("time_unit", "ns")]
step, gemm = cpp["BM_TrainStep"], cpp["BM_Gemm1024"]
tokens = 16 * 64
flops = step["FLOP/step"]
cpp_wall, cpp_cpu = tokens / ms(step, "real_time") * 1e3, tokens / ms(step, "cpu_time") * 1e3
ceiling_cpu = 2 * 1024**3 / ms(gemm, "cpu_time") * 1e-6    # GFLOP/s
ceiling_wall = 2 * 1024**3 / ms(gemm, "real_time") * 1e-6
achieved_cpu = flops / ms(step, "cpu_time") * 1e-6
achieved_wall = flops / ms(step, "real_time") * 1e-6
print()
print("training, d_e=64 L=2 H=4 d_attn=d_mid=16 d_mlp=256 ℓ=64 N_V=64, minibatches of 16, Adam, float32, one thread")
print(f"{'':30}{'C++ (core, Eigen)':34}{'PyTorch ' + torch['torch']:30}C++ / PyTorch")
print(f"{'step, wall':30}{ms(step, 'real_time'):8.2f} ms  {cpp_wall:10,.0f} tok/s     "
      f"{torch['ms_per_step_wall']:8.2f} ms  {torch['tokens_per_s_wall']:10,.0f} tok/s   {cpp_wall / torch['tokens_per_s_wall']:6.1f}×")
print(f"{'step, CPU':30}{ms(step, 'cpu_time'):8.2f} ms  {cpp_cpu:10,.0f} tok/s     "
      f"{torch['ms_per_step_cpu']:8.2f} ms  {torch['tokens_per_s_cpu']:10,.0f} tok/s   {cpp_cpu / torch['tokens_per_s_cpu']:6.1f}×")
print(f"FLOPs of a step (matrix products): {flops / 1e6:,.1f} M")
print(f"Eigen 1024×1024 f32 GEMM ceiling: {ceiling_cpu:,.1f} GFLOP/s (CPU time), {ceiling_wall:,.1f} (wall)")
print(f"C++ step achieves {achieved_cpu:,.1f} GFLOP/s (CPU time) = {achieved_cpu / ceiling_cpu:.0%} of the ceiling; "
      f"wall: {achieved_wall:,.1f} = {achieved_wall / ceiling_wall:.0%}")
ratio = cpp_cpu / torch["tokens_per_s_cpu"]
print(f"target: ≥ 10× PyTorch's tokens/s (CPU time): {'met' if ratio >= 10 else 'NOT met'} ({ratio:.1f}×)")
PY
