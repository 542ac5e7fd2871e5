"""The Python package against the command line it wraps (issue 61 items 1-2).

Every run here is also made by the ``cellsim`` binary (``CELLSIM_BIN``, or the repository's
``target/release/cellsim``): the package must write the same bytes, fail with the same message
and read back what the files hold.
"""

import json
import os
import signal
import threading
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import cellsim

from conftest import cli, outputs


def test_a_run_writes_what_the_command_line_writes(trace, tmp_path):
    run = cellsim.run(trace, "first-fit", hours=1, out=tmp_path / "py")
    done = cli("run", "--trace", trace, "--policy", "first-fit", "--hours", 1,
               "--out", tmp_path / "cli")
    assert done.returncode == 0, done.stderr
    assert run.complete and run.exit_code == 0
    assert outputs(run.path) == outputs(tmp_path / "cli")
    assert len(outputs(run.path)) >= 4
    # Each file says whose it is (issue 61 item 3).
    for part in sorted(run.path.glob("*/*.parquet")):
        about = pq.read_metadata(part).metadata
        assert about[b"cellsim.policy"] == b"first-fit", part
        assert about[b"cellsim.seed"] == str(run.config["seed"]).encode()
        assert about[b"cellsim.build"].decode() == cellsim.build()


def test_tables_and_summary_read_back_the_files(trace, tmp_path):
    run = cellsim.run(trace, "first-fit", hours=1, out=tmp_path / "run")
    ticks = run.ticks()
    # One row per one-minute tick of the hour (the default tick), as the files hold them.
    files = sorted((run.path / "ticks").glob("*.parquet"))
    assert ticks.num_rows == sum(pq.read_metadata(f).num_rows for f in files) == 60
    assert run.summary["policy"] == "first-fit" == run.policy
    assert run.config["hours"] == 1.0
    assert run.summary["ticks"] == 60
    assert {"ticks", "nodes", "tasks", "jobs"} <= set(run.tables)
    for name in ("nodes", "tasks", "jobs"):
        assert getattr(run, name)().num_rows > 0, name
    frame = ticks.to_pandas()
    assert list(frame.columns) == ticks.column_names
    with pytest.raises(cellsim.CellsimError, match="no such table"):
        run.policy_table("migrations")


def test_a_config_mapping_is_the_config_file(trace, tmp_path):
    config = {"tick": "30s", "policy": {"kind": "nbs", "solver": "structured",
                                         "classes_above_jobs": 8}}
    run = cellsim.run(trace, hours=0.5, config=config, out=tmp_path / "nbs")
    assert run.config["policy"]["solver"] == "structured"
    assert run.config["tick"] == "30s"
    assert run.ticks().num_rows == 60  # half an hour of 30 s ticks
    text = (tmp_path / "nbs.toml")
    text.write_text('tick = "30s"\n[policy]\nkind = "nbs"\nsolver = "structured"\n'
                    "classes_above_jobs = 8\n")
    done = cli("run", "--trace", trace, "--hours", 0.5, "--config", text, "--out",
               tmp_path / "cli")
    assert done.returncode == 0, done.stderr
    assert outputs(run.path) == outputs(tmp_path / "cli")


def test_errors_carry_the_command_lines_message(tmp_path):
    missing = tmp_path / "no-such-trace"
    with pytest.raises(cellsim.CellsimError) as raised:
        cellsim.run(missing, "first-fit", hours=1, out=tmp_path / "py")
    done = cli("run", "--trace", missing, "--policy", "first-fit", "--hours", 1,
               "--out", tmp_path / "cli")
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last == f"error: {raised.value}"
    assert str(missing) in str(raised.value)
    with pytest.raises(cellsim.CellsimError, match="no-such-policy"):
        cellsim.run(policy="no-such-policy", hours=1, out=tmp_path / "p")
    with pytest.raises(cellsim.CellsimError, match="unexpected argument"):
        cellsim.command("run", "--no-such-flag")


def test_runs_gathers_a_sweep_with_the_settings_that_vary(trace, tmp_path):
    for seed in (1, 2):
        cellsim.run(trace, "random", hours=0.5, seed=seed, out=tmp_path / "sweep" / f"s{seed}")
    table = cellsim.runs(tmp_path / "sweep")
    assert table.num_rows == 2
    assert table.column("config.seed").to_pylist() == [1, 2]
    assert "config.hours" not in table.column_names  # the same in both
    assert table.column("policy").to_pylist() == ["random", "random"]
    assert table.column("ticks").to_pylist() == [30, 30]  # half an hour of one-minute ticks
    for row, path in enumerate(table.column("run").to_pylist()):
        summary = json.loads((Path(path) / "summary.json").read_text())
        assert table.column("averages.cpu_used_ratio")[row].as_py() == \
            summary["averages"]["cpu_used_ratio"]
        # Seed 000 Table 2's usage rises, one column per threshold.
        assert table.column("averages.usage_rises.10pct")[row].as_py() == \
            summary["averages"]["usage_rises"]["10pct"]
    for row, path in enumerate(table.column("run").to_pylist()):
        summary = json.loads((Path(path) / "summary.json").read_text())
        assert summary["config"]["seed"] == row + 1
    with pytest.raises(cellsim.CellsimError, match="no finished run"):
        cellsim.runs(tmp_path / "empty-dir-that-is-not-there")


def test_build_and_toml():
    assert cellsim.build() == cli("--version").stdout.split(" ", 1)[1].strip()
    text = cellsim._toml({"seed": 3, "policy": {"kind": "nbs", "mu": 1e-3,
                                                "inner": {"on": True}}, "tick": "1min"})
    assert text == ('seed = 3\ntick = "1min"\n[policy]\nkind = "nbs"\nmu = 0.001\n'
                    "[policy.inner]\non = true\n")


def test_the_gil_is_released_while_a_run_runs(trace, tmp_path):
    """A Python thread keeps running during the call (with the GIL held it could not run
    between the call's start and end at all)."""
    state = {"in_call": False, "stop": False}
    hits = []

    def spin():
        while not state["stop"]:
            if state["in_call"]:
                hits.append(time.perf_counter())
            time.sleep(0.001)

    thread = threading.Thread(target=spin)
    thread.start()
    state["in_call"] = True
    start = time.perf_counter()
    run = cellsim.run(trace, "masb", hours=2, multiply=8, out=tmp_path / "m8")
    end = time.perf_counter()
    state["in_call"], state["stop"] = False, True
    thread.join()
    assert run.complete and run.config["scale"]["multiply"] == 8
    inside = [h for h in hits if start + 0.02 < h < end - 0.02]
    assert end - start > 0.1, "the run is too short to tell"
    assert len(inside) >= 10, (end - start, len(inside))


def test_ctrl_c_stops_a_run_with_a_snapshot_and_resume_finishes_it(trace, tmp_path):
    """SIGINT (Ctrl-C, a notebook's interrupt) during a run: the run finishes its tick and
    snapshots, then Python raises KeyboardInterrupt; `resume` finishes it with the bytes of a
    run never stopped."""
    out = tmp_path / "stopped"

    def interrupt_once_started():
        while not (out / "run.toml").exists():
            time.sleep(0.001)
        os.kill(os.getpid(), signal.SIGINT)

    sender = threading.Thread(target=interrupt_once_started)
    sender.start()
    with pytest.raises(KeyboardInterrupt):
        cellsim.run(trace, "masb", hours=2, multiply=8, out=out)
    sender.join()
    stopped = cellsim.Run(out, exit_code=cellsim.EXIT_SNAPSHOTTED)
    assert not stopped.complete and any((out / "snapshots").iterdir())
    with pytest.raises(cellsim.CellsimError, match="has not finished"):
        stopped.summary
    resumed = cellsim.resume(out)
    assert resumed.complete and resumed.exit_code == 0
    whole = cellsim.run(trace, "masb", hours=2, multiply=8, out=tmp_path / "whole")
    assert outputs(resumed.path) == outputs(whole.path)


def test_polars_and_duckdb_read_a_sweep_of_different_policies(trace, tmp_path):
    """Runs of three policies (first-fit, borg-replay, MASB: their own counters differ) read by
    one glob over `ticks/` in polars and DuckDB, every column kept; each run's counters in its
    own `counters/`, a row per tick; pandas through the package."""
    import duckdb  # the test extra: pip install ./python[test]
    import polars
    for policy in ("first-fit", "borg-replay", "masb"):
        cellsim.run(trace, policy, hours=0.5, out=tmp_path / policy)
    files = sorted(tmp_path.glob("*/ticks/*.parquet"))
    rows = sum(pq.read_metadata(f).num_rows for f in files)
    assert rows == 90  # three half hours of one-minute ticks
    pattern = str(tmp_path / "*" / "ticks" / "*.parquet")
    frame = polars.read_parquet(pattern)
    assert frame.height == rows and frame.width == 23  # 18, and the 5 usage rises
    assert duckdb.sql(f"select count(*) from read_parquet('{pattern}')").fetchall() == [(rows,)]
    columns = duckdb.sql(f"select * from read_parquet('{pattern}') limit 1").columns
    assert columns == frame.columns
    masb = cellsim.Run(tmp_path / "masb")
    counters = masb.counters()
    assert counters.num_rows == 30 and "migrations_started" in counters.column_names
    assert "migrations_started" not in masb.ticks().column_names
    assert "placements_skipped" in cellsim.Run(tmp_path / "borg-replay").counters().column_names
    frame = cellsim.Run(tmp_path / "first-fit").ticks().to_pandas()
    assert len(frame) == 30 and frame["nodes_online"].gt(0).all()


def test_what_a_run_prints_goes_to_pythons_streams(trace, tmp_path, capsys):
    """The report table and the log's notes reach sys.stdout and sys.stderr (what a notebook
    shows), as the command line prints them to its own."""
    run = cellsim.run(trace, "first-fit", hours=1, out=tmp_path / "py")
    printed = capsys.readouterr()
    done = cli("run", "--trace", trace, "--policy", "first-fit", "--hours", 1,
               "--out", tmp_path / "cli")
    assert f"outputs in {run.path}" in printed.out
    # The report's rows (the columns' widths follow the run directory's name).
    rows = lambda text: [line.split() for line in text.splitlines()
                         if line.startswith(("policy ", "idle ", "STA ", "CPU used "))]
    assert rows(printed.out) == rows(done.stdout)
    assert len(rows(printed.out)) == 4 and rows(printed.out)[0] == ["policy", "first-fit"]
    assert "run: " in printed.err  # the progress line at the end


def test_progress_is_one_line_updated_in_place_in_a_notebook(trace, tmp_path, capsys,
                                                              monkeypatch):
    """In a Jupyter kernel each command's progress lines go to one display, updated in place
    (a fake display here records the calls), not to sys.stderr; the report still goes to
    sys.stdout."""
    from cellsim import _progress

    calls = []

    def display(text, handle):
        calls.append((text, handle))
        return handle if handle is not None else object()

    monkeypatch.setattr(_progress, "_in_notebook", lambda: True)
    monkeypatch.setattr(_progress, "_display", display)
    cellsim.run(trace, "first-fit", hours=1, out=tmp_path / "one")
    first = len(calls)
    cellsim.run(trace, "first-fit", hours=1, out=tmp_path / "two")
    printed = capsys.readouterr()
    assert first >= 1 and len(calls) > first
    assert all(text.startswith("run: ") and "\n" not in text for text, _ in calls)
    assert "100.0%" in calls[first - 1][0] and "100.0%" in calls[-1][0]
    # Each command starts a display of its own, then updates it.
    assert calls[0][1] is None and calls[first][1] is None
    assert all(handle is not None for _, handle in calls[1:first] + calls[first + 1:])
    assert "run: " not in printed.err
    assert "outputs in" in printed.out
