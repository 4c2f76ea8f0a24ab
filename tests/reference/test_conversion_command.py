#!/usr/bin/python3
"""Runs the ckpt.pt conversion command that Stepformer prints (core/io/model_files.cpp,
conversion_command; docs/ecosystem.md) on a small fake nanoGPT checkpoint, then opens the result.

  1. writes DIR/out/ckpt.pt as nanoGPT's train.py saves it ({'model': state dict with the
     "_orig_mod." prefix of torch.compile, 'model_args', 'config': {'dataset': …}}) with torch, and
     DIR/data/<dataset>/meta.pkl as prepare.py writes it (not beside the checkpoint: sample.py's place);
  2. asks stepformer-cli to open DIR/out/ckpt.pt and takes the command from its refusal;
  3. runs that command in DIR (python3 with torch; the safetensors package, absent from Debian, is
     stood in for by a save_file that writes through make_ecosystem_checkpoint.write_safetensors);
  4. checks config.json (sizes and "itos") and that stepformer-cli opens the folder with the
     characters of meta.pkl and gives P for a prompt.

Run: /usr/bin/python3 tests/reference/test_conversion_command.py build/stepformer-cli
"""
import json
import os
import pickle
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_ecosystem_checkpoint as mk  # noqa: E402

CHARS = "\n abcdefgh"
STUB = '''import sys
sys.path.insert(0, %r)
import make_ecosystem_checkpoint as mk
def save_file(tensors, path):
    mk.write_safetensors(path, [(k, "F32", v.numpy()) for k, v in tensors.items()], {"format": "pt"})
'''


def fake_checkpoint(root):
    C, L, T, N_V = 8, 1, 16, len(CHARS)
    p = mk.gpt_params(mk.Random(5, 1.0), C, L, T, N_V, 4 * C, bias=False)
    sd = {"_orig_mod.transformer." + k: torch.tensor(v) for k, v in p.items()}
    sd["_orig_mod.lm_head.weight"] = sd["_orig_mod.transformer.wte.weight"]  # tied: one tensor, as nanoGPT's
    args = {"n_layer": L, "n_head": 2, "n_embd": C, "block_size": T, "bias": False, "vocab_size": N_V, "dropout": 0.0}
    os.makedirs(os.path.join(root, "out"))
    torch.save({"model": sd, "model_args": args, "config": {"dataset": "chars"}, "iter_num": 1},
               os.path.join(root, "out", "ckpt.pt"))
    os.makedirs(os.path.join(root, "data", "chars"))
    meta = {"vocab_size": N_V, "itos": dict(enumerate(CHARS)), "stoi": {c: i for i, c in enumerate(CHARS)}}
    with open(os.path.join(root, "data", "chars", "meta.pkl"), "wb") as f:
        pickle.dump(meta, f)


def main():
    cli = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as root:
        fake_checkpoint(root)
        refused = subprocess.run([cli, "info", "--model", "out/ckpt.pt"], cwd=root, capture_output=True, text=True)
        assert refused.returncode != 0, refused.stdout
        command = refused.stderr[refused.stderr.index("python3 -c"):].strip()
        os.makedirs(os.path.join(root, "stub", "safetensors"))
        open(os.path.join(root, "stub", "safetensors", "__init__.py"), "w").close()
        with open(os.path.join(root, "stub", "safetensors", "torch.py"), "w") as f:
            f.write(STUB % HERE)
        env = dict(os.environ, PYTHONPATH=os.path.join(root, "stub"), PATH="/usr/bin:" + os.environ.get("PATH", ""))
        subprocess.run(command, shell=True, cwd=root, env=env, check=True)

        with open(os.path.join(root, "out", "config.json")) as f:
            cfg = json.load(f)
        assert cfg["itos"] == list(CHARS), cfg
        assert (cfg["n_layer"], cfg["n_head"], cfg["n_embd"], cfg["n_positions"], cfg["vocab_size"]) == (1, 2, 8, 16, len(CHARS)), cfg
        tensors = mk.read_safetensors(os.path.join(root, "out", "model.safetensors"))
        assert "transformer.wte.weight" in tensors and not any(k.startswith("_orig_mod.") for k in tensors), sorted(tensors)
        assert np.array_equal(tensors["lm_head.weight"][1], tensors["transformer.wte.weight"][1])

        info = subprocess.run([cli, "forward", "--model", "out", "--prompt", "bad\nface"], cwd=root, capture_output=True,
                              text=True)
        assert info.returncode == 0, info.stderr
        assert "'↵'" in info.stdout and "'f'" in info.stdout, info.stdout  # the prompt's newline and characters, from "itos"
    print("conversion command: ckpt.pt → model.safetensors + config.json (sizes, itos from meta.pkl): opens, forward runs")


if __name__ == "__main__":
    main()
