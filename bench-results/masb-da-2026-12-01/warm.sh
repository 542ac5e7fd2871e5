#!/usr/bin/env bash
# Issue 57 item 3, the runs of sections (a4) and (a5) of masb-da-2026-12-01.md that were once
# made by hand: MASB started from the machines the trace recorded (`warm_start`, not in the
# paper) as run.sh runs it otherwise, seeds 1-3, and seed 1 with offloads of stable DA nodes
# every 300 s; and seed 1's offload runs of run.sh again (default goal and `better-score`) for
# what their sampled SCS lines (`samples.jsonl`, kind "scs", "offload": true) say of the nodes
# that offload. 8 simulated hours of ../shared/gcd-8h, 2 threads, about 15 minutes on the
# 2-core machine. `warm.py` makes the table (`warm.txt`).
# Usage: warm.sh CELLSIM GCD_8H OUT_DIR
set -euo pipefail
here=$(dirname "$(realpath "$0")")
. "$here/setup.sh" "$@"
warm=$'\nwarm_start = true'
offload300=$'\noffload_every_s = 300'
for seed in 1 2 3; do
  bench_run "masb-warm-seed$seed" "$out/real" "$held$warm"$'\n[usage.window]' "$seed"
done
bench_run "masb-warm-offload-seed1" "$out/real" "$held$warm$offload300"$'\n[usage.window]' 1
bench_run "masb-offload-seed1" "$out/real" "$held$offload300"$'\n[usage.window]' 1
bench_run "masb-offload-score-seed1" "$out/real" \
  "$held$offload300"$'\noffload_goal = "better-score"\n[usage.window]' 1
python3 "$here/warm.py" "$out"
