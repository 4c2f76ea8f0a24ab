#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer: builds core, the CLI and core_tests with clang into
# build-asan (-DSTEPFORMER_SANITIZE=ON: -fsanitize=address,undefined -fno-omit-frame-pointer -O1; no app,
# no GPU) and runs core_tests. Any report (a leak included) fails the run.
# Usage: scripts/sanitize.sh [extra gtest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
CXX=${CXX:-$(command -v clang++ || command -v clang++-14)}
CC=${CC:-$(command -v clang || command -v clang-14)}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}

cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Hardening -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
  -DSTEPFORMER_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$JOBS" --target stepformer-cli core_tests

# No test is left out: under ASan+UBSan the whole of core_tests took 263 s on the 2-core machine (busy
# with another build), the slowest test 47 s (VariantsGrad.EncoderDecoderEveryVariantAndCombinations…).
export ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
start=$(date +%s)
build-asan/tests/core_tests --gtest_brief=1 "$@"
echo "sanitize: core_tests clean under ASan+UBSan in $(( $(date +%s) - start )) s"
