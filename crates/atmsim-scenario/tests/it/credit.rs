//! Hop-by-hop credit flow control as wired components (scenarios/examples/credit_wan.toml:
//! `credit_sender` → 100 km OC-3c → `credit_buffer`, credit cells tunnelled back
//! through a plain `switch`): no loss when the window never exceeds the buffer, the
//! window-over-round-trip throughput of a greedy VC, credit cells checked byte-exact,
//! bad parameters refused with a line.

use super::*;

const FILE: &str = "scenarios/examples/credit_wan.toml";

fn text() -> String {
    std::fs::read_to_string(format!("{}/../../{FILE}", env!("CARGO_MANIFEST_DIR"))).expect("read")
}

fn scenario(over: &[(&str, &str)]) -> Scenario {
    let over: Vec<(String, String)> = over.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    Scenario::from_text(&text(), FILE).expect("load").with_overrides(&over).expect("override")
}

/// One OC-3c cell slot in seconds: 424 bits at 149.76 Mb/s (SONET STS-3c payload).
const SLOT_S: f64 = 424.0 / 149.76e6;
/// Propagation per km (SPEC section 3).
const S_PER_KM: f64 = 5e-6;

/// A greedy VC's throughput, as a fraction of the line, is min(1, W / R), R the credit
/// loop in slots: 2 · propagation (in slots, D each way) plus the slots the loop spends
/// in transmission and waiting for slot boundaries — the data cell's transmission on
/// `fwd` (1), the wait for the downstream slot (≤ 1), the credit cell's transmission
/// through the switch and on `back` (2, each at most 1 slot late for its own slot
/// boundary) and the wait for the sender's next slot (≤ 1): R ∈ [2D + 3, 2D + 7].
/// Measured over T seconds, a window-limited VC sends in bursts of W cells every R
/// slots, so the count is off by at most W cells at either end: ± W · slot / T.
#[test]
fn a_greedy_vc_gets_window_over_round_trip() {
    let w = 64.0;
    let (dur, warm) = (0.5, 0.05);
    let t = dur - warm;
    for km in [0.1, 10.0, 50.0, 200.0] {
        let sc = scenario(&[
            ("fwd.length", &format!("\"{km} km\"")),
            ("back.length", &format!("\"{km} km\"")),
            ("up.window", "\"64 cells\""),
            ("down.buffer", "\"64 cells\""),
            ("down.flush_after", "\"0 s\""),
            ("scenario.duration", &format!("\"{dur} s\"")),
            ("scenario.warmup", &format!("\"{warm} s\"")),
        ]);
        let r = run(&sc, 0);
        let d = km * S_PER_KM / SLOT_S;
        let edge = w * SLOT_S / t;
        let lo = (w / (2.0 * d + 7.0)).min(1.0) - edge;
        let hi = (w / (2.0 * d + 3.0)).min(1.0) + edge;
        let got = probe(&r, "sink/vc100", "sink_throughput", "value") / 149.76;
        assert!(got >= lo && got <= hi, "{km} km: throughput {got:.4} of the line, expected within [{lo:.4}, {hi:.4}] (D = {d:.1} slots)");
        assert_eq!(probe(&r, "down", "credit_overflow_cells", "count"), 0.0, "{km} km");
        assert!(r.ledger.violations().is_empty(), "{:?}", r.ledger.violations());
    }
}

/// With the window at most the buffer, no cell is ever dropped, whatever the delays and
/// the downstream rate (here a DS-3 line behind an OC-3c hop, so cells wait in `down`);
/// with a window above the buffer the same run overflows (the test can fail).
#[test]
fn no_cell_is_lost_while_credits_never_exceed_the_buffer() {
    lossless_iff_window_fits_the_buffer(scenario, &[]);
}

/// The no-loss check of both variants (`build` makes the scenario, `extra` adds
/// overrides): with the window at most the buffer no cell is dropped and cells did queue
/// downstream; with the window above it the buffer overflows.
fn lossless_iff_window_fits_the_buffer(build: fn(&[(&str, &str)]) -> Scenario, extra: &[(&str, &str)]) {
    for (window, buffer, lossless) in [("16 cells", "16 cells", true), ("64 cells", "64 cells", true), ("64 cells", "16 cells", false)] {
        let (w, b) = (format!("\"{window}\""), format!("\"{buffer}\""));
        let mut over: Vec<(&str, &str)> = vec![
            ("up.window", &w),
            ("down.buffer", &b),
            ("down.phy", "\"DS-3\""),
            ("fwd.length", "\"20 km\""),
            ("back.length", "\"20 km\""),
            ("scenario.warmup", "\"0 s\""),
        ];
        over.extend_from_slice(extra);
        let r = run(&build(&over), 0);
        let over = probe(&r, "down", "credit_overflow_cells", "count");
        let (_, _, dropped, _) = r.ledger.totals();
        if lossless {
            assert_eq!((over, dropped), (0.0, 0), "window {window}, buffer {buffer}");
            assert!(probe(&r, "down", "credit_buffer_max", "value") > 1.0, "cells did queue downstream");
            assert!(probe(&r, "up", "credit_entries", "count") > 0.0);
        } else {
            assert!(over > 0.0, "window {window} over buffer {buffer} must overflow");
        }
        assert!(r.ledger.violations().is_empty(), "{:?}", r.ledger.violations());
    }
}

/// The credit cells cross a switch that does not implement credit flow control (VC
/// 0/4095 translated to 0/200 like any VC); `--check-wire` round-trips each one where it
/// arrives, and changes no trace.
#[test]
fn credit_cells_tunnel_through_a_plain_switch_and_check_byte_exact() {
    let mut sc = scenario(&[("scenario.warmup", "\"0 s\""), ("scenario.duration", "\"50 ms\"")]);
    let plain = run(&sc, 0);
    sc.check_wire = true;
    let r = run(&sc, 0);
    assert_eq!((r.fingerprint, r.events), (plain.fingerprint, plain.events), "the checking mode changes no trace");
    let rx = probe(&r, "up", "credit_rx_cells", "count");
    let tx = probe(&r, "down", "credit_tx_cells", "count");
    assert!(rx > 100.0, "{rx} credit cells came back");
    // Those still on the 100 km back fibre or in the switch at the end are not yet in.
    assert!(rx <= tx && tx - rx <= 500e-6 / SLOT_S + 2.0, "{tx} sent, {rx} received");
    assert_eq!(r.ledger.wire_checked as f64, rx);
    assert!(probe(&r, "up", "credit_entries", "count") >= rx, "at least one entry per credit cell");
    assert!(r.ledger.violations().is_empty(), "{:?}", r.ledger.violations());
}

/// The line of the first occurrence of `needle` in `text` (1-based).
fn line_of(text: &str, needle: &str) -> usize {
    let at = text.find(needle).unwrap_or_else(|| panic!("no {needle}"));
    text[..at].matches('\n').count() + 1
}

#[test]
fn bad_credit_parameters_name_the_file_line_and_key() {
    let base = text();
    for (old, new, key, want) in [
        ("window = \"256 cells\"", "window = \"0 cells\"", "components.up.window", "1 cell or more"),
        ("vcs = [\"100\"]", "vcs = [\"5000\"]", "components.up.vcs", "VCI from 1 to 4095"),
        ("vcs = [\"100\"]", "vcs = [\"100\", \"100\"]", "components.up.vcs", "listed twice"),
        ("buffer = \"256 cells\"", "buffer = \"0 cells\"", "components.down.buffer", "1 cell or more"),
        ("credit_vc = \"0/4095\"", "credit_vc = \"x\"", "components.down.credit_vc", "VC label"),
    ] {
        let bad = base.replacen(old, new, 1);
        let line = line_of(&bad, new);
        let e = err(&bad);
        assert!(e.starts_with(&format!("bad.toml:{line}: {key}: ")) && e.contains(want) && !e.contains('\n'), "{new}: {e}");
    }
}

// ---- The in-header variant (scenarios/examples/credit_lan.toml: credits in cell
// headers on a direct back link; the same checks as the WAN variant's above).

const LAN: &str = "scenarios/examples/credit_lan.toml";

/// The shipped example `path` with overrides.
fn example(path: &str, over: &[(&str, &str)]) -> Scenario {
    let text = std::fs::read_to_string(format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"))).expect("read");
    let over: Vec<(String, String)> = over.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    Scenario::from_text(&text, path).expect("load").with_overrides(&over).expect("override")
}

fn lan(over: &[(&str, &str)]) -> Scenario {
    example(LAN, over)
}

/// A greedy VC with a 64-cell window over a 64-cell buffer, at each distance: its
/// throughput is min(1, W / R) for a round trip R in [2D + 2, 2D + 4 + `extra`] slots
/// (the count is off by at most W cells at either end), and no cell overflows. Returns
/// (km, D in slots, run) for the variant's own checks.
fn window_over_round_trip(load: fn(&[(&str, &str)]) -> Scenario, kms: &[f64], (dur, warm): (f64, f64), extra: f64) -> Vec<(f64, f64, atmsim_scenario::RunResult)> {
    let w = 64.0;
    let t = dur - warm;
    kms.iter()
        .map(|&km| {
            let sc = load(&[
                ("fwd.length", &format!("\"{km} km\"")),
                ("back.length", &format!("\"{km} km\"")),
                ("up.window", "\"64 cells\""),
                ("down.buffer", "\"64 cells\""),
                ("scenario.duration", &format!("\"{dur} s\"")),
                ("scenario.warmup", &format!("\"{warm} s\"")),
            ]);
            let r = run(&sc, 0);
            let d = km * S_PER_KM / SLOT_S;
            let edge = w * SLOT_S / t;
            let lo = (w / (2.0 * d + 4.0 + extra)).min(1.0) - edge;
            let hi = (w / (2.0 * d + 2.0)).min(1.0) + edge;
            let got = probe(&r, "sink/vc100", "sink_throughput", "value") / 149.76;
            assert!(got >= lo && got <= hi, "{km} km: throughput {got:.4} of the line, expected within [{lo:.4}, {hi:.4}] (D = {d:.1} slots)");
            assert_eq!(probe(&r, "down", "credit_overflow_cells", "count"), 0.0, "{km} km");
            assert!(r.ledger.violations().is_empty(), "{:?}", r.ledger.violations());
            (km, d, r)
        })
        .collect()
}

/// min(1, W / R) with the credit in a header on a direct back link: R is 2D plus the
/// data cell's transmission on `fwd` (1 slot), the wait for the downstream slot (< 1),
/// the credit's transmission on `back` (1) and the wait for the sender's next slot (< 1):
/// R ∈ [2D + 2, 2D + 4]; the count is off by at most W cells at either end, as above.
#[test]
fn in_header_a_greedy_vc_gets_window_over_round_trip() {
    for (km, _, r) in window_over_round_trip(lan, &[0.1, 10.0, 50.0, 200.0], (0.5, 0.05), 0.0) {
        // One header per credit: as many credit carriers as entries.
        assert_eq!(probe(&r, "down", "credit_tx_cells", "count"), probe(&r, "down", "credit_entries_made", "count"), "{km} km");
    }
}

/// No loss while the window is at most the buffer (DS-3 downstream behind the OC-3c hop,
/// packing delay 10 us so one header gathers several credits); the window above the
/// buffer overflows.
#[test]
fn in_header_no_cell_is_lost_while_credits_never_exceed_the_buffer() {
    lossless_iff_window_fits_the_buffer(lan, &[("down.flush_after", "\"10 us\"")]);
}

/// `--check-wire` round-trips each arriving credit header (GFC, VCI, PTI 110, HEC) and
/// changes no trace; a WAN credit cell reaching a header-mode sender stops the run.
#[test]
fn in_header_credits_check_byte_exact_and_both_ends_must_agree() {
    let mut sc = lan(&[("scenario.warmup", "\"0 s\""), ("scenario.duration", "\"5 ms\"")]);
    let plain = run(&sc, 0);
    sc.check_wire = true;
    let r = run(&sc, 0);
    assert_eq!((r.fingerprint, r.events), (plain.fingerprint, plain.events), "the checking mode changes no trace");
    let rx = probe(&r, "up", "credit_rx_cells", "count");
    assert!(rx > 100.0, "{rx} credit headers came back");
    assert_eq!(r.ledger.wire_checked as f64, rx);
    let mixed = lan(&[("down.carrier", "\"cell\""), ("down.flush_after", "\"10 us\""), ("scenario.warmup", "\"0 s\""), ("scenario.duration", "\"5 ms\"")]);
    let e = mixed.run(mixed.seed, 0, &mut |_, _| true).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(e.contains("carrier = \"header\""), "a credit cell at a header-mode sender: {e}");
}

/// The MAGIC case (scenarios/evans96/mismatch_credit.toml): credit control around an
/// unchanged host and switch. The TCP acknowledgements and the credit cells share the
/// back link and part at `up` (`rx` to the host); nothing is dropped anywhere, TCP data
/// arrive, every credit cell and every PDU is checked byte-exact, and the checking mode
/// changes no trace.
#[test]
fn the_magic_case_shares_the_back_link_with_tcp_and_loses_nothing() {
    let text = std::fs::read_to_string(format!("{}/../../scenarios/evans96/mismatch_credit.toml", env!("CARGO_MANIFEST_DIR"))).expect("read");
    let over: Vec<(String, String)> = [("scenario.duration", "\"1 s\""), ("scenario.warmup", "\"0 s\"")].iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let mut sc = Scenario::from_text(&text, "scenarios/evans96/mismatch_credit.toml").expect("load").with_overrides(&over).expect("override");
    let plain = run(&sc, 0);
    sc.check_wire = true;
    let r = run(&sc, 0);
    assert_eq!((r.fingerprint, r.events), (plain.fingerprint, plain.events), "the checking mode changes no trace");
    let (_, _, dropped, _) = r.ledger.totals();
    assert_eq!(dropped, 0, "no cell lost: the window (256) never exceeds the switch's buffer (256)");
    assert!(r.ledger.violations().is_empty(), "{:?}", r.ledger.violations());
    let credits = probe(&r, "up", "credit_rx_cells", "count");
    assert!(credits > 1000.0, "{credits} credit cells came back");
    assert!(probe(&r, "sw/p1/vc200", "port_tx_cells", "count") > 0.0, "acknowledgements share the back link");
    assert!(probe(&r, "sparc/tcp/vc100", "tcp_throughput", "count") > 0.0, "TCP data arrived");
    assert!(r.ledger.wire_checked as f64 > credits, "credit cells and PDUs checked");
}

// ---- Piggybacked in-header credit (scenarios/examples/credit_lan_piggyback.toml: the
// LAN hop plus 20 Mb/s going upstream on VC 100; credit rides in those cells' GFC, or in
// a header of its own after flush_after).

const PIGGY: &str = "scenarios/examples/credit_lan_piggyback.toml";

fn piggy(over: &[(&str, &str)]) -> Scenario {
    example(PIGGY, over)
}

/// min(1, W / R) still holds when credit waits for an upstream cell: R is the in-header
/// loop, [2D + 2, 2D + 4], plus the wait for a cell going upstream, at most flush_after
/// (10 us = 3.53 slots) and one slot of alignment; both carriers are used.
#[test]
fn piggyback_a_greedy_vc_gets_window_over_round_trip() {
    let wait = 10e-6 / SLOT_S;
    for (km, d, r) in window_over_round_trip(piggy, &[0.1, 50.0, 200.0], (0.3, 0.03), wait + 1.0) {
        let (own, rode) = (probe(&r, "down", "credit_tx_cells", "count"), probe(&r, "down", "credit_piggybacked", "count"));
        assert!(own > 0.0 && rode > 0.0, "{km} km: both carriers used ({own} own headers, {rode} piggybacked)");
        assert_eq!(own + rode, probe(&r, "down", "credit_entries_made", "count"), "{km} km");
        // What rode upstream arrives (a loop's worth may still be on the back link).
        let taken = probe(&r, "up", "credit_piggybacked", "count");
        assert!((rode - taken).abs() <= 2.0 * d / 5.0 + 2.0, "{km} km: {rode} piggybacked, {taken} taken");
        // The upstream traffic arrives whole and unchanged in number.
        assert!((probe(&r, "rsink/vc100", "sink_throughput", "value") - 20.0).abs() < 0.1, "{km} km");
    }
}

/// No loss while the window is at most the buffer (DS-3 downstream behind the OC-3c
/// hop); the window above the buffer overflows.
#[test]
fn piggyback_no_cell_is_lost_while_credits_never_exceed_the_buffer() {
    lossless_iff_window_fits_the_buffer(piggy, &[]);
}

/// With no upstream cell on the credited VC (the upstream traffic moved to VC 101, or
/// slowed to 1 kb/s) every credit leaves in its own header after the wait, and the
/// greedy VC still gets the line (its window covers the loop plus the wait).
#[test]
fn piggyback_falls_back_to_its_own_header() {
    for over in [("rsrc.vc", "101"), ("rsrc.rate", "\"1 kb/s\"")] {
        let r = run(&piggy(&[over, ("scenario.duration", "\"20 ms\"")]), 0);
        assert_eq!(probe(&r, "down", "credit_piggybacked", "count"), 0.0, "{over:?}");
        assert!(probe(&r, "down", "credit_tx_cells", "count") > 100.0, "{over:?}");
        assert!(probe(&r, "sink/vc100", "sink_throughput", "value") > 140.0, "{over:?}: the window covers the loop plus the wait");
        assert!(r.ledger.violations().is_empty(), "{:?}", r.ledger.violations());
    }
}

/// `--check-wire` round-trips every piggybacked header (the carrying cell's header with
/// GFC = credit) and every own credit header, and changes no trace; piggyback needs
/// carrier = "header" at both ends.
#[test]
fn piggyback_credits_check_byte_exact_and_need_the_header_carrier() {
    let mut sc = piggy(&[("scenario.warmup", "\"0 s\""), ("scenario.duration", "\"5 ms\"")]);
    let plain = run(&sc, 0);
    sc.check_wire = true;
    let r = run(&sc, 0);
    assert_eq!((r.fingerprint, r.events), (plain.fingerprint, plain.events), "the checking mode changes no trace");
    let (own, rode) = (probe(&r, "up", "credit_rx_cells", "count"), probe(&r, "up", "credit_piggybacked", "count"));
    assert!(own > 50.0 && rode > 50.0, "{own} own headers, {rode} piggybacked");
    assert_eq!(r.ledger.wire_checked as f64, own + rode);
    for (key, at) in [("down.carrier", "components.down.piggyback"), ("up.carrier", "components.up.piggyback")] {
        let over = vec![(key.to_string(), "\"cell\"".to_string())];
        let text = std::fs::read_to_string(format!("{}/../../{PIGGY}", env!("CARGO_MANIFEST_DIR"))).expect("read");
        let e = Scenario::from_text(&text, PIGGY).expect("load").with_overrides(&over).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains(at) && e.contains("carrier = \"header\""), "{e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
}

// ---- Credit flow control built into the switch and the host
// (scenarios/examples/credit_switch.toml: the upstream end is `up`'s output p2
// (`credit_out`), the downstream end `down`'s input p1 (`credit_in`), credit cells
// tunnelled back through the plain switch `mid`; scenarios/evans96/mismatch_credit_builtin.toml:
// the host adapter's `credit_window`).

const SWITCHED: &str = "scenarios/examples/credit_switch.toml";

fn switched(over: &[(&str, &str)]) -> Scenario {
    example(SWITCHED, over)
}

/// min(1, W / R) for a greedy VC with a 64-cell window, credit cells made one per
/// departure (no packing delay). R in slots: the gate's cell leaves at a slot start,
/// is transmitted by up.p2 (1) and by `fwd` (1), propagates (D), is transmitted by
/// down.p2 (1) and credits its VC as it leaves; the credit cell is transmitted by
/// down.p1 (1), `back` (1), propagates (D), is transmitted by mid.p2 (1), and its entry
/// is handed over at the gate's next slot (≤ 1, plus ≤ 1 of slot alignment where D is
/// not a whole number of slots): R ∈ [2D + 6, 2D + 8]; the count is off by at most W
/// cells at either end. Nothing overflows downstream.
#[test]
fn switch_built_in_a_greedy_vc_gets_window_over_round_trip() {
    let w = 64.0;
    let (dur, warm) = (0.5, 0.05);
    let t = dur - warm;
    for km in [0.1, 10.0, 50.0, 200.0] {
        let sc = switched(&[
            ("fwd.length", &format!("\"{km} km\"")),
            ("back.length", &format!("\"{km} km\"")),
            ("up.credit_out", "[\"p2 = 64 cells\"]"),
            ("down.vc_capacity", "\"64 cells\""),
            ("down.credit_flush_after", "\"0 s\""),
            ("scenario.duration", &format!("\"{dur} s\"")),
            ("scenario.warmup", &format!("\"{warm} s\"")),
        ]);
        let r = run(&sc, 0);
        let d = km * S_PER_KM / SLOT_S;
        let edge = w * SLOT_S / t;
        let lo = (w / (2.0 * d + 8.0)).min(1.0) - edge;
        let hi = (w / (2.0 * d + 6.0)).min(1.0) + edge;
        let got = probe(&r, "sink/vc100", "sink_throughput", "value") / 149.76;
        assert!(got >= lo && got <= hi, "{km} km: throughput {got:.4} of the line, expected within [{lo:.4}, {hi:.4}] (D = {d:.1} slots)");
        assert_eq!(probe(&r, "down/p2", "q_drop_cells", "count"), 0.0, "{km} km");
        // One credit cell per departure: entries = credit cells = cells credited.
        assert_eq!(probe(&r, "down/p1", "credit_tx_cells", "count"), probe(&r, "down/p1", "credit_entries_made", "count"), "{km} km");
        assert!(r.ledger.violations().is_empty(), "{:?}", r.ledger.violations());
    }
}

/// No cell lost anywhere while the window is at most the downstream buffer: the
/// downstream port p2 runs at DS-3 behind the OC-3c hop, so cells queue there, and the
/// upstream gate holds what waits for credit without bound; a window above the buffer
/// overflows the downstream port.
#[test]
fn switch_built_in_no_cell_is_lost_while_credits_never_exceed_the_buffer() {
    for (window, buffer, lossless) in [("16 cells", "16 cells", true), ("64 cells", "64 cells", true), ("64 cells", "16 cells", false)] {
        let (w, b) = (format!("[\"p2 = {window}\"]"), format!("\"{buffer}\""));
        let r = run(
            &switched(&[
                ("up.credit_out", &w),
                ("up.vc_capacity", "\"unlimited\""),
                ("down.vc_capacity", &b),
                ("down.port_phy", "[\"p2 = DS-3\"]"),
                ("fwd.length", "\"20 km\""),
                ("back.length", "\"20 km\""),
                ("scenario.warmup", "\"0 s\""),
                ("scenario.duration", "\"50 ms\""),
            ]),
            0,
        );
        let (_, _, dropped, _) = r.ledger.totals();
        let down = probe(&r, "down/p2", "q_drop_cells", "count");
        if lossless {
            assert_eq!((down, dropped), (0.0, 0), "window {window}, buffer {buffer}");
            assert!(probe(&r, "down/p2", "q_len", "max") > 1.0, "cells did queue downstream");
            assert!(r.ledger.totals().3 > 1000, "the gate held cells back (they wait for credit at the end)");
        } else {
            assert!(down > 0.0, "window {window} over buffer {buffer} must overflow");
        }
        assert!(r.ledger.violations().is_empty(), "{:?}", r.ledger.violations());
    }
}

/// The credit cells cross `mid`, which does not implement credit flow control (0/4095
/// becomes 0/200); `up` recognises them by what they carry, `--check-wire` round-trips
/// each one there and changes no trace.
#[test]
fn switch_built_in_credit_cells_tunnel_and_check_byte_exact() {
    let mut sc = switched(&[("scenario.warmup", "\"0 s\""), ("scenario.duration", "\"20 ms\"")]);
    let plain = run(&sc, 0);
    sc.check_wire = true;
    let r = run(&sc, 0);
    assert_eq!((r.fingerprint, r.events), (plain.fingerprint, plain.events), "the checking mode changes no trace");
    let rx = probe(&r, "up/p2", "credit_rx_cells", "count");
    let tx = probe(&r, "down/p1", "credit_tx_cells", "count");
    assert!(rx > 100.0, "{rx} credit cells came back");
    assert!(probe(&r, "mid/p2/vc200", "port_tx_cells", "count") >= rx, "every credit cell crossed mid on 0/200");
    assert!(rx <= tx && tx - rx <= 500e-6 / SLOT_S + 2.0, "{tx} sent, {rx} received");
    assert_eq!(r.ledger.wire_checked as f64, rx);
    assert!(r.ledger.violations().is_empty(), "{:?}", r.ledger.violations());
}

/// The MAGIC cases with the credit control built in give the TCP result of the component
/// form (credit_sender and credit_buffer wired around unchanged hosts and switches): one
/// stream (mismatch_credit_builtin.toml: the DEC's adapter and the switch) and two
/// streams (two_streams_credit_builtin.toml: the KU switch's WAN port and the EDC
/// switch). The credit loop sets the rate either way, 256 cells per 8.8 ms per VC, and
/// the forms differ only in a slot or two of alignment per loop, so the throughputs agree
/// within 1 %; nobody loses a cell.
#[test]
fn the_magic_case_built_in_gives_the_component_forms_tcp_result() {
    let load = |path: &str| {
        let text = std::fs::read_to_string(format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"))).expect("read");
        let over: Vec<(String, String)> = [("scenario.duration", "\"3 s\""), ("scenario.warmup", "\"1 s\"")].iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Scenario::from_text(&text, path).expect("load").with_overrides(&over).expect("override")
    };
    // The loop bound per VC: 256 cells of 424 bits per 8.8 ms, 48/53 of it cell payload,
    // 9140 of every 9216 octets TCP data (docs/models/credit.md).
    let bound = 256.0 * 424.0 / 8.8e-3 * 48.0 / 53.0 * 9140.0 / 9216.0;
    for (built_in, parts, vcs, gate) in [
        ("mismatch_credit_builtin.toml", "mismatch_credit.toml", 1.0, "dec/nic"),
        ("two_streams_credit_builtin.toml", "two_streams_credit.toml", 2.0, "sw_ku/p3"),
    ] {
        let built = run(&load(&format!("scenarios/evans96/{built_in}")), 0);
        let comp = run(&load(&format!("scenarios/evans96/{parts}")), 0);
        let (b, p) = (probe(&built, "sparc", "tcp_throughput", "rx_total"), probe(&comp, "sparc", "tcp_throughput", "rx_total"));
        assert!(b > 0.95 * vcs * bound && b < vcs * bound, "{built_in}: {b} b/s against the loop's {}", vcs * bound);
        assert!((b - p).abs() < 0.01 * p, "{built_in} {b} b/s, {parts} {p} b/s");
        for r in [&built, &comp] {
            assert_eq!(r.ledger.totals().2, 0, "{built_in}: no cell lost");
            assert!(r.ledger.violations().is_empty(), "{:?}", r.ledger.violations());
        }
        assert!(probe(&built, gate, "credit_rx_cells", "count") > 1000.0, "{built_in}: credit cells reached the upstream end");
    }
}

#[test]
fn bad_built_in_credit_parameters_name_the_file_line_and_key() {
    let text = std::fs::read_to_string(format!("{}/../../{SWITCHED}", env!("CARGO_MANIFEST_DIR"))).expect("read");
    for (old, new, key, want) in [
        ("credit_out = [\"p2 = 256 cells\"]", "credit_out = [\"p2 = 0 cells\"]", "components.up.credit_out", "1 cell or more"),
        ("credit_out = [\"p2 = 256 cells\"]", "credit_out = [\"p5 = 256 cells\"]", "components.up.credit_out", "does not exist"),
        ("credit_out = [\"p2 = 256 cells\"]", "credit_out = [\"p2 = 256 cells\", \"p2 = 16 cells\"]", "components.up.credit_out", "listed twice"),
        ("vcs = [\"p1:100 -> p2:100\"]\ncredit_out", "vcs = [\"p1:100 -> p2:5000\"]\ncredit_out", "components.up.credit_out", "VCI from 1 to 4095"),
        ("credit_in = [\"p1\"]", "credit_in = [\"p3\"]", "components.down.credit_in", "does not exist"),
        ("credit_out = [\"p2 = 256 cells\"]", "credit_out = [\"p2 = 256 cells\"]\nabr = [\"p2 = efci\"]\nefci_threshold = \"10 cells\"", "components.up.credit_out", "not both"),
    ] {
        let bad = text.replacen(old, new, 1);
        assert_ne!(bad, text, "{old}");
        let e = err(&bad);
        assert!(e.contains(key) && e.contains(want) && !e.contains('\n'), "{new}: {e}");
    }
    let magic = std::fs::read_to_string(format!("{}/../../scenarios/evans96/mismatch_credit_builtin.toml", env!("CARGO_MANIFEST_DIR"))).expect("read");
    for (new, want) in [("credit_window = \"0 cells\"", "1 cell or more"), ("credit_window = \"256 cells\"\nvc = 70000\napp = \"udp\"\nudp_rate = \"1 Mb/s\"", "VCI from 1 to 4095")] {
        let bad = magic.replacen("credit_window = \"256 cells\"", new, 1);
        let line = line_of(&bad, "credit_window = ");
        let e = err(&bad);
        assert!(e.contains("components.dec.credit_window") && e.contains(want) && !e.contains('\n'), "{new}: {e}");
        assert!(e.starts_with(&format!("bad.toml:{line}: ")), "{e}");
    }
}

/// A host with `credit_window` gates every VC it was told to send on (its TCP
/// connections' and its `vc`): echo replies on `vc` wait for credit like the data and
/// arrive; a host without `vc` answers on label 0, which no credit covers, so those
/// replies go out without credit instead of stopping the run (here the switch has no
/// route for label 0 and drops them).
#[test]
fn a_credit_controlled_host_gates_its_echo_replies_on_its_vc_and_passes_other_labels() {
    let text = std::fs::read_to_string(format!("{}/../../scenarios/evans96/mismatch_credit_builtin.toml", env!("CARGO_MANIFEST_DIR"))).expect("read");
    let ping = [
        ("scenario.duration", "\"0.5 s\""),
        ("scenario.warmup", "\"0 s\""),
        ("sparc.app", "\"ping\""),
        ("sparc.vc", "300"),
        ("sparc.interval", "\"10 ms\""),
        ("sparc.start", "\"0.1 s\""),
        ("sparc.count", "30"),
    ];
    for dec_vc in [None, Some("300")] {
        let mut over: Vec<(String, String)> = ping.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        over.push(("sw.vcs".into(), "[\"p1:100 -> p2:100\", \"p2:200 -> p1:200\", \"p2:300 -> p1:300\", \"p1:300 -> p2:300\"]".into()));
        if let Some(v) = dec_vc {
            over.push(("dec.vc".into(), v.into()));
        }
        let sc = Scenario::from_text(&text, "mismatch_credit_builtin.toml").expect("load").with_overrides(&over).expect("override");
        let r = run(&sc, 0);
        assert!(r.ledger.violations().is_empty(), "{:?}", r.ledger.violations());
        let (replies, no_route) = (probe(&r, "sparc", "ping_rx", "count"), probe(&r, "sw/p1", "sw_no_route_cells", "count"));
        // Cells the adapter sent, and those it sent with credit.
        let (sent, gated) = (probe(&r, "dec/nic", "q_tx_cells", "count"), probe(&r, "dec/nic", "credit_sent_cells", "count"));
        match dec_vc {
            None => assert!(replies == 0.0 && no_route > 0.0 && sent > gated, "replies on label 0 left without credit: {replies} back, {no_route} unrouted, {sent} sent, {gated} with credit"),
            Some(_) => assert!(replies >= 25.0 && no_route == 0.0 && sent == gated, "replies on VC 300 waited for credit and arrived: {replies} back, {sent} sent, {gated} with credit"),
        }
    }
}
