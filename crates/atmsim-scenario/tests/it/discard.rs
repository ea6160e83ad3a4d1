//! Buffer policies in whole runs: early packet discard keeps every AAL5 PDU that gets
//! through whole; partial packet discard saves the cells of damaged PDUs; EFCI marking
//! reaches the sink.

use super::*;

/// Two UDP blasters (9180-octet datagrams, 192-cell AAL5 PDUs) at 80 Mb/s each into
/// one OC-3c switch port with a 256-cell buffer: 160 Mb/s offered to 149.76.
fn congested(sw_extra: &str) -> atmsim_scenario::RunResult {
    blasters("80 Mb/s", "periodic", "300 ms", sw_extra)
}

fn blasters(rate: &str, spacing: &str, duration: &str, sw_extra: &str) -> atmsim_scenario::RunResult {
    let text = format!(
        r#"connections = ["a -> sw.p1", "c -> sw.p2", "sw.p3 -> b", "b -> sw.p3"]
[scenario]
duration = "{duration}"
[components.a]
kind = "host"
vc = 5
app = "udp"
udp_rate = "{rate}"
udp_spacing = "{spacing}"
length = "9152 B"
[components.c]
kind = "host"
vc = 7
app = "udp"
udp_rate = "{rate}"
udp_spacing = "{spacing}"
length = "9152 B"
[components.b]
kind = "host"
vc = 9
[components.sw]
kind = "switch"
ports = 3
capacity = "256 cells"
vcs = ["p1:5 -> p3:5", "p2:7 -> p3:7"]
{sw_extra}
"#
    );
    run(&Scenario::from_text(&text, "discard.toml").unwrap_or_else(|e| panic!("{e}")), 0)
}

#[test]
fn early_packet_discard_lets_only_whole_pdus_through() {
    let plain = congested("");
    let epd = congested("epd_threshold = \"64 cells\"");
    let broken = |r: &atmsim_scenario::RunResult| probe(r, "b", "aal5_drop_pdus", "count");
    let whole = |r: &atmsim_scenario::RunResult| probe(r, "b", "aal5_rx_pdus", "count");
    // Tail drop alone loses cells from many PDUs, each then useless.
    assert!(broken(&plain) > 10.0, "{}", broken(&plain));
    // With EPD at 64 cells, a PDU admitted below it (≤ 64 + 192 cells) always fits in
    // the 256-cell buffer: no PDU is ever cut, and more arrive whole.
    assert_eq!(broken(&epd), 0.0);
    assert_eq!(probe(&epd, "sw/p3", "q_drop_cells", "count"), probe(&epd, "sw/p3", "q_epd_cells", "count"));
    assert!(whole(&epd) > whole(&plain), "{} vs {}", whole(&epd), whole(&plain));
    // Discarded PDUs are whole: a multiple of 192 cells per VC.
    let dropped: u64 = [0, 1].iter().map(|&f| epd.ledger.dropped_of(f)).sum();
    assert!(dropped > 0 && dropped.is_multiple_of(192), "{dropped}");
}

#[test]
fn partial_packet_discard_drops_the_rest_of_a_cut_pdu() {
    // Poisson datagrams at 2 × 65 Mb/s: the buffer overflows now and then.
    let plain = blasters("65 Mb/s", "poisson", "2 s", "");
    let ppd = blasters("65 Mb/s", "poisson", "2 s", "ppd = true");
    // The same arrivals (same seed): PPD keeps the tails of cut PDUs off the link,
    // which leaves room for others: fewer cells sent, more PDUs whole.
    assert!(probe(&ppd, "sw/p3", "q_ppd_cells", "count") > 0.0);
    assert!(probe(&ppd, "b", "aal5_rx_pdus", "count") > probe(&plain, "b", "aal5_rx_pdus", "count"));
    assert!(probe(&ppd, "sw/p3", "q_tx_cells", "count") < probe(&plain, "sw/p3", "q_tx_cells", "count"));
    // The last cell of a cut PDU still goes, so the receiver sees each cut PDU end.
    assert!(probe(&ppd, "b", "aal5_drop_pdus", "count") > 0.0);
}

#[test]
fn efci_marks_reach_the_sink_only_above_the_threshold() {
    let text = |threshold: &str| format!(
        r#"connections = ["src -> q", "q -> sink"]
[scenario]
duration = "50 ms"
[components.src]
kind = "poisson"
rate = "140 Mb/s"
[components.q]
kind = "fifo"
phy = "OC-3c"
efci_threshold = "{threshold}"
[components.sink]
kind = "sink"
"#
    );
    let low = run(&Scenario::from_text(&text("5 cells"), "efci.toml").unwrap(), 0);
    let high = run(&Scenario::from_text(&text("100000 cells"), "efci.toml").unwrap(), 0);
    let marked = probe(&low, "sink/vc1", "sink_efci_cells", "count");
    assert!(marked > 0.0 && marked == probe(&low, "q", "q_efci_cells", "count"));
    // The marked cells are those that left above 5 cells: at load 0.93 some, not all.
    let sent = probe(&low, "q", "q_tx_cells", "count");
    assert!(marked < sent, "{marked} of {sent}");
    assert_eq!(probe(&high, "sink/vc1", "sink_efci_cells", "count"), 0.0);
    // Marking changes no timing.
    assert_eq!(low.fingerprint, high.fingerprint);
}

/// A CLP = 0 and a CLP = 1 Poisson source (`clp0`, `clp1`: their rates) into one
/// OC-3c FIFO of 64 cells with `extra` (e.g. a clp_threshold).
fn two_priorities(clp0: &str, clp1: &str, extra: &str, fast: bool) -> atmsim_scenario::RunResult {
    let text = format!(
        r#"connections = ["hi -> q", "lo -> q", "q -> sink"]
[scenario]
duration = "200 ms"
fast_path = {fast}
[components.hi]
kind = "poisson"
rate = "{clp0}"
[components.lo]
kind = "poisson"
rate = "{clp1}"
clp = 1
[components.q]
kind = "fifo"
phy = "OC-3c"
capacity = "64 cells"
{extra}
[components.sink]
kind = "sink"
"#
    );
    run(&Scenario::from_text(&text, "clp.toml").unwrap_or_else(|e| panic!("{e}")), 0)
}

#[test]
fn selective_discard_spends_the_clp1_cells_first() {
    // 60 + 100 Mb/s offered to 149.76: tail drop shares the loss; with a threshold at
    // 32 of 64 cells the CLP = 1 cells take it, and the CLP = 0 cells, 40% of the
    // link, find the 32 places above the threshold enough.
    let tail = two_priorities("60 Mb/s", "100 Mb/s", "", true);
    let pbs = two_priorities("60 Mb/s", "100 Mb/s", "clp_threshold = \"32 cells\"", true);
    let (hi, lo) = (0, 1);
    assert!(tail.ledger.dropped_of(hi) > 100, "{}", tail.ledger.dropped_of(hi));
    assert_eq!(pbs.ledger.dropped_of(hi), 0);
    let by_cause = pbs.ledger.dropped_by_cause();
    assert!(by_cause.get("clp").copied().unwrap_or(0) > 1000, "{by_cause:?}");
    // Every CLP = 1 loss is a selective discard (the full buffer never met one: a
    // CLP = 1 cell is refused from 32 cells on), counted by the port since warm-up
    // (no warm-up here) as in the ledger.
    assert_eq!(by_cause.get("buffer_full"), None, "{by_cause:?}");
    assert_eq!(pbs.ledger.dropped_of(lo) as f64, probe(&pbs, "q", "q_clp_cells", "count"));
    // The sink sees only CLP = 1 cells from `lo`, as sent.
    assert_eq!(probe(&pbs, "sink/vc2", "sink_clp1_cells", "count"), probe(&pbs, "sink/vc2", "sink_rx_cells", "count"));
    assert_eq!(probe(&pbs, "sink/vc1", "sink_clp1_cells", "count"), 0.0);
    assert!(pbs.ledger.violations().is_empty(), "{:?}", pbs.ledger.violations());
    // The FIFO that computes departures at arrival and the one that runs them as
    // events discard the same cells.
    let events = two_priorities("60 Mb/s", "100 Mb/s", "clp_threshold = \"32 cells\"", false);
    assert_eq!(probe(&events, "q", "q_clp_cells", "count"), probe(&pbs, "q", "q_clp_cells", "count"));
    assert_eq!(probe(&events, "sink/vc1", "sink_rx_cells", "count"), probe(&pbs, "sink/vc1", "sink_rx_cells", "count"));
}

#[test]
fn clp0_cells_ignore_the_threshold_and_tagged_cells_meet_it_at_a_switch() {
    // A source policed by GCRA with tagging: its non-conforming cells go on as
    // CLP = 1 and a switch port's clp_threshold discards them first; CLP = 0 cells
    // are refused only by the full buffer.
    let text = |extra: &str| {
        format!(
            r#"connections = ["src -> upc", "upc -> sw.p1", "bg -> sw.p2", "sw.p3 -> sink"]
[scenario]
duration = "100 ms"
[components.src]
kind = "poisson"
rate = "90 Mb/s"
[components.upc]
kind = "gcra"
pcr = "60 Mb/s"
cdvt = "20 us"
action = "tag"
[components.bg]
kind = "poisson"
rate = "70 Mb/s"
[components.sw]
kind = "switch"
ports = 3
capacity = "128 cells"
vcs = ["p1:1 -> p3:1", "p2:2 -> p3:2"]
{extra}
[components.sink]
kind = "sink"
"#
        )
    };
    let sc = Scenario::from_text(&text("clp_threshold = \"40 cells\""), "tag.toml").unwrap_or_else(|e| panic!("{e}"));
    let r = run(&sc, 0);
    let tagged = probe(&r, "upc", "upc_nonconforming_cells", "count");
    assert!(tagged > 1000.0, "{tagged}");
    let discarded = probe(&r, "sw/p3", "q_clp_cells", "count");
    assert!(discarded > 0.0 && discarded < tagged, "{discarded} of {tagged}");
    // The conforming cells and the background (CLP = 0 both, 130 Mb/s) lose nothing:
    // every loss is a tagged cell's at the threshold. The sink counts the tagged cells
    // that got through; the rest are still on their way at the end.
    assert_eq!(r.ledger.dropped_by_cause().into_iter().collect::<Vec<_>>(), vec![("clp", discarded as u64)]);
    let tagged_through = probe(&r, "sink/vc1", "sink_clp1_cells", "count");
    let in_flight = tagged - discarded - tagged_through;
    assert!((0.0..=128.0).contains(&in_flight), "{in_flight}");
    assert_eq!(probe(&r, "sink/vc2", "sink_clp1_cells", "count"), 0.0);
}

#[test]
fn abr_sources_have_no_clp_parameter() {
    // TM 4.0: an ABR source's in-rate cells carry CLP = 0.
    let e = err(r#"connections = ["s -> d", "d -> s"]
[scenario]
duration = "10 ms"
[components.s]
kind = "abr_source"
clp = 1
[components.d]
kind = "abr_dest"
"#);
    assert!(e.contains("clp"), "{e}");
}
