"""Section (a6): per period of the grid, each seed's Table 4 shares, migrations a minute and MB
per migration, and their means; the period at which the mean MB per migration equals seed 000's
cost per task migration (Table 7, SIAS / SRAS: 338.09 MB), interpolated linearly between the
two grid periods around it; how many seeds put every share within 5 points of Table 4's MASB
column; and, from the offload's own counters, what share of the migrations offloads started and
what one costs against a migration off an overloaded node (means of the seeds); and seed 1's
shares at the calibrated period hour by hour (`ticks/`).

    period.py OUT P1 P2 ...            the calibrated period alone, in whole seconds
    period.py OUT P1 P2 ... --at P     the table: the grid's rows, then the runs at P
"""
import json
import sys

from runs import (CLASSES as classes, PAPER_MASB, PAPER_MB, by_hour, offload_head, offload_row,
                  outside, show_offload, split_at)

args, at = split_at(sys.argv[1:])
out, grid = args[0], sorted(int(p) for p in args[1:])
paper, paper_mb = PAPER_MASB, PAPER_MB


def row(every_s, seed):
    return offload_row(out, every_s, seed)


def split(every_s, seed):
    """(share of the started migrations an offload started %, MB an offload's, MB another's)."""
    t = json.load(open(f"{out}/masb-offload{every_s}-seed{seed}/summary.json"))["totals"]
    started, cost = t["migrations_started"], t["migration_cost_mb"]
    offloads, offload_cost = t["offload_migrations"], t["offload_cost_mb"]
    return (100 * offloads / max(started, 1), offload_cost / max(offloads, 1),
            (cost - offload_cost) / max(started - offloads, 1))


def mean_mb(every_s):
    return sum(row(every_s, seed)[7] for seed in (1, 2, 3)) / 3


def calibrated():
    """(period, (lo, mb), (hi, mb)) where the grid's mean MB per migration crosses paper_mb."""
    mbs = [mean_mb(s) for s in grid]
    for (lo, a), (hi, b) in zip(zip(grid, mbs), zip(grid[1:], mbs[1:])):
        if min(a, b) <= paper_mb <= max(a, b):
            return lo + (hi - lo) * (paper_mb - a) / (b - a), (lo, a), (hi, b)
    sys.exit(f"the mean MB per migration does not cross {paper_mb} MB in the grid")


found, (lo, a), (hi, b) = calibrated()
if at is None:
    print(round(found))
    sys.exit(0)


offload_head(paper, paper_mb)
for every_s in grid + [at]:
    if every_s == at:
        print(f"\nThe grid's mean MB per migration reaches {paper_mb} MB between {lo} s ({a:.1f})"
              f" and {hi} s ({b:.1f}): calibrated period {found:.0f} s (linear); run at {at} s")
    rows = [row(every_s, seed) for seed in (1, 2, 3)]
    for seed, r in zip((1, 2, 3), rows):
        show_offload(f"{every_s:>6} seed {seed}", r, ", ".join(outside(r, paper)) or "-")
    within = sum(not outside(r, paper) for r in rows)
    show_offload(f"{every_s:>6} mean", [sum(col) / 3 for col in zip(*rows)],
                 f"every share within 5 points in {within} of 3 seeds")

print("\nThe migrations' mix (counters offload_migrations, offload_cost_mb; means of seeds 1-3)")
print(f"{'period s':<10}{'offloads %':>12}{'MB an offload':>15}{'MB another':>12}")
for every_s in grid + [at]:
    s = [sum(col) / 3 for col in zip(*(split(every_s, seed) for seed in (1, 2, 3)))]
    print(f"{every_s:>8}  {s[0]:>12.1f}{s[1]:>15.1f}{s[2]:>12.1f}")

print(f"\nBy hour at {at} s, seed 1 (ticks/): % of the online nodes")
print(f"{'hour':<6}" + "".join(f"{k:>11}" for k in classes))
print(f"{'T4':<6}" + "".join(f"{p:>11.2f}" for p in paper) + "  (Table 4 MASB, the month)")
for hour, shares in by_hour(f"{out}/masb-offload{at}-seed1", classes).items():
    print(f"{hour:<6}" + "".join(f"{v:>11.2f}" for v in shares))
