#!/usr/bin/env bash
# Sets up (installs missing Debian packages, builds) and runs the whole test suite:
# core (headless), the CLI, the GPU shaders and the app (under Xvfb, on Mesa's renderer); then the
# hardening runs: core, the CLI and core_tests under ASan+UBSan, TSan on the threads, and 30 s of
# libFuzzer on every reader.
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/setup.sh
cd build
ctest --output-on-failure -j"$(nproc 2>/dev/null || echo 2)" "$@"
cd ..
# The Debian package: lintian, installed, run from /usr, removed. It packages the programs the main build
# just made (STEPFORMER_PACKAGE_BUILD=build) rather than compiling core and the app a second time;
# the portable release package is `bash scripts/package.sh` alone (docs/packaging.md).
STEPFORMER_PACKAGE_BUILD=build bash scripts/package_test.sh
# The hardening runs (docs/hardening.md; each script prints the time of each phase): one ASan+UBSan build
# of core, the CLI, core_tests and the fuzz targets, and core_tests under it; ThreadSanitizer on the
# training runner, the session's trace worker and the thread pool; 30 s of libFuzzer on every reader.
bash scripts/sanitize.sh
bash scripts/tsan.sh
bash fuzz/run.sh 30
