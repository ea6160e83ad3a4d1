//! Integration tests of the scenario layer: errors name file, line and key; runs are
//! deterministic; random streams are isolated per component; books balance; malformed
//! input never panics.

use atmsim_kernel::SimTime;
use atmsim_scenario::{Scenario, ScenarioError};

const BASE: &str = r#"connections = [
  "src.out -> mux.in",
  "mux -> sink",
]

[scenario]
name = "t"
duration = "20 ms"
warmup = "1 ms"
seed = 7

[components.src]
kind = "poisson"
rate = "120 Mb/s"

[components.mux]
kind = "fifo"
phy = "OC-3c"
capacity = "16 cells"

[components.sink]
kind = "sink"
"#;

fn err(text: &str) -> String {
    match Scenario::from_text(text, "bad.toml") {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

fn run(sc: &Scenario, run: u64) -> atmsim_scenario::RunResult {
    sc.run(sc.seed, run, &mut |_, _| true).expect("run")
}

/// `sc` with `key` set to `value` is refused with a parameter error, or runs to its
/// end (Err: what went wrong instead).
fn rejects_or_runs(sc: &Scenario, key: &str, value: String) -> Result<(), String> {
    match sc.with_overrides(&[(key.to_string(), value)]) {
        Ok(sc) => sc.run(1, 0, &mut |_, _| true).map(|_| ()).map_err(|e| format!("the run failed: {e:?}")),
        Err(ScenarioError::Param { .. }) | Err(ScenarioError::Invalid { .. }) => Ok(()),
        Err(e) => Err(format!("unexpected error kind {e:?}")),
    }
}

fn probe(r: &atmsim_scenario::RunResult, comp: &str, p: &str, stat: &str) -> f64 {
    r.probes
        .iter()
        .find(|x| x.component == comp && x.probe == p && x.statistic == stat)
        .unwrap_or_else(|| panic!("no probe {comp} {p} {stat}"))
        .value
}

#[test]
fn the_base_scenario_loads_and_runs() {
    let sc = Scenario::from_text(BASE, "base.toml").unwrap();
    assert_eq!(sc.components.len(), 3);
    let r = run(&sc, 0);
    assert!(r.events > 1000);
    assert!(r.ledger.violations().is_empty());
}

#[test]
fn misspelled_parameter_names_line_and_suggests() {
    let e = err(&BASE.replace("capacity = \"16 cells\"", "capcity = \"16 cells\""));
    assert!(e.starts_with("bad.toml:19: components.mux.capcity: unknown parameter"), "{e}");
    assert!(e.contains("did you mean 'capacity'"), "{e}");
}

#[test]
fn unknown_kind_suggests() {
    let e = err(&BASE.replace("kind = \"poisson\"", "kind = \"poison\""));
    assert!(e.starts_with("bad.toml:13: components.src.kind: unknown kind 'poison'"), "{e}");
    assert!(e.contains("did you mean 'poisson'"), "{e}");
}

#[test]
fn unit_errors_are_param_errors_with_lines() {
    let cases = [
        ("rate = \"120 Mb/s\"", "rate = \"120\"", "no unit"),
        ("rate = \"120 Mb/s\"", "rate = \"0 Mb/s\"", "positive"),
        ("rate = \"120 Mb/s\"", "rate = \"-5 Mb/s\"", "positive"),
        ("rate = \"120 Mb/s\"", "rate = \"120 ms\"", "is a time"),
        ("rate = \"120 Mb/s\"", "rate = 120", "expected a string with a unit"),
    ];
    for (from, to, want) in cases {
        let text = BASE.replace(from, to);
        let e = Scenario::from_text(&text, "bad.toml").unwrap_err();
        assert!(e.is_param(), "{e}");
        let s = e.to_string();
        assert!(s.starts_with("bad.toml:14: components.src.rate: "), "{s}");
        assert!(s.contains(want), "{s} lacks {want}");
    }
}

#[test]
fn duplicate_tables_are_a_syntax_error_with_a_line() {
    let text = format!("{BASE}\n[components.sink]\nkind = \"sink\"\n");
    let e = err(&text);
    assert!(e.starts_with("bad.toml:24:"), "{e}");
    assert!(!e.contains('\n'), "one line: {e}");
}

#[test]
fn wiring_errors() {
    let e = err(&BASE.replace("\"mux -> sink\",", ""));
    assert!(e.contains("output port 'out' is not connected"), "{e}");
    let e = err(&BASE.replace("\"mux -> sink\",", "\"mux -> sink\",\n  \"mux -> sink\","));
    assert!(e.contains("already connected"), "{e}");
    let e = err(&BASE.replace("\"mux -> sink\",", "\"mux -> snk\","));
    assert!(e.starts_with("bad.toml:3: connections:") && e.contains("did you mean 'sink'"), "{e}");
    let e = err(&BASE.replace("\"mux -> sink\",", "\"mux.output -> sink\","));
    assert!(e.contains("no output port 'output'"), "{e}");
}

#[test]
fn a_single_input_takes_one_connection() {
    let text = r#"connections = ["a -> l", "b -> l", "l -> s"]
[scenario]
duration = "1 ms"
[components.a]
kind = "cbr"
rate = "1 Mb/s"
[components.b]
kind = "cbr"
rate = "1 Mb/s"
[components.l]
kind = "link"
phy = "OC-3c"
[components.s]
kind = "sink"
"#;
    let e = err(text);
    assert!(e.starts_with("bad.toml:1: connections:") && e.contains("takes one connection"), "{e}");
}

#[test]
fn scenario_section_errors() {
    let e = err(&BASE.replace("duration = \"20 ms\"\n", ""));
    assert!(e.contains("scenario.duration: missing"), "{e}");
    let e = err(&BASE.replace("seed = 7", "sead = 7"));
    assert!(e.contains("did you mean 'seed'"), "{e}");
    let e = err(&BASE.replace("warmup = \"1 ms\"", "warmup = \"1 s\""));
    assert!(e.contains("warm-up must be shorter"), "{e}");
}

#[test]
fn a_sweep_table_is_left_to_the_sweep_front_end() {
    let text = format!("{BASE}\n[sweep]\nreplications = 3\n[sweep.grid]\n\"mux.capacity\" = [\"8 cells\", \"16 cells\"]\n");
    assert!(Scenario::from_text(&text, "s.toml").is_ok());
    let e = err(&format!("sweeps = 3\n{BASE}"));
    assert!(e.contains("did you mean 'sweep'"), "{e}");
}

#[test]
fn model_consistency_errors_point_at_the_parameter() {
    let e = err(&BASE.replace("phy = \"OC-3c\"", "phy = \"OC-3c\"\nrate = \"100 Mb/s\""));
    assert!(e.starts_with("bad.toml:19: components.mux.rate: give either phy or rate"), "{e}");
    let e = err(&BASE.replace("phy = \"OC-3c\"", "phy = \"OC3\""));
    assert!(e.contains("did you mean 'OC-3c'"), "{e}");
}

#[test]
fn same_seed_same_run_same_fingerprint_other_run_differs() {
    let sc = Scenario::from_text(BASE, "base.toml").unwrap();
    let a = run(&sc, 0);
    let b = run(&sc, 0);
    let c = run(&sc, 1);
    assert_eq!(a.fingerprint, b.fingerprint);
    assert_eq!(a.probes, b.probes);
    assert_ne!(a.fingerprint, c.fingerprint);
}

#[test]
fn adding_an_unrelated_source_leaves_existing_streams_alone() {
    // The extra source feeds its own sink; src's cells must leave at the same instants,
    // so the delay statistics of the existing VC (which depend on nothing else) agree.
    let extra = BASE.replace(
        "  \"mux -> sink\",\n",
        "  \"mux -> sink\",\n  \"other -> sink2\",\n",
    ) + "\n[components.other]\nkind = \"onoff\"\npeak = \"50 Mb/s\"\nmean = \"10 Mb/s\"\nburst_factor = \"100 cells\"\n\n[components.sink2]\nkind = \"sink\"\n";
    let a = Scenario::from_text(BASE, "a.toml").unwrap();
    let b = Scenario::from_text(&extra, "b.toml").unwrap();
    let ra = run(&a, 3);
    let rb = run(&b, 3);
    for stat in ["count", "mean", "std", "max"] {
        assert_eq!(probe(&ra, "sink/vc1", "sink_delay", stat), probe(&rb, "sink/vc1", "sink_delay", stat), "{stat}");
    }
    assert_eq!(probe(&ra, "src", "src_tx_cells", "count"), probe(&rb, "src", "src_tx_cells", "count"));
    assert_ne!(ra.fingerprint, rb.fingerprint);
}

#[test]
fn overrides_apply_and_are_checked() {
    let sc = Scenario::from_text(BASE, "base.toml").unwrap();
    let o = sc.with_overrides(&[("mux.capacity".into(), "4 cells".into()), ("scenario.seed".into(), "9".into())]).unwrap();
    assert_eq!(o.seed, 9);
    let r0 = run(&sc, 0);
    let r1 = o.run(o.seed, 0, &mut |_, _| true).unwrap();
    assert!(probe(&r1, "mux", "q_loss_ratio", "value") > probe(&r0, "mux", "q_loss_ratio", "value"));
    let e = sc.with_overrides(&[("mux.capcity".into(), "4 cells".into())]).unwrap_err();
    assert!(e.to_string().starts_with("--set: components.mux.capcity: unknown parameter"), "{e}");
    let e = sc.with_overrides(&[("nope.rate".into(), "1 Mb/s".into())]).unwrap_err();
    assert!(e.to_string().contains("no component 'nope'"), "{e}");
}

#[test]
fn conservation_holds_with_cells_in_flight_and_drops() {
    // A long link keeps cells on the wire at the end; a small buffer drops some.
    let text = r#"connections = ["a -> q", "b -> q", "q -> l", "l -> s"]
[scenario]
duration = "30 ms"
[components.a]
kind = "onoff"
peak = "149 Mb/s"
mean = "70 Mb/s"
burst_factor = "200 cells"
[components.b]
kind = "cbr"
rate = "60 Mb/s"
[components.q]
kind = "fifo"
phy = "OC-3c"
capacity = "8 cells"
[components.l]
kind = "link"
phy = "OC-3c"
length = "4000 km"
[components.s]
kind = "sink"
"#;
    let sc = Scenario::from_text(text, "c.toml").unwrap();
    let r = run(&sc, 0);
    let (g, d, x, i) = r.ledger.totals();
    assert!(x > 0 && i > 0, "drops {x}, in flight {i}");
    assert_eq!(g, d + x + i);
    // 4000 km at 5 µs/km = 20 ms of propagation: no delay below it.
    assert!(probe(&r, "s/vc1", "sink_delay", "min") >= 0.020);
}

#[test]
fn cbr_cells_are_exactly_periodic() {
    let text = r#"connections = ["a -> s"]
[scenario]
duration = "1 ms"
[components.a]
kind = "cbr"
rate = "149.76 Mb/s"
phase = "0 s"
[components.s]
kind = "sink"
"#;
    let sc = Scenario::from_text(text, "p.toml").unwrap();
    let r = run(&sc, 0);
    // ceil-of-counter times: cells at k · 2,831,196.58 ps for k ≥ 0 while < 1 ms
    let expected = (1e9 / 2_831_196.58f64).ceil();
    assert_eq!(probe(&r, "a", "src_tx_cells", "count"), expected);
}

#[test]
fn interrupting_a_run_is_an_error_not_a_panic() {
    let sc = Scenario::from_text(&BASE.replace("20 ms", "2 s"), "base.toml").unwrap();
    let e = sc.run(1, 0, &mut |_, _| false).unwrap_err();
    assert!(matches!(e, atmsim_kernel::SimError::Interrupted(t) if t > SimTime::ZERO));
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, .. ProptestConfig::default() })]

        #[test]
        fn arbitrary_text_never_panics(s in "\\PC{0,200}") {
            let _ = Scenario::from_text(&s, "fuzz.toml");
        }

        #[test]
        fn mutated_scenarios_never_panic(pos in 0usize..600, len in 0usize..8, junk in "[ -~\\n]{0,8}") {
            let mut b = BASE.to_string();
            let p = pos.min(b.len());
            let p = (0..=p).rev().find(|&i| b.is_char_boundary(i)).unwrap_or(0);
            let q = (p + len).min(b.len());
            let q = (q..=b.len()).find(|&i| b.is_char_boundary(i)).unwrap_or(b.len());
            b.replace_range(p..q, &junk);
            if let Ok(sc) = Scenario::from_text(&b, "fuzz.toml") {
                // whatever loads must run without panicking, for a short time
                let short = sc.with_overrides(&[("scenario.duration".into(), "1 ms".into()), ("scenario.warmup".into(), "0 s".into())]);
                if let Ok(sc) = short {
                    let _ = sc.run(1, 0, &mut |_, _| true);
                }
            }
        }

        #[test]
        fn any_probes_table_is_an_error_or_runs(series in prop::collection::vec(prop_oneof![
            "[a-z/0-9._<>]{0,14}",
            Just("mux.q_len".to_string()), Just("sink/vc1.sink_rx_cells".to_string()), Just("src.src_tx_rate".to_string()),
            Just("sink/vc99999.sink_throughput".to_string()), Just("mux/p1.q_len".to_string()), Just("..".to_string()),
        ], 0..4), keep in "[a-z*?./_]{0,10}", interval in prop_oneof![
            "[0-9.e+-]{1,6} ?(ms|us|s|ps|cells)?", Just("1 ms".to_string()),
        ]) {
            let list = |v: &[String]| v.iter().map(|x| format!("{x:?}")).collect::<Vec<_>>().join(", ");
            let text = format!("{BASE}[probes]\nseries = [{}]\nkeep = [{:?}]\ninterval = {:?}\n", list(&series), keep, interval);
            match Scenario::from_text(&text, "fuzz.toml") {
                Ok(sc) => {
                    let sc = sc.with_overrides(&[("scenario.duration".into(), "2 ms".into()), ("scenario.warmup".into(), "0 s".into())]);
                    if let Ok(sc) = sc {
                        let r = sc.run(1, 0, &mut |_, _| true).expect("a loaded scenario runs");
                        prop_assert_eq!(r.series.len(), series.len());
                    }
                }
                Err(ScenarioError::Param { .. }) | Err(ScenarioError::Invalid { .. }) => {}
                Err(e) => prop_assert!(false, "unexpected error kind {e:?}"),
            }
        }

        #[test]
        fn any_trace_table_is_an_error_or_runs(key in prop_oneof![
            Just("cells"), Just("flows"), Just("vcs"), Just("at"), Just("from"), Just("to"), Just("limit"), Just("cell"),
        ], value in prop_oneof![
            "\"[a-z0-9/ .]{0,8}\"", "-?[0-9]{1,12}", Just("true".to_string()), Just("[\"src\", \"mux\"]".to_string()),
            Just("[\"1\", \"0/1\", \"4096/1\"]".to_string()), Just("\"5 ms\"".to_string()), Just("[]".to_string()),
        ]) {
            let text = format!("{BASE}[trace]\ncells = true\n{key} = {value}\n");
            match Scenario::from_text(&text, "fuzz.toml") {
                Ok(sc) => {
                    let sc = sc.with_overrides(&[("scenario.duration".into(), "2 ms".into()), ("scenario.warmup".into(), "0 s".into())]);
                    if let Ok(sc) = sc {
                        let r = sc.run(1, 0, &mut |_, _| true).expect("a loaded scenario runs");
                        prop_assert!(r.trace.len() <= sc.trace.as_ref().map_or(0, |t| t.filter.limit));
                    }
                }
                Err(ScenarioError::Param { .. }) | Err(ScenarioError::Invalid { .. }) => {}
                Err(e) => prop_assert!(false, "unexpected error kind {e:?}"),
            }
        }

        #[test]
        fn policing_and_self_similar_parameters_never_panic(v in prop_oneof![
            "[0-9.e+-]{1,8} ?(Mb/s|ms|us|s|cells/s|B)?",
            "-?[0-9]{1,6}",
            Just("\"leaky-bucket\"".to_string()), Just("\"tag\"".to_string()), Just("true".to_string()),
            "\\[\"[0-9/]{1,4}(: ?(pcr|cdvt|increment|x) ?= ?[0-9.]{1,4} ?(Mb/s|us|cells/s)?(, cdvt = [0-9]{1,3} us)?)?\"\\]",
        ], key in prop_oneof![Just("upc.pcr"), Just("upc.increment"), Just("upc.cdvt"), Just("upc.algorithm"),
            Just("upc.action"), Just("upc.vcs"), Just("ss.hurst"), Just("ss.mean"), Just("ss.std"), Just("ss.peak"), Just("ss.bin")]) {
            let text = r#"connections = ["ss -> upc", "upc -> sink"]
[scenario]
duration = "2 ms"
[components.ss]
kind = "selfsimilar"
mean = "50 Mb/s"
std = "20 Mb/s"
block = 1024
[components.upc]
kind = "gcra"
pcr = "60 Mb/s"
[components.sink]
kind = "sink"
"#;
            let sc = Scenario::from_text(text, "fuzz.toml").unwrap();
            let outcome = rejects_or_runs(&sc, key, v);
            prop_assert!(outcome.is_ok(), "{:?}", outcome);
        }

        #[test]
        fn any_value_for_any_parameter_is_handled(v in prop_oneof![
            "[0-9.e+-]{1,8} ?(Mb/s|cells|ms|km|KiB|s|cells/s|furlong)?",
            "-?[0-9]{1,12}",
            Just("unlimited".to_string()),
            Just("random".to_string()),
        ], key in prop_oneof![Just("src.rate"), Just("mux.capacity"), Just("mux.delay"), Just("mux.length"), Just("src.vc"), Just("src.stop"),
            Just("mux.epd_threshold"), Just("mux.ppd"), Just("mux.efci_threshold")]) {
            let sc = Scenario::from_text(BASE, "base.toml").unwrap();
            match sc.with_overrides(&[(key.to_string(), v)]) {
                Ok(_) => {}
                Err(ScenarioError::Param { .. }) | Err(ScenarioError::Invalid { .. }) => {}
                Err(e) => prop_assert!(false, "unexpected error kind {e:?}"),
            }
        }
    }
}

mod switch {
    use super::*;

    fn load(text: &str) -> Scenario {
        Scenario::from_text(text, "sw.toml").unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn translates_delays_and_counts() {
        let sc = load(r#"connections = ["a -> sw.p1", "sw.p2 -> s"]
[scenario]
duration = "10 ms"
[components.a]
kind = "cbr"
rate = "10 Mb/s"
vc = 32
phase = "0 s"
[components.sw]
kind = "switch"
delay = "4 us"
vcs = ["p1:32 -> p2:0/40"]
[components.s]
kind = "sink"
"#);
        let r = run(&sc, 0);
        let n = probe(&r, "a", "src_tx_cells", "count");
        assert!(n > 200.0);
        assert_eq!(probe(&r, "s/vc40", "sink_rx_cells", "count"), n);
        // no queueing at 10 Mb/s: delay = processing 4 us + one OC-3c slot
        let d = probe(&r, "s/vc40", "sink_delay", "max");
        assert!((d - (4e-6 + 2.831197e-6)).abs() < 1e-11, "{d}");
        assert_eq!(probe(&r, "sw/p1/vc32", "port_rx_cells", "count"), n);
        assert_eq!(probe(&r, "sw/p2/vc40", "port_tx_cells", "count"), n);
        assert!(r.ledger.violations().is_empty());
    }

    /// The switch of `translates_delays_and_counts` with `lines` among its keys, run
    /// with `fast_path` = `fast`: the sink's largest delay and the books.
    fn line_delay(lines: &str, fast: bool) -> (f64, atmsim_scenario::RunResult) {
        let sc = load(&format!(
            r#"connections = ["a -> sw.p1", "sw.p2 -> s", "b -> sw.p3", "sw.p4 -> t"]
[scenario]
duration = "10 ms"
fast_path = {fast}
[components.a]
kind = "cbr"
rate = "10 Mb/s"
vc = 32
phase = "0 s"
[components.b]
kind = "cbr"
rate = "10 Mb/s"
vc = 33
phase = "0 s"
[components.sw]
kind = "switch"
ports = 4
delay = "4 us"
{lines}
vcs = ["p1:32 -> p2:0/40", "p3:33 -> p4:0/41"]
[components.s]
kind = "sink"
[components.t]
kind = "sink"
"#
        ));
        let r = run(&sc, 0);
        (probe(&r, "s/vc40", "sink_delay", "max"), r)
    }

    #[test]
    fn a_ports_line_length_is_propagation_after_its_transmission() {
        // 100 km at 5 us/km after the processing delay and the OC-3c slot, on the
        // event path and on the fast path; the other port keeps line_length.
        let slot = 2.831197e-6;
        for fast in [false, true] {
            for lines in ["port_length = [\"p2 = 100 km\"]", "line_length = \"100 km\"", "line_length = \"2 km\"\nport_length = [\"p2 = 100 km\"]"] {
                let (d, r) = line_delay(lines, fast);
                assert!((d - (4e-6 + slot + 500e-6)).abs() < 1e-11, "{lines} (fast {fast}): {d}");
                let other = probe(&r, "t/vc41", "sink_delay", "max");
                let want = if lines.starts_with("line_length = \"100") { 500e-6 } else if lines.contains("2 km") { 10e-6 } else { 0.0 };
                assert!((other - (4e-6 + slot + want)).abs() < 1e-11, "{lines} (fast {fast}): p4 {other}");
                // Cells still on the fibre at the end are in the books.
                assert!(r.ledger.violations().is_empty(), "{:?}", r.ledger.violations());
                assert_eq!(probe(&r, "sw/p2/vc40", "port_tx_cells", "count"), probe(&r, "a", "src_tx_cells", "count"));
                assert!(probe(&r, "s/vc40", "sink_rx_cells", "count") < probe(&r, "a", "src_tx_cells", "count"));
            }
        }
        let (d, _) = line_delay("", true);
        assert!((d - (4e-6 + slot)).abs() < 1e-11, "{d}");
    }

    #[test]
    fn bad_line_lengths_name_the_key_and_what_is_valid() {
        let text = |lines: &str| format!("connections = [\"a -> sw.p1\", \"sw.p2 -> s\"]\n[scenario]\nduration = \"1 ms\"\n[components.a]\nkind = \"cbr\"\nrate = \"1 Mb/s\"\nvc = 1\n[components.sw]\nkind = \"switch\"\nports = 2\n{lines}\nvcs = [\"p1:1 -> p2:1\"]\n[components.s]\nkind = \"sink\"\n");
        for (lines, key, says) in [
            ("port_length = [\"p3 = 1 km\"]", "port_length", "p3 does not exist"),
            ("port_length = [\"p2 = 5 ms\"]", "port_length", "a length is needed"),
            ("port_length = [\"p2 = -1 km\"]", "port_length", "zero or positive"),
            ("port_length = [\"p2: 1 km\"]", "port_length", "pN = LENGTH"),
            ("line_length = \"3 Mb/s\"", "line_length", "length"),
        ] {
            let e = err(&text(lines));
            assert!(e.contains(key) && e.contains(says), "{lines}: {e}");
        }
    }

    #[test]
    fn point_to_multipoint_copies_are_booked() {
        let sc = load(r#"connections = ["a -> sw.p1", "sw.p2 -> s2", "sw.p3 -> s3"]
[scenario]
duration = "5 ms"
[components.a]
kind = "poisson"
rate = "20 Mb/s"
vc = 7
[components.sw]
kind = "switch"
vcs = ["p1:7 -> p2:70, p3:71"]
[components.s2]
kind = "sink"
[components.s3]
kind = "sink"
"#);
        let r = run(&sc, 0);
        let n = r.flows[0].generated;
        assert_eq!(r.ledger.replicated[0], n);
        let got2 = probe(&r, "s2/vc70", "sink_rx_cells", "count");
        let got3 = probe(&r, "s3/vc71", "sink_rx_cells", "count");
        let inflight = r.flows[0].in_flight as f64;
        assert_eq!(got2 + got3 + inflight, 2.0 * n as f64);
    }

    #[test]
    fn one_label_on_three_inputs_follows_each_inputs_route() {
        // The route table is keyed by (input port, label): the same label arriving on
        // three inputs takes three routes, and a label routed on one input only is
        // "no route" on another.
        let sc = load(r#"connections = ["a -> sw.p1", "b -> sw.p2", "c -> sw.p3", "d -> sw.p4", "sw.p5 -> s5", "sw.p6 -> s6", "sw.p7 -> s7"]
[scenario]
duration = "2 ms"
[components.a]
kind = "cbr"
rate = "5 Mb/s"
vc = 32
[components.b]
kind = "cbr"
rate = "10 Mb/s"
vc = 32
[components.c]
kind = "cbr"
rate = "20 Mb/s"
vc = 32
[components.d]
kind = "cbr"
rate = "5 Mb/s"
vc = 33
[components.sw]
kind = "switch"
ports = 8
vcs = ["p1:32 -> p7:50", "p2:32 -> p5:51", "p3:32 -> p6:52", "p1:33 -> p5:53"]
[components.s5]
kind = "sink"
[components.s6]
kind = "sink"
[components.s7]
kind = "sink"
"#);
        let r = run(&sc, 0);
        let sent = |c: &str| probe(&r, c, "src_tx_cells", "count");
        assert!(sent("a") > 10.0 && sent("b") > sent("a") && sent("c") > sent("b"));
        assert_eq!(probe(&r, "s7/vc50", "sink_rx_cells", "count"), sent("a"));
        assert_eq!(probe(&r, "s5/vc51", "sink_rx_cells", "count"), sent("b"));
        assert_eq!(probe(&r, "s6/vc52", "sink_rx_cells", "count"), sent("c"));
        assert_eq!(probe(&r, "sw/p2/vc32", "port_rx_cells", "count"), sent("b"));
        assert_eq!(probe(&r, "sw/p4", "sw_no_route_cells", "count"), sent("d"));
        assert_eq!(probe(&r, "sw/p1/vc33", "port_rx_cells", "count"), 0.0);
    }

    #[test]
    fn unknown_vc_is_dropped_as_no_route() {
        let sc = load(r#"connections = ["a -> sw.p1", "sw.p2 -> s"]
[scenario]
duration = "2 ms"
[components.a]
kind = "cbr"
rate = "5 Mb/s"
vc = 33
[components.sw]
kind = "switch"
vcs = ["p1:32 -> p2:40"]
[components.s]
kind = "sink"
"#);
        let r = run(&sc, 0);
        assert_eq!(r.ledger.dropped_by_cause().get("no_route").copied(), Some(r.flows[0].generated));
        assert_eq!(probe(&r, "sw/p1", "sw_no_route_cells", "count"), r.flows[0].generated as f64);
    }

    fn two_into_one(queueing: &str) -> atmsim_scenario::RunResult {
        let text = format!(r#"connections = ["a -> sw.p1", "b -> sw.p2", "sw.p3 -> s"]
[scenario]
duration = "40 ms"
warmup = "5 ms"
[components.a]
kind = "poisson"
rate = "120 Mb/s"
vc = 1
[components.b]
kind = "poisson"
rate = "60 Mb/s"
vc = 2
[components.sw]
kind = "switch"
capacity = "64 cells"
queueing = "{queueing}"
vc_capacity = "32 cells"
vcs = ["p1:1 -> p3:1", "p2:2 -> p3:2"]
[components.s]
kind = "sink"
"#);
        let sc = load(&text);
        run(&sc, 0)
    }

    #[test]
    fn per_vc_round_robin_is_max_min_fair_and_fifo_is_not() {
        // 180 Mb/s of Poisson cells offered to a 149.76 Mb/s port. Round robin gives the
        // 60 Mb/s VC (almost) all it asks and the other the rest; a shared FIFO drops
        // in proportion to the offered rates, so it carries them 2:1 (≈ 99.8 and 49.9).
        let rr = two_into_one("per-vc");
        let a = probe(&rr, "s/vc1", "sink_throughput", "value");
        let b = probe(&rr, "s/vc2", "sink_throughput", "value");
        assert!(b > 57.0 && b < 60.5, "rr b {b}");
        assert!((a + b - 149.76).abs() < 1.0, "rr a {a} b {b}");
        let ff = two_into_one("fifo");
        let a = probe(&ff, "s/vc1", "sink_throughput", "value");
        let b = probe(&ff, "s/vc2", "sink_throughput", "value");
        assert!((a / b - 2.0).abs() < 0.1, "fifo a {a} b {b}");
    }

    #[test]
    fn per_port_per_vc_books_balance() {
        // Sources stop before the end, so every cell offered to the port has left it:
        // offered = transmitted + dropped, per VC.
        let text = r#"connections = ["a -> sw.p1", "b -> sw.p2", "sw.p3 -> s"]
[scenario]
duration = "20 ms"
[components.a]
kind = "poisson"
rate = "100 Mb/s"
vc = 1
stop = "15 ms"
[components.b]
kind = "poisson"
rate = "80 Mb/s"
vc = 2
stop = "15 ms"
[components.sw]
kind = "switch"
capacity = "16 cells"
vcs = ["p1:1 -> p3:1", "p2:2 -> p3:2"]
[components.s]
kind = "sink"
"#;
        let r = run(&load(text), 0);
        for vc in ["vc1", "vc2"] {
            let c = format!("sw/p3/{vc}");
            let out = probe(&r, &c, "port_out_cells", "count");
            let tx = probe(&r, &c, "port_tx_cells", "count");
            let dr = probe(&r, &c, "port_drop_cells", "count");
            assert!(dr > 0.0, "{vc} should lose cells");
            assert_eq!(out, tx + dr, "{vc}");
        }
        assert_eq!(probe(&r, "sw/p3", "q_drop_cells", "count"), probe(&r, "sw/p3/vc1", "port_drop_cells", "count") + probe(&r, "sw/p3/vc2", "port_drop_cells", "count"));
    }

    #[test]
    fn a_fibre_loop_between_two_own_ports() {
        // domingo95 Figure 4 in miniature: p1 -> p4, out through a loop into p5, then to p2.
        let text = r#"connections = ["a -> sw.p1", "sw.p4 -> loop", "loop -> sw.p5", "sw.p2 -> s"]
[scenario]
duration = "5 ms"
[components.a]
kind = "cbr"
rate = "10 Mb/s"
vc = 92
phase = "0 s"
[components.sw]
kind = "switch"
vcs = ["p1:92 -> p4:92", "p5:92 -> p2:92"]
[components.loop]
kind = "link"
phy = "OC-3c"
length = "10 m"
[components.s]
kind = "sink"
"#;
        let r = run(&load(text), 0);
        // two switch passes and one loop link: three OC-3c slots plus 50 ns of fibre
        let d = probe(&r, "s/vc92", "sink_delay", "min");
        assert!((d - (3.0 * 2.831197e-6 + 50e-9)).abs() < 1e-11, "{d}");
    }

    #[test]
    fn an_unconnected_output_the_table_uses_is_rejected() {
        let text = r#"connections = ["a -> sw.p1"]
[scenario]
duration = "1 ms"
[components.a]
kind = "cbr"
rate = "1 Mb/s"
[components.sw]
kind = "switch"
vcs = ["p1:1 -> p2:1"]
"#;
        let e = err(text);
        assert!(e.contains("output port 'p2' is not connected"), "{e}");
        let e = err(&text.replace("p1:1 -> p2:1", "p1:1 -> p99:1"));
        assert!(e.contains("components.sw.vcs: entry 1") && e.contains("p99 does not exist"), "{e}");
    }
}

mod gcra;
mod iofm;
mod discard;
mod fddi;
mod gateway;
mod selfsimilar;
mod series;
mod trace;
mod switch_io;
mod evans96_gateway;
mod abr;
mod credit;
mod abr_switch;
mod abr_edge;
mod golden;
mod priority;
mod quantiles;
mod frames;
mod cell_trace;
mod observer;

mod hosts {
    use super::*;

    fn pair(a_extra: &str, sw_extra: &str) -> String {
        format!(r#"connections = ["a -> sw.p1", "sw.p1 -> a", "b -> sw.p2", "sw.p2 -> b"]
[scenario]
duration = "2 s"
[components.a]
kind = "host"
vc = 92
app = "ping"
count = 10
interval = "10 ms"
{a_extra}
[components.b]
kind = "host"
vc = 93
[components.sw]
kind = "switch"
vcs = ["p1:92 -> p2:92", "p2:93 -> p1:93"]
{sw_extra}
"#)
    }

    #[test]
    fn ping_round_trip_is_eight_cell_slots_for_64_octets() {
        let sc = Scenario::from_text(&pair("", ""), "h.toml").unwrap_or_else(|e| panic!("{e}"));
        let r = run(&sc, 0);
        assert_eq!(probe(&r, "a", "ping_tx", "count"), 10.0);
        assert_eq!(probe(&r, "a", "ping_rx", "count"), 10.0);
        assert_eq!(probe(&r, "a", "ping_loss", "value"), 0.0);
        // 3 cells leave a back to back (3 slots), the switch forwards the last one a
        // slot later; the reply does the same: 8 OC-3c slots.
        let rtt = probe(&r, "a", "ping_rtt", "mean");
        assert!((rtt - 8.0 * 2.8311965811e-6).abs() < 1e-11, "{rtt}");
        assert_eq!(probe(&r, "sw/p1/vc92", "port_rx_cells", "count"), 30.0);
        assert!(r.ledger.violations().is_empty());
    }

    #[test]
    fn fragmentation_gives_the_cells_per_ping_of_the_mtu() {
        // 2048 data octets with a 1500-octet MTU: fragments of 1500 and 596 octets,
        // 32 + 13 = 45 cells (domingo95 Table 2 reports 45 cells per 2048-octet ping).
        let sc = Scenario::from_text(&pair("length = \"2048 B\"\nmtu = \"1500 B\"", ""), "h.toml").unwrap();
        let r = run(&sc, 0);
        assert_eq!(probe(&r, "sw/p1/vc92", "port_rx_cells", "count"), 450.0);
        assert_eq!(probe(&r, "a", "ping_rx", "count"), 10.0);
        // b mirrors the request fragment by fragment
        assert_eq!(probe(&r, "sw/p2/vc93", "port_rx_cells", "count"), 450.0);
    }

    #[test]
    fn a_hosts_line_length_is_propagation_after_its_interface() {
        // 100 km at a (500 µs) and 20 km at b (100 µs) add 600 µs to the 8-slot round
        // trip, exactly, on the event path and on the fast path; the cells still on a
        // fibre when the run ends are in the books.
        let slot = 2.8311965811e-6;
        for fast in [false, true] {
            let text = pair("line_length = \"100 km\"", "").replace("vc = 93\n", "vc = 93\nline_length = \"20 km\"\n").replace("duration = \"2 s\"", &format!("duration = \"2 s\"\nfast_path = {fast}"));
            let sc = Scenario::from_text(&text, "h.toml").unwrap_or_else(|e| panic!("{e}"));
            let r = run(&sc, 0);
            assert_eq!(probe(&r, "a", "ping_rx", "count"), 10.0, "fast {fast}");
            let rtt = probe(&r, "a", "ping_rtt", "max");
            assert!((rtt - (8.0 * slot + 600e-6)).abs() < 1e-11, "fast {fast}: {rtt}");
            assert!((probe(&r, "a", "ping_rtt", "min") - rtt).abs() < 1e-12, "fast {fast}");
            assert!(r.ledger.violations().is_empty(), "{:?}", r.ledger.violations());
        }
        // Cut off mid-flight: a request on a's fibre at the end is booked in flight.
        let text = pair("line_length = \"100 km\"", "").replace("duration = \"2 s\"", "duration = \"300 us\"");
        let r = run(&Scenario::from_text(&text, "h.toml").unwrap_or_else(|e| panic!("{e}")), 0);
        assert_eq!(probe(&r, "sw/p1/vc92", "port_rx_cells", "count"), 0.0);
        assert!(r.ledger.violations().is_empty(), "{:?}", r.ledger.violations());
        assert!(r.flows.iter().map(|f| f.in_flight).sum::<u64>() > 0);
    }

    #[test]
    fn peak_rate_limit_spaces_cells() {
        let sc = Scenario::from_text(&pair("peak = \"14.976 Mb/s\"", ""), "h.toml").unwrap();
        let r = run(&sc, 0);
        // request cells now leave every 10 OC-3c slots: 3 × 10 + 1 + 3 + 1 = 35 slots
        let rtt = probe(&r, "a", "ping_rtt", "mean");
        assert!((rtt - 35.0 * 2.8311965811e-6).abs() < 1e-10, "{rtt}");
    }

    #[test]
    fn udp_blaster_periodic_or_poisson_keeps_its_mean_rate() {
        let text = |spacing: &str| format!(r#"connections = ["a -> sw.p1", "sw.p2 -> b", "b -> sw.p3"]
[scenario]
duration = "2 s"
[components.a]
kind = "host"
vc = 5
app = "udp"
udp_rate = "10 Mb/s"
udp_spacing = "{spacing}"
length = "1000 B"
[components.sw]
kind = "switch"
vcs = ["p1:5 -> p2:5"]
[components.b]
kind = "host"
vc = 6
"#);
        // 1028-octet IP datagrams at 10 Mb/s: 1215.95 datagrams/s
        let per_s: f64 = 10e6 / (8.0 * 1028.0);
        let periodic = run(&Scenario::from_text(&text("periodic"), "u.toml").unwrap(), 0);
        assert_eq!(probe(&periodic, "a", "udp_tx", "count"), (2.0 * per_s).ceil());
        let poisson = run(&Scenario::from_text(&text("poisson"), "u.toml").unwrap(), 0);
        let n = probe(&poisson, "a", "udp_tx", "count");
        // Poisson count over 2 s: mean 2432, sd ≈ 49; 4 sd
        assert!((n - 2.0 * per_s).abs() < 200.0, "{n}");
        assert_ne!(n, probe(&periodic, "a", "udp_tx", "count"));
        assert_eq!(probe(&poisson, "b", "udp_rx", "count"), n);
    }

    #[test]
    fn independent_cell_loss_gives_one_minus_one_minus_p_to_the_n() {
        // UDP datagrams of 1024 octets: 1024 + 8 + 20 + 8 = 1060 → 23 cells each.
        let text = r#"connections = ["a -> drop", "drop -> sw.p1", "sw.p2 -> b", "b -> sw.p3"]
[scenario]
duration = "2 s"
[components.a]
kind = "host"
vc = 5
app = "udp"
udp_rate = "20 Mb/s"
length = "1024 B"
stop = "1.9 s"
[components.drop]
kind = "loss"
p = 0.01
[components.sw]
kind = "switch"
vcs = ["p1:5 -> p2:5"]
[components.b]
kind = "host"
vc = 6
"#;
        let sc = Scenario::from_text(text, "l.toml").unwrap_or_else(|e| panic!("{e}"));
        let r = run(&sc, 0);
        let tx = probe(&r, "a", "udp_tx", "count");
        let rx = probe(&r, "b", "udp_rx", "count");
        let loss = 1.0 - rx / tx;
        let expect = 1.0 - 0.99f64.powi(23);
        // binomial sd of the loss estimate, 4 sd tolerance
        let sd = (expect * (1.0 - expect) / tx).sqrt();
        assert!((loss - expect).abs() < 4.0 * sd, "loss {loss} expect {expect} (n={tx})");
        assert!(r.ledger.violations().is_empty(), "{:?}", r.ledger.violations());
    }
}

/// TCP over AAL5 end to end: the loss-free bounds of lazarou96 (window/RTT and the
/// bottleneck TCP-layer rates of its Table 2) and the mechanisms under loss.
mod tcp {
    use super::*;

    /// OC-3c cell time, s.
    const OC3_CELL: f64 = 424.0 / 149.76e6;
    /// A 9140-octet segment: 9140 + 40 + 8 LLC/SNAP + 8 AAL5 trailer → 192 cells.
    const SEG_CELLS: f64 = 192.0;

    /// snd → fwd (phy, delay) → rcv; rcv → back (OC-3c, delay) → snd.
    fn path(phy: &str, delay: &str, window: &str, extra_snd: &str, extra_rcv: &str, duration: &str) -> String {
        format!(
            r#"connections = ["snd -> fwd", "fwd -> rcv", "rcv -> back", "back -> snd"]
[scenario]
duration = "{duration}"
warmup = "1 s"
[components.snd]
kind = "host"
tcp = ["send 100 ack 200 window {window}"]
{extra_snd}
[components.rcv]
kind = "host"
tcp = ["recv 100 ack 200 window {window}"]
{extra_rcv}
[components.fwd]
kind = "link"
phy = "{phy}"
delay = "{delay}"
[components.back]
kind = "link"
phy = "OC-3c"
delay = "{delay}"
"#
        )
    }

    fn throughput(r: &atmsim_scenario::RunResult) -> f64 {
        let a = probe(r, "rcv/tcp/vc100", "tcp_throughput", "value");
        let b = probe(r, "snd/tcp/vc100", "tcp_throughput", "value");
        assert!((a - b).abs() / a < 0.01, "receiver {a} vs sender {b}");
        a
    }

    /// Window-limited and loss-free: in steady state the sender sends a pair of segments
    /// per returning ACK (the receiver ACKs every second segment), so a window of k
    /// segments takes RTT = 2·delay + 2 segment times (+ the few cell times of the ACK
    /// and the link hops) per round: throughput = k·MSS·8 / RTT.
    #[test]
    fn no_loss_window_limited_throughput_is_window_over_rtt() {
        for (k, delay_ms) in [(4u64, 4.4), (6, 4.4), (8, 20.0)] {
            // Whole segments, and a multiple of the 16-octet window-scale unit.
            let window = format!("{} B", (k * 9140).div_ceil(16) * 16);
            let text = path("OC-3c", &format!("{delay_ms} ms"), &window, "tcp_overhead = \"0 s\"", "tcp_overhead = \"0 s\"", "6 s");
            let sc = Scenario::from_text(&text, "tcp.toml").unwrap_or_else(|e| panic!("{e}"));
            let r = run(&sc, 0);
            let rtt = 2.0 * delay_ms * 1e-3 + 2.0 * SEG_CELLS * OC3_CELL + 6.0 * OC3_CELL;
            let expect = (k * 9140 * 8) as f64 / rtt;
            let got = throughput(&r);
            assert!((got / expect - 1.0).abs() < 0.02, "k={k}: {got} vs {expect}");
            assert_eq!(probe(&r, "snd/tcp/vc100", "tcp_retransmits", "count"), 0.0);
            assert!(r.ledger.violations().is_empty());
        }
    }

    /// Not window-limited: the bottleneck's TCP-layer rate. lazarou96 Table 2: 135 Mb/s
    /// on OC-3, 88 on TAXI, 36 on DS-3 (within 3%), with the DEC hosts' 250 µs per segment.
    #[test]
    fn no_loss_bottleneck_rates_match_lazarou96_table2() {
        for (phy, paper) in [("OC-3c", 135e6), ("TAXI-100", 88e6), ("DS-3", 36e6)] {
            let text = path(phy, "1 ms", "512 KiB", "", "", "4 s");
            let sc = Scenario::from_text(&text, "tcp.toml").unwrap_or_else(|e| panic!("{e}"));
            let r = run(&sc, 0);
            let got = throughput(&r);
            assert!((got / paper - 1.0).abs() < 0.03, "{phy}: {got} vs {paper}");
            assert_eq!(probe(&r, "snd/tcp/vc100", "tcp_retransmits", "count"), 0.0);
            assert!(r.ledger.violations().is_empty());
        }
    }

    /// The per-segment CPU overhead caps a host: a SPARC 5 receiver (700 µs) handles two
    /// data segments and one ACK per 2.1 ms.
    #[test]
    fn a_slow_receiver_cpu_is_the_bottleneck() {
        let text = path("OC-3c", "1 ms", "512 KiB", "", "machine = \"sparc5\"", "4 s");
        let sc = Scenario::from_text(&text, "tcp.toml").unwrap();
        let r = run(&sc, 0);
        let expect = 2.0 * 9140.0 * 8.0 / 2.1e-3;
        let got = throughput(&r);
        assert!((got / expect - 1.0).abs() < 0.02, "{got} vs {expect}");
        let util = probe(&r, "rcv", "cpu_util", "value");
        assert!(util > 0.98, "receiver CPU {util}");
    }

    /// A 256-cell buffer behind a 155 → 100 Mb/s mismatch loses cells of every window:
    /// the connection sees fast retransmits and 500 ms-tick timeouts, and pacing the VC
    /// below the bottleneck removes all loss.
    #[test]
    fn rate_mismatch_loses_and_pacing_repairs() {
        let base = path("OC-3c", "4.4 ms", "128 KiB", "", "phy = \"TAXI-100\"", "12 s").replace(
            "[components.fwd]\nkind = \"link\"\nphy = \"OC-3c\"",
            "[components.fwd]\nkind = \"fifo\"\ncapacity = \"256 cells\"\nphy = \"TAXI-100\"",
        );
        let sc = Scenario::from_text(&base, "tcp.toml").unwrap_or_else(|e| panic!("{e}"));
        let r = run(&sc, 0);
        assert!(probe(&r, "snd/tcp/vc100", "tcp_timeouts", "count") > 0.0);
        assert!(probe(&r, "snd/tcp/vc100", "tcp_fast_retransmits", "count") > 0.0);
        let unpaced = throughput(&r);
        assert!(r.ledger.violations().is_empty());
        let paced = base.replace("tcp = [\"send 100 ack 200 window 128 KiB\"]", "tcp = [\"send 100 ack 200 window 128 KiB pace 70 Mb/s\"]");
        let r = run(&Scenario::from_text(&paced, "tcp.toml").unwrap(), 0);
        assert_eq!(probe(&r, "snd/tcp/vc100", "tcp_retransmits", "count"), 0.0);
        // Paced at 70 Mb/s of cell payload (the default reading): 70e6 · 9140/9216 of
        // TCP data at most (192 cells of 48 octets carry 9140).
        let bound = 70e6 * 9140.0 / 9216.0;
        let got = throughput(&r);
        assert!(got < bound * 1.001 && got > 0.97 * bound, "{got} vs {bound}");
        assert!(got > 10.0 * unpaced);
        assert!(r.ledger.violations().is_empty());
        // Read in whole cells: 70e6 · 48/53 · 9140/9216 at most.
        let cells = paced.replace("tcp = [\"send 100 ack 200 window 128 KiB pace 70 Mb/s\"]", "tcp = [\"send 100 ack 200 window 128 KiB pace 70 Mb/s\"]\npace_unit = \"cell\"");
        assert_ne!(cells, paced);
        let r = run(&Scenario::from_text(&cells, "tcp.toml").unwrap(), 0);
        let bound = 70e6 * 48.0 / 53.0 * 9140.0 / 9216.0;
        let got = throughput(&r);
        assert!(got < bound * 1.001 && got > 0.97 * bound, "{got} vs {bound}");
    }

    /// UDP datagrams whose cells the host's line cannot carry would queue without end
    /// in the interface: refused with the most the line carries (and a `peak` above
    /// the line, which could only mean the line). 9152-octet datagrams
    /// are 9180-octet IP packets, 192 cells each: an OC-3c line (149.76 Mb/s of cells)
    /// carries at most 9180 x 8 bits per 192 x 424 / 149.76e6 s = 135.10 Mb/s of them.
    #[test]
    fn a_udp_rate_or_peak_above_the_hosts_line_is_refused() {
        let host = |rate: &str, extra: &str| format!(
            "connections = [\"a -> b\", \"b -> a\"]\n[scenario]\nduration = \"1 s\"\n[components.a]\nkind = \"host\"\nvc = 5\napp = \"udp\"\nudp_rate = \"{rate}\"\nlength = \"9152 B\"\n{extra}\n[components.b]\nkind = \"host\"\nvc = 5\n");
        Scenario::from_text(&host("135.1 Mb/s", ""), "udp.toml").unwrap_or_else(|e| panic!("{e}"));
        let e = err(&host("135.2 Mb/s", ""));
        assert!(e.contains("components.a.udp_rate") && e.contains("(192 cells each)") && e.contains("give at most 135.10"), "{e}");
        // Spaced at a peak of 100 Mb/s of cells: at most 100/149.76 of that.
        let e = err(&host("91 Mb/s", "peak = \"100 Mb/s\""));
        assert!(e.contains("above the 100.000000 Mb/s of cells") && e.contains("give at most 90.21"), "{e}");
        // A peak above the line is refused too (it would be the line itself).
        let e = err(&host("10 Mb/s", "peak = \"200 Mb/s\""));
        assert!(e.contains("components.a.peak") && e.contains("above the line's 149.760000 Mb/s"), "{e}");
        Scenario::from_text(&host("10 Mb/s", "peak = \"149.76 Mb/s\""), "udp.toml").unwrap_or_else(|e| panic!("{e}"));
        // Fragments count: a 1500-octet MTU cuts the 9160 octets of UDP into six
        // fragments of 1480 (32 cells each) and one of 280 (7 cells).
        let e = err(&host("200 Mb/s", "mtu = \"1500 B\""));
        assert!(e.contains("(199 cells each)"), "{e}");
    }

    /// A pace the host's line cannot carry would never hold a cell (a unit slip, say
    /// 700 for 70 Mb/s): refused with the rate in cells and the line's. An OC-3c host
    /// sends 149.76 Mb/s of cells: 135 Mb/s of payload (149.06 of cells) runs, 140
    /// (154.58 of cells) does not, and read in cells 149.76 is the line itself.
    #[test]
    fn a_pace_above_the_hosts_line_is_refused() {
        let base = path("OC-3c", "1 ms", "128 KiB", "", "", "2 s");
        let entry = "tcp = [\"send 100 ack 200 window 128 KiB\"]";
        assert!(base.contains(entry));
        let paced = |rate: &str, unit: &str| base.replace(entry, &format!("tcp = [\"send 100 ack 200 window 128 KiB pace {rate}\"]{unit}"));
        Scenario::from_text(&paced("135 Mb/s", ""), "tcp.toml").unwrap_or_else(|e| panic!("{e}"));
        Scenario::from_text(&paced("149.76 Mb/s", "\npace_unit = \"cell\""), "tcp.toml").unwrap_or_else(|e| panic!("{e}"));
        let e = err(&paced("140 Mb/s", ""));
        assert!(e.contains("components.snd.tcp") && e.contains("154.58") && e.contains("above the 149.76"), "{e}");
        let e = err(&paced("150 Mb/s", "\npace_unit = \"cell\""));
        assert!(e.contains("pace_unit = \"cell\"") && e.contains("150.000000 Mb/s of cells"), "{e}");
    }

    /// The `pacer` kind paces only the VCs it lists, each at the pacing rate; cells it
    /// holds at the end are in flight in the books.
    #[test]
    fn pacer_component_paces_listed_vcs_only() {
        let text = r#"connections = ["a -> pace", "b -> pace", "pace -> sink"]
[scenario]
duration = "0.2 s"
warmup = "0.1 s"
[components.a]
kind = "cbr"
rate = "60 Mb/s"
vc = 5
[components.b]
kind = "cbr"
rate = "60 Mb/s"
vc = 6
[components.pace]
kind = "pacer"
rate = "20 Mb/s"
unit = "cell"
vcs = ["0/5"]
[components.sink]
kind = "sink"
"#;
        let r = run(&Scenario::from_text(text, "p.toml").unwrap_or_else(|e| panic!("{e}")), 0);
        let paced = probe(&r, "sink/vc5", "sink_throughput", "value");
        let free = probe(&r, "sink/vc6", "sink_throughput", "value");
        assert!((paced - 20.0).abs() < 0.01, "{paced}");
        // The default unit counts the 48-octet payload: 20 Mb/s of it is 20 · 53/48 of cells.
        let r = run(&Scenario::from_text(&text.replace("unit = \"cell\"\n", ""), "p.toml").unwrap_or_else(|e| panic!("{e}")), 0);
        let payload = probe(&r, "sink/vc5", "sink_throughput", "value");
        assert!((payload - 20.0 * 53.0 / 48.0).abs() < 0.01, "{payload}");
        assert!((free - 60.0).abs() < 0.01, "{free}");
        assert!(probe(&r, "pace/vc5", "pacer_q_len", "value") > 1000.0);
        assert!(r.ledger.violations().is_empty());
        let e = err(&text.replace("vcs = [\"0/5\"]", "vcs = [\"0/x\"]"));
        assert!(e.contains("vcs") && e.contains("VCI"), "{e}");
    }

    #[test]
    fn connection_specs_are_checked() {
        let base = path("OC-3c", "1 ms", "64 KiB", "", "", "2 s");
        for (bad, msg) in [
            ("send 100 ack 200 window 64 KiB pace fast", "pace"),
            ("send 100 window 64 KiB", "missing 'ack VC'"),
            ("send 100 recv 3 ack 200", "exactly one of"),
            ("send 100 ack 200 window 8 MiB", "window"),
        ] {
            let text = base.replace("tcp = [\"send 100 ack 200 window 64 KiB\"]", &format!("tcp = [\"{bad}\"]"));
            let e = err(&text);
            assert!(e.contains("tcp") && e.contains(msg), "{bad}: {e}");
        }
        let e = err(&base.replace("[components.snd]\nkind = \"host\"", "[components.snd]\nkind = \"host\"\nmss = \"9200 B\""));
        assert!(e.contains("mss"), "{e}");
        let e = err(&base.replace("[components.snd]\nkind = \"host\"", "[components.snd]\nkind = \"host\"\nslow_tick = \"1 ns\""));
        assert!(e.contains("slow_tick") && e.contains("at least 1 us"), "{e}");
    }

    mod fuzz {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig { cases: 200, .. ProptestConfig::default() })]

            /// Any `tcp` entry assembled from the grammar's words and junk loads with a
            /// clear error or runs (briefly) without a panic.
            #[test]
            fn connection_specs_never_panic(words in prop::collection::vec(prop_oneof![
                Just("send"), Just("recv"), Just("ack"), Just("window"), Just("pace"), Just("bytes"),
                Just("100"), Just("200"), Just("0/100"), Just("4096/1"), Just("70"), Just("Mb/s"), Just("KiB"),
                Just("1"), Just("0"), Just("-3"), Just("B"), Just("x"), Just("1e9"), Just("65536"),
            ], 0..9)) {
                let line = words.join(" ");
                let text = path("OC-3c", "1 ms", "64 KiB", "", "", "0.2 s")
                    .replace("tcp = [\"send 100 ack 200 window 64 KiB\"]", &format!("tcp = [\"{line}\"]"))
                    .replace("warmup = \"1 s\"", "warmup = \"0 s\"");
                if let Ok(sc) = Scenario::from_text(&text, "fuzz.toml") {
                    let _ = sc.run(1, 0, &mut |_, _| true);
                }
            }

            /// Any value for the TCP host parameters is accepted or refused cleanly.
            #[test]
            fn tcp_parameters_never_panic(v in prop_oneof![
                "[0-9.e+-]{1,8} ?(ms|s|us|B|KiB|MiB|cells|Mb/s)?",
                Just("\"bsd\"".to_string()), Just("\"fine\"".to_string()), Just("true".to_string()),
            ], key in prop_oneof![Just("snd.window"), Just("snd.mss"), Just("snd.min_rto"), Just("snd.max_rto"),
                Just("snd.slow_tick"), Just("snd.fast_tick"), Just("rcv.delack_time"), Just("snd.tcp_overhead"),
                Just("snd.timers"), Just("snd.initial_rto"), Just("snd.timer_phase"), Just("snd.dupack_threshold")]) {
                let text = path("OC-3c", "1 ms", "64 KiB", "", "", "0.2 s").replace("warmup = \"1 s\"", "warmup = \"0 s\"");
                let sc = Scenario::from_text(&text, "fuzz.toml").unwrap();
                if let Ok(sc) = sc.with_overrides(&[(key.to_string(), v)]) {
                    let _ = sc.run(1, 0, &mut |_, _| true);
                }
            }
        }
    }

    #[test]
    fn tcp_runs_are_deterministic_and_the_timer_phase_varies_by_run() {
        let text = path("OC-3c", "4.4 ms", "128 KiB", "", "phy = \"TAXI-100\"", "3 s").replace(
            "[components.fwd]\nkind = \"link\"\nphy = \"OC-3c\"",
            "[components.fwd]\nkind = \"fifo\"\ncapacity = \"256 cells\"\nphy = \"TAXI-100\"",
        );
        let sc = Scenario::from_text(&text, "tcp.toml").unwrap();
        let a = run(&sc, 0);
        let b = run(&sc, 0);
        assert_eq!(a.fingerprint, b.fingerprint);
        let c = run(&sc, 1);
        assert_ne!(a.fingerprint, c.fingerprint);
    }
}

/// TCP headers travel as payloads of the segments' last cells; cells dropped anywhere
/// (random loss on the data path, a full switch buffer) release theirs, so the books
/// balance: every payload live at the end is held by a cell still in flight, and some
/// are (a window is in flight at the end of the run).
mod payloads {
    use super::*;

    /// Payloads held at the end of two runs of `rel` cut short by `cut`.
    fn books(rel: &str, cut: &[(&str, &str)], cause: &str) -> u64 {
        let path = format!("{}/../../scenarios/{rel}", env!("CARGO_MANIFEST_DIR"));
        let over: Vec<(String, String)> = cut.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let sc = Scenario::load(&path).expect("load").with_overrides(&over).expect("override");
        let mut held = 0;
        for r in 0..2 {
            let l = run(&sc, r).ledger;
            assert!(l.dropped_by_cause().get(cause).copied().unwrap_or(0) > 0, "{rel}: cells dropped by {cause}: {l:?}");
            assert_eq!(l.payloads_live, l.payloads_held, "{rel}: every live payload is held by a cell in flight");
            assert!(l.payloads_held <= l.in_flight.iter().sum::<u64>());
            held += l.payloads_held;
        }
        held
    }

    #[test]
    fn dropped_and_delivered_segments_release_their_tcp_headers() {
        // Random loss on the data path.
        let held = books("validation/tcp_pftk.toml", &[("scenario.duration", "\"3 s\""), ("scenario.warmup", "\"1 s\"")], "random_loss");
        assert!(held > 0, "segments on the wire at the end hold their headers");
        // A full switch buffer (155 -> 100 Mb/s).
        books("lazarou96/mismatch.toml", &[("scenario.duration", "\"1.2345 s\""), ("scenario.warmup", "\"0.5 s\"")], "buffer_full");
    }

    /// A PDU corrupted on its way (one bit flipped in the bytes the checking mode
    /// emitted) fails the run with a message naming the VC, the PDU and the layer.
    #[test]
    fn check_wire_fails_a_run_whose_pdu_was_corrupted() {
        let path = format!("{}/../../scenarios/examples/tcp_window.toml", env!("CARGO_MANIFEST_DIR"));
        let mut sc = Scenario::load(&path).expect("load");
        sc.check_wire = true;
        // Twice the example's length: over the 155 -> 98.15 Mb/s mismatch it carries about
        // 100 PDUs a run, and the check wants more than 100 checked.
        sc.duration = atmsim_kernel::SimDuration(sc.duration.0 * 2);
        let ok = run(&sc, 0);
        assert!(ok.ledger.wire_checked > 100, "PDUs checked: {}", ok.ledger.wire_checked);
        for bit in [3, 40 * 8 + 5, 9_000 * 8] {
            let mut sim = sc.build(sc.seed, 0).expect("build");
            sim.store_mut().observers.get_mut::<atmsim_models::observers::wire_check::WireCheck>().expect("the check is subscribed").corrupt_next = Some(bit);
            let end = atmsim_kernel::SimTime::ZERO.plus(sc.duration);
            match sim.run(end, atmsim_kernel::SimTime::ZERO, &mut |_, _| true) {
                Err(atmsim_kernel::SimError::ModelPanic { msg, .. }) => assert!(msg.starts_with("--check-wire: vc") && msg.contains("AAL5 CRC-32 mismatch"), "bit {bit}: {msg}"),
                other => panic!("bit {bit}: a corrupted PDU was not caught: {other:?}"),
            }
        }
    }

    /// Capturing both hosts of the duplex example changes no trace and no statistic,
    /// and each file holds one record per PDU the host sent and per PDU it reassembled
    /// (the file's records counted here from libpcap's layout; their contents are read
    /// back with an independent parser in tests/test_capture.py).
    #[test]
    fn capturing_hosts_changes_no_trace_and_records_every_pdu() {
        let path = format!("{}/../../scenarios/examples/tcp_duplex.toml", env!("CARGO_MANIFEST_DIR"));
        let sc = Scenario::load(&path).expect("load");
        let plain = run(&sc, 1);
        let dir = std::env::temp_dir();
        let file = |h: &str| dir.join(format!("atmsim-it-{}-{h}-{{run}}.pcap", std::process::id())).to_string_lossy().into_owned();
        let sets = [("a.pcap".to_string(), format!("\"{}\"", file("a"))), ("b.pcap".to_string(), format!("\"{}\"", file("b")))];
        let captured = sc.with_overrides(&sets).expect("pcap overrides");
        let r = run(&captured, 1);
        assert_eq!((r.fingerprint, r.events), (plain.fingerprint, plain.events), "a capture changed the trace");
        assert_eq!(r.probes, plain.probes, "a capture changed a statistic");
        for h in ["a", "b"] {
            let f = file(h).replace("{run}", "1");
            let bytes = std::fs::read(&f).expect("the capture file of run 1");
            std::fs::remove_file(&f).expect("remove");
            let (mut at, mut sent, mut received) = (24, 0.0, 0.0);
            while at < bytes.len() {
                let incl = u32::from_le_bytes([bytes[at + 8], bytes[at + 9], bytes[at + 10], bytes[at + 11]]) as usize;
                // SunATM's first octet: 0x80 sent, 0x00 received, ORed with 0x02 (LLC)
                match bytes[at + 16] {
                    0x82 => sent += 1.0,
                    0x02 => received += 1.0,
                    other => panic!("{h}: SunATM octet {other:#04x}"),
                }
                at += 16 + incl;
            }
            assert_eq!(at, bytes.len(), "{h}: records end at the file's end");
            // PDUs out: the data segments of its sending half (retransmissions included)
            // and the ACK-only segments of its receiving half; PDUs in: what its AAL5
            // reassembled
            let (tx, rx) = if h == "a" { ("vc100", "vc200") } else { ("vc200", "vc100") };
            let out = probe(&r, &format!("{h}/tcp/{tx}"), "tcp_segments", "count") + probe(&r, &format!("{h}/tcp/{rx}"), "tcp_acks", "count");
            let got = probe(&r, h, "aal5_rx_pdus", "count");
            // (a segment TCP has made may still wait for the CPU when the run ends)
            assert!(received == got && sent <= out && sent >= out - 2.0 && sent > 1_000.0, "{h}: {sent} sent and {received} received in the file, {out} and {got} by the probes");
        }
    }

    /// One duplex connection (data both ways, 4.3BSD piggybacking) against the same
    /// transfers as two one-way connections: the same data flows, but ACK-only segments
    /// almost vanish, and every PDU still checks byte for byte.
    #[test]
    fn a_duplex_connection_carries_its_acks_on_data() {
        let path = format!("{}/../../scenarios/examples/tcp_duplex.toml", env!("CARGO_MANIFEST_DIR"));
        let mut sc = Scenario::load(&path).expect("load");
        sc.check_wire = true;
        let r = run(&sc, 0);
        assert!(r.ledger.wire_checked > 1_000, "PDUs checked: {}", r.ledger.wire_checked);
        let (tx_a, rx_b) = (probe(&r, "a/tcp/vc100", "tcp_throughput", "value"), probe(&r, "b/tcp/vc100", "tcp_throughput", "rx"));
        let (tx_b, rx_a) = (probe(&r, "b/tcp/vc200", "tcp_throughput", "value"), probe(&r, "a/tcp/vc200", "tcp_throughput", "rx"));
        assert!(tx_a > 20e6 && tx_b > 20e6, "both directions carry data: {tx_a} {tx_b}");
        // What one end had acknowledged, the other had delivered (in flight at the end aside).
        assert!((tx_a - rx_b).abs() / rx_b < 0.05 && (tx_b - rx_a).abs() / rx_a < 0.05, "{tx_a} {rx_b} {tx_b} {rx_a}");
        let acks = probe(&r, "b/tcp/vc100", "tcp_acks", "count");
        let piggy = probe(&r, "b/tcp/vc100", "tcp_acks", "piggybacked");
        let segs = probe(&r, "b/tcp/vc100", "tcp_segments", "rx");
        assert!(piggy > 0.9 * segs, "data segments carry the ACKs: {piggy} of {segs}");
        assert!(acks < 0.05 * segs, "ACK-only segments almost vanish: {acks} for {segs} data segments");
        // The same two transfers as one-way connections: an ACK-only segment for about
        // every second data segment.
        let text = std::fs::read_to_string(&path).expect("read")
            .replace("tcp = [\"duplex 100 ack 200 window 64 KiB\"]", "tcp = [\"send 100 ack 300 window 64 KiB\", \"recv 400 ack 200 window 64 KiB\"]")
            .replace("tcp = [\"duplex 200 ack 100 window 64 KiB\"]", "tcp = [\"recv 100 ack 300 window 64 KiB\", \"send 200 ack 400 window 64 KiB\"]");
        assert!(text.contains("send 100 ack 300"), "the one-way variant was written");
        let one_way = run(&Scenario::from_text(&text, "one_way.toml").expect("one-way variant"), 0);
        let acks1 = probe(&one_way, "b/tcp/vc100", "tcp_acks", "count");
        let segs1 = probe(&one_way, "b/tcp/vc100", "tcp_segments", "count");
        assert!(acks1 > 0.3 * segs1, "one-way: {acks1} ACK-only segments for {segs1}");
    }

    #[test]
    fn a_payload_nobody_holds_fails_the_run() {
        let mut l = atmsim_kernel::Ledger::default();
        l.payloads_live = 3;
        l.payloads_held = 2;
        let v = l.violations();
        assert_eq!(v.len(), 1);
        assert!(v[0].contains("1 never released"), "{}", v[0]);
    }
}

/// `fingerprint_content`: two runs that deliver different cells at the same instants
/// (only the VC label differs) have the same plain fingerprint and different content
/// fingerprints; the option changes no event.
mod content_fingerprint {
    use super::*;

    #[test]
    fn cells_that_differ_only_in_content_differ_only_in_the_content_fingerprint() {
        let text = |vc: u32| BASE.replace("rate = \"120 Mb/s\"", &format!("rate = \"120 Mb/s\"\nvc = {vc}"));
        let a = Scenario::from_text(&text(5), "a.toml").expect("a");
        let mut b = Scenario::from_text(&text(6), "b.toml").expect("b");
        let (ra, rb) = (run(&a, 0), run(&b, 0));
        assert_eq!((ra.fingerprint, ra.events), (rb.fingerprint, rb.events), "same instants, same plain fingerprint");
        let mut a2 = a.clone();
        a2.fingerprint_content = true;
        b.fingerprint_content = true;
        let (ca, cb) = (run(&a2, 0), run(&b, 0));
        assert_eq!((ca.events, cb.events), (ra.events, rb.events), "the option changes no event");
        assert_ne!(ca.fingerprint, cb.fingerprint, "different cells, different content fingerprints");
        assert_ne!(ca.fingerprint, ra.fingerprint);
        assert_eq!(ca.fingerprint, run(&a2, 0).fingerprint, "reproducible");
    }
}

/// The written tie rule of a FIFO server: a cell whose transmission ends at `t` leaves
/// before a cell arriving at `t` is admitted. A CBR source at exactly the line rate
/// into a one-cell fifo has every arrival at the instant the previous cell's
/// transmission ends: no cell may be lost and the buffer never holds two, on the fast
/// path (departures computed on arrival) and on the event-per-departure path, whether
/// the fifo feeds a sink or another component.
mod tie_rule {
    use super::*;

    fn scenario(downstream: &str, fast: bool) -> Scenario {
        scenario_with(downstream, &fast.to_string()).expect("scenario")
    }

    fn scenario_with(downstream: &str, fast: &str) -> Result<Scenario, atmsim_scenario::ScenarioError> {
        let text = format!(
            r#"connections = ["src -> mux", "mux -> {downstream}"{extra}]

[scenario]
name = "tie"
duration = "2 ms"
seed = 3
fast_path = {fast}

[components.src]
kind = "cbr"
rate = "424 Mb/s"

[components.mux]
kind = "fifo"
rate = "424 Mb/s"
capacity = "1 cells"

[components.sink]
kind = "sink"
{next}"#,
            extra = if downstream == "next" { r#", "next -> sink""# } else { "" },
            next = if downstream == "next" { "\n[components.next]\nkind = \"fifo\"\nrate = \"424 Mb/s\"\n" } else { "" }
        );
        Scenario::from_text(&text, "tie.toml")
    }

    #[test]
    fn a_departure_at_the_instant_of_an_arrival_comes_first() {
        for downstream in ["sink", "next"] {
            for fast in [true, false] {
                let r = run(&scenario(downstream, fast), 0);
                let what = format!("fifo -> {downstream}, fast path {fast}");
                assert_eq!(probe(&r, "mux", "q_rx_cells", "count"), 2_000.0, "{what}");
                assert_eq!(probe(&r, "mux", "q_drop_cells", "count"), 0.0, "{what}");
                assert_eq!(probe(&r, "mux", "q_len", "max"), 1.0, "{what}");
            }
        }
    }

    /// `fast_path` takes true, false or "sinks"; "sinks" keeps the fast path for the
    /// fifo feeding a sink only: a fifo feeding another fifo then handles an event per
    /// departure (more events than with `true`), with the same statistics (no ties
    /// elsewhere here); anything else is one line naming the key and what is valid.
    #[test]
    fn fast_path_takes_true_false_or_sinks() {
        let with = |v: &str| scenario_with("next", v);
        let all = run(&scenario("next", true), 0);
        let sinks = run(&with("\"sinks\"").expect("sinks"), 0);
        let exact = run(&scenario("next", false), 0);
        assert!(all.events < sinks.events && sinks.events < exact.events, "{} {} {}", all.events, sinks.events, exact.events);
        for c in ["mux", "next"] {
            assert_eq!(probe(&all, c, "q_wait", "mean"), probe(&exact, c, "q_wait", "mean"), "{c}");
            assert_eq!(probe(&sinks, c, "q_wait", "mean"), probe(&exact, c, "q_wait", "mean"), "{c}");
        }
        let err = with("\"fast\"").err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("fast_path") && err.contains("\"sinks\"") && !err.contains('\n'), "{err}");
    }
}

/// A switch output port that nothing reads at departure instants (FIFO, no credit or
/// shared memory) computes its departures on arrival and hands cells on ahead, like a
/// standalone fifo: fewer events, every statistic the same as the event path's. With
/// EFCI marking it does so only where the kernel lets it finish (mark) each cell on
/// delivery, that is when it feeds an ordinary component; feeding a passive sink it
/// keeps the event path.
mod switch_port_fast_path {
    use super::*;

    /// Two Poisson sources (100 and 40 Mb/s, VCs 32 and 33) into switch ports p1 and
    /// p2; `wires`: the connections after them; `switch`: the switch's keys besides
    /// its kind; `fast`: the `fast_path` value; `next`: a fifo of that rate between
    /// the switch and the sink, if any.
    fn text(wires: &str, switch: &str, fast: &str, next: Option<&str>) -> String {
        let next = next.map(|r| format!("[components.next]\nkind = \"fifo\"\nrate = \"{r}\"\n")).unwrap_or_default();
        format!(
            r#"connections = ["a -> sw.p1", "b -> sw.p2", {wires}]

[scenario]
name = "switch port"
duration = "20 ms"
seed = 5
fast_path = {fast}

[components.a]
kind = "poisson"
rate = "100 Mb/s"
vc = 32

[components.b]
kind = "poisson"
rate = "40 Mb/s"
vc = 33

[components.sw]
kind = "switch"
{switch}

[components.sink]
kind = "sink"

{next}"#
        )
    }

    fn scenario(policy: &str, fast: bool) -> Scenario {
        scenario_to(policy, fast, "sink")
    }

    /// `to`: "sink" (the port feeds the sink) or "next" (a 155.52 Mb/s fifo between
    /// them, an ordinary component).
    fn scenario_to(policy: &str, fast: bool, to: &str) -> Scenario {
        let (wires, next) = if to == "next" { (r#""sw.p3 -> next", "next -> sink""#, Some("155.52 Mb/s")) } else { (r#""sw.p3 -> sink""#, None) };
        let switch = format!("ports = 3\nrate = \"120 Mb/s\"\ncapacity = \"64 cells\"\nvcs = [\"p1:0/32 -> p3:0/40\", \"p2:0/33 -> p3:0/41\"]\n{policy}");
        Scenario::from_text(&text(wires, &switch, &fast.to_string(), next), "switch_port.toml").expect("scenario")
    }

    #[test]
    fn a_plain_switch_port_computes_its_departures_and_changes_no_statistic() {
        for policy in ["", "efci_threshold = \"16 cells\""] {
            let fast = run(&scenario(policy, true), 0);
            let exact = run(&scenario(policy, false), 0);
            for (name, stat) in [("q_tx_cells", "count"), ("q_drop_cells", "count"), ("q_wait", "mean"), ("q_len", "mean"), ("q_len", "max")] {
                assert_eq!(probe(&fast, "sw/p3", name, stat), probe(&exact, "sw/p3", name, stat), "{policy:?} {name} {stat}");
            }
            assert!(probe(&fast, "sw/p3", "q_drop_cells", "count") > 0.0, "the port should overflow (140 Mb/s into 120 Mb/s)");
            if policy.is_empty() {
                assert!(fast.events < exact.events, "plain port: {} events against {}", fast.events, exact.events);
            } else {
                assert!(probe(&fast, "sw/p3", "q_efci_cells", "count") > 0.0);
                assert_eq!(fast.events, exact.events, "EFCI port feeding a passive sink: the event path");
            }
        }
    }

    /// A per-VC port (`queueing = "per-vc"`) that serves one VC is a FIFO bounded by
    /// the smaller of `vc_capacity` and `capacity`: it computes its departures on
    /// arrival (fewer events) with every statistic of the event path, losses at the VC
    /// limit included; with two VCs on the port it keeps the event path (round robin).
    #[test]
    fn a_per_vc_port_of_one_vc_computes_its_departures() {
        let switch = |vcs: &str| format!("ports = 4\nrate = \"110 Mb/s\"\nqueueing = \"per-vc\"\nvc_capacity = \"24 cells\"\ncapacity = \"64 cells\"\nvcs = {vcs}");
        let wires = r#""sw.p3 -> next", "sw.p4 -> next", "next -> sink""#;
        let one = r#"["p1:0/32 -> p3:0/40", "p2:0/33 -> p4:0/41"]"#;
        let two = r#"["p1:0/32 -> p3:0/40", "p2:0/33 -> p3:0/41"]"#;
        for (vcs, computed) in [(one, true), (two, false)] {
            let sc = |fast: &str| Scenario::from_text(&text(wires, &switch(vcs), fast, Some("622.08 Mb/s")), "per_vc.toml").expect("scenario");
            let (fast, exact) = (run(&sc("true"), 0), run(&sc("false"), 0));
            // "sinks": only the fifo feeding the sink computes; the switch port does
            // on the whole fast path exactly when it serves one VC.
            let sinks = run(&sc("\"sinks\""), 0);
            for (c, name, stat) in [("sw/p3", "q_tx_cells", "count"), ("sw/p3", "q_drop_cells", "count"), ("sw/p3", "q_wait", "mean"), ("sw/p3", "q_len", "max"), ("sw/p3/vc40", "port_drop_cells", "count"), ("next", "q_wait", "mean")] {
                assert_eq!(probe(&fast, c, name, stat), probe(&exact, c, name, stat), "{vcs} {c} {name} {stat}");
            }
            if computed {
                assert!(fast.events < sinks.events, "one VC: {} events against {}", fast.events, sinks.events);
                assert!(probe(&fast, "sw/p3/vc40", "port_drop_cells", "count") > 0.0, "100 Mb/s into 110 Mb/s with 24 cells should overflow now and then");
                assert_eq!(probe(&fast, "sw/p3", "q_len", "max"), 24.0, "bounded by vc_capacity");
            } else {
                assert_eq!(fast.events, sinks.events, "two VCs: round robin keeps the event path");
            }
        }
    }

    /// An EFCI-marking port feeding an ordinary component decides each cell's mark as
    /// cells arrive behind it and sets it on the cell where it waits, sent ahead:
    /// fewer events, and the same cells marked as on the event path (the port's count,
    /// and per VC the count of marked cells the sink receives behind the next fifo),
    /// with the threshold at 1 (the cell just ahead, last in the lane), 2 and 16 cells.
    #[test]
    fn an_efci_port_feeding_a_component_marks_where_they_wait_the_cells_the_event_path_marks() {
        for t in [1, 2, 16] {
            let policy = format!("efci_threshold = \"{t} cells\"");
            let fast = run(&scenario_to(&policy, true, "next"), 0);
            let exact = run(&scenario_to(&policy, false, "next"), 0);
            assert!(fast.events < exact.events, "EFCI port: {} events against {}", fast.events, exact.events);
            for (c, name, stat) in [("sw/p3", "q_efci_cells", "count"), ("sw/p3", "q_tx_cells", "count"), ("sw/p3", "q_wait", "mean"), ("next", "q_wait", "mean")] {
                assert_eq!(probe(&fast, c, name, stat), probe(&exact, c, name, stat), "threshold {t}: {c} {name} {stat}");
            }
            let (marked, sent) = (probe(&fast, "sw/p3", "q_efci_cells", "count"), probe(&fast, "sw/p3", "q_tx_cells", "count"));
            assert!(marked > 0.0 && marked < sent, "threshold {t}: some cells marked, not all: {marked}");
            let at_sink = |r: &atmsim_scenario::RunResult| {
                r.probes.iter().filter(|p| p.component.starts_with("sink") && p.probe == "sink_efci_cells").map(|p| p.value).collect::<Vec<_>>()
            };
            assert_eq!(at_sink(&fast), at_sink(&exact), "threshold {t}");
            let received: f64 = at_sink(&fast).iter().sum();
            assert!(received > 0.0 && received <= marked, "threshold {t}: marked cells reach the sink: {received} of {marked}");
        }
    }
}
