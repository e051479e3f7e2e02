#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Checks that every tracked source file carries the licence's SPDX line, and that every tracked C/C++ file
# is laid out as .clang-format says; exits 1 naming those that do not.
#   bash scripts/check-format.sh          check (what scripts/test.sh runs)
#   bash scripts/check-format.sh --fix    rewrite the files that differ, in place
# The formatter is pinned (clang-format-16, from scripts/install-deps.sh): other versions lay some constructs
# out differently. CLANG_FORMAT=... overrides it.
set -euo pipefail
cd "$(dirname "$0")/.."

fix=0
case "${1:-}" in
  "") ;;
  --fix) fix=1 ;;
  *) echo "usage: bash scripts/check-format.sh [--fix]" >&2; exit 2 ;;
esac

# The licence line, in the first three lines of every source file (after a #! line, where there is one).
# Data files are exempt: test fixtures, fuzz seeds, plots, JSON.
missing=()
while IFS= read -r -d '' f; do
  [ -f "$f" ] || continue
  head -n 3 "$f" | grep -q 'SPDX-License-Identifier: Apache-2.0' || missing+=("$f")
done < <(git ls-files -z -- '*.hpp' '*.cpp' '*.h' '*.c' '*.in' '*.py' '*.pyi' '*.sh' '*.cmake' '*.gp' '*.toml' \
  '*.bash' '*.map' '*CMakeLists.txt' '.clang-format' '.gitignore' '.ci/run' ':!tests/fixtures' ':!fuzz/corpus')
if ((${#missing[@]})); then
  printf 'format: %s has no SPDX-License-Identifier line\n' "${missing[@]}" >&2
  exit 1
fi

clang_format=${CLANG_FORMAT:-clang-format-16}
if ! command -v "$clang_format" >/dev/null; then
  echo "check-format: $clang_format not found (bash scripts/install-deps.sh installs it)" >&2
  exit 2
fi
# A broken .clang-format would otherwise show up as every file "differing".
"$clang_format" --style=file --dump-config >/dev/null

# Tracked C/C++ sources that exist in the working tree (a deletion not yet committed is skipped).
files=()
while IFS= read -r -d '' f; do
  [ -f "$f" ] && files+=("$f")
done < <(git ls-files -z -- '*.hpp' '*.cpp' '*.h' '*.c')
((${#files[@]})) || exit 0

# The files clang-format would change: one run over all of them (startup dominates the cost), one
# violation reported per file, the file name taken from each report.
set +e
report=$("$clang_format" --style=file --dry-run --Werror --ferror-limit=1 "${files[@]}" 2>&1)
status=$?
set -e
mapfile -t differing < <(
  sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' <<<"$report" | sort -u
)
if ((status != 0 && ${#differing[@]} == 0)); then
  printf '%s\n' "$report" >&2  # clang-format failed for another reason: show it
  exit 2
fi

if ((${#differing[@]} == 0)); then
  echo "format: ${#files[@]} files as .clang-format says"
  exit 0
fi

if ((fix)); then
  "$clang_format" --style=file -i "${differing[@]}"
  printf 'format: rewrote %s\n' "${differing[@]}"
  exit 0
fi

printf 'format: %s differs from .clang-format\n' "${differing[@]}" >&2
# The changes themselves, so a CI log says what is wrong (for the first few files, 200 lines at most).
for f in "${differing[@]:0:5}"; do
  "$clang_format" --style=file "$f" | diff -u --label "$f" --label "$f (formatted)" "$f" - || true
done | head -n 200 >&2 || true
echo "format: ${#differing[@]} of ${#files[@]} files differ; fix them with: bash scripts/check-format.sh --fix" >&2
exit 1
