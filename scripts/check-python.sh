#!/usr/bin/env bash
# Builds the Python package's wheel once (`pip wheel ./python`: maturin from PyPI builds the
# native module, in this repository's target directory so the release build's compiled crates
# are reused; one abi3 wheel for CPython >= 3.9), installs it with its test extras, runs its
# pytest suite against the release binary, which the tests compare it with, and executes
# analysis/notebooks/compare-policies.ipynb (two policies run and compared through the package).
# Then installs the same wheel in a fresh venv of the oldest and the newest CPython the package
# supports (3.9 and 3.13, from PATH or pyenv) with the test extras as pip resolves them for
# that interpreter (on 3.9: numpy 2.0, polars 1.x, which must read our Parquet files) and runs
# the suite there too; an interpreter this machine lacks is named as not tested. `.ci/run`
# runs it. Its working directory is removed at the end (KEEP=1 keeps it).
# Usage: scripts/check-python.sh [PYTEST_ARGS...]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
target=${CARGO_TARGET_DIR:-$PWD/target}
work=$(mktemp -d -t cellsim-python.XXXXXX)
# The wheel, the venvs and the notebook's runs (~1.2 GB) go when the script ends, however it
# ends; KEEP=1 keeps them to look at.
if [ -z "${KEEP:-}" ]; then trap 'rm -rf "$work"' EXIT; fi
pip_quiet=(--quiet --disable-pip-version-check)
CARGO_TARGET_DIR=$target python3 -m pip wheel "${pip_quiet[@]}" --no-deps ./python -w "$work/wheel"
wheel=$(ls "$work"/wheel/cellsim-*.whl)
python3 -m pip install "${pip_quiet[@]}" "$wheel[test]" matplotlib nbconvert ipykernel
python3 -m pip install "${pip_quiet[@]}" --force-reinstall --no-deps "$wheel"
CELLSIM_BIN=$target/release/cellsim python3 -m pytest -q -p no:cacheprovider python/tests "$@"
CELLSIM_WORK=$work/runs python3 -m nbconvert --to notebook --execute \
    analysis/notebooks/compare-policies.ipynb --output-dir "$work" --output compare-policies.ipynb
echo "the package's notebook ran${KEEP:+; executed copy: $work/compare-policies.ipynb}"

# The interpreter for CPython $1 (3.9, ...), from PATH or pyenv, that runs (a pyenv shim for
# a version not selected does not); nothing if none.
interpreter() {
    local candidate
    for candidate in $(command -v "python$1" 2>/dev/null) \
        $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$1".*/bin/python 2>/dev/null | sort -V); do
        if "$candidate" -c "" 2>/dev/null; then
            echo "$candidate"
            return
        fi
    done
}
for version in 3.9 3.13; do
    python=$(interpreter "$version")
    if [ -z "$python" ]; then
        echo "CPython $version: not on this machine, not tested"
        continue
    fi
    venv=$work/venv-$version
    "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install "${pip_quiet[@]}" "$wheel[test]"
    "$venv/bin/python" -c "import sys, numpy, polars, pyarrow; print('CPython', sys.version.split()[0], 'numpy', numpy.__version__, 'polars', polars.__version__, 'pyarrow', pyarrow.__version__)"
    CELLSIM_BIN=$target/release/cellsim "$venv/bin/python" -m pytest -q -p no:cacheprovider \
        python/tests "$@"
done
