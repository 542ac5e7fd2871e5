"""cellsim from Python: make and ingest traces, run and resume policies, read the results.

Every function runs the same code as the ``cellsim`` command line, in this process (the GIL is
released while it runs), and fails with :class:`CellsimError` carrying the command line's own
message. Results come back as :mod:`pyarrow` tables (``.to_pandas()``, ``polars.from_arrow``).

    >>> import cellsim
    >>> run = cellsim.run(policy="first-fit", hours=1, out="runs/ff")   # an embedded small cell
    >>> run.summary["policy"], run.ticks().num_rows

Exit codes the command line uses become attributes, not exceptions: a run stopped by a signal
(Ctrl-C in a notebook: the run snapshots, then Python raises ``KeyboardInterrupt``) has
``Run.exit_code == 75`` and continues with :func:`resume`; a ``strict`` run that ended with work
undone has ``exit_code == 3``. ``Run.complete`` says whether every tick was done.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Union

from ._cellsim import CellsimError, build as _build, command as _command
from .first_fit import FirstFit
from .policy import Decisions, Policy, Room, Tick, _class_name
from .simulation import Simulation

__all__ = [
    "CellsimError",
    "Decisions",
    "FirstFit",
    "Policy",
    "Room",
    "Tick",
    "Run",
    "Simulation",
    "build",
    "command",
    "experiment",
    "generate",
    "ingest",
    "resume",
    "run",
    "runs",
]

PathLike = Union[str, "os.PathLike[str]"]

#: Exit code of a run stopped by a signal after a snapshot (``cellsim resume`` continues it).
EXIT_SNAPSHOTTED = 75
#: Exit code of a ``strict`` run that stalled or ended with work undone.
EXIT_UNFINISHED = 3


def build() -> str:
    """This build's identity (version and git commit), as every run's summary records it."""
    return _build()


def command(*args: Any) -> int:
    """Runs ``cellsim ARGS...`` in this process and returns its exit code (0, 3 or 75).

    Raises :class:`CellsimError` with the command line's message on an error or bad usage.
    """
    code, _message = _command([str(a) for a in args])
    return code


def ingest(trace_dir: PathLike, out_dir: PathLike, *, tables: Optional[Iterable[str]] = None,
           skip_bad_rows: bool = False, threads: Optional[int] = None) -> Path:
    """Converts a GCD 2011 trace directory (CSV or CSV.gz parts) to Parquet in ``out_dir``."""
    args: List[Any] = ["ingest", trace_dir, out_dir]
    if tables is not None:
        args += ["--tables", ",".join(tables)]
    if skip_bad_rows:
        args.append("--skip-bad-rows")
    if threads is not None:
        args += ["--threads", threads]
    command(*args)
    return Path(out_dir)


def generate(out_dir: PathLike, *, machines: int = 1000, hours: float = 24.0, seed: int = 1,
             scenario: Optional[str] = None, **options: Any) -> Path:
    """Writes a synthetic trace in the GCD 2011 CSV.gz layout (``cellsim gen``).

    ``options`` are further ``gen`` flags by name (``part_hours=1``, ``load=50``: ``--load 50``).
    """
    args: List[Any] = ["gen", out_dir, "--machines", machines, "--hours", hours, "--seed", seed]
    if scenario is not None:
        args += ["--scenario", scenario]
    args += _flags(options)
    command(*args)
    return Path(out_dir)


def run(trace: Optional[PathLike] = None, policy: Union[str, Policy, None] = None, *,
        hours: Optional[float] = None, config: Optional[Mapping[str, Any]] = None,
        out: Optional[PathLike] = None, seed: Optional[int] = None,
        threads: Optional[int] = None, **options: Any) -> "Run":
    """Replays ``trace`` (an ingested Parquet directory; none: the embedded synthetic cell)
    under ``policy`` and returns the :class:`Run`.

    ``policy`` names one of cellsim's policies (``"masb"``) or is a scheduler written in Python,
    an instance of a :class:`cellsim.Policy` subclass (:mod:`cellsim.policy`): the run's config
    then has ``kind = "python"`` and the class's name.

    ``config`` holds the run's settings as the TOML file would (``{"policy": {"kind": "nbs",
    "solver": "structured"}, "tick": "1min"}``); the keyword arguments win over it, and
    ``options`` are further ``run`` flags by name (``strict=True``, ``multiply=8``). Without
    ``out`` the run goes to a new temporary directory (kept: its path is ``Run.path``).
    """
    if out is None:
        out = tempfile.mkdtemp(prefix="cellsim-run-")
    out = Path(out)
    args: List[Any] = ["run", "--out", out]
    config_file = None
    hosted = None
    if policy is not None and not isinstance(policy, str):
        hosted, policy = _hosted(policy), None
        config = dict(config or {})
        config["policy"] = {"kind": "python", "class": _class_name(hosted)}
    if config:
        # The run records its effective config in out/run.toml; this file only hands it over.
        with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
            f.write(_toml(config))
            config_file = f.name
        args += ["--config", config_file]
    if trace is not None:
        args += ["--trace", trace]
    if policy is not None:
        args += ["--policy", policy]
    if hours is not None:
        args += ["--hours", hours]
    if seed is not None:
        args += ["--seed", seed]
    if threads is not None:
        args += ["--threads", threads]
    args += _flags(options)
    try:
        code, _message = _command([str(a) for a in args], hosted)
    finally:
        if config_file is not None:
            os.unlink(config_file)
    return Run(out, exit_code=code)


def resume(run_dir: PathLike, *, threads: Optional[int] = None,
           trace: Optional[PathLike] = None, policy: Optional[Policy] = None) -> "Run":
    """Continues a run from its newest usable snapshot; outputs are byte-identical to a run
    that never stopped. A run of a Python scheduler needs a new instance of its class as
    ``policy`` (its state comes from the snapshot)."""
    args: List[Any] = ["resume", run_dir]
    if threads is not None:
        args += ["--threads", threads]
    if trace is not None:
        args += ["--trace", trace]
    hosted = None if policy is None else _hosted(policy)
    code, _message = _command([str(a) for a in args], hosted)
    return Run(run_dir, exit_code=code)


def _hosted(policy: Any) -> Any:
    """``policy`` if it can schedule, else a clear error."""
    if not callable(getattr(policy, "schedule", None)):
        raise CellsimError(
            f"policy: {policy!r} is neither a policy name nor an object with schedule(tick) "
            "(subclass cellsim.Policy)")
    return policy


def experiment(name: str, out: PathLike, **options: Any) -> "pyarrow.Table":
    """Runs one of the seeds' experiments (``cellsim experiment NAME``) and returns its
    ``results.parquet`` (``out/results.md`` has the papers' values beside ours)."""
    command("experiment", name, "--out", out, *_flags(options))
    import pyarrow.parquet as pq

    return pq.read_table(Path(out) / "results.parquet")


class Run:
    """A run directory: its summary, config and tables.

    Tables are read lazily as :class:`pyarrow.Table`; ``policy_table(name)`` reads a policy's own
    table (``migrations``, ``clusters``, ...; ``Run.tables`` lists what the run has).
    """

    def __init__(self, path: PathLike, *, exit_code: int = 0) -> None:
        self.path = Path(path)
        if not self.path.is_dir():
            raise CellsimError(f"{self.path}: no such run directory")
        #: The command's exit code: 0 done, 3 unfinished under strict, 75 stopped by a signal.
        self.exit_code = exit_code

    def __repr__(self) -> str:
        state = "complete" if self.complete else f"not complete (exit code {self.exit_code})"
        return f"Run({str(self.path)!r}, policy={self.policy!r}, {state})"

    @property
    def complete(self) -> bool:
        """Every tick done and the summary written (a stopped run has none until resumed)."""
        return self.exit_code in (0, EXIT_UNFINISHED) and (self.path / "summary.json").is_file()

    @property
    def summary(self) -> Dict[str, Any]:
        """``summary.json``: totals, counters, builds and the effective config."""
        file = self.path / "summary.json"
        if not file.is_file():
            raise CellsimError(
                f"{file}: no summary: the run has not finished (exit code {self.exit_code}); "
                f"cellsim.resume({str(self.path)!r}) continues it")
        return json.loads(file.read_text())

    @property
    def config(self) -> Dict[str, Any]:
        """The run's effective settings (every setting, defaults included)."""
        return self.summary["config"]

    @property
    def policy(self) -> Optional[str]:
        file = self.path / "summary.json"
        return json.loads(file.read_text()).get("policy") if file.is_file() else None

    @property
    def tables(self) -> List[str]:
        """The tables the run wrote (directories of Parquet parts)."""
        return sorted(p.name for p in self.path.iterdir()
                      if p.is_dir() and any(p.glob("*.parquet")))

    def table(self, name: str) -> "pyarrow.Table":
        """Table ``name`` (all of its parts, in order)."""
        directory = self.path / name
        parts = sorted(directory.glob("*.parquet")) if directory.is_dir() else []
        if not parts:
            raise CellsimError(
                f"{directory}: no such table in this run (it has: {', '.join(self.tables)})")
        import pyarrow.parquet as pq
        import pyarrow as pa

        return pa.concat_tables([pq.read_table(p) for p in parts])

    def ticks(self) -> "pyarrow.Table":
        """One row per tick: the cell's state, in the columns every policy's runs share."""
        return self.table("ticks")

    def counters(self) -> "pyarrow.Table":
        """One row per tick (``tick``, ``time_us``): the policy's own counters and message
        counts (``msg_<kind>``); join to :meth:`ticks` on ``tick``."""
        return self.table("counters")

    def nodes(self) -> "pyarrow.Table":
        """Per node, sampled every ``nodes_every``: allocation class, requested and used."""
        return self.table("nodes")

    def tasks(self) -> "pyarrow.Table":
        """One row per task that ended or was left: placement, waits, run time."""
        return self.table("tasks")

    def jobs(self) -> "pyarrow.Table":
        """One row per job: submission, end, deadlines where the policy uses them."""
        return self.table("jobs")

    def policy_table(self, name: str) -> "pyarrow.Table":
        """A policy's own table (``migrations`` for MASB, ``clusters`` for NBS, ...)."""
        return self.table(name)


def runs(sweep_dir: PathLike) -> "pyarrow.Table":
    """Every finished run under ``sweep_dir`` as one table: a row per run with its path, policy,
    the summary's figures (``ticks``, ``speed_x_real_time``, ``averages.*``, ``totals.*``) and
    a column ``config.*`` per setting that differs between the runs."""
    import pyarrow as pa

    found = sorted(p.parent for p in Path(sweep_dir).glob("**/summary.json"))
    if not found:
        raise CellsimError(f"{sweep_dir}: no finished run (no summary.json) under it")
    rows = []
    settings = []
    for path in found:
        summary = json.loads((path / "summary.json").read_text())
        row: Dict[str, Any] = {"run": str(path), "policy": summary.get("policy")}
        figures = {k: v for k, v in summary.items() if k in ("averages", "totals")}
        figures.update({k: v for k, v in summary.items()
                        if k not in ("policy", "version") and not isinstance(v, (dict, list))})
        for key, value in _flat(figures).items():
            if isinstance(value, (int, float, str, bool)):
                row[key] = value
        rows.append(row)
        settings.append(_flat(summary.get("config", {})))
    keys = sorted({k for s in settings for k in s})
    varying = [k for k in keys if len({json.dumps(s.get(k), sort_keys=True) for s in settings}) > 1]
    for row, s in zip(rows, settings):
        for k in varying:
            value = s.get(k)
            row[f"config.{k}"] = value if isinstance(value, (int, float, str, bool)) or value is None \
                else json.dumps(value)
    columns = list(dict.fromkeys(k for row in rows for k in row))
    return pa.table({c: [row.get(c) for row in rows] for c in columns})


def _flat(value: Mapping[str, Any], prefix: str = "") -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for key, v in value.items():
        name = f"{prefix}{key}"
        if isinstance(v, Mapping):
            out.update(_flat(v, name + "."))
        else:
            out[name] = v
    return out


def _flags(options: Mapping[str, Any]) -> List[Any]:
    """``name=value`` as ``--name value`` (underscores as dashes); ``True`` as a bare flag."""
    args: List[Any] = []
    for name, value in options.items():
        flag = "--" + name.replace("_", "-")
        if value is True:
            args.append(flag)
        elif value is False or value is None:
            continue
        else:
            args += [flag, value]
    return args


def _toml(config: Mapping[str, Any]) -> str:
    """``config`` as TOML: top-level values first, then one table per nested mapping."""
    lines: List[str] = []
    tables: List[str] = []

    def table(name: str, body: Mapping[str, Any]) -> None:
        scalars = [(k, v) for k, v in body.items() if not isinstance(v, Mapping)]
        nested = [(k, v) for k, v in body.items() if isinstance(v, Mapping)]
        if name:
            tables.append(f"[{name}]")
        target = tables if name else lines
        target.extend(f"{_key(k)} = {_value(v)}" for k, v in scalars)
        for k, v in nested:
            table(f"{name}.{_key(k)}" if name else _key(k), v)

    table("", config)
    return "\n".join(lines + tables) + "\n"


def _key(key: str) -> str:
    return key if key.replace("_", "").replace("-", "").isalnum() else json.dumps(key)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, os.PathLike):
        return json.dumps(os.fspath(value))
    raise CellsimError(f"config: {value!r} is not a TOML value")
