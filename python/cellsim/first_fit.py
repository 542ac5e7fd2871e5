"""``FirstFit``: the engine's ``first-fit`` written in numpy, with the same outputs (issue 61).

Each waiting task, in queue order, goes on the first node (by index) with room for it that
meets its constraints. Searched naively that is a pass over the nodes per waiting task, and a
cell fitting by requests keeps ~170k tasks waiting. So the search works on *need classes*:
tasks needing the same (CPU, memory, production CPU, production memory, constraint set,
production) behave the same, and

- a class that finds no node at some moment of a tick finds none later in it (placements only
  take room away within a tick), and neither does a class needing at least as much of
  everything (with the same constraint set, or the failed class had none; production if the
  failed class is): such classes are *dead* for the rest of the tick;
- a class no node has its CPU and memory free for together at the tick's start (for a
  production class also its requests within the production reservations) is dead from the
  start;
- a class dead at the end of the last tick stays dead unless a node's room grew since and
  might take it (or, with constraints, a node's attributes changed);
- a class's next task cannot go on a node before the one its last task went to this tick.

The tasks of the classes still alive are taken in queue order (a heap over the classes' next
positions), so only placed tasks and one failure per class cost a search over the nodes, and
the per-task work is a few vector passes. Everything remembered is a pure cache, validated
against the tick's columns (task slots are reused): not in the policy's state, so a resumed
run starts without it and places the same.
"""

from __future__ import annotations

import heapq
from typing import Any, Dict, Tuple

import numpy as np

from .policy import Policy, Tick, free_amounts

__all__ = ["FirstFit"]

#: The need columns: CPU, memory (as the fit rule charges), production CPU and memory requests
#: (0 for non-production tasks), constraint set, production.
CPU, MEM, PROD_CPU, PROD_MEM, SET, PROD = range(6)


def _may_fit(free_a: np.ndarray, free_b: np.ndarray, need_a: np.ndarray,
             need_b: np.ndarray) -> np.ndarray:
    """Per need, whether some node has at least ``need_a`` of amount a and ``need_b`` of amount
    b free together: the free pairs sorted by a, with the most of b above each."""
    if len(free_a) == 0:
        return np.zeros(len(need_a), dtype=bool)
    order = np.argsort(free_a, kind="stable")
    sorted_a = free_a[order]
    most_b = np.maximum.accumulate(free_b[order][::-1])[::-1]
    k = np.searchsorted(sorted_a, need_a, side="left")
    return (k < len(sorted_a)) & (most_b[np.minimum(k, len(sorted_a) - 1)] >= need_b)


def _may_take(free: np.ndarray, needs: np.ndarray) -> np.ndarray:
    """Per need row, whether some node of ``free`` (rows: CPU, memory, production CPU and
    memory) might take it (constraints aside)."""
    may = _may_fit(free[0], free[1], needs[:, CPU], needs[:, MEM])
    production = needs[:, PROD] != 0
    if production.any():
        may &= ~production | _may_fit(free[2], free[3], needs[:, PROD_CPU], needs[:, PROD_MEM])
    return may


#: The task columns a need is made of.
NEED_COLUMNS = ("cpu", "mem", "cpu_req", "mem_req", "constraint_set", "production")


def _needs(tasks: Any, rows: np.ndarray) -> np.ndarray:
    """The need rows (columns ``CPU`` .. ``PROD``) of the waiting tasks at ``rows``."""
    production = tasks.production[rows]
    need = np.empty((len(rows), 6), dtype=np.int64)
    need[:, CPU] = tasks.cpu[rows]
    need[:, MEM] = tasks.mem[rows]
    need[:, PROD_CPU] = np.where(production, tasks.cpu_req[rows], 0)
    need[:, PROD_MEM] = np.where(production, tasks.mem_req[rows], 0)
    need[:, SET] = tasks.constraint_set[rows]
    need[:, PROD] = production
    return need


class FirstFit(Policy):
    """Each waiting task, in queue order, on the first node (by index) with room for it that
    meets its constraints: the engine's ``first-fit``, in numpy, with the same outputs (how it
    searches: the module's doc)."""

    def __init__(self) -> None:
        self._forget()

    def _forget(self) -> None:
        self._forget_classes()
        self._end = None  # the nodes' free amounts at the last tick's end
        self._epoch = None
        self._meets: Dict[int, np.ndarray] = {}  # constraint set -> nodes meeting it

    def _forget_classes(self) -> None:
        self._slot_class = np.full(0, -1, dtype=np.int64)  # per task slot: its need class
        self._slot_columns: Dict[str, np.ndarray] = {}  # ... and the columns it was read from
        self._class_of: Dict[Tuple[int, ...], int] = {}
        self._class_needs = np.zeros((0, 6), dtype=np.int64)  # by class (spare rows at the end)
        self._dead_after = np.zeros(0, dtype=np.int64)  # by class: the tick it last found no node

    def state(self) -> Any:
        return {}

    def load(self, state: Any) -> None:
        self._forget()

    def _classes(self, tasks: Any) -> np.ndarray:
        """The need class of each waiting task (new classes numbered as they appear)."""
        slots = tasks.task
        top = int(slots.max()) + 1 if len(slots) else 0
        if len(self._slot_class) < top:
            grow = max(top, 2 * len(self._slot_class)) - len(self._slot_class)
            self._slot_class = np.concatenate([self._slot_class, np.full(grow, -1)])
            for name in NEED_COLUMNS:
                column = self._slot_columns.get(name, np.zeros(0, tasks[name].dtype))
                self._slot_columns[name] = np.concatenate(
                    [column, np.zeros(grow, column.dtype)])
        classes = self._slot_class[slots]
        stale = classes < 0
        for name in NEED_COLUMNS:
            stale |= self._slot_columns[name][slots] != tasks[name]
        stale = np.flatnonzero(stale)
        if len(stale) == 0:
            return classes
        rows, inverse = np.unique(_needs(tasks, stale), axis=0, return_inverse=True)
        ids = np.empty(len(rows), dtype=np.int64)
        new = []
        for k, row in enumerate(map(tuple, rows.tolist())):
            c = self._class_of.get(row)
            if c is None:
                c = self._class_of[row] = len(self._class_of)
                new.append(row)
            ids[k] = c
        if len(self._class_of) > len(self._class_needs):
            grow = max(len(self._class_of), 2 * len(self._class_needs)) - len(self._class_needs)
            self._class_needs = np.concatenate([self._class_needs, np.zeros((grow, 6), int)])
            self._dead_after = np.concatenate([self._dead_after, np.full(grow, -2)])
        if new:
            self._class_needs[len(self._class_of) - len(new):len(self._class_of)] = new
        classes[stale] = ids[inverse.reshape(-1)]
        self._slot_class[slots[stale]] = classes[stale]
        for name in NEED_COLUMNS:
            self._slot_columns[name][slots[stale]] = tasks[name][stale]
        return classes

    def _alive_at_start(self, tick: Tick, free: np.ndarray, met: np.ndarray) -> np.ndarray:
        """Whether each of the classes ``met`` might find a node this tick (module doc)."""
        needs = self._class_needs[met]
        alive = _may_take(free, needs)
        dead = self._dead_after[met] == tick.index - 1
        if self._end is not None and dead.any():
            before = np.full_like(free, -1)
            width = min(free.shape[1], self._end.shape[1])
            before[:, :width] = self._end[:, :width]
            grown = free[:, (free > before).any(axis=0)]
            revived = _may_take(grown, needs)
            if tick.attributes_epoch != self._epoch:
                revived |= needs[:, SET] != 0
            alive &= ~dead | revived
        return alive

    def _meeting(self, tick: Tick, constraint_set: int, position: int) -> np.ndarray:
        """The nodes meeting a constraint set (read through the waiting task at ``position``,
        which has it; kept while the nodes' attributes stay)."""
        mask = self._meets.get(constraint_set)
        if mask is None:
            mask = self._meets[constraint_set] = tick.meets(position)
        return mask

    def schedule(self, tick: Tick) -> np.ndarray:
        tasks = tick.tasks
        chosen = np.full(len(tasks), -1, dtype=np.int64)
        free = free_amounts(tick.nodes)
        if tick.attributes_epoch != self._epoch or \
                (self._end is not None and self._end.shape[1] != free.shape[1]):
            self._meets.clear()  # the constraint masks read for other attributes or nodes
        if len(self._class_of) > 4 * len(tasks) + 100_000:
            self._forget_classes()  # most classes numbered are no longer waiting
        classes = self._classes(tasks)
        # The waiting tasks grouped by class, each group in queue order; the classes met.
        positions = np.argsort(classes, kind="stable")
        of = classes[positions]
        starts = np.flatnonzero(np.r_[True, of[1:] != of[:-1]]) if len(of) else positions
        met = of[starts]
        alive = self._alive_at_start(tick, free, met)
        ends = np.r_[starts[1:], len(of)][alive]
        starts = starts[alive]
        dead = ~alive
        needs = self._class_needs[met]
        rows = needs.tolist()
        columns = [np.ascontiguousarray(needs[:, k]) for k in range(6)]
        after = [0] * len(met)  # per class met: no earlier node takes it now
        heap = list(zip(positions[starts].tolist(), np.flatnonzero(alive).tolist(),
                        starts.tolist(), ends.tolist()))
        heapq.heapify(heap)
        while heap:
            position, local, at, end = heapq.heappop(heap)
            if dead[local]:
                continue
            cpu, mem, prod_cpu, prod_mem, constraint_set, production = rows[local]
            s = after[local]
            room = (free[0, s:] >= cpu) & (free[1, s:] >= mem)
            if production:
                room &= (free[2, s:] >= prod_cpu) & (free[3, s:] >= prod_mem)
            if constraint_set:
                room &= self._meeting(tick, constraint_set, position)[s:]
            n = int(np.argmax(room))
            if room[n]:
                node = s + n
                chosen[position] = node
                free[:, node] -= needs[local, :4]
                after[local] = node
                if at + 1 < end:
                    heapq.heappush(heap, (int(positions[at + 1]), local, at + 1, end))
                continue
            # Every class needing at least as much of everything finds no node either.
            harder = columns[CPU] >= cpu
            harder &= columns[MEM] >= mem
            harder &= columns[PROD_CPU] >= prod_cpu
            harder &= columns[PROD_MEM] >= prod_mem
            if production:
                harder &= columns[PROD] != 0
            if constraint_set:
                harder &= columns[SET] == constraint_set
            dead |= harder
        self._dead_after[met[dead]] = tick.index
        self._end, self._epoch = free, tick.attributes_epoch
        return chosen
