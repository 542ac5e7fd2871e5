#!/usr/bin/env bash
# Snapshot size, write time and resume (restore) time of MASB runs on the 12.5k-machine cell at
# 1x and multiplied by 8 (SPEC 10: each <= 5 s at 8x). Each run snapshots every N simulated
# minutes; writes are timed by the engine (timing/ snapshot_ms), the restore by `cellsim
# resume` ("state restored from the snapshot in X ms": reading, checking and rebuilding the
# state and reopening the trace at its positions).
# Usage: scripts/bench-snapshot.sh PARQUET_DIR > bench-results/snapshot-DATE.md
# Environment: HOURS_1X (2), HOURS_8X (0.5), EVERY (10 simulated minutes), RESUMES (3).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
trace=${1:?usage: scripts/bench-snapshot.sh PARQUET_DIR}
hours_1x=${HOURS_1X:-2}
hours_8x=${HOURS_8X:-0.5}
every=${EVERY:-10}
resumes=${RESUMES:-3}
cargo build --release --quiet
bin=$PWD/target/release/cellsim
work=$(mktemp -d -t cellsim-snap.XXXXXX)
trap 'rm -rf "$work"' EXIT
cat <<HEAD
# Snapshot and resume: MASB at 1x and 8x

- date: $(date -u +%Y-%m-%dT%H:%MZ)
- commit: $(git rev-parse --short HEAD)$(git diff --quiet || echo " (+ uncommitted changes)")
- machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB
- trace: \`$trace\`; 8x = \`--multiply 8\`
- command: \`cellsim run --trace TRACE --policy masb --multiply K --hours H --snapshot-every-sim-minutes $every --out D\`
  (H = $hours_1x at 1x, $hours_8x at 8x), then $resumes times: remove summary.json, keep only the newest snapshot,
  \`cellsim resume D\`

| cell | nodes online | tasks running | snapshot MB | snapshots | write ms (median) | restore ms (median of $resumes) |
|---|---|---|---|---|---|---|
HEAD
for cell in 1 8; do
  hours=$hours_1x; [ "$cell" != 1 ] && hours=$hours_8x
  d=$work/run-$cell
  "$bin" run --trace "$trace" --policy masb --multiply "$cell" --hours "$hours" \
    --snapshot-every-sim-minutes "$every" --snapshot-every-wall-minutes 0 --out "$d" > /dev/null 2>&1
  report=$("$bin" report "$d" --timing)
  get() { report_value "$report" "$1"; }
  newest=$(ls "$d/snapshots"/*.snap | sort | tail -1)
  size=$(stat -c %s "$newest")
  restores=""
  for i in $(seq "$resumes"); do
    r=$work/resume-$cell-$i
    cp -r "$d" "$r"
    rm -f "$r/summary.json"
    mv "$r/samples.jsonl" "$r/samples.jsonl.partial"
    ls "$r/snapshots"/*.snap | sort | head -n -1 | xargs -r rm
    ms=$("$bin" resume "$r" 2>&1 >/dev/null | sed -n 's/^state restored from the snapshot in \([0-9]*\) ms$/\1/p')
    restores+="$ms "
    rm -rf "$r"
  done
  echo "| ${cell}x | $(get "nodes online") | $(get "tasks running") | $(echo "$size / 1048576" | bc -l | xargs printf '%.1f') | $(get "snapshots written") | $(get "snapshot write (ms)") | $(echo "$restores" | median) (runs: $restores) |"
done
