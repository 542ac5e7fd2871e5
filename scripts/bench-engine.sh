#!/usr/bin/env bash
# Engine speed: simulated time / wall time of `cellsim run` on an ingested trace, with 1 and 2
# threads (parallel efficiency), peak RSS, medians of several runs.
# Usage: scripts/bench-engine.sh PARQUET_DIR [RUNS] [POLICY] > bench-results/engine-POLICY-DATE.md
#   PARQUET_DIR: e.g. `cellsim gen T --machines 12583 --hours 24 && cellsim ingest T PARQUET_DIR`.
set -euo pipefail
trace=${1:?usage: scripts/bench-engine.sh PARQUET_DIR [RUNS] [POLICY]}
runs=${2:-3}
policy=${3:-borg-replay}
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=$PWD/target/release/cellsim
out=$(mktemp -d -t cellsim-bench.XXXXXX)
trap 'rm -rf "$out"' EXIT
field() { python3 -c "import json,sys; s=json.load(open('$1')); print($2)"; }
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
declare -A wall speed rss
for i in $(seq "$runs"); do
  for t in 1 2; do
    d="$out/run-$t-$i"
    "$bin" run --trace "$trace" --policy "$policy" --threads "$t" --out "$d" > /dev/null 2>&1
    wall[$t]+="$(field "$d/summary.json" "s['wall_s']") "
    speed[$t]+="$(field "$d/summary.json" "round(s['speed_x_real_time'])") "
    rss[$t]+="$(field "$d/summary.json" "round(s['peak_rss_mb'])") "
    last="$d/summary.json"
  done
done
w1=$(echo "${wall[1]}" | median); w2=$(echo "${wall[2]}" | median)
cat <<REPORT
# Engine: $policy

- date: $(date -u +%Y-%m-%dT%H:%MZ)
- commit: $(git rev-parse --short HEAD)$(git diff --quiet || echo " (+ uncommitted changes)")
- machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB
- trace: \`$trace\`: $(field "$last" "f\"{s['averages']['nodes_online']:.0f} nodes online, {s['averages']['tasks_running']:.0f} tasks running on average, {s['simulated_s']/3600:.1f} simulated hours ({s['ticks']} ticks)\"")
- command: \`cellsim run --trace TRACE --policy $policy --threads T --out DIR\`, $runs runs per thread count, interleaved; medians

| threads | wall s (runs) | median wall s | x real time (median) | peak RSS MB (median) |
|---|---|---|---|---|
| 1 | ${wall[1]}| $(printf '%.2f' $w1) | $(echo "${speed[1]}" | median) | $(echo "${rss[1]}" | median) |
| 2 | ${wall[2]}| $(printf '%.2f' $w2) | $(echo "${speed[2]}" | median) | $(echo "${rss[2]}" | median) |

Parallel efficiency 1 -> 2 threads: $(printf '%.2f' $(echo "$w1 / $w2 / 2" | bc -l)) (speed-up $(printf '%.2f' $(echo "$w1 / $w2" | bc -l))x).
REPORT
