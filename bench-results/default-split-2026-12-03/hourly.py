"""Table 4's shares hour by hour: for each run pattern (a name with `{}` for the seed), the mean
over the seeds of each class's share of the online nodes in every simulated hour from the
run's first tick (`ticks/`), with the seeds' least and most in hour 0 and the last whole hour, and how many seeds' share
in the last whole hour is within `points` of Table 4's column (MASB 5, Borg 3: issue 57's
bands).
Usage: hourly.py DIR FIRST_SEED LAST_SEED PATTERN:COLUMN ...  (COLUMN masb or borg)"""
import sys
import pandas as pd

TABLE_4 = {
    "masb": ({"sta": 3.91, "ta": 4.53, "pa": 68.28, "da": 22.56}, 5.0),
    "borg": ({"sta": 6.58, "ta": 3.69, "pa": 52.94, "da": 36.74}, 3.0),
}
CLASSES = ["sta", "ta", "pa", "da", "overloaded"]
out, first, last = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for spec in sys.argv[4:]:
    pattern, column = spec.rsplit(":", 1)
    paper, points = TABLE_4[column]
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
    print(f"last hour within {points:g} points of Table 4 ({column}), seeds of {len(end)}: {inside}")
    print()
