#!/usr/bin/python3
"""Writes tests/data/bert_reference.json: Algorithm 9 (ETransformer, BERT) and the masked-LM loss
of Algorithm 12 with its gradient for every parameter, computed in float64 with PyTorch,
independently of the C++ core.

Regenerate (from the repository root; needs torch and numpy, e.g. /usr/bin/python3):
    /usr/bin/python3 tests/reference/gen_bert_reference.py
The output is deterministic (fixed seed).

The forward pass is written from the paper's equations in its COLUMN convention (X ∈ ℝ^{d_e×ℓ},
one column per token) and checked against a second, ROW-convention implementation built from
torch.nn.functional (linear, layer_norm, gelu, softmax); the two must agree to 1e-12, and every
gradient (autograd through each) to 1e-10, before anything is written. Post-LN, as printed:
  X ← X + MHAttention(X | W_l, Mask ≡ 1); LN(γ¹,β¹); X ← X + W_mlp2 GELU(W_mlp1 X + b_mlp1) + b_mlp2;
  LN(γ²,β²); then X ← GELU(W_f X + b_f 1ᵀ) (d_f rows), LN(γ,β) with γ, β ∈ ℝ^{d_f}, P = softmax(W_u X).
W_u is N_V×d_f (the paper prints N_V×d_e, a slip; d_f ≠ d_e here on purpose). GELU is the exact
erf form; layer_norm divides by √(v + ε), ε = float32(1e-5). Parameters are float32 values used
in float64 (f32), so a C++ float θ holds exactly the same parameters.

JSON layout (tokens are 1-based ids; N_V = len(vocab)+3 = 13, mask_token 11, bos 12, eos 13):
  "about"   a sentence
  "config"  {"arch":"bert","L","H","d_e","d_attn","d_mid","d_mlp","d_f","l_max","eps","position_init","vocab"}
  "params"  {name: {"shape": [...], "data": nested row-major lists}}, names:
            W_e [d_e,N_V], W_p [d_e,l_max],
            layer{l}.attn.{W_q [H,d_attn,d_e], b_q [H,d_attn], W_k [H,d_attn,d_e], b_k [H,d_attn],
                           W_v [H,d_mid,d_e], b_v [H,d_mid], W_o [d_e,H·d_mid], b_o [d_e]},
            layer{l}.{gamma1,beta1,gamma2,beta2} [d_e], layer{l}.W_mlp1 [d_mlp,d_e], b_mlp1 [d_mlp],
            layer{l}.W_mlp2 [d_e,d_mlp], b_mlp2 [d_e];  W_f [d_f,d_e], b_f [d_f], gamma, beta [d_f],
            W_u [N_V,d_f]
  "forward" {"tokens": [...],
             "X0": d_e×ℓ (line 3),
             "layers": [ per layer l = 1..L:
                {"heads": [per head h: {"Q": d_attn×ℓ, "K": d_attn×ℓ, "V": d_mid×ℓ, "S": ℓ×ℓ (KᵀQ,
                                        unscaled, unmasked), "A": ℓ×ℓ, "Y": d_mid×ℓ}],
                 "Y": (H·d_mid)×ℓ, "mha": d_e×ℓ (W_o Y + b_o), "X_after_attn" (line 5),
                 "X_ln1" (line 6), "mlp_pre": d_mlp×ℓ, "mlp_gelu": d_mlp×ℓ, "X_after_mlp" (line 7),
                 "X_ln2" (line 8)} ],
             "head_pre": d_f×ℓ (W_f X + b_f 1ᵀ), "head_gelu": d_f×ℓ (line 10),
             "X_final": d_f×ℓ (line 11), "logits": N_V×ℓ (W_u X), "P": N_V×ℓ (line 12)}
  "grads"   {"single": case, "batch": case}; a case is
            {"sequences": [x̃_n] the MASKED inputs (1-based ids),
             "targets": [same shapes]: x_n[t] at masked positions t ∈ T̃ (x̃_n[t] = mask_token), 0 elsewhere,
             "reduction": "sum" | "mean", "loss": number, "grads": keyed and shaped like "params"}
            "single": one sequence, loss = −Σ_{t∈T̃} log P[x[t], t] (Algorithm 12 line 9);
            "batch": three sequences of lengths 3, 5, 7, the mean of −log P[x_n[t], t] over all masked
            positions of all sequences; each sequence is run alone (no padding).
"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ref_common as rc  # noqa: E402

torch.set_default_dtype(torch.float64)

CONFIG = {
    "arch": "bert",
    "L": 2,
    "H": 2,
    "d_e": 8,
    "d_attn": 4,
    "d_mid": 3,  # ≠ d_attn on purpose
    "d_mlp": 16,
    "d_f": 6,  # ≠ d_e on purpose: W_u must be N_V×d_f
    "l_max": 8,
    "eps": 1e-5,
    "position_init": "learned",
    "vocab": list("abcdefghij"),
}
N_V = len(CONFIG["vocab"]) + 3  # 13
MASK, BOS, EOS = N_V - 2, N_V - 1, N_V  # 11, 12, 13
assert float(np.float32(CONFIG["eps"])) == rc.EPS

# Forward: one sequence containing a mask_token.
TOKENS = [BOS, 1, MASK, 3, 10, 2, EOS]

# Gradient cases: (original x, masked x̃). Targets are derived: x[t] where x̃[t] = mask_token.
CASES = {
    "single": {"pairs": [([BOS, 1, 5, 3, 10, 2, EOS], [BOS, 1, MASK, 3, MASK, 2, EOS])], "reduction": "sum"},
    "batch": {"pairs": [([BOS, 7, EOS], [BOS, MASK, EOS]),
                        ([BOS, 4, 4, 9, EOS], [BOS, 4, MASK, MASK, EOS]),
                        ([BOS, 2, 7, 1, 6, 3, EOS], [BOS, 2, 7, MASK, 6, 3, MASK])],
              "reduction": "mean"},
}


def make_params(gen):
    c = CONFIG
    d_e, H, d_attn, d_mid, d_mlp, d_f = c["d_e"], c["H"], c["d_attn"], c["d_mid"], c["d_mlp"], c["d_f"]
    randn = rc.randn_factory(gen)
    p = {}
    p["W_e"] = randn(d_e, N_V)
    p["W_p"] = randn(d_e, c["l_max"], std=0.5)
    for l in range(1, c["L"] + 1):
        q = f"layer{l}."
        rc.attention_params(p, q + "attn", randn, H, d_attn, d_mid, d_e, d_e, d_e)
        p[q + "gamma1"] = randn(d_e, mean=1.0, std=0.2)
        p[q + "beta1"] = randn(d_e, std=0.2)
        p[q + "gamma2"] = randn(d_e, mean=1.0, std=0.2)
        p[q + "beta2"] = randn(d_e, std=0.2)
        p[q + "W_mlp1"] = randn(d_mlp, d_e, std=0.5)
        p[q + "b_mlp1"] = randn(d_mlp, std=0.2)
        p[q + "W_mlp2"] = randn(d_e, d_mlp, std=0.3)
        p[q + "b_mlp2"] = randn(d_e, std=0.2)
    p["W_f"] = randn(d_f, d_e, std=0.5)
    p["b_f"] = randn(d_f, std=0.2)
    p["gamma"] = randn(d_f, mean=1.0, std=0.2)
    p["beta"] = randn(d_f, std=0.2)
    p["W_u"] = randn(N_V, d_f, std=0.7)
    return p


# ---- Column convention, from the paper's equations --------------------------------------------


def forward_columns(p, x):
    c = CONFIG
    ell = len(x)
    out = {"tokens": list(x), "layers": []}
    # Lines 2–3: e_t = W_e[:, x[t]] + W_p[:, t]   (ids 1-based)
    X = torch.stack([p["W_e"][:, x[t] - 1] + p["W_p"][:, t] for t in range(ell)], dim=1)
    out["X0"] = X
    for l in range(1, c["L"] + 1):
        q = f"layer{l}."
        mha, Y, heads = rc.mh_attention_columns(p, q + "attn", X, X, None, c["d_attn"])  # Mask ≡ 1
        rec = {"heads": heads, "Y": Y, "mha": mha}
        X = X + mha  # line 5
        rec["X_after_attn"] = X
        X = rc.layer_norm_columns(X, p[q + "gamma1"], p[q + "beta1"])  # line 6
        rec["X_ln1"] = X
        pre = p[q + "W_mlp1"] @ X + p[q + "b_mlp1"][:, None]  # line 7
        act = rc.gelu(pre)
        X = X + p[q + "W_mlp2"] @ act + p[q + "b_mlp2"][:, None]
        rec["mlp_pre"], rec["mlp_gelu"], rec["X_after_mlp"] = pre, act, X
        X = rc.layer_norm_columns(X, p[q + "gamma2"], p[q + "beta2"])  # line 8
        rec["X_ln2"] = X
        out["layers"].append(rec)
    pre = p["W_f"] @ X + p["b_f"][:, None]  # line 10
    X = rc.gelu(pre)
    out["head_pre"], out["head_gelu"] = pre, X
    X = rc.layer_norm_columns(X, p["gamma"], p["beta"])  # line 11
    out["X_final"] = X
    logits = p["W_u"] @ X  # line 12
    out["logits"] = logits
    out["P"] = rc.softmax_columns(logits)
    return out


# ---- Row convention with torch.nn.functional, as a check of the above -------------------------


def forward_rows(p, x):
    c = CONFIG
    d_e, d_f = c["d_e"], c["d_f"]
    ell = len(x)
    X = F.embedding(torch.tensor(x) - 1, p["W_e"].T) + p["W_p"].T[:ell]  # (ℓ, d_e)
    for l in range(1, c["L"] + 1):
        q = f"layer{l}."
        X = X + rc.mh_attention_rows(p, q + "attn", X, X, False, c["d_attn"])
        X = F.layer_norm(X, (d_e,), p[q + "gamma1"], p[q + "beta1"], eps=rc.EPS)
        h = F.gelu(F.linear(X, p[q + "W_mlp1"], p[q + "b_mlp1"]))
        X = X + F.linear(h, p[q + "W_mlp2"], p[q + "b_mlp2"])
        X = F.layer_norm(X, (d_e,), p[q + "gamma2"], p[q + "beta2"], eps=rc.EPS)
    X = F.gelu(F.linear(X, p["W_f"], p["b_f"]))
    X = F.layer_norm(X, (d_f,), p["gamma"], p["beta"], eps=rc.EPS)
    return F.softmax(F.linear(X, p["W_u"]), dim=-1)  # (ℓ, N_V)


# ---- Masked-LM loss (Algorithm 12 line 9) -------------------------------------------------------


def targets_of(x, x_masked):
    """x[t] at the positions T̃ = {t : x̃[t] = mask_token}, 0 elsewhere."""
    return [xt if xm == MASK else 0 for xt, xm in zip(x, x_masked)]


def loss_columns(p, sequences, targets, reduction):
    total, count = 0.0, 0
    for xm, tg in zip(sequences, targets):
        P = forward_columns(p, xm)["P"]  # (N_V, ℓ)
        for t in range(len(xm)):
            if tg[t]:
                total = total - torch.log(P[tg[t] - 1, t])
                count += 1
    return total / count if reduction == "mean" else total


def loss_rows(p, sequences, targets, reduction):
    total, count = 0.0, 0
    for xm, tg in zip(sequences, targets):
        logp = torch.log(forward_rows(p, xm))  # (ℓ, N_V)
        tg = torch.tensor(tg)
        pos = (tg > 0).nonzero().flatten()
        total = total + F.nll_loss(logp[pos], tg[pos] - 1, reduction="sum")
        count += len(pos)
    return total / count if reduction == "mean" else total


def encode_forward(ref):
    doc = {"tokens": ref["tokens"], "X0": rc.to_list(ref["X0"]), "layers": []}
    for rec in ref["layers"]:
        layer = {"heads": [{k: rc.to_list(v) for k, v in hd.items()} for hd in rec["heads"]]}
        for k in ("Y", "mha", "X_after_attn", "X_ln1", "mlp_pre", "mlp_gelu", "X_after_mlp", "X_ln2"):
            layer[k] = rc.to_list(rec[k])
        doc["layers"].append(layer)
    for k in ("head_pre", "head_gelu", "X_final", "logits", "P"):
        doc[k] = rc.to_list(ref[k])
    return doc


def main():
    gen = torch.Generator().manual_seed(20220719)
    p = make_params(gen)
    assert MASK in TOKENS and len(TOKENS) <= CONFIG["l_max"]
    ref = forward_columns(p, TOKENS)
    P_rows = forward_rows(p, TOKENS)
    fwd_diff = (ref["P"] - P_rows.T).abs().max().item()
    assert fwd_diff < 1e-12, f"column and row implementations disagree by {fwd_diff}"
    assert torch.allclose(ref["P"].sum(dim=0), torch.ones(len(TOKENS)), atol=1e-12)
    assert ref["X_final"].shape == (CONFIG["d_f"], len(TOKENS))

    doc = {
        "about": "Algorithm 9 (ETransformer, BERT) and Algorithm 12's masked-LM loss with its gradient, "
                 "float64, by tests/reference/gen_bert_reference.py; matrices rows x columns (tokens are "
                 "columns), row-major nested lists; token ids 1-based; -inf as \"-inf\".",
        "config": CONFIG,
        "params": {k: rc.tensor_json(v) for k, v in p.items()},
        "forward": encode_forward(ref),
        "grads": {},
    }
    worst_grad, worst_loss = 0.0, 0.0
    for name, case in CASES.items():
        seqs = [xm for _, xm in case["pairs"]]
        tgts = [targets_of(x, xm) for x, xm in case["pairs"]]
        for (x, xm), tg in zip(case["pairs"], tgts):
            assert len(x) == len(xm) <= CONFIG["l_max"] and any(tg), (x, xm)
            assert all(a == b for a, b, m in zip(x, xm, xm) if m != MASK), (x, xm)
        loss, g = rc.autograd_grads(p, lambda q: loss_columns(q, seqs, tgts, case["reduction"]))
        loss_r, g_r = rc.autograd_grads(p, lambda q: loss_rows(q, seqs, tgts, case["reduction"]))
        assert abs(loss - loss_r) < 1e-10 * abs(loss), (loss, loss_r)
        worst_loss = max(worst_loss, abs(loss - loss_r))
        worst_grad = max(worst_grad, rc.compare_grads(name, g, g_r))
        doc["grads"][name] = {
            "sequences": seqs,
            "targets": tgts,
            "reduction": case["reduction"],
            "loss": loss,
            "grads": {k: rc.tensor_json(v) for k, v in g.items()},
        }
    path = rc.write_json(doc, "bert_reference.json")
    print(f"wrote {path} ({os.path.getsize(path)} bytes); column vs row: P {fwd_diff:.1e}, "
          f"loss {worst_loss:.1e}, grads {worst_grad:.1e}")


if __name__ == "__main__":
    main()
