"""The random topologies of the max-min validation: valid scenarios, reproducible,
within the issue's ranges, and shares that fill every bottleneck without exceeding a link."""
from __future__ import annotations

import math

import pytest

import atmsim
from atmsim.analytic import max_min_shares
from atmsim.maxmin import random_topology


@pytest.mark.parametrize("seed", range(1, 21))
def test_random_topologies_are_valid_and_within_the_ranges(seed):
    t = random_topology(seed)
    assert random_topology(seed).text == t.text
    assert 2 <= t.switches <= 8 and 2 <= t.sessions <= 20
    assert all(len(r) >= 1 for r in t.routes)
    atmsim.loads(t.text, f"maxmin-{seed}.toml")  # loads: wiring, VC tables and ABR ports are consistent
    shares = max_min_shares(t.capacity, t.routes, t.demand, t.mcr)
    for link, c in t.capacity.items():
        assert sum(s for s, r in zip(shares, t.routes) if link in r) <= c * (1 + 1e-9)
    for i, s in enumerate(shares):
        assert s >= t.mcr[i] - 1e-9 and s <= t.demand[i] + 1e-9
        if math.isinf(t.demand[i]):  # a greedy session fills one of its links
            assert any(abs(sum(x for x, r in zip(shares, t.routes) if link in r) - t.capacity[link]) < 1e-6
                       for link in t.routes[i])


def test_the_set_has_minima_and_source_limited_sessions():
    ts = [random_topology(seed) for seed in range(1, 21)]
    assert sum(m > 0 for t in ts for m in t.mcr) >= 10
    assert sum(not math.isinf(d) for t in ts for d in t.demand) >= 10


@pytest.mark.parametrize("seed", range(1, 21))
def test_single_bottleneck_topologies_are_one_trunk_all_greedy(seed):
    t = random_topology(seed, algorithm="eprca", target=1.0, single=True)
    assert t.switches == 2 and 2 <= t.sessions <= 20 and list(t.capacity) == ["t0"]
    assert all(r == ["t0"] for r in t.routes)
    assert all(m == 0 for m in t.mcr) and all(math.isinf(d) for d in t.demand)
    atmsim.loads(t.text, f"maxmin-eprca-single-{seed}.toml")
    shares = max_min_shares(t.capacity, t.routes, t.demand, t.mcr)
    assert shares == pytest.approx([t.capacity["t0"] / t.sessions] * t.sessions)


def test_single_feedback_is_written_on_every_erica_port_and_only_then():
    t = random_topology(5, single_feedback=True)
    assert t.text.count("single_feedback = true") == len(t.capacity)
    atmsim.loads(t.text, "maxmin-5.toml")
    plain = random_topology(5)
    assert "single_feedback" not in plain.text
    assert t.text.replace("single_feedback = true\n", "") == plain.text


def test_erica_with_single_feedback_meets_five_percent_on_topology_5():
    """Topology 5 missed the issue's 5% with plain ERICA (7.1%: a limit cycle from
    several feedbacks per averaging interval, docs/models/abr.md); with one ER per VC
    per interval every session's data rate is within 5% of 31/32 of its share."""
    from atmsim.maxmin import DATA_FRACTION
    t = random_topology(5, delta=0.04, duration_s=1.0, warmup_s=0.5, single_feedback=True)
    shares = max_min_shares(t.capacity, t.routes, t.demand, t.mcr)
    r = atmsim.loads(t.text, "maxmin-5.toml").run()
    for i, share in enumerate(shares):
        got = r.value(f"d{i + 1}/vc{i + 1}", "sink_throughput", "value")
        assert got == pytest.approx(share * DATA_FRACTION, rel=0.05), f"s{i + 1}"


def test_rif_is_written_on_every_source_and_leaves_the_draws():
    from atmsim.maxmin import EPRCA_RIF
    assert EPRCA_RIF == pytest.approx(0.01892 * 32 / 155, rel=1e-4)  # AIR·Nrm/PCR, dastangoo96 Table 1
    t = random_topology(3, algorithm="eprca", target=1.0, rif=EPRCA_RIF)
    plain = random_topology(3, algorithm="eprca", target=1.0)
    assert t.text.count("rif = 0.00390625\n") == t.sessions
    assert t.text.replace("rif = 0.00390625\n", "") == plain.text
    assert (t.capacity, t.routes, t.demand, t.mcr) == (plain.capacity, plain.routes, plain.demand, plain.mcr)
    atmsim.loads(t.text, "maxmin-eprca-3.toml")


def test_eprca_with_the_eprca_source_increase_meets_ten_percent_on_single_bottleneck_10():
    """Single-bottleneck topology 10 (20 sessions on 54.87 Mb/s, share 2.74 Mb/s): with
    TM 4.0's RIF = 1/16 the ACRs run a limit cycle 7 times the share wide and a 1 s
    average misses by up to 10.2%; with the EPRCA sources' RIF = 1/256 every session's
    data rate is within 10% of 31/32 of its share (measured 1.7%, docs/validation.md g3)."""
    from atmsim.maxmin import DATA_FRACTION, EPRCA_RIF
    t = random_topology(10, algorithm="eprca", target=1.0, duration_s=2.0, warmup_s=1.0, single=True,
                        rif=EPRCA_RIF)
    shares = max_min_shares(t.capacity, t.routes, t.demand, t.mcr)
    r = atmsim.loads(t.text, "maxmin-eprca-single-10.toml").run()
    for i, share in enumerate(shares):
        got = r.value(f"d{i + 1}/vc{i + 1}", "sink_throughput", "value")
        assert got == pytest.approx(share * DATA_FRACTION, rel=0.10), f"s{i + 1}"
