#!/usr/bin/env bash
# The real trace's first 8.5 hours (../shared/gcd-8h) through borg-replay, masb and first-fit
# (by requests, the default, and by usage), 8 simulated hours each, then `report` and
# `report --paper` (real-trace-2026-11-27.md). Usage: run.sh CELLSIM GCD_8H OUT_DIR
set -euo pipefail
cellsim=$1 trace=$2 out=$3
mkdir -p "$out"
"$cellsim" ingest "$trace" "$out/parquet" --threads 2 >/dev/null
printf 'fit = "usage"\n' > "$out/fit-usage.toml"
for run in borg-replay masb first-fit first-fit-usage; do
  policy=${run%-usage}
  config=()
  [ "$run" = first-fit-usage ] && config=(--config "$out/fit-usage.toml")
  rm -rf "${out:?}/$run"
  "$cellsim" run --trace "$out/parquet" --policy "$policy" --hours 8 --threads 2 \
    --snapshot-every-wall-minutes 0 "${config[@]}" --out "$out/$run" >/dev/null 2>&1
done
"$cellsim" report "$out/borg-replay" "$out/masb" "$out/first-fit" "$out/first-fit-usage"
for run in borg-replay masb; do "$cellsim" report --paper "$out/$run" | sed -n '/against seed 000/,$p'; done
