#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer: the one hardening build (scripts/hardening_build.sh:
# core, the CLI, core_tests and the fuzz targets in build-asan, core compiled once), then core_tests.
# Any report (a leak included) fails the run. fuzz/run.sh then runs the fuzz targets from the same build.
# Usage: scripts/sanitize.sh [extra gtest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/hardening_build.sh

# No test is left out: under ASan+UBSan the whole of core_tests took 263 s on the 2-core machine (busy
# with another build), the slowest test 47 s (VariantsGrad.EncoderDecoderEveryVariantAndCombinations…).
export ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
start=$(date +%s)
build-asan/tests/core_tests --gtest_brief=1 "$@"
echo "sanitize: core_tests clean under ASan+UBSan in $(( $(date +%s) - start )) s"
