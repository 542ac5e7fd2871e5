"""Schedulers written in Python (issue 61 item 4): the numpy first-fit writes exactly what the
engine's first-fit writes, on a generated cell and on the real trace's sample; the engine
refuses a wrong decision naming the task; an exception in ``schedule`` comes back as itself; a
stateful policy resumes byte-identically after Ctrl-C and on any thread count, and does not
when its state is not restored (the test can fail)."""

import os
import shutil
import signal

import numpy as np
import pyarrow.parquet as pq
import pytest

import cellsim
from conftest import REPO, outputs

SAMPLE = REPO.parent / "shared" / "gcd-sample"


def same_tables(a: cellsim.Run, b: cellsim.Run) -> None:
    """The two runs' engine tables hold the same rows (their files' metadata names each
    run's policy and config, so the bytes differ there)."""
    for name in ("ticks", "nodes", "tasks", "jobs"):
        x, y = a.table(name), b.table(name)
        assert x.num_rows > 0, name
        assert x.replace_schema_metadata(None).equals(y.replace_schema_metadata(None)), name


def test_numpy_first_fit_writes_first_fits_outputs(trace, tmp_path):
    python = cellsim.run(trace, cellsim.FirstFit(), hours=2, out=tmp_path / "py")
    rust = cellsim.run(trace, "first-fit", hours=2, out=tmp_path / "rust")
    assert python.summary["policy"] == "python"
    assert python.config["policy"] == {"kind": "python", "class": "cellsim.first_fit.FirstFit"}
    assert rust.summary["averages"]["tasks_pending"] > 1, "tasks wait: the order matters"
    same_tables(python, rust)


@pytest.mark.skipif(not SAMPLE.is_dir(), reason="../shared/gcd-sample (CI has it)")
def test_numpy_first_fit_on_the_real_sample(tmp_path):
    """The real trace's first 29 minutes: 12.5k machines, 11k tasks waiting at the start, with
    constraints."""
    trace = cellsim.ingest(SAMPLE, tmp_path / "parquet")
    python = cellsim.run(trace, cellsim.FirstFit(), out=tmp_path / "py")
    rust = cellsim.run(trace, "first-fit", out=tmp_path / "rust")
    same_tables(python, rust)
    assert python.ticks().column("tasks_running")[0].as_py() > 100_000


class Crowding(cellsim.Policy):
    """Every waiting task on node 0."""

    def schedule(self, tick):
        return np.zeros(len(tick.tasks), dtype=np.int64)


class Failing(cellsim.Policy):
    def schedule(self, tick):
        if tick.index == 2:
            raise ValueError("a bug in the policy")
        return np.full(len(tick.tasks), -1)


class Floats(cellsim.Policy):
    def schedule(self, tick):
        return np.zeros(len(tick.tasks))


def test_wrong_decisions_and_exceptions_stop_the_run(trace, tmp_path):
    with pytest.raises(cellsim.CellsimError,
                       match=r"tick 0: the policy stopped the run: waiting task \d+ \(job \d+ "
                             r"task \d+\): node 0 has no room for it by requests: CPU"):
        cellsim.run(trace, Crowding(), hours=1, out=tmp_path / "crowding")
    assert not (tmp_path / "crowding" / "summary.json").exists()
    with pytest.raises(ValueError, match="a bug in the policy"):
        cellsim.run(trace, Failing(), hours=1, out=tmp_path / "failing")
    with pytest.raises(TypeError, match=r"Floats.schedule\(\) must return node indices as "
                                        r"integers"):
        cellsim.run(trace, Floats(), hours=1, out=tmp_path / "floats")
    with pytest.raises(cellsim.CellsimError, match="neither a policy name nor an object"):
        cellsim.run(trace, object(), hours=1, out=tmp_path / "object")


class Drawing(cellsim.Policy):
    """Each waiting task on a node drawn among those with room, the draw offset by a count of
    placements the policy keeps (its state); migrates one running task every fifth tick when it
    can, and evicts one on others. With ``interrupt_at``, sends itself SIGINT at that tick
    (Ctrl-C)."""

    def __init__(self, interrupt_at=None, restores=True):
        self.placed = 0
        self.migrated = 0
        self._interrupt_at = interrupt_at
        self._restores = restores

    def schedule(self, tick):
        if tick.index == self._interrupt_at:
            os.kill(os.getpid(), signal.SIGINT)
        room = cellsim.Room(tick)
        chosen = np.full(len(tick.tasks), -1, dtype=np.int64)
        for i in range(len(tick.tasks)):
            candidates = np.flatnonzero(room.fits(i))
            if len(candidates) == 0:
                continue
            n = candidates[(tick.rng.integers(len(candidates)) + self.placed) % len(candidates)]
            chosen[i] = n
            self.placed += 1
            room.take(i, n)
        migrations = []
        running = tick.running()
        if len(running) and tick.index % 5 == 0:
            k = int(tick.rng.integers(len(running)))
            task, node = int(running.task[k]), int(running.node[k])
            fits = (room.cpu >= running.cpu_req[k]) & (room.mem >= running.mem_req[k])
            if tick.fit_by == "requests" and not running.production[k]:
                fits[node] = False
                targets = np.flatnonzero(fits)
                if len(targets):
                    migrations.append((task, int(targets[0])))
                    self.migrated += 1
        evictions = []
        if len(running) and tick.index % 5 == 2:
            evictions.append(int(running.task[tick.rng.integers(len(running))]))
        return cellsim.Decisions(chosen, migrations, evictions)

    def state(self):
        return {"placed": self.placed, "migrated": self.migrated}

    def load(self, state):
        if self._restores:
            self.placed, self.migrated = state["placed"], state["migrated"]


def test_a_stateful_policy_resumes_byte_identically(trace, tmp_path):
    whole = cellsim.run(trace, Drawing(), hours=2, threads=1, out=tmp_path / "whole")
    assert whole.complete
    two = cellsim.run(trace, Drawing(), hours=2, threads=2, out=tmp_path / "two")
    assert outputs(two.path) == outputs(whole.path)
    out = tmp_path / "stopped"
    with pytest.raises(KeyboardInterrupt):
        cellsim.run(trace, Drawing(interrupt_at=40), hours=2, out=out)
    assert not (out / "summary.json").exists()
    copy, bare = tmp_path / "copy", tmp_path / "bare"
    shutil.copytree(out, copy)
    shutil.copytree(out, bare)
    resumed = cellsim.resume(out, policy=Drawing())
    assert resumed.complete
    assert outputs(resumed.path) == outputs(whole.path)
    # The same snapshot resumed by a policy that forgets its state: other placements.
    forgets = cellsim.resume(copy, policy=Drawing(restores=False))
    assert outputs(forgets.path) != outputs(whole.path)
    # Resuming a Python policy's run needs the object.
    with pytest.raises(cellsim.CellsimError, match="runs only from the Python package"):
        cellsim.command("resume", bare)


def test_a_tick_is_read_only_while_schedule_runs(trace, tmp_path):
    kept = []

    class Keeps(cellsim.Policy):
        def schedule(self, tick):
            kept.append(tick)
            assert not tick.nodes.cpu_cap.flags.writeable
            return np.full(len(tick.tasks), -1)

    cellsim.run(trace, Keeps(), hours=0.1, out=tmp_path / "keeps")
    with pytest.raises(RuntimeError, match="this tick is over"):
        kept[0].meets(0)
    with pytest.raises(RuntimeError, match="this tick is over"):
        kept[0].running()
    assert isinstance(kept[0].nodes.cpu_cap, np.ndarray)


def test_evicted_tasks_wait_again_at_the_queues_end(trace, tmp_path):
    """Every running task of the lowest scheduling class evicted at tick 20: at tick 21 they
    wait together, in eviction order, after the tasks that were waiting; evicting a task that
    does not run is refused, naming it."""
    seen = {}

    class Evicting(cellsim.FirstFit):
        def schedule(self, tick):
            chosen = super().schedule(tick)
            if tick.index == 21:
                seen["waiting"] = tick.tasks.task.tolist()
            if tick.index != 20:
                return chosen
            running = tick.running()
            low = running.task[running.scheduling_class == running.scheduling_class.min()]
            seen["evicted"] = low.tolist()
            seen["classes"] = {(j, i): c for j, i, c in zip(
                running.job_id.tolist(), running.task_index.tolist(),
                running.scheduling_class.tolist())}
            return cellsim.Decisions(chosen, evictions=low)

    run = cellsim.run(trace, Evicting(), hours=1, out=tmp_path / "evicting")
    assert run.complete
    evicted, waiting = seen["evicted"], seen["waiting"]
    assert len(evicted) > 10
    at = waiting.index(evicted[0])
    assert waiting[at:at + len(evicted)] == evicted
    # The scheduling classes are the trace's.
    events = pq.read_table(trace / "task_events",
                           columns=["job_id", "task_index", "scheduling_class"]).to_pylist()
    in_trace = {(e["job_id"], e["task_index"]): e["scheduling_class"] for e in events}
    classes = seen["classes"]
    assert len(set(classes.values())) > 1
    assert all(in_trace[task] == c for task, c in classes.items())

    class EvictsWaiting(cellsim.Policy):
        def schedule(self, tick):
            stay = np.full(len(tick.tasks), -1)
            return cellsim.Decisions(stay, evictions=tick.tasks.task[:1]) if len(stay) else stay

    with pytest.raises(cellsim.CellsimError,
                       match=r"tick 0: the policy stopped the run: eviction of task slot \d+ "
                             r"\(job \d+ task \d+\): the task is not running"):
        cellsim.run(trace, EvictsWaiting(), hours=1, out=tmp_path / "wrong")
