#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# SPIN on the puzzle explore.cpp searches, breadth-first as explore.cpp does (-DBFS: a depth-first search
# of this graph goes about as deep as it has states, and its stack alone outgrows the memory at 3×4): an
# exhaustive search (a full hash table of state vectors), bitstate hashing (-DBITSTATE: a bit array of 2^w
# bits, -k3 hashes, SPIN's default) at each budget in bits per board (the power of two SPIN takes nearest to
# it), and hash compaction (-DHC4: 4-byte signatures in a hash table of 2^w slots). Prints a Markdown table of
# SPIN's own state counts, memory and time; SPIN prints counts of 10^8 and more with 8 significant digits.
#   spin.sh ROWS COLS [--no-exhaustive] [--no-hc4] [BITS_PER_BOARD ...]
# Needs spin and a C compiler (Debian: spin, gcc; scripts/install-deps.sh statespace).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rows=$1 cols=$2
shift 2
exhaustive=1 hc4=1 budgets=()
for a in "$@"; do
  case $a in
    --no-exhaustive) exhaustive=0 ;;
    --no-hc4) hc4=0 ;;
    *) budgets+=("$a") ;;
  esac
done
((${#budgets[@]})) || budgets=(1 2 4 8 16)
cells=$((rows * cols))
boards=1
for ((i = 2; i <= cells; i++)); do boards=$((boards * i)); done
boards=$((boards / 2))
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
cp "$here/puzzle.pml" .
spin -DR="$rows" -DC="$cols" -a puzzle.pml >/dev/null
# MEMLIM (MB) lifts pan's default bound of 2 GB.
cflags=(-O2 -DNOREDUCE -DSAFETY -DBFS -DMEMLIM=20000)
log2_ceil() { local v=1 w=0; while ((v < $1)); do v=$((v * 2)); w=$((w + 1)); done; echo $w; }
row() {  # name, per-board label, binary, pan flags...
  local name=$1 label=$2 bin=$3
  shift 3
  local out
  out=$("./$bin" "$@" 2>&1) || true
  local stored memory seconds
  stored=$(awk '/states, stored/ {printf "%.0f", $1; exit}' <<<"$out")
  memory=$(awk '/total actual memory usage/ {print $1; exit}' <<<"$out")
  seconds=$(awk '/pan: elapsed time/ {print $4; exit}' <<<"$out")
  if [[ -z $stored ]] || grep -q "Search not completed" <<<"$out"; then
    echo "spin.sh: pan $* did not complete its search:" >&2
    echo "$out" >&2
    exit 1
  fi
  # SPIN counts the state before the board is laid out: one more than the boards.
  local reached=$((stored - 1))
  printf '| SPIN %s | %s | %s MB | %s | %s | %s s |\n' "$name" "$label" "$memory" "$reached" $((boards - reached)) "${seconds:-0}"
}
echo "SPIN $(spin -V | awk '{print $3}') on the ${rows}×${cols} puzzle: $boards boards"
echo
echo "| search | bits/board (hash array) | total memory | reached | missed | time |"
echo "|---|---:|---:|---:|---:|---:|"
w=$(log2_ceil "$boards")
if ((exhaustive)); then
  cc "${cflags[@]}" -o pan_full pan.c
  row exhaustive "state vectors" pan_full -w$((w + 1))
fi
cc "${cflags[@]}" -DBITSTATE -o pan_bitstate pan.c
for b in "${budgets[@]}"; do
  bw=$(log2_ceil $((b * boards)))
  # The power of two nearest to b·boards (SPIN's -w), and the bits per board it really gives.
  if (((1 << bw) - b * boards > b * boards - (1 << (bw - 1)))); then bw=$((bw - 1)); fi
  per=$(awk -v m=$((1 << bw)) -v n="$boards" 'BEGIN {printf "%.2f", m / n}')
  row "bitstate -k3" "$per" pan_bitstate -w$bw -k3
done
if ((hc4)); then
  cc "${cflags[@]}" -DHC4 -o pan_hc4 pan.c
  row "hash compaction (HC4)" "32 + table" pan_hc4 -w$w
fi
