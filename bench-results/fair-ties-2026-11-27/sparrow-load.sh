#!/usr/bin/env bash
# Issue 55 item 1, measured: Sparrow on seed 002's load cell (50 workers x 4 slots, 1,000
# one-task jobs of 10 s) at 50-95 % load with 1 and 4 probes, seeds 1-3, under the fair inbox
# order (the default) and the old sender order (`inbox_order = "sender"`), one binary.
# Prints one line per run: order probes load seed mean_queue_ms p99_queue_ms.
# Usage: sparrow-load.sh CELLSIM WORKDIR
set -euo pipefail
cellsim=$1 work=$2
mkdir -p "$work"
for load in 50 70 85 95; do
  for seed in 1 2 3; do
    raw=$work/raw-$load-$seed pq=$work/pq-$load-$seed
    [ -d "$pq" ] || { "$cellsim" gen "$raw" --scenario sparrow-load --load "$load" --seed "$seed" >/dev/null 2>&1
                      "$cellsim" ingest "$raw" "$pq" >/dev/null 2>&1; }
    for probes in 1 4; do
      for order in fair sender; do
        cfg=$work/c-$order-$probes.toml
        printf 'tick = "10ms"\nrounds_per_tick = 20\nnodes_every = "10min"\npart = "1h"\nseed = %s\ninbox_order = "%s"\n[snapshot]\nevery_wall_minutes = 0.0\n[policy]\nkind = "sparrow"\nprobe_ratio = %s.0\n' "$seed" "$order" "$probes" > "$cfg"
        out=$work/run-$order-$probes-$load-$seed
        rm -rf "$out"
        "$cellsim" run --config "$cfg" --trace "$pq" --out "$out" >/dev/null 2>&1
        python3 - "$out" "$order" "$probes" "$load" "$seed" <<'PY'
import sys, pyarrow.parquet as pq, numpy as np
out, order, probes, load, seed = sys.argv[1:]
t = pq.read_table(out + "/tasks").to_pandas()
q = t["queue_us"].dropna().to_numpy() / 1e3
per = t.groupby("machine_id").size().reindex(range(1, 51), fill_value=0).to_numpy()
print(order, probes, load, seed, f"{q.mean():.2f}", f"{np.percentile(q, 99):.2f}",
      f"{per[:10].mean():.2f}", f"{per[40:].mean():.2f}")
PY
      done
    done
  done
done
