"""Replication statistics: n, mean, standard deviation and a Student-t 95% confidence
interval for every probe statistic at every sweep point.

Warm-up deletion happens in the core (each run's probes only count after the
scenario's ``warmup``); here every replication contributes one number per probe
statistic, and the replications are independent (distinct native ``run`` numbers),
so the classic t interval applies::

    mean ± t(0.975, n-1) · s / sqrt(n)

NaN-safe: a replication whose value is NaN (e.g. a mean wait with no cells, stored
as NULL) is left out, and ``n`` counts the values actually used.  With ``n < 2`` the
standard deviation and the interval are NaN.

The numbers are computed from values sorted by replication, so an interrupted and
resumed sweep gives bit-identical statistics to an uninterrupted one.
"""
from __future__ import annotations

import math
from typing import Iterable, Optional, Sequence

import numpy as np
import pandas as pd
from scipy.special import stdtrit  # = scipy.stats.t.ppf, without importing scipy.stats (~1 s)

#: Confidence level of every interval atmsim reports.
CONFIDENCE = 0.95

STAT_COLUMNS = ["component", "probe", "statistic", "unit", "n", "mean", "std", "ci_low", "ci_high"]


def t_quantile(n: int, confidence: float = CONFIDENCE) -> float:
    """Two-sided Student-t quantile for ``n`` observations (``n - 1`` degrees of freedom)."""
    if n < 2:
        return math.nan
    return float(stdtrit(n - 1, 0.5 + confidence / 2.0))


def summarize_values(values: Sequence[float]) -> tuple[int, float, float, float, float]:
    """``(n, mean, std, ci_low, ci_high)`` of the finite-or-infinite, non-NaN values."""
    arr = np.asarray([v for v in values if v is not None], dtype="float64")
    arr = arr[~np.isnan(arr)]
    n = int(arr.size)
    if n == 0:
        return 0, math.nan, math.nan, math.nan, math.nan
    mean = float(arr.mean())
    if n < 2:
        return n, mean, math.nan, math.nan, math.nan
    std = float(arr.std(ddof=1))
    half = t_quantile(n) * std / math.sqrt(n)
    return n, mean, std, mean - half, mean + half


def half_width(n: int, std: float) -> float:
    if n < 2 or not math.isfinite(std):
        return math.nan
    return t_quantile(n) * std / math.sqrt(n)


def relative_half_width(n: int, mean: float, std: float) -> float:
    """CI half-width / |mean|: 0 when all values are equal (even all zero), inf when the
    mean is 0 but the values differ, NaN with fewer than two values."""
    hw = half_width(n, std)
    if math.isnan(hw):
        return math.nan
    if hw == 0.0:
        return 0.0
    if mean == 0.0 or not math.isfinite(mean):
        return math.inf
    return hw / abs(mean)


def summarize(values: pd.DataFrame, by: Iterable[str] = ("point",)) -> pd.DataFrame:
    """Group ``values`` (columns ``*by, replication, component, probe, statistic,
    value, unit``) and return one row per group and probe statistic with
    ``*by, component, probe, statistic, unit, n, mean, std, ci_low, ci_high``."""
    by = list(by)
    keys = by + ["component", "probe", "statistic", "unit"]
    if values.empty:
        return pd.DataFrame(columns=keys + ["n", "mean", "std", "ci_low", "ci_high"])
    # Stable: groups keep the probes' native order; values inside a group are in
    # replication order (deterministic sums, whatever order the runs finished in).
    ordered = values.sort_values(by + ["replication"], kind="stable")
    rows = []
    for key, grp in ordered.groupby(keys, sort=False, dropna=False):
        n, mean, std, lo, hi = summarize_values(grp["value"].to_numpy(dtype="float64", na_value=np.nan))
        rows.append((*key, n, mean, std, lo, hi))
    out = pd.DataFrame(rows, columns=keys + ["n", "mean", "std", "ci_low", "ci_high"])
    return out.astype({"n": "int64", "mean": "float64", "std": "float64",
                       "ci_low": "float64", "ci_high": "float64"})


def target_satisfied(n: int, mean: float, std: float, rel_half_width: float) -> bool:
    rel = relative_half_width(n, mean, std)
    return not math.isnan(rel) and rel <= rel_half_width


def describe_target(n: int, mean: float, std: float) -> Optional[float]:
    rel = relative_half_width(n, mean, std)
    return None if math.isnan(rel) else rel
