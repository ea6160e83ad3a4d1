"""evans96 — the MAGIC rate mismatch three ways (issue 17 item 5): TCP over the
155 -> 100 Mb/s constriction with a small switch buffer (256 cells per VC), one stream
(and likewise two streams from two hosts: two_streams*.toml, the credit control on the
WAN hop, the KU switch's WAN port upstream),

- without traffic control (``one-stream``, scenarios/lazarou96/mismatch.toml),
- paced at 70 Mb/s in the adapter (``one-stream-paced``, mismatch_paced.toml),
- under hop-by-hop credit flow control (``magic-credit``,
  scenarios/evans96/mismatch_credit.toml: the same hosts, TCP, links and switch, with the
  DEC's adapter as the upstream credit node and the switch's TAXI port as the downstream
  one; the WAN variant, credit cells tunnelled back through the switch).

The paper gives throughputs for the first two (870 kb/s and 68.2 Mb/s; those rows are
evans96.py's) and only says the credit control "was also experimentally shown to be
effective" (its ref. [7]): the credit rows are predictions. Cell loss is the fraction of
VC 100's cells dropped at the switch's TAXI port (``sw/p2`` ``q_loss_ratio``); the paper
gives no cell-loss number for any of the three.

The credit window equals the switch's buffer per VC (credits never exceed the buffer, so
no cell is lost); the paper gives no window. The headline uses the scenario's 256 cells
(the buffer of the other two cases); the band moves window and buffer together to 128
and 512 cells (as the unpaced rows' band moves the buffer); a detail sweep to 3072 cells
shows the window the 8.8 ms loop needs (about 100 Mb/s x 8.8 ms / 424 bit = 2075 cells).
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping, Optional

from atmsim.plot import save_png_svg
from atmsim.reproduce.base import ComparisonRow, Experiment, ExperimentResult, Figure, point, rel_path
from atmsim.reproduce.tcpbands import Variant, band_and_ablation, variant_experiments
from atmsim.stats import CONFIDENCE

KEY = "magic-credit"
KEY2 = "two-streams-credit"
#: The one-stream credit case with the control built into the host and the switch.
KEY_BUILTIN = "magic-credit-builtin"
UNPACED, PACED = "one-stream", "one-stream-paced"
#: (experiment, label, paper throughput Mb/s or None, the bottleneck port, its VCs'
#: components): the six cases side by side.
CASES = (
    (UNPACED, "1 stream: no control", 0.87, "sw/p2", ("sw/p2/vc100",)),
    (PACED, "1 stream: 70 Mb/s pacing", 68.2, "sw/p2", ("sw/p2/vc100",)),
    (KEY, "1 stream: credit, W = 256", None, "sw/p2", ("sw/p2/vc100",)),
    ("two-streams", "2 streams: no control", 1.6, "sw_edc/p2", ("sw_edc/p2/vc101", "sw_edc/p2/vc102")),
    ("two-streams-paced", "2 streams: 70 Mb/s pacing", 52.3, "sw_edc/p2", ("sw_edc/p2/vc101", "sw_edc/p2/vc102")),
    (KEY2, "2 streams: credit, W = 256", None, "sw_edc/p2", ("sw_edc/p2/vc101", "sw_edc/p2/vc102")),
)
#: The credit loop: the 8.8 ms MAGIC round trip (lazarou96 Table 1 / evans96).
RTT_S = 8.8e-3
CELL_BITS = 424
#: TCP data per cell bit: 48 of 53 octets, 9140 of every 9216 payload octets of a 192-cell
#: PDU (docs/models/lazarou96.md).
DATA_PER_CELL_BIT = 48 / 53 * 9140 / 9216
WINDOW_PARAM = "credit window = switch buffer per VC (evans96 gives none; 256 cells as the other cases)"
SWEEP = (1024, 2048, 3072)


def _window(cells: int, switch: str = "sw") -> dict[str, str]:
    c = f"{cells} cells"
    return {"up.window": c, "down.buffer": c, f"{switch}.vc_capacity": c}


VARIANTS: list[Variant] = (
    [Variant(KEY, f"w-{w}", WINDOW_PARAM, _window(w)) for w in (128, 512)]
    + [Variant(KEY, f"w-{w}", "credit window sweep", _window(w), in_band=False) for w in SWEEP]
    + [Variant(KEY2, f"w-{w}", WINDOW_PARAM, _window(w, "sw_edc")) for w in (128, 512)]
    # The built-in form's window is the adapter's credit_window (= the switch's buffer).
    + [Variant(KEY_BUILTIN, f"w-{w}", WINDOW_PARAM, {"dec.credit_window": f"{w} cells", "sw.vc_capacity": f"{w} cells"})
       for w in (128, 512)]
)
BASE = (Experiment(KEY, "mismatch_credit.toml",
                   "one stream, hop-by-hop credit flow control (window = switch buffer = 256 cells)"),
        Experiment(KEY2, "two_streams_credit.toml",
                   "two streams, hop-by-hop credit flow control on the WAN hop (window = switch buffer = 256 "
                   "cells per VC)"),
        Experiment(KEY_BUILTIN, "mismatch_credit_builtin.toml",
                   "one stream, credit flow control built into the DEC's adapter (credit_window) and the switch "
                   "(credit_in): no credit components"))
#: The experiments evans96 runs for this part.
EXPERIMENTS = BASE + variant_experiments(BASE, VARIANTS)

NOTES = [
    "MAGIC three ways: the credit-controlled case keeps mismatch.toml's hosts, TCP, links and switch (256 cells "
    "per VC) and adds only the control: the DEC's adapter sends VC 100 only with credit (window = the switch's "
    "buffer), the switch's TAXI port returns credit cells (WAN variant, up to 24 entries, 10 us packing delay) "
    "through the switch and the 4.4 ms back link. The window covers the cells on the 4.4 ms forward link, so "
    "the throughput is bounded by window / 8.8 ms: 256 cells give 12.3 Mb/s of cells. The paper gives no "
    "number for its credit experiment (ref. [7]); the rows are predictions.",
]


def _loss(res: ExperimentResult, port: str = "sw/p2", vcs: tuple[str, ...] = ("sw/p2/vc100",)
          ) -> Optional[tuple[float, Optional[float], Optional[float], str]]:
    """Cell loss ratio at the switch's TAXI port with a [0, 1] interval: the summary's
    Wilson interval when runs lost cells; with no loss in any run, the one-sided
    Clopper-Pearson bound for 0 drops among all the cells the port carried
    (1 - (1 - confidence)^(1/N), cells counted as independent trials: a lower bound on
    the uncertainty, said in the note)."""
    v = point(res.stats, port, "q_loss_ratio", "value")
    if v is None:
        return None
    mean, lo, hi = v
    if mean > 0.0:
        return mean, lo, hi, "Wilson interval (effective sample size) over the runs"
    sel = res.stats[res.stats["component"].isin(vcs) & (res.stats["probe"] == "port_tx_cells")]
    if sel.empty:
        return 0.0, 0.0, None, "no cell lost in any run"
    n_cells = float((sel["mean"].astype(float) * sel["n"].astype(float)).sum())
    upper = 1.0 - (1.0 - CONFIDENCE) ** (1.0 / n_cells) if n_cells > 0 else 1.0
    return 0.0, 0.0, upper, (f"no cell lost in any run; upper bound: one-sided Clopper-Pearson, 0 of "
                             f"{n_cells:.3g} cells")


def _thr(res: Optional[ExperimentResult]) -> Optional[tuple[float, Optional[float], Optional[float]]]:
    if res is None or res.stats is None or res.stats.empty:
        return None
    return point(res.stats, "sparc", "tcp_throughput", "rx_total", scale=1e-6)


def window_bound_mbps(cells: float) -> float:
    """TCP data rate when the credit loop limits: window cells per 8.8 ms round trip."""
    return cells * CELL_BITS / RTT_S * DATA_PER_CELL_BIT / 1e6


def analyse(by_key: Mapping[str, ExperimentResult], out_dir: Path, name: str) -> tuple[list[Figure], list[ComparisonRow]]:
    """The three-way rows (throughput and cell loss, one and two streams) and the figure."""
    rows: list[ComparisonRow] = []
    read = lambda res: (_thr(res) or (None,))[0]  # noqa: E731
    for key, what in ((KEY, "one stream"), (KEY2, "two streams from two hosts (combined)")):
        t = _thr(by_key.get(key))
        if t is None:
            continue
        streams = 1 if key == KEY else 2
        row = ComparisonRow(key, f"TCP throughput, {what}, hop-by-hop credit flow control (window = switch buffer "
                            "= 256 cells per VC)", "Mb/s", *t,
                            note=f"prediction (evans96 ref. [7] gives no number); window / round trip: "
                                 f"{streams * window_bound_mbps(256):.2f} Mb/s")
        row, _ = band_and_ablation(row, key, read, by_key, VARIANTS)
        rows.append(row)
    built, parts = _thr(by_key.get(KEY_BUILTIN)), _thr(by_key.get(KEY))
    if built is not None:
        same = f"the component form (credit_sender, credit_buffer): {parts[0]:.2f} Mb/s; " if parts else ""
        row = ComparisonRow(KEY_BUILTIN, "TCP throughput, one stream, credit flow control built into the host "
                            "adapter and the switch (window = switch buffer = 256 cells)", "Mb/s", *built,
                            note=f"prediction; {same}window / round trip: {window_bound_mbps(256):.2f} Mb/s",
                            detail=True)
        rows.append(band_and_ablation(row, KEY_BUILTIN, read, by_key, VARIANTS)[0])
    for w in SWEEP:
        t = _thr(by_key.get(f"{KEY}~w-{w}"))
        if t is not None:
            rows.append(ComparisonRow(KEY, f"credit window sweep: TCP throughput, one stream, window = switch buffer = "
                                      f"{w} cells", "Mb/s", *t,
                                      note=f"window / round trip: {window_bound_mbps(w):.1f} Mb/s", detail=True))
    for key, label, _, port, vcs in CASES:
        res = by_key.get(key)
        if res is None or res.stats is None or res.stats.empty:
            continue
        loss = _loss(res, port, vcs)
        if loss is not None:
            m, lo, hi, how = loss
            rows.append(ComparisonRow(key, f"cell loss ratio at the switch's TAXI port, {label}", "1",
                                      m, lo, hi, note=f"prediction (evans96 gives none); {how}"))
    fig = figure(by_key, out_dir, name)
    return ([fig] if fig is not None else []), rows


def figure(by_key: Mapping[str, ExperimentResult], out_dir: Path, name: str) -> Optional[Figure]:
    """Three panels: TCP throughput and cell loss of the three controls side by side, and
    the credit-controlled throughput against the window with its window/RTT bound."""
    have = [(k, lab, p, _thr(by_key.get(k)), by_key.get(k), port, vcs) for k, lab, p, port, vcs in CASES]
    have = [h for h in have if h[3] is not None]
    if not have:
        return None
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure as MplFigure

    base = Path(out_dir) / "figures" / name / "magic_three_ways"
    with matplotlib.rc_context({"svg.hashsalt": "atmsim", "font.size": 9}):
        fig = MplFigure(figsize=(12.0, 4.4), dpi=100)
        ax1, ax2, ax3 = fig.add_subplot(1, 3, 1), fig.add_subplot(1, 3, 2), fig.add_subplot(1, 3, 3)
        xs = list(range(len(have)))
        for x, (_, lab, paper, t, res, port, vcs) in zip(xs, have):
            m, lo, hi = t
            err = [[m - lo if lo is not None else 0.0], [hi - m if hi is not None else 0.0]]
            ax1.bar(x, m, color="tab:blue", alpha=0.6)
            ax1.errorbar(x, m, yerr=err, color="k", capsize=3)
            if paper is not None:
                ax1.plot(x, paper, "x", color="tab:red", markersize=9, markeredgewidth=2)
            loss = _loss(res, port, vcs) if res is not None else None
            if loss is not None:
                lm, llo, lhi, _ = loss
                ax2.bar(x, max(lm, 1e-7), color="tab:orange", alpha=0.6)
                if llo is not None and lhi is not None:
                    ax2.errorbar(x, max(lm, 1e-7), yerr=[[max(lm, 1e-7) - max(llo, 1e-7)], [lhi - max(lm, 1e-7)]],
                                 color="k", capsize=3)
        for ax in (ax1, ax2):
            ax.set_xticks(xs)
            ax.set_xticklabels([h[1].replace(": ", ":\n") for h in have], fontsize=7, rotation=30, ha="right")
            ax.set_yscale("log")
            ax.grid(True, axis="y", which="both", alpha=0.3)
        ax1.set_ylabel("TCP throughput (Mb/s)")
        ax1.set_title("throughput (x: paper)")
        ax2.set_ylabel("cell loss ratio at the TAXI port")
        ax2.set_title("cell loss (0 drawn at 1e-7)")
        pts = [(256, _thr(by_key.get(KEY)))] + [(w, _thr(by_key.get(f"{KEY}~w-{w}"))) for w in (128, 512) + SWEEP]
        pts = sorted((w, t) for w, t in pts if t is not None)
        if pts:
            ws = [w for w, _ in pts]
            ax3.errorbar(ws, [t[0] for _, t in pts],
                         yerr=[[t[0] - (t[1] if t[1] is not None else t[0]) for _, t in pts],
                               [(t[2] if t[2] is not None else t[0]) - t[0] for _, t in pts]],
                         fmt="o-", color="tab:blue", capsize=3, label="credit-controlled (model)")
            grid = [w * k / 50 for w in (max(ws),) for k in range(1, 51)]
            ax3.plot(grid, [window_bound_mbps(g) for g in grid], "--", color="0.5", label="window / 8.8 ms")
            for k, lab in ((UNPACED, "unpaced"), (PACED, "paced 70 Mb/s")):
                t = _thr(by_key.get(k))
                if t is not None:
                    ax3.axhline(t[0], color="tab:green" if k == PACED else "tab:red", linestyle=":", linewidth=1,
                                label=f"{lab} (model)")
            ax3.set_ylim(0, 110)
            ax3.set_xlabel("credit window = switch buffer per VC (cells)")
            ax3.set_ylabel("TCP throughput (Mb/s)")
            ax3.set_title("credit window sweep")
            ax3.grid(True, alpha=0.3)
            ax3.legend(fontsize=7, loc="lower right")
        fig.tight_layout()
        png, svg = save_png_svg(fig, base)
    return Figure("magic_three_ways", "MAGIC rate mismatch three ways: unpaced, paced at 70 Mb/s, credit-controlled",
                  rel_path(png, out_dir), rel_path(svg, out_dir),
                  "TCP over the 155 -> 100 Mb/s MAGIC constriction (256 cells per VC), one stream and two "
                  "streams from two hosts (combined). Left: TCP "
                  f"throughput, mean and {CONFIDENCE:.0%} interval over the runs, paper measurements as crosses "
                  "(none for the credit case); middle: cells dropped at the switch's TAXI port over cells arriving "
                  "there, with a [0, 1] interval (zero loss is drawn at 1e-7 with its one-sided upper bound); "
                  "right: the one-stream credit-controlled throughput against the window (= the switch buffer), the "
                  "window-over-round-trip bound and the other two cases.")
