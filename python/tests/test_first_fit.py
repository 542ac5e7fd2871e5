"""``cellsim.FirstFit``'s search (need classes, classes dead for the tick, the last tick's
memory, per-class start nodes, cached constraint masks) against a plain first-fit written here:
a loop over the waiting tasks and the nodes, on a small random cell whose state moves between
ticks as the engine's does (tasks end, nodes go offline and come back, capacities change, node
attributes change, task slots are reused with other needs), over many ticks and seeds."""

import numpy as np
import pytest

from cellsim import FirstFit
from cellsim.policy import Columns, Tick


def plain_first_fit(tasks: dict, free: np.ndarray, meets: np.ndarray) -> np.ndarray:
    """Each task in order on the first node with room and its constraints met."""
    free = free.copy()
    chosen = np.full(len(tasks["task"]), -1)
    for i in range(len(chosen)):
        need = [tasks["cpu"][i], tasks["mem"][i]]
        prod = [tasks["cpu_req"][i], tasks["mem_req"][i]] if tasks["production"][i] else [0, 0]
        for n in range(free.shape[1]):
            room = free[0, n] >= need[0] and free[1, n] >= need[1]
            if tasks["production"][i]:
                room = room and free[2, n] >= prod[0] and free[3, n] >= prod[1]
            if room and meets[tasks["constraint_set"][i], n]:
                chosen[i] = n
                free[:, n] -= need + prod
                break
    return chosen


class Access:
    """What ``Tick.meets`` reads: the nodes meeting a waiting task's constraint set."""

    def __init__(self, sets: np.ndarray, meets: np.ndarray) -> None:
        self.sets, self.matrix = sets, meets

    def meets(self, i: int) -> bytes:
        return self.matrix[self.sets[i]].astype(bool).tobytes()


def test_first_fit_places_as_a_plain_first_fit(seeds=range(12), ticks=60):
    placed = failed = 0
    for seed in seeds:
        rng = np.random.default_rng(seed)
        node_count = int(rng.integers(3, 12))
        cap = rng.integers(50, 120, size=(2, node_count))
        online = np.ones(node_count, dtype=bool)
        load = np.zeros((4, node_count), dtype=np.int64)  # charged cpu, mem; production cpu, mem
        meets = np.ones((3, node_count), dtype=bool)  # constraint set 0 meets every node
        meets[1:] = rng.random((2, node_count)) < 0.5
        epoch = 0
        shapes = rng.integers(1, 60, size=(6, 2))  # few needs, so classes repeat
        waiting = []  # (slot, cpu, mem, production, set), queue order
        running = []  # (slot, node, cpu, mem, production)
        free_slots, next_slot = [], 0
        policy = FirstFit()
        for index in range(ticks):
            # The cell moves: tasks end, nodes go and come, capacities and attributes change;
            # on a quiet tick, only attributes may.
            quiet = rng.random() < 0.3
            ending = [r for r in running if rng.random() < 0.3 and not quiet]
            for slot, node, cpu, mem, production in ending:
                load[:, node] -= [cpu, mem, cpu * production, mem * production]
                free_slots.append(slot)
            running = [r for r in running if r not in ending]
            if rng.random() < 0.15 and not quiet:
                n = int(rng.integers(node_count))
                online[n] = not online[n]
                if not online[n]:  # its tasks wait again
                    back = [r for r in running if r[1] == n]
                    for slot, _, cpu, mem, production in back:
                        load[:, n] -= [cpu, mem, cpu * production, mem * production]
                        waiting.append((slot, cpu, mem, production, 0))
                    running = [r for r in running if r[1] != n]
            if rng.random() < 0.1 and not quiet:
                cap[:, int(rng.integers(node_count))] += rng.integers(-10, 30)
                cap = np.maximum(cap, load[:2].max(axis=0).astype(cap.dtype))
            if rng.random() < (0.5 if quiet else 0.1):
                meets[1:] = rng.random((2, node_count)) < 0.5
                epoch += 1
            for _ in range(int(rng.integers(0, 25))):
                slot = free_slots.pop(0) if free_slots else next_slot
                next_slot += slot == next_slot
                shape = shapes[rng.integers(len(shapes))] if rng.random() < 0.8 else \
                    rng.integers(1, 90, size=2)
                waiting.append((slot, int(shape[0]), int(shape[1]), int(rng.random() < 0.3),
                                int(rng.choice(3, p=[0.6, 0.2, 0.2]))))
            queue = np.array(waiting, dtype=np.int64).reshape(-1, 5)
            tasks = {
                "task": queue[:, 0].astype(np.uint32),
                "cpu": queue[:, 1].astype(np.uint32),
                "mem": queue[:, 2].astype(np.uint32),
                "cpu_req": queue[:, 1].astype(np.uint32),
                "mem_req": queue[:, 2].astype(np.uint32),
                "production": queue[:, 3].astype(bool),
                "constraint_set": queue[:, 4].astype(np.uint32),
            }
            nodes = {
                "online": online.copy(),
                "cpu_cap": cap[0].astype(np.uint32),
                "mem_cap": cap[1].astype(np.uint32),
                "cpu": load[0].astype(np.uint32),
                "mem": load[1].astype(np.uint32),
                "prod_cpu_req": load[2].astype(np.uint32),
                "prod_mem_req": load[3].astype(np.uint32),
            }
            free = np.stack([np.where(online, cap[0] - load[0], -1),
                             np.where(online, cap[1] - load[1], -1),
                             np.where(online, cap[0] - load[2], -1),
                             np.where(online, cap[1] - load[3], -1)])
            expected = plain_first_fit(tasks, free, meets)
            tick = Tick(index, index * 60_000_000, seed, "requests", epoch, Columns(tasks),
                        Columns(nodes), Access(tasks["constraint_set"], meets))
            chosen = policy.schedule(tick)
            assert chosen.tolist() == expected.tolist(), f"seed {seed} tick {index}"
            placed += int((chosen >= 0).sum())
            failed += int((chosen < 0).sum())
            for (slot, cpu, mem, production, _), node in zip(waiting, chosen):
                if node >= 0:
                    load[:, node] += [cpu, mem, cpu * production, mem * production]
                    running.append((slot, int(node), cpu, mem, production))
            waiting = [w for w, node in zip(waiting, chosen) if node < 0]
    assert placed > 1000 and failed > 1000, (placed, failed)  # both paths taken, often


@pytest.mark.parametrize("restart_at", [7, 23])
def test_a_forgetting_first_fit_places_the_same(restart_at):
    """Its memory is a cache: a fresh one (a resumed run's) given the same tick decides the
    same, as the plain first-fit does."""
    rng = np.random.default_rng(restart_at)
    sets = np.zeros(40, dtype=np.uint32)
    meets = np.ones((1, 5), dtype=bool)
    kept, fresh = FirstFit(), None
    for index in range(30):
        count = 40
        tasks = {
            "task": np.arange(count, dtype=np.uint32),
            "cpu": rng.integers(1, 40, count).astype(np.uint32),
            "mem": rng.integers(1, 40, count).astype(np.uint32),
            "cpu_req": np.zeros(count, np.uint32),
            "mem_req": np.zeros(count, np.uint32),
            "production": np.zeros(count, bool),
            "constraint_set": sets,
        }
        nodes = {
            "online": np.ones(5, bool),
            "cpu_cap": np.full(5, 100, np.uint32),
            "mem_cap": np.full(5, 100, np.uint32),
            "cpu": rng.integers(0, 100, 5).astype(np.uint32),
            "mem": rng.integers(0, 100, 5).astype(np.uint32),
            "prod_cpu_req": np.zeros(5, np.uint32),
            "prod_mem_req": np.zeros(5, np.uint32),
        }
        tick = Tick(index, 0, 0, "requests", 0, Columns(tasks), Columns(nodes),
                    Access(sets, meets))
        if index == restart_at:
            fresh = FirstFit()
            fresh.load(kept.state())
        answers = [p.schedule(tick).tolist() for p in (kept, fresh) if p is not None]
        free = np.stack([100 - nodes["cpu"].astype(int), 100 - nodes["mem"].astype(int),
                         np.full(5, 100), np.full(5, 100)])
        expected = plain_first_fit(tasks, free, meets).tolist()
        assert all(a == expected for a in answers), index
