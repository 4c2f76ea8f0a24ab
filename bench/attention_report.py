#!/usr/bin/python3
"""Reads bench_attention's table on stdin and passes it through, then prints, for each GPU form,
one row per kind of attention × ℓ: its speed-up over core's Eigen on two threads (by wall-clock
and by the GPU's dispatch time) and whether Ṽ is right (max |Ṽ_gpu − Ṽ_Eigen| within the
program's tolerance); then the issue's targets for each kind: the fused form ≥ 20× two-thread
Eigen at ℓ_x = 4096, the teaching form ≥ 2× at every ℓ_x ≥ 1024, judged by wall-clock, as
"met", "not met" or "not measured here" (no GPU, a software renderer such as Mesa's llvmpipe
whose "GPU" is the CPU, or no such ℓ_x in the run). Exits 1 when a GPU row is wrong or no table
was read. Used by bench/run_attention.sh.
"""
import math
import re
import sys

EIGEN2 = "Eigen, 2 threads"
FORMS = ("GPU, teaching form", "GPU, fused form")
IMPLEMENTATIONS = ("Eigen, 1 thread", EIGEN2) + FORMS
# form → (speed-up, which ℓ_x it applies to, those ℓ_x in words)
TARGETS = {
    "GPU, fused form": (20.0, lambda l: l == 4096, "ℓ_x = 4096"),
    "GPU, teaching form": (2.0, lambda l: l >= 1024, "ℓ_x ≥ 1024"),
}


def number(text):
    """A cell's number; NaN for "—" and "not measured"."""
    try:
        return float(text)
    except ValueError:
        return math.nan


class Table:
    """What bench_attention printed: the kinds, the GPU, the tolerance, the rows."""

    def __init__(self):
        self.kinds = []  # in the program's order
        self.gpu = "none"  # "none", "software", "hardware"
        self.tol = None
        self.rows = {}  # (kind, ℓ_x, implementation) → dict of the cells, or {"note": …}

    def read(self, line):
        if line.startswith("GPU: "):
            self.gpu = "none" if line.startswith("GPU: none") else \
                "software" if "(software renderer)" in line else "hardware"
        elif line.startswith("kind ") and not line.startswith("kind  "):
            self.kinds.append(line.split()[1])
        elif m := re.search(r"correct when ≤ ([0-9.]+e[+-]?[0-9]+)", line):
            self.tol = float(m.group(1))
        cells = re.split(r"\s{2,}", line.strip())
        if len(cells) < 5 or cells[0] not in self.kinds or cells[3] not in IMPLEMENTATIONS:
            return
        key = (cells[0], int(cells[1]), cells[3])
        if len(cells) == 5:  # skipped or not run: the reason
            self.rows[key] = {"l_z": int(cells[2]), "note": cells[4]}
        else:
            self.rows[key] = {"l_z": int(cells[2]), "wall": number(cells[4]), "gpu": number(cells[7]),
                              "err": number(cells[9])}

    def lengths(self, kind):
        return sorted({l for (k, l, _) in self.rows if k == kind})


def ratio(eigen_ms, ms):
    return f"{eigen_ms / ms:.3f}×" if eigen_ms and not math.isnan(ms) else "not measured"


def print_gpu_rows(t):
    """One row per kind × ℓ × form; returns the rows whose Ṽ is wrong."""
    wrong = []
    print("\nGPU forms against Eigen on 2 threads (× = Eigen-2 ms / GPU ms; above 1: the GPU is faster)")
    print(f"{'kind':13}  {'ℓ_x':>5}  {'ℓ_z':>5}  {'form':18}  {'× wall':>9}  {'× GPU ms':>12}  {'max |ΔṼ|':>8}  Ṽ")
    for kind in t.kinds:
        for l in t.lengths(kind):
            eigen = t.rows.get((kind, l, EIGEN2), {}).get("wall")
            for form in FORMS:
                r = t.rows.get((kind, l, form))
                if r is None:
                    continue
                lead = f"{kind:13}  {l:5}  {r['l_z']:5}  {form:18}"
                if "note" in r:
                    print(f"{lead}  {r['note']}")
                    continue
                right = r["err"] <= t.tol
                if not right:
                    wrong.append(f"{kind} ℓ_x = {l} {form}: max |ΔṼ| = {r['err']:.1e} > {t.tol:g}")
                print(f"{lead}  {ratio(eigen, r['wall']):>9}  {ratio(eigen, r['gpu']):>12}  {r['err']:8.1e}  "
                      + (f"right (≤ {t.tol:g})" if right else "WRONG"))
    return wrong


NOT_JUDGED = {
    "none": "not measured here (no GPU), for every kind",
    "software": "not measured here (software renderer: the shaders ran on the CPU; the target is for a GPU), "
                "for every kind",
}


def verdict(t, kind, form):
    target, applies, where = TARGETS[form]
    judged = []
    for l in t.lengths(kind):
        r = t.rows.get((kind, l, form))
        if not applies(l) or r is None:
            continue
        if "note" in r:
            judged.append(f"ℓ_x = {l} not measured ({r['note']})")
            continue
        eigen = t.rows[(kind, l, EIGEN2)]["wall"]
        speedup = eigen / r["wall"]
        judged.append(f"ℓ_x = {l} {'met' if speedup >= target else 'not met'} ({speedup:.3f}×)")
    return "; ".join(judged) or f"not measured here (no GPU row at {where} in this run)"


def main():
    t = Table()
    for line in sys.stdin:
        sys.stdout.write(line)
        t.read(line)
    if not t.rows or t.tol is None:
        print("attention_report: no table read from bench_attention (its own message, if any, is above)", file=sys.stderr)
        return 1
    wrong = print_gpu_rows(t)
    print("\ntargets (by wall-clock: upload, dispatches and read-back against Eigen on 2 threads):")
    for form, (target, _, where) in TARGETS.items():
        if t.gpu in NOT_JUDGED:
            print(f"  {form} ≥ {target:g}× Eigen-2 at {where}: {NOT_JUDGED[t.gpu]}")
            continue
        for kind in t.kinds:
            print(f"  {form} ≥ {target:g}× Eigen-2 at {where}, {kind}: {verdict(t, kind, form)}")
    if wrong:
        print("WRONG on the GPU:\n  " + "\n  ".join(wrong))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
