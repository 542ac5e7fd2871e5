#!/usr/bin/env bash
# Builds and installs the Python package (`pip install ./python[test]`: maturin from PyPI builds
# the native module, in this repository's target directory so the release build's compiled
# crates are reused), runs its pytest suite against the release binary, which the tests compare
# it with, and executes analysis/notebooks/compare-policies.ipynb (two policies run and compared
# through the package). `.ci/run` runs it.
# Usage: scripts/check-python.sh [PYTEST_ARGS...]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
target=${CARGO_TARGET_DIR:-$PWD/target}
CARGO_TARGET_DIR=$target python3 -m pip install --quiet --disable-pip-version-check \
    "./python[test]" matplotlib nbconvert ipykernel
CELLSIM_BIN=$target/release/cellsim python3 -m pytest -q python/tests "$@"
work=$(mktemp -d -t cellsim-python.XXXXXX)
CELLSIM_WORK=$work/runs python3 -m nbconvert --to notebook --execute \
    analysis/notebooks/compare-policies.ipynb --output-dir "$work" --output compare-policies.ipynb
echo "the package's notebook ran; executed copy: $work/compare-policies.ipynb"
