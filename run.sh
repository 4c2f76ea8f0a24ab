#!/usr/bin/env bash
# Sets up (installs missing Debian packages, builds) and starts Stepformer on its built-in
# default. Extra arguments go to the program.
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/setup.sh
if [ -x build/app/stepformer ]; then
  exec build/app/stepformer "$@"
fi
exec build/stepformer-cli "$@"
