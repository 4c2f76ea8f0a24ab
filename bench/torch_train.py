#!/usr/bin/python3
"""Training steps of bench/bench_train.cpp's model in PyTorch, for comparison.

The model is bench/torch_forward.py's (imported: pre-LN as the paper's Algorithm 10, d_e=64, L=2,
H=4, d_attn=d_mid=16, d_mlp=256, l_max=64, N_V=64, exact GELU, LayerNorm eps=1e-5) with the
logits W_u X in place of P. One step is what the C++ Trainer does in its practical mode: a
minibatch of 16 sequences of 64 tokens, the mean cross-entropy of predicting x[t+1] from x[1:t],
backward, clipping of the gradient norm to 1, and Adam (lr 1e-3, betas (0.9, 0.99), eps 1e-8).
float32. Prints tokens/s by wall-clock and by CPU time, and the BLAS torch uses.

Run with Debian's interpreter (it has torch 1.13):
  /usr/bin/python3 bench/torch_train.py [--threads N] [--seconds S] [--json]   (bench/twin.py)
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_forward import BATCH, LENGTH, N_V, GPT  # noqa: E402
from twin import measure, options, run  # noqa: E402


class GPTLogits(GPT):
    def forward(self, x):  # x: (B, T) token ids, 0-based; returns W_u X, (B, T, N_V)
        T = x.shape[1]
        h = self.W_e(x) + self.W_p(torch.arange(T))
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        for layer in self.layers:
            h = layer(h, mask)
        return self.W_u(self.ln(h))


def trainer(model, loss):
    """One training step of `model` as the C++ Trainer's practical mode takes it: loss() (a mean),
    backward, clipping of the gradient norm to 1, and Adam (lr 1e-3, betas (0.9, 0.99), eps 1e-8)."""
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.99), eps=1e-8)

    def step():
        value = loss()
        opt.zero_grad(set_to_none=True)
        value.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return value.item()

    return step


def train_results(opts):
    model = GPTLogits().train()
    x = torch.randint(0, N_V - 3, (BATCH, LENGTH))
    step = trainer(model, lambda: F.cross_entropy(model(x)[:, :-1].reshape(-1, N_V), x[:, 1:].reshape(-1)))
    return {"train": measure(step, warmup=5, unit="step", seconds=opts.seconds, tokens_per_call=BATCH * LENGTH)}


def main():
    run(options(), train_results)


if __name__ == "__main__":
    main()
