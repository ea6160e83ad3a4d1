"""Start-up (issue 19 item 8): `import atmsim` and `atmsim run` import no pandas,
matplotlib, dask or pydantic (they cost most of the start-up time and a single run needs
none; typer 0.29 imports pydantic for every parameter, hence the pin below 0.29)."""
from __future__ import annotations

import os
import re
import subprocess
import sys

from conftest import ROOT, atmsim_cmd

HEAVY = ("pandas", "matplotlib", "dask", "tqdm", "pydantic")


def _imported(stderr: str) -> set[str]:
    """Top-level modules named in a -X importtime report."""
    return {m.group(1).split(".")[0] for m in re.finditer(r"^import time:\s+\d+ \|\s+\d+ \|\s+(\S+)$", stderr, re.M)}


def test_import_atmsim_imports_no_heavy_module():
    p = subprocess.run([sys.executable, "-X", "importtime", "-c", "import atmsim; atmsim.load"],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert p.returncode == 0, p.stderr
    mods = _imported(p.stderr)
    assert "atmsim" in mods
    assert not mods & set(HEAVY), sorted(mods & set(HEAVY))


def test_atmsim_run_imports_no_heavy_module(write_scenario):
    from conftest import BASE

    env = dict(os.environ, PYTHONPROFILEIMPORTTIME="1")
    env.pop("PYTHONWARNINGS", None)
    p = subprocess.run(atmsim_cmd() + ["run", str(write_scenario(BASE)), "--quiet"], capture_output=True, text=True,
                       cwd=ROOT, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "q_loss_ratio" in p.stdout  # the probe table is printed without pandas
    mods = _imported(p.stderr)
    assert "atmsim" in mods and not mods & set(HEAVY), sorted(mods & set(HEAVY))
