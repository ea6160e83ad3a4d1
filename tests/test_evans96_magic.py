"""evans96, the MAGIC rate mismatch three ways (issue 17 item 5): unpaced, paced at
70 Mb/s and under hop-by-hop credit flow control, side by side
(python/atmsim/reproduce/evans96_magic.py, scenarios/evans96/mismatch_credit.toml)."""
from __future__ import annotations

from pathlib import Path

import pytest

from atmsim.reproduce import run_experiments
from atmsim.reproduce.evans96 import Evans96

#: The window-over-round-trip bound worked out by hand: 256 cells of 424 bits per 8.8 ms,
#: 48 of 53 octets payload, 9140 of 9216 payload octets TCP data.
BOUND_256 = 256 * 424 / 8.8e-3 * 48 / 53 * 9140 / 9216 / 1e6


class _Magic(Evans96):
    experiments = tuple(e for e in Evans96.experiments
                        if e.key in ("one-stream", "one-stream-paced") or e.key.startswith(("magic-credit", "two-streams-credit")))


@pytest.fixture(scope="module")
def magic(tmp_path_factory):
    out = tmp_path_factory.mktemp("magic")
    repro = _Magic()
    results = run_experiments(repro, out / "results.sqlite", quick=True)
    figures, rows = repro.analyse(results, out)
    return out, figures, {r.quantity: r for r in rows}


def test_bound_by_hand():
    assert BOUND_256 == pytest.approx(11.08, abs=0.01)


def test_credit_throughput_is_the_window_over_the_round_trip(magic):
    _, _, rows = magic
    r = rows["TCP throughput, one stream, hop-by-hop credit flow control (window = switch buffer = 256 cells per VC)"]
    assert r.paper_value is None, "evans96 gives no number for its credit experiment"
    # TCP keeps the window full, so the credit loop is the limit: at most the bound, and
    # within 2 % of it (the loop adds a few slots and the 10 us packing delay to 8.8 ms).
    assert 0.98 * BOUND_256 <= r.simulated <= BOUND_256
    # The credit loop fixes the rate: replications may agree exactly (the TAXI's 98.15 Mb/s
    # of cells made the three quick ones equal), and then stats gives no interval.
    assert (r.ci_low is None and r.ci_high is None) or r.ci_low <= r.simulated <= r.ci_high
    assert r.band_low is not None and r.band_low <= r.simulated <= r.band_high
    assert r.band_high > 1.9 * r.simulated, "the 512-cell window doubles it"
    two = rows["TCP throughput, two streams from two hosts (combined), hop-by-hop credit flow control (window = "
               "switch buffer = 256 cells per VC)"]
    assert 0.98 * 2 * BOUND_256 <= two.simulated <= 2 * BOUND_256, "each VC has its own window"
    assert two.band_low <= two.simulated <= two.band_high
    big = rows["credit window sweep: TCP throughput, one stream, window = switch buffer = 2048 cells"]
    assert 0.9 * 8 * BOUND_256 < big.simulated < 100 * 48 / 53, "2048 cells: near the bound, below the TAXI line"


def test_three_way_cell_loss_with_intervals_in_0_1(magic):
    _, _, rows = magic
    at = "cell loss ratio at the switch's TAXI port, "
    unpaced, credit = rows[at + "1 stream: no control"], rows[at + "1 stream: credit, W = 256"]
    credit2 = rows[at + "2 streams: credit, W = 256"]
    assert unpaced.simulated > 0 and 0 <= unpaced.ci_low <= unpaced.simulated <= unpaced.ci_high <= 1, unpaced
    for r in (rows[at + "1 stream: 70 Mb/s pacing"], credit, credit2):
        assert r.simulated == 0 and r.ci_low == 0 and 0 < r.ci_high < 1e-4, r
    assert all(r.paper_value is None for q, r in rows.items() if q.startswith(at))
    unpaced_thr = rows["TCP throughput, one stream, no traffic control"]
    credit_thr = rows["TCP throughput, one stream, hop-by-hop credit flow control (window = switch buffer = 256 cells per VC)"]
    assert credit_thr.simulated > 3 * unpaced_thr.simulated


def test_the_figure_is_drawn(magic):
    out, figures, _ = magic
    fig = next(f for f in figures if f.key == "magic_three_ways")
    assert (Path(out) / fig.png).stat().st_size > 1000


def test_the_built_in_credit_control_gives_the_component_forms_throughput(magic):
    # The same case with the credit control inside the host and the switch
    # (mismatch_credit_builtin.toml): the credit loop sets the rate either way.
    _, _, rows = magic
    built = rows["TCP throughput, one stream, credit flow control built into the host adapter and the switch "
                 "(window = switch buffer = 256 cells)"]
    parts = rows["TCP throughput, one stream, hop-by-hop credit flow control (window = switch buffer = 256 cells per VC)"]
    assert built.paper_value is None
    assert 0.98 * BOUND_256 <= built.simulated <= BOUND_256
    assert abs(built.simulated - parts.simulated) < 0.01 * parts.simulated, (built, parts)
