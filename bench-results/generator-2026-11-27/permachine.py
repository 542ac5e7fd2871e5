"""Per-machine requested share of CPU and memory at HOURS (running tasks' requests / capacity):
quantiles, from the ingested task_events and machine_events. Usage: permachine.py TRACE [HOURS]"""
import sys
import numpy as np, pandas as pd
from gcd import state_at
tr = sys.argv[1]; hours = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
run, cap = state_at(tr, hours)
r = run.groupby("machine_id")[["cpu_request", "memory_request"]].sum().reindex(cap.index, fill_value=0)
for c, k in [("cpu_request", "cpus"), ("memory_request", "memory")]:
    x = r[c] / cap[k]
    print(f"t={hours}h {c}/capacity per machine: quantiles", x.quantile([.1, .25, .5, .75, .9]).round(3).to_dict(), "std", round(x.std(), 3), "share >= 0.9:", round((x >= 0.9).mean(), 3), "share > 1:", round((x > 1).mean(), 3))
