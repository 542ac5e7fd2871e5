#!/usr/bin/env bash
# Ingest throughput vs plain `gzip -dc` over the same files, in one run, with 1 and 2 threads.
# Usage: scripts/bench-ingest.sh TRACE_DIR [RUNS] > bench-results/ingest-DATE.md
#   TRACE_DIR: a trace (e.g. from `cellsim gen DIR --machines 12583 --hours 24`) of >= 1 GB.
# Prints a Markdown report (machine, commit, commands, every run, medians, ratios) on stdout.
set -euo pipefail
trace=${1:?usage: scripts/bench-ingest.sh TRACE_DIR [RUNS]}
runs=${2:-3}
cd "$(dirname "$0")/.."
. scripts/lib.sh
cargo build --release --quiet
bin=$PWD/target/release/cellsim
out=$(mktemp -d -t cellsim-bench.XXXXXX)
trap 'rm -rf "$out"' EXIT
files=$(find "$trace" -name '*.csv.gz' | sort)
bytes=$(cat $files | wc -c)
rows=0

seconds() { local s e; s=$(date +%s.%N); "$@" >/dev/null 2>&1; e=$(date +%s.%N); echo "$e - $s" | bc -l; }

declare -A times
for i in $(seq "$runs"); do
  times[gzip]+="$(seconds sh -c "cat $(echo $files | tr '\n' ' ') | gzip -dc > /dev/null") "
  for t in 1 2; do
    rm -rf "$out/p"
    times[ingest$t]+="$(seconds "$bin" ingest "$trace" "$out/p" --threads "$t") "
  done
done
rows=$(python3 -c "import json,sys; s=json.load(open('$out/p/ingest-summary.json')); print(sum(t['rows'] for t in s['tables'].values()))")
med() { echo "${times[$1]}" | median; }
g=$(med gzip); i1=$(med ingest1); i2=$(med ingest2)
mb=$(echo "$bytes / 1000000" | bc -l)
cat <<REPORT
# Ingest throughput vs gzip -dc

- date: $(date -u +%Y-%m-%dT%H:%MZ)
- commit: $(git rev-parse --short HEAD)$(git diff --quiet || echo " (+ uncommitted changes)")
- machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB
- trace: \`$trace\`: $(echo $files | wc -w) files, $(printf '%.1f' "$mb") MB compressed, $rows rows
- runs: $runs each, interleaved; figures are medians

| command | runs (s) | median (s) | MB/s compressed | Mrows/s | per core vs gzip -dc |
|---|---|---|---|---|---|
| \`cat FILES \| gzip -dc > /dev/null\` (1 core) | ${times[gzip]}| $(printf '%.2f' $g) | $(printf '%.1f' $(echo "$mb/$g" | bc -l)) | - | 1.00 |
| \`cellsim ingest TRACE OUT --threads 1\` | ${times[ingest1]}| $(printf '%.2f' $i1) | $(printf '%.1f' $(echo "$mb/$i1" | bc -l)) | $(printf '%.2f' $(echo "$rows/$i1/1000000" | bc -l)) | $(printf '%.2f' $(echo "$g/$i1" | bc -l)) |
| \`cellsim ingest TRACE OUT --threads 2\` | ${times[ingest2]}| $(printf '%.2f' $i2) | $(printf '%.1f' $(echo "$mb/$i2" | bc -l)) | $(printf '%.2f' $(echo "$rows/$i2/1000000" | bc -l)) | $(printf '%.2f' $(echo "$g/$i2/2" | bc -l)) |

Parallel speed-up 1 -> 2 threads: $(printf '%.2f' $(echo "$i1/$i2" | bc -l))x.
"Per core vs gzip -dc" is (gzip -dc seconds) / (ingest seconds x threads): 1.00 would mean ingest
converts to Parquet as fast per core as gzip only decompresses. Target: >= 0.70.
REPORT
