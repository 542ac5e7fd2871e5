"""What follows a run's end, by priority band and end kind (issue 57 item 4): after t = 0, the
share of each band's EVICT, FAIL, FINISH and KILL ends after which the same task is submitted
again within the trace, and the median delay to that SUBMIT. Ends in the trace's last hour are
left out (their resubmissions may fall past its end).
Usage: resubmits.py PARQUET_DIR..."""
import glob
import sys

import numpy as np
import pandas as pd

COLUMNS = ["time", "job_id", "task_index", "event_type", "priority"]
KINDS = {2: "EVICT", 3: "FAIL", 4: "FINISH", 5: "KILL"}

for parquet in sys.argv[1:]:
    parts = sorted(glob.glob(f"{parquet}/task_events/*.parquet"))
    df = pd.concat(pd.read_parquet(p, columns=COLUMNS) for p in parts)
    df["band"] = np.select([df.priority >= 9, df.priority >= 2], ["production", "middle"],
                           "gratis")
    last = df.time.max() - 3_600_000_000
    ends = df[df.event_type.isin(list(KINDS)) & (df.time > 0) & (df.time < last)]
    submits = df[df.event_type == 0][["time", "job_id", "task_index"]]
    submits = submits.rename(columns={"time": "again"}).sort_values("again")
    ends = ends.sort_values("time")
    paired = pd.merge_asof(ends, submits, left_on="time", right_on="again",
                           by=["job_id", "task_index"], direction="forward",
                           allow_exact_matches=True)
    paired["delay_s"] = (paired.again - paired.time) / 1e6
    print(f"== {parquet}")
    for band in ["gratis", "middle", "production"]:
        rows = paired[paired.band == band]
        cells = []
        for kind, name in KINDS.items():
            k = rows[rows.event_type == kind]
            if len(k):
                again = k.again.notna().mean()
                delay = k.delay_s.median()
                cells.append(f"{name} {len(k)}: again {again:.3f} (median {delay:.0f} s)")
        print(f"{band:<10} " + "; ".join(cells))
