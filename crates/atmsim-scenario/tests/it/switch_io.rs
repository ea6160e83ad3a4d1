//! The switch's receiving buffers, fabric and shared memory in whole runs
//! (`buffering = "input-output"`, `shared_capacity`): where cells are lost when
//! several inputs at the line rate contend for one output.

use super::*;

/// The wiring, a 20 ms run with 2 ms of warm-up, and CBR sources at the OC-3c cell
/// rate (one cell per slot): (name, VCI) each.
fn line_rate_sources(connections: &str, srcs: &[(&str, u32)]) -> String {
    let head = format!("connections = [{connections}]\n[scenario]\nduration = \"20 ms\"\nwarmup = \"2 ms\"\n");
    head + &srcs.iter().map(|(n, vc)| format!("[components.{n}]\nkind = \"cbr\"\nrate = \"149.76 Mb/s\"\nvc = {vc}\n")).collect::<String>()
}

/// Three CBR sources at the OC-3c cell rate (149.76 Mb/s of cells: one cell per
/// slot) on inputs p1-p3, all switched to output p4.
fn three_into_one(sw_extra: &str) -> atmsim_scenario::RunResult {
    let text = format!(
        r#"{sources}
[components.sw]
kind = "switch"
ports = 4
capacity = "64 cells"
vcs = ["p1:1 -> p4:1", "p2:2 -> p4:2", "p3:3 -> p4:3"]
{sw_extra}
[components.s]
kind = "sink"
"#,
        sources = line_rate_sources(r#""a -> sw.p1", "b -> sw.p2", "c -> sw.p3", "sw.p4 -> s""#, &[("a", 1), ("b", 2), ("c", 3)])
    );
    run(&Scenario::from_text(&text, "io.toml").unwrap_or_else(|e| panic!("{e}")), 0)
}

// Steady state: 3 cells arrive per line slot for an output that sends 1. After the
// 2 ms warm-up the 18 ms hold about 6,360 cells per input; buffers of 32 and 64 cells
// bound how far a finite run's ratio can differ from the long-run one: at most
// (32 + 64 + 2) / 6,360 < 0.02, the tolerance used below.

#[test]
fn speedup_one_loses_everything_at_the_inputs() {
    let r = three_into_one("buffering = \"input-output\"\ninput_capacity = \"32 cells\"\nspeedup = 1");
    // The fabric gives the output one cell per slot: it never queues beyond a cell or
    // two, and never drops; each input is served one slot in three (round robin).
    assert_eq!(probe(&r, "sw/p4", "q_drop_cells", "count"), 0.0);
    assert!(probe(&r, "sw/p4", "q_len", "max") <= 2.0, "{}", probe(&r, "sw/p4", "q_len", "max"));
    for p in ["p1", "p2", "p3"] {
        let l = probe(&r, &format!("sw/{p}"), "sw_in_loss_ratio", "value");
        assert!((l - 2.0 / 3.0).abs() < 0.02, "{p}: {l}");
    }
    assert_eq!(probe(&r, "sw/p1/vc1", "port_in_drop_cells", "count"), probe(&r, "sw/p1", "sw_in_drop_cells", "count"));
    assert!(r.ledger.violations().is_empty(), "{:?}", r.ledger.violations());
}

#[test]
fn speedup_three_moves_the_loss_to_the_output_buffer() {
    let r = three_into_one("buffering = \"input-output\"\ninput_capacity = \"32 cells\"\nspeedup = 3");
    for p in ["p1", "p2", "p3"] {
        assert_eq!(probe(&r, &format!("sw/{p}"), "sw_in_drop_cells", "count"), 0.0, "{p}");
    }
    let l = probe(&r, "sw/p4", "q_loss_ratio", "value");
    assert!((l - 2.0 / 3.0).abs() < 0.02, "{l}");
    assert!(r.ledger.violations().is_empty());
}

#[test]
fn speedup_two_loses_at_both_buffers() {
    // Two cells per line slot cross the fabric: the inputs lose 1 of 3 arrivals, the
    // output 1 of the 2 it receives; together 2 of 3, as always.
    let r = three_into_one("buffering = \"input-output\"\ninput_capacity = \"32 cells\"\nspeedup = 2");
    let inputs: f64 = ["p1", "p2", "p3"].iter().map(|p| probe(&r, &format!("sw/{p}"), "sw_in_loss_ratio", "value")).sum::<f64>() / 3.0;
    assert!((inputs - 1.0 / 3.0).abs() < 0.02, "{inputs}");
    let out = probe(&r, "sw/p4", "q_loss_ratio", "value");
    assert!((out - 0.5).abs() < 0.02, "{out}");
}

#[test]
fn output_buffered_default_reports_no_input_probes() {
    let r = three_into_one("");
    assert!(!r.probes.iter().any(|p| p.probe.starts_with("sw_in_") || p.probe == "port_in_drop_cells"));
    let l = probe(&r, "sw/p4", "q_loss_ratio", "value");
    assert!((l - 2.0 / 3.0).abs() < 0.02, "{l}");
}

#[test]
fn every_arbitration_rule_runs_and_balances() {
    for arb in ["round-robin", "random", "oldest-first"] {
        let r = three_into_one(&format!("buffering = \"input-output\"\ninput_capacity = \"32 cells\"\nspeedup = 1\narbitration = \"{arb}\""));
        let total: f64 = ["p1", "p2", "p3"].iter().map(|p| probe(&r, &format!("sw/{p}"), "sw_in_loss_ratio", "value")).sum::<f64>() / 3.0;
        assert!((total - 2.0 / 3.0).abs() < 0.02, "{arb}: {total}");
        assert!(r.ledger.violations().is_empty(), "{arb}");
    }
}

#[test]
fn an_unknown_arbitration_names_the_key_and_the_choices() {
    let e = err(r#"connections = []
[scenario]
duration = "1 ms"
[components.sw]
kind = "switch"
buffering = "input-output"
arbitration = "fifo"
vcs = ["p1:1 -> p2:1"]
"#);
    assert!(e.contains("arbitration") && e.contains("round-robin") && e.contains("oldest-first"), "{e}");
}

#[test]
fn shared_memory_bounds_all_output_buffers_together() {
    // Four inputs at the line rate, two per output: each output receives 2 cells per
    // slot and sends 1. Alone each would hold its 1000 cells; sharing 100 they hold at
    // most 100 together and lose half of what arrives.
    let text = format!(
        r#"{sources}
[components.sw]
kind = "switch"
ports = 6
capacity = "1000 cells"
shared_capacity = "100 cells"
vcs = ["p1:1 -> p5:1", "p2:2 -> p5:2", "p3:3 -> p6:3", "p4:4 -> p6:4"]
[components.s5]
kind = "sink"
[components.s6]
kind = "sink"
"#,
        sources = line_rate_sources(r#""a -> sw.p1", "b -> sw.p2", "c -> sw.p3", "d -> sw.p4", "sw.p5 -> s5", "sw.p6 -> s6""#, &[("a", 1), ("b", 2), ("c", 3), ("d", 4)])
    );
    let r = run(&Scenario::from_text(&text, "shared.toml").unwrap_or_else(|e| panic!("{e}")), 0);
    let (m5, m6) = (probe(&r, "sw/p5", "q_len", "max"), probe(&r, "sw/p6", "q_len", "max"));
    assert!(m5 + m6 <= 100.0 + 2.0 && m5 < 100.0 && m6 < 100.0, "{m5} {m6}");
    for p in ["p5", "p6"] {
        let l = probe(&r, &format!("sw/{p}"), "q_loss_ratio", "value");
        assert!((l - 0.5).abs() < 0.03, "{p}: {l}");
    }
    assert!(r.ledger.violations().is_empty());
}

#[test]
fn multicast_aal5_through_receiving_buffers_keeps_the_books() {
    // A UDP blaster's 192-cell PDUs, copied to two outputs, one of them also fed by a
    // CBR source at the line rate: copies wait at the inputs, some are lost there and
    // at the outputs; every cell and payload copy is accounted for.
    let text = r#"connections = ["h -> sw.p1", "c -> sw.p2", "sw.p3 -> s3", "sw.p4 -> s4"]
[scenario]
duration = "20 ms"
[components.h]
kind = "host"
vc = 5
app = "udp"
udp_rate = "90 Mb/s"
udp_spacing = "poisson"
length = "9152 B"
[components.c]
kind = "cbr"
rate = "149.76 Mb/s"
vc = 7
[components.sw]
kind = "switch"
ports = 4
capacity = "100 cells"
buffering = "input-output"
input_capacity = "50 cells"
speedup = 1.5
arbitration = "random"
vcs = ["p1:5 -> p3:5, p4:6", "p2:7 -> p3:7"]
[components.s3]
kind = "sink"
[components.s4]
kind = "sink"
"#;
    let r = run(&Scenario::from_text(text, "mc.toml").unwrap_or_else(|e| panic!("{e}")), 0);
    assert!(probe(&r, "sw/p1", "sw_rx_cells", "count") > 1000.0);
    assert!(probe(&r, "sw/p2", "sw_in_drop_cells", "count") > 0.0);
    assert!(r.ledger.violations().is_empty(), "{:?}", r.ledger.violations());
}
