#!/usr/bin/env python3
"""PyTorch twin of bench/bench_gpt2.cpp: GPT-2 124M's forward pass and KV-cache generation written
with torch ops in float32, on the SAME weights (bench_gpt2 --export DIR writes θ and its parameter
table), so the two can be compared in one run (bench/run_gpt2.sh).

  torch_gpt2.py --weights DIR --threads N [--gen 64] [--repeats 5]

Prints one JSON object: untraced_ms (32 tokens), kv_prefill_ms, kv_gen_ms, kv_tokens_per_s (decode rate
(gen − 1) / (time(gen) − time(1)), argmax), max_abs_diff_p (P[:, 32] against Stepformer's), torch's
version, and the BLAS torch uses with its threads and GEMM rate (bench/twin.py's blas_info). Threads:
run it under OMP_NUM_THREADS = OPENBLAS_NUM_THREADS = MKL_NUM_THREADS = N (run_gpt2.sh does); it
holds torch and OpenBLAS's own pool to N too (twin.pin_threads).
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from twin import blas_info, pin_threads  # noqa: E402


def load(dir_):
    theta = np.fromfile(f"{dir_}/theta.f32", dtype=np.float32)
    table = {e["name"]: e for e in json.load(open(f"{dir_}/table.json"))}

    def get(name):
        """The tensor as the paper writes it: (count, rows, cols) of column-major matrices."""
        e = table[name]
        n = e["count"] * e["rows"] * e["cols"]
        a = theta[e["offset"]: e["offset"] + n].reshape(e["count"], e["cols"], e["rows"]).transpose(0, 2, 1)
        return torch.from_numpy(np.ascontiguousarray(a))

    return table, get


class Gpt2:
    """Pre-LN GPT-2, tied W_u = W_eᵀ, GELU_tanh; rows are tokens (torch's convention)."""

    def __init__(self, table, get):
        self.wte = get("W_e")[0].T.contiguous()  # (N_V, d_e)
        self.wpe = get("W_p")[0].T.contiguous()  # (ℓ_max, d_e)
        self.L = sum(1 for n in table if n.endswith("attn.W_q"))
        self.layers = []
        for l in range(1, self.L + 1):
            p = f"layer{l}."
            wq, wk, wv = (get(p + f"attn.W_{k}") for k in "qkv")  # (H, d, d_e)
            self.H, self.d = wq.shape[0], wq.shape[1]
            w_qkv = torch.cat([w.reshape(-1, w.shape[2]) for w in (wq, wk, wv)]).T.contiguous()  # (d_e, 3·H·d)
            b_qkv = torch.cat([get(p + f"attn.b_{k}").reshape(-1) for k in "qkv"])
            self.layers.append(dict(
                g1=get(p + "gamma1").reshape(-1), b1=get(p + "beta1").reshape(-1),
                w_qkv=w_qkv, b_qkv=b_qkv,
                w_o=get(p + "attn.W_o")[0].T.contiguous(), b_o=get(p + "attn.b_o").reshape(-1),
                g2=get(p + "gamma2").reshape(-1), b2=get(p + "beta2").reshape(-1),
                w1=get(p + "W_mlp1")[0].T.contiguous(), c1=get(p + "b_mlp1").reshape(-1),
                w2=get(p + "W_mlp2")[0].T.contiguous(), c2=get(p + "b_mlp2").reshape(-1)))
        self.g = get("gamma").reshape(-1)
        self.b = get("beta").reshape(-1)

    def forward(self, ids, pos0=0, cache=None):
        """Probabilities for the new tokens `ids` (0-based), at positions pos0…; cache: per layer [K, V]."""
        n = ids.shape[0]
        x = self.wte[ids] + self.wpe[pos0: pos0 + n]  # (n, d_e)
        mask = torch.full((n, pos0 + n), float("-inf")).triu(pos0 + 1)
        for i, w in enumerate(self.layers):
            h = torch.nn.functional.layer_norm(x, (x.shape[1],), w["g1"], w["b1"], 1e-5)
            qkv = torch.addmm(w["b_qkv"], h, w["w_qkv"]).view(n, 3, self.H, self.d).transpose(0, 2)  # (H, 3, n, d)
            q, k, v = qkv[:, 0], qkv[:, 1], qkv[:, 2]
            if cache is not None:
                if len(cache) <= i:
                    cache.append([k, v])
                else:
                    cache[i] = [torch.cat([cache[i][0], k], 1), torch.cat([cache[i][1], v], 1)]
                k, v = cache[i]
            a = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(self.d) + mask, -1)  # (H, n, ℓ)
            y = (a @ v).transpose(0, 1).reshape(n, -1)
            x = x + torch.addmm(w["b_o"], y, w["w_o"])
            h = torch.nn.functional.layer_norm(x, (x.shape[1],), w["g2"], w["b2"], 1e-5)
            x = x + torch.addmm(w["c2"], torch.nn.functional.gelu(torch.addmm(w["c1"], h, w["w1"]), approximate="tanh"), w["w2"])
        x = torch.nn.functional.layer_norm(x, (x.shape[1],), self.g, self.b, 1e-5)
        return torch.softmax(x @ self.wte.T, -1)  # (n, N_V)

    def generate(self, ids, gen):
        cache = []
        p = self.forward(ids, 0, cache)[-1]
        out = [int(p.argmax())]
        for _ in range(gen - 1):
            p = self.forward(torch.tensor(out[-1:]), ids.shape[0] + len(out) - 1, cache)[-1]
            out.append(int(p.argmax()))
        return out


def median_ms(repeats, f):
    f()
    ms = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        f()
        ms.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ms)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--weights", required=True)
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--gen", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()
    pin_threads(a.threads)
    t0 = time.perf_counter()
    model = Gpt2(*load(a.weights))
    load_ms = (time.perf_counter() - t0) * 1e3
    check = json.load(open(f"{a.weights}/check.json"))
    ids = torch.tensor(check["x"]) - 1  # the paper's 1-based ids → 0-based
    with torch.inference_mode():
        P = model.forward(ids)
        diff = float((P[-1] - torch.tensor(check["p_last"])).abs().max())
        untraced = median_ms(a.repeats, lambda: model.forward(ids))
        prefill = median_ms(a.repeats, lambda: model.generate(ids, 1))
        full = median_ms(max(1, a.repeats // 2), lambda: model.generate(ids, a.gen))
    print(json.dumps(dict(torch=torch.__version__, threads=a.threads, load_ms=load_ms, untraced_ms=untraced,
                          kv_prefill_ms=prefill, kv_gen_ms=full, kv_tokens_per_s=(a.gen - 1) / ((full - prefill) / 1e3),
                          max_abs_diff_p=diff, blas=blas_info())))


if __name__ == "__main__":
    main()
