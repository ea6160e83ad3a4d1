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
