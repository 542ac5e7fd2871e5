"""How the nodes' memory and CPU use spread at one nodes/ sample (the 4th, 5 h into the run),
and which resource puts a node in DA, for the runs named.

Usage: memory-spread.py OUT_DIR RUN [RUN ...]
"""
import glob
import sys

import pandas as pd

out = sys.argv[1]
print("run, tick: DA by memory / by CPU, PA (% of nodes); memory used / capacity at the "
      "10th, 25th, 50th, 75th, 90th percentile; CPU at the 25th, 50th, 75th")
for run in sys.argv[2:]:
    nodes = pd.concat(pd.read_parquet(f) for f in sorted(glob.glob(f"{out}/{run}/nodes/*.parquet")))
    nodes = nodes[nodes["time_us"] == sorted(nodes["time_us"].unique())[3]]
    nodes = nodes[nodes["cpu_cap"] > 0]
    cpu, mem = nodes.cpu_used / nodes.cpu_cap, nodes.mem_used / nodes.mem_cap
    busy = nodes.task_count > 0
    mem_da = ((mem >= 0.7) & (mem < 0.9) & (cpu < 0.7)).mean() * 100
    cpu_da = ((cpu >= 0.7) & (cpu < 0.9) & (mem < 0.7)).mean() * 100
    pa = ((cpu < 0.7) & (mem < 0.7) & busy).mean() * 100
    print(f"{run}, tick {nodes.tick.iloc[0]}: DA {mem_da:.1f} / {cpu_da:.1f}, PA {pa:.1f}; "
          f"memory {mem.quantile([.1, .25, .5, .75, .9]).round(2).tolist()}; "
          f"CPU {cpu.quantile([.25, .5, .75]).round(2).tolist()}")
