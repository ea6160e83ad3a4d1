//! The ATM–FDDI gateway (`atm_fddi_gateway`) in whole runs: the shipped example
//! (scenarios/examples/atm_fddi_gateway.toml) conserves cells and frames, and below
//! the knee the carried load is the offered load times 45/53 (buddhikot92 section 6.1:
//! the 8 octets of header and SAR overhead of each 53-octet cell are stripped, nothing
//! is lost); bad input is refused with one line.

use super::*;

fn example() -> Scenario {
    let path = format!("{}/../../scenarios/examples/atm_fddi_gateway.toml", env!("CARGO_MANIFEST_DIR"));
    Scenario::load(&path).expect("load")
}

#[test]
fn below_the_knee_carried_is_offered_times_45_over_53_and_the_books_balance() {
    let sc = example();
    let r = run(&sc, 0);
    assert!(r.ledger.violations().is_empty(), "{:?}", r.ledger.violations());
    let (g, d, x, i) = r.ledger.totals();
    assert_eq!(g, d + x + i);
    // Constants of the scenario: 8 sources of mean 7.5 Mb/s (53-octet cells).
    let offered_nominal = 8.0 * 7.5;
    let offered = probe(&r, "gw", "gw_offered_load", "value");
    let carried = probe(&r, "gw", "gw_throughput", "value");
    eprintln!("offered {offered} Mb/s (nominal {offered_nominal}), carried {carried} Mb/s");
    // No loss below the knee.
    assert_eq!(probe(&r, "gw", "spp_cell_loss", "value"), 0.0);
    assert_eq!(probe(&r, "gw", "mpp_frame_loss", "value"), 0.0);
    // Never held: the transmit buffer is never full. It is not empty while the MAC sends
    // one of its frames (3,853 octets on the medium per 3,825 carried, at 100 Mb/s), so
    // it is empty at most the rest of the time; and it does empty (the ring keeps up).
    assert_eq!(probe(&r, "gw", "gw_tx_full", "mean"), 0.0);
    let empty = probe(&r, "gw", "gw_tx_empty", "mean");
    let sending = carried * 3853.0 / 3825.0 / 100.0;
    assert!(empty > 0.0 && empty <= 1.0 - sending + 1e-3, "empty {empty}, sending {sending}");
    let level = probe(&r, "gw", "gw_tx_level", "mean");
    assert!(level >= 0.0 && level <= probe(&r, "gw", "gw_tx_level", "max") && level < 16.0, "level {level}");
    // What arrived and was not carried is at most what the gateway can hold at the
    // ends of the measurement window: 8 connections × 2 queues of ⌈4096/45⌉ = 92 cells,
    // plus 16 frames of at most 92 cells in the transmit buffer, 45 octets a cell.
    let window = 0.9;
    let held_mbit = (8.0 * 2.0 * 92.0 + 16.0 * 92.0) * 45.0 * 8.0 / 1e6;
    let expect = offered * 45.0 / 53.0;
    assert!((carried - expect).abs() <= held_mbit / window, "carried {carried}, expected {expect} ± {}", held_mbit / window);
    // The sources offer their nominal mean (statistical: 8 on-off sources, 0.9 s).
    assert!((offered / offered_nominal - 1.0).abs() < 0.1, "offered {offered} vs {offered_nominal}");
    // Completely assembled frames have a latency of at least their reassembly: 85 cells
    // at the peak rate of 15 Mb/s.
    assert!(probe(&r, "gw", "gw_latency", "count") > 1000.0);
    assert!(probe(&r, "gw", "gw_latency", "min") >= 84.0 * 424.0 / 15e6 * 0.5);
    // Reverse path: station 3's frames to the gateway leave as cells on VC 3, no loss.
    assert!(probe(&r, "gw", "rev_rx_frames", "count") > 0.0);
    assert_eq!(probe(&r, "gw", "rev_rx_drops", "count"), 0.0);
    assert_eq!(probe(&r, "gw", "rev_frame_loss", "value"), 0.0);
    assert!(probe(&r, "sink/vc3", "sink_rx_cells", "count") > 0.0);
    // rev_throughput counts the information field (4,096 octets) of every frame taken
    // from the receive buffer in the window: the frames received in it, less the one at
    // most still waiting or being segmented at the end (its cells take 92 × 2.8 µs),
    // plus the one at most received before the warm-up and taken after it.
    let rx = probe(&r, "gw", "rev_rx_frames", "count");
    let rev = probe(&r, "gw", "rev_throughput", "value");
    let per_frame = 4096.0 * 8.0 / window / 1e6;
    assert!(rev <= (rx + 1.0) * per_frame + 1e-9 && rev >= (rx - 1.0) * per_frame - 1e-9, "rev {rev} Mb/s, {rx} frames");
}

#[test]
fn bad_gateway_parameters_give_one_line() {
    let text = std::fs::read_to_string(format!("{}/../../scenarios/examples/atm_fddi_gateway.toml", env!("CARGO_MANIFEST_DIR"))).unwrap();
    for (from, to, key, what) in [
        ("npe_rate = 100", "npe_rate = 0", "gw.npe_rate", "valid"),
        ("tx_buffer_frames = 16", "tx_buffer_frames = 0", "gw.tx_buffer_frames", "smaller than one frame"),
        ("segment_cells = 85", "segment_cells = 93", "gw.segment_cells", "valid: 1 to 92"),
        ("max_frame = \"4096 B\"", "max_frame = \"5000 B\"", "gw.max_frame", "4480"),
        ("\"8: 8 -> 2\"]", "\"8: 1 -> 2\"]", "gw.connections", "ICN 1 appears twice"),
        ("gateway_notice = true", "gateway_notice = false", "gw_done", "no output port"),
    ] {
        assert!(text.contains(from), "{from}");
        let e = err(&text.replace(from, to));
        assert!(e.contains(key) && e.contains(what) && !e.contains('\n'), "{to}: {e}");
    }
}

/// Above the knee (8 × 17.5 = 140 Mb/s of cells, burst factor 1000, peak-to-average
/// 2): the FDDI MAC drains the transmit buffer more slowly than frames are assembled,
/// the MPP holds acknowledgements while the buffer is full, the reassembly buffer
/// fills and the SPP drops cells; every segment that lost a cell is dropped in the MPP.
/// The carried load stays below the FDDI rate and the books still balance.
#[test]
fn above_the_knee_acks_are_held_and_the_spp_loses_cells() {
    let mut over = Vec::new();
    for k in 1..=8 {
        over.push((format!("src{k}.mean"), "\"17.5 Mb/s\"".to_string()));
        over.push((format!("src{k}.peak"), "\"35 Mb/s\"".to_string()));
        over.push((format!("src{k}.burst_factor"), "\"1000 cells\"".to_string()));
    }
    let sc = example().with_overrides(&over).expect("override");
    let r = run(&sc, 0);
    assert!(r.ledger.violations().is_empty(), "{:?}", r.ledger.violations());
    let carried = probe(&r, "gw", "gw_throughput", "value");
    let offered = probe(&r, "gw", "gw_offered_load", "value");
    let cell_loss = probe(&r, "gw", "spp_cell_loss", "value");
    let frame_loss = probe(&r, "gw", "mpp_frame_loss", "value");
    eprintln!("offered {offered}, carried {carried}, cell loss {cell_loss}, frame loss {frame_loss}, held {}", probe(&r, "gw", "mpp_held_requests", "count"));
    assert!(probe(&r, "gw", "mpp_held_requests", "count") > 0.0);
    assert_eq!(probe(&r, "gw", "gw_tx_occupancy_max", "value"), 16.0);
    assert_eq!(probe(&r, "gw", "gw_tx_level", "max"), 16.0);
    // Held some of the time, and the MAC rarely starved.
    let full = probe(&r, "gw", "gw_tx_full", "mean");
    assert!(full > 0.0 && full < 1.0, "full {full}");
    assert!(probe(&r, "gw", "gw_tx_empty", "mean") < full, "empty less often than full above the knee");
    assert!(cell_loss > 0.0 && frame_loss > 0.0);
    assert!(carried < 100.0 && carried < offered * 45.0 / 53.0);
}

/// Section 6.3 with 8-cell segments, R = 25 requests/ms and 140 Mb/s of cells: above the
/// NPE's knee. With `npe_in_error = "skip"` the NPE's time goes only to segments written
/// to the transmit buffer and the throughput stays at R × 8 cells × 45 octets = 72 Mb/s
/// (the plateau 6.3 describes); with Figure 11's order ("serve") segments in error take
/// the NPE's time too and the throughput falls below it.
/// The NPE's plateau at R = 25 requests/ms with 8-cell segments: R × 8 cells × 45
/// octets × 8 bits, in Mb/s.
const NPE_PLATEAU: f64 = 25e3 * 8.0 * 45.0 * 8.0 / 1e6;

/// The example above the NPE's knee (8-cell segments, R = 25/ms, eight 17.5 Mb/s
/// sources) with `extra` overrides, run under `npe_in_error` = serve and then skip;
/// checks the ledger and that the SPP loses cells there.
fn above_the_knee(extra: &[(&str, &str)]) -> Vec<atmsim_scenario::RunResult> {
    let mut over = vec![("gw.segment_cells".to_string(), "8".to_string()), ("gw.npe_rate".to_string(), "0.025".to_string())];
    over.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    for k in 1..=8 {
        over.push((format!("src{k}.mean"), "\"17.5 Mb/s\"".to_string()));
        over.push((format!("src{k}.peak"), "\"35 Mb/s\"".to_string()));
        over.push((format!("src{k}.burst_factor"), "\"4 cells\"".to_string()));
        over.push((format!("src{k}.wucs_segment"), "8".to_string()));
    }
    ["serve", "skip"]
        .iter()
        .map(|reading| {
            let mut o = over.clone();
            o.push(("gw.npe_in_error".into(), format!("\"{reading}\"")));
            let sc = example().with_overrides(&o).expect("override");
            let r = run(&sc, 0);
            assert!(r.ledger.violations().is_empty(), "{reading}: {:?}", r.ledger.violations());
            assert!(probe(&r, "gw", "spp_cell_loss", "value") > 0.05, "{reading}: above the knee the SPP loses cells");
            r
        })
        .collect()
}

#[test]
fn above_the_npe_knee_skip_holds_the_plateau_and_serve_falls_below_it() {
    let got: Vec<f64> = above_the_knee(&[]).iter().map(|r| probe(r, "gw", "gw_throughput", "value")).collect();
    let (serve, skip, plateau) = (got[0], got[1], NPE_PLATEAU);
    // The NPE cannot serve more than R good segments a second (a few frames of slack at the window's ends).
    assert!(skip <= plateau * 1.02 && skip >= plateau * 0.9, "skip {skip} vs plateau {plateau}");
    assert!(serve < 0.8 * plateau, "serve {serve} vs plateau {plateau}");
}

/// With `spp_empty_in_error = "free"` a segment in error that wrote no cell sends no read
/// request; with segments shorter than a queue (8 cells in 92) every segment in error is
/// such a one, so none reaches the NPE and `npe_in_error` cannot matter: serve and skip
/// run the same trace, at the NPE's plateau (docs/models/gateway.md).
#[test]
fn freeing_empty_queues_makes_serve_and_skip_the_same_run() {
    let got: Vec<(u64, f64)> = above_the_knee(&[("gw.spp_empty_in_error", "\"free\"")]).iter().map(|r| (r.fingerprint, probe(r, "gw", "gw_throughput", "value"))).collect();
    assert_eq!(got[0], got[1], "serve and skip differ although no segment in error reaches the NPE");
    let plateau = NPE_PLATEAU;
    assert!(got[0].1 >= plateau * 0.9 && got[0].1 <= plateau * 1.02, "{} vs plateau {plateau}", got[0].1);
}

/// With `gateway_notice` the gateway counts on a notice for every frame it hands to the
/// ring: a frame the ring cannot send (here addressed to the gateway station itself)
/// stops the run with a message saying what would be valid, instead of leaking a
/// transmit buffer place.
#[test]
fn a_frame_the_ring_cannot_send_stops_the_run_with_a_clear_message() {
    let sc = example().with_overrides(&[("gw.connections".into(), "[\"1: 1 -> 0\"]".into())]).expect("override");
    match sc.run(sc.seed, 0, &mut |_, _| true) {
        Err(atmsim_kernel::SimError::ModelPanic { msg, .. }) => assert!(msg.contains("station 0") && msg.contains("valid"), "{msg}"),
        other => panic!("expected a model error, got {other:?}"),
    }
}
