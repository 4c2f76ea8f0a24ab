#!/usr/bin/env bash
# Runs the forward-pass benchmarks, C++ (bench_forward, already built) and PyTorch
# (torch_forward.py), one after the other, and prints them side by side. Builds nothing.
#
#   bench/run_forward.sh [BUILD_DIR]      (default: build; the binary is BUILD_DIR/bench/bench_forward)
#
# Both are single-threaded. "wall" is elapsed time, "CPU" the process's CPU time: on a busy
# machine they differ, and CPU time is the fairer comparison.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=bench/run_pair_common.sh
source "$here/run_pair_common.sh"
run_pair "${1:-$here/../build}" bench_forward torch_forward.py

"$py" - "$cpp_json" "$torch_json" <<'PY'
import json, sys
cpp = {b["name"].split("/")[0]: b for b in json.load(open(sys.argv[1]))["benchmarks"]}
torch = json.loads(sys.argv[2])
unit = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
def ms(b, key):
    return b[key] * unit[b.get("time_unit", "ns")]
u, t = cpp["BM_ForwardUntraced"], cpp["BM_ForwardTraced"]
tokens = 16 * 64
rows = [
    ("untraced, 16×64 tokens, wall", f"{ms(u, 'real_time'):8.2f} ms  {tokens / ms(u, 'real_time') * 1e3:10,.0f} tok/s",
     f"{torch['ms_per_iteration_wall']:8.2f} ms  {torch['tokens_per_s_wall']:10,.0f} tok/s"),
    ("untraced, 16×64 tokens, CPU", f"{ms(u, 'cpu_time'):8.2f} ms  {tokens / ms(u, 'cpu_time') * 1e3:10,.0f} tok/s",
     f"{torch['ms_per_iteration_cpu']:8.2f} ms  {torch['tokens_per_s_cpu']:10,.0f} tok/s"),
    ("traced, 1×64 tokens, wall", f"{ms(t, 'real_time'):8.2f} ms  {t['events']:10,.0f} events", "—"),
    ("traced, 1×64 tokens, CPU", f"{ms(t, 'cpu_time'):8.2f} ms  {t['events']:10,.0f} events", "—"),
]
print()
print("forward pass, d_e=64 L=2 H=4 d_attn=d_mid=16 d_mlp=256 ℓ=64 N_V=64, float32, one thread")
print(f"{'':32}{'C++ (core, Eigen)':34}PyTorch {torch['torch']}")
for name, a, b in rows:
    print(f"{name:32}{a:34}{b}")
ok_u = tokens / ms(u, "cpu_time") * 1e3 >= 100_000
ok_t = ms(t, "cpu_time") <= 2.0
print(f"targets: untraced ≥ 100,000 tok/s: {'met' if ok_u else 'NOT met'} (CPU time); "
      f"traced ≤ 2 ms: {'met' if ok_t else 'NOT met'} (CPU time)")
PY
