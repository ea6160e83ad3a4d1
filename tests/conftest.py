"""Shared fixtures: paths and a runner for the installed ``atmsim`` command.

All tests use the real native module (built by ``make build``); nothing is mocked."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "scenarios" / "examples").glob("*.toml"))


def atmsim_cmd() -> list[str]:
    """The console script installed next to this interpreter, else ``python -m atmsim``."""
    script = Path(sys.executable).with_name("atmsim")
    if script.exists():
        return [str(script)]
    found = shutil.which("atmsim")
    return [found] if found else [sys.executable, "-m", "atmsim"]


def run_cli(*args: str, timeout: float = 300, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("PYTHONWARNINGS", None)
    return subprocess.run(atmsim_cmd() + list(args), capture_output=True, text=True,
                          timeout=timeout, cwd=cwd, env=env)


def reproduce_quick(out: Path, name: str) -> Path:
    """Run `atmsim reproduce NAME --quick` into `out` (module fixtures share its output)."""
    proc = run_cli("reproduce", name, "--quick", "--quiet", "--out", str(out), timeout=600)
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture
def write_scenario(tmp_path):
    def _write(text: str, name: str = "s.toml") -> Path:
        p = tmp_path / name
        p.write_text(text)
        return p
    return _write


# A tiny valid scenario used as the base of many error tests.
BASE = """\
connections = [
  "src -> mux",
  "mux -> sink",
]

[scenario]
name = "t"
duration = "5 ms"

[components.src]
kind = "poisson"
rate = "100 Mb/s"

[components.mux]
kind = "fifo"
phy = "OC-3c"
capacity = "64 cells"

[components.sink]
kind = "sink"
"""
