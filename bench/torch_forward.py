#!/usr/bin/python3
"""The forward pass of bench/bench_forward.cpp's model in PyTorch, for comparison.

A straightforward GPT (pre-LN, as the paper's Algorithm 10) with the same shapes: d_e=64,
L=2, H=4, d_attn=d_mid=16, d_mlp=256, l_max=64, N_V=64, learned positions, exact (erf) GELU,
LayerNorm eps=1e-5, causal mask with -inf, P = softmax over the vocabulary. float32, one
thread, no grad, a batch of 16 sequences of 64 tokens per call. The weights are random (the
timing does not depend on them). Prints tokens/s by wall-clock and by CPU time.

Run with Debian's interpreter (it has torch 1.13): /usr/bin/python3 bench/torch_forward.py [--json]
"""
import ctypes
import json
import math
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

D_E, L, H, D_ATTN, D_MID, D_MLP, L_MAX, N_V = 64, 2, 4, 16, 16, 256, 64, 64
BATCH, LENGTH = 16, 64


class MHAttention(nn.Module):
    """Algorithm 5 in PyTorch's row layout: every head's q, k, v from x (queries) and z (keys,
    values), softmax(q k^T / sqrt(d_attn)) with `mask` (True = masked out, -inf; None: Mask = 1),
    then W_o. Shared by the GPT, BERT and encoder-decoder twins."""

    def __init__(self):
        super().__init__()
        self.q = nn.Linear(D_E, H * D_ATTN)  # W_q^h, b_q^h for all heads
        self.k = nn.Linear(D_E, H * D_ATTN)
        self.v = nn.Linear(D_E, H * D_MID)
        self.o = nn.Linear(H * D_MID, D_E)  # W_o, b_o

    def forward(self, x, z, mask=None):  # x: (B, T, d_e), z: (B, T_z, d_e)
        B, T, _ = x.shape
        T_z = z.shape[1]
        q = self.q(x).view(B, T, H, D_ATTN).transpose(1, 2)  # (B, H, T, d_attn)
        k = self.k(z).view(B, T_z, H, D_ATTN).transpose(1, 2)
        v = self.v(z).view(B, T_z, H, D_MID).transpose(1, 2)
        s = (q @ k.transpose(-2, -1)) / math.sqrt(D_ATTN)  # (B, H, T, T_z)
        if mask is not None:
            s = s.masked_fill(mask, float("-inf"))
        y = F.softmax(s, dim=-1) @ v  # (B, H, T, d_mid)
        return self.o(y.transpose(1, 2).reshape(B, T, H * D_MID))


def mlp(activation=nn.GELU()):  # W_mlp2 act(W_mlp1 x + b_mlp1) + b_mlp2; GELU is exact (erf)
    return nn.Sequential(nn.Linear(D_E, D_MLP), activation, nn.Linear(D_MLP, D_E))


def causal_mask(T):  # True above the diagonal: the future is masked
    return torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)


class Layer(nn.Module):  # Algorithm 10's pre-LN layer
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(D_E, eps=1e-5)
        self.attn = MHAttention()
        self.ln2 = nn.LayerNorm(D_E, eps=1e-5)
        self.mlp = mlp()

    def forward(self, x, mask):  # x: (B, T, d_e), rows are tokens (PyTorch's layout)
        xt = self.ln1(x)
        x = x + self.attn(xt, xt, mask)
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.W_e = nn.Embedding(N_V, D_E)
        self.W_p = nn.Embedding(L_MAX, D_E)
        self.layers = nn.ModuleList(Layer() for _ in range(L))
        self.ln = nn.LayerNorm(D_E, eps=1e-5)
        self.W_u = nn.Linear(D_E, N_V, bias=False)

    def forward(self, x):  # x: (B, T) token ids, 0-based
        T = x.shape[1]
        h = self.W_e(x) + self.W_p(torch.arange(T))
        mask = causal_mask(T)
        for layer in self.layers:
            h = layer(h, mask)
        return F.softmax(self.W_u(self.ln(h)), dim=-1)  # P, (B, T, N_V)


def measure(call, warmup, unit, seconds=3.0, tokens_per_call=BATCH * LENGTH):
    """Times call() for `seconds` after `warmup` calls; each call processes tokens_per_call tokens.
    Returns the figures the run_*.sh scripts read, with ms_per_{unit}_{wall,cpu}."""
    for _ in range(warmup):
        call()
    iters, wall0, cpu0 = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - wall0 < seconds:
        call()
        iters += 1
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    tokens = iters * tokens_per_call
    return {
        "torch": torch.__version__,
        "iterations": iters,
        f"ms_per_{unit}_wall": 1e3 * wall / iters,
        f"ms_per_{unit}_cpu": 1e3 * cpu / iters,
        "tokens_per_s_wall": tokens / wall,
        "tokens_per_s_cpu": tokens / cpu,
    }


def blas_info():
    """Which BLAS this process has loaded (torch's build says only BLAS_INFO=generic: Debian's
    libblas.so.3, reference BLAS or OpenBLAS by the alternatives), and the thread counts."""
    torch.ones(8, 8) @ torch.ones(8, 8)  # make sure the library is mapped
    with open("/proc/self/maps") as maps:
        libs = sorted({os.path.realpath(line.split()[-1]) for line in maps
                       if "blas" in line.rsplit("/", 1)[-1] or "lapack" in line.rsplit("/", 1)[-1]})
    build = [item.split("=", 1)[1] for item in torch.__config__.show().replace(",", "\n").split()
             if item.startswith("BLAS_INFO=")]
    openblas_threads = None
    for lib in libs:
        if "openblas" in lib:
            try:
                openblas_threads = ctypes.CDLL(lib).openblas_get_num_threads()
            except (OSError, AttributeError):
                pass
    return {
        "blas_build": build[0] if build else "?",
        "blas_loaded": libs,
        "openblas": any("openblas" in lib for lib in libs),
        "openblas_threads": openblas_threads,
        "torch_threads": torch.get_num_threads(),
        "env": {k: os.environ.get(k, "unset") for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")},
    }


def report(results):
    """--json: one object {"torch", "blas", "results": {name: measure(...)}} for the run_*.sh
    scripts; otherwise a line per result."""
    if "--json" in sys.argv[1:]:
        print(json.dumps({"torch": torch.__version__, "blas": blas_info(), "results": results}))
        return
    for name, r in results.items():
        unit = next(k for k in r if k.endswith("_wall") and k.startswith("ms_per_"))
        print(f"PyTorch {r['torch']} {name}, 1 thread: {r[unit]:.2f} ms {unit[3:-5].replace('_', ' ')} (wall), "
              f"{r['tokens_per_s_wall']:,.0f} tokens/s (CPU time: {r['tokens_per_s_cpu']:,.0f} tokens/s)")


def single_thread(seed=1):
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    for lib in blas_info()["blas_loaded"]:  # OpenBLAS's own threads, should OPENBLAS_NUM_THREADS be unset
        if "openblas" in lib:
            ctypes.CDLL(lib).openblas_set_num_threads(1)
    torch.manual_seed(seed)


def main():
    single_thread()
    model = GPT().eval()
    x = torch.randint(0, N_V - 3, (BATCH, LENGTH))
    with torch.no_grad():
        result = measure(lambda: model(x), warmup=20, unit="iteration")
    if "--json" in sys.argv[1:]:
        print(json.dumps(result))
    else:
        print(f"PyTorch {result['torch']} forward, {BATCH}x{LENGTH} tokens per call, 1 thread: "
              f"{result['ms_per_iteration_wall']:.2f} ms/call, {result['tokens_per_s_wall']:,.0f} tokens/s "
              f"(CPU time: {result['tokens_per_s_cpu']:,.0f} tokens/s)")


if __name__ == "__main__":
    main()
