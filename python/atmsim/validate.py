"""``atmsim validate``: simulated results against exact queueing theory.

Each *experiment* is one scenario from ``scenarios/validation/`` with ``--set`` style
overrides, run as independent replications (run numbers 0..R−1, same master seed;
the kernel derives independent random streams from the run number).  Each *case*
reads one probe statistic from every replication and compares the mean with an exact
value from :mod:`atmsim.analytic` — computed with numpy/scipy, never from atmsim
output.

Verdicts
--------
* ``PASS``  — the exact value lies inside the 95% Student-t confidence interval of the
  replication mean, or the relative difference is below ``RTOL`` (1e-5).  ``RTOL`` only
  matters when the CI is degenerate or extremely narrow: simulated time is integer
  picoseconds, so a service time such as the OC-3c slot (2,831,196.58 ps) is rounded
  by up to 0.5 ps (≤ 2e-7 relative), and rates are exact; 1e-5 covers that rounding
  with margin while being orders of magnitude below any modelling error worth catching.
* ``PASS*`` — outside the per-case 95% CI but inside the Bonferroni-adjusted interval
  (confidence 1 − 0.05/m for m cases).  With ~20 cases at 95% each, one or two misses
  are *expected* by chance (1 − 0.95^20 ≈ 64% chance of at least one), so the family
  of intervals is only a 95% statement after this adjustment.  Reported, not hidden.
* ``FAIL``  — outside the adjusted interval.  Any FAIL → exit status 1.

Two kinds of case are not a CI around a mean: a *bound* (``bound=True``: every
replication's value must be at most ``expected``, e.g. the FDDI token rotation ≤ TTRT on
average and ≤ 2·TTRT at most) and a deterministic run with an *absolute tolerance*
(``atol``, justified beside the case by exact arithmetic, e.g. the saturated FDDI ring:
periodic with period nT + D, so a window of W seconds differs from the cycle average by
less than (nT + D)/W).

Seeds are fixed, so a given build always gives the same table.

Quick mode (``--quick``, used by ``make test``) runs fewer/shorter replications and
must finish in under two minutes on two cores; full mode is documented in
docs/validation.md.
"""
from __future__ import annotations

import json
import math
import os
import sys
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from atmsim import analytic
from atmsim.api import Result, Scenario, load, loads
from atmsim.exceptions import AtmsimWarning
from atmsim.progress import stderr_is_tty

#: see module doc
RTOL = 1e-5
CONFIDENCE = 0.95


@dataclass
class Case:
    group: str
    label: str
    expected: float
    unit: str
    component: str
    probe: str
    statistic: str
    samples: list[float] = field(default_factory=list)
    #: absolute tolerance of a deterministic case (see module doc); 0: none
    atol: float = 0.0
    #: an upper bound every replication must meet, not a mean to estimate
    bound: bool = False
    #: reads the sample from a run instead of (component, probe, statistic)
    extract: Optional[Callable[[Result], float]] = None
    #: reported, not a pass/fail criterion: verdict "met" / "NOT met" against the
    #: bound (or "REPORT" without one), never FAIL (what an algorithm does not promise)
    report: bool = False
    # filled in by evaluate()
    mean: float = math.nan
    ci_low: float = math.nan
    ci_high: float = math.nan
    adj_low: float = math.nan
    adj_high: float = math.nan
    verdict: str = "?"


@dataclass
class Experiment:
    scenario: str          # file name in scenarios/validation/ (or a label, with text)
    overrides: dict[str, str]
    replications: int
    cases: list[Case]
    #: scenario text generated here (the random max-min topologies) instead of a file
    text: Optional[str] = None


def scenario_dir() -> Path:
    """scenarios/validation/: $ATMSIM_SCENARIOS, else the source tree this package is
    running from (maturin develop), else ./scenarios."""
    env = os.environ.get("ATMSIM_SCENARIOS")
    candidates = [Path(env) / "validation"] if env else []
    candidates += [Path(__file__).resolve().parents[2] / "scenarios" / "validation",
                   Path.cwd() / "scenarios" / "validation"]
    for c in candidates:
        if c.is_dir():
            return c
    from atmsim.exceptions import ScenarioError

    raise ScenarioError("cannot find scenarios/validation/ (set ATMSIM_SCENARIOS to the scenarios directory)")


def _mbps(x: float) -> str:
    return f"{x:.9g} Mb/s"


def _fmt_s(x: float) -> str:
    return f"{x:.9g} s"


# --------------------------------------------------------------------------- cases
# Replication counts and run lengths.  The M/D/1 relaxation time is about
# S/(1−√ρ)² (≈1,560 slots ≈ 4.4 ms at ρ = 0.95); warm-ups are many times longer.
# `quick` is sized for CI (< 2 min on 2 cores), `full` for tight intervals.
PLAN = {
    # M/D/1 and M/D/1/K: {load or K: (replications, duration s, warm-up s)}.
    # On-off: one cycle is T_on + T_off = 5.3 ms; 100 s is ~19,000 cycles.
    # N*D/D/1: (runs, duration, warm-up).  Phases are drawn once per run, so only
    # more runs (not longer ones) shrink the CI; the per-run tail estimates are very
    # skewed (most runs never exceed x = 8), and with 200 runs the Student-t interval
    # under-covers badly — a few thousand runs are needed for honest tails.
    "quick": {
        "md1": {0.5: (20, 5.0, 0.05), 0.8: (20, 10.0, 0.1), 0.95: (20, 20.0, 0.5)},
        "md1k": {8: (20, 5.0, 0.05), 32: (20, 20.0, 0.1)},
        "pbs": (20, 5.0, 0.05),
        "priority": (20, 5.0, 0.05),
        "onoff": (20, 100.0, 0.5),
        "ndd1": (4000, 1e-3, 0.4e-3),
        "indep_loss": 15,
        "gcra": (10, 1.0, 0.01),
        "fddi": (2, 2.0, 0.1),
        "maxmin": (20, 1.0, 0.5),
        "maxmin_other": 5,
        "maxmin_eprca_single": 5,
    },
    "full": {
        "md1": {0.5: (50, 20.0, 0.1), 0.8: (50, 40.0, 0.2), 0.95: (50, 100.0, 1.0)},
        "md1k": {8: (50, 20.0, 0.1), 32: (50, 100.0, 0.2)},
        "pbs": (50, 20.0, 0.1),
        "priority": (50, 20.0, 0.1),
        "onoff": (50, 500.0, 1.0),
        "ndd1": (40000, 1e-3, 0.4e-3),
        "indep_loss": 100,
        "gcra": (40, 10.0, 0.01),
        "fddi": (2, 20.0, 0.1),
        "maxmin": (20, 2.0, 1.0),
        "maxmin_other": 20,
        "maxmin_eprca_single": 20,
    },
}

# Saturated FDDI ring (scenarios/validation/fddi.toml): n stations, TTRT, ring latency
# D = n × (station delay + fibre/n at 5 us/km).  The run is deterministic (saturated
# stations draw no random numbers): two replications give the degenerate CI the
# Student-t interval needs, and the tolerance is exact arithmetic (module doc).
FDDI_N = 4
FDDI_TTRT_S = 1e-3
FDDI_LATENCY_S = 4 * 1e-6 + 1.2 * 5e-6

# M/D/1 delay quantiles compared (sink statistic, level): the sink's HDR histogram keeps
# 3 significant digits (0.1%, far inside the intervals), and each run's sample quantile
# is the estimate; beyond 0.9999 the runs' few hundred tail cells would make the
# intervals too wide to say anything.
MD1_QUANTILES = (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p99_9", 0.999), ("p99_99", 0.9999))

# Independent cell loss: ping data lengths (octets) and the cell loss probability of
# scenarios/validation/indep_loss.toml.
INDEP_LOSS_P = 0.01
#: the frame of scenarios/validation/one_frame.txt (octets)
FRAMES_LOSS_OCTETS = 1000
INDEP_LOSS_LENGTHS = (64, 1024, 4096)

# GCRA(T, k·T) policing Poisson cells at load GCRA_LOAD: (k, algorithm) per case.
GCRA_T_US = 10.0
GCRA_LOAD = 0.9
GCRA_CASES = ((0, "virtual-scheduling"), (3, "virtual-scheduling"), (3, "leaky-bucket"), (7, "leaky-bucket"))

# Partial buffer sharing (selective discard of CLP = 1 cells): (load of CLP = 0 cells,
# load of CLP = 1 cells, K, T) per case: an overload the CLP = 1 cells absorb, and a
# load below 1 with a small buffer, both with CLP = 0 losses large enough to count.
PBS_CASES = ((0.6, 0.6, 16, 8), (0.665, 0.285, 12, 6))

# Non-preemptive priority at a per-VC switch port: the loads of VCs 1, 2, 3 at levels
# 0, 1, 2 (scenarios/validation/priority.toml).
PRIORITY_LOADS = (0.2, 0.3, 0.4)

# On-off source parameters (buddhikot92 style: peak/mean = 4, burst factor B).
ONOFF_PEAK_MBPS = 42.4    # 100,000 cells/s
ONOFF_MEAN_MBPS = 10.6    # 25,000 cells/s
ONOFF_BURST_FACTOR = 100  # cells
# N*D/D/1: N CBR sources of period D OC-3c slots.
NDD1_N = 50
NDD1_D = 60
NDD1_MIN_PROB = 1e-3      # compare only where the exact tail probability exceeds this


def build_plan(quick: bool) -> list[Experiment]:
    plan = PLAN["quick" if quick else "full"]
    exps: list[Experiment] = []

    for rho, (reps, dur, warm) in plan["md1"].items():
        # The same runs give the delay's quantiles (waiting time plus the cell's own
        # slot), at the levels above the waiting time's atom of 1 − ρ at zero.
        quantiles = [Case("M/D/1 cell delay quantile (Erlang)", f"rho={rho} {stat}",
                          analytic.md1_delay_quantile(p, rho), "s", "sink/vc1", "sink_delay", stat)
                     for stat, p in MD1_QUANTILES if p > 1.0 - rho]
        exps.append(Experiment(
            "md1.toml",
            {"src.rate": _mbps(rho * 149.76), "scenario.duration": _fmt_s(dur), "scenario.warmup": _fmt_s(warm),
             "sink.delay_quantiles": "true"},
            reps,
            [Case("M/D/1 mean wait (PK)", f"rho={rho}", analytic.md1_mean_wait(rho), "s", "mux", "q_wait", "mean"),
             *quantiles],
        ))

    rho = 0.9
    for k, (reps, dur, warm) in plan["md1k"].items():
        exps.append(Experiment(
            "md1k.toml",
            {"src.rate": _mbps(rho * 149.76), "mux.capacity": f"{k} cells",
             "scenario.duration": _fmt_s(dur), "scenario.warmup": _fmt_s(warm)},
            reps,
            [Case("M/D/1/K loss", f"rho={rho} K={k}", analytic.md1k_loss(rho, k), "", "mux", "q_loss_ratio", "value")],
        ))

    reps, dur, warm = plan["pbs"]
    for rho0, rho1, k, t in PBS_CASES:
        loss0, loss1 = analytic.md1k_pbs_loss(rho0, rho1, k, t)
        label = f"rho0={rho0} rho1={rho1} K={k} T={t}"
        exps.append(Experiment(
            "pbs.toml",
            {"hi.rate": _mbps(rho0 * 149.76), "lo.rate": _mbps(rho1 * 149.76), "mux.capacity": f"{k} cells",
             "mux.clp_threshold": f"{t} cells", "scenario.duration": _fmt_s(dur), "scenario.warmup": _fmt_s(warm)},
            reps,
            [Case("M/D/1/K partial buffer sharing, CLP=0 loss", label, loss0, "", "hi", "flow_loss_ratio", "value"),
             Case("M/D/1/K partial buffer sharing, CLP=1 loss", label, loss1, "", "lo", "flow_loss_ratio", "value")],
        ))

    reps, dur, warm = plan["priority"]
    waits = analytic.md1_priority_waits(list(PRIORITY_LOADS))
    exps.append(Experiment(
        "priority.toml",
        {**{f"{c}.rate": _mbps(r * 149.76) for c, r in zip("abc", PRIORITY_LOADS)},
         "scenario.duration": _fmt_s(dur), "scenario.warmup": _fmt_s(warm)},
        reps,
        [Case("M/D/1 non-preemptive priority (Cobham): wait + 1 cell", f"level {k}, rho={PRIORITY_LOADS}",
              w + analytic.OC3C_SLOT_S, "s", f"sink/vc{k + 1}", "sink_delay", "mean")
         for k, w in enumerate(waits)],
    ))

    reps, dur, warm = plan["onoff"]
    peak_cps = ONOFF_PEAK_MBPS * 1e6 / analytic.CELL_BITS
    mean_cps = ONOFF_MEAN_MBPS * 1e6 / analytic.CELL_BITS
    exps.append(Experiment(
        "onoff.toml",
        {"src.peak": _mbps(ONOFF_PEAK_MBPS), "src.mean": _mbps(ONOFF_MEAN_MBPS),
         "src.burst_factor": f"{ONOFF_BURST_FACTOR} cells",
         "scenario.duration": _fmt_s(dur), "scenario.warmup": _fmt_s(warm)},
        reps,
        [
            Case("on-off source", "mean rate",
                 analytic.onoff_mean_rate(peak_cps, mean_cps, ONOFF_BURST_FACTOR) * analytic.CELL_BITS / 1e6,
                 "Mb/s", "src", "src_tx_rate", "mean"),
            Case("on-off source", "mean burst",
                 analytic.onoff_mean_burst_cells(peak_cps, mean_cps, ONOFF_BURST_FACTOR),
                 "cells", "src", "src_burst_cells", "mean"),
        ],
    ))

    reps, dur, warm = plan["ndd1"]
    cases = []
    for x in range(0, 13):
        p = analytic.ndd1_tail(NDD1_N, NDD1_D, x)
        if p > NDD1_MIN_PROB:
            cases.append(Case(f"{NDD1_N}*D/D/1 tail (D={NDD1_D})", f"P(Q>{x})", p, "", "mux", "q_len_tail", f"p_gt_{x}"))
    exps.append(Experiment(
        "ndd1.toml", {"scenario.duration": _fmt_s(dur), "scenario.warmup": _fmt_s(warm)}, reps, cases,
    ))

    # The receiver's AAL5 reassembly timeout (0.5 ms) is shorter than the ping interval
    # (1 ms), so a request whose end-of-PDU cell was lost is discarded alone: loss is
    # exactly 1 - (1 - p)^n.  With a timeout longer than the interval, the cells of a
    # request that lost its end-of-PDU cell are merged with the next request, which then
    # fails the AAL5 length/CRC check too: loss becomes 1 - (1 - p)^(n + 1) for
    # back-to-back requests on one VC (the first request has no predecessor: a bias of
    # about p/300, far inside the interval).
    reps = plan["indep_loss"]
    for length in INDEP_LOSS_LENGTHS:
        n = analytic.ip_over_aal5_cells(length)
        exps.append(Experiment(
            "indep_loss.toml", {"a.length": f"{length} B", "drop.p": repr(INDEP_LOSS_P), "b.reassembly_timeout": "0.5 ms"},
            reps,
            [Case("independent loss 1-(1-p)^n", f"p={INDEP_LOSS_P} ping {length} B (n={n})",
                  analytic.independent_pdu_loss(INDEP_LOSS_P, n), "", "a", "ping_loss", "value")],
        ))
    g_reps, g_dur, g_warm = plan["gcra"]
    for k, algorithm in GCRA_CASES:
        exps.append(Experiment(
            "gcra.toml",
            {"src.rate": f"{GCRA_LOAD / (GCRA_T_US * 1e-6)!r} cells/s", "upc.increment": f"{GCRA_T_US} us",
             "upc.cdvt": f"{k * GCRA_T_US} us", "upc.algorithm": algorithm,
             "scenario.duration": _fmt_s(g_dur), "scenario.warmup": _fmt_s(g_warm)},
            g_reps,
            [Case("GCRA(T, kT) = M/D/1/(k+1) loss", f"rho={GCRA_LOAD} k={k} {algorithm}",
                  analytic.md1k_loss(GCRA_LOAD, k + 1), "", "upc", "upc_nonconforming_ratio", "value")],
        ))

    f_reps, f_dur, f_warm = plan["fddi"]
    cycle = FDDI_N * FDDI_TTRT_S + FDDI_LATENCY_S
    exps.append(Experiment(
        "fddi.toml", {"scenario.duration": _fmt_s(f_dur), "scenario.warmup": _fmt_s(f_warm)}, f_reps,
        [
            Case("FDDI saturated asynchronous throughput n(T-D)/(nT+D)", f"n={FDDI_N} T=1 ms D=10 us",
                 analytic.fddi_saturated_async_utilisation(FDDI_N, FDDI_TTRT_S, FDDI_LATENCY_S), "", "ring",
                 "ring_utilisation", "value", atol=cycle / (f_dur - f_warm)),
            Case("FDDI token rotation (Sevcik-Johnson)", "mean <= TTRT", FDDI_TTRT_S, "s", "ring",
                 "mac_token_rotation", "mean", bound=True),
            Case("FDDI token rotation (Sevcik-Johnson)", "max <= 2 TTRT", 2 * FDDI_TTRT_S, "s", "ring",
                 "mac_token_rotation", "max", bound=True),
            Case("FDDI frame conservation", "generated - delivered - dropped - in flight", 0.0, "frames", "ring",
                 "ring_frame_balance", "value", atol=0.5),
        ],
    ))

    # A sink's frame books under the same loss: frames merged by a lost last cell make a
    # frame whole with probability (1-p)^(n+1), and each frame sent brings n(1-p) cells,
    # so the whole frames' share of the cells received is (1-p)^n.
    n = analytic.aal5_cells(FRAMES_LOSS_OCTETS)
    exps.append(Experiment(
        "frames_loss.toml", {"drop.p": repr(INDEP_LOSS_P)}, reps,
        [Case("goodput ratio (1-p)^n", f"p={INDEP_LOSS_P} frames of {FRAMES_LOSS_OCTETS} B (n={n})",
              1.0 - analytic.independent_pdu_loss(INDEP_LOSS_P, n), "", "sink/vc1", "sink_goodput", "ratio")],
    ))

    n = analytic.ip_over_aal5_cells(64)
    exps.append(Experiment(
        "indep_loss.toml", {"a.length": "64 B", "drop.p": repr(INDEP_LOSS_P), "b.reassembly_timeout": "1 s"}, reps,
        [Case("lost end-of-PDU merges two PDUs", f"p={INDEP_LOSS_P} ping 64 B: 1-(1-p)^(n+1), n={n}",
              analytic.independent_pdu_loss(INDEP_LOSS_P, n + 1), "", "a", "ping_loss", "value")],
    ))
    exps += maxmin_experiments(plan["maxmin"])
    exps += maxmin_other_experiments(plan["maxmin"], plan["maxmin_other"])
    exps += maxmin_eprca_single_experiments(plan["maxmin"], plan["maxmin_eprca_single"])
    exps += maxmin_erica_plus_experiments(plan["maxmin"], plan["maxmin_other"])
    return exps


# ERICA on random topologies against max-min shares computed by water-filling
# (atmsim.analytic.max_min_shares, atmsim.maxmin.random_topology): 20 topologies, 2-8
# switches, 2-20 greedy, MCR or source-limited sessions. The runs draw no random
# numbers (greedy or constant-rate sources): one replication, a bound per topology on
# the largest relative deviation of a session's data rate from 31/32 of its share.
#
# ERICA here gives each VC one ER per averaging interval (`single_feedback`, 96-1172):
# without it a VC sending several backward RM cells per 1 ms interval is divided by
# the same overload factor once per cell (CCR/z, CCR/z^2, ...) and the rates run a
# limit cycle whose time average misses the share (topology 5: 7.1%, NOT met; with it
# all 20 within 5%: docs/log/abr.md, "ERICA on the random topologies").
#
# The bound. ERICA's steady states are not one point: while the load factor z is at
# most 1 + delta, ER = max(fair share, VCShare, MaxAllocPrevious), so a session at its
# share may hold up to (1 + delta) times it, and a session that takes the remainder of
# a link loses what the others hold above their shares. With delta = 0.04 (the run's
# setting; 96-1172's example is 0.1) the first is 4% and the second, on these
# topologies, up to a few per cent more; the RM rate format rounds ER down by < 0.2%.
# The criterion is 5% per session: each topology has a row reported against
# it (met / NOT met, never hidden). The pass/fail case beside it is a regression bound
# at 10%, the tolerance the issue gives EPRCA-ER, not the target
# (docs/validation.md lists the measured values).
MAXMIN_DELTA = 0.04
MAXMIN_BOUND = 0.10
MAXMIN_ERICA_TARGET = 0.05


def _maxmin_deviation(shares: list[float]):
    from atmsim.maxmin import DATA_FRACTION

    def extract(res: Result) -> float:
        worst = 0.0
        for i, share in enumerate(shares):
            v = i + 1
            got = res.value(f"d{v}/vc{v}", "sink_throughput", "value")
            worst = max(worst, abs(got / (share * DATA_FRACTION) - 1.0))
        return worst

    return extract


def maxmin_experiments(plan: tuple[int, float, float]) -> list[Experiment]:
    from atmsim.maxmin import random_topology

    count, dur, warm = plan
    exps = []
    for seed in range(1, count + 1):
        t = random_topology(seed, algorithm="erica", delta=MAXMIN_DELTA, duration_s=dur, warmup_s=warm,
                            single_feedback=True)
        shares = analytic.max_min_shares(t.capacity, t.routes, t.demand, t.mcr)
        exps.append(Experiment(
            f"maxmin-{seed}.toml", {}, 1,
            [Case("ERICA max-min (water-filling), largest |deviation|, regression bound",
                  f"topology {seed}: {t.switches} switches, {t.sessions} sessions", MAXMIN_BOUND, "", "", "", "",
                  bound=True, extract=_maxmin_deviation(shares)),
             Case("ERICA 5% per session (issue 15 item 7, water-filling), largest |deviation|",
                  f"topology {seed}: {t.switches} switches, {t.sessions} sessions", MAXMIN_ERICA_TARGET, "", "", "", "",
                  bound=True, report=True, extract=_maxmin_deviation(shares))],
            text=t.text,
        ))
    return exps


# EPRCA-ER and EFCI on the same random topologies (issue 15 item 7), reported, not
# pass/fail: what these algorithms promise is narrower than max-min on any topology.
# - EPRCA-ER (94-0735R1): one fair share per port, DPF x MACR, MACR a running
#   average of the CCRs of every VC crossing the port (above QT only of the lower
#   ones). Where all the VCs of a congested port are bottlenecked there, MACR tends
#   to their common rate and the port's share is the max-min one (tested: Rust
#   `abr_two_sessions`, `abr_two_switches`, within 10%); where some are held lower
#   elsewhere, MACR is pulled toward their CCRs and the others get less than max-min
#   (or, with the others' ACR creeping up between congestion episodes, more). The
#   issue's 10% is the bound; a topology beyond it shows "NOT met".
# - EFCI (binary feedback, threshold 500 cells): no rate is computed; the expected
#   departure is the beat-down of sessions crossing several marking ports. Its largest
#   deviation is reported (verdict REPORT).
# Both at full line rate (no target utilisation: the queue thresholds keep the line
# busy), so the shares are water-filling of the trunk rates, target 1.
#
# The sources of the EPRCA-ER rows increase as the EPRCA draft's do (`rif` =
# EPRCA_RIF = 1/256: AIR per cell time, AIR·Nrm per backward RM cell, dastangoo96
# Table 1). EPRCA's switch never tells a VC how much to increase: below QT every
# source adds its own step per RM cell, and the switch only cuts the VCs above
# DPF·MACR while the queue is above QT. With TM 4.0's default RIF = 1/16 that step
# is 9.36 Mb/s at OC-3c, more than most max-min shares here (2.7-40 Mb/s), and the
# result measures the source's step, not the switch (docs/validation.md g2, g3).
# The TM 4.0-source runs stay as reported rows beside them (met / NOT met), so the
# earlier setting's outcome stays visible.
def maxmin_other_experiments(plan: tuple[int, float, float], count: int) -> list[Experiment]:
    from atmsim.maxmin import EPRCA_RIF, random_topology

    _n, dur, warm = plan
    exps = []
    for alg, group, bound, rif in (
            ("eprca", "EPRCA-ER max-min, EPRCA sources (RIF 1/256) (water-filling), largest |deviation|", True, EPRCA_RIF),
            ("eprca", "EPRCA-ER TM 4.0 sources (RIF 1/16): max-min (water-filling), largest |deviation|", True, None),
            ("efci", "EFCI max-min distance (water-filling), largest |deviation|", False, None)):
        for seed in range(1, count + 1):
            t = random_topology(seed, algorithm=alg, target=1.0, duration_s=dur, warmup_s=warm, rif=rif)
            shares = analytic.max_min_shares(t.capacity, t.routes, t.demand, t.mcr)
            exps.append(Experiment(
                f"maxmin-{alg}-{seed}.toml", {}, 1,
                [Case(group, f"topology {seed}: {t.switches} switches, {t.sessions} sessions",
                      MAXMIN_BOUND if bound else 0.0, "", "", "", "",
                      bound=bound, report=True, extract=_maxmin_deviation(shares))],
                text=t.text,
            ))
    return exps


# EPRCA-ER where it promises max-min: one bottleneck trunk that every session crosses,
# all sessions greedy (no MCR, no source limit), so that every VC at the congested port
# is bottlenecked there and MACR tends to their common rate (`random_topology(...,
# single=True)`: the same generator, 2 switches, 2-20 sessions, trunk 30-149.76 Mb/s).
# Pass/fail against the 10% per session, with the EPRCA draft's source
# increase (RIF 1/256, as the EPRCA-ER rows above); the same topologies with TM 4.0's
# default sources (RIF 1/16: a limit cycle whose 1 s averages spread by 3-6% per
# session, docs/validation.md g3) are a reported row beside it. An extra case beside
# the 20-topology rows above.
def maxmin_eprca_single_experiments(plan: tuple[int, float, float], count: int) -> list[Experiment]:
    from atmsim.maxmin import EPRCA_RIF, random_topology

    _n, dur, warm = plan
    exps = []
    for rif in (EPRCA_RIF, None):
        for seed in range(1, count + 1):
            t = random_topology(seed, algorithm="eprca", target=1.0, duration_s=dur, warmup_s=warm, single=True,
                                rif=rif)
            shares = analytic.max_min_shares(t.capacity, t.routes, t.demand, t.mcr)
            label = f"single-bottleneck topology {seed}: {t.sessions} sessions"
            case = (Case("EPRCA-ER single bottleneck, all greedy, EPRCA sources (RIF 1/256) (water-filling), "
                         "largest |deviation|", label, MAXMIN_BOUND, "", "", "", "",
                         bound=True, extract=_maxmin_deviation(shares)) if rif is not None else
                    Case("EPRCA-ER TM 4.0 sources (RIF 1/16): single bottleneck, all greedy (water-filling), "
                         "largest |deviation|", label, MAXMIN_BOUND, "", "", "", "",
                         bound=True, report=True, extract=_maxmin_deviation(shares)))
            exps.append(Experiment(f"maxmin-eprca-single-{seed}.toml", {}, 1, [case], text=t.text))
    return exps


# ERICA+ (queue control, target delay 0.5 ms, target utilisation 1, delta 0.04, one
# feedback per interval as the ERICA rows) on the
# same random topologies as ERICA, side by side: shares are water-filling of the full
# trunk rates. Reported against the 5% per session for ERICA (met / NOT met),
# not pass/fail: ERICA+ is an option, and the 10% bound of the ERICA rows (g) is theirs.
# Quick mode runs topologies 1-5, full mode 1-20.
MAXMIN_ERICA_PLUS_BOUND = 0.05


def maxmin_erica_plus_experiments(plan: tuple[int, float, float], count: int) -> list[Experiment]:
    from atmsim.maxmin import random_topology

    _n, dur, warm = plan
    exps = []
    for seed in range(1, count + 1):
        t = random_topology(seed, algorithm="erica", target=1.0, delta=MAXMIN_DELTA, duration_s=dur,
                            warmup_s=warm, erica_plus=True, single_feedback=True)
        shares = analytic.max_min_shares(t.capacity, t.routes, t.demand, t.mcr)
        exps.append(Experiment(
            f"maxmin-erica-plus-{seed}.toml", {}, 1,
            [Case("ERICA+ max-min (water-filling), largest |deviation|",
                  f"topology {seed}: {t.switches} switches, {t.sessions} sessions", MAXMIN_ERICA_PLUS_BOUND,
                  "", "", "", "", bound=True, report=True, extract=_maxmin_deviation(shares))],
            text=t.text,
        ))
    return exps


# --------------------------------------------------------------------------- running
class _Cancelled(Exception):
    pass


def run_experiments(exps: list[Experiment], progress: bool = True, workers: Optional[int] = None) -> float:
    """Run every replication (threads; the native run releases the GIL) and fill in
    each case's samples.  Returns wall time."""
    vdir = scenario_dir()
    jobs: list[tuple[Experiment, Scenario, int]] = []
    for exp in exps:
        with warnings.catch_warnings():
            # Some cases offer more than the line rate on purpose (M/D/1/K with partial
            # buffer sharing at a total load of 1.2): the load-time warning is expected.
            warnings.simplefilter("ignore", AtmsimWarning)
            base = loads(exp.text, exp.scenario) if exp.text is not None else load(vdir / exp.scenario)
            sc = base.with_overrides(exp.overrides)
        jobs += [(exp, sc, r) for r in range(exp.replications)]
    stop = threading.Event()

    def check_stop(_now: float, _dur: float) -> None:
        if stop.is_set():
            raise _Cancelled()

    def one(job: tuple[Experiment, Scenario, int]) -> tuple[Experiment, Result]:
        exp, sc, r = job
        return exp, sc.run(run=r, progress=check_stop)

    show = progress and stderr_is_tty()
    bar = None
    if show:
        from tqdm import tqdm

        bar = tqdm(total=len(jobs), desc="validate", unit="run", file=sys.stderr, delay=2.0, leave=False)
    t0 = time.perf_counter()
    results: dict[int, list[tuple[int, Result]]] = {}
    workers = workers or max(1, os.cpu_count() or 1)
    pool = ThreadPoolExecutor(max_workers=workers)
    futures = []
    try:
        futures = [(id(j[0]), j[2], pool.submit(one, j)) for j in jobs]
        for key, r, fut in futures:
            _exp, res = fut.result()
            results.setdefault(key, []).append((r, res))
            if bar is not None:
                bar.update(1)
    except BaseException:
        stop.set()
        for _k, _r, fut in futures:
            fut.cancel()
        raise
    finally:
        pool.shutdown(wait=True)
        if bar is not None:
            bar.close()
    for exp in exps:
        for r, res in sorted(results[id(exp)], key=lambda t: t[0]):
            for case in exp.cases:
                if case.extract is not None:
                    case.samples.append(case.extract(res))
                else:
                    case.samples.append(res.value(case.component, case.probe, case.statistic))
    return time.perf_counter() - t0


def evaluate(cases: list[Case]) -> None:
    # Reported cases are not tests: they do not widen the others' adjusted intervals.
    m = max(1, sum(not c.report for c in cases))
    adj_conf = 1.0 - (1.0 - CONFIDENCE) / m
    for c in cases:
        if c.report:
            c.mean = c.ci_low = c.ci_high = c.adj_low = c.adj_high = max(c.samples)
            c.verdict = "REPORT" if not c.bound else ("met" if c.mean <= c.expected else "NOT met")
            continue
        if c.bound and len(c.samples) == 1:
            # A bound on a deterministic run (one replication): no interval to compute.
            c.mean = c.ci_low = c.ci_high = c.adj_low = c.adj_high = c.samples[0]
            c.verdict = "PASS" if c.samples[0] <= c.expected else "FAIL"
            continue
        c.mean, c.ci_low, c.ci_high = analytic.student_t_ci(c.samples, CONFIDENCE)
        _, c.adj_low, c.adj_high = analytic.student_t_ci(c.samples, adj_conf)
        close = abs(c.mean - c.expected) <= max(RTOL * abs(c.expected), c.atol)
        if c.bound:
            c.verdict = "PASS" if max(c.samples) <= c.expected else "FAIL"
        elif c.ci_low <= c.expected <= c.ci_high or close:
            c.verdict = "PASS"
        elif c.adj_low <= c.expected <= c.adj_high:
            c.verdict = "PASS*"
        else:
            c.verdict = "FAIL"


def format_table(cases: list[Case]) -> str:
    header = ["case", "expected", "simulated", "95% CI", "rel diff", "reps", "verdict"]
    rows = []
    for c in cases:
        rel = (c.mean - c.expected) / c.expected if c.expected else math.nan
        exp = f"{'<= ' if c.bound else ''}{c.expected:.5g} {c.unit}".rstrip()
        rows.append([f"{c.group}: {c.label}", exp, f"{c.mean:.5g}",
                     f"[{c.ci_low:.5g}, {c.ci_high:.5g}]", f"{rel:+.2%}", str(len(c.samples)), c.verdict])
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths)), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in rows]
    return "\n".join(lines)


def main(quick: bool = False, json_out: bool = False, progress: bool = True) -> int:
    exps = build_plan(quick)
    wall = run_experiments(exps, progress=progress)
    cases = [c for e in exps for c in e.cases]
    evaluate(cases)
    ok = all(c.verdict != "FAIL" for c in cases)
    if json_out:
        print(json.dumps({
            "mode": "quick" if quick else "full",
            "confidence": CONFIDENCE,
            "wall_s": wall,
            "passed": ok,
            "cases": [{"group": c.group, "case": c.label, "expected": c.expected, "unit": c.unit,
                       "simulated": c.mean, "ci_low": c.ci_low, "ci_high": c.ci_high,
                       "replications": len(c.samples), "verdict": c.verdict} for c in cases],
        }, allow_nan=False))
    else:
        print(format_table(cases))
        n_star = sum(c.verdict == "PASS*" for c in cases)
        n_fail = sum(c.verdict == "FAIL" for c in cases)
        n_rep = sum(c.report for c in cases)
        n_not = sum(c.verdict == "NOT met" for c in cases)
        print(f"\n{len(cases)} cases, {len(cases) - n_star - n_fail - n_rep} PASS, {n_star} PASS* "
              f"(inside the Bonferroni-adjusted {100 * (1 - (1 - CONFIDENCE) / max(1, len(cases) - n_rep)):.2f}% CI), "
              f"{n_fail} FAIL, {n_rep} reported ({n_not} NOT met); {'quick' if quick else 'full'} mode, {wall:.1f} s wall")
    return 0 if ok else 1


__all__ = ["main", "build_plan", "run_experiments", "evaluate", "Case", "Experiment"]
