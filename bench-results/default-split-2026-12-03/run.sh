#!/usr/bin/env bash
# Issue 57: the usage model's memory split set on Table 4's Borg column (other work 0.4275 of its
# memory request, production 0.8025; masb-da-2026-12-01.md section (c)) made the default, and
# what that moves. On the real trace's first 8.5 hours (../shared/gcd-8h), 8 simulated hours,
# 2 threads: (1) the default is section (c)'s point: MASB's configuration of record and Borg's
# replay under the default give the same summary as under the explicit shares (seed 1);
# (2) item 2 again: Borg's replay under the default usage (no windows), seeds 1-3, beside the
# split set on the overloaded share alone (0.35 / 0.85, the default until now, `mem_ratio`);
# (3) the window sigmas' figure again (seed 000's Table 2, 10 % row: 212) under the default,
# seeds 1-3: the sigmas were set under the old split; (4) the offload option (not in seed 000)
# under the default at 300 s and at its period 3360 s, set under the old split, seed 1;
# (5) a generated 12.5k cell (its own task_usage) under both: predictions; (6) the shares hour by
# hour (masb-long's blocks.py), with seeds 1-20 of masb-da's split.sh at the default's point
# when its runs are in OUT/split.
# Usage: run.sh CELLSIM GCD_8H OUT_DIR
set -euo pipefail
here=$(dirname "$(realpath "$0")")
. "$here/../masb-da-2026-12-01/setup.sh" "$@"
[ -d "$out/gen" ] || {
  "$cellsim" gen "$out/gen-csv" --machines 12583 --hours 8.5 --seed 1 >/dev/null 2>&1
  "$cellsim" ingest "$out/gen-csv" "$out/gen" --threads 2 >/dev/null 2>&1
}
borg=$'nodes_every = "60s"\n[policy]\nkind = "borg-replay"'
explicit=$'[usage]\nmem_ratio = [0.4275, 0.4275, 0.8025]'
old=$'[usage]\nmem_ratio = [0.35, 0.35, 0.85]'
# once NAME TRACE CONFIG [SEED]: the run unless it is there, its config as written (setup.sh's
# bench_run spells the split before out for masb-da's sections; these runs are the default's)
once() { [ -f "$out/$1/summary.json" ] || bench_run_as_made "$@"; }

# (1)
once masb-record-default "$real" "$record"$'\n[usage.window]'
once masb-record-explicit "$real" "$record"$'\n'"$explicit"$'\n[usage.window]'
once borg-window-explicit "$real" "$borg"$'\n'"$explicit"$'\n[usage.window]'
for seed in 1 2 3; do
  # (2), (3)
  once "borg-default-seed$seed" "$real" "$borg" "$seed"
  once "borg-old-seed$seed" "$real" "$borg"$'\n'"$old" "$seed"
  once "borg-window-seed$seed" "$real" "$borg"$'\n[usage.window]' "$seed"
  once "borg-window-old-seed$seed" "$real" "$borg"$'\n'"$old"$'\n[usage.window]' "$seed"
done
# (4)
for every_s in 300 3360; do
  once "masb-offload$every_s" "$real" "$record"$'\noffload_every_s = '"$every_s"$'\n[usage.window]'
done
# (5)
once gen-borg-default "$out/gen" "$borg"
once gen-borg-old "$out/gen" "$borg"$'\n'"$old"
once gen-masb-default "$out/gen" $'[policy]\nkind = "masb"'
once gen-masb-old "$out/gen" $'[policy]\nkind = "masb"\n'"$old"

same() { python3 "$here/same.py" "$out" "$1" "$2"; }
echo "## (1) the default is section (c)'s point"
same masb-record-default masb-record-explicit
same borg-window-seed1 borg-window-explicit
r() { (cd "$out" && "$cellsim" report "$@"); }
echo "## (2) Borg's replay, usage constant: the default against the split set on overloads alone"
r borg-default-seed1 borg-default-seed2 borg-default-seed3 borg-old-seed1 borg-old-seed2 borg-old-seed3
r --paper borg-default-seed1 | sed -n '/against seed 000/,$p'
echo "## (3) Table 2 under Borg's replay with windows: average / peak nodes a minute"
python3 "$here/../usage-rises-2026-11-30/rises.py" "$out" \
  borg-window-seed1 borg-window-seed2 borg-window-seed3 \
  borg-window-old-seed1 borg-window-old-seed2 borg-window-old-seed3
echo "## (4) MASB's record under the default: without offloads, every 300 s, every 3360 s"
r masb-record-default masb-offload300 masb-offload3360
r --paper masb-record-default | sed -n '/against seed 000/,$p'
echo "## (5) a generated 12.5k cell, 8 h (seed 1; its own task_usage): predictions"
r gen-borg-default gen-borg-old gen-masb-default gen-masb-old
echo "## (6) hour by hour: the shares in each simulated hour (Table 4's are the month's)"
# (MASB's record, seed 1: the hour-by-hour block of (4)'s `report --paper`.)
blocks=$here/../masb-long-2026-12-03/blocks.py
python3 "$blocks" "$out" 1 3 1 borg-window:borg
# Twenty seeds from masb-da's split.sh, when its runs are in OUT/split (split.sh CELLSIM GCD_8H
# OUT): mix 0.25 is the default's point, (1).
if [ -d "$out/split" ]; then
  python3 "$blocks" "$out/split" 1 20 1 masb-mix0.25:masb borg-mix0.25:borg
fi
