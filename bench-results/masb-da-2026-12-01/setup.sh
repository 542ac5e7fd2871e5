# Sourced by the section scripts (`. setup.sh "$@"`): their arguments CELLSIM GCD_8H OUT_DIR as
# $cellsim, $trace and $out, scripts/lib.sh, the trace ingested once into $out/real, and MASB's
# configuration of record on the real trace as TOML: $held until section (a8), held to the
# trace's start times, `accept_max_use`, booked asks (`usage-rises-2026-11-30.md`; each run
# adds `[usage.window]`), what run.sh, period.sh, warm.sh and refine.sh run; $record since.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
cellsim=$(realpath "$1") trace=$2 out=$3
mkdir -p "$out"
[ -d "$out/real" ] || "$cellsim" ingest "$trace" "$out/real" --threads 2 >/dev/null 2>&1
held=$'release = "trace-schedule"\n[policy]\nkind = "masb"\naccept_max_use = true\nbook_asks = true'
# The configuration of record since section (a8): as $held without `accept_max_use`, which seed
# 000 does not describe (slurm/masb-real-trace.toml; each run adds `[usage.window]`).
record=$'release = "trace-schedule"\n[policy]\nkind = "masb"\nbook_asks = true'
