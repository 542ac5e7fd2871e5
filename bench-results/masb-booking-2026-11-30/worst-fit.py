"""A reference placer, not MASB: each waiting task on the node whose larger used share (CPU or
memory, after placing it) is smallest, every node's current usage and the task's own usage
known (`fit = "usage"`), one task after another. Run through the Python package with
`release = "trace-schedule"`: it shows how evenly the real trace's work, held to the trace's
start times, can be spread on the real machines under the usage model.

Usage: worst-fit.py INGESTED_TRACE OUT_DIR HOURS
"""
import sys

import numpy as np

import cellsim
from cellsim.policy import Policy


class WorstFit(Policy):
    def schedule(self, tick):
        tasks, nodes = tick.tasks, tick.nodes
        out = np.full(len(tasks), -1, dtype=np.int64)
        if len(tasks) == 0:
            return out
        cap_cpu, cap_mem = nodes.cpu_cap.astype(np.int64), nodes.mem_cap.astype(np.int64)
        online = nodes.online.astype(bool) & (cap_cpu > 0) & (cap_mem > 0)
        cpu, mem = nodes.cpu.astype(np.int64), nodes.mem.astype(np.int64)
        prod_cpu, prod_mem = nodes.prod_cpu_req.astype(np.int64), nodes.prod_mem_req.astype(np.int64)
        per_cpu = 1.0 / np.where(online, cap_cpu, 1)
        per_mem = 1.0 / np.where(online, cap_mem, 1)
        for i in range(len(tasks)):
            c, m = int(tasks.cpu[i]), int(tasks.mem[i])
            ok = online & (cpu + c <= cap_cpu) & (mem + m <= cap_mem)
            production = bool(tasks.production[i])
            if production:
                ok &= (prod_cpu + int(tasks.cpu_req[i]) <= cap_cpu)
                ok &= (prod_mem + int(tasks.mem_req[i]) <= cap_mem)
            if tasks.constraint_set[i]:
                ok &= tick.meets(i)
            if not ok.any():
                continue
            share = np.maximum((cpu + c) * per_cpu, (mem + m) * per_mem)
            share[~ok] = np.inf
            j = int(np.argmin(share))
            out[i] = j
            cpu[j] += c
            mem[j] += m
            if production:
                prod_cpu[j] += int(tasks.cpu_req[i])
                prod_mem[j] += int(tasks.mem_req[i])
        return out


if __name__ == "__main__":
    cellsim.run(sys.argv[1], policy=WorstFit(), hours=float(sys.argv[3]), out=sys.argv[2],
                threads=2, config={"release": "trace-schedule", "fit": "usage"})
