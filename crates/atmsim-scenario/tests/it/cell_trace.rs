//! The cell trace (`[trace]`): it changes nothing in the run; its rows are the
//! deliveries and drops the probes and the ledger count; a cell can be followed hop by
//! hop through a switch's VC table; the filter and its errors.

use super::*;

fn with_trace(sc: &Scenario, keys: &[(&str, &str)]) -> Scenario {
    let mut o: Vec<(String, String)> = vec![("trace.cells".into(), "true".into())];
    o.extend(keys.iter().map(|(k, v)| (format!("trace.{k}"), v.to_string())));
    sc.with_overrides(&o).unwrap_or_else(|e| panic!("{e}"))
}

fn example(name: &str) -> Scenario {
    Scenario::load(&format!("{}/../../scenarios/examples/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap_or_else(|e| panic!("{e}"))
}

/// Observing every delivery changes no event and no statistic, on the fast path
/// (passive sinks, deferred inputs, ports computing departures) and off it.
#[test]
fn a_trace_changes_nothing_in_the_run() {
    for name in ["ping_through_switch.toml", "abr_two_sessions.toml", "epd_udp.toml", "onoff8_fifo.toml"] {
        let sc = example(name).with_overrides(&[("scenario.duration".into(), "50 ms".into()), ("scenario.warmup".into(), "0 s".into())]).unwrap_or_else(|e| panic!("{e}"));
        for fast in ["true", "false"] {
            let sc = sc.with_overrides(&[("scenario.fast_path".into(), fast.into())]).unwrap_or_else(|e| panic!("{e}"));
            let plain = run(&sc, 0);
            let traced = run(&with_trace(&sc, &[]), 0);
            assert_eq!((plain.fingerprint, plain.events), (traced.fingerprint, traced.events), "{name}, fast path {fast}: {:?}", traced.warnings);
            let bits = |r: &atmsim_scenario::RunResult| r.probes.iter().map(|p| (p.component.clone(), p.probe, p.statistic.clone(), p.value.to_bits())).collect::<Vec<_>>();
            assert_eq!(bits(&plain), bits(&traced), "{name}, fast path {fast}");
            assert!(!traced.trace.is_empty() && plain.trace.is_empty(), "{name}");
            assert!(traced.trace.windows(2).all(|w| w[0].time_s <= w[1].time_s), "{name}: rows in time order");
        }
    }
}

/// Every cell the sink counts arrives in the trace there, and every cell the FIFO
/// drops is a `d` row with the ledger's cause: the same numbers as the probes'.
#[test]
fn the_rows_are_the_cells_the_probes_count() {
    let text = r#"connections = ["a -> q", "b -> q", "q -> s"]
[scenario]
duration = "20 ms"
seed = 4
[components.a]
kind = "onoff"
peak = "149.76 Mb/s"
mean = "70 Mb/s"
burst_factor = "200 cells"
vc = 7
[components.b]
kind = "cbr"
rate = "60 Mb/s"
vc = 8
[components.q]
kind = "fifo"
phy = "OC-3c"
capacity = "8 cells"
[components.s]
kind = "sink"
"#;
    let sc = Scenario::from_text(text, "t.toml").unwrap_or_else(|e| panic!("{e}"));
    for fast in ["true", "false"] {
        let sc = with_trace(&sc, &[]).with_overrides(&[("scenario.fast_path".into(), fast.into())]).unwrap_or_else(|e| panic!("{e}"));
        let r = run(&sc, 0);
        let count = |f: &dyn Fn(&atmsim_scenario::TraceRowOut) -> bool| r.trace.iter().filter(|x| f(x)).count() as f64;
        let drops = count(&|x| x.event == "d");
        assert!(drops > 0.0, "the 8-cell buffer overflows");
        assert_eq!(drops, probe(&r, "q", "q_drop_cells", "count"), "fast path {fast}");
        assert!(r.trace.iter().filter(|x| x.event == "d").all(|x| x.component == "q" && x.cause == "buffer_full" && x.port.is_empty()));
        assert_eq!(count(&|x| x.event == "r" && x.component == "q"), probe(&r, "q", "q_rx_cells", "count"));
        for vc in ["7", "8"] {
            let at_sink = count(&|x| x.event == "r" && x.component == "s" && x.vc == format!("0/{vc}"));
            assert_eq!(at_sink, probe(&r, &format!("s/vc{vc}"), "sink_rx_cells", "count"), "vc {vc}, fast path {fast}");
        }
        // A cell is received at the FIFO when its source made it, and at the sink one
        // cell time or more later.
        let t = 424.0 / 149.76e6;
        for x in r.trace.iter().filter(|x| x.event == "r") {
            let wait = x.time_s - x.born_s;
            if x.component == "q" {
                assert_eq!(wait, 0.0, "{x:?}");
            } else {
                assert!(wait >= t * (1.0 - 1e-9) && wait <= 9.0 * t * (1.0 + 1e-9), "{x:?}");
            }
        }
    }
}

/// The ping's first PDU, followed hop by hop: its 23 cells (1024 octets of ICMP
/// data, IP and LLC/SNAP and the AAL5 trailer) enter the switch at p1 on VC 92 one
/// cell time apart and leave p2 on VC 92 into ws2 (the table's "p1:92 -> p2:92"),
/// each a cell time after it came in; the echo reply comes back from ws2 on VC 93.
/// The PDU's last cell names the ICMP message it completes.
#[test]
fn a_ping_followed_through_the_switch() {
    let sc = with_trace(&example("ping_through_switch.toml"), &[("flows", "[\"ws1\", \"ws2\"]"), ("to", "\"5 ms\"")]);
    let r = run(&sc, 0);
    let t = 424.0 / 149.76e6;
    let first = |at: &str| -> Vec<&atmsim_scenario::TraceRowOut> { r.trace.iter().filter(|x| x.source == "ws1" && x.component == at && x.born_s == 0.0).collect() };
    let (sw, ws2) = (first("sw"), first("ws2"));
    assert_eq!((sw.len(), ws2.len()), (23, 23));
    assert!(sw.iter().all(|x| (x.port.as_str(), x.vc.as_str(), x.event) == ("p1", "0/92", "r")), "{:?}", sw[0]);
    assert!(ws2.iter().all(|x| (x.port.as_str(), x.vc.as_str(), x.event) == ("in", "0/92", "r")), "{:?}", ws2[0]);
    assert!((sw[0].time_s - t).abs() < 1e-12 && (ws2[0].time_s - 2.0 * t).abs() < 1e-12, "{:?} {:?}", sw[0], ws2[0]);
    // Cell k of the PDU is the k-th at each hop (pdu_cell names it), a cell time or
    // more later at ws2 than at the switch.
    for (k, (a, b)) in sw.iter().zip(&ws2).enumerate() {
        assert_eq!((a.pdu_cell as usize, b.pdu_cell as usize), (k, k));
        assert!(b.time_s >= a.time_s + t * (1.0 - 1e-6), "{a:?} {b:?}");
    }
    for x in [sw[22], ws2[22]] {
        assert!(x.carries.contains("icmp echo request seq 0") && x.flags == "eop", "{x:?}");
    }
    assert!(sw[..22].iter().all(|x| x.carries.is_empty() && x.flags.is_empty()));
    let reply = r.trace.iter().find(|x| x.component == "ws1" && x.carries.contains("icmp echo reply")).unwrap_or_else(|| panic!("no reply at ws1: {:?}", r.trace.last()));
    assert_eq!((reply.source.as_str(), reply.vc.as_str(), reply.port.as_str()), ("ws2", "0/93", "in"));
    assert!(r.trace.iter().all(|x| x.source == "ws1" || x.source == "ws2"), "only the two flows asked for");
}

#[test]
fn the_filter_keeps_components_windows_vcs_and_a_limit() {
    let sc = example("ping_through_switch.toml");
    let r = run(&with_trace(&sc, &[("at", "ws2"), ("from", "\"10 ms\""), ("to", "\"20 ms\"")]), 0);
    assert!(!r.trace.is_empty());
    assert!(r.trace.iter().all(|x| x.component == "ws2" && (0.010..0.020).contains(&x.time_s)), "{:?}", r.trace.first());
    let r = run(&with_trace(&sc, &[("vcs", "[\"50\"]"), ("to", "\"2 ms\"")]), 0);
    assert!(!r.trace.is_empty() && r.trace.iter().all(|x| x.vc == "0/50" && x.source == "bg1"));
    let r = run(&with_trace(&sc, &[("limit", "100")]), 0);
    assert_eq!(r.trace.len(), 100);
    assert!(r.warnings.iter().any(|w| w.contains("trace.limit") && w.contains("stopped at 100 rows")), "{:?}", r.warnings);
}

#[test]
fn trace_errors_name_the_key_and_what_is_valid() {
    let sc = example("ping_through_switch.toml");
    let e = |k: &str, v: &str| match sc.with_overrides(&[("trace.cells".into(), "true".into()), (k.into(), v.into())]) {
        Ok(_) => panic!("accepted {k} = {v}"),
        Err(e) => e.to_string(),
    };
    for (key, value, needles) in [
        ("trace.flows", "sw", &["trace.flows", "'sw' is a switch, not a source", "ws1"][..]),
        ("trace.flows", "wss1", &["no component 'wss1'", "did you mean 'ws1'"]),
        ("trace.vcs", "0/70000", &["trace.vcs", "VPI/VCI"]),
        ("trace.frm", "1 ms", &["unknown key", "did you mean 'from'"]),
        ("trace.from", "2 s", &["trace.from", "holds no instant"]),
        ("trace.limit", "0", &["trace.limit", "positive"]),
        ("trace.cells", "yes", &["trace.cells", "true or false"]),
    ] {
        let m = e(key, value);
        assert!(needles.iter().all(|n| m.contains(n)), "{m}");
    }
    for m in [e("trace.flows", "sw"), e("trace.limit", "0")] {
        assert!(!m.contains('\n'), "one line: {m}");
    }
    // The table written back keeps the trace.
    let t = with_trace(&sc, &[("flows", "ws1"), ("limit", "5")]).to_toml();
    let back = Scenario::from_text(&t, "back.toml").unwrap_or_else(|e| panic!("{e}\n{t}"));
    assert_eq!(back.trace.as_ref().map(|t| (t.flows.clone(), t.filter.limit)), Some((vec!["ws1".to_string()], 5)));
}

/// A trace source's AAL5 PDUs: at the multiplexer each PDU's cells arrive in order,
/// `pdu_cell` 0, 1, ... up to the one marked end-of-PDU, all with the PDU's number.
#[test]
fn a_trace_sources_cells_are_named_by_pdu_and_place() {
    let sc = with_trace(&example("bellcore_trace.toml"), &[("at", "mux"), ("to", "\"200 ms\"")]);
    let r = run(&sc, 0);
    let mut pdus = 0;
    let mut next = std::collections::HashMap::new();
    for x in r.trace.iter().filter(|x| x.event == "r") {
        let k = next.entry(x.seq).or_insert(0u16);
        assert_eq!(x.pdu_cell, *k, "{x:?}");
        *k += 1;
        if x.flags.contains("eop") {
            pdus += 1;
        }
    }
    assert!(pdus > 10 && next.len() >= pdus, "{pdus} whole PDUs of {} seen", next.len());
}
