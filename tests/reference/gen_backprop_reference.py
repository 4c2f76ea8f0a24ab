#!/usr/bin/python3
"""Writes tests/data/backprop/: torch autograd's gradient of EVERY value Stepformer's traced backward
binds (core/backprop/, issue 24 item 7), for seven small models, in float64.

The forward is written here per head and per column, as the paper's algorithms print it (Algorithms 1,
2, 4, 5, 6, 7 and 8/9/10, with the variants of docs/variants.md), independently of the C++ core.
Every read of a value by a pseudocode line goes through Tape.read, which hands that line its own clone
of the value with retain_grad(): the clone's .grad is the gradient along that one path (a PARTIAL
gradient, e.g. ∇Z through line 3 only), and the sum over a value's reads is its whole gradient. Each
read is tagged with the keys of the backward trace that bind it, as core/backprop/adjoints.hpp names
them (the key is described under "Files" below). A key's reference value is the sum of the .grad of the reads tagged with it, so a line that
binds an accumulated gradient (∇e after lines 3, 2 and 1 of Algorithm 6's adjoint) is tagged on every
read it accumulates.

Cases (issue 24 item 7): the paper's GPT (2 layers, 2 heads); GPT with RMSNorm + RoPE + SwiGLU + tied
+ H_kv = 1; GPT post-LN + ALiBi + gelu_tanh; the paper's BERT (post-LN) with masked positions; a
pre-LN BERT; the paper's encoder-decoder; an encoder-decoder with pre-LN + RoPE. θ is drawn as
gen_variants_reference.make_params draws it (float32 values, O(1) weights) from a seed per case and
written as a Stepformer checkpoint, tests/data/backprop/<case>.safetensors (safetensors F32, the
configuration in its metadata): the C++ test loads exactly that θ.

Loss: the paper's, summed over one sequence: GPT −Σ_{t=1}^{ℓ−1} log P[x[t+1], t]; BERT
−Σ_{t∈masks} log P[x[t], t] with x̃ = x with mask_token at masks; the encoder-decoder
−Σ_{t=1}^{ℓ_x−1} log P[x[t+1], t].

Files (tests/data/backprop/):
  <case>.safetensors   θ and the configuration
  <case>_api.npy       float64 1-D: the loss, ∇θ and the streams' gradients (what traced_backward
                       returns in double), back to back, each matrix row-major
  <case>_traced.npy    float32 1-D: every value the backward trace binds (the trace holds floats),
                       back to back, row-major; an array equal to one before it is stored once
  index.json           {"cases": [{"name", "what", "checkpoint", "api", "traced", "x", "z" (ed),
                                    "masks" (bert), "loss": offset into api,
                                    "grads": {tensor: [offset, count, rows, cols]} (∇θ in the
                                             parameter table's shapes: count matrices rows × cols),
                                    "streams": {"X_<l>" / "Z_<l>": [offset, rows, cols]} (∂loss/∂X
                                               entering layer l, l = L + 1 after the last),
                                    "names": [the bound values' names],
                                    "values": [alg, line, caller, l, h, t, name (index into names),
                                               offset into traced, rows, cols, …] ten per value}]}
  A key is (alg, line, caller, l, h, t, name): the event's algorithm and line (Pass::Backward, "adjoint
  of line `line`"; 0 the frame's Enter), the line of Algorithm 8, 9 or 10 it runs inside (0 for their
  own lines and the loss lines), the loop indices (0: not in force) and the value's name. Token ids
  (x, z) and scalars (l, h, ε, loss) are values too (a column of numbers, 1 × 1).

Regenerate (from the repository root; needs torch, e.g. /usr/bin/python3; deterministic):
    /usr/bin/python3 tests/reference/gen_backprop_reference.py
"""
import json
import math
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_variants_reference as vr  # noqa: E402
import ref_common as rc  # noqa: E402
import test_backward_command as bc  # noqa: E402

torch.set_default_dtype(torch.float64)

OUT = os.path.normpath(os.path.join(HERE, "..", "data", "backprop"))
BOS, A, B, C = vr.BOS, vr.A, vr.B, vr.C
# The architectures' algorithms (8, 9, 10) and the training algorithms whose loss lines run first (11,
# 12, 13): their lines are the top of the backward trace; any other algorithm's events run inside one of
# their lines, which completes the key (the caller: Algorithm 4 of line 14 or of line 16 of Algorithm 8).
ARCH_ALGS = (8, 9, 10, 11, 12, 13)

# Short sequences keep the data small; each repeats a token, so that ∇W_e accumulates two columns into
# one (issue 24 item 3).
GPT_X = [BOS, A, C, A]
BERT_X, BERT_MASKS = [BOS, A, C, A], [2, 4]  # x̃ = [bos, mask, c, mask]: mask_token repeats
ED_Z, ED_X = [BOS, C, A, C], [BOS, B, B]  # ℓ_z ≠ ℓ_x: a transposed cross-attention cannot pass

# (name, arch, configuration keys over gen_variants_reference's SIZES, what)
CASES = [
    ("gpt", "gpt", {"L": 2}, "the paper's GPT: pre-LN, learned W_p, GELU; 2 layers, 2 heads"),
    ("gpt_modern", "gpt", {"norm": "rms_norm", "position": "rope", "activation": "swiglu", "tied_unembedding": True,
                           "H_kv": 1, "L": 2}, "RMSNorm + RoPE + SwiGLU + tied + H_kv = 1 of H = 2"),
    ("gpt_post_alibi", "gpt", {"norm_position": "post", "position": "alibi", "activation": "gelu_tanh", "L": 2},
     "post-LN + ALiBi + gelu_tanh"),
    ("bert", "bert", {"L": 2}, "the paper's BERT: post-LN, GELU; masked positions 2 and 4"),
    ("bert_pre_ln", "bert", {"L": 1, "norm_position": "pre"}, "pre-LN BERT"),
    ("ed", "ed", {"L_enc": 1, "L_dec": 2}, "the paper's encoder-decoder: post-LN, ReLU"),
    ("ed_rope", "ed", {"L_enc": 1, "L_dec": 1, "norm_position": "pre", "position": "rope"},
     "encoder-decoder, pre-LN + RoPE in both self-attentions"),
]


# ---- The tape: one clone per read, tagged with the backward trace's keys ----------------------------


class Tape:
    """Loop indices in force (l, h, t, 1-based, 0 when not), the line of Algorithm 8, 9 or 10 whose call
    is running (the caller), the reads made so far and the forward values the backward shows."""

    def __init__(self):
        self.l = self.h = self.t = 0
        self.caller = 0
        self.reads = []  # (keys, clone)
        self.shown = {}  # key → a forward value a backward event binds beside the gradients

    def key(self, alg, line, name, **idx):
        """(alg, line, caller, l, h, t, name) at the current indices, or those given in idx."""
        caller = 0 if alg in ARCH_ALGS else idx.get("caller", self.caller)
        return (alg, line, caller, idx.get("l", self.l), idx.get("h", self.h), idx.get("t", self.t), name)

    def read(self, value, *keys, columns=()):
        """value as a line reads it: a clone whose .grad is the gradient through this read; each key is
        (alg, line, name) at the current indices, or a full key from Tape.key. columns: (key, j) pairs,
        keys that take column j of the gradient only."""
        c = value.clone()
        c.retain_grad()
        self.reads.append(([(k if len(k) == 7 else self.key(*k), None) for k in keys] + list(columns), c))
        return c

    def show(self, alg, line, name, value):
        """A forward value (tensor or number) that the backward event (alg, line) binds as `name`."""
        self.shown[self.key(alg, line, name)] = torch.as_tensor(value, dtype=torch.float64).detach().clone()

    def at(self, **idx):
        """with tape.at(l=…, h=…, t=…, caller=…): the indices of a loop body, the calling line."""
        tape = self

        class Scope:
            def __enter__(self):
                self.old = (tape.l, tape.h, tape.t, tape.caller)
                for k, v in idx.items():
                    setattr(tape, k, v)

            def __exit__(self, *exc):
                tape.l, tape.h, tape.t, tape.caller = self.old

        return Scope()

    def values(self):
        """{key: Σ .grad of the reads tagged with it} and the shown values; a read autograd never
        reached (masked out) adds 0."""
        out = {}
        for keys, c in self.reads:
            g = c.grad if c.grad is not None else torch.zeros_like(c)
            for k, j in keys:
                gk = g if j is None else g[:, j]
                out[k] = out[k] + gk if k in out else gk.clone()
        assert not set(out) & set(self.shown), set(out) & set(self.shown)
        return {**out, **self.shown}


def acc(alg, name, line, lines):
    """The keys of a read at `line` of a value that the frame's adjoint binds, accumulated, on each of
    `lines`: the adjoint runs the lines backwards, so the binding on line k has every read at lines ≥ k."""
    return [(alg, k, name) for k in lines if k <= line]


# ---- Algorithm 6 (and RMSNorm) per column; the per-column loop of a norm line -------------------------


def layer_norm_column(tape, e, gamma, beta, v):
    """Algorithm 6's adjoint frame for one column e (d_e): Enter binds ∇ê, e, γ, ε; line 3 ∇γ, ∇β, ∇e
    (line 3's path), ∇v, ∇m; line 2 ∇e, ∇m (lines 3 and 2); line 1 ∇e (complete). RMSNorm: no m, β."""
    tape.show(6, 0, "e", e)
    tape.show(6, 0, "γ", gamma)
    tape.show(6, 0, "ε", rc.EPS)
    if v.rms:  # variant: v ← Σ e²/d_e; ê = e/√(v + ε) ⊙ γ
        var = (tape.read(e, *acc(6, "∇e", 2, [2, 3])) ** 2).mean()
        e3, v3 = tape.read(e, *acc(6, "∇e", 3, [2, 3])), tape.read(var, (6, 3, "∇v"))
        out = e3 / torch.sqrt(v3 + rc.EPS) * tape.read(gamma, (6, 3, "∇γ"))
    else:
        m = tape.read(e, *acc(6, "∇e", 1, [1, 2, 3])).mean()
        e2, m2 = tape.read(e, *acc(6, "∇e", 2, [1, 2, 3])), tape.read(m, *acc(6, "∇m", 2, [2, 3]))
        var = ((e2 - m2) ** 2).mean()
        e3, m3 = tape.read(e, *acc(6, "∇e", 3, [1, 2, 3])), tape.read(m, *acc(6, "∇m", 3, [2, 3]))
        v3 = tape.read(var, (6, 3, "∇v"))
        out = (e3 - m3) / torch.sqrt(v3 + rc.EPS) * tape.read(gamma, (6, 3, "∇γ")) + tape.read(beta, (6, 3, "∇β"))
    return tape.read(out, (6, 0, "∇ê"))


def norm_line(tape, X, norm, v, alg, line, name):
    """for t ∈ [ℓ]: X̃[:, t] ← norm(X[:, t] | γ, β) on (alg, line): one Algorithm 6 adjoint frame per
    column; the line binds ∇<name> (its input), ∇γ…, ∇β… (summed over t). norm = (γ, β, γ's name,
    β's name), β None under RMSNorm."""
    gamma, beta, g_name, b_name = norm
    Xr = tape.read(X, (alg, line, "∇" + name))
    g = tape.read(gamma, (alg, line, "∇" + g_name))
    b = tape.read(beta, (alg, line, "∇" + b_name)) if beta is not None else None
    cols = []
    for t in range(1, X.shape[1] + 1):
        with tape.at(t=t, caller=line):
            cols.append(layer_norm_column(tape, Xr[:, t - 1], g, b, v))
    return torch.stack(cols, dim=1)


# ---- Algorithms 4 and 5 -------------------------------------------------------------------------------


def attention_head(tape, X, Z, W, mask, v, self_attention):
    """Algorithm 4's adjoint frame for head tape.h (W: W_q, b_q, W_k, b_k, W_v, b_v; W_k … of the
    head's group g(h)). Enter shows Q, K, V, softmax(S/√d_attn), Mask, W_q, W_k, W_v."""
    Wq, bq, Wk, bk, Wv, bv, group_keys = W
    Xq = tape.read(X, (4, 1, "∇X"))
    Zk, Zv = tape.read(Z, *acc(4, "∇Z", 2, [2, 3])), tape.read(Z, *acc(4, "∇Z", 3, [2, 3]))
    Q = tape.read(Wq, (4, 1, "∇W_q")) @ Xq + tape.read(bq, (4, 1, "∇b_q"))[:, None]  # line 1
    K = tape.read(Wk, (4, 2, "∇W_k"), *group_keys("∇W_k^g")) @ Zk + tape.read(bk, (4, 2, "∇b_k"))[:, None]  # line 2
    if self_attention and v.position == "rope":  # rotate the columns; the adjoint rotates ∇Q, ∇K back
        Q = vr.rope(tape.read(Q, (4, 1, "∇(W_q X + b_q 1ᵀ)")), v.rope_base)
        K = vr.rope(tape.read(K, (4, 2, "∇(W_k Z + b_k 1ᵀ)")), v.rope_base)
    V = tape.read(Wv, (4, 3, "∇W_v"), *group_keys("∇W_v^g")) @ Zv + tape.read(bv, (4, 3, "∇b_v"))[:, None]  # line 3
    S = tape.read(K, (4, 4, "∇K")).T @ tape.read(Q, (4, 4, "∇Q"))  # line 4
    S = tape.read(S, (4, 5, "∇S"))
    keep = mask if mask is not None else torch.ones(S.shape, dtype=torch.bool)
    S = tape.read(S.masked_fill(~keep, float("-inf")), (4, 6, "∇S"))  # line 5
    scaled = S / math.sqrt(v.d_attn)  # line 6: V · softmax(S/√d_attn (+ m_h·B))
    if self_attention and v.position == "alibi":
        scaled = scaled + 2.0 ** (-8.0 * tape.h / v.H) * vr.alibi_bias(Z.shape[1], X.shape[1])
    Amat = torch.softmax(scaled, dim=0)
    for name, value in (("Q", Q), ("K", K), ("V", V), ("softmax(S/√d_attn)", Amat), ("Mask", keep),
                        ("W_q", Wq), ("W_k", Wk), ("W_v", Wv)):
        tape.show(4, 0, name, value)
    return tape.read(V, (4, 6, "∇V")) @ tape.read(Amat, (4, 6, "∇A"))


def mh_attention(tape, p, q, X, Z, mask, v, self_attention):
    """Algorithm 5's adjoint frame: Enter ∇Ṽ, Y, Mask, W_o; line 4 ∇W_o, ∇b_o, ∇Y; line 3 ∇Y^1 … ∇Y^H;
    for h = H … 1: line 1 h, Algorithm 4's frame, line 2 ∇X (self-attention: X̃'s paths as X and as Z)
    or ∇X and ∇Z (cross-attention), summed over heads H … h; with H_kv < H also ∇W_k^g, ∇W_v^g summed over the group's heads H … h."""
    Ys = []
    for h in range(1, v.H + 1):
        g = (h - 1) * v.H_kv // v.H + 1
        group = [k for k in range(1, h + 1) if (k - 1) * v.H_kv // v.H + 1 == g]  # the heads ≤ h of group g

        def so_far(name, heads):  # the keys on line 2 of the heads whose sum includes head h's term
            return [tape.key(5, 2, name, h=k) for k in heads]

        with tape.at(h=h):
            tape.show(5, 1, "h", h)
            if self_attention:  # X = Z = X̃: both paths in one ∇X
                Xh = Zh = tape.read(X, *so_far("∇X", range(1, h + 1)))
            else:
                Xh, Zh = tape.read(X, *so_far("∇X", range(1, h + 1))), tape.read(Z, *so_far("∇Z", range(1, h + 1)))
            W = (p[q + "W_q"][h - 1], p[q + "b_q"][h - 1], p[q + "W_k"][g - 1], p[q + "b_k"][g - 1],
                 p[q + "W_v"][g - 1], p[q + "b_v"][g - 1],
                 lambda name: so_far(name, group) if v.H_kv < v.H else [])
            Yh = attention_head(tape, Xh, Zh, W, mask, v, self_attention)
            Ys.append(tape.read(Yh, (4, 0, "∇Ṽ"), tape.key(5, 3, f"∇Y^{h}", h=0)))
    Y = torch.cat(Ys, dim=0)
    tape.show(5, 0, "Y", Y)
    tape.show(5, 0, "Mask", mask if mask is not None else torch.ones(Z.shape[1], X.shape[1], dtype=torch.bool))
    tape.show(5, 0, "W_o", p[q + "W_o"])
    out = tape.read(p[q + "W_o"], (5, 4, "∇W_o")) @ tape.read(Y, (5, 4, "∇Y")) + \
        tape.read(p[q + "b_o"], (5, 4, "∇b_o"))[:, None]
    return tape.read(out, (5, 0, "∇Ṽ"))


# ---- The MLP line, the embedding and the unembedding -----------------------------------------------------


ACT_LABEL = {"gelu": "GELU(…)", "gelu_tanh": "GELU_tanh(…)", "relu": "ReLU(…)", "swiglu": "SiLU(…) ⊙ (…)"}


def mlp(tape, p, q, X, v, names, alg, line, in_name):
    """X ← X + W_b act(W_a X̃ + b_a 1ᵀ) + b_b 1ᵀ on (alg, line) (SwiGLU: act = SiLU(W_gate X̃ + b_gate 1ᵀ) ⊙
    (W_a X̃ + b_a 1ᵀ)): sub-steps of the adjoint line bind ∇W_b, ∇b_b, ∇act, ∇(pre-activations), then
    the line ∇W_a, ∇b_a, ∇W_b, ∇b_b (∇W_gate, ∇b_gate). names = (a, b, gate), e.g. ("mlp1", "mlp2", "gate")."""
    a, b, gate = names
    key = lambda name: (alg, line, name)  # noqa: E731
    affine = lambda w: f"∇(W_{w} {in_name} + b_{w} 1ᵀ)"  # noqa: E731
    H1 = tape.read(p[q + f"W_{a}"], key(f"∇W_{a}")) @ X + tape.read(p[q + f"b_{a}"], key(f"∇b_{a}"))[:, None]
    H1 = tape.read(H1, key(affine(a)))
    if v.activation == "swiglu":
        G = tape.read(p[q + f"W_{gate}"], key(f"∇W_{gate}")) @ X + \
            tape.read(p[q + f"b_{gate}"], key(f"∇b_{gate}"))[:, None]
        G = tape.read(G, key(affine(gate)))
        act = tape.read(G * torch.sigmoid(G), key("∇SiLU(…)")) * H1
    else:
        act = vr.activation(v.activation, H1)
    act = tape.read(act, key("∇" + ACT_LABEL[v.activation]))
    return tape.read(p[q + f"W_{b}"], key(f"∇W_{b}")) @ act + tape.read(p[q + f"b_{b}"], key(f"∇b_{b}"))[:, None]


def so_far_columns(tape, tokens, line, before=None):
    """The keys "∇W_e[:, v] (so far)" of Algorithm 1's adjoint frames (t = 1 … ℓ, inside `line`) that a
    use of W_e made before them adds into, with the column each takes: the tied unembedding's ∇W_uᵀ
    (before=None), or position u's ∇e_u (before=u: the frames t ≥ u of the same token)."""
    return [(tape.key(1, 1, "∇W_e[:, v] (so far)", t=t, caller=line), tok - 1)
            for t, tok in enumerate(tokens, start=1) if before is None or (t >= before and tok == tokens[before - 1])]


def embed(tape, p, tokens, v, alg, line, later=()):
    """Line `line`, for t ∈ [ℓ]: e_t ← W_e[:, x[t]] + W_p[:, t] (Algorithms 1 and 2 per column: their
    adjoint frames bind ∇e, ∇W_e[:, v] (and its total so far), ∇e_p, ∇W_p[:, ℓ]; the line ∇W_e, ∇W_p),
    and line + 1, X ← [e_1, …, e_ℓ], whose adjoint binds ∇e_t. `later`: the (tokens, line) of embedding
    lines whose adjoints run after this one's (Algorithm 8's z after x): their totals include this one's."""
    totals = [(alg, k) for k in [line] + [k for _, k in later]]
    We = tape.read(p["W_e"], *[(a, k, "∇W_e") for a, k in totals])
    Wp = tape.read(p["W_p"], *[(a, k, "∇W_p") for a, k in totals]) if v.position == "learned" else None
    cols = []
    for t, tok in enumerate(tokens, start=1):
        with tape.at(t=t, caller=line):
            tape.show(1, 0, "v", tok)
            e = We[:, tok - 1]
            keys = [(1, 0, "∇e"), (1, 1, "∇W_e[:, v]")] + \
                [k for k, _ in so_far_columns(tape, tokens, line, t)] + \
                [k for s, k_line in later for k, j in so_far_columns(tape, s, k_line) if j == tok - 1]
            if Wp is not None:
                tape.show(2, 0, "ℓ", t)
                e = e + Wp[:, t - 1]
                keys += [(2, 0, "∇e_p"), (2, 1, "∇W_p[:, ℓ]")]
            cols.append(tape.read(e, *keys))
    return tape.read(torch.stack(cols, dim=1), (alg, line + 1, "∇e_t"))


def unembed(tape, p, X, v, alg, line, embeddings):
    """Line `line`, P = softmax(W_u X): one Algorithm 7 adjoint frame per column t (Enter ∇p, e, p; line 1
    ∇(W_u e), ∇e), then the line binds ∇X, ∇W_u. Tied (W_u = W_eᵀ, no tensor of its own): the line
    binds ∇W_u too, and ∇W_uᵀ is bound with ∇W_e on the embedding lines (tokens, line) of `embeddings`
    (and in their running column totals), whose adjoints all run after this one."""
    if v.tied:  # the line binds ∇W_u (N_V × d_e) all the same, and W_e's totals gain its transpose
        W_e = tape.read(p["W_e"], *[(alg, k, "∇W_e") for _, k in embeddings],
                        columns=[c for s, k in embeddings for c in so_far_columns(tape, s, k)])
        W_u = tape.read(W_e.T, (alg, line, "∇W_u"))
    else:
        W_u = tape.read(p["W_u"], (alg, line, "∇W_u"))
    Xr = tape.read(X, (alg, line, "∇X"))
    cols = []
    for t in range(1, X.shape[1] + 1):
        with tape.at(t=t, caller=line):
            e = tape.read(Xr[:, t - 1], (7, 1, "∇e"))
            pcol = torch.softmax(tape.read(W_u @ e, (7, 1, "∇(W_u e)")), dim=0)
            tape.show(7, 0, "e", e)
            tape.show(7, 0, "p", pcol)
            cols.append(tape.read(pcol, (7, 0, "∇p")))
    return torch.stack(cols, dim=1)


# ---- Algorithms 10, 9, 8 ------------------------------------------------------------------------------


def causal(ell):
    return torch.tensor([[tz <= tx for tx in range(ell)] for tz in range(ell)])


def stream(tape, X, l, name):
    """The residual stream as it enters layer l (l = L + 1: after the last layer): ∂loss/∂X, whole,
    as stepformer-cli backward writes it (grad_X_<l>.npy); not a traced value."""
    return tape.read(X, ("stream", 0, 0, l, 0, 0, name))


def residual_pair(tape, X, v, norm, alg, line, f, name, tilde, residual_partial=False):
    """Pre-LN: X̃ ← norm(X) on `line`, X ← X + f(X̃) on line + 1; post-LN: X ← X + f(X) on `line`,
    X ← norm(X) on line + 1 (variant_layers.hpp's residual_line_pair, the same numbering). The adjoint
    of the norm's line binds ∇X whole (the residual's path and the norm's); f's line binds ∇X̃ (pre-LN)
    or ∇X whole (post-LN: the residual's path and f's); with residual_partial (the attention lines of
    Algorithms 8, 9 and 10, pre-LN) also ∇X through the residual alone, the gradient of line + 1's X."""
    def call(Xin, at):
        with tape.at(caller=at):
            return f(Xin, at)

    if v.pre:
        Xt = norm_line(tape, X, norm, v, alg, line, name)
        residual = [(alg, line, "∇" + name)] + ([(alg, line + 1, "∇" + name)] if residual_partial else [])
        return tape.read(X, *residual) + call(tape.read(Xt, (alg, line + 1, "∇" + tilde)), line + 1)
    X = tape.read(X, (alg, line, "∇" + name)) + call(tape.read(X, (alg, line, "∇" + name)), line)
    return norm_line(tape, X, norm, v, alg, line + 1, name)


def norm_params(p, prefix, k, sup, v):
    """(γ, β, "γ<sup>_l", "β<sup>_l") of a layer's norm k (β None under RMSNorm)."""
    return p[prefix + "gamma" + k], p.get(prefix + "beta" + k), f"γ{sup}_l", f"β{sup}_l"


def final_norm(p, prefix, sub=""):
    """(γ, β, "γ<sub>", "β<sub>") of a final norm: Algorithm 10's γ, β; the variants' γ_enc, γ_dec."""
    return p[prefix + "gamma"], p.get(prefix + "beta"), "γ" + sub, "β" + sub


def layer(tape, p, q, X, mask, v, alg, name, tilde):
    """A self-attention + MLP layer: lines 5–8 of Algorithm 10, of 9, of 8's encoder."""
    in_name = tilde if v.pre else name
    X = residual_pair(tape, stream(tape, X, tape.l, name), v, norm_params(p, q, "1", "¹", v), alg, 5,
                      lambda Xt, line: mh_attention(tape, p, q + "attn.", Xt, Xt, mask, v, True), name, tilde,
                      residual_partial=True)
    return residual_pair(tape, X, v, norm_params(p, q, "2", "²", v), alg, 7,
                         lambda Xt, line: mlp(tape, p, q, Xt, v, ("mlp1", "mlp2", "gate"), alg, line, in_name),
                         name, tilde)


def loss_of(tape, P, targets, alg, line, arch_alg):
    """The loss line (alg, line) of Algorithm 11, 12 or 13: its adjoint binds ∇P and loss; the
    architecture's frame (arch_alg) shows P and loss."""
    loss = -sum(torch.log(tape.read(P, (alg, line, "∇P"))[y - 1, t]) for t, y in enumerate(targets) if y)
    tape.show(alg, line, "loss", loss)
    tape.show(arch_alg, 0, "P", P)
    tape.show(arch_alg, 0, "loss", loss)
    return loss


def gpt(tape, p, v, x):
    """Algorithm 10 (lines 2–11); returns P and the loss line (Algorithm 13 line 5)."""
    tape.show(10, 0, "x", torch.tensor(x))
    X = embed(tape, p, x, v, 10, 2)
    mask = causal(len(x))
    for l in range(1, v.L + 1):
        with tape.at(l=l):
            tape.show(10, 4, "l", l)
            X = layer(tape, p, f"layer{l}.", X, mask, v, 10, "X", "X̃")
    X = stream(tape, X, v.L + 1, "X")
    if v.pre:
        X = norm_line(tape, X, final_norm(p, ""), v, 10, 10, "X")
    return unembed(tape, p, X, v, 10, 11, [(x, 2)]), 13, 5, 10


def bert(tape, p, v, x):
    """Algorithm 9 (lines 2–12) on x̃; returns P and the loss line (Algorithm 12 line 9)."""
    tape.show(9, 0, "x", torch.tensor(x))
    X = embed(tape, p, x, v, 9, 2)
    for l in range(1, v.L + 1):
        with tape.at(l=l):
            tape.show(9, 4, "l", l)
            X = layer(tape, p, f"layer{l}.", X, None, v, 9, "X", "X̃")
    X = stream(tape, X, v.L + 1, "X")
    if v.pre:  # variant: the stack's final norm, traced on line 10; its adjoint binds ∇X of the norm's
        # input on the line and, on a sub-step, "∇X (final norm's output)" (a name of its own: one name, one value)
        X = tape.read(norm_line(tape, X, final_norm(p, "enc.", "_enc"), v, 9, 10, "X"), (9, 10, "∇X (final norm's output)"))
    else:
        X = tape.read(X, (9, 10, "∇X"))
    H = tape.read(p["W_f"], (9, 10, "∇W_f")) @ X + tape.read(p["b_f"], (9, 10, "∇b_f"))[:, None]
    X = vr.activation("gelu", tape.read(H, (9, 10, "∇(W_f X + b_f 1ᵀ)")))  # line 10 keeps the paper's GELU
    X = norm_line(tape, X, final_norm(p, ""), v, 9, 11, "X")
    return unembed(tape, p, X, v, 9, 12, [(x, 2)]), 12, 9, 9


def decoder_layer(tape, p, q, X, Z, mask, v):
    """Algorithm 8 lines 14–19: the causal self-attention, the cross-attention (its line also binds this
    layer's ∇Z), the MLP (W_mlp3, W_mlp4), each with its norm γ³, γ⁴, γ⁵."""
    in_name = "X̃" if v.pre else "X"
    X = residual_pair(tape, X, v, norm_params(p, q, "3", "³", v), 8, 14,
                      lambda Xt, line: mh_attention(tape, p, q + "self_attn.", Xt, Xt, mask, v, True), "X", "X̃",
                      residual_partial=True)
    X = residual_pair(tape, X, v, norm_params(p, q, "4", "⁴", v), 8, 16,
                      lambda Xt, line: mh_attention(tape, p, q + "cross_attn.", Xt, tape.read(Z, (8, line, "∇Z")),
                                                    None, v, False), "X", "X̃", residual_partial=True)
    return residual_pair(tape, X, v, norm_params(p, q, "5", "⁵", v), 8, 18,
                         lambda Xt, line: mlp(tape, p, q, Xt, v, ("mlp3", "mlp4", "gate2"), 8, line, in_name),
                         "X", "X̃")


def ed(tape, p, v, z, x):
    """Algorithm 8 (lines 2–21); returns P and the loss line (Algorithm 11 line 5). The backward runs the
    decoder first, then x's embedding (line 11), the encoder, z's embedding (line 2)."""
    tape.show(8, 0, "z", torch.tensor(z))
    tape.show(8, 0, "x", torch.tensor(x))
    Z = embed(tape, p, z, v, 8, 2)
    for l in range(1, v.L_enc + 1):
        with tape.at(l=l):
            tape.show(8, 4, "l", l)
            Z = layer(tape, p, f"enc.layer{l}.", Z, None, v, 8, "Z", "Z̃")
    Z = stream(tape, Z, v.L_enc + 1, "Z")
    if v.pre:  # variant: the encoder's final norm on line 9
        Z = norm_line(tape, Z, final_norm(p, "enc.", "_enc"), v, 8, 9, "Z")
    else:  # line 9's adjoint binds ∇Z, the sum over the decoder's cross-attentions
        Z = tape.read(Z, (8, 9, "∇Z"))
    X = embed(tape, p, x, v, 8, 11, later=[(z, 2)])
    mask = causal(len(x))
    for l in range(1, v.L_dec + 1):
        with tape.at(l=l):
            tape.show(8, 13, "l", l)
            X = decoder_layer(tape, p, f"dec.layer{l}.", stream(tape, X, l, "X"), Z, mask, v)
    X = stream(tape, X, v.L_dec + 1, "X")
    if v.pre:
        X = norm_line(tape, X, final_norm(p, "dec.", "_dec"), v, 8, 20, "X")
    return unembed(tape, p, X, v, 8, 21, [(x, 11), (z, 2)]), 11, 5, 8


# ---- The cases ----------------------------------------------------------------------------------------


def sequence(arch):
    """(z, the model's input x or x̃, targets per position, the index's sequence fields)."""
    if arch == "gpt":
        return None, GPT_X, GPT_X[1:] + [0], {"x": GPT_X}
    if arch == "bert":
        xt, targets = vr.bert_masked(BERT_X, set(BERT_MASKS))
        return None, xt, targets, {"x": BERT_X, "masks": BERT_MASKS}
    return ED_Z, ED_X, ED_X[1:] + [0], {"z": ED_Z, "x": ED_X}


def run_case(p, v, z, x, targets):
    """loss, {tensor: ∇θ}, {key: reference value}, {stream: ∇}, by float64 autograd through the tape."""
    leaves = {k: t.clone().requires_grad_(True) for k, t in p.items()}
    tape = Tape()
    P, alg, line, arch_alg = gpt(tape, leaves, v, x) if v.arch == "gpt" else bert(tape, leaves, v, x) \
        if v.arch == "bert" else ed(tape, leaves, v, z, x)
    loss = loss_of(tape, P, targets, alg, line, arch_alg)
    loss.backward()
    values = tape.values()
    streams = {f"{k[6]}_{k[3]}": g for k, g in values.items() if k[0] == "stream"}
    values = {k: g for k, g in values.items() if k[0] != "stream"}
    return loss.item(), {k: t.grad for k, t in leaves.items()}, values, streams


def check_against_plain_forward(name, p, v, z, x, targets, loss, grads, streams):
    """The tape's forward is the paper's model: its loss, ∇θ and stream gradients equal
    test_backward_command.reference's (written with gen_variants_reference's layers) to rounding."""
    loss_r, grads_r, streams_r = bc.reference(p, v, z, x, targets)
    assert abs(loss - loss_r) <= 1e-12 * abs(loss_r), (name, loss, loss_r)
    for k in grads_r:
        assert torch.allclose(grads[k], grads_r[k], rtol=0, atol=1e-12), (name, k)
    assert set(streams) == set(streams_r), (name, sorted(streams), sorted(streams_r))
    for k in streams_r:
        assert torch.allclose(streams[k], streams_r[k], rtol=0, atol=1e-12), (name, k)


class Data:
    """The values of one case, back to back, in float64 (loss, ∇θ, streams: the API's double outputs)
    or float32 (the trace's values: the trace holds floats); an array met before is stored once."""

    def __init__(self, dtype):
        self.dtype, self.chunks, self.size, self.seen = dtype, [], 0, {}

    def add(self, t):
        a = np.ascontiguousarray(t.detach().numpy(), dtype=self.dtype).reshape(-1)
        if a.tobytes() not in self.seen:
            self.seen[a.tobytes()] = self.size
            self.chunks.append(a)
            self.size += a.size
        return self.seen[a.tobytes()]

    def save(self, path):
        np.save(path, np.concatenate(self.chunks))


def matrix_shape(t):
    """(rows, cols): a vector is one column, a scalar 1 × 1."""
    return (t.shape[0], t.shape[1]) if t.dim() == 2 else (t.shape[0], 1) if t.dim() == 1 else (1, 1)


def table_shape(name, t):
    """(count, rows, cols) as the parameter table (ParamEntry) has it: per-head tensors count = H or H_kv."""
    per_head = name.rsplit(".", 1)[-1] in ("W_q", "b_q", "W_k", "b_k", "W_v", "b_v")
    return (t.shape[0], *matrix_shape(t[0])) if per_head else (1, *matrix_shape(t))


def main():
    os.makedirs(OUT, exist_ok=True)
    index = []
    for seed, (name, arch, keys, what) in enumerate(CASES):
        cfg = {"arch": arch, **vr.SIZES, **vr.ARCH_SIZES[arch], **keys}
        v = vr.Variant(cfg)
        p = vr.make_params(cfg, v, torch.Generator().manual_seed(24700 + seed))
        bc.write_checkpoint(os.path.join(OUT, name + ".safetensors"), cfg, p)
        z, x, targets, seq = sequence(arch)
        loss, grads, values, streams = run_case(p, v, z, x, targets)
        check_against_plain_forward(name, p, v, z, x, targets, loss, grads, streams)
        api, traced = Data(np.float64), Data(np.float32)
        entry = {"name": name, "what": what, "checkpoint": name + ".safetensors", "api": name + "_api.npy",
                 "traced": name + "_traced.npy", **seq, "loss": api.add(torch.tensor(loss))}
        entry["grads"] = {k: [api.add(g), *table_shape(k, g)] for k, g in grads.items()}
        entry["streams"] = {k: [api.add(g), *matrix_shape(g)] for k, g in sorted(streams.items())}
        names = sorted({k[6] for k in values})
        entry["names"] = names
        entry["values"] = [n for k, g in sorted(values.items())
                           for n in (*k[:6], names.index(k[6]), traced.add(g), *matrix_shape(g))]
        api.save(os.path.join(OUT, name + "_api.npy"))
        traced.save(os.path.join(OUT, name + "_traced.npy"))
        index.append(entry)
        print(f"  {name}: loss {loss:.6f}, {len(values)} traced values ({traced.size} numbers), {api.size} for ∇θ")
    with open(os.path.join(OUT, "index.json"), "w") as f:
        json.dump({"about": "torch autograd (float64) of every value the traced backward binds; "
                            "by tests/reference/gen_backprop_reference.py", "cases": index}, f, ensure_ascii=False,
                  separators=(",", ":"))
        f.write("\n")
    total = sum(os.path.getsize(os.path.join(OUT, f)) for f in os.listdir(OUT))
    print(f"wrote {OUT}: {total} bytes")


if __name__ == "__main__":
    main()
