"""The store tells the truth (issue 19 item 6): an unwritable store is exit 2 with advice
that helps; resuming over runs of another atmsim version or another text of the
scenario refuses unless --allow-mixed; the version is stored per run."""
from __future__ import annotations

import sqlite3

import pytest

import atmsim
from atmsim.store import Store, StorePathError
from atmsim.sweep import run_sweep
from conftest import BASE

SWEEP = BASE + '\n[sweep]\nreplications = 2\n[sweep.grid]\n"mux.capacity" = ["8 cells", "16 cells"]\n'


def _one_line(p, code):
    assert p.returncode == code, (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    return p.stderr


def test_version_is_stored_per_run(write_scenario, tmp_path):
    db = str(tmp_path / "r.sqlite")
    run_sweep(str(write_scenario(SWEEP)), db, workers=1)
    with sqlite3.connect(db) as c:
        versions = {v for (v,) in c.execute("SELECT software_version FROM runs")}
    assert versions == {atmsim.__version__}


def test_resume_with_another_version_refuses_unless_allowed(cli, write_scenario, tmp_path):
    path = str(write_scenario(SWEEP))
    db = str(tmp_path / "r.sqlite")
    assert cli("sweep", path, "--db", db, "--quiet", "--workers", "1").returncode == 0
    with sqlite3.connect(db) as c:  # as an older atmsim would have left it, one run missing
        c.execute("UPDATE runs SET software_version='0.0.9'")
        key = c.execute("SELECT run_key FROM runs ORDER BY point_index DESC, replication DESC").fetchone()[0]
        c.execute("DELETE FROM probe_values WHERE run_key=?", (key,))
        c.execute("DELETE FROM runs WHERE run_key=?", (key,))
    err = _one_line(cli("sweep", path, "--db", db, "--quiet", "--workers", "1"), 2)
    assert (f"atmsim: error: {db}: holds 3 runs of this sweep made by atmsim 0.0.9, and this is atmsim "
            f"{atmsim.__version__}: resuming would mix results of two code versions") in err
    assert "--allow-mixed" in err and "new --db" in err
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT count(*) FROM runs").fetchone()[0] == 3  # nothing ran
    p = cli("sweep", path, "--db", db, "--quiet", "--workers", "1", "--allow-mixed")
    assert p.returncode == 0, p.stderr
    assert "1 run now, 3 already in the store" in p.stdout
    with sqlite3.connect(db) as c:
        assert sorted(v for (v,) in c.execute("SELECT software_version FROM runs")) == \
            ["0.0.9"] * 3 + [atmsim.__version__]


def test_resume_after_the_scenario_changed_refuses_unless_allowed(cli, write_scenario, tmp_path):
    path = write_scenario(SWEEP)
    db = str(tmp_path / "r.sqlite")
    assert cli("sweep", str(path), "--db", db, "--quiet", "--workers", "1").returncode == 0
    path.write_text(SWEEP.replace('rate = "100 Mb/s"', 'rate = "110 Mb/s"'))
    err = _one_line(cli("sweep", str(path), "--db", db, "--quiet", "--workers", "1"), 2)
    assert f"atmsim: error: {db}: holds 4 runs of {path} as the file read before it was changed" in err
    assert "--allow-mixed" in err
    p = cli("sweep", str(path), "--db", db, "--quiet", "--workers", "1", "--allow-mixed")
    assert p.returncode == 0 and "4 run now, 0 already in the store" in p.stdout, p.stderr
    # the same text again is a plain resume, not a mix
    p = cli("sweep", str(path), "--db", db, "--quiet", "--workers", "1")
    assert p.returncode == 0 and "0 run now, 4 already in the store" in p.stdout, p.stderr


def test_a_store_that_became_unwritable_gives_advice_not_retry(tmp_path):
    db = str(tmp_path / "r.sqlite")
    with Store(db) as st:
        st.conn.execute("PRAGMA query_only=ON")  # SQLite now refuses writes: "attempt to write a readonly database"
        with pytest.raises(StorePathError) as ei:
            st.ensure_sweep("k", name="n", path="p", scenario_hash="h", quick=False, overrides={},
                            software_version="v")
    msg = str(ei.value)
    assert msg.startswith(f"{db}: the result store cannot be written (attempt to write a readonly database)")
    assert "re-running will not help" in msg and "writable" in msg and "re-run the same command" not in msg


# --- claims: sweeps sharing one store -------------------------------------------------
import os  # noqa: E402
import re  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

from conftest import atmsim_cmd  # noqa: E402

SHARED = SWEEP.replace('replications = 2', 'replications = 4')  # 8 runs


def _plan_keys(path: str, db: str) -> list[str]:
    """The run keys of the sweep, as the sweep computes them (from a finished sweep in a scratch store)."""
    run_sweep(path, db, workers=1)
    with sqlite3.connect(db) as c:
        return [k for (k,) in c.execute("SELECT run_key FROM runs ORDER BY point_index, replication")]


def _claim(db: str, key: str, pid: int) -> None:
    with Store(db) as st:  # creates the tables
        pass
    with sqlite3.connect(db) as c:
        c.execute("INSERT INTO claims(run_key, host, pid, claimed) VALUES (?,?,?,?)",
                  (key, socket.gethostname(), pid, "2026-01-01T00:00:00Z"))


def _env():
    return {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"}


def test_a_dead_claim_is_taken_over(write_scenario, tmp_path):
    path = str(write_scenario(SHARED))
    keys = _plan_keys(path, str(tmp_path / "plan.sqlite"))
    dead = subprocess.Popen(["true"])
    dead.wait()  # its pid is gone (reaped)
    db = str(tmp_path / "r.sqlite")
    _claim(db, keys[0], dead.pid)
    res = run_sweep(path, db, workers=1)
    assert res.executed == len(keys) and not res.failures
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT count(*) FROM claims").fetchone()[0] == 0
        assert c.execute("SELECT count(*) FROM runs WHERE status='done'").fetchone()[0] == len(keys)


def test_a_live_claim_is_waited_for_then_taken_over_when_its_process_dies(write_scenario, tmp_path):
    path = str(write_scenario(SHARED))
    keys = _plan_keys(path, str(tmp_path / "plan.sqlite"))
    holder = subprocess.Popen(["sleep", "600"])
    db = str(tmp_path / "r.sqlite")
    try:
        _claim(db, keys[1], holder.pid)
        sweep = subprocess.Popen(atmsim_cmd() + ["sweep", path, "--db", db, "--quiet", "--workers", "1"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
        # every other run gets done; the claimed one is left alone while its holder lives
        for _ in range(1500):  # hang guard only (5 min), no timing assert
            with sqlite3.connect(db) as c:
                done = {k for (k,) in c.execute("SELECT run_key FROM runs WHERE status='done'")}
            if done >= set(keys) - {keys[1]} or sweep.poll() is not None:
                break
            time.sleep(0.2)
        assert sweep.poll() is None, sweep.communicate()
        assert done == set(keys) - {keys[1]}
    finally:
        holder.kill()
        holder.wait()
    out, err = sweep.communicate(timeout=300)
    assert sweep.returncode == 0, err
    assert f"{len(keys)} run now, 0 already in the store" in out
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT count(*) FROM claims").fetchone()[0] == 0


def test_two_sweeps_on_one_store_share_the_work(write_scenario, tmp_path):
    path = str(write_scenario(SWEEP.replace('replications = 2', 'replications = 6')))  # 12 runs
    db = str(tmp_path / "r.sqlite")
    procs = [subprocess.Popen(atmsim_cmd() + ["sweep", path, "--db", db, "--quiet", "--workers", "1"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
             for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    ran = [int(re.search(r"(\d+) run now", o).group(1)) for o, _e in outs]
    assert sum(ran) == 12, (ran, outs)  # every run computed once, by one of them
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT count(*) FROM runs WHERE status='done'").fetchone()[0] == 12
        assert c.execute("SELECT count(*) FROM claims").fetchone()[0] == 0
    # both see the whole sweep
    assert all(re.search(r"runs +12: 12 done", o) for o, _e in outs), outs
