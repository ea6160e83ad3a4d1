"""lazarou96 — TCP/IP over ATM WANs validated against measurements (sections 4-5).

Lazarou, Frost, Evans & Niehaus (1996), *Using Measurements to Validate Simulation
Models of TCP/IP over High Speed ATM Wide Area Networks*: TCP Reno with the 4.3BSD
timers over AAL5, hosts with a per-segment CPU overhead, switches with 256-cell per-VC
output buffers, cell pacers. Every parameter comes from its Table 1 (docs/models/tcp.md);
nothing is calibrated on its results. Tables 4 and 5 are withheld: their rows are the
model's predictions.
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from atmsim.plot import plot_series, series_from_stats
from atmsim.reproduce.base import (ComparisonRow, Experiment, ExperimentResult, Figure, Reproduction, finite,
                                   point, rel_path)
from atmsim.reproduce.tcpbands import (Variant, band_and_ablation, band_figure, replications_note,
                                       variant_experiments, vc_buffer_variants)

#: Round trip of the MAGIC path of Figures 4-6, s.
MAGIC_RTT_S = 8.8e-3
#: lazarou96 Table 2: maximum TCP-layer throughput, Mb/s.
TABLE2 = {"OC-3c": 135.0, "TAXI-100": 88.0, "DS-3": 36.0}
#: Table 3: measured (and the paper's BONeS simulation) throughput, Mb/s.
TABLE3 = {"mismatch": (1.26, 1.22), "mismatch-paced": (71.51, 71.93)}
#: Section 5: the NetSim model without BSD timers predicted 24 Mb/s for the unpaced case.
NETSIM_MBPS = 24.0

#: Table 5: (experiment, row label, receiving endpoint of the connection).
TABLE5 = (
    ("aai-base-arl", "baseline: TIOC-to-ARL", "arl/tcp/vc101"),
    ("aai-base-edc", "baseline: TIOC-to-EDC", "edc/tcp/vc102"),
    ("aai-one-two", "single source, two destinations: TIOC-to-ARL", "arl/tcp/vc101"),
    ("aai-one-two", "single source, two destinations: TIOC-to-EDC", "edc/tcp/vc102"),
    ("aai-two-one", "two sources, single destination: ARL-to-TIOC", "tioc/tcp/vc111"),
    ("aai-two-one", "two sources, single destination: EDC-to-TIOC", "tioc/tcp/vc112"),
    ("aai-duplex", "full duplex: TIOC-to-ARL", "arl/tcp/vc101"),
    ("aai-duplex", "full duplex: ARL-to-TIOC", "tioc/tcp/vc111"),
    ("aai-duplex", "full duplex: TIOC-to-EDC", "edc/tcp/vc102"),
    ("aai-duplex", "full duplex: EDC-to-TIOC", "tioc/tcp/vc112"),
)


def _window_of(row: pd.Series) -> float:
    return window_kib(row["dec1.window"])


def _window_values(stats: pd.DataFrame) -> dict[float, float]:
    """Window (KiB) -> mean receiver throughput (Mb/s) of a Figure 6 run set."""
    sel = stats[(stats["component"] == "dec2/tcp/vc100") & (stats["probe"] == "tcp_throughput")
                & (stats["statistic"] == "value")]
    return {_window_of(r): float(r["mean"]) / 1e6 for _, r in sel.iterrows()}


def window_kib(v: object) -> float:
    """``"128 KiB"`` → 128."""
    s = str(v).strip()
    if not s.endswith("KiB"):
        raise ValueError(f"not a KiB window: {v!r}")
    return float(s[:-3])


#: Open parameters and switched-off features of the TCP rows (tcpbands; docs/models/lazarou96.md).
DEC_RANGE = "DEC 3000 per-segment time (Table 1: 200-300 us)"
VC_BUFFER = "switch buffer per VC (Table 1's 256 cells is the model's; the real switches' is not given)"
#: The TAXI's cell rate (Table 2: 98 Mb/s, one start-of-cell octet per 53-octet cell);
#: the ablation gives the port 100 Mb/s of cells (docs/models/lazarou96.md, section 7).
TAXI_CELLS = "TAXI cell rate (98.15 Mb/s, Table 2)"
TAXI_100 = '["p2 = 100 Mb/s"]'
#: The unpaced rows' stacks: the sender a DEC 3000 under OSF/1, the receiver a SPARCstation
#: 10 under SunOS 4.1.x (evans96; lazarou96 says "another host"; the default since
#: docs/models/lazarou96.md section 10), against Table 1's model (Reno on both).
TCP_PROFILE = "TCP profile (the DEC's osf1 and the SPARC 10's sunos41; or Table 1's Reno for both)"
#: Figure 6's hosts: Table 1's Reno model (the default) or the DECs' named stack.
WINDOW_PROFILE = "TCP profile (Table 1's Reno, or the DECs' osf1)"
PROFILES_OFF = {"tioc.profile": "table1", "arl.profile": "table1", "edc.profile": "table1"}


def tcp_variants() -> list[Variant]:
    """The bands and ablations of lazarou96's TCP rows (kept to the variants that move a
    row, so that the full reproduction stays within a few minutes)."""
    out: list[Variant] = vc_buffer_variants("mismatch", ["sw"], VC_BUFFER) + [
        # Figure 6 (DEC 3000 -> DEC 3000, loss-free): Table 1's range of the DEC's
        # per-segment time on both hosts, and the DECs' named stack (OSF/1) instead of
        # Table 1's Reno model, which the figure's defaults keep.
        Variant("window", "dec-200us", DEC_RANGE, {"dec1.tcp_overhead": "200 us", "dec2.tcp_overhead": "200 us"}),
        Variant("window", "dec-300us", DEC_RANGE, {"dec1.tcp_overhead": "300 us", "dec2.tcp_overhead": "300 us"}),
        Variant("window", "osf1", WINDOW_PROFILE, {"dec1.profile": "osf1", "dec2.profile": "osf1"}),
        Variant("mismatch", "table1-profiles", TCP_PROFILE, {"dec.profile": "table1", "sparc.profile": "table1"},
                ablation=True),
        Variant("mismatch", "taxi-100", TAXI_CELLS, {"sw.port_phy": TAXI_100}, ablation=True, in_band=False),
        Variant("mismatch-paced", "dec-200us", DEC_RANGE, {"dec.tcp_overhead": "200 us"}),
        Variant("mismatch-paced", "dec-300us", DEC_RANGE, {"dec.tcp_overhead": "300 us"}),
        Variant("mismatch-paced", "pace-cells", "pacing-rate unit (payload)", {"dec.pace_unit": "cell"}, ablation=True),
        Variant("aai", "pace-payload", "pacing-rate unit (read in cells here)", {"dec.pace_unit": "payload"}),
    ]
    for base in ("aai-base-arl", "aai-base-edc", "aai-one-two", "aai-two-one", "aai-duplex"):
        out.append(Variant(base, "table1", "host profiles", PROFILES_OFF, ablation=True))
    out += [Variant("aai-base-arl", "vc-512", VC_BUFFER, {f"sw_{s}.vc_capacity": "512 cells" for s in "tea"}),
            Variant("aai-two-one", "no-per-octet", "SPARC 5 per-octet cost", {"arl.tcp_per_octet": "0 s"},
                    ablation=True),
            Variant("aai-two-one", "per-octet-x0.5", "SPARC 5 per-octet cost", {"arl.tcp_per_octet": "75 ns"}),
            Variant("aai-two-one", "per-octet-x1.5", "SPARC 5 per-octet cost", {"arl.tcp_per_octet": "225 ns"}),
            Variant("aai-two-one", "reno", "SunOS 4.1's Tahoe lineage",
                    {"arl.fast_recovery": "true", "edc.fast_recovery": "true"}, ablation=True, in_band=False)]
    return out


TCP_VARIANTS = tcp_variants()

#: Experiment key -> (receiving endpoint, statistic) of each banded row.
BANDED = {"mismatch": "sparc/tcp/vc100", "mismatch-paced": "sparc/tcp/vc100", "aai": "sgi/tcp/vc100"}


class Lazarou96(Reproduction):
    name = "lazarou96"
    title = ("G. Y. Lazarou, V. S. Frost, J. B. Evans, D. Niehaus (1996), Using Measurements to Validate "
             "Simulation Models of TCP/IP over High Speed ATM Wide Area Networks — Tables 2-5, Figure 6, section 5")
    summary = (
        "TCP Reno as in 4.3BSD-Reno (500 ms slow timer for retransmissions with a 1 s minimum RTO, 200 ms "
        "fast timer for delayed ACKs, fast retransmit and recovery) over IP over AAL5 with MTU 9180, ttcp "
        "senders keeping 64 KB send buffers full, hosts whose CPU spends Table 1's per-segment TCP + OS "
        "overhead (DEC 3000 250 us, SGI and SPARC 10 550 us, SPARC 5 700 us) on every segment sent or "
        "received, switches with 4 us processing and 256-cell per-VC output buffers, and cell pacers "
        "(an unlimited FIFO served at the pacing rate). All parameters are Table 1's; nothing is fitted to "
        "the results. Reproduced: Table 2 (TCP-layer maximum per link type), Figure 6 (throughput vs window "
        "on the 8.8 ms MAGIC path), Table 3 (the 155 -> 100 Mb/s rate mismatch without and with 70 Mb/s "
        "pacing), section 5's ablation (fine-grained timers instead of BSD's), and predictions for the "
        "withheld Table 4 (AAI, DS-3 bottleneck, 40 Mb/s pacer) and Table 5 (simultaneous connections)."
    )
    experiments = (
        Experiment("table2", "table2.toml", "Table 2: maximum TCP-layer throughput per link type"),
        Experiment("window", "window.toml", "Figure 6: throughput vs window, 8.8 ms OC-3c path"),
        Experiment("mismatch", "mismatch.toml", "Table 3: rate mismatch, no pacing"),
        Experiment("mismatch-paced", "mismatch_paced.toml", "Table 3: rate mismatch, 70 Mb/s pacing"),
        Experiment("mismatch-fine", "mismatch_fine.toml", "section 5: rate mismatch with fine-grained timers"),
        Experiment("aai", "aai.toml", "Table 4: AAI single connection (DS-3, 40 Mb/s pacer)"),
        Experiment("aai-base-arl", "aai_base_arl.toml", "Table 5 baseline TIOC -> ARL"),
        Experiment("aai-base-edc", "aai_base_edc.toml", "Table 5 baseline TIOC -> EDC"),
        Experiment("aai-one-two", "aai_one_two.toml", "Table 5: one source, two destinations"),
        Experiment("aai-two-one", "aai_two_one.toml", "Table 5: two sources, one destination"),
        Experiment("aai-duplex", "aai_duplex.toml", "Table 5: full duplex"),
    )
    experiments = experiments + variant_experiments(experiments, TCP_VARIANTS)

    def notes(self) -> list[str]:
        return [
            "Throughput is what ttcp -r reports: data octets delivered in order to the receiving application, "
            "x 8 / time, after a warm-up (connections start established, as in the paper's model, which left "
            "out open and close). Mean and 95% interval over replications, which differ in the hosts' "
            "timer phases (BSD timers tick from boot) and nothing else: the model has no other randomness. "
            "Throughputs get the t interval of the log values with Cox's correction (atmsim.stats); the unpaced "
            "row runs in rounds of 10 until that interval lies within 10% of its mean (at most 80 runs), since "
            "one run's throughput varies (0.89-1.02 Mb/s over 40 runs with the hosts' named stacks, 0.84-2.52 "
            "with Table 1's Reno receiver); its note gives the number of runs. The hosts run their named stacks "
            "(the DEC 3000 osf1, the SPARC 10 at EDC sunos41, as in Table 5): SunOS 4.1.3 ACKs out-of-order "
            "segments only on the 200 ms fast tick, so the DEC sees no fast retransmit (docs/models/lazarou96.md, "
            "section 10); the ablation 'TCP profile off' gives both Table 1's Reno.",
            "A pacing rate counts the 48-octet cell payload (pace_unit = \"payload\", the default; "
            "docs/models/lazarou96.md, 'Pacing rate'): the paper's own FIFO model of a 70 Mb/s pacer gives "
            "71.93 Mb/s of TCP data, which no server of 70 Mb/s of whole cells can (62.9 at most); 70 Mb/s of "
            "payload carries 69.4. Table 4's 40 Mb/s pacer is read in whole cells, as its text compares it with "
            "the DS-3's 40.7 Mb/s of cells.",
            "Table 5's host placement is inferred from the text (docs/models/tcp.md): TIOC = SGI Onyx, ARL = "
            "SPARC 5, EDC = SPARC 10, all on TAXI; TIOC reaches EDC over OC-3c (9 ms) and ARL over DS-3 (25 ms). "
            "With Table 1's 256 cells per VC, a TAXI host's back-to-back segments overflow the DS-3 port's VC "
            "queue (a 3-segment, 576-cell window arrives at 100 Mb/s and drains at 40.7), and with only three "
            "segments in flight there are never three duplicate ACKs: every loss waits for a 1-1.5 s timeout. "
            "The model therefore predicts a collapse of the TIOC-ARL connections; the paper's remark that the "
            "SPARC 5 cannot exceed the DS-3 rate suggests the real hosts did not send at the TAXI line rate, "
            "which Table 1's per-segment overheads alone do not capture.",
            "Section 5's ablation keeps everything but the timers: retransmission timeouts from exact RTT "
            "samples (RTO = srtt + 4 rttvar, no 1 s floor) and delayed ACKs released 200 ms after the segment "
            "instead of on the 200 ms tick. The paper's NetSim model (no BSD timers, other differences unknown) "
            "gave 24 Mb/s.",
        ]

    # ---------------------------------------------------------------- analysis
    def analyse(self, results: Sequence[ExperimentResult], out_dir: Path) -> tuple[list[Figure], list[ComparisonRow]]:
        by_key = {r.experiment.key: r for r in results if r.stats is not None and not r.stats.empty}
        figures: list[Figure] = []
        rows: list[ComparisonRow] = []
        figdir = Path(out_dir) / "figures" / self.name
        if "table2" in by_key:
            rows += self._table2(by_key["table2"].stats)
        if "window" in by_key:
            fig, wrows = self._figure6(by_key, figdir, out_dir)
            figures.append(fig)
            rows += wrows
        rows += self._table3(by_key)
        if "aai" in by_key:
            v = point(by_key["aai"].stats, "sgi/tcp/vc100", "tcp_throughput", "value", scale=1e-6)
            if v:
                rows.append(ComparisonRow("aai", "Table 4: TCP throughput, DEC 3000 (OC-3c, paced 40 Mb/s) -> DS-3 -> "
                                          "SGI Indigo 2 (TAXI), 36 ms RTT, 256 KB window", "Mb/s", *v,
                                          note="withheld in the paper: prediction"))
        for key, label, ep in TABLE5:
            if key in by_key:
                v = point(by_key[key].stats, ep, "tcp_throughput", "value", scale=1e-6)
                if v:
                    rows.append(ComparisonRow(key, f"Table 5: {label}", "Mb/s", *v,
                                              note="withheld in the paper: prediction"))
        rows = self._bands(rows, by_key)
        fig = band_figure(rows, figdir, Path(out_dir), "tcp_bands",
                          "lazarou96: TCP predictions, their bands and the measurements")
        if fig is not None:
            figures.append(fig)
        return figures, rows

    @staticmethod
    def _bands(rows: list[ComparisonRow], by_key: dict[str, ExperimentResult]) -> list[ComparisonRow]:
        """Each TCP row with its band; the ablation rows after it."""
        endpoints = dict(BANDED)
        out: list[ComparisonRow] = []
        for r in rows:
            ep = endpoints.get(r.experiment)
            if ep is None and r.quantity.startswith("Table 5: "):
                ep = next((e for k, label, e in TABLE5 if k == r.experiment and r.quantity == f"Table 5: {label}"), None)
            if ep is None or r.detail or r.unit != "Mb/s":
                out.append(r)
                continue
            read = lambda res, ep=ep: (point(res.stats, ep, "tcp_throughput", "value", scale=1e-6) or (None,))[0]  # noqa: E731
            banded, ablations = band_and_ablation(r, r.experiment, read, by_key, TCP_VARIANTS)
            out.append(banded)
            out += ablations
        return out

    def _table2(self, st: pd.DataFrame) -> list[ComparisonRow]:
        out = []
        for phy, paper in TABLE2.items():
            sel = st[(st["component"] == "rcv/tcp/vc100") & (st["probe"] == "tcp_throughput")
                     & (st["statistic"] == "value") & (st["fwd.phy"] == phy)]
            if sel.empty:
                continue
            out.append(ComparisonRow("table2", f"Table 2: maximum TCP-layer throughput over {phy}", "Mb/s",
                                     float(sel["mean"].iloc[0]) / 1e6, paper_value=paper,
                                     note="loss-free, window 512 KB (one replication: deterministic but for the timer phase)"))
        return out

    def _figure6(self, by_key: dict[str, ExperimentResult], figdir: Path,
                 out_dir: Path) -> tuple[Figure, list[ComparisonRow]]:
        thr = series_from_stats(by_key["window"].stats, component="dec2/tcp/vc100", probe="tcp_throughput",
                                statistic="value", x=_window_of, label="simulated (DEC 3000 -> DEC 3000)", scale=1e-6)
        rows, lows, highs = [], [], []
        for i, w in enumerate(thr.x):
            row = ComparisonRow("window", f"Figure 6: throughput with a {w:g} KiB window", "Mb/s", float(thr.mean[i]),
                                finite(thr.ci_low[i]), finite(thr.ci_high[i]),
                                note="Figure 6's values are not in the text: prediction", detail=True)
            read = lambda res, w=w: _window_values(res.stats).get(float(w))  # noqa: E731
            row, ablations = band_and_ablation(row, "window", read, by_key, TCP_VARIANTS)
            rows.append(row)
            rows += ablations
            lows.append(row.band_low if row.band_low is not None else row.simulated)
            highs.append(row.band_high if row.band_high is not None else row.simulated)
        xs = np.linspace(0.0, float(thr.x.max()) * 1.05, 200)
        bound = np.minimum(xs * 1024 * 8 / MAGIC_RTT_S / 1e6, TABLE2["OC-3c"])
        bands = [(f"band: {DEC_RANGE.split(' (')[0]}, TCP profile", thr.x, lows, highs)] \
            if any(r.band_low is not None for r in rows) else []
        png, svg = plot_series([thr], figdir / "fig6_window", xlabel="TCP window (KiB)", ylabel="Throughput (Mb/s)",
                               title="Figure 6: TCP throughput vs window, 8.8 ms OC-3c path",
                               reference=("min(window / 8.8 ms, 135 Mb/s)", xs, bound), bands=bands)
        fig = Figure("fig6_window", "Figure 6: throughput vs TCP window (MAGIC, 8.8 ms)", rel_path(png, out_dir),
                     rel_path(svg, out_dir),
                     "Receiver throughput with 95% intervals; dashed: the window/RTT bound capped at Table 2's "
                     "135 Mb/s. The model sits below the bound by the per-segment CPU time and the two segment "
                     "transmission times each ACK waits for (delayed ACKs), and uses only whole segments of a window. "
                     f"Shaded: the band over {DEC_RANGE} on both hosts and {WINDOW_PROFILE}; each row's "
                     "band_low/band_high in comparison.csv, its note the parameter that moves it most.")
        return fig, rows

    def _table3(self, by_key: dict[str, ExperimentResult]) -> list[ComparisonRow]:
        out = []
        labels = {"mismatch": "no pacing", "mismatch-paced": "70 Mb/s cell pacing"}
        found = {}
        for key, (measured, bones) in TABLE3.items():
            if key not in by_key:
                continue
            st = by_key[key].stats
            v = point(st, "sparc/tcp/vc100", "tcp_throughput", "value", scale=1e-6)
            if not v:
                continue
            found[key] = v[0]
            out.append(ComparisonRow(key, f"Table 3: TCP throughput over the 155 -> 100 Mb/s mismatch, {labels[key]}",
                                     "Mb/s", *v, paper_value=measured,
                                     note=f"paper: measured {measured}, its BONeS simulation {bones}; "
                                          + replications_note(st, "sparc/tcp/vc100", "tcp_throughput", "value")))
            for probe, what in (("tcp_timeouts", "retransmission timeouts"), ("tcp_fast_retransmits", "fast retransmits")):
                c = point(st, "dec/tcp/vc100", probe, "count")
                if c:
                    out.append(ComparisonRow(key, f"{labels[key]}: {what} per run", "1", *c, detail=True))
        if "mismatch-fine" in by_key:
            v = point(by_key["mismatch-fine"].stats, "sparc/tcp/vc100", "tcp_throughput", "value", scale=1e-6)
            if v:
                out.append(ComparisonRow("mismatch-fine", "Section 5: unpaced mismatch with fine-grained timers "
                                         "(no BSD slow/fast ticks)", "Mb/s", *v, paper_value=NETSIM_MBPS,
                                         note="paper: its NetSim model without the BSD timers gave 24 Mb/s "
                                              "(20 x the measurement)"))
                if "mismatch" in found and found["mismatch"] > 0:
                    out.append(ComparisonRow("mismatch-fine", "Section 5: fine-timer / BSD-timer throughput ratio", "1",
                                             v[0] / found["mismatch"], paper_value=NETSIM_MBPS / TABLE3["mismatch"][0],
                                             note="paper: 24 Mb/s (NetSim) vs 1.26 Mb/s measured"))
        return out

