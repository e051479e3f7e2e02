#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The first run: installs only what the library and the tool need (scripts/install-deps.sh demo), builds the
# tool with its demo verb alone (the demo preset: seconds, where the whole tool takes minutes), and runs the
# sign-up demo. Extra arguments go to `blume demo` (for example --items 100M).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh demo
cmake --preset demo >/dev/null
cmake --build --preset demo
exec ./build/demo/cli/blume demo "$@"
