#!/usr/bin/python3
"""What every PyTorch twin of bench/ shares: its command line, holding torch and its BLAS to the
thread count being measured, the BLAS torch actually multiplies with (and that BLAS's 1024² f32
GEMM rate, the ceiling a matrix-heavy model can approach), timing, and the JSON report that
bench/pair_report.py reads.

  twin.py's command line, for every torch_*.py:
    --threads N    torch.set_num_threads(N) and OpenBLAS's own threads = N (default 1); run under
                   OMP_NUM_THREADS = OPENBLAS_NUM_THREADS = MKL_NUM_THREADS = N as pair_report.py does
    --seconds S    time each result for S seconds (default 3)
    --json         one JSON object {"torch", "blas", "results"} instead of lines of text
    --blas         only the BLAS report (JSON), no model: what pair_report.py checks first

Debian's torch is built with BLAS_INFO=generic: it calls whatever libblas.so.3 the alternatives
point at, the reference BLAS (about 1.7 GFLOP/s here) unless libopenblas0-pthread is installed.
"""
import argparse
import ctypes
import json
import os
import statistics
import time

import torch

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def options():
    ap = argparse.ArgumentParser(description="a PyTorch twin of a Stepformer benchmark")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--blas", action="store_true")
    return ap.parse_args()


def mapped_blas():
    """The BLAS and LAPACK libraries mapped into this process (after a matrix product), resolved."""
    torch.ones(64, 64) @ torch.ones(64, 64)
    with open("/proc/self/maps") as maps:
        names = {line.split()[-1] for line in maps if len(line.split()) >= 6}
    return sorted({os.path.realpath(n) for n in names
                   if any(k in os.path.basename(n) for k in ("blas", "lapack"))})


def blas_kind(libs):
    """Which BLAS torch's calls to libblas.so.3 reach: the libblas.so.3 the loader resolved."""
    blas3 = [lib for lib in libs if os.path.basename(lib).startswith("libblas.so.3")]
    if not blas3:
        return "unknown (no libblas.so.3 mapped)"
    if "openblas" in blas3[0]:
        return "OpenBLAS"
    if "/blas/" in blas3[0]:
        return "reference BLAS"
    return f"unknown ({blas3[0]})"


def openblas():
    """OpenBLAS's library handle, or None when it is not mapped."""
    for lib in mapped_blas():
        if "openblas" in os.path.basename(lib):
            try:
                return ctypes.CDLL(lib)
            except OSError:
                return None
    return None


def pin_threads(n, seed=1):
    """Holds torch (intra-op n, inter-op 1) and OpenBLAS's own pool (should OPENBLAS_NUM_THREADS be
    unset) to n threads; torch.set_num_threads alone does not stop OpenBLAS starting its own."""
    torch.set_num_threads(n)
    torch.set_num_interop_threads(1)
    lib = openblas()
    if lib is not None and hasattr(lib, "openblas_set_num_threads"):
        lib.openblas_set_num_threads(n)
    torch.manual_seed(seed)


def gemm_gflops(n=1024, repeats=7):
    """A 1024×1024 by 1024×1024 f32 product through torch (its BLAS), median GFLOP/s."""
    a, b = torch.rand(n, n), torch.rand(n, n)
    c = a @ b
    rates = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        torch.mm(a, b, out=c)
        rates.append(2.0 * n ** 3 / (time.perf_counter() - t0) * 1e-9)
    return statistics.median(rates)


def blas_info():
    """The BLAS torch uses and its threads, as the twin runs: build, mapped libraries, kind, thread
    counts, the thread variables, and the GEMM ceiling at this thread count."""
    libs = mapped_blas()
    build = [item.split("=", 1)[1] for item in torch.__config__.show().replace(",", "\n").split()
             if item.startswith("BLAS_INFO=")]
    lib = openblas()
    return {
        "blas_build": build[0] if build else "?",
        "blas_loaded": libs,
        "blas_kind": blas_kind(libs),
        "openblas_threads": lib.openblas_get_num_threads() if lib is not None else None,
        "torch_threads": torch.get_num_threads(),
        "env": {k: os.environ.get(k, "unset") for k in THREAD_VARIABLES},
        "gemm1024_gflops": gemm_gflops(),
    }


def describe(blas):
    """One line for people: which BLAS, its threads, its GEMM rate."""
    return (f"PyTorch {torch.__version__} (BLAS_INFO={blas['blas_build']}) on {blas['blas_kind']}: "
            f"{', '.join(blas['blas_loaded']) or 'no BLAS mapped'}; threads: torch {blas['torch_threads']}, "
            f"OpenBLAS {blas['openblas_threads']}, " + ", ".join(f"{k}={v}" for k, v in blas["env"].items())
            + f"; 1024² f32 GEMM {blas['gemm1024_gflops']:.1f} GFLOP/s")


def measure(call, warmup, unit, seconds, tokens_per_call):
    """Times call() for `seconds` after `warmup` calls; each call processes tokens_per_call tokens.
    Returns ms_per_{unit}_{wall,cpu} and tokens_per_s_{wall,cpu} (CPU time of the whole process)."""
    for _ in range(warmup):
        call()
    iters, wall0, cpu0 = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - wall0 < seconds:
        call()
        iters += 1
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    tokens = iters * tokens_per_call
    return {
        "iterations": iters,
        f"ms_per_{unit}_wall": 1e3 * wall / iters,
        f"ms_per_{unit}_cpu": 1e3 * cpu / iters,
        "tokens_per_s_wall": tokens / wall,
        "tokens_per_s_cpu": tokens / cpu,
    }


def run(opts, results_of):
    """A twin's main: pins the threads, then prints the BLAS report (--blas), or results_of(opts)
    ({name: measure(...)}) with it (--json: one object; else a line each)."""
    pin_threads(opts.threads)
    blas = blas_info()
    if opts.blas:
        print(json.dumps(blas))
        return
    results = results_of(opts)
    if opts.json:
        print(json.dumps({"torch": torch.__version__, "threads": opts.threads, "blas": blas, "results": results}))
        return
    print(describe(blas))
    for name, r in results.items():
        unit = next(k for k in r if k.endswith("_wall") and k.startswith("ms_per_"))
        print(f"{name}, {opts.threads} thread(s): {r[unit]:.2f} ms {unit[3:-5].replace('_', ' ')} (wall), "
              f"{r['tokens_per_s_wall']:,.0f} tokens/s (CPU time: {r['tokens_per_s_cpu']:,.0f} tokens/s)")


if __name__ == "__main__":  # twin.py --blas: the BLAS report alone (pair_report.py's check)
    run(options(), lambda opts: {})
