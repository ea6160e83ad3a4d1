"""Python API: load/run, results as DataFrames, determinism and stream isolation."""
from __future__ import annotations

import pandas as pd
import pytest

import atmsim
from atmsim.exceptions import AtmsimError, ParamError, ScenarioError, SimulationError

from conftest import BASE, ROOT

POISSON = ROOT / "scenarios" / "examples" / "poisson_oc3.toml"
SHORT = {"scenario.duration": "20 ms", "scenario.warmup": "1 ms"}


def test_version_and_exceptions():
    assert isinstance(atmsim.__version__, str) and atmsim.__version__
    assert issubclass(ParamError, ScenarioError)
    assert issubclass(ScenarioError, AtmsimError)
    assert issubclass(SimulationError, AtmsimError)
    assert atmsim.ScenarioError is ScenarioError


def test_load_scenario_object():
    sc = atmsim.load(POISSON)
    assert sc.name == "poisson-oc3"
    assert sc.path.endswith("poisson_oc3.toml")
    assert sc.duration_s == pytest.approx(1.0)
    assert sc.warmup_s == pytest.approx(0.01)
    assert sc.seed == 1
    kinds = {c["name"]: c["kind"] for c in sc.components()}
    assert kinds == {"src": "poisson", "mux": "fifo", "sink": "sink"}
    assert sc.native is not None
    sc2 = sc.with_overrides({"scenario.duration": "20 ms"})
    assert sc2.duration_s == pytest.approx(0.02)
    assert sc.duration_s == pytest.approx(1.0)  # immutable


def test_run_summary_and_probes():
    res = atmsim.run(POISSON, set=SHORT, progress=False)
    s = res.summary
    for key in ("name", "seed", "run", "fingerprint", "events", "duration_s", "wall_s", "ledger", "flows"):
        assert key in s
    assert s["name"] == "poisson-oc3" and s["seed"] == 1 and s["run"] == 0
    assert len(s["fingerprint"]) == 16 and int(s["fingerprint"], 16) >= 0
    assert s["events"] > 0
    df = res.probes
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == ["scenario", "seed", "run", "component", "probe", "statistic", "value", "unit"]
    # which run each row is of (issue 44): frames of several runs concatenate safely
    assert set(df["scenario"]) == {"poisson-oc3"} and set(df["seed"]) == {1} and set(df["run"]) == {0}
    assert df["value"].dtype == "float64"
    assert len(df) > 10
    assert not df.duplicated(["component", "probe", "statistic"]).any()
    assert {"src", "mux"} <= set(df.component)
    # ~0.9 × 353,208 cells/s × 19 ms measured
    assert res.value("mux", "q_rx_cells", "count") > 1000
    assert 0 <= res.value("mux", "phy_utilisation", "value") <= 1
    with pytest.raises(KeyError):
        res.value("mux", "no_such_probe", "mean")
    with pytest.raises(KeyError):
        res.value("nobody", "q_len", "mean")
    assert res.ledger_balances()


def test_determinism_same_seed_and_run():
    a = atmsim.run(POISSON, seed=5, run=3, set=SHORT, progress=False)
    b = atmsim.run(POISSON, seed=5, run=3, set=SHORT, progress=False)
    assert a.fingerprint == b.fingerprint
    assert a.events == b.events
    pd.testing.assert_frame_equal(a.probes, b.probes)
    assert a.ledger == b.ledger


def test_different_run_or_seed_differs():
    a = atmsim.run(POISSON, seed=5, run=0, set=SHORT, progress=False)
    b = atmsim.run(POISSON, seed=5, run=1, set=SHORT, progress=False)
    c = atmsim.run(POISSON, seed=6, run=0, set=SHORT, progress=False)
    assert a.fingerprint != b.fingerprint
    assert a.fingerprint != c.fingerprint
    assert a.value("mux", "q_wait", "mean") != b.value("mux", "q_wait", "mean")


ISOLATION = """\
connections = [
  "a -> mux",
  "mux -> sink1",
{extra_conn}]

[scenario]
name = "isolation"
duration = "20 ms"
seed = 11

[components.a]
kind = "poisson"
rate = "100 Mb/s"
vc = 1

[components.mux]
kind = "fifo"
phy = "OC-3c"
capacity = "32 cells"

[components.sink1]
kind = "sink"
{extra}"""

EXTRA = """
[components.b]
kind = "onoff"
peak = "40 Mb/s"
mean = "10 Mb/s"
burst_factor = "100 cells"
vc = 2

[components.sink2]
kind = "sink"
"""


def test_unrelated_source_leaves_results_unchanged():
    """Random streams are derived from (seed, run, component path): adding a source
    with its own sink must not change anything the original VC sees."""
    alone = atmsim.loads(ISOLATION.format(extra_conn="", extra=""), "alone.toml").run(run=2, progress=False)
    both = atmsim.loads(ISOLATION.format(extra_conn='  "b -> sink2",\n', extra=EXTRA), "both.toml").run(
        run=2, progress=False)
    assert both.value("b", "src_tx_cells", "count") > 0
    keep = ["a", "mux", "sink1/vc1"]
    pa = alone.probes[alone.probes.component.isin(keep)].reset_index(drop=True)
    pb = both.probes[both.probes.component.isin(keep)].reset_index(drop=True)
    assert len(pa) > 0
    pd.testing.assert_frame_equal(pa, pb)
    assert alone.value("sink1/vc1", "sink_delay", "mean") == both.value("sink1/vc1", "sink_delay", "mean")


def test_set_changes_results():
    a = atmsim.run(POISSON, set=SHORT, progress=False)
    b = atmsim.run(POISSON, set={**SHORT, "mux.capacity": "4 cells"}, progress=False)
    assert b.value("mux", "q_drop_cells", "count") > a.value("mux", "q_drop_cells", "count")
    assert a.fingerprint != b.fingerprint


def test_progress_callback_called_and_exception_propagates():
    calls = []
    atmsim.run(POISSON, set={"scenario.duration": "0.5 s"}, progress=lambda now, dur: calls.append((now, dur)))
    assert calls, "a 0.5 s run has > 65k events, so progress must be reported"
    assert all(0 <= now <= dur + 1e-12 for now, dur in calls)

    class Stop(Exception):
        pass

    def stop(_now, _dur):
        raise Stop()

    with pytest.raises(Stop):
        atmsim.run(POISSON, set={"scenario.duration": "0.5 s"}, progress=stop)


def test_errors_are_typed():
    with pytest.raises(ScenarioError):
        atmsim.load(ROOT / "no" / "such.toml")
    with pytest.raises(ScenarioError):
        atmsim.loads(BASE.replace('rate = "100 Mb/s"', 'rat = "100 Mb/s"'), "x.toml")
    with pytest.raises(ParamError):
        atmsim.loads(BASE.replace('rate = "100 Mb/s"', 'rate = "-5 Mb/s"'), "x.toml")
    sc = atmsim.loads(BASE, "x.toml")
    with pytest.raises(ScenarioError):
        sc.with_overrides({"mux.capcity": "3 cells"})


def test_describe():
    kinds = atmsim.describe()
    names = {k["kind"] for k in kinds}
    assert {"cbr", "poisson", "onoff", "fifo", "link", "sink"} <= names
    fifo = atmsim.describe("fifo")
    assert {p["name"] for p in fifo["params"]} >= {"capacity"}
    assert "q_wait" in {p["name"] for p in fifo["probes"]}
    with pytest.raises(ScenarioError, match="did you mean"):
        atmsim.describe("fifoo")


def test_notebook_views_show_the_run_and_escape_what_users_wrote():
    # the scenario's name and path are the user's text: they must not become markup
    sc = atmsim.loads(BASE.replace('name = "t"', 'name = "t<i>"'), "<x>.toml")
    view = sc._repr_html_()
    assert "t&lt;i&gt;" in view and "<i>" not in view and "&lt;x&gt;.toml" in view
    assert view.count("<tr>") == 1 + len(sc.components())
    res = atmsim.run(POISSON, set=SHORT, progress=False)
    view = res._repr_html_()
    led = res.ledger
    assert res.fingerprint in view and f"{res.events:,} events" in view
    assert f"generated {led['generated']:,}" in view and "the ledger balances" in view
    # counts are printed exactly, as the CLI prints them; the table stops at 30 rows
    count = res.value("src", "src_tx_cells", "count")
    assert f"<td>{count:,.0f}</td>" in view
    rows = len(res.probes)
    assert rows > res.HTML_PROBE_ROWS
    assert view.count("<tr") == 1 + res.HTML_PROBE_ROWS
    assert f"… {rows - res.HTML_PROBE_ROWS:,} more rows" in view
