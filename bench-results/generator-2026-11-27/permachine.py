"""Per-machine requested share of CPU and memory at HOURS (running tasks' requests / capacity):
quantiles, from the ingested task_events and machine_events. Usage: permachine.py TRACE [HOURS]"""
import glob, sys, pandas as pd, numpy as np
tr = sys.argv[1]; hours = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
read = lambda t: pd.concat(pd.read_parquet(p) for p in sorted(glob.glob(f"{tr}/{t}/*.parquet"))).sort_values("time", kind="stable")
ev, mc = read("task_events"), read("machine_events")
at = 600_000_000 + int(hours * 3600e6)
last = ev[ev.time <= at].groupby(["job_id", "task_index"]).tail(1)
run = last[last.event_type.isin([1, 8])]
cap = mc[mc.time <= at].groupby("machine_id").tail(1)
cap = cap[cap.event_type != 1].set_index("machine_id")[["cpus", "memory"]]
r = run.groupby("machine_id")[["cpu_request", "memory_request"]].sum().reindex(cap.index, fill_value=0)
for c, k in [("cpu_request", "cpus"), ("memory_request", "memory")]:
    x = r[c] / cap[k]
    print(f"t={hours}h {c}/capacity per machine: quantiles", x.quantile([.1, .25, .5, .75, .9]).round(3).to_dict(), "std", round(x.std(), 3), "share >= 0.9:", round((x >= 0.9).mean(), 3), "share > 1:", round((x > 1).mean(), 3))
