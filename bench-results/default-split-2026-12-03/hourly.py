"""Table 4's shares hour by hour: for each run pattern (a name with `{}` for the seed), the mean
over the seeds of each class's share of the online nodes in every simulated hour from the run's
first tick (`ticks/`), with the seeds' least and most in hour 0 and the last whole hour, and
how many seeds' share in the last whole hour is within `points` of Table 4's column (MASB 5,
Borg 3: issue 57's bands; the columns are masb-da's `runs.py`).
Usage: hourly.py DIR FIRST_SEED LAST_SEED PATTERN:POLICY ...  (POLICY masb or borg)"""
import os
import sys

import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../masb-da-2026-12-01"))
from runs import CLASSES as ALL, PAPER_BORG, PAPER_MASB  # noqa: E402


def column(paper):
    """Table 4's STA, TA, PA and DA of `paper` (runs.py's CLASSES order) by class."""
    return {c: p for c, p in zip(ALL, paper) if c in ("sta", "ta", "pa", "da")}


TABLE_4 = {"masb": (column(PAPER_MASB), 5.0), "borg": (column(PAPER_BORG), 3.0)}
CLASSES = ["sta", "ta", "pa", "da", "overloaded"]
out, first, last = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for spec in sys.argv[4:]:
    pattern, policy = spec.rsplit(":", 1)
    paper, points = TABLE_4[policy]
    frames = []
    for seed in range(first, last + 1):
        t = pd.read_parquet(f"{out}/{pattern.format(seed)}/ticks")
        t["hour"] = ((t.time_us - t.time_us.min()) // 3_600_000_000).astype(int)
        for c in CLASSES:
            t[c] = 100 * t[c] / t.nodes_online
        # Whole hours only: the run's last ticks start an hour they do not fill.
        ticks = t.groupby("hour").size()
        t = t[t.hour.isin(ticks[ticks >= 0.9 * ticks.max()].index)]
        h = t.groupby("hour")[CLASSES].mean()
        h["seed"] = seed
        frames.append(h.reset_index())
    d = pd.concat(frames)
    print(f"## {pattern.format('N')}, seeds {first}-{last}: % of the online nodes, mean over seeds")
    print(d.groupby("hour")[CLASSES].mean().round(2).to_string())
    end = d[d.hour == d.hour.max()]
    for hour, rows in [(0, d[d.hour == 0]), (d.hour.max(), end)]:
        span = ", ".join(f"{c} {rows[c].min():.2f}-{rows[c].max():.2f}" for c in CLASSES[:4])
        print(f"hour {hour}, least-most over seeds: {span}")
    inside = ", ".join(
        f"{c} {int(((end[c] - p).abs() < points).sum())}" for c, p in paper.items()
    )
    print(f"last hour within {points:g} points of Table 4 ({policy}), "
          f"seeds of {len(end)}: {inside}")
    print()
