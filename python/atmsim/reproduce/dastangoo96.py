"""dastangoo96 — ABR (EPRCA with EFCI switches) carrying self-similar traffic through
edge devices: the baseline, the staggered start, the six-session congestion study and
the max-min parking lot (ATM Forum 96-0076, sections 2.3.1-2.3.4, Figures 4-22, Table 2).

Dastangoo, Miller, Chen, Brandt (1996), *Effect of Self-Similar Traffic on the
Performance and Buffer Requirements of ATM ABR Edge Devices*: self-similar sources
(H = 0.75, means 10 and 76 Mb/s) feed edge devices with unlimited queues, drained by ABR
VCs with the 1995 EPRCA draft's parameters (Table 1) through EFCI switches (threshold
500 cells, unlimited buffers) on 155 Mb/s links. Every study also runs with an EPRCA
explicit-rate switch and with ERICA on the bottleneck ports, side by side, so that the
paper's conclusions (EFCI is slow; ACR follows the peak, not the mean) are tested
against other switch algorithms rather than assumed.

Steady-state quantities are time averages of the sampled series over the second half of
each run (from ``STEADY_FROM_S``), the first half being the start-up the paper's figures
show. The convergence time of the staggered study is defined in :func:`convergence_ms`.
"""
from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path
from typing import Optional, Sequence

import numpy as np
import pandas as pd

from atmsim.plot import save_png_svg
from atmsim.reproduce.base import ComparisonRow, Experiment, ExperimentResult, Figure, Reproduction, rel_path

#: Table 2: theoretical max-min shares of sessions A-F on the parking lot, Mb/s.
TABLE2 = {"A": 38.0, "B": 38.0, "C": 38.0, "D": 115.0, "E": 75.0, "F": 38.0}
SESSIONS = "ABCDEF"
#: Section 2.3.3: the 70 Mb/s sessions "were throttled to ~42 Mbps"; the 10 Mb/s
#: sessions' ACRs "have grown to ~42 Mbps".
SIX_70_MBPS = 42.0
SIX_10_ACR_MBPS = 42.0
#: Section 2.3.3: the 70 Mb/s sessions' edge queues "had reached ~125,000 cells" at 1500 ms.
SIX_EDGE_Q_CELLS = 125_000.0
SIX_EDGE_Q_AT_S = 1.5
#: Section 2.3.2: time to reach steady state, ms (LAN, WAN).
CONVERGENCE_MS = {"LAN": 75.0, "WAN": 225.0}
#: Section 2.3.2: the second session starts 100 ms after the first.
STAGGER_S = 0.1
#: Section 2.1: the sources' means, Mb/s (23,584 and 179,245 cells/s of 424 bits).
SOURCE_MBPS = {10: 10.0, 76: 76.0}
#: Section 2.3.1: the 10 Mb/s baseline's ACR "eventually grew to the link rate" (155 Mb/s).
LINK_MBPS = 155.0

#: Steady state: series averaged from here to the end of the run, s.
STEADY_FROM_S = 0.5
#: Convergence: both ACRs within this fraction of the larger one ...
CONVERGE_TOL = 0.10
#: ... at every sample of a window this long, s.
CONVERGE_HOLD_S = 0.05

ALGORITHMS = ("efci", "eprca", "erica", "erica+")
ALGO_LABEL = {"efci": "EPRCA-EFCI (paper)", "eprca": "EPRCA-ER", "erica": "ERICA", "erica+": "ERICA+"}
NETS = ("LAN", "WAN")


def algorithm(abr: object) -> str:
    """``'["p7 = erica"]'`` (a swept ``abr`` value) → ``"erica"`` (``"erica+"`` for
    ``'["p7 = erica+"]'``)."""
    s = str(abr)
    for a in sorted(ALGORITHMS, key=len, reverse=True):  # "erica+" before its prefix "erica"
        if f"= {a}" in s:
            return a
    raise ValueError(f"no ABR algorithm in {abr!r}")


def network(length: object) -> str:
    """The inter-switch line's length as swept (``'["p7 = 4000 km"]'``, a switch's
    ``port_length``) → ``"LAN"`` (4 km) or ``"WAN"``."""
    m = re.search(r"=\s*([^\]\"']+)", str(length))
    return "LAN" if (m.group(1) if m else str(length)).strip() == "4 km" else "WAN"


def _label(df: pd.DataFrame, abr_key: str, len_key: str) -> pd.DataFrame:
    out = df.copy()
    out["algo"] = [algorithm(a) for a in out[abr_key]]
    out["net"] = [network(x) for x in out[len_key]]
    return out


def steady_mean(series: pd.DataFrame, component: str, probe: str, t_from: float = STEADY_FROM_S) -> Optional[float]:
    """Mean over replications of the time average of one series from ``t_from`` on."""
    sel = series[(series["component"] == component) & (series["probe"] == probe) & (series["time"] > t_from)]
    if sel.empty:
        return None
    return float(sel.groupby("replication")["value"].mean().mean())


def value_at(series: pd.DataFrame, component: str, probe: str, t: float) -> Optional[float]:
    """Mean over replications of a series' sample nearest to ``t``."""
    sel = series[(series["component"] == component) & (series["probe"] == probe)]
    if sel.empty:
        return None
    vals = []
    for _, g in sel.groupby("replication"):
        i = int(np.argmin(np.abs(g["time"].to_numpy(dtype=float) - t)))
        vals.append(float(g["value"].iloc[i]))
    return float(np.mean(vals))


def convergence_ms(times: np.ndarray, acr1: np.ndarray, acr2: np.ndarray, start_s: float = STAGGER_S,
                   tol: float = CONVERGE_TOL, hold_s: float = CONVERGE_HOLD_S) -> float:
    """Convergence time of the staggered study, ms after the second session's start.

    Definition (the paper gives none): the first sample time t ≥ ``start_s`` from which,
    at every sample in [t, t + ``hold_s``], the two ACRs differ by at most ``tol`` of the
    larger, minus ``start_s``. NaN when that never happens before the run ends (the
    window must fit in the run)."""
    t = np.asarray(times, dtype=float)
    a, b = np.asarray(acr1, dtype=float), np.asarray(acr2, dtype=float)
    ok = np.abs(a - b) <= tol * np.maximum(np.maximum(a, b), 1e-12)
    n = len(t)
    # bad_after[i]: the first index ≥ i where the ACRs are apart (n if none).
    bad_after = np.full(n + 1, n, dtype=int)
    for i in range(n - 1, -1, -1):
        bad_after[i] = i if not ok[i] else bad_after[i + 1]
    for i in range(n):
        if t[i] < start_s - 1e-12:
            continue
        end = int(np.searchsorted(t, t[i] + hold_s - 1e-12, side="left"))
        if end >= n:
            break
        if bad_after[i] > end:
            return (t[i] - start_s) * 1e3
    return math.nan


class Dastangoo96(Reproduction):
    name = "dastangoo96"
    title = ("S. Dastangoo, G. J. Miller, H. Chen, J. Brandt (1996), Effect of Self-Similar Traffic on the "
             "Performance and Buffer Requirements of ATM ABR Edge Devices, ATM Forum 96-0076 — Figures 4-22, "
             "Table 2")
    summary = (
        "Self-similar sources (fractional Gaussian noise, H = 0.75, means 10 and 76 Mb/s) feed ATM edge "
        "devices with unlimited queues, each drained by one ABR VC following TM 4.0's source rules with the "
        "paper's Table 1 parameters (the 1995 EPRCA draft's names mapped to TM 4.0, docs/models/abr.md); "
        "switches have unlimited output buffers and mark EFCI above 500 cells; links run at the paper's "
        "155 Mb/s (365,566 cells/s), 4 km each (LAN) or 4,000 km between the two switches and 1,333 km "
        "between the parking lot's (WAN). Four studies: one session (baseline), two staggered by 100 ms, six "
        "(three 10 and three 70 Mb/s) through one link, and six 70 Mb/s sessions on the four-switch parking "
        "lot of Table 2. Each runs with the paper's EFCI switch and, for comparison, with EPRCA explicit "
        "rate (94-0735R1 defaults), ERICA (target utilisation 0.9) and ERICA+ (ERICA with its queue control: "
        "target delay 0.5 ms, a = 1.15, b = 1.05, QDLF 0.5) on the bottleneck ports. The sources' "
        "standard deviation is not given by the paper: 0.5 x the mean, with 0.25 and 0.75 as a band in the "
        "baseline. Nothing is fitted to the paper's numbers."
    )
    experiments = (
        Experiment("baseline70", "baseline70.toml", "Figs 4-5: one session, 70 Mb/s source, LAN and WAN",
                   {"source": 76}),
        Experiment("baseline10", "baseline10.toml", "Figs 6-7: one session, 10 Mb/s source, LAN and WAN",
                   {"source": 10}),
        Experiment("staggered", "staggered.toml", "Figs 8-11: two 70 Mb/s sessions started 100 ms apart"),
        Experiment("six-sessions", "six_sessions.toml", "Figs 12-18: three 10 and three 70 Mb/s sessions"),
        # The 1995 draft's other decrease reading (per cell sent, docs/models/abr.md), on
        # the six edges: a band beside the headline's per-RM-cell decrease.
        Experiment("six-sessions-per-cell", "six_sessions.toml",
                   "Figs 12-18, band: the draft's per-cell decrease reading", {"decrease": "per-cell"},
                   {f"e{i}.decrease": "per-cell" for i in range(1, 7)}),
        Experiment("parking-lot-lan", "parking_lot_lan.toml", "Figs 19-22, Table 2: max-min parking lot, LAN",
                   {"net": "LAN"}),
        Experiment("parking-lot-wan", "parking_lot_wan.toml", "Figs 19-22, Table 2: max-min parking lot, WAN",
                   {"net": "WAN"}),
    )

    def notes(self) -> list[str]:
        return [
            f"Steady-state rates are time averages of the 10-ms (staggered: 1-ms) samples from {STEADY_FROM_S} s "
            "to the end of the run, averaged over replications; ACR is the allowed cell rate, the egress rate the "
            "edge's cells on the ATM link (data and RM cells), both at 424 bits per cell.",
            f"Convergence (staggered study, not defined by the paper): time from the second session's start "
            f"({STAGGER_S * 1e3:.0f} ms) to the first sample from which, for {CONVERGE_HOLD_S * 1e3:.0f} ms, the "
            f"two ACRs differ by at most {CONVERGE_TOL:.0%} of the larger. Empty when never reached.",
            "Link rate: the paper gives the OC-3c rate as 155 Mb/s = 365,566 cells/s and Table 2 adds up to it; "
            "the links carry 155 Mb/s of cells here (the SONET payload, 149.76 Mb/s, would lower every share by "
            "3.4%).",
            "ERICA aims at 0.9 of the link: its steady shares are 0.9 x the max-min shares of Table 2 (which is "
            "at full link rate), so a -10% difference is ERICA's target, not an error.",
            "ERICA+ is the same ERICA port with its queue control (`pN = erica+`): capacity 0.9 x f(Tq), f = 1.15 "
            "with an empty queue, so it fills the link (0.9 x f = 1 at a standing queue of 0.23 x the target "
            "delay, 0.5 ms); its shares are those of Table 2 at the full link. The target delay is the model's "
            "default, not tuned: on the WAN (round trip about 40 ms) it is far below the round trip, and the queue "
            "cannot settle there (docs/models/abr.md).",
            "Parking lot: sessions D and E demand 76 Mb/s on average, less than their Table 2 shares (115, 75): "
            "their egress follows their demand; the comparison uses the ACR, which is what max-min allocates.",
            "The switch algorithms run on the bottleneck ports only (sw1.p<N>, the parking lot's three "
            "inter-switch ports); every switch port marks EFCI above 500 cells, as in the paper (TM 4.0 lets "
            "an explicit-rate switch mark EFCI too).",
        ]

    def analyse(self, results: Sequence[ExperimentResult], out_dir: Path) -> tuple[list[Figure], list[ComparisonRow]]:
        by_key = {r.experiment.key: r for r in results if r.series is not None and not r.series.empty}
        figures: list[Figure] = []
        rows: list[ComparisonRow] = []
        out_dir = Path(out_dir)
        base = _concat(by_key, ("baseline70", "baseline10"), "source")
        if base is not None:
            f, r = baseline(base, out_dir, self.name)
            figures += f
            rows += r
        if "staggered" in by_key:
            f, r = staggered(by_key["staggered"].series, out_dir, self.name)
            figures += f
            rows += r
        if "six-sessions" in by_key:
            f, r = six_sessions(by_key["six-sessions"].series, out_dir, self.name)
            figures += f
            rows += r
        if "six-sessions-per-cell" in by_key:
            _f, r = six_sessions(by_key["six-sessions-per-cell"].series, out_dir, self.name, reading="per-cell")
            rows += r
        park = _concat(by_key, ("parking-lot-lan", "parking-lot-wan"), "net")
        if park is not None:
            f, r = parking_lot(park, out_dir, self.name)
            figures += f
            rows += r
        return figures, rows


def _concat(by_key: dict, keys: Sequence[str], label: str) -> Optional[pd.DataFrame]:
    """The series of several experiments in one frame, each tagged with its ``label``."""
    parts = []
    for k in keys:
        if k in by_key:
            df = by_key[k].series.copy()
            df[label] = by_key[k].experiment.labels[label]
            parts.append(df)
    return pd.concat(parts, ignore_index=True) if parts else None


# ------------------------------------------------------------------ figures
def grid_figure(series: pd.DataFrame, out_dir: Path, name: str, key: str, title: str, caption: str,
                lines: Sequence[tuple[str, str, str]], ylabel: str) -> Optional[Figure]:
    """One figure shaped like the paper's (LAN and WAN side by side), one row of panels
    per switch algorithm; ``lines`` are (component, probe, legend label), replication 0."""
    if series is None or series.empty:
        return None
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure as MplFigure

    s = series[series["replication"] == 0]
    base = out_dir / "figures" / name / key
    with matplotlib.rc_context({"svg.hashsalt": "atmsim", "font.size": 8}):
        fig = MplFigure(figsize=(9.6, 2.4 * len(ALGORITHMS)), dpi=100)
        axes = fig.subplots(len(ALGORITHMS), len(NETS), sharex=True, squeeze=False)
        legend_done = False
        for r, algo in enumerate(ALGORITHMS):
            for c, net in enumerate(NETS):
                ax = axes[r][c]
                sub = s[(s["algo"] == algo) & (s["net"] == net)]
                for comp, probe, label in lines:
                    g = sub[(sub["component"] == comp) & (sub["probe"] == probe)].sort_values("time")
                    if not g.empty:
                        ax.plot(g["time"].astype(float), g["value"].astype(float), linewidth=0.9, label=label)
                ax.set_title(f"{net}, {ALGO_LABEL[algo]}")
                ax.grid(True, alpha=0.3)
                if c == 0:
                    ax.set_ylabel(ylabel)
                if r == len(ALGORITHMS) - 1:
                    ax.set_xlabel("time (s)")
                if not legend_done and ax.get_legend_handles_labels()[0]:
                    ax.legend(fontsize=6, loc="best")
                    legend_done = True
        fig.suptitle(title)
        fig.tight_layout()
        png, svg = save_png_svg(fig, base)
    return Figure(key, title, rel_path(png, out_dir), rel_path(svg, out_dir), caption)


#: The three per-session figures of a study, in order: (probe, unit).
SESSION_PANELS = (("acr", "Mb/s"), ("src_tx_rate", "Mb/s"), ("edge_q", "cells"))


def session_figures(series: pd.DataFrame, out_dir: Path, name: str, keys: Sequence[tuple[str, str]], caption: str,
                    sessions: Sequence[tuple[str, str]]) -> list[Figure]:
    """ACR, egress rate and edge queue of every session (``keys``: (file key, title) of
    each, in :data:`SESSION_PANELS` order; ``sessions``: (edge component, legend))."""
    out: list[Figure] = []
    for (key, title), (probe, unit) in zip(keys, SESSION_PANELS):
        _keep(out, grid_figure(series, out_dir, name, key, title, caption,
                               [(c, probe, label) for c, label in sessions], unit))
    return out


def _row(exp: str, quantity: str, unit: str, v: Optional[float], paper: Optional[float] = None, note: str = "",
         detail: bool = False) -> Optional[ComparisonRow]:
    if v is None or not math.isfinite(v) and paper is None:
        return None
    return ComparisonRow(exp, quantity, unit, v, paper_value=paper, note=note, detail=detail)


def _keep(rows: list, *new: Optional[ComparisonRow]) -> None:
    rows.extend(r for r in new if r is not None)


# ------------------------------------------------------------------ baseline
def baseline(series: pd.DataFrame, out_dir: Path, name: str) -> tuple[list[Figure], list[ComparisonRow]]:
    s = _label(series, "sw1.abr", "sw1.port_length")
    s["std_factor"] = [round(float(str(sd).split()[0]) / src, 3) for sd, src in zip(s["src1.std"], s["source"])]
    head = s[(s["std_factor"] == 0.5) & (s["e1.decrease"] == "per-rm")]
    figures: list[Figure] = []
    for src, (fr, fq) in ((76, ("fig4", "fig5")), (10, ("fig6", "fig7"))):
        h = head[head["source"] == src]
        label = "70" if src == 76 else "10"
        _keep(figures, grid_figure(
            h, out_dir, name, f"{fr}_baseline{label}_rates",
            f"Figures {fr[3:]} — baseline, {label}-Mb/s source: source rate, ACR, egress rate",
            "10-ms samples; the source's rate (offered to the edge), the ABR VC's allowed cell rate and its egress "
            "rate on the ATM link. Headline: std 0.5 x mean, decrease per backward RM cell.",
            [("src1", "src_tx_rate", "source rate"), ("e1", "acr", "ACR"), ("e1", "src_tx_rate", "egress rate")],
            "Mb/s"))
        _keep(figures, grid_figure(
            h, out_dir, name, f"{fq}_baseline{label}_edge_queue",
            f"Figure {fq[3:]} — baseline, {label}-Mb/s source: edge device queue",
            "Cells waiting in the edge device (unlimited buffer), 10-ms samples.",
            [("e1", "edge_q", "edge queue")], "cells"))
    rows: list[ComparisonRow] = []
    for (src, sf, dec, algo, net), g in s.groupby(["source", "std_factor", "e1.decrease", "algo", "net"]):
        headline = sf == 0.5 and dec == "per-rm"
        tag = f"{'70' if src == 76 else '10'}-Mb/s source, {net}, {ALGO_LABEL[algo]}"
        if not headline:
            tag += f", std {sf:g} x mean, decrease {dec}"
        band = "" if headline else "band over what the paper leaves open (source std, decrease reading)"
        src_rate = steady_mean(g, "src1", "src_tx_rate", 0.0)
        egress = steady_mean(g, "e1", "src_tx_rate", 0.0)
        acr = steady_mean(g, "e1", "acr")
        paper_rate = SOURCE_MBPS[src] if headline else None
        _keep(rows,
              _row("baseline", f"mean source rate, {tag}", "Mb/s", src_rate, paper_rate,
                   "dastangoo96 2.3.1 (the source's mean)", detail=not headline or algo != "efci"),
              _row("baseline", f"mean egress rate, {tag}", "Mb/s", egress, paper_rate,
                   "dastangoo96 2.3.1: the egress averages the source rate" if headline else band,
                   detail=not headline),
              _row("baseline", f"steady ACR (from {STEADY_FROM_S} s), {tag}", "Mb/s", acr,
                   LINK_MBPS if (headline and src == 10) else None,
                   "dastangoo96 2.3.1: the 10 Mb/s session's ACR grows to the link rate" if (headline and src == 10)
                   else band, detail=not headline),
              _row("baseline", f"edge queue, largest, {tag}", "cells", _max(g, "e1", "edge_q"), None, band,
                   detail=not headline))
    return figures, rows


def _max(series: pd.DataFrame, component: str, probe: str) -> Optional[float]:
    sel = series[(series["component"] == component) & (series["probe"] == probe)]
    if sel.empty:
        return None
    return float(sel.groupby("replication")["value"].max().mean())


# ------------------------------------------------------------------ staggered
def staggered(series: pd.DataFrame, out_dir: Path, name: str) -> tuple[list[Figure], list[ComparisonRow]]:
    s = _label(series, "sw1.abr", "sw1.port_length")
    figures: list[Figure] = []
    two = (("e1", "session 1 (t = 0)"), ("e2", "session 2 (t = 100 ms)"))
    for key, title, probe, unit, cap in (
        ("fig8_staggered_acr", "Figure 8 — two 70-Mb/s sources, staggered start: ACR", "acr", "Mb/s", "ACRs, 1-ms samples."),
        ("fig9_staggered_egress", "Figure 9 — staggered start: ATM egress rates", "src_tx_rate", "Mb/s",
         "Egress rates, 1-ms samples."),
        ("fig10_staggered_edge_queue", "Figure 10 — staggered start: edge device queues", "edge_q", "cells",
         "Edge queues (unlimited), 1-ms samples."),
    ):
        _keep(figures, grid_figure(s, out_dir, name, key, title, cap, [(c, probe, l) for c, l in two], unit))
    _keep(figures, grid_figure(s, out_dir, name, "fig11_staggered_switch_queue",
                               "Figure 11 — staggered start: switch queue", "The bottleneck port's queue (sw1.p3).",
                               [("sw1/p3", "q_len", "switch queue")], "cells"))
    rows: list[ComparisonRow] = []
    for (algo, net), g in s.groupby(["algo", "net"]):
        tag = f"{net}, {ALGO_LABEL[algo]}"
        conv = []
        for _, rg in g.groupby("replication"):
            a = rg[(rg["component"] == "e1") & (rg["probe"] == "acr")].sort_values("time")
            b = rg[(rg["component"] == "e2") & (rg["probe"] == "acr")].sort_values("time")
            if len(a) and len(a) == len(b):
                conv.append(convergence_ms(a["time"].to_numpy(), a["value"].to_numpy(), b["value"].to_numpy()))
        reached = [c for c in conv if math.isfinite(c)]
        note = "dastangoo96 2.3.2 (EPRCA-EFCI); definition in the notes"
        if len(reached) < len(conv):
            note += f"; not reached in {len(conv) - len(reached)} of {len(conv)} runs (mean of the others)"
        v = float(np.mean(reached)) if reached else math.nan
        _keep(rows, ComparisonRow("staggered", f"convergence time, {tag}", "ms", v, paper_value=CONVERGENCE_MS[net],
                                  note=note) if conv else None)
        a1, a2 = steady_mean(g, "e1", "acr"), steady_mean(g, "e2", "acr")
        if a1 is not None and a2 is not None:
            _keep(rows, _row("staggered", f"steady ACR ratio session 2 / session 1, {tag}", "1", a2 / a1, None,
                             "fairness: 1 is fair (the paper: 'fairness is achieved', no number)"))
        _keep(rows, _row("staggered", f"switch queue, largest, {tag}", "cells", _max(g, "sw1/p3", "q_len"), None,
                         "the paper: 'well under control', no number"),
              _row("staggered", f"edge queue of session 1, largest, {tag}", "cells", _max(g, "e1", "edge_q"), None,
                   "the paper: much larger in the WAN, no number", detail=True))
    return figures, rows


# ------------------------------------------------------------------ six sessions
def six_sessions(series: pd.DataFrame, out_dir: Path, name: str,
                 reading: Optional[str] = None) -> tuple[list[Figure], list[ComparisonRow]]:
    """The six-session study's figures and rows; ``reading``: the edges' decrease
    reading of a band run (rows only, tagged with it; the headline is per RM cell)."""
    s = _label(series, "sw1.abr", "sw1.port_length")
    figures: list[Figure] = []
    if reading is not None:
        # Visible for the paper's EFCI (the reading is the paper's open question), folded
        # under the headline for the explicit-rate algorithms.
        rows = _six_rows(s, f", decrease {reading}")
        return figures, [r if ALGO_LABEL["efci"] in r.quantity else dataclasses.replace(r, detail=True) for r in rows]
    ten = [(f"e{i}", f"{SESSIONS[i - 1]} (10 Mb/s)") for i in (1, 2, 3)]
    seventy = [(f"e{i}", f"{SESSIONS[i - 1]} (70 Mb/s)") for i in (4, 5, 6)]
    figures += session_figures(
        s, out_dir, name, (("fig12_14_six_acr", "Figures 12, 14 — six-session study: ACR"),
                           ("fig13_15_six_egress", "Figures 13, 15 — six-session study: ATM egress rates"),
                           ("fig16_17_six_edge_queue", "Figures 16, 17 — six-session study: edge device queues")),
        "Sessions A-C carry the 10 Mb/s source, D-F the 70 Mb/s one; 10-ms samples (the paper draws the two "
        "groups in separate panels).", ten + seventy)
    _keep(figures, grid_figure(s, out_dir, name, "fig18_six_switch_queue",
                               "Figure 18 — six-session study: switch queue", "The bottleneck port's queue (sw1.p7).",
                               [("sw1/p7", "q_len", "switch queue")], "cells"))
    return figures, _six_rows(s, "")


def _six_rows(s: pd.DataFrame, suffix: str) -> list[ComparisonRow]:
    rows: list[ComparisonRow] = []
    for (algo, net), g in s.groupby(["algo", "net"]):
        tag = f"{net}, {ALGO_LABEL[algo]}{suffix}"

        def mean_over(comps: Sequence[str], probe: str, t_from: float = STEADY_FROM_S) -> Optional[float]:
            vals = [steady_mean(g, c, probe, t_from) for c in comps]
            vals = [v for v in vals if v is not None]
            return float(np.mean(vals)) if vals else None

        c10, c70 = ("e1", "e2", "e3"), ("e4", "e5", "e6")
        demand = mean_over(("src1", "src2", "src3"), "src_tx_rate", 0.0)
        egress10 = mean_over(c10, "src_tx_rate", 0.0)
        _keep(rows,
              _row("six-sessions", f"10-Mb/s sessions: egress / offered rate, {tag}", "1",
                   None if not demand or egress10 is None else egress10 / demand, 1.0,
                   "dastangoo96 2.3.3: the 10 Mb/s sessions 'received their full bandwidth' (egress includes RM "
                   "cells, 1/32 more)"),
              _row("six-sessions", f"70-Mb/s sessions: steady egress rate, {tag}", "Mb/s",
                   mean_over(c70, "src_tx_rate"), SIX_70_MBPS, "dastangoo96 2.3.3: 'throttled to ~42 Mbps'"),
              _row("six-sessions", f"70-Mb/s sessions: steady ACR, {tag}", "Mb/s", mean_over(c70, "acr"), SIX_70_MBPS,
                   "dastangoo96 2.3.3: their ACRs, equal to the 10 Mb/s sessions'", detail=True),
              _row("six-sessions", f"10-Mb/s sessions: steady ACR, {tag}", "Mb/s", mean_over(c10, "acr"),
                   SIX_10_ACR_MBPS, "dastangoo96 2.3.3: 'grown to ~42 Mbps' (ACR tracks the peak, not the mean)"),
              _row("six-sessions", f"70-Mb/s sessions: edge queue at {SIX_EDGE_Q_AT_S} s, {tag}", "cells",
                   _mean_at(g, c70, "edge_q", SIX_EDGE_Q_AT_S), SIX_EDGE_Q_CELLS, "dastangoo96 2.3.3"),
              _row("six-sessions", f"switch queue, largest, {tag}", "cells", _max(g, "sw1/p7", "q_len"), None,
                   "the paper: 'well controlled', no number"))
    return rows


def _mean_at(series: pd.DataFrame, comps: Sequence[str], probe: str, t: float) -> Optional[float]:
    vals = [value_at(series, c, probe, t) for c in comps]
    vals = [v for v in vals if v is not None]
    return float(np.mean(vals)) if vals else None


# ------------------------------------------------------------------ parking lot
PARKING_PORTS = ("s1/p3", "s2/p5", "s3/p5")


def parking_lot(series: pd.DataFrame, out_dir: Path, name: str) -> tuple[list[Figure], list[ComparisonRow]]:
    s = series.copy()
    s["algo"] = [algorithm(a) for a in s["s1.abr"]]
    sessions = [(f"e{i}", SESSIONS[i - 1]) for i in range(1, 7)]
    figures: list[Figure] = []
    figures += session_figures(
        s, out_dir, name, (("fig19_parking_acr", "Figure 19 — max-min fairness study: ACR"),
                           ("fig20_parking_egress", "Figure 20 — max-min fairness study: ATM egress rates"),
                           ("fig21_parking_edge_queue", "Figure 21 — max-min fairness study: edge device queues")),
        "Sessions A-F (six 70 Mb/s sources), 10-ms samples; Table 2's shares: 38/38/38/115/75/38 Mb/s.", sessions)
    _keep(figures, grid_figure(s, out_dir, name, "fig22_parking_switch_queue",
                               "Figure 22 — max-min fairness study: switch queues",
                               "The three inter-switch ports' queues.",
                               [(p, "q_len", p) for p in PARKING_PORTS], "cells"))
    rows: list[ComparisonRow] = []
    for (algo, net), g in s.groupby(["algo", "net"]):
        tag = f"{net}, {ALGO_LABEL[algo]}"
        for comp, sess in sessions:
            _keep(rows,
                  _row("parking-lot", f"session {sess}: steady ACR, {tag}", "Mb/s", steady_mean(g, comp, "acr"),
                       TABLE2[sess], "dastangoo96 Table 2 (theoretical max-min share)"),
                  _row("parking-lot", f"session {sess}: steady egress rate, {tag}", "Mb/s",
                       steady_mean(g, comp, "src_tx_rate"), TABLE2[sess],
                       "Table 2; D and E demand 76 Mb/s on average, below their shares", detail=True))
        for p in PARKING_PORTS:
            _keep(rows, _row("parking-lot", f"switch queue {p}, largest, {tag}", "cells", _max(g, p, "q_len"), None,
                             "the paper: 'within reasonable bounds', no number", detail=True))
    return figures, rows
