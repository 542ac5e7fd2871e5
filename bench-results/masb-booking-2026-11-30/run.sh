#!/usr/bin/env bash
# Issue 57 item 3: MASB on the real trace's first 8.5 hours (../shared/gcd-8h) with and without
# its brokers booking the new tasks they send (`[policy] book_asks`), held to the trace's start
# times with `accept_max_use`, usage constant and drawn again every 300 s; MASB's defaults with
# booking; Borg's replay; a reference worst-fit placer in Python (`worst-fit.py`, needs the
# cellsim Python package); and the generated 12.5k cell (predictions). 8 simulated hours per run,
# seed 1, 2 threads. Usage: run.sh CELLSIM GCD_8H OUT_DIR (OUT_DIR new or empty)
set -euo pipefail
here=$(dirname "$(realpath "$0")")
cellsim=$(realpath "$1") trace=$2 out=$3
mkdir -p "$out"
"$cellsim" ingest "$trace" "$out/real" --threads 2 >/dev/null
"$cellsim" gen "$out/gen-csv" --machines 12583 --hours 8.5 --seed 1 >/dev/null 2>&1
"$cellsim" ingest "$out/gen-csv" "$out/gen" --threads 2 >/dev/null
masb=$'[policy]\nkind = "masb"'
held=$'release = "trace-schedule"\n[policy]\nkind = "masb"\naccept_max_use = true'
booked=$'\nbook_asks = true'
window=$'\n[usage.window]'
# run NAME TRACE CONFIG
run() {
  printf '%s\n' "$3" > "$out/$1.toml"
  rm -rf "${out:?}/$1"
  /usr/bin/time -f "$1: %e s wall, %M KB peak" "$cellsim" run --trace "$out/$2" --hours 8 \
    --threads 2 --snapshot-every-wall-minutes 0 --config "$out/$1.toml" --out "$out/$1" \
    >/dev/null 2>"$out/$1.err"
  tail -n 1 "$out/$1.err"
}
echo "## wall times (one run each; the machine is noisy)"
run borg real $'[policy]\nkind = "borg-replay"'
run masb real "$masb"
run masb-booked real "$masb$booked"
run held real "$held"
run held-booked real "$held$booked"
run held-window real "$held$window"
run held-window-booked real "$held$booked$window"
run gen-masb gen "$masb"
run gen-masb-booked gen "$masb$booked"
rm -rf "$out/worst-fit"
/usr/bin/time -f "worst-fit (Python): %e s wall" python3 "$here/worst-fit.py" "$out/real" \
  "$out/worst-fit" 8 >/dev/null 2>"$out/worst-fit.err"
tail -n 1 "$out/worst-fit.err"
r() { (cd "$out" && "$cellsim" report "$@"); }
echo "## the real 8 h"
r borg masb masb-booked held held-booked held-window held-window-booked worst-fit
echo "## against Table 7 (held, booked, windows)"
r --paper held-window-booked | sed -n '/against seed 000/,$p'
echo "## against Table 7 (held, booked, usage constant)"
r --paper held-booked | sed -n '/against seed 000/,$p'
echo "## per hour"
python3 "$here/../masb-real-trace-2026-11-28/per-hour.py" "$out" held held-booked held-window \
  held-window-booked worst-fit
echo "## the nodes' use at 5 h"
python3 "$here/../masb-real-trace-2026-11-28/memory-spread.py" "$out" borg held held-booked \
  held-window held-window-booked worst-fit
echo "## the generated 12.5k cell, 8 h (seed 1): predictions"
r gen-masb gen-masb-booked
echo "## seeds 1-3: Table 4's ordering (MASB's PA:DA above Borg's) per seed"
for seed in 2 3; do
  for name in borg held-booked held-window-booked; do
    cp "$out/$name.toml" "$out/$name-seed$seed.toml"
    rm -rf "${out:?}/$name-seed$seed"
    "$cellsim" run --trace "$out/real" --hours 8 --threads 2 --snapshot-every-wall-minutes 0 \
      --seed "$seed" --config "$out/$name-seed$seed.toml" --out "$out/$name-seed$seed" \
      >/dev/null 2>&1
  done
done
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
print("run, seed: PA %, DA %, PA:DA")
for name in ["borg", "held-booked", "held-window-booked"]:
    for seed in [1, 2, 3]:
        run = name if seed == 1 else f"{name}-seed{seed}"
        a = json.load(open(f"{out}/{run}/summary.json"))["averages"]
        pa, da = (100 * a["classes"][c] / a["nodes_online"] for c in ["pa", "da"])
        print(f"{name}, {seed}: {pa:.2f}, {da:.2f}, {pa / da:.2f}")
PY
