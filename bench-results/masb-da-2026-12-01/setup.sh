# Sourced by the section scripts (`. setup.sh "$@"`): their arguments CELLSIM GCD_8H OUT_DIR as
# $cellsim, $trace and $out, scripts/lib.sh, the trace ingested once into $real ($out/real), the
# helpers offload_run and twenty_seeds (below; they need $here, the script's folder), and MASB's
# configuration of record on the real trace as TOML: $held until section (a8), held to the
# trace's start times, `accept_max_use`, booked asks (`usage-rises-2026-11-30.md`; each run
# adds `[usage.window]`), what run.sh, period.sh, warm.sh and refine.sh run; $record since.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
cellsim=$(realpath "$1") trace=$2 out=$3
mkdir -p "$out"
[ -d "$out/real" ] || "$cellsim" ingest "$trace" "$out/real" --threads 2 >/dev/null 2>&1
real=$out/real
held=$'release = "trace-schedule"\n[policy]\nkind = "masb"\naccept_max_use = true\nbook_asks = true'
# The configuration of record since section (a8): as $held without `accept_max_use`, which seed
# 000 does not describe (slurm/masb-real-trace.toml; each run adds `[usage.window]`).
record=$'release = "trace-schedule"\n[policy]\nkind = "masb"\nbook_asks = true'

# Sections (a)-(b) and (a7)-(a8) ran under the usage model's memory split before 2026-12-03
# (other work 0.35 of its memory request, production 0.85; the default since is section (c)'s
# 0.4275 / 0.8025, default-split-2026-12-03.md): every run whose config sets no `mem_ratio` of
# its own gets that split spelled out, so the scripts make the runs their outputs show. Every
# config here ends in `[usage.window]`; split.sh's all set their own.
bench_run_default=$(declare -f bench_run)
eval "${bench_run_default/bench_run/bench_run_as_made}"
bench_run() {
  local config=$3
  [[ $config == *mem_ratio* ]] ||
    config=${config/'[usage.window]'/$'[usage]\nmem_ratio = [0.35, 0.35, 0.85]\n[usage.window]'}
  bench_run_as_made "$1" "$2" "$config" "${4:-1}"
}

# The run DIR/masb-offloadPERIOD_S-seedSEED of MASB config CONFIG (TOML) offloading every
# PERIOD_S seconds, under `[usage.window]`, unless DIR holds it already.
# Usage: offload_run CONFIG DIR PERIOD_S SEED
offload_run() {
  [ -f "$2/masb-offload$3-seed$4/summary.json" ] ||
    out=$2 bench_run "masb-offload$3-seed$4" "$real" \
      "$1"$'\noffload_every_s = '"$3"$'\n[usage.window]' "$4"
}

# Section (a7)'s calibration with twenty seeds of MASB config CONFIG in DIR: seeds 1-20 at
# 3000-4200 s every 300 s, the period `regress.py` finds there, Borg's replay seeds 1-20 under
# the same usage; then `regress.py`'s table.
# Usage: twenty_seeds CONFIG DIR
twenty_seeds() {
  local wide="3000 3300 3600 3900 4200" seed every_s found
  for seed in $(seq 1 20); do
    for every_s in $wide; do offload_run "$1" "$2" "$every_s" "$seed"; done
  done
  found=$(python3 "$here/regress.py" "$2" $wide)
  for seed in $(seq 1 20); do
    offload_run "$1" "$2" "$found" "$seed"
    [ -f "$2/borg-seed$seed/summary.json" ] ||
      out=$2 bench_run "borg-seed$seed" "$real" \
        $'[policy]\nkind = "borg-replay"\n[usage.window]' "$seed"
  done
  python3 "$here/regress.py" "$2" $wide --at "$found"
}
