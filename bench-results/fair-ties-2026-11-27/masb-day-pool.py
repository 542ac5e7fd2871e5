"""Where MASB's migrations happen in day runs (fair-ties-2026-11-27.md, "Where the extra
migrations are"): started migrations, forced ones, collisions and tasks moved 100+ times, in all
and for the machines of the pool given (default: the five machines that alone hold the attribute
value 1,713 of the generated day's tasks require). Usage: python3 masb-day-pool.py RUN_DIR...
[--pool ID,ID,...]"""
import glob
import sys

import pandas as pd

args = sys.argv[1:]
pool = [6148250312, 4587373773, 2206422800, 4113741493, 4968591848]
if "--pool" in args:
    k = args.index("--pool")
    pool = [int(x) for x in args[k + 1].split(",")]
    args = args[:k] + args[k + 2 :]

for run in args:
    m = pd.concat(pd.read_parquet(p) for p in sorted(glob.glob(f"{run}/migrations/*.parquet")))
    started = m[m.outcome == "started"]
    forced = started[started.forced]
    in_pool = started.source_machine.isin(pool) | started.target_machine.isin(pool)
    outside = started[~in_pool]
    collisions = m[m.outcome == "collision"]
    moves = started.groupby(["job_id", "task_index"]).size()
    per_hour = (forced.time_us // 3_600_000_000).value_counts().sort_index().tolist()
    print(
        f"{run}: started {len(started):,} ({len(started) / 1440:.1f}/min), forced {len(forced):,}"
        f" | touching the pool {in_pool.sum():,} (forced {started[in_pool].forced.sum():,})"
        f" | outside it {len(outside):,} ({len(outside) / 1440:.1f}/min, forced {outside.forced.sum():,})"
        f" | collisions {len(collisions):,}, at the pool {collisions.target_machine.isin(pool).sum():,}"
        f" | tasks moved 100+ times {(moves >= 100).sum()}, most {moves.max()}"
        f" | forced per hour {per_hour}"
    )
