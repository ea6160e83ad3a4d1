"""evans96 — cell-level measurement (Figs 5-7) and the OC-12c gateway (Figs 8-11, Table 2).

Evans et al. (1996), "Gateway Results": the gateway's measurement chip watching a ttcp
stream between DEC Alphas at KU and the Sprint TIOC, unpaced (mean cell throughput
142 Mb/s) and paced at 5 Mb/s (observed as 5.3 Mb/s, with "some spread ... because the
AN2 was not operating in a constant bit rate (CBR) mode"); four OC-3c sources through
the OC-12c gateway (payload throughput 542.6 Mb/s) with the rx probe's interarrival
histogram, autocorrelation, inter-idle histogram and time series; and Table 2, four
ttcp streams through a FORE ASX-200 (112.26 / 124.27 / 104.73 / 72.40 Mb/s, 360.66 in
total, host-limited), predicted from the host models.

Models: the AN2 is the switch with receiving buffers, round-robin arbitration and
``vc_slot_gap = 2`` (the every-other-slot restriction) on an 800 Mb/s fabric; the chip
is the ``measurement_chip`` kind (docs/models/evans96-cells.md). What the paper leaves
open (other AN2 traffic, the sources' load, host stacks) is banded by the variants
below; nothing is fitted to the paper's numbers.

``evans96.py`` adds :data:`EXPERIMENTS` to its own and calls :func:`analyse`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping, Optional, Sequence

import pandas as pd

from atmsim.plot import save_png_svg
from atmsim.reproduce.base import ComparisonRow, Experiment, ExperimentResult, Figure, point, rel_path
from atmsim.reproduce.tcpbands import SEP, Variant, band_and_ablation, variant_experiments

#: OC-12c cell slot, µs (424 bits at 599.04 Mb/s).
OC12C_SLOT_US = 424 / 599.04
#: STS-12c rows per second (9 per 125-µs frame) and the overhead bytes opening each row
#: (36 TOH + 1 POH + 3 fixed stuff, ITU-T G.707): on the 622.08 Mb/s line's byte clock a
#: saturated STS-12c shows 40/53 of an idle cell slot per row.
STS12C_ROWS_PER_S = 9 * 8000
STS12C_ROW_OVERHEAD_BYTES = 40
#: Line cell slots per row (1080 bytes / 53) and payload cells per row (1040 / 53).
STS12C_LINE_SLOTS_PER_ROW = 1080 / 53
STS12C_CELLS_PER_ROW = 1040 / 53
#: STS-12c payload (1040 of 1080 columns x 9 rows x 8000 frames/s x 8 bits) and its
#: ATM payload (48 of 53 octets), Mb/s.
STS12C_MBPS = 1040 * 9 * 8000 * 8 / 1e6
STS12C_ATM_PAYLOAD_MBPS = STS12C_MBPS * 48 / 53
#: TCP data per OC-3c cell slot with MTU 9180: 9140 octets in 192 cells (9180 + 8 LLC/SNAP
#: + 8 AAL5 trailer, padded), so an OC-3c host link carries at most 149.76 x 9140/10176.
TCP_PER_OC3C_MBPS = 149.76 * 9140 / (192 * 53)

BASE = (
    Experiment("cells-unpaced", "cells_unpaced.toml", "ttcp Alpha -> Alpha across the AN2 and the gateway, unpaced"),
    Experiment("cells-paced", "cells_paced.toml", "the same, the VC paced at 5 Mb/s"),
    Experiment("gateway-oc12c", "gateway_oc12c.toml", "four OC-3c sources onto the OC-12c, rx probe"),
    Experiment("gateway-oc12c-sonet", "gateway_oc12c_sonet.toml",
               "the OC-12c gateway with SONET framing on every line, rx probe in frame slots and on the byte clock"),
    Experiment("gateway-quad-oc3c", "gateway_quad_oc3c.toml", "four OC-3c sources on the quad OC-3c option"),
    Experiment("table2", "table2.toml", "four ttcp streams through a FORE ASX-200 and the gateway"),
)

LAN = "other AN2 traffic toward the gateway port (not given: none by default)"
LOAD = "the four sources' load (not given: saturated OC-3c by default)"
DEC = "DEC 3000 per-segment time (lazarou96 Table 1: 200-300 us)"
SPARC20 = "SPARCstation 20 per-segment time (no figure in the papers: 300-550 us)"
ALPHAS = ("alpha400a", "alpha400b", "alpha600a", "alpha600b", "alpha600c", "alpha400c")
SPARCS = ("sparc20a", "sparc20b")


def _variants() -> list[Variant]:
    out: list[Variant] = []
    for r in ("100 Mb/s", "300 Mb/s"):
        for base in ("cells-unpaced", "cells-paced"):
            out.append(Variant(base, f"lan-{r.split()[0]}", LAN, {"lan.rate": r}))
    for t in ("200 us", "300 us"):
        out.append(Variant("cells-unpaced", f"dec-{t.replace(' ', '')}", DEC,
                           {"alpha_ku.tcp_overhead": t, "alpha_tioc.tcp_overhead": t}))
    out.append(Variant("cells-paced", "pace-cells", "pacing-rate unit (payload)", {"alpha_ku.pace_unit": "cell"}))
    for load in (0.97, 0.99):
        out.append(Variant("gateway-oc12c-sonet", f"load-{load}", LOAD,
                           {f"pc{k}.rate": f"{149.76 * load:.4f} Mb/s" for k in range(1, 5)}))
    for t in ("200 us", "300 us"):
        out.append(Variant("table2", f"dec-{t.replace(' ', '')}", DEC, {f"{h}.tcp_overhead": t for h in ALPHAS}))
    out.append(Variant("table2", "sparc20-300us", SPARC20, {f"{h}.tcp_overhead": "300 us" for h in SPARCS}))
    return out


VARIANTS = _variants()
EXPERIMENTS = BASE + variant_experiments(BASE, VARIANTS)

#: Table 2: (sender, receiver, paper Mb/s at the TCP layer).
TABLE2 = (
    ("sparc20a", "alpha600a", 101, "SPARC 20 -> Alpha 3000/600", 112.26),
    ("sparc20b", "alpha600b", 102, "SPARC 20 -> Alpha 3000/600", 124.27),
    ("alpha400a", "alpha600c", 103, "Alpha 3000/400 -> Alpha 3000/600", 104.73),
    ("alpha400b", "alpha400c", 104, "Alpha 3000/400 -> Alpha 3000/400", 72.40),
)
TABLE2_TOTAL = 360.66

NOTES = [
    "Cell-level measurement (Figs 5-7): the measurement_chip kind sits on the gateway's OC-12c output and "
    "maps each cell to the OC-12c slot it is seen in (0.708 us); rates count 424 bits per cell. The chip's "
    "registers (24-bit count, stopped flag, burst count with the same-VC exception) are tested event by "
    "event; the 18-ms capture of the paper is the chip's window (meas_window_rate: the spread of 18-ms means).",
    "The unpaced stream is link-limited in the model: the OTTO's OC-3c carries 149.76 Mb/s of cells, and "
    "the DEC's per-segment time (250 us for 9140 octets: 292 Mb/s) does not bind; the paper's 142 Mb/s lies "
    "5% below. The paced stream counts its 5 Mb/s in cell payload (pace_unit = payload): 5 x 53/48 = "
    "5.52 Mb/s of cells; read in whole cells, 5.0 Mb/s. The paper's 5.3 lies between the two readings.",
    "The AN2's every-other-slot restriction caps one VC at half the 800 Mb/s fabric (400 Mb/s); an OC-3c "
    "stream never reaches it, so the spread of the paced histogram in the model comes from other AN2 "
    "traffic to the gateway port, which the paper does not give: none by default, 100 and 300 Mb/s of "
    "Poisson cells in the band.",
    "OC-12c gateway (Figs 8-11): four saturated OC-3c (4 x 149.76 Mb/s of cells) fill the STS-12c payload "
    "(599.04 Mb/s) exactly: 542.53 Mb/s of ATM payload. Figs 8-11 come from gateway_oc12c_sonet.toml, where "
    "every line is SONET-framed (framing = \"sonet\": cell slots on the STS-3c/STS-12c frame, computed from "
    "the G.707 byte positions; empty slots carry idle cells). The paper does not say which clock its rx probe "
    "counts in, so the figures show two views: in STS-12c cell slots (rx_probe: the idle cells the "
    "transmitter inserted; none when the sources are saturated) and in 53-byte slots of the 622.08 Mb/s line "
    "(rx_line: each row's 40 overhead bytes add 40/53 of a slot, so idle slots recur every 20-21 or 40-41 "
    "slots and the interarrivals correlate at multiples of a row, 19.6 cells: the frame-periodic structure "
    "the paper points out in Figs 9-10). The sources' load is not given: the band runs them at 0.99 and 0.97 "
    "of the OC-3c rate. gateway_oc12c.toml (unframed: the overhead folded into the cell rate) stays as the "
    "ablation; it has no idle cell and no periodic structure.",
    "Table 2 is a prediction from the host models: SPARC 20s as the sparc10 machine with the SunOS 4.1 "
    "profile (no SPARC 20 figure exists in the papers; band 300-550 us per segment), Alphas as the dec3000 "
    "machine with the OSF/1 profile (band 200-300 us), 64 KiB windows. The model puts the Alphas at their "
    "OC-3c limit (134.5 Mb/s of TCP data); the paper's hosts were slower than that.",
]


def _hist(stats: pd.DataFrame, comp: str, probe: str) -> pd.Series:
    """Histogram rows slots_<n> as a Series indexed by n (overflow dropped)."""
    if stats is None or stats.empty:
        return pd.Series(dtype=float)
    sel = stats[(stats["component"] == comp) & (stats["probe"] == probe)]
    sel = sel[sel["statistic"].str.match(r"^slots_\d+$")]
    idx = [int(s.split("_")[1]) for s in sel["statistic"]]
    return pd.Series(sel["mean"].astype(float).values, index=idx).sort_index()


def _prefixed(stats: pd.DataFrame, comp: str, probe: str, prefix: str) -> pd.Series:
    if stats is None or stats.empty:
        return pd.Series(dtype=float)
    sel = stats[(stats["component"] == comp) & (stats["probe"] == probe)]
    sel = sel[sel["statistic"].str.startswith(prefix)]
    idx = [int(s[len(prefix):]) for s in sel["statistic"]]
    return pd.Series(sel["mean"].astype(float).values, index=idx).sort_index()


def _value(res: Optional[ExperimentResult], comp: str, probe: str, stat: str, scale: float = 1.0) -> Optional[float]:
    if res is None or res.stats is None or res.stats.empty:
        return None
    v = point(res.stats, comp, probe, stat, scale=scale)
    return None if v is None else v[0]


def _row(by_key: Mapping[str, ExperimentResult], key: str, quantity: str, unit: str, comp: str, probe: str,
         stat: str, paper: Optional[float], note: str, scale: float = 1.0, detail: bool = False,
         band: bool = True) -> list[ComparisonRow]:
    res = by_key.get(key)
    if res is None:
        return []
    v = point(res.stats, comp, probe, stat, scale=scale)
    if v is None:
        return []
    row = ComparisonRow(key, quantity, unit, *v, paper_value=paper, note=note, detail=detail)
    if not band:
        return [row]
    row, abl = band_and_ablation(row, key, lambda r: _value(r, comp, probe, stat, scale), by_key, VARIANTS)
    return [row] + abl


def rows(by_key: Mapping[str, ExperimentResult]) -> list[ComparisonRow]:
    """Comparison rows of every number the paper's text gives for Figs 5-11 and Table 2."""
    out: list[ComparisonRow] = []
    m = "evans96, measured"
    out += _row(by_key, "cells-unpaced", "mean cell-level throughput, unpaced ttcp stream (measurement chip)", "Mb/s",
                "chip/vc101", "meas_throughput", "value", 142.0, m)
    out += _row(by_key, "cells-unpaced", "unpaced: lowest 18-ms capture", "Mb/s", "chip", "meas_window_rate", "min",
                None, "spread of the paper's 18-ms capture (the line; the default has no other traffic)",
                detail=True, band=False)
    out += _row(by_key, "cells-unpaced", "unpaced: TCP-layer throughput (ttcp -r)", "Mb/s", "alpha_tioc/tcp/vc101",
                "tcp_throughput", "value", None, "paper: 'consistent with the observed application-layer throughput'",
                scale=1e-6, detail=True)
    out += _row(by_key, "cells-unpaced", "unpaced: packets per second (9140-octet segments)", "1/s",
                "alpha_tioc/tcp/vc101", "tcp_throughput", "value", None,
                "paper: 'between 170 and 1200 packets/s'", scale=1.0 / (9140 * 8))
    out += _row(by_key, "cells-paced", "mean cell-level throughput, 5 Mb/s pacing (measurement chip)", "Mb/s",
                "chip/vc101", "meas_throughput", "value", 5.3, m)
    out += _row(by_key, "cells-paced", "5 Mb/s pacing: packets per second (9140-octet segments)", "1/s",
                "alpha_tioc/tcp/vc101", "tcp_throughput", "value", 67.0, "evans96: '5 Mb/s or 67 packets/s'",
                scale=1.0 / (9140 * 8))
    for stat, what in (("min", "lowest"), ("max", "highest")):
        out += _row(by_key, "cells-paced", f"5 Mb/s pacing: {what} 18-ms capture", "Mb/s", "chip", "meas_window_rate",
                    stat, None, "spread of the paper's 18-ms capture (the line; the default has no other traffic)",
                    detail=True, band=False)
    out += _row(by_key, "cells-paced", "5 Mb/s pacing: std of the VC's interarrivals (spread of Fig 6)", "OC-12c slots",
                "chip/vc101", "meas_interarrival", "std", None, "the paper shows the spread, gives no number", detail=True)
    out += _row(by_key, "gateway-oc12c-sonet", "OC-12c gateway payload throughput, four OC-3c sources (rx probe)",
                "Mb/s", "rx_probe", "meas_payload_throughput", "value", 542.6, m)
    out += _row(by_key, "gateway-oc12c", "OC-12c gateway payload throughput without SONET framing (ablation)", "Mb/s",
                "rx_probe", "meas_payload_throughput", "value", None,
                "the overhead folded into the 599.04 Mb/s cell rate: the same mean", detail=True)
    out += _row(by_key, "gateway-oc12c-sonet", "OC-12c gateway cell rate incl. ATM headers (rx probe)", "Mb/s",
                "rx_probe", "meas_throughput", "value", None,
                "paper: 'including ATM and SONET overhead, over 600 Mb/s at the physical level' (line: 622.08)",
                detail=True)
    out += _row(by_key, "gateway-oc12c-sonet", "OC-12c gateway: mean cell interarrival in STS-12c slots (1: no idle "
                "cell)", "OC-12c slots", "rx_probe", "meas_interarrival", "mean", None,
                "the band spans the sources' load", detail=True)
    secs = _run_secs(by_key.get("gateway-oc12c-sonet"))
    if secs:
        out += _row(by_key, "gateway-oc12c-sonet", "OC-12c gateway: idle slots per row on the line's byte clock "
                    "(rx_line)", "1", "rx_line", "meas_idle_cells", "count", None,
                    f"arithmetic for saturated sources: {STS12C_ROW_OVERHEAD_BYTES}/53 = "
                    f"{STS12C_ROW_OVERHEAD_BYTES / 53:.4f} (the paper shows the periodic idle cells, gives no number)",
                    scale=1.0 / (STS12C_ROWS_PER_S * secs), detail=True)
        out += _row(by_key, "gateway-oc12c-sonet", "OC-12c gateway: idle cells inserted per second (rx_probe, STS-12c "
                    "slots)", "1/s", "rx_probe", "meas_idle_cells", "count", None,
                    "0 when the four sources are saturated; the band spans their load", scale=1.0 / secs, detail=True)
    out += _row(by_key, "gateway-quad-oc3c", "quad OC-3c gateway payload throughput, four OC-3c sources (rx probe)",
                "Mb/s", "rx_probe", "meas_payload_throughput", "value", None, "the paper measures the OC-12c case only",
                detail=True)
    out.append(ComparisonRow("table2", "aggregate TCP-layer bound of four OC-3c hosts (MTU 9180, AAL5, LLC/SNAP)",
                             "Mb/s", 4 * TCP_PER_OC3C_MBPS, paper_value=508.0,
                             note="arithmetic; the paper's 'only accounting for ATM overhead ... about 508 Mb/s' "
                                  "does not say which overheads it counts", detail=True))
    res = by_key.get("table2")
    if res is not None:
        for snd, rcv, vc, label, paper in TABLE2:
            out += _row(by_key, "table2", f"Table 2: {label} (VC {vc}), TCP layer", "Mb/s", f"{rcv}/tcp/vc{vc}",
                        "tcp_throughput", "value", paper, "evans96 Table 2, measured", scale=1e-6)
        total = _table2_total(res)
        if total is not None:
            row = ComparisonRow("table2", "Table 2: total of the four streams, TCP layer", "Mb/s", total,
                                paper_value=TABLE2_TOTAL, note="evans96 Table 2, measured ('host-limited')")
            row, abl = band_and_ablation(row, "table2", _table2_total, by_key, VARIANTS)
            out += [row] + abl
    return out


def _run_secs(res: Optional[ExperimentResult]) -> Optional[float]:
    """Seconds after the warm-up that the gateway run's chips counted (cells / cell rate)."""
    cells = _value(res, "rx_probe", "meas_cells", "count")
    rate = _value(res, "rx_probe", "meas_throughput", "value")
    if not cells or not rate:
        return None
    return cells * 424 / (rate * 1e6)


def _table2_total(res: Optional[ExperimentResult]) -> Optional[float]:
    vals = [_value(res, f"{rcv}/tcp/vc{vc}", "tcp_throughput", "value", 1e-6) for _, rcv, vc, _, _ in TABLE2]
    return None if any(v is None for v in vals) else float(sum(v for v in vals if v is not None))


def _legend(ax) -> None:
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7)


def _save(fig, base: Path, out_dir: Path) -> tuple[str, str]:
    png, svg = save_png_svg(fig, base)
    return rel_path(png, out_dir), rel_path(svg, out_dir)


def figures(by_key: Mapping[str, ExperimentResult], out_dir: Path, name: str) -> list[Figure]:
    """Figs 5-11 and Table 2, shaped like the paper's."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure as MplFigure

    figdir = Path(out_dir) / "figures" / name
    out: list[Figure] = []
    stats = {k: r.stats for k, r in by_key.items() if r.stats is not None and not r.stats.empty}
    with matplotlib.rc_context({"svg.hashsalt": "atmsim", "font.size": 9}):
        for key, fk, title, variants in (
            ("cells-unpaced", "fig5", "Figure 5 — histogram of cell interarrivals, unpaced stream", ("lan-300",)),
            ("cells-paced", "fig6", "Figure 6 — histogram of cell interarrivals, 5 Mb/s paced stream",
             ("lan-100", "lan-300")),
        ):
            if key not in stats:
                continue
            fig = MplFigure(figsize=(6.4, 3.6), dpi=100)
            ax = fig.add_subplot()
            for v, style in ((None, dict(color="tab:blue")), *((v, dict(alpha=0.5)) for v in variants)):
                k = key if v is None else f"{key}{SEP}{v}"
                h = _hist(stats.get(k), "chip/vc101", "meas_interarrival_hist")
                if h.empty:
                    continue
                h = h[h > 0]
                ax.bar(h.index * OC12C_SLOT_US, h.values, width=OC12C_SLOT_US * 0.9,
                       label="model" if v is None else f"other AN2 traffic {v.split('-')[1]} Mb/s", **style)
            ax.set_xlabel("cell interarrival (us; OC-12c slots of 0.708 us)")
            ax.set_ylabel("fraction of interarrivals")
            ax.set_title(title, fontsize=9)
            ax.grid(True, alpha=0.3)
            _legend(ax)
            fig.tight_layout()
            png, svg = _save(fig, figdir / f"{fk}_interarrivals", out_dir)
            out.append(Figure(fk, title, png, svg, "Interarrivals of the ttcp VC's cells as the gateway's "
                              "measurement chip sees them on the OC-12c, one bar per slot count; lighter bars: "
                              "the band variants with other AN2 traffic toward the gateway port (not given by "
                              "the paper)."))
        if "cells-unpaced" in stats and "cells-paced" in stats:
            fig = MplFigure(figsize=(7.2, 4.0), dpi=100)
            for i, (key, label) in enumerate((("cells-unpaced", "unpaced"), ("cells-paced", "paced at 5 Mb/s"))):
                ax = fig.add_subplot(2, 1, i + 1)
                tr = _prefixed(stats[key], "chip", "meas_trace", "slot_")
                tr = tr[tr == 101]  # the ttcp VC (values are VC labels)
                t_ms = tr.index.values * OC12C_SLOT_US / 1e3
                ax.vlines(t_ms, 0, 1, linewidth=0.6, color="tab:blue")
                ax.set_yticks([])
                ax.set_ylabel(label, fontsize=8)
                ax.set_xlim(0, 14.2)
            ax.set_xlabel("time (ms)")
            fig.suptitle("Figure 7 — time series of cell arrivals, paced and unpaced streams", fontsize=9)
            fig.tight_layout()
            png, svg = _save(fig, figdir / "fig7_time_series", out_dir)
            out.append(Figure("fig7", "Figure 7 — time series of cell arrivals for paced and unpaced streams", png,
                              svg, "Each line is one cell of the ttcp VC seen by the chip (its VCI trace), over the "
                                   "first 20,000 OC-12c slots (14 ms) after the warm-up."))
        gw = [(f"gateway-oc12c-sonet{s}", lab) for s, lab in (("", "saturated (default)"),
                                                               (f"{SEP}load-0.99", "0.99 load"),
                                                               (f"{SEP}load-0.97", "0.97 load"))
              if f"gateway-oc12c-sonet{s}" in stats]
        views = (("rx_line", "line byte clock (53-byte slots of 622.08 Mb/s)"), ("rx_probe", "STS-12c cell slots"))
        why = ("Four OC-3c sources onto the SONET-framed OC-12c (gateway_oc12c_sonet.toml); the sources' load is "
               "not given: saturated (default) and the band at 0.99 and 0.97. Top: counted on the line's byte "
               "clock, where each row's 40 overhead bytes leave 40/53 of an idle slot (the frame-periodic "
               "structure); bottom: counted in the frame's cell slots, where only the idle cells the "
               "transmitter inserted show (none when saturated).")
        if gw:
            specs = (("fig8", "Figure 8 — histogram of cell interarrivals, OC-12 GW, rx probe", "meas_interarrival_hist",
                      "cell interarrival (slots)"),
                     ("fig10", "Figure 10 — histogram of cell idle (inter-idle-cell times), OC-12 GW, rx probe",
                      "meas_idle_hist", "time between idle slots (slots)"))
            for fk, title, probe, xlabel in specs:
                fig = MplFigure(figsize=(6.4, 5.0), dpi=100)
                for i, (comp, view) in enumerate(views):
                    ax = fig.add_subplot(2, 1, i + 1)
                    width = 0.8 / len(gw)
                    for j, (k, lab) in enumerate(gw):
                        h = _hist(stats[k], comp, probe)
                        if not h.empty:
                            h = h[h > 0]
                            ax.bar(h.index + (j - (len(gw) - 1) / 2) * width, h.values, width=width, label=lab)
                    ax.set_ylabel("fraction")
                    ax.set_title(view, fontsize=8)
                    ax.grid(True, alpha=0.3)
                    _legend(ax)
                ax.set_xlabel(xlabel)
                fig.suptitle(title, fontsize=9)
                fig.tight_layout()
                png, svg = _save(fig, figdir / f"{fk}_{probe}", out_dir)
                out.append(Figure(fk, title, png, svg, why))
            fig = MplFigure(figsize=(6.4, 5.0), dpi=100)
            for i, (comp, view) in enumerate(views):
                ax = fig.add_subplot(2, 1, i + 1)
                for k, lab in gw:
                    acf = _prefixed(stats[k], comp, "meas_interarrival_acf", "lag_")
                    if not acf.empty:
                        ax.plot(acf.index, acf.values, marker="o", markersize=2, linewidth=0.8, label=lab)
                for r in range(1, 7):
                    ax.axvline(r * STS12C_CELLS_PER_ROW, color="0.7", linewidth=0.6, linestyle=":")
                ax.set_ylabel("autocorrelation")
                ax.set_title(f"{view}; dotted: multiples of a row (19.6 cells)", fontsize=8)
                ax.grid(True, alpha=0.3)
                _legend(ax)
            ax.set_xlabel("lag (cells)")
            fig.suptitle("Figure 9 — autocorrelation of cell interarrivals, OC-12 GW, rx probe", fontsize=9)
            fig.tight_layout()
            png, svg = _save(fig, figdir / "fig9_autocorrelation", out_dir)
            out.append(Figure("fig9", "Figure 9 — autocorrelation of cell interarrivals, OC-12 GW, rx probe", png, svg,
                              "Sample autocorrelation of the interarrival sequence (no curve where it has no "
                              "variance: saturated, in frame slots, every interarrival is one slot). " + why))
            fig = MplFigure(figsize=(7.2, 4.4), dpi=100)
            rows_ = [(k, lab, comp, view) for comp, view in views for k, lab in gw]
            for i, (k, lab, comp, view) in enumerate(rows_):
                ax = fig.add_subplot(len(rows_), 1, i + 1)
                tr = _prefixed(stats[k], comp, "meas_trace", "slot_")
                ax.vlines(tr.index.values, 0, 1, linewidth=0.6)
                ax.set_yticks([])
                ax.set_ylabel(f"{lab}\n{comp}", fontsize=6, rotation=0, ha="right", va="center")
                ax.set_xlim(0, 400)
            ax.set_xlabel("slot")
            fig.suptitle("Figure 11 — time series of cell arrivals, OC-12 GW, rx probe", fontsize=9)
            fig.tight_layout()
            png, svg = _save(fig, figdir / "fig11_time_series", out_dir)
            out.append(Figure("fig11", "Figure 11 — time series of cell arrivals in OC-12 GW, rx probe", png, svg,
                              "A segment of 400 slots: one line per cell; gaps are idle slots. " + why))
        if "table2" in by_key:
            res = by_key["table2"]
            vals = [_value(res, f"{rcv}/tcp/vc{vc}", "tcp_throughput", "value", 1e-6) for _, rcv, vc, _, _ in TABLE2]
            if all(v is not None for v in vals):
                fig = MplFigure(figsize=(6.4, 3.6), dpi=100)
                ax = fig.add_subplot()
                xs = range(len(TABLE2))
                ax.bar([x - 0.2 for x in xs], [t[4] for t in TABLE2], width=0.4, color="tab:red", label="paper (measured)")
                ax.bar([x + 0.2 for x in xs], vals, width=0.4, color="tab:blue", label="model")
                ax.set_xticks(list(xs))
                ax.set_xticklabels([t[3].replace(" -> ", "\n-> ") for t in TABLE2], fontsize=7)
                ax.set_ylabel("TCP-layer throughput (Mb/s)")
                ax.set_title("Table 2 — gateway throughput, four ttcp streams via a FORE ASX-200", fontsize=9)
                ax.grid(True, axis="y", alpha=0.3)
                _legend(ax)
                fig.tight_layout()
                png, svg = _save(fig, figdir / "table2_throughput", out_dir)
                out.append(Figure("table2", "Table 2 — gateway throughput", png, svg,
                                  "Per stream, the paper's measurement and the host models' prediction."))
    return out


def analyse(results: Sequence[ExperimentResult], out_dir: Path, name: str) -> tuple[list[Figure], list[ComparisonRow]]:
    by_key = {r.experiment.key: r for r in results if r.stats is not None and not r.stats.empty}
    if not any(e.key in by_key for e in BASE):
        return [], []
    return figures(by_key, out_dir, name), rows(by_key)
