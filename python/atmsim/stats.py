"""Replication statistics: n, mean, standard deviation and a 95% confidence interval
that respects the statistic's **domain**, for every probe statistic at every sweep point.

Warm-up deletion happens in the core (each run's probes only count after the
scenario's ``warmup``); here every replication contributes one number per probe
statistic, and the replications are independent (distinct native ``run`` numbers).
Values *inside* a run (cells, losses) are not independent — losses come in bursts —
so every interval is built from the spread *between* runs, never from a count of
cells.

Domains and intervals (docs/experiments.md, "Statistics", says why):

* ``proportion`` — a ratio in [0, 1] (loss ratios, utilisations, tail fractions):
  Wilson score interval on the pooled estimate with the *effective* sample size
  ``n_eff = p(1 − p) / (s²/n)`` and its degrees-of-freedom adjustment
  ``n* = n_eff · (z / t(0.975, n − 1))²`` (Korn & Graubard 1998, the interval survey
  statistics uses for proportions from clustered data: the runs are the clusters).
  It stays inside [0, 1], is asymmetric near 0, and reduces to the t interval when
  the proportion is far from its bounds.
* ``count`` and ``nonnegative`` — counters, rates, times, lengths: all values > 0:
  the t interval on the log scale with Cox's correction for the mean of a
  log-normal, back-transformed (``exp(ȳ + s²/2 ± t·sqrt(s²/n + s⁴/(2(n − 1))))``,
  Zhou & Gao 1997), positive by construction; some values 0: the Student-t interval
  intersected with [0, ∞) (the true mean lies in the domain, so the intersection
  covers it exactly as often as the t interval does).
* ``signed`` — anything else: the Student-t interval ``mean ± t·s/√n``.

Two configurations run with the same seeds (common random numbers) are compared by
the paired t interval of their per-replication differences (:func:`paired_difference`);
two independent sweep points by Welch's (:func:`difference_interval`).

No interval (``ci_low``/``ci_high`` NaN) is given from fewer than :data:`MIN_N`
values, nor when every value is the same (no spread to estimate from); ``ci_note``
says which, e.g. ``"n = 2: too few for an interval"``.

NaN-safe: a replication whose value is NaN (e.g. a mean wait with no cells, stored
as NULL) is left out, and ``n`` counts the values actually used.

The numbers are computed from values sorted by replication, so an interrupted and
resumed sweep gives bit-identical statistics to an uninterrupted one.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Optional, Sequence

import numpy as np
from scipy.special import ndtri, stdtrit  # = scipy.stats.{norm,t}.ppf, without importing scipy.stats (~1 s)

if TYPE_CHECKING:  # pandas is imported where a DataFrame is built (start-up time)
    import pandas as pd

#: Confidence level of every interval atmsim reports.
CONFIDENCE = 0.95

#: Fewest replications an interval is computed from (with 2, t(0.975, 1) = 12.7 makes
#: any interval meaningless).
MIN_N = 3

PROPORTION, COUNT, NONNEGATIVE, SIGNED = "proportion", "count", "nonnegative", "signed"
DOMAINS = (PROPORTION, COUNT, NONNEGATIVE, SIGNED)

#: The interval each method name in the ``interval`` column stands for.
METHODS = {
    "wilson-eff": "Wilson score interval with the effective sample size (Korn & Graubard 1998)",
    "log-t": "t interval of log values with Cox's correction, back-transformed (Zhou & Gao 1997)",
    "t0": "Student-t interval intersected with [0, inf)",
    "t": "Student-t interval",
    "paired-t": "Student-t interval of per-replication differences (common random numbers)",
}

STAT_COLUMNS = ["component", "probe", "statistic", "unit", "domain", "n", "mean", "std", "ci_low", "ci_high",
                "interval", "ci_note"]

# --- domains -----------------------------------------------------------------------

#: Probes whose statistics are ratios in [0, 1] (unit "1"): every probe a model
#: declares with unit "1" must be here or in :data:`COUNT_PROBES`
#: (tests/test_stats.py checks every kind's probes).
PROPORTION_PROBES = frozenset({
    "q_loss_ratio", "flow_loss_ratio", "upc_nonconforming_ratio", "ping_loss", "phy_utilisation", "cpu_util",
    "q_len_tail", "ring_utilisation", "spp_cell_loss", "mpp_frame_loss", "rev_frame_loss",
    "sw_in_loss_ratio", "gw_tx_full", "gw_tx_empty", "iofm_stopped", "meas_stopped", "meas_interarrival_hist",
    "meas_idle_hist",
})
#: Statistics that are proportions although their probe's others are not (the probe's
#: declared unit is that of its other statistics).
PROPORTION_STATISTICS = frozenset({("sink_goodput", "ratio")})
#: Probes with unit "1" that count things (PDUs, datagrams, segments, events).
COUNT_PROBES = frozenset({
    "aal5_rx_pdus", "aal5_drop_pdus", "ip_drop_datagrams", "iofm_stops", "iofm_bursts", "trace_pdus",
    "ping_tx", "ping_rx", "udp_tx", "udp_rx", "tcp_acks", "tcp_segments", "tcp_retransmits", "tcp_timeouts",
    "tcp_fast_retransmits", "hold_events", "non_ip_pdus", "meas_bursts",
})
#: Units of quantities that cannot be negative (times, rates, sizes, levels; the VC
#: labels of the measurement chip's cell trace).
NONNEGATIVE_UNITS = frozenset({"s", "b/s", "kb/s", "Mb/s", "Gb/s", "cells/s", "1/s", "B", "cells", "slots", "frames",
                               "tokens", "requests", "entries", "VC label"})
#: Probes that may be negative whatever their unit (a conservation balance: 0 when
#: conserved, either sign otherwise; an autocorrelation, in [-1, 1]).
SIGNED_PROBES = frozenset({"ring_frame_balance", "meas_interarrival_acf"})


def domain_of(probe: str, statistic: str, unit: str) -> str:
    """The domain of one probe statistic: ``proportion``, ``count``, ``nonnegative``
    or ``signed`` (anything not declared above)."""
    if probe in SIGNED_PROBES:
        return SIGNED
    if (probe in PROPORTION_PROBES and statistic not in ("count",)) or (probe, statistic) in PROPORTION_STATISTICS:
        return PROPORTION
    if statistic == "count" or probe in COUNT_PROBES:
        return COUNT
    if unit in NONNEGATIVE_UNITS:
        return NONNEGATIVE
    return SIGNED


# --- intervals ---------------------------------------------------------------------

@functools.lru_cache(maxsize=4096)
def t_quantile(n: int, confidence: float = CONFIDENCE) -> float:
    """Two-sided Student-t quantile for ``n`` observations (``n - 1`` degrees of freedom)."""
    if n < 2:
        return math.nan
    return float(stdtrit(n - 1, 0.5 + confidence / 2.0))


def z_quantile(confidence: float = CONFIDENCE) -> float:
    return float(ndtri(0.5 + confidence / 2.0))


@dataclass(frozen=True)
class Interval:
    """``n, mean, std`` of the values and the interval ``[low, high]`` (NaN with the
    reason in ``note`` when there is none); ``method`` is a key of :data:`METHODS`."""

    n: int
    mean: float
    std: float
    low: float
    high: float
    method: str
    note: str

    def half_width(self) -> float:
        """The larger distance from the mean to a bound (NaN without an interval)."""
        if math.isnan(self.low) or math.isnan(self.high):
            return math.nan
        return max(self.high - self.mean, self.mean - self.low)


def wilson_eff(p: float, var_mean: float, n: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Wilson score interval for a proportion ``p`` whose estimator has variance
    ``var_mean`` (from ``n`` independent runs), with Korn & Graubard's effective
    sample size ``p(1 − p)/var_mean`` adjusted for the ``n − 1`` degrees of freedom."""
    z = z_quantile(confidence)
    n_star = p * (1.0 - p) / var_mean * (z / t_quantile(n, confidence)) ** 2
    z2n = z * z / n_star
    centre = (p + z2n / 2.0) / (1.0 + z2n)
    half = z / (1.0 + z2n) * math.sqrt(p * (1.0 - p) / n_star + z2n / (4.0 * n_star))
    return max(0.0, centre - half), min(1.0, centre + half)


def log_t(values: np.ndarray, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Cox's interval for the mean of positive values (t on the log scale)."""
    y = np.log(values)
    return _log_t(values.size, float(y.mean()), float(y.var(ddof=1)), confidence)


def _log_t(n: int, m: float, s2: float, confidence: float) -> tuple[float, float]:
    """:func:`log_t` from the mean ``m`` and variance ``s2`` of the ``n`` log values."""
    half = t_quantile(n, confidence) * math.sqrt(s2 / n + s2 * s2 / (2.0 * (n - 1)))
    return _exp(m + s2 / 2.0 - half), _exp(m + s2 / 2.0 + half)


def _exp(x: float) -> float:
    """e**x, inf past the largest float (values spread over hundreds of orders of
    magnitude give a log-scale bound that large)."""
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


#: What an interval needs of the non-NaN values (:func:`_moments`): their number, mean,
#: standard deviation (NaN below 2), least and greatest, whether all are finite, and
#: the mean and variance of their logs (NaN unless there are 2 or more, all finite and
#: > 0).  A plain tuple: summaries make hundreds of thousands.
_Moments = tuple[int, float, float, float, float, bool, float, float]

_NAN_MOMENTS: _Moments = (0, math.nan, math.nan, math.nan, math.nan, True, math.nan, math.nan)

#: The interval method of each domain where there are too few values for one.
_METHOD_OF = {PROPORTION: "wilson-eff", SIGNED: "t", COUNT: "log-t", NONNEGATIVE: "log-t"}


def _moments(arr: np.ndarray) -> _Moments:
    n = int(arr.size)
    if n == 0:
        return _NAN_MOMENTS
    with np.errstate(invalid="ignore", over="ignore"):  # infinities: NaN moments and no interval, not a warning
        mean = float(arr.mean())
        std = float(arr.std(ddof=1)) if n >= 2 else math.nan
    least, greatest, finite = float(arr.min()), float(arr.max()), bool(np.all(np.isfinite(arr)))
    lm = lv = math.nan
    if n >= 2 and finite and least > 0.0:
        y = np.log(arr)
        lm, lv = float(y.mean()), float(y.var(ddof=1))
    return n, mean, std, least, greatest, finite, lm, lv


def interval(values: Sequence[float], domain: str = SIGNED, confidence: float = CONFIDENCE) -> Interval:
    """The statistics of the non-NaN ``values`` and their interval for ``domain``."""
    if domain not in DOMAINS:
        raise ValueError(f"unknown domain {domain!r}; valid: {', '.join(DOMAINS)}")
    arr = np.asarray([v for v in values if v is not None], dtype="float64")
    return _interval(*_moments(arr[~np.isnan(arr)]), domain, confidence)


def _interval(n: int, mean: float, std: float, least: float, greatest: float, finite: bool, log_mean: float,
              log_var: float, domain: str, confidence: float) -> Interval:
    nan = math.nan
    method = _METHOD_OF[domain]
    if n == 0:
        return Interval(0, nan, nan, nan, nan, method, "no values")
    if n < MIN_N:
        return Interval(n, mean, std, nan, nan, method, f"n = {n}: too few for an interval")
    if not finite:
        return Interval(n, mean, std, nan, nan, method, "infinite values: no interval")
    if std == 0.0:
        return Interval(n, mean, std, nan, nan, method, f"all {n} values equal: no spread, no interval")
    if domain == PROPORTION and (least < 0.0 or greatest > 1.0):
        domain, method = SIGNED, "t"  # not a proportion after all: say so through the method
    if domain in (COUNT, NONNEGATIVE) and least < 0.0:
        domain, method = SIGNED, "t"
    if domain == PROPORTION:
        lo, hi = wilson_eff(mean, std * std / n, n, confidence)
    elif domain in (COUNT, NONNEGATIVE) and least > 0.0:
        lo, hi = _log_t(n, log_mean, log_var, confidence)
    else:
        half = t_quantile(n, confidence) * std / math.sqrt(n)
        lo, hi = mean - half, mean + half
        if domain != SIGNED:
            method, lo = "t0", max(0.0, lo)
    return Interval(n, mean, std, lo, hi, method, "")


def _group_moments(values: np.ndarray, codes: np.ndarray, groups: int) -> Iterable[_Moments]:
    """:func:`_moments` of each group of ``values`` (``codes``: the group of each value,
    non-decreasing), value for value as :func:`_moments` of the group's own array: the
    groups of one size are stacked as the rows of a matrix, whose row reductions add in
    the order a one-dimensional reduction does."""
    keep = ~np.isnan(values)
    values, codes = values[keep], codes[keep]
    counts = np.bincount(codes, minlength=groups)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    cols = {name: np.full(groups, np.nan) for name in ("mean", "std", "least", "greatest", "log_mean", "log_var")}
    finite = np.ones(groups, dtype=bool)
    with np.errstate(invalid="ignore", over="ignore"):  # as in _moments
        for k in np.unique(counts):
            if k == 0:
                continue
            sel = np.flatnonzero(counts == k)
            rows = values[starts[sel, None] + np.arange(k)]
            cols["mean"][sel] = rows.mean(axis=1)
            cols["least"][sel], cols["greatest"][sel] = rows.min(axis=1), rows.max(axis=1)
            finite[sel] = np.isfinite(rows).all(axis=1)
            if k >= 2:
                cols["std"][sel] = rows.std(axis=1, ddof=1)
                pos = finite[sel] & (cols["least"][sel] > 0.0)
                if pos.any():
                    y = np.log(rows[pos])
                    cols["log_mean"][sel[pos]] = y.mean(axis=1)
                    cols["log_var"][sel[pos]] = y.var(axis=1, ddof=1)
    return zip(counts.tolist(), *(cols[c].tolist() for c in ("mean", "std", "least", "greatest")), finite.tolist(),
               cols["log_mean"].tolist(), cols["log_var"].tolist())


def summarize_values(values: Sequence[float], domain: str = SIGNED) -> tuple[int, float, float, float, float]:
    """``(n, mean, std, ci_low, ci_high)`` of the non-NaN values (see :func:`interval`)."""
    iv = interval(values, domain)
    return iv.n, iv.mean, iv.std, iv.low, iv.high


def relative_half_width(iv: Interval) -> float:
    """Larger half-width / |mean|: 0 when all values are equal (even all zero, and
    at least :data:`MIN_N` of them), inf when the mean is 0 but the values differ,
    NaN with too few values."""
    if iv.n < MIN_N or math.isnan(iv.std):
        return math.nan
    if iv.std == 0.0:
        return 0.0
    hw = iv.half_width()
    if math.isnan(hw):
        return math.nan
    if iv.mean == 0.0 or not math.isfinite(iv.mean):
        return math.inf
    return hw / abs(iv.mean)


def summarize(values: "pd.DataFrame", by: Iterable[str] = ("point",)) -> "pd.DataFrame":
    """Group ``values`` (columns ``*by, replication, component, probe, statistic,
    value, unit``) and return one row per group and probe statistic with
    ``*by`` and :data:`STAT_COLUMNS`."""
    import pandas as pd

    by = list(by)
    keys = by + ["component", "probe", "statistic", "unit"]
    cols = by + STAT_COLUMNS
    if values.empty:
        return pd.DataFrame(columns=cols)
    # Stable: groups keep the probes' native order; values inside a group are in
    # replication order (deterministic sums, whatever order the runs finished in).
    ordered = values.sort_values(by + ["replication"], kind="stable")
    # Every group's moments from one array (group numbers in order of first appearance,
    # rows inside a group in their order), the groups of one size at once: slicing the
    # frame per group costs a copy of every column, and a NumPy call per group about
    # 60 us, half a minute on a store of a few hundred thousand groups.
    codes = ordered.groupby(keys, sort=False, dropna=False).ngroup().to_numpy()
    order = np.argsort(codes, kind="stable")
    firsts = ordered[keys].iloc[order[np.r_[0, np.flatnonzero(np.diff(codes[order])) + 1]]]
    moments = _group_moments(ordered["value"].to_numpy(dtype="float64", na_value=np.nan)[order], codes[order],
                             len(firsts))
    domains: dict[tuple, str] = {}
    rows = []
    # columns as object arrays (pyarrow converts a string column at once; itertuples
    # asks it for one element at a time)
    for key, m in zip(zip(*(firsts[c].to_numpy(dtype=object) for c in keys)), moments):
        *_, probe, statistic, unit = key
        dom = domains.get((probe, statistic, unit))
        if dom is None:
            dom = domains[(probe, statistic, unit)] = domain_of(str(probe), str(statistic), str(unit))
        iv = _interval(*m, dom, CONFIDENCE)
        rows.append((*key, dom, iv.n, iv.mean, iv.std, iv.low, iv.high, iv.method, iv.note))
    out = pd.DataFrame(rows, columns=keys + ["domain", "n", "mean", "std", "ci_low", "ci_high", "interval", "ci_note"])
    out = out.astype({"n": "int64", "mean": "float64", "std": "float64",
                      "ci_low": "float64", "ci_high": "float64"})
    return out[cols]


def target_satisfied(iv: Interval, rel_half_width: float) -> bool:
    rel = relative_half_width(iv)
    return not math.isnan(rel) and rel <= rel_half_width


def describe_target(iv: Interval) -> Optional[float]:
    rel = relative_half_width(iv)
    return None if math.isnan(rel) else rel


# --- comparing two independent sweep points -------------------------------------------

def difference_interval(a: tuple[int, float, float], b: tuple[int, float, float],
                        confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Welch's interval for ``mean_a − mean_b`` from two independent sets of
    replications, each given as ``(n, mean, std)``: ``d ± t(ν)·sqrt(s_a²/n_a + s_b²/n_b)``
    with the Welch–Satterthwaite degrees of freedom ν.  NaNs with fewer than
    :data:`MIN_N` values on a side or no spread on either."""
    (na, ma, sa), (nb, mb, sb) = a, b
    if na < MIN_N or nb < MIN_N or not all(map(math.isfinite, (ma, sa, mb, sb))):
        return math.nan, math.nan
    va, vb = sa * sa / na, sb * sb / nb
    if va + vb == 0.0:
        return math.nan, math.nan
    half = _welch_t(va, na, vb, nb, confidence) * math.sqrt(va + vb)
    return ma - mb - half, ma - mb + half


def ratio_interval(a: tuple[int, float, float], b: tuple[int, float, float],
                   confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Interval for ``mean_a / mean_b`` (both means > 0) from two independent sets of
    replications ``(n, mean, std)``: the delta method on the log scale,
    ``r·exp(±t(ν)·sqrt(c_a²/n_a + c_b²/n_b))`` with ``c = s/mean`` and Welch's ν.
    Positive by construction; NaNs where :func:`difference_interval` gives none or a
    mean is not > 0."""
    (na, ma, sa), (nb, mb, sb) = a, b
    if na < MIN_N or nb < MIN_N or not all(map(math.isfinite, (ma, sa, mb, sb))) or ma <= 0 or mb <= 0:
        return math.nan, math.nan
    va, vb = (sa / ma) ** 2 / na, (sb / mb) ** 2 / nb
    if va + vb == 0.0:
        return math.nan, math.nan
    half = _welch_t(va, na, vb, nb, confidence) * math.sqrt(va + vb)
    r = ma / mb
    return r * math.exp(-half), r * math.exp(half)


def _welch_t(va: float, na: int, vb: float, nb: int, confidence: float) -> float:
    """Two-sided t quantile at Welch–Satterthwaite's degrees of freedom for the
    variances of two means ``va``, ``vb`` (from ``na``, ``nb`` values)."""
    den = (va * va / (na - 1) if va else 0.0) + (vb * vb / (nb - 1) if vb else 0.0)
    nu = (va + vb) ** 2 / den
    return float(stdtrit(nu, 0.5 + confidence / 2.0))


# --- comparing two configurations run with common random numbers ----------------------

def paired_difference(a: Sequence[float], b: Sequence[float], confidence: float = CONFIDENCE) -> Interval:
    """The Student-t interval for ``mean(a) − mean(b)`` from **paired** replications:
    ``a[i]`` and ``b[i]`` come from the same replication of two configurations run
    with the same seeds (common random numbers), so their difference ``d_i = a_i − b_i``
    is one observation and ``d̄ ± t(0.975, n − 1)·s_d/√n`` its interval (the interval
    of the paired t-test).  Where the two runs are positively correlated — the same
    traffic into both — ``s_d`` is much smaller than Welch's ``sqrt(s_a² + s_b²)``.

    A pair with a NaN on either side is left out (``n`` counts the pairs used).  No
    interval from fewer than :data:`MIN_N` pairs, nor when every difference is the
    same; ``note`` then says which (all differences 0: the two runs agree exactly in
    every replication).  ValueError when ``a`` and ``b`` differ in length."""
    if len(a) != len(b):
        raise ValueError(f"paired values need equal lengths, got {len(a)} and {len(b)}")
    x = np.asarray([math.nan if v is None else v for v in a], dtype="float64")
    y = np.asarray([math.nan if v is None else v for v in b], dtype="float64")
    d = (x - y)[~(np.isnan(x) | np.isnan(y))]
    iv = interval(d, SIGNED, confidence)
    if iv.n >= MIN_N and np.all(np.isfinite(d)) and np.ptp(d) == 0.0:
        # equal differences: no spread, whatever rounding the mean's sum leaves in s_d
        same = f"all {iv.n} differences 0: the paired runs agree exactly" if d[0] == 0.0 \
            else f"all {iv.n} differences equal: no spread, no interval"
        return Interval(iv.n, float(d[0]), 0.0, math.nan, math.nan, "paired-t", same)
    return Interval(iv.n, iv.mean, iv.std, iv.low, iv.high, "paired-t", iv.note)
