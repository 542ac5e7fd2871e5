"""Shared by the section scripts: what they read of one run's outputs (`summary.json`'s
averages and totals; `ticks/` for the hour-by-hour shares). Shares are % of the online nodes."""
import json

import pyarrow.parquet as pq

CLASSES = ["idle", "overloaded", "sta", "ta", "pa", "da"]


def summary_row(run_dir):
    """Table 4's shares (CLASSES order), memory used %, migrations completed a minute, MB per
    completed migration, tasks waiting (mean) of the run in `run_dir`."""
    s = json.load(open(f"{run_dir}/summary.json"))
    a = s["averages"]
    c = a["classes"]
    online = sum(v for k, v in c.items() if k != "offline")
    done = s["totals"].get("migrations_completed", 0.0)
    cost = s["totals"].get("migration_cost_mb", 0.0)
    return [100 * c[k] / online for k in CLASSES] + [
        100 * a["mem_used_ratio"],
        done / (s["simulated_s"] / 60),
        cost / max(done, 1),
        a["tasks_pending"],
    ]


def by_hour(run_dir, classes):
    """{hour: [mean % of the online nodes in each of `classes`]}, hours in order."""
    t = pq.read_table(f"{run_dir}/ticks").to_pydict()
    hours = {}
    for i, tick in enumerate(t["tick"]):
        online = t["nodes_online"][i]
        hours.setdefault(tick // 60, []).append([100 * t[k][i] / online for k in classes])
    return {h: [sum(col) / len(col) for col in zip(*rows)] for h, rows in sorted(hours.items())}
