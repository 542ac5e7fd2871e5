"""Per simulated hour, the share of online nodes in each class (ticks/), for the runs named.

Usage: per-hour.py OUT_DIR RUN [RUN ...]
"""
import glob
import sys

import pandas as pd

out = sys.argv[1]
for run in sys.argv[2:]:
    ticks = pd.concat(pd.read_parquet(f) for f in sorted(glob.glob(f"{out}/{run}/ticks/*.parquet")))
    ticks["hour"] = ticks["tick"] // 60
    by_hour = ticks.groupby("hour")[["sta", "ta", "pa", "da", "nodes_online"]].sum()
    shares = by_hour[["sta", "ta", "pa", "da"]].div(by_hour["nodes_online"], axis=0) * 100
    print(run)
    print(shares.round(1).T.to_string())
