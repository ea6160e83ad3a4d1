"""Sweep input that used to be accepted silently or to hang (issue 44 items 2, 7, 9):
each is one line ``atmsim: error: ...`` and exit 2, before anything runs."""
from __future__ import annotations

import os

import pytest

import atmsim.sweep as sweep_mod
from atmsim.sweep import MAX_REPLICATIONS, plan_sweep, run_sweep
from conftest import BASE

GRID = """
[sweep]
replications = {reps}
[sweep.grid]
"mux.capacity" = ["4 cells", "16 cells"]
"""


def one_line_exit_2(p) -> str:
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert p.stderr.startswith("atmsim: error: ") and p.stderr.count("\n") == 1, p.stderr
    assert "Traceback" not in p.stderr
    return p.stderr.strip()


def test_a_huge_replication_count_is_one_line(cli, write_scenario, tmp_path):
    path = write_scenario(BASE + GRID.format(reps=1000000000000))
    line = BASE.count("\n") + 3  # the line of replications
    err = one_line_exit_2(cli("sweep", str(path), "--db", str(tmp_path / "r.sqlite"), "--dry-run"))
    assert err == (f"atmsim: error: {path}:{line}: sweep.replications: 1000000000000: must be a whole number "
                   f"from 1 to {MAX_REPLICATIONS}")


def test_a_dry_run_of_a_million_replications_computes_no_run_key(write_scenario, tmp_path, monkeypatch):
    """Planning reads what the store holds instead of hashing every run it might make
    (1e6 replications took 3 s just to plan, 1e12 forever)."""
    calls = []
    real = sweep_mod.run_key
    monkeypatch.setattr(sweep_mod, "run_key", lambda *a, **k: calls.append(1) or real(*a, **k))
    path = str(write_scenario(BASE + GRID.format(reps=MAX_REPLICATIONS)))
    spec, plan = plan_sweep(path, str(tmp_path / "r.sqlite"))
    assert plan["replications"].tolist() == [MAX_REPLICATIONS] * 2 and plan["done"].tolist() == [0, 0]
    assert calls == []


def test_a_plan_counts_the_runs_the_store_holds(write_scenario, tmp_path):
    db = str(tmp_path / "r.sqlite")
    small = str(write_scenario(BASE + GRID.format(reps=2), name="small.toml"))
    run_sweep(small, db, workers=1)
    assert plan_sweep(small, db)[1]["done"].tolist() == [2, 2]
    # the same store seen by a sweep of another text: none of its runs
    other = str(write_scenario(BASE + GRID.format(reps=3), name="other.toml"))
    assert plan_sweep(other, db)[1]["done"].tolist() == [0, 0]


def test_set_of_a_swept_key_is_refused(cli, write_scenario, tmp_path):
    path = write_scenario(BASE + GRID.format(reps=1))
    line = BASE.count("\n") + 5  # the line of "mux.capacity" in [sweep.grid]
    db = tmp_path / "r.sqlite"
    for extra in ([], ["--dry-run"]):
        err = one_line_exit_2(cli("sweep", str(path), "--db", str(db), "--set", "mux.capacity=32 cells", *extra))
        assert err == (f"atmsim: error: --set: mux.capacity: the sweep varies this key ({path}:{line}: "
                       f"sweep.grid.\"mux.capacity\"), so the value --set gives it would be ignored at every point; "
                       f"drop it from --set, or change the sweep's values of it")
    assert not db.exists()
    # an unswept key still applies to every point
    p = cli("sweep", str(path), "--db", str(db), "--set", "src.rate=90 Mb/s", "--dry-run")
    assert p.returncode == 0, p.stderr


def test_values_equal_after_unit_conversion_are_refused(cli, write_scenario, tmp_path):
    path = write_scenario(BASE + '[sweep.grid]\n"mux.capacity" = ["8 cells", "424 B"]\n')
    err = one_line_exit_2(cli("sweep", str(path), "--db", str(tmp_path / "r.sqlite"), "--dry-run"))
    assert err.endswith("sweep.grid.\"mux.capacity\": values '8 cells' and '424 B' are equal after unit conversion; "
                        "each value of an axis must be distinct")


def test_dry_run_refuses_a_directory_as_db(cli, write_scenario, tmp_path):
    path = write_scenario(BASE + GRID.format(reps=1))
    err = one_line_exit_2(cli("sweep", str(path), "--db", str(tmp_path), "--dry-run"))
    assert err == (f"atmsim: error: {tmp_path}: is a directory; --db needs a file path such as "
                   f"{os.path.join(tmp_path, 'results.sqlite')}")
    err = one_line_exit_2(cli("sweep", str(path), "--db", str(tmp_path / "no" / "r.sqlite"), "--dry-run"))
    assert "directory" in err and "does not exist" in err


def test_export_of_series_from_a_store_without_series_is_one_line(cli, write_scenario, tmp_path):
    db = str(tmp_path / "r.sqlite")
    run_sweep(str(write_scenario(BASE + GRID.format(reps=1))), db, workers=1)
    out = tmp_path / "series.csv"
    err = one_line_exit_2(cli("export", "--db", db, "--out", str(out), "--what", "series"))
    assert err.startswith(f"atmsim: error: {db}: the store holds no time series") and "[probes] series" in err
    assert not out.exists()
    p = cli("export", "--db", db, "--out", str(tmp_path / "runs.csv"), "--what", "runs")
    assert p.returncode == 0 and "2 rows (runs)" in p.stdout, p.stderr


@pytest.mark.parametrize("reps", [0, MAX_REPLICATIONS + 1])
def test_replications_out_of_range_in_the_python_api(write_scenario, tmp_path, reps):
    from atmsim.exceptions import ScenarioError

    with pytest.raises(ScenarioError, match=f"sweep.replications: {reps}: must be a whole number from 1 to"):
        plan_sweep(str(write_scenario(BASE + GRID.format(reps=reps))))
