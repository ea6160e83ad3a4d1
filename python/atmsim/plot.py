"""Figures (matplotlib's object API: no pyplot state, no backend switch, so they work
in scripts, on headless machines and in notebooks alike).

* One-line plots for users: :func:`series_figure` (a run's time series, behind
  ``Result.plot_series()``) and :func:`sweep_figure` (a probe statistic against a
  swept parameter with 95% CIs, behind ``SweepResult.plot()``); both return a
  ``Figure`` (shown by Jupyter) and save it when given a path.
* Paper-shaped figures for the reproductions (PNG + SVG): a figure is a list of
  :class:`Series` (one curve each: x, mean, 95% CI) drawn by :func:`plot_series` with
  error bars.  :func:`series_from_stats` picks one probe
statistic out of a ``SweepResult.stats`` DataFrame (columns ``point, <swept keys>,
component, probe, statistic, unit, n, mean, std, ci_low, ci_high``) and turns it into
a series against any x the caller computes from a row (e.g. offered load from the
swept mean rates).

Log axes cannot show zero: on a log y axis, points whose mean is not positive are left
out (the caption should say so) and error bars are clipped above zero.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence

import matplotlib
import matplotlib.ticker
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

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
        # A log axis cannot show a bound at or below zero: no lower whisker there
        # (never one drawn to a value the interval does not give).
        lo = np.where(lo > 0, lo, m)
    return x, m, np.maximum(m - lo, 0.0), np.maximum(hi - m, 0.0)


def plot_series(series: Sequence[Series], path_base: Path | str, *, xlabel: str, ylabel: str,
                title: str = "", logy: bool = False, ylim: Optional[tuple[float, float]] = None,
                xlim: Optional[tuple[float, float]] = None,
                reference: Optional[tuple[str, Sequence[float], Sequence[float]]] = None,
                bands: Sequence[tuple[str, Sequence[float], Sequence[float], Sequence[float]]] = ()) -> tuple[Path, Path]:
    """Draw ``series`` with 95% CI error bars into ``path_base.png`` and ``.svg``.

    reference: an optional dashed line ``(label, xs, ys)`` (e.g. a capacity limit).
    bands: shaded ranges ``(label, xs, lows, highs)`` drawn under the series (e.g. a
    prediction's range over parameters a paper leaves open).
    Returns the two paths.  Files are deterministic for the same input (no dates in
    the SVG, fixed hash salt)."""
    base = Path(path_base)
    base.parent.mkdir(parents=True, exist_ok=True)
    with matplotlib.rc_context({"svg.hashsalt": "atmsim", "font.size": 10}):
        fig = Figure(figsize=(6.4, 4.4), dpi=100)
        ax = fig.add_subplot()
        drawn = 0
        for i, (blabel, bx, blo, bhi) in enumerate(bands):
            if len(bx):
                ax.fill_between(list(bx), list(blo), list(bhi), alpha=0.18, linewidth=0,
                                color=f"C{i % 10}", label=blabel)
                drawn += 1
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
        png, svg = save_png_svg(fig, base)
    return png, svg


def save_png_svg(fig: Figure, base: Path) -> tuple[Path, Path]:
    """Writes ``fig`` as ``base``.png and ``base``.svg (the SVG without a date, so that the
    same figure gives the same bytes) and returns the two paths."""
    base.parent.mkdir(parents=True, exist_ok=True)
    png, svg = base.with_suffix(".png"), base.with_suffix(".svg")
    fig.savefig(png, format="png")
    fig.savefig(svg, format="svg", metadata={"Date": None})
    return png, svg


def finite_or_nan(x: Optional[float]) -> float:
    return float(x) if x is not None and math.isfinite(float(x)) else float("nan")


# --------------------------------------------------------------------------- one-line plots
def _save(fig: Figure, path: Optional[Path | str]) -> Figure:
    if path is not None:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(p)
    return fig


def series_figure(series: pd.DataFrame, which: Optional[Sequence[str]] = None,
                  path: Optional[Path | str] = None) -> Figure:
    """A run's time series (``Result.series``): one panel per ``component.probe``, in
    order, sharing the time axis.  ``which`` picks some (``["q.q_len", ...]``);
    ``path`` also saves the figure (format from the suffix).  Raises NoSeriesError (an
    atmsim ScenarioError, also a ValueError) saying how to ask for series if the run has none, KeyError naming what exists for an unknown name."""
    if series.empty:
        from atmsim.exceptions import ASK_FOR_SERIES, NoSeriesError

        raise NoSeriesError(ASK_FOR_SERIES)
    keys = list(dict.fromkeys(f"{c}.{p}" for c, p in zip(series["component"], series["probe"])))
    if which is not None:
        missing = [w for w in which if w not in keys]
        if missing:
            raise KeyError(f"no series {', '.join(missing)}; the run has: {', '.join(keys)}")
        keys = list(which)
    fig = Figure(figsize=(7.0, 1.9 * len(keys) + 0.6), dpi=100, layout="constrained")
    axes = fig.subplots(len(keys), 1, sharex=True, squeeze=False)[:, 0]
    for ax, key in zip(axes, keys):
        comp, probe = key.rsplit(".", 1)
        sel = series[(series["component"] == comp) & (series["probe"] == probe)]
        unit, kind = sel["unit"].iloc[0], sel["kind"].iloc[0]
        draw = ax.step if kind == "level" else ax.plot
        if kind == "level":
            draw(sel["time"], sel["value"], where="post", linewidth=1.1)
        else:
            draw(sel["time"], sel["value"], linewidth=1.1, marker="." if len(sel) <= 60 else None)
        ax.set_ylabel(f"{probe}\n({unit})", fontsize=9)
        ax.set_title(comp, fontsize=9, loc="left")
        ax.grid(True, alpha=0.4)
    axes[-1].set_xlabel("time (s)")
    return _save(fig, path)


def trace_figure(trace: pd.DataFrame, path: Optional[Path | str] = None) -> Figure:
    """A run's cell trace (``Result.cell_trace``) as a space-time diagram: time across,
    one row per component in the order the cells first reach them, a dot per cell
    arriving there (one colour per source), a tick where a cell's transmission starts
    (the source's colour: the gap from its dot is its wait), a cross per cell dropped
    there (one colour per cause, named in the legend).  ``path`` also saves the figure.  Raises
    NoSeriesError (a ScenarioError and ValueError) saying how to ask for a trace if the
    run kept none."""
    if trace.empty:
        from atmsim.exceptions import ASK_FOR_TRACE, NoSeriesError

        raise NoSeriesError(ASK_FOR_TRACE)
    rows = list(dict.fromkeys(trace["component"]))
    y = {c: k for k, c in enumerate(rows)}
    span = float(trace["time_s"].max() - trace["time_s"].min())
    scale, unit = (1e3, "ms") if span < 1.0 else (1.0, "s")
    fig = Figure(figsize=(7.5, 0.45 * len(rows) + 1.6), dpi=100, layout="constrained")
    ax = fig.subplots()
    arrived, dropped = trace[trace["event"] == "r"], trace[trace["event"] == "d"]
    colours: dict[str, str] = {}
    for source, sel in arrived.groupby("source", sort=False):
        (dots,) = ax.plot(sel["time_s"] * scale, sel["component"].map(y), linestyle="none", marker=".", markersize=4,
                          label=f"{source}")
        colours[source] = dots.get_color()
    for source, sel in trace[trace["event"] == "-"].groupby("source", sort=False):
        ax.plot(sel["time_s"] * scale, sel["component"].map(y), linestyle="none", marker="|", markersize=7,
                color=colours.get(source), label=None if source in colours else f"{source}")
    for cause, sel in dropped.groupby("cause", sort=False):
        ax.plot(sel["time_s"] * scale, sel["component"].map(y), linestyle="none", marker="x", markersize=6,
                color="tab:red" if cause == "buffer_full" else None, label=f"dropped: {cause}")
    ax.set_yticks(range(len(rows)), rows, fontsize=9)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlabel(f"time ({unit})")
    ax.grid(True, axis="x", alpha=0.4)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return _save(fig, path)


_NUMBER = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(.*)$")


def _numeric(values: Sequence[object]) -> tuple[Optional[np.ndarray], str]:
    """Swept values as numbers plus their common unit ("100 Mb/s" → 100, "Mb/s"), or
    (None, "") when they are not all numbers in one unit."""
    nums, units = [], set()
    for v in values:
        if isinstance(v, bool):
            return None, ""
        if isinstance(v, (int, float)):
            nums.append(float(v))
            units.add("")
            continue
        m = _NUMBER.match(str(v))
        if not m:
            return None, ""
        nums.append(float(m.group(1)))
        units.add(m.group(2).strip())
    return (np.array(nums), units.pop()) if len(units) == 1 else (None, "")


def scale_figure(rows: Sequence[dict], target: float, path: Optional[Path | str] = None) -> Figure:
    """``atmsim bench --scale`` as a figure: cells switched per wall second against the
    number of VCs (left, with the flatness target as a line at ``target`` × the rate at
    the fewest VCs) and kernel events per wall second against pending events (right),
    both on log-log axes.  ``rows`` are :func:`atmsim.bench.scale_rows`'s."""
    vcs = sorted((r for r in rows if r.get("name") == "scale_vcs" and r.get("cells_per_s")), key=lambda r: r["vcs"])
    pend = sorted((r for r in rows if r.get("name") == "scale_pending" and r.get("events_per_s")),
                  key=lambda r: r["pending"])
    if not vcs and not pend:
        raise ValueError("no scale rows to plot (expected rows named scale_vcs or scale_pending)")
    fig = Figure(figsize=(9.0, 3.6), layout="constrained")
    left, right = fig.subplots(1, 2)
    if vcs:
        x = [r["vcs"] for r in vcs]
        left.plot(x, [r["cells_per_s"] / 1e6 for r in vcs], "o-", label="atmsim")
        left.axhline(target * vcs[0]["cells_per_s"] / 1e6, color="0.4", ls="--",
                     label=f"target: {target:g} × the rate at {vcs[0]['vcs']:,} VCs")
        left.legend(loc="lower left", fontsize=8)
    left.set(xscale="log", yscale="log", xlabel="VCs through the 16-port switch (per-VC queues)",
             ylabel="cells switched per wall second (M)", title="cost per cell as VCs grow")
    if pend:
        right.plot([r["pending"] for r in pend], [r["events_per_s"] / 1e6 for r in pend], "s-", color="C1")
    right.set(xscale="log", yscale="log", xlabel="pending events (hold model)",
              ylabel="events per wall second (M)", title="cost per event as the queue grows")
    for ax in (left, right):
        ax.grid(True, which="both", alpha=0.3)
        ax.yaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.yaxis.set_minor_formatter(matplotlib.ticker.ScalarFormatter())
    return _save(fig, path)


def sweep_figure(stats: pd.DataFrame, keys: Sequence[str], component: str, probe: str, statistic: str,
                 x: Optional[str] = None, path: Optional[Path | str] = None) -> Figure:
    """One probe statistic of a sweep (``SweepResult.stats``) against the swept key
    ``x`` (default: the first), mean with its 95% confidence interval, one line per
    value of the other swept keys (those not zipped with ``x``).  Values such as ``"100 Mb/s"`` are plotted as
    numbers with the unit on the axis; others as categories."""
    if not keys:
        raise ValueError("the sweep has no swept keys (only replications): nothing to plot against")
    x = x or keys[0]
    if x not in keys:
        raise KeyError(f"{x!r} is not a swept key; swept: {', '.join(keys)}")
    sel = stats[(stats["component"] == component) & (stats["probe"] == probe) & (stats["statistic"] == statistic)]
    if sel.empty:
        have = sorted({f"{c}.{p}.{s}" for c, p, s in stats[["component", "probe", "statistic"]].itertuples(index=False)})
        raise KeyError(f"no statistic {component}.{probe}.{statistic} in the sweep results"
                       f" (have {len(have)}: {', '.join(have[:12])}{' …' if len(have) > 12 else ''})")
    # Lines: one per value of the keys that vary independently of x (a key zipped with
    # x takes one value per value of x and only labels the points).
    by_x = sel.groupby(sel[x].astype(str))
    others = [k for k in keys if k != x and by_x[k].nunique().max() > 1]
    xs_all, unit = _numeric(list(sel[x]))
    categories = list(dict.fromkeys(str(v) for v in sel[x])) if xs_all is None else []
    fig = Figure(figsize=(6.4, 4.4), dpi=100, layout="constrained")
    ax = fig.add_subplot()
    sel = sel.assign(_group=[tuple(str(row[k]) for k in others) for _, row in sel.iterrows()])
    for i, (group, g) in enumerate(sel.groupby("_group", sort=False)):
        xs = _numeric(list(g[x]))[0] if xs_all is not None else np.array([categories.index(str(v)) for v in g[x]], float)
        order = np.argsort(xs, kind="stable")
        col = lambda name: g[name].to_numpy(float)[order]  # noqa: E731
        px, m, el, eu = _yerr(Series("", xs[order], col("mean"), col("ci_low"), col("ci_high")), False)
        ax.errorbar(px, m, yerr=[el, eu], capsize=3,
                    marker=_MARKERS[i % len(_MARKERS)], markersize=5, linewidth=1.2,
                    label=", ".join(f"{k} = {v}" for k, v in zip(others, group)) or None)
    if categories:
        ax.set_xticks(range(len(categories)), categories)
    ax.set_xlabel(f"{x} ({unit})" if unit else x)
    ax.set_ylabel(f"{component}.{probe} {statistic} ({sel['unit'].iloc[0]})")
    ax.grid(True, alpha=0.4)
    if others:
        ax.legend(fontsize=8, loc="best")
    return _save(fig, path)
