#!/usr/bin/env python3
"""The clusters/ tables of NBS runs on micro-clusters (scripts/nbs-clusters.sh), one line each.

For every run directory: allocations (rows), quotes (solves asked for prices), and, over the
run's allocation times with each cluster's latest row carried forward, the mean spread across
clusters of load (demand over capacity: its coefficient of variation), the share of clusters
congested (a price above 0: their capacity binds) and the share of the cell's capacity given
out. A run on one cluster has no
clusters/ table: its line says so. Needs pandas and pyarrow.

Usage: scripts/nbs-clusters-summary.py RUN_DIR...
"""
import sys
from pathlib import Path

import pandas as pd


def summarise(run: Path) -> str:
    table = run / "clusters"
    if not table.is_dir():
        return f"| {run.parent.name} | 1 | - | - | - | - | - |"
    rows = pd.read_parquet(table)
    k = rows["cluster"].max() + 1
    wide = {c: rows.pivot_table(index="time_us", columns="cluster", values=c).ffill()
            for c in ["demand_cpu", "capacity_cpu", "share_cpu", "price"]}
    load = wide["demand_cpu"] / wide["capacity_cpu"]
    load_cv = (load.std(axis=1, ddof=0) / load.mean(axis=1)).mean()
    congested = (wide["price"] > 0).mean(axis=1).mean()
    given = (wide["share_cpu"].sum(axis=1) / wide["capacity_cpu"].sum(axis=1)).mean()
    return (f"| {run.parent.name} | {k} | {len(rows):,} | {int(rows['quotes'].sum()):,} | "
            f"{load_cv:.3f} | {100 * congested:.1f} | {100 * given:.1f} |")


def main() -> None:
    print("| run | clusters | allocations | quotes | load spread (CV of demand / capacity) "
          "| congested clusters % | capacity given out % |")
    print("|---|---|---|---|---|---|---|")
    for arg in sys.argv[1:]:
        print(summarise(Path(arg)))


if __name__ == "__main__":
    main()
