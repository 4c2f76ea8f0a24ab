#!/usr/bin/python3
"""Checks `stepformer-cli backward` (cli/cmd_backward.cpp) against torch autograd in float64.

For each case below (the paper's GPT, BERT and encoder-decoder, and variant mixes) it
  1. draws θ with gen_variants_reference.make_params (float32 values, O(1) weights: an
     initialised model's N(0, 0.02²) weights would make most gradients tiny) and writes it as a
     Stepformer checkpoint (safetensors F32, the configuration in its metadata);
  2. runs `stepformer-cli backward` on one sequence into a temporary folder;
  3. recomputes the summed loss of the paper's training algorithm, ∂loss/∂θ for every tensor and
     ∂loss/∂X as the residual stream enters each layer (and after the last) with torch autograd,
     the forward written independently of the C++ core (gen_variants_reference.py's pieces:
     embed, norm, mh_attention, mlp, unembed, from docs/variants.md and the paper);
  4. asserts the files' names, shapes and dtype (float64), and that every value agrees.
Then it checks the command's one-line refusals of bad input.

Run: /usr/bin/python3 tests/reference/test_backward_command.py build/stepformer-cli
"""
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_variants_reference as vr  # noqa: E402
import make_ecosystem_checkpoint as mk  # noqa: E402

torch.set_default_dtype(torch.float64)

# Both sides compute in float64 from the same float32 θ, by different routes (batched C++ kernels,
# torch's own). Each entry's rounding error is a few ε = 2.2e-16 times the size of the terms summed
# into it, times the depth of the graph (≤ 2 layers, ~30 operations deep): far below 1e-12 of the
# gradient's scale. 1e-9 leaves a margin of 10³ over that and still catches any real mistake (a
# missing term, a transposed head, the mean instead of the sum), which shows at 1e-3 or more.
# Relative to the largest entry of the same kind (all of ∇θ, or all of one stream), not to each
# tensor's own: some gradients are exactly 0 in exact arithmetic (∇b_k, as softmax ignores a shift
# of a whole column of scores, unless RoPE rotates it) and are pure rounding noise on both sides
# (~1e-16 here). Observed: ≤ 4e-15 of the largest entry in every case.
TOLERANCE = 1e-9

GPT_X = vr.GPT_X  # [bos, a, c, b, d, e, eos]
BERT_X, BERT_MASKS = vr.BERT_X, [3, 5]
ED_Z, ED_X = vr.ED_Z, vr.ED_X

# (name, arch, configuration keys over gen_variants_reference's SIZES)
CASES = [
    ("gpt (paper: pre-LN, learned W_p, GELU)", "gpt", {"L": 2}),
    ("gpt RMSNorm + RoPE + SwiGLU + tied + H_kv = 1", "gpt",
     {"norm": "rms_norm", "position": "rope", "activation": "swiglu", "tied_unembedding": True, "H": 4, "H_kv": 1,
      "L": 2}),
    ("gpt post-LN + ALiBi + gelu_tanh", "gpt",
     {"norm_position": "post", "position": "alibi", "activation": "gelu_tanh", "L": 2}),
    ("bert (paper: post-LN)", "bert", {"L": 2}),
    ("bert pre-LN", "bert", {"L": 2, "norm_position": "pre"}),
    ("bert with BERT checkpoints' extras (W_s, embedding layer norm, b_u; not in the paper)", "bert",
     {"L": 1, "embedding_norm": True, "token_types": 2, "unembedding_bias": True}),
    ("ed (paper: post-LN, ReLU)", "ed", {"L_enc": 2, "L_dec": 2}),
    ("ed pre-LN + RoPE", "ed", {"L_enc": 1, "L_dec": 2, "norm_position": "pre", "position": "rope"}),
]


# ---- The forward with the residual stream kept: X entering each layer, and after the last ----------


def causal(ell):
    return torch.tensor([[tz <= tx for tx in range(ell)] for tz in range(ell)])


def encoder_stack(p, prefix, X, mask, v, L):
    """Layers 1 … L (gen_variants_reference.encoder_layer); returns X and [X entering 1, …, after L]."""
    stream = [X]
    for l in range(1, L + 1):
        X = vr.encoder_layer(p, f"{prefix}layer{l}.", X, mask, v, "attn.")
        stream.append(X)
    return X, stream


def decoder_layer(p, q, X, Z, v):
    """Algorithm 8 lines 14–19 (as gen_variants_reference.ed_forward writes them inline)."""
    mask = causal(X.shape[1])
    if v.pre:
        X = X + vr.mh_attention(p, q + "self_attn.", *(2 * [vr.norm(p, q + "#3", X, v)]), mask, v, True)
        X = X + vr.mh_attention(p, q + "cross_attn.", vr.norm(p, q + "#4", X, v), Z, None, v, False)
        return X + vr.mlp(p, q, vr.norm(p, q + "#5", X, v), v, 3, 4, "2")
    X = vr.norm(p, q + "#3", X + vr.mh_attention(p, q + "self_attn.", X, X, mask, v, True), v)
    X = vr.norm(p, q + "#4", X + vr.mh_attention(p, q + "cross_attn.", X, Z, None, v, False), v)
    return vr.norm(p, q + "#5", X + vr.mlp(p, q, X, v, 3, 4, "2"), v)


def forward_with_streams(p, v, z, x):
    """P and {"X": [...], "Z": [...]}: the streams whose gradients the command writes."""
    if v.arch == "gpt":
        X, xs = encoder_stack(p, "", vr.embed(p, x, v), causal(len(x)), v, v.L)
        if v.pre:
            X = vr.norm(p, "#", X, v)  # Algorithm 10 line 10
        return vr.unembed(p, X, v), {"X": xs}
    if v.arch == "bert":
        X, xs = encoder_stack(p, "", vr.embed(p, x, v), None, v, v.L)
        if v.pre:
            X = vr.norm(p, "enc.#", X, v)
        X = vr.activation("gelu", p["W_f"] @ X + p["b_f"][:, None])  # Algorithm 9 line 10
        return vr.unembed(p, vr.norm(p, "#", X, v), v), {"X": xs}  # lines 11–12
    Z, zs = encoder_stack(p, "enc.", vr.embed(p, z, v), None, v, v.L_enc)
    if v.pre:
        Z = vr.norm(p, "enc.#", Z, v)
    X = vr.embed(p, x, v)
    xs = [X]
    for l in range(1, v.L_dec + 1):
        X = decoder_layer(p, f"dec.layer{l}.", X, Z, v)
        xs.append(X)
    if v.pre:
        X = vr.norm(p, "dec.#", X, v)
    return vr.unembed(p, X, v), {"X": xs, "Z": zs}


def sequence(arch):
    """(z, the model's input x or x̃, targets per position, the command's arguments)."""
    ids = lambda s: ",".join(map(str, s))  # noqa: E731
    if arch == "gpt":
        return None, GPT_X, GPT_X[1:] + [0], ["--tokens", ids(GPT_X)]
    if arch == "bert":
        xt, targets = vr.bert_masked(BERT_X, set(BERT_MASKS))
        return None, xt, targets, ["--tokens", ids(BERT_X), "--masks", ids(BERT_MASKS)]
    return ED_Z, ED_X, ED_X[1:] + [0], ["--context-tokens", ids(ED_Z), "--tokens", ids(ED_X)]


def reference(p, v, z, x, targets):
    """loss, {tensor: ∂loss/∂tensor}, {"X_l"/"Z_l": ∂loss/∂stream} by float64 autograd."""
    leaves = {k: t.clone().requires_grad_(True) for k, t in p.items()}
    P, streams = forward_with_streams(leaves, v, z, x)
    loss = -sum(torch.log(P[y - 1, t]) for t, y in enumerate(targets) if y)  # the paper's sum
    named = {f"{s}_{l}": m for s, ms in streams.items() for l, m in enumerate(ms, start=1)}
    grads = torch.autograd.grad(loss, list(leaves.values()) + list(named.values()))
    return loss.item(), dict(zip(leaves, grads[:len(leaves)])), dict(zip(named, grads[len(leaves):]))


# ---- The command's side ------------------------------------------------------------------------------


def file_shape(name, t):
    """The checkpoint's shape: a per-head tensor's count of 1 (H_kv = 1) is no dimension."""
    per_head = name.rsplit(".", 1)[-1] in ("W_q", "b_q", "W_k", "b_k", "W_v", "b_v")
    return tuple(t.shape[1:]) if per_head and t.shape[0] == 1 else tuple(t.shape)


def write_checkpoint(path, cfg, p):
    tensors = [(k, "F32", t.reshape(file_shape(k, t)).numpy().astype(np.float32)) for k, t in p.items()]
    mk.write_safetensors(path, tensors, {"config": json.dumps(cfg)})


def load(folder, name):
    a = np.load(os.path.join(folder, name + ".npy"))
    assert a.dtype == np.float64, f"{name}.npy is {a.dtype}, not float64"
    return a


def check_case(cli, root, seed, name, arch, keys):
    cfg = {"arch": arch, **vr.SIZES, **vr.ARCH_SIZES[arch], **keys}
    v = vr.Variant(cfg)
    p = vr.make_params(cfg, v, torch.Generator().manual_seed(24000 + seed))
    model, out = os.path.join(root, f"m{seed}.safetensors"), os.path.join(root, f"g{seed}")
    write_checkpoint(model, cfg, p)
    z, x, targets, args = sequence(arch)
    run = subprocess.run([cli, "backward", "--model", model, *args, "--out-dir", out], capture_output=True, text=True)
    assert run.returncode == 0, f"{name}: {run.stderr}"

    loss, grads, streams = reference(p, v, z, x, targets)
    expected = {"loss"} | {"grad_" + k for k in grads} | {"grad_" + k for k in streams}
    written = {f[:-len(".npy")] for f in os.listdir(out)}
    assert written == expected, f"{name}: files {sorted(written ^ expected)} differ"
    got_loss = load(out, "loss")
    assert got_loss.shape == () and abs(got_loss - loss) <= TOLERANCE * loss, f"{name}: loss {got_loss} vs {loss}"

    worst = {}
    for kind, want in (("θ", grads), ("stream", streams)):
        scale = max(t.abs().max().item() for t in want.values())
        for k, t in want.items():
            a = load(out, "grad_" + k)
            assert a.shape == file_shape(k, t), f"{name}: grad_{k}.npy has shape {a.shape}, want {file_shape(k, t)}"
            gap = np.abs(a - t.reshape(a.shape).numpy()).max() / scale
            assert gap <= TOLERANCE, f"{name}: grad_{k} differs by {gap:.3g} of the largest ∂loss/∂{kind} entry"
            worst[kind] = max(worst.get(kind, 0.0), gap)
    print(f"  {name}: loss {loss:.6f}, {len(grads)} tensors (worst {worst['θ']:.1e}), {len(streams)} streams "
          f"(worst {worst['stream']:.1e}) of the largest entry")
    return model


def refused(cli, args, status, words):
    """The command exits with `status` and one stderr line containing every one of `words`."""
    r = subprocess.run([cli, "backward", *args], capture_output=True, text=True)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == status and len(lines) == 1 and all(w in lines[0] for w in words), (args, r.returncode,
                                                                                              r.stderr)


def check_refusals(cli, root, gpt, bert):
    out = ["--out-dir", os.path.join(root, "never")]
    cfg = {"arch": "bert", **vr.SIZES, **vr.ARCH_SIZES["bert"], "mask_id": -1}  # a BERT without mask_token
    unmaskable = os.path.join(root, "no-mask.safetensors")
    write_checkpoint(unmaskable, cfg, vr.make_params(cfg, vr.Variant(cfg), torch.Generator().manual_seed(1)))
    refused(cli, ["--model", unmaskable, "--tokens", "8,1,2,9", "--masks", "2", *out], 1, ["no mask_token"])
    refused(cli, ["--model", bert, "--tokens", "8,1,2,9", *out], 2, ["--masks POSITIONS", "e.g. --masks 2,4"])
    refused(cli, ["--model", bert, "--tokens", "8,1,2,9", "--masks", "5", *out], 2, ["--masks", "outside", "1 … 4"])
    refused(cli, ["--model", bert, "--tokens", "8,1,2,9", "--masks", "2,2", *out], 2, ["--masks", "twice"])
    refused(cli, ["--model", bert, "--tokens", "8,1,2,9", "--masks", "2,x", *out], 2, ["--masks"])
    refused(cli, ["--model", gpt, "--tokens", "8,1,2", "--masks", "2", *out], 2, ["--masks is not for this model"])
    refused(cli, ["--model", gpt, "--out-dir", os.path.join(root, "never")], 2, ["--prompt", "--tokens"])
    refused(cli, ["--model", gpt, "--tokens", "8,1,2"], 2, ["--out-dir"])
    assert not os.path.exists(os.path.join(root, "never")), "a refused command made its --out-dir"


def main():
    cli = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as root:
        models = {}
        for seed, (name, arch, keys) in enumerate(CASES):
            models.setdefault(arch, check_case(cli, root, seed, name, arch, keys))
        check_refusals(cli, root, models["gpt"], models["bert"])
    print(f"backward command: loss, ∇θ and ∂loss/∂X per layer equal float64 torch autograd (≤ {TOLERANCE:g}) "
          f"in {len(CASES)} cases; bad input refused")


if __name__ == "__main__":
    main()
