"""Intervals that respect their statistic's domain (atmsim.stats), validated by coverage
over 1,000 simulated experiments with known answers (fixed seed)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from hypothesis import given, settings
from hypothesis import strategies as hst

from atmsim import _atmsim, analytic, plot, stats
from atmsim.stats import COUNT, NONNEGATIVE, PROPORTION, SIGNED, interval

EXPERIMENTS = 1000


def md1k_loss_ratios(rng: np.random.Generator, rho: float, k: int, services: int, shape) -> np.ndarray:
    """Per-run cell loss ratios of M/D/1/K (service time 1, Poisson(rho) arrivals per
    service), each run started from the stationary departure-epoch distribution, so
    that every run's expected loss ratio is the analytic one.  Losses come in bursts:
    the runs' cells are far from independent."""
    pi = analytic.md1k_departure_distribution(rho, k)
    q = rng.choice(k, size=shape, p=pi)
    lost = np.zeros(shape)
    arrived = np.zeros(shape)
    for _ in range(services):
        a = rng.poisson(rho, size=shape)
        present = np.maximum(q, 1)  # an empty system serves the next arrival
        accepted = np.minimum(a, k - present)
        lost += a - accepted
        arrived += a + (q == 0)
        q = present - 1 + accepted
    return lost / arrived


def coverage(data: np.ndarray, domain: str, truth: float) -> tuple[float, set[str]]:
    ivs = [interval(row, domain) for row in data]
    return sum(iv.low <= truth <= iv.high for iv in ivs) / len(ivs), {iv.method for iv in ivs}


def cases():
    rng = np.random.default_rng(19)
    e = EXPERIMENTS
    yield "M/D/1/K loss, rho 0.9, K 8, 5 runs", md1k_loss_ratios(rng, 0.9, 8, 2000, (e, 5)), PROPORTION, \
        analytic.md1k_loss(0.9, 8), {"wilson-eff"}
    yield "Bernoulli loss p 0.01, 5 runs", rng.binomial(2000, 0.01, size=(e, 5)) / 2000, PROPORTION, 0.01, \
        {"wilson-eff"}
    yield "rare Bernoulli loss p 0.001 (zero-loss runs), 10 runs", rng.binomial(2000, 0.001, size=(e, 10)) / 2000, \
        PROPORTION, 0.001, {"wilson-eff"}
    yield "normal, signed, 5 runs", rng.normal(-1.0, 2.0, size=(e, 5)), SIGNED, -1.0, {"t"}
    yield "gamma mean waits, 5 runs", rng.gamma(5.0, 2.0, size=(e, 5)), NONNEGATIVE, 10.0, {"log-t"}
    yield "log-normal, 8 runs", rng.lognormal(0.0, 0.8, size=(e, 8)), NONNEGATIVE, math.exp(0.32), {"log-t"}
    yield "Poisson(0.5) counts (mostly zeros), 10 runs", rng.poisson(0.5, size=(e, 10)), COUNT, 0.5, {"t0", "log-t"}
    yield "Poisson(3) counts, 10 runs", rng.poisson(3.0, size=(e, 10)), COUNT, 3.0, {"t0", "log-t"}


@pytest.mark.parametrize("name,data,domain,truth,methods", list(cases()), ids=lambda v: v if isinstance(v, str) else "")
def test_each_interval_covers_the_truth_93_to_97_percent(name, data, domain, truth, methods):
    got, used = coverage(data, domain, truth)
    assert used == methods, name
    assert 0.93 <= got <= 0.97, f"{name}: coverage {got:.3f}"


def test_md1k_simulation_agrees_with_the_formula():
    # the coverage test's "truth" is right for its simulated queue: 4 long runs
    x = md1k_loss_ratios(np.random.default_rng(5), 0.9, 8, 200_000, (4,))
    assert x.mean() == pytest.approx(analytic.md1k_loss(0.9, 8), rel=0.05)


def test_intervals_stay_in_their_domain():
    rng = np.random.default_rng(3)
    for _ in range(300):
        p = rng.binomial(500, 0.002, size=4) / 500
        iv = interval(p, PROPORTION)
        if not math.isnan(iv.low):
            assert 0.0 <= iv.low <= iv.mean <= iv.high <= 1.0
        c = rng.poisson(0.3, size=3).astype(float)
        iv = interval(c, COUNT)
        if not math.isnan(iv.low):
            assert iv.low >= 0.0
        r = rng.exponential(1.0, size=3)
        iv = interval(r, NONNEGATIVE)
        assert 0.0 < iv.low < iv.high


def test_wilson_matches_the_textbook_value():
    # 10 of 100 independent trials: Wilson 95% = [0.0552, 0.1744] (Newcombe 1998, Table I
    # style); with a huge number of runs the degrees-of-freedom factor is 1.
    lo, hi = stats.wilson_eff(0.1, 0.1 * 0.9 / 100, 10**9)
    assert (round(lo, 4), round(hi, 4)) == (0.0552, 0.1744)


def test_t_interval_matches_a_hand_computed_value():
    iv = interval([1.0, 2.0, 3.0, 4.0], SIGNED)
    # mean 2.5, s = 1.2910, t(0.975, 3) = 3.1824
    assert iv.method == "t"
    assert (iv.low, iv.high) == (pytest.approx(2.5 - 3.182446 * 1.290994 / 2, rel=1e-5),
                                  pytest.approx(2.5 + 3.182446 * 1.290994 / 2, rel=1e-5))


@pytest.mark.parametrize("values,note", [
    ([0.1, 0.2], "n = 2: too few for an interval"),
    ([5.0], "n = 1: too few for an interval"),
    ([], "no values"),
    ([0.0, 0.0, 0.0, 0.0], "all 4 values equal: no spread, no interval"),
    ([7.0, 7.0, 7.0], "all 3 values equal: no spread, no interval"),
])
def test_too_few_or_degenerate_give_no_interval_and_say_why(values, note):
    for dom in stats.DOMAINS:
        iv = interval(values, dom)
        assert math.isnan(iv.low) and math.isnan(iv.high) and iv.note == note


def test_negative_values_in_a_nonnegative_domain_fall_back_to_t():
    iv = interval([-1.0, 1.0, 3.0], NONNEGATIVE)
    assert iv.method == "t" and iv.low < 0


def test_positive_values_spread_over_many_orders_of_magnitude_give_an_unbounded_log_t_interval():
    # the log-scale upper bound is past the largest float: inf, not an OverflowError
    iv = interval([1.0, 1.0, 8.6e-79], COUNT)
    assert iv.method == "log-t" and iv.high == math.inf and 0.0 <= iv.low < iv.mean


def test_summarize_reports_domain_method_and_note():
    import pandas as pd

    rows = []
    for rep, (loss, cells) in enumerate([(0.01, 100), (0.02, 120), (0.0, 90)]):
        rows += [(0, rep, "mux", "q_loss_ratio", "value", loss, "1"),
                 (0, rep, "mux", "q_rx_cells", "count", cells, "cells"),
                 (1, rep, "mux", "q_loss_ratio", "value", 0.0, "1")]
    rows.append((2, 0, "mux", "q_wait", "mean", 1e-6, "s"))
    v = pd.DataFrame(rows, columns=["point", "replication", "component", "probe", "statistic", "value", "unit"])
    st = stats.summarize(v).set_index(["point", "probe"])
    assert list(stats.summarize(v).columns) == ["point", *stats.STAT_COLUMNS]
    r = st.loc[(0, "q_loss_ratio")]
    assert (r.domain, r.interval, r.ci_note) == (PROPORTION, "wilson-eff", "") and 0 <= r.ci_low < r.ci_high <= 1
    r = st.loc[(0, "q_rx_cells")]
    assert (r.domain, r.interval) == (COUNT, "log-t") and r.ci_low > 0
    assert st.loc[(1, "q_loss_ratio")].ci_note == "all 3 values equal: no spread, no interval"
    assert st.loc[(2, "q_wait")].ci_note == "n = 1: too few for an interval"


def test_summarize_groups_like_a_plain_groupby_over_shuffled_runs():
    """summarize() cuts one value array into groups; a plain groupby loop written here
    gives the same rows in the same order (first appearance, values in replication order,
    a missing unit a group of its own), whatever order the runs arrive in."""
    import pandas as pd

    rng = np.random.default_rng(7)
    rows = []
    for sweep in ("b", "a"):
        for point in (2, 0, 1):
            for rep in rng.permutation(4):
                for comp, probe, stat, unit in (("q", "q_loss_ratio", "value", "1"), ("q", "q_wait", "mean", "s"),
                                                ("h/tcp/vc1", "tcp_segments", "count", "1"), ("x", "odd", "value", None)):
                    rows.append((sweep, point, int(rep), comp, probe, stat, float(rng.random()), unit))
    v = pd.DataFrame(rows, columns=["sweep_key", "point", "replication", "component", "probe", "statistic", "value", "unit"])
    by = ["sweep_key", "point"]
    keys = by + ["component", "probe", "statistic", "unit"]
    want = []
    ordered = v.sort_values(by + ["replication"], kind="stable")
    for key, grp in ordered.groupby(keys, sort=False, dropna=False):
        dom = stats.domain_of(str(key[-3]), str(key[-2]), str(key[-1]))
        iv = interval(grp["value"].to_numpy(), dom)
        want.append((*key, iv.n, iv.mean, iv.std, iv.low, iv.high, iv.method, iv.note))
    got = stats.summarize(v, by=by)
    assert len(got) == len(want) == 2 * 3 * 4
    have = [(*r[:6], r.n, r.mean, r.std, r.ci_low, r.ci_high, r.interval, r.ci_note)
            for r in got[[*keys, "n", "mean", "std", "ci_low", "ci_high", "interval", "ci_note"]].itertuples(index=False)]
    for h, w in zip(have, want):
        assert h[:6] == w[:6] or (h[:5] == w[:5] and pd.isna(h[5]) and pd.isna(w[5]))
        assert h[6] == w[6] and h[11:] == w[11:]
        np.testing.assert_array_equal(np.array(h[7:11], dtype=float), np.array(w[7:11], dtype=float))


_PROBES = (("q_loss_ratio", "value", "1"), ("q_rx_cells", "count", "cells"), ("q_wait", "mean", "s"),
           ("odd", "value", "x"), ("tcp_segments", "count", "1"))
_VALUE = hst.one_of(hst.floats(-2.0, 3.0), hst.floats(0.0, 1.0), hst.floats(1e-12, 1e12),
                    hst.sampled_from([0.0, 1.0, 7.0, math.nan, math.inf, -math.inf]))


@settings(max_examples=60, deadline=None)
@given(hst.lists(hst.tuples(hst.integers(0, 4), hst.lists(_VALUE, max_size=140)), min_size=1, max_size=12))
def test_summarize_equals_interval_of_each_group_bit_for_bit(groups):
    """summarize() takes the moments of all groups of one size at once (rows of a
    matrix); every number equals interval() of that group's own values bit for bit:
    sizes either side of NumPy's pairwise-summation blocks, NaNs left out, infinities,
    equal values, negatives in a non-negative domain, proportions above 1."""
    import pandas as pd

    rows, want = [], []
    for g, (p, vals) in enumerate(groups):
        probe, statistic, unit = _PROBES[p]
        rows += [(g, r, "c", probe, statistic, v, unit) for r, v in enumerate(vals)]
        if vals:
            iv = interval(vals, stats.domain_of(probe, statistic, unit))
            want.append((iv.n, iv.mean, iv.std, iv.low, iv.high, iv.method, iv.note))
    v = pd.DataFrame(rows, columns=["point", "replication", "component", "probe", "statistic", "value", "unit"])
    got = stats.summarize(v)
    have = list(got[["n", "mean", "std", "ci_low", "ci_high", "interval", "ci_note"]].itertuples(index=False, name=None))
    assert len(have) == len(want)
    for h, w in zip(have, want):
        assert h[0] == w[0] and h[5:] == w[5:]
        np.testing.assert_array_equal(np.array(h[1:5], dtype=float).view(np.int64),
                                      np.array(w[1:5], dtype=float).view(np.int64))


def test_every_probe_of_every_kind_has_a_declared_domain():
    # A probe with unit "1" is a proportion or a count, and must say which; every other
    # unit must be a known non-negative one (or the probe is treated as signed: add it
    # here deliberately).
    for k in _atmsim.describe_kinds():
        for p in _atmsim.describe_kind(k["kind"])["probes"]:
            if p["name"] in stats.SIGNED_PROBES:
                assert stats.domain_of(p["name"], "value", p["unit"]) == SIGNED
            elif p["unit"] == "1":
                assert (p["name"] in stats.PROPORTION_PROBES) != (p["name"] in stats.COUNT_PROBES), \
                    f"{k['kind']}.{p['name']}: declare its domain in atmsim.stats"
            else:
                assert p["unit"] in stats.NONNEGATIVE_UNITS, f"{k['kind']}.{p['name']}: unit {p['unit']}"
    assert stats.domain_of("q_len_tail", "p_gt_4", "1") == PROPORTION
    assert stats.domain_of("q_loss_ratio", "value", "1") == PROPORTION
    assert stats.domain_of("q_drop_cells", "count", "cells") == COUNT
    assert stats.domain_of("sink_throughput", "value", "Mb/s") == NONNEGATIVE
    # one statistic of a probe may be a proportion where the others are rates
    assert stats.domain_of("sink_goodput", "ratio", "1") == PROPORTION
    assert stats.domain_of("sink_goodput", "value", "Mb/s") == NONNEGATIVE
    assert interval([0.999, 1.0, 1.0, 0.98], PROPORTION).high <= 1.0
    assert stats.domain_of("ring_frame_balance", "value", "frames") == SIGNED
    assert stats.domain_of("x", "value", "dB") == SIGNED


def test_target_uses_the_domain_interval():
    iv = interval([0.0, 0.0, 0.001, 0.0], PROPORTION)
    assert stats.relative_half_width(iv) > 1.0 and not stats.target_satisfied(iv, 0.5)
    assert stats.target_satisfied(interval([3.0, 3.0, 3.0], COUNT), 0.01)
    assert not stats.target_satisfied(interval([3.0, 3.0], COUNT), 0.01)  # n = 2 never meets a target


def test_log_axis_never_draws_a_whisker_below_what_the_interval_gives():
    s = plot.Series("x", [1, 2], [1e-3, 1e-2], [0.0, 5e-3], [3e-3, 2e-2])
    x, m, el, eu = plot._yerr(s, True)
    assert list(el) == [0.0, pytest.approx(5e-3)]  # no lower whisker for a bound at 0
    assert list(eu) == [pytest.approx(2e-3), pytest.approx(1e-2)]


def test_difference_interval_is_welchs_as_scipy_computes_it():
    from scipy.stats import ttest_ind

    a = np.array([94.1, 95.3, 93.0, 96.2, 94.8, 95.5])
    b = np.array([91.9, 93.8, 92.4, 90.1, 94.0, 92.7, 93.1])
    lo, hi = stats.difference_interval((a.size, a.mean(), a.std(ddof=1)), (b.size, b.mean(), b.std(ddof=1)))
    ref = ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    assert (lo, hi) == (pytest.approx(ref.low, rel=1e-9), pytest.approx(ref.high, rel=1e-9))


def test_ratio_interval_covers_the_true_ratio_about_95_percent():
    rng = np.random.default_rng(16)
    hits, trials = 0, 4000
    for _ in range(trials):
        a = rng.normal(10.0, 1.0, 6)
        b = rng.normal(4.0, 0.5, 8)
        lo, hi = stats.ratio_interval((6, a.mean(), a.std(ddof=1)), (8, b.mean(), b.std(ddof=1)))
        assert 0 < lo < a.mean() / b.mean() < hi
        hits += lo <= 2.5 <= hi
    assert 0.93 <= hits / trials <= 0.97, hits / trials


def test_comparison_intervals_need_three_values_and_some_spread():
    assert all(math.isnan(x) for x in stats.difference_interval((2, 1.0, 0.1), (6, 1.0, 0.1)))
    assert all(math.isnan(x) for x in stats.ratio_interval((6, 1.0, 0.0), (6, 2.0, 0.0)))
    assert all(math.isnan(x) for x in stats.ratio_interval((6, 0.0, 0.1), (6, 2.0, 0.1)))
    # one side without spread: the other's alone
    lo, hi = stats.difference_interval((6, 5.0, 0.0), (6, 3.0, 1.0))
    assert lo < 2.0 < hi and hi - 2.0 == pytest.approx(stats.t_quantile(6) / math.sqrt(6))


# --- paired differences (common random numbers) --------------------------------------------

_finite_value = hst.floats(min_value=-1e3, max_value=1e3, allow_nan=False, allow_infinity=False)


@settings(max_examples=200, deadline=None)
@given(hst.lists(hst.tuples(_finite_value, _finite_value), min_size=3, max_size=30))
def test_paired_difference_is_the_paired_t_test_interval_as_scipy_computes_it(pairs):
    from scipy.stats import ttest_rel

    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    iv = stats.paired_difference(a, b)
    d = a - b
    assert iv.n == len(pairs) and iv.method == "paired-t"
    assert iv.mean == pytest.approx(d.mean(), rel=1e-12, abs=1e-9)
    if np.ptp(d) == 0.0:  # no spread of the differences: no interval, and the note says so
        assert math.isnan(iv.low) and math.isnan(iv.high) and iv.note.startswith(f"all {len(pairs)} differences")
        return
    if d.std(ddof=1) < 1e-9 * max(1.0, float(np.abs(d).max())):
        return  # rounding-level spread: scipy and numpy may disagree on whether there is any
    ref = ttest_rel(a, b).confidence_interval(0.95)
    scale = max(1.0, abs(ref.low), abs(ref.high))
    assert iv.low == pytest.approx(ref.low, abs=1e-9 * scale)
    assert iv.high == pytest.approx(ref.high, abs=1e-9 * scale)


def test_paired_difference_on_correlated_runs_is_narrower_than_welch_and_covers_95_percent():
    # a common part (the same traffic into both configurations) with a large spread and a
    # small independent part per configuration: the situation common random numbers create
    rng = np.random.default_rng(1992)
    hits, narrower, trials = 0, 0, 4000
    for _ in range(trials):
        common = rng.normal(90.0, 3.0, 6)
        a = common + 1.0 + rng.normal(0.0, 0.3, 6)
        b = common + rng.normal(0.0, 0.3, 6)
        iv = stats.paired_difference(a, b)
        hits += iv.low <= 1.0 <= iv.high
        lo_w, hi_w = stats.difference_interval((6, a.mean(), a.std(ddof=1)), (6, b.mean(), b.std(ddof=1)))
        narrower += (iv.high - iv.low) < (hi_w - lo_w)
    assert 0.93 <= hits / trials <= 0.97, hits / trials
    assert narrower == trials


def test_paired_difference_drops_incomplete_pairs_and_says_when_runs_agree():
    iv = stats.paired_difference([1.0, 2.0, float("nan"), 4.0, 5.0], [0.5, None, 3.0, 3.0, 4.5])
    assert iv.n == 3 and iv.mean == pytest.approx((0.5 + 1.0 + 0.5) / 3)
    same = stats.paired_difference([80.0, 81.5, 79.0], [80.0, 81.5, 79.0])
    assert same.n == 3 and same.mean == 0.0 and math.isnan(same.low)
    assert same.note == "all 3 differences 0: the paired runs agree exactly"
    assert stats.paired_difference([1.0, 2.0], [0.0, 0.0]).note == "n = 2: too few for an interval"
    with pytest.raises(ValueError, match="equal lengths"):
        stats.paired_difference([1.0, 2.0, 3.0], [1.0, 2.0])
