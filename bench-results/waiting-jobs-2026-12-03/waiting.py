"""The real cell's waiting tasks (issue 57 item 4: the t = 0 state including the pending tasks,
which the generator does not model, `generator-2026-11-27.md`). Replays an ingested trace's
task_events in time order (SUBMIT starts a wait; SCHEDULE, or an EVICT, FAIL, FINISH, KILL or
LOST of a waiting task, ends it; UPDATE_PENDING updates its request) and prints: at the trace's
start (600 s) and every hour after, the tasks waiting, their CPU and memory requests as % of
the capacity of the machines online at time 0, the jobs they belong to and the largest six; then, for each job that was among the largest six at some hour, its tasks, priority,
scheduling class, median CPU and memory request (of the largest machine's), how its waits
ended within the span (from the trace's start on) and the median wait (hours, counted from the trace's start for tasks
waiting at it), and how many still wait at the end.
Usage: waiting.py INGESTED_TRACE [HOURS]  (HOURS: 8)"""
import collections
import statistics
import sys

import pyarrow.parquet as pq

SUBMIT, SCHEDULE, UPDATE_PENDING = 0, 1, 7
ENDS = {2: "evicted", 3: "failed", 4: "finished", 5: "killed", 6: "lost"}
START_US = 600_000_000
HOUR_US = 3_600_000_000

trace, hours = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 8
columns = ["time", "job_id", "task_index", "event_type", "priority", "scheduling_class",
           "cpu_request", "memory_request"]
events = pq.read_table(f"{trace}/task_events", columns=columns).to_pandas()
events = events.sort_values("time", kind="stable")

waiting = {}  # (job, index) -> the time its wait began
request = {}  # (job, index) -> (priority, scheduling class, CPU, memory)
ended = collections.defaultdict(collections.Counter)  # job -> how waits ended
waited_h = collections.defaultdict(list)  # job -> hours each ended wait lasted
largest = set()
sample_us = START_US


machines = pq.read_table(f"{trace}/machine_events").to_pandas()
added = machines[(machines.time == 0) & (machines.event_type == 0)]
capacity = (added.cpus.sum(), added.memory.sum())


def sample(at_us):
    jobs = collections.Counter(job for job, _ in waiting)
    top = jobs.most_common(6)
    largest.update(job for job, _ in top)
    tops = ", ".join(f"{job} {n}" for job, n in top)
    cpu, mem = (100 * sum(request[t][k] for t in waiting) / capacity[k - 2] for k in (2, 3))
    print(f"{(at_us - START_US) / HOUR_US:>5.0f} {len(waiting):>8} {cpu:>6.1f} {mem:>6.1f} "
          f"{len(jobs):>5}  {tops}")


print(f"## tasks waiting by hour from the trace's start ({len(added)} machines at time 0): hour, "
      "tasks, CPU and memory requested %, jobs, the largest six jobs")
for time, job, index, kind, priority, cls, cpu, mem in events.itertuples(index=False):
    while time > sample_us and sample_us <= START_US + hours * HOUR_US:
        sample(sample_us)
        sample_us += HOUR_US
    task = (job, index)
    if kind == SUBMIT:
        waiting[task] = time
        request[task] = (priority, cls, cpu, mem)
    elif kind == UPDATE_PENDING and task in waiting:
        request[task] = (priority, cls, cpu, mem)
    elif (kind == SCHEDULE or kind in ENDS) and task in waiting:
        began = waiting.pop(task)
        if time >= START_US:  # before it: the trace's initial state, not a wait in the span
            ended[job]["scheduled" if kind == SCHEDULE else ENDS[kind]] += 1
            waited_h[job].append((time - max(began, START_US)) / HOUR_US)

print()
print("## the largest waiting jobs: tasks submitted in the span or before, priority, class, "
      "median CPU / memory request, how waits ended, median wait (h), still waiting at the end")
still = collections.Counter(job for job, _ in waiting)
for job in sorted(largest, key=lambda j: -len([t for t in request if t[0] == j])):
    tasks = [r for t, r in request.items() if t[0] == job]
    priority = collections.Counter(int(r[0]) for r in tasks)
    cls = collections.Counter(int(r[1]) for r in tasks)
    cpu = statistics.median(r[2] for r in tasks)
    mem = statistics.median(r[3] for r in tasks)
    wait = f"{statistics.median(waited_h[job]):.2f}" if waited_h[job] else "-"
    print(f"{job:>12} {len(tasks):>6}  priority {dict(priority)}  class {dict(cls)}  "
          f"{cpu:.4f} / {mem:.4f}  {dict(ended[job])}  {wait}  {still[job]}")
