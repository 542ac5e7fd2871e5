#!/usr/bin/env bash
# The main job on the embedded default: generate a synthetic 1,000-machine, 24-hour cell in the
# GCD 2011 layout, ingest it to Parquet, and print its shape against the SPEC 3.1 targets.
# Usage: scripts/demo.sh [WORK_DIR]   (default: a new temporary directory, kept for inspection)
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-$(mktemp -d -t cellsim-demo.XXXXXX)}
cargo build --release --quiet
bin=target/release/cellsim
"$bin" gen "$work/trace" --machines 1000 --hours 24 --seed 1
"$bin" ingest "$work/trace" "$work/parquet"
"$bin" stats "$work/parquet" --json "$work/stats.json"
echo "trace, Parquet and stats.json are in $work"
