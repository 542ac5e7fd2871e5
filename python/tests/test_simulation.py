"""The step API (issue 61 item 5): the random agent example runs a simulated day and checks its
invariants; stepping first-fit's choices writes first-fit's run; a wrong action ends the run
with the engine's message; closing a run under way leaves it unfinished."""

import importlib.util

import numpy as np
import pytest

import cellsim
from conftest import REPO


def example():
    path = REPO / "python" / "examples" / "random_agent.py"
    spec = importlib.util.spec_from_file_location("random_agent", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_random_agent_runs_a_simulated_day(tmp_path):
    steps, total, run = example().main(hours=24, out=tmp_path / "day")
    assert steps == 1440 and run.summary["ticks"] == 1440
    assert run.summary["policy"] == "python"
    assert total < 0  # the agent leaves a tenth of the tasks waiting
    assert run.tasks().num_rows > 1000


def test_stepping_first_fits_choices_writes_first_fits_run(trace, tmp_path):
    sim = cellsim.Simulation(trace, hours=1, out=tmp_path / "stepped")
    first_fit = cellsim.FirstFit()
    obs, done, steps = sim.reset(), False, 0
    while not done:
        obs, reward, done, info = sim.step(first_fit.schedule(obs))
        steps += 1
    rust = cellsim.run(trace, "first-fit", hours=1, out=tmp_path / "rust")
    assert steps == 60 and info["run"].complete
    for name in ("ticks", "tasks", "jobs"):
        a, b = info["run"].table(name), rust.table(name)
        assert a.replace_schema_metadata(None).equals(b.replace_schema_metadata(None)), name


def test_a_wrong_action_ends_the_run_and_close_stops_one(trace, tmp_path):
    sim = cellsim.Simulation(trace, hours=1, out=tmp_path / "wrong")
    obs = sim.reset()
    with pytest.raises(cellsim.CellsimError, match=r"tick 0: .*node 0 has no room for it"):
        sim.step(np.zeros(len(obs.tasks), dtype=np.int64))
    with pytest.raises(RuntimeError, match="call reset"):
        sim.step([])
    with cellsim.Simulation(trace, hours=1, out=tmp_path / "closed") as sim:
        obs = sim.reset()
        obs, _, done, _ = sim.step(np.full(len(obs.tasks), -1))
        assert not done and obs.index == 1
    assert not (tmp_path / "closed" / "summary.json").exists()
    with pytest.raises(RuntimeError, match="this tick is over"):
        obs.meets(0)
