#!/usr/bin/python3
"""The forward pass of bench/bench_forward.cpp's model in PyTorch, for comparison.

A straightforward GPT (pre-LN, as the paper's Algorithm 10) with the same shapes: d_e=64,
L=2, H=4, d_attn=d_mid=16, d_mlp=256, l_max=64, N_V=64, learned positions, exact (erf) GELU,
LayerNorm eps=1e-5, causal mask with -inf, P = softmax over the vocabulary. float32, no
grad, a batch of 16 sequences of 64 tokens per call. The weights are random (the timing does not
depend on them). Prints tokens/s by wall-clock and by CPU time, and the BLAS torch uses.

Run with Debian's interpreter (it has torch 1.13):
  /usr/bin/python3 bench/torch_forward.py [--threads N] [--seconds S] [--json]   (bench/twin.py)
"""
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from twin import measure, options, run  # noqa: E402

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


def forward_results(opts):
    model = GPT().eval()
    x = torch.randint(0, N_V - 3, (BATCH, LENGTH))
    with torch.no_grad():
        return {"forward": measure(lambda: model(x), warmup=20, unit="iteration", seconds=opts.seconds,
                                   tokens_per_call=BATCH * LENGTH)}


def main():
    run(options(), forward_results)


if __name__ == "__main__":
    main()
