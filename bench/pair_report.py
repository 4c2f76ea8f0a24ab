#!/usr/bin/python3
"""Prints a C++ benchmark's results (Google Benchmark JSON, counters from bench_common.hpp) beside
its PyTorch twin's (bench/torch_forward.py's report(): {"torch", "blas", "results"}), with the
ratio C++ / PyTorch of tokens/s, by wall-clock and by CPU time. Used by run_bert.sh and run_ed.sh.

  pair_report.py CPP_JSON TORCH_JSON TITLE ROW...

Each ROW is LABEL=CPP_BENCHMARK=TORCH_RESULT (TORCH_RESULT "-": C++ only, e.g. a traced pass).
"""
import json
import sys

UNIT_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


def times(b):  # (ms per iteration wall, ms per iteration CPU)
    u = UNIT_MS[b.get("time_unit", "ns")]
    return b["real_time"] * u, b["cpu_time"] * u


def torch_times(r):
    wall = next(v for k, v in r.items() if k.startswith("ms_per_") and k.endswith("_wall"))
    cpu = next(v for k, v in r.items() if k.startswith("ms_per_") and k.endswith("_cpu"))
    return wall, cpu


def main():
    cpp_path, torch_text, title, *rows = sys.argv[1:]
    cpp = {"/".join(p for p in b["name"].split("/") if not p.startswith("min_time:")): b
           for b in json.load(open(cpp_path))["benchmarks"]}
    torch = json.loads(torch_text)
    blas = torch["blas"]
    print()
    print(title)
    print(f"PyTorch {torch['torch']}: BLAS {blas['blas_build']} build, loaded {', '.join(blas['blas_loaded']) or 'none'}; "
          f"torch threads {blas['torch_threads']}, OpenBLAS threads {blas['openblas_threads']}; "
          + ", ".join(f"{k}={v}" for k, v in blas["env"].items()))
    print(f"{'':34}{'C++ (core, Eigen)':32}{'PyTorch':32}C++ / PyTorch")
    ratios = []
    for row in rows:
        label, cpp_name, torch_name = row.split("=")
        b = cpp[cpp_name]
        tokens = b.get("tokens/iteration", 0)
        r = torch["results"].get(torch_name) if torch_name != "-" else None
        for clock, i in (("wall", 0), ("CPU", 1)):
            ms = times(b)[i]
            a = f"{ms:8.2f} ms {tokens / ms * 1e3:12,.0f} tok/s"
            if "events" in b:
                a = f"{ms:8.2f} ms {b['events']:12,.0f} events"
            t, ratio = "—", ""
            if r:
                t_ms, t_tok = torch_times(r)[i], r[f"tokens_per_s_{'wall' if i == 0 else 'cpu'}"]
                t = f"{t_ms:8.2f} ms {t_tok:12,.0f} tok/s"
                ratio = f"{tokens / ms * 1e3 / t_tok:6.2f}×"
                if i == 1:
                    ratios.append((label, ratio.strip()))
            print(f"{label + ', ' + clock:34}{a:32}{t:32}{ratio}")
        if "tokens/call" in b or (r and "tokens_per_context" in r):
            print(f"{'  tokens generated per z':34}{b.get('tokens/call', 0):8.1f}{'':24}"
                  f"{r.get('tokens_per_context', 0) if r else 0:8.1f}")
    print("ratios C++ / PyTorch (CPU time): " + "; ".join(f"{label} {ratio}" for label, ratio in ratios))


if __name__ == "__main__":
    main()
