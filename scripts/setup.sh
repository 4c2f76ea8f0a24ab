#!/usr/bin/env bash
# Installs what Stepformer needs from Debian 12 packages (only what is missing), then
# configures and builds it in ./build. Nothing is downloaded at configure or build time.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  cmake g++ make pkg-config                      # toolchain
  libeigen3-dev nlohmann-json3-dev               # core
  libgtest-dev libbenchmark-dev                  # tests and benchmarks
  libimgui-dev libglfw3-dev python3-glad         # the desktop app (Dear ImGui 1.86, GLFW 3.3, glad2)
  libgl-dev libegl-dev libgl1-mesa-dri libegl-mesa0
  fonts-dejavu-core                              # the font with ℝ, ∈, ←, √, ⊙, γ, β, τ, ℓ
  xvfb xauth                                     # headless display for the app's tests
  python3-numpy python3-torch                    # independent reference implementation (tests, benchmarks)
  wamerican                                      # /usr/share/dict/words for the word task
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

JOBS=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release > build.log 2>&1 || { cat build.log; exit 1; }
cmake --build build -j"$JOBS" >> build.log 2>&1 || { tail -n 60 build.log; echo "setup: build failed (full log: build.log)"; exit 1; }
echo "setup: built in ./build"
