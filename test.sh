#!/usr/bin/env bash
# Sets up (installs missing Debian packages, builds) and runs the whole test suite:
# core (headless), the CLI, the GPU shaders and the app (under Xvfb, on Mesa's renderer); then the
# hardening runs: core, the CLI and core_tests under ASan+UBSan, and 30 s of libFuzzer on every reader.
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/setup.sh
cd build
ctest --output-on-failure -j"$(nproc 2>/dev/null || echo 2)" "$@"
cd ..
# Measured on the 2-core machine: the sanitizer build ≈ 17 CPU-minutes (≈ 9 min), its core_tests ≈ 4.5 min;
# the fuzz build ≈ 10 CPU-minutes (≈ 5.5 min), 9 targets × 30 s ≈ 4.5 min: ≈ 24 min in all.
bash scripts/sanitize.sh
bash fuzz/run.sh 30
