#!/usr/bin/python3
"""Writes tests/data/variants_reference.json: the variants of docs/variants.md (pre/post-LN,
RMSNorm, sinusoidal, RoPE, ALiBi and no positions, gelu_tanh, ReLU, SwiGLU, tied unembedding,
H_kv < H, the prefix-LM mask, issue 25's sliding window and T5's relative position bias, and the ecosystem extras of BERT checkpoints, not in the paper: the
token-type embedding W_s[:, 1], the embedding layer norm γ_emb, β_emb and the bias b_u on W_u) on
the paper's three transformers (Algorithms 8, 9 and 10), each
case with P and the gradient of a summed loss for every tensor, computed in float64 with
PyTorch autograd, independently of the C++ core (written from docs/variants.md and the paper).

Regenerate (from the repository root; needs torch, e.g. /usr/bin/python3):
    /usr/bin/python3 tests/reference/gen_variants_reference.py
The output is deterministic (fixed seed; each case draws from its own generator).

Conventions are the paper's: tokens are columns (X ∈ ℝ^{d_e×ℓ}), indices 1-based, scores
S[t_z, t_x] = K[:, t_z]ᵀ Q[:, t_x], softmax over each column, masked scores −∞. layer_norm and
RMSNorm divide by √(· + ε), ε = float32(1e-5). Parameters are float32 values used in float64.
Before anything is written, a few pieces are checked against a second formulation: RoPE as a
complex rotation, ALiBi's causal bias as the article's t_z − t_x, swiglu's SiLU as F.silu,
gelu_tanh as F.gelu(approximate="tanh"), layer_norm as F.layer_norm, and each case's P
columns sum to 1.

JSON layout (N_V = len(vocab) + 3; mask_token N_V−2, bos N_V−1, eos N_V):
  "about"  a sentence
  "cases"  [ {"name": "…", "what": "…",
              "config": the configuration in the C++ JSON keys (config_from_json accepts it),
              "params": {checkpoint name: {"shape", "data"}} with the checkpoint's shapes
                        (docs/checkpoint-format.md): matrices [rows, cols], vectors [rows],
                        per-head tensors [count, rows, cols] (biases [count, rows]) when count > 1
                        and [rows, cols] ([rows]) when count = 1 (e.g. W_k of H_kv = 1),
              "forward": {"z": [...] (ed only), "x": [...], "P": N_V×ℓ_x},
              "grads": {"sequences": [{"z" (ed only), "x", "targets"}, …],
                        "loss": Σ over the sequences and positions with targets[t] ≠ 0 of
                                −log P[targets[t], t],
                        "grads": keyed and shaped like "params"}} ]
           targets has one entry per position of x (0: no loss term there): GPT x[t+1] for
           t ≥ max(p, 1) (p the prefix length, 0 for a causal mask), the encoder-decoder x[t+1]
           for t < ℓ_x, BERT the original token at the masked positions of its input x.
"""
import math
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ref_common as rc  # noqa: E402

torch.set_default_dtype(torch.float64)

VOCAB = list("abcde=")
N_V = len(VOCAB) + 3  # 9
MASK, BOS, EOS = N_V - 2, N_V - 1, N_V  # 7, 8, 9
A, B, C, D, E, SEP = 1, 2, 3, 4, 5, 6

SIZES = {"H": 2, "d_e": 8, "d_attn": 4, "d_mid": 3, "d_mlp": 8, "l_max": 8, "eps": 1e-5, "vocab": VOCAB}
ARCH_SIZES = {"gpt": {"L": 1}, "bert": {"L": 1, "d_f": 6}, "ed": {"L_enc": 1, "L_dec": 1}}
PAPER = {"gpt": ("pre", "gelu"), "bert": ("post", "gelu"), "ed": ("post", "relu")}


# ---- The model, in the paper's column convention ------------------------------------------------


class Variant:
    """The configuration's choices, with the arch's paper defaults filled in."""

    def __init__(self, cfg):
        arch = cfg["arch"]
        self.arch = arch
        self.H = cfg["H"]
        self.H_kv = cfg.get("H_kv", cfg["H"])
        self.d_e, self.d_attn, self.d_mid, self.d_mlp = cfg["d_e"], cfg["d_attn"], cfg["d_mid"], cfg["d_mlp"]
        self.l_max = cfg["l_max"]
        self.pre = cfg.get("norm_position", PAPER[arch][0]) == "pre"
        self.rms = cfg.get("norm", "layer_norm") == "rms_norm"
        self.position = cfg.get("position", "learned")
        base = cfg.get("position_base", "l_max")
        self.position_base = self.l_max if base == "l_max" else base
        self.rope_base = cfg.get("rope_base", 10000)
        self.activation = cfg.get("activation", PAPER[arch][1])
        self.tied = cfg.get("tied_unembedding", False)
        self.prefix = cfg.get("mask", "causal") == "prefix"
        self.separator = VOCAB.index(cfg.get("prefix_separator", "=")) + 1
        self.L, self.L_enc, self.L_dec = cfg.get("L", 0), cfg.get("L_enc", 0), cfg.get("L_dec", 0)
        # The ecosystem extras (not in the paper; Hugging Face's BertEmbeddings and MLM head).
        self.embedding_norm = cfg.get("embedding_norm", False)
        self.token_types = cfg.get("token_types", 0)
        self.bias = cfg.get("unembedding_bias", False)
        # Issue 25 (not in the paper): the sliding window and T5's relative position bias.
        self.window = cfg.get("window", 0)
        self.buckets = cfg.get("relative_buckets", 32)
        self.max_distance = cfg.get("relative_max_distance", 128)


def norm(p, name, X, v):
    """layer_norm (Algorithm 6) or RMSNorm of each column: γ = p[name.gamma…], β = p[name.beta…]."""
    gamma = p[name.replace("#", "gamma")]
    if v.rms:  # ê = e / √(mean(e²) + ε) ⊙ γ
        return X / torch.sqrt((X * X).mean(dim=0, keepdim=True) + rc.EPS) * gamma[:, None]
    m = X.mean(dim=0, keepdim=True)
    var = ((X - m) ** 2).mean(dim=0, keepdim=True)
    return (X - m) / torch.sqrt(var + rc.EPS) * gamma[:, None] + p[name.replace("#", "beta")][:, None]


def activation(name, A):
    if name == "gelu":
        return A * 0.5 * (1 + torch.erf(A / math.sqrt(2)))  # x·Φ(x), eq. (5)
    if name == "gelu_tanh":
        return 0.5 * A * (1 + torch.tanh(math.sqrt(2 / math.pi) * (A + 0.044715 * A ** 3)))
    if name == "relu":
        return torch.clamp(A, min=0.0)
    raise ValueError(name)


def mlp(p, q, X, v, first, second, gate):
    """W_second act(W_first X + b_first 1ᵀ) + b_second 1ᵀ; swiglu: SiLU(W_gate X + b_gate) ⊙ (…)."""
    H1 = p[q + f"W_mlp{first}"] @ X + p[q + f"b_mlp{first}"][:, None]
    if v.activation == "swiglu":
        G = p[q + f"W_gate{gate}"] @ X + p[q + f"b_gate{gate}"][:, None]
        act = G * torch.sigmoid(G) * H1
    else:
        act = activation(v.activation, H1)
    return p[q + f"W_mlp{second}"] @ act + p[q + f"b_mlp{second}"][:, None]


def rope(M, base):
    """Rotates coordinates (2i−1, 2i) of column t by t·θ_i, θ_i = base^{−2(i−1)/d}, t 1-based."""
    d, ell = M.shape
    out = M.clone()
    for i in range(1, d // 2 + 1):
        theta = base ** (-2.0 * (i - 1) / d)
        ang = torch.arange(1, ell + 1, dtype=torch.float64) * theta
        c, s = torch.cos(ang), torch.sin(ang)
        a, b = M[2 * i - 2], M[2 * i - 1]
        out[2 * i - 2] = a * c - b * s
        out[2 * i - 1] = a * s + b * c
    return out


def alibi_bias(ell_z, ell_x):
    """B[t_z, t_x] = −|t_z − t_x|."""
    tz = torch.arange(1, ell_z + 1, dtype=torch.float64)[:, None]
    tx = torch.arange(1, ell_x + 1, dtype=torch.float64)[None, :]
    return -(tz - tx).abs()


def relative_position_bucket(relative_position, bidirectional, num_buckets, max_distance):
    """transformers' T5Attention._relative_position_bucket (relative_position = memory − query =
    t_z − t_x), written again; its logarithm in float64 here (T5 takes float32), as the C++ core's."""
    relative_buckets = 0
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    if_large = max_exact + (torch.log(relative_position.to(torch.float64) / max_exact)
                            / math.log(max_distance / max_exact) * (num_buckets - max_exact)).to(torch.long)
    if_large = torch.min(if_large, torch.full_like(if_large, num_buckets - 1))
    return relative_buckets + torch.where(is_small, relative_position, if_large)


def relative_bias(W_rel_h, ell_z, ell_x, v, bidirectional):
    """B[t_z, t_x] = W_rel[h, bucket(t_z − t_x)]: a Toeplitz matrix."""
    tz = torch.arange(1, ell_z + 1)[:, None]
    tx = torch.arange(1, ell_x + 1)[None, :]
    return W_rel_h[relative_position_bucket(tz - tx, bidirectional, v.buckets, v.max_distance)]


def windowed(mask, ell, v):
    """A self-attention's mask ∧ [[|t_z − t_x| ≤ w]] (None stands for Mask ≡ 1); w = 0: as it is."""
    if not v.window:
        return mask
    t = torch.arange(ell)
    band = (t[:, None] - t[None, :]).abs() <= v.window
    return band if mask is None else mask & band


def mh_attention(p, q, X, Z, mask, v, self_attention):
    """Algorithms 4 and 5 with the variants: query head h reads key/value head g(h); self-attention
    rotates Q and K (rope) or adds m_h·B to the scaled scores (alibi). mask: bool ℓ_z×ℓ_x or None."""
    Ys = []
    for h in range(1, v.H + 1):
        g = (h - 1) * v.H_kv // v.H + 1  # g(h) = ⌊(h−1)·H_kv/H⌋ + 1
        Q = p[q + "W_q"][h - 1] @ X + p[q + "b_q"][h - 1][:, None]
        K = p[q + "W_k"][g - 1] @ Z + p[q + "b_k"][g - 1][:, None]
        V = p[q + "W_v"][g - 1] @ Z + p[q + "b_v"][g - 1][:, None]
        if self_attention and v.position == "rope":
            Q, K = rope(Q, v.rope_base), rope(K, v.rope_base)
        S = (K.T @ Q) / math.sqrt(v.d_attn)
        if self_attention and v.position == "alibi":
            S = S + 2.0 ** (-8.0 * h / v.H) * alibi_bias(Z.shape[1], X.shape[1])
        if self_attention and v.position == "relative":  # after the scaling, as issue 25 says (T5 does not scale)
            # T5's encoder buckets (bidirectional) in BERT and the encoder-decoder's encoder ("enc."),
            # its decoder's (causal) in GPT and the encoder-decoder's decoder
            bidirectional = v.arch == "bert" or q.startswith("enc.")
            S = S + relative_bias(p[q + "W_rel"][h - 1], Z.shape[1], X.shape[1], v, bidirectional)
        if mask is not None:
            S = S.masked_fill(~mask, float("-inf"))
        Ys.append(V @ torch.softmax(S, dim=0))
    return p[q + "W_o"] @ torch.cat(Ys, dim=0) + p[q + "b_o"][:, None]


def sinusoid(d_e, ell, base):
    """W_p[2i−1, t] = sin(t / base^{2i/d_e}), W_p[2i, t] = cos(…), t and i 1-based."""
    W = torch.zeros(d_e, ell)
    for t in range(1, ell + 1):
        for i in range(1, d_e // 2 + 1):
            a = t / base ** (2.0 * i / d_e)
            W[2 * i - 2, t - 1] = math.sin(a)
            W[2 * i - 1, t - 1] = math.cos(a)
    return W


def embed(p, tokens, v):
    """Lines 1–2 of every forward algorithm: e_t = W_e[:, x[t]] (+ W_p[:, t]); then, as Hugging
    Face's BertEmbeddings (not in the paper), + W_s[:, 1] (token type 0 for every token) and
    F.layer_norm with γ_emb, β_emb (always layer_norm, whatever the layers' norm)."""
    X = p["W_e"][:, [t - 1 for t in tokens]]
    if v.position == "learned":
        X = X + p["W_p"][:, :len(tokens)]
    elif v.position == "sinusoidal":
        X = X + sinusoid(v.d_e, len(tokens), v.position_base)
    if v.token_types:
        X = X + p["W_s"][:, 0:1]
    if v.embedding_norm:
        X = F.layer_norm(X.T, (v.d_e,), p["emb.gamma"], p["emb.beta"], eps=rc.EPS).T
    return X


def unembed(p, X, v):
    """P = softmax(W_u X), W_u = W_eᵀ when tied; with BERT's bias (not in the paper) + b_u 1ᵀ."""
    W_u = p["W_e"].T if v.tied else p["W_u"]
    logits = W_u @ X
    if v.bias:
        logits = logits + p["b_u"][:, None]
    return torch.softmax(logits, dim=0)


def encoder_layer(p, q, X, mask, v, attn):
    """A self-attention + MLP layer, post-LN (γ¹ after attention, γ² after the MLP) or pre-LN."""
    if v.pre:
        X = X + mh_attention(p, q + attn, *(2 * [norm(p, q + "#1", X, v)]), mask, v, True)
        return X + mlp(p, q, norm(p, q + "#2", X, v), v, 1, 2, "")
    X = norm(p, q + "#1", X + mh_attention(p, q + attn, X, X, mask, v, True), v)
    return norm(p, q + "#2", X + mlp(p, q, X, v, 1, 2, ""), v)


def prefix_length(x, v):
    """p: the 1-based position of the first separator in x, 0 when none (or a causal mask)."""
    return x.index(v.separator) + 1 if v.prefix and v.separator in x else 0


def gpt_forward(p, x, v):
    ell, pl = len(x), prefix_length(x, v)
    mask = torch.tensor([[tz <= max(tx, pl) for tx in range(1, ell + 1)] for tz in range(1, ell + 1)])
    mask = windowed(mask, ell, v)
    X = embed(p, x, v)
    for l in range(1, v.L + 1):
        X = encoder_layer(p, f"layer{l}.", X, mask, v, "attn.")
    if v.pre:
        X = norm(p, "#", X, v)  # line 10
    return unembed(p, X, v)


def bert_forward(p, x, v):
    X = embed(p, x, v)
    for l in range(1, v.L + 1):
        X = encoder_layer(p, f"layer{l}.", X, windowed(None, len(x), v), v, "attn.")
    if v.pre:
        X = norm(p, "enc.#", X, v)
    X = activation("gelu", p["W_f"] @ X + p["b_f"][:, None])  # line 10 keeps the paper's GELU
    X = norm(p, "#", X, v)  # line 11
    return unembed(p, X, v)


def ed_forward(p, z, x, v):
    Z = embed(p, z, v)
    for l in range(1, v.L_enc + 1):
        Z = encoder_layer(p, f"enc.layer{l}.", Z, windowed(None, len(z), v), v, "attn.")
    if v.pre:
        Z = norm(p, "enc.#", Z, v)
    ell = len(x)
    causal = windowed(torch.tensor([[tz <= tx for tx in range(ell)] for tz in range(ell)]), ell, v)
    X = embed(p, x, v)
    for l in range(1, v.L_dec + 1):
        q = f"dec.layer{l}."
        if v.pre:
            X = X + mh_attention(p, q + "self_attn.", *(2 * [norm(p, q + "#3", X, v)]), causal, v, True)
            X = X + mh_attention(p, q + "cross_attn.", norm(p, q + "#4", X, v), Z, None, v, False)
            X = X + mlp(p, q, norm(p, q + "#5", X, v), v, 3, 4, "2")
        else:
            X = norm(p, q + "#3", X + mh_attention(p, q + "self_attn.", X, X, causal, v, True), v)
            X = norm(p, q + "#4", X + mh_attention(p, q + "cross_attn.", X, Z, None, v, False), v)
            X = norm(p, q + "#5", X + mlp(p, q, X, v, 3, 4, "2"), v)
    if v.pre:
        X = norm(p, "dec.#", X, v)
    return unembed(p, X, v)


def forward(p, v, z, x):
    if v.arch == "gpt":
        return gpt_forward(p, x, v)
    if v.arch == "bert":
        return bert_forward(p, x, v)
    return ed_forward(p, z, x, v)


# ---- Parameters by checkpoint name ----------------------------------------------------------------


def make_params(cfg, v, gen):
    """Every tensor of the configuration, named as in docs/checkpoint-format.md. Per-head tensors
    are kept [count, rows, cols] here; main() drops a count of 1 for the file, as checkpoints do."""
    randn = rc.randn_factory(gen)
    d_e, H, H_kv, d_attn, d_mid, d_mlp = v.d_e, v.H, v.H_kv, v.d_attn, v.d_mid, v.d_mlp
    p = {"W_e": randn(d_e, N_V)}
    if v.position == "learned":
        p["W_p"] = randn(d_e, v.l_max, std=0.5)

    def ln(prefix, k, d):
        p[prefix + "gamma" + k] = randn(d, mean=1.0, std=0.2)
        if not v.rms:
            p[prefix + "beta" + k] = randn(d, std=0.2)

    def attention(prefix):
        if v.position == "relative" and not prefix.endswith("cross_attn."):  # drawn first: no older case has it
            p[prefix + "W_rel"] = randn(H, v.buckets, std=0.7)
        p[prefix + "W_q"] = randn(H, d_attn, d_e, std=0.5)
        p[prefix + "b_q"] = randn(H, d_attn, std=0.2)
        p[prefix + "W_k"] = randn(H_kv, d_attn, d_e, std=0.5)
        p[prefix + "b_k"] = randn(H_kv, d_attn, std=0.2)
        p[prefix + "W_v"] = randn(H_kv, d_mid, d_e, std=0.5)
        p[prefix + "b_v"] = randn(H_kv, d_mid, std=0.2)
        p[prefix + "W_o"] = randn(d_e, H * d_mid, std=0.4)
        p[prefix + "b_o"] = randn(d_e, std=0.2)

    def mlp_params(prefix, a, b, gate):
        p[prefix + f"W_mlp{a}"] = randn(d_mlp, d_e, std=0.5)
        p[prefix + f"b_mlp{a}"] = randn(d_mlp, std=0.2)
        p[prefix + f"W_mlp{b}"] = randn(d_e, d_mlp, std=0.3)
        p[prefix + f"b_mlp{b}"] = randn(d_e, std=0.2)
        if v.activation == "swiglu":
            p[prefix + f"W_gate{gate}"] = randn(d_mlp, d_e, std=0.5)
            p[prefix + f"b_gate{gate}"] = randn(d_mlp, std=0.2)

    if v.arch == "gpt":
        for l in range(1, v.L + 1):
            q = f"layer{l}."
            ln(q, "1", d_e)
            attention(q + "attn.")
            ln(q, "2", d_e)
            mlp_params(q, 1, 2, "")
        if v.pre:
            ln("", "", d_e)
        d_u = d_e
    elif v.arch == "bert":
        for l in range(1, v.L + 1):
            q = f"layer{l}."
            attention(q + "attn.")
            ln(q, "1", d_e)
            ln(q, "2", d_e)
            mlp_params(q, 1, 2, "")
        if v.pre:
            ln("enc.", "", d_e)
        p["W_f"] = randn(cfg["d_f"], d_e, std=0.5)
        p["b_f"] = randn(cfg["d_f"], std=0.2)
        ln("", "", cfg["d_f"])
        d_u = cfg["d_f"]
    else:
        for l in range(1, v.L_enc + 1):
            q = f"enc.layer{l}."
            attention(q + "attn.")
            ln(q, "1", d_e)
            ln(q, "2", d_e)
            mlp_params(q, 1, 2, "")
        if v.pre:
            ln("enc.", "", d_e)
        for l in range(1, v.L_dec + 1):
            q = f"dec.layer{l}."
            attention(q + "self_attn.")
            attention(q + "cross_attn.")
            for k in "345":
                ln(q, k, d_e)
            mlp_params(q, 3, 4, "2")
        if v.pre:
            ln("dec.", "", d_e)
        d_u = d_e
    if not v.tied:
        p["W_u"] = randn(N_V, d_u, std=0.7)
    # The ecosystem extras, drawn last (a case without them draws exactly what it drew before).
    if v.embedding_norm:
        p["emb.gamma"] = randn(d_e, mean=1.0, std=0.2)
        p["emb.beta"] = randn(d_e, std=0.2)
    if v.token_types:
        p["W_s"] = randn(d_e, v.token_types, std=0.5)
    if v.bias:
        p["b_u"] = randn(N_V, std=0.5)
    return p


# ---- Cases ------------------------------------------------------------------------------------------


def gpt_targets(x, v):
    """x[t+1] at positions t ≥ max(p, 1), 0 elsewhere (and at the last position)."""
    pl = prefix_length(x, v)
    return [x[t] if t >= max(pl, 1) else 0 for t in range(1, len(x))] + [0]


def ed_targets(x):
    return list(x[1:]) + [0]


def bert_masked(x, positions):
    """x̃ (mask_token at the 1-based positions) and the targets (the original token there)."""
    xt = [MASK if t in positions else tok for t, tok in enumerate(x, start=1)]
    return xt, [tok if t in positions else 0 for t, tok in enumerate(x, start=1)]


GPT_X = [BOS, A, C, B, D, E, EOS]
GPT_X2 = [BOS, E, A, B]
BERT_X = [BOS, A, C, E, B, D, EOS]
BERT_POS = {3, 5}
BERT_X2 = [BOS, D, D, A, EOS]
BERT_POS2 = {2}
ED_Z, ED_X = [BOS, C, A, D, EOS], [BOS, B, E, A, D, EOS]
ED_Z2, ED_X2 = [BOS, E, B, B, A, C, EOS], [BOS, D, EOS]
PREFIX_X = [BOS, A, B, SEP, B, A, EOS]
PREFIX_X2 = [BOS, C, SEP, C, D]

# (name, arch, variant keys, what, two sequences?)
CASES = [
    ("gpt_post_ln", "gpt", {"norm_position": "post"}, "GPT-1's post-LN: no final γ, β", False),
    ("gpt_rms_norm", "gpt", {"norm": "rms_norm"}, "RMSNorm: no β", False),
    ("gpt_sinusoidal_lmax", "gpt", {"position": "sinusoidal"}, "the paper's sinusoid, base ℓ_max", False),
    ("gpt_sinusoidal_10000", "gpt", {"position": "sinusoidal", "position_base": 10000}, "Vaswani's base 10000", False),
    ("gpt_rope", "gpt", {"position": "rope"}, "RoPE, base 10000", True),
    ("gpt_rope_base_100", "gpt", {"position": "rope", "rope_base": 100}, "RoPE, base 100", False),
    ("gpt_alibi", "gpt", {"position": "alibi"}, "ALiBi under the causal mask", True),
    ("gpt_no_position", "gpt", {"position": "none"}, "no positions", False),
    ("gpt_gelu_tanh", "gpt", {"activation": "gelu_tanh"}, "GPT-2's tanh GELU", False),
    ("gpt_relu", "gpt", {"activation": "relu"}, "ReLU MLP", False),
    ("gpt_swiglu", "gpt", {"activation": "swiglu"}, "SwiGLU MLP (W_gate, b_gate)", False),
    ("gpt_tied", "gpt", {"tied_unembedding": True}, "W_u = W_eᵀ", False),
    ("gpt_mqa", "gpt", {"H": 4, "H_kv": 1}, "multi-query: H_kv = 1 of H = 4", True),
    ("gpt_gqa", "gpt", {"H": 4, "H_kv": 2}, "grouped-query: H_kv = 2 of H = 4", False),
    ("gpt_prefix", "gpt", {"mask": "prefix"}, "prefix-LM mask, separator '='", True),
    ("gpt_modern", "gpt", {"norm": "rms_norm", "position": "rope", "activation": "swiglu", "tied_unembedding": True,
                           "H": 4, "H_kv": 1, "L": 2}, "RMSNorm + RoPE + SwiGLU + tied + H_kv = 1, two layers", True),
    ("gpt_gpt1_alibi", "gpt", {"norm_position": "post", "position": "alibi", "activation": "gelu_tanh"},
     "post-LN + ALiBi + gelu_tanh", False),
    ("bert_pre_ln", "bert", {"norm_position": "pre"}, "pre-LN BERT: enc.gamma, enc.beta before W_f", True),
    ("bert_rms_norm", "bert", {"norm": "rms_norm"}, "RMSNorm", False),
    ("bert_sinusoidal", "bert", {"position": "sinusoidal"}, "the paper's sinusoid", False),
    ("bert_rope", "bert", {"position": "rope"}, "RoPE, bidirectional", False),
    ("bert_alibi", "bert", {"position": "alibi"}, "ALiBi, symmetric distance", True),
    ("bert_swiglu", "bert", {"activation": "swiglu"}, "SwiGLU MLP; W_f keeps GELU", False),
    ("bert_tied", "bert", {"tied_unembedding": True, "d_f": 8}, "W_u = W_eᵀ with d_f = d_e", False),
    ("bert_gqa", "bert", {"H": 4, "H_kv": 2}, "grouped-query: H_kv = 2 of H = 4", False),
    ("ed_pre_ln", "ed", {"norm_position": "pre"}, "pre-LN: enc.gamma/beta on Z, dec.gamma/beta before W_u", False),
    ("ed_rms_norm", "ed", {"norm": "rms_norm"}, "RMSNorm", False),
    ("ed_rope", "ed", {"position": "rope"}, "RoPE in both self-attentions, not in cross-attention", True),
    ("ed_alibi", "ed", {"position": "alibi"}, "ALiBi in both self-attentions", False),
    ("ed_gelu", "ed", {"activation": "gelu"}, "GELU instead of the paper's ReLU", False),
    ("ed_swiglu", "ed", {"activation": "swiglu"}, "SwiGLU: W_gate (encoder), W_gate2 (decoder)", False),
    ("ed_tied", "ed", {"tied_unembedding": True}, "W_u = W_eᵀ", False),
    ("ed_mqa", "ed", {"H": 4, "H_kv": 1}, "multi-query in all three attentions", False),
    # The ecosystem extras (issue 11; not in the paper), appended: the cases above keep their seeds.
    ("bert_extras", "bert", {"embedding_norm": True, "token_types": 2, "unembedding_bias": True},
     "BERT checkpoints' extras: + W_s[:, 1], embedding layer norm, + b_u", True),
    ("bert_extras_tied", "bert", {"embedding_norm": True, "token_types": 2, "unembedding_bias": True,
                                  "tied_unembedding": True, "d_f": 8},
     "as a Hugging Face BERT: the extras with W_u = W_eᵀ (d_f = d_e) and b_u", False),
    ("gpt_extras", "gpt", {"embedding_norm": True, "token_types": 1, "unembedding_bias": True},
     "the extras on GPT", True),
    ("gpt_extras_rms_tied", "gpt", {"embedding_norm": True, "unembedding_bias": True, "norm": "rms_norm",
                                    "tied_unembedding": True},
     "the extras with RMSNorm layers (the embedding norm stays layer_norm) and W_u = W_eᵀ", False),
    ("ed_extras", "ed", {"embedding_norm": True, "token_types": 2, "unembedding_bias": True},
     "the extras on the encoder-decoder: z and x embedded alike", True),
    ("ed_extras_pre_ln", "ed", {"embedding_norm": True, "unembedding_bias": True, "norm_position": "pre"},
     "the extras with pre-LN", False),
    # Issue 25 (not in the paper), appended: the sliding window and T5's relative position bias.
    ("gpt_window", "gpt", {"window": 2}, "sliding window w = 2: keys t_x − 2 ≤ t_z ≤ t_x", True),
    ("gpt_relative", "gpt", {"position": "relative", "relative_buckets": 4, "relative_max_distance": 5},
     "T5's relative bias, causal buckets: 2 exact, 2 logarithmic up to distance 5", True),
    ("gpt_prefix_window_relative", "gpt", {"mask": "prefix", "window": 3, "position": "relative",
                                           "relative_buckets": 6, "relative_max_distance": 6},
     "prefix-LM mask ∧ window 3, relative bias", True),
    ("bert_window", "bert", {"window": 1}, "sliding window w = 1: |t_x − t_z| ≤ 1", False),
    ("bert_relative", "bert", {"position": "relative", "relative_buckets": 8, "relative_max_distance": 8},
     "T5's relative bias, bidirectional buckets (4 a sign)", True),
    ("ed_window", "ed", {"window": 2}, "window 2 in both self-attentions; cross-attention unwindowed", True),
    ("ed_relative", "ed", {"position": "relative", "relative_buckets": 6, "relative_max_distance": 8},
     "T5's relative bias: bidirectional buckets in the encoder (3 a sign), causal ones in the decoder, none in the "
     "cross-attention", True),
]


def sequences(arch, name, two):
    """The case's training sequences (inputs and targets)."""
    if arch == "gpt":
        xs = [PREFIX_X, PREFIX_X2] if "prefix" in name else [GPT_X, GPT_X2]
        return [{"x": x} for x in xs[:2 if two else 1]]
    if arch == "bert":
        out = []
        for x, pos in [(BERT_X, BERT_POS), (BERT_X2, BERT_POS2)][:2 if two else 1]:
            xt, tg = bert_masked(x, pos)
            out.append({"x": xt, "targets": tg})
        return out
    return [{"z": z, "x": x} for z, x in [(ED_Z, ED_X), (ED_Z2, ED_X2)][:2 if two else 1]]


def summed_loss(p, v, seqs):
    total = 0.0
    for s in seqs:
        P = forward(p, v, s.get("z"), s["x"])
        for t, tgt in enumerate(s["targets"]):
            if tgt:
                total = total - torch.log(P[tgt - 1, t])
    return total


def self_checks():
    """Second formulations of the new pieces (the forward above must agree with them)."""
    gen = torch.Generator().manual_seed(7)
    M = torch.randn(6, 5, generator=gen)
    z = torch.complex(M[0::2], M[1::2])
    theta = 100.0 ** (-2.0 * torch.arange(3) / 6)
    rot = z * torch.exp(1j * torch.outer(theta, torch.arange(1, 6, dtype=torch.float64)))
    R = rope(M, 100.0)
    assert torch.allclose(R[0::2], rot.real, atol=1e-13) and torch.allclose(R[1::2], rot.imag, atol=1e-13)
    causal = alibi_bias(5, 5).masked_fill(~torch.ones(5, 5, dtype=torch.bool).triu(), 0)
    tz, tx = torch.meshgrid(torch.arange(5.0), torch.arange(5.0), indexing="ij")
    assert torch.equal(causal, (tz - tx).masked_fill(tz > tx, 0))  # the article's t_z − t_x for t_z ≤ t_x
    assert torch.allclose(activation("gelu_tanh", M), F.gelu(M, approximate="tanh"), atol=1e-15)
    assert torch.allclose(activation("gelu", M), F.gelu(M), atol=1e-15)
    G = M[:3] * torch.sigmoid(M[:3])
    assert torch.allclose(G, F.silu(M[:3]), atol=1e-15)
    v = Variant({"arch": "gpt", **SIZES, "L": 1})
    gamma, beta = torch.randn(6, generator=gen), torch.randn(6, generator=gen)
    got = norm({"gamma": gamma, "beta": beta}, "#", M, v)
    want = F.layer_norm(M.T, (6,), gamma, beta, eps=rc.EPS).T
    assert torch.allclose(got, want, atol=1e-12)
    buckets = relative_position_bucket(torch.tensor([0, -5, -16, -20, -100, -500, 3]), False, 32, 128)
    assert buckets.tolist() == [0, 5, 16, 17, 30, 31, 0]  # by hand: 16 + ⌊ln(d/16)/ln 8·16⌋
    buckets = relative_position_bucket(torch.tensor([-3, 3, -20, 20, 1000]), True, 32, 128)
    assert buckets.tolist() == [3, 19, 10, 26, 31]  # 8 exact a sign, then 8 + ⌊ln(d/8)/ln 16·8⌋
    v.rms = True
    want = (M.T * torch.rsqrt(M.T.pow(2).mean(-1, keepdim=True) + rc.EPS) * gamma).T
    assert torch.allclose(norm({"gamma": gamma}, "#", M, v), want, atol=1e-12)


def rounded(doc):
    """Computed values (P, gradients, losses) to 11 significant digits (the parameters stay exact)."""
    if isinstance(doc, list):
        return [rounded(d) for d in doc]
    if isinstance(doc, dict):
        return {k: rounded(d) for k, d in doc.items()}
    return float(f"{doc:.11g}") if isinstance(doc, float) else doc


def main():
    self_checks()
    cases = []
    for seed, (name, arch, keys, what, two) in enumerate(CASES):
        cfg = {"arch": arch, **SIZES, **ARCH_SIZES[arch], **keys}
        v = Variant(cfg)
        p = make_params(cfg, v, torch.Generator().manual_seed(20221000 + seed))
        seqs = sequences(arch, name, two)
        for s in seqs:
            if arch == "gpt":
                s["targets"] = gpt_targets(s["x"], v)
            elif arch == "ed":
                s["targets"] = ed_targets(s["x"])
        first = seqs[0]
        P = forward(p, v, first.get("z"), first["x"])
        assert torch.allclose(P.sum(dim=0), torch.ones(P.shape[1]), atol=1e-12), name
        loss, g = rc.autograd_grads(p, lambda q: summed_loss(q, v, seqs))
        per_head = {k for k in p if k.rsplit(".", 1)[-1] in ("W_q", "b_q", "W_k", "b_k", "W_v", "b_v")}

        def file_json(k, t):  # the checkpoint's shape: a per-head count of 1 is no dimension
            return rc.tensor_json(t[0] if k in per_head and t.shape[0] == 1 else t)

        fwd = {"x": first["x"], "P": rounded(rc.to_list(P))}
        if arch == "ed":
            fwd = {"z": first["z"], **fwd}
        cases.append({
            "name": name,
            "what": what,
            "config": cfg,
            "params": {k: file_json(k, t) for k, t in p.items()},
            "forward": fwd,
            "grads": {"sequences": seqs, "loss": rounded(loss),
                      "grads": rounded({k: file_json(k, t) for k, t in g.items()})},
        })
    doc = {
        "about": "The variants of docs/variants.md on Algorithms 8, 9 and 10: P and the gradient of a summed "
                 "loss, float64, by tests/reference/gen_variants_reference.py; matrices rows x columns (tokens "
                 "are columns), row-major nested lists; token ids 1-based.",
        "cases": cases,
    }
    path = rc.write_json(doc, "variants_reference.json")
    print(f"wrote {path} ({os.path.getsize(path)} bytes), {len(cases)} cases")


if __name__ == "__main__":
    main()
