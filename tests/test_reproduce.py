"""``atmsim reproduce``: the framework, the buddhikot92 demo, figures, CSV and HTML.

One real ``reproduce buddhikot92 --quick`` run (module fixture) backs the end-to-end
checks; figures, rows and HTML are also tested on synthetic statistics of the shape
``SweepResult.stats`` has."""
from __future__ import annotations

import csv
import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import ROOT, run_cli

from atmsim import export, plot, report
from atmsim.reproduce import (COMPARISON_COLUMNS, ComparisonRow, Experiment, ExperimentResult, PaperOutcome,
                              available, get, unknown_message)
from atmsim.reproduce.buddhikot92 import Buddhikot92, rate_mbps
from atmsim.exceptions import ScenarioError

SCEN = ROOT / "scenarios" / "buddhikot92"


# ------------------------------------------------------------------ end to end
@pytest.fixture(scope="module")
def quick_out(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("reproduce")
    proc = run_cli("reproduce", "buddhikot92", "--quick", "--quiet", "--out", str(out), timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert f"report: {out / 'report.html'}" in proc.stdout
    return out


def _rows(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with open(path, newline="", encoding="utf-8") as fh:
        r = csv.DictReader(fh)
        return list(r.fieldnames or []), list(r)


def test_quick_writes_report_csv_and_store(quick_out):
    for name in ("report.html", "buddhikot92.html", "comparison.csv", "results.sqlite"):
        assert (quick_out / name).is_file(), name
    for fig in ("fig14_cell_loss", "fig13_throughput"):
        for ext in (".png", ".svg"):
            assert (quick_out / "figures" / "buddhikot92" / (fig + ext)).stat().st_size > 1000
    with sqlite3.connect(quick_out / "results.sqlite") as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        n = db.execute("SELECT count(*) FROM runs").fetchone()[0]
    # 3 burst factors x 11 loads x quick_replications 3
    assert n == 3 * 11 * 3


def test_no_interval_outside_its_quantitys_domain(quick_out):
    # every compared quantity of buddhikot92 is non-negative (loss probabilities,
    # throughputs and ratios of them): no interval reaches below 0, a probability's
    # not above 1
    _, rows = _rows(quick_out / "comparison.csv")
    with_ci = [r for r in rows if r["ci_low"] != ""]
    assert any(r["quantity"].startswith("cell loss probability") for r in with_ci)
    for r in with_ci:
        lo, hi = float(r["ci_low"]), float(r["ci_high"])
        assert 0.0 <= lo <= hi, r
        if r["quantity"].startswith("cell loss probability"):
            assert hi <= 1.0, r
    st = export.frame(str(quick_out / "results.sqlite"), "stats")
    prop = st[st["domain"] == "proportion"]
    assert ((prop["ci_low"] >= 0) & (prop["ci_high"] <= 1) | prop["ci_low"].isna()).all()
    nonneg = st[st["domain"].isin(["count", "nonnegative"])]
    assert ((nonneg["ci_low"] >= 0) | nonneg["ci_low"].isna()).all()
    page = (quick_out / "buddhikot92.html").read_text(encoding="utf-8")
    assert "3 replications per point" in page


def test_comparison_csv_has_exactly_the_spec_columns(quick_out):
    cols, rows = _rows(quick_out / "comparison.csv")
    assert cols == ["paper", "experiment", "quantity", "unit", "paper_value", "simulated",
                    "ci_low", "ci_high", "rel_diff", "band_low", "band_high"]
    assert cols == COMPARISON_COLUMNS
    assert rows and all(r["paper"] == "buddhikot92" for r in rows)
    preds = [r for r in rows if r["paper_value"] == ""]
    compared = [r for r in rows if r["paper_value"] != ""]
    assert preds and compared
    assert all(r["rel_diff"] == "" for r in preds)
    for r in compared:
        pv, sim, rd = float(r["paper_value"]), float(r["simulated"]), float(r["rel_diff"])
        assert rd == pytest.approx((sim - pv) / abs(pv))
    # one loss and one throughput row per burst factor and load
    assert sum(r["quantity"].startswith("cell loss probability,") for r in rows) == 33
    assert sum(r["quantity"].startswith("throughput, B=") for r in rows) == 33
    # below saturation the carried payload is offered x 45/53 (no loss at 40 Mb/s)
    ratio = [r for r in compared if r["quantity"].startswith("carried/offered")]
    assert len(ratio) == 3
    for r in ratio:
        assert float(r["paper_value"]) == pytest.approx(45 / 53)
        assert float(r["simulated"]) == pytest.approx(45 / 53, rel=0.1)


def test_report_page_content(quick_out):
    import atmsim

    page = (quick_out / "report.html").read_text(encoding="utf-8")
    assert page == (quick_out / "buddhikot92.html").read_text(encoding="utf-8")
    assert "<script" not in page.lower()
    assert "http://" not in page and "https://" not in page  # self-contained
    assert 'src="figures/buddhikot92/fig14_cell_loss.png"' in page
    assert "class=\"badge\"" in page and "prediction" in page
    assert f"atmsim {atmsim.__version__}" in page
    assert "stands in for the gateway" in page
    assert "scenarios/buddhikot92/bf1000.toml" in page
    assert "src1.mean" in page  # swept keys are listed


def test_rerun_resumes_without_new_runs(quick_out):
    before = (quick_out / "results.sqlite").stat().st_size
    proc = run_cli("reproduce", "buddhikot92", "--quick", "--quiet", "--out", str(quick_out), timeout=600)
    assert proc.returncode == 0, proc.stderr
    with sqlite3.connect(quick_out / "results.sqlite") as db:
        assert db.execute("SELECT count(*) FROM runs").fetchone()[0] == 99
    assert before > 0


# ------------------------------------------------------------------ names
@pytest.mark.parametrize("name, expect", [
    ("budhikot92", "did you mean 'buddhikot92'"),
    ("dastangoo96", "not implemented yet"),
    ("nonsense", "unknown reproduction 'nonsense'"),
])
def test_bad_names_exit_2_with_one_line(name, expect, tmp_path):
    proc = run_cli("reproduce", name, "--quick", "--out", str(tmp_path / "o"))
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert expect in lines[0] and "available: buddhikot92" in lines[0]
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "o").exists()  # nothing created for a bad name


def test_registry():
    assert available()[0] == "buddhikot92"
    assert isinstance(get("buddhikot92"), Buddhikot92)
    with pytest.raises(ScenarioError):
        get("all-of-them")
    assert "did you mean 'all'" in unknown_message("al")


def test_scenario_files_load_with_their_sweeps():
    from atmsim.sweep import load_sweep

    repro = Buddhikot92()
    for exp in repro.experiments:
        spec = load_sweep(str(repro.scenario_path(exp)))
        assert len(spec.points) == 11
        loads = [sum(rate_mbps(p[f"src{i}.mean"]) for i in range(1, 9)) for p in spec.points]
        assert loads == pytest.approx(list(range(40, 141, 10)))
        for p in spec.points:  # peak-to-average ratio 2 everywhere (Table 3)
            assert rate_mbps(p["src1.peak"]) == pytest.approx(2 * rate_mbps(p["src1.mean"]))


def test_rate_parsing():
    assert rate_mbps("12.5 Mb/s") == 12.5
    assert rate_mbps("500 kb/s") == 0.5
    assert rate_mbps("1 Gb/s") == 1000
    assert rate_mbps("2e6 b/s") == 2
    with pytest.raises(ValueError):
        rate_mbps("12 cells")


# ------------------------------------------------------------------ synthetic stats
def synthetic_stats(burst: int, loads=(40, 80, 120)) -> pd.DataFrame:
    """Stats rows shaped like SweepResult.stats for one buddhikot92 scenario."""
    rows = []
    for point, load in enumerate(loads):
        keys = {}
        for i in range(1, 9):
            keys[f"src{i}.mean"] = f"{load / 8:g} Mb/s"
            keys[f"src{i}.peak"] = f"{load / 4:g} Mb/s"
        loss = 0.0 if load < 80 else 1e-3 * burst / 250 * (load / 80) ** 4
        cells = min(load, 117.78) * 1e6 / 424 * (1 - loss)
        for comp, probe, stat, unit, mean in [
            ("mux", "q_loss_ratio", "value", "1", loss),
            ("mux", "q_tx_cells", "rate", "cells/s", cells),
            ("mux", "q_tx_cells", "count", "cells", cells * 2),
        ]:
            h = 0.2 * mean
            rows.append({"point": point, **keys, "component": comp, "probe": probe, "statistic": stat,
                         "unit": unit, "n": 3, "mean": mean, "std": h, "ci_low": mean - 2 * h, "ci_high": mean + h})
    # shuffled, as a store might return them
    return pd.DataFrame(rows).sample(frac=1.0, random_state=1).reset_index(drop=True)


def synthetic_results() -> list[ExperimentResult]:
    repro = Buddhikot92()
    runs = pd.DataFrame({"point": [0], "replication": [0], "seed": [1], "status": ["done"], "wall_s": [0.1],
                         "events": [10], "fingerprint": ["x"], "error": [None]})
    return [ExperimentResult(e, repro.scenario_path(e), synthetic_stats(e.labels["burst_factor"]), runs, [])
            for e in repro.experiments]


def test_series_from_stats_sorts_scales_and_names_missing():
    st = synthetic_stats(500)
    s = plot.series_from_stats(st, component="mux", probe="q_tx_cells", statistic="rate",
                               x=lambda r: rate_mbps(r["src1.mean"]) * 8, label="B", scale=360 / 1e6)
    assert list(s.x) == [40, 80, 120]
    assert s.mean[0] == pytest.approx(40 * 45 / 53)
    with pytest.raises(KeyError, match="mux.q_wait.mean"):
        plot.series_from_stats(st, component="mux", probe="q_wait", statistic="mean", x=lambda r: 0.0, label="x")


def test_plot_series_log_axis_with_zeros_and_negative_ci(tmp_path):
    import matplotlib.image as mpimg

    s = plot.Series("B = 250", [40, 80, 120], [0.0, 1e-3, 2e-2], [-1e-3, -5e-4, 1e-2], [1e-3, 3e-3, 3e-2])
    empty = plot.Series("empty", [40], [0.0], [np.nan], [np.nan])
    png, svg = plot.plot_series([s, empty], tmp_path / "f" / "loss", xlabel="Offered load (Mb/s)",
                                ylabel="Cell loss probability", logy=True)
    assert png.suffix == ".png" and svg.suffix == ".svg"
    img = mpimg.imread(png)
    assert img.shape[0] > 100 and img.shape[1] > 100
    text = svg.read_text()
    assert "<svg" in text and "Offered load (Mb/s)" in text
    # same input, same SVG bytes (no dates, fixed hash salt)
    _, svg2 = plot.plot_series([s, empty], tmp_path / "g" / "loss", xlabel="Offered load (Mb/s)",
                               ylabel="Cell loss probability", logy=True)
    assert svg2.read_text() == text


def test_series_rejects_ragged_input():
    with pytest.raises(ValueError):
        plot.Series("x", [1, 2], [1], [1], [1])


def test_buddhikot92_analyse_on_synthetic_stats(tmp_path):
    repro = Buddhikot92()
    figures, rows = repro.analyse(synthetic_results(), tmp_path)
    assert [f.key for f in figures] == ["fig14", "fig13"]
    for f in figures:
        assert (tmp_path / f.png).is_file() and (tmp_path / f.svg).is_file()
        assert not Path(f.png).is_absolute()
    by_q = {r.quantity: r for r in rows}
    r = by_q["carried/offered at 40 Mb/s (below saturation), B=250"]
    assert r.paper_value == pytest.approx(45 / 53) and r.simulated == pytest.approx(45 / 53)
    assert r.rel_diff == pytest.approx(0.0, abs=1e-12)
    ratio = by_q["cell loss ratio B=1000 : B=250 at 80 Mb/s"]
    assert ratio.is_prediction and ratio.simulated == pytest.approx(4.0)
    # conservative interval: (0.6 x 4 / 1.2, 1.2 x 4 / 0.6) from the synthetic CIs
    assert (ratio.ci_low, ratio.ci_high) == (pytest.approx(2.0), pytest.approx(8.0))
    cut = by_q["cut-off load (lowest swept load with cell loss >= 0.0001), B=500"]
    assert cut.simulated == 80
    detail = [r for r in rows if r.detail]
    assert len(detail) == 3 * 3 * 2 and all(r.is_prediction for r in detail)


def test_comparison_csv_writer_empty_cells(tmp_path):
    rows = [ComparisonRow("e", "q, with comma", "1", 0.5, None, None, None),
            ComparisonRow("e", "r", "Mb/s", 99.0, 98.0, 100.0, 100.0)]
    path = report.write_comparison_csv(tmp_path / "c.csv", [("p", rows)])
    cols, got = _rows(path)
    assert cols == COMPARISON_COLUMNS
    assert got[0]["quantity"] == "q, with comma"
    assert got[0]["paper_value"] == got[0]["ci_low"] == got[0]["rel_diff"] == ""
    assert float(got[1]["rel_diff"]) == pytest.approx(-0.01)
    assert got[0]["band_low"] == got[0]["band_high"] == ""
    banded = [ComparisonRow("e", "s", "Mb/s", 2.0, band_low=1.5, band_high=3.0, band_param="x")]
    _, got = _rows(report.write_comparison_csv(tmp_path / "b.csv", [("p", banded)]))
    assert (float(got[0]["band_low"]), float(got[0]["band_high"])) == (1.5, 3.0)


# ------------------------------------------------------------------ HTML escaping
EVIL_SCENARIO = """\
connections = ["src -> mux", "mux -> sink"]

[scenario]
name = "evil<script>alert(1)</script>"
description = "a & b <img src=x onerror=alert(2)>"
duration = "5 ms"

[components.src]
kind = "poisson"
rate = "100 Mb/s"

[components.mux]
kind = "fifo"
phy = "OC-3c"
capacity = "64 cells"

[components.sink]
kind = "sink"

[sweep]
replications = 2

[sweep.grid]
"mux.capacity" = ["8 cells", "16 cells"]
"""


def test_html_escapes_scenario_and_row_text(tmp_path):
    scen = tmp_path / "evil<b>.toml"
    scen.write_text(EVIL_SCENARIO)
    html_text = report.scenario_section(scen, str(scen))
    assert "<script>" not in html_text and "<img" not in html_text
    assert "evil&lt;script&gt;alert(1)&lt;/script&gt;" in html_text
    assert "a &amp; b &lt;img src=x onerror=alert(2)&gt;" in html_text
    assert "evil&lt;b&gt;.toml" in html_text
    assert "8 cells, 16 cells" in html_text

    class Evil(Buddhikot92):
        name = "buddhikot92"
        summary = "<script>bad()</script>"

        def notes(self):
            return ["<i>note</i>"]

    exp = Experiment("e<1>", str(scen), "t <t>", {})
    res = ExperimentResult(exp, scen, pd.DataFrame(), pd.DataFrame(), [{"error": "x"}])
    rows = [ComparisonRow("x<y>", "q <b>bold</b>", "<u>", 1.0, note="n & <m>")]
    p = PaperOutcome(Evil(), [res], [], rows)
    ctx = report.ReportContext(version="0<1>", commit=None, quick=True)
    page = report.paper_page_html(p, ctx)
    for raw in ("<script>", "<b>bold</b>", "<i>note</i>", "<u>", "x<y>", "e<1>", "0<1>"):
        assert raw not in page, raw
    assert "q &lt;b&gt;bold&lt;/b&gt;" in page
    assert "1 failed" in page


def test_index_page_links_every_paper(tmp_path):
    repro = Buddhikot92()
    figures, rows = repro.analyse(synthetic_results(), tmp_path)
    p = PaperOutcome(repro, synthetic_results(), figures, rows)
    ctx = report.ReportContext(version="9.9.9", commit="abc", quick=False)
    idx = report.write_index(tmp_path, [p], ctx)
    text = idx.read_text()
    assert 'href="buddhikot92.html"' in text
    for other in ("evans96", "domingo95", "dastangoo96", "lazarou96"):
        assert other in text
    assert "not implemented yet" in text
    page = (tmp_path / "buddhikot92.html").read_text()
    assert 'href="report.html"' in page  # back to the index
    assert "atmsim 9.9.9, git abc; full mode" in page


# ------------------------------------------------------------------ evans96 adaptive shaping
def test_evans96_adaptive_shaping_rows_and_figure(tmp_path):
    """The Bellcore trace through the static (i/m = 0.02) and the adaptive shaper at four
    speeds (the sweep runs in seconds): the rows compare the headline point (the trace as
    recorded, coefficients 0.1) with the paper's 11 and 160 ms and fold the band away;
    and the paper's qualitative claim is tested, not assumed: wherever the static window
    makes cells wait at all (the trace sped up 10x and 20x), the adaptive shaper's delay
    is several times shorter, for every coefficient set."""
    from atmsim.reproduce.evans96 import _shaping_points, shaping_figure, shaping_rows
    from atmsim.sweep import run_sweep

    sr = run_sweep(str(ROOT / "scenarios" / "evans96" / "adaptive_shaping.toml"), str(tmp_path / "s.sqlite"),
                   quick=True, workers=1)
    pts = _shaping_points(sr.stats)
    assert sorted(pts["speedup"].unique()) == [1.0, 5.0, 10.0, 20.0]
    assert len(pts) == 16 and pts["static"].sum() == 4
    for speed in (10.0, 20.0):
        grp = pts[pts["speedup"] == speed]
        static = float(grp[grp["static"]]["wait_ms"].iloc[0])
        assert static > 20.0, f"{speed}x: the static window queues the bursts ({static} ms)"
        assert (grp[~grp["static"]]["wait_ms"] < static / 3).all(), grp
    rows = shaping_rows(sr.stats)
    head = [r for r in rows if not r.detail]
    assert [(r.paper_value, "as recorded" in r.quantity) for r in head] == [(11.0, True), (160.0, True)]
    assert all(r.unit == "ms" and r.simulated >= 0 for r in rows)
    assert sum(1 for r in rows if r.paper_value == 160.0) == 4
    fig = shaping_figure(sr.series, tmp_path, "evans96")
    assert fig is not None and (tmp_path / fig.png).stat().st_size > 10_000
