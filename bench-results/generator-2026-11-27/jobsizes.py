"""Job-level request sizes of the non-production jobs first seen after t = 0 (each job's median
CPU and memory request): quantiles, sigma from the 90th percentile, share above 0.1.
Usage: python3 jobsizes.py INGESTED_TRACE"""
import sys

import gcd, pandas as pd, numpy as np
tr = sys.argv[1]
read = lambda t: gcd.read(tr, t)
ev = read("task_events")
s = ev[(ev.event_type == 0) & (ev.time > 600_000_000)].drop_duplicates(["job_id","task_index"])
t0 = set(ev[ev.time <= 600_000_000].job_id)
s = s[~s.job_id.isin(t0)]
j = s.groupby("job_id").agg(n=("task_index","size"), cpu=("cpu_request","median"), mem=("memory_request","median"), prio=("priority","first"))
j = j[j.prio < 9]
for c in ["cpu", "mem"]:
    q = j[c].quantile([.1,.5,.9,.97]).round(4).to_dict()
    print(c, "job-level quantiles", q, "sigma from p90", round(np.log(q[.9]/q[.5])/1.2816,2), "share >0.1", round((j[c]>0.1).mean(),3), "mean", round(j[c].mean(),4))
