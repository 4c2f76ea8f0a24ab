#!/usr/bin/python3
"""Writes tests/data/vocab/: GPT-layout models without GPT-2's tokenizer files, and meta.pkl files
written by Python's own pickle, for tests/core/test_vocab_models.cpp (docs/ecosystem.md, "Models
without tokenizer files").

  mingpt-ids/     minGPT's layout (untied lm_head, biases, tanh GELU) with a vocabulary of 3 and no
                  tokenizer at all: Stepformer opens it with plain ids #1 #2 #3.
  nanogpt-char/   nanoGPT's layout (bias=False, tied, exact GELU) of a character model whose
                  vocabulary is in meta.pkl ({'vocab_size', 'itos', 'stoi'}, protocol 4, as
                  nanoGPT's prepare.py writes it), as the shakespeare_char tutorial leaves it.
  pickles/        meta_p2.pkl … meta_p5.pkl: the same meta at protocols 2–5; proto0.pkl (text
                  protocol, refused); and hostile files, each refused: reduce.pkl (the classic
                  os.system payload, a class whose __reduce__ returns (os.system, ('…',)), at
                  protocols 4 and 2: reduce_p2.pkl),
                  build.pkl (BUILD on a dict, hand-written), truncated.pkl, deep.pkl (lists nested
                  300 deep), huge_length.pkl (a BINUNICODE8 declaring 2⁶² bytes).

Each model folder has expected.json: {"x": paper ids (1-based), "text" (nanogpt-char), "log_p":
ℓ × N_V log-probabilities}, computed in float64 by gen_ecosystem_reference.gpt2_log_probs, the
independent PyTorch implementation in nanoGPT's own layout (nothing of Stepformer's).
The hostile pickles are bytes only: nothing here or in the tests ever unpickles them.

Run: /usr/bin/python3 tests/reference/gen_vocab_models.py
"""
import json
import os
import pickle
import shutil
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_ecosystem_reference as ref  # noqa: E402
import make_ecosystem_checkpoint as mk  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "vocab")
CHARS = "\n !',.?abcdefghijklmnopqrstuvwxyzé"  # nanoGPT sorts its characters; so does this
TEXT = "hello, world!\nthe café is open."


def write_model(out, layout, seed, N_V, bias, activation):
    """A 1-layer model (2 heads, C = 8, ℓ_max = 32) in `layout`'s names; returns config.json's dict."""
    os.makedirs(out)
    L, H, C, T = 1, 2, 8, 32
    r = mk.Random(seed, 1.0)
    p = mk.gpt_params(r, C, L, T, N_V, 4 * C, bias)
    tensors = mk.gpt_tensors(p, layout, L, T, N_V, C, r, "transformer.", buffers=layout == "mingpt", keep_lm_head=False)
    mk.write_safetensors(os.path.join(out, "model.safetensors"), [(n, "F32", a) for n, a in tensors], {"format": "pt"})
    config = {"model_type": "gpt2", "n_layer": L, "n_head": H, "n_embd": C, "block_size": T, "vocab_size": N_V,
              "layer_norm_epsilon": 1e-5, "activation_function": activation}
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    return config


def write_expected(out, config, x, extra):
    w = ref.Weights(os.path.join(out, "model.safetensors"), "transformer.")
    lp = ref.gpt2_log_probs(w, config, [i - 1 for i in x], conv1d=False)  # paper id = the model's id + 1
    doc = dict(extra, x=x, log_p=[[float(v) for v in row] for row in lp])
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(doc, f, separators=(",", ":"), ensure_ascii=False)
        f.write("\n")


def meta():
    """nanoGPT's data/shakespeare_char/prepare.py: meta = {'vocab_size', 'itos', 'stoi'}."""
    return {"vocab_size": len(CHARS), "itos": dict(enumerate(CHARS)), "stoi": {c: i for i, c in enumerate(CHARS)}}


class Payload:
    """What an attacker pickles: unpickling it would run os.system (never done here)."""

    def __reduce__(self):
        return (os.system, ("echo pwned",))


def deep(n):
    v = []
    for _ in range(n):
        v = [v]
    return v


def write_pickles(out):
    os.makedirs(out)
    files = {f"meta_p{p}.pkl": pickle.dumps(meta(), protocol=p) for p in (2, 3, 4, 5)}
    files["proto0.pkl"] = pickle.dumps(meta(), protocol=0)
    files["reduce.pkl"] = pickle.dumps({"itos": Payload()}, protocol=4)  # STACK_GLOBAL, then REDUCE
    files["reduce_p2.pkl"] = pickle.dumps({"itos": Payload()}, protocol=2)  # GLOBAL, then REDUCE
    # EMPTY_DICT, EMPTY_DICT, BUILD, STOP: BUILD first, with no GLOBAL before it.
    files["build.pkl"] = b"\x80\x04}\x94}\x94b."
    files["truncated.pkl"] = files["meta_p4.pkl"][: len(files["meta_p4.pkl"]) // 2]
    files["deep.pkl"] = pickle.dumps({"itos": deep(300)}, protocol=4)
    # PROTO 4, BINUNICODE8 of 2⁶² bytes, then 2 bytes.
    files["huge_length.pkl"] = b"\x80\x04\x8d" + (1 << 62).to_bytes(8, "little") + b"ab"
    for name, data in files.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    ids = os.path.join(OUT, "mingpt-ids")
    config = write_model(ids, "mingpt", 31, 3, bias=True, activation="gelu_new")
    write_expected(ids, config, [1, 2, 3, 1], {"what": "minGPT, N_V = 3, no tokenizer"})

    char = os.path.join(OUT, "nanogpt-char")
    config = write_model(char, "nanogpt", 32, len(CHARS), bias=False, activation="gelu")
    with open(os.path.join(char, "meta.pkl"), "wb") as f:
        pickle.dump(meta(), f, protocol=4)
    write_expected(char, config, [CHARS.index(c) + 1 for c in TEXT], {"what": "nanoGPT char model, meta.pkl",
                                                                       "text": TEXT, "chars": CHARS})
    write_pickles(os.path.join(OUT, "pickles"))
    print(f"wrote {OUT}: mingpt-ids, nanogpt-char ({len(CHARS)} characters), pickles")


if __name__ == "__main__":
    main()
