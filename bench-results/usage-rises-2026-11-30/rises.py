"""Seed 000 Table 2 beside each run: from `ticks/`'s usage_rises_<N>pct columns, the average
(over every tick after the first, which has no tick before it) and the peak per minute."""
import sys
import pandas as pd

PAPER = {5: (659, 7538), 10: (212, 4362), 15: (66, 2390), 20: (47, 1925), 25: (26, 1135)}
out, runs = sys.argv[1], sys.argv[2:]
print(f"{'run':<22}" + "".join(f"{f'> {p} %':>14}" for p in PAPER))
print(f"{'Table 2':<22}" + "".join(f"{f'{a} / {k}':>14}" for a, k in PAPER.values()))
for run in runs:
    t = pd.read_parquet(f"{out}/{run}/ticks").sort_values("tick").iloc[1:]
    cells = []
    for p in PAPER:
        c = t[f"usage_rises_{p}pct"]
        cells.append(f"{c.mean():.0f} / {c.max()}")
    print(f"{run:<22}" + "".join(f"{c:>14}" for c in cells))
