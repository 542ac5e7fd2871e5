"""Run times by priority band (issue 57 item 4: "durations by priority"), in the real trace and in
generated cells: every run started after t = 0 (a SCHEDULE) paired with the same task's next
end (EVICT, FAIL, FINISH, KILL, LOST), counted apart from cellsim with pandas; the share of each
band's runs in the buckets `cellsim stats` uses, their number and median.
Usage: durations.py PARQUET_DIR...  (ingested traces: `cellsim ingest`)"""
import glob
import sys

import numpy as np
import pandas as pd

COLUMNS = ["time", "job_id", "task_index", "event_type", "priority"]
EDGES = [0, 60, 300, 1200, 3600, 21600, 1e12]
LABELS = ["<1m", "1-5m", "5-20m", "20-60m", "1-6h", ">=6h"]


def runs(parquet):
    parts = sorted(glob.glob(f"{parquet}/task_events/*.parquet"))
    df = pd.concat(pd.read_parquet(p, columns=COLUMNS) for p in parts)
    starts = df[(df.event_type == 1) & (df.time > 0)].rename(columns={"time": "start"})
    ends = df[df.event_type.isin([2, 3, 4, 5, 6])][["time", "job_id", "task_index"]]
    ends = ends.rename(columns={"time": "end"}).sort_values("end")
    paired = pd.merge_asof(starts.sort_values("start"), ends, left_on="start",
                           right_on="end", by=["job_id", "task_index"], direction="forward")
    paired = paired.dropna(subset=["end"])
    paired["run_s"] = (paired.end - paired.start) / 1e6
    paired["band"] = np.select([paired.priority >= 9, paired.priority >= 2],
                               ["production", "middle"], "gratis")
    paired["bucket"] = pd.cut(paired.run_s, EDGES, labels=LABELS, right=False)
    table = pd.crosstab(paired.band, paired.bucket, normalize="index").round(3)
    table["runs"] = paired.groupby("band").size()
    table["median_s"] = paired.groupby("band").run_s.median().round(0)
    return table


for parquet in sys.argv[1:]:
    print(f"== {parquet}")
    print(runs(parquet).to_string())
