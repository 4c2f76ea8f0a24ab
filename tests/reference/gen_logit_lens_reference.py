#!/usr/bin/python3
"""Writes tests/data/logit_lens_reference.json: the logit lens (an interpretation tool, not in the
paper; docs/interpretation.md) on small GPT, BERT and encoder-decoder models, in float64 with
PyTorch, independently of the C++ core: for every layer l = 0 … L (0: the embedding X^0) the lens
P^l = softmax(W_u head(X^l) + b_u 1ᵀ), where X^l is the residual stream after layer l of the
forward algorithm's layer loop and head is what the algorithm does after the loop with the model's
own weights (GPT: the final norm under pre-LN, nothing under post-LN; BERT: the pre-LN stack norm,
GELU(W_f X + b_f 1ᵀ), norm γ, β; the encoder-decoder's decoder: its pre-LN norm). P^L must be the
forward's P (checked here against gen_variants_reference's forward).

The model pieces (embedding, layers, norms, unembedding, parameter names and draws) are those of
tests/reference/gen_variants_reference.py, written from docs/variants.md and the paper.

Regenerate (from the repository root; needs torch, e.g. /usr/bin/python3):
    /usr/bin/python3 tests/reference/gen_logit_lens_reference.py

JSON layout: "cases" [ {"name", "what", "config" (C++ JSON keys), "params" (as in
variants_reference.json), "z" (ed only), "x", "lens": [P^0, …, P^L] each N_V×ℓ_x} ].
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_variants_reference as gv  # noqa: E402
import ref_common as rc  # noqa: E402

torch.set_default_dtype(torch.float64)

# (name, arch, variant keys and sizes, what): two layers each, so that the lens has a layer between.
CASES = [
    ("gpt", "gpt", {"L": 2}, "the paper's GPT (pre-LN): final norm γ, β before W_u"),
    ("gpt_post_ln", "gpt", {"L": 2, "norm_position": "post"}, "post-LN GPT: no final norm"),
    ("gpt_rms_tied_bias", "gpt", {"L": 2, "norm": "rms_norm", "tied_unembedding": True, "unembedding_bias": True},
     "RMSNorm final norm, W_u = W_eᵀ and b_u"),
    ("bert", "bert", {"L": 2, "d_f": 6}, "the paper's BERT (post-LN): GELU(W_f X + b_f), norm γ, β"),
    ("bert_pre_ln_extras", "bert", {"L": 2, "d_f": 6, "norm_position": "pre", "embedding_norm": True,
                                    "token_types": 2, "unembedding_bias": True},
     "pre-LN BERT with the checkpoint extras: γ_enc, β_enc first, b_u last"),
    ("ed", "ed", {"L_enc": 1, "L_dec": 2}, "the paper's encoder-decoder (post-LN): the decoder stack"),
    ("ed_pre_ln", "ed", {"L_enc": 1, "L_dec": 2, "norm_position": "pre"}, "pre-LN: γ_dec, β_dec before W_u"),
]


def gpt_stream(p, x, v):
    ell, mask = len(x), torch.tensor([[tz <= tx for tx in range(len(x))] for tz in range(len(x))])
    X = [gv.embed(p, x, v)]
    for l in range(1, v.L + 1):
        X.append(gv.encoder_layer(p, f"layer{l}.", X[-1], gv.windowed(mask, ell, v), v, "attn."))
    return X


def bert_stream(p, x, v):
    X = [gv.embed(p, x, v)]
    for l in range(1, v.L + 1):
        X.append(gv.encoder_layer(p, f"layer{l}.", X[-1], gv.windowed(None, len(x), v), v, "attn."))
    return X


def ed_stream(p, z, x, v):
    Z = gv.embed(p, z, v)
    for l in range(1, v.L_enc + 1):
        Z = gv.encoder_layer(p, f"enc.layer{l}.", Z, gv.windowed(None, len(z), v), v, "attn.")
    if v.pre:
        Z = gv.norm(p, "enc.#", Z, v)
    causal = torch.tensor([[tz <= tx for tx in range(len(x))] for tz in range(len(x))])
    X = [gv.embed(p, x, v)]
    for l in range(1, v.L_dec + 1):
        q, Xl = f"dec.layer{l}.", X[-1]
        if v.pre:
            Xl = Xl + gv.mh_attention(p, q + "self_attn.", *(2 * [gv.norm(p, q + "#3", Xl, v)]), causal, v, True)
            Xl = Xl + gv.mh_attention(p, q + "cross_attn.", gv.norm(p, q + "#4", Xl, v), Z, None, v, False)
            Xl = Xl + gv.mlp(p, q, gv.norm(p, q + "#5", Xl, v), v, 3, 4, "2")
        else:
            Xl = gv.norm(p, q + "#3", Xl + gv.mh_attention(p, q + "self_attn.", Xl, Xl, causal, v, True), v)
            Xl = gv.norm(p, q + "#4", Xl + gv.mh_attention(p, q + "cross_attn.", Xl, Z, None, v, False), v)
            Xl = gv.norm(p, q + "#5", Xl + gv.mlp(p, q, Xl, v, 3, 4, "2"), v)
        X.append(Xl)
    return X


def head(p, X, v):
    """What the forward algorithm does after its layer loop, then the unembedding."""
    if v.arch == "bert":
        if v.pre:
            X = gv.norm(p, "enc.#", X, v)
        X = gv.norm(p, "#", gv.activation("gelu", p["W_f"] @ X + p["b_f"][:, None]), v)
    elif v.pre:
        X = gv.norm(p, "dec.#" if v.arch == "ed" else "#", X, v)
    return gv.unembed(p, X, v)


def main():
    cases = []
    for seed, (name, arch, keys, what) in enumerate(CASES):
        cfg = {"arch": arch, **gv.SIZES, **keys}
        v = gv.Variant(cfg)
        p = gv.make_params(cfg, v, torch.Generator().manual_seed(20261100 + seed))
        z, x = (gv.ED_Z, gv.ED_X) if arch == "ed" else (None, gv.GPT_X)
        if arch == "bert":
            x = gv.bert_masked(gv.BERT_X, gv.BERT_POS)[0]
        stream = {"gpt": lambda: gpt_stream(p, x, v), "bert": lambda: bert_stream(p, x, v),
                  "ed": lambda: ed_stream(p, z, x, v)}[arch]()
        lens = [head(p, X, v) for X in stream]
        assert torch.allclose(lens[-1], gv.forward(p, v, z, x), atol=1e-14), name  # P^L is the forward's P
        per_head = {k for k in p if k.rsplit(".", 1)[-1] in ("W_q", "b_q", "W_k", "b_k", "W_v", "b_v")}
        params = {k: rc.tensor_json(t[0] if k in per_head and t.shape[0] == 1 else t) for k, t in p.items()}
        case = {"name": name, "what": what, "config": cfg, "params": params, "x": x,
                "lens": gv.rounded([rc.to_list(P) for P in lens])}
        if z:
            case["z"] = z
        cases.append(case)
    doc = {
        "about": "The logit lens P^l, l = 0 … L, on small GPT, BERT and encoder-decoder models, float64, by "
                 "tests/reference/gen_logit_lens_reference.py; matrices rows x columns (tokens are columns), "
                 "row-major nested lists; token ids 1-based.",
        "cases": cases,
    }
    path = rc.write_json(doc, "logit_lens_reference.json")
    print(f"wrote {path} ({os.path.getsize(path)} bytes), {len(cases)} cases")


if __name__ == "__main__":
    main()
