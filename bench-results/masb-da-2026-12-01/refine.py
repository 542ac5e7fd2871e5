"""Section (a7): one regula-falsi step of (a6)'s calibration of the offload's period on seed 000's
cost per task migration (Table 7, SIAS / SRAS: 338.09 MB). The line through (the calibrated
period AT, the seeds' mean MB per migration there) and (the grid period on the other side of
338.09 MB nearest AT, its mean) crosses 338.09 MB at the step's period, rounded to whole minutes.
Means over seeds 1-3, the calibration's seeds. At the step's period: each of seeds 1-6, Table 4's
shares, migrations a minute and MB per migration, what lies more than 5 points from Table 4's
MASB column; the mean MB per migration of seeds 1-3 and its standard error; how many seeds put
every share within 5 points.

    refine.py OUT AT P1 P2 ...            the step's period alone, in whole seconds
    refine.py OUT AT P1 P2 ... --at S     the table, S being the step's period
"""
import statistics
import sys

from runs import PAPER_MASB, PAPER_MB, offload_head, offload_row, outside, show_offload, split_at

args, step = split_at(sys.argv[1:])
out, at, grid = args[0], int(args[1]), sorted(int(p) for p in args[2:])
paper, paper_mb = PAPER_MASB, PAPER_MB
calibration_seeds = (1, 2, 3)


def row(every_s, seed):
    return offload_row(out, every_s, seed)


def mbs(every_s, seeds=calibration_seeds):
    return [row(every_s, seed)[7] for seed in seeds]


def bracket():
    """The grid period nearest `at` whose mean MB per migration lies across paper_mb from at's."""
    side = statistics.mean(mbs(at)) < paper_mb
    across = [p for p in grid if (statistics.mean(mbs(p)) > paper_mb) == side]
    if not across:
        sys.exit(f"no grid period's mean MB per migration lies across {paper_mb} MB from {at} s's")
    return min(across, key=lambda p: abs(p - at))


other = bracket()
a, b = statistics.mean(mbs(at)), statistics.mean(mbs(other))
found = at + (other - at) * (paper_mb - a) / (b - a)
if step is None:
    print(60 * round(found / 60))
    sys.exit(0)


print(f"Regula falsi from {at} s (mean {a:.1f} MB, seeds 1-3) and {other} s ({b:.1f} MB):"
      f" {paper_mb} MB at {found:.0f} s, run at {step} s")
offload_head(paper, paper_mb)
rows = {seed: row(step, seed) for seed in range(1, 7)}
for seed, r in rows.items():
    show_offload(f"{step:>6} seed {seed}", r, ", ".join(outside(r, paper)) or "-")
for seeds in (calibration_seeds, tuple(rows)):
    chosen = [rows[s] for s in seeds]
    within = sum(not outside(r, paper) for r in chosen)
    show_offload(f"{step:>6} mean {seeds[0]}-{seeds[-1]}",
                 [statistics.mean(c) for c in zip(*chosen)],
                 f"every share within 5 points in {within} of {len(seeds)} seeds")
for seeds in (calibration_seeds, tuple(rows)):
    costs = [rows[s][7] for s in seeds]
    mean, se = statistics.mean(costs), statistics.stdev(costs) / len(costs) ** 0.5
    print(f"MB per migration, seeds {seeds[0]}-{seeds[-1]} at {step} s: mean {mean:.1f}, standard"
          f" error {se:.1f}; {paper_mb} is {abs(mean - paper_mb) / se:.1f} standard errors away")
