"""dastangoo96 reproduction: the scenario files, the convergence definition and the rows
(analysis on synthetic series with values worked out by hand; the whole quick
reproduction runs in the slow test at the bottom)."""
from __future__ import annotations

import csv
import math

import numpy as np
import pandas as pd
import pytest

from conftest import reproduce_quick

from atmsim.reproduce import get
from atmsim.reproduce.base import Experiment, ExperimentResult
from atmsim.reproduce.dastangoo96 import (TABLE2, Dastangoo96, algorithm, convergence_ms, network, steady_mean,
                                          value_at)


def test_names_of_swept_values():
    assert algorithm('["p7 = erica"]') == "erica"
    assert algorithm('["p7 = erica+"]') == "erica+"
    assert algorithm('["p3 = efci"]') == "efci"
    assert algorithm('["p5 = eprca"]') == "eprca"
    with pytest.raises(ValueError):
        algorithm('["p5 = fifo"]')
    assert network('["p7 = 4 km"]') == "LAN" and network('["p1 = 4000 km"]') == "WAN"
    assert network("4 km") == "LAN" and network("4000 km") == "WAN"


def test_convergence_definition():
    t = np.arange(1, 401) * 1e-3  # 1-ms samples, 0.001 .. 0.4 s
    a = np.full_like(t, 100.0)
    b = np.where(t < 0.1795, 50.0, 95.0)  # within 10% of 100 from 180 ms on
    b[(t > 0.2095) & (t < 0.2105)] = 80.0  # one sample apart at 210 ms: the 50-ms window restarts after it
    # First good start: 211 ms (every sample up to 261 ms within 10%): 111 ms after 100 ms.
    assert convergence_ms(t, a, b) == pytest.approx(111.0)
    assert convergence_ms(t, a, np.where(t < 0.1795, 50.0, 91.0)) == pytest.approx(80.0)
    # 89 is 11% below 100: never converged.
    assert math.isnan(convergence_ms(t, a, np.where(t < 0.1795, 50.0, 89.0)))
    # Converging too late for a whole window before the run ends: NaN.
    assert math.isnan(convergence_ms(t, a, np.where(t < 0.3795, 50.0, 100.0)))


def _series(rows):
    return pd.DataFrame(rows, columns=["replication", "component", "probe", "time", "value"])


def test_steady_mean_and_value_at():
    rows = [(r, "e1", "acr", t, v) for r in (0, 1) for t, v in ((0.25, 1000.0), (0.75, 10.0 + r), (1.0, 20.0 + r))]
    s = _series(rows)
    # from 0.5 s: replication 0 averages 15, replication 1 averages 16
    assert steady_mean(s, "e1", "acr") == pytest.approx(15.5)
    assert steady_mean(s, "e2", "acr") is None
    assert value_at(s, "e1", "acr", 0.8) == pytest.approx(10.5)


def _parking_series(algo: str, acr: dict[str, float]) -> pd.DataFrame:
    rows = []
    for i, sess in enumerate("ABCDEF", start=1):
        for t in (0.6, 0.8, 1.0):
            rows.append((0, f"e{i}", "acr", t, acr[sess]))
            rows.append((0, f"e{i}", "src_tx_rate", t, min(acr[sess], 76.0)))
            rows.append((0, f"e{i}", "edge_q", t, 10.0))
    for p in ("s1/p3", "s2/p5", "s3/p5"):
        rows.append((0, p, "q_len", 1.0, 7.0))
    df = _series(rows)
    df["point"] = 0
    abr = {"s1.abr": f'["p3 = {algo}"]', "s2.abr": f'["p5 = {algo}"]', "s3.abr": f'["p5 = {algo}"]'}
    for k, v in abr.items():
        df[k] = v
    return df


def test_parking_lot_rows_compare_the_acr_with_table2(tmp_path):
    repro = Dastangoo96()
    exp = {e.key: e for e in repro.experiments}
    acr = {"A": 34.875, "B": 34.875, "C": 34.875, "D": 104.625, "E": 69.75, "F": 34.875}  # 0.9 x 155-Mb/s shares
    res = []
    for key in ("parking-lot-lan", "parking-lot-wan"):
        s = _parking_series("erica", acr)
        res.append(ExperimentResult(exp[key], repro.scenario_path(exp[key]), pd.DataFrame(), pd.DataFrame(), [], s))
    figures, rows = repro.analyse(res, tmp_path)
    acr_rows = [r for r in rows if "steady ACR" in r.quantity]
    assert len(acr_rows) == 12  # six sessions, LAN and WAN
    for r in acr_rows:
        sess = r.quantity.split()[1][0]
        assert r.paper_value == TABLE2[sess]
        assert r.simulated == pytest.approx(acr[sess])
    assert {f.key for f in figures} >= {"fig19_parking_acr", "fig22_parking_switch_queue"}
    for f in figures:
        assert (tmp_path / f.png).stat().st_size > 1000


def test_scenario_files_expand_to_the_studies():
    from atmsim.sweep import load_sweep

    repro = get("dastangoo96")
    points = {e.key: load_sweep(str(repro.scenario_path(e))).points for e in repro.experiments}
    # four algorithms (EFCI, EPRCA-ER, ERICA, ERICA+) x LAN/WAN; the baseline x 2 decrease readings x 3 std
    assert len(points["six-sessions"]) == 8 and len(points["staggered"]) == 8
    assert len(points["six-sessions-per-cell"]) == 8
    assert len(points["baseline70"]) == 48 and len(points["parking-lot-wan"]) == 4
    import atmsim

    sc = atmsim.load(str(repro.scenario_path(repro.experiments[3])))  # six sessions
    text = sc.to_toml()
    for i in range(1, 7):
        assert f'[components.e{i}]' in text and f'"e{i}.out -> sw1.p{i}"' in text
    assert 'mean = "76 Mb/s"' in text and 'mean = "10 Mb/s"' in text
    # Each edge and each destination sends on its own OC-3c line (no link behind it).
    assert text.count('line_rate = "155 Mb/s"') == 12 and "kind = \"link\"\nrate" not in text.split("[components.sw1]")[0]


def test_quick_reproduction_runs_and_writes_every_row(tmp_path, quick_store):
    out = reproduce_quick(tmp_path / "o", "dastangoo96", quick_store)
    with open(out / "comparison.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    quantities = {r["quantity"] for r in rows}
    for algo in ("EPRCA-EFCI (paper)", "EPRCA-ER", "ERICA", "ERICA+"):
        for net in ("LAN", "WAN"):
            assert f"70-Mb/s sessions: steady egress rate, {net}, {algo}, decrease per-cell" in quantities
            assert f"convergence time, {net}, {algo}" in quantities
            assert f"session D: steady ACR, {net}, {algo}" in quantities
            assert f"70-Mb/s sessions: edge queue at 1.5 s, {net}, {algo}" in quantities
    erica = [r for r in rows if r["quantity"].startswith("session") and "steady ACR" in r["quantity"]
             and r["quantity"].endswith("ERICA")]
    assert len(erica) == 12


def test_six_session_band_rows_carry_the_decrease_reading(tmp_path):
    """The per-cell band run gives the same quantities as the headline, tagged with the
    reading; shown for EFCI, folded (detail) for the explicit-rate algorithms."""
    from atmsim.reproduce.dastangoo96 import six_sessions

    rows = []
    for algo in ("efci", "erica"):
        for t in (0.25, 0.75, 1.0, 1.5):
            for i in range(1, 7):
                acr = 40.0 if i > 3 else 45.0
                rows += [(0, f"e{i}", "acr", t, acr), (0, f"e{i}", "src_tx_rate", t, 10.32 if i <= 3 else 38.0),
                         (0, f"e{i}", "edge_q", t, 1000.0 * i)]
            rows += [(0, f"src{i}", "src_tx_rate", t, 10.0) for i in (1, 2, 3)]
            rows.append((0, "sw1/p7", "q_len", t, 600.0))
        df = _series(rows)
        rows = []
        df["sw1.abr"] = f'["p7 = {algo}"]'
        df["sw1.port_length"] = '["p7 = 4000 km"]'
        figures, out = six_sessions(df, tmp_path, "dastangoo96", reading="per-cell")
        assert figures == []
        by_q = {r.quantity: r for r in out}
        label = "EPRCA-EFCI (paper)" if algo == "efci" else "ERICA"
        r = by_q[f"70-Mb/s sessions: steady egress rate, WAN, {label}, decrease per-cell"]
        assert r.simulated == pytest.approx(38.0) and r.paper_value == 42.0
        assert by_q[f"10-Mb/s sessions: steady ACR, WAN, {label}, decrease per-cell"].simulated == pytest.approx(45.0)
        assert by_q[f"70-Mb/s sessions: edge queue at 1.5 s, WAN, {label}, decrease per-cell"].simulated == \
            pytest.approx(5000.0)
        assert r.detail == (algo != "efci")
