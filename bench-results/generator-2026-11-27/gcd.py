"""Shared reading of an ingested GCD trace for the scripts beside it (pandas only, no cellsim code)."""
import glob

import pandas as pd

TRACE_START_US = 600_000_000


def read(trace, table, columns=None):
    """All of `table`'s Parquet parts in `trace`, in time order."""
    parts = sorted(glob.glob(f"{trace}/{table}/*.parquet"))
    return pd.concat(pd.read_parquet(p, columns=columns) for p in parts).sort_values("time", kind="stable")


def state_at(trace, hours):
    """At `hours` into the window: the running tasks (each task's last event a SCHEDULE or
    UPDATE_RUNNING) and the online machines' capacities, indexed by machine ID."""
    events, machines = read(trace, "task_events"), read(trace, "machine_events")
    at = TRACE_START_US + int(hours * 3600e6)
    last = events[events.time <= at].groupby(["job_id", "task_index"]).tail(1)
    running = last[last.event_type.isin([1, 8])].copy()
    cap = machines[machines.time <= at].groupby("machine_id").tail(1)
    cap = cap[cap.event_type != 1].set_index("machine_id")[["cpus", "memory"]]
    return running, cap
