#!/usr/bin/python3
"""Writes tests/data/vit_reference.json: the vision transformer (arch "vit", not in the paper:
the encyclopedia article, seed 004, and Dosovitskiy et al.) = Algorithm 9 on patch tokens, and its
class-token loss with the gradient of every parameter, in float64 with PyTorch, independently of
the C++ core.

Regenerate (from the repository root; needs torch and numpy, e.g. /usr/bin/python3):
    /usr/bin/python3 tests/reference/gen_vit_reference.py
Deterministic (fixed seed; the images are drawn from it too, so no data file is needed).

Line 2 for images: the 8×8 image (intensities 0..16, /16) is cut into p×p patches row by row, each
patch's p² pixels row by row; X = [e_cls, W_patch p_1 + b_patch, …] + W_p. Lines 3–12 are Algorithm
9's as in gen_bert_reference.py (post-LN; W_f, b_f; γ, β ∈ ℝ^{d_f}), then P = softmax(W_u X + b_u 1ᵀ)
over the 10 classes. The loss is Σ_b −log P_b[class_b, 1]. The column implementation (from the
equations) is checked against a row one (torch's unfold cuts the patches, torch.nn.functional
computes the layers) to 1e-12 in P and 1e-10 in every gradient before anything is written.

JSON: "config" (arch vit, patch = 4 and a "patch2" case), "params" {name: {shape, data}},
"images" [[64 ints]], "labels" [class ids 1..10], "forward" {"X0": d_e×ℓ_x, "P": 10×ℓ_x} for image 1,
"grads" {"loss", "grads" keyed like params} for the batch of all images (summed loss); "patch2" holds
the same for p = 2 (its own config, params, forward and grads).
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ref_common as rc  # noqa: E402

torch.set_default_dtype(torch.float64)


def config(patch):
    return {"arch": "vit", "patch": patch, "L": 2, "H": 2, "d_e": 8, "d_attn": 4, "d_mid": 3, "d_mlp": 12,
            "d_f": 5, "l_max": 1 + (8 // patch) ** 2, "eps": 1e-5, "vocab": [str(k) for k in range(10)]}


def make_params(gen, c):
    randn = rc.randn_factory(gen)
    d_e, p2, ell = c["d_e"], c["patch"] ** 2, c["l_max"]
    p = {"W_patch": randn(d_e, p2, std=0.5), "b_patch": randn(d_e, std=0.2), "e_cls": randn(d_e, 1, std=0.5),
         "W_p": randn(d_e, ell, std=0.5)}
    for l in range(1, c["L"] + 1):
        q = f"layer{l}."
        rc.attention_params(p, q + "attn", randn, c["H"], c["d_attn"], c["d_mid"], d_e, d_e, d_e)
        p[q + "gamma1"] = randn(d_e, mean=1.0, std=0.2)
        p[q + "beta1"] = randn(d_e, std=0.2)
        p[q + "gamma2"] = randn(d_e, mean=1.0, std=0.2)
        p[q + "beta2"] = randn(d_e, std=0.2)
        p[q + "W_mlp1"] = randn(c["d_mlp"], d_e, std=0.5)
        p[q + "b_mlp1"] = randn(c["d_mlp"], std=0.2)
        p[q + "W_mlp2"] = randn(d_e, c["d_mlp"], std=0.3)
        p[q + "b_mlp2"] = randn(d_e, std=0.2)
    p["W_f"] = randn(c["d_f"], d_e, std=0.5)
    p["b_f"] = randn(c["d_f"], std=0.2)
    p["gamma"] = randn(c["d_f"], mean=1.0, std=0.2)
    p["beta"] = randn(c["d_f"], std=0.2)
    p["W_u"] = randn(10, c["d_f"], std=0.7)
    p["b_u"] = randn(10, std=0.2)
    return p


def patches_columns(image, s):
    """(p², (8/p)²): column k the k-th patch row by row, its pixels row by row, / 16."""
    cols = []
    for br in range(8 // s):
        for bc in range(8 // s):
            cols.append([image[(br * s + i) * 8 + bc * s + j] / 16.0 for i in range(s) for j in range(s)])
    return torch.tensor(cols).T


def forward_columns(p, c, image):
    P = patches_columns(image, c["patch"])
    X = torch.cat([p["e_cls"], p["W_patch"] @ P + p["b_patch"][:, None]], dim=1) + p["W_p"]
    X0 = X
    for l in range(1, c["L"] + 1):
        q = f"layer{l}."
        X = X + rc.mh_attention_columns(p, q + "attn", X, X, None, c["d_attn"])[0]
        X = rc.layer_norm_columns(X, p[q + "gamma1"], p[q + "beta1"])
        X = X + p[q + "W_mlp2"] @ rc.gelu(p[q + "W_mlp1"] @ X + p[q + "b_mlp1"][:, None]) + p[q + "b_mlp2"][:, None]
        X = rc.layer_norm_columns(X, p[q + "gamma2"], p[q + "beta2"])
    X = rc.gelu(p["W_f"] @ X + p["b_f"][:, None])
    X = rc.layer_norm_columns(X, p["gamma"], p["beta"])
    return X0, rc.softmax_columns(p["W_u"] @ X + p["b_u"][:, None])


def forward_rows(p, c, image):
    s, d_e, d_f = c["patch"], c["d_e"], c["d_f"]
    img = torch.tensor(image, dtype=torch.float64).reshape(1, 1, 8, 8) / 16.0
    patches = F.unfold(img, kernel_size=s, stride=s)[0].T  # ((8/p)², p²), row-major patches
    X = torch.cat([p["e_cls"].T, F.linear(patches, p["W_patch"], p["b_patch"])]) + p["W_p"].T
    for l in range(1, c["L"] + 1):
        q = f"layer{l}."
        X = X + rc.mh_attention_rows(p, q + "attn", X, X, False, c["d_attn"])
        X = F.layer_norm(X, (d_e,), p[q + "gamma1"], p[q + "beta1"], eps=rc.EPS)
        X = X + F.linear(F.gelu(F.linear(X, p[q + "W_mlp1"], p[q + "b_mlp1"])), p[q + "W_mlp2"], p[q + "b_mlp2"])
        X = F.layer_norm(X, (d_e,), p[q + "gamma2"], p[q + "beta2"], eps=rc.EPS)
    X = F.layer_norm(F.gelu(F.linear(X, p["W_f"], p["b_f"])), (d_f,), p["gamma"], p["beta"], eps=rc.EPS)
    return F.softmax(F.linear(X, p["W_u"], p["b_u"]), dim=-1)  # (ℓ_x, 10)


def case(gen, patch, images, labels):
    c = config(patch)
    p = make_params(gen, c)
    X0, P = forward_columns(p, c, images[0])
    diff = (P - forward_rows(p, c, images[0]).T).abs().max().item()
    assert diff < 1e-12, f"patch {patch}: column and row implementations disagree by {diff}"

    def loss(q, fwd):  # fwd gives P as (ℓ_x, 10); the class token is row 0
        return sum(-torch.log(fwd(q, c, img)[0, y - 1]) for img, y in zip(images, labels))

    value, g = rc.autograd_grads(p, lambda q: loss(q, lambda q_, c_, img: forward_columns(q_, c_, img)[1].T))
    value_r, g_r = rc.autograd_grads(p, lambda q: loss(q, forward_rows))
    assert abs(value - value_r) < 1e-10 * abs(value), (value, value_r)
    rc.compare_grads(f"patch {patch}", g, g_r)
    return {"config": c, "params": {k: rc.tensor_json(v) for k, v in p.items()},
            "forward": {"X0": rc.to_list(X0), "P": rc.to_list(P)},
            "grads": {"loss": value, "grads": {k: rc.tensor_json(v) for k, v in g.items()}}}


def main():
    gen = torch.Generator().manual_seed(20240526)
    images = [torch.randint(0, 17, (64,), generator=gen).tolist() for _ in range(3)]
    labels = [3, 10, 1]  # class ids (class + 1)
    doc = {"about": "The vision transformer (Algorithm 9 on patch tokens) and its class-token loss with the "
                    "gradient, float64, by tests/reference/gen_vit_reference.py; matrices rows x columns.",
           "images": images, "labels": labels}
    doc.update(case(gen, 4, images, labels))
    doc["patch2"] = case(gen, 2, images, labels)
    path = rc.write_json(doc, "vit_reference.json")
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")


if __name__ == "__main__":
    main()
