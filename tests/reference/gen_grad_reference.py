#!/usr/bin/python3
"""Writes tests/data/grad_reference.json: the loss of Algorithm 13 line 5 and its gradient with
respect to every parameter, computed in float64 by PyTorch's autograd, independently of the C++
core, for tests/core/test_reference_grad.cpp.

Regenerate (from the repository root; needs torch and numpy, e.g. /usr/bin/python3):
    /usr/bin/python3 tests/reference/gen_grad_reference.py
then rebuild and run core_tests. The output is deterministic (fixed seed).

The model, its parameters (float32 values used in float64) and the column-convention forward
pass are those of gen_forward_reference.py (imported, not copied). Each gradient is checked
against autograd through that file's second, row-convention forward built on
torch.nn.functional before anything is written (agreement to 1e-10).

Two cases:
  "single": one sequence x = [bos_token, …, eos_token] and the paper's summed loss
            loss = −Σ_{t=1}^{ℓ−1} log P[x[t+1], t]  (Algorithm 13, line 5);
  "batch":  three sequences of different lengths and the mean of −log P[x_n[t+1], t] over all
            their predicted tokens (the practical minibatch loss).

JSON layout: "config", "params" as in forward_reference.json; each case has "sequences" (1-based
ids), "reduction" ("sum" or "mean"), "loss", and "grads" keyed and shaped like "params".
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_forward_reference as fwd  # noqa: E402  (CONFIG, make_params, forward_columns, forward_rows)

torch.set_default_dtype(torch.float64)

N_V = fwd.N_V
BOS, EOS = N_V - 1, N_V
CASES = {
    "single": {"sequences": [[BOS, 1, 5, 3, 10, 2, EOS]], "reduction": "sum"},
    "batch": {"sequences": [[BOS, 4, 4, 9, EOS], [BOS, 2, 7, 1, 1, 6, 3, EOS], [BOS, 8, EOS]], "reduction": "mean"},
}


def loss_columns(p, sequences, reduction):
    """−Σ log P[x[t+1], t] over the sequences (P from the column-convention forward)."""
    total, count = 0.0, 0
    for x in sequences:
        P = fwd.forward_columns(p, x)["P"]  # (N_V, ℓ)
        for t in range(len(x) - 1):
            total = total - torch.log(P[x[t + 1] - 1, t])
            count += 1
    return total / count if reduction == "mean" else total


def loss_rows(p, sequences, reduction):
    """The same loss from the row-convention forward (torch.nn.functional)."""
    total, count = 0.0, 0
    for x in sequences:
        P = fwd.forward_rows(p, x)  # (ℓ, N_V)
        target = torch.tensor(x[1:]) - 1
        total = total - torch.log(P[torch.arange(len(x) - 1), target]).sum()
        count += len(x) - 1
    return total / count if reduction == "mean" else total


def gradients(p, loss_fn, case):
    leaves = {k: v.clone().requires_grad_(True) for k, v in p.items()}
    loss = loss_fn(leaves, case["sequences"], case["reduction"])
    grads = torch.autograd.grad(loss, list(leaves.values()))
    return loss.item(), dict(zip(leaves.keys(), grads))


def main():
    gen = torch.Generator().manual_seed(20220719)
    p = fwd.make_params(gen)
    doc = {
        "about": "Algorithm 13's loss and its gradient for every parameter, float64 autograd, by "
                 "tests/reference/gen_grad_reference.py; tensors as in forward_reference.json.",
        "config": fwd.CONFIG,
        "params": {k: {"shape": list(v.shape), "data": fwd.to_list(v)} for k, v in p.items()},
        "cases": {},
    }
    for name, case in CASES.items():
        for x in case["sequences"]:
            assert 2 <= len(x) <= fwd.CONFIG["l_max"], x
        loss, g = gradients(p, loss_columns, case)
        loss_r, g_r = gradients(p, loss_rows, case)
        assert abs(loss - loss_r) < 1e-10 * abs(loss), (loss, loss_r)
        for k in g:
            diff = (g[k] - g_r[k]).abs().max().item()
            assert diff < 1e-10, f"{name}: {k}: column and row gradients disagree by {diff}"
        doc["cases"][name] = {
            "sequences": case["sequences"],
            "reduction": case["reduction"],
            "loss": loss,
            "grads": {k: {"shape": list(v.shape), "data": fwd.to_list(v)} for k, v in g.items()},
        }
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "..", "data", "grad_reference.json")
    with open(path, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {os.path.normpath(path)} ({os.path.getsize(path)} bytes)")


if __name__ == "__main__":
    main()
