#!/usr/bin/env bash
# What the MASB offload option (`offload_every_s`, not in seed 000) costs in wall-clock time on
# the real trace's 8 h: MASB held, booked, under the usage windows (the masb-da bench's
# configuration of record), without offloads, with them every 300 s (default goal) and with the
# heaviest variant measured there (better-score, SRAS as fractions: ~1,600 migrations a
# minute). Seed 1, 2 threads, interleaved, medians of N rounds (3).
# Usage: run.sh CELLSIM GCD_8H OUT_DIR [ROUNDS]
set -euo pipefail
here=$(dirname "$(realpath "$0")")
. "$here/../../scripts/lib.sh"
cellsim=$(realpath "$1") trace=$2 out=$3 rounds=${4:-3}
mkdir -p "$out"
[ -d "$out/real" ] || "$cellsim" ingest "$trace" "$out/real" --threads 2 >/dev/null 2>&1
held=$'release = "trace-schedule"\n[policy]\nkind = "masb"\naccept_max_use = true\nbook_asks = true'
declare -A extra=(
  [overload-only]=""
  [offload]=$'offload_every_s = 300'
  [offload-score-frac]=$'offload_every_s = 300\noffload_goal = "better-score"\n[policy.sras]\nunits = "fraction"'
)
names=(overload-only offload offload-score-frac)
declare -A times
for r in $(seq "$rounds"); do
  for name in "${names[@]}"; do
    start=$(date +%s.%N)
    bench_run "$name" "$out/real" "$held"$'\n'"${extra[$name]}"$'\n[usage.window]' 1
    end=$(date +%s.%N)
    times[$name]+="$(echo "$end - $start" | bc) "
  done
done
base=$(echo "${times[overload-only]}" | median)
for name in "${names[@]}"; do
  m=$(echo "${times[$name]}" | median)
  migr=$(python3 -c "import json; s=json.load(open('$out/$name/summary.json')); print(round(s['totals']['migrations_completed']/(s['simulated_s']/60), 1))")
  printf '%-20s median %6.2f s (runs: %s) ratio %.2f  migrations/min %s\n' "$name" "$m" "${times[$name]}" "$(echo "$m / $base" | bc -l)" "$migr"
done
