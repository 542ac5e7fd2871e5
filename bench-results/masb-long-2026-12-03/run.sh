#!/usr/bin/env bash
# Issue 57, what the real 8.5 h cannot show: where MASB's shares go after the first hours. A
# generated 12.5k cell (the generator set on the real 8.5 h, generator-2026-11-27.md; its own
# task_usage) over 72 simulated hours: Borg's replay, MASB by default, MASB with booked asks
# (`book_asks`, not in seed 000) and MASB's configuration of record on the real trace
# (slurm/masb-real-trace.toml: held to the trace's start times, booked asks, usage windows),
# seeds 1-3 of each; then blocks.py's shares by 6-hour block beside Table 4.
# Usage: run.sh CELLSIM OUT_DIR
set -euo pipefail
here=$(dirname "$(realpath "$0")")
. "$here/../../scripts/lib.sh"
cellsim=$(realpath "$1") out=$2
mkdir -p "$out"
[ -d "$out/gen" ] || {
  "$cellsim" gen "$out/gen-csv" --machines 12583 --hours 72.5 --seed 1 >/dev/null 2>&1
  "$cellsim" ingest "$out/gen-csv" "$out/gen" --threads 2 >/dev/null 2>&1
}
export hours=72
masb=$'[policy]\nkind = "masb"'
for seed in 1 2 3; do
  bench_run_once "borg-seed$seed" "$out/gen" $'[policy]\nkind = "borg-replay"' "$seed"
  bench_run_once "masb-seed$seed" "$out/gen" "$masb" "$seed"
  bench_run_once "booked-seed$seed" "$out/gen" "$masb"$'\nbook_asks = true' "$seed"
  bench_run_once "record-seed$seed" "$out/gen" "$(cat "$here/../../slurm/masb-real-trace.toml")" "$seed"
done
(cd "$out" && "$cellsim" report borg-seed1 masb-seed1 booked-seed1 record-seed1)
python3 "$here/blocks.py" "$out" 1 3 6 borg:borg masb:masb booked:masb record:masb
