"""Paper-shaped figures from sweep statistics (matplotlib, Agg backend, PNG + SVG).

A figure is a list of :class:`Series` (one curve each: x, mean, 95% CI) drawn by
:func:`plot_series` with error bars.  :func:`series_from_stats` picks one probe
statistic out of a ``SweepResult.stats`` DataFrame (columns ``point, <swept keys>,
component, probe, statistic, unit, n, mean, std, ci_low, ci_high``) and turns it into
a series against any x the caller computes from a row (e.g. offered load from the
swept mean rates).

Log axes cannot show zero: on a log y axis, points whose mean is not positive are left
out (the caption should say so) and error bars are clipped above zero.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence

import matplotlib

matplotlib.use("Agg")  # no display; must precede pyplot
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

_MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]


@dataclass
class Series:
    """One curve.  ``ci_low``/``ci_high`` are the 95% CI bounds (NaN: no bar)."""

    label: str
    x: np.ndarray
    mean: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray

    def __post_init__(self) -> None:
        self.x = np.asarray(self.x, dtype=float)
        self.mean = np.asarray(self.mean, dtype=float)
        self.ci_low = np.asarray(self.ci_low, dtype=float)
        self.ci_high = np.asarray(self.ci_high, dtype=float)
        n = len(self.x)
        if not (len(self.mean) == len(self.ci_low) == len(self.ci_high) == n):
            raise ValueError(f"series {self.label!r}: x, mean, ci_low, ci_high differ in length")


def series_from_stats(stats: pd.DataFrame, *, component: str, probe: str, statistic: str,
                      x: Callable[[pd.Series], float], label: str, scale: float = 1.0) -> Series:
    """The rows of one ``(component, probe, statistic)``, sorted by ``x(row)``, with
    mean and CI multiplied by ``scale``.  Raises KeyError naming what exists when
    nothing matches."""
    sel = stats[(stats["component"] == component) & (stats["probe"] == probe)
                & (stats["statistic"] == statistic)]
    if sel.empty:
        have = sorted({f"{c}.{p}.{s}" for c, p, s in
                       stats[["component", "probe", "statistic"]].itertuples(index=False)})
        raise KeyError(f"no statistic {component}.{probe}.{statistic} in the sweep results"
                       f" (have {len(have)}: {', '.join(have[:12])}{' …' if len(have) > 12 else ''})")
    xs = np.array([x(row) for _, row in sel.iterrows()], dtype=float)
    order = np.argsort(xs, kind="stable")
    col = lambda name: sel[name].to_numpy(dtype=float)[order] * scale  # noqa: E731
    return Series(label=label, x=xs[order], mean=col("mean"), ci_low=col("ci_low"), ci_high=col("ci_high"))


def _yerr(s: Series, logy: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(x, mean, lower err, upper err) ready for errorbar; drops non-positive means on log axes."""
    x, m, lo, hi = s.x, s.mean, s.ci_low, s.ci_high
    keep = np.isfinite(m) & np.isfinite(x)
    if logy:
        keep &= m > 0
    x, m, lo, hi = x[keep], m[keep], lo[keep], hi[keep]
    lo = np.where(np.isfinite(lo), lo, m)
    hi = np.where(np.isfinite(hi), hi, m)
    if logy:
        lo = np.maximum(lo, m * 1e-3)  # a CI reaching below zero is drawn to 1/1000 of the mean
    return x, m, np.maximum(m - lo, 0.0), np.maximum(hi - m, 0.0)


def plot_series(series: Sequence[Series], path_base: Path | str, *, xlabel: str, ylabel: str,
                title: str = "", logy: bool = False, ylim: Optional[tuple[float, float]] = None,
                xlim: Optional[tuple[float, float]] = None,
                reference: Optional[tuple[str, Sequence[float], Sequence[float]]] = None) -> tuple[Path, Path]:
    """Draw ``series`` with 95% CI error bars into ``path_base.png`` and ``.svg``.

    reference: an optional dashed line ``(label, xs, ys)`` (e.g. a capacity limit).
    Returns the two paths.  Files are deterministic for the same input (no dates in
    the SVG, fixed hash salt)."""
    base = Path(path_base)
    base.parent.mkdir(parents=True, exist_ok=True)
    with matplotlib.rc_context({"svg.hashsalt": "atmsim", "font.size": 10}):
        fig, ax = plt.subplots(figsize=(6.4, 4.4), dpi=100)
        try:
            drawn = 0
            for i, s in enumerate(series):
                x, m, el, eu = _yerr(s, logy)
                if len(x) == 0:
                    continue
                ax.errorbar(x, m, yerr=[el, eu], marker=_MARKERS[i % len(_MARKERS)], markersize=5,
                            capsize=3, linewidth=1.2, label=s.label)
                drawn += 1
            if reference is not None:
                rlabel, rx, ry = reference
                ax.plot(list(rx), list(ry), linestyle="--", color="0.4", linewidth=1, label=rlabel)
                drawn += 1
            if logy:
                ax.set_yscale("log")
            if ylim is not None:
                ax.set_ylim(*ylim)
            if xlim is not None:
                ax.set_xlim(*xlim)
            ax.set_xlabel(xlabel)
            ax.set_ylabel(ylabel)
            if title:
                ax.set_title(title)
            ax.grid(True, which="major", alpha=0.4)
            if logy:
                ax.grid(True, which="minor", alpha=0.15)
            if drawn:
                ax.legend(loc="best", fontsize=9)
            else:
                ax.text(0.5, 0.5, "no data to draw", transform=ax.transAxes, ha="center", va="center")
            fig.tight_layout()
            png, svg = base.with_suffix(".png"), base.with_suffix(".svg")
            fig.savefig(png, format="png")
            fig.savefig(svg, format="svg", metadata={"Date": None})
        finally:
            plt.close(fig)
    return png, svg


def finite_or_nan(x: Optional[float]) -> float:
    return float(x) if x is not None and math.isfinite(float(x)) else float("nan")
