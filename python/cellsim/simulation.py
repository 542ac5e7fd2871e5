"""A step API for learning schedulers, with gymnasium's conventions (without depending on it):

    sim = cellsim.Simulation(trace, hours=24)
    obs = sim.reset()
    while True:
        obs, reward, done, info = sim.step(actions_for(obs))
        if done:
            break
    sim.run      # the finished run's outputs (cellsim.Run)

The run is an ordinary run of policy ``python`` whose decisions come from ``step``: the engine
runs on its own thread and waits, inside each tick, for the actions.

**Observation**: the tick's :class:`cellsim.policy.Tick`: ``obs.tasks`` (the waiting tasks, in
the order they became pending: requests, the amounts the fit rule charges, priority, production,
scheduling class, job, constraint set), ``obs.nodes`` (capacities, what their tasks are charged, requested, used,
online), ``obs.meets(i)`` and ``obs.running()``, ``obs.rng``, ``obs.index``, ``obs.now_us``,
``obs.fit_by``; integer amounts in units of 1e-6 of the largest machine (module
:mod:`cellsim.policy`). It is valid until the next ``step``.

**Action**: a node index per waiting task (``-1``: leave it waiting), an integer array of
``len(obs.tasks)`` values in ``[-1, len(obs.nodes))``, or a :class:`cellsim.Decisions` with
migrations and evictions. The engine checks every decision; a wrong one (no room, offline, constraints not
met) ends the run and ``step`` raises :class:`cellsim.CellsimError` naming the task.

**Reward**: minus the number of waiting tasks the action left waiting (a queueing cost: summed
over a run, minus the task-ticks spent waiting at the ticks' ends). **Done**: the run has ended
(its last tick done; ``obs`` is then ``None``). **Info**: ``tick``, ``now_us``, ``placed``,
``waiting``; at the end ``run``, the :class:`cellsim.Run`.
"""

from __future__ import annotations

import queue
import threading
from typing import Any, Dict, Optional, Tuple

import numpy as np

from .policy import Decisions, Policy, Tick

__all__ = ["Simulation"]


class _Closed(Exception):
    """Raised inside the engine's call when the simulation is closed before its run ended."""


class _Stepper(Policy):
    """The run's policy: hands each tick to ``step`` and waits for its actions."""

    def __init__(self) -> None:
        self.ticks: "queue.Queue[Any]" = queue.Queue()
        self.actions: "queue.Queue[Any]" = queue.Queue()

    def schedule(self, tick: Tick) -> Any:
        self.ticks.put(tick)
        action = self.actions.get()
        if isinstance(action, _Closed):
            raise action
        return action

    def state(self) -> Any:
        return None  # the learner's state lives outside the run

    def load(self, state: Any) -> None:
        pass


_END = object()


class Simulation:
    """A run driven tick by tick from Python (module doc). ``trace``, ``hours``, ``config``,
    ``seed``, ``out`` and further ``run`` flags are :func:`cellsim.run`'s."""

    def __init__(self, trace: Any = None, *, hours: Optional[float] = None,
                 config: Optional[Dict[str, Any]] = None, seed: Optional[int] = None,
                 out: Any = None, **options: Any) -> None:
        self._run_args = dict(trace=trace, hours=hours, config=config, seed=seed, out=out,
                              **options)
        self._stepper: Optional[_Stepper] = None
        self._thread: Optional[threading.Thread] = None
        self._obs: Optional[Tick] = None
        #: The finished run (after the step that returned ``done``).
        self.run = None

    def reset(self) -> Tick:
        """Starts the run (closing one under way) and returns the first tick's observation."""
        self.close()
        from . import run

        stepper = _Stepper()
        outcome: Dict[str, Any] = {}

        def simulate() -> None:
            try:
                outcome["run"] = run(policy=stepper, **self._run_args)
            except BaseException as e:  # handed to step(), which raises it
                outcome["error"] = e
            stepper.ticks.put(_END)

        self._stepper, self._outcome = stepper, outcome
        self._thread = threading.Thread(target=simulate, name="cellsim-simulation", daemon=True)
        self._thread.start()
        obs = self._next()
        if obs is None:
            raise RuntimeError("the run ended before its first tick")
        return obs

    def _next(self) -> Optional[Tick]:
        assert self._stepper is not None
        got = self._stepper.ticks.get()
        if got is _END:
            self._thread.join()
            self._stepper, self._obs = None, None
            if "error" in self._outcome:
                raise self._outcome["error"]
            self.run = self._outcome["run"]
            return None
        self._obs = got
        return got

    def step(self, action: Any) -> Tuple[Optional[Tick], float, bool, Dict[str, Any]]:
        """Applies ``action`` to the current tick and runs to the next one."""
        if self._stepper is None or self._obs is None:
            raise RuntimeError("no run under way: call reset() first")
        obs = self._obs
        nodes = action.nodes if isinstance(action, Decisions) else action
        chosen = np.asarray(nodes).reshape(-1)
        placed = int(np.count_nonzero(chosen >= 0))
        info: Dict[str, Any] = {"tick": obs.index, "now_us": obs.now_us, "placed": placed,
                                "waiting": len(obs.tasks)}
        self._stepper.actions.put(action)
        reward = -float(len(obs.tasks) - placed)
        following = self._next()
        if following is None:
            info["run"] = self.run
        return following, reward, following is None, info

    def close(self) -> None:
        """Ends a run under way (its outputs stay, unfinished)."""
        if self._stepper is not None:
            self._stepper.actions.put(_Closed("the simulation was closed"))
            try:
                while self._next() is not None:
                    self._stepper.actions.put(_Closed("the simulation was closed"))
            except _Closed:
                pass
            self._stepper = None
        self._obs = None

    def __enter__(self) -> "Simulation":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
