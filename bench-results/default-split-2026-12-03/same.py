"""Whether two runs are the same run: their summary.json (its build, config, wall time, speed and
peak memory aside) and their ticks/ tables equal. Usage: same.py OUT RUN_A RUN_B"""
import json
import sys
import pandas as pd

out, a, b = sys.argv[1:4]


def summary(run):
    s = json.load(open(f"{out}/{run}/summary.json"))
    for key in ("builds", "config", "wall_s", "speed_x_real_time", "peak_rss_mb"):
        s.pop(key, None)
    return s


def ticks(run):
    t = pd.read_parquet(f"{out}/{run}/ticks").sort_values("tick").reset_index(drop=True)
    return t.drop(columns=[c for c in t.columns if "wall" in c])


same = summary(a) == summary(b) and ticks(a).equals(ticks(b))
print(f"{a} {'=' if same else '!='} {b}: summary and ticks/ {'equal' if same else 'DIFFER'}")
