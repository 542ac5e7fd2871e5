#!/usr/bin/env python3
"""A scheduler written in Python against the engine's own (issue 61 item 4): interleaved runs of
the Rust ``first-fit`` and the numpy ``cellsim.FirstFit`` through the package, in this process,
over HOURS of the ingested trace TRACE, ROUNDS rounds; one line per run with its speed, then the
medians and the ratio. For the Python runs, the boundary's cost per tick: the policy's wall time
per tick (``timing/``'s ``policy_ms``: columns copied, ``schedule`` called, decisions checked
and applied) less the time inside ``schedule`` itself. Also checks that both runs wrote the
same rows.

Usage: scripts/bench/python-policy-day.py TRACE [HOURS=24] [ROUNDS=3] [FIT=requests]
(FIT: the run's fit rule, `requests` or `usage`.)
"""

import contextlib
import io
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import cellsim


class TimedFirstFit(cellsim.FirstFit):
    """cellsim.FirstFit, timing its own schedule() calls."""

    def __init__(self):
        super().__init__()
        self.inside_s = 0.0
        self.waiting = 0

    def schedule(self, tick):
        start = time.perf_counter()
        chosen = super().schedule(tick)
        self.inside_s += time.perf_counter() - start
        self.waiting += len(tick.tasks)
        return chosen


def timing(run: cellsim.Run) -> dict:
    t = run.table("timing")
    return {c: np.asarray(t.column(c)) for c in ("policy_ms", "apply_ms")}


def main() -> None:
    trace = Path(sys.argv[1])
    hours = float(sys.argv[2]) if len(sys.argv) > 2 else 24.0
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    fit = sys.argv[4] if len(sys.argv) > 4 else "requests"
    work = Path(tempfile.mkdtemp(prefix="python-policy-"))
    speeds = {"rust": [], "python": []}
    boundary_us, inside_ms = [], []
    for r in range(rounds):
        for kind in ("rust", "python"):
            out = work / f"{kind}-{r}"
            policy = "first-fit" if kind == "rust" else TimedFirstFit()
            start = time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()):  # the report: not wanted here
                run = cellsim.run(trace, policy, hours=hours, out=out, config={"fit": fit})
            wall = time.perf_counter() - start
            speed = run.summary["speed_x_real_time"]
            speeds[kind].append(speed)
            line = f"{r} {kind} speed {speed:.0f} wall_s {wall:.1f}"
            if kind == "python":
                ticks = run.summary["ticks"]
                policy_ms = timing(run)["policy_ms"].sum()
                b = (policy_ms - policy.inside_s * 1e3) / ticks * 1e3
                boundary_us.append(b)
                inside_ms.append(policy.inside_s * 1e3 / ticks)
                line += (f" ticks {ticks} policy_ms_per_tick {policy_ms / ticks:.2f}"
                         f" schedule_ms_per_tick {policy.inside_s * 1e3 / ticks:.2f}"
                         f" boundary_us_per_tick {b:.0f}"
                         f" waiting_per_tick {policy.waiting / ticks:.0f}")
            print(line, flush=True)
        same = all(
            cellsim.Run(work / f"rust-{r}").table(t).replace_schema_metadata(None).equals(
                cellsim.Run(work / f"python-{r}").table(t).replace_schema_metadata(None))
            for t in ("ticks", "nodes", "tasks", "jobs"))
        print(f"{r} same rows: {same}", flush=True)
        for kind in ("rust", "python"):
            shutil.rmtree(work / f"{kind}-{r}")
    med = {k: statistics.median(v) for k, v in speeds.items()}
    print(f"median speed: rust {med['rust']:.0f}x, python {med['python']:.0f}x "
          f"(python/rust {med['python'] / med['rust']:.3f}); boundary per tick "
          f"{statistics.median(boundary_us):.0f} us, schedule() per tick "
          f"{statistics.median(inside_ms):.2f} ms")


if __name__ == "__main__":
    main()
