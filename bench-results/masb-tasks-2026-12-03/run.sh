#!/usr/bin/env bash
# Issue 57 item 3: how much work MASB runs on the real 8.5 h, against seed 000's Tables 5-8
# "Tasks Count" (132,061 a minute at the original workload: "the entire GCD workload") and
# Borg's replay of the same hours. MASB by default and with the record's options one at a time
# (r = release "trace-schedule", b = book_asks, w = [usage.window]; rbw is the record), Borg's
# replay with and without windows, seeds 1-3; then tasks.py: the tasks running hour by hour,
# each MASB run's less Borg's, and the work it ran that Borg's replay left waiting.
# Usage: run.sh CELLSIM GCD_8H OUT_DIR
set -euo pipefail
here=$(dirname "$(realpath "$0")")
. "$here/../../scripts/lib.sh"
real_trace_bench "$@"
for seed in 1 2 3; do
  for combo in none r b rb rbw; do
    config=""
    [[ $combo == *r* ]] && config=$'release = "trace-schedule"\n'
    config+=$'[policy]\nkind = "masb"'
    [[ $combo == *b* ]] && config+=$'\nbook_asks = true'
    [[ $combo == *w* ]] && config+=$'\n[usage.window]'
    bench_run_once "masb-$combo-seed$seed" "$out/real" "$config" "$seed"
  done
  bench_run_once "borg-window-seed$seed" "$out/real" $'[policy]\nkind = "borg-replay"\n[usage.window]' "$seed"
  bench_run_once "borg-still-seed$seed" "$out/real" $'[policy]\nkind = "borg-replay"' "$seed"
done
# rbw is the shipped configuration of record (slurm/masb-real-trace.toml).
(cd "$out" && "$cellsim" report masb-none-seed1 masb-rbw-seed1 --paper)
(cd "$out" && "$cellsim" report borg-still-seed1 borg-window-seed1 masb-none-seed1 masb-r-seed1 \
  masb-b-seed1 masb-rb-seed1 masb-rbw-seed1)
python3 "$here/tasks.py" "$out" 1 3 borg-window borg-still masb-none masb-r masb-b masb-rb masb-rbw
