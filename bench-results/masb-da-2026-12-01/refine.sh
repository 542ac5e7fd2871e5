#!/usr/bin/env bash
# Issue 57 item 3, section (a7) of masb-da-2026-12-01.md: one regula-falsi step of section
# (a6)'s calibration. (a6) set the offload's period by interpolating the grid's mean MB per
# migration (seeds 1-3) to seed 000's cost per task migration (Table 7, SIAS / SRAS: 338.09 MB);
# the runs at that period then cost 335.1 MB on average, not 338.09. This script, fixed before
# it was run: the period where the line through the runs at the calibrated period and at the
# grid period on the other side of 338.09 MB crosses it, in whole minutes (the tick); seeds 1-3
# there (the calibration's seeds: its residual and standard error), and seeds 4-6 there too (per-seed
# counts on six seeds). One step, whatever it gives: no share takes part. Then, the seeds'
# spread in MB per migration being of the size of the step, the calibration again with twenty
# seeds: periods 3000 to 4200 s every 300 s, seeds 1-20, the least-squares line of each run's MB
# per migration on its period, the period where it crosses 338.09 MB (whole minutes), and seeds
# 1-20 there, with Borg's replay under the same usage (as run.sh runs it) for Table 4's
# orderings seed by seed. No share takes part in either calibration. Reads period.sh's runs in OUT_DIR and makes those it
# lacks (about 130 runs, ~20 minutes on the 2-core machine); 8 simulated hours of
# ../shared/gcd-8h, 2 threads. `refine.py` and `regress.py` make the tables (`refine.txt`).
# Usage: refine.sh CELLSIM GCD_8H OUT_DIR
set -euo pipefail
here=$(dirname "$(realpath "$0")")
. "$here/setup.sh" "$@"
offload() { offload_run "$held" "$out" "$1" "$2"; } # PERIOD_S SEED
grid="1800 2400 3000 3600 4200 4800 6000 7200"
for seed in 1 2 3; do for every_s in $grid; do offload "$every_s" "$seed"; done; done
at=$(python3 "$here/period.py" "$out" $grid)
for seed in 1 2 3; do offload "$at" "$seed"; done
step=$(python3 "$here/refine.py" "$out" "$at" $grid)
for seed in 1 2 3 4 5 6; do offload "$step" "$seed"; done
python3 "$here/refine.py" "$out" "$at" $grid --at "$step"
echo
twenty_seeds "$held" "$out"
