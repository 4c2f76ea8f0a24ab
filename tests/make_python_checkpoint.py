#!/usr/bin/python3
"""Writes tests/data/python_written.safetensors with nothing but json, struct and numpy.

An independent writer for the checkpoint format (docs/checkpoint-format.md), so that the C++
loader is tested against a file it did not produce. The values follow a rule the C++ test
recomputes: with the parameter names sorted, the k-th tensor (0-based) holds k + n/256 at
row-major element n. The tensors are written in that sorted order, not Stepformer's own.

Run: /usr/bin/python3 tests/make_python_checkpoint.py
"""
import json
import os
import struct

import numpy as np

CONFIG = {
    "arch": "gpt", "L": 1, "H": 2, "d_e": 4, "d_attn": 2, "d_mid": 3, "d_mlp": 8,
    "l_max": 4, "eps": 1e-5, "position_init": "learned", "vocab": ["a", "b"],
}


def parameter_shapes(c):
    """The parameter names and row-major shapes (the paper's matrices, heads first)."""
    H, d_e, d_attn, d_mid, d_mlp = c["H"], c["d_e"], c["d_attn"], c["d_mid"], c["d_mlp"]
    N_V = len(c["vocab"]) + 3
    shapes = {"W_e": [d_e, N_V], "W_p": [d_e, c["l_max"]], "gamma": [d_e], "beta": [d_e], "W_u": [N_V, d_e]}
    for l in range(1, c["L"] + 1):
        p = f"layer{l}."
        shapes.update({
            p + "gamma1": [d_e], p + "beta1": [d_e],
            p + "attn.W_q": [H, d_attn, d_e], p + "attn.b_q": [H, d_attn],
            p + "attn.W_k": [H, d_attn, d_e], p + "attn.b_k": [H, d_attn],
            p + "attn.W_v": [H, d_mid, d_e], p + "attn.b_v": [H, d_mid],
            p + "attn.W_o": [d_e, H * d_mid], p + "attn.b_o": [d_e],
            p + "gamma2": [d_e], p + "beta2": [d_e],
            p + "W_mlp1": [d_mlp, d_e], p + "b_mlp1": [d_mlp],
            p + "W_mlp2": [d_e, d_mlp], p + "b_mlp2": [d_e],
        })
    return shapes


def main():
    arrays = {}
    for k, (name, shape) in enumerate(sorted(parameter_shapes(CONFIG).items())):
        n = int(np.prod(shape))
        arrays[name] = (k + np.arange(n) / 256.0).astype("<f4").reshape(shape)
    arrays["train.step"] = np.array([7.0], dtype="<f4")

    header = {"__metadata__": {"config": json.dumps(CONFIG), "writer": "make_python_checkpoint.py"}}
    buffer = b""
    for name, a in arrays.items():
        data = np.ascontiguousarray(a).tobytes()  # C order = row-major
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [len(buffer), len(buffer) + len(data)]}
        buffer += data
    text = json.dumps(header).encode("utf-8")
    text += b" " * (-len(text) % 8)  # pad with spaces to a multiple of 8

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "python_written.safetensors")
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + buffer)
    print(path, len(arrays), "tensors")


if __name__ == "__main__":
    main()
