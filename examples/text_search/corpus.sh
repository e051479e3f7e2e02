#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The text corpus of the index example: the Linux man-pages project's manual pages as Debian packages them
# (`manpages` and `manpages-dev`: system calls, library functions, special files, formats and overviews,
# sections 1-8, about 2,500 pages), rendered to plain text with groff, one file per page:
# OUT/<section>/<page>.txt. With PAGES=all, every English page installed on the machine instead. Links and
# `.so` stubs (aliases of another page) are left out, so each page is one document.
#
#   bash examples/text_search/corpus.sh OUT [LIMIT]     LIMIT: the first LIMIT pages in path order
set -euo pipefail
out=${1:?usage: corpus.sh OUT [LIMIT]}
limit=${2:-0}
command -v groff >/dev/null || { echo "corpus.sh: groff not found (Debian: groff-base)" >&2; exit 2; }
if [ "${PAGES:-}" != all ] && ! dpkg -s manpages-dev >/dev/null 2>&1; then
  echo "corpus.sh: manpages-dev is not installed (bash scripts/install-deps.sh textsearch)" >&2
  exit 2
fi
mkdir -p "$out"
list=$(mktemp)
trap 'rm -f "$list"' EXIT
if [ "${PAGES:-}" = all ]; then
  find /usr/share/man/man[1-8] -type f -name '*.[1-8]*' 2>/dev/null
else
  dpkg -L manpages manpages-dev 2>/dev/null | grep -E '^/usr/share/man/man[1-8]/' || true
fi | LC_ALL=C sort -u | while read -r f; do
  [ -f "$f" ] && [ ! -L "$f" ] || continue
  # A stub is one `.so other/page` line: the page it names is in the corpus already.
  if zcat -f "$f" 2>/dev/null | head -c 300 | grep -q '^\.so '; then continue; fi
  echo "$f"
done > "$list"
if [ "$limit" -gt 0 ]; then head -n "$limit" "$list" > "$list.cut" && mv "$list.cut" "$list"; fi
render() {
  local f=$1 out=$2
  local section name
  section=$(basename "$(dirname "$f")")
  name=$(basename "$f")
  name=${name%.gz}
  mkdir -p "$out/$section"
  # -k: the page's own encoding; -t: tables; -P -cbou: plain text, no bold, underline or colour.
  zcat -f "$f" | groff -k -t -mandoc -Tutf8 -P -cbou 2>/dev/null > "$out/$section/$name.txt" || true
}
export -f render
xargs -a "$list" -P "$(nproc)" -I{} bash -c 'render "$1" "$2"' _ {} "$out"
pages=$(find "$out" -type f -name '*.txt' -size +0 | wc -l)
bytes=$(find "$out" -type f -name '*.txt' -print0 | du -cb --files0-from=- | tail -1 | cut -f1)
echo "corpus: $pages manual pages, $bytes bytes of text in $out"
