"""Faults: a worker or the whole `atmsim sweep` killed with SIGKILL, a read-only
directory, a full disk.  After each: the store passes PRAGMA integrity_check, holds
exactly one row per run, every 'done' run has all its probe rows, and a re-run
finishes with statistics bit-identical to an uninterrupted sweep."""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time

import pandas as pd
import psutil
import pytest

from atmsim.executors import execute_run
from atmsim.sweep import load_sweep, run_sweep
from conftest import BASE, ROOT, atmsim_cmd
from test_cli import assert_one_line_error
from test_sweep_run import db_rows, run_cli_env

# 60 runs of ~30-50 ms each: long enough to be killed in the middle, short enough
# to keep the suite fast.
SLOW = BASE.replace('duration = "5 ms"', 'duration = "1 s"') + """
[sweep]
replications = 20
[sweep.grid]
"src.rate" = ["60 Mb/s", "100 Mb/s", "140 Mb/s"]
"""
RUNS = 60


@pytest.fixture(scope="module")
def slow_scenario(tmp_path_factory):
    d = tmp_path_factory.mktemp("slow")
    path = d / "slow.toml"
    path.write_text(SLOW)
    reference = run_sweep(str(path), str(d / "reference.sqlite"), workers=2)
    assert reference.ok and len(reference.runs) == RUNS
    return str(path), reference


def _count_rows(db: str) -> int:
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
        try:
            return con.execute("SELECT count(*) FROM runs").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def _start_sweep(path: str, db: str) -> subprocess.Popen:
    env = dict(os.environ)
    env.pop("PYTHONWARNINGS", None)
    return subprocess.Popen(atmsim_cmd() + ["sweep", path, "--db", db, "--workers", "2", "--quiet"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def _wait_rows(proc: subprocess.Popen, db: str, n: int, timeout: float = 60) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = _count_rows(db)
        if rows >= n:
            return rows
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.01)
    raise AssertionError(f"no {n} rows in {timeout} s")


def check_store(db: str, expected_runs: int | None = None) -> None:
    assert db_rows(db, "PRAGMA integrity_check") == [("ok",)]
    total, distinct = db_rows(db, "SELECT count(*), count(DISTINCT run_key) FROM runs")[0]
    assert total == distinct
    if expected_runs is not None:
        assert total == expected_runs
    assert db_rows(db, "SELECT count(*) FROM runs r WHERE status = 'done' AND NOT EXISTS "
                       "(SELECT 1 FROM probe_values v WHERE v.run_key = r.run_key)") == [(0,)]


def _finish_and_compare(path: str, db: str, reference, done_before: int) -> None:
    check_store(db)
    again = run_sweep(path, db, workers=2)
    assert again.ok
    assert again.executed == RUNS - done_before  # nothing completed is recomputed
    check_store(db, RUNS)
    pd.testing.assert_frame_equal(again.stats, reference.stats, check_exact=True)
    assert again.runs["fingerprint"].tolist() == reference.runs["fingerprint"].tolist()


def test_sigkill_one_worker(slow_scenario, tmp_path):
    path, reference = slow_scenario
    db = str(tmp_path / "r.sqlite")
    proc = _start_sweep(path, db)
    try:
        _wait_rows(proc, db, 4)
        main = psutil.Process(proc.pid)
        # forkserver: main -> fork server -> workers, so workers are grandchildren
        workers = [c for c in main.children(recursive=True) if c.ppid() != proc.pid]
        assert workers, [c.cmdline() for c in main.children(recursive=True)]
        workers[0].send_signal(signal.SIGKILL)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    if proc.returncode == 0:  # the pool was restarted and the sweep completed
        assert "pool restarted" in out, out
        assert "Traceback" not in err
        check_store(db, RUNS)
        done_before = RUNS
    else:
        done_before = _count_rows(db)
    _finish_and_compare(path, db, reference, done_before)


def test_sigkill_whole_sweep(slow_scenario, tmp_path):
    path, reference = slow_scenario
    db = str(tmp_path / "r.sqlite")
    proc = _start_sweep(path, db)
    family = []
    try:
        _wait_rows(proc, db, 6)
        family = psutil.Process(proc.pid).children(recursive=True)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    psutil.wait_procs(family, timeout=10)
    assert proc.returncode == -signal.SIGKILL
    done_before = _count_rows(db)
    assert 6 <= done_before < RUNS, done_before
    _finish_and_compare(path, db, reference, done_before)


def test_read_only_directory(cli, write_scenario, tmp_path):
    path = write_scenario(BASE + '[sweep.grid]\n"mux.capacity" = ["8 cells"]\n')
    if os.geteuid() != 0:
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o555)
    else:  # root writes through permission bits: use a directory that refuses everyone
        ro = "/sys"
        if os.access(ro, os.W_OK) and os.path.ismount(ro) is False:
            pytest.skip("no read-only directory available")
    db = os.path.join(str(ro), "results.sqlite")
    try:
        p = cli("sweep", str(path), "--db", db, "--quiet")
        err = assert_one_line_error(p, 2, contains=(db, "read-only", "writable --db"))
        assert not os.path.exists(db) and not os.path.exists(db + "-wal")
    finally:
        if os.geteuid() != 0:
            os.chmod(ro, 0o755)
    assert err


def test_full_disk(write_scenario, tmp_path):
    path = str(write_scenario(BASE + '[sweep]\nreplications = 4\n[sweep.grid]\n'
                                     '"mux.capacity" = ["4 cells", "8 cells", "16 cells"]\n'))
    db = str(tmp_path / "r.sqlite")
    p = run_cli_env("sweep", path, "--db", db, "--quiet", "--workers", "1", env={"ATMSIM_STORE_MAX_PAGES": "16"})
    err = assert_one_line_error(p, 1, contains=(db, "full", "re-run"))
    assert err
    check_store(db)
    done = db_rows(db, "SELECT run_key, point_index, replication, seed, status FROM runs")
    assert 0 < len(done) < 12 and all(r[4] == "done" for r in done)
    spec = load_sweep(path)
    for key, i, r, seed, _ in done:  # every stored run has all its probe rows
        want = execute_run({"text": spec.text, "path": spec.path, "overrides": spec.points[i], "seed": seed, "run": r})
        have = db_rows(db, f"SELECT count(*) FROM probe_values WHERE run_key = '{key}'")[0][0]
        assert have == len(want["probes"]) > 0
    # with room again, the same command finishes what is missing
    p = run_cli_env("sweep", path, "--db", db, "--quiet")
    assert p.returncode == 0, p.stderr
    check_store(db, 12)


def test_a_store_locked_while_another_sweep_opens_it_is_retried(tmp_path, monkeypatch):
    # Two sweeps opening one new store at once: SQLite can answer "database is
    # locked" at once while the other switches the file to WAL (no busy wait on that
    # path). The open retries; a store that stays locked past the deadline, or any
    # other error, still fails as before.
    from atmsim import store as st

    real = st.Store._setup
    calls = []

    def flaky(self):
        calls.append(1)
        if len(calls) <= 2:
            raise sqlite3.OperationalError("database is locked")
        return real(self)

    monkeypatch.setattr(st.Store, "_setup", flaky)
    with st.Store(str(tmp_path / "r.sqlite")) as s:
        assert s.conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone() is not None
    assert len(calls) == 3

    def broken(self):
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(st.Store, "_setup", broken)
    with pytest.raises(st.StorePathError):
        st.Store(str(tmp_path / "other.sqlite"))
