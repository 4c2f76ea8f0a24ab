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

# Left out under the sanitizers (they run in the normal build):
EXCLUDE=(
)
filter="-$(IFS=:; echo "${EXCLUDE[*]}")"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
build-asan/tests/core_tests --gtest_brief=1 --gtest_filter="$filter" "$@"
