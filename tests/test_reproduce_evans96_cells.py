"""evans96 cell-level measurement and OC-12c gateway (issue 17 items 2-3): the comparison
rows from hand-made statistics, and the six scenarios run in quick mode through the
reproduction's analysis (figures and rows)."""
from __future__ import annotations

import pandas as pd
import pytest

from atmsim.reproduce import get, run_experiments
from atmsim.reproduce.base import ExperimentResult, Reproduction
from atmsim.reproduce import evans96_cells as cells


def _stats(rows: list[tuple[str, str, str, float]]) -> pd.DataFrame:
    return pd.DataFrame([{"component": c, "probe": p, "statistic": s, "mean": v, "ci_low": None, "ci_high": None}
                         for c, p, s, v in rows])


def _result(key: str, stats: pd.DataFrame) -> ExperimentResult:
    exp = {e.key: e for e in cells.EXPERIMENTS}[key]
    return ExperimentResult(exp, exp.file, stats, pd.DataFrame(), [], None)


def test_rows_carry_the_papers_numbers_and_the_table2_total_is_the_sum():
    t2 = _stats([(f"{rcv}/tcp/vc{vc}", "tcp_throughput", "value", v * 1e6)
                 for (_, rcv, vc, _, _), v in zip(cells.TABLE2, (100.0, 110.0, 120.0, 130.0))])
    by_key = {
        "cells-unpaced": _result("cells-unpaced", _stats([("chip/vc101", "meas_throughput", "value", 149.76),
                                                          ("chip", "meas_throughput", "value", 449.0)])),
        "cells-paced": _result("cells-paced", _stats([("chip/vc101", "meas_throughput", "value", 5.52),
                                                      ("alpha_tioc/tcp/vc101", "tcp_throughput", "value", 4.9712e6)])),
        "gateway-oc12c-sonet": _result("gateway-oc12c-sonet",
                                       _stats([("rx_probe", "meas_payload_throughput", "value", 542.53),
                                               ("rx_probe", "meas_cells", "count", 72000.0),
                                               ("rx_probe", "meas_throughput", "value", 424 * 72000 / 0.05 / 1e6),
                                               ("rx_line", "meas_idle_cells", "count", 2700.0)])),
        "table2": _result("table2", t2),
    }
    rows = {r.quantity: r for r in cells.rows(by_key)}
    unpaced = rows["mean cell-level throughput, unpaced ttcp stream (measurement chip)"]
    assert unpaced.paper_value == 142.0 and unpaced.simulated == 149.76, "the ttcp VC's rate, not the line's"
    assert rows["mean cell-level throughput, 5 Mb/s pacing (measurement chip)"].paper_value == 5.3
    pps = rows["5 Mb/s pacing: packets per second (9140-octet segments)"]
    assert pps.paper_value == 67.0 and pps.simulated == pytest.approx(4.9712e6 / (9140 * 8))
    gw = rows["OC-12c gateway payload throughput, four OC-3c sources (rx probe)"]
    assert gw.paper_value == 542.6 and gw.rel_diff == pytest.approx((542.53 - 542.6) / 542.6)
    # 2700 idle line slots in 0.05 s (72,000 cells at 424 bits / 610.56 Mb/s): 3600 rows.
    per_row = rows["OC-12c gateway: idle slots per row on the line's byte clock (rx_line)"]
    assert per_row.paper_value is None and per_row.simulated == pytest.approx(0.75)
    total = rows["Table 2: total of the four streams, TCP layer"]
    assert total.paper_value == 360.66 and total.simulated == pytest.approx(460.0)
    papers = sorted(r.paper_value for q, r in rows.items() if q.startswith("Table 2:") and "total" not in q)
    assert papers == sorted(t[4] for t in cells.TABLE2)


def test_the_oc12c_arithmetic():
    assert cells.STS12C_MBPS == pytest.approx(599.04)
    assert cells.STS12C_ATM_PAYLOAD_MBPS == pytest.approx(542.527, abs=1e-3)
    assert 4 * cells.TCP_PER_OC3C_MBPS == pytest.approx(538.05, abs=0.01)


def test_evans96_runs_the_cell_experiments():
    keys = {e.key for e in get("evans96").experiments}
    assert {e.key for e in cells.EXPERIMENTS} <= keys


class _Cells(Reproduction):
    name = "evans96"
    experiments = cells.BASE


def test_quick_runs_give_figures_5_to_11_table2_and_the_rows(tmp_path):
    repro = _Cells()
    results = run_experiments(repro, tmp_path / "r.sqlite", quick=True)
    figures, rows = cells.analyse(results, tmp_path, "evans96")
    assert {f.key for f in figures} == {"fig5", "fig6", "fig7", "fig8", "fig9", "fig10", "fig11", "table2"}
    for f in figures:
        assert (tmp_path / f.png).stat().st_size > 1000
    q = {r.quantity: r for r in rows}
    # Four saturated OC-3c fill the STS-12c payload: 599.04 x 48/53 Mb/s of payload.
    gw = q["OC-12c gateway payload throughput, four OC-3c sources (rx probe)"]
    assert gw.simulated == pytest.approx(cells.STS12C_ATM_PAYLOAD_MBPS, rel=1e-4)
    quad = q["quad OC-3c gateway payload throughput, four OC-3c sources (rx probe)"]
    assert quad.simulated == pytest.approx(cells.STS12C_ATM_PAYLOAD_MBPS, rel=1e-4)
    unframed = q["OC-12c gateway payload throughput without SONET framing (ablation)"]
    assert unframed.simulated == pytest.approx(cells.STS12C_ATM_PAYLOAD_MBPS, rel=1e-4)
    # SONET framing, saturated: no idle cell inserted; on the line's byte clock each row's
    # 40 overhead bytes are 40/53 of a slot (G.707: 36 TOH + 1 POH + 3 fixed stuff).
    assert q["OC-12c gateway: idle cells inserted per second (rx_probe, STS-12c slots)"].simulated == 0
    per_row = q["OC-12c gateway: idle slots per row on the line's byte clock (rx_line)"].simulated
    assert per_row == pytest.approx(40 / 53, abs=1e-3)
    # The unpaced OTTO stream cannot exceed its OC-3c's 149.76 Mb/s of cells.
    assert q["mean cell-level throughput, unpaced ttcp stream (measurement chip)"].simulated <= 149.77
    # 5 Mb/s of payload is 5 x 53/48 of cells, when the pacer is the bottleneck.
    assert q["mean cell-level throughput, 5 Mb/s pacing (measurement chip)"].simulated == pytest.approx(5 * 53 / 48,
                                                                                                       rel=0.01)
    assert sum(1 for k in q if k.startswith("Table 2:")) == 5
