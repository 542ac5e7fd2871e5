"""Table 4's shares and the work carried, mean over seeds FIRST-LAST, for each of the runs
{real,plain,held}-{borg,masb,record}-seedN in DIR: the six classes (% of the online nodes),
memory requested and used (% of capacity), tasks running and waiting (thousands), migrations a
minute; Table 4's columns beside.
Usage: shares.py DIR FIRST LAST"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../masb-da-2026-12-01"))
from runs import CLASSES, PAPER_BORG, PAPER_MASB  # noqa: E402

out, first, last = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
COLUMNS = CLASSES + ["mem req", "mem used", "running k", "waiting k", "migr/min"]


def row(run):
    s = json.load(open(f"{out}/{run}/summary.json"))
    a, c = s["averages"], s["averages"]["classes"]
    online = a["nodes_online"]
    done = s["totals"].get("migrations_completed", 0.0)
    return [100 * c.get(k, 0.0) / online for k in CLASSES] + [
        100 * a["mem_requested_ratio"], 100 * a["mem_used_ratio"],
        a["tasks_running"] / 1e3, a["tasks_pending"] / 1e3, done / (s["simulated_s"] / 60)]


print(f"## mean over seeds {first}-{last}")
print(f"{'run':<16}" + "".join(f"{c:>11}" for c in COLUMNS))
for name, paper in [("Table 4 Borg", PAPER_BORG), ("Table 4 MASB", PAPER_MASB)]:
    print(f"{name:<16}" + "".join(f"{v:>11.2f}" for v in paper))
for policy in ["borg", "masb", "record"]:
    for cell in ["real", "plain", "held"]:
        rows = [row(f"{cell}-{policy}-seed{s}") for s in range(first, last + 1)]
        mean = [sum(col) / len(col) for col in zip(*rows)]
        print(f"{f'{cell}-{policy}':<16}" + "".join(f"{v:>11.2f}" for v in mean))
