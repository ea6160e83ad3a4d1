"""domingo95: cells per ping (Table 2, first row), per-port per-VC conservation, the
independent-loss baseline 1-(1-p)^n, and ``atmsim reproduce domingo95 --quick``."""
from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest

from conftest import ROOT, reproduce_quick

from atmsim import api
from atmsim.reproduce.domingo95 import _most

SCEN = ROOT / "scenarios" / "domingo95"
QUICK = {"ping.interval": "20 ms", "scenario.duration": "2.2 s"}


@pytest.mark.parametrize("length,cells", [(64, 300), (256, 700), (512, 1200), (1024, 2300), (2048, 4500)])
def test_cells_per_ping_equal_table2_first_row(length, cells):
    # Through the real switch counters of the experiment-2 scenario (background on).
    sc = api.load(SCEN / "exp2.toml").with_overrides({**QUICK, "ping.length": f"{length} B"})
    r = sc.run()
    assert r.value("ping", "ping_tx", "count") == 100
    assert r.value("sw/p1/vc92", "port_rx_cells", "count") == cells


def test_conservation_per_port_and_vc_when_the_background_stops():
    # ws3 (its UDP blaster) stops at 1.5 s; the pings end by ~2.1 s; at 2.6 s every queue has drained, so
    # for every output port and VC: switched to the port = transmitted + dropped.  No
    # warm-up: counters reset while cells are queued would unbalance the books.
    sc = api.load(SCEN / "exp1_both.toml").with_overrides(
        {**QUICK, "scenario.duration": "2.6 s", "scenario.warmup": "0 s", "ws3.stop": "1.5 s",
         "ping.length": "2048 B"})
    r = sc.run()
    p = r.probes
    comps = sorted(c for c in set(p["component"]) if c.startswith("sw/p") and c.count("/") == 2)
    checked = 0
    drops = 0.0
    for c in comps:
        sel = p[(p["component"] == c) & (p["statistic"] == "count")].set_index("probe")["value"]
        if "port_out_cells" not in sel:
            continue
        out, tx, dr = sel["port_out_cells"], sel["port_tx_cells"], sel["port_drop_cells"]
        assert out == tx + dr, (c, out, tx, dr)
        checked += 1
        drops += dr
    assert checked >= 15  # ping, replies and both loop chains at ports 1, 2, 4, 5
    assert drops > 0  # the test is about a congested run
    for port in ("p4", "p5"):
        assert r.value(f"sw/{port}", "q_len", "max") > 0
    # The whole run's books balance once the point-to-multipoint copies are counted
    # (the core checks this at the end of every run; here it is visible to users too).
    led = r.ledger
    assert led["replicated"] > 0
    assert led["generated"] + led["replicated"] == led["delivered"] + sum(led["dropped"].values()) + led["in_flight"]
    assert r.ledger_balances()


def test_independent_cell_loss_gives_one_minus_one_minus_p_to_the_n():
    # The baseline of the figures: 45-cell pings (2048 octets, MTU 1500) through
    # independent loss p = 0.01 on the request path only.
    text = """connections = ["a -> drop", "drop -> sw.p1", "sw.p1 -> a", "b -> sw.p2", "sw.p2 -> b"]
[scenario]
duration = "2.5 s"
[components.a]
kind = "host"
vc = 92
mtu = "1500 B"
app = "ping"
count = 2000
interval = "1 ms"
length = "2048 B"
[components.drop]
kind = "loss"
p = 0.01
[components.sw]
kind = "switch"
vcs = ["p1:92 -> p2:92", "p2:93 -> p1:93"]
[components.b]
kind = "host"
vc = 93
mtu = "1500 B"
"""
    sc = api.loads(text, "indep.toml")
    losses = [sc.run(run=k).value("a", "ping_loss", "value") for k in range(5)]
    n = 45
    expect = 1 - 0.99 ** n
    mean = sum(losses) / len(losses)
    sd = math.sqrt(sum((x - mean) ** 2 for x in losses) / (len(losses) - 1))
    half = 2.776 * sd / math.sqrt(len(losses))  # t(0.975, 4)
    # within the replications' 95% CI (widened by the binomial sd so that a lucky
    # tight CI does not make the test flaky)
    binom = math.sqrt(expect * (1 - expect) / 2000 / len(losses))
    assert abs(mean - expect) <= half + 2 * binom, (losses, expect)


@pytest.fixture(scope="module")
def quick_out(tmp_path_factory, quick_store) -> Path:
    return reproduce_quick(tmp_path_factory.mktemp("domingo95"), "domingo95", quick_store)


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_quick_reproduction_writes_predictions_for_withheld_values(quick_out):
    rows = [r for r in _rows(quick_out / "comparison.csv") if r["paper"] == "domingo95"]
    q = {r["quantity"]: r for r in rows}
    # Table 1: 6 + 7 withheld cells; Table 2: 5 withheld rows x 5 lengths; Table 3: 5;
    # 4.2 lower load: 4; conclusions: 2
    t1 = [r for r in rows if r["quantity"].startswith("Table 1:")]
    assert len(t1) == 13
    t2 = [r for r in rows if r["quantity"].startswith("Table 2:") and "port 1 " not in r["quantity"]]
    assert len(t2) == 25
    assert len([r for r in rows if r["quantity"].startswith("Table 3: ping")]) == 5
    assert len([r for r in rows if r["quantity"].startswith("4.2 lower load")]) == 4
    assert len([r for r in rows if r["quantity"].startswith("6: ")]) == 2
    for r in t1 + t2:
        assert r["paper_value"] == "" and r["simulated"] != ""
    # the published first row of Table 2 is reproduced exactly
    for length, cells in ((64, 300), (256, 700), (512, 1200), (1024, 2300), (2048, 4500)):
        r = q[f"Table 2: cells received at port 1 (VCI 92), 100 pings of {length} bytes"]
        assert float(r["paper_value"]) == cells and float(r["simulated"]) == cells
    # Table 4 (experiment 3, TCP): one prediction per background rate, and the condition row
    t4 = [r for r in rows if r["quantity"].startswith("Table 4: TCP throughput")]
    assert len(t4) == 3 and all(r["paper_value"] == "" and float(r["simulated"]) > 0 for r in t4)
    assert float(q["cell loss ratio at port 4 transmit buffer, 20 Mb/s background"]["paper_value"]) == 2.3e-4
    for f in ("table1_ping_loss", "exp2_ping_loss", "table2_counters", "table4_tcp"):
        assert (quick_out / "figures" / "domingo95" / f"{f}.png").stat().st_size > 1000


def test_every_packet_loss_prediction_has_a_band_around_it(quick_out):
    rows = [r for r in _rows(quick_out / "comparison.csv") if r["paper"] == "domingo95"]
    loss_rows = [r for r in rows if r["quantity"].startswith(("Table 1:", "4.2 lower load", "6: "))
                 or "ping packets lost" in r["quantity"] and not r["quantity"].startswith("ablation")]
    assert len(loss_rows) >= 13 + 10 + 4 + 2
    for r in loss_rows:
        if r["experiment"] == "exp2-uni":
            continue  # 4.3 extension: no band (no withheld packet-loss number)
        lo, hi, sim = float(r["band_low"]), float(r["band_high"]), float(r["simulated"])
        # The band spans the default's own mean and the variants' (a range, not an interval).
        assert lo <= sim <= hi, r
        top = 1.0 if r["unit"] == "1" else 100.0
        assert 0.0 <= lo and hi <= top, r
    # Rows without a band leave both columns empty.
    cond = [r for r in rows if r["quantity"].startswith("Table 2: cells received at port 1")]
    assert cond and all(r["band_low"] == r["band_high"] == "" for r in cond)
    for f in ("ping_loss_bands", "exp2_ablation"):
        assert (quick_out / "figures" / "domingo95" / f"{f}.png").stat().st_size > 1000


def test_ablation_and_receiving_buffer_rows(quick_out):
    rows = [r for r in _rows(quick_out / "comparison.csv") if r["paper"] == "domingo95"]
    abl = [r for r in rows if r["quantity"].startswith("ablation, ") and "ping packets lost" in r["quantity"]]
    # Issue 18, deliver 4: every experiment whose switch has both new features gets the
    # ablation, two features off at each of its lengths (6, 7, 5 and 5 lengths).
    per = {e: sum(r["experiment"] == e for r in abl) for e in ("exp1-both", "exp1-one", "exp2", "exp2-lowload")}
    assert per == {"exp1-both": 2 * 6, "exp1-one": 2 * 7, "exp2": 2 * 5, "exp2-lowload": 2 * 5}
    for e in per:
        clr = [r for r in rows if r["experiment"] == e and r["quantity"].startswith("ablation, ")
               and "cell loss ratio at port 4" in r["quantity"]]
        assert len(clr) == 2 and all(0.0 <= float(r["simulated"]) <= 1.0 for r in clr)
        assert (quick_out / "figures" / "domingo95" / f"{e.replace('-', '_')}_ablation.png").stat().st_size > 1000
    ratio = [r for r in rows if r["quantity"].startswith("receiving-buffer loss")]
    assert len(ratio) == 1 and float(ratio[0]["paper_value"]) == pytest.approx(2.4e-5 / 2.3e-4)
    # Receiving-buffer loss ratios are proportions.
    for r in rows:
        if "receiving buffer" in r["quantity"] and r["unit"] == "1":
            assert 0.0 <= float(r["simulated"]) <= 1.0, r


def test_the_band_legend_names_the_parameter_dominant_at_most_lengths():
    assert _most(["fabric speedup", "arbitration", "fabric speedup"]) == " (most: fabric speedup, at 2 of 3 lengths)"
    assert _most([]) == ""


def test_experiment3_runs_on_the_ping_experiments_switch():
    """One LattisCell, one calibrated model: experiment 3's switch has experiment 2's
    buffers, speedup and arbitration; only its table (the passes) differs, and
    experiment 2's port 15 has its line to the carrier."""
    import tomllib

    def switch(name):
        with open(SCEN / name, "rb") as fh:
            sw = tomllib.load(fh)["components"]["sw"]
        sw["port_length"] = [e for e in sw["port_length"] if not e.startswith("p15 ")]
        return {k: v for k, v in sw.items() if k != "vcs"}, sw["vcs"]

    (sw3, vcs3), (sw2, _) = switch("exp3.toml"), switch("exp2.toml")
    assert sw3 == sw2
    assert sum(v.startswith("p5:20") for v in vcs3) == 5 - 1  # 5 passes: p5:201..204 -> p4


def test_tcp_data_are_lost_in_port_1s_receiving_buffer_not_counted_at_port_4():
    # Experiment 3 at 20 Mb/s of background: ws1's back-to-back segments enter port 1's
    # receiving buffer at the line rate while port 4's output serves three inputs, so
    # TCP's data cells are dropped there; with the receiving buffers switched off
    # (output-buffered) there is no input buffer to drop them.
    sc = api.load(SCEN / "exp3.toml").with_overrides({"scenario.duration": "6 s", "ws3.udp_rate": "18.0342 Mb/s"})
    r = sc.run()
    assert r.value("sw/p1", "sw_in_drop_cells", "count") > 0
    assert r.value("sw/p4", "sw_in_drop_cells", "count") == 0  # only TCP's ACKs enter port 4 from the loop
    off = sc.with_overrides({"sw.buffering": "output"}).run()
    with pytest.raises(KeyError):
        off.value("sw/p1", "sw_in_drop_cells", "count")


def test_receiving_buffers_lose_cells_where_trains_meet_trains():
    # Experiment 2's switch: the loop's input (p5) and ws3's (p3) lose cells in their
    # receiving buffers, the ping's input (p1, one train at a time) does not; the
    # transmitting buffer at p4 loses more than any receiving buffer (section 5: 2.3e-4
    # vs 2.4e-5).  The books balance with cells waiting in receiving buffers.
    sc = api.load(SCEN / "exp2.toml").with_overrides({**QUICK, "ping.length": "2048 B"})
    r = sc.run()
    assert r.value("sw/p5", "sw_in_drop_cells", "count") > 0
    assert r.value("sw/p3", "sw_in_drop_cells", "count") > 0
    assert r.value("sw/p1", "sw_in_drop_cells", "count") == 0
    tx = r.value("sw/p4", "q_loss_ratio", "value")
    assert tx > r.value("sw/p5", "sw_in_loss_ratio", "value")
    assert tx > r.value("sw/p3", "sw_in_loss_ratio", "value")
    assert r.ledger_balances()
