#!/usr/bin/env python3
"""Quantiles of the cost of MASB's started migrations, per run (fidelity-2026-11-26.md, 9, 11).

Usage: cost-quantiles.py RUN_DIR [RUN_DIR ...]

For each run: started migrations, mean, p50, p90, p99, p99.9 and largest MB, the share of the
total cost made by the dearest 1 % of migrations, and the forced share. One line per run.
"""
import sys

import numpy as np
import pyarrow.parquet as pq

for run in sys.argv[1:]:
    m = pq.read_table(f"{run}/migrations").to_pandas()
    m = m[m.outcome == "started"]
    cost = np.sort(m.cost_mb.values)
    top = cost[::-1][: max(1, len(cost) // 100)].sum() / cost.sum()
    q = {p: np.quantile(cost, p) for p in (0.5, 0.9, 0.99, 0.999)}
    print(f"{run}: n={len(cost):,} mean={cost.mean():.1f} p50={q[0.5]:.0f} p90={q[0.9]:.0f} "
          f"p99={q[0.99]:.0f} p99.9={q[0.999]:.0f} max={cost[-1]:.0f} "
          f"top 1 % share={top:.2f} forced={m.forced.mean():.3f}")
