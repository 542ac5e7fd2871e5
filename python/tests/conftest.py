"""What the package's tests share: the release binary they compare with, a small generated
cell, and the hashes of a run's outputs."""

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

import cellsim

REPO = Path(__file__).resolve().parents[2]


def cli_binary() -> Path:
    binary = Path(os.environ.get("CELLSIM_BIN", REPO / "target" / "release" / "cellsim"))
    if not binary.is_file():
        pytest.fail(f"{binary}: no cellsim binary to compare with (cargo build --release, "
                    "or set CELLSIM_BIN)")
    return binary


def cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([str(cli_binary()), *map(str, args)], capture_output=True, text=True)


def outputs(run_dir: Path) -> dict:
    """Hash of every Parquet file a run wrote, by path (timing/ holds wall times: left out)."""
    return {
        str(p.relative_to(run_dir)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(run_dir.glob("*/*.parquet"))
        if p.parent.name != "timing"
    }


@pytest.fixture(scope="module")
def trace(tmp_path_factory) -> Path:
    """A 150-machine, 2-hour synthetic cell, generated and ingested through the package."""
    root = tmp_path_factory.mktemp("trace")
    csv = cellsim.generate(root / "csv", machines=150, hours=2, seed=3)
    assert (csv / "task_events").is_dir()
    return cellsim.ingest(csv, root / "parquet")


