//! The `abr_edge` kind: an on-off source's cells queued at an edge device and sent on
//! one ABR VC at its ACR, through an ERICA multiplexer.

use super::*;

const EDGE: &str = r#"
connections = ["src -> e.in", "e -> mux.in", "mux.out -> d", "d -> mux.back_in", "mux.back_out -> e.back"]

[scenario]
name = "abr-edge"
duration = "2 s"
warmup = "0 s"
seed = 15

[components.src]
kind = "onoff"
peak = "40 Mb/s"
mean = "10 Mb/s"
burst_factor = "250 cells"
vc = 9

[components.e]
kind = "abr_edge"
params = "eprca95"
vc = 1

[components.mux]
kind = "abr_mux"
algorithm = "erica"
rate = "8 Mb/s"

[components.d]
kind = "abr_dest"

[probes]
series = ["src.src_tx_rate", "e.acr", "e.src_tx_rate", "e.edge_q"]
interval = "10 ms"
"#;

fn edge(over: &[(&str, &str)]) -> atmsim_scenario::RunResult {
    let over: Vec<(String, String)> = over.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let sc = Scenario::from_text(EDGE, "edge.toml").expect("load").with_overrides(&over).expect("override");
    run(&sc, 0)
}

/// Every cell from the source is sent on, dropped at the full queue, or still waiting.
fn assert_cells_accounted(r: &atmsim_scenario::RunResult) {
    let rx = probe(r, "e", "edge_rx_cells", "count");
    let (sent, dropped, queued) = (probe(r, "e", "abr_data_cells", "count"), probe(r, "e", "edge_drop_cells", "count"), probe(r, "e", "edge_q", "final"));
    assert_eq!(rx, sent + dropped + queued, "rx {rx}, sent {sent}, dropped {dropped}, queued {queued}");
    assert_eq!(rx, probe(r, "src", "src_tx_cells", "count"));
    assert!(r.ledger.violations().is_empty(), "{:?}", r.ledger.violations());
}

/// A line of 8 Mb/s with ERICA at 0.9: the edge's ACR settles at 7.2 Mb/s and the
/// data it sends (31 of 32 in-rate cells) at 6.975 Mb/s, below the source's 10 Mb/s:
/// an unlimited queue grows and keeps the VC busy, a finite one loses what does not
/// fit and runs empty in the source's idle periods.
#[test]
fn an_edge_device_drains_its_queue_at_acr() {
    let r = edge(&[]);
    assert_cells_accounted(&r);
    let acr = probe(&r, "e", "abr_acr", "final");
    assert!((acr - 7.2).abs() <= 0.05 * 7.2, "ACR {acr} Mb/s");
    // Unlimited: nothing lost, the queue holds what the ACR could not carry.
    assert_eq!(probe(&r, "e", "edge_drop_cells", "count"), 0.0);
    let q = probe(&r, "e", "edge_q", "final");
    assert!(q > 1000.0, "queue {q} cells");
    // The queue, once grown, keeps the VC busy: data at 31/32 of the ACR.
    let data = probe(&r, "d/vc1", "sink_throughput", "value");
    assert!((data - 6.975).abs() <= 0.05 * 6.975, "data {data} Mb/s");
    // 200 cells: the queue never exceeds them, and losses are counted.
    let r = edge(&[("e.edge_capacity", "\"200 cells\"")]);
    assert_cells_accounted(&r);
    assert!(probe(&r, "e", "edge_q", "max") <= 200.0);
    assert!(probe(&r, "e", "edge_drop_cells", "count") > 0.0);
    // A small queue empties in the source's idle periods: the VC carries less than
    // its ACR allows (how much buffer an edge needs is dastangoo96's question).
    let data = probe(&r, "d/vc1", "sink_throughput", "value");
    assert!(data < 6.975, "data {data} Mb/s");
    // The series: source rate, ACR, egress rate, edge queue.
    for (c, name) in [("src", "src_tx_rate"), ("e", "acr"), ("e", "src_tx_rate"), ("e", "edge_q")] {
        let s = r.series.iter().find(|s| s.component == c && s.probe == name).unwrap_or_else(|| panic!("no series {c}.{name}"));
        assert_eq!(s.values.len(), 200, "{c}.{name}: one value per 10 ms");
    }
}

/// A self-similar source's cells (handed over ahead) reach an edge whose queue holds
/// a cell without an event each: the edge defers its input while a cell waits
/// (`Lanes::defer_input`), and the kernel hands the arrivals over, each at its instant,
/// before the edge's next event. Every statistic is the event path's; the edge's
/// arrivals no longer go through the future-event list.
#[test]
fn arrivals_behind_a_waiting_cell_take_no_event_of_their_own() {
    let text = |fast: &str| {
        EDGE.replace("seed = 15", &format!("seed = 15\nfast_path = {fast}")).replace(
            "kind = \"onoff\"\npeak = \"40 Mb/s\"\nmean = \"10 Mb/s\"\nburst_factor = \"250 cells\"",
            "kind = \"selfsimilar\"\nmean = \"60 Mb/s\"\nstd = \"20 Mb/s\"",
        )
    };
    // Unlimited, and 300 cells (arrivals to a full queue dropped while handed over).
    for capacity in ["unlimited", "300 cells"] {
        let sc = |fast: &str| Scenario::from_text(&text(fast), "edge_ss.toml").expect("load").with_overrides(&[("e.edge_capacity".to_string(), capacity.to_string())]).expect("override");
        let (fast, exact) = (run(&sc("true"), 0), run(&sc("false"), 0));
        assert_eq!(super::golden::statistics(&fast), super::golden::statistics(&exact), "{capacity}");
        let rx = probe(&fast, "e", "edge_rx_cells", "count");
        if capacity == "unlimited" {
            assert!(probe(&fast, "e", "edge_q", "max") > 1000.0, "the 8 Mb/s VC should fall behind a 60 Mb/s source");
        } else {
            assert!(probe(&fast, "e", "edge_drop_cells", "count") > 0.5 * rx, "{capacity}: most arrivals find the queue full");
        }
        // Without deferring, each of the rx arrivals would be an event of the queue.
        assert!((fast.scheduled as f64) < 0.5 * rx, "{capacity}: {} events scheduled for {rx} arrivals", fast.scheduled);
        assert_cells_accounted(&fast);
    }
}

/// TM 4.0 rule 3 applies at every in-rate chance: an edge whose queue has emptied
/// after a burst still sends the forward RM cell that Trm (100 ms in `eprca95`) makes
/// due once Mrm cells went since the last one. A 10 Mb/s CBR burst of 20 ms (472
/// cells, 16 forward RM cells among the first 488 cells at Nrm = 32, 7 cells after
/// the last) is followed by exactly one more forward RM cell, about 100 ms after the
/// last in-rate one, and then by none.
#[test]
fn an_idle_edge_still_sends_the_forward_rm_cell_trm_makes_due() {
    let text = EDGE.replace(
        "kind = \"onoff\"\npeak = \"40 Mb/s\"\nmean = \"10 Mb/s\"\nburst_factor = \"250 cells\"",
        "kind = \"cbr\"\nrate = \"10 Mb/s\"\nphase = \"0 s\"\nstop = \"20 ms\"",
    );
    let frm = |duration: &str| {
        let sc = Scenario::from_text(&text, "edge_idle.toml").expect("load").with_overrides(&[("scenario.duration".to_string(), duration.to_string())]).expect("override");
        let r = run(&sc, 0);
        assert_eq!(probe(&r, "e", "abr_data_cells", "count"), 472.0, "{duration}: the burst's cells all go");
        probe(&r, "e", "abr_frm_cells", "in_rate")
    };
    // The burst is over (queue empty) by 80 ms; the Trm cell comes about 100 ms after
    // the last in-rate forward RM cell (at most 20 ms + the queue's drain), not before.
    let (after_burst, later, much_later) = (frm("80 ms"), frm("250 ms"), frm("2 s"));
    assert_eq!(after_burst, 16.0);
    assert_eq!(later, after_burst + 1.0);
    assert_eq!(much_later, later, "after the Trm cell fewer than Mrm cells went: no more");
}

/// An end system's own line (`line_rate`, `line_length`) is a link of that rate and
/// length behind it, without the link's component: every statistic the two runs share
/// is the same bit for bit, on the fast path (cells handed over ahead) and on the event
/// path (the line's own timer), with a self-similar source bursting above the edge's
/// ACR — the edge's line, the destination's (backward RM cells), and both.
#[test]
fn an_end_systems_own_line_is_a_link_behind_it() {
    let base = EDGE.replace(
        "kind = \"onoff\"\npeak = \"40 Mb/s\"\nmean = \"10 Mb/s\"\nburst_factor = \"250 cells\"",
        "kind = \"selfsimilar\"\nmean = \"60 Mb/s\"\nstd = \"20 Mb/s\"",
    );
    let line = "line_rate = \"155 Mb/s\"\nline_length = \"40 km\"\n";
    let link = |name: &str| format!("\n[components.{name}]\nkind = \"link\"\nrate = \"155 Mb/s\"\nlength = \"40 km\"\n");
    // (edge's line, destination's line): links for those not on a line of their own.
    for (edge_line, dest_line) in [(true, false), (false, true), (true, true)] {
        let linked = base.replace("\"e -> mux.in\"", "\"e -> l\", \"l -> mux.in\"").replace("\"d -> mux.back_in\"", "\"d -> m\", \"m -> mux.back_in\"") + &link("l") + &link("m");
        let mut own = base.clone();
        if edge_line {
            own = own.replace("params = \"eprca95\"\n", &format!("params = \"eprca95\"\n{line}"));
        } else {
            own = own.replace("\"e -> mux.in\"", "\"e -> l\", \"l -> mux.in\"") + &link("l");
        }
        if dest_line {
            own = own.replace("kind = \"abr_dest\"\n", &format!("kind = \"abr_dest\"\n{line}"));
        } else {
            own = own.replace("\"d -> mux.back_in\"", "\"d -> m\", \"m -> mux.back_in\"") + &link("m");
        }
        for fast in ["true", "false"] {
            let case = format!("edge line {edge_line}, destination line {dest_line}, fast_path = {fast}");
            let sc = |text: &str| Scenario::from_text(&text.replace("seed = 15", &format!("seed = 15\nfast_path = {fast}")), "end_line.toml").expect("load");
            let (a, b) = (run(&sc(&linked), 0), run(&sc(&own), 0));
            let gone = |s: &String| (edge_line && s.starts_with("l ")) || (dest_line && s.starts_with("m "));
            let shared = |r: &atmsim_scenario::RunResult| super::golden::statistics(r).into_iter().filter(|s| !gone(s)).collect::<Vec<_>>();
            assert_eq!(shared(&a), shared(&b), "{case}");
            assert!(probe(&b, "e", "abr_data_cells", "count") > 10_000.0);
            assert!(b.ledger.violations().is_empty(), "{case}: {:?}", b.ledger.violations());
            // The link's own events are gone: one fewer event per cell it carried.
            let carried = if edge_line { probe(&b, "e", "src_tx_cells", "count") } else { 0.0 } + if dest_line { probe(&b, "d/vc1", "abr_turned_cells", "count") } else { 0.0 };
            assert!((b.events as f64) <= a.events as f64 - 0.9 * carried, "{case}: {} events against {}", b.events, a.events);
        }
    }
}

/// A line length without a line, or a line slower than the connection's PCR, is
/// refused with the key and what would do (the destination's line too).
#[test]
fn an_edges_line_is_checked_against_its_length_and_pcr() {
    for (extra, key, says) in [
        ("line_length = \"4 km\"", "e.line_length", "needs line_rate"),
        ("line_rate = \"100 Mb/s\"", "e.line_rate", "slower than PCR"),
        ("line_rate = \"155 Mb/s\"\nline_length = \"5 ms\"", "e.line_length", "length"),
    ] {
        let text = EDGE.replace("params = \"eprca95\"\n", &format!("params = \"eprca95\"\n{extra}\n"));
        let e = match Scenario::from_text(&text, "bad.toml") {
            Ok(_) => panic!("accepted: {extra}"),
            Err(e) => e.to_string(),
        };
        assert!(e.contains(key) && e.contains(says) && e.starts_with("bad.toml:"), "{extra}: {e}");
    }
    let text = EDGE.replace("kind = \"abr_dest\"\n", "kind = \"abr_dest\"\nline_length = \"4 km\"\n");
    let e = Scenario::from_text(&text, "bad.toml").err().map(|e| e.to_string()).unwrap_or_default();
    assert!(e.contains("d.line_length") && e.contains("needs line_rate"), "{e}");
}
