#!/usr/bin/env bash
# Seed 002 at Google scale (issue 34 item 6): Sparrow placing the GCD workload of a cell (jobs'
# tasks probed as batches) beside omniscient, first-fit and MASB, then all of them side by side
# in one `cellsim report`: seed 000's Table 4 classes, pending tasks, queue time per task and per
# job (mean / p50 / p99 ms; the trace's t = 0 tasks count from the window's start: their initial
# placement), speed and peak RSS. The queueing policies run at 100 ms ticks of ROUNDS rounds
# (200; Sparrow plays its messages in exact time whatever the rounds); MASB at its own 60 s
# ticks. With MULTIPLY > 1 omniscient
# is left out (it knows run times by the trace's own job IDs).
#
# Usage: scripts/sparrow-gcd.sh PARQUET_DIR OUT_DIR [HOURS (2)] [MULTIPLY (1)]
# Environment: ROUNDS (200), THREADS (2), POLICIES (sparrow omniscient first-fit masb).
set -euo pipefail
cd "$(dirname "$0")/.."
trace=${1:?usage: scripts/sparrow-gcd.sh PARQUET_DIR OUT_DIR [HOURS] [MULTIPLY]}
out=${2:?usage: scripts/sparrow-gcd.sh PARQUET_DIR OUT_DIR [HOURS] [MULTIPLY]}
hours=${3:-2}
multiply=${4:-1}
rounds=${ROUNDS:-200}
threads=${THREADS:-2}
policies=${POLICIES:-sparrow omniscient first-fit masb}
cargo build --release --quiet
bin=$PWD/target/release/cellsim
mkdir -p "$out"
# Sparrow probes a task again when its probes were all bound to older tasks (`reprobe`, not in
# seed 002): with the trace's tasks of every size, a large task could otherwise wait for a probe
# of its size (engine/src/sparrow/config.rs). The other policies keep their defaults.
cat > "$out/subsecond.toml" <<TOML
tick = "100ms"
rounds_per_tick = $rounds
nodes_every = "10min"
part = "1h"
[policy]
kind = "sparrow"
reprobe = true
TOML
runs=()
for policy in $policies; do
  if [ "$policy" = omniscient ] && [ "$multiply" != 1 ]; then
    continue
  fi
  d="$out/$policy"
  rm -rf "$d"
  config=(--config "$out/subsecond.toml")
  [ "$policy" = masb ] && config=()
  echo "$policy: ${hours} h at ${multiply}x" >&2
  "$bin" run --trace "$trace" "${config[@]}" --policy "$policy" --hours "$hours" \
    --multiply "$multiply" --threads "$threads" --snapshot-every-wall-minutes 0 --out "$d" \
    > /dev/null 2> "$d.log"
  runs+=("$d")
done
"$bin" report "${runs[@]}"
