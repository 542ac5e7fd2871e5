#!/usr/bin/env bash
# Issue 57 item 4: a generated 12.5k cell with and without the jobs the real cell's scheduler
# holds (ingest::synth::model::HELD_JOBS; made by default, `cellsim gen --no-held-jobs` leaves
# them out), seed 1, 8.5 h: each
# through `cellsim stats --against` the real 8.5 h, then Borg's replay, MASB by default and
# MASB's configuration of record (slurm/masb-real-trace.toml) over 8 simulated hours, seeds 1-3,
# beside the same on the real trace; report --paper of MASB by default on each.
# Usage: run.sh CELLSIM GCD_8H OUT_DIR
set -euo pipefail
here=$(dirname "$(realpath "$0")")
. "$here/../../scripts/lib.sh"
real_trace_bench "$@"
for cell in plain held; do
  [ -d "$out/$cell" ] || {
    flag=""
    [ "$cell" = plain ] && flag=--no-held-jobs
    "$cellsim" gen "$out/$cell-csv" --machines 12583 --hours 8.5 --seed 1 --part-hours 8.5 \
      $flag >/dev/null 2>&1
    "$cellsim" ingest "$out/$cell-csv" "$out/$cell" --threads 2 >/dev/null 2>&1
  }
  echo "## $cell: cellsim stats --against the real 8.5 h"
  "$cellsim" stats "$out/$cell" --against "$out/real" | sed -n '/== generated/,$p'
done
record=$(cat "$here/../../slurm/masb-real-trace.toml")
for seed in 1 2 3; do
  for cell in real plain held; do
    bench_run_once "$cell-borg-seed$seed" "$out/$cell" $'[policy]\nkind = "borg-replay"' "$seed"
    bench_run_once "$cell-masb-seed$seed" "$out/$cell" $'[policy]\nkind = "masb"' "$seed"
    bench_run_once "$cell-record-seed$seed" "$out/$cell" "$record" "$seed"
  done
done
(cd "$out" && "$cellsim" report real-borg-seed1 plain-borg-seed1 held-borg-seed1 \
  real-masb-seed1 plain-masb-seed1 held-masb-seed1 real-record-seed1 plain-record-seed1 \
  held-record-seed1)
(cd "$out" && "$cellsim" report held-masb-seed1 --paper)
python3 "$here/shares.py" "$out" 1 3
# The default cell (held jobs) of seeds 2-4 through the same comparison: the figures outside.
for seed in 2 3 4; do
  [ -d "$out/held-seed$seed" ] || {
    "$cellsim" gen "$out/held-seed$seed-csv" --machines 12583 --hours 8.5 --seed "$seed" \
      --part-hours 8.5 >/dev/null 2>&1
    "$cellsim" ingest "$out/held-seed$seed-csv" "$out/held-seed$seed" --threads 2 >/dev/null 2>&1
  }
  echo "## held, seed $seed: cellsim stats --against the real 8.5 h (outside, and the count)"
  "$cellsim" stats "$out/held-seed$seed" --against "$out/real" | sed -n '/== generated/,$p' |
    grep -E "OUTSIDE|figures within"
done
