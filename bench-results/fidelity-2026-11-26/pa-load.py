#!/usr/bin/env python3
"""PA and DA against the load within runs (fidelity-2026-11-26.md section 10).

Usage: pa-load.py LABEL=RUN_DIR [LABEL=RUN_DIR ...]

For each run, over its ticks after the first hour: the mean memory used, PA and DA shares of the
online nodes in the ticks of the lowest and the highest third of memory used, and the
correlation of memory used with the PA share. Prints a Markdown table.
"""
import sys, pyarrow.parquet as pq, numpy as np
print("| run | hours | memory used, low / high third | PA %, low / high third | DA %, low / high third | corr(memory used, PA) |")
print("|---|---|---|---|---|---|")
for a in sys.argv[1:]:
    label, run = a.split("=",1)
    t = pq.read_table(f"{run}/ticks").to_pandas()
    t = t[t.tick >= 60]  # after the first hour
    n = t.nodes_online
    pa, da = 100*t.pa/n, 100*t.da/n
    mem = 100*t.mem_used_ratio
    lo, hi = mem.quantile(1/3), mem.quantile(2/3)
    L, H = mem <= lo, mem >= hi
    print(f"| {label} | {len(t)/60:.0f} | {mem[L].mean():.1f} / {mem[H].mean():.1f} | {pa[L].mean():.1f} / {pa[H].mean():.1f} | {da[L].mean():.1f} / {da[H].mean():.1f} | {np.corrcoef(mem, pa)[0,1]:+.2f} |")
