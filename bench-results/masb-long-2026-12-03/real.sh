#!/usr/bin/env bash
# Issue 57: what makes MASB's DA rise in the real 8.5 h's last hours (default-split-2026-12-03
# section (6)). MASB's configuration of record (slurm/masb-real-trace.toml: held to the trace's
# start times, booked asks, usage windows) against the same without windows, Borg's replay with
# and without windows, seeds 1-20, the usage model's default split; then blocks.py's shares hour
# by hour and each MASB run's DA less Borg's under the same usage; then targets.py: the classes
# before and after, of the nodes that received migrated tasks and of the rest; the same for SRAS
# read in seed 000's other units (seed 1); and the record's options one by one (seed 1).
# Usage: real.sh CELLSIM GCD_8H OUT_DIR
set -euo pipefail
here=$(dirname "$(realpath "$0")")
. "$here/../../scripts/lib.sh"
real_trace_bench "$@"
record=$(cat "$here/../../slurm/masb-real-trace.toml")
borg=$'[policy]\nkind = "borg-replay"'
for seed in $(seq 1 20); do
  bench_run_once "record-seed$seed" "$out/real" "$record" "$seed"
  bench_run_once "still-seed$seed" "$out/real" "${record/\[usage.window\]/}" "$seed"
  bench_run_once "borg-window-seed$seed" "$out/real" "$borg"$'\n[usage.window]' "$seed"
  bench_run_once "borg-still-seed$seed" "$out/real" "$borg" "$seed"
done
# SRAS in seed 000's two other readings of r (the record reads trace units, as its logs pin
# them): does the units' order of TA, PA and DA decide where migrations land? Seed 1.
for units in absolute fraction; do
  bench_run_once "sras-$units-seed1" "$out/real" "$record"$'\n[policy.sras]\nunits = "'"$units"'"' 1
done
# The record's three options seed 000 does not describe, each combination (seed 1): r = release
# "trace-schedule", b = book_asks, w = [usage.window]; "none" is MASB by default, rb "still",
# rbw the record.
for combo in none r b w rw rb bw; do
  config=""
  [[ $combo == *r* ]] && config=$'release = "trace-schedule"\n'
  config+=$'[policy]\nkind = "masb"'
  [[ $combo == *b* ]] && config+=$'\nbook_asks = true'
  [[ $combo == *w* ]] && config+=$'\n[usage.window]'
  bench_run_once "options-$combo-seed1" "$out/real" "$config" 1
done
(cd "$out" && "$cellsim" report options-none-seed1 options-r-seed1 options-b-seed1 \
  options-w-seed1 options-rw-seed1 options-rb-seed1 options-bw-seed1 record-seed1)
(cd "$out" && "$cellsim" report record-seed1 still-seed1 borg-window-seed1 borg-still-seed1)
python3 "$here/blocks.py" "$out" 1 20 1 borg-window:borg record:masb
python3 "$here/blocks.py" "$out" 1 20 1 borg-still:borg still:masb
python3 "$here/pa_da.py" "$out" 1 20 record:borg-window still:borg-still
python3 "$here/targets.py" "$out" 1 3 record
python3 "$here/blocks.py" "$out" 1 1 1 sras-absolute:masb sras-fraction:masb
for units in absolute fraction; do python3 "$here/targets.py" "$out" 1 1 "sras-$units"; done
