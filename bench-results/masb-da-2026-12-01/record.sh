#!/usr/bin/env bash
# Issue 57 item 3, section (a8) of masb-da-2026-12-01.md: the configuration of record without
# `accept_max_use`, an addition seed 000 does not describe (its node agent accepts a task unless
# "the projected resources ... overflow the node", section 4.1; section (a3) found booked asks
# keep the burst apart without it), and the offload's period calibrated again as section (a7)
# calibrates it (fixed before it was run): each of seeds 1-20 at 3000, 3300, 3600, 3900 and
# 4200 s, the least-squares line of each run's MB per migration on its period crossing seed
# 000's cost per task migration (Table 7, SIAS / SRAS: 338.09 MB) in whole minutes, then seeds
# 1-20 there with Borg's replay under the same usage and seed (Table 4's orderings), and the
# record as it ships (no offloads) seeds 1-20. No share takes part. Runs in OUT_DIR/record
# (160 runs of ~7 s); 8 simulated hours of
# ../shared/gcd-8h, 2 threads. `regress.py` makes the table (`record.txt`).
# Usage: record.sh CELLSIM GCD_8H OUT_DIR
set -euo pipefail
here=$(dirname "$(realpath "$0")")
. "$here/setup.sh" "$@"
mkdir -p "$out/record"
for seed in $(seq 1 20); do
  [ -f "$out/record/masb-seed$seed/summary.json" ] ||
    out=$out/record bench_run "masb-seed$seed" "$real" "$record"$'\n[usage.window]' "$seed"
done
twenty_seeds "$record" "$out/record"
