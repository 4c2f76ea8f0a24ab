#!/usr/bin/env bash
# The one hardening build (build-asan): clang, ASan+UBSan, libFuzzer coverage. Core is compiled once,
# with -fsanitize=fuzzer-no-link,address,undefined, for core_tests, the CLI and every fuzz target (only
# the fuzz targets link libFuzzer's main). Builds the targets named (default: all of them) and prints
# the time. Used by scripts/sanitize.sh and fuzz/run.sh.
# Compiled for x86-64-v3 (AVX2, FMA), not -march=native: the main build runs core_tests at the CPU's own
# width (AVX-512 on CI's machine), this one at AVX2's, so CI tests both instruction sets with no extra
# build (docs/build.md, "Portable build / CPUs"). On a CPU without AVX2, native. HARDENING_MARCH overrides.
# Per-file (STEPFORMER_UNITY=OFF), unlike scripts/setup.sh: core_tests' batches would save about half of its
# clang compile (docs/build.md, "Build time (CI)"), but have not yet been built and run under ASan from a fresh clone.
# Usage: scripts/hardening_build.sh [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
CXX=${CXX:-$(command -v clang++ || command -v clang++-14)}
CC=${CC:-$(command -v clang || command -v clang-14)}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
TARGETS=("${@:-stepformer-cli core_tests fuzz_all}")
if [[ -z ${HARDENING_MARCH:-} ]]; then
  HARDENING_MARCH=native
  if grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo; then HARDENING_MARCH=x86-64-v3; fi
fi

start=$(date +%s)
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Hardening -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
  -DSTEPFORMER_SANITIZE=ON -DSTEPFORMER_FUZZ=ON -DSTEPFORMER_MARCH="$HARDENING_MARCH" -DSTEPFORMER_UNITY=OFF >/dev/null
# shellcheck disable=SC2068
cmake --build build-asan -j"$JOBS" --target ${TARGETS[@]}
echo "hardening: configure + build (${TARGETS[*]}, -march=$HARDENING_MARCH) $(( $(date +%s) - start )) s"
