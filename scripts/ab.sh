#!/usr/bin/env bash
# Compares two cellsim builds on one window of a run, the way the optimisation steps in
# bench-results/ were measured: each build in turn resumes a copy of the run from its latest
# snapshot (RUNS rounds, the builds interleaved, so that the machine's drift hits both alike),
# and the median milliseconds per tick over the window (ticks from FROM_TICK on; whole and by
# phase) and the mean tick (which counts the slower ticks a median leaves out, such as the one in
# five where the trace's usage rows arrive) are printed per run, then the medians of those per
# build and their ratio B / A. Both builds must write the same snapshot format (a build refuses
# another format's snapshots).
#
# Usage: scripts/ab.sh RUN_DIR FROM_TICK BIN_A BIN_B > ab.md
#   RUN_DIR    a run whose snapshots/ hold the snapshot to resume from (the latest is used), e.g.
#              `cellsim run --trace T --policy masb --hours 5 --snapshot-every-sim-minutes 240
#              --out RUN_DIR` for ticks 240-299 of the 12.5k cell;
#   FROM_TICK  the first tick after that snapshot (240 there);
#   BIN_A/B    the two `cellsim` binaries (e.g. copies of target/release/cellsim built at two
#              commits); BIN_B reads both runs' timing (`cellsim report --timing`).
# Environment: RUNS (3), THREADS (2), WORK (a temporary directory), PAIRED (0). With PAIRED=1
# the two builds of a round run at the same time, one thread each, each pinned to its own core
# (`taskset`; the cores swapped every round): on a VM whose speed drifts by +-10 % within
# minutes both then see the same machine; the rounds' ratios are averaged (use an even RUNS).
set -euo pipefail
if [ $# -ne 4 ]; then
  sed -n '11,21p' "$0" >&2
  exit 2
fi
run=$1 from=$2 bin_a=$3 bin_b=$4
runs=${RUNS:-3}
threads=${THREADS:-2}
paired=${PAIRED:-0}
[ "$paired" = 1 ] && threads=1
[ -d "$run/snapshots" ] || { echo "$run: no snapshots/ to resume from" >&2; exit 2; }
for b in "$bin_a" "$bin_b"; do
  [ -x "$b" ] || { echo "$b: not an executable" >&2; exit 2; }
done
work=${WORK:-$(mktemp -d -t cellsim-ab.XXXXXX)}
mkdir -p "$work"
rows=("ms per tick (median)" "  trace apply" "  policy" "ms per tick (mean)")
. "$(dirname "$0")/lib.sh"
declare -A res
cat <<HEAD
# A/B: two builds on one window

- date: $(date -u +%Y-%m-%dT%H:%MZ)
- machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores
- run: \`$run\`, resumed from its latest snapshot; window: ticks from $from on; $threads thread(s)
- A: \`$bin_a\`; B: \`$bin_b\`; $runs rounds, $([ "$paired" = 1 ] && echo "A and B at once on separate cores" || echo "A then B") in each

| round | build | ms/tick | apply | policy | mean ms/tick |
|---|---|---|---|---|---|
HEAD
# Resumes a copy of the run as round $1's side $2, on core $3 when given.
resume() {
  local bin=$bin_a d="$work/ab-$2-$1"
  [ "$2" = B ] && bin=$bin_b
  rm -rf "$d"
  cp -r "$run" "$d"
  rm -f "$d/summary.json" # a finished run is resumed again from its latest snapshot
  if [ -n "${3:-}" ]; then
    taskset -c "$3" "$bin" resume "$d" --threads 1 > /dev/null 2>&1
  else
    "$bin" resume "$d" --threads "$threads" > /dev/null 2>&1
  fi
}
for i in $(seq "$runs"); do
  if [ "$paired" = 1 ]; then
    resume "$i" A $((i % 2)) &
    resume "$i" B $((1 - i % 2)) &
    wait
  fi
  for side in A B; do
    d="$work/ab-$side-$i"
    [ "$paired" = 1 ] || resume "$i" "$side"
    report=$("$bin_b" report "$d" --timing --from-tick "$from")
    line="| $i | $side"
    for row in "${rows[@]}"; do
      v=$(report_value "$report" "$row")
      res["$side|$row"]+="$v "
      line+=" | $v"
    done
    echo "$line |"
    rm -rf "$d"
  done
done
echo
echo "| median | ms/tick | apply | policy | mean ms/tick |"
echo "|---|---|---|---|---|"
for side in A B; do
  line="| $side"
  for row in "${rows[@]}"; do line+=" | $(echo "${res["$side|$row"]}" | median)"; done
  echo "$line |"
done
line="| B / A"
for row in "${rows[@]}"; do
  a=$(echo "${res["A|$row"]}" | median) b=$(echo "${res["B|$row"]}" | median)
  line+=" | $(printf '%.3f' "$(echo "$b / $a" | bc -l)")"
done
echo "$line |"
if [ "$paired" = 1 ]; then
  # The geometric mean of the rounds' own ratios (each pair ran at the same time; over an even
  # number of rounds each build ran as often on either core, so a slower core cancels out).
  line="| rounds' B / A (geometric mean)"
  for row in "${rows[@]}"; do
    a=(${res["A|$row"]}) b=(${res["B|$row"]}) logs=0
    for k in "${!a[@]}"; do logs="$logs + l(${b[$k]} / ${a[$k]})"; done
    line+=" | $(printf '%.3f' "$(echo "e(($logs) / ${#a[@]})" | bc -l)")"
  done
  echo "$line |"
fi
