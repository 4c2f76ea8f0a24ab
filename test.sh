#!/usr/bin/env bash
# Sets up (installs missing Debian packages, builds) and runs the whole test suite:
# core (headless), the CLI, the GPU shaders and the app (under Xvfb, on Mesa's renderer).
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/setup.sh
cd build
ctest --output-on-failure -j"$(nproc 2>/dev/null || echo 2)" "$@"
