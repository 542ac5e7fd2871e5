"""The work each run ran, hour by hour: for each run pattern (runs NAME-seedN in DIR, seeds
FIRST-LAST), the mean over seeds of each whole simulated hour's mean tasks running and tasks
waiting (`ticks/`), the 8 h mean, and each pattern's tasks running less the first pattern's
(Borg's replay) in the same hour and seed, with the seeds' least and most. Seed 000's Tables 5,
6 and 8 print 132,061 tasks a minute at the original workload (the month's mean; "the entire
GCD workload", 7.8), beside.
Usage: tasks.py DIR FIRST LAST NAME ...  (the first NAME is the reference)"""
import json
import sys

import pyarrow.parquet as pq

TABLE_5_TASKS = 132_061.15
out, first, last, names = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
seeds = range(first, last + 1)


def hours(run):
    """{hour: (mean tasks running, mean tasks waiting)} over the run's whole hours."""
    t = pq.read_table(f"{run}/ticks", columns=["tick", "tasks_running", "tasks_pending"])
    t = t.to_pydict()
    whole = json.load(open(f"{run}/summary.json"))["simulated_s"] // 3600
    by = {}
    for tick, running, waiting in zip(t["tick"], t["tasks_running"], t["tasks_pending"]):
        if tick // 60 < whole:
            by.setdefault(tick // 60, []).append((running, waiting))
    return {h: tuple(sum(c) / len(c) for c in zip(*rows)) for h, rows in sorted(by.items())}


runs = {n: [hours(f"{out}/{n}-seed{s}") for s in seeds] for n in names}
span = sorted(runs[names[0]][0])
mean = lambda xs: sum(xs) / len(xs)  # noqa: E731
for k, what in [(0, "tasks running"), (1, "tasks waiting")]:
    print(f"## {what}, thousands, mean of the hour's ticks, mean over seeds {first}-{last}")
    print(f"{'hour':<8}" + "".join(f"{n:>14}" for n in names))
    if k == 0:
        print(f"{'Table 5':<8}" + "".join(f"{TABLE_5_TASKS / 1e3:>14.2f}" for _ in names))
    for h in span + ["8 h"]:
        hs = span if h == "8 h" else [h]
        row = [mean([mean([r[x][k] for x in hs]) for r in runs[n]]) / 1e3 for n in names]
        print(f"{h:<8}" + "".join(f"{v:>14.2f}" for v in row))
    print()
ref = runs[names[0]]
print(f"## tasks running less {names[0]}'s, thousands: 8 h mean over seeds (least, most of any "
      "hour and seed)")
for n in names[1:]:
    diffs = [[r[h][0] - b[h][0] for h in span] for r, b in zip(runs[n], ref)]
    flat = [d for ds in diffs for d in ds]
    print(f"{n:<14} {mean([mean(d) for d in diffs]) / 1e3:>8.2f} "
          f"({min(flat) / 1e3:.2f}, {max(flat) / 1e3:.2f})")
