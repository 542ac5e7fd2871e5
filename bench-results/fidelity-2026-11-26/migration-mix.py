#!/usr/bin/env python3
"""Which tasks MASB's migrations move, per run (fidelity-2026-11-26.md section 8).

Usage: migration-mix.py TRACE_PARQUET_DIR LABEL=RUN_DIR [LABEL=RUN_DIR ...]

For each run: started migrations, MB each, moves per task moved, the share made by long-running
tasks (no end event in the trace window, or a run of 6 h or more from their first SCHEDULE),
their moves per task, MB each for long-running and shorter tasks, and the share of moves made
by tasks moved 5 or more times. Prints a Markdown table.
"""
import sys

import numpy as np
import pyarrow.parquet as pq

trace, runs = sys.argv[1], [a.split("=", 1) for a in sys.argv[2:]]
te = pq.read_table(f"{trace}/task_events",
                   columns=["time", "job_id", "task_index", "event_type"]).to_pandas()
key = ["job_id", "task_index"]
start = te[te.event_type == 1].groupby(key).time.min()
end = te[(te.event_type >= 2) & (te.event_type <= 6)].groupby(key).time.min()
print("| run | migrations | MB each | moves per task moved | by long-running tasks "
      "| moves per long-running task moved | MB each, long-running | MB each, shorter "
      "| moves by tasks moved 5+ times |")
print("|---|---|---|---|---|---|---|---|---|")
for label, run in runs:
    m = pq.read_table(f"{run}/migrations").to_pandas()
    m = m[m.outcome == "started"].copy()
    idx = list(zip(m.job_id.astype("int64"), m.task_index.astype("int64")))
    st, en = start.reindex(idx).to_numpy(), end.reindex(idx).to_numpy()
    run_h = (np.nan_to_num(en) - np.nan_to_num(st)) / 3.6e9
    m["long"] = np.isnan(en) | (run_h >= 6)
    moves = m.groupby(key).size()
    repeat = m.set_index(key).index.map(moves).to_numpy()
    long_moves = m[m.long].groupby(key).size()
    c, lr = m.cost_mb.to_numpy(), m.long.to_numpy()
    print(f"| {label} | {len(m):,} | {c.mean():.1f} | {len(m) / len(moves):.2f} "
          f"| {lr.mean() * 100:.1f} % | {long_moves.mean():.2f} | {c[lr].mean():.1f} "
          f"| {c[~lr].mean():.1f} | {(repeat >= 5).mean() * 100:.1f} % |")
