#!/usr/bin/python3
"""Writes tests/data/forward_reference.json: Algorithm 10 (DTransformer) computed in float64
with PyTorch, independently of the C++ core, for tests/core/test_reference_forward.cpp.

Regenerate (from the repository root; needs torch and numpy, e.g. /usr/bin/python3):
    /usr/bin/python3 tests/reference/gen_forward_reference.py
then rebuild and run core_tests. The output is deterministic (fixed seed).

The forward pass is written here from the paper's equations in the paper's COLUMN convention
(X ∈ ℝ^{d_e×ℓ}, one column per token, W x acts on columns), and checked against a second,
row-convention implementation built from torch.nn.functional (layer_norm, gelu, softmax), which
is the convention PyTorch models use; the two must agree to 1e-12 before anything is written.

Every parameter is rounded to float32 (and then used in float64), so that the C++ test can
hold the exact same parameters in its float θ: its double run can then be compared to 1e-10.
ε likewise is float32(1e-5), the value a ModelConfig (float eps) holds.

JSON layout: matrices in the paper's shapes, rows × columns (tokens are columns), as nested
row-major lists; −∞ is the string "-inf". Parameters use the checkpoint names of
core/params.cpp (ParamTable) and shapes: [rows, cols] matrices, [rows] vectors, per-head
tensors [H, rows, cols] (biases [H, rows]).
"""
import json
import math
import os

import numpy as np
import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)

CONFIG = {
    "arch": "gpt",
    "L": 2,
    "H": 2,
    "d_e": 8,
    "d_attn": 4,
    "d_mid": 3,  # ≠ d_attn on purpose: value and key sizes must not be confused
    "d_mlp": 16,
    "l_max": 8,
    "eps": 1e-5,
    "position_init": "learned",
    "vocab": list("abcdefghij"),  # 10 characters: N_V = 13
}
N_V = len(CONFIG["vocab"]) + 3
BOS = N_V - 1
# 6 tokens, 1-based ids (bos_token, then ordinary characters).
TOKENS = [BOS, 1, 5, 3, 10, 2]
EPS = float(np.float32(CONFIG["eps"]))


def f32(t):
    """Rounds to float32 and back: the exact values a float θ can hold."""
    return t.float().double()


def make_params(gen):
    c = CONFIG
    d_e, H, d_attn, d_mid, d_mlp, l_max = c["d_e"], c["H"], c["d_attn"], c["d_mid"], c["d_mlp"], c["l_max"]

    def randn(*shape, std=1.0, mean=0.0):
        return f32(mean + std * torch.randn(*shape, generator=gen))

    p = {}
    p["W_e"] = randn(d_e, N_V)
    p["W_p"] = randn(d_e, l_max, std=0.5)
    for l in range(1, c["L"] + 1):
        q = f"layer{l}."
        p[q + "gamma1"] = randn(d_e, mean=1.0, std=0.2)
        p[q + "beta1"] = randn(d_e, std=0.2)
        p[q + "attn.W_q"] = randn(H, d_attn, d_e, std=0.5)
        p[q + "attn.b_q"] = randn(H, d_attn, std=0.2)
        p[q + "attn.W_k"] = randn(H, d_attn, d_e, std=0.5)
        p[q + "attn.b_k"] = randn(H, d_attn, std=0.2)
        p[q + "attn.W_v"] = randn(H, d_mid, d_e, std=0.5)
        p[q + "attn.b_v"] = randn(H, d_mid, std=0.2)
        p[q + "attn.W_o"] = randn(d_e, H * d_mid, std=0.4)
        p[q + "attn.b_o"] = randn(d_e, std=0.2)
        p[q + "gamma2"] = randn(d_e, mean=1.0, std=0.2)
        p[q + "beta2"] = randn(d_e, std=0.2)
        p[q + "W_mlp1"] = randn(d_mlp, d_e, std=0.5)
        p[q + "b_mlp1"] = randn(d_mlp, std=0.2)
        p[q + "W_mlp2"] = randn(d_e, d_mlp, std=0.3)
        p[q + "b_mlp2"] = randn(d_e, std=0.2)
    p["gamma"] = randn(d_e, mean=1.0, std=0.2)
    p["beta"] = randn(d_e, std=0.2)
    p["W_u"] = randn(N_V, d_e, std=0.7)
    return p


# ---- Column convention, from the paper's equations --------------------------------------------


def layer_norm_columns(X, gamma, beta):
    """Algorithm 6 on every column: m, v over the d_e rows; ê = (e − m)/√(v + ε) ⊙ γ + β."""
    m = X.sum(dim=0, keepdim=True) / X.shape[0]
    v = ((X - m) ** 2).sum(dim=0, keepdim=True) / X.shape[0]
    return (X - m) / torch.sqrt(v + EPS) * gamma[:, None] + beta[:, None]


def softmax_columns(A):
    """Eq. (2): each column normalised; exp(−∞) = 0."""
    mx = A.max(dim=0, keepdim=True).values
    E = torch.exp(A - mx)
    return E / E.sum(dim=0, keepdim=True)


def gelu(A):
    """Eq. (5): x·Φ(x), Φ the standard normal CDF."""
    return A * 0.5 * (1.0 + torch.erf(A / math.sqrt(2.0)))


def forward_columns(p, x):
    c = CONFIG
    H, d_attn = c["H"], c["d_attn"]
    ell = len(x)
    out = {"layers": []}
    # Lines 2–3: e_t = W_e[:, x[t]] + W_p[:, t]; X = [e_1 … e_ℓ]   (ids 1-based)
    X = torch.stack([p["W_e"][:, x[t] - 1] + p["W_p"][:, t] for t in range(ell)], dim=1)
    out["X0"] = X.clone()
    # Mask[t_z, t_x] = [[t_z ≤ t_x]]
    mask = torch.tensor([[tz <= tx for tx in range(ell)] for tz in range(ell)])
    for l in range(1, c["L"] + 1):
        q = f"layer{l}."
        rec = {"heads": []}
        Xt = layer_norm_columns(X, p[q + "gamma1"], p[q + "beta1"])  # line 5
        rec["X_tilde1"] = Xt
        Ys = []
        for h in range(H):  # Algorithm 5, line 2: Algorithm 4 for each head
            Q = p[q + "attn.W_q"][h] @ Xt + p[q + "attn.b_q"][h][:, None]
            K = p[q + "attn.W_k"][h] @ Xt + p[q + "attn.b_k"][h][:, None]
            V = p[q + "attn.W_v"][h] @ Xt + p[q + "attn.b_v"][h][:, None]
            S = K.T @ Q
            S_masked = S.masked_fill(~mask, float("-inf"))
            A = softmax_columns(S_masked / math.sqrt(d_attn))
            Y = V @ A
            rec["heads"].append({"Q": Q, "K": K, "V": V, "S": S, "S_masked": S_masked, "A": A, "Y": Y})
            Ys.append(Y)
        Ycat = torch.cat(Ys, dim=0)  # Y = [Y^1; Y^2]
        mha = p[q + "attn.W_o"] @ Ycat + p[q + "attn.b_o"][:, None]
        rec["Y"] = Ycat
        rec["mha"] = mha
        X = X + mha  # line 6
        rec["X_after_attn"] = X
        Xt = layer_norm_columns(X, p[q + "gamma2"], p[q + "beta2"])  # line 7
        rec["X_tilde2"] = Xt
        pre = p[q + "W_mlp1"] @ Xt + p[q + "b_mlp1"][:, None]  # line 8
        act = gelu(pre)
        X = X + p[q + "W_mlp2"] @ act + p[q + "b_mlp2"][:, None]
        rec["mlp_pre"] = pre
        rec["mlp_gelu"] = act
        rec["X_after_mlp"] = X
        out["layers"].append(rec)
    X = layer_norm_columns(X, p["gamma"], p["beta"])  # line 10
    out["X_final"] = X
    logits = p["W_u"] @ X  # line 11
    out["logits"] = logits
    out["P"] = softmax_columns(logits)
    return out


# ---- Row convention with torch.nn.functional, as a check of the above -------------------------


def forward_rows(p, x):
    c = CONFIG
    H, d_attn, d_e = c["H"], c["d_attn"], c["d_e"]
    ell = len(x)
    idx = torch.tensor(x) - 1
    X = p["W_e"].T[idx] + p["W_p"].T[:ell]  # (ℓ, d_e): one ROW per token
    causal = torch.ones(ell, ell, dtype=torch.bool).tril()  # [query, key]: key ≤ query
    for l in range(1, c["L"] + 1):
        q = f"layer{l}."
        Xt = F.layer_norm(X, (d_e,), p[q + "gamma1"], p[q + "beta1"], eps=EPS)
        heads = []
        for h in range(H):
            Q = Xt @ p[q + "attn.W_q"][h].T + p[q + "attn.b_q"][h]
            K = Xt @ p[q + "attn.W_k"][h].T + p[q + "attn.b_k"][h]
            V = Xt @ p[q + "attn.W_v"][h].T + p[q + "attn.b_v"][h]
            scores = (Q @ K.T / math.sqrt(d_attn)).masked_fill(~causal, float("-inf"))
            heads.append(F.softmax(scores, dim=-1) @ V)
        X = X + torch.cat(heads, dim=-1) @ p[q + "attn.W_o"].T + p[q + "attn.b_o"]
        Xt = F.layer_norm(X, (d_e,), p[q + "gamma2"], p[q + "beta2"], eps=EPS)
        X = X + F.gelu(Xt @ p[q + "W_mlp1"].T + p[q + "b_mlp1"]) @ p[q + "W_mlp2"].T + p[q + "b_mlp2"]
    X = F.layer_norm(X, (d_e,), p["gamma"], p["beta"], eps=EPS)
    return F.softmax(X @ p["W_u"].T, dim=-1)  # (ℓ, N_V)


# ---- JSON ---------------------------------------------------------------------------------------


def to_list(t):
    """Nested row-major lists; −∞ as the string "-inf"."""
    if t.dim() == 0:
        v = t.item()
        if v == float("-inf"):
            return "-inf"
        assert math.isfinite(v), v
        return v
    return [to_list(s) for s in t]


def main():
    gen = torch.Generator().manual_seed(20220719)
    p = make_params(gen)
    ref = forward_columns(p, TOKENS)
    P_rows = forward_rows(p, TOKENS)
    diff = (ref["P"] - P_rows.T).abs().max().item()
    assert diff < 1e-12, f"column and row implementations disagree by {diff}"
    assert torch.allclose(ref["P"].sum(dim=0), torch.ones(len(TOKENS)), atol=1e-12)

    params = {}
    for name, t in p.items():
        params[name] = {"shape": list(t.shape), "data": to_list(t)}
    layers = []
    for rec in ref["layers"]:
        layers.append({
            "X_tilde1": to_list(rec["X_tilde1"]),
            "heads": [{k: to_list(v) for k, v in hd.items()} for hd in rec["heads"]],
            "Y": to_list(rec["Y"]),
            "mha": to_list(rec["mha"]),
            "X_after_attn": to_list(rec["X_after_attn"]),
            "X_tilde2": to_list(rec["X_tilde2"]),
            "mlp_pre": to_list(rec["mlp_pre"]),
            "mlp_gelu": to_list(rec["mlp_gelu"]),
            "X_after_mlp": to_list(rec["X_after_mlp"]),
        })
    doc = {
        "about": "Algorithm 10 (DTransformer) in float64 by tests/reference/gen_forward_reference.py; "
                 "matrices rows x columns (tokens are columns), row-major nested lists; -inf as \"-inf\".",
        "config": CONFIG,
        "tokens": TOKENS,
        "params": params,
        "X0": to_list(ref["X0"]),
        "layers": layers,
        "X_final": to_list(ref["X_final"]),
        "logits": to_list(ref["logits"]),
        "P": to_list(ref["P"]),
    }
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "..", "data", "forward_reference.json")
    with open(path, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {os.path.normpath(path)} ({os.path.getsize(path)} bytes); column vs row check {diff:.1e}")


if __name__ == "__main__":
    main()
