#!/usr/bin/env bash
# Issue 57 item 2: Borg's replay of the real trace's first 8.5 hours (../shared/gcd-8h) under
# the usage models: the band shares (the default before), split per-task usage with CPU capped
# at the request (the option before), and the default now (split per-task usage, CPU
# compressible), its CPU share swept to show the one Table 5's CPU used sets; then MASB under
# them (item 3), and both on a generated 12.5k cell (predictions). 8 simulated hours per run,
# seed 1, 2 threads. Usage: run.sh CELLSIM GCD_8H OUT_DIR (OUT_DIR new or empty)
set -euo pipefail
cellsim=$(realpath "$1") trace=$2 out=$3
mkdir -p "$out"
"$cellsim" ingest "$trace" "$out/real" --threads 2 >/dev/null
"$cellsim" gen "$out/gen-csv" --machines 12583 --hours 8.5 --seed 1 >/dev/null 2>&1
"$cellsim" ingest "$out/gen-csv" "$out/gen" --threads 2 >/dev/null
bands=$'[usage]\ncpu_ratio = [0.485, 0.335, 0.37]\nmem_ratio = [0.7, 0.7, 0.7]\nper_task = false\ncpu_compressible = false'
capped=$'[usage]\ncpu_ratio = [0.42, 0.42, 0.42]\ncpu_compressible = false'
share() { printf '[usage]\ncpu_ratio = [%s, %s, %s]\n' "$1" "$1" "$1"; }
window=$'[usage.window]'
borg=$'[policy]\nkind = "borg-replay"'
masb=$'[policy]\nkind = "masb"'
held=$'release = "trace-schedule"\n[policy]\nkind = "masb"\naccept_max_use = true'
# run NAME TRACE CONFIG
run() {
  printf '%s\n' "$3" > "$out/$1.toml"
  rm -rf "${out:?}/$1"
  "$cellsim" run --trace "$out/$2" --hours 8 --threads 2 --snapshot-every-wall-minutes 0 \
    --config "$out/$1.toml" --out "$out/$1" >/dev/null 2>&1
}
run borg-bands real "$borg"$'\n'"$bands"
run borg-capped-0.42 real "$borg"$'\n'"$capped"
run borg-default real "$borg"
for r in 0.42 0.40 0.38; do run "borg-cpu-$r" real "$borg"$'\n'"$(share $r)"; done
run borg-window real "$borg"$'\n'"$window"
run masb-bands real "$masb"$'\n'"$bands"
run masb-default real "$masb"
run masb-held-window-capped-0.42 real "$held"$'\n'"$capped"$'\n'"$window"
run masb-held-window real "$held"$'\n'"$window"
run gen-borg-bands gen "$borg"$'\n'"$bands"
run gen-borg-default gen "$borg"
run gen-masb-bands gen "$masb"$'\n'"$bands"
run gen-masb-default gen "$masb"
r() { (cd "$out" && "$cellsim" report "$@"); }
echo "## Borg's replay of the real 8 h: the usage models, the CPU share swept"
r borg-bands borg-capped-0.42 borg-default borg-cpu-0.42 borg-cpu-0.40 borg-cpu-0.38 borg-window
echo "## against Table 4 (the default)"
r --paper borg-default | sed -n '/against seed 000/,$p'
echo "## MASB on the real 8 h"
r masb-bands masb-default masb-held-window-capped-0.42 masb-held-window
echo "## against Table 7 (held, windows, the default usage)"
r --paper masb-held-window | sed -n '/against seed 000/,$p'
echo "## on a generated 12.5k cell, 8 h (seed 1): predictions"
r gen-borg-bands gen-borg-default gen-masb-bands gen-masb-default
