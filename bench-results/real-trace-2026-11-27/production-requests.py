"""Borg's own placements on the real trace against seed 000's production-request (RUS) rule,
counted straight from the ingested task_events, independently of cellsim's replay
(real-trace-2026-11-27.md). For each hour given: the machines online, the share of the cell's
CPU and memory requested by running tasks of each band, and the machines whose running
production tasks request more CPU or memory than the machine has, for several definitions of
"production". A task runs from its SCHEDULE to its next terminal event; requests as the
last event gave them.
Usage: python3 production-requests.py INGESTED_TRACE [HOURS...]"""
import glob
import sys

import numpy as np
import pandas as pd

trace = sys.argv[1]
hours = [float(h) for h in sys.argv[2:]] or [0.01, 4.0, 8.0]
events = pd.concat(pd.read_parquet(p) for p in sorted(glob.glob(f"{trace}/task_events/*.parquet")))
events = events.sort_values("time", kind="stable")
machines = pd.concat(pd.read_parquet(p) for p in sorted(glob.glob(f"{trace}/machine_events/*.parquet")))
machines = machines.sort_values("time", kind="stable")
OFFSET_US = 600_000_000

for h in hours:
    at = OFFSET_US + int(h * 3600e6)
    last = events[events.time <= at].groupby(["job_id", "task_index"]).tail(1)
    running = last[last.event_type.isin([1, 8])]  # SCHEDULE, UPDATE_RUNNING
    cap = machines[machines.time <= at].groupby("machine_id").tail(1)
    cap = cap[cap.event_type != 1].set_index("machine_id")[["cpus", "memory"]]
    running = running[running.machine_id.isin(cap.index)].copy()
    band = np.where(running.priority <= 1, "gratis", np.where(running.priority >= 9, "production", "middle"))
    running["band"] = band
    by_band = running.groupby("band")[["cpu_request", "memory_request"]].sum()
    shares = ", ".join(
        f"{b} {r.cpu_request / cap.cpus.sum():.3f}/{r.memory_request / cap.memory.sum():.3f}"
        for b, r in by_band.iterrows()
    )
    print(f"t = {h} h: {len(cap)} machines online; CPU/memory requested by band: {shares}")
    for name, mask in [
        ("priority >= 9 (GCD's production tier; cellsim's)", running.priority >= 9),
        ("priority >= 8", running.priority >= 8),
        ("priority >= 2 (all but gratis)", running.priority >= 2),
        ("scheduling class 3", running.scheduling_class == 3),
    ]:
        prod = running[mask].groupby("machine_id")[["cpu_request", "memory_request"]].sum()
        prod = prod.join(cap, how="right").fillna(0)
        breaking = (prod.cpu_request > prod.cpus) | (prod.memory_request > prod.memory)
        print(
            f"  {name}: reserved CPU {prod.cpu_request.sum() / cap.cpus.sum():.3f}, memory "
            f"{prod.memory_request.sum() / cap.memory.sum():.3f}; machines breaking the rule "
            f"{breaking.sum()} ({breaking.mean() * 100:.2f} %)"
        )
