"""Borg's reservation rule read on its own placements: at HOURS into an ingested trace, the share
of machines whose production requests plus `a` times the other tasks' requests exceed the
machine's CPU or memory, for a few `a`; and the per-machine quantiles of each.
Usage: python3 reservation-bound.py INGESTED_TRACE [HOURS]"""
import sys
import numpy as np, pandas as pd
from gcd import state_at
tr = sys.argv[1]; hours = float(sys.argv[2]) if len(sys.argv) > 2 else 4.0
run, cap = state_at(tr, hours)
run["prod"] = run.priority >= 9
r = run.groupby(["machine_id", "prod"])[["cpu_request", "memory_request"]].sum().unstack(fill_value=0).reindex(cap.index, fill_value=0)
pc, nc = r[("cpu_request", True)] / cap.cpus, r[("cpu_request", False)] / cap.cpus
pm, nm = r[("memory_request", True)] / cap.memory, r[("memory_request", False)] / cap.memory
q = [.1, .5, .9, .99, 1.0]
for name, x in [("production CPU", pc), ("other CPU", nc), ("all CPU", pc + nc), ("production memory", pm), ("other memory", nm)]:
    print(f"{name} requested / capacity per machine: quantiles {x.quantile(q).round(3).to_dict()}")
for a in [0.2, 0.3, 0.5, 0.7]:
    print(f"a = {a}: machines with production + a x other requests above capacity: CPU {((pc + a * nc) > 1).mean() * 100:.1f} %, memory {((pm + a * nm) > 1).mean() * 100:.1f} %")
