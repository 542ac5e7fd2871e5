#!/usr/bin/env bash
# Executes analysis/notebooks/run-overview.ipynb on run directories, top to bottom, and fails on
# the first cell that raises. Needs Python 3 with pandas, pyarrow, matplotlib and nbconvert; with
# no run given, makes three small runs first (MASB and borg-replay, 200 machines, 3 hours, and
# first-fit for 0.4 hours) with the
# release build (in $CARGO_TARGET_DIR when set). `.ci/run` runs it.
# Usage: scripts/check-notebook.sh [RUN_DIR...]
#   pip install pandas pyarrow matplotlib nbconvert ipykernel    # once, e.g. in a venv
# The executed notebook (with its tables and figures) is written to a temporary directory,
# removed at the end unless KEEP=1 (then named at the end).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! python3 -c "import pandas, pyarrow, matplotlib, nbconvert" 2>/dev/null; then
    echo "needs python3 with pandas, pyarrow, matplotlib and nbconvert (pip install pandas pyarrow matplotlib nbconvert ipykernel)" >&2
    exit 2
fi
work=$(mktemp -d -t cellsim-notebook.XXXXXX)
# Its runs and the executed copy go when the script ends; KEEP=1 keeps them to look at.
if [ -z "${KEEP:-}" ]; then trap 'rm -rf "$work"' EXIT; fi
runs=("$@")
if [ ${#runs[@]} -eq 0 ]; then
    cargo build --release --quiet
    bin=${CARGO_TARGET_DIR:-target}/release/cellsim
    for policy in masb borg-replay; do
        "$bin" run --synthetic 200 --hours 3 --policy "$policy" --out "$work/$policy" > /dev/null
        runs+=("$work/$policy")
    done
    # A run under an hour: its classes over time were once one point (hourly means).
    "$bin" run --synthetic 200 --hours 0.4 --policy first-fit --out "$work/short" > /dev/null
    runs+=("$work/short")
fi
CELLSIM_RUNS=$(IFS=:; echo "${runs[*]}") python3 -m nbconvert --to notebook --execute \
    analysis/notebooks/run-overview.ipynb --output-dir "$work" --output run-overview.ipynb
echo "the notebook ran on ${runs[*]}${KEEP:+; executed copy: $work/run-overview.ipynb}"
