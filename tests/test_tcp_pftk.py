"""TCP Reno (the host's 4.3BSD-Reno model) under independent random loss against the
PFTK throughput formula (Padhye, Firoiu, Towsley, Kurose, SIGCOMM 1998, eq. 31).

Scenario: scenarios/validation/tcp_pftk.toml (one bulk transfer, OC-3c, 20 ms each
way, independent cell loss on the data path only).  Every parameter of the formula is
derived here from the scenario's parameters, never fitted to the simulation:

* p    — segment loss probability; the cell loss probability of the `loss` component
         is set so that a 192-cell data segment is lost with probability p.
* RTT  — no-queueing round trip: 2·D + (192 + 1) + (2 + 1) OC-3c cell slots (a PDU of
         n cells takes n slots through the host NIC and one more through the link
         transmitter; checked with ping in docs/validation.md).
* b    — 2: the receiver ACKs every second full segment (delayed ACKs).
* Wmax — the 1048560-octet window in segments (does not bind here).
* T0   — the model's own RTO: BSD sets the retransmit timer to rxtcur 500 ms ticks and
         it fires on a tick, (rxtcur − 1) to rxtcur ticks later, on average
         (rxtcur − 0.5) ticks.  rxtcur is the median over all runs of the sender's
         end-of-run `tcp_rtt rto` probe (the median, because a run can end in the
         middle of a backed-off timeout sequence).

Replications run on threads (the native run releases the GIL).  Run with ``-s`` to
print the table that docs/validation.md quotes.
"""
from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import pytest

from conftest import ROOT

from atmsim import analytic, api

SCENARIO = ROOT / "scenarios" / "validation" / "tcp_pftk.toml"
SENDER = "snd/tcp/vc100"

#: (segment loss probability, simulated time per replication).  Higher loss rates
#: carry less data per second (cheap to simulate) and have rarer, longer loss cycles,
#: so they get longer runs.
POINTS = [(0.005, "120 s"), (0.01, "150 s"), (0.02, "300 s"), (0.05, "600 s")]
REPLICATIONS = 10
#: the BSD-increment comparison needs only its means
RENO_REPLICATIONS = 4
#: "a factor of 1.5 either way" (the expectation stated for this validation)
FACTOR = 1.5

# Formula parameters from the scenario (see the module docstring).
ONE_WAY_S = 0.020
MSS = 9140                      # MTU 9180 − 40 octets of IPv4 + TCP headers
WINDOW_OCTETS = 1_048_560
SLOW_TICK_S = 0.5
B = 2
DATA_CELLS = analytic.ip_over_aal5_cells(MSS, transport_header=20)   # 192
ACK_CELLS = analytic.ip_over_aal5_cells(0, transport_header=20)      # 2
RTT_S = 2 * ONE_WAY_S + (DATA_CELLS + 1 + ACK_CELLS + 1) * analytic.OC3C_SLOT_S
WMAX = WINDOW_OCTETS / MSS


def cell_loss_for(p_segment: float) -> float:
    """Cell loss probability that loses a DATA_CELLS-cell segment with p_segment."""
    return -math.expm1(math.log1p(-p_segment) / DATA_CELLS)


@dataclass(repr=False)
class Point:
    p: float
    duration: str
    throughput: list[float] = field(default_factory=list)    # b/s of acked data
    timeouts: list[float] = field(default_factory=list)
    fast_retransmits: list[float] = field(default_factory=list)
    retransmits: list[float] = field(default_factory=list)
    segments: list[float] = field(default_factory=list)
    rto: list[float] = field(default_factory=list)
    # filled in after all runs
    mean: float = math.nan
    ci_low: float = math.nan
    ci_high: float = math.nan
    pftk: float = math.nan

    def __repr__(self) -> str:
        return f"Point(p={self.p}, mean={self.mean:.6g} b/s, pftk={self.pftk:.6g} b/s)"

    @property
    def ratio(self) -> float:
        return self.mean / self.pftk

    @property
    def timeout_share(self) -> float:
        to, fr = sum(self.timeouts), sum(self.fast_retransmits)
        return to / (to + fr)


@dataclass
class Sweep:
    points: list[Point]
    rxtcur_ticks: float
    t0_s: float
    replications: int = REPLICATIONS

    def __repr__(self) -> str:
        return f"Sweep(T0={self.t0_s} s, {len(self.points)} points)"

    def table(self) -> str:
        lines = [
            f"RTT = {RTT_S * 1e3:.3f} ms, b = {B}, Wmax = {WMAX:.1f} segments, "
            f"rxtcur = {self.rxtcur_ticks:g} ticks -> T0 = {self.t0_s:g} s, "
            f"{self.replications} replications per point",
            "p_seg   simulated Mb/s  95% CI            PFTK Mb/s  ratio  timeouts  fast rexmt  TO share",
        ]
        for pt in self.points:
            lines.append(
                f"{pt.p:<6.3f}  {pt.mean / 1e6:>14.3f}  [{pt.ci_low / 1e6:7.3f}, {pt.ci_high / 1e6:7.3f}]  "
                f"{pt.pftk / 1e6:>9.3f}  {pt.ratio:5.2f}  {np.mean(pt.timeouts):8.1f}  "
                f"{np.mean(pt.fast_retransmits):10.1f}  {pt.timeout_share:8.3f}")
        return "\n".join(lines)


def run_sweep(increment: str, replications: int) -> Sweep:
    """All points with the congestion-avoidance increment ``increment`` (host parameter
    ``ca_increment``) on both hosts."""
    base = api.load(SCENARIO)
    points = [Point(p, d) for p, d in POINTS]
    jobs = [(pt, r) for pt in points for r in range(replications)]

    def one(job):
        pt, r = job
        sc = base.with_overrides({"drop.p": repr(cell_loss_for(pt.p)), "scenario.duration": pt.duration,
                                  "snd.ca_increment": increment})
        return pt, sc.run(run=r, progress=False)

    with ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1))) as pool:
        results = list(pool.map(one, jobs))
    for pt, res in results:  # map keeps the job order: run numbers ascend per point
        def get(probe, stat):
            return res.value(SENDER, probe, stat)
        pt.throughput.append(get("tcp_throughput", "value"))
        pt.timeouts.append(get("tcp_timeouts", "count"))
        pt.fast_retransmits.append(get("tcp_fast_retransmits", "count"))
        pt.retransmits.append(get("tcp_retransmits", "count"))
        pt.segments.append(get("tcp_segments", "count"))
        pt.rto.append(get("tcp_rtt", "rto"))
    rxtcur = float(np.median([rto for pt in points for rto in pt.rto])) / SLOW_TICK_S
    t0 = (rxtcur - 0.5) * SLOW_TICK_S
    for pt in points:
        pt.mean, pt.ci_low, pt.ci_high = analytic.student_t_ci(pt.throughput)
        pt.pftk = analytic.pftk_throughput(RTT_S, pt.p, t0, b=B, wmax_segments=WMAX, mss_bytes=MSS)
    s = Sweep(points, rxtcur, t0, replications)
    print(f"\nca_increment = {increment}\n" + s.table())
    return s


@pytest.fixture(scope="module")
def sweep() -> Sweep:
    """PFTK's window model: +1/b segment per round in congestion avoidance, i.e. the
    RFC 2581 increment mss²/cwnd per ACK. Everything else is the 4.3BSD-Reno model."""
    return run_sweep("rfc2581", REPLICATIONS)


@pytest.fixture(scope="module")
def sweep_reno() -> Sweep:
    """The 4.3BSD-Reno increment mss²/cwnd + mss/8 per ACK (the default)."""
    return run_sweep("reno", RENO_REPLICATIONS)


# ----------------------------------------------------------------- the formula itself
def test_pftk_formula_limits_and_a_hand_computed_value():
    rtt, t0 = 0.1, 1.0
    # Tiny loss: the timeout term vanishes and eq. 31 becomes the square-root law
    # B = (1/RTT)·√(3/(2bp)) segments/s (PFTK eq. 20; Mathis et al. 1997).
    p = 1e-8
    assert analytic.pftk_throughput(rtt, p, t0, b=2, mss_bytes=1) / 8 == pytest.approx(
        math.sqrt(3 / (4 * p)) / rtt, rel=1e-3)
    # By hand: p = 0.02, b = 2: RTT·√(2bp/3) = 0.1·√(0.08/3) = 0.0163299;
    # 3·√(3bp/8) = 3·√0.015 = 0.367423; T0 term = 1·0.367423·0.02·(1 + 32·0.0004) = 0.0074425;
    # B = 1/0.0237724 = 42.065 segments/s.
    assert analytic.pftk_throughput(rtt, 0.02, t0, b=2, mss_bytes=1000) == pytest.approx(
        42.065 * 8000, rel=1e-4)
    # min(1, ·) saturates: at p = 0.5, b = 1, 3·√(3·0.5/8) > 1.
    got = analytic.pftk_throughput(rtt, 0.5, t0, b=1, mss_bytes=1) / 8
    assert got == pytest.approx(1 / (rtt * math.sqrt(1 / 3) + t0 * 0.5 * (1 + 32 * 0.25)))
    # Wmax/RTT caps it, and a larger RTT, loss or T0 never helps.
    assert analytic.pftk_throughput(rtt, 1e-6, t0, wmax_segments=10, mss_bytes=1) == pytest.approx(10 / rtt * 8)
    base = analytic.pftk_throughput(rtt, 0.01, t0)
    assert analytic.pftk_throughput(2 * rtt, 0.01, t0) < base
    assert analytic.pftk_throughput(rtt, 0.02, t0) < base
    assert analytic.pftk_throughput(rtt, 0.01, 2 * t0) < base
    for bad in [(rtt, 0.0, t0), (rtt, 1.0, t0), (0.0, 0.01, t0), (rtt, 0.01, 0.0)]:
        with pytest.raises(ValueError):
            analytic.pftk_throughput(*bad)


def test_formula_parameters_from_the_scenario():
    assert (DATA_CELLS, ACK_CELLS) == (192, 2)
    assert RTT_S == pytest.approx(0.040555, abs=1e-6)
    # The window does not bind: Wmax/RTT is above the OC-3c data rate
    # (149.76 Mb/s · 9140·8 / (192·424) = 134.5 Mb/s of TCP data at best).
    assert WMAX / RTT_S * MSS * 8 > analytic.OC3C_BPS
    assert 1 - (1 - cell_loss_for(0.02)) ** DATA_CELLS == pytest.approx(0.02, rel=1e-12)


# --------------------------------------------------------------------- the simulation
@pytest.mark.parametrize("p", [p for p, _ in POINTS])
def test_throughput_within_a_factor_1_5_of_pftk(sweep, p):
    pt = next(x for x in sweep.points if x.p == p)
    assert 1 / FACTOR <= pt.ratio <= FACTOR, (
        f"p_seg = {p}: simulated {pt.mean / 1e6:.3f} Mb/s (95% CI {pt.ci_low / 1e6:.3f} .. "
        f"{pt.ci_high / 1e6:.3f}), PFTK {pt.pftk / 1e6:.3f} Mb/s, ratio {pt.ratio:.2f}\n" + sweep.table())


def test_rto_probe_is_whole_ticks_near_the_floor(sweep):
    # With a 40 ms RTT and 500 ms ticks the BSD estimator sits near its 2-tick floor;
    # the probe is a whole number of ticks.
    rtos = [r for pt in sweep.points for r in pt.rto]
    assert all(r / SLOW_TICK_S == pytest.approx(round(r / SLOW_TICK_S)) for r in rtos)
    assert all(r >= 1.0 for r in rtos)
    assert 2 <= sweep.rxtcur_ticks <= 4


def test_throughput_decreases_with_loss(sweep):
    pts = sweep.points
    for lo, hi in zip(pts, pts[1:]):
        # separated intervals, not just ordered means
        assert hi.ci_high < lo.ci_low, sweep.table()


def test_tcp_sees_the_configured_segment_loss(sweep):
    # Each lost segment is retransmitted at least once; a timeout also resends (go-back-N)
    # some segments that had arrived, so retransmits/segments is p or a little more.
    for pt in sweep.points:
        frac = sum(pt.retransmits) / sum(pt.segments)
        assert pt.p * 0.9 <= frac <= pt.p * 1.3, (pt.p, frac)


def test_timeouts_and_fast_retransmits_both_occur_and_timeouts_grow_with_loss(sweep):
    pts = sweep.points
    # At the two higher loss rates every replication has both kinds of loss recovery.
    for pt in pts[-2:]:
        assert min(pt.timeouts) > 0 and min(pt.fast_retransmits) > 0, sweep.table()
    # Smaller windows leave fewer segments to generate three duplicate ACKs: the share of
    # losses recovered by a timeout rises with the loss rate (PFTK's Q(w) ≈ min(1, 3/w)).
    shares = [pt.timeout_share for pt in pts]
    assert all(a < b for a, b in zip(shares, shares[1:])), sweep.table()
    # At low loss fast retransmit does most of the work.
    assert shares[0] < 0.2, sweep.table()


def test_bsd_increment_opens_faster_than_pftk_assumes(sweep, sweep_reno):
    """4.3BSD-Reno adds mss/8 per ACK on top of mss²/cwnd ("to help larger windows open
    quickly enough"): (1 + W/8)/b segments per round instead of PFTK's 1/b, so the
    default model is faster than PFTK predicts, the more so the larger the window
    (the lower the loss). docs/validation.md gives both ratios."""
    for rfc, reno in zip(sweep.points, sweep_reno.points):
        assert reno.mean > rfc.mean, (rfc.p, reno.mean, rfc.mean)
        assert 1.0 < reno.ratio < 3.0, sweep_reno.table()
    ratios = [pt.ratio for pt in sweep_reno.points]
    assert ratios[0] > ratios[-1], sweep_reno.table()
