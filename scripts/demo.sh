#!/usr/bin/env bash
# Installs dependencies, builds the release preset and runs the sign-up demo. Extra arguments go to
# `blume demo` (for example --items 100M).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target blume_cli
exec ./build/release/cli/blume demo "$@"
