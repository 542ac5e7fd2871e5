"""Section (a7), second part: the offload's period calibrated on seed 000's cost per task
migration (Table 7, SIAS / SRAS: 338.09 MB) with twenty seeds. The least-squares line of each
run's MB per migration on its period (the periods given, seeds 1-20, one point a run) crosses
338.09 MB at the calibrated period, rounded to whole minutes; its standard error by the delta
method (the residuals' variance, the line's slope). At that period: each of seeds 1-20's Table 4
shares, migrations a minute and MB per migration, what lies more than 5 points from Table 4's
MASB column, the seeds' mean and how many seeds put every share within 5 points; Table 4's
orderings seed by seed against Borg's replay (borg-seedN in OUT); and, when OUT holds them
(section (a8), record.sh), the same MASB without offloads (masb-seedN), its mean over seeds 1-20.

    regress.py OUT P1 P2 ...            the calibrated period alone, in whole seconds
    regress.py OUT P1 P2 ... --at S     the table, S being the calibrated period
"""
import os
import statistics
import sys

from runs import (PAPER_BORG, PAPER_MASB, PAPER_MB, migration_row, offload_head, offload_row,
                  outside, show_offload, split_at, summary_row)

args, at = split_at(sys.argv[1:])
out, periods = args[0], sorted(int(p) for p in args[1:])
paper, paper_mb = PAPER_MASB, PAPER_MB
seeds = range(1, 21)


def row(every_s, seed):
    return offload_row(out, every_s, seed)


points = [(p, row(p, seed)[7]) for p in periods for seed in seeds]
x_mean = statistics.mean(x for x, _ in points)
y_mean = statistics.mean(y for _, y in points)
sxx = sum((x - x_mean) ** 2 for x, _ in points)
slope = sum((x - x_mean) * (y - y_mean) for x, y in points) / sxx
residual_var = sum((y - y_mean - slope * (x - x_mean)) ** 2 for x, y in points) / (len(points) - 2)
found = x_mean + (paper_mb - y_mean) / slope
found_se = (residual_var * (1 / len(points) + (found - x_mean) ** 2 / sxx)) ** 0.5 / abs(slope)
if at is None:
    print(60 * round(found / 60))
    sys.exit(0)


print(f"MB per migration on the period, {len(points)} runs ({periods[0]}-{periods[-1]} s, seeds"
      f" 1-20): slope {slope * 1000:.2f} MB per 1000 s, residual sd {residual_var ** 0.5:.1f} MB;")
print(f"  {paper_mb} MB at {found:.0f} s (standard error {found_se:.0f} s), run at {at} s")
for p in periods:
    costs = [row(p, seed)[7] for seed in seeds]
    pas = [row(p, seed)[4] for seed in seeds]
    print(f"  {p:>5} s: MB per migration {statistics.mean(costs):.1f}"
          f" (sd {statistics.stdev(costs):.1f}), PA {statistics.mean(pas):.2f} %"
          f" (sd {statistics.stdev(pas):.2f})")
offload_head(paper, paper_mb)
rows = [row(at, seed) for seed in seeds]
for seed, r in zip(seeds, rows):
    show_offload(f"{at:>6} seed {seed}", r, ", ".join(outside(r, paper)) or "-")
within = sum(not outside(r, paper) for r in rows)
show_offload(f"{at:>6} mean", [statistics.mean(c) for c in zip(*rows)],
             f"every share within 5 points in {within} of {len(rows)} seeds")

# Table 4's orderings, seed by seed, against Borg's replay under the same usage and seed.
borg = [summary_row(f"{out}/borg-seed{seed}") for seed in seeds]
below = [b[5] - m[5] for m, b in zip(rows, borg)]
ratios = [(m[4] / m[5], b[4] / b[5]) for m, b in zip(rows, borg)]
print(f"MASB's DA below Borg's in {sum(g > 0 for g in below)} of {len(rows)} seeds, by"
      f" {min(below):.2f}-{max(below):.2f} points (Table 4: {PAPER_BORG[5] - paper[5]:.2f}); its"
      f" PA:DA above"
      f" Borg's in {sum(m > b for m, b in ratios)} of {len(rows)}: {min(m for m, _ in ratios):.2f}"
      f"-{max(m for m, _ in ratios):.2f} against {min(b for _, b in ratios):.2f}"
      f"-{max(b for _, b in ratios):.2f} (Table 4: {paper[4] / paper[5]:.2f} against"
      f" {PAPER_BORG[4] / PAPER_BORG[5]:.2f})")

# The same configuration without offloads (masb-seed1..20 in OUT, when there: record.sh's).
if all(os.path.exists(f"{out}/masb-seed{seed}/summary.json") for seed in seeds):
    bare = [migration_row(f"{out}/masb-seed{seed}") for seed in seeds]
    within = sum(not outside(r, paper) for r in bare)
    print("\nWithout offloads (overload only), seeds 1-20:")
    offload_head(paper, paper_mb)
    show_offload("   off mean", [statistics.mean(c) for c in zip(*bare)],
                 f"every share within 5 points in {within} of {len(bare)} seeds; DA"
                 f" {min(r[5] for r in bare):.2f}-{max(r[5] for r in bare):.2f}")
