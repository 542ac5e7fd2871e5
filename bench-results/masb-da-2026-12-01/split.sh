#!/usr/bin/env bash
# Section (c) of masb-da-2026-12-01.md: how far Table 4's two columns hang on the usage model's
# memory split, which no measurement here can set (no task_usage). The memory shares (other
# work, production) on the straight line between the two models section (b) compares, both set
# on Table 5's memory used: the split (0.35, 0.85; the default until 2026-12-03) and one share
# (0.66, 0.66).
# First (a map): at mix 0, 0.125, 0.25, 0.375, 0.5, 0.75 and 1 of the way, MASB's configuration
# of record as it ships (no offloads) and Borg's replay, seeds 1-3. Then the mix set on Table
# 4's Borg column alone (a criterion chosen once the quarters had been seen, before the eighths
# and seeds 4-20 ran): the one of those seven whose Borg replay, mean of seeds 1-3, is nearest
# it (least squares over its six shares); there, seeds 4-20 too, and MASB's shares compared
# with Table 4's MASB column seed by seed. That point (0.25) is the default since 2026-12-03
# (default-split-2026-12-03.md); every run here sets its shares itself.
# 8 simulated hours of ../shared/gcd-8h under the usage windows, 2 threads. `split.py` makes
# the tables (`split.txt`). Runs in OUT_DIR/split (up to 144 of ~8 s).
# Usage: split.sh CELLSIM GCD_8H OUT_DIR
set -euo pipefail
here=$(dirname "$(realpath "$0")")
. "$here/setup.sh" "$@"
mkdir -p "$out/split"
borg=$'[policy]\nkind = "borg-replay"'

# MASB's record and Borg's replay at memory-share mix MIX, seed SEED, unless made already.
# Usage: pair MIX SEED
pair() {
  local usage
  usage=$'[usage]\nmem_ratio = '"$(python3 "$here/split.py" --shares "$1")"$'\n[usage.window]'
  [ -f "$out/split/masb-mix$1-seed$2/summary.json" ] ||
    out=$out/split bench_run "masb-mix$1-seed$2" "$real" "$record"$'\n'"$usage" "$2"
  [ -f "$out/split/borg-mix$1-seed$2/summary.json" ] ||
    out=$out/split bench_run "borg-mix$1-seed$2" "$real" "$borg"$'\n'"$usage" "$2"
}

for mix in $(python3 "$here/split.py" --mixes); do
  for seed in 1 2 3; do pair "$mix" "$seed"; done
done
found=$(python3 "$here/split.py" --calibrate "$out/split")
for seed in $(seq 4 20); do pair "$found" "$seed"; done
# The rest of the band where seeds 1-3 put both columns in issue 57's bands (added after the
# calibrated point's twenty seeds, before these ran): seeds 4-20 at 0.375 and 0.5 too.
for mix in $(python3 "$here/split.py" --robustness); do
  for seed in $(seq 4 20); do pair "$mix" "$seed"; done
done
python3 "$here/split.py" "$out/split" --at "$found"
