#!/usr/bin/env python3
"""Which tasks MASB's migrations move by priority, per run (fidelity-2026-11-26.md section 9).

Usage: production-mix.py TRACE_PARQUET_DIR LABEL=RUN_DIR [LABEL=RUN_DIR ...]

For each run: started migrations, the share made by production tasks (priority >= 9, from the
task's first SCHEDULE row), MB each for production and other tasks, and the moves per
production task moved. Prints a Markdown table.
"""
import sys

import pyarrow.parquet as pq

trace, runs = sys.argv[1], [a.split("=", 1) for a in sys.argv[2:]]
key = ["job_id", "task_index"]
te = pq.read_table(f"{trace}/task_events",
                   columns=key + ["event_type", "priority"]).to_pandas()
priority = te[te.event_type == 1].drop_duplicates(key).set_index(key)[["priority"]]
print("| run | migrations | by production tasks | MB each, production | MB each, others "
      "| moves per production task moved |")
print("|---|---|---|---|---|---|")
for label, run in runs:
    m = pq.read_table(f"{run}/migrations").to_pandas()
    m = m[m.outcome == "started"].copy()
    m["job_id"], m["task_index"] = m.job_id.astype("int64"), m.task_index.astype("int64")
    m = m.join(priority, on=key)
    production = m.priority >= 9
    moved = m[production].groupby(key).size().shape[0]
    print(f"| {label} | {len(m):,} | {production.mean() * 100:.1f} % "
          f"| {m[production].cost_mb.mean():.1f} | {m[~production].cost_mb.mean():.1f} "
          f"| {production.sum() / max(1, moved):.2f} |")
