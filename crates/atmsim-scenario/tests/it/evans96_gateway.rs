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
    for file in ["gateway_oc12c.toml", "gateway_quad_oc3c.toml"] {
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
