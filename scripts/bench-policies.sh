#!/usr/bin/env bash
# The policy platform's benchmark (issue 32): (1) MASB's speed with the build before the
# platform and this one, interleaved (no regression beyond noise), at 1x over HOURS_1X and at 8x
# (--multiply 8) over HOURS_8X; (2) every registered policy once on the 12.5k cell over
# HOURS_DAY, side by side in seed 000's Table 4 layout (`cellsim report`), with each run's speed.
# Medians of RUNS runs, 2 threads.
#
# Usage: scripts/bench-policies.sh BEFORE_BIN PARQUET_DIR > bench-results/policies-DATE.md
#   BEFORE_BIN: a cellsim binary built before the change (e.g. from b5a6803)
# Environment: RUNS (3), HOURS_1X (6), HOURS_8X (1), HOURS_DAY (24; 0 = no day runs),
#              WORK (a temporary directory).
set -euo pipefail
cd "$(dirname "$0")/.."
before=${1:?usage: scripts/bench-policies.sh BEFORE_BIN PARQUET_DIR}
trace=${2:?usage: scripts/bench-policies.sh BEFORE_BIN PARQUET_DIR}
runs=${RUNS:-3}
hours_1x=${HOURS_1X:-6}
hours_8x=${HOURS_8X:-1}
hours_day=${HOURS_DAY:-24}
cargo build --release --quiet
after=$PWD/target/release/cellsim
work=${WORK:-$(mktemp -d -t cellsim-bench.XXXXXX)}
mkdir -p "$work"
. scripts/lib.sh
declare -A speed rss
for i in $(seq "$runs"); do
  for cell in 1 8; do
    for build in before after; do
      bin=$before; [ "$build" = after ] && bin=$after
      hours=$hours_1x; [ "$cell" = 8 ] && hours=$hours_8x
      d="$work/masb-$build-$cell-$i"
      rm -rf "$d"
      echo "run $i: masb ${cell}x, $build, $hours h" >&2
      "$bin" run --trace "$trace" --policy masb --multiply "$cell" --hours "$hours" --threads 2 \
        --snapshot-every-wall-minutes 0 --out "$d" > /dev/null 2>&1
      report=$("$after" report "$d")
      speed["$build|$cell"]+="$(report_value "$report" "speed (x real time)") "
      rss["$build|$cell"]+="$(report_value "$report" "peak RSS (MB)") "
      # Keep one run of each for the byte comparison below.
      [ "$i" = 1 ] || rm -rf "$d"
    done
  done
done
same() {
  local a=$1 b=$2
  for t in ticks nodes migrations; do
    diff -rq "$a/$t" "$b/$t" > /dev/null || { echo "differ ($t)"; return; }
  done
  cmp -s "$a/samples.jsonl" "$b/samples.jsonl" || { echo "differ (samples.jsonl)"; return; }
  echo "byte-identical"
}
kinds=$("$after" run --help | awk '/Possible values:/ {on=1; next} on && /^ *- / {sub(":", "", $2); print $2} on && /^$/ {exit}')
runs_day=()
[ "$hours_day" = 0 ] && kinds=""
for kind in $kinds; do
  d="$work/day-$kind"
  rm -rf "$d"
  echo "day: $kind" >&2
  "$after" run --trace "$trace" --policy "$kind" --hours "$hours_day" --threads 2 \
    --snapshot-every-wall-minutes 0 --out "$d" > /dev/null 2>&1
  runs_day+=("$d")
done
cat <<HEAD
# Policy platform: MASB before and after, and every policy on the 12.5k cell

- date: $(date -u +%Y-%m-%dT%H:%MZ)
- commit: $(git rev-parse --short HEAD)$(git diff --quiet || echo " (+ uncommitted changes)")
- machine: $(lscpu | awk -F: '/Model name/ {gsub(/^ +/, "", $2); print $2}'), $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB
- trace: \`$trace\`; 8x = \`--multiply 8\`
- before: \`$before\` ($("$before" --version)); after: $("$after" --version)
- command: \`cellsim run --trace TRACE --policy P --multiply K --hours H --threads 2 --snapshot-every-wall-minutes 0 --out D\`,
  then \`cellsim report D\`; MASB: $runs runs per line, builds interleaved, medians

## MASB before and after

| cell | hours | before x real time | after x real time | after / before | before RSS MB | after RSS MB | outputs |
|---|---|---|---|---|---|---|---|
HEAD
for cell in 1 8; do
  hours=$hours_1x; [ "$cell" = 8 ] && hours=$hours_8x
  b=$(echo "${speed[before|$cell]}" | median); a=$(echo "${speed[after|$cell]}" | median)
  ratio=$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.2f", a / b}')
  rb=$(echo "${rss[before|$cell]}" | median); ra=$(echo "${rss[after|$cell]}" | median)
  echo "| ${cell}x | $hours | $b | $a | $ratio | $rb | $ra | $(same "$work/masb-before-$cell-1" "$work/masb-after-$cell-1") |"
done
echo
echo "Raw speeds (runs in order): before 1x ${speed[before|1]}; after 1x ${speed[after|1]}; before 8x ${speed[before|8]}; after 8x ${speed[after|8]}"
[ "$hours_day" = 0 ] && exit 0
echo
echo "## Every policy on the 12.5k cell over $hours_day h (one run each, 2 threads)"
echo
echo '```'
"$after" report "${runs_day[@]}"
echo '```'
