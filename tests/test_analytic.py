"""Exact formulas used by `atmsim validate`, checked against independent known values."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from atmsim import analytic


def test_oc3c_slot():
    assert analytic.OC3C_SLOT_S == pytest.approx(2.831196581e-6, rel=1e-9)


def test_md1_pollaczek_khinchine():
    s = analytic.OC3C_SLOT_S
    assert analytic.md1_mean_wait(0.5) == pytest.approx(0.5 * s)
    assert analytic.md1_mean_wait(0.8) == pytest.approx(2.0 * s)
    assert analytic.md1_mean_wait(0.95) == pytest.approx(9.5 * s)
    assert analytic.md1_mean_wait(0.0) == 0.0
    # M/D/1 waits exactly half as long as M/M/1 (rho*S/(1-rho)) at the same load
    assert analytic.md1_mean_wait(0.7, 1.0) == pytest.approx(0.5 * 0.7 / 0.3)
    with pytest.raises(ValueError):
        analytic.md1_mean_wait(1.0)


@pytest.mark.parametrize("rho", [0.1, 0.5, 0.9, 1.0, 2.0])
def test_md1k_k1_is_erlang_loss(rho):
    assert analytic.md1k_loss(rho, 1) == pytest.approx(rho / (1 + rho), rel=1e-12)


def test_md1k_k2_closed_form():
    # K = 2: the departure chain has pi_0 = a_0 = e^-rho in both rows
    rho = 0.9
    assert analytic.md1k_loss(rho, 2) == pytest.approx(1 - 1 / (math.exp(-rho) + rho), rel=1e-12)


def test_md1k_decreasing_in_k_and_tends_to_zero():
    losses = [analytic.md1k_loss(0.9, k) for k in (1, 2, 4, 8, 16, 32, 64)]
    assert all(a > b for a, b in zip(losses, losses[1:]))
    assert losses[-1] < 1e-6
    assert analytic.md1k_loss(0.9, 8) == pytest.approx(0.027263595, rel=1e-6)


def test_md1k_overload_loss_tends_to_excess():
    # rho = 2, large K: the server is always busy, so carried = 1 and loss = 1 - 1/rho
    assert analytic.md1k_loss(2.0, 64) == pytest.approx(0.5, rel=1e-9)


def test_md1k_departure_distribution_is_a_distribution():
    pi = analytic.md1k_departure_distribution(0.9, 32)
    assert pi.shape == (32,)
    assert np.all(pi >= -1e-15)
    assert pi.sum() == pytest.approx(1.0)


def _md1k_loss_monte_carlo(rho, k, arrivals, seed):
    """Independent route: a direct event-by-event M/D/1/K simulation in Python
    (service = 1, K places including the cell in service)."""
    from collections import deque

    rng = np.random.default_rng(seed)
    t = np.cumsum(rng.exponential(1 / rho, arrivals))
    departures = deque()
    last = 0.0
    lost = 0
    for now in t:
        while departures and departures[0] <= now:
            departures.popleft()
        if len(departures) >= k:
            lost += 1
            continue
        last = max(now, last) + 1.0
        departures.append(last)
    return lost / arrivals


def test_md1k_matches_monte_carlo():
    p = _md1k_loss_monte_carlo(0.9, 8, 300_000, seed=7)
    assert p == pytest.approx(analytic.md1k_loss(0.9, 8), rel=0.06)


def test_ndd1_tail_known_points():
    n, d = 50, 60
    # P(Q > 0) is the server's busy fraction = load N/D exactly
    assert analytic.ndd1_tail(n, d, 0) == pytest.approx(n / d, rel=1e-9)
    # never more than N cells in the system
    assert analytic.ndd1_tail(n, d, n) == 0.0
    assert analytic.ndd1_tail(n, d, n + 5) == 0.0
    tail = [analytic.ndd1_tail(n, d, x) for x in range(0, 20)]
    assert all(a > b for a, b in zip(tail, tail[1:]))


def test_ndd1_single_source_never_queues():
    # one periodic source: exactly one cell in service for 1/D of the time, never 2
    assert analytic.ndd1_tail(1, 10, 0) == pytest.approx(0.1)
    assert analytic.ndd1_tail(1, 10, 1) == 0.0


@settings(max_examples=60, deadline=None, database=None)
@given(st.integers(1, 40), st.integers(1, 40))
def test_ndd1_busy_fraction_property(n, extra):
    d = n + extra
    assert analytic.ndd1_tail(n, d, 0) == pytest.approx(n / d, rel=1e-9)


def test_onoff_formulas():
    peak, mean, b = 100_000.0, 25_000.0, 100.0
    t_on, t_off = analytic.onoff_timing(peak, mean, b)
    assert t_on == pytest.approx(100 / 75_000)
    assert t_off == pytest.approx(3 * t_on)
    assert analytic.onoff_mean_rate(peak, mean, b) == pytest.approx(mean)
    assert analytic.onoff_mean_burst_cells(peak, mean, b) == pytest.approx(400 / 3)
    with pytest.raises(ValueError):
        analytic.onoff_timing(10.0, 20.0, 5.0)


def test_student_t_ci():
    m, lo, hi = analytic.student_t_ci([1.0, 2.0, 3.0])
    assert m == 2.0
    # t_{0.975, 2} = 4.302653; s = 1; half = 4.302653/sqrt(3)
    assert hi - m == pytest.approx(4.302653 / math.sqrt(3), rel=1e-6)
    assert m - lo == pytest.approx(hi - m)
    with pytest.raises(ValueError):
        analytic.student_t_ci([1.0])


def _ndd1_tail_monte_carlo(n, d, xs, realizations, seed):
    """Independent route: draw uniform phases, run the unfinished-work process for two
    periods (the second is stationary-periodic because the load is < 1 and the
    queue empties within the first), and measure the time fraction with work > x."""
    rng = np.random.default_rng(seed)
    acc = np.zeros(len(xs))
    for _ in range(realizations):
        ph = np.sort(rng.uniform(0, d, n))
        times = np.concatenate([ph, ph + d, [3.0 * d]])
        w = 0.0
        for i in range(len(times) - 1):
            w += 1.0
            t0, t1 = times[i], times[i + 1]
            # clip the segment to the measured period [d, 2d)
            a, b = max(t0, d), min(t1, 2 * d)
            if b > a:
                wa = max(w - (a - t0), 0.0)  # work at the start of the clipped segment
                for j, x in enumerate(xs):
                    if wa > x:
                        acc[j] += min(b - a, wa - x)
            w = max(w - (t1 - t0), 0.0)
    return acc / (realizations * d)


def test_ndd1_matches_monte_carlo():
    xs = [0, 1, 2, 4]
    mc = _ndd1_tail_monte_carlo(20, 30, xs, 3000, seed=3)
    for x, p in zip(xs, mc):
        assert p == pytest.approx(analytic.ndd1_tail(20, 30, x), rel=0.05, abs=2e-3)


def test_ip_over_aal5_cell_counts_match_domingo95_table2():
    # domingo95 Table 2, first row: 3, 7, 12, 23, 45 cells per ping of 64 … 2048 octets
    # (with a 1500-octet MTU, the 2048-octet ping is two fragments).
    from atmsim.analytic import ip_over_aal5_cells
    got = [ip_over_aal5_cells(n, mtu=1500) for n in (64, 256, 512, 1024, 2048)]
    assert got == [3, 7, 12, 23, 45]
    assert ip_over_aal5_cells(64) == 3


def test_aal5_cells_of_a_frame():
    # 1000 + 16 octets fill 21 cells and 8 octets of a 22nd; 1024 + 16 = 1040 → 22; 32 + 16 = 48 → 1
    from atmsim.analytic import aal5_cells
    assert [aal5_cells(1000), aal5_cells(1024), aal5_cells(32), aal5_cells(33)] == [22, 22, 1, 2]
    assert aal5_cells(32, overhead=8) == 1 and aal5_cells(41, overhead=8) == 2


def test_independent_pdu_loss():
    from atmsim.analytic import independent_pdu_loss
    assert independent_pdu_loss(0.0, 10) == 0.0
    assert independent_pdu_loss(1.0, 1) == 1.0
    assert abs(independent_pdu_loss(0.01, 23) - (1 - 0.99 ** 23)) < 1e-15


def test_fddi_saturated_utilisation():
    # One station: it sends T − D out of every two rotations, T + D (hand-derived from
    # the timed-token rules: THT alternates T − 2D and D).
    assert analytic.fddi_saturated_async_utilisation(1, 8e-3, 1e-3) == pytest.approx(7 / 9)
    # Many stations: tends to 1 − D/T.
    assert analytic.fddi_saturated_async_utilisation(10**6, 8e-3, 1e-3) == pytest.approx(7 / 8, rel=1e-6)
    assert analytic.fddi_saturated_async_utilisation(4, 1e-3, 0.0) == 1.0
    with pytest.raises(ValueError):
        analytic.fddi_saturated_async_utilisation(4, 1e-3, 1e-3)


def test_max_min_shares_by_hand():
    import math

    from atmsim.analytic import max_min_shares

    # dastangoo96's parking lot at 155 Mb/s: 155/4 on the last link, the rest by difference.
    got = max_min_shares({"l1": 155, "l2": 155, "l3": 155},
                         [["l1", "l2", "l3"], ["l2", "l3"], ["l3"], ["l1"], ["l2"], ["l3"]])
    assert got == pytest.approx([38.75, 38.75, 38.75, 116.25, 77.5, 38.75])
    # scenarios/examples/abr_two_switches.toml: B alone gives s1 36, A leaves s2 54, C leaves s3 80.784.
    assert max_min_shares({"A": 90, "B": 36, "C": 134.784}, [["A", "B"], ["A", "C"], ["C"]]) == pytest.approx(
        [36.0, 54.0, 80.784])
    # A demand of 10 frees the rest; an MCR of 60 above the level 30 stays at 60.
    assert max_min_shares({"l": 100}, [["l"]] * 3, demand=[10, math.inf, math.inf], mcr=[0, 0, 60]) == \
        pytest.approx([10, 30, 60])
    # An MCR below the share changes nothing.
    assert max_min_shares({"l": 100}, [["l"]] * 3, mcr=[0, 20, 0]) == pytest.approx([100 / 3] * 3)
    with pytest.raises(ValueError, match="minimum rates on link l"):
        max_min_shares({"l": 100}, [["l"]] * 2, mcr=[60, 60])
    with pytest.raises(ValueError, match="unbounded"):
        max_min_shares({"l": 100}, [["l"], []])


# --- M/D/1/K with partial buffer sharing (selective discard of CLP = 1 cells) -------

@pytest.mark.parametrize("rho0,rho1,k", [(0.5, 0.4, 8), (0.665, 0.285, 12), (1.5, 0.3, 5)])
def test_pbs_with_the_threshold_at_k_is_md1k(rho0, rho1, k):
    # T = K: both priorities see one K-place buffer, the M/D/1/K of Gross & Harris's
    # chain (an independent formula) at the total load.
    loss0, loss1 = analytic.md1k_pbs_loss(rho0, rho1, k, k)
    assert loss0 == pytest.approx(analytic.md1k_loss(rho0 + rho1, k), rel=1e-9)
    assert loss1 == pytest.approx(loss0, rel=1e-12)


@pytest.mark.parametrize("rho1,t", [(0.95, 6), (1.3, 3), (0.5, 1)])
def test_pbs_with_only_clp1_cells_is_md1k_at_the_threshold(rho1, t):
    # No CLP = 0 cells: the CLP = 1 cells see a buffer of T places.
    loss0, loss1 = analytic.md1k_pbs_loss(0.0, rho1, 12, t)
    assert loss1 == pytest.approx(analytic.md1k_loss(rho1, t), rel=1e-9)
    assert loss0 == 0.0


@pytest.mark.parametrize("rho0,rho1,k,t", [(0.6, 0.6, 16, 8), (0.665, 0.285, 12, 6), (0.2, 0.7, 10, 2)])
def test_pbs_carried_load_is_the_offered_load_less_the_losses(rho0, rho1, k, t):
    occ = analytic.md1k_pbs_occupancy(rho0, rho1, k, t)
    assert occ.min() >= 0 and occ.sum() == pytest.approx(1.0, abs=1e-12)
    loss0, loss1 = analytic.md1k_pbs_loss(rho0, rho1, k, t)
    # the server is busy exactly as much as the admitted cells need (one slot each)
    assert 1.0 - occ[0] == pytest.approx(rho0 * (1 - loss0) + rho1 * (1 - loss1), rel=1e-12)


def test_pbs_trades_clp1_loss_for_clp0_loss_as_the_threshold_moves():
    pairs = [analytic.md1k_pbs_loss(0.6, 0.6, 16, t) for t in (2, 4, 8, 12, 16)]
    loss0 = [p[0] for p in pairs]
    loss1 = [p[1] for p in pairs]
    assert loss0 == sorted(loss0) and loss1 == sorted(loss1, reverse=True)
    # protection: at T = 8 the CLP = 0 cells lose over three orders of magnitude less
    assert loss0[2] < 1e-3 * loss1[2]


def test_pbs_rejects_a_threshold_outside_the_buffer():
    with pytest.raises(ValueError):
        analytic.md1k_pbs_loss(0.5, 0.5, 8, 9)
    with pytest.raises(ValueError):
        analytic.md1k_pbs_loss(0.5, 0.5, 8, 0)


# --- M/D/1 with non-preemptive priority (Cobham) -------------------------------------

def test_priority_with_one_class_is_md1():
    assert analytic.md1_priority_waits([0.8])[0] == pytest.approx(analytic.md1_mean_wait(0.8), rel=1e-12)


@pytest.mark.parametrize("rhos", [[0.2, 0.3, 0.4], [0.5, 0.45], [0.1] * 9])
def test_priority_waits_obey_kleinrocks_conservation_law(rhos):
    # Equal service times: the load-weighted mean wait does not depend on the order
    # of service (Kleinrock vol. 2, section 3.4): it is the FIFO M/D/1 wait.
    waits = analytic.md1_priority_waits(rhos, 1.0)
    rho = sum(rhos)
    assert sum(r * w for r, w in zip(rhos, waits)) / rho == pytest.approx(analytic.md1_mean_wait(rho, 1.0), rel=1e-12)
    assert waits == sorted(waits)


def test_priority_needs_a_stable_queue():
    with pytest.raises(ValueError):
        analytic.md1_priority_waits([0.6, 0.5])
    with pytest.raises(ValueError):
        analytic.md1_priority_waits([0.5, -0.1])


# --- M/D/1 waiting-time distribution (Erlang) -----------------------------------------

@pytest.mark.parametrize("rho", [0.3, 0.6, 0.8])
def test_md1_wait_cdf_has_the_atom_and_the_pollaczek_khinchine_mean(rho):
    # P(W = 0) = 1 − ρ (an arrival finds the server idle), and the mean ∫(1 − F) dt
    # is Pollaczek–Khinchine's ρS/(2(1 − ρ)), a result derived without the distribution.
    assert analytic.md1_wait_cdf(0.0, rho, 1.0) == pytest.approx(1.0 - rho, rel=1e-12)
    grid = np.linspace(0.0, 25.0 / (1.0 - rho), int(250 / (1.0 - rho)) + 1)
    tail = np.array([1.0 - analytic.md1_wait_cdf(t, rho, 1.0) for t in grid])
    assert tail[-1] < 1e-9
    assert np.all(np.diff(tail) <= 1e-15)
    assert np.trapezoid(tail, grid) == pytest.approx(analytic.md1_mean_wait(rho, 1.0), rel=1e-4)


def test_md1_wait_distribution_matches_lindleys_recursion_solved_numerically():
    # An independent method: the stationary law of W' = max(0, W + S − A), A ~ Exp(λ),
    # on a grid of S/100, iterated to its fixed point (no simulation, no Erlang sum).
    rho, m = 0.7, 100
    h = 1.0 / m
    n = 60 * m
    # P(A rounds to jh): A in [(j − ½)h, (j + ½)h), λ = ρ per service time.
    edges = np.concatenate(([0.0], (np.arange(n + m + 1) + 0.5) * h))
    a = -np.diff(np.exp(-rho * edges))
    w = np.zeros(n)
    w[0] = 1.0
    for _ in range(3000):
        # W + S − A on the grid, as index i + m − j.
        shifted = np.convolve(w, a[::-1])        # index i − j + len(a) − 1
        v = shifted[len(a) - 1 - m:]             # index i + m − j, from 0 up
        new = np.zeros(n)
        new[0] = shifted[:len(a) - 1 - m + 1].sum()   # all mass at or below 0
        new[1:] = v[1:n]
        new /= new.sum()
        if np.abs(new - w).max() < 1e-13:
            break
        w = new
    cdf = np.cumsum(w)
    for t in (0.5, 1.0, 2.5, 5.0, 10.0, 20.0):
        assert cdf[int(round(t * m))] == pytest.approx(analytic.md1_wait_cdf(t, rho, 1.0), abs=2e-3)


def test_md1_delay_quantiles():
    s = analytic.OC3C_SLOT_S
    # Below the atom's level the delay is the cell's own service time.
    assert analytic.md1_delay_quantile(0.4, 0.5) == s
    for rho in (0.5, 0.9):
        for p in (0.6, 0.99, 0.99999):
            d = analytic.md1_delay_quantile(p, rho)
            assert analytic.md1_wait_cdf(d - s, rho) == pytest.approx(p, abs=1e-12)
    qs = [analytic.md1_delay_quantile(p, 0.8) for p in (0.5, 0.9, 0.99, 0.999)]
    assert qs == sorted(qs) and len(set(qs)) == 4
    with pytest.raises(ValueError):
        analytic.md1_delay_quantile(1.0, 0.5)
    with pytest.raises(ValueError):
        analytic.md1_wait_cdf(1.0, 1.0)
