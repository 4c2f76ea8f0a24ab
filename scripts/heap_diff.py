#!/usr/bin/env python3
"""What a settled app held more at a later moment than at an earlier one (docs/soak.md, session 21).

    scripts/heap_diff.py OUT_SHORT OUT_LONG [DEPTH=4]

Reads the held.stacks of two scripts/soak_heaptrack.sh runs (heaptrack's flame-graph lines, "frame;frame;... bytes",
of what was allocated and not freed when the process was killed), groups them by their DEPTH innermost named
frames and prints the groups that grew or shrank most, then the totals by kind (draw buffers, models, trace values,
ImGui, training)."""
import collections
import sys

KINDS = [("draw buffers", ("ImDrawList", "ImDrawListSplitter")), ("Mesa, drawing", ("RenderDrawData",)),
         ("models", ("read_checkpoint", "Model::")), ("trace values", ("tv<", "Tracer", "tscalar", "tmask", "TraceMat")),
         ("ImGui tables", ("BeginTableEx", "TableBeginInitMemory")), ("ImGui windows", ("CreateNewWindow", "ImGui::Begin")),
         ("training", ("Trainer", "make_task", "Training"))]


def load(folder, depth):
    by_site, by_kind = collections.Counter(), collections.Counter()
    with open(f"{folder}/held.stacks", errors="replace") as f:
        for line in f:
            stack, _, n = line.rstrip("\n").rpartition(" ")
            named = [x for x in stack.split(";") if x and not x.startswith("0x")]
            by_site[" <- ".join(reversed(named[-depth:]))] += int(n)
            joined = ";".join(named)
            by_kind[next((k for k, marks in KINDS if any(m in joined for m in marks)), "other")] += int(n)
    return by_site, by_kind


def main():
    depth = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    a, ka = load(sys.argv[1], depth)
    b, kb = load(sys.argv[2], depth)
    print(f"held: {sum(a.values()) / 1024:.0f} KiB, then {sum(b.values()) / 1024:.0f} KiB")
    for kind in sorted(set(ka) | set(kb)):
        print(f"  {kind:14} {ka[kind] / 1024:9.0f} -> {kb[kind] / 1024:9.0f} KiB ({(kb[kind] - ka[kind]) / 1024:+.0f})")
    diff = sorted(((b[k] - a[k], k) for k in set(a) | set(b)), reverse=True)
    print("grew most:")
    for d, k in diff[:15]:
        print(f"  {d / 1024:+9.1f} KiB  {k[:300]}")
    print("shrank most:")
    for d, k in diff[-5:]:
        print(f"  {d / 1024:+9.1f} KiB  {k[:300]}")


if __name__ == "__main__":
    main()
