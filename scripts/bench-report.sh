#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Regenerates docs/benchmarks.md, the one current report of every comparison, so that no figure in it is older
# than the others without saying so. Builds the release preset's benchmark targets, runs each benchmark alone
# (they time a 2-core machine: two at once would measure each other), and replaces each section's measured
# block, between its `<!-- NAME: begin` and `<!-- NAME: end -->` lines, with the new tables, stamped with the
# date, the commit and the machine. The rest of the file (the reading guide, the hand-written notes) is kept.
# A section whose prerequisite is missing (redis-server, PostgreSQL, mpirun, Python modules), or whose program
# writes nothing, keeps its previous block and says so in it. Servers are started on loopback by the scripts
# the benchmarks already use (tests/redis/server.py, examples/signup/signup.py).
#   scripts/bench-report.sh                                 every section at full size: a few hours
#   scripts/bench-report.sh --only kinds,redis              those sections; the others stay as they are
#   scripts/bench-report.sh --quick [--output PATH]         smallest sizes: checks the plumbing, not the figures
set -euo pipefail

sections=(kinds family static gcs variants counting quality reconcile novelty streaming distributed aggregation redis transfer python signup)
usage() {
  echo "usage: scripts/bench-report.sh [--quick] [--output PATH] [--only SECTION,...]"
  echo "sections: ${sections[*]}"
}
quick=0
output=docs/benchmarks.md
output_given=0
only=""
while (($#)); do
  case "$1" in
    --quick) quick=1 ;;
    --output) output=${2:?--output needs a path}; output_given=1; shift ;;
    --only) only=${2:?--only needs a list}; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
  shift
done
# The output is named from where the script was started; everything else from the top of the source tree.
((output_given)) && output=$(realpath -m -- "$output")
cd "$(dirname "$0")/.."
# Figures from the smallest sizes mean nothing: unless --output says where, they go beside the build.
((quick && !output_given)) && output=build/release/benchmarks-quick.md
selected=()
for s in "${sections[@]}"; do
  [[ -z "$only" || ",$only," == *",$s,"* ]] && selected+=("$s")
done
for s in ${only//,/ }; do
  [[ " ${sections[*]} " == *" $s "* ]] || { echo "bench-report: unknown section '$s'" >&2; usage >&2; exit 2; }
done

template=docs/benchmarks.md
bin=build/release
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
now() { date -u '+%Y-%m-%d %H:%M UTC'; }

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
cpus=$(grep -c '^processor' /proc/cpuinfo)
memory=$(awk '/^MemTotal:/ { printf "%.1f GiB RAM", $2 / 1048576 }' /proc/meminfo)
machine="${cpu:-unknown CPU}, $cpus logical CPUs, $memory, Linux $(uname -r)"
# --no-optional-locks: reading the state must not write the index that others are working on. The report
# itself does not make the tree dirty: a run of some sections leaves it changed for the next.
commit=$(git rev-parse --short HEAD)
[ -z "$(git --no-optional-locks status --porcelain -- . ":(exclude)$template")" ] || commit+="-dirty"
started=$(now)

# ---- building ---------------------------------------------------------------------------------------------

targets_of() {
  case "$1" in
    kinds | family | static | gcs | variants | counting | quality) echo blume_bench ;;
    reconcile) echo blume_reconcile_bench ;;
    novelty) echo blume_novelty_bench ;;
    streaming) echo blume_streaming_bench ;;
    distributed) echo blume_mpi_traffic ;;
    aggregation) echo blume_mpi ;;
    redis) echo blume_redis ;;
    transfer) echo blume_redis blume_cli ;;
    python) echo blume_python ;;
    signup) echo blume_python blume_redis blume_cli ;;
  esac
}
cmake --preset release >/dev/null
# A target this configuration lacks (no MPI, no CLI11, no pybind11) is a missing prerequisite of its sections,
# found when they run; the others are built.
targets=()
for s in "${selected[@]}"; do
  for t in $(targets_of "$s"); do
    grep -q "^build $t: phony" "$bin/build.ninja" && [[ " ${targets[*]} " != *" $t "* ]] && targets+=("$t")
  done
done
((${#targets[@]} == 0)) || cmake --build --preset release --target "${targets[@]}"

# ---- running one benchmark --------------------------------------------------------------------------------

# Each section_NAME function sets `shown` (the command as the report prints it) and writes the section's
# Markdown to $body, or sets `missing` to the prerequisite it lacks. `status` is the program's exit status.
body=""
shown=""
missing=""
status=0

run() {  # run OUT COMMAND...: stdout to the terminal and to OUT, stderr to the terminal
  echo "+ ${*:2}" >&2
  status=0
  "${@:2}" | tee "$1" || status=$?
}
need_file() { [ -e "$1" ] || missing+="${missing:+, }$1 (not built)"; }
need_command() { command -v "$1" >/dev/null || missing+="${missing:+, }$1"; }
need_python() { /usr/bin/python3 -c "import $1" 2>/dev/null || missing+="${missing:+, }Python module $1"; }

bench() {  # bench OPTIONS -- FULL-SIZE OPTIONS: one blume_bench run into the section
  local common=() sizes=()
  while [ "$1" != -- ]; do common+=("$1"); shift; done
  shift
  sizes=("$@")
  ((quick)) && sizes=(--quick)
  need_file "$bin/bench/blume_bench"
  shown="$bin/bench/blume_bench ${common[*]} ${sizes[*]} --section --output <file>"
  [ -z "$missing" ] || return 0
  run "$work/out" "$bin/bench/blume_bench" "${common[@]}" "${sizes[@]}" --section --output "$body"
}

section_kinds() { bench --keys int,email -- --items 10M,100M --reps 3; }
section_family() { bench --family --keys int -- --items 10M --reps 5; }
section_static() { bench --static --keys int --baselines absl -- --items 10M,100M --reps 3; }
# Its lookups decode about a thousand codes each, so --static leaves it out and it runs alone on 100k probes.
section_gcs() { bench --kinds gcs --baselines none --keys int --probes 1M -- --items 10M,100M --reps 3; }
section_variants() {
  bench --kinds split-block,layered,attenuated,spatial,compact --baselines none --keys int,email -- --items 10M --reps 3
}
section_counting() {
  bench --kinds counting,vi-counting,dleft,iblt,cuckoo --baselines none --keys int,email -- --items 10M --reps 3
}

# The whole table has seven rows per kind; the report keeps each kind's row farthest from its prediction.
section_quality() {
  local sizes=()
  # As ctest runs it under the sanitizers: at fewer probes the rarest rates (xor16's 0.0015%) are noise.
  ((quick)) && sizes=(--items 100k --probes 1M)
  need_file "$bin/bench/blume_bench"
  shown="$bin/bench/blume_bench --quality${sizes[*]:+ ${sizes[*]}}"
  [ -z "$missing" ] || return 0
  run "$work/out" "$bin/bench/blume_bench" --quality "${sizes[@]}"
  awk -F'|' '
    function trim(s) { gsub(/^ +| +$/, "", s); return s }
    /^\| kind \| keys \(n = / {
      match($0, /n = [0-9]+/); n = substr($0, RSTART + 4, RLENGTH - 4)
      match($0, /[0-9]+ absent/); probes = substr($0, RSTART, RLENGTH - 7)
      next
    }
    /^\|---/ || !/^\| / { next }
    {
      kind = trim($2); z = trim($6) + 0; total++
      if (!(kind in rows)) order[++kinds] = kind
      rows[kind]++
      if (trim($7) == "yes") within_all++; else bad[kind] = 1
      if (!(kind in far) || (z < 0 ? -z : z) > far[kind]) {
        far[kind] = z < 0 ? -z : z
        text = trim($6); sub(/^-/, "−", text)
        row[kind] = trim($5) " | " trim($3) ": " text
      }
    }
    END {
      if (!total) exit
      printf "Every kind at %s keys, %s absent probes per pattern: %d rows, %d within (the full table is printed by the command). ", n, probes, total, within_all
      print "The row farthest from its prediction, per kind:\n"
      print "| kind | rows | predicted | farthest row: z | all within |"
      print "|---|---|---:|---|---|"
      for (i = 1; i <= kinds; i++) {
        k = order[i]
        printf "| %s | %d | %s | %s |\n", k, rows[k], row[k], (k in bad) ? "**no**" : "yes"
      }
    }' "$work/out" >"$body"
}

section_reconcile() {
  local args=()
  ((quick)) && args=(100000 5 10 1000)
  need_file "$bin/bench/blume_reconcile_bench"
  shown="$bin/bench/blume_reconcile_bench${args[*]:+ ${args[*]}}"
  ((quick)) || shown+=" (10M keys per side, 100 trials, d = 10, 1000, 100000)"
  [ -z "$missing" ] || return 0
  run "$body" "$bin/bench/blume_reconcile_bench" "${args[@]}"
}

# Synthetic clusters always; scikit-learn's digits (shipped inside Debian's python3-sklearn) where it is installed.
section_novelty() {
  local args=()
  ((quick)) && args=(--quick)
  need_file "$bin/bench/blume_novelty_bench"
  shown="$bin/bench/blume_novelty_bench${args[*]:+ ${args[*]}}"
  [ -z "$missing" ] || return 0
  if /usr/bin/python3 -c "import sklearn" 2>/dev/null; then
    /usr/bin/python3 - "$work/digits.csv" <<'PY'
import sys
from sklearn.datasets import load_digits
digits = load_digits()
with open(sys.argv[1], "w") as out:
    for image, label in zip(digits.data, digits.target):
        out.write(",".join([str(int(label))] + [str(int(v)) for v in image]) + "\n")
PY
    args+=(--digits "$work/digits.csv")
    shown+=" --digits <scikit-learn's digits as CSV>"
  fi
  run "$body" "$bin/bench/blume_novelty_bench" "${args[@]}"
}

# blume-mpi aggregate on 2 ranks: rounds against N, the same at more pushes, one run under churn, and the filters'
# bias against its model.
section_aggregation() {
  local sizes=(100 300 1000 3000 10000) rates=(1e-6 0.01 0.05 0.2) churn=1000 wide=3000 n r
  ((quick)) && sizes=(100 300) && rates=(0.01 0.2) && churn=200 && wide=300
  need_command mpirun
  need_file "$bin/distributed/blume-mpi"
  shown="mpirun -np 2 $bin/distributed/blume-mpi aggregate --peers N [--pushes P] [--fpr F] --summary, and one run with --change-at and --leave-at"
  [ -z "$missing" ] || return 0
  aggregate() {
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
      mpirun -np 2 "$bin/distributed/blume-mpi" aggregate "$@"
  }
  local header="| peers | pushes a round | filters' rate | rounds to within 1% | last value newly counted | rounds | exact | bytes per peer a round | bytes per peer in all | filter bytes per peer | values never counted | model |
|--:|--:|--:|--:|--:|--:|:-:|--:|--:|--:|--:|--:|"
  {
    echo "**Rounds until every peer's five aggregates are exact, against N** (each peer pushes to 4 peers a round, chosen among 15 sampled; filters at 10⁻⁶, so that no value is lost and a run ends when exact):"
    echo
    echo "$header"
    for n in "${sizes[@]}"; do aggregate --peers "$n" --fpr 1e-6 --summary; done
    echo
    echo "**More pushes a round** ($wide peers): fewer rounds, the same bytes in all:"
    echo
    echo "$header"
    for r in 4 16 64; do aggregate --peers "$wide" --pushes "$r" --fpr 1e-6 --summary; done
    echo
    echo "**The filters' bias** ($churn peers; a run stops once no value is newly counted for 2·N/4 rounds): values never counted, against the model:"
    echo
    echo "$header"
    for r in "${rates[@]}"; do aggregate --peers "$churn" --fpr "$r" --summary; done
    echo
    local change=400 leave=500 every=50
    ((quick)) && change=100 && leave=150 && every=25
    echo "**Under churn** ($churn peers, filters at 1%): 10% of the values change at round $change, then 10% of the peers leave at round $leave (every ${every}th round shown):"
    echo
    aggregate --peers "$churn" --change-at "$change" --leave-at "$leave" --every "$every"
  } >"$body" || status=$?
}

# Its picture goes to docs/plots/streaming.svg (with --quick, beside the quick report).
section_streaming() {
  local args=(--memory 65536) plots=docs/plots
  ((quick)) && args=(--memory 4096) && plots=$(dirname "$output")/plots
  need_file "$bin/bench/blume_streaming_bench"
  shown="$bin/bench/blume_streaming_bench ${args[*]} --plots $plots"
  [ -z "$missing" ] || return 0
  run "$body" "$bin/bench/blume_streaming_bench" "${args[@]}" --plots "$plots"
}

# One run per number of ranks, each printing its own table; the report shows them side by side.
section_distributed() {
  local keys=100000000 p
  ((quick)) && keys=100000
  need_command mpirun
  need_file "$bin/distributed/blume-mpi-traffic"
  shown="mpirun -np P $bin/distributed/blume-mpi-traffic $keys 0.01 for P = 2, 4, 8"
  [ -z "$missing" ] || return 0
  for p in 2 4 8; do
    # As ctest runs MPI: allowed as root, and more ranks than the machine's cores on purpose.
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
      run "$work/mpi.$p" mpirun -np "$p" "$bin/distributed/blume-mpi-traffic" "$keys" 0.01
    ((status == 0)) || return 0
  done
  awk -F'|' '
    function trim(s) { gsub(/^ +| +$/, "", s); return s }
    /^[0-9]+ ranks, / { p = $1 + 0; ranks[++runs] = p; if (runs == 1) { sub(/^[0-9]+ ranks, /, ""); what = $0 } }
    / duplicates found, / { found[p] = found[p] (++founds[p] > 1 ? "; " : "") $0 }
    !/^\| / || /^\| what / || /^\|---/ { next }
    {
      # The filter memory in a name moves with the number of ranks: the rows are matched without it.
      name = trim($2); sub(/ \([0-9.]+ bits\/key of memory\)/, "", name)
      if (name !~ /: insert$/ && name !~ /: all phases$/) next
      if (!(name in seen)) { seen[name] = 1; order[++rows] = name; hashes[name] = trim($5); keys[name] = trim($6) }
      cell[name, p] = trim($4) " (" trim($7) ")"
    }
    END {
      print what ", 1% of them repeats; bits sent per key (time in s, the slowest rank'"'"'s):\n"
      header = "| what"; line = "|---"
      for (r = 1; r <= runs; r++) { header = header " | P = " ranks[r]; line = line "|---" }
      print header " | 64-bit hashes | the keys |"; print line "|---|---|"
      for (i = 1; i <= rows; i++) {
        n = order[i]; out = "| " n
        for (r = 1; r <= runs; r++) out = out " | " cell[n, ranks[r]]
        print out " | " hashes[n] " | " keys[n] " |"
      }
      print ""
      for (r = 1; r <= runs; r++) print "- P = " ranks[r] ": " found[ranks[r]]
    }' "$work"/mpi.2 "$work"/mpi.4 "$work"/mpi.8 >"$body"
}

# bench/redis writes its block between its own markers; the report has its own heading above them.
redis_block() { sed -n '/^<!-- redis .*: begin/,/^<!-- redis .*: end -->/p' "$1" | sed '1d;$d;/^## /d' >"$body"; }
# Without the blank lines a program leaves before and after its tables.
trim_blank() { awk 'NF { for (; blanks; blanks--) print ""; print; started = 1; next } started { blanks++ }' "$1"; }

section_redis() {
  local args=(--module "$bin/redis/blume_redis.so")
  ((quick)) && args+=(--quick)
  need_command redis-server
  need_command redis-benchmark
  need_python redis
  need_file "$bin/redis/blume_redis.so"
  shown="/usr/bin/python3 bench/redis/run.py ${args[*]} --output <file>"
  [ -z "$missing" ] || return 0
  run "$work/out" /usr/bin/python3 bench/redis/run.py "${args[@]}" --output "$work/redis.md"
  [ ! -f "$work/redis.md" ] || redis_block "$work/redis.md"
}

section_transfer() {
  local args=(--items 100M)
  ((quick)) && args=(--items 1M --merge-items 100k --reps 1)
  args+=(--module "$bin/redis/blume_redis.so" --cli "$bin/cli/blume")
  need_command redis-server
  need_python redis
  need_file "$bin/redis/blume_redis.so"
  need_file "$bin/cli/blume"
  shown="/usr/bin/python3 bench/redis/transfer.py ${args[*]} --output <file>"
  [ -z "$missing" ] || return 0
  run "$work/out" /usr/bin/python3 bench/redis/transfer.py "${args[@]}" --output "$work/transfer.md"
  [ ! -f "$work/transfer.md" ] || redis_block "$work/transfer.md"
}

section_python() {
  local args=()
  ((quick)) && args=(--sizes 20k --probes 20k --reps 1)
  compgen -G "$bin/python/blume/_blume*.so" >/dev/null || missing+="${missing:+, }$bin/python/blume (not built)"
  need_python bitarray
  need_python numpy
  shown="PYTHONPATH=$bin/python /usr/bin/python3 bench/python/bench_python.py${args[*]:+ ${args[*]}}"
  ((quick)) || shown+=" (10M and 100M)"
  [ -z "$missing" ] || return 0
  PYTHONPATH=$bin/python run "$body" /usr/bin/python3 bench/python/bench_python.py "${args[@]}"
}

# One run per number of users, the crash test with the first; their tables stack under an N column.
section_signup() {
  local sizes=(1M 10M 100M) attempts=100k n crash log
  ((quick)) && sizes=(20k) attempts=2000
  compgen -G "/usr/lib/postgresql/*/bin/postgres" >/dev/null || missing+="${missing:+, }PostgreSQL"
  need_command redis-server
  need_python psycopg2
  need_python redis
  compgen -G "$bin/python/blume/_blume*.so" >/dev/null || missing+="${missing:+, }$bin/python/blume (not built)"
  need_file "$bin/redis/blume_redis.so"
  need_file "$bin/cli/blume"
  local common=(--attempts "$attempts" --blume-cli "$bin/cli/blume" --module "$bin/redis/blume_redis.so")
  shown="PYTHONPATH=$bin/python /usr/bin/python3 examples/signup/signup.py run --items N ${common[*]} for N = ${sizes[*]}"
  shown+=" (the first with --crash-test)"
  [ -z "$missing" ] || return 0
  crash=(--crash-test)
  for n in "${sizes[@]}"; do
    PYTHONPATH=$bin/python run "$work/signup.$n" /usr/bin/python3 examples/signup/signup.py run --items "$n" \
      "${common[@]}" "${crash[@]}"
    crash=()
    ((status == 0)) || return 0
  done
  {
    for n in "${sizes[@]}"; do
      log=$work/signup.$n
      if [ "$n" = "${sizes[0]}" ]; then
        grep -m 1 '^| filter ' "$log" | sed 's/^|/| N |/' || true
        grep -m 1 '^|---' "$log" | sed 's/^|/|---|/' || true
      fi
      grep '^| ' "$log" | grep -v '^| filter ' | sed "s/^|/| $n |/" || true
    done
    echo
    for n in "${sizes[@]}"; do
      grep -E '^(PostgreSQL|crash test|all checks passed|CHECKS FAILED)' "$work/signup.$n" | sed 's/^/- /' || true
    done
  } >"$body"
}

# ---- assembling the report --------------------------------------------------------------------------------

key_of() {
  case "$1" in
    redis) echo "redis module benchmark" ;;
    transfer) echo "redis transfer benchmark" ;;
    *) echo "$1 benchmark" ;;
  esac
}
block_of() {  # block_of FILE KEY: the block's lines, markers included
  awk -v begin="<!-- $2: begin" -v end="<!-- $2: end -->" \
    'index($0, begin) == 1 { on = 1 } on { print } on && $0 == end { exit }' "$1"
}
splice() {  # splice FILE KEY BLOCK-FILE: the block replaced, or added at the end of a report without it
  if [ -z "$(block_of "$1" "$2")" ]; then
    printf '\n' >>"$1"
    cat "$3" >>"$1"
    return
  fi
  awk -v begin="<!-- $2: begin" -v end="<!-- $2: end -->" -v block="$3" '
    skip { if ($0 == end) skip = 0; next }
    index($0, begin) == 1 { while ((getline line < block) > 0) print line; close(block); skip = 1; next }
    { print }' "$1" >"$1.new"
  mv "$1.new" "$1"
}

report=$work/report.md
cp "$template" "$report"
regenerated=()
kept=()
for s in "${selected[@]}"; do
  key=$(key_of "$s")
  body=$work/$s.body
  : >"$body"
  shown=""
  missing=""
  status=0
  echo "=== $s ===" >&2
  when=$(now)
  "section_$s"
  old=$(block_of "$template" "$key")
  begin=$(head -n 1 <<<"$old")
  [ -n "$begin" ] || begin="<!-- $key: begin (written by scripts/bench-report.sh) -->"
  {
    echo "$begin"
    if [ -n "$missing" ] || [ ! -s "$body" ]; then
      why=${missing:+missing: $missing}
      why=${why:-the program exited with status $status and wrote nothing}
      kept+=("$s ($why)")
      echo "**Not regenerated on $when** ($why): the figures below are those of the measurement stated."
      sed '1d;$d' <<<"$old" | grep -v '^\*\*Not regenerated on ' || true
    else
      regenerated+=("$s")
      echo "Measured $when at commit $commit on $machine.$( ((quick)) && echo ' **--quick: smallest sizes, the figures mean nothing.**')"
      echo "Command (run by \`scripts/bench-report.sh\`): \`$shown\`"
      echo
      trim_blank "$body"
      ((status == 0)) || printf '\n**The program exited with status %s.**\n' "$status"
    fi
    echo "<!-- $key: end -->"
  } >"$work/block"
  splice "$report" "$key" "$work/block"
done

# The summary is of the report as written, not of this run alone: every section's own stamp, one line each.
stamp_of() {  # stamp_of KEY: the section's "Measured <when> at commit <c>" or why it was not regenerated
  block_of "$report" "$1" | sed -n '2{s/^Measured \(.* at commit [^ ]*\).*/\1/p;s/^\*\*Not regenerated on \([^*]*\)\*\*.*/not regenerated on \1/p}'
}
{
  echo "<!-- report: begin (written by scripts/bench-report.sh) -->"
  echo "Last run of \`scripts/bench-report.sh$( ((quick)) && echo ' --quick')${only:+ --only $only}\`: $started at commit $commit on $machine."
  echo "Regenerated by it: ${regenerated[*]:-none}.${kept[*]:+ Kept by it: $(printf '%s; ' "${kept[@]}" | sed 's/; $//').}"
  echo
  echo "| section | measured |"
  echo "|---|---|"
  for s in "${sections[@]}"; do
    echo "| $s | $(stamp_of "$(key_of "$s")") |"
  done
  echo "<!-- report: end -->"
} >"$work/block"
splice "$report" report "$work/block"

mkdir -p "$(dirname "$output")"
cp "$report" "$output"
echo "bench-report: wrote $output (regenerated: ${regenerated[*]:-none}; kept: ${#kept[@]})" >&2
