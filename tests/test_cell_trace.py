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
    assert f"cell trace   {out}: 92 rows (CSV)" in p.stdout
    df = pd.read_csv(out, keep_default_na=False)
    assert list(df.columns) == TRACE_COLUMNS and len(df) == 92
    # one 1024-octet ping: 23 cells leave ws1's adapter, go into the switch, leave its
    # port p2 and arrive at ws2
    rows = df.groupby(["component", "event"]).size().to_dict()
    assert rows == {("ws1", "-"): 23, ("sw", "r"): 23, ("sw", "-"): 23, ("ws2", "r"): 23}, rows
    for at, event in rows:
        sel = df[(df["component"] == at) & (df["event"] == event)]
        assert list(sel["pdu_cell"]) == list(range(23))
        assert set(sel["port"]) == {{"ws1": "out", "sw": "p1" if event == "r" else "p2", "ws2": "in"}[at]}
    assert df["carries"].str.contains("icmp echo request seq 0").sum() == 4


def test_trace_mistakes_are_one_line_errors():
    err = assert_one_line_error(run_cli("run", PING, "--cell-trace", "x.csv", "--set", "trace.flows=sw"))
    assert "trace.flows" in err and "not a source" in err
    err = assert_one_line_error(run_cli("run", PING, "--set", "trace.cell=true"))
    assert "did you mean 'cells'" in err


def test_cell_waits_pair_each_transmission_with_its_arrival():
    """Result.cell_waits: each `-` row with the cell's arrival there. At the switch the
    ping's cells wait behind the background's at port p2 (wait = start - arrival, the
    port's wait probe over the same cells); at ws1, where they are made, they wait
    from their birth behind the PDU's earlier cells, one cell time more each."""
    sc = load(PING).with_overrides({"scenario.duration": "20 ms", "scenario.warmup": "0 s", "trace.cells": "true"})
    r = sc.run()
    w = r.cell_waits
    assert list(w.columns) == ["component", "port", "unit", "vc", "source", "seq", "pdu_cell", "arrived_s",
                               "started_s", "wait_s"]
    assert len(w) == (r.cell_trace["event"] == "-").sum() and not w["wait_s"].isna().any()
    assert (w["wait_s"] >= 0).all()
    tr = r.cell_trace
    one = tr[(tr["source"] == "ws1") & (tr["seq"] == 0) & (tr["pdu_cell"] == 5)]
    arrive = one[(one["component"] == "sw") & (one["event"] == "r")]["time_s"].item()
    start = one[(one["component"] == "sw") & (one["event"] == "-")]["time_s"].item()
    got = w[(w["component"] == "sw") & (w["source"] == "ws1") & (w["seq"] == 0) & (w["pdu_cell"] == 5)]
    assert (got["arrived_s"].item(), got["started_s"].item()) == (arrive, start)
    assert got["wait_s"].item() == start - arrive
    # The switch's port p2: the trace's waits are the ones its probe books.
    p = r.probes
    booked = p[(p["component"] == "sw/p2") & (p["probe"] == "q_wait")].set_index("statistic")["value"]
    at_p2 = w[(w["component"] == "sw") & (w["port"] == "p2")]
    assert len(at_p2) in (booked["count"], booked["count"] + 1)
    assert abs(at_p2["wait_s"].head(int(booked["count"])).mean() - booked["mean"]) <= 1e-9 * booked["mean"]
    # At ws1 the first PDU's cells are made together and leave one cell time apart.
    t = 424 / 149.76e6
    made = w[(w["component"] == "ws1") & (w["seq"] == 0)].sort_values("pdu_cell")
    assert len(made) == 23 and (made["arrived_s"] == made["arrived_s"].iloc[0]).all()
    assert abs(made["wait_s"].diff().dropna() - t).max() < 1e-12
    assert load(PING).with_overrides({"scenario.duration": "1 ms"}).run().cell_waits.empty


def test_plot_cell_trace_draws_arrivals_transmissions_and_drops(tmp_path):
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
    lines = ax.get_lines()
    dots = {line.get_label(): line for line in lines if line.get_marker() == "."}
    crosses = {line.get_label(): len(line.get_xdata()) for line in lines if line.get_marker() == "x"}
    assert {s: len(line.get_xdata()) for s, line in dots.items()} == tr[tr["event"] == "r"].groupby("source").size().to_dict()
    assert crosses == {f"dropped: {c}": n for c, n in tr[tr["event"] == "d"].groupby("cause").size().items()}
    # A tick per transmission start, in its source's colour.
    colour = {line.get_color(): s for s, line in dots.items()}
    ticks = {colour[line.get_color()]: len(line.get_xdata()) for line in lines if line.get_marker() == "|"}
    assert ticks == tr[tr["event"] == "-"].groupby("source").size().to_dict() and ticks
    assert len(lines) == len(dots) + len(crosses) + len(ticks)


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


PA8 = str(ROOT / "scenarios" / "buddhikot92" / "pa8.toml")


def test_frames_on_the_fddi_ring_are_rows_and_their_waits_are_paired(tmp_path):
    """FDDI frames in the trace: the gateway's frames arrive at the ring's gw_tx (a
    kernel delivery) and start at its station ring/s0, whose wait pairs with that
    arrival; background frames start at the station that made them, whose wait counts
    from their birth; cells and frames never pair with each other."""
    sc = load(PA8).with_overrides({"scenario.duration": "300 ms", "scenario.warmup": "0 s", "trace.cells": "true"})
    r = sc.run()
    tr = r.cell_trace
    assert list(tr.columns) == TRACE_COLUMNS
    frames = tr[tr["unit"] == "frame"]
    assert set(tr["unit"]) == {"cell", "frame"}
    assert (tr.loc[tr["unit"] == "cell", "octets"] == 53).all() and (frames["octets"] > 28).all()
    assert (frames["vc"] == "").all() and frames["carries"].str.startswith("dst ").all()
    at_gw_tx = frames[(frames["component"] == "ring") & (frames["event"] == "r")]
    assert len(at_gw_tx) > 10 and set(at_gw_tx["port"]) == {"gw_tx"} and set(at_gw_tx["source"]) == {"gw"}
    w = r.cell_waits
    fw = w[w["unit"] == "frame"]
    gw = fw[fw["source"] == "gw"]
    assert len(gw) > 10 and set(gw["component"]) == {"ring/s0"}
    assert not gw["wait_s"].isna().any() and (gw["wait_s"] >= 0).all()
    bg = fw[fw["source"] != "gw"]
    assert len(bg) > 5 and (bg["source"] == bg["component"]).all(), "a background frame starts where it was made"
    assert not bg["wait_s"].isna().any() and (bg["wait_s"] >= 0).all()
    # One frame followed: arrival at gw_tx, start at ring/s0 after it, the ring's notice
    # to the gateway when its last bit has left (port fddi_done: 80 ns an octet at 100
    # Mb/s), arrival at its destination station after that.
    first = at_gw_tx.iloc[0]
    same = frames[(frames["source"] == "gw") & (frames["seq"] == first["seq"])]
    dst = f"ring/s{first['carries'].split()[1]}"
    assert list(same["component"]) == ["ring", "ring/s0", "gw", dst] and list(same["event"]) == ["r", "-", "r", "r"]
    assert list(same["port"]) == ["gw_tx", "", "fddi_done", ""]
    assert same["time_s"].is_monotonic_increasing
    start, notice = same["time_s"].iloc[1], same["time_s"].iloc[2]
    assert abs(notice - start - first["octets"] * 80e-9) < 1e-12
    assert r.plot_cell_trace(tmp_path / "frames.png") is not None
    no_frames = sc.with_overrides({"trace.frames": "false"}).run().cell_trace
    assert len(no_frames) and set(no_frames["unit"]) == {"cell"}
