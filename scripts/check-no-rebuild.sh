#!/usr/bin/env bash
# Issue 58: the build identity (`build.rs`, the binary crate's) reruns only when HEAD, the refs
# or the sources change, so after a build `git status` (which rewrites .git/index) then
# `cargo build --release` compiles nothing. Fails naming what was compiled.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
git status >/dev/null
compiled=$(cargo build --release 2>&1 | grep -E '^\s+Compiling' || true)
if [ -n "$compiled" ]; then
    echo "check-no-rebuild: git status then cargo build recompiled:" >&2
    echo "$compiled" >&2
    exit 1
fi
echo "check-no-rebuild: git status then cargo build compiled nothing"
