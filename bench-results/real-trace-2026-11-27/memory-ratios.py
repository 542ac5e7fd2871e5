"""What a flat memory usage/request ratio does to Borg's own placements on the real trace
(real-trace-2026-11-27.md): at HOURS, the share of machines whose running tasks' memory requests
times the ratio exceed the machine's memory, and the cell's memory used. Straight from the
ingested task_events and machine_events, without cellsim's replay.
Usage: python3 memory-ratios.py INGESTED_TRACE [HOURS]"""
import glob
import sys

import pandas as pd

trace = sys.argv[1]
hours = float(sys.argv[2]) if len(sys.argv) > 2 else 4.0
read = lambda table: pd.concat(
    pd.read_parquet(p) for p in sorted(glob.glob(f"{trace}/{table}/*.parquet"))
).sort_values("time", kind="stable")
events, machines = read("task_events"), read("machine_events")
at = 600_000_000 + int(hours * 3600e6)
last = events[events.time <= at].groupby(["job_id", "task_index"]).tail(1)
running = last[last.event_type.isin([1, 8])]  # SCHEDULE, UPDATE_RUNNING
cap = machines[machines.time <= at].groupby("machine_id").tail(1)
cap = cap[cap.event_type != 1].set_index("machine_id")[["cpus", "memory"]]
per_machine = running.groupby("machine_id").memory_request.sum().to_frame().join(cap, how="right").fillna(0)
for ratio in [0.60, 0.62, 0.63, 0.65, 0.70]:
    over = (per_machine.memory_request * ratio > per_machine.memory).mean() * 100
    used = per_machine.memory_request.sum() * ratio / per_machine.memory.sum() * 100
    print(f"t = {hours} h, memory ratio {ratio:.2f}: machines over their memory {over:.2f} %, cell memory used {used:.1f} %")
# Whose requests the machines over their memory at 0.70 hold, by priority band, against the cell.
band = pd.cut(running.priority, [-1, 1, 8, 11], labels=["gratis", "middle", "production"])
by_band = running.groupby(["machine_id", band], observed=True).memory_request.sum().unstack(fill_value=0)
over = per_machine.index[per_machine.memory_request * 0.70 > per_machine.memory]
share = lambda rows: (rows.sum() / rows.sum().sum() * 100).round(1).to_dict()
print(f"{len(over)} machines over at 0.70; their memory requests by band %: {share(by_band.loc[by_band.index.intersection(over)])}; the cell's: {share(by_band)}")
