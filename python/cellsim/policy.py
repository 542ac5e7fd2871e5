"""Schedulers written in Python: subclass :class:`Policy`, define ``schedule(tick)``, and pass an
instance to :func:`cellsim.run` (``policy=MyPolicy()``).

Each tick the engine applies the trace's events, then calls ``schedule`` once with a
:class:`Tick`: the waiting tasks (in the order they became pending) and the nodes as numpy
arrays, and a seeded :class:`numpy.random.Generator`. ``schedule`` returns a node index per
waiting task (``-1``: leave it waiting), or a :class:`Decisions` with migrations and evictions.
The engine checks every decision (the node exists, is online, meets the task's constraints and
has room for it under the run's fit rule, ``tick.fit_by``) and stops the run with a
:class:`cellsim.CellsimError` naming the tick and the task for the first wrong one; an exception
raised in ``schedule`` stops it too and is raised as itself.

Amounts are integers in units of 1e-6 of the largest machine's capacity. ``tasks.cpu`` and
``tasks.mem`` are what the fit rule charges (requests, or usage with ``fit = "usage"``), and
``nodes.cpu`` / ``nodes.mem`` what the nodes' tasks are charged; a task fits a node when
``nodes.cpu + tasks.cpu <= nodes.cpu_cap`` and likewise for memory, and, for a production task
(``tasks.production``), ``nodes.prod_cpu_req + tasks.cpu_req <= nodes.cpu_cap`` and likewise for
memory. The arrays are read-only views of one copy made for the tick (the engine's own columns
are borrowed only for the call); copy what you keep.

Snapshots hold the policy's state: ``state()`` returns something picklable and ``load(state)``
restores it (by default the instance's ``__dict__``), so a run with a Python policy resumes
byte-identically when ``schedule`` depends only on that state, the tick and ``tick.rng``.
"""

from __future__ import annotations

import pickle
from typing import Any, Dict, Iterable, Optional, Sequence, Tuple

import numpy as np

__all__ = ["Columns", "Decisions", "Policy", "Room", "Tick", "free_amounts"]


class Columns:
    """Named numpy arrays of equal length, read as attributes (``tick.tasks.cpu``) or items."""

    def __init__(self, arrays: Dict[str, np.ndarray]) -> None:
        self._arrays = arrays

    def __getattr__(self, name: str) -> np.ndarray:
        try:
            return self.__dict__["_arrays"][name]
        except KeyError:
            raise AttributeError(
                f"no column {name!r} (columns: {', '.join(self._arrays)})") from None

    def __getitem__(self, name: str) -> np.ndarray:
        return getattr(self, name)

    def __len__(self) -> int:
        return len(next(iter(self._arrays.values()))) if self._arrays else 0

    def __iter__(self):
        return iter(self._arrays)

    def __repr__(self) -> str:
        return f"Columns({len(self)} rows: {', '.join(self._arrays)})"


def _columns(raw: Dict[str, Tuple[str, bytes]]) -> Columns:
    return Columns({name: np.frombuffer(data, dtype=dtype) for name, (dtype, data) in raw.items()})


class Tick:
    """What ``schedule`` sees of one tick.

    - ``index``: the tick's number; ``now_us``: simulated time at its end (when placements
      start), microseconds; ``fit_by``: ``"requests"`` or ``"usage"``.
    - ``tasks``: the waiting tasks, in queue order: ``task`` (slot), ``job_id``, ``task_index``,
      ``submit_us``, ``priority``, ``production``, ``scheduling_class`` (0-3, the trace's; 3 is
      the most latency-sensitive), ``cpu``, ``mem`` (as the fit rule charges), ``cpu_req``,
      ``mem_req``, ``constraint_set`` (0: none; equal sets, equal numbers).
    - ``nodes``: by node index: ``machine_id``, ``online``, ``cpu_cap``, ``mem_cap``, ``cpu``,
      ``mem`` (charged), ``cpu_req``, ``mem_req``, ``cpu_used``, ``mem_used``, ``prod_cpu_req``,
      ``prod_mem_req``, ``task_count``.
    - ``rng``: a :class:`numpy.random.Generator` seeded by the run's seed and the tick (the
      same on a resumed run).
    - ``attributes_epoch``: changes whenever a node's attributes change (what a task's
      constraints test), so what a policy derived from them can be kept until it moves.
    - ``meets(i)``: a boolean array over the nodes: which meet waiting task ``i``'s constraints.
    - ``running()``: the running tasks (``task``, ``node``, ``job_id``, ``task_index``,
      ``cpu_req``, ``mem_req``, ``cpu_use``, ``mem_use``, ``production``, ``scheduling_class``),
      for migrations.
    """

    def __init__(self, index: int, now_us: int, seed: int, fit_by: str, attributes_epoch: int,
                 tasks: Columns, nodes: Columns, access: Any) -> None:
        self.index = index
        self.now_us = now_us
        self.fit_by = fit_by
        self.attributes_epoch = attributes_epoch
        self.tasks = tasks
        self.nodes = nodes
        self._seed = seed
        self._rng: Optional[np.random.Generator] = None
        self._access = access

    @property
    def rng(self) -> np.random.Generator:
        if self._rng is None:
            self._rng = np.random.default_rng([self._seed, self.index])
        return self._rng

    def meets(self, i: int) -> np.ndarray:
        """Whether each node meets the constraints of waiting task ``i``."""
        return np.frombuffer(self._access.meets(int(i)), dtype=bool)

    def running(self) -> Columns:
        """The running tasks' columns (read from the cell now: only during ``schedule``)."""
        return _columns(self._access.running())

    def __repr__(self) -> str:
        return f"Tick({self.index}, {len(self.tasks)} waiting, {len(self.nodes)} nodes)"


def free_amounts(nodes: Columns) -> np.ndarray:
    """The nodes' free amounts as the run's fit rule reads them, four rows (int64): CPU,
    memory, and the production reservations' CPU and memory; -1 on an offline node."""
    online = nodes.online
    cap_cpu, cap_mem = nodes.cpu_cap.astype(np.int64), nodes.mem_cap.astype(np.int64)
    return np.stack([
        np.where(online, cap_cpu - nodes.cpu, -1),
        np.where(online, cap_mem - nodes.mem, -1),
        np.where(online, cap_cpu - nodes.prod_cpu_req, -1),
        np.where(online, cap_mem - nodes.prod_mem_req, -1),
    ])


class Room:
    """The nodes' free amounts as the run's fit rule reads them (``cpu``, ``mem``, and the
    production reservations' ``prod_cpu``, ``prod_mem``: the rows of :func:`free_amounts`), for
    a policy to place against and take from as it places, so that two tasks of one tick never
    share the same room."""

    def __init__(self, tick: "Tick") -> None:
        self.cpu, self.mem, self.prod_cpu, self.prod_mem = free_amounts(tick.nodes)
        self._tick = tick

    def fits(self, i: int) -> np.ndarray:
        """Per node, whether waiting task ``i`` may go there: room for it, its constraints
        met."""
        tasks = self._tick.tasks
        room = (self.cpu >= tasks.cpu[i]) & (self.mem >= tasks.mem[i])
        if tasks.production[i]:
            room &= (self.prod_cpu >= tasks.cpu_req[i]) & (self.prod_mem >= tasks.mem_req[i])
        if tasks.constraint_set[i]:
            room &= self._tick.meets(i)
        return room

    def take(self, i: int, node: int) -> None:
        """Waiting task ``i`` goes to ``node``: its room is taken."""
        tasks = self._tick.tasks
        self.cpu[node] -= tasks.cpu[i]
        self.mem[node] -= tasks.mem[i]
        if tasks.production[i]:
            self.prod_cpu[node] -= tasks.cpu_req[i]
            self.prod_mem[node] -= tasks.mem_req[i]


class Decisions:
    """``schedule``'s full answer: ``nodes`` (a node index per waiting task, -1: wait);
    ``migrations``, pairs ``(task, node)`` moving a running task (``tick.running().task``) to a
    node at once, applied after the placements, in order; and ``evictions``, running tasks
    (``tick.running().task``) taken off their nodes *before* the placements (their room is free
    for them), in order: an evicted task waits again, at the queue's end, from the next tick,
    and its run restarts when placed again (as when its machine is removed)."""

    def __init__(self, nodes: Iterable[int], migrations: Sequence[Tuple[int, int]] = (),
                 evictions: Iterable[int] = ()) -> None:
        self.nodes = nodes
        self.migrations = migrations
        self.evictions = evictions


class Policy:
    """A scheduler written in Python: define ``schedule(tick)`` (module doc)."""

    def schedule(self, tick: Tick) -> Any:
        raise NotImplementedError(f"{type(self).__name__} defines no schedule(tick)")

    def state(self) -> Any:
        """What a snapshot keeps of the policy (picklable): by default its ``__dict__``."""
        return self.__dict__

    def load(self, state: Any) -> None:
        """Restores what :meth:`state` gave."""
        self.__dict__.clear()
        self.__dict__.update(state)


def _class_name(policy: Any) -> str:
    kind = type(policy)
    return f"{kind.__module__}.{kind.__qualname__}"


def _decide(policy: Any, index: int, now_us: int, seed: int, fit_by: str, epoch: int,
            tasks: Dict[str, Tuple[str, bytes]], nodes: Dict[str, Tuple[str, bytes]],
            access: Any) -> Tuple[bytes, bytes, bytes]:
    """Called by the engine each tick: ``policy.schedule`` on the tick, its answer as int64
    bytes (a node per waiting task; migrations as task, node pairs; evicted tasks)."""
    tick = Tick(index, now_us, seed, fit_by, epoch, _columns(tasks), _columns(nodes), access)
    answer = policy.schedule(tick)
    migrations: Sequence[Tuple[int, int]] = ()
    evictions: Iterable[int] = ()
    if isinstance(answer, Decisions):
        answer, migrations, evictions = answer.nodes, answer.migrations, answer.evictions
    chosen = np.asarray(answer)
    if chosen.dtype.kind not in "iu" and not (chosen.size == 0 and chosen.dtype.kind == "f"):
        raise TypeError(
            f"{_class_name(policy)}.schedule() must return node indices as integers "
            f"(-1: wait), one per waiting task; it returned {chosen.dtype} values")
    moved = np.asarray(migrations, dtype=np.int64).reshape(-1, 2) if len(migrations) else \
        np.empty((0, 2), dtype=np.int64)
    evicted = np.asarray(list(evictions), dtype=np.int64).reshape(-1)
    return chosen.astype(np.int64).reshape(-1).tobytes(), moved.tobytes(), evicted.tobytes()


def _state(policy: Any) -> bytes:
    return pickle.dumps(policy.state(), protocol=4)


def _load(policy: Any, state: bytes) -> None:
    policy.load(pickle.loads(state))
