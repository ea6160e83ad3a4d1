"""evans96 — the MAGIC WAN's TCP rate-mismatch results (section "The Need for ATM-Layer
Traffic Control in WANs" and "Static ATM-Layer Traffic Control").

Evans, Frost, Minden et al. (1996), *A 622 Mb/s LAN/WAN Gateway…*: TCP from DEC 3000s
(OC-3c) to a SPARCstation-10 (TAXI) across an 8.8 ms MAGIC path with a 155 -> 100 Mb/s
constriction, 128 KB windows and 64 KB ttcp writes: 870 kb/s for one stream and 1.6 Mb/s
for two without traffic control; 68.2 and 52.3 Mb/s with 70 Mb/s cell pacing.

The TCP part: the one-stream case is the same experiment as lazarou96 section 4.4 and
runs lazarou96's scenarios; the hosts, switches and TCP are lazarou96's (Table 1).

The adaptive i-out-of-m shaper (Figures 16-17, "Rate-based flow control"): the Bellcore
Ethernet trace through the shaper with a 50,000-slot measurement interval, against the
static window i/m = 0.02 (the paper: 11 ms against 160 ms mean delay). The paper leaves
the adaptation coefficients and the trace's speed open: both are swept and the report
shows the band (scenarios/evans96/adaptive_shaping.toml).
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence

import pandas as pd

from atmsim.reproduce import evans96_cells, evans96_magic
from atmsim.plot import save_png_svg
from atmsim.reproduce.base import ComparisonRow, Experiment, ExperimentResult, Figure, Reproduction, finite, point, rel_path
from atmsim.reproduce.tcpbands import (Variant, band_and_ablation, band_figure, replications_note,
                                       variant_experiments, vc_buffer_variants)

DEC_RANGE = "DEC 3000 per-segment time (lazarou96 Table 1: 200-300 us)"
VC_BUFFER = "switch buffer per VC (256 cells in lazarou96's model; evans96 gives none)"
#: The stacks: DEC 3000s under OSF/1, a SPARCstation 10 under SunOS 4.1.x (docs/models/host.md).
TCP_PROFILE = "TCP profile (the DECs' osf1 and the SPARC 10's sunos41; or lazarou96 Table 1's Reno for all)"
#: The TAXI port's cell rate: 98.15 Mb/s (lazarou96 Table 2); the ablation: 100 Mb/s.
TAXI_CELLS = "TAXI cell rate (98.15 Mb/s, lazarou96 Table 2)"
TAXI_100 = '["p2 = 100 Mb/s"]'
#: evans96 gives "a pacing rate of 70 Mb/s" for one stream and for two; the default reads
#: it per host (each DEC's VC at 70 Mb/s, 2 x 77.3 Mb/s of cells into the 98.15 Mb/s TAXI
#: port); the other reading shares it between the two hosts, 35 Mb/s each
#: (docs/models/lazarou96.md, section 13).
PACING_SHARE = "pacing rate per host (70 Mb/s each; or the 70 shared, 35 each)"
SHARED_PACE = {f"dec{i}.tcp": f'["send 10{i} ack 20{i} window 128 KiB pace 35 Mb/s"]' for i in (1, 2)}


def tcp_variants() -> list[Variant]:
    """Bands and ablations of the TCP rows (tcpbands; docs/models/lazarou96.md); the
    unpaced rows vary the switch buffer (what moves them), the paced ones the DEC's
    per-segment time and the pacing-rate unit."""
    two = ("dec1", "dec2")
    out: list[Variant] = vc_buffer_variants("one-stream", ["sw"], VC_BUFFER) + [
        Variant("one-stream", "table1-profiles", TCP_PROFILE, {"dec.profile": "table1", "sparc.profile": "table1"},
                ablation=True),
    ] + vc_buffer_variants("two-streams", ["sw_edc"], VC_BUFFER) + [
        Variant("two-streams", "table1-profiles", TCP_PROFILE,
                {"dec1.profile": "table1", "dec2.profile": "table1", "sparc.profile": "table1"}, ablation=True),
        Variant("one-stream", "taxi-100", TAXI_CELLS, {"sw.port_phy": TAXI_100}, ablation=True, in_band=False),
        Variant("two-streams", "taxi-100", TAXI_CELLS, {"sw_edc.port_phy": TAXI_100}, ablation=True, in_band=False),
        Variant("one-stream-paced", "pace-cells", "pacing-rate unit (payload)", {"dec.pace_unit": "cell"},
                ablation=True),
        Variant("two-streams-paced", "pace-cells", "pacing-rate unit (payload)", {f"{d}.pace_unit": "cell" for d in two},
                ablation=True),
        Variant("two-streams-paced", "pace-35-each", PACING_SHARE, SHARED_PACE),
    ]
    for t in ("200 us", "300 us"):
        name = f"dec-{t.replace(' ', '')}"
        out += [Variant("one-stream-paced", name, DEC_RANGE, {"dec.tcp_overhead": t}),
                Variant("two-streams-paced", name, DEC_RANGE, {f"{d}.tcp_overhead": t for d in two})]
    return out


TCP_VARIANTS = tcp_variants()

#: evans96, "Rate-based flow control": mean delay of the adaptive shaper (50,000-slot
#: interval) and of the static assignment i/m = 0.02, in ms.
ADAPTIVE_DELAY_MS = 11.0
STATIC_DELAY_MS = 160.0
#: The static window's rate: 0.02 of 815.38 Mb/s of cells (0.52 us slots).
STATIC_MBPS = 0.02 * 815.38
#: Length of the shipped Bellcore excerpt as recorded, s (scenarios/data/README.md).
TRACE_S = 25.7

#: (experiment, quantity, receiving component, probe statistic, paper value Mb/s).
ROWS = (
    ("one-stream", "one stream, no traffic control", "sparc/tcp/vc100", "value", 0.87),
    ("one-stream-paced", "one stream, 70 Mb/s cell pacing", "sparc/tcp/vc100", "value", 68.2),
    ("two-streams", "two streams from two hosts, no traffic control (combined)", "sparc", "rx_total", 1.6),
    ("two-streams-paced", "two streams from two hosts, 70 Mb/s cell pacing each (combined)", "sparc", "rx_total", 52.3),
)


class Evans96(Reproduction):
    name = "evans96"
    title = ("J. B. Evans, V. S. Frost, G. J. Minden et al. (1996), A 622 Mb/s LAN/WAN Gateway — TCP over the "
             "MAGIC rate mismatch, with and without cell-level pacing")
    summary = (
        "TCP (4.3BSD-Reno timers) from DEC 3000 AXPs with OC-3c adapters to a SPARCstation-10 on TAXI across "
        "the 8.8 ms MAGIC path, whose switch port toward the TAXI host (256 cells per VC) is a 155 -> 100 Mb/s "
        "constriction; 128 KB windows, 64 KB ttcp writes. One stream and two streams from two hosts, each "
        "without traffic control and with the senders' VCs paced at 70 Mb/s in the adapter. Hosts, switches "
        "and TCP are lazarou96's model (its Table 1) with the hosts' named stacks (the DECs osf1, Reno; the "
        "SPARC 10 sunos41, SunOS 4.1.3's code, which ACKs out-of-order segments only on the 200 ms fast tick; "
        "Table 1's Reno for all is the ablation), with nothing fitted to these results. The cell-level "
        "measurement (Figs 5-7), the OC-12c gateway (Figs 8-11) and Table 2: evans96_cells.py; the MAGIC case "
        "under hop-by-hop credit control beside the unpaced and paced ones: evans96_magic.py."
    )
    experiments = (
        Experiment("one-stream", "../lazarou96/mismatch.toml", "one stream, no pacing (lazarou96's scenario)"),
        Experiment("one-stream-paced", "../lazarou96/mismatch_paced.toml", "one stream, 70 Mb/s pacing"),
        Experiment("two-streams", "two_streams.toml", "two streams, no pacing"),
        Experiment("two-streams-paced", "two_streams_paced.toml", "two streams, 70 Mb/s pacing"),
        Experiment("adaptive-shaping", "adaptive_shaping.toml",
                   "Bellcore trace through the adaptive and the static (i/m = 0.02) i-out-of-m shaper"),
    )
    experiments = experiments + variant_experiments(experiments, TCP_VARIANTS) + evans96_magic.EXPERIMENTS
    experiments = experiments + evans96_cells.EXPERIMENTS  # Figs 5-11, Table 2

    def notes(self) -> list[str]:
        return [
            "Throughput is ttcp -r's: data delivered in order to the receiving application x 8 / time after "
            "a warm-up; the two-stream rows add the receiver's two connections within each run.",
            "A pacing rate counts the 48-octet cell payload (pace_unit = \"payload\", the default; "
            "docs/models/lazarou96.md): 70 Mb/s carries at most 70 x 9140/9216 = 69.4 Mb/s of TCP data. "
            "Read in whole 53-octet cells it would carry 62.9, below the measured 68.2; the paper's '5 Mb/s or "
            "67 packets/s' fits the payload reading (67.8 packets/s of 192-cell PDUs, against 61.4 in cells).",
            "With two paced streams the TAXI port receives 2 x 77.3 Mb/s of cells: the per-VC queues overflow "
            "and the BSD timers set the pace again (behind the SunOS receiver without fast retransmits); the "
            "paper attributes its lower two-stream figure to the receiving host processing two streams, which "
            "the model's per-segment CPU time also charges but which does not limit it at these rates. The text's "
            "'a pacing rate of 70 Mb/s' is read per host; the band's other reading (pace-35-each) shares it between "
            "the two hosts, 35 Mb/s each: 77.3 Mb/s of cells fit the TAXI port, nothing is lost and the two streams "
            "get 2 x 34.7 = 69.4 Mb/s, above the measured 52.3 (docs/models/lazarou96.md, section 13).",
            "Adaptive shaping (Figs 16-17): delay is each cell's wait in the shaper (arrival to the start of its "
            "slot), over the whole 10,000-packet Bellcore excerpt. The paper gives neither the adaptation "
            "coefficients nor the speed at which the trace was played: the headline rows play it as recorded "
            "(mean 1.68 Mb/s of cells) with all four coefficients 0.1; the detail rows and the figure give the "
            "band over coefficients 0.05-0.2 and speed-ups 5x-20x. Nothing is fitted to the paper's 11 and "
            "160 ms; how far the static delay lies from 160 ms depends almost entirely on the trace's speed.",
        ] + evans96_magic.NOTES + evans96_cells.NOTES

    def analyse(self, results: Sequence[ExperimentResult], out_dir: Path) -> tuple[list[Figure], list[ComparisonRow]]:
        by_key = {r.experiment.key: r for r in results if r.stats is not None and not r.stats.empty}
        rows: list[ComparisonRow] = []
        for key, quantity, comp, stat, paper in ROWS:
            if key not in by_key:
                continue
            v = point(by_key[key].stats, comp, "tcp_throughput", stat, scale=1e-6)
            if v:
                row = ComparisonRow(key, f"TCP throughput, {quantity}", "Mb/s", *v, paper_value=paper,
                                    note="evans96, measured; "
                                         + replications_note(by_key[key].stats, comp, "tcp_throughput", stat))
                read = lambda res, c=comp, s=stat: (point(res.stats, c, "tcp_throughput", s, scale=1e-6) or (None,))[0]  # noqa: E731
                row, ablations = band_and_ablation(row, key, read, by_key, TCP_VARIANTS)
                rows.append(row)
                rows += ablations
            if key.startswith("two"):
                for vc in (101, 102):
                    s = point(by_key[key].stats, f"sparc/tcp/vc{vc}", "tcp_throughput", "value", scale=1e-6)
                    if s:
                        rows.append(ComparisonRow(key, f"{quantity}: stream on VC {vc}", "Mb/s", *s, detail=True))
        figures: list[Figure] = []
        fig = band_figure(rows, Path(out_dir) / "figures" / self.name, Path(out_dir), "tcp_bands",
                          "evans96: TCP throughput, bands and measurements")
        if fig is not None:
            figures.append(fig)
        if "adaptive-shaping" in by_key:
            res = by_key["adaptive-shaping"]
            rows += shaping_rows(res.stats)
            fig = shaping_figure(res.series, Path(out_dir), self.name)
            if fig is not None:
                figures.append(fig)
        magic_figures, magic_rows = evans96_magic.analyse(by_key, Path(out_dir), self.name)
        cell_figures, cell_rows = evans96_cells.analyse(results, Path(out_dir), self.name)
        return figures + magic_figures + cell_figures, rows + magic_rows + cell_rows


def _shaping_points(stats: pd.DataFrame) -> pd.DataFrame:
    """One row per sweep point: speed-up, static or the coefficient, mean wait (ms)."""
    sel = stats[(stats["component"] == "sh/vc1") & (stats["probe"] == "iofm_wait") & (stats["statistic"] == "mean")]
    out = pd.DataFrame({
        "speedup": [round(1.0 / float(t), 6) for t in sel["lan.time_scale"]],
        "static": [float(c) == 0.0 for c in sel["sh.mu_plus"]],
        "coef": [float(c) for c in sel["sh.mu_plus"]],
        "wait_ms": sel["mean"].astype(float) * 1e3,
    })
    return out.sort_values(["speedup", "static", "coef"]).reset_index(drop=True)


def shaping_rows(stats: Optional[pd.DataFrame]) -> list[ComparisonRow]:
    """Comparison rows of the adaptive-shaping experiment: the headline (trace as
    recorded, coefficients 0.1) against the paper's 11 and 160 ms, and per speed-up the
    static delay and the adaptive band over the coefficients."""
    if stats is None or stats.empty or "lan.time_scale" not in stats.columns:
        return []
    pts = _shaping_points(stats)
    rows: list[ComparisonRow] = []
    note = "evans96 Fig. 17 text; the trace's speed and the coefficients are not given (see the band rows)"
    for speed, grp in pts.groupby("speedup", sort=True):
        static = grp[grp["static"]]["wait_ms"]
        adaptive = grp[~grp["static"]]
        mid = adaptive[adaptive["coef"] == 0.1]["wait_ms"]
        head = speed == 1.0
        label = "the trace as recorded" if head else f"the trace {speed:g}x faster"
        if not mid.empty:
            lo, hi = float(adaptive["wait_ms"].min()), float(adaptive["wait_ms"].max())
            rows.append(ComparisonRow("adaptive-shaping", f"mean shaper delay, adaptive (50,000-slot interval, "
                                      f"coefficients 0.1), {label}", "ms", float(mid.iloc[0]),
                                      paper_value=ADAPTIVE_DELAY_MS, note=note, detail=not head))
            for what, v in (("smallest", lo), ("largest", hi)):
                rows.append(ComparisonRow("adaptive-shaping", f"mean shaper delay, adaptive, {what} over coefficients "
                                          f"0.05-0.2, {label}", "ms", v,
                                          note="the band over the coefficients the paper leaves open", detail=True))
        if not static.empty:
            rows.append(ComparisonRow("adaptive-shaping", f"mean shaper delay, static i/m = 0.02, {label}", "ms",
                                      float(static.iloc[0]), paper_value=STATIC_DELAY_MS, note=note,
                                      detail=not head))
    return rows


def shaping_figure(series: Optional[pd.DataFrame], out_dir: Path, name: str) -> Optional[Figure]:
    """Fig. 17 as the paper draws it: the source's rate and the rate the shaper assigns,
    in 1-s averages, one panel per trace speed; the adaptive curve with coefficients
    0.1 and the band over 0.05-0.2, the static assignment as a dashed line."""
    if series is None or series.empty or "lan.time_scale" not in series.columns:
        return None
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure as MplFigure

    s = series.copy()
    s["speedup"] = [round(1.0 / float(t), 6) for t in s["lan.time_scale"]]
    s["static"] = [float(c) == 0.0 for c in s["sh.mu_plus"]]
    s["coef"] = [float(c) for c in s["sh.mu_plus"]]
    s["second"] = (s["time"].astype(float) - 1e-9).floordiv(1.0)
    speeds = sorted(s["speedup"].unique())
    base = out_dir / "figures" / name / "fig17_adaptive_shaping"
    with matplotlib.rc_context({"svg.hashsalt": "atmsim", "font.size": 9}):
        fig = MplFigure(figsize=(9.6, 6.4), dpi=100)
        for k, speed in enumerate(speeds):
            ax = fig.add_subplot(2, (len(speeds) + 1) // 2, k + 1)
            sp = s[(s["speedup"] == speed) & ~s["static"]]
            src = sp[(sp["component"] == "lan") & (sp["probe"] == "src_tx_rate") & (sp["coef"] == 0.1)]
            src = src.groupby("second")["value"].mean()
            ax.plot(src.index, src.values, color="0.2", linewidth=1.2, label="source rate")
            alw = sp[(sp["component"] == "sh/vc1") & (sp["probe"] == "iofm_allowed_rate")]
            by_coef = alw.groupby(["coef", "second"])["value"].mean().unstack(0)
            if 0.1 in by_coef.columns:
                ax.plot(by_coef.index, by_coef[0.1], color="tab:blue", linewidth=1.2, label="assigned rate (adaptive, 0.1)")
                ax.fill_between(by_coef.index, by_coef.min(axis=1), by_coef.max(axis=1), color="tab:blue", alpha=0.2,
                                linewidth=0, label="band, coefficients 0.05-0.2")
            ax.axhline(STATIC_MBPS, color="0.5", linestyle="--", linewidth=1, label="static i/m = 0.02")
            ax.set_title("trace as recorded" if speed == 1.0 else f"trace {speed:g}x faster")
            ax.set_xlabel("time (s)")
            ax.set_ylabel("Mb/s (1-s averages)")
            ax.set_yscale("log")
            ax.set_xlim(0, max(1.15 * TRACE_S / speed, 3.0))
            ax.grid(True, alpha=0.3)
            if k == 0:
                ax.legend(fontsize=7, loc="best")
        fig.tight_layout()
        png, svg = save_png_svg(fig, base)
    return Figure("fig17", "Figure 17 — rate adaptation of the shaper to the Ethernet trace",
                  rel_path(png, out_dir), rel_path(svg, out_dir),
                  "The source's cell rate and the rate the adaptive shaper assigns (i/m of the 815 Mb/s line), "
                  "1-s averages of 100-ms samples, log scale; the shaded band spans the coefficients 0.05-0.2 "
                  "(the paper gives none); the dashed line is the static assignment i/m = 0.02.")
