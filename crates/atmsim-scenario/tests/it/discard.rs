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
