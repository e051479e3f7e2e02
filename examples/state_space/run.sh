#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The state-space comparison of docs/examples.md: blume's four visited sets (explore.cpp) and SPIN's bitstate
# and hash-compaction searches (spin.sh) on one sliding-tile puzzle.
#   examples/state_space/run.sh [ROWS COLS]     (default 3 4: 239,500,800 boards; about an hour, 12 GB)
# Builds the example first (cmake --preset release); needs spin and gcc (scripts/install-deps.sh statespace).
set -euo pipefail
cd "$(dirname "$0")/../.."
rows=${1:-3} cols=${2:-4}
cmake --preset release >/dev/null
cmake --build --preset release --target state_space >/dev/null
./build/release/examples/state_space --rows "$rows" --cols "$cols" --bits 1,2,4,8,12,16,20,24
echo
# SPIN's exhaustive search keeps every state vector: only on boards small enough for it.
exhaustive=()
((rows * cols > 10)) && exhaustive=(--no-exhaustive)
bash examples/state_space/spin.sh "$rows" "$cols" "${exhaustive[@]}" 1 2 4 8 16 24
