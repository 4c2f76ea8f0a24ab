#!/usr/bin/python3
"""The forward pass of bench/bench_forward.cpp's model in PyTorch, for comparison.

A straightforward GPT (pre-LN, as the paper's Algorithm 10) with the same shapes: d_e=64,
L=2, H=4, d_attn=d_mid=16, d_mlp=256, l_max=64, N_V=64, learned positions, exact (erf) GELU,
LayerNorm eps=1e-5, causal mask with -inf, P = softmax over the vocabulary. float32, one
thread, no grad, a batch of 16 sequences of 64 tokens per call. The weights are random (the
timing does not depend on them). Prints tokens/s by wall-clock and by CPU time.

Run with Debian's interpreter (it has torch 1.13): /usr/bin/python3 bench/torch_forward.py [--json]
"""
import json
import math
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

D_E, L, H, D_ATTN, D_MID, D_MLP, L_MAX, N_V = 64, 2, 4, 16, 16, 256, 64, 64
BATCH, LENGTH = 16, 64


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(D_E, eps=1e-5)
        self.q = nn.Linear(D_E, H * D_ATTN)  # W_q^h, b_q^h for all heads
        self.k = nn.Linear(D_E, H * D_ATTN)
        self.v = nn.Linear(D_E, H * D_MID)
        self.o = nn.Linear(H * D_MID, D_E)  # W_o, b_o
        self.ln2 = nn.LayerNorm(D_E, eps=1e-5)
        self.mlp1 = nn.Linear(D_E, D_MLP)
        self.mlp2 = nn.Linear(D_MLP, D_E)

    def forward(self, x, mask):  # x: (B, T, d_e), rows are tokens (PyTorch's layout)
        B, T, _ = x.shape
        xt = self.ln1(x)
        q = self.q(xt).view(B, T, H, D_ATTN).transpose(1, 2)  # (B, H, T, d_attn)
        k = self.k(xt).view(B, T, H, D_ATTN).transpose(1, 2)
        v = self.v(xt).view(B, T, H, D_MID).transpose(1, 2)
        s = (q @ k.transpose(-2, -1)) / math.sqrt(D_ATTN)  # (B, H, T, T)
        s = s.masked_fill(mask, float("-inf"))
        y = F.softmax(s, dim=-1) @ v  # (B, H, T, d_mid)
        x = x + self.o(y.transpose(1, 2).reshape(B, T, H * D_MID))
        x = x + self.mlp2(F.gelu(self.mlp1(self.ln2(x))))  # exact GELU (erf)
        return x


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
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # mask the future
        for layer in self.layers:
            h = layer(h, mask)
        return F.softmax(self.W_u(self.ln(h)), dim=-1)  # P, (B, T, N_V)


def measure(call, warmup, unit, seconds=3.0):
    """Times call() for `seconds` after `warmup` calls; each call processes BATCH x LENGTH tokens.
    Returns the figures the run_*.sh scripts read, with ms_per_{unit}_{wall,cpu}."""
    for _ in range(warmup):
        call()
    iters, wall0, cpu0 = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - wall0 < seconds:
        call()
        iters += 1
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    tokens = iters * BATCH * LENGTH
    return {
        "torch": torch.__version__,
        "iterations": iters,
        f"ms_per_{unit}_wall": 1e3 * wall / iters,
        f"ms_per_{unit}_cpu": 1e3 * cpu / iters,
        "tokens_per_s_wall": tokens / wall,
        "tokens_per_s_cpu": tokens / cpu,
    }


def single_thread(seed=1):
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
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
