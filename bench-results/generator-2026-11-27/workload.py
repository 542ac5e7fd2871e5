"""The workload of an ingested trace by priority, for comparing a generated cell with the real one
over the same span: jobs and tasks submitted after t = 0, tasks per job, run times, requests,
the t = 0 state (running and pending) and how runs end.
Usage: python3 workload.py INGESTED_TRACE [HOURS]"""
import sys

import gcd
import numpy as np, pandas as pd
trace = sys.argv[1]; hours = float(sys.argv[2]) if len(sys.argv) > 2 else 8.0
end = 600_000_000 + int(hours * 3600e6)
read = lambda t: gcd.read(trace, t)
ev = read("task_events"); ev = ev[ev.time <= end]
mc = read("machine_events")
cap0 = mc[mc.time <= 600_000_000].groupby("machine_id").tail(1)
cap0 = cap0[cap0.event_type != 1]
C, M = cap0.cpus.sum(), cap0.memory.sum()
print(f"machines at t=0: {len(cap0)}; per 12,583 scale factor {12583/len(cap0):.3f}")
band = lambda p: pd.cut(p, [-1, 1, 8, 11], labels=["gratis", "middle", "prod"])
# t = 0 state: each task's last event at or before t = 0 (the 600 s offset).
t0 = ev[ev.time <= 600_000_000].groupby(["job_id", "task_index"]).tail(1)
run0 = t0[t0.event_type.isin([1, 8])]; pend0 = t0[t0.event_type.isin([0, 7])]
for name, s in [("running t0", run0), ("pending t0", pend0)]:
    g = s.groupby(band(s.priority), observed=False)
    print(f"{name}: {len(s)} tasks; by band tasks {g.size().to_dict()}; CPU req/cap % {(g.cpu_request.sum()/C*100).round(1).to_dict()}; mem req/cap % {(g.memory_request.sum()/M*100).round(1).to_dict()}; mean cpu {g.cpu_request.mean().round(4).to_dict()} mem {g.memory_request.mean().round(4).to_dict()}")
# Arrivals after t = 0: first SUBMIT of each task.
after = ev[ev.time > 600_000_000]
sub = after[after.event_type == 0]
first = sub.drop_duplicates(["job_id", "task_index"])
new_tasks = first[~first.set_index(["job_id", "task_index"]).index.isin(t0.set_index(["job_id", "task_index"]).index)]
jobs = new_tasks.groupby("job_id").agg(tasks=("task_index", "size"), priority=("priority", "first"), cpu=("cpu_request", "mean"), mem=("memory_request", "mean"), cls=("scheduling_class", "first"))
span_h = hours
print(f"\nnew jobs after t=0: {len(jobs)} ({len(jobs)/span_h:.0f}/h), new tasks {len(new_tasks)} ({len(new_tasks)/span_h/60:.0f}/min), all SUBMITs {len(sub)} ({len(sub)/span_h/60:.0f}/min)")
q = jobs.tasks.quantile([.5, .75, .9, .99]).to_dict()
print(f"tasks per new job: mean {jobs.tasks.mean():.1f}, single-task share {(jobs.tasks==1).mean():.3f}, quantiles {q}, max {jobs.tasks.max()}")
print("new jobs by priority:", jobs.priority.value_counts().sort_index().to_dict())
print("new tasks by priority:", new_tasks.priority.value_counts().sort_index().to_dict())
g = new_tasks.groupby(band(new_tasks.priority), observed=False)
print("new tasks' mean requests by band: cpu", g.cpu_request.mean().round(4).to_dict(), "mem", g.memory_request.mean().round(4).to_dict(), "median cpu", g.cpu_request.median().round(4).to_dict(), "mem", g.memory_request.median().round(4).to_dict())
print("new jobs' scheduling class by band:", jobs.groupby([band(jobs.priority), "cls"], observed=True).size().to_dict())
# Runs: SCHEDULE to the next terminal event of the same task (2-6).
e = ev[ev.event_type.isin([1, 2, 3, 4, 5, 6])][["time", "job_id", "task_index", "event_type", "priority"]].copy()
e["nt"] = e.groupby(["job_id", "task_index"]).time.shift(-1); e["next_ev"] = e.groupby(["job_id", "task_index"]).event_type.shift(-1)
runs = e[(e.event_type == 1) & (e.time > 600_000_000)]
ended = runs[runs.next_ev.notna()]
dur = (ended.nt - ended.time) / 1e6
print(f"\nruns started after t=0: {len(runs)} ({len(runs)/span_h/60:.0f}/min), ended in the window {len(ended)}")
bins = [0, 60, 300, 1200, 3600, 6 * 3600, 1e12]
for b, sel in [("all", slice(None))] + [(k, band(ended.priority) == k) for k in ["gratis", "middle", "prod"]]:
    d = dur[sel] if b != "all" else dur
    print(f"  {b:7s} n={len(d):7d} median {d.median():7.0f} s  shares", (pd.cut(d, bins).value_counts(normalize=True, sort=False).round(3).values))
ends = ended.next_ev.map({2: "EVICT", 3: "FAIL", 4: "FINISH", 5: "KILL", 6: "LOST"}).value_counts(normalize=True).round(3).to_dict()
print("run ends:", ends)
