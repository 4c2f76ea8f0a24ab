#!/usr/bin/python3
"""Helpers shared by gen_bert_reference.py and gen_ed_reference.py (not a generator itself).

The elementwise pieces (f32, layer_norm_columns, softmax_columns, gelu, to_list, EPS) come from
gen_forward_reference.py and are re-exported here unchanged. What that file writes inline and
the two newer generators both need is written once below:

  attention_params        the 8 tensors of one attention block (eq. 4), under PREFIX.W_q … PREFIX.b_o
  mh_attention_columns    Algorithms 4 and 5 in the paper's column convention, with intermediates
  mh_attention_rows       the same layer in the row convention (torch.nn.functional), as a check
  tensor_json             {"shape": [...], "data": nested row-major lists}
  autograd_grads          loss and ∂loss/∂θ for every parameter, by float64 autograd
  compare_grads           asserts two gradient sets agree (absolute 1e-10), returns the max gap
  write_json              compact JSON, one line per top-level key, under tests/data/
"""
import json
import math
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_forward_reference as fwd  # noqa: E402

torch.set_default_dtype(torch.float64)

f32 = fwd.f32
layer_norm_columns = fwd.layer_norm_columns  # √(v + ε) with ε = fwd.EPS = float32(1e-5)
softmax_columns = fwd.softmax_columns
gelu = fwd.gelu
to_list = fwd.to_list
EPS = fwd.EPS


def relu(A):
    """ReLU(x) = max(x, 0), the activation of Algorithm 8."""
    return torch.clamp(A, min=0.0)


def randn_factory(gen):
    """randn(*shape, std, mean): normal values from `gen`, rounded to float32 (f32)."""
    def randn(*shape, std=1.0, mean=0.0):
        return f32(mean + std * torch.randn(*shape, generator=gen))
    return randn


def attention_params(p, prefix, randn, H, d_attn, d_mid, d_x, d_z, d_out):
    """Eq. (4): W_q [H,d_attn,d_x], b_q [H,d_attn], W_k [H,d_attn,d_z], b_k, W_v [H,d_mid,d_z],
    b_v [H,d_mid], W_o [d_out,H·d_mid], b_o [d_out]; stored as p[prefix + ".W_q"] etc."""
    p[prefix + ".W_q"] = randn(H, d_attn, d_x, std=0.5)
    p[prefix + ".b_q"] = randn(H, d_attn, std=0.2)
    p[prefix + ".W_k"] = randn(H, d_attn, d_z, std=0.5)
    p[prefix + ".b_k"] = randn(H, d_attn, std=0.2)
    p[prefix + ".W_v"] = randn(H, d_mid, d_z, std=0.5)
    p[prefix + ".b_v"] = randn(H, d_mid, std=0.2)
    p[prefix + ".W_o"] = randn(d_out, H * d_mid, std=0.4)
    p[prefix + ".b_o"] = randn(d_out, std=0.2)


def mh_attention_columns(p, prefix, X, Z, mask, d_attn):
    """Algorithm 5 (with Algorithm 4 per head), columns are tokens.

    X ∈ ℝ^{d_x×ℓ_x} (queries), Z ∈ ℝ^{d_z×ℓ_z} (keys, values), mask ∈ {0,1}^{ℓ_z×ℓ_x} as a bool
    tensor, or None for Mask ≡ 1. Returns (Ṽ, Y, heads), heads a list of dicts with Q, K, V, S
    (unmasked K^T Q), S_masked (only when a mask is given), A, Y.
    """
    H = p[prefix + ".W_q"].shape[0]
    heads, Ys = [], []
    for h in range(H):
        Q = p[prefix + ".W_q"][h] @ X + p[prefix + ".b_q"][h][:, None]  # line 1
        K = p[prefix + ".W_k"][h] @ Z + p[prefix + ".b_k"][h][:, None]  # line 2
        V = p[prefix + ".W_v"][h] @ Z + p[prefix + ".b_v"][h][:, None]  # line 3
        S = K.T @ Q  # line 4: ℓ_z × ℓ_x
        rec = {"Q": Q, "K": K, "V": V, "S": S}
        if mask is not None:  # line 5
            S = S.masked_fill(~mask, float("-inf"))
            rec["S_masked"] = S
        A = softmax_columns(S / math.sqrt(d_attn))  # line 6
        Y = V @ A
        rec["A"], rec["Y"] = A, Y
        heads.append(rec)
        Ys.append(Y)
    Y = torch.cat(Ys, dim=0)  # Algorithm 5 line 3: Y = [Y^1; …; Y^H]
    out = p[prefix + ".W_o"] @ Y + p[prefix + ".b_o"][:, None]  # line 4
    return out, Y, heads


def mh_attention_rows(p, prefix, X, Z, causal, d_attn):
    """The same layer in the row convention: X (ℓ_x, d_x), Z (ℓ_z, d_z), one ROW per token;
    F.linear for the projections, F.softmax over keys; causal=True keeps key ≤ query."""
    H = p[prefix + ".W_q"].shape[0]
    heads = []
    for h in range(H):
        Q = F.linear(X, p[prefix + ".W_q"][h], p[prefix + ".b_q"][h])
        K = F.linear(Z, p[prefix + ".W_k"][h], p[prefix + ".b_k"][h])
        V = F.linear(Z, p[prefix + ".W_v"][h], p[prefix + ".b_v"][h])
        scores = Q @ K.T / math.sqrt(d_attn)  # (ℓ_x, ℓ_z)
        if causal:
            keep = torch.ones(X.shape[0], Z.shape[0], dtype=torch.bool).tril()
            scores = scores.masked_fill(~keep, float("-inf"))
        heads.append(F.softmax(scores, dim=-1) @ V)
    return F.linear(torch.cat(heads, dim=-1), p[prefix + ".W_o"], p[prefix + ".b_o"])


def tensor_json(t):
    return {"shape": list(t.shape), "data": to_list(t)}


def autograd_grads(p, loss_fn):
    """(loss, {name: ∂loss/∂name}) for loss_fn(params) built from fresh leaves."""
    leaves = {k: v.clone().requires_grad_(True) for k, v in p.items()}
    loss = loss_fn(leaves)
    grads = torch.autograd.grad(loss, list(leaves.values()))
    return loss.item(), dict(zip(leaves.keys(), grads))


def compare_grads(label, g, g_r, tol=1e-10):
    worst = 0.0
    for k in g:
        diff = (g[k] - g_r[k]).abs().max().item()
        assert diff < tol, f"{label}: {k}: column and row gradients disagree by {diff}"
        worst = max(worst, diff)
    return worst


def write_json(doc, filename):
    """Writes tests/data/<filename>: compact JSON, each top-level key on its own line."""
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.normpath(os.path.join(here, "..", "data", filename))
    parts = [json.dumps(k) + ":" + json.dumps(v, separators=(",", ":"), allow_nan=False) for k, v in doc.items()]
    with open(path, "w") as f:
        f.write("{\n" + ",\n".join(parts) + "\n}\n")
    json.load(open(path))  # round-trip check
    return path
