"""``atmsim dimension``: bisection for the smallest buffer meeting a loss target."""
from __future__ import annotations

import pytest

from conftest import BASE, ROOT, run_cli

from atmsim.dimension import Answer, Evaluation, Target, dimension, monotone_warning, parse_target
from atmsim.exceptions import ScenarioError

# Three CBR sources with the same phase put three cells into the fifo at the same
# instant every 10 us; the fifo (OC-3c, 2.83 us a cell, `capacity` counting the cell
# in transmission) clears them in 8.5 us.  So a capacity of K < 3 cells loses 3 - K
# of every 3 cells, K >= 3 loses none: the smallest capacity meeting any target below
# 1/3 is 3, whatever the seed.
BATCH = """\
connections = ["a -> mux", "b -> mux", "c -> mux", "mux -> sink"]

[scenario]
name = "batch"
duration = "2 ms"

[components.a]
kind = "cbr"
interval = "10 us"
phase = "0 s"
vc = 1

[components.b]
kind = "cbr"
interval = "10 us"
phase = "0 s"
vc = 2

[components.c]
kind = "cbr"
interval = "10 us"
phase = "0 s"
vc = 3

[components.mux]
kind = "fifo"
phy = "OC-3c"
capacity = "64 cells"

[components.sink]
kind = "sink"
"""


def test_parse_target():
    assert parse_target("gw.mpp_frame_loss <= 1e-3") == Target("gw", "mpp_frame_loss", "value", 1e-3)
    assert parse_target("sw/p3.q_wait.mean<=0.002") == Target("sw/p3", "q_wait", "mean", 0.002)
    for bad in ("gw.mpp_frame_loss < 1e-3", "gw.mpp_frame_loss => 1e-3", "mpp_frame_loss <= 1", "gw.x <= lots", ""):
        with pytest.raises(ScenarioError, match="COMPONENT.PROBE"):
            parse_target(bad)
    # a limit may carry a unit: time, bit rate, or the probes' own counts
    t = parse_target("sink/vc1.sink_delay.p99_9 <= 250 us")
    assert t == Target("sink/vc1", "sink_delay", "p99_9", 250.0, "us") and str(t).endswith("<= 250 us")
    assert t.limit_in("s") == pytest.approx(250e-6, rel=1e-12)
    assert parse_target("a.tcp_throughput <= 1.5 Mb/s").limit_in("b/s") == pytest.approx(1.5e6)
    assert parse_target("a.q_len.max <= 30 cells").limit_in("cells") == 30.0
    assert parse_target("a.x <= 3").limit_in("s") == 3.0, "a bare limit is in the probe's own unit"
    with pytest.raises(ScenarioError, match="unknown unit 'furlongs'.*valid: s, ms"):
        parse_target("a.q_wait.max <= 3 furlongs")
    with pytest.raises(ScenarioError, match="the limit is in ms, but mux.q_loss_ratio is in 1"):
        parse_target("mux.q_loss_ratio <= 1 ms").limit_in("1")


def test_batch_of_three_needs_three_cells(tmp_path):
    path = tmp_path / "batch.toml"
    path.write_text(BATCH)
    seen = []
    ans = dimension(path, "mux.capacity", 1, 16, "mux.q_loss_ratio <= 1e-3", unit="cells", replications=2,
                    workers=1, on_eval=seen.append)
    assert ans.size == 3
    by = {e.size: e for e in ans.evaluations}
    assert by[2].mean == pytest.approx(1 / 3, abs=0.01) and not by[2].meets
    assert by[1].mean == pytest.approx(2 / 3, abs=0.01)
    assert by[3].mean == 0.0 and by[3].meets and "all 2 replications gave 0" in by[3].note
    assert [e.size for e in seen] == [e.size for e in ans.evaluations]
    from atmsim.dimension import max_evaluations
    assert len(ans.evaluations) <= max_evaluations(1, 16) == 2 + 4
    assert max_evaluations(5, 5) == 1 and max_evaluations(1, 2) == 2
    assert ans.sentence().startswith("3 cells (mux.capacity) meet mux.q_loss_ratio.value <= 0.001")
    assert "2 cells do not (mean 0.333" in ans.sentence()
    # a target no size meets: the answer says so
    none = dimension(path, "mux.capacity", 1, 2, "mux.q_loss_ratio <= 1e-3", unit="cells", replications=2, workers=1)
    assert none.size is None and none.sentence().startswith("no mux.capacity in [1, 2] cells meets")


def test_largest_size_meeting_a_target_that_grows_with_the_size(tmp_path):
    # The batch of three: a capacity of K cells keeps min(K, 3) of each batch, and the
    # last kept waits K − 1 cell times (0, 2.83 us, then 5.66 us from K = 3 on). The
    # largest capacity whose longest wait stays under 3 us is 2, whatever the seed.
    path = tmp_path / "batch.toml"
    path.write_text(BATCH)
    ans = dimension(path, "mux.capacity", 1, 16, "mux.q_wait.max <= 3e-6", unit="cells", replications=2,
                    workers=1, largest=True)
    assert ans.size == 2 and ans.largest
    by = {e.size: e for e in ans.evaluations}
    assert by[1].mean == 0.0 and by[2].mean == pytest.approx(424 / 149.76e6, rel=1e-6)
    assert not by[3].meets and by[3].mean == pytest.approx(2 * 424 / 149.76e6, rel=1e-6)
    assert ans.sentence().startswith("at most 2 cells (mux.capacity) meet mux.q_wait.max <= 3e-06")
    assert "; 3 cells do not (mean 5.66e-06" in ans.sentence()
    # every size meets: the top of the range; none does: said from the bottom end
    assert dimension(path, "mux.capacity", 1, 16, "mux.q_wait.max <= 1e-5", unit="cells", replications=2,
                     workers=1, largest=True).size == 16
    none = dimension(path, "mux.capacity", 2, 4, "mux.q_wait.max <= 1e-6", unit="cells", replications=2,
                     workers=1, largest=True)
    assert none.size is None and "at 2 cells the mean is 2.83e-06" in none.sentence()
    p = run_cli("dimension", str(path), "--key", "mux.capacity", "--unit", "cells", "--max", "8", "--largest",
                "--target", "mux.q_wait.max <= 3e-6", "-n", "2", "-j", "1", "-q")
    assert p.returncode == 0 and p.stdout.startswith("at most 2 cells (mux.capacity) meet"), p.stdout + p.stderr
    # the same limit written in microseconds (the probe reports seconds) gives the same answer
    p = run_cli("dimension", str(path), "--key", "mux.capacity", "--unit", "cells", "--max", "8", "--largest",
                "--target", "mux.q_wait.max <= 3 us", "-n", "2", "-j", "1", "-q")
    assert p.returncode == 0 and p.stdout.startswith("at most 2 cells (mux.capacity) meet mux.q_wait.max <= 3 us"), \
        p.stdout + p.stderr
    # a unit of another quantity: one line, exit 2
    p = run_cli("dimension", str(path), "--key", "mux.capacity", "--unit", "cells", "--max", "8",
                "--target", "mux.q_loss_ratio <= 3 us", "-n", "2", "-j", "1", "-q")
    assert p.returncode == 2 and "the limit is in us, but mux.q_loss_ratio is in 1" in p.stderr, p.stdout + p.stderr
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr


def test_a_target_the_statistic_must_reach(tmp_path):
    # The batch of three: a capacity of K cells carries min(K, 3) cells of 2.83 us in
    # every 10 us, a line utilisation of 0.283, 0.566, then 0.849 from K = 3 on: the
    # smallest capacity whose utilisation reaches 0.8 is 3, whatever the seed.
    t = parse_target("mux.phy_utilisation >= 0.8")
    assert t == Target("mux", "phy_utilisation", "value", 0.8, "", True) and str(t).endswith(">= 0.8")
    path = tmp_path / "batch.toml"
    path.write_text(BATCH)
    ans = dimension(path, "mux.capacity", 1, 16, t, unit="cells", replications=2, workers=1)
    assert ans.size == 3
    by = {e.size: e for e in ans.evaluations}
    assert not by[2].meets and by[2].mean == pytest.approx(0.566, abs=1e-3)
    assert ans.sentence().startswith("3 cells (mux.capacity) meet mux.phy_utilisation.value >= 0.8")
    # the lower end of the interval decides, as the upper end does for <=
    from atmsim.dimension import judge
    assert judge(5, 6, 0.9, 0.05, 0.85, 0.95, 0.8, at_least=True).meets
    assert not judge(5, 6, 0.9, 0.1, 0.75, 1.0, 0.8, at_least=True).meets  # the mean reaches it, the CI does not
    assert not judge(5, 6, 0.79, 0.0, float("nan"), float("nan"), 0.8, at_least=True).meets
    p = run_cli("dimension", str(path), "--key", "mux.capacity", "--unit", "cells", "--max", "8",
                "--target", "mux.phy_utilisation >= 0.8", "-n", "2", "-j", "1", "-q")
    assert p.returncode == 0 and p.stdout.startswith("3 cells (mux.capacity) meet"), p.stdout + p.stderr
    # the same answer as JSON, every size evaluated with its mean and verdict
    import json
    p = run_cli("dimension", str(path), "--key", "mux.capacity", "--unit", "cells", "--max", "8",
                "--target", "mux.phy_utilisation >= 0.8", "-n", "2", "-j", "1", "-q", "--json")
    assert p.returncode == 0, p.stdout + p.stderr
    got = json.loads(p.stdout)
    assert (got["size"], got["key"], got["unit"], got["replications"]) == (3, "mux.capacity", "cells", 2)
    assert got["target"] == {"text": "mux.phy_utilisation.value >= 0.8", "component": "mux", "probe": "phy_utilisation",
                             "statistic": "value", "limit": 0.8, "limit_unit": "", "at_least": True}
    ev = {e["size"]: e for e in got["evaluations"]}
    assert set(ev) >= {1, 2, 3, 8} and ev[3]["meets"] and not ev[2]["meets"]
    assert ev[2]["mean"] == pytest.approx(0.566, abs=1e-3) and ev[2]["ci_low"] is None  # no interval: null, not NaN
    assert got["sentence"].startswith("3 cells (mux.capacity) meet")


def test_confidence_interval_decides(tmp_path):
    """Poisson cells at 100 of 149.76 Mb/s into a finite fifo (M/D/1/K): wherever the
    bisection stops, the answer meets the target by its 95% CI and the size below it
    does not."""
    path = tmp_path / "p.toml"
    path.write_text(BASE.replace('duration = "5 ms"', 'duration = "20 ms"'))
    ans = dimension(path, "mux.capacity", 1, 64, "mux.q_loss_ratio <= 1e-2", unit="cells", replications=4, workers=1)
    assert ans.size is not None and 1 < ans.size < 64
    at, below = ans.at(ans.size), ans.at(ans.size - 1)
    assert at.meets and (at.ci_high <= 1e-2 or at.note)
    assert not below.meets and below.ci_high > 1e-2


def test_cli_answer_and_bad_input(tmp_path):
    path = tmp_path / "batch.toml"
    path.write_text(BATCH)
    p = run_cli("dimension", str(path), "--key", "mux.capacity", "--unit", "cells", "--min", "1", "--max", "8",
                "--target", "mux.q_loss_ratio <= 1e-3", "-n", "2", "-j", "1")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("3 cells (mux.capacity) meet mux.q_loss_ratio.value <= 0.001 in ")
    assert "mux.capacity = 2 cells: mean 0.333" in p.stderr
    for args, msg in (
        (["--key", "mux.nosuch", "--target", "mux.q_loss_ratio <= 1e-3"], "unknown parameter"),
        (["--key", "mux.capacity", "--target", "mux.q_loss_ratio < 1e-3"], "COMPONENT.PROBE"),
        (["--key", "mux.capacity", "--unit", "cells", "--target", "mux.q_loss_ratio <= 1e-3", "--min", "9",
          "--max", "3"], "1 <= min <= max"),
        (["--key", "mux.capacity", "--unit", "cells", "--target", "mux.q_loss_ratio.nosuch <= 1e-3", "--max", "2",
          "-j", "1", "-n", "2"], "no statistic mux.q_loss_ratio.nosuch"),
    ):
        p = run_cli("dimension", str(path), *args)
        assert p.returncode == 2, (args, p.stderr)
        lines = [ln for ln in p.stderr.splitlines() if ln.startswith("atmsim: error:")]
        assert len(lines) == 1 and msg in lines[0], p.stderr
    # no size meets: exit 1 and the sentence says so
    p = run_cli("dimension", str(path), "--key", "mux.capacity", "--unit", "cells", "--max", "2",
                "--target", "mux.q_loss_ratio <= 1e-3", "-n", "2", "-j", "1", "-q")
    assert p.returncode == 1 and p.stdout.startswith("no mux.capacity in [1, 2] cells meets")


def test_judge_uses_the_upper_end_of_the_ci_or_the_mean_without_one():
    from atmsim.dimension import judge

    nan = float("nan")
    assert judge(5, 6, 1e-4, 2e-4, 5e-5, 9e-4, 1e-3).meets
    assert not judge(5, 6, 1e-4, 2e-4, 5e-5, 1.1e-3, 1e-3).meets  # the mean meets, the CI does not
    zero = judge(5, 6, 0.0, 0.0, nan, nan, 1e-3)
    assert zero.meets and zero.note == "all 6 replications gave 0"
    few = judge(5, 1, 2e-3, nan, nan, nan, 1e-3, "n = 1: too few for an interval")
    assert not few.meets and few.note == "n = 1: too few for an interval"


def test_numbers_are_shown_with_the_digits_that_tell_them_from_the_limit():
    from atmsim.dimension import _g
    assert _g(0.989973, 0.99) == "0.98997" and _g(0.990201, 0.99) == "0.9902"
    assert _g(0.5, 0.99) == "0.5" and _g(0.99, 0.99) == "0.99" and _g(1.23456e-4) == "0.000123"
    assert _g(float("nan")) == "nan"


@pytest.mark.parametrize("target, says", [
    # issue 44 item 11: a misspelled component or probe is refused before any run, with a suggestion
    ("mux.q_los_ratio <= 1e-3", "mux (fifo) has no probe 'q_los_ratio'; did you mean 'q_loss_ratio'?"),
    ("mx.q_loss_ratio <= 1e-3", "no component 'mx' in "),
    ("snk/vc1.sink_delay.mean <= 1 ms", "no component 'snk' in "),
])
def test_misspelled_target_is_refused_before_running(tmp_path, target, says):
    path = tmp_path / "batch.toml"
    path.write_text(BATCH)
    p = run_cli("dimension", str(path), "--key", "mux.capacity", "--unit", "cells", "--max", "8",
                "--target", target, "-n", "2", "-j", "1")
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert p.stderr.startswith(f"atmsim: error: --target '{parse_target(target)}': ") and says in p.stderr, p.stderr
    if "no component" in says:
        assert "did you mean" in p.stderr and "(components: a, b, c, mux, sink)" in p.stderr


def test_undeclared_probe_rows_are_still_valid_targets(tmp_path):
    # a switch's port_drop_cells is a probe row its kind does not declare: still accepted
    from atmsim.api import loads
    from atmsim.dimension import check_target

    sc = loads((ROOT / "scenarios" / "examples" / "service_categories.toml").read_text(encoding="utf-8"),
               "service_categories.toml")
    assert "port_drop_cells" not in {q["name"] for q in __import__("atmsim").describe("switch")["probes"]}
    check_target(sc, parse_target("sw/p1.port_drop_cells.count <= 10"))


def _ev(size, mean, lo, hi, note=""):
    return Evaluation(size, 6, mean, lo, hi, True, note)


def test_monotone_warning_only_when_the_intervals_contradict_the_assumption():
    t = parse_target("mux.q_loss_ratio <= 1e-3")
    ans = Answer("mux.capacity", "cells", t, 1, 64, 6, 64, [_ev(64, 1e-4, 0, 2e-4), _ev(1, 0.3, 0.2, 0.4)])
    assert monotone_warning(ans) is None  # loss falls as the buffer grows: as assumed
    ans.evaluations.append(_ev(32, 0.01, 0.008, 0.012))
    assert monotone_warning(ans) is None
    ans.evaluations.append(_ev(48, 2e-4, 0, 0.009))  # overlaps 32's interval at 0.008..0.009: cannot tell
    assert monotone_warning(ans) is None
    ans.evaluations.append(_ev(40, 0.5, 0.45, 0.55))  # 40 loses more than 1 and 32, intervals apart
    # the first pair by size that contradicts it: 1 cell (0.2..0.4) and 40 cells (0.45..0.55)
    assert monotone_warning(ans) == (
        "mux.q_loss_ratio.value rises from 0.3 at 1 cells to 0.5 at 40 cells (95% intervals apart, or every "
        "replication equal), but the bisection assumes it does not rise as mux.capacity grows; the answer may be "
        "wrong (look at every size with atmsim sweep, or try --largest)")
    # --largest assumes the mirror: the statistic does not fall
    big = Answer("mux.clp_threshold", "cells", t, 1, 16, 6, 1, [_ev(1, 0.3, 0.2, 0.4), _ev(16, 1e-4, 0, 2e-4)],
                 largest=True)
    assert monotone_warning(big).startswith("mux.q_loss_ratio.value falls from 0.3 at 1 cells to 0.0001 at 16 cells")
    # too few replications for an interval: cannot tell
    few = Answer("mux.capacity", "cells", t, 1, 64, 2, 64,
                 [_ev(1, 0.0, float("nan"), float("nan"), "n = 2: too few for an interval"),
                  _ev(64, 0.5, float("nan"), float("nan"), "n = 2: too few for an interval")])
    assert monotone_warning(few) is None


def test_cli_warns_when_the_statistic_is_not_monotone_as_assumed(tmp_path):
    # BATCH is deterministic: at 1 cell no cell waits, at 8 cells the 2nd and 3rd of each
    # batch wait one and two cell times; the smallest size meeting "<=" assumes the wait
    # does not rise with the buffer, so the answer (1 cell) comes with a warning
    path = tmp_path / "batch.toml"
    path.write_text(BATCH)
    p = run_cli("dimension", str(path), "--key", "mux.capacity", "--unit", "cells", "--min", "1", "--max", "8",
                "--target", "mux.q_wait.mean <= 1 s", "-n", "2", "-j", "1", "-q")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("1 cells (mux.capacity) meet mux.q_wait.mean <= 1 s")
    warn = [ln for ln in p.stderr.splitlines() if ln.startswith("atmsim: warning:")]
    assert len(warn) == 1 and warn[0].startswith("atmsim: warning: mux.q_wait.mean rises from 0 at 1 cells to "), p.stderr
    assert "at 8 cells (95% intervals apart, or every replication equal)" in warn[0]
