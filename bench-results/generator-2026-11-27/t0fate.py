"""What becomes of an ingested trace's t = 0 tasks within 8 h (their next event, by band and
state), and how long new tasks wait to be scheduled. Usage: python3 t0fate.py INGESTED_TRACE"""
import sys

import gcd
import pandas as pd
trace = sys.argv[1]; end = 600_000_000 + int(8 * 3600e6)
read = lambda t: gcd.read(trace, t)
ev = read("task_events"); ev = ev[ev.time <= end]
band = lambda p: pd.cut(p, [-1, 1, 8, 11], labels=["gratis", "middle", "prod"])
t0 = ev[ev.time <= 600_000_000].groupby(["job_id", "task_index"]).tail(1)
later = ev[ev.time > 600_000_000].groupby(["job_id", "task_index"]).event_type.first().rename("next")
t0 = t0.join(later, on=["job_id", "task_index"])
names = {0: "SUBMIT", 1: "SCHEDULE", 2: "EVICT", 3: "FAIL", 4: "FINISH", 5: "KILL", 6: "LOST", 7: "UPD_P", 8: "UPD_R"}
for state, types in [("running", [1, 8]), ("pending", [0, 7])]:
    s = t0[t0.event_type.isin(types)]
    print(state, "next event within 8 h by band:")
    print(s.groupby([band(s.priority)], observed=False).next.apply(lambda x: x.map(names).fillna("none").value_counts(normalize=True).round(3).to_dict()).to_string())
    print(state, "scheduling class by band:", s.groupby([band(s.priority), "scheduling_class"], observed=True).size().to_dict())
# pending tasks over time: how long do tasks wait from SUBMIT to SCHEDULE (new tasks)
e = ev[ev.event_type.isin([0, 1, 2, 3, 4, 5, 6])][["time", "job_id", "task_index", "event_type", "priority", "memory_request"]].copy()
e["nt"] = e.groupby(["job_id", "task_index"]).time.shift(-1); e["nx"] = e.groupby(["job_id", "task_index"]).event_type.shift(-1)
w = e[(e.event_type == 0) & (e.time > 600_000_000)]
wait = (w.nt - w.time) / 1e6
print("after t0 SUBMITs:", len(w), "next:", w.nx.map(names).fillna("none").value_counts(normalize=True).round(3).to_dict())
print("wait to SCHEDULE quantiles (s):", wait[w.nx == 1].quantile([.5, .9, .99]).round(1).to_dict())
ww = w[w.nx.isna()]
print("still pending at 8h:", len(ww), "by band", ww.groupby(band(ww.priority), observed=False).size().to_dict(), "mean mem", ww.memory_request.mean())
