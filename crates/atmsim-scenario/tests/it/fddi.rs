//! The FDDI ring in whole runs: the timed-token protocol against its analytic results
//! (Sevcik–Johnson rotation bounds; Jain's saturated asynchronous throughput), frame
//! conservation through the gateway ports, and bad input refused with one line.

use super::*;

fn ring(extra: &str, duration: &str, warmup: &str) -> atmsim_scenario::RunResult {
    let text = format!(
        r#"connections = []
[scenario]
duration = "{duration}"
warmup = "{warmup}"
seed = 3
[components.ring]
kind = "fddi_ring"
{extra}
"#
    );
    run(&Scenario::from_text(&text, "fddi.toml").unwrap_or_else(|e| panic!("{e}")), 0)
}

/// n saturated stations, asynchronous only: the ring carries frames a fraction
/// n(T − D)/(nT + D) of the time (Jain 1990, from the timed-token rules: every n + 1
/// rotations, of total length nT + D, carry n(T − D) of frames). Exact when the frame
/// time divides both T and D and the token has no length (the formula's assumptions):
/// here frames of 125 octets on the medium (10 µs), D = 4 × (1 µs + 1.5 µs of fibre) =
/// 10 µs, T = 1 ms. The regime is periodic with period nT + D, so a window of W
/// seconds after the warm-up differs from the cycle average by less than (nT + D)/W.
#[test]
fn saturated_asynchronous_throughput_is_jains_formula() {
    let r = ring(
        "stations = 4\nttrt = \"1 ms\"\nstation_delay = \"1 us\"\nfibre_length = \"1.2 km\"\ntoken_octets = 0\ntraffic = \"saturated\"\nframe_data = \"97 B\"",
        "2 s",
        "100 ms",
    );
    let (n, t, d) = (4.0, 1e-3, 10e-6);
    // Picoseconds to seconds in floating point: equal to the last bits.
    assert!((probe(&r, "ring", "ring_latency", "value") - d).abs() < 1e-18);
    let expected = n * (t - d) / (n * t + d);
    let tol = (n * t + d) / 1.9;
    let u = probe(&r, "ring", "ring_utilisation", "value");
    assert!((u - expected).abs() <= tol, "utilisation {u}, expected {expected} ± {tol}");
    eprintln!("utilisation {u}, expected {expected} ± {tol}");
    assert_eq!(probe(&r, "ring", "ring_frame_balance", "value"), 0.0);
    // Every station gets the same share.
    let rates: Vec<f64> = (0..4).map(|i| probe(&r, &format!("ring/s{i}"), "mac_tx_rate", "value")).collect();
    for x in &rates {
        assert!((x - 100.0 * expected / n).abs() <= 100.0 * tol, "{rates:?}");
    }
}

/// The utilisation counts only the part of a frame sent after the warm-up: one
/// saturated station sends 4,096-byte frames back to back (330 µs each), and a window
/// of 2 ms opening at any point of a frame never reads more than 1. (Counting the whole
/// frame that straddles the warm-up gave up to 1 + 330 µs / 2 ms.)
#[test]
fn utilisation_of_a_short_window_never_exceeds_one() {
    for k in 0..8 {
        let warmup = format!("{} us", 1000 + 40 * k);
        let duration = format!("{} us", 3000 + 40 * k);
        let r = ring("stations = 2\nttrt = \"50 ms\"\ntraffic = \"saturated\"\nframe_data = \"4096 B\"", &duration, &warmup);
        let u = probe(&r, "ring", "ring_utilisation", "value");
        assert!(u <= 1.0 && u > 0.8, "warm-up {warmup}: utilisation {u}");
    }
}

/// Sevcik–Johnson: with the synchronous allocations and the latency within TTRT, the
/// mean token rotation is at most TTRT and no rotation exceeds 2·TTRT — here under
/// saturated asynchronous load with synchronous traffic as well.
#[test]
fn token_rotation_is_within_ttrt_on_average_and_twice_ttrt_at_most() {
    for traffic in ["saturated", "bursty"] {
        let r = ring(
            &format!("stations = 6\nttrt = \"4 ms\"\ntraffic = \"{traffic}\"\nrate = \"30 Mb/s\"\nburst = \"2 ms\"\npeak_to_mean = 4\nframe_data = \"4096 B\""),
            "1 s",
            "50 ms",
        );
        let mean = probe(&r, "ring", "mac_token_rotation", "mean");
        let max = probe(&r, "ring", "mac_token_rotation", "max");
        assert!(probe(&r, "ring", "mac_token_rotation", "count") > 1000.0);
        assert!(mean <= 4e-3, "{traffic}: mean rotation {mean}");
        assert!(max <= 8e-3, "{traffic}: max rotation {max}");
    }
}

/// Frames that the gateway station receives leave on gw_rx carrying their ICN; fed
/// back into gw_tx they are sent again to the station of that number. The ledger
/// balances (the run checks it) and every frame sent to the gateway comes back out.
#[test]
fn gateway_ports_carry_frames_and_the_books_balance() {
    let text = r#"connections = ["ring.gw_rx -> ring.gw_tx"]
[scenario]
duration = "200 ms"
seed = 5
[components.ring]
kind = "fddi_ring"
ttrt = "8 ms"
gateway = 0
traffic = "poisson"
rate = "20 Mb/s"
connections = ["1: 2 -> 0", "2: 3 -> 0", "3: 1 -> 2"]
"#;
    let r = run(&Scenario::from_text(text, "gw.toml").unwrap_or_else(|e| panic!("{e}")), 0);
    let to_gw = probe(&r, "ring/s0", "mac_rx_frames", "count");
    let from_gw = probe(&r, "ring/s0", "mac_tx_frames", "count");
    assert!(to_gw > 50.0, "{to_gw}");
    // What the gateway received it sends again, less what is still in its buffer.
    assert!(from_gw <= to_gw && from_gw >= to_gw - 64.0, "{from_gw} of {to_gw}");
    let (g, d, dr, f) = r.ledger.totals();
    assert_eq!(g, d + dr + f, "generated {g} delivered {d} dropped {dr} in flight {f}");
}

#[test]
fn bad_ring_parameters_are_one_line_errors() {
    let base = "[scenario]\nduration = \"1 ms\"\n[components.ring]\nkind = \"fddi_ring\"\n";
    for (extra, key, what) in [
        ("ttrt = \"0 s\"", "ring.ttrt", "valid"),
        ("frame_data = \"4481 B\"", "ring.frame_data", "4480"),
        ("tx_buffer = \"4000 B\"", "ring.tx_buffer", "smaller than one frame"),
        ("ttrt = \"300 us\"", "ring.ttrt", "too short"),
        ("connections = [\"1: 5 -> 1\"]", "ring.connections", "itself"),
        ("connections = [\"9: 5 -> 1\"]", "ring.connections", "no such station"),
        ("t_pri = [\"1 ms\"]", "ring.t_pri", "exactly 8"),
        ("gateway = 7", "ring.gateway", "does not exist"),
        ("gateway_notice = true", "ring.gateway_notice", "without a gateway station"),
    ] {
        let e = err(&format!("connections = []\n{base}{extra}\n"));
        assert!(e.contains(key) && e.contains(what) && !e.contains('\n'), "{extra}: {e}");
    }
}
