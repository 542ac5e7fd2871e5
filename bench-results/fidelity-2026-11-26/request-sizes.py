#!/usr/bin/env python3
"""Mean memory request of production (priority >= 9) and other tasks, in the real sample's
task_events (CSV) and in an ingested trace (fidelity-2026-11-26.md section 8).

Usage: request-sizes.py GCD_TASK_EVENTS_CSV_GZ TRACE_PARQUET_DIR

Each task counts once, with the request of its first SCHEDULE event; both traces are cut to the
real sample's span (its first ~29 minutes: the tasks running at t = 0 and those scheduled soon
after).
"""
import sys

import pandas as pd
import pyarrow.parquet as pq

names = ["time", "missing_info", "job_id", "task_index", "machine_id", "event_type", "user",
         "scheduling_class", "priority", "cpu_request", "memory_request",
         "disk_space_request", "different_machines"]
real = pd.read_csv(sys.argv[1], header=None, names=names)
generated = pq.read_table(f"{sys.argv[2]}/task_events",
                          columns=["job_id", "task_index", "event_type", "priority",
                                   "memory_request"]).to_pandas()
print("| tasks scheduled | production | mean memory request | others | mean memory request "
      "| production / others |")
print("|---|---|---|---|---|---|")
generated = generated.assign(time=pq.read_table(f"{sys.argv[2]}/task_events",
                                                columns=["time"]).column(0).to_numpy())
span_us = real.time.max() - real.time.min()
for label, te in [("real sample", real), ("generated", generated)]:
    te = te[te.time <= te.time.min() + span_us]
    s = te[te.event_type == 1].drop_duplicates(["job_id", "task_index"])
    prod, other = s[s.priority >= 9], s[s.priority < 9]
    ratio = prod.memory_request.mean() / other.memory_request.mean()
    print(f"| {label} | {len(prod):,} | {prod.memory_request.mean():.4f} | {len(other):,} "
          f"| {other.memory_request.mean():.4f} | {ratio:.2f} |")
