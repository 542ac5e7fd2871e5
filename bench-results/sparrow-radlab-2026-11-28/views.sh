#!/bin/bash
# Gossip views at high load: counters per configuration (probes queued / deposited, hops).
C=${C:-$PWD/target/release/cellsim}  # run from the repository root
mkdir -p ${OUT:-/tmp/sparrow-views} && cd ${OUT:-/tmp/sparrow-views}
for load in 85 90 95; do for seed in 1 2 3 4 5; do
  rm -rf g-$load-$seed i-$load-$seed
  $C gen --scenario sparrow-load --load $load --seed $seed --arrivals poisson g-$load-$seed > /dev/null
  $C ingest g-$load-$seed i-$load-$seed > /dev/null 2>&1
  for cfg in random-walk greedy-search gradient-search; do
    case $cfg in
      random-walk) pol=$'self_assignment = true\nprobe_propagation = true\nview = "cyclon"\ntemperature = 100.0';;
      greedy-search) pol=$'self_assignment = true\nprobe_propagation = true\nview = "cyclon"\ntemperature = 0.5';;
      gradient-search) pol=$'self_assignment = true\nprobe_propagation = true\nview = "gradient"\ntemperature = 0.5';;
    esac
    printf 'trace = "%s"\nseed = %s\nhours = 0.1\ntick = "1s"\n[policy]\nkind = "sparrow"\n%s\n' "$PWD/i-$load-$seed" $seed "$pol" > c.toml
    rm -rf r; $C run --config c.toml --out r > /dev/null 2>&1 || echo "fail $cfg $load $seed"
    python3 - "$cfg" $load $seed <<'PY'
import json, sys, pandas as pd
s = json.load(open('r/summary.json'))
t = s['totals']
q = pd.read_parquet('r/tasks').queue_us / 1000
per = pd.read_parquet('r/tasks').machine_id.value_counts()
print(json.dumps({"cfg": sys.argv[1], "load": int(sys.argv[2]), "seed": int(sys.argv[3]),
  "deposited": t['probes_deposited'], "queued": t['probes_queued'],
  "hops": t['probe_hops'], "shuffle": t['messages'].get('shuffle', 0), "rank": t['messages'].get('rank', 0),
  "mean_ms": q.mean(), "p99_ms": q.quantile(0.99), "tasks_max_node": int(per.max()), "tasks_min_node": int(per.min())}))
PY
  done
done; done
