#!/usr/bin/env bash
# GPT-2 124M, Stepformer (bench_gpt2, already built) beside its PyTorch twin (torch_gpt2.py) on the
# same random weights, in one run: load, the traced 32-token forward (ms, trace MB), the untraced
# 32-token forward, KV-cache generation tokens/s on 1 and 2 threads, and the ratios. Builds nothing.
#
#   bench/run_gpt2.sh [BUILD_DIR] [--checkpoint PATH]   (default: build; BUILD_DIR/bench/bench_gpt2)
#
# PyTorch runs on OpenBLAS with its threads pinned (OPENBLAS_NUM_THREADS = OMP_NUM_THREADS =
# torch.set_num_threads = N); without libopenblas0-pthread it would run on the reference BLAS.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../build}"
shift || true
py=/usr/bin/python3  # Debian's interpreter: it has torch and numpy
bin="$build/bench/bench_gpt2"
if [ ! -x "$bin" ]; then
  echo "$(basename "$0"): $bin not found; build it first: cmake --build $build --target bench_gpt2" >&2
  exit 1
fi
if ! dpkg-query -W -f='${Status}' libopenblas0-pthread 2>/dev/null | grep -q "ok installed"; then
  echo "$(basename "$0"): WARNING: libopenblas0-pthread is not installed: PyTorch runs on the reference BLAS" \
    "and its figures mean nothing (apt-get install libopenblas0-pthread)" >&2
fi
# GPT2_BENCH_KEEP=DIR keeps the JSON results (and the exported weights) there.
if [ -n "${GPT2_BENCH_KEEP:-}" ]; then
  dir="$GPT2_BENCH_KEEP"
  mkdir -p "$dir"
else
  dir="$(mktemp -d)"
  trap 'rm -rf "$dir"' EXIT
fi
echo "running $bin ..." >&2
OMP_NUM_THREADS=1 "$bin" --threads 1,2 --export "$dir" "$@" >"$dir/cpp.json"
for n in 1 2; do
  echo "running bench/torch_gpt2.py on $n thread(s) ..." >&2
  OPENBLAS_NUM_THREADS=$n OMP_NUM_THREADS=$n MKL_NUM_THREADS=$n \
    "$py" "$here/torch_gpt2.py" --weights "$dir" --threads "$n" >"$dir/torch$n.json"
done

"$py" - "$dir" <<'PY'
import json, re, sys
d = sys.argv[1]
cpp = json.load(open(f"{d}/cpp.json"))
torch = {n: json.load(open(f"{d}/torch{n}.json")) for n in (1, 2)}
by = {r["threads"]: r for r in cpp["by_threads"]}
print()
print("GPT-2 124M shape (L=12 H=12 d_e=768 d_mlp=3072 N_V=50257, tied, GELU_tanh), random weights, float32")
cfg = " ".join(torch[1]["blas_config"])
print(f"PyTorch {torch[1]['torch']}; build: {', '.join(re.findall(r'(?:BLAS|LAPACK)_INFO=[^,]*', cfg)) or '?'}")
print(f"  loaded: {', '.join(torch[1]['blas_loaded']) or 'no BLAS library found in the process'}")
print(f"P[:, 32], Stepformer vs PyTorch: max |Δ| = {torch[1]['max_abs_diff_p']:.3g}")
print()
print(f"load ({cpp['load_what']}): {cpp['load_ms']:.0f} ms   (PyTorch builds its tensors from the export: {torch[1]['load_ms']:.0f} ms)")
print(f"traced forward, 32 tokens ({cpp['traced_threads']} threads, θ by reference): {cpp['traced_ms']:.0f} ms, "
      f"{cpp['trace_events']} events, trace {cpp['trace_mb']:.1f} MB (θ copied: {cpp['trace_mb_copies']:.1f} MB; θ is {cpp['theta_mb']:.0f} MB)")
print(f"  targets: ≤ 300 ms {'met' if cpp['traced_ms'] <= 300 else 'NOT met'}; ≤ 400 MB {'met' if cpp['trace_mb'] <= 400 else 'NOT met'}")
print()
print(f"{'':34}{'Stepformer':>14}{'PyTorch':>14}{'ratio (PyTorch/ours time)':>28}")
for n in (1, 2):
    u, t = by[n]["untraced_ms"], torch[n]["untraced_ms"]
    print(f"{f'untraced forward, 32 tok, {n} thr':34}{u:11.1f} ms{t:11.1f} ms{t / u:28.2f}")
for n in (1, 2):
    u, t = by[n]["kv_prefill_ms"], torch[n]["kv_prefill_ms"]
    print(f"{f'KV prefill, 32-token prompt, {n} thr':34}{u:11.1f} ms{t:11.1f} ms{t / u:28.2f}")
for n in (1, 2):
    u, t = by[n]["kv_tokens_per_s"], torch[n]["kv_tokens_per_s"]
    label = f"KV decode, {cpp['gen']} tokens, {n} thr"
    print(f"{label:34}{u:10.1f} t/s{t:10.1f} t/s{u / t:28.2f}")
print()
print(f"Stepformer's generated tokens and p, 1 vs 2 threads: {'bitwise equal' if cpp['same_tokens'] else 'DIFFERENT'}")
print(f"target: KV decode ≥ 30 tokens/s on 2 threads: {'met' if by[2]['kv_tokens_per_s'] >= 30 else 'NOT met'}")
PY
