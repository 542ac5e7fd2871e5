#!/bin/bash
# Interleaved day-long per-job NBS runs (bench-results/nbs-per-job-day-2026-11-28.md): each
# binary in turn, ROUNDS rounds, on the ingested 12.5k trace TRACE; one line per run with the
# speed, the solver's, the rest of the policy's and trace apply's wall time, and the counters.
# Usage: scripts/bench/nbs-per-job-day.sh TRACE ROUNDS BINARY...
set -euo pipefail
trace=$1 rounds=$2
shift 2
config=$(cd "$(dirname "$0")" && pwd)/nbs-gcd-jobs.toml
work=$(mktemp -d -t nbs-day.XXXXXX)
for r in $(seq "$rounds"); do for b in "$@"; do
  rm -rf "$work/out"
  "$b" run --trace "$trace" --config "$config" --hours 24 --out "$work/out" > "$work/log" 2>&1
  python3 - "$work" "$r" "$b" <<'PY'
import glob, re, sys
import pandas as pd
work, r, b = sys.argv[1:]
d = pd.concat(pd.read_parquet(f) for f in glob.glob(f"{work}/out/timing/*.parquet"))
log = open(f"{work}/log").read()
g = lambda k: re.search(re.escape(k) + r"\s+(\S+)", log).group(1)
s = lambda c: round(d[c].sum() / 1000, 1)
print(r, b, "speed", g("speed (x real time)"), "solver_s", s("solver_ms"),
      "rest_s", round(s("policy_ms") - s("solver_ms"), 1), "apply_s", s("apply_ms"),
      "solves", g("nbs solves"), "iters", g("nbs solver iterations"),
      "fallback", g("nbs fallback solves"), "failed", g("nbs failed solves"),
      "rss_mb", g("peak RSS (MB)"), flush=True)
PY
done; done
rm -rf "$work"
