#!/usr/bin/env python3
"""Which tasks a queueing policy leaves waiting that another ran (issue 34: the measured cause of
Sparrow's growing backlog on the GCD cell): the tasks the trace submits that run B started and
run A never did, by request size decile and by constraints, and run A's queue times (p50, p99)
by size decile. Size is a task's larger request, CPU or memory, in trace units (a fraction of
the largest machine).

Usage: scripts/stuck-by-size.py PARQUET_DIR RUN_A RUN_B
PARQUET_DIR is the ingested trace both runs replayed; RUN_A and RUN_B are run directories with
a `tasks/` table (any queueing policy: sparrow, omniscient, first-fit, ...). Needs pandas and
pyarrow.
"""
import glob
import sys

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

KEY = ["job_id", "task_index"]


def read(folder, columns):
    parts = sorted(glob.glob(folder + "/*.parquet"))
    if not parts:
        sys.exit(f"{folder}: no parquet parts")
    return pd.concat([pq.read_table(p, columns=columns).to_pandas() for p in parts])


def started(run):
    """The (job_id, task_index) pairs with a started run, and the rows with their queue time."""
    rows = read(run + "/tasks", KEY + ["start_us", "queue_us"])
    rows = rows[rows.start_us.notna()]
    return set(map(tuple, rows[KEY].values)), rows


def main(trace, run_a, run_b):
    events = read(trace + "/task_events", KEY + ["event_type", "cpu_request", "memory_request"])
    submitted = events[events.event_type == 0].drop_duplicates(KEY, keep="last")
    constrained = read(trace + "/task_constraints", KEY).drop_duplicates()
    constrained["constrained"] = True
    tasks = submitted.merge(constrained, on=KEY, how="left")
    tasks["constrained"] = tasks.constrained.astype("boolean").fillna(False).astype(bool)
    tasks["size"] = tasks[["cpu_request", "memory_request"]].max(axis=1)
    (a_started, a_rows), (b_started, _) = started(run_a), started(run_b)
    keys = list(map(tuple, tasks[KEY].values))
    tasks["a"] = [k in a_started for k in keys]
    tasks["b"] = [k in b_started for k in keys]
    ran_b = tasks[tasks.b].copy()
    stuck = ran_b[~ran_b.a]
    print(f"tasks submitted: {len(tasks):,}; started by B: {len(ran_b):,}; of those never started by A: {len(stuck):,}")
    ran_b["decile"] = pd.qcut(ran_b["size"].rank(method="first"), 10, labels=False).astype(int) + 1
    print("\n| size decile | median size | tasks | never started by A |")
    print("|---|---|---|---|")
    for d, g in ran_b.groupby("decile"):
        print(f"| {d} | {g['size'].median():.3f} | {len(g):,} | {100 * (~g.a).mean():.2f} % |")
    print("\n| constraints | tasks | never started by A |")
    print("|---|---|---|")
    for c, g in ran_b.groupby("constrained"):
        print(f"| {'yes' if c else 'no'} | {len(g):,} | {100 * (~g.a).mean():.2f} % |")
    queued = a_rows.merge(tasks[KEY + ["size"]], on=KEY)
    queued["decile"] = pd.qcut(queued["size"].rank(method="first"), 10, labels=False).astype(int) + 1
    print("\n| size decile | A's tasks started | queue p50 ms | queue p99 ms |")
    print("|---|---|---|---|")
    for d, g in queued.groupby("decile"):
        p50, p99 = np.percentile(g.queue_us, [50, 99]) / 1000
        print(f"| {d} | {len(g):,} | {p50:,.1f} | {p99:,.0f} |")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
