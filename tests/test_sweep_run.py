"""Running sweeps: store contents, resume, worker counts, Dask, failures, statistics."""
from __future__ import annotations

import json
import math
import os
import sqlite3
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import atmsim
from atmsim import export
from atmsim.stats import summarize_values
from atmsim.sweep import load_sweep, run_sweep
from conftest import BASE, ROOT, atmsim_cmd

SWEEP = """
[sweep]
replications = 3
quick_replications = 1
[sweep.grid]
"mux.capacity" = ["4 cells", "16 cells"]
[sweep.zip]
"src.rate" = ["100 Mb/s", "140 Mb/s"]
"src.vc" = [1, 2]
[sweep.quick]
"scenario.duration" = "1 ms"
"""


@pytest.fixture
def scenario(write_scenario):
    return str(write_scenario(BASE + SWEEP))


def run_cli_env(*args: str, env: dict | None = None, timeout: float = 300, **popen):
    """Like conftest.run_cli, with extra environment variables."""
    full = dict(os.environ)
    full.pop("PYTHONWARNINGS", None)
    full.update(env or {})
    return subprocess.run(atmsim_cmd() + list(args), capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT, env=full, **popen)


def db_rows(db: str, sql: str):
    con = sqlite3.connect(db)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_sweep_store_and_frames(scenario, tmp_path):
    db = str(tmp_path / "r.sqlite")
    res = atmsim.run_sweep(scenario, db, workers=2)
    assert res.ok and res.executed == 12 and res.skipped == 0
    runs = res.runs
    assert list(runs.columns[:8]) == ["point", "replication", "seed", "status", "wall_s", "events", "fingerprint", "error"]
    # each swept key as written, then (strings with units) as a number in the unit (issue 44)
    assert list(runs.columns[8:]) == ["mux.capacity", "mux.capacity [cells]", "src.rate", "src.rate [Mb/s]", "src.vc"]
    assert len(runs) == 12 and (runs["status"] == "done").all()
    assert runs["src.vc"].tolist()[:6] == [1, 1, 1, 2, 2, 2]  # value as written (a number)
    # per point one seed; replications are native run numbers
    assert runs.groupby("point")["seed"].nunique().eq(1).all()
    assert runs["fingerprint"].nunique() == 12
    st = res.stats
    assert list(st.columns) == ["point", "mux.capacity", "mux.capacity [cells]", "src.rate", "src.rate [Mb/s]", "src.vc", "component", "probe", "statistic",
                                "unit", "domain", "n", "mean", "std", "ci_low", "ci_high", "interval", "ci_note"]
    # no interval outside its statistic's domain
    prop, nonneg = st[st.domain == "proportion"], st[st.domain.isin(["count", "nonnegative"])]
    assert not prop.empty and not nonneg.empty
    assert ((prop.ci_low >= 0) & (prop.ci_high <= 1) | prop.ci_low.isna()).all()
    assert ((nonneg.ci_low >= 0) | nonneg.ci_low.isna()).all()
    row = st[(st.point == 0) & (st.component == "mux") & (st.probe == "q_rx_cells") & (st.statistic == "count")].iloc[0]
    # stats agree with a direct recomputation from single native runs
    spec = load_sweep(scenario)
    vals = [atmsim.run(scenario, seed=spec.seed_of(0), run=r, set=spec.points[0], progress=False)
            .value("mux", "q_rx_cells", "count") for r in range(3)]
    n, mean, std, lo, hi = summarize_values(vals, "count")
    assert (row.n, row["mean"], row["std"], row.ci_low, row.ci_high) == (n, mean, std, lo, hi)
    assert lo < mean < hi
    # every replication's value is kept (SweepResult.values, read from the store's
    # probe_values): the native runs' numbers, in replication order, with the point's keys
    per = res.values
    assert list(per.columns) == ["point", "replication", "mux.capacity", "mux.capacity [cells]", "src.rate", "src.rate [Mb/s]", "src.vc", "component", "probe",
                                 "statistic", "value", "unit"]
    sel = per[(per.point == 0) & (per.component == "mux") & (per.probe == "q_rx_cells") & (per.statistic == "count")]
    assert sel["replication"].tolist() == [0, 1, 2] and sel["value"].tolist() == vals
    assert sel["mux.capacity"].tolist() == ["4 cells"] * 3
    assert len(per) == len(res.stats) * 3  # every statistic of every point, once per replication
    # the store: WAL, one row per run, probe rows for each
    assert db_rows(db, "PRAGMA journal_mode")[0][0] == "wal"
    assert db_rows(db, "SELECT count(*), count(DISTINCT run_key) FROM runs")[0] == (12, 12)
    assert db_rows(db, "SELECT count(*) FROM runs r WHERE NOT EXISTS "
                       "(SELECT 1 FROM probe_values v WHERE v.run_key = r.run_key)")[0][0] == 0
    assert db_rows(db, "SELECT scenario_name, software_version FROM sweeps") == [("t", atmsim.__version__)]
    # one-line plot: one line per value of the other swept keys, the unit on the axis
    fig = res.plot("mux", "q_rx_cells", "rate", x="src.rate", path=tmp_path / "plot.svg")
    ax = fig.axes[0]
    assert ax.get_xlabel() == "src.rate (Mb/s)" and (tmp_path / "plot.svg").exists()
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    # src.vc is zipped with src.rate: it does not split the lines
    assert labels == ["mux.capacity = 4 cells", "mux.capacity = 16 cells"]
    assert [list(c.lines[0].get_xdata()) for c in ax.containers] == [[100.0, 140.0], [100.0, 140.0]]
    assert res.plot("mux", "q_wait", "mean").axes[0].get_xlabel() == "mux.capacity (cells)"
    with pytest.raises(KeyError, match="not a swept key"):
        res.plot("mux", "q_wait", "mean", x="src.ratee")
    with pytest.raises(KeyError, match="no statistic mux.q_wait.meen"):
        res.plot("mux", "q_wait", "meen")


def test_resume_reruns_only_missing(scenario, tmp_path):
    db = str(tmp_path / "r.sqlite")
    first = run_sweep(scenario, db, workers=2)
    con = sqlite3.connect(db)
    victims = [r[0] for r in con.execute("SELECT run_key FROM runs WHERE replication = 1 OR point_index = 3")]
    before = dict(con.execute("SELECT run_key, finished FROM runs"))
    con.executemany("DELETE FROM probe_values WHERE run_key = ?", [(k,) for k in victims])
    con.executemany("DELETE FROM runs WHERE run_key = ?", [(k,) for k in victims])
    con.commit()
    con.close()
    second = run_sweep(scenario, db, workers=2)
    assert second.executed == len(victims) == 6 and second.skipped == 6
    after = dict(db_rows(db, "SELECT run_key, finished FROM runs"))
    assert set(after) == set(before)
    assert [k for k in after if after[k] != before[k]] == sorted(victims, key=list(after).index)
    pd.testing.assert_frame_equal(first.stats, second.stats, check_exact=True)
    assert first.runs["fingerprint"].tolist() == second.runs["fingerprint"].tolist()
    third = run_sweep(scenario, db, workers=1)
    assert third.executed == 0 and third.skipped == 12
    # the per-replication values come back from the store unchanged (no schema change:
    # they are the probe_values rows every run has always written)
    pd.testing.assert_frame_equal(first.values, third.values, check_exact=True)


def test_quick_is_a_separate_set_of_runs(scenario, tmp_path):
    db = str(tmp_path / "r.sqlite")
    q = run_sweep(scenario, db, quick=True, workers=1)
    assert len(q.runs) == 4 and (q.runs["replication"] == 0).all()
    full = run_sweep(scenario, db, workers=1)
    assert full.executed == 12  # quick runs are shorter: never reused for the full sweep
    assert db_rows(db, "SELECT quick, count(*) FROM runs GROUP BY quick") == [(0, 12), (1, 4)]


def test_quick_lists_run_only_the_selected_points(cli, write_scenario, tmp_path):
    """A ``[sweep.quick]`` list of a swept key's values: --quick runs only those points,
    under their full-sweep indices and seeds; the full sweep runs every point."""
    text = BASE + SWEEP.replace('"scenario.duration" = "1 ms"',
                                '"scenario.duration" = "1 ms"\n"mux.capacity" = ["16 cells"]')
    path = str(write_scenario(text))
    spec = load_sweep(path)
    assert spec.quick_select == {"mux.capacity": ["16 cells"]}
    assert spec.point_indices(True) == [2, 3] and spec.point_indices(False) == [0, 1, 2, 3]
    db = str(tmp_path / "r.sqlite")
    q = run_sweep(path, db, quick=True, workers=1)
    assert sorted(q.runs["point"].tolist()) == [2, 3]
    assert (q.runs["mux.capacity"] == "16 cells").all()
    assert q.runs.set_index("point")["seed"].to_dict() == {i: spec.seed_of(i) for i in (2, 3)}
    assert run_sweep(path, db, workers=1).executed == 12
    p = cli("sweep", path, "--db", str(tmp_path / "c.sqlite"), "--quick", "--quiet")
    assert p.returncode == 0, p.stderr
    assert "points       2 of 4 ([sweep.quick] lists)" in p.stdout
    bad = write_scenario(text.replace('"mux.capacity" = ["16 cells"]', '"mux.capacity" = ["12 cells"]'), name="bad.toml")
    p = cli("sweep", str(bad), "--db", str(tmp_path / "b.sqlite"), "--quick")
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert "sweep.quick.\"mux.capacity\": value '12 cells' is not one of the swept values ('4 cells', '16 cells')" in p.stderr


def test_dry_run_lists_the_runs_and_what_the_store_holds_without_running(cli, scenario, tmp_path):
    """``atmsim sweep --dry-run``: the points, seeds and replications the sweep would run
    and how many of them the store already holds; nothing runs and no store is made."""
    from atmsim.sweep import plan_sweep

    db = str(tmp_path / "r.sqlite")
    spec, plan = plan_sweep(scenario, db)
    assert plan["point"].tolist() == [0, 1, 2, 3] and (plan["replications"] == 3).all() and (plan["done"] == 0).all()
    assert plan["seed"].tolist() == [spec.seed_of(i) for i in range(4)]
    p = cli("sweep", scenario, "--db", db, "--dry-run")
    assert p.returncode == 0, p.stderr
    assert f"runs         12: 0 already done in {db}, 12 to run" in p.stdout and not os.path.exists(db)
    run_sweep(scenario, db, quick=True, workers=1)
    # the quick runs are their own sweep: the full one still has all 12 to run
    assert plan_sweep(scenario, db)[1]["done"].sum() == 0
    assert plan_sweep(scenario, db, quick=True)[1]["done"].tolist() == [1, 1, 1, 1]
    before = db_rows(db, "SELECT count(*) FROM runs")
    p = cli("sweep", scenario, "--db", db, "--quick", "--dry-run")
    assert p.returncode == 0, p.stderr
    assert f"runs         4: 4 already done in {db}, 0 to run" in p.stdout
    assert db_rows(db, "SELECT count(*) FROM runs") == before


def test_worker_count_and_dask_same_fingerprints(cli, scenario, tmp_path):
    one = run_sweep(scenario, str(tmp_path / "one.sqlite"), workers=1)
    two = run_sweep(scenario, str(tmp_path / "two.sqlite"), workers=2)
    pd.testing.assert_frame_equal(one.stats, two.stats, check_exact=True)
    assert one.runs["fingerprint"].tolist() == two.runs["fingerprint"].tolist()
    p = cli("sweep", scenario, "--db", str(tmp_path / "dask.sqlite"), "--executor", "dask", "--workers", "2",
            "--quiet", timeout=240)
    assert p.returncode == 0, p.stderr
    assert "dask (LocalCluster), 2 workers" in p.stdout
    dask = dict(db_rows(str(tmp_path / "dask.sqlite"), "SELECT run_key, fingerprint FROM runs"))
    local = dict(db_rows(str(tmp_path / "one.sqlite"), "SELECT run_key, fingerprint FROM runs"))
    assert dask == local


def test_failed_run_recorded_sweep_continues_then_retried(cli, scenario, tmp_path):
    db = str(tmp_path / "r.sqlite")
    env = {"ATMSIM_SWEEP_FAIL_POINT": "1"}
    p = run_cli_env("sweep", scenario, "--db", db, "--quiet", "--workers", "2", env=env)
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    assert "runs         12: 9 done, 3 failed" in p.stdout
    assert "failed runs (3;" in p.stderr and "point 1" in p.stderr and "failure injected" in p.stderr
    rows = db_rows(db, "SELECT point_index, status, error IS NOT NULL FROM runs ORDER BY point_index, replication")
    assert [r for r in rows if r[1] == "failed"] == [(1, "failed", 1)] * 3
    assert db_rows(db, "SELECT count(*) FROM probe_values v JOIN runs r USING (run_key) "
                       "WHERE r.status = 'failed'")[0][0] == 0
    p = cli("sweep", scenario, "--db", db, "--quiet")
    assert p.returncode == 0, p.stderr
    assert "(3 run now, 9 already in the store)" in p.stdout
    assert db_rows(db, "SELECT status, count(*) FROM runs GROUP BY status") == [("done", 12)]


def test_nan_values_and_progress_quiet_off_tty(cli, write_scenario, tmp_path):
    # the source starts after the end: wait statistics are NaN in every replication
    text = BASE.replace('rate = "100 Mb/s"', 'rate = "100 Mb/s"\nstart = "1 s"') + \
        '[sweep]\nreplications = 2\n[sweep.grid]\n"mux.capacity" = ["8 cells"]\n'
    path = write_scenario(text)
    db = str(tmp_path / "r.sqlite")
    p = cli("sweep", str(path), "--db", db)  # no --quiet: stderr is a pipe, so no bar
    assert p.returncode == 0 and p.stderr == "", p.stderr
    res = run_sweep(str(path), db)
    wait = res.stats[(res.stats.probe == "q_wait") & (res.stats.statistic == "mean")].iloc[0]
    assert wait.n == 0 and math.isnan(wait["mean"]) and math.isnan(wait.ci_low)


def test_relative_precision_stopping(write_scenario, tmp_path):
    text = BASE + """
[sweep]
replications = 2
target = { component = "mux", probe = "q_rx_cells", statistic = "count", rel_half_width = 0.02, max_replications = 8, batch = 2 }
[sweep.grid]
"src.rate" = ["20 Mb/s", "100 Mb/s"]
"""
    path = str(write_scenario(text))
    db = str(tmp_path / "r.sqlite")
    res = run_sweep(path, db, workers=2)
    n = res.runs.groupby("point").size().to_dict()
    st = res.stats[(res.stats.probe == "q_rx_cells") & (res.stats.statistic == "count")].set_index("point")
    for point, count in n.items():
        m = st.loc[point, "mean"]
        rel = max(st.loc[point, "ci_high"] - m, m - st.loc[point, "ci_low"]) / m
        assert count == 8 or rel <= 0.02, (point, count, rel)
        assert count % 2 == 0 and 2 <= count <= 8
    # fewer cells → relatively noisier count → needs at least as many replications
    assert n[0] >= n[1]
    again = run_sweep(path, db, workers=1)
    assert again.executed == 0
    pd.testing.assert_frame_equal(res.stats, again.stats, check_exact=True)


def test_precision_false_runs_the_fixed_replications(write_scenario, tmp_path):
    """A sensitivity variant of a file with a stopping rule (issue 18's band variants):
    ``precision=False`` runs the file's ``replications`` and no more, and they are the
    same runs (keys, values) as the first round of the rule's sweep."""
    path = str(write_scenario(PRECISION))
    fixed = run_sweep(path, str(tmp_path / "f.sqlite"), workers=1, precision=False)
    assert fixed.runs.groupby("point").size().to_dict() == {0: 2, 1: 2}
    ruled = run_sweep(path, str(tmp_path / "r.sqlite"), workers=1)
    assert ruled.runs.groupby("point").size().max() > 2  # the rule adds rounds here
    first = ruled.runs[ruled.runs.replication < 2].reset_index(drop=True)
    assert list(first["fingerprint"]) == list(fixed.runs["fingerprint"])


def test_export_formats(cli, scenario, tmp_path):
    db = str(tmp_path / "r.sqlite")
    res = run_sweep(scenario, db, workers=2)
    for what, rows in (("runs", 12), ("values", None), ("stats", len(res.stats))):
        for ext in ("parquet", "csv"):
            out = tmp_path / f"{what}.{ext}"
            if ext == "csv":
                p = cli("export", "--db", db, "--out", str(out), "--what", what)
                assert p.returncode == 0 and f"({what})" in p.stdout, p.stderr
            else:
                export.export(db, str(out), what)
            df = pd.read_parquet(out) if ext == "parquet" else pd.read_csv(out)
            if rows is not None:
                assert len(df) == rows
            assert "mux.capacity" in df.columns
    st = pd.read_parquet(tmp_path / "stats.parquet")
    assert np.array_equal(st["mean"].to_numpy(), res.stats["mean"].to_numpy(), equal_nan=True)
    p = cli("export", "--db", str(tmp_path / "missing.sqlite"), "--out", str(tmp_path / "x.csv"))
    assert p.returncode == 2 and "no such result store" in p.stderr
    assert not os.path.exists(tmp_path / "missing.sqlite")
    p = cli("export", "--db", db, "--out", str(tmp_path / "x.xlsx"))
    assert p.returncode == 2 and ".parquet or .csv" in p.stderr


def test_bench_sweep_quick_json_shape(cli):
    p = cli("bench", "--sweep", "--quick", "--json", timeout=300)
    assert p.returncode == 0, p.stderr
    obj = json.loads(p.stdout)
    assert obj["sweep_overhead"]["runs"] > 0 and obj["sweep_overhead"]["overhead_ms_per_run"] > 0
    assert obj["sweep_speedup"]["speedup"] > 0 and obj["sweep_speedup"]["runs"] == 4


def test_bad_executor_options_exit_2(cli, scenario, tmp_path):
    db = tmp_path / "r.sqlite"
    for args, needle in ((["--executor", "spark"], "valid: local, dask"), (["--workers", "0"], "at least 1"),
                         (["--scheduler", "tcp://127.0.0.1:1"], "needs --executor dask")):
        p = cli("sweep", scenario, "--db", str(db), "--quiet", *args)
        assert p.returncode == 2 and needle in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert not db.exists()


def test_progress_bar_on_a_terminal(scenario, tmp_path):
    import pty

    master, slave = pty.openpty()
    try:
        env = dict(os.environ)
        env.pop("PYTHONWARNINGS", None)
        p = subprocess.run(atmsim_cmd() + ["sweep", scenario, "--db", str(tmp_path / "r.sqlite"), "--workers", "1"],
                           stdout=subprocess.PIPE, stderr=slave, cwd=ROOT, env=env, timeout=120)
        os.close(slave)
        slave = -1
        chunks = []
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the terminal's other side is closed
                break
            if not data:
                break
            chunks.append(data)
    finally:
        if slave >= 0:
            os.close(slave)
        os.close(master)
    err = b"".join(chunks).decode("utf-8", "replace")
    assert p.returncode == 0
    assert "/12 [" in err and "done" in err and "failed 0" in err, err


def test_run_sweep_from_unguarded_script_and_stdin(scenario, tmp_path):
    # Workers must not re-import the caller's __main__ (no `if __name__ == "__main__"`
    # guard here; and `python - < script` has no file to re-import at all).
    script = (f"import atmsim\nprint('main body')\n"
              f"r = atmsim.run_sweep({scenario!r}, {str(tmp_path / 'r.sqlite')!r}, workers=2)\n"
              f"print(len(r.runs), r.ok)\n")
    (tmp_path / "unguarded.py").write_text(script)
    env = dict(os.environ)
    env.pop("PYTHONWARNINGS", None)
    dask = script.replace("workers=2)", "workers=2, executor='dask')").replace("r.sqlite", "d.sqlite")
    for args, stdin in (([str(tmp_path / "unguarded.py")], None), (["-"], script), (["-"], dask)):
        p = subprocess.run([sys.executable, *args], input=stdin, capture_output=True, text=True, cwd=tmp_path,
                           env=env, timeout=120)
        assert p.returncode == 0, p.stderr
        assert p.stdout.count("main body") == 1 and "12 True" in p.stdout, p.stdout + p.stderr


def test_sweep_keeps_each_runs_time_series(write_scenario, tmp_path):
    # The base scenario with a queue-length series every 1 ms of its 5 ms: 5 samples.
    path = str(write_scenario(BASE + SWEEP + '\n[probes]\nseries = ["mux.q_len", "sink.sink_rx_cells"]\ninterval = "1 ms"\n'))
    db = str(tmp_path / "s.sqlite")
    res = atmsim.run_sweep(path, db, workers=2)
    assert res.ok and res.executed == 12
    s = res.series
    assert list(s.columns) == ["point", "replication", "mux.capacity", "mux.capacity [cells]", "src.rate", "src.rate [Mb/s]", "src.vc", "component", "probe",
                               "time", "value", "unit", "kind"]
    per_run = s.groupby(["point", "replication", "probe"]).size()
    assert len(per_run) == 12 * 2 and set(per_run) == {5}
    # Each run's series is the single run's, bit for bit.
    one = s[(s["point"] == 3) & (s["replication"] == 2)]
    spec = load_sweep(path)
    single = atmsim.run(atmsim.load(path), seed=spec.seed_of(3), run=2, set=spec.points[3])
    for probe in ("q_len", "sink_rx_cells"):
        mine = one[one["probe"] == probe]["value"].to_numpy()
        theirs = single.series[single.series["probe"] == probe]["value"].to_numpy()
        assert np.array_equal(mine, theirs), probe
    assert set(one["src.rate"]) == {"140 Mb/s"} and set(one["mux.capacity"]) == {"16 cells"}
    # A resumed sweep reads them back from the store.
    again = atmsim.run_sweep(path, db, workers=1)
    assert again.executed == 0 and again.skipped == 12
    pd.testing.assert_frame_equal(again.series, s)


def test_export_writes_the_stored_series(write_scenario, tmp_path):
    path = str(write_scenario(BASE + SWEEP + '\n[probes]\nseries = ["mux.q_len"]\ninterval = "1 ms"\n'))
    db = str(tmp_path / "s.sqlite")
    res = atmsim.run_sweep(path, db, quick=True, workers=1)
    out = tmp_path / "series.csv"
    # Quick mode: 4 points, 1 replication, 1 ms runs sampled every 1 ms: one sample each.
    assert export.export(db, str(out), "series") == len(res.series) == 4
    df = pd.read_csv(out)
    assert list(df.columns[:3]) == ["scenario", "quick", "point"]
    assert set(df["probe"]) == {"q_len"} and set(df["kind"]) == {"level"}
    np.testing.assert_allclose(sorted(df["value"]), sorted(res.series["value"]))


PRECISION = BASE + """
[sweep]
replications = 2
precision = 0.02
statistics = ["mux.q_rx_cells.count", "sink/vc1.sink_throughput.value"]
max_replications = 6
[sweep.grid]
"src.rate" = ["20 Mb/s", "100 Mb/s"]
"""


def test_precision_adds_replications_until_every_named_statistic_meets_it(write_scenario, tmp_path, cli):
    path = str(write_scenario(PRECISION))
    db = str(tmp_path / "r.sqlite")
    res = run_sweep(path, db, workers=2)
    n = res.runs.groupby("point").size().to_dict()
    rep = res.precision.set_index("point")
    names = [("mux", "q_rx_cells", "count"), ("sink/vc1", "sink_throughput", "value")]
    for point, count in n.items():
        assert 2 <= count <= 6 and count % 2 == 0
        assert rep.loc[point, "replications"] == count
        rels = []
        for comp, probe, stat in names:
            st = res.stats[(res.stats.point == point) & (res.stats.component == comp) & (res.stats.probe == probe)
                           & (res.stats.statistic == stat)]
            assert len(st) == 1, (comp, probe, stat)
            m, lo, hi = st.iloc[0][["mean", "ci_low", "ci_high"]]
            rels.append(max(hi - m, m - lo) / abs(m) if m else math.inf)
        met = all(r <= 0.02 for r in rels)  # NaN (no interval yet) compares False: not met
        assert bool(rep.loc[point, "met"]) == met, (point, rels)
        # not met only at the cap; met points stopped as soon as they met it
        assert met or (count == 6 and rep.loc[point, "hit_cap"]), (point, count, rels)
    # the low-rate point has relatively noisier counts: at least as many replications
    assert n[0] >= n[1]
    p = cli("sweep", path, "--db", db, "--quiet")
    assert p.returncode == 0, p.stderr
    assert "precision: 95% CI half-width <= 0.02 x |mean| for mux.q_rx_cells.count, sink/vc1.sink_throughput.value" in p.stdout
    capped = [str(i) for i in rep.index if rep.loc[i, "hit_cap"]]
    assert f"{len(capped)} of 2 points hit the cap" in p.stdout


def test_a_sweeps_views_are_short_and_say_what_ran(scenario, tmp_path):
    db = str(tmp_path / "r.sqlite")
    res = atmsim.run_sweep(scenario, db, workers=1, quick=True)
    text = repr(res)
    # a line, not the frames: the store, points, runs and what this call computed
    assert "\n" not in text and len(text) < 400
    assert f"db={db!r}" in text and "4 point(s), 4 run(s) (4 computed, 0 from the store), 0 failed" in text
    again = atmsim.run_sweep(scenario, db, workers=1, quick=True)
    assert "(0 computed, 4 from the store)" in repr(again)
    view = again._repr_html_()
    assert "swept keys mux.capacity, src.rate, src.vc" in view and "quick mode" in view
    rows = len(again.stats)
    assert rows > again.HTML_STAT_ROWS and view.count("<tr") == 1 + again.HTML_STAT_ROWS
    assert f"… {rows - again.HTML_STAT_ROWS:,} more rows in <code>.stats</code>" in view
