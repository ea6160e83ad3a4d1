//! evans96's OC-12c gateway and the AN2 fabric in whole runs: what the multiplexer must
//! carry by arithmetic, and the every-other-slot rule's cap on one VC.

use super::*;

fn shipped(name: &str) -> Scenario {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/evans96").join(name);
    Scenario::load(&path.to_string_lossy()).unwrap_or_else(|e| panic!("{e}"))
}

/// STS-12c payload: 1040 of 1080 columns × 9 rows × 8000 frames/s × 8 bits (ANSI T1.105,
/// ITU-T G.707) = 599.04 Mb/s of cells; of each 53-octet cell 48 are payload.
const STS12C_PAYLOAD_MBPS: f64 = 1040.0 * 9.0 * 8000.0 * 8.0 / 1e6;

#[test]
fn four_saturated_oc3c_fill_the_oc12c_payload() {
    assert!((STS12C_PAYLOAD_MBPS - 599.04).abs() < 1e-9);
    let analytic = STS12C_PAYLOAD_MBPS * 48.0 / 53.0; // 542.53 Mb/s
    for file in ["gateway_oc12c.toml", "gateway_quad_oc3c.toml", "gateway_oc12c_sonet.toml"] {
        let sc = shipped(file);
        let r = run(&sc, 0);
        let payload = probe(&r, "rx_probe", "meas_payload_throughput", "value");
        // 55 ms after the warm-up hold about 77,700 cells: one cell more or less at either
        // end of the window is 1.3e-5 of the total.
        assert!((payload - analytic).abs() / analytic < 1e-4, "{file}: {payload} vs {analytic}");
        assert!((probe(&r, "rx_probe", "meas_interarrival", "mean") - 1.0).abs() < 1e-3, "{file}: back to back");
        for vc in 1..=4 {
            let t = probe(&r, &format!("rx_probe/vc{vc}"), "meas_throughput", "value");
            assert!((t - 149.76).abs() < 0.01, "{file} vc{vc}: {t}");
        }
        assert!(r.ledger.violations().is_empty(), "{:?}", r.ledger.violations());
    }
}

#[test]
fn the_every_other_slot_rule_caps_one_vc_at_half_the_fabric() {
    // One CBR VC at the OC-12c cell rate through an AN2 whose fabric runs at 800 Mb/s:
    // with vc_slot_gap = 2 it crosses at most every other fabric slot, 400 Mb/s ("the AN2
    // restricts any VC's maximum rate to 400 Mb/s (half the capacity)", evans96);
    // without it, the 599.04 Mb/s line rate.
    let text = |gap: u32| {
        format!(
            r#"connections = ["src -> an2.p1", "an2.p2 -> chip", "chip -> s"]
[scenario]
duration = "10 ms"
warmup = "2 ms"
[components.src]
kind = "cbr"
rate = "599.04 Mb/s"
vc = 5
[components.an2]
kind = "switch"
ports = 2
phy = "OC-12c"
buffering = "input-output"
input_capacity = "unlimited"
speedup = {}
vc_slot_gap = {gap}
vcs = ["p1:5 -> p2:5"]
[components.chip]
kind = "measurement_chip"
phy = "OC-12c"
[components.s]
kind = "sink"
"#,
            800.0 / 599.04
        )
    };
    let r = run(&Scenario::from_text(&text(2), "an2.toml").unwrap_or_else(|e| panic!("{e}")), 0);
    let t = probe(&r, "chip", "meas_throughput", "value");
    assert!((t - 400.0).abs() < 0.5, "{t}");
    assert!(probe(&r, "chip", "meas_interarrival", "min") >= 1.0);
    let r = run(&Scenario::from_text(&text(1), "an2.toml").unwrap_or_else(|e| panic!("{e}")), 0);
    let t = probe(&r, "chip", "meas_throughput", "value");
    assert!((t - 599.04).abs() < 0.5, "{t}");
}

#[test]
fn bad_chip_and_gap_values_are_one_clear_line() {
    let chip = |extra: &str| {
        format!(
            "connections = [\"src -> chip\", \"chip -> s\"]\n[scenario]\nduration = \"1 ms\"\n[components.src]\nkind = \"cbr\"\nrate = \"1 Mb/s\"\nvc = 5\n[components.chip]\nkind = \"measurement_chip\"\n{extra}\n[components.s]\nkind = \"sink\"\n"
        )
    };
    let e = err(&chip("phy = \"OC-12c\"\nmax_vcs = 2\nvcs = [\"1\", \"2\", \"3\"]"));
    assert!(e.contains("components.chip.vcs") && e.contains("max_vcs = 2"), "{e}");
    let e = err(&chip("phy = \"OC-12c\"\nmax_vcs = 128"));
    assert!(e.contains("components.chip.max_vcs") && e.contains("127"), "{e}");
    let e = err(&chip("max_vcs = 3"));
    assert!(e.contains("phy") && e.contains("rate"), "{e}");
    let e = err(&chip("phy = \"OC-12c\"\nwindow = \"0 s\""));
    assert!(e.contains("components.chip.window"), "{e}");
    let sw = "connections = [\"src -> sw.p1\", \"sw.p2 -> s\"]\n[scenario]\nduration = \"1 ms\"\n[components.src]\nkind = \"cbr\"\nrate = \"1 Mb/s\"\nvc = 5\n[components.sw]\nkind = \"switch\"\nports = 2\nbuffering = \"input-output\"\nvc_slot_gap = 0\nvcs = [\"p1:5 -> p2:5\"]\n[components.s]\nkind = \"sink\"\n";
    let e = err(sw);
    assert!(e.contains("components.sw.vc_slot_gap") && e.contains("1"), "{e}");
    for e in [err(sw), err(&chip("max_vcs = 3"))] {
        assert_eq!(e.lines().count(), 1, "{e}");
    }
}

/// Rows per second of a SONET line (9 rows × 8000 frames/s).
const ROWS_PER_S: f64 = 72_000.0;

#[test]
fn sonet_framing_shows_the_row_overhead_at_the_rx_probe() {
    // Saturated and framed: every STS-12c cell slot carries a cell (no idle cell at the
    // transmitters, none between cells in frame slots), 542.53 Mb/s of payload; counted
    // in slots of 53 bytes of the 622.08 Mb/s line, each row's 40 overhead bytes (36 TOH
    // + 1 POH + 3 fixed stuff, G.707) are 40/53 of an idle slot: 72,000 rows/s × 40/53.
    let sc = shipped("gateway_oc12c_sonet.toml");
    let r = run(&sc, 0);
    for c in ["l1", "l4", "gw_tx/p5", "oc12"] {
        assert_eq!(probe(&r, c, "phy_tx_idle_cells", "count"), 0.0, "{c}");
    }
    assert_eq!(probe(&r, "rx_probe", "meas_idle_cells", "count"), 0.0);
    let secs = 0.055; // 60 ms run, 5 ms warm-up
    let idle = probe(&r, "rx_line", "meas_idle_cells", "count");
    let expect = ROWS_PER_S * secs * 40.0 / 53.0; // 2988.7
    assert!((idle - expect).abs() <= 2.0, "{idle} vs {expect}");
    // One row is 1080/53 = 20.38 line slots: idle slots recur after 20 or 21 slots (next
    // row) or 40 or 41 (a row whose overhead did not make a whole idle slot), nothing else.
    let periodic: f64 = [20, 21, 40, 41].iter().map(|k| probe(&r, "rx_line", "meas_idle_hist", &format!("slots_{k}"))).sum();
    assert!((periodic - 1.0).abs() < 1e-9, "{periodic}");
    // The interarrival sequence repeats with the rows: its autocorrelation peaks at three
    // rows (3 × 1040·9/53/9 = 58.9 cells) and is near zero off the row multiples.
    let acf = |k: usize| probe(&r, "rx_line", "meas_interarrival_acf", &format!("lag_{k}"));
    assert!(acf(59) > 0.5 && acf(10).abs() < 0.05 && acf(30).abs() < 0.05, "{} {} {}", acf(59), acf(10), acf(30));
    assert!(r.ledger.violations().is_empty(), "{:?}", r.ledger.violations());
}

#[test]
fn a_framed_link_sends_in_frame_slots_and_fills_the_rest_with_idle_cells() {
    // A CBR VC at 0.4 of the STS-3c payload rate through a framed OC-3c link: every cell
    // leaves in one of the frame's slots, so cells + idle cells = the slots that ended
    // (computed from the byte positions), and each cell waits less than one slot plus one
    // row's overhead.
    let text = r#"connections = ["src -> l", "l -> chip", "chip -> s"]
[scenario]
duration = "10 ms"
warmup = "0 s"
[components.src]
kind = "cbr"
rate = "59.904 Mb/s"
vc = 7
[components.l]
kind = "link"
phy = "OC-3c"
framing = "sonet"
delay = "5 us"
[components.chip]
kind = "measurement_chip"
phy = "OC-3c"
framing = "sonet"
frame_offset = "5 us"
[components.s]
kind = "sink"
"#;
    let r = run(&Scenario::from_text(text, "framed.toml").unwrap_or_else(|e| panic!("{e}")), 0);
    let grid = atmsim_models::link::sonet::SonetGrid::sts_nc(3).expect("STS-3c");
    let slots = grid.slots_ended_by(10_000_000_000) as f64; // 10 ms = 80 frames
    assert_eq!(slots, (80 * 9 * 260 / 53) as f64);
    let tx = probe(&r, "l", "q_tx_cells", "count");
    let idle = probe(&r, "l", "phy_tx_idle_cells", "count");
    assert_eq!(tx + idle, slots);
    assert!((probe(&r, "l", "phy_utilisation", "value") - 0.4).abs() < 2e-3);
    // The chip on the same grid sees every slot between two cells as an idle cell: one
    // or two per cell at 0.4 load (interarrivals of 2 or 3 slots).
    assert!(probe(&r, "chip", "meas_interarrival", "min") >= 2.0 && probe(&r, "chip", "meas_interarrival", "max") <= 3.0);
    let slot_s = 424.0 / 149.76e6;
    let row_overhead_s = 10.0 * 125e-6 / 2430.0;
    assert!(probe(&r, "l", "q_wait", "max") < slot_s + row_overhead_s);
}

#[test]
fn framing_needs_a_sonet_line() {
    let link = |extra: &str| {
        format!("connections = [\"src -> l\", \"l -> s\"]\n[scenario]\nduration = \"1 ms\"\n[components.src]\nkind = \"cbr\"\nrate = \"1 Mb/s\"\nvc = 5\n[components.l]\nkind = \"link\"\n{extra}\n[components.s]\nkind = \"sink\"\n")
    };
    for bad in ["phy = \"DS-3\"\nframing = \"sonet\"", "rate = \"149.76 Mb/s\"\nframing = \"sonet\"", "phy = \"OC-3c-x4\"\nframing = \"sonet\""] {
        let e = err(&link(bad));
        assert!(e.contains("components.l.framing") && e.contains("OC-12c"), "{e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
    let e = err(&link("phy = \"OC-3c\"\nframing = \"sdh\""));
    assert!(e.contains("framing") && e.contains("sonet"), "{e}");
    let sw = |entry: &str| {
        format!("connections = [\"src -> sw.p1\", \"sw.p2 -> s\"]\n[scenario]\nduration = \"1 ms\"\n[components.src]\nkind = \"cbr\"\nrate = \"1 Mb/s\"\nvc = 5\n[components.sw]\nkind = \"switch\"\nports = 2\nport_phy = [\"p2 = DS-3\"]\nport_framing = [\"{entry}\"]\nvcs = [\"p1:5 -> p2:5\"]\n[components.s]\nkind = \"sink\"\n")
    };
    let e = err(&sw("p2 = sonet"));
    assert!(e.contains("components.sw.port_framing") && e.contains("OC-12c"), "{e}");
    let e = err(&sw("p1 = pdh"));
    assert!(e.contains("components.sw.port_framing") && e.contains("sonet"), "{e}");
    let e = err(&sw("p3 = sonet"));
    assert!(e.contains("components.sw.port_framing") && e.contains("p3"), "{e}");
}
