//! The `iofm` kind in whole runs: greedy VCs get exactly i/m of the line, unpaced VCs
//! the rest; parameter mistakes name the parameter.

use super::*;

fn shaped(iofm: &str, extra: &str) -> atmsim_scenario::RunResult {
    let text = format!(
        r#"connections = ["a -> sh", "b -> sh", "sh -> sink"]
[scenario]
duration = "40 ms"
warmup = "5 ms"
[components.a]
kind = "cbr"
rate = "149.76 Mb/s"
[components.b]
kind = "cbr"
rate = "149.76 Mb/s"
[components.sh]
kind = "iofm"
phy = "OC-3c"
{iofm}
[components.sink]
kind = "sink"
{extra}"#
    );
    run(&Scenario::from_text(&text, "iofm.toml").unwrap_or_else(|e| panic!("{e}")), 0)
}

const LINE_MBPS: f64 = 149.76;

#[test]
fn greedy_vcs_get_i_over_m_of_the_line_each() {
    // Both sources offer the whole line; each VC may send 3 cells in any 10 slots.
    let r = shaped("i = 3\nm = 10", "");
    for vc in ["sink/vc1", "sink/vc2"] {
        let got = probe(&r, vc, "sink_throughput", "value");
        assert!((got / (0.3 * LINE_MBPS) - 1.0).abs() < 0.002, "{vc}: {got} Mb/s");
    }
    let util = probe(&r, "sh", "phy_utilisation", "value");
    assert!((util - 0.6).abs() < 0.002, "{util}");
    // Backlogged throughout, a VC is stopped at least once per window of m slots and
    // at most i times (each returning token restarts it for one cell).
    let stops = probe(&r, "sh/vc1", "iofm_stops", "count");
    let windows = 35e-3 * LINE_MBPS * 1e6 / 424.0 / 10.0;
    assert!(stops >= 0.99 * windows && stops <= 3.01 * windows, "{stops} stops in {windows} windows");
}

#[test]
fn an_unpaced_vc_takes_what_the_paced_one_leaves() {
    // VC 1 at most 1 cell in 2 slots; VC 2 not listed, so not paced: the line is full.
    let r = shaped("i = 1\nm = 2\nvcs = [\"1\"]", "");
    let a = probe(&r, "sink/vc1", "sink_throughput", "value");
    let b = probe(&r, "sink/vc2", "sink_throughput", "value");
    assert!((a / (0.5 * LINE_MBPS) - 1.0).abs() < 0.002, "{a}");
    assert!((b / (0.5 * LINE_MBPS) - 1.0).abs() < 0.002, "{b}");
    assert!((probe(&r, "sh", "phy_utilisation", "value") - 1.0).abs() < 0.002);
    // A VC's own window overrides the default.
    let r = shaped("i = 1\nm = 2\nvcs = [\"1: i = 1, m = 4\", \"2\"]", "");
    let a = probe(&r, "sink/vc1", "sink_throughput", "value");
    assert!((a / (0.25 * LINE_MBPS) - 1.0).abs() < 0.002, "{a}");
}

#[test]
fn a_vc_series_follows_its_rate() {
    let r = shaped("i = 1\nm = 4", "[probes]\nseries = [\"sh/vc2.iofm_tx_cells\", \"sh.iofm_q_len\"]\ninterval = \"5 ms\"\n");
    let rates = &r.series[0].values;
    let want = 0.25 * LINE_MBPS * 1e6 / 424.0;
    for &v in &rates[1..] {
        assert!((v / want - 1.0).abs() < 0.01, "{v} vs {want}");
    }
    // The two queues grow by 3/4 of the line each.
    let q = &r.series[1].values;
    assert!(q.windows(2).all(|w| w[1] > w[0]), "{q:?}");
}

#[test]
fn window_errors_name_the_parameter() {
    let base = "connections = [\"src -> sh\", \"sh -> sink\"]\n[scenario]\nduration = \"1 ms\"\n[components.src]\nkind = \"cbr\"\nrate = \"10 Mb/s\"\n[components.sh]\nkind = \"iofm\"\n{X}\n[components.sink]\nkind = \"sink\"\n";
    for (x, msg) in [
        ("phy = \"OC-3c\"\nm = 10", "i"),
        ("phy = \"OC-3c\"\ni = 10", "m"),
        ("phy = \"OC-3c\"\ni = 11\nm = 10", "exceeds"),
        ("phy = \"OC-3c\"\ni = 512\nm = 1000", "i"),
        ("phy = \"OC-3c\"\ni = 5\nm = 1024", "m"),
        ("i = 5\nm = 10", "phy"),
        ("phy = \"OC-3c\"\ni = 5\nm = 10\nvcs = [\"7: i = 0\"]", "1..511"),
        ("phy = \"OC-3c\"\ni = 5\nm = 10\nvcs = [\"7\", \"0/7\"]", "twice"),
        ("phy = \"OC-3c\"\ni = 5\nm = 10\nvc_capacity = \"0 cells\"", "vc_capacity"),
    ] {
        let e = err(&base.replace("{X}", x));
        assert!(e.contains("iofm.toml") || e.contains("bad.toml"), "{e}");
        assert!(e.contains(msg), "{x}: {e}");
    }
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, .. ProptestConfig::default() })]
        /// Any value for any parameter is an error naming it, or a run that finishes
        /// with balanced books.
        #[test]
        fn any_window_parameter_is_an_error_or_runs(v in prop_oneof![
            "-?[0-9]{1,5}",
            "[0-9.e+-]{1,8} ?(Mb/s|cells|B|ms)?",
            Just("unlimited".to_string()),
            "\\[\"[0-9/ ]{0,6}( i=[0-9x]{0,4})?( m=[0-9-]{0,5})?\"(, \"[0-9]{1,3}\")?\\]",
        ], key in prop_oneof![Just("sh.i"), Just("sh.m"), Just("sh.vcs"), Just("sh.vc_capacity"), Just("sh.rate")]) {
            let text = "connections = [\"a -> sh\", \"b -> sh\", \"sh -> sink\"]\n[scenario]\nduration = \"2 ms\"\n[components.a]\nkind = \"cbr\"\nrate = \"100 Mb/s\"\n[components.b]\nkind = \"poisson\"\nrate = \"60 Mb/s\"\n[components.sh]\nkind = \"iofm\"\nrate = \"149.76 Mb/s\"\ni = 5\nm = 17\nvc_capacity = \"40 cells\"\n[components.sink]\nkind = \"sink\"\n";
            let sc = Scenario::from_text(text, "fuzz.toml").unwrap();
            let outcome = rejects_or_runs(&sc, key, v);
            prop_assert!(outcome.is_ok(), "{:?}", outcome);
        }
    }
}

fn adaptive(extra: &str) -> atmsim_scenario::RunResult {
    let text = format!(
        r#"connections = ["src -> sh", "sh -> sink"]
[scenario]
duration = "1 s"
[components.src]
kind = "cbr"
rate = "50 Mb/s"
[components.sh]
kind = "iofm"
phy = "OC-3c"
i = 5
m = 1000
{extra}
[components.sink]
kind = "sink"
[probes]
series = ["sh/vc1.iofm_allowed_rate", "sh/vc1.iofm_q_len"]
interval = "50 ms"
"#
    );
    run(&Scenario::from_text(&text, "iofm.toml").unwrap_or_else(|e| panic!("{e}")), 0)
}

#[test]
fn the_adaptive_shaper_opens_a_window_too_small_for_its_source() {
    // 50 Mb/s of CBR cells against i/m = 5/1000 of OC-3c (0.75 Mb/s).
    let fixed = adaptive("");
    let adapted = adaptive("adapt_interval = 5000\nmu_plus = 0.1\nmu_minus = 0.1\ngamma_plus = 0.1\ngamma_minus = 0.3");
    let sent = |r: &atmsim_scenario::RunResult| probe(r, "sh/vc1", "iofm_tx_cells", "count");
    let queued = |r: &atmsim_scenario::RunResult| probe(r, "sh/vc1", "iofm_q_len", "value");
    // Static: the window passes 0.75 of the 50 Mb/s; nearly everything is still queued.
    assert!(queued(&fixed) > 0.95 * (sent(&fixed) + queued(&fixed)), "{} {}", sent(&fixed), queued(&fixed));
    // Adaptive: the allowed rate climbs past the source's (utilisation r above 0.85
    // raises it), the backlog drains, and at the end little is waiting.
    let allowed = &adapted.series.iter().find(|s| s.probe == "iofm_allowed_rate").unwrap().values;
    // (Sampled every 50 ms, intervals of 5000 slots = 14 ms: the first sample follows
    // three adaptations from 0.75 Mb/s, at most ×1/0.7 each.)
    assert!(allowed[0] < 0.75 / 0.7f64.powi(4) && allowed.last().copied().unwrap_or(0.0) > 50.0, "{allowed:?}");
    assert!(queued(&adapted) < 0.01 * sent(&adapted), "{} {}", sent(&adapted), queued(&adapted));
    let (f, a) = (probe(&fixed, "sh/vc1", "iofm_wait", "mean"), probe(&adapted, "sh/vc1", "iofm_wait", "mean"));
    assert!(a < f, "adaptive wait {a} s vs static {f} s");
}

#[test]
fn adaptive_settings_come_all_together() {
    let base = "connections = [\"src -> sh\", \"sh -> sink\"]\n[scenario]\nduration = \"1 ms\"\n[components.src]\nkind = \"cbr\"\nrate = \"10 Mb/s\"\n[components.sh]\nkind = \"iofm\"\nphy = \"OC-3c\"\ni = 5\nm = 10\n{X}\n[components.sink]\nkind = \"sink\"\n";
    for (x, msg) in [
        ("adapt_interval = 100\nmu_plus = 0.1\nmu_minus = 0.1\ngamma_plus = 0.1", "gamma_minus"),
        ("adapt_interval = 100", "mu_plus"),
        ("mu_plus = 0.1", "only with adapt_interval"),
        ("adapt_interval = 100\nmu_plus = 0.1\nmu_minus = 1.5\ngamma_plus = 0.1\ngamma_minus = 0.1", "mu_minus"),
        ("adapt_interval = 0\nmu_plus = 0.1\nmu_minus = 0.1\ngamma_plus = 0.1\ngamma_minus = 0.1", "adapt_interval"),
    ] {
        let e = err(&base.replace("{X}", x));
        assert!(e.contains(msg), "{x}: {e}");
    }
}

#[test]
fn the_component_keeps_the_reference_schedule_under_adaptation() {
    use atmsim_kernel::{Rate, SimTime};
    use atmsim_models::control::iofm::{reference_run, Adapt, Controller, Window};
    // A CBR stream (phase 1 ps) faster than its window, adapted every 20 slots while
    // m = 64 (stops, restarts and interval ends interleave): the component's timers —
    // decision arming, superseded decisions, the interval timer — must give exactly the
    // schedule of the slot-by-slot reference.
    let line = Rate::from_bps(149.76e6).unwrap();
    let cbr = Rate::from_bps(100e6).unwrap();
    let slots = 3000;
    let end = line.cell_train_offset(slots).ps() + 1;
    let text = format!(
        r#"connections = ["src -> sh", "sh -> sink"]
[scenario]
duration = "{end} ps"
[components.src]
kind = "cbr"
rate = "100 Mb/s"
phase = "1 ps"
[components.sh]
kind = "iofm"
phy = "OC-3c"
i = 2
m = 64
adapt_interval = 20
mu_plus = 0.5
mu_minus = 0.25
gamma_plus = 0.5
gamma_minus = 0.5
[components.sink]
kind = "sink"
"#
    );
    let r = run(&Scenario::from_text(&text, "iofm.toml").unwrap_or_else(|e| panic!("{e}")), 0);
    let arrivals: Vec<(SimTime, u32)> = (0..).map(|k| SimTime(1 + cbr.cell_train_offset(k).ps())).take_while(|t| t.0 < end).map(|t| (t, 1)).collect();
    let a = Adapt { interval: 20, mu_plus: 0.5, mu_minus: 0.25, gamma_plus: 0.5, gamma_minus: 0.5, target: 0.85 };
    let mut ctl = Controller::new(line, &[], Some(Window { i: 2, m: 64 }), None).adaptive(a);
    let sent = reference_run(&mut ctl, &arrivals, slots);
    let waits: Vec<f64> = sent.iter().enumerate().filter_map(|(k, c)| c.map(|(_, seq)| (ctl.slot_start(k as u64).0 - arrivals[seq as usize].0 .0) as f64 * 1e-12)).collect();
    assert_eq!(probe(&r, "sh/vc1", "iofm_tx_cells", "count"), waits.len() as f64);
    let mean = waits.iter().sum::<f64>() / waits.len() as f64;
    let got = probe(&r, "sh/vc1", "iofm_wait", "mean");
    assert!((got - mean).abs() <= 1e-9 * mean, "{got} vs {mean}");
    assert_eq!(probe(&r, "sh/vc1", "iofm_wait", "max"), waits.iter().cloned().fold(0.0, f64::max));
    let w = ctl.window_of(1).unwrap();
    assert_eq!((probe(&r, "sh/vc1", "iofm_i", "value"), probe(&r, "sh/vc1", "iofm_m", "value")), (w.i as f64, w.m as f64));
    assert!(w != Window { i: 2, m: 64 }, "the window adapted");
}
