#!/usr/bin/env bash
# blume-mpi under mpirun: dedup prints exactly what `LC_ALL=C sort | uniq -d` prints, on 4 ranks and on 3,
# with one filter pass and with two; --approximate prints every duplicate; build and query round trip.
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
echo "blume-mpi: all checks passed"
