#!/usr/bin/env bash
# The engine benchmark of SPEC 10 / issue 6: x-real-time speed of borg-replay and masb on the
# 12.5k-machine cell (1x) and on it multiplied by 8 (100k machines, --multiply 8), with 1 and 2
# threads (parallel efficiency), peak RSS, and the median wall milliseconds per tick by phase
# (trace apply, policy, metrics, output; from each run's timing/). Medians of RUNS runs,
# interleaved. Builds release; generates and ingests the 12.5k trace when none is given.
# Issue 62 item 2: a second table splits each phase's mean ms per tick into what ran on one
# thread and what ran in data-parallel sweeps (`report --timing`), with the one-thread share,
# the measured 1 -> 2 thread speed-up and, from the share measured at 1 thread, the speed-ups
# Amdahl's law allows at 8, 16, 32 and 64 threads. The share is given twice: over every tick
# after the first, and over the ticks after the first hour (`report --timing --from-tick`), the
# steady state a long run spends its time in (a policy that places the whole initial cell in
# parallel sweeps in its first hour reads low over a short run); projections use both.
#
# A policy may be given with a run config, POLICY@CONFIG.toml (e.g.
# sparrow@scripts/bench/sparrow-100ms.toml: Sparrow at 100 ms ticks; nbs@scripts/bench/nbs-gcd.toml:
# NBS with scripts/nbs-gcd.sh's settings); its rows are labelled with the config's name.
# A cell K other than 1 is `--multiply K` (the scaling curve: CELLS="1 2 4 8").
#
# Usage: scripts/bench.sh [PARQUET_DIR] > bench-results/bench-DATE.md
# Environment: RUNS (3), HOURS_1X (6), HOURS_8X (1, for every cell but 1x), POLICIES
#              ("borg-replay masb"), CELLS ("1 8"), THREADS ("1 2"), WORK (a temporary
#              directory).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-3}
hours_1x=${HOURS_1X:-6}
hours_8x=${HOURS_8X:-1}
policies=${POLICIES:-borg-replay masb}
cells=${CELLS:-1 8}
threads_list=${THREADS:-1 2}
cargo build --release --quiet
bin=$PWD/target/release/cellsim
work=${WORK:-$(mktemp -d -t cellsim-bench.XXXXXX)}
mkdir -p "$work"
trace=${1:-}
trace_kind="as given"
if [ -z "$trace" ]; then
  trace_kind="the generated 12.5k-machine cell"
  trace=$work/parquet
  if [ ! -f "$trace/ingest-summary.json" ]; then
    echo "generating the 12.5k-machine trace in $work" >&2
    "$bin" gen "$work/csv" --machines 12583 --hours "$(( ${hours_1x%.*} + 1 ))" --seed 1 >&2
    "$bin" ingest "$work/csv" "$trace" >&2
    rm -rf "$work/csv"
  fi
fi
. scripts/lib.sh # (the working directory is the repository root)
declare -A res
rows=("speed (x real time)" "peak RSS (MB)" "first tick (ms)" "ms per tick (median)" "  trace apply" "  policy" "  metrics" "  output" "ms per tick (mean)")
# The split rows: "one thread/parallel" pairs, kept as two values each.
split_rows=("ms 1 thread/parallel" "  trace apply (1/par)" "  policy (1/par)" "  metrics (1/par)" "  output (1/par)")
for i in $(seq "$runs"); do
  for policy in $policies; do
    for cell in $cells; do
      for t in $threads_list; do
        hours=$hours_1x; [ "$cell" != 1 ] && hours=$hours_8x
        kind=${policy%%@*}
        config=()
        [ "$kind" != "$policy" ] && config=(--config "${policy#*@}")
        d="$work/run-${policy//[\/@.]/_}-$cell-$t-$i"
        rm -rf "$d"
        echo "run $i: $policy ${cell}x, $t thread(s), $hours h" >&2
        "$bin" run "${config[@]}" --trace "$trace" --policy "$kind" --multiply "$cell" --hours "$hours" \
          --threads "$t" --snapshot-every-wall-minutes 0 --out "$d" > /dev/null 2>&1
        report=$("$bin" report "$d" --timing)
        for row in "${rows[@]}"; do
          v=$(report_value "$report" "$row")
          res["$policy|$cell|$t|$row"]+="$v "
        done
        res["$policy|$cell|$t|share"]+="$(report_value "$report" "one-thread share (%)") "
        # The ticks after the first hour (none in a run of an hour or less: "-").
        hour_tick=$(python3 -c "import json; s = json.load(open('$d/summary.json')); print(round(s['ticks'] * 3600 / s['simulated_s']))")
        steady=$("$bin" report "$d" --timing --from-tick "$hour_tick" 2> /dev/null || true)
        v=$(report_value "$steady" "one-thread share (%)")
        res["$policy|$cell|$t|steady"]+="${v:--} "
        for row in "${split_rows[@]}"; do
          v=$(report_value "$report" "$row")
          res["$policy|$cell|$t|$row|1"]+="${v%/*} "
          res["$policy|$cell|$t|$row|par"]+="${v#*/} "
        done
        echo "  speed $(report_value "$report" "speed (x real time)")x, peak RSS $(report_value "$report" "peak RSS (MB)") MB" >&2
        rm -rf "$d"
      done
    done
  done
done
cat <<HEAD
# Engine benchmark: $policies at $(echo $cells | sed 's/ /x, /g')x

- date: $(date -u +%Y-%m-%dT%H:%MZ)
- commit: $(git rev-parse --short HEAD)$(git diff --quiet || echo " (+ uncommitted changes)")
- machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB
- trace: \`$trace\` ($trace_kind); 8x = \`--multiply 8\`
- command: \`cellsim run [--config C] --trace TRACE --policy P --multiply K --hours H --threads T --snapshot-every-wall-minutes 0 --out D\`
  then \`cellsim report D --timing\`; H = $hours_1x at 1x, $hours_8x at 8x; $runs runs per line, interleaved; medians
- phases: median wall ms per tick after the first (which places the whole initial cell); mean
  ms/tick: the mean over the same ticks (it counts the one tick in five where the trace's usage
  rows arrive, which the median leaves out)

| policy | cell | threads | x real time | peak RSS MB | first tick ms | ms/tick | apply | policy | metrics | output | mean ms/tick |
|---|---|---|---|---|---|---|---|---|---|---|---|
HEAD
for policy in $policies; do
  for cell in $cells; do
    for t in $threads_list; do
      label=$policy
      [[ $policy == *@* ]] && label="${policy%%@*} ($(basename "${policy#*@}" .toml))"
      line="| $label | ${cell}x | $t"
      for row in "${rows[@]}"; do
        line+=" | $(echo "${res["$policy|$cell|$t|$row"]}" | median)"
      done
      echo "$line |"
    done
    s1=$(echo "${res["$policy|$cell|1|speed (x real time)"]:-}" | median)
    s2=$(echo "${res["$policy|$cell|2|speed (x real time)"]:-}" | median)
    if [ "$s1" != "-" ] && [ "$s2" != "-" ]; then
      eff=$(echo "$s2 / $s1 / 2" | bc -l)
      echo "|  | ${cell}x | 1 -> 2 | parallel efficiency $(printf '%.2f' "$eff") (speed-up $(printf '%.2f' "$(echo "$s2 / $s1" | bc -l)")x) |  |  |  |  |  |  |  |  |"
    fi
  done
done
cat <<SPLIT

## One thread and parallel (issue 62 item 2)

Mean ms per tick over the same ticks, as \`one thread / parallel\` (medians of the runs for
each): the parallel part is the wall time of the phase's data-parallel sweeps (agents, nodes,
tasks, groupings; \`engine/src/parallel_time.rs\`), the one-thread part the rest (a two- or
three-way \`rayon::join\` counts as one thread). At 1 thread the one-thread share is Amdahl's serial
fraction s, and the projected speed-up at N threads is 1 / (s + (1 - s) / N). At 2 threads a
sweep run by a thread that stole it from a join is not counted, so the 2-thread shares are upper
bounds.

| policy | cell | threads | one-thread share % | after hour 1 % | tick | apply | policy | metrics | output |
|---|---|---|---|---|---|---|---|---|---|
SPLIT
for policy in $policies; do
  for cell in $cells; do
    for t in $threads_list; do
      line="| ${policy%%@*} | ${cell}x | $t | $(echo "${res["$policy|$cell|$t|share"]}" | median)"
      line+=" | $(echo "${res["$policy|$cell|$t|steady"]}" | median)"
      for row in "${split_rows[@]}"; do
        line+=" | $(echo "${res["$policy|$cell|$t|$row|1"]}" | median) / $(echo "${res["$policy|$cell|$t|$row|par"]}" | median)"
      done
      echo "$line |"
    done
  done
done
echo
echo "| policy | cell | measured 1 -> 2 | share from | Amdahl 8 | 16 | 32 | 64 threads (from the 1-thread share) |"
echo "|---|---|---|---|---|---|---|---|"
for policy in $policies; do
  for cell in $cells; do
    s1=$(echo "${res["$policy|$cell|1|speed (x real time)"]:-}" | median)
    s2=$(echo "${res["$policy|$cell|2|speed (x real time)"]:-}" | median)
    [ "$s1" = "-" ] || [ "$s2" = "-" ] && continue
    for which in share steady; do
      share=$(echo "${res["$policy|$cell|1|$which"]:-}" | median)
      [ "$share" = "-" ] && continue
      label="every tick"; [ "$which" = steady ] && label="after hour 1"
      line="| ${policy%%@*} | ${cell}x | $(printf '%.2f' "$(echo "$s2 / $s1" | bc -l)")x | $label"
      for n in 8 16 32 64; do
        line+=" | $(printf '%.1f' "$(echo "1 / ($share / 100 + (1 - $share / 100) / $n)" | bc -l)")x"
      done
      echo "$line |"
    done
  done
done
echo
echo "Raw values (runs in order): "
for k in "${!res[@]}"; do echo "- $k: ${res[$k]}"; done | sort
