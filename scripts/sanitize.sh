#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer: the one hardening build (scripts/hardening_build.sh:
# core, the CLI, core_tests and the fuzz targets in build-asan, core compiled once), then core_tests.
# Any report (a leak included) fails the run. fuzz/run.sh then runs the fuzz targets from the same build.
# The build is for x86-64-v3 (AVX2): with the main build at -march=native, CI runs core_tests at two SIMD
# widths, AVX-512 and AVX2 on an AVX-512 machine (docs/build.md, "Portable build / CPUs").
# Usage: scripts/sanitize.sh [extra gtest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/hardening_build.sh

# No test is left out. core_tests runs in one shard per core (GoogleTest's GTEST_TOTAL_SHARDS /
# GTEST_SHARD_INDEX; the tests already run side by side under ctest -j), so that CI waits half as long:
# one process took 643 s in a fresh-clone CI run on 2 cores.
export ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Core's products go to OpenBLAS (STEPFORMER_BLAS), which picks its kernels when it loads, by the CPU: held
# to its AVX2 (Haswell) kernels when this build is x86-64-v3, so that the whole run is the AVX2 machine's.
march=$(sed -n 's/^STEPFORMER_MARCH:STRING=//p' build-asan/CMakeCache.txt)
if [[ $march == x86-64-v3 ]]; then export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-Haswell}; fi
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
start=$(date +%s)
pids=()
for ((i = 0; i < JOBS; i++)); do
  GTEST_TOTAL_SHARDS=$JOBS GTEST_SHARD_INDEX=$i build-asan/tests/core_tests --gtest_brief=1 "$@" \
    >"build-asan/core_tests-shard$i.log" 2>&1 &
  pids+=($!)
done
status=0
for ((i = 0; i < JOBS; i++)); do
  if ! wait "${pids[i]}"; then
    status=1
    echo "sanitize: core_tests shard $((i + 1)) of $JOBS failed (build-asan/core_tests-shard$i.log):"
    tail -n 80 "build-asan/core_tests-shard$i.log"
  fi
done
if ((status)); then exit 1; fi
echo "sanitize: core_tests (-march=$march, OpenBLAS ${OPENBLAS_CORETYPE:-by CPU}) clean under ASan+UBSan in $(( $(date +%s) - start )) s ($JOBS shards)"
