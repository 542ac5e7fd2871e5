"""Runs per task and how runs end, by priority band (issue 57 item 4), in ingested traces: after
t = 0, the SCHEDULEs of each band, the tasks they ran, SCHEDULEs per task, the SUBMITs and the
tasks submitted, and the shares of the ends (2 EVICT, 3 FAIL, 4 FINISH, 5 KILL, 6 LOST).
Usage: runs_per_task.py PARQUET_DIR..."""
import glob
import sys

import numpy as np
import pandas as pd

COLUMNS = ["time", "job_id", "task_index", "event_type", "priority"]

for parquet in sys.argv[1:]:
    parts = sorted(glob.glob(f"{parquet}/task_events/*.parquet"))
    df = pd.concat(pd.read_parquet(p, columns=COLUMNS) for p in parts)
    df["band"] = np.select([df.priority >= 9, df.priority >= 2], ["production", "middle"],
                           "gratis")
    after = df[df.time > 0]
    print(f"== {parquet}")
    for band in ["gratis", "middle", "production"]:
        rows = after[after.band == band]
        starts = rows[rows.event_type == 1]
        tasks = starts.groupby(["job_id", "task_index"]).size()
        submits = rows[rows.event_type == 0]
        ends = rows[rows.event_type.isin([2, 3, 4, 5, 6])].event_type
        shares = ends.value_counts(normalize=True).round(3).sort_index().to_dict()
        print(f"{band:<10} schedules {len(starts)} tasks {len(tasks)} runs/task "
              f"{tasks.mean():.2f} submits {len(submits)} "
              f"tasks submitted {submits.groupby(['job_id', 'task_index']).ngroups} "
              f"ends {shares}")
