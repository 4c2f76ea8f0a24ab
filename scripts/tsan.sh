#!/usr/bin/env bash
# ThreadSanitizer: builds core, the app's headless library (stepformer_session, the training runner
# included) and tests/tsan with clang -fsanitize=thread into build-tsan (-DSTEPFORMER_TSAN=ON; no window,
# no GPU) and runs tsan_tests. Any data race or other report stops the run and fails it.
# Usage: scripts/tsan.sh [extra gtest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
CXX=${CXX:-$(command -v clang++ || command -v clang++-14)}
CC=${CC:-$(command -v clang || command -v clang-14)}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}

start=$(date +%s)
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Hardening -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
  -DSTEPFORMER_TSAN=ON -DSTEPFORMER_TESTS=OFF >/dev/null
cmake --build build-tsan -j"$JOBS" --target tsan_tests
built=$(date +%s)
echo "tsan: configure + build $(( built - start )) s"

export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
build-tsan/tests/tsan/tsan_tests --gtest_brief=1 "$@"
echo "tsan: tsan_tests clean under ThreadSanitizer in $(( $(date +%s) - built )) s"
