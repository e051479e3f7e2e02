#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# blume's bit-sliced index beside SQLite FTS5 on every manual page of this machine: installs what it needs
# (SQLite's headers; groff comes with man-db), builds examples/text_search/fts5_compare, renders the pages
# and compares. Extra arguments go to fts5_compare (--queries N, --rounds R, --seed S).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh textsearch
cmake --preset release >/dev/null
cmake --build --preset release --target fts5_compare
exec bash examples/text_search/run.sh build/release/examples/fts5_compare 0 "$@"
