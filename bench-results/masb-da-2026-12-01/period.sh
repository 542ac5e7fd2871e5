#!/usr/bin/env bash
# Issue 57 item 3, section (a6) of masb-da-2026-12-01.md: the offload's period
# (`offload_every_s`, not in seed 000) calibrated on one figure, seed 000's cost per task
# migration (Table 7, SIAS / SRAS: 338.09 MB), and every Table 4 MASB share compared at the
# period that figure sets. MASB as run.sh runs it (held, booked asks, `accept_max_use`, usage
# windows) with offloads of stable DA nodes (default goal, not DA) every 1800 .. 7200 s, seeds
# 1-3 (seeds in the outer loop), then every seed at the period where the grid's mean cost per
# migration crosses the paper's; 8 simulated hours of ../shared/gcd-8h, 2 threads, about 7
# minutes on the 2-core machine. `period.py` makes the table (`period.txt`).
# Usage: period.sh CELLSIM GCD_8H OUT_DIR
set -euo pipefail
here=$(dirname "$(realpath "$0")")
. "$here/setup.sh" "$@"
periods="1800 2400 3000 3600 4200 4800 6000 7200"
for seed in 1 2 3; do
  for every_s in $periods; do
    bench_run "masb-offload$every_s-seed$seed" "$out/real" \
      "$held"$'\noffload_every_s = '"$every_s"$'\n[usage.window]' "$seed"
  done
done
# The period the grid's mean MB per migration sets, then every seed at it.
at=$(python3 "$here/period.py" "$out" $periods)
for seed in 1 2 3; do
  bench_run "masb-offload$at-seed$seed" "$out/real" \
    "$held"$'\noffload_every_s = '"$at"$'\n[usage.window]' "$seed"
done
python3 "$here/period.py" "$out" $periods --at "$at"
