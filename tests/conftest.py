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


def reproduce_quick(out: Path, name: str, store: Path | None = None) -> Path:
    """Run `atmsim reproduce NAME --quick` into `out` (module fixtures share its output);
    every interval it writes stays in its quantity's domain. With `store` (the session's
    `quick_store`), `out` starts from a copy of it: the reproduction resumes, runs nothing
    again and writes its report, figures and comparison.csv from the stored runs."""
    if store is not None:
        import sqlite3

        out.mkdir(parents=True, exist_ok=True)
        with sqlite3.connect(store) as src, sqlite3.connect(out / "results.sqlite") as dst:
            src.backup(dst)
    proc = run_cli("reproduce", name, "--quick", "--quiet", "--out", str(out), timeout=600)
    assert proc.returncode == 0, proc.stderr
    # a copied store's statistics were checked once, in quick_store
    assert_intervals_in_domain(out, stats=store is None)
    if store is not None:
        # resuming from the stored runs gives the rows the whole run wrote, value for value
        import csv

        def rows(path: Path) -> list[tuple[str, ...]]:
            with open(path, newline="", encoding="utf-8") as fh:
                return [tuple(r.values()) for r in csv.DictReader(fh)]

        written, whole = rows(out / "comparison.csv"), set(rows(store.parent / "comparison.csv"))
        assert written and [r for r in written if r not in whole] == []
    return out


#: Set by `make test`: the xdist controller starts `reproduce all --quick` in the
#: background when the session begins (pytest_configure below), so that both workers
#: run the other tests while it runs instead of one of them waiting for it.
PRESTART_ENV = "ATMSIM_TEST_PRESTART"


def _shared_root(tmp_path_factory) -> Path:
    """The directory every process of the session shares (the controller's basetemp,
    the parent of each xdist worker's)."""
    base = tmp_path_factory.getbasetemp()
    return base if os.environ.get("PYTEST_XDIST_WORKER") is None else base.parent


@pytest.hookimpl(trylast=True)  # after the tmp_path plugin has set up the session's basetemp
def pytest_configure(config):
    if not os.environ.get(PRESTART_ENV):
        return
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # The background reproduction is the session's longest chain (the tests that
        # resume from it run after it): it gets the cores first, the workers' tests what
        # it leaves (they and everything they start run at a lower priority).
        os.nice(5)
        return
    import threading

    root = config._tmp_path_factory.getbasetemp()
    out = root / "reproduce-all-shared"
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.pop("PYTHONWARNINGS", None)
    log = open(root / "reproduce-all.log", "w", encoding="utf-8")
    from atmsim._pool_guard import arm

    proc = subprocess.Popen(atmsim_cmd() + ["reproduce", "all", "--quick", "--quiet", "--out", str(out)], stdout=log,
                            stderr=subprocess.STDOUT, cwd=ROOT, env=env, preexec_fn=lambda: arm(None))

    def wait() -> None:
        rc = proc.wait()
        log.close()
        (root / "reproduce-all.rc").write_text(str(rc), encoding="ascii")

    threading.Thread(target=wait, daemon=True).start()
    config._atmsim_prestart = proc


def pytest_collection_modifyitems(config, items):
    """Files with a test that needs `quick_store` go last (stable: each file's tests
    stay together and in order). pytest-xdist hands out files in collection order, so both
    workers run everything else while the background `reproduce all --quick` runs,
    instead of one of them waiting for it from the start."""
    late = {item.path for item in items if "quick_store" in getattr(item, "fixturenames", ())}
    items.sort(key=lambda item: item.path in late)


def pytest_unconfigure(config):
    proc = getattr(config, "_atmsim_prestart", None)
    if proc is not None and proc.poll() is None:
        proc.terminate()
        proc.wait(30)


@pytest.fixture(scope="session")
def quick_store(tmp_path_factory) -> Path:
    """`atmsim reproduce all --quick`, once per session (every paper's quick runs, about
    three minutes on two cores): its directory's result store, from which the papers'
    module fixtures resume instead of running the same sweeps again.

    With pytest-xdist (`make test` runs `-n 2 --dist loadfile`) the workers share it:
    started in the background by the controller when `ATMSIM_TEST_PRESTART` is set
    (`make test` sets it), else by the first worker to ask, under a lock in the
    session's common temporary directory, while the other waits for it."""
    import fcntl
    import time

    root = _shared_root(tmp_path_factory)
    out = root / "reproduce-all-shared"
    with open(root / "reproduce-all.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (out / "done").exists():
            if (root / "reproduce-all.log").exists():  # started by the controller
                rc_file, deadline = root / "reproduce-all.rc", time.monotonic() + 1200
                while not rc_file.exists():
                    assert time.monotonic() < deadline, "reproduce all --quick did not finish in 20 minutes"
                    time.sleep(0.5)
                assert rc_file.read_text(encoding="ascii") == "0", (root / "reproduce-all.log").read_text(encoding="utf-8")
            else:
                proc = run_cli("reproduce", "all", "--quick", "--quiet", "--out", str(out), timeout=1200)
                assert proc.returncode == 0, proc.stderr
            assert_intervals_in_domain(out)
            (out / "done").touch()
    return out / "results.sqlite"


def assert_intervals_in_domain(out: Path, stats: bool = True) -> None:
    """Issue 19 item 1: no interval a reproduction writes leaves its quantity's domain.
    The sweep statistics declare theirs (proportions in [0, 1], counts and non-negative
    quantities at or above 0); of the comparison rows, loss probabilities and ratios
    (not ratios of two of them, "A : B") stay in [0, 1], loss percentages in [0, 100]
    and rates in Mb/s (not gains or differences) at or above 0. `stats=False` checks the
    comparison rows only (the store is a copy of one already checked)."""
    import csv

    from atmsim import export

    if stats:
        st = export.frame(str(out / "results.sqlite"), "stats")
        has = st["ci_low"].notna()
        prop = st[has & (st["domain"] == "proportion")]
        assert ((prop["ci_low"] >= 0) & (prop["ci_high"] <= 1)).all(), prop[(prop["ci_low"] < 0) | (prop["ci_high"] > 1)]
        nonneg = st[has & st["domain"].isin(["count", "nonnegative"])]
        assert (nonneg["ci_low"] >= 0).all(), nonneg[nonneg["ci_low"] < 0]
    with open(out / "comparison.csv", newline="", encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh) if r["ci_low"] != ""]
    for r in rows:
        q, lo, hi = r["quantity"], float(r["ci_low"]), float(r["ci_high"])
        assert lo <= hi, r
        if ("loss probability" in q or "loss ratio" in q) and r["unit"] == "1" and ":" not in q:
            assert 0.0 <= lo and hi <= 1.0, r
        elif "loss" in q and r["unit"] == "%":
            assert 0.0 <= lo and hi <= 100.0, r
        elif r["unit"] == "Mb/s" and not any(w in q for w in ("gain", "difference", "change")):
            assert lo >= 0.0, r


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


