#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The index example end to end: renders this machine's manual pages to text (corpus.sh), then runs
# fts5_compare on them: blume's bit-sliced index beside SQLite FTS5, the same corpus and queries.
#
#   bash examples/text_search/run.sh FTS5_COMPARE [LIMIT] [fts5_compare options...]
#
# FTS5_COMPARE is the built program (build/release/examples/fts5_compare); LIMIT the number of pages
# (0: all, the default).
set -euo pipefail
compare=${1:?usage: run.sh FTS5_COMPARE [LIMIT] [options...]}
limit=${2:-0}
shift $(($# < 2 ? $# : 2))
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
bash "$(dirname "$0")/corpus.sh" "$corpus" "$limit"
"$compare" "$corpus" "$@"
