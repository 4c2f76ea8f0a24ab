#!/usr/bin/python3
"""Writes tests/data/ed_reference.json: Algorithm 8 (EDTransformer, encoder-decoder) and the
seq2seq loss of Algorithm 11 with its gradient for every parameter, computed in float64 with
PyTorch, independently of the C++ core.

Regenerate (from the repository root; needs torch and numpy, e.g. /usr/bin/python3):
    /usr/bin/python3 tests/reference/gen_ed_reference.py
The output is deterministic (fixed seed).

The forward pass is written from the paper's equations in its COLUMN convention (Z ∈ ℝ^{d_e×ℓ_z},
X ∈ ℝ^{d_e×ℓ_x}, one column per token) and checked against a second, ROW-convention
implementation built from torch.nn.functional (linear, layer_norm, relu, softmax, a tril causal
mask); the two must agree to 1e-12, and every gradient (autograd through each) to 1e-10, before
anything is written. Post-LN, as printed:
  encoder  Z ← Z + MHAttention(Z | W^enc_l, Mask ≡ 1); LN(γ¹,β¹); Z ← Z + W_mlp2 ReLU(W_mlp1 Z + b_mlp1) + b_mlp2; LN(γ²,β²)
  decoder  X ← X + MHAttention(X | W^dec_l, Mask[t_z,t_x] = [[t_z ≤ t_x]]); LN(γ³,β³);
           X ← X + MHAttention(X, Z | W^ed_l, Mask ≡ 1) (queries from X, keys/values from Z); LN(γ⁴,β⁴);
           X ← X + W_mlp4 ReLU(W_mlp3 X + b_mlp3) + b_mlp4; LN(γ⁵,β⁵)
  P = softmax(W_u X).
Scores are KᵀQ / √d_attn, softmax over each column; layer_norm divides by √(v + ε), ε = float32(1e-5).
Parameters are float32 values used in float64 (f32), so a C++ float θ holds exactly the same ones.

JSON layout (tokens are 1-based ids; N_V = len(vocab)+3 = 13, mask_token 11, bos 12, eos 13):
  "about"   a sentence
  "config"  {"arch":"ed","L_enc","L_dec","H","d_e","d_attn","d_mid","d_mlp","l_max","eps","position_init","vocab"}
  "params"  {name: {"shape": [...], "data": nested row-major lists}}, names:
            W_e [d_e,N_V], W_p [d_e,l_max],
            enc.layer{l}.attn.* (8 tensors, below), enc.layer{l}.{gamma1,beta1,gamma2,beta2} [d_e],
            enc.layer{l}.W_mlp1 [d_mlp,d_e], b_mlp1 [d_mlp], W_mlp2 [d_e,d_mlp], b_mlp2 [d_e];
            dec.layer{l}.self_attn.* (8), dec.layer{l}.cross_attn.* (8; W_q acts on X, W_k and W_v on Z),
            dec.layer{l}.{gamma3,beta3,gamma4,beta4,gamma5,beta5} [d_e],
            dec.layer{l}.W_mlp3 [d_mlp,d_e], b_mlp3 [d_mlp], W_mlp4 [d_e,d_mlp], b_mlp4 [d_e];
            W_u [N_V,d_e].
            An attention block PREFIX has PREFIX.W_q [H,d_attn,d_e], b_q [H,d_attn], W_k [H,d_attn,d_e],
            b_k [H,d_attn], W_v [H,d_mid,d_e], b_v [H,d_mid], W_o [d_e,H·d_mid], b_o [d_e].
  "forward" {"z": [...], "x": [...],
             "Z0": d_e×ℓ_z (line 3),
             "encoder_layers": [ per l: {"heads": [per head {"Q": d_attn×ℓ_z, "K": d_attn×ℓ_z, "V": d_mid×ℓ_z,
                                   "S": ℓ_z×ℓ_z (KᵀQ, unscaled), "A": ℓ_z×ℓ_z, "Y": d_mid×ℓ_z}],
                                 "Y": (H·d_mid)×ℓ_z, "mha", "Z_after_attn" (line 5), "Z_ln1" (line 6),
                                 "mlp_pre": d_mlp×ℓ_z, "mlp_relu", "Z_after_mlp" (line 7), "Z_ln2" (line 8)} ],
             "Z_final": d_e×ℓ_z (the encoder's output, = last Z_ln2),
             "X0": d_e×ℓ_x (line 12),
             "decoder_layers": [ per l: {
                 "self_heads": [per head {"Q","K": d_attn×ℓ_x, "V": d_mid×ℓ_x, "S": ℓ_x×ℓ_x (unmasked),
                                "S_masked": S with "-inf" where t_z > t_x, "A": ℓ_x×ℓ_x, "Y": d_mid×ℓ_x}],
                 "self_Y", "self_mha", "X_after_self_attn" (line 14), "X_ln3" (line 15),
                 "cross_heads": [per head {"Q": d_attn×ℓ_x, "K": d_attn×ℓ_z, "V": d_mid×ℓ_z,
                                 "S": ℓ_z×ℓ_x, "A": ℓ_z×ℓ_x, "Y": d_mid×ℓ_x}],
                 "cross_Y", "cross_mha", "X_after_cross_attn" (line 16), "X_ln4" (line 17),
                 "mlp_pre": d_mlp×ℓ_x, "mlp_relu", "X_after_mlp" (line 18), "X_ln5" (line 19)} ],
             "X_final": d_e×ℓ_x (= last X_ln5), "logits": N_V×ℓ_x (W_u X), "P": N_V×ℓ_x (line 21)}
  "grads"   {"single": case, "batch": case}; a case is
            {"pairs": [{"z": [...], "x": [...]}, …], "reduction": "sum" | "mean", "loss": number,
             "grads": keyed and shaped like "params"}
            "single": one pair, loss = −Σ_{t=1}^{ℓ_x−1} log P[x[t+1], t] (Algorithm 11 line 5);
            "batch": three pairs with different ℓ_z and ℓ_x, the mean of −log P[x_n[t+1], t] over all
            predicted tokens of all pairs; each pair is run alone (no padding).
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
    "arch": "ed",
    "L_enc": 2,
    "L_dec": 2,
    "H": 2,
    "d_e": 8,
    "d_attn": 4,
    "d_mid": 3,  # ≠ d_attn on purpose
    "d_mlp": 16,
    "l_max": 8,
    "eps": 1e-5,
    "position_init": "learned",
    "vocab": list("abcdefghij"),
}
N_V = len(CONFIG["vocab"]) + 3  # 13
BOS, EOS = N_V - 1, N_V  # 12, 13
assert float(np.float32(CONFIG["eps"])) == rc.EPS

# Forward: context and primary sequences of different lengths.
Z_TOKENS = [BOS, 3, 1, 4, EOS]
X_TOKENS = [BOS, 5, 9, 2, 6, EOS]

CASES = {
    "single": {"pairs": [{"z": Z_TOKENS, "x": X_TOKENS}], "reduction": "sum"},
    "batch": {"pairs": [{"z": [BOS, 2, EOS], "x": [BOS, 7, 8, EOS]},
                        {"z": [BOS, 6, 6, 1, 9, 10, EOS], "x": [BOS, 4, EOS]},
                        {"z": [BOS, 8, 3, 7, EOS], "x": [BOS, 1, 2, 3, 4, 5, 6, EOS]}],
              "reduction": "mean"},
}


def make_params(gen):
    c = CONFIG
    d_e, H, d_attn, d_mid, d_mlp = c["d_e"], c["H"], c["d_attn"], c["d_mid"], c["d_mlp"]
    randn = rc.randn_factory(gen)
    p = {}
    p["W_e"] = randn(d_e, N_V)
    p["W_p"] = randn(d_e, c["l_max"], std=0.5)
    for l in range(1, c["L_enc"] + 1):
        q = f"enc.layer{l}."
        rc.attention_params(p, q + "attn", randn, H, d_attn, d_mid, d_e, d_e, d_e)
        for i in (1, 2):
            p[q + f"gamma{i}"] = randn(d_e, mean=1.0, std=0.2)
            p[q + f"beta{i}"] = randn(d_e, std=0.2)
        p[q + "W_mlp1"] = randn(d_mlp, d_e, std=0.5)
        p[q + "b_mlp1"] = randn(d_mlp, std=0.2)
        p[q + "W_mlp2"] = randn(d_e, d_mlp, std=0.3)
        p[q + "b_mlp2"] = randn(d_e, std=0.2)
    for l in range(1, c["L_dec"] + 1):
        q = f"dec.layer{l}."
        rc.attention_params(p, q + "self_attn", randn, H, d_attn, d_mid, d_e, d_e, d_e)
        rc.attention_params(p, q + "cross_attn", randn, H, d_attn, d_mid, d_e, d_e, d_e)
        for i in (3, 4, 5):
            p[q + f"gamma{i}"] = randn(d_e, mean=1.0, std=0.2)
            p[q + f"beta{i}"] = randn(d_e, std=0.2)
        p[q + "W_mlp3"] = randn(d_mlp, d_e, std=0.5)
        p[q + "b_mlp3"] = randn(d_mlp, std=0.2)
        p[q + "W_mlp4"] = randn(d_e, d_mlp, std=0.3)
        p[q + "b_mlp4"] = randn(d_e, std=0.2)
    p["W_u"] = randn(N_V, d_e, std=0.7)
    return p


# ---- Column convention, from the paper's equations --------------------------------------------


def embed_columns(p, tokens):
    """e_t = W_e[:, v[t]] + W_p[:, t], stacked as columns (ids 1-based)."""
    return torch.stack([p["W_e"][:, v - 1] + p["W_p"][:, t] for t, v in enumerate(tokens)], dim=1)


def forward_columns(p, z, x):
    c = CONFIG
    d_attn = c["d_attn"]
    out = {"z": list(z), "x": list(x), "encoder_layers": [], "decoder_layers": []}
    # Encoder, lines 1–9.
    Z = embed_columns(p, z)
    out["Z0"] = Z
    for l in range(1, c["L_enc"] + 1):
        q = f"enc.layer{l}."
        mha, Y, heads = rc.mh_attention_columns(p, q + "attn", Z, Z, None, d_attn)  # Mask ≡ 1
        rec = {"heads": heads, "Y": Y, "mha": mha}
        Z = Z + mha  # line 5
        rec["Z_after_attn"] = Z
        Z = rc.layer_norm_columns(Z, p[q + "gamma1"], p[q + "beta1"])  # line 6
        rec["Z_ln1"] = Z
        pre = p[q + "W_mlp1"] @ Z + p[q + "b_mlp1"][:, None]  # line 7
        act = rc.relu(pre)
        Z = Z + p[q + "W_mlp2"] @ act + p[q + "b_mlp2"][:, None]
        rec["mlp_pre"], rec["mlp_relu"], rec["Z_after_mlp"] = pre, act, Z
        Z = rc.layer_norm_columns(Z, p[q + "gamma2"], p[q + "beta2"])  # line 8
        rec["Z_ln2"] = Z
        out["encoder_layers"].append(rec)
    out["Z_final"] = Z
    # Decoder, lines 10–20.
    ell_x = len(x)
    X = embed_columns(p, x)
    out["X0"] = X
    causal = torch.tensor([[tz <= tx for tx in range(ell_x)] for tz in range(ell_x)])  # [[t_z ≤ t_x]]
    for l in range(1, c["L_dec"] + 1):
        q = f"dec.layer{l}."
        rec = {}
        mha, Y, heads = rc.mh_attention_columns(p, q + "self_attn", X, X, causal, d_attn)
        rec["self_heads"], rec["self_Y"], rec["self_mha"] = heads, Y, mha
        X = X + mha  # line 14
        rec["X_after_self_attn"] = X
        X = rc.layer_norm_columns(X, p[q + "gamma3"], p[q + "beta3"])  # line 15
        rec["X_ln3"] = X
        mha, Y, heads = rc.mh_attention_columns(p, q + "cross_attn", X, Z, None, d_attn)  # queries X, keys Z
        rec["cross_heads"], rec["cross_Y"], rec["cross_mha"] = heads, Y, mha
        X = X + mha  # line 16
        rec["X_after_cross_attn"] = X
        X = rc.layer_norm_columns(X, p[q + "gamma4"], p[q + "beta4"])  # line 17
        rec["X_ln4"] = X
        pre = p[q + "W_mlp3"] @ X + p[q + "b_mlp3"][:, None]  # line 18
        act = rc.relu(pre)
        X = X + p[q + "W_mlp4"] @ act + p[q + "b_mlp4"][:, None]
        rec["mlp_pre"], rec["mlp_relu"], rec["X_after_mlp"] = pre, act, X
        X = rc.layer_norm_columns(X, p[q + "gamma5"], p[q + "beta5"])  # line 19
        rec["X_ln5"] = X
        out["decoder_layers"].append(rec)
    out["X_final"] = X
    logits = p["W_u"] @ X  # line 21
    out["logits"] = logits
    out["P"] = rc.softmax_columns(logits)
    return out


# ---- Row convention with torch.nn.functional, as a check of the above -------------------------


def forward_rows(p, z, x):
    """Returns (P (ℓ_x, N_V), Z (ℓ_z, d_e))."""
    c = CONFIG
    d_e, d_attn = c["d_e"], c["d_attn"]

    def ln(A, q, i):  # layer_norm(· | γ^i, β^i) over each row
        return F.layer_norm(A, (d_e,), p[q + f"gamma{i}"], p[q + f"beta{i}"], eps=rc.EPS)

    Z = F.embedding(torch.tensor(z) - 1, p["W_e"].T) + p["W_p"].T[:len(z)]
    for l in range(1, c["L_enc"] + 1):
        q = f"enc.layer{l}."
        Z = ln(Z + rc.mh_attention_rows(p, q + "attn", Z, Z, False, d_attn), q, 1)
        h = F.relu(F.linear(Z, p[q + "W_mlp1"], p[q + "b_mlp1"]))
        Z = ln(Z + F.linear(h, p[q + "W_mlp2"], p[q + "b_mlp2"]), q, 2)
    X = F.embedding(torch.tensor(x) - 1, p["W_e"].T) + p["W_p"].T[:len(x)]
    for l in range(1, c["L_dec"] + 1):
        q = f"dec.layer{l}."
        X = ln(X + rc.mh_attention_rows(p, q + "self_attn", X, X, True, d_attn), q, 3)
        X = ln(X + rc.mh_attention_rows(p, q + "cross_attn", X, Z, False, d_attn), q, 4)
        h = F.relu(F.linear(X, p[q + "W_mlp3"], p[q + "b_mlp3"]))
        X = ln(X + F.linear(h, p[q + "W_mlp4"], p[q + "b_mlp4"]), q, 5)
    return F.softmax(F.linear(X, p["W_u"]), dim=-1), Z


# ---- Seq2seq loss (Algorithm 11 line 5) ---------------------------------------------------------


def loss_columns(p, pairs, reduction):
    total, count = 0.0, 0
    for pr in pairs:
        x = pr["x"]
        P = forward_columns(p, pr["z"], x)["P"]  # (N_V, ℓ_x)
        for t in range(len(x) - 1):
            total = total - torch.log(P[x[t + 1] - 1, t])
            count += 1
    return total / count if reduction == "mean" else total


def loss_rows(p, pairs, reduction):
    total, count = 0.0, 0
    for pr in pairs:
        x = pr["x"]
        P, _ = forward_rows(p, pr["z"], x)
        total = total + F.nll_loss(torch.log(P[:-1]), torch.tensor(x[1:]) - 1, reduction="sum")
        count += len(x) - 1
    return total / count if reduction == "mean" else total


def encode_forward(ref):
    L = rc.to_list
    doc = {"z": ref["z"], "x": ref["x"], "Z0": L(ref["Z0"]), "encoder_layers": []}
    for rec in ref["encoder_layers"]:
        layer = {"heads": [{k: L(v) for k, v in hd.items()} for hd in rec["heads"]]}
        for k in ("Y", "mha", "Z_after_attn", "Z_ln1", "mlp_pre", "mlp_relu", "Z_after_mlp", "Z_ln2"):
            layer[k] = L(rec[k])
        doc["encoder_layers"].append(layer)
    doc["Z_final"] = L(ref["Z_final"])
    doc["X0"] = L(ref["X0"])
    doc["decoder_layers"] = []
    for rec in ref["decoder_layers"]:
        layer = {}
        for k in ("self_heads", "self_Y", "self_mha", "X_after_self_attn", "X_ln3",
                  "cross_heads", "cross_Y", "cross_mha", "X_after_cross_attn", "X_ln4",
                  "mlp_pre", "mlp_relu", "X_after_mlp", "X_ln5"):
            v = rec[k]
            layer[k] = [{n: L(u) for n, u in hd.items()} for hd in v] if k.endswith("heads") else L(v)
        doc["decoder_layers"].append(layer)
    for k in ("X_final", "logits", "P"):
        doc[k] = L(ref[k])
    return doc


def main():
    gen = torch.Generator().manual_seed(20220719)
    p = make_params(gen)
    ref = forward_columns(p, Z_TOKENS, X_TOKENS)
    P_rows, Z_rows = forward_rows(p, Z_TOKENS, X_TOKENS)
    fwd_diff = max((ref["P"] - P_rows.T).abs().max().item(), (ref["Z_final"] - Z_rows.T).abs().max().item())
    assert fwd_diff < 1e-12, f"column and row implementations disagree by {fwd_diff}"
    assert torch.allclose(ref["P"].sum(dim=0), torch.ones(len(X_TOKENS)), atol=1e-12)
    cross = ref["decoder_layers"][0]["cross_heads"][0]
    assert cross["S"].shape == (len(Z_TOKENS), len(X_TOKENS)) and cross["Q"].shape[1] == len(X_TOKENS)

    doc = {
        "about": "Algorithm 8 (EDTransformer) and Algorithm 11's loss with its gradient, float64, by "
                 "tests/reference/gen_ed_reference.py; matrices rows x columns (tokens are columns), "
                 "row-major nested lists; token ids 1-based; -inf as \"-inf\".",
        "config": CONFIG,
        "params": {k: rc.tensor_json(v) for k, v in p.items()},
        "forward": encode_forward(ref),
        "grads": {},
    }
    worst_grad, worst_loss = 0.0, 0.0
    for name, case in CASES.items():
        pairs = case["pairs"]
        for pr in pairs:
            assert 1 <= len(pr["z"]) <= CONFIG["l_max"] and 2 <= len(pr["x"]) <= CONFIG["l_max"], pr
        loss, g = rc.autograd_grads(p, lambda q: loss_columns(q, pairs, case["reduction"]))
        loss_r, g_r = rc.autograd_grads(p, lambda q: loss_rows(q, pairs, case["reduction"]))
        assert abs(loss - loss_r) < 1e-10 * abs(loss), (loss, loss_r)
        worst_loss = max(worst_loss, abs(loss - loss_r))
        worst_grad = max(worst_grad, rc.compare_grads(name, g, g_r))
        doc["grads"][name] = {
            "pairs": pairs,
            "reduction": case["reduction"],
            "loss": loss,
            "grads": {k: rc.tensor_json(v) for k, v in g.items()},
        }
    path = rc.write_json(doc, "ed_reference.json")
    print(f"wrote {path} ({os.path.getsize(path)} bytes); column vs row: P and Z {fwd_diff:.1e}, "
          f"loss {worst_loss:.1e}, grads {worst_grad:.1e}")


if __name__ == "__main__":
    main()
