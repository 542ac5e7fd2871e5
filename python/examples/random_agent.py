"""A random agent on cellsim's step API (issue 61 item 5): it trains nothing. Each tick it puts
each waiting task on a node drawn uniformly among those with room for it (by the observation's
amounts, as the engine's fit rule reads them) or, with probability 0.1, leaves it waiting; it
checks the simulation's invariants as it goes and prints what it saw.

    python python/examples/random_agent.py [HOURS=24] [TRACE]

Without TRACE it runs on the embedded synthetic cell (500 machines). Invariants checked every
step: each waiting task is listed once and none of them runs, each node's requests are the sums
of its running tasks', the reward is minus the tasks left waiting, and the run ends after
exactly the ticks it had.
"""

import sys

import numpy as np

import cellsim


def act(obs, rng):
    """A node per waiting task: uniform among those with room, or -1."""
    room = cellsim.Room(obs)
    chosen = np.full(len(obs.tasks), -1, dtype=np.int64)
    for i in range(len(obs.tasks)):
        if rng.random() < 0.1:
            continue
        candidates = np.flatnonzero(room.fits(i))
        if len(candidates) == 0:
            continue
        chosen[i] = int(rng.choice(candidates))
        room.take(i, chosen[i])
    return chosen


def main(hours=24.0, trace=None, out=None, seed=7):
    """Runs the agent; returns (steps, total reward, the finished run)."""
    rng = np.random.default_rng(seed)
    sim = cellsim.Simulation(trace, hours=hours, out=out)
    obs = sim.reset()
    steps, total = 0, 0.0
    while True:
        # Each waiting task (slot) once, and none of them running. (A job's task can wait
        # twice over: a run the trace ended while it waited here, and the trace's next one.)
        running, count = obs.running(), len(obs.nodes)
        assert len(np.unique(obs.tasks.task)) == len(obs.tasks), "a task listed twice"
        assert not np.isin(obs.tasks.task, running.task).any(), "a waiting task runs"
        # Each node's requested amounts are the sums of its running tasks' requests.
        for amount in ("cpu_req", "mem_req"):
            sums = np.bincount(running.node, weights=running[amount], minlength=count)
            assert (sums == obs.nodes[amount]).all(), f"{amount}: nodes' sums differ"
        action = act(obs, rng)
        index = obs.index
        obs, reward, done, info = sim.step(action)
        assert reward == -float(np.count_nonzero(action < 0)), (reward, info)
        assert info["tick"] == index
        steps += 1
        total += reward
        if done:
            break
    run = info["run"]
    assert run.complete and run.summary["ticks"] == steps, (steps, run.summary["ticks"])
    return steps, total, run


if __name__ == "__main__":
    hours = float(sys.argv[1]) if len(sys.argv) > 1 else 24.0
    trace = sys.argv[2] if len(sys.argv) > 2 else None
    steps, total, run = main(hours, trace)
    print(f"{steps} steps, total reward {total:.0f} (tasks left waiting, summed over the ticks), "
          f"outputs in {run.path}")
