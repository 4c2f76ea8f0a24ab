#!/usr/bin/python3
"""GPT-2 124M, Stepformer (bench_gpt2, already built) beside its PyTorch twin (torch_gpt2.py) on the
same random weights, in alternating rounds (bench_gpt2 on 1 and 2 threads, then the twin on 1, then
on 2 threads, every library held to that count; see pair_report.pinned_env), and the medians: load,
the traced 32-token forward (ms, trace MB), the untraced 32-token forward, KV-cache prefill and
generation tokens/s on 1 and 2 threads, and the ratios. Used by bench/run_gpt2.sh.

  gpt2_report.py BENCH_GPT2 [--rounds 3] [--allow-reference-blas] [--keep DIR] [bench_gpt2 args…]

--keep DIR keeps the JSON results and the exported weights there (else a temporary folder). Other
arguments (--gen, --repeats, --checkpoint) go to bench_gpt2. Refuses (exit 1) when torch is on the
reference BLAS, unless --allow-reference-blas (then the table says so).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

from pair_report import HERE, PY, REFERENCE_WARNING, median, pinned_env, require_openblas, spread


def run_json(cmd, n, path):
    print(f"  {os.path.basename(cmd[1] if cmd[0] == PY else cmd[0])}, {n} …", file=sys.stderr)
    with open(path, "w") as out:
        subprocess.run(cmd, env=pinned_env(n if isinstance(n, int) else 1), stdout=out, check=True)
    return json.load(open(path))


def rounds(a, extra, d):
    """cpp: [bench_gpt2's JSON per round]; torch: {N: [torch_gpt2.py's JSON per round]}."""
    cpp, torch = [], {1: [], 2: []}
    for r in range(a.rounds):
        export = ["--export", d] if r == 0 else []  # θ is seeded: the same weights every round
        cpp.append(run_json([a.binary, "--threads", "1,2", *export, *extra], "threads 1,2", f"{d}/cpp{r}.json"))
        for n in (1, 2):
            torch[n].append(run_json([PY, os.path.join(HERE, "torch_gpt2.py"), "--weights", d, "--threads", str(n),
                                      "--gen", str(cpp[0]["gen"])], n, f"{d}/torch{n}_{r}.json"))
    return cpp, torch


def report(cpp, torch, reference):
    by = {n: [next(x for x in c["by_threads"] if x["threads"] == n) for c in cpp] for n in (1, 2)}
    t1 = torch[1][0]
    print()
    if reference:
        print(f"!!! {REFERENCE_WARNING} !!!")
    print("GPT-2 124M shape (L=12 H=12 d_e=768 d_mlp=3072 N_V=50257, tied, GELU_tanh), random weights, float32")
    print(f"PyTorch {t1['torch']} on {t1['blas']['blas_kind']} ({', '.join(t1['blas']['blas_loaded'])}); "
          f"1024² f32 GEMM: 1 thread {median([t['blas']['gemm1024_gflops'] for t in torch[1]]):.1f}, "
          f"2 threads {median([t['blas']['gemm1024_gflops'] for t in torch[2]]):.1f} GFLOP/s")
    print(f"P[:, 32], Stepformer vs PyTorch: max |Δ| = {max(t['max_abs_diff_p'] for t in torch[1] + torch[2]):.3g}")
    print(f"medians of {len(cpp)} alternating rounds (range in brackets)")
    print()
    print(f"load ({cpp[0]['load_what']}): {median([c['load_ms'] for c in cpp]):.0f} ms   "
          f"(PyTorch builds its tensors from the export: {median([t['load_ms'] for t in torch[1]]):.0f} ms)")
    traced, mb = median([c["traced_ms"] for c in cpp]), median([c["trace_mb"] for c in cpp])
    print(f"traced forward, 32 tokens ({cpp[0]['traced_threads']} threads, θ by reference): {traced:.0f} ms"
          f"{spread([c['traced_ms'] for c in cpp])}, {cpp[0]['trace_events']} events, trace {mb:.1f} MB "
          f"(θ copied: {cpp[0]['trace_mb_copies']:.1f} MB; θ is {cpp[0]['theta_mb']:.0f} MB)")
    print(f"  targets: ≤ 300 ms {'met' if traced <= 300 else 'NOT met'}; ≤ 400 MB {'met' if mb <= 400 else 'NOT met'}")
    print()
    print(f"{'':36}{'Stepformer':>30}{'PyTorch':>30}{'PyTorch time / ours':>22}")
    for key, label, unit in (("untraced_ms", "untraced forward, 32 tok", "ms"),
                             ("kv_prefill_ms", "KV prefill, 32-token prompt", "ms"),
                             ("kv_tokens_per_s", f"KV decode, {cpp[0]['gen']} tokens", "t/s")):
        for n in (1, 2):
            ours, theirs = [x[key] for x in by[n]], [t[key] for t in torch[n]]
            ratio = median(theirs) / median(ours) if unit == "ms" else median(ours) / median(theirs)
            cells = [f"{median(v):.1f} {unit}{spread(v, 1)}" for v in (ours, theirs)]
            print(f"{f'{label}, {n} thr':36}{cells[0]:>30}{cells[1]:>30}{ratio:21.2f}×")
    print()
    same = all(c["same_tokens"] for c in cpp)
    decode2 = median([x["kv_tokens_per_s"] for x in by[2]])
    print(f"Stepformer's generated tokens and p, 1 vs 2 threads: {'bitwise equal' if same else 'DIFFERENT'}")
    print(f"target: KV decode ≥ 30 tokens/s on 2 threads: {'met' if decode2 >= 30 else 'NOT met'} ({decode2:.1f})")
    print("One run on a shared machine: ratios are what to read, and they move between runs.")
    if reference:
        print(f"!!! {REFERENCE_WARNING} !!!")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("binary")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--allow-reference-blas", action="store_true")
    ap.add_argument("--keep")
    a, extra = ap.parse_known_args()
    blas = require_openblas(a.allow_reference_blas, "run_gpt2.sh")
    print(f"{a.rounds} alternating rounds:", file=sys.stderr)
    if a.keep:
        os.makedirs(a.keep, exist_ok=True)
        cpp, torch = rounds(a, extra, a.keep)
    else:
        with tempfile.TemporaryDirectory() as d:
            cpp, torch = rounds(a, extra, d)
    report(cpp, torch, blas["blas_kind"] != "OpenBLAS")


if __name__ == "__main__":
    main()
