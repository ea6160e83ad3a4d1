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


#: What a planning or single-run command must not import (issue 44 item 12): the
#: statistics and frames of sweep results, plots and the Dask executor.
NOT_FOR_PLANNING = ("pandas", "scipy", "matplotlib", "dask")

_MODULES_AFTER = """\
import json, sys
from atmsim.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "modules": sorted({m.split(".")[0] for m in sys.modules})}), file=sys.stderr)
"""


def _modules_after(*args: str, cwd=ROOT) -> set[str]:
    """Top-level modules in sys.modules once the CLI has run ``args`` in a fresh interpreter."""
    import json

    env = dict(os.environ)
    env.pop("PYTHONWARNINGS", None)
    p = subprocess.run([sys.executable, "-c", _MODULES_AFTER, *args], capture_output=True, text=True, cwd=cwd,
                       env=env, timeout=120)
    out = json.loads(p.stderr.strip().splitlines()[-1])
    assert out["code"] in (0, None), p.stderr
    return set(out["modules"])


def test_sweep_dry_run_imports_no_pandas_or_scipy(tmp_path, write_scenario):
    from conftest import BASE

    s = write_scenario(BASE + '\n[sweep]\nreplications = 3\n[sweep.grid]\n"mux.capacity" = ["8 cells", "16 cells"]\n')
    mods = _modules_after("sweep", str(s), "--db", str(tmp_path / "r.sqlite"), "--dry-run")
    assert "atmsim" in mods and "sqlite3" in mods  # it did plan against the store path
    assert not mods & set(NOT_FOR_PLANNING), sorted(mods & set(NOT_FOR_PLANNING))


def test_run_quiet_imports_no_pandas_or_scipy(write_scenario):
    from conftest import BASE

    mods = _modules_after("run", str(write_scenario(BASE)), "-q")
    assert "atmsim" in mods
    assert not mods & set(NOT_FOR_PLANNING), sorted(mods & set(NOT_FOR_PLANNING))


def test_the_command_line_builds_only_the_command_invoked():
    """typer builds every registered command's parameters on each call: `atmsim run`
    builds `run` alone; the root's help and a misspelt name get every command."""
    from atmsim import cli

    names = lambda a: [c.name for c in a.registered_commands]  # noqa: E731
    assert names(cli._app_for(["run", "x.toml", "-q"])) == ["run"]
    assert names(cli._app_for(["sweep", "x.toml"])) == ["sweep"]
    for args in (["--help"], ["rn", "x.toml"], []):
        assert cli._app_for(args) is cli.app and len(names(cli.app)) >= 10
    assert names(cli.app)[0] == "run"  # the copy left the app itself whole
