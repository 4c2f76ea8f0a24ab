#!/usr/bin/env python3
"""PyTorch float64 reference for Algorithm 4-R, random-feature attention (issue 25, not in the paper).

Regenerates the fixed directions omega exactly as core/algorithms/random_features.cpp draws them
(splitmix64 and Box-Muller; Gram-Schmidt in blocks of d_attn rows and chi-distributed row norms for
the orthogonal option), computes the estimate the quadratic way with autograd (the article's formula:
sum_i e^{|k_i|^2/2s^2} phi(k_i)^T phi(q) v_i / sum_i e^{|k_i|^2/2s^2} phi(k_i)^T phi(q), the same guard
max(b, eps*g)), and writes the forward values and the gradients of loss = sum(R * V~) with respect to
Q, K and V to tests/data/random_features_reference.json, which tests/core/test_random_feature_attention.cpp
(RandomFeatureAttention.MatchesThePyTorchReference) compares with core's linear-time code.

    /usr/bin/python3 tests/reference/gen_random_features_reference.py
"""
import json
import math
import os

import torch

MASK64 = (1 << 64) - 1
EPS = 1e-3  # kRfGuard


class Normals:
    """As random_features.cpp's Normals: splitmix64 uniforms, Box-Muller pairs (cos first)."""

    def __init__(self, seed):
        self.state = seed & MASK64
        self.spare = None

    def uniform(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return ((z ^ (z >> 31)) >> 11) * 2.0 ** -53

    def next(self):
        if self.spare is not None:
            v, self.spare = self.spare, None
            return v
        u1 = 1.0 - self.uniform()
        u2 = self.uniform()
        r = math.sqrt(-2.0 * math.log(u1))
        a = 2.0 * math.pi * u2
        self.spare = r * math.sin(a)
        return r * math.cos(a)


def rf_omega(D, d, seed, head, orthogonal):
    rng = Normals((seed * 0x100000001B3 + head * 0xD1B54A32D192ED03) & MASK64)
    om = [[rng.next() for _ in range(d)] for _ in range(D)]
    if orthogonal:
        for b0 in range(0, D, d):
            for i in range(b0, min(D, b0 + d)):
                for j in range(b0, i):
                    dot = sum(om[i][k] * om[j][k] for k in range(d))
                    om[i] = [om[i][k] - dot * om[j][k] for k in range(d)]
                n = math.sqrt(sum(x * x for x in om[i]))
                om[i] = [x / n for x in om[i]]
        for i in range(D):
            chi2 = sum(rng.next() ** 2 for _ in range(d))
            om[i] = [x * math.sqrt(chi2) for x in om[i]]
    return torch.tensor(om, dtype=torch.float64)


def phi(X, W):
    U = W @ X  # (D, l)
    f = torch.stack([torch.cos(U), torch.sin(U)], dim=1).reshape(2 * W.shape[0], X.shape[1])  # cos, sin interleaved
    return f / math.sqrt(W.shape[0])


def estimate(Q, K, V, M, omega):
    d = Q.shape[0]
    s2 = math.sqrt(d)
    W = omega / math.sqrt(s2)
    kappa = torch.exp((K * K).sum(0) / (2 * s2))  # (l_z)
    A = (kappa[:, None] * (phi(K, W).T @ phi(Q, W))) * M  # (l_z, l_x)
    g = (kappa[:, None] * M).sum(0)
    bhat = torch.maximum(A.sum(0), EPS * g)
    return V @ (A / bhat)


def values(r, c, k):
    """Deterministic inputs without a random generator: entries sin(k·(i+1) + 0.37·(j+1)) scaled."""
    return torch.tensor([[0.6 * math.sin(k * (i + 1) + 0.37 * (j + 1)) for j in range(c)] for i in range(r)],
                        dtype=torch.float64)


def case(name, mask, D, orthogonal):
    d, d_out = 4, 3
    l_z, l_x = mask.shape
    Q = values(d, l_x, 1.3).requires_grad_()
    K = values(d, l_z, 2.1).requires_grad_()
    V = values(d_out, l_z, 0.7).requires_grad_()
    R = values(d_out, l_x, 3.3)
    omega = rf_omega(D, d, 5, 2, orthogonal)
    Vt = estimate(Q, K, V, mask, omega)
    (R * Vt).sum().backward()
    rows = lambda t: t.detach().tolist()
    return {"name": name, "D": D, "orthogonal": orthogonal, "seed": 5, "head": 2, "mask": rows(mask),
            "Q": rows(Q), "K": rows(K), "V": rows(V), "R": rows(R), "omega": rows(omega), "Vt": rows(Vt),
            "dQ": rows(Q.grad), "dK": rows(K.grad), "dV": rows(V.grad)}


def main():
    l = 6
    causal = torch.tril(torch.ones(l, l, dtype=torch.float64)).T  # Mask[t_z, t_x] = [t_z <= t_x]
    padded = causal.clone()
    padded[-2:, :] = 0
    cases = [case("causal", causal, 16, False), case("causal_orthogonal", causal, 16, True),
             case("bidirectional", torch.ones(l, l, dtype=torch.float64), 32, False),
             case("causal_padding", padded, 16, False), case("cross", torch.ones(l + 2, l, dtype=torch.float64), 8, True)]
    out = os.path.join(os.path.dirname(__file__), "..", "data", "random_features_reference.json")
    with open(out, "w") as f:
        json.dump({"generator": "tests/reference/gen_random_features_reference.py", "torch": torch.__version__,
                   "cases": cases}, f)
    print("wrote", os.path.normpath(out))


if __name__ == "__main__":
    main()
