#!/usr/bin/python3
"""bench/bench_ed.cpp's model in PyTorch, for comparison: the paper's encoder-decoder
(Algorithm 8), written from the paper.

Z <- W_e[:, z] + W_p; L_enc post-LN encoder layers (Z + MHAttention(Z) with Mask = 1, LayerNorm;
Z + MLP with ReLU, LayerNorm); X <- W_e[:, x] + W_p (the same W_e, W_p); L_dec decoder layers
(X + MHAttention(X) causal, LayerNorm; X + MHAttention(X, Z) with Mask = 1, LayerNorm; X + MLP
with ReLU, LayerNorm); P = softmax(W_u X), W_u without bias and no final LayerNorm.
L_enc = L_dec = 2, d_e=64, H=4, d_attn=d_mid=16, d_mlp=256, l_max=64, N_V=64, LayerNorm
eps=1e-5. float32, random weights.

  train         a minibatch of 16 pairs (z, x), l_z = l_x = 64: the mean cross-entropy of
                predicting x[t+1] from z and x[1:t], backward, clipping to 1 and Adam
                (bench/torch_train.py's step). tokens/s counts x's tokens.
  generate      Algorithm 15, greedy (tau = 0), no grad, for 4 contexts z one at a time:
  generate_reuse  x^ <- [bos]; until eos_token or length(x^) = l_max: P <- EDTransformer(z, x^),
                y <- argmax P[:, length(x^)], x^ <- [x^, y]. "generate" re-encodes z at every step
                (the paper), "generate_reuse" encodes it once. The decoder is rerun over all of x^
                each step (no key/value cache), as in the C++. tokens/s counts generated tokens.

Run with Debian's interpreter (it has torch 1.13):
  /usr/bin/python3 bench/torch_ed.py [--threads N] [--seconds S] [--json]   (bench/twin.py)
"""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_bert import BOS, EOS, MLP, Embedded, PostLN, PostLNLayer, SelfAttention, sequences  # noqa: E402
from torch_forward import BATCH, D_E, L_MAX, LENGTH, N_V, MHAttention, causal_mask  # noqa: E402
from torch_train import trainer  # noqa: E402
from twin import measure, options, run  # noqa: E402

L_ENC = L_DEC = 2
CONTEXTS = 4  # generated for per call (as bench_ed.cpp's kContexts)


class CrossAttention(MHAttention):
    def forward(self, x, mask, z):  # Mask = 1 over z
        return super().forward(x, z)


class DecoderLayer(nn.Module):
    """Algorithm 8's decoder layer: causal self-attention, cross-attention to Z, the ReLU MLP,
    each as a PostLN residual."""

    def __init__(self):
        super().__init__()
        self.sublayers = nn.ModuleList([PostLN(SelfAttention()), PostLN(CrossAttention()), PostLN(MLP(nn.ReLU()))])

    def forward(self, x, z, mask):
        for sublayer in self.sublayers:
            x = sublayer(x, mask, z)
        return x


class EncoderDecoder(Embedded):  # z and x share W_e and W_p
    def __init__(self):
        super().__init__()
        self.encoder = nn.ModuleList(PostLNLayer(nn.ReLU()) for _ in range(L_ENC))
        self.decoder = nn.ModuleList(DecoderLayer() for _ in range(L_DEC))
        self.W_u = nn.Linear(D_E, N_V, bias=False)

    def encode(self, z):  # z: (B, T_z) 0-based ids; returns Z, (B, T_z, d_e)
        h = self.embed(z)
        for layer in self.encoder:
            h = layer(h)
        return h

    def logits(self, x, Z):  # x: (B, T) 0-based ids; returns W_u X, (B, T, N_V)
        h, mask = self.embed(x), causal_mask(x.shape[1])
        for layer in self.decoder:
            h = layer(h, Z, mask)
        return self.W_u(h)


def generate(model, zs, reuse):
    """Algorithm 15, greedy, for each context alone; returns the number of tokens generated."""
    generated = 0
    for z in zs:
        z = z.unsqueeze(0)
        Z = model.encode(z) if reuse else None
        x = torch.tensor([[BOS]])
        while x.shape[1] < L_MAX:
            P = F.softmax(model.logits(x, Z if reuse else model.encode(z)), dim=-1)
            y = int(P[0, -1].argmax())
            x = torch.cat([x, torch.tensor([[y]])], dim=1)
            generated += 1
            if y == EOS:
                break
    return generated


def ed_results(opts):
    model = EncoderDecoder()
    z, x = sequences(), sequences()
    model.train()
    step = trainer(model, lambda: F.cross_entropy(model.logits(x, model.encode(z))[:, :-1].reshape(-1, N_V),
                                                  x[:, 1:].reshape(-1)))
    results = {"train": measure(step, warmup=5, unit="step", seconds=opts.seconds, tokens_per_call=BATCH * LENGTH)}
    model.eval()
    with torch.no_grad():
        # PyTorch's initialisation makes eos_token the argmax early (about 36 of 63 tokens on
        # average); with its row of W_u zeroed, it is not, and x^ runs to the l_max cap as
        # bench_ed.cpp's does. Timing-neutral: the same products, other values.
        model.W_u.weight[EOS] = 0
        for name, reuse in (("generate", False), ("generate_reuse", True)):
            tokens = generate(model, z[:CONTEXTS], reuse)
            results[name] = measure(lambda: generate(model, z[:CONTEXTS], reuse), warmup=1, unit="call",
                                    seconds=opts.seconds, tokens_per_call=tokens)
            results[name]["tokens_per_context"] = tokens / CONTEXTS
    return results


def main():
    run(options(), ed_results)


if __name__ == "__main__":
    main()
