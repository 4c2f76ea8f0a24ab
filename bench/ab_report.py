#!/usr/bin/python3
"""Two builds of one C++ benchmark program, A (baseline) and B (candidate), in alternating rounds
(A, B, A, B, …) on one thread (OMP_NUM_THREADS = OPENBLAS_NUM_THREADS = 1), with BM_Gemm1024 in each
run: the median GFLOP/s (or 1/s where a benchmark counts no FLOPs) of every benchmark the filter
names, its range over the rounds, and its fraction of the ceiling, the higher of the two builds'
median BM_Gemm1024 (with STEPFORMER_BLAS=ON that benchmark is OpenBLAS's sgemm). On a shared
machine only the two builds' ratio in the same rounds means something.

  ab_report.py BIN_A BIN_B FILTER [ROUNDS=3]

FILTER is a Google Benchmark regex of full names, e.g. 'BM_TrainStep/threads:1.*'.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

UNIT_S = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def run(binary, pattern, env):
    """{benchmark name: GFLOP/s (or 1/s)} of one run of binary."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run([binary, f"--benchmark_filter=^(BM_Gemm1024.*|{pattern})$", f"--benchmark_out={out.name}",
                        "--benchmark_out_format=json"], env=env, check=True, capture_output=True)
        rates = {}
        for b in json.load(open(out.name))["benchmarks"]:
            if b["name"].startswith("BM_Gemm1024"):
                rates["BM_Gemm1024"] = b["GFLOP/s"]
                continue
            wall = b["real_time"] * UNIT_S[b["time_unit"]]
            flops = next((v for k, v in b.items() if k.startswith("FLOP/")), None)
            rates[b["name"]] = flops / wall * 1e-9 if flops else 1.0 / wall
        return rates


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    bins, pattern = {"A": sys.argv[1], "B": sys.argv[2]}, sys.argv[3]
    rounds = int(sys.argv[4]) if len(sys.argv) == 5 else 3
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    samples = {}  # (build, name): [rate per round]
    for _ in range(rounds):
        for tag, binary in bins.items():
            for name, rate in run(binary, pattern, env).items():
                samples.setdefault((tag, name), []).append(rate)
    ceiling = max(statistics.median(samples[(t, "BM_Gemm1024")]) for t in bins)
    print(f"ceiling: {ceiling:.1f} GFLOP/s (the higher median BM_Gemm1024; A = {bins['A']}, B = {bins['B']})")
    for (tag, name), xs in sorted(samples.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        m = statistics.median(xs)
        print(f"{tag} {name:48s} {m:8.2f} ({min(xs):.2f}–{max(xs):.2f}) = {m / ceiling:.1%} of the ceiling")


if __name__ == "__main__":
    main()
