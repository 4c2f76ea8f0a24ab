#!/usr/bin/python3
"""Reads bench_attention's table on stdin, passes it through, and adds each GPU form's speed-up over
Eigen on two threads (by the GPU's dispatch time and by wall-clock) and the issue's targets: the
fused form ≥ 20× two-thread Eigen at ℓ = 4096, the teaching form ≥ 2× at every ℓ ≥ 1024. Used by
bench/run_attention.sh.
"""
import re
import sys

ROW = re.compile(r"^\s*(\d+)\s+(Eigen, 2 threads \(heads\)|GPU, teaching form|GPU, fused form)\s+([\d.]+)\s.*\s([\d.]+)$")
TARGETS = {"GPU, fused form": (20.0, lambda l: l == 4096), "GPU, teaching form": (2.0, lambda l: l >= 1024)}


def main():
    ms = {}  # (ℓ, implementation) → (ms, wall ms)
    software = False
    for line in sys.stdin:
        sys.stdout.write(line)
        software |= line.startswith("GPU:") and "llvmpipe" in line
        m = ROW.match(line)
        if m:
            ms[(int(m.group(1)), m.group(2))] = (float(m.group(3)), float(m.group(4)))
    print("\nspeed-up over Eigen on 2 threads (GPU ms / wall ms):")
    verdicts = {form: [] for form in TARGETS}
    for (l, name), (gpu, wall) in sorted(ms.items()):
        eigen = ms.get((l, "Eigen, 2 threads (heads)"))
        if name not in TARGETS or not eigen:
            continue
        by_gpu, by_wall = eigen[0] / gpu, eigen[1] / wall
        print(f"{l:6}  {name:26} {by_gpu:8.2f}× {by_wall:8.2f}×")
        target, applies = TARGETS[name]
        if applies(l):
            verdicts[name].append(f"ℓ = {l}: {'met' if by_wall >= target else 'NOT met'} ({by_wall:.2f}× by wall-clock)")
    for name, (target, _) in TARGETS.items():
        where = "ℓ = 4096" if "fused" in name else "ℓ ≥ 1024"
        print(f"target: {name} ≥ {target:g}× Eigen on 2 threads at {where}: "
              + ("; ".join(verdicts[name]) or "not measured (no such ℓ in this run)"))
    if software:
        print("The GPU here is Mesa's llvmpipe (the CPU): the targets are for a real GPU.")


if __name__ == "__main__":
    main()
