#!/usr/bin/env bash
# Issue 57 item 3: what sets MASB's DA share on the real trace? MASB held, under the calibrated
# usage windows, with booked asks (the configuration of record, `usage-rises-2026-11-30.md`)
# and Borg's replay, 8 simulated hours of ../shared/gcd-8h, seeds 1-3 (interleaved), 2 threads:
# (a) the order a broker asks a new task's best nodes in (`initial_order`, a choice seed 000
# leaves open): weighted (default) against score order, and how many of them it asks
# (`initial_asks`, 10 by default) against 1 and 3; (b) the usage model's memory split
# (production 0.85 of its request, other work 0.35) against one share for all work, 0.66, set
# like the split on Table 5's memory used (62.05 %); (a5) stable DA nodes offloading every 300 s
# (`offload_every_s`, not in seed 000) until no longer DA (default goal) or scoring more
# (`offload_goal = "better-score"`), under SRAS as the seed's logs read it (trace units) and
# read as fractions (the fraction reading alone as its control), and (seed 1) the period.
# Usage: run.sh CELLSIM GCD_8H OUT_DIR
set -euo pipefail
here=$(dirname "$(realpath "$0")")
. "$here/setup.sh" "$@"
borg=$'[policy]\nkind = "borg-replay"'
flat=$'[usage]\nmem_ratio = [0.66, 0.66, 0.66]'
offload300='offload_every_s = 300'
score_goal='offload_goal = "better-score"'
fraction=$'[policy.sras]\nunits = "fraction"'
for seed in 1 2 3; do
  bench_run "masb-seed$seed" "$out/real" "$held"$'\n[usage.window]' "$seed"
  bench_run "masb-score-seed$seed" "$out/real" "$held"$'\ninitial_order = "score"\n[usage.window]' "$seed"
  bench_run "masb-asks1-seed$seed" "$out/real" "$held"$'\ninitial_asks = 1\n[usage.window]' "$seed"
  bench_run "masb-asks3-seed$seed" "$out/real" "$held"$'\ninitial_asks = 3\n[usage.window]' "$seed"
  bench_run "masb-flat-seed$seed" "$out/real" "$held"$'\n'"$flat"$'\n[usage.window]' "$seed"
  bench_run "masb-offload-seed$seed" "$out/real" "$held"$'\n'"$offload300"$'\n[usage.window]' "$seed"
  bench_run "masb-offload-score-seed$seed" "$out/real" \
    "$held"$'\n'"$offload300"$'\n'"$score_goal"$'\n[usage.window]' "$seed"
  bench_run "masb-frac-seed$seed" "$out/real" "$held"$'\n'"$fraction"$'\n[usage.window]' "$seed"
  bench_run "masb-offload-frac-seed$seed" "$out/real" \
    "$held"$'\n'"$offload300"$'\n'"$fraction"$'\n[usage.window]' "$seed"
  bench_run "masb-offload-score-frac-seed$seed" "$out/real" \
    "$held"$'\n'"$offload300"$'\n'"$score_goal"$'\n'"$fraction"$'\n[usage.window]' "$seed"
  bench_run "borg-seed$seed" "$out/real" "$borg"$'\n[usage.window]' "$seed"
  bench_run "borg-flat-seed$seed" "$out/real" "$borg"$'\n'"$flat"$'\n[usage.window]' "$seed"
done
# (a5) the offload's period, seed 1 only.
for every_s in 60 900 3600; do
  bench_run "masb-offload$every_s-seed1" "$out/real" "$held"$'\noffload_every_s = '"$every_s"$'\n[usage.window]' 1
done
python3 "$here/shares.py" "$out"
(cd "$out" && "$cellsim" report --paper masb-score-seed1 | sed -n '/against seed 000/,$p')
(cd "$out" && "$cellsim" report --paper masb-flat-seed1 | sed -n '/against seed 000/,$p')
