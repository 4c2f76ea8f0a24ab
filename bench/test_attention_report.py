#!/usr/bin/python3
"""Tests bench/attention_report.py (run by ctest when the benchmarks are built):

- end to end, on bench_attention's own output (tiny ℓ, whatever GL this machine has): the report
  reads every row the program prints, finds Ṽ right, and does not judge the targets on a software
  renderer or without a GPU;
- on made-up tables in the program's layout for a hardware GPU: a target is "met" exactly when the
  speed-up by wall-clock reaches it, a row that did not run is "not measured", and a GPU row whose
  max |ΔṼ| exceeds the tolerance makes the report fail.

    test_attention_report.py BENCH_ATTENTION
"""
import subprocess
import sys
import unittest
from pathlib import Path

REPORT = Path(__file__).with_name("attention_report.py")
BENCH = None  # set from argv


def report(text):
    r = subprocess.run([sys.executable, str(REPORT)], input=text, capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


# The preamble lines the report reads, as bench_attention prints them.
PREAMBLE = """GPU: NVIDIA H100 80GB HBM3/PCIe/SSE2, OpenGL 4.6.0 NVIDIA 550.54, EGL device
kind causal         self-attention · causal mask, ℓ_z = ℓ_x
kind cross-half     cross-attention · bidirectional mask, ℓ_z = ℓ_x/2
max |ΔṼ|: max |Ṽ − Ṽ_Eigen| against core's mh_attention; correct when ≤ 1e-04.
"""


def row(kind, l_x, l_z, impl, wall, err="1.0e-06"):
    """A table row: the cells bench_attention prints, two spaces apart (GPU ms: half the wall-clock)."""
    return "  ".join([kind, str(l_x), str(l_z), impl, f"{wall:.2f}", "1.0", "1.000", f"{wall / 2:.2f}", "0.05",
                      err]) + "\n"


def table(fused_ms, teaching_ms, fused_err="1.0e-06"):
    """causal at ℓ = 1024 and 4096 with Eigen on 2 threads at 100 and 1000 ms; cross-half's
    GPU rows at 4096 did not run."""
    t = PREAMBLE
    for l, eigen in ((1024, 100.0), (4096, 1000.0)):
        t += row("causal", l, l, "Eigen, 2 threads", eigen)
        t += row("causal", l, l, "GPU, teaching form", teaching_ms[l])
        t += row("causal", l, l, "GPU, fused form", fused_ms[l], fused_err)
    t += row("cross-half", 4096, 2048, "Eigen, 2 threads", 500.0)
    for form in ("GPU, teaching form", "GPU, fused form"):
        t += f"cross-half   4096   2048  {form}  not run: out of memory\n"
    return t


def target_line(out, form, kind):
    return next(line for line in out.splitlines() if line.strip().startswith(form) and f", {kind}:" in line)


class MadeUpTables(unittest.TestCase):
    def test_targets_met_exactly_when_the_wall_clock_speed_up_reaches_them(self):
        # fused 1000/50 = 20× at 4096 (met, at the bound); teaching 100/50 = 2× at 1024 (met),
        # 1000/501 < 2× at 4096 (not met).
        rc, out, _ = report(table({1024: 10.0, 4096: 50.0}, {1024: 50.0, 4096: 501.0}))
        self.assertEqual(rc, 0, out)
        self.assertIn("ℓ_x = 4096 met (20.000×)", target_line(out, "GPU, fused form", "causal"))
        teaching = target_line(out, "GPU, teaching form", "causal")
        self.assertIn("ℓ_x = 1024 met (2.000×)", teaching)
        self.assertIn("ℓ_x = 4096 not met (1.996×)", teaching)

    def test_a_slower_gpu_is_not_met(self):
        rc, out, _ = report(table({1024: 10.0, 4096: 51.0}, {1024: 60.0, 4096: 400.0}))
        self.assertEqual(rc, 0, out)
        self.assertIn("ℓ_x = 4096 not met (19.608×)", target_line(out, "GPU, fused form", "causal"))
        self.assertIn("ℓ_x = 1024 not met (1.667×)", target_line(out, "GPU, teaching form", "causal"))

    def test_rows_that_did_not_run_are_not_measured(self):
        _, out, _ = report(table({1024: 10.0, 4096: 50.0}, {1024: 50.0, 4096: 500.0}))
        self.assertIn("ℓ_x = 4096 not measured (not run: out of memory)",
                      target_line(out, "GPU, fused form", "cross-half"))

    def test_the_speed_up_table_has_one_row_per_kind_length_and_form(self):
        _, out, _ = report(table({1024: 10.0, 4096: 50.0}, {1024: 50.0, 4096: 500.0}))
        summary = out.split("GPU forms against Eigen on 2 threads")[1].split("targets")[0]
        rows = [line for line in summary.splitlines() if line.startswith(("causal", "cross-half"))]
        self.assertEqual(len(rows), 6, summary)
        self.assertRegex(summary, r"causal +4096 +4096 +GPU, fused form +20\.000× +40\.000× +1\.0e-06 +right")

    def test_a_wrong_gpu_row_fails_the_report(self):
        rc, out, _ = report(table({1024: 10.0, 4096: 50.0}, {1024: 50.0, 4096: 500.0}, fused_err="2.0e-04"))
        self.assertEqual(rc, 1)
        self.assertIn("WRONG on the GPU", out)
        self.assertIn("max |ΔṼ| = 2.0e-04 > 0.0001", out)

    def test_no_table_fails(self):
        rc, _, err = report("bench_attention: unknown kind 'x'\n")
        self.assertEqual(rc, 1)
        self.assertIn("no table read", err)


class OnBenchAttentionsOutput(unittest.TestCase):
    def test_the_report_reads_every_row_and_does_not_judge_without_a_real_gpu(self):
        bench = subprocess.run([BENCH, "--lengths", "2,4", "--max-l", "2", "--min-time", "0", "--kinds",
                                "causal,cross-double"], capture_output=True, text=True, timeout=300)
        self.assertEqual(bench.returncode, 0, bench.stderr)
        rc, out, _ = report(bench.stdout)
        self.assertEqual(rc, 0, out)
        gpu_line = next(line for line in out.splitlines() if line.startswith("GPU: "))
        targets = out.split("\ntargets")[1]
        if gpu_line.startswith("GPU: none"):
            self.assertIn("not measured here (no GPU)", targets)
            return
        summary = out.split("GPU forms against Eigen on 2 threads")[1].split("\ntargets")[0]
        for kind, l_z in (("causal", 2), ("cross-double", 4)):
            for form in ("teaching", "fused"):
                self.assertRegex(summary, rf"{kind} +2 +{l_z} +GPU, {form} form +[0-9.]+× +.* right")
                self.assertRegex(summary, rf"{kind} +4 +{2 * l_z} +GPU, {form} form +skipped \(--max-l 2\)")
        if "(software renderer)" in gpu_line:
            self.assertIn("not measured here (software renderer", targets)
            self.assertNotRegex(targets, r"\bmet\b")


if __name__ == "__main__":
    BENCH = sys.argv.pop(1)
    unittest.main()
