"""The cell trace from Python and the command line: `Result.cell_trace`,
`atmsim run --cell-trace FILE` with `--set trace.*` filters, and its errors."""
from __future__ import annotations

import pandas as pd

from atmsim.api import TRACE_COLUMNS, load
from conftest import ROOT, run_cli
from test_cli import assert_one_line_error

PING = str(ROOT / "scenarios" / "examples" / "ping_through_switch.toml")


def test_a_result_has_an_empty_trace_unless_one_is_asked_for():
    sc = load(PING).with_overrides({"scenario.duration": "5 ms"})
    r = sc.run()
    assert list(r.cell_trace.columns) == TRACE_COLUMNS and r.cell_trace.empty
    t = sc.with_overrides({"trace.cells": "true", "trace.flows": "bg1", "trace.at": "sw"}).run()
    tr = t.cell_trace
    assert list(tr.columns) == TRACE_COLUMNS and len(tr) > 100
    assert set(tr["source"]) == {"bg1"} and set(tr["component"]) == {"sw"}
    assert tr["time_s"].is_monotonic_increasing
    # The background source's cells arrive at port p3 on VC 50; the ones the switch's
    # 128-cell port drops are 'd' rows with the ledger's cause, as many as the ledger's
    # drops of that flow.
    arrived = tr[tr["event"] == "r"]
    assert set(arrived["port"]) == {"p3"} and set(arrived["vc"]) == {"0/50"}
    dropped = tr[tr["event"] == "d"]
    flow = next(f for f in t.flows if f["source"] == "bg1")
    assert len(dropped) == flow["dropped"] and set(dropped["cause"]) <= {"buffer_full"}
    assert t.fingerprint == r.fingerprint and t.summary["events"] == r.summary["events"]


def test_run_cell_trace_writes_a_csv(tmp_path):
    out = tmp_path / "trace.csv"
    p = run_cli("run", PING, "-q", "--cell-trace", str(out), "--set", "trace.flows=ws1", "--set", "trace.to=2 ms")
    assert p.returncode == 0, p.stderr
    assert f"cell trace   {out}: 46 rows (CSV)" in p.stdout
    df = pd.read_csv(out, keep_default_na=False)
    assert list(df.columns) == TRACE_COLUMNS and len(df) == 46
    # one 1024-octet ping: 23 cells into the switch and 23 out of it into ws2
    assert (df["component"] == "sw").sum() == 23 and (df["component"] == "ws2").sum() == 23
    for at in ("sw", "ws2"):
        assert list(df[df["component"] == at]["pdu_cell"]) == list(range(23))
    assert df["carries"].str.contains("icmp echo request seq 0").sum() == 2


def test_trace_mistakes_are_one_line_errors():
    err = assert_one_line_error(run_cli("run", PING, "--cell-trace", "x.csv", "--set", "trace.flows=sw"))
    assert "trace.flows" in err and "not a source" in err
    err = assert_one_line_error(run_cli("run", PING, "--set", "trace.cell=true"))
    assert "did you mean 'cells'" in err


def test_plot_cell_trace_draws_a_dot_per_arrival_and_a_cross_per_drop(tmp_path):
    import pytest

    from atmsim.exceptions import NoSeriesError

    sc = load(PING).with_overrides({"scenario.duration": "3 ms"})
    with pytest.raises(NoSeriesError, match=r"\[trace\] cells = true"):
        sc.run().plot_cell_trace()
    r = sc.with_overrides({"trace.cells": "true", "trace.flows": '["ws1", "bg1"]'}).run()
    fig = r.plot_cell_trace(tmp_path / "trace.png")
    assert (tmp_path / "trace.png").stat().st_size > 1000
    ax = fig.axes[0]
    tr = r.cell_trace
    assert [t.get_text() for t in ax.get_yticklabels()] == list(dict.fromkeys(tr["component"]))
    drawn = {line.get_label(): len(line.get_xdata()) for line in ax.get_lines()}
    arrivals = tr[tr["event"] == "r"].groupby("source").size().to_dict()
    drops = {f"dropped: {c}": n for c, n in tr[tr["event"] == "d"].groupby("cause").size().items()}
    assert drawn == {**arrivals, **drops}, drawn


def test_a_sweep_run_records_no_trace():
    """A sweep's store keeps no cell trace, so its runs (execute_run) turn it off: the
    same books as the run without a [trace] table, and a scenario reports whether it
    traces."""
    from atmsim import _atmsim
    from atmsim.executors import execute_run

    text = (ROOT / "scenarios" / "examples" / "ping_through_switch.toml").read_text()
    traced = text + '\n[trace]\ncells = true\nflows = ["ws1"]\n'
    assert _atmsim.loads(traced, "t.toml").traced and not _atmsim.loads(text, "p.toml").traced
    task = {"overrides": {"scenario.duration": "5 ms"}, "seed": 3, "run": 0}
    a = execute_run({**task, "text": text, "path": "p.toml"})
    b = execute_run({**task, "text": traced, "path": "t.toml"})
    assert a["status"] == b["status"] == "done"
    books = lambda r: [(c, p, s, repr(v), u) for c, p, s, v, u in r["probes"]]  # noqa: E731 (NaN == NaN by repr)
    assert (a["fingerprint"], a["events"], books(a)) == (b["fingerprint"], b["events"], books(b))
    assert not _atmsim.loads(traced, "t.toml").with_overrides({"trace.cells": "false"}).traced
