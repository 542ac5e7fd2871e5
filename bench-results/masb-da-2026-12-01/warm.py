"""Sections (a4) and (a5), the runs warm.sh makes: MASB from the trace's recorded placements
(`warm_start`) per seed and their mean beside Table 4's MASB column; seed 1 hour by hour with and
without offloads every 300 s; and, from seed 1's sampled offloads (`samples.jsonl` lines of kind
"scs" with "offload": true), how many of the offloading nodes were heavier in memory than in CPU
(used over capacity, summed over the node's tasks) and how many tasks each offload chose."""
import json
import sys

from runs import CLASSES, PAPER_MASB, by_hour, summary_row

out = sys.argv[1]
paper = PAPER_MASB
head = "".join(f"{k:>8}" for k in CLASSES)
print(f"{'run':<26}{head}{'mem %':>8}{'migr/min':>10}{'MB/migr':>9}")


def show(name, r):
    print(f"{name:<26}" + "".join(f"{v:>8.2f}" for v in r[:7]) + f"{r[7]:>10.1f}{r[8]:>9.0f}")


show("Table 4 MASB", paper + [62.05, 4409.0, 338.0])
rows = [summary_row(f"{out}/masb-warm-seed{seed}") for seed in (1, 2, 3)]
for seed, r in zip((1, 2, 3), rows):
    show(f"warm seed {seed}", r)
show("warm mean", [sum(col) / 3 for col in zip(*rows)])
for name in ("masb-warm-offload", "masb-offload"):
    show(f"{name[5:]} seed 1", summary_row(f"{out}/{name}-seed1"))

print("\nBy hour, seed 1: DA % of the online nodes (ticks/)")
for name in ("masb-warm", "masb-warm-offload", "masb-offload"):
    cells = [f"{da:6.1f}" for (da,) in by_hour(f"{out}/{name}-seed1", ["da"]).values()]
    print(f"{name[5:]:<16}" + "".join(cells))

print("\nSampled offloads, seed 1 (samples.jsonl)")
for name in ("masb-offload", "masb-offload-score"):
    heavy = lines = 0
    chosen, whole = [], {}  # whole: capacity -> [offloads, of them moving every task]
    for line in open(f"{out}/{name}-seed1/samples.jsonl"):
        s = json.loads(line)
        if s.get("kind") != "scs" or not s.get("offload"):
            continue
        lines += 1
        cpu = sum(t["cpu_use"] for t in s["tasks"]) / s["cpu_cap"]
        mem = sum(t["mem_use"] for t in s["tasks"]) / s["mem_cap"]
        heavy += mem > cpu
        chosen.append(sum(t["chosen"] for t in s["tasks"]))
        counts = whole.setdefault((s["cpu_cap"], s["mem_cap"]), [0, 0])
        counts[0] += 1
        counts[1] += chosen[-1] == len(s["tasks"])
    if not chosen:
        sys.exit(f"{out}/{name}-seed1/samples.jsonl: no sampled offload (kind scs, offload true)")
    chosen.sort()
    print(f"{name[5:]:<16}{lines} sampled, heavier in memory {heavy} ({100 * heavy / lines:.1f} %);"
          f" tasks chosen: median {chosen[len(chosen) // 2]}, middle half"
          f" {chosen[len(chosen) // 4]}-{chosen[3 * len(chosen) // 4]}, max {chosen[-1]}")
    print(" " * 16 + "moving every task of the node, by capacity (CPU / memory): " + ", ".join(
        f"{c:g} / {m:g}: {k} of {n}" for (c, m), (n, k) in sorted(whole.items())))
