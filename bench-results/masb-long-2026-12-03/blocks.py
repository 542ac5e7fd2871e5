"""Table 4's shares block by block: for each run pattern (NAME:POLICY, runs NAME-seedN), the
mean over seeds FIRST-LAST of each class's share of the online nodes in every block of HOURS
simulated hours (masb-da's `runs.by_hour`, then the hours' mean), Table 4's column beside, the
seeds' least and most in the last block and how many seeds' last block is within issue 57's
band of Table 4 (MASB 5 points, Borg 3) and how many have every share in it in every block;
then, for each MASB pattern, its DA less the Borg pattern's in the same block and seed (mean
over seeds), beside Table 4's (22.56 - 36.74), and in how many seeds it is below in every block.
Usage: blocks.py DIR FIRST LAST HOURS NAME:POLICY ...  (POLICY masb or borg)"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../masb-da-2026-12-01"))
from runs import CLASSES, PAPER_BORG, PAPER_MASB, by_hour  # noqa: E402

TABLE_4 = {"masb": (PAPER_MASB, 5.0), "borg": (PAPER_BORG, 3.0)}
out, first, last, block = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
seeds = range(first, last + 1)
da = {}  # policy -> {name: [{block: DA} per seed]}
for spec in sys.argv[5:]:
    name, policy = spec.rsplit(":", 1)
    paper, points = TABLE_4[policy]
    runs = []  # per seed: {block: [share per class]}
    for seed in seeds:
        run = f"{out}/{name}-seed{seed}"
        hours = by_hour(run, CLASSES)
        whole = [h for h in hours if h < json.load(open(f"{run}/summary.json"))["simulated_s"] // 3600]
        blocks = {}
        for h in whole:
            blocks.setdefault(h // block, []).append(hours[h])
        runs.append({b: [sum(c) / len(c) for c in zip(*rows)] for b, rows in blocks.items()})
    da.setdefault(policy, {})[name] = [{b: r[b][CLASSES.index("da")] for b in r} for r in runs]
    print(f"## {name} ({policy}), seeds {first}-{last}: % of the online nodes by {block} h block")
    print(f"{'hours':<16}" + "".join(f"{c:>13}" for c in CLASSES))
    print(f"{'Table 4':<16}" + "".join(f"{p:>13.2f}" for p in paper))
    for b in sorted(runs[0]):
        mean = [sum(r[b][i] for r in runs) / len(runs) for i in range(len(CLASSES))]
        print(f"{f'{b * block}-{(b + 1) * block}':<16}" + "".join(f"{v:>13.2f}" for v in mean))
    end = max(runs[0])
    span = [(min(r[end][i] for r in runs), max(r[end][i] for r in runs))
            for i in range(len(CLASSES))]
    print(f"{'last least-most':<16}" + "".join(f"{f'{a:.2f}-{z:.2f}':>13}" for a, z in span))
    inside = ", ".join(
        f"{c} {sum(abs(r[end][i] - paper[i]) <= points for r in runs)}"
        for i, c in enumerate(CLASSES))
    print(f"last block within {points:g} points of Table 4, seeds of {len(runs)}: {inside}")
    every = [all(abs(r[b][i] - paper[i]) <= points for b in r for i in range(len(CLASSES)))
             for r in runs]
    print(f"every share within {points:g} points in every block: {sum(every)} of {len(runs)} seeds")
    print()

if "borg" in da and "masb" in da:
    (borg_name, borg), *_ = da["borg"].items()
    names = list(da["masb"])
    print(f"## DA less {borg_name}'s in the same block, mean over seeds")
    print(f"{'hours':<16}" + "".join(f"{n:>13}" for n in names))
    paper = PAPER_MASB[CLASSES.index("da")] - PAPER_BORG[CLASSES.index("da")]
    print(f"{'Table 4':<16}" + "".join(f"{paper:>13.2f}" for _ in names))
    for b in sorted(borg[0]):
        diffs = [sum(m[b] - g[b] for m, g in zip(da["masb"][n], borg)) / len(borg) for n in names]
        print(f"{f'{b * block}-{(b + 1) * block}':<16}" + "".join(f"{d:>13.2f}" for d in diffs))
    below = [sum(all(m[b] < g[b] for b in g) for m, g in zip(da["masb"][n], borg)) for n in names]
    print(f"{'below in every block, seeds':<16}" + "".join(f"{f'{k} of {len(borg)}':>13}" for k in below))
