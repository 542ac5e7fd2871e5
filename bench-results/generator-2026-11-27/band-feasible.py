"""Which per-band memory usage/request ratios let Borg's own placements on the real trace stay
within capacity: at HOURS, for (gratis, middle, production) ratios on a grid, the cell's memory
used and the share of machines whose modelled usage exceeds their memory.
Usage: python3 band-feasible.py INGESTED_TRACE [HOURS]"""
import itertools
import sys
import numpy as np, pandas as pd
from gcd import state_at
trace = sys.argv[1]
hours = float(sys.argv[2]) if len(sys.argv) > 2 else 4.0
run, cap = state_at(trace, hours)
band = pd.cut(run.priority, [-1, 1, 8, 11], labels=["g", "m", "p"])
req = run.groupby(["machine_id", band], observed=False).memory_request.sum().unstack(fill_value=0)
req = req.reindex(cap.index, fill_value=0)
M = req[["g", "m", "p"]].to_numpy(); C = cap.memory.to_numpy()
print(f"t = {hours} h: {len(C)} machines; memory requested by band / capacity %:", (M.sum(0) / C.sum() * 100).round(1))
grid = np.round(np.arange(0.30, 1.001, 0.05), 2)
rows = []
for r in itertools.product(grid, repeat=3):
    use = M @ np.array(r)
    rows.append((*r, use.sum() / C.sum() * 100, (use > C).mean() * 100))
df = pd.DataFrame(rows, columns=["gratis", "middle", "production", "mem_used", "over"])
for lo, hi in [(61.5, 62.6), (60.0, 70.0)]:
    w = df[(df.mem_used >= lo) & (df.mem_used <= hi)]
    print(f"\ncell memory used {lo}-{hi} %: {len(w)} grid points; fewest machines over:")
    print(w.nsmallest(8, "over").to_string(index=False))
    print("flat ratios in it:"); print(w[(w.gratis == w.middle) & (w.middle == w.production)].to_string(index=False))
