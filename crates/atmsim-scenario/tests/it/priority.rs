//! Priority levels and weights at a switch port with per-VC queues: strict,
//! non-preemptive levels, weighted round robin within a level; the parameters' errors.

use super::*;

/// A CBR VC (`hi`, 30 Mb/s) and a Poisson VC (`lo`, `lo_rate`) into one OC-3c port
/// with per-VC queues; `priority` as given.
fn port(lo_rate: &str, priority: &str) -> atmsim_scenario::RunResult {
    port_queueing(lo_rate, "per-vc", priority)
}

fn port_queueing(lo_rate: &str, queueing: &str, priority: &str) -> atmsim_scenario::RunResult {
    let text = format!(
        r#"connections = ["hi -> sw.p1", "lo -> sw.p2", "sw.p3 -> sink"]
[scenario]
duration = "200 ms"
[components.hi]
kind = "cbr"
rate = "30 Mb/s"
vc = 1
[components.lo]
kind = "poisson"
rate = "{lo_rate}"
vc = 2
[components.sw]
kind = "switch"
ports = 3
queueing = "{queueing}"
vc_capacity = "512 cells"
capacity = "1024 cells"
vcs = ["p1:1 -> p3:1", "p2:2 -> p3:2"]
{priority}
[components.sink]
kind = "sink"
"#
    );
    run(&Scenario::from_text(&text, "priority.toml").unwrap_or_else(|e| panic!("{e}")), 0)
}

const CELL_S: f64 = 424.0 / 149.76e6;

#[test]
fn the_first_level_waits_at_most_for_the_cell_in_transmission() {
    // 30 + 130 Mb/s into 149.76: the port overflows. In one FIFO the CBR cells queue
    // behind the other's; at level 0 they wait at most one cell time (the cell on the
    // line when they arrive) and none is lost, while the Poisson VC loses what does
    // not fit.
    let fifo = port_queueing("130 Mb/s", "fifo", "");
    let prio = port("130 Mb/s", r#"priority = ["p3:1 = 0", "p3:2 = 1"]"#);
    let max_hi = probe(&prio, "sink/vc1", "sink_delay", "max");
    // Non-preemptive: no cell overtakes the one on the line, so every cell takes at
    // least its own cell time.
    for vc in ["sink/vc1", "sink/vc2"] {
        let min = probe(&prio, vc, "sink_delay", "min");
        assert!(min >= CELL_S * (1.0 - 1e-9), "{vc}: {min} s");
    }
    assert!(max_hi <= 2.0 * CELL_S * (1.0 + 1e-9), "{max_hi} s");
    assert!(probe(&fifo, "sink/vc1", "sink_delay", "max") > 100.0 * CELL_S);
    assert!(fifo.ledger.dropped_of(0) > 0);
    assert_eq!(prio.ledger.dropped_of(0), 0);
    assert!(prio.ledger.dropped_of(1) > 1000, "{}", prio.ledger.dropped_of(1));
    // The low level gets the rest of the line: the port never idles while cells wait.
    let sent = probe(&prio, "sw/p3", "q_tx_cells", "count");
    assert!(sent > 0.999 * 0.2 * 149.76e6 / 424.0, "{sent}");
}

#[test]
fn the_level_turned_round_serves_the_other_first() {
    // The same port with the CBR VC at level 1 below a Poisson VC at level 0 near the
    // line rate: the CBR cells wait for the other's queue to empty.
    let low = port("110 Mb/s", r#"priority = ["p3:1 = 1"]"#);
    let high = port("110 Mb/s", r#"priority = ["p3:2 = 1"]"#);
    let mean = |r: &atmsim_scenario::RunResult, vc: &str| probe(r, &format!("sink/{vc}"), "sink_delay", "mean");
    assert!(mean(&low, "vc1") > mean(&low, "vc2"), "{} vs {}", mean(&low, "vc1"), mean(&low, "vc2"));
    assert!(mean(&high, "vc1") < mean(&high, "vc2"));
    // Work conservation: the same cells go in both (no loss), and with equal service
    // times the number waiting is the same at every instant whatever the order, so the
    // mean delay over all cells is too — up to the cells still queued at the end,
    // which differ (a few of some 90,000).
    let n = |r: &atmsim_scenario::RunResult, vc: &str| probe(r, &format!("sink/{vc}"), "sink_rx_cells", "count");
    let total = |r: &atmsim_scenario::RunResult| (mean(r, "vc1") * n(r, "vc1") + mean(r, "vc2") * n(r, "vc2")) / (n(r, "vc1") + n(r, "vc2"));
    assert_eq!(n(&low, "vc1") + n(&low, "vc2"), n(&high, "vc1") + n(&high, "vc2"));
    assert!((total(&low) - total(&high)).abs() < 1e-3 * total(&low), "{} vs {}", total(&low), total(&high));
}

#[test]
fn priority_errors_name_the_entry_and_what_is_valid() {
    let base = r#"connections = ["a -> sw.p1", "sw.p2 -> s"]
[scenario]
duration = "1 ms"
[components.a]
kind = "cbr"
rate = "1 Mb/s"
[components.sw]
kind = "switch"
ports = 2
QUEUEING
vcs = ["p1:1 -> p2:1"]
priority = [PRIO]
[components.s]
kind = "sink"
"#;
    let case = |queueing: &str, prio: &str| err(&base.replace("QUEUEING", queueing).replace("PRIO", prio));
    let e = case("", r#""p2:1 = 1""#);
    assert!(e.contains("priority") && e.contains("per-vc"), "{e}");
    let per_vc = r#"queueing = "per-vc""#;
    let e = case(per_vc, r#""p2:1 = 9""#);
    assert!(e.contains("level must be a whole number from 0 to 7"), "{e}");
    let e = case(per_vc, r#""p2:7 = 1""#);
    assert!(e.contains("no VC of the table leaves p2 with label"), "{e}");
    let e = case(per_vc, r#""p2:1""#);
    assert!(e.contains("pOUT:VPI/VCI = LEVEL"), "{e}");
    let e = case(per_vc, r#""p5:1 = 1""#);
    assert!(e.contains("p5 does not exist"), "{e}");
    // and a good one runs
    let ok = base.replace("QUEUEING", per_vc).replace("PRIO", r#""p2:1 = 3""#);
    run(&Scenario::from_text(&ok, "ok.toml").unwrap_or_else(|e| panic!("{e}")), 0);
}

#[test]
fn weights_share_a_saturated_port_in_their_proportion() {
    // Three VCs each offered the whole line: with weights 3, 1, 2 the port sends them
    // in turns of 3, 1 and 2 cells, so their shares are 3/6, 1/6 and 2/6 of the
    // cells sent, to within a turn.
    let text = r#"connections = ["a -> sw.p1", "b -> sw.p2", "c -> sw.p3", "sw.p4 -> sink"]
[scenario]
duration = "20 ms"
[components.a]
kind = "cbr"
rate = "149.76 Mb/s"
vc = 1
[components.b]
kind = "cbr"
rate = "149.76 Mb/s"
vc = 2
[components.c]
kind = "cbr"
rate = "149.76 Mb/s"
vc = 3
[components.sw]
kind = "switch"
ports = 4
queueing = "per-vc"
vcs = ["p1:1 -> p4:1", "p2:2 -> p4:2", "p3:3 -> p4:3"]
weight = ["p4:1 = 3", "p4:3 = 2"]
[components.sink]
kind = "sink"
"#;
    let r = run(&Scenario::from_text(text, "wrr.toml").unwrap_or_else(|e| panic!("{e}")), 0);
    let got: Vec<f64> = ["vc1", "vc2", "vc3"].iter().map(|v| probe(&r, &format!("sink/{v}"), "sink_rx_cells", "count")).collect();
    let total: f64 = got.iter().sum();
    assert!(total > 7000.0, "{total}");
    for (g, w) in got.iter().zip([3.0, 1.0, 2.0]) {
        assert!((g - total * w / 6.0).abs() <= 3.0, "{got:?}");
    }
    // the same port without weights: equal shares
    let plain = run(&Scenario::from_text(&text.replace("weight = [\"p4:1 = 3\", \"p4:3 = 2\"]\n", ""), "rr.toml").unwrap_or_else(|e| panic!("{e}")), 0);
    let eq: Vec<f64> = ["vc1", "vc2", "vc3"].iter().map(|v| probe(&plain, &format!("sink/{v}"), "sink_rx_cells", "count")).collect();
    assert!(eq.iter().all(|&x| (x - eq[0]).abs() <= 1.0), "{eq:?}");
    // errors
    let e = err(&text.replace("\"p4:3 = 2\"", "\"p4:3 = 0\""));
    assert!(e.contains("weight must be a whole number from 1 to 4096"), "{e}");
    let e = err(&text.replace("queueing = \"per-vc\"\n", ""));
    assert!(e.contains("weight needs queueing = \"per-vc\""), "{e}");
}
