"""``atmsim reproduce``: the framework, the buddhikot92 reproduction, figures, CSV and HTML.

One real quick run of two buddhikot92 experiments (module fixture) backs the end-to-end
checks; figures, rows and HTML are also tested on synthetic statistics of the shape
``SweepResult.stats`` has."""
from __future__ import annotations

import csv
import math
import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import ROOT, run_cli

from atmsim import export, plot, report, stats
from atmsim.reproduce import (COMPARISON_COLUMNS, ComparisonRow, Experiment, ExperimentResult, PaperOutcome,
                              available, get, unknown_message)
from atmsim.reproduce.buddhikot92 import Buddhikot92, rate_mbps
from atmsim.exceptions import ScenarioError

SCEN = ROOT / "scenarios" / "buddhikot92"


# ------------------------------------------------------------------ end to end
#: The end-to-end checks run two of the ten experiments (one forward curve and the
#: reverse path, 84 short runs) so that this file stays fast; the whole quick
#: reproduction runs in tests/test_report_browser.py and in `make run`.
E2E_KEYS = ("bf250", "reverse")


class _Subset(Buddhikot92):
    experiments = tuple(e for e in Buddhikot92.experiments if e.key in E2E_KEYS)


@pytest.fixture(scope="module")
def quick_out(tmp_path_factory) -> Path:
    import atmsim.reproduce as rp

    out = tmp_path_factory.mktemp("reproduce")
    rp.register("buddhikot92", _Subset)
    try:
        outcome = rp.reproduce("buddhikot92", out, quick=True, workers=2)
        assert outcome.failures == 0
        assert outcome.report == out / "report.html"
        yield out
    finally:
        rp._registry.pop("buddhikot92", None)


def _rows(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with open(path, newline="", encoding="utf-8") as fh:
        r = csv.DictReader(fh)
        return list(r.fieldnames or []), list(r)


def test_quick_writes_report_csv_and_store(quick_out):
    for name in ("report.html", "buddhikot92.html", "comparison.csv", "results.sqlite"):
        assert (quick_out / name).is_file(), name
    for fig in ("fig13_throughput", "fig14_cell_loss", "fig15_frame_loss", "fig16_latency", "reverse_throughput"):
        for ext in (".png", ".svg"):
            assert (quick_out / "figures" / "buddhikot92" / (fig + ext)).stat().st_size > 1000
    with sqlite3.connect(quick_out / "results.sqlite") as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        n = db.execute("SELECT count(*) FROM runs").fetchone()[0]
    # (21 loads + 7 reverse loads) x quick_replications 3
    assert n == (21 + 7) * 3


def test_no_interval_outside_its_quantitys_domain(quick_out):
    # every compared quantity of buddhikot92 is non-negative (loss probabilities,
    # throughputs, latencies and ratios of them): no interval reaches below 0, a
    # probability's not above 1
    _, rows = _rows(quick_out / "comparison.csv")
    with_ci = [r for r in rows if r["ci_low"] != ""]
    assert any(r["quantity"].startswith("cell loss probability") for r in with_ci)
    for r in with_ci:
        lo, hi = float(r["ci_low"]), float(r["ci_high"])
        assert 0.0 <= lo <= hi, r
        if "loss probability" in r["quantity"]:
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
        pv, sim = float(r["paper_value"]), float(r["simulated"])
        if pv != 0:
            assert float(r["rel_diff"]) == pytest.approx((sim - pv) / abs(pv))
    # one row per probe and load of the forward curve, two per reverse load
    for what in ("throughput", "cell loss probability", "frame loss probability", "latency"):
        assert sum(r["quantity"].startswith(f"{what}, burst factor 250, offered") for r in rows) == 21, what
    assert sum(r["quantity"].startswith("receive buffer frame loss, FDDI load") for r in rows) == 7
    # below the knee the carried load is about offered x 45/53 (quick runs are short:
    # frames still being reassembled or queued at the window's ends are not counted)
    ratio = [r for r in compared if r["quantity"].startswith("carried/offered")]
    assert len(ratio) == 1
    assert float(ratio[0]["paper_value"]) == pytest.approx(45 / 53)
    assert float(ratio[0]["simulated"]) == pytest.approx(45 / 53, rel=0.25)
    rev = [r for r in compared if r["quantity"].startswith("receive buffer frame loss at")]
    assert len(rev) == 1 and float(rev[0]["paper_value"]) == 0.0


def test_report_page_content(quick_out):
    import atmsim

    page = (quick_out / "report.html").read_text(encoding="utf-8")
    assert page == (quick_out / "buddhikot92.html").read_text(encoding="utf-8")
    assert "<script" not in page.lower()
    assert "http://" not in page and "https://" not in page  # self-contained
    assert 'src="figures/buddhikot92/fig14_cell_loss.png"' in page
    assert "class=\"badge\"" in page and "prediction" in page
    assert f"atmsim {atmsim.__version__}" in page
    assert "stand-in" not in page and "stands in" not in page
    assert "atm_fddi_gateway" in page and "fddi_ring" in page
    assert "scenarios/buddhikot92/bf250.toml" in page
    assert "src1.mean" in page  # swept keys are listed


def test_rerun_resumes_without_new_runs(quick_out):
    import atmsim.reproduce as rp

    before = (quick_out / "results.sqlite").stat().st_size
    rp.register("buddhikot92", _Subset)
    try:
        outcome = rp.reproduce("buddhikot92", quick_out, quick=True, workers=2)
    finally:
        rp._registry.pop("buddhikot92", None)
    assert outcome.failures == 0
    with sqlite3.connect(quick_out / "results.sqlite") as db:
        assert db.execute("SELECT count(*) FROM runs").fetchone()[0] == (21 + 7) * 3
    assert before > 0


# ------------------------------------------------------------------ names
@pytest.mark.parametrize("name, expect", [
    ("budhikot92", "did you mean 'buddhikot92'"),
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


def test_a_paper_without_its_module_is_not_implemented_yet(monkeypatch):
    import atmsim.reproduce as rp

    monkeypatch.setattr(rp, "_BUILTIN", {k: v for k, v in rp._BUILTIN.items() if k != "dastangoo96"})
    msg = unknown_message("dastangoo96")
    assert "'dastangoo96' is not implemented yet" in msg and "available: buddhikot92" in msg


def test_registry():
    assert available()[0] == "buddhikot92"
    assert isinstance(get("buddhikot92"), Buddhikot92)
    with pytest.raises(ScenarioError):
        get("all-of-them")
    assert "did you mean 'all'" in unknown_message("al")


def test_scenario_files_load_with_their_sweeps():
    """Each experiment's file sweeps what its figure varies and holds what the paper
    holds (Tables 2-3, sections 6.2-6.5)."""
    from atmsim import api
    from atmsim.sweep import load_sweep

    repro = Buddhikot92()
    for exp in repro.experiments:
        path = repro.scenario_path(exp)
        spec = load_sweep(str(path), dict(exp.overrides) or None)
        comps = {c["name"]: c for c in api.load(path).components()}
        lab, group = exp.labels, exp.labels["group"]
        # variants of a file through overrides: only the two that need one
        assert dict(exp.overrides) == ({"gw.tx_buffer_frames": str(lab["tx"])} if group == "gain" else
                                       {"gw.spp_empty_in_error": "free"} if group == "free" else {})
        if group == "reverse":
            loads = [3 * rate_mbps(p["ring.rate"]) for p in spec.points]
            assert loads == pytest.approx([20, 40, 60, 70, 80, 90, 95], abs=1e-3)
            for p in spec.points:  # bursts at the ring's 100 Mb/s
                assert float(p["ring.peak_to_mean"]) * rate_mbps(p["ring.rate"]) == pytest.approx(100, rel=1e-3)
            assert comps["gw"]["params"]["rx_buffer_frames"] in (16, "16")
            continue
        gw, ring = comps["gw"]["params"], comps["ring"]["params"]
        assert str(ring["ttrt"]).replace(" ", "") == "50ms" and int(ring["priority"]) == 7 and int(ring["stations"]) == 4
        assert rate_mbps(comps["mux"]["params"]["rate"]) == 150
        assert int(gw["reassembly_frames"]) == 2 and str(gw["clock"]).replace(" ", "") == "25ns"
        seg = 8 if group == "npe" else 85
        assert int(gw["segment_cells"]) == seg and int(comps["src1"]["params"]["wucs_segment"]) == seg
        if group == "dim":  # section 6.4's traffic at a fixed load, the transmit buffer on a grid up to 68
            assert sum(rate_mbps(comps[f"src{i}"]["params"]["mean"]) for i in range(1, 9)) == pytest.approx(lab["load"])
            assert rate_mbps(comps["src1"]["params"]["peak"]) == pytest.approx(lab["pa"] * lab["load"] / 8)
            sizes = [int(p["gw.tx_buffer_frames"]) for p in spec.points]
            assert sizes == sorted(sizes) and max(sizes) == 68
            continue
        if group == "gain":  # section 6.4's traffic at 140 Mb/s, one point whose seed every size shares
            assert sum(rate_mbps(comps[f"src{i}"]["params"]["mean"]) for i in range(1, 9)) == pytest.approx(lab["load"])
            assert rate_mbps(comps["src1"]["params"]["peak"]) == pytest.approx(lab["pa"] * lab["load"] / 8)
            assert len(spec.points) == 1 and "gw.tx_buffer_frames" not in spec.points[0]
            assert spec.replications == 12
            # the same seed as the 140 Mb/s point of pa8/tx32/tx68 (common random numbers)
            pa8 = load_sweep(str(repro.scenario_dir / "pa8.toml"))
            assert spec.seed_of(0) in {pa8.seed_of(i) for i in range(len(pa8.points))}
            continue
        if group == "band":
            assert sum(rate_mbps(comps[f"src{i}"]["params"]["mean"]) for i in range(1, 9)) == pytest.approx(100)
            assert len(spec.points) in (2, 3, 4)
            continue
        assert int(gw["tx_buffer_frames"]) == lab["tx"]
        assert int(str(comps["src1"]["params"]["burst_factor"]).split()[0]) == lab["burst_factor"]
        expect = [20, 40, 60, 80, 100, 120, 140] if group == "npe" else list(range(40, 141, 5))
        loads = sorted({round(sum(rate_mbps(p[f"src{i}.mean"]) for i in range(1, 9)), 6) for p in spec.points})
        assert loads == pytest.approx(expect)
        for p in spec.points:  # the peak-to-average ratio of the figure
            assert rate_mbps(p["src1.peak"]) == pytest.approx(lab["pa"] * rate_mbps(p["src1.mean"]))
        if group == "npe":
            rates = sorted({float(p["gw.npe_rate"]) for p in spec.points})
            if lab.get("in_error") == "skip":  # the other reading of Drop Frame?'s place: the rates with a knee
                assert gw["npe_in_error"] == "skip"
                assert rates == [0.025, 0.05] and len(spec.points) == 2 * 7
            else:
                assert gw.get("npe_in_error", "serve") == "serve"
                assert rates == [0.025, 0.05, 0.1, 25.0] and len(spec.points) == 4 * 7


def test_rate_parsing():
    assert rate_mbps("12.5 Mb/s") == 12.5
    assert rate_mbps("500 kb/s") == 0.5
    assert rate_mbps("1 Gb/s") == 1000
    assert rate_mbps("2e6 b/s") == 2
    with pytest.raises(ValueError):
        rate_mbps("12 cells")


# ------------------------------------------------------------------ synthetic stats
def synthetic_stats(burst: int, loads=(40, 80, 120)) -> pd.DataFrame:
    """Stats rows shaped like SweepResult.stats for one buddhikot92 forward scenario."""
    rows = []
    for point, load in enumerate(loads):
        keys = {}
        for i in range(1, 9):
            keys[f"src{i}.mean"] = f"{load / 8:g} Mb/s"
            keys[f"src{i}.peak"] = f"{load / 4:g} Mb/s"
        loss = 0.0 if load < 80 else 1e-3 * burst / 250 * (load / 80) ** 4
        carried = min(load * 45 / 53, 96.0) * (1 - loss)
        for comp, probe, stat, unit, mean in [
            ("gw", "spp_cell_loss", "value", "1", loss),
            ("gw", "mpp_frame_loss", "value", "1", min(1.0, 10 * loss)),
            ("gw", "gw_throughput", "value", "Mb/s", carried),
            ("gw", "gw_latency", "mean", "s", 0.002 + 0.01 * loss),
            ("gw", "gw_tx_empty", "mean", "1", max(0.0, 1 - load / 150)),
            ("gw", "gw_tx_full", "mean", "1", min(1.0, 10 * loss)),
            ("gw", "gw_tx_occupancy_max", "value", "frames", 10.0 if loss == 0 else 16.0),
        ]:
            h = 0.2 * mean
            rows.append({"point": point, **keys, "component": comp, "probe": probe, "statistic": stat,
                         "unit": unit, "n": 3, "mean": mean, "std": h, "ci_low": mean - 2 * h, "ci_high": mean + h})
    # shuffled, as a store might return them
    return pd.DataFrame(rows).sample(frac=1.0, random_state=1).reset_index(drop=True)


def synthetic_npe_stats(burst: int, loads=(20, 60, 100, 140), rates=("0.025", "0.1", "25.0")) -> pd.DataFrame:
    """The NPE experiments: a grid over ``gw.npe_rate`` (requests/us) times the load."""
    frames = []
    for k, r in enumerate(rates):
        st = synthetic_stats(burst, loads)
        cap = float(r) * 1e6 * 8 * 360 / 1e6
        st.loc[st["probe"] == "gw_throughput", "mean"] = st.loc[st["probe"] == "gw_throughput", "mean"].clip(upper=cap)
        st["gw.npe_rate"] = r
        st["point"] = st["point"] + 10 * k
        frames.append(st)
    return pd.concat(frames, ignore_index=True)


def synthetic_reverse_stats(loads=(20, 60, 95)) -> pd.DataFrame:
    rows = []
    for point, load in enumerate(loads):
        for probe, mean in (("rev_throughput", load * 0.9), ("rev_frame_loss", 0.0)):
            rows.append({"point": point, "ring.rate": f"{load / 3:g} Mb/s", "ring.peak_to_mean": 100 / (load / 3),
                         "component": "gw", "probe": probe, "statistic": "value", "unit": "1", "n": 3,
                         "mean": mean, "std": 0.0, "ci_low": mean, "ci_high": mean})
    return pd.DataFrame(rows)


def synthetic_band_stats() -> pd.DataFrame:
    """The band experiments: one point per open-parameter variant (cell loss 1e-3 x (i + 1))."""
    from atmsim.reproduce.buddhikot92 import BAND_BASE, BAND_VARIANTS

    rows = []
    for i, (_name, change) in enumerate(BAND_VARIANTS):
        keys = {**BAND_BASE, **change, **{f"src{k}.mean": "12.5 Mb/s" for k in range(1, 9)}}
        for probe, stat, mean in (("spp_cell_loss", "value", 1e-3 * (i + 1)), ("mpp_frame_loss", "value", 0.01),
                                  ("gw_throughput", "value", 80.0), ("gw_latency", "mean", 0.004)):
            rows.append({"point": i, **keys, "component": "gw", "probe": probe, "statistic": stat, "unit": "1",
                         "n": 3, "mean": mean, "std": 0.0, "ci_low": mean * 0.9, "ci_high": mean * 1.1})
    return pd.DataFrame(rows)


def synthetic_dim_stats() -> pd.DataFrame:
    """Transmit buffer sizes 16, 32, 48, 64: frame loss 1e-2, 2e-3, 5e-4, 0 (all zero at 64);
    the 95% CI's upper end is 1.5 x the mean, so 48 frames meet 1e-3 (7.5e-4) and 32 do not."""
    rows = []
    for i, (size, loss) in enumerate(((16, 1e-2), (32, 2e-3), (48, 5e-4), (64, 0.0))):
        zero = loss == 0.0
        rows.append({"point": i, "gw.tx_buffer_frames": str(size), "src1.mean": "6.25 Mb/s", "component": "gw",
                     "probe": "mpp_frame_loss", "statistic": "value", "unit": "1", "n": 8, "mean": loss,
                     "std": 0.0 if zero else loss, "ci_low": float("nan") if zero else loss / 2,
                     "ci_high": float("nan") if zero else 1.5 * loss})
    return pd.DataFrame(rows)


def synthetic_gain_stats(size: int) -> pd.DataFrame:
    """txgain.toml run with gw.tx_buffer_frames = ``size``: 140 Mb/s offered, 12 replications,
    throughput 90, 91, 92.5 Mb/s for 16, 32, 68 frames, std about 1."""
    thr = {16: 90.0, 32: 91.0, 68: 92.5}[size]
    keys = {f"src{k}.mean": "17.5 Mb/s" for k in range(1, 9)}
    return pd.DataFrame([{"point": 0, **keys, "component": "gw", "probe": "gw_throughput", "statistic": "value",
                          "unit": "Mb/s", "n": GAIN_REPS, "mean": thr, "std": 1.0, "ci_low": thr - 0.6,
                          "ci_high": thr + 0.6}])


#: txgain's replications, the run-to-run spread they share (the same seeds: the same
#: traffic) and each size's own part of it (zero sum: the paired means are exactly 1 and 2.5).
GAIN_REPS = 12
GAIN_COMMON = np.linspace(-1.5, 1.5, GAIN_REPS)
GAIN_OWN = {16: np.zeros(GAIN_REPS), 32: 0.2 * np.resize([1.0, -1.0], GAIN_REPS),
            68: 0.4 * np.resize([1.0, 1.0, -1.0, -1.0], GAIN_REPS)}


def synthetic_values(st: pd.DataFrame, own: float) -> pd.DataFrame:
    """Per-replication values behind synthetic stats (3 replications: mean - std, mean,
    mean + std) plus ``own`` x mean x (1, -1, 0): the part of a configuration's spread
    that the other configurations, run with the same seeds, do not share."""
    rows = []
    keys = [c for c in st.columns if c not in ("component", "probe", "statistic", "unit", "n", "mean", "std",
                                               "ci_low", "ci_high")]
    for _, r in st.iterrows():
        for rep, (z, w) in enumerate(((-1.0, 1.0), (0.0, -1.0), (1.0, 0.0))):
            rows.append({**{k: r[k] for k in keys}, "replication": rep, "component": r["component"],
                         "probe": r["probe"], "statistic": r["statistic"],
                         "value": r["mean"] + z * r["std"] + own * w * r["mean"], "unit": r["unit"]})
    return pd.DataFrame(rows)


def synthetic_runs(values: pd.DataFrame) -> pd.DataFrame:
    """One done run per point and replication; the seed depends on the offered load only,
    as a sweep point's does (so equal loads of two files are common random numbers)."""
    pts = values[["point", "replication"]].drop_duplicates()
    load = {int(p): rate_mbps(v) for p, v in zip(values["point"], values["src1.mean"])}
    return pd.DataFrame({"point": pts["point"].to_numpy(), "replication": pts["replication"].to_numpy(),
                         "seed": [round(load[int(p)] * 1000) for p in pts["point"]], "status": "done",
                         "wall_s": 0.1, "events": 10, "fingerprint": "x", "error": None})


def synthetic_results() -> list[ExperimentResult]:
    repro = Buddhikot92()
    runs = pd.DataFrame({"point": [0], "replication": [0], "seed": [1], "status": ["done"], "wall_s": [0.1],
                         "events": [10], "fingerprint": ["x"], "error": [None]})
    out = []
    for e in repro.experiments:
        group = e.labels["group"]
        values = None
        if group == "npe" and e.labels.get("in_error") == "skip":
            # the other reading: half the serve curves' throughput, so the band is [36, 72] at R = 25/ms
            st = synthetic_npe_stats(e.labels["burst_factor"], rates=("0.025", "0.05"))
            st.loc[st["probe"] == "gw_throughput", "mean"] *= 0.5
        elif group == "npe":
            st = synthetic_npe_stats(e.labels["burst_factor"])
        elif group == "reverse":
            st = synthetic_reverse_stats()
        elif group == "dim":
            st = synthetic_dim_stats()
        elif group == "gain":
            size = e.labels["tx"]
            st = synthetic_gain_stats(size)
            values = pd.DataFrame({"point": 0, "replication": range(GAIN_REPS), **st.iloc[0][
                [f"src{k}.mean" for k in range(1, 9)]].to_dict(), "component": "gw", "probe": "gw_throughput",
                "statistic": "value", "value": st["mean"].iloc[0] + GAIN_COMMON + GAIN_OWN[size], "unit": "Mb/s"})
        elif group == "band":
            # every variant in the first band file's stats, the others empty (a failed sweep)
            st = synthetic_band_stats() if e.key == "band_mpp" else pd.DataFrame()
        else:
            # the peak-to-average and transmit-buffer curves lose more, as the paper says; freeing
            # empty queues loses a little less
            scale = {"bf": 1, "free": 0.8, "pa": e.labels["pa"], "tx": 8 * 16 / e.labels["tx"]}[group]
            st = synthetic_stats(int(e.labels["burst_factor"] * scale), loads=(40, 70, 100, 120, 140))
            # the larger transmit buffers' runs differ from the 16-frame one's (pa8) by their own
            # spread, 20% of the mean: their gains over it stay unresolved
            values = synthetic_values(st, 0.2 if group == "tx" else 0.0)
        out.append(ExperimentResult(e, repro.scenario_path(e), st,
                                    runs if values is None else synthetic_runs(values), [], values=values))
    return out


def test_series_from_stats_sorts_scales_and_names_missing():
    st = synthetic_stats(500)
    s = plot.series_from_stats(st, component="gw", probe="gw_throughput", statistic="value",
                               x=lambda r: rate_mbps(r["src1.mean"]) * 8, label="B", scale=1e3)
    assert list(s.x) == [40, 80, 120]
    assert s.mean[0] == pytest.approx(40 * 45 / 53 * 1e3)
    with pytest.raises(KeyError, match="gw.q_wait.mean"):
        plot.series_from_stats(st, component="gw", probe="q_wait", statistic="mean", x=lambda r: 0.0, label="x")


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


@pytest.fixture(scope="module")
def synthetic_analysis(tmp_path_factory) -> tuple[Path, list, list]:
    """Buddhikot92's analysis of the synthetic results (17 figures, about 20 s), drawn
    once for the tests that read it: (directory, figures, rows)."""
    out = tmp_path_factory.mktemp("buddhikot92-synthetic")
    figures, rows = Buddhikot92().analyse(synthetic_results(), out)
    return out, figures, rows


def test_buddhikot92_analyse_on_synthetic_stats(synthetic_analysis):
    tmp_path, figures, rows = synthetic_analysis
    assert [f.key for f in figures] == ["fig13", "fig14", "fig15", "fig16", "fig17", "fig18", "fig19-b4", "fig20-b4",
                                        "fig19-b43", "fig20-b43", "fig21", "fig22", "fig23", "fig21-mechanism", "reverse",
                                        "dimension", "dimension-load"]
    for f in figures:
        assert (tmp_path / f.png).is_file() and (tmp_path / f.svg).is_file()
        assert not Path(f.png).is_absolute()
    by_q = {r.quantity: r for r in rows}
    r = by_q["carried/offered at 40 Mb/s (below the knee), burst factor 250"]
    assert r.paper_value == pytest.approx(45 / 53) and r.simulated == pytest.approx(45 / 53)
    assert r.rel_diff == pytest.approx(0.0, abs=1e-12)
    sat = by_q["throughput at 140 Mb/s offered (saturated), burst factor 1000"]
    assert sat.paper_value == 100.0 and sat.simulated < 96.0
    # synthetic loss: 1e-3 x B/250 x (load/80)^4, so B=1000 : B=250 is 4 at every load;
    # std 0.2 x mean from 3 runs on each side: the log ratio's standard error is
    # sqrt(2 x 0.2^2 / 3), with Welch's 4 degrees of freedom (t_quantile(5): 4 df)
    ratio = by_q["cell loss ratio B=1000 : B=250 at 120 Mb/s"]
    assert ratio.is_prediction and ratio.simulated == pytest.approx(4.0)
    half = stats.t_quantile(5) * math.sqrt(2 * 0.2 ** 2 / 3)
    assert (ratio.ci_low, ratio.ci_high) == (pytest.approx(4 * math.exp(-half)), pytest.approx(4 * math.exp(half)))
    # the transmit buffer's throughput gain, paired (common random numbers), and where it is largest
    g = by_q["throughput gain 68 - 16 transmit frames at 140 Mb/s"]
    assert g.ci_low < g.simulated < g.ci_high
    assert sum(r.quantity == g.quantity for r in rows) == 1
    # at 140 Mb/s the gains come from txgain.toml's 12 replications per size, the same seeds for
    # every size: the differences are 2.5 + 0.4 x (1, 1, -1, -1, ...), the paired t interval
    d = 0.4 * np.resize([1.0, 1.0, -1.0, -1.0], GAIN_REPS)
    half = stats.t_quantile(GAIN_REPS) * d.std(ddof=1) / math.sqrt(GAIN_REPS)
    assert (g.simulated, g.ci_low, g.ci_high) == (pytest.approx(2.5), pytest.approx(2.5 - half), pytest.approx(2.5 + half))
    assert "paired t on the per-replication differences" in g.note
    g32 = by_q["throughput gain 32 - 16 transmit frames at 140 Mb/s"]
    assert g32.simulated == pytest.approx(1.0) and not g32.detail and "12 paired replications" in g32.note
    assert "resolved: the interval excludes 0" in g32.note
    # below 80 Mb/s the synthetic 16-frame buffer is never full (gw_tx_full 0, no spread):
    # no difference, not a difference of two noisy sweeps
    none = by_q["throughput gain 68 - 16 transmit frames at 70 Mb/s"]
    assert none.simulated == 0.0 and none.ci_low is None and none.note.startswith("no difference: the buffer never fills")
    assert "largest occupancy 10.0 frames" in none.note
    # where it does fill and the throughput gain is not resolved, the loss it comes from is
    fl = by_q["frame loss reduction 16 - 68 transmit frames at 100 Mb/s"]
    assert fl.unit == "1" and fl.simulated > 0 and "the 16-frame buffer does fill" in fl.note
    assert "resolved: the interval excludes 1" in ratio.note
    assert "largest throughput gain 68 - 16 transmit frames over the loads" in by_q
    assert by_q["fraction of time the 16-frame transmit buffer is empty at 120 Mb/s (peak/avg 8, B=1000)"].simulated \
        == pytest.approx(0.2)
    assert by_q["cell loss ratio peak/avg 8 : 2 at 100 Mb/s (B=1000)"].simulated == pytest.approx(8.0)
    assert by_q["cell loss ratio 16 : 68 transmit frames at 120 Mb/s (peak/avg 8, B=1000)"].simulated \
        == pytest.approx(68 / 16, rel=0.01)
    five = by_q["cell loss probability at 140 Mb/s (highest load of Figure 14), B=1000"]
    assert five.paper_value == 0.05 and five.simulated == pytest.approx(4e-3 * (140 / 80) ** 4)
    # the band over what an empty segment in error does with its queue: hold (the model) / free
    free = by_q["cell loss probability at 140 Mb/s (highest load of Figure 14), B=1000, an empty segment in error "
                "frees its queue"]
    assert free.paper_value == 0.05 and free.simulated == pytest.approx(0.8 * five.simulated, rel=0.01)
    assert (five.band_low, five.band_high) == (pytest.approx(free.simulated), pytest.approx(five.simulated))
    assert five.band_param == "gw.spp_empty_in_error (hold / free)"
    sat = by_q["throughput at 140 Mb/s offered (saturated), burst factor 1000"]
    assert sat.band_low <= sat.simulated <= sat.band_high and sat.band_low < sat.band_high
    assert by_q["throughput at 140 Mb/s offered (saturated), burst factor 250"].band_low is None
    assert by_q["frame loss probability at 120 Mb/s, B=1000, peak/avg 8, 16 frames"].paper_value == 0.1
    # NPE: R = 25/ms serves 25e3 x 8 x 360 bit/s = 72 Mb/s of segment data: the plateau the
    # paper describes; R = 100/ms (288 Mb/s) and the literal 25/us have no knee to compare
    knee = by_q["throughput at 140 Mb/s offered, R = 25/ms, B=4"]
    assert knee.paper_value == pytest.approx(72.0) and knee.simulated == pytest.approx(72.0)
    assert by_q["throughput at 140 Mb/s offered, R = 100/ms, B=43"].is_prediction
    assert "throughput at 140 Mb/s offered, R = 25/µs (literal), B=4" in by_q
    # both readings of Drop Frame?'s place, each row's band spanning the two
    assert (knee.band_low, knee.band_high) == (pytest.approx(36.0), pytest.approx(72.0))
    assert knee.band_param.startswith("gw.npe_in_error")
    skip = by_q["throughput at 140 Mb/s offered, R = 25/ms, in-error skips NPE, B=43"]
    assert skip.paper_value == pytest.approx(72.0) and skip.simulated == pytest.approx(36.0)
    assert (skip.band_low, skip.band_high) == (pytest.approx(36.0), pytest.approx(72.0))
    rev = by_q["receive buffer frame loss at 95 Mb/s of FDDI load"]
    assert rev.paper_value == 0.0 and rev.simulated == 0.0 and rev.rel_diff is None
    dim = by_q["smallest transmit buffer with frame loss <= 0.001 at 50 Mb/s, B=1000, peak/avg 8"]
    assert dim.simulated == 48 and dim.unit == "frames" and dim.is_prediction
    assert "the grid 16, 32, 48, 64" in dim.note
    # the band: the median of the 8 variants' cell loss (1e-3 ... 8e-3) and their extremes
    band = by_q["cell loss probability at 100 Mb/s, B=1000, peak/avg 2: band over the open parameters"]
    assert (band.simulated, band.ci_low, band.ci_high) == (pytest.approx(4.5e-3), pytest.approx(1e-3), pytest.approx(8e-3))
    assert by_q["cell loss probability at 100 Mb/s, B=1000, peak/avg 2: NPE R = 25/us (the literal unit)"].simulated \
        == pytest.approx(4e-3)
    # the knee: largest throughput over the loads, here at 140 Mb/s for R = 100/ms
    assert by_q["largest throughput over the loads (the knee), R = 25/ms, B=4"].simulated == pytest.approx(72.0)
    # dimensioning across loads: synthetic frame loss is 0 up to 70 Mb/s, 0.024 at 100 Mb/s
    up_to = by_q["highest offered load with frame loss <= 0.001: 16 frames, B=250, peak/avg 2"]
    assert up_to.simulated == 70 and up_to.unit == "Mb/s" and "up to 70 Mb/s" in up_to.note
    assert "at 100 Mb/s it does not" in up_to.note
    assert by_q["highest offered load with frame loss <= 0.001: 68 frames, B=1000, peak/avg 8"].simulated == 70
    # cut-off: synthetic loss is 0 below 80 Mb/s
    assert by_q["highest load with cell loss <= 0.0001 (cut-off), burst factor 250"].simulated == 70
    detail = [r for r in rows if r.detail]
    # 8 forward curves (with bf1000 under spp_empty_in_error = free) x 4 probes x 5 loads (+ empty/full
    # for the 3 transmit buffer curves),
    # throughput gains 32 and 68 - 16 frames x 4 loads (140 Mb/s: headline rows), frame loss reductions
    # where a gain is not resolved but the buffer fills (2 x 100, 120 Mb/s), 2 x (3 + 2) NPE curves x 2 probes x 4 loads,
    # reverse 2 x 3, band 8 variants x 4 probes, transmit buffer grid 4 sizes
    assert len(detail) == 8 * 4 * 5 + 3 * 2 * 5 + 2 * 4 + 2 * 2 + 2 * 5 * 2 * 4 + 2 * 3 + 8 * 4 + 4
    assert all(r.is_prediction for r in detail)


def _one_load(key: str, probes: dict, seeds=(11, 12, 13, 14)) -> ExperimentResult:
    """An experiment at 40 Mb/s offered with given per-replication values of gateway probes
    (``{(probe, statistic): [value per replication]}``) and the runs' seeds."""
    exp = next(e for e in Buddhikot92.experiments if e.key == key)
    keys = {f"src{k}.mean": "5 Mb/s" for k in range(1, 9)}
    values = pd.DataFrame([{"point": 0, "replication": r, **keys, "component": "gw", "probe": pr, "statistic": stat,
                            "value": v, "unit": "1"} for (pr, stat), vs in probes.items() for r, v in enumerate(vs)])
    runs = pd.DataFrame({"point": 0, "replication": range(len(seeds)), "seed": list(seeds), "status": "done"})
    return ExperimentResult(exp, Buddhikot92().scenario_path(exp), pd.DataFrame(), runs, [], values=values)


def test_gain_about_zero_needs_identical_runs_and_says_how_often_the_buffer_filled():
    small = _one_load("pa8", {("gw_throughput", "value"): [34.0, 34.1, 33.9, 34.2],
                                  ("gw_tx_occupancy_max", "value"): [15, 16, 12, 14],
                                  ("mpp_held_requests", "count"): [0, 5, 0, 0]})
    big = _one_load("tx68", {("gw_throughput", "value"): [34.0, 34.3, 33.9, 34.2]})
    d = Buddhikot92._paired(big, small, "gw_throughput", "value", 40.0)
    assert d is not None and d.n == 4 and d.mean == pytest.approx(0.05) and d.low < 0 < d.high
    why = Buddhikot92._about_zero(small, big, 40.0, d)
    assert why is not None
    assert "filled in 1 of 4 replications" in why and "15, 16, 12, 14 frames" in why and "held: 0, 5, 0, 0" in why
    assert "in 3 of 4 replications the two sizes carried exactly the same load" in why
    # no replication with identical runs: an unresolved difference, not "about zero"
    other = _one_load("tx68", {("gw_throughput", "value"): [34.05, 34.3, 33.95, 34.15]})
    d2 = Buddhikot92._paired(other, small, "gw_throughput", "value", 40.0)
    assert d2.low < 0 < d2.high and Buddhikot92._about_zero(small, other, 40.0, d2) is None
    # other seeds: not pairs at all (no paired interval)
    unpaired = _one_load("tx68", {("gw_throughput", "value"): [34.0, 34.3, 33.9, 34.2]}, seeds=(11, 12, 13, 99))
    assert Buddhikot92._paired(unpaired, small, "gw_throughput", "value", 40.0) is None
    assert Buddhikot92._paired(big, small, "gw_throughput", "value", 45.0) is None  # no such load


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


def test_index_page_links_every_paper(synthetic_analysis):
    tmp_path, figures, rows = synthetic_analysis
    p = PaperOutcome(Buddhikot92(), synthetic_results(), figures, rows)
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
