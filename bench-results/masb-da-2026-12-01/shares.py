"""Table 4's shares, memory used and migrations of each run beside seed 000's, per seed and the
mean of seeds 1-3; how many seeds put every share within 5 points of the paper's column; and
how far MASB's DA lies below Borg's under the same usage model, per seed."""
import sys

from runs import CLASSES as classes, PAPER_BORG, PAPER_MASB, by_hour, summary_row

out = sys.argv[1]
paper = {"masb": PAPER_MASB, "borg": PAPER_BORG}
head = "".join(f"{k:>8}" for k in classes)
print(f"{'run':<22}{head}{'mem %':>8}{'migr/min':>10}{'MB/migr':>9}{'pending':>9}")


def row(run):
    return summary_row(f"{out}/{run}")


def show(name, r):
    print(f"{name:<22}" + "".join(f"{v:>8.2f}" for v in r[:7]) + f"{r[7]:>10.1f}{r[8]:>9.0f}"
          + f"{r[9]:>9.0f}")


das, pa_da = {}, {}
for kind, runs in [
    ("borg", ["borg", "borg-flat"]),
    ("masb", ["masb", "masb-score", "masb-asks1", "masb-asks3", "masb-flat", "masb-offload",
              "masb-offload-score", "masb-frac", "masb-offload-frac", "masb-offload-score-frac"]),
]:
    show(f"Table 4 {kind.upper()}", paper[kind] + [62.05, 4409.0 if kind == "masb" else 0.0,
                                                  338.0 if kind == "masb" else 0.0, 0.0])
    for name in runs:
        rows = [row(f"{name}-seed{seed}") for seed in (1, 2, 3)]
        for seed, r in zip((1, 2, 3), rows):
            show(f"{name} seed {seed}", r)
        show(f"{name} mean", [sum(col) / 3 for col in zip(*rows)])
        within = sum(all(abs(r[i] - p) <= 5 for i, p in enumerate(paper[kind])) for r in rows)
        print(f"  every share within 5 points of Table 4's {kind.upper()} column in {within} of 3"
              f" seeds; DA {min(r[5] for r in rows) - paper[kind][5]:+.2f}"
              f" .. {max(r[5] for r in rows) - paper[kind][5]:+.2f}")
        das[name] = [r[5] for r in rows]
        pa_da[name] = [r[4] / r[5] for r in rows]
for masb, borg in [("masb", "borg"), ("masb-flat", "borg-flat"), ("masb-offload", "borg"),
                   ("masb-offload-score", "borg")]:
    gaps = [b - m for m, b in zip(das[masb], das[borg])]
    print(f"DA {borg} - {masb}, seeds 1-3: " + " / ".join(f"{g:.2f}" for g in gaps)
          + f" (Table 4: {paper['borg'][5] - paper['masb'][5]:.2f})")
    higher = sum(m > b for m, b in zip(pa_da[masb], pa_da[borg]))
    print(f"  PA:DA {masb} above {borg} in {higher} of 3 seeds: "
          + " / ".join(f"{m:.2f}:{b:.2f}" for m, b in zip(pa_da[masb], pa_da[borg]))
          + f" (Table 4: {paper['masb'][4] / paper['masb'][5]:.2f}:"
          + f"{paper['borg'][4] / paper['borg'][5]:.2f})")

print("\n(a5) the offload's period, seed 1 (300 s: the rows above)")
for every_s in (60, 900, 3600):
    show(f"offload {every_s} s", row(f"masb-offload{every_s}-seed1"))

print("\nBy hour, seed 1: DA % / STA % of the online nodes (ticks/)")
for name in ("masb", "masb-offload", "masb-offload-score", "masb-offload-frac",
             "masb-offload-score-frac"):
    hours = by_hour(f"{out}/{name}-seed1", ["da", "sta"])
    cells = [f"{da:5.1f}/{sta:4.1f}" for da, sta in hours.values()]
    print(f"{name:<22}" + " ".join(cells))
