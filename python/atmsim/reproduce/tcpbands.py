"""Bands and ablations of the TCP predictions (issue 18), shared by lazarou96, evans96
and domingo95.

A *variant* is an experiment's scenario file run again with a few parameters set
otherwise (``Experiment.overrides``). Two kinds:

* a **band** variant moves a parameter the paper leaves open (a host's per-segment
  time within Table 1's range, the host profile, the pacing-rate unit, a per-octet
  cost): the band of a row is the range of the point prediction over its base run and
  its band variants, and the parameter whose variant moves it most is named;
* an **ablation** switches one of the model's features off (the payload reading of
  the pacing rate, the host profiles, the per-octet cost, the BSD timers), so the
  report shows what each contributes.

A variant's experiment key is ``<base key>~<variant name>``; reproductions skip such
keys in their own analysis and hand them to :func:`band_and_ablation`.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Mapping, Optional, Sequence

from atmsim.reproduce.base import ComparisonRow, Experiment, ExperimentResult, Figure, rel_path

SEP = "~"


@dataclass(frozen=True)
class Variant:
    """One variant of experiment ``base``: ``overrides`` set ``param``."""

    base: str
    name: str
    param: str
    overrides: Mapping[str, str] = field(default_factory=dict)
    #: True: a feature switched off (an ablation row).
    ablation: bool = False
    #: True: the variant is a reading the paper leaves open, so it widens the band.
    in_band: bool = True
    #: False (default): the file's fixed ``replications``, not its stopping rule (see
    #: :func:`variant_experiments`); True: the rule too, where the base's rule only stops
    #: early at points where every value is alike (domingo95 exp3's loss-free point).
    precision: bool = False


#: Switch buffers per VC (cells) over which the unpaced TCP rows' band runs. lazarou96
#: Table 1's 256 cells are its BONeS model's; neither paper gives the real switches'. The
#: model's throughput is a step function of this buffer (docs/models/lazarou96.md,
#: section 8: 192 cells 0.2 Mb/s, 224-256 1.06, 288-320 about 20, 384 and more about 83),
#: so the band samples it around the default as well as at its ends.
VC_BUFFER_CELLS = (128, 192, 224, 288, 320, 512)


def vc_buffer_variants(base: str, switches: Sequence[str], param: str,
                       cells: Sequence[int] = VC_BUFFER_CELLS) -> list[Variant]:
    """Band variants of ``base`` with every switch in ``switches`` given ``n`` cells per
    VC, for each ``n`` in ``cells`` (named ``vc-<n>``)."""
    return [Variant(base, f"vc-{n}", param, {f"{s}.vc_capacity": f"{n} cells" for s in switches}) for n in cells]


def variant_experiments(base: Sequence[Experiment], variants: Sequence[Variant]) -> tuple[Experiment, ...]:
    """The variants as experiments (after their bases, in the given order)."""
    by_key = {e.key: e for e in base}
    out = []
    for v in variants:
        b = by_key[v.base]
        # a variant is a sensitivity: by default the file's fixed replications, not its
        # precision rule (a variant far from the default, e.g. 288 cells per VC, would run
        # to the cap)
        out.append(Experiment(f"{v.base}{SEP}{v.name}", b.file, f"{b.title} [{v.name}]",
                              labels={"variant_of": v.base, "variant": v.name}, overrides=dict(v.overrides),
                              precision=v.precision))
    return tuple(out)


def is_variant(key: str) -> bool:
    return SEP in key


#: Reads one number (the row's quantity) from a result; None if absent.
Reader = Callable[[ExperimentResult], Optional[float]]


def band_and_ablation(row: ComparisonRow, base_key: str, read: Reader, by_key: Mapping[str, ExperimentResult],
                      variants: Sequence[Variant]) -> tuple[ComparisonRow, list[ComparisonRow]]:
    """``row`` with its band over ``base_key``'s band variants, and one ablation row
    (detail) per ablation variant: the quantity with that feature off."""
    lo = hi = row.simulated
    moved: dict[str, float] = {}
    ablations: list[ComparisonRow] = []
    for v in variants:
        if v.base != base_key:
            continue
        res = by_key.get(f"{v.base}{SEP}{v.name}")
        x = read(res) if res is not None else None
        if x is None:
            continue
        if v.ablation:
            ablations.append(ComparisonRow(row.experiment, f"ablation, {v.param} off: {row.quantity}", row.unit, x,
                                           note=f"{v.name}; with every feature: {row.simulated:.4g}", detail=True))
        if not v.in_band:
            continue
        lo, hi = min(lo, x), max(hi, x)
        moved[v.param] = max(moved.get(v.param, 0.0), abs(x - row.simulated))
    if not moved:
        return row, ablations
    dominant = max(moved, key=lambda p: moved[p])
    return replace(row, band_low=lo, band_high=hi, band_param=dominant), ablations


def replications_note(stats, component: str, probe: str, statistic: str) -> str:
    """How a row's mean and interval were made: "mean of N runs, 95% <interval>" (the
    interval :mod:`atmsim.stats` chose for the statistic's domain); "" when absent."""
    from atmsim.stats import METHODS

    if stats is None or stats.empty or "interval" not in stats.columns:
        return ""
    sel = stats[(stats["component"] == component) & (stats["probe"] == probe) & (stats["statistic"] == statistic)]
    if sel.empty:
        return ""
    r = sel.iloc[0]
    method = METHODS.get(str(r["interval"]), str(r["interval"]))
    return f"mean of {int(r['n'])} runs, 95% {method}"


def band_figure(rows: Sequence[ComparisonRow], figdir: Path, out_dir: Path, key: str, title: str) -> Optional[Figure]:
    """Each banded row's point prediction (dot), band (bar) and paper value (cross), on
    a log scale (the rows span 0.3 to 140 Mb/s)."""
    banded = [r for r in rows if r.band_low is not None and r.band_high is not None and not r.detail]
    if not banded:
        return None
    from matplotlib.figure import Figure as MplFigure
    from matplotlib.lines import Line2D

    figdir.mkdir(parents=True, exist_ok=True)
    n = len(banded)
    fig = MplFigure(figsize=(10.0, 0.6 * n + 2.2))
    ax = fig.add_subplot()
    ys = list(range(n))[::-1]
    for y, r in zip(ys, banded):
        lo, hi = max(r.band_low, 1e-3), max(r.band_high, 1e-3)
        ax.plot([lo, hi], [y, y], color="tab:blue", linewidth=6, alpha=0.35, solid_capstyle="butt")
        ax.plot([r.simulated], [y], "o", color="tab:blue")
        if r.paper_value is not None:
            ax.plot([r.paper_value], [y], "x", color="tab:red", markersize=9, markeredgewidth=2)
    ax.set_yticks(ys)
    ax.set_yticklabels([_short(r.quantity) + _band_label(r) for r in banded], fontsize=7)
    ax.set_xscale("log")
    ax.set_xlabel(f"TCP throughput ({banded[0].unit})")
    ax.set_title(title, fontsize=9)
    ax.grid(True, axis="x", which="both", alpha=0.3)
    ax.legend(handles=[Line2D([], [], color="tab:blue", marker="o", linestyle="", label="model (defaults)"),
                       Line2D([], [], color="tab:blue", linewidth=6, alpha=0.35, label="band over open parameters"),
                       Line2D([], [], color="tab:red", marker="x", linestyle="", label="paper (measured)")],
              fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.09 - 0.6 / (n + 4)), ncol=3)
    fig.tight_layout()
    png, svg = figdir / f"{key}.png", figdir / f"{key}.svg"
    fig.savefig(png, dpi=110, bbox_inches="tight")
    fig.savefig(svg, bbox_inches="tight")
    caption = ("Point prediction at the documented defaults (dot), its band over the parameters the paper leaves "
               "open (bar; under each row the parameter that moves it most) and the paper's measurement where it "
               "gives one (cross).")
    return Figure(key, title, rel_path(png, out_dir), rel_path(svg, out_dir), caption)


def _band_label(r: ComparisonRow) -> str:
    """The second line of a row's label: the parameter that moves it most."""
    if r.band_high is not None and r.band_low is not None and r.band_high <= r.band_low:
        return "\nband: no open parameter moves it"
    return f"\nband: {_short(r.band_param)}" if r.band_param else ""


def _short(q: str, width: int = 56) -> str:
    return q if len(q) <= width else q[: width - 1] + "…"
