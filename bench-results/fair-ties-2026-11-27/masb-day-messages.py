"""The SAN message counts of MASB day runs (fair-ties-2026-11-27.md): sums of the runs'
`ticks/` message columns. Usage: python3 masb-day-messages.py RUN_DIR..."""
import glob
import sys

import pandas as pd

for run in sys.argv[1:]:
    t = pd.concat(pd.read_parquet(p) for p in sorted(glob.glob(f"{run}/ticks/*.parquet")))
    s = t[[c for c in t.columns if c.startswith("msg_")]].sum()
    req, proc = s["msg_task_migration_request"], s["msg_task_migration_process_request"]
    print(
        f"{run}: SAN processes started {s['msg_get_candidate_nodes_request']:,} | "
        f"migration requests {req:,}, accepted {s['msg_task_migration_acceptance_response'] / req:.3f} | "
        f"process requests {proc:,}, failing the final check {s['msg_task_migration_process_error_response'] / proc:.3f} | "
        f"allocation requests {s['msg_allocation_request']:,}"
    )
