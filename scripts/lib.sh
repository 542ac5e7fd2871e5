# Helpers the benchmark scripts source (`. "$(dirname "$0")/lib.sh"`).

# The median of the numbers on standard input (separated by spaces or newlines); "-" for none.
median() { tr ' ' '\n' | { grep . || true; } | sort -g | awk '{a[NR]=$1} END {if (NR==0) print "-"; else print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# The value (last field) of the row of `cellsim report` output $1 labelled exactly $2.
report_value() { printf '%s\n' "$1" | awk -v r="$2" 'index($0, r) == 1 && substr($0, length(r) + 1, 1) ~ /[ ]/ {print $NF}'; }

# One `cellsim run` of a benchmark: the config (TOML text) $3 written beside the run as
# $out/$1.toml, the run into $out/$1 (replaced), trace directory $2, seed $4 (1), $hours
# simulated hours (8), 2 threads, no wall-clock snapshots. Needs $cellsim and $out.
bench_run() {
  printf '%s\n' "$3" > "$out/$1.toml"
  rm -rf "${out:?}/$1"
  "$cellsim" run --trace "$2" --hours "${hours:-8}" --threads 2 --seed "${4:-1}" \
    --snapshot-every-wall-minutes 0 --config "$out/$1.toml" --out "$out/$1" >/dev/null 2>&1
}

# bench_run, unless $out/$1 holds a finished run (its summary.json): a script run again after a
# stop makes only the runs it lacks.
bench_run_once() { [ -f "$out/$1/summary.json" ] || bench_run "$@"; }

# The trace directory $1 ingested into $out/$2 with 2 threads, unless $out/$2 exists (kept
# across reruns). Needs $cellsim and $out.
ingest_once() { [ -d "$out/$2" ] || "$cellsim" ingest "$1" "$out/$2" --threads 2 >/dev/null 2>&1; }

# The start of a bench script run as SCRIPT CELLSIM GCD_8H OUT_DIR: sets $cellsim (absolute),
# $trace and $out, makes $out and ingests the trace once into $out/real.
real_trace_bench() {
  cellsim=$(realpath "$1") trace=$2 out=$3
  mkdir -p "$out"
  ingest_once "$trace" real
}
