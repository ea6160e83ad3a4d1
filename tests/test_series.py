"""`[probes] series` and `keep` from Python and the command line."""
from __future__ import annotations

import json

import pandas as pd
import pytest

import atmsim
from conftest import BASE
from test_cli import assert_one_line_error, line_of

SERIES = BASE + """
[probes]
series = ["mux.q_len", "sink.sink_throughput", "src.src_tx_rate"]
interval = "0.5 ms"
"""


def test_result_series_is_a_long_dataframe():
    res = atmsim.run(atmsim.loads(SERIES, "s.toml"), seed=4)
    df = res.series
    assert list(df.columns) == ["component", "probe", "time", "value", "unit", "kind"]
    assert len(df) == 3 * 10
    q = df[(df.component == "mux") & (df.probe == "q_len")]
    assert q.time.tolist() == pytest.approx([0.5e-3 * k for k in range(1, 11)])
    assert set(q.kind) == {"level"} and set(q.unit) == {"cells"}
    assert (q.value >= 0).all() and (q.value == q.value.round()).all()
    thr = df[df.probe == "sink_throughput"]
    assert set(thr.kind) == {"rate"} and set(thr.unit) == {"Mb/s"}
    # The series integrates to the cells the sink got over the run.
    cells = (thr.value * 0.5e-3 / 424e-6).sum()
    assert cells == pytest.approx(res.ledger["delivered"], abs=1e-6)
    # The source emits about its mean rate, 100 Mb/s.
    src = df[df.probe == "src_tx_rate"].value.mean()
    assert 80 < src < 120


def test_no_series_is_an_empty_frame_with_the_columns():
    res = atmsim.run(atmsim.loads(BASE, "s.toml"))
    assert res.series.empty and list(res.series.columns) == ["component", "probe", "time", "value", "unit", "kind"]
    assert res.series.dtypes["value"] == "float64"


def test_series_leave_the_fingerprint_alone():
    a = atmsim.run(atmsim.loads(BASE, "s.toml"), seed=9)
    b = atmsim.run(atmsim.loads(SERIES, "s.toml"), seed=9)
    assert a.fingerprint == b.fingerprint
    pd.testing.assert_frame_equal(a.probes, b.probes)


def test_json_and_csv(cli, write_scenario, tmp_path):
    path = write_scenario(SERIES)
    csv = tmp_path / "series.csv"
    p = cli("run", str(path), "--json", "--series-csv", str(csv))
    assert p.returncode == 0, p.stderr
    obj = json.loads(p.stdout)
    assert [s["probe"] for s in obj["series"]] == ["q_len", "sink_throughput", "src_tx_rate"]
    assert all(len(s["values"]) == 10 and s["interval_s"] == 0.5e-3 for s in obj["series"])
    df = pd.read_csv(csv)
    assert len(df) == 30 and set(df.component) == {"mux", "sink", "src"}
    table = cli("run", str(path), "--quiet")
    assert "series" in table.stdout and "10 × 0.0005 s" in table.stdout


def test_csv_without_series_is_an_error(cli, write_scenario, tmp_path):
    p = cli("run", str(write_scenario(BASE)), "--series-csv", str(tmp_path / "x.csv"))
    assert_one_line_error(p, 2, contains=["no series"])


def test_keep_filters_rows(cli, write_scenario):
    p = cli("run", str(write_scenario(BASE + '\n[probes]\nkeep = ["mux.q_wait"]\n')), "--json")
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)["probes"]
    assert rows and {(r["component"], r["probe"]) for r in rows} == {("mux", "q_wait")}


def test_bad_series_name_is_one_line_with_file_and_line(cli, write_scenario):
    text = SERIES.replace('"mux.q_len"', '"mux.qlen"')
    path = write_scenario(text)
    err = assert_one_line_error(cli("run", str(path)), 2, contains=["probes.series", "did you mean 'q_len'"])
    assert f"{path}:{line_of(text, 'series =')}:" in err


def test_describe_lists_series(cli):
    p = cli("describe", "switch")
    assert p.returncode == 0, p.stderr
    assert "SWITCH/p<N>.q_len" in p.stdout
    info = json.loads(cli("describe", "host", "--json").stdout)
    names = {(s["at"], s["name"]) for s in info["series"]}
    assert ("tcp/vc<N>", "tcp_cwnd") in names and ("nic", "q_len") in names


def test_plot_series_is_one_line(tmp_path):
    res = atmsim.run(atmsim.loads(SERIES, "s.toml"))
    fig = res.plot_series(path=tmp_path / "series.png")
    assert len(fig.axes) == 3 and (tmp_path / "series.png").stat().st_size > 0
    assert [ax.get_title(loc="left") for ax in fig.axes] == ["mux", "sink", "src"]
    assert len(res.plot_series(["sink.sink_throughput"]).axes) == 1
    with pytest.raises(KeyError, match="the run has: mux.q_len"):
        res.plot_series(["mux.qlen"])
    with pytest.raises(ValueError, match=r"\[probes\] series"):
        atmsim.run(atmsim.loads(BASE, "s.toml")).plot_series()
