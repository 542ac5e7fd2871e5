#!/usr/bin/env bash
# Seed 003 at Google scale (issue 35 item 7): PSO, ACO, GA and Best Effort as initial-placement
# policies on a GCD cell (tasks as VMs, machines as hosts, the cell split into datacenters of 20
# machines, a broker per job, LLTF), beside first-fit and MASB's SIAS placement, then all side by
# side in one `cellsim report`: seed 000's Table 4 classes, pending tasks, queue times, messages,
# speed and peak RSS. Every policy at the engine's 60 s ticks.
#
# Usage: scripts/federation-gcd.sh PARQUET_DIR OUT_DIR [HOURS (2)] [MULTIPLY (1)]
# Environment: THREADS (2), SCHEDULERS (pso aco best-effort ga), BROKER (lltf),
# BASELINES (first-fit masb), BIN (a cellsim binary to use instead of building one).
set -euo pipefail
cd "$(dirname "$0")/.."
trace=${1:?usage: scripts/federation-gcd.sh PARQUET_DIR OUT_DIR [HOURS] [MULTIPLY]}
out=${2:?usage: scripts/federation-gcd.sh PARQUET_DIR OUT_DIR [HOURS] [MULTIPLY]}
hours=${3:-2}
multiply=${4:-1}
threads=${THREADS:-2}
schedulers=${SCHEDULERS:-pso aco best-effort ga}
broker=${BROKER:-lltf}
baselines=${BASELINES:-first-fit masb}
if [ -z "${BIN:-}" ]; then
  cargo build --release --quiet
fi
bin=${BIN:-$PWD/target/release/cellsim}
mkdir -p "$out"
runs=()
run() { # NAME ARGS...
  local d="$out/$1"
  shift
  rm -rf "$d"
  echo "$(basename "$d"): ${hours} h at ${multiply}x" >&2
  "$bin" run --trace "$trace" "$@" --hours "$hours" --multiply "$multiply" \
    --threads "$threads" --snapshot-every-wall-minutes 0 --out "$d" > /dev/null 2> "$d.log"
  runs+=("$d")
}
for s in $schedulers; do
  printf '[policy]\nkind = "federation"\nbroker = "%s"\nscheduler = "%s"\n' "$broker" "$s" \
    > "$out/federation-$s.toml"
  run "federation-$s" --config "$out/federation-$s.toml"
done
for p in $baselines; do
  run "$p" --policy "$p"
done
"$bin" report "${runs[@]}"
