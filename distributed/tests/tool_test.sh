#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# blume-mpi under mpirun: dedup prints exactly what `LC_ALL=C sort | uniq -d` prints, on 4 ranks and on 3,
# with one filter pass and with two; --approximate prints every duplicate; build and query round trip. The
# ranks must see the same input: each rank runs in a directory of its own (as node-local copies would be),
# and when the copies agree the answer is as before, but when they differ (another file, a missing or an
# extra one, one changed byte under --input-check full, a file still being written) every rank exits 2 and
# rank 0 names the files and ranks. build refuses an input without keys in plain words.
set -euo pipefail
tool=$1 mpirun=$2 dir=$3
rm -rf "$dir" && mkdir -p "$dir"
python3 - "$dir" <<'PY'
import random, sys
random.seed(7)
keys = [f"user{random.randrange(10**9)}@example.com" for _ in range(40000)]
lines = keys + random.sample(keys, 3000) + random.sample(keys, 200) * 3
random.shuffle(lines)
for part in range(5):  # five files of unequal sizes, the last without a final newline
    chunk = lines[part * len(lines) // 5 : (part + 1) * len(lines) // 5]
    text = "\n".join(chunk) + ("" if part == 4 else "\n")
    open(f"{sys.argv[1]}/part-{part}.txt", "w").write(text)
open(f"{sys.argv[1]}/absent.txt", "w").write("\n".join(f"nobody{i}@example.org" for i in range(2000)) + "\n")
PY
(cat "$dir"/part-*.txt; echo) | grep -v '^$' | LC_ALL=C sort | uniq -d > "$dir/expected"
[ -s "$dir/expected" ]
run() { "$mpirun" -np "$1" "$tool" "${@:2}"; }
for ranks in 4 3; do
  run "$ranks" dedup --input "$dir/part-*.txt" > "$dir/found"
  cmp "$dir/expected" "$dir/found"
  run "$ranks" dedup --input "$dir/part-*.txt" --passes 0.2,0.01 --stats > "$dir/found" 2> "$dir/stats"
  cmp "$dir/expected" "$dir/found"
  grep -q "filter pass 2" "$dir/stats"
  grep -q "exact check" "$dir/stats"
done
run 4 dedup --input "$dir/part-*.txt" --approximate > "$dir/approximate"
[ -z "$(LC_ALL=C comm -23 "$dir/expected" "$dir/approximate")" ]  # every duplicate is flagged
run 4 build --input "$dir/part-*.txt" --output "$dir/users.blume"
run 4 query --filter "$dir/users.blume" --input "$dir/part-*.txt" > "$dir/answers"
[ "$(grep -c $'\tmaybe$' "$dir/answers")" -eq "$(cat "$dir"/part-*.txt | grep -vc '^$')" ]
if run 4 query --filter "$dir/users.blume" --input "$dir/absent.txt" > "$dir/answers"; then exit 1; fi
[ "$(grep -c $'\tno$' "$dir/answers")" -gt 1900 ]
if run 2 dedup --input "$dir/none-*.txt" 2> "$dir/error"; then exit 1; fi
grep -q "no input file matches" "$dir/error"

# Each rank in rank<r>/ (OpenMPI names the rank in OMPI_COMM_WORLD_RANK), reading relative paths.
cat > "$dir/per-rank.sh" <<'SH'
#!/bin/sh
cd "$(dirname "$0")/rank$OMPI_COMM_WORLD_RANK" && exec "$@"
SH
chmod +x "$dir/per-rank.sh"
copies() { for r in 0 1 2 3; do rm -rf "$dir/rank$r" && mkdir "$dir/rank$r" && cp "$dir"/part-*.txt "$dir/rank$r/"; done; }
per_rank() { "$mpirun" -np 4 "$dir/per-rank.sh" "$tool" "$@"; }
refused() {  # the command exits 2 (every rank) and rank 0's message holds each of the other arguments
  local status=0
  per_rank "${@:2}" > "$dir/out" 2> "$dir/error" || status=$?
  [ "$status" -eq 2 ] || { echo "exit $status, not 2: $*" >&2; cat "$dir/error" >&2; exit 1; }
  [ ! -s "$dir/out" ] || { echo "output despite the refusal: $*" >&2; exit 1; }
  grep -q "$1" "$dir/error" || { echo "no '$1' in:" >&2; cat "$dir/error" >&2; exit 1; }
  [ "$(grep -c '^blume-mpi: ' "$dir/error")" -eq 1 ] || { echo "not one message:" >&2; cat "$dir/error" >&2; exit 1; }
}
copies
per_rank dedup --input 'part-*.txt' > "$dir/found"  # copies that agree: as before
cmp "$dir/expected" "$dir/found"
per_rank dedup --input 'part-*.txt' --input-check full > "$dir/found"
cmp "$dir/expected" "$dir/found"
per_rank build --input 'part-*.txt' --output "$dir/per-rank.blume"
per_rank query --filter "$dir/per-rank.blume" --input 'part-*.txt' > /dev/null

cp "$dir/absent.txt" "$dir/rank2/part-1.txt"  # another file under the same name on rank 2
refused "'part-1.txt': ranks 0, 1, 3: [0-9]* bytes, checksum [0-9a-f]*; rank 2: [0-9]* bytes" dedup --input 'part-*.txt'
grep -q "do not see the same input files" "$dir/error"
refused "'part-1.txt': ranks 0, 1, 3: .*; rank 2: " build --input 'part-*.txt' --output "$dir/never.blume"
[ ! -e "$dir/never.blume" ]
refused "'part-1.txt': ranks 0, 1, 3: .*; rank 2: " query --filter "$dir/users.blume" --input 'part-*.txt'
copies
rm "$dir/rank1/part-3.txt"  # a file missing on one rank, and an extra one on another
cp "$dir/absent.txt" "$dir/rank3/part-9.txt"
refused "'part-3.txt': ranks 0, 2, 3: .*; rank 1: not found" dedup --input 'part-*.txt'
grep -q "'part-9.txt': ranks 0-2: not found; rank 3: " "$dir/error"
copies
run 2 build --input "$dir/absent.txt" --output "$dir/other.blume" 2> /dev/null
cp "$dir/users.blume" "$dir/rank0/f.blume" && cp "$dir/other.blume" "$dir/rank1/f.blume"  # ranks 2, 3: none
refused "'f.blume': rank 0: .*; rank 1: .*; ranks 2, 3: cannot be opened: No such file" \
  query --filter f.blume --input 'part-*.txt'

# One byte changed where the sampled blocks do not look (at 100000 of a file of 2 MiB, whose blocks are
# at multiples of (2 MiB − 64 KiB) / 15): only the full check sees it.
python3 - "$dir" <<'PY'
import sys
lines = "".join(f"key{i:07d}\n" for i in range(2 * 1024 * 1024 // 11 + 1)).encode()
for r in range(4):
    data = bytearray(lines)
    if r == 3:
        data[100000] = ord("x") if data[100000] != ord("x") else ord("y")
    open(f"{sys.argv[1]}/rank{r}/big.txt", "wb").write(bytes(data))
PY
refused "'big.txt': ranks 0-2: .*; rank 3: " dedup --input '*.txt' --input-check full

# A file still being written: the ranks see other sizes, or it changes while they read it.
copies
(while :; do echo "grows$RANDOM" >> "$dir/rank0/part-4.txt"; done) &
writer=$!
for r in 1 2 3; do ln -sf ../rank0/part-4.txt "$dir/rank$r/part-4.txt"; done
status=0
per_rank dedup --input 'part-*.txt' > /dev/null 2> "$dir/error" || status=$?
kill "$writer" && wait "$writer" 2> /dev/null || true
[ "$status" -eq 2 ] && grep -q "still being written" "$dir/error" || { cat "$dir/error" >&2; exit 1; }

: > "$dir/empty.txt" && printf '\n\n' > "$dir/blank.txt"
if run 2 build --input "$dir/[eb]*.txt" --output "$dir/empty.blume" 2> "$dir/error"; then exit 1; fi
grep -q "^blume-mpi: no keys in input" "$dir/error"
[ ! -e "$dir/empty.blume" ]
# Gossip aggregation on 3 ranks: exact after changes and departures, and a summary row; bad options refused.
run 3 aggregate --peers 120 --every 1000 --change-at 60 --leave-at 90 > "$dir/aggregate.md"
grep -q "^Exact after [0-9]* rounds" "$dir/aggregate.md" || { cat "$dir/aggregate.md" >&2; exit 1; }
run 2 aggregate --peers 100 --fpr 0.2 --summary > "$dir/summary.md"
grep -Eq "^\| 100 \| 4 \| 0.2 \| ([0-9]+|never) \| [0-9]+ \| [0-9]+ \| (yes|no) \|" "$dir/summary.md" || { cat "$dir/summary.md" >&2; exit 1; }
if run 2 aggregate --peers 1 2> "$dir/error"; then exit 1; fi
grep -q "peers" "$dir/error"
# A million peers would need terabytes of filters (every peer keeps filters for all): refused before allocating.
if run 2 aggregate --peers 1000000 2> "$dir/error"; then exit 1; fi
grep -q "of filters on one node" "$dir/error" || { cat "$dir/error" >&2; exit 1; }
echo "blume-mpi: all checks passed"
