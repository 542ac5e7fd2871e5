#!/usr/bin/env python3
"""NBS runs on micro-clusters (scripts/nbs-clusters.sh), one line each, then per-seed counts.

For every run directory (OUT/NAME/nbs, NAME as k<K>-<variant>[-s<seed>]): the jobs that ended
with a hard and with a soft deadline and the share that met it (latency <= 0, as `cellsim
report`); from its clusters/ table, allocations, quotes (solves asked for prices), and, over the
run's allocation times with each cluster's latest row carried forward, the mean spread across
clusters of load (demand over capacity: its coefficient of variation), the share of clusters
congested (a price above 0: their capacity binds) and the share of the cell's capacity given
out. A run on one cluster has no clusters/ table: its line says so. With seeds, for each
cluster count the seeds where choosing by price (each quote variant) met more deadlines than
the price-blind draw with the same seed or had a smaller load spread (the seed's earlier work:
prices balance load), and where it met more than one cluster (k1). Needs pandas and pyarrow.

Usage: scripts/nbs-clusters-summary.py RUN_DIR...
"""
import re
import sys
from collections import defaultdict
from pathlib import Path

import pandas as pd


def met(run: Path) -> dict:
    jobs = pd.read_parquet(run / "jobs", columns=["deadline_hard", "latency_us"])
    jobs = jobs[jobs["deadline_hard"].notna()]
    out = {}
    for hard, kind in [(True, "hard"), (False, "soft")]:
        of_kind = jobs[jobs["deadline_hard"] == hard]
        out[kind] = (len(of_kind), 100.0 * (of_kind["latency_us"] <= 0).mean())
    return out


def clusters(run: Path) -> tuple:
    """The table's columns for `run`, and its load spread (None on one cluster)."""
    table = run / "clusters"
    if not table.is_dir():
        return "1 | - | - | - | - | -", None
    rows = pd.read_parquet(table)
    k = rows["cluster"].max() + 1
    wide = {c: rows.pivot_table(index="time_us", columns="cluster", values=c).ffill()
            for c in ["demand_cpu", "capacity_cpu", "share_cpu", "price"]}
    load = wide["demand_cpu"] / wide["capacity_cpu"]
    load_cv = (load.std(axis=1, ddof=0) / load.mean(axis=1)).mean()
    congested = (wide["price"] > 0).mean(axis=1).mean()
    given = (wide["share_cpu"].sum(axis=1) / wide["capacity_cpu"].sum(axis=1)).mean()
    # Rows where it only quoted (`allocated` false; tables before that column: none).
    allocations = int(rows["allocated"].sum()) if "allocated" in rows else len(rows)
    return (f"{k} | {allocations:,} | {int(rows['quotes'].sum()):,} | {load_cv:.3f} | "
            f"{100 * congested:.1f} | {100 * given:.1f}"), load_cv


def main() -> None:
    print("| run | hard jobs / met % | soft jobs / met % | clusters | allocations | quotes "
          "| load spread (CV of demand / capacity) | congested clusters % "
          "| capacity given out % |")
    print("|---|---|---|---|---|---|---|---|---|")
    by = {}
    for arg in sys.argv[1:]:
        run = Path(arg)
        m = met(run)
        name = run.parent.name
        columns, m["load"] = clusters(run)
        print(f"| {name} | {m['hard'][0]} / {m['hard'][1]:.1f} | {m['soft'][0]} / "
              f"{m['soft'][1]:.1f} | {columns} |")
        parsed = re.fullmatch(r"k(\d+)(?:-(.+))?-s(\d+)", name)
        if parsed:
            by[(int(parsed[1]), parsed[2] or "", int(parsed[3]))] = m
    if not by:
        return
    print()
    print("| clusters | by price, quoted | seeds meeting more hard deadlines than the draw "
          "| more soft | both | smaller load spread than the draw "
          "| more hard and soft met than one cluster |")
    print("|---|---|---|---|---|---|---|")
    counts = defaultdict(lambda: [0] * 6)
    for (k, variant, seed), m in sorted(by.items()):
        blind = by.get((k, "random", seed))
        one = by.get((1, "", seed))
        if variant in ("random", "") or blind is None:
            continue
        c = counts[(k, variant)]
        hard, soft = m["hard"][1] > blind["hard"][1], m["soft"][1] > blind["soft"][1]
        c[0] += hard
        c[1] += soft
        c[2] += hard and soft
        c[3] += m["load"] < blind["load"]
        c[4] += one is not None and m["hard"][1] > one["hard"][1] and m["soft"][1] > one["soft"][1]
        c[5] += 1
    for (k, variant), (hard, soft, both, load, one, n) in sorted(counts.items()):
        print(f"| {k} | {variant} | {hard} of {n} | {soft} of {n} | {both} of {n} "
              f"| {load} of {n} | {one} of {n} |")


if __name__ == "__main__":
    main()
