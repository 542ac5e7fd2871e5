#!/usr/bin/env bash
# Seed 004's distributed framework on a GCD cell (issue 60 item 3): NBS on one cluster (the
# whole cell) against the cell split into 4, 16 and 64 micro-clusters, each new job sent to the
# cluster with the lowest congestion price, quoted with the job (the seed's steps: a solve per
# cluster per new job) or as published (one solve per new job), or, price-blind, to a drawn
# one; every run as `scripts/nbs-gcd.sh` runs NBS (its settings and environment), two at a time
# on one thread each, then all side by side in one `cellsim report` (deadlines met by type,
# latency, utilisation, pending tasks, solves and solver time) and the clusters/ tables
# summarised by scripts/nbs-clusters-summary.py (load and price spread across clusters, quotes).
#
# With SEEDS of more than one seed, each run is repeated per seed (the run's `--seed`, its
# ties and draws, and the [deadlines] model's, which jobs get which deadline), named -sSEED,
# and the summary counts per seed where choosing by price beats the draw.
#
# Usage: scripts/nbs-clusters.sh PARQUET_DIR OUT_DIR [HOURS (8)]
# Environment: COUNTS (4 16 64), VARIANTS (with-job published random), SEEDS (1),
# PARALLEL (2), and nbs-gcd.sh's (THREADS defaults to 1 here).
set -euo pipefail
cd "$(dirname "$0")/.."
trace=${1:?usage: scripts/nbs-clusters.sh PARQUET_DIR OUT_DIR [HOURS]}
out=${2:?usage: scripts/nbs-clusters.sh PARQUET_DIR OUT_DIR [HOURS]}
hours=${3:-8}
if [ -z "${BIN:-}" ]; then
  cargo build --release --quiet
fi
export BIN=${BIN:-$PWD/target/release/cellsim} THREADS=${THREADS:-1}
mkdir -p "$out"
# name and nbs's extra [policy] lines, one run each
runs=("k1|clusters = 1")
for k in ${COUNTS:-4 16 64}; do
  for v in ${VARIANTS:-with-job published random}; do
    case $v in
      random) lines=$(printf 'clusters = %s\ncluster_choice = "random"' "$k") ;;
      *) lines=$(printf 'clusters = %s\ncluster_quote = "%s"' "$k" "$v") ;;
    esac
    runs+=("k$k-$v|$lines")
  done
done
seeds=(${SEEDS:-1})
dirs=()
for seed in "${seeds[@]}"; do
  for r in "${runs[@]}"; do
    name=${r%%|*}
    if [ "${#seeds[@]}" -gt 1 ]; then name=$name-s$seed; fi
    while [ "$(jobs -rp | wc -l)" -ge "${PARALLEL:-2}" ]; do wait -n; done
    POLICIES=nbs NBS_EXTRA=${r#*|} RUN_ARGS="--seed $seed" DEADLINE_SEED=$seed \
      scripts/nbs-gcd.sh "$trace" "$out/$name" "$hours" > "$out/$name.report" &
    dirs+=("$out/$name/nbs")
  done
done
wait
"$BIN" report --timing "${dirs[@]}"
python3 scripts/nbs-clusters-summary.py "${dirs[@]}"
