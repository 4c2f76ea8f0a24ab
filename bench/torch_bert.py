#!/usr/bin/python3
"""bench/bench_bert.cpp's model in PyTorch, for comparison: the paper's BERT (Algorithm 9).

Post-LN encoder layers (x + MHAttention(x) with Mask = 1, LayerNorm; x + MLP with exact GELU,
LayerNorm), then X <- LayerNorm(GELU(W_f X + b_f)) and P = softmax(W_u X), W_u without bias:
d_e=64, L=2, H=4, d_attn=d_mid=16, d_mlp=256, d_f=64, l_max=64, N_V=64, learned positions,
LayerNorm eps=1e-5. float32, random weights.

  forward   no grad, a batch of 16 sequences of 64 tokens per call: P for every position.
  train     a minibatch of 16 sequences of 64 tokens, each position replaced by mask_token with
            p_mask = 0.15 (drawn every step, the paper's rule: every position alike), the mean
            cross-entropy of the masked positions against the original tokens, backward,
            clipping to 1 and Adam (bench/torch_train.py's step).

Run with Debian's interpreter (it has torch 1.13):
  /usr/bin/python3 bench/torch_bert.py [--threads N] [--seconds S] [--json]   (bench/twin.py)
"""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_forward import BATCH, D_E, L, L_MAX, LENGTH, N_V, MHAttention, mlp  # noqa: E402
from torch_train import trainer  # noqa: E402
from twin import measure, options, run  # noqa: E402

D_F, P_MASK = 64, 0.15
MASK, BOS, EOS = N_V - 3, N_V - 2, N_V - 1  # 0-based: mask_token, bos_token, eos_token


class PostLN(nn.Module):
    """x <- LayerNorm(x + sublayer(x, ...)): the post-LN residual of Algorithms 8 and 9."""

    def __init__(self, sublayer, size=D_E):
        super().__init__()
        self.sublayer = sublayer
        self.ln = nn.LayerNorm(size, eps=1e-5)

    def forward(self, x, *args):
        return self.ln(x + self.sublayer(x, *args))


class MLP(nn.Module):  # takes (and ignores) the attention's extra arguments, for PostLN
    def __init__(self, activation):
        super().__init__()
        self.mlp = mlp(activation)

    def forward(self, x, *_):
        return self.mlp(x)


class SelfAttention(MHAttention):
    def forward(self, x, mask=None, *_):
        return super().forward(x, x, mask)


class PostLNLayer(nn.Sequential):
    """One post-LN layer, as Algorithm 9's (GELU) and Algorithm 8's encoder (ReLU) have it:
    self-attention with Mask = 1, then the MLP, each as a PostLN residual."""

    def __init__(self, activation):
        super().__init__(PostLN(SelfAttention()), PostLN(MLP(activation)))


class Embedded(nn.Module):
    """W_e and learned W_p: embed(x) = W_e[:, x] + W_p[:, 1:T] (Algorithms 1 and 2), rows."""

    def __init__(self):
        super().__init__()
        self.W_e = nn.Embedding(N_V, D_E)
        self.W_p = nn.Embedding(L_MAX, D_E)

    def embed(self, x):  # x: (B, T) 0-based ids
        return self.W_e(x) + self.W_p(torch.arange(x.shape[1]))


class BERT(Embedded):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(PostLNLayer(nn.GELU()) for _ in range(L))
        self.W_f = nn.Linear(D_E, D_F)
        self.ln = nn.LayerNorm(D_F, eps=1e-5)
        self.W_u = nn.Linear(D_F, N_V, bias=False)

    def logits(self, x):  # x: (B, T) token ids, 0-based; returns W_u X, (B, T, N_V)
        h = self.embed(x)
        for layer in self.layers:
            h = layer(h)  # bidirectional: Mask = 1
        return self.W_u(self.ln(F.gelu(self.W_f(h))))

    def forward(self, x):
        return F.softmax(self.logits(x), dim=-1)  # P, (B, T, N_V)


def sequences():  # [bos_token, 62 ordinary tokens, eos_token], as the C++ Trainer's
    x = torch.randint(0, N_V - 3, (BATCH, LENGTH))
    x[:, 0], x[:, -1] = BOS, EOS
    return x


def masked_lm_loss(model, x):
    chosen = torch.rand(x.shape) < P_MASK
    logits = model.logits(torch.where(chosen, torch.full_like(x, MASK), x))
    return F.cross_entropy(logits[chosen], x[chosen])


def bert_results(opts):
    model = BERT()
    x = sequences()
    results = {}
    with torch.no_grad():
        model.eval()
        results["forward"] = measure(lambda: model(x), warmup=20, unit="iteration", seconds=opts.seconds,
                                     tokens_per_call=BATCH * LENGTH)
    model.train()
    results["train"] = measure(trainer(model, lambda: masked_lm_loss(model, x)), warmup=5, unit="step",
                               seconds=opts.seconds, tokens_per_call=BATCH * LENGTH)
    return results


def main():
    run(options(), bert_results)


if __name__ == "__main__":
    main()
