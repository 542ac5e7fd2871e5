"""Section (c): Table 4's two columns along the usage model's memory split. The memory shares
(other work, production) at `mix` of the way from the split (0.35, 0.85) to one share (0.66,
0.66), both set on Table 5's memory used (section (b)). Per mix, the mean over seeds 1-3 of
Borg's replay and of MASB's record (no offloads) against Table 4's Borg and MASB columns, the
cell's memory used, MASB's migrations, and seed by seed whether each meets its issue 57 band:
Borg every share within 3 points and at most 1 % overloaded (item 2), MASB every share within 5
points and at most 0.5 % overloaded (item 3); and Table 4's ordering, MASB's DA below Borg's.
The mix set on Table 4's Borg column alone: the one whose Borg replay (mean of seeds 1-3) is
nearest it, least squares over its six shares; there the same over seeds 1-20, and at the rest of
the band where seeds 1-3 fit both (0.375, 0.5).

    split.py --mixes           the mixes run on seeds 1-3, one per line
    split.py --robustness      the mixes besides the calibrated one run on seeds 1-20
    split.py --shares MIX      the `mem_ratio` array at MIX (gratis, middle, production)
    split.py --calibrate OUT   the mix set on Table 4's Borg column
    split.py OUT --at MIX      the tables over OUT's runs (split.sh), MIX the calibrated mix
"""
import statistics
import sys

from runs import CLASSES, PAPER_BORG, PAPER_MASB, outside, summary_row

MIXES = ["0", "0.125", "0.25", "0.375", "0.5", "0.75", "1"]
SPLIT, ONE_SHARE = (0.35, 0.85), (0.66, 0.66)
ROBUSTNESS = ["0.375", "0.5"]  # also over seeds 1-20 (split.sh)


def shares(mix):
    """(other work's, production's) memory share at `mix` of the way from the split."""
    m = float(mix)
    return tuple(a + (b - a) * m for a, b in zip(SPLIT, ONE_SHARE))


OVERLOADED = CLASSES.index("overloaded")
DA = CLASSES.index("da")


def mean(rows):
    return [statistics.mean(col) for col in zip(*rows)]


def borg_distance(out, mix):
    """Sum of squared differences, in points, of Borg's mean shares (seeds 1-3) from Table 4's."""
    r = mean([summary_row(f"{out}/borg-mix{mix}-seed{s}") for s in (1, 2, 3)])
    return sum((r[i] - p) ** 2 for i, p in enumerate(PAPER_BORG))


if sys.argv[1] in ("--mixes", "--robustness"):
    print("\n".join(MIXES if sys.argv[1] == "--mixes" else ROBUSTNESS))
    sys.exit(0)
if sys.argv[1] == "--shares":
    other, production = shares(sys.argv[2])
    print(f"[{other:.4f}, {other:.4f}, {production:.4f}]")
    sys.exit(0)
if sys.argv[1] == "--calibrate":
    print(min(MIXES, key=lambda mix: borg_distance(sys.argv[2], mix)))
    sys.exit(0)

out, at = sys.argv[1], sys.argv[sys.argv.index("--at") + 1]


def within(r, paper, points, overloaded_at_most):
    return not outside(r, paper, points) and r[OVERLOADED] <= overloaded_at_most


def line(label, r, paper):
    print(f"  {label:<14}" + "".join(f"{v:>8.2f}" for v in r[:6]) + f"{r[6]:>8.2f}"
          + "   " + " ".join(f"{k} {r[i] - p:+.2f}" for i, (k, p) in enumerate(zip(CLASSES, paper))
                           if k in ("sta", "pa", "da")))


print(f"{'':<16}" + "".join(f"{k:>8}" for k in CLASSES) + f"{'mem %':>8}   against Table 4")
print(f"  {'Table 4 Borg':<14}" + "".join(f"{v:>8.2f}" for v in PAPER_BORG) + f"{62.05:>8.2f}")
print(f"  {'Table 4 MASB':<14}" + "".join(f"{v:>8.2f}" for v in PAPER_MASB) + f"{62.05:>8.2f}")


def mix_rows(mix, seeds):
    """The mean of Borg and of MASB over `seeds` at `mix`, and the seed-by-seed counts."""
    other, production = shares(mix)
    borg = [summary_row(f"{out}/borg-mix{mix}-seed{s}") for s in seeds]
    masb = [summary_row(f"{out}/masb-mix{mix}-seed{s}") for s in seeds]
    n = len(seeds)
    print(f"mix {mix} (memory shares other {other:.4f}, production {production:.4f}), seeds "
          f"{seeds[0]}-{seeds[-1]}; Borg {borg_distance(out, mix):.2f} squared points from "
          "Table 4's Borg column (seeds 1-3)")
    line("Borg", mean(borg), PAPER_BORG)
    line("MASB record", mean(masb), PAPER_MASB)
    m = mean(masb)
    print(f"  MASB migrations a minute {m[7]:.1f} at {m[8]:.1f} MB (Table 7: 4,409 at 338.09, or "
          "~0.1 a minute as the month's total)")
    borg_ok = sum(within(r, PAPER_BORG, 3, 1.0) for r in borg)
    masb_ok = sum(within(r, PAPER_MASB, 5, 0.5) for r in masb)
    both = sum(within(b, PAPER_BORG, 3, 1.0) and within(m, PAPER_MASB, 5, 0.5)
               for b, m in zip(borg, masb))
    gaps = [b[DA] - m[DA] for b, m in zip(borg, masb)]
    print(f"  seeds: Borg in item 2's band {borg_ok}/{n}, MASB in item 3's {masb_ok}/{n}, both "
          f"{both}/{n}; MASB's DA below Borg's {sum(g > 0 for g in gaps)}/{n} (by "
          f"{min(gaps):.2f} .. {max(gaps):.2f}; Table 4: 14.18)")
    if n > 3:
        for s, m in zip(seeds, masb):
            far = outside(m, PAPER_MASB, 4)
            print(f"    seed {s:>2}: MASB DA {m[DA]:.2f}, PA {m[CLASSES.index('pa')]:.2f}, STA "
                  f"{m[CLASSES.index('sta')]:.2f}" + (f"; beyond 4 points: {', '.join(far)}"
                                                      if far else ""))


for mix in MIXES:
    mix_rows(mix, [1, 2, 3])
print(f"\nThe mix set on Table 4's Borg column (least squares, seeds 1-3): {at}")
mix_rows(at, list(range(1, 21)))
print("\nThe rest of the band where seeds 1-3 fit both columns:")
for mix in ROBUSTNESS:
    mix_rows(mix, list(range(1, 21)))
