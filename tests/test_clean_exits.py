"""Clean exits (issue 19 item 5): bad seeds and run numbers are one line and exit 2;
SIGTERM to a sweep's process, or to its whole process group as `timeout` sends it, stops
it with its workers and fork server, with one line and no "leaked semaphore" warning."""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time

import pytest

from conftest import BASE, ROOT, atmsim_cmd

import atmsim
from atmsim.exceptions import ParamError

# Many runs of 0.2 s simulated each: long enough to be stopped in the middle.
LONG = BASE.replace('duration = "5 ms"', 'duration = "200 ms"') + """
[sweep]
replications = 40
[sweep.grid]
"mux.capacity" = ["4 cells", "16 cells"]
"""


@pytest.mark.parametrize("args,expect", [
    (["--seed", "-1"], "--seed -1: a seed is an integer from 0 to 18446744073709551615"),
    (["--seed", str(2**64)], f"--seed {2**64}: a seed is an integer from 0 to 18446744073709551615"),
    (["--run", "-1"], "--run -1: a run (replication) number is an integer from 0 to 18446744073709551615"),
    (["--run", str(2**64 + 5)], "--run 18446744073709551621: a run (replication) number is an integer"),
])
def test_bad_seed_or_run_is_one_line_exit_2(cli, write_scenario, args, expect):
    p = cli("run", str(write_scenario(BASE)), "--quiet", *args)
    assert p.returncode == 2, p.stderr
    assert p.stderr.count("\n") == 1 and p.stderr.startswith("atmsim: error: ") and expect in p.stderr, p.stderr


def test_largest_seed_and_run_are_accepted(write_scenario):
    res = atmsim.run(str(write_scenario(BASE)), seed=2**64 - 1, run=2**64 - 1, progress=False)
    assert res.summary["seed"] == 2**64 - 1
    with pytest.raises(ParamError, match="^seed=True: a seed is an integer"):
        atmsim.run(str(write_scenario(BASE)), seed=True, progress=False)


def _session_alive(sid: int) -> list[int]:
    """PIDs (other than zombies) in session ``sid``."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[3]) == sid:
            out.append(int(d))
    return out


def _session_gone(sid: int) -> list[str]:
    """Waits (a hang guard of 30 s, not a timing assert) for session ``sid`` to empty;
    returns the command lines of what is left."""
    for _ in range(300):
        left = _session_alive(sid)
        if not left:
            return []
        time.sleep(0.1)
    out = []
    for pid in left:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                out.append(f"{pid}: {fh.read().replace(bytes(1), b' ').decode()[:200]}")
        except OSError:
            pass
    return out


def _done_runs(db) -> int:
    try:
        with sqlite3.connect(db) as con:
            return con.execute("SELECT count(*) FROM runs").fetchone()[0]
    except sqlite3.Error:
        return 0


def _start_sweep(args: list[str], db) -> subprocess.Popen:
    env = dict(os.environ)
    env.pop("PYTHONWARNINGS", None)
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env,
                            start_new_session=True)
    for _ in range(600):  # until the sweep is under way (a hang guard, not a timing assert)
        if _done_runs(db) >= 2 or proc.poll() is not None:
            break
        time.sleep(0.1)
    return proc


@pytest.fixture
def reaper():
    """Kills what a failed test left behind (its sessions), so that no process outlives it."""
    procs: list[subprocess.Popen] = []
    yield procs.append
    for p in procs:
        for pid in _session_alive(p.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if p.poll() is None:
            p.wait()
        for f in (p.stdout, p.stderr):
            if f is not None:
                f.close()


def test_sigterm_stops_the_sweep_its_workers_and_fork_server(write_scenario, tmp_path, reaper):
    db = tmp_path / "r.sqlite"
    proc = _start_sweep(atmsim_cmd() + ["sweep", str(write_scenario(LONG)), "--db", str(db), "--workers", "2",
                                        "--quiet"], db)
    reaper(proc)
    assert proc.poll() is None, proc.communicate()
    os.kill(proc.pid, signal.SIGTERM)  # the parent only, as `kill PID` does
    # communicate() returns only when every holder of the pipes (workers, fork
    # server) has closed them
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err
    assert err.strip().splitlines() == ["atmsim: terminated (SIGTERM); runs completed so far are kept"], err
    assert _session_gone(proc.pid) == []
    assert 2 <= _done_runs(db) < 80


def test_sigterm_to_the_process_group_as_timeout_sends_it(write_scenario, tmp_path, reaper):
    """The fork server dies of the signal at once; its workers ignore SIGTERM (the parent
    handles it), so the parent must kill them itself although the pool already reads them
    as exited."""
    db = tmp_path / "r.sqlite"
    proc = _start_sweep(atmsim_cmd() + ["sweep", str(write_scenario(LONG)), "--db", str(db), "--workers", "2",
                                        "--quiet"], db)
    reaper(proc)
    assert proc.poll() is None, proc.communicate()
    os.killpg(proc.pid, signal.SIGTERM)  # parent, fork server, workers and resource tracker at once
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err
    assert err.strip().splitlines() == ["atmsim: terminated (SIGTERM); runs completed so far are kept"], err
    assert _session_gone(proc.pid) == []
    assert 2 <= _done_runs(db) < 80


def _psutil_session(sid: int) -> list:
    """Live (not zombie) processes of session ``sid``, by psutil."""
    import psutil

    out = []
    for p in psutil.process_iter(["pid", "status"]):
        try:
            if p.info["status"] != psutil.STATUS_ZOMBIE and os.getsid(p.info["pid"]) == sid:
                out.append(p)
        except (ProcessLookupError, PermissionError, psutil.Error):
            pass
    return out


def test_sigkill_of_the_sweep_leaves_no_process_and_the_store_resumes(write_scenario, tmp_path, reaper):
    """``kill -9`` of a sweep's main process (issue 44): its fork server, workers and
    resource tracker go within 10 s (they used to wait for good), and the same command
    then finishes the sweep from the runs the store kept."""
    import psutil

    db = tmp_path / "r.sqlite"
    path = str(write_scenario(LONG))
    proc = _start_sweep(atmsim_cmd() + ["sweep", path, "--db", str(db), "--workers", "2", "--quiet"], db)
    reaper(proc)
    assert proc.poll() is None, proc.communicate()
    helpers = [p for p in _psutil_session(proc.pid) if p.pid != proc.pid]
    assert len(helpers) >= 3, [p.cmdline() for p in helpers]  # fork server, 2 workers (and the resource tracker)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    left = _psutil_session(proc.pid)
    for _ in range(100):  # 10 s, polled: the kernel's death signals take milliseconds
        if not left:
            break
        time.sleep(0.1)
        left = _psutil_session(proc.pid)
    assert left == [], [(p.pid, " ".join(p.cmdline())[:200]) for p in left if p.is_running()]
    assert not psutil.pid_exists(proc.pid) or psutil.Process(proc.pid).status() == psutil.STATUS_ZOMBIE
    kept = _done_runs(db)
    assert 2 <= kept < 80
    with sqlite3.connect(db) as con:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    again = subprocess.run(atmsim_cmd() + ["sweep", path, "--db", str(db), "--workers", "2", "--quiet"],
                           capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert again.returncode == 0, again.stderr
    assert f"runs         80: 80 done, 0 failed ({80 - kept} run now, {kept} already in the store)" in again.stdout


def test_calls_in_the_local_pool_come_back_in_order_and_a_workers_error_is_raised_here():
    # what `reproduce all` draws its papers' figures with (atmsim.reproduce.analyse_all)
    import math

    from atmsim.executors import LocalExecutor

    assert LocalExecutor(2).call_all(math.pow, [(2.0, k) for k in range(5)]) == [1.0, 2.0, 4.0, 8.0, 16.0]
    ex = LocalExecutor(2)
    with pytest.raises(ValueError, match="math domain error"):
        ex.call_all(math.sqrt, [(4.0,), (-1.0,), (9.0,)])
    assert ex._pool is None  # stopped, workers killed


def test_sigkill_of_dimension_leaves_no_worker(write_scenario, reaper):
    """``kill -9`` of ``atmsim dimension`` while its pool runs replications (issue 44
    item 3): its workers go within 10 s, as a sweep's do (the one local pool, with its
    parent-death guard)."""
    import psutil

    path = str(write_scenario(BASE.replace('duration = "5 ms"', 'duration = "2 s"')))
    env = dict(os.environ)
    env.pop("PYTHONWARNINGS", None)
    proc = subprocess.Popen(atmsim_cmd() + ["dimension", path, "--key", "mux.capacity", "--unit", "cells", "--max", "64",
                                            "--target", "mux.q_loss_ratio <= 1e-3", "-n", "8", "-j", "2", "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env,
                            start_new_session=True)
    reaper(proc)
    helpers: list = []
    for _ in range(600):  # until its workers are running (a hang guard, not a timing assert)
        helpers = [p for p in _psutil_session(proc.pid) if p.pid != proc.pid]
        if len(helpers) >= 2 or proc.poll() is not None:
            break
        time.sleep(0.1)
    assert proc.poll() is None and len(helpers) >= 2, proc.communicate()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    left = _psutil_session(proc.pid)
    for _ in range(100):  # 10 s, polled
        if not left:
            break
        time.sleep(0.1)
        left = _psutil_session(proc.pid)
    assert left == [], [(p.pid, " ".join(p.cmdline())[:200]) for p in left if p.is_running()]
