#!/usr/bin/python3
"""Writes tests/data/ecosystem/<case>/: a tiny checkpoint in one of the ecosystem's layouts
(make_ecosystem_checkpoint.py: model.safetensors, config.json, tokenizer files) and
expected.json, the log-probabilities log P of a few token sequences computed by an INDEPENDENT
float64 PyTorch implementation written in that ecosystem's own layout and conventions:

  GPT-2 (Hugging Face):  rows are tokens; Conv1D y = x W + b with W [in, out]; fused c_attn split
                         into q, k, v, heads by .view(ℓ, H, C/H); causal mask; the tanh GELU; the
                         logits x wteᵀ.
  nanoGPT / minGPT:      the same with nn.Linear y = x Wᵀ + b (W [out, in]), optional biases,
                         exact GELU (nanoGPT) or tanh GELU (minGPT), logits x lm_headᵀ.
  BERT (Hugging Face):   word + position + token type 0 embeddings, their LayerNorm; per layer
                         self-attention without a mask, dense + residual + LayerNorm, intermediate
                         GELU, dense + residual + LayerNorm; the MLM head: dense, GELU, LayerNorm,
                         the decoder (tied to the word embeddings) plus its bias.

The weights are read back from the written file (so the file is what is tested) as float64 and
used as they are: no paper names, no transposes into the paper's layout.

expected.json: {"case", "layout", "what", "tokens" (the tokenizer's size), "paper" (what the
configuration must say: arch, L, H, d_e, d_attn, d_mlp, l_max, N_V, activation, tied, eps, bos,
eos, mask), "sequences": [{"x": 1-based paper ids, "rows": 1-based ids, "log_p": [rows × ℓ]}]}.
log_p[i][t] = log P[rows[i], t], where column t of P is the model's distribution at position t.

Run: /usr/bin/python3 tests/reference/gen_ecosystem_reference.py
"""
import json
import math
import os
import shutil
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_ecosystem_checkpoint as mk  # noqa: E402

torch.set_default_dtype(torch.float64)
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "ecosystem")

CASES = [
    ("hf-gpt2", "hf-gpt2", 11, "Hugging Face GPT-2: Conv1D [in, out], no prefix, attn.bias and attn.masked_bias buffers, tied",
     {}),
    ("hf-gpt2-prefixed", "hf-gpt2", 12, "Hugging Face GPT-2 with the transformer. prefix, no buffers, n_inner = 40",
     {"prefix": "transformer.", "buffers": False, "n_inner": 40}),
    ("hf-gpt2-half", "hf-gpt2", 13, "Hugging Face GPT-2 with F16, BF16 and F64 tensors (read as float32)",
     {"dtypes": ("F16", "BF16", "F64"), "buffers": False}),
    ("nanogpt", "nanogpt", 14, "nanoGPT: nn.Linear [out, in], biases, lm_head dropped (tied), exact GELU, "
     "vocabulary padded to 300 rows", {"pad_vocab": 23}),
    ("nanogpt-nobias", "nanogpt", 15, "nanoGPT bias=False (no Linear or LayerNorm biases), lm_head saved as a copy of wte",
     {"bias": False, "keep_lm_head": True}),
    ("mingpt", "mingpt", 16, "minGPT: untied lm_head, biases, attn.bias buffers, tanh GELU", {}),
    ("hf-bert", "hf-bert", 17, "Hugging Face BERT for pre-training: MLM head, pooler and NSP head (ignored), "
     "position_ids buffer, decoder saved as a copy of the word embeddings", {}),
    ("hf-bert-tf", "hf-bert", 18, "BERT with Google's TensorFlow-converted names (LayerNorm gamma/beta), no "
     "decoder.weight, no pooler", {"old_names": True, "bert_heads": False}),
]


def f32(x):
    """A float64 number rounded to float32, as the C++ configuration keeps ε."""
    return float(np.float32(x))


def activation(name):
    if name == "gelu":
        return lambda x: F.gelu(x)
    if name == "gelu_new":
        return lambda x: 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
    raise ValueError(name)


class Weights:
    """The file's tensors (read back) by name, as float64 torch tensors."""

    def __init__(self, path, prefix=""):
        self.t = {k: torch.tensor(v) for k, (dtype, v) in mk.read_safetensors(path).items()}
        self.prefix = prefix

    def has(self, name):
        return self.prefix + name in self.t

    def __getitem__(self, name):
        return self.t[self.prefix + name]


def gpt2_log_probs(w, cfg, ids0, conv1d):
    """GPT-2 as Hugging Face / nanoGPT / minGPT compute it; ids0 are the files' 0-based ids.
    Returns log softmax of the logits, ℓ × N_V (rows are tokens)."""
    C, H, L = cfg["n_embd"], cfg["n_head"], cfg["n_layer"]
    hs, eps, act = C // H, f32(cfg["layer_norm_epsilon"]), activation(cfg["activation_function"])

    def linear(x, name):
        y = x @ w[name + ".weight"] if conv1d else x @ w[name + ".weight"].T
        return y + w[name + ".bias"] if w.has(name + ".bias") else y

    def ln(x, name):
        return F.layer_norm(x, (C,), w[name + ".weight"], w[name + ".bias"] if w.has(name + ".bias") else None, eps)

    n = len(ids0)
    x = w["wte.weight"][ids0] + w["wpe.weight"][:n]
    future = torch.triu(torch.ones(n, n, dtype=torch.bool), 1)
    for l in range(L):
        h = f"h.{l}."
        q, k, v = linear(ln(x, h + "ln_1"), h + "attn.c_attn").split(C, dim=1)
        q, k, v = (m.view(n, H, hs).transpose(0, 1) for m in (q, k, v))  # (H, ℓ, hs)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(hs)
        att = att.masked_fill(future, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(0, 1).reshape(n, C)
        x = x + linear(y, h + "attn.c_proj")
        x = x + linear(act(linear(ln(x, h + "ln_2"), h + "mlp.c_fc")), h + "mlp.c_proj")
    x = ln(x, "ln_f")
    lm_head = w.t["lm_head.weight"] if "lm_head.weight" in w.t else w["wte.weight"]
    return torch.log_softmax(x @ lm_head.T, dim=-1)


def bert_log_probs(w, cfg, ids0):
    """BertForMaskedLM's forward (token types 0, attention mask all ones); ℓ × N_V log-probabilities."""
    C, H, L = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_hidden_layers"]
    hs, eps, act = C // H, f32(cfg["layer_norm_eps"]), activation(cfg["hidden_act"])

    def linear(x, name):
        return x @ w[name + ".weight"].T + w[name + ".bias"]

    def ln(x, name):
        g, b = (".gamma", ".beta") if w.has(name + ".gamma") else (".weight", ".bias")
        return F.layer_norm(x, (C,), w[name + g], w[name + b], eps)

    n = len(ids0)
    e = "bert.embeddings."
    x = w[e + "word_embeddings.weight"][ids0] + w[e + "position_embeddings.weight"][:n] + w[e + "token_type_embeddings.weight"][0]
    x = ln(x, e + "LayerNorm")
    for l in range(L):
        s = f"bert.encoder.layer.{l}.attention."
        q, k, v = (linear(x, s + "self." + m).view(n, H, hs).transpose(0, 1) for m in ("query", "key", "value"))
        ctx = ((q @ k.transpose(-2, -1)) / math.sqrt(hs)).softmax(dim=-1) @ v
        a = ln(linear(ctx.transpose(0, 1).reshape(n, C), s + "output.dense") + x, s + "output.LayerNorm")
        o = f"bert.encoder.layer.{l}."
        x = ln(linear(act(linear(a, o + "intermediate.dense")), o + "output.dense") + a, o + "output.LayerNorm")
    t = ln(act(linear(x, "cls.predictions.transform.dense")), "cls.predictions.transform.LayerNorm")
    decoder = w["cls.predictions.decoder.weight"] if w.has("cls.predictions.decoder.weight") else w[e + "word_embeddings.weight"]
    return torch.log_softmax(t @ decoder.T + w["cls.predictions.bias"], dim=-1)


def sequences(layout, n_tok, N_V, rng):
    """Paper ids (1-based): GPT: [<|endoftext|>, …] (the last of short, medium and ℓ_max = 16
    tokens); BERT: [CLS] … [MASK] … [SEP]."""
    if layout == "hf-bert":
        cls, sep, mask = 5, 6, 7  # vocab.txt lines 5–7
        body = lambda k: [int(i) for i in rng.integers(8, n_tok + 1, k)]
        return [[cls] + body(3) + [mask] + body(2) + [sep], [cls, mask] + body(12) + [sep]]
    eot = n_tok  # <|endoftext|>, the tokenizer's last entry
    body = lambda k: [int(i) for i in rng.integers(1, N_V + 1, k)]
    return [[eot] + body(4), [eot] + body(8), body(16)]


def rows_to_store(N_V, x):
    """Every fifth id, the last 12 (special tokens, padding) and those of x: 1-based."""
    return sorted(set(range(1, N_V + 1, 5)) | set(range(max(1, N_V - 11), N_V + 1)) | set(x))


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    for name, layout, seed, what, kw in CASES:
        out = os.path.join(OUT, name)
        made = mk.make(layout, "tiny", seed, out, **kw)
        cfg, n_tok = made["config"], made["tokens"]
        path = os.path.join(out, "model.safetensors")
        rng = np.random.default_rng(seed)
        seqs = []
        if layout == "hf-bert":
            w = Weights(path)
            N_V = cfg["vocab_size"]
            paper = {"arch": "bert", "L": cfg["num_hidden_layers"], "H": cfg["num_attention_heads"],
                     "d_e": cfg["hidden_size"], "d_attn": cfg["hidden_size"] // cfg["num_attention_heads"],
                     "d_mlp": cfg["intermediate_size"], "l_max": cfg["max_position_embeddings"], "N_V": N_V,
                     "activation": cfg["hidden_act"], "tied": True, "eps": f32(cfg["layer_norm_eps"]),
                     "bos": 5, "eos": 6, "mask": 7}
        else:
            prefix = kw.get("prefix", "" if layout == "hf-gpt2" else "transformer.")
            w = Weights(path, prefix)
            N_V = cfg["vocab_size"]
            paper = {"arch": "gpt", "L": cfg["n_layer"], "H": cfg["n_head"], "d_e": cfg["n_embd"],
                     "d_attn": cfg["n_embd"] // cfg["n_head"], "d_mlp": cfg["n_inner"] or 4 * cfg["n_embd"],
                     "l_max": cfg["n_positions"], "N_V": N_V,
                     "activation": {"gelu_new": "gelu_tanh", "gelu": "gelu"}[cfg["activation_function"]],
                     "tied": layout != "mingpt", "eps": f32(cfg["layer_norm_epsilon"]),
                     "bos": n_tok, "eos": n_tok, "mask": 0}
        for x in sequences(layout, n_tok, N_V, rng):
            ids0 = [i - 1 for i in x]  # paper id = file id + 1
            lp = bert_log_probs(w, cfg, ids0) if layout == "hf-bert" else gpt2_log_probs(w, cfg, ids0, layout == "hf-gpt2")
            rows = rows_to_store(N_V, x)
            seqs.append({"x": x, "rows": rows, "log_p": [[float(lp[t, r - 1]) for t in range(len(x))] for r in rows]})
        doc = {"case": name, "layout": "nanogpt" if layout == "mingpt" else layout, "what": what, "tokens": n_tok,
               "paper": paper, "sequences": seqs}
        with open(os.path.join(out, "expected.json"), "w") as f:
            json.dump(doc, f, separators=(",", ":"))
            f.write("\n")
        print(f"{name}: {what}; {len(seqs)} sequences, N_V = {N_V}, tokenizer {n_tok}")


if __name__ == "__main__":
    main()
