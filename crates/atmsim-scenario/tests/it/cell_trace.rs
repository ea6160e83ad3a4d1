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
        // Each transmission the FIFO starts is a `-` row: every cell it sent, and the
        // one on the line at the end; the wait from its `r` row to its `-` row is the
        // one the FIFO's wait probe books.
        let starts: Vec<_> = r.trace.iter().filter(|x| x.event == "-").collect();
        let sent = probe(&r, "q", "q_tx_cells", "count");
        assert!(starts.iter().all(|x| x.component == "q" && x.port == "out"), "fast path {fast}");
        assert!(starts.len() as f64 >= sent && starts.len() as f64 <= sent + 1.0, "{} rows, {sent} sent, fast path {fast}", starts.len());
        let arrived: std::collections::HashMap<(&str, u32), f64> = r.trace.iter().filter(|x| x.event == "r" && x.component == "q").map(|x| ((x.source.as_str(), x.seq), x.time_s)).collect();
        let waits: Vec<f64> = starts.iter().map(|x| x.time_s - arrived[&(x.source.as_str(), x.seq)]).collect();
        assert!(waits.iter().all(|&w| w >= 0.0 && w <= 8.0 * t * (1.0 + 1e-9)), "at most 7 cells ahead, one of them part sent");
        assert_eq!(waits.len() as f64, probe(&r, "q", "q_wait", "count"), "fast path {fast}");
        let mean = waits.iter().sum::<f64>() / waits.len() as f64;
        let booked = probe(&r, "q", "q_wait", "mean");
        assert!((mean - booked).abs() <= 1e-9 * booked.max(1e-12), "trace {mean} against probe {booked}, fast path {fast}");
    }
}

/// The transmissions the trace books are the same, to the picosecond, whether a
/// buffer computes departures on arrival (the fast path) or as events, on the
/// examples the other tests use and on a per-VC switch port served round robin.
#[test]
fn transmissions_are_the_same_on_and_off_the_fast_path() {
    let per_vc = Scenario::from_text(
        r#"connections = ["a -> sw.p1", "b -> sw.p2", "sw.p3 -> s"]
[scenario]
duration = "5 ms"
seed = 9
[components.a]
kind = "onoff"
peak = "149.76 Mb/s"
mean = "80 Mb/s"
burst_factor = "50 cells"
vc = 7
[components.b]
kind = "poisson"
rate = "60 Mb/s"
vc = 8
[components.sw]
kind = "switch"
ports = 3
queueing = "per-vc"
vcs = ["p1:7 -> p3:7", "p2:8 -> p3:8"]
[components.s]
kind = "sink"
"#,
        "per_vc.toml",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut cases: Vec<(String, Scenario)> = ["ping_through_switch.toml", "abr_two_sessions.toml", "epd_udp.toml", "onoff8_fifo.toml"]
        .iter()
        .map(|n| (n.to_string(), example(n).with_overrides(&[("scenario.duration".into(), "30 ms".into()), ("scenario.warmup".into(), "0 s".into())]).unwrap_or_else(|e| panic!("{e}"))))
        .collect();
    cases.push(("per-VC port".into(), per_vc));
    for (name, sc) in cases {
        let starts = |fast: &str| {
            let r = run(&with_trace(&sc, &[]).with_overrides(&[("scenario.fast_path".into(), fast.into())]).unwrap_or_else(|e| panic!("{e}")), 0);
            let mut rows: Vec<_> = r.trace.iter().filter(|x| x.event == "-").map(|x| (x.time_s.to_bits(), x.component.clone(), x.port.clone(), x.vc.clone(), x.source.clone(), x.seq, x.pdu_cell, x.flags.clone())).collect();
            rows.sort();
            rows
        };
        let (fast, events) = (starts("true"), starts("false"));
        assert!(!fast.is_empty(), "{name}");
        assert_eq!(fast.len(), events.len(), "{name}");
        assert!(fast == events, "{name}: first difference {:?}", fast.iter().zip(&events).find(|(a, b)| a != b));
    }
}

/// A sender's own line (an ABR edge's `line_rate`, `line_length`): each cell's `-`
/// row there is one cell time plus the fibre before the switch receives it.
#[test]
fn a_senders_own_line_books_its_transmissions() {
    let sc = Scenario::load(&format!("{}/../../scenarios/dastangoo96/baseline10.toml", env!("CARGO_MANIFEST_DIR"))).unwrap_or_else(|e| panic!("{e}"));
    let sc = with_trace(&sc, &[("to", "\"20 ms\"")]);
    let r = run(&sc, 0);
    let edge: Vec<_> = r.trace.iter().filter(|x| x.event == "-" && x.component.starts_with('e')).collect();
    assert!(edge.len() > 100, "{} rows", edge.len());
    let key = |x: &&atmsim_scenario::TraceRowOut| (x.source.clone(), x.seq);
    let at_switch: std::collections::HashMap<_, f64> = r.trace.iter().filter(|x| x.event == "r" && x.component == "sw1" && x.port == "p1" && x.source.starts_with('e')).map(|x| (key(&x), x.time_s)).collect();
    // 424 bits at 155 Mb/s, then 4 km of fibre at 5 us/km.
    let hop = 424.0 / 155e6 + 20e-6;
    let mut n = 0;
    for x in &edge {
        if let Some(&t) = at_switch.get(&key(x)) {
            assert!((t - x.time_s - hop).abs() < 1e-11, "{x:?} reaches the switch at {t}");
            n += 1;
        }
    }
    assert!(n + 20 >= edge.len(), "{n} of {} cells followed", edge.len());
}

/// The ping's first PDU, followed hop by hop: its 23 cells (1024 octets of ICMP
/// data, IP and LLC/SNAP and the AAL5 trailer) leave ws1's adapter back to back,
/// enter the switch at p1 on VC 92 one cell time apart and leave p2 on VC 92 into ws2
/// (the table's "p1:92 -> p2:92"), each a cell time after it came in; the echo reply
/// comes back from ws2 on VC 93. The PDU's last cell names the ICMP message it
/// completes.
#[test]
fn a_ping_followed_through_the_switch() {
    let sc = with_trace(&example("ping_through_switch.toml"), &[("flows", "[\"ws1\", \"ws2\"]"), ("to", "\"5 ms\"")]);
    let r = run(&sc, 0);
    let t = 424.0 / 149.76e6;
    let first = |at: &str, ev: &str| -> Vec<&atmsim_scenario::TraceRowOut> { r.trace.iter().filter(|x| x.source == "ws1" && x.component == at && x.event == ev && x.born_s == 0.0).collect() };
    let (sw, ws2) = (first("sw", "r"), first("ws2", "r"));
    assert_eq!((sw.len(), ws2.len()), (23, 23));
    // Each leaves the adapter one cell time after the one ahead of it, and reaches the
    // switch one cell time after it started (ws1's line has no fibre).
    let sent = first("ws1", "-");
    assert_eq!(sent.len(), 23);
    for (k, (x, y)) in sent.iter().zip(&sw).enumerate() {
        assert_eq!((x.port.as_str(), x.vc.as_str(), x.pdu_cell as usize), ("out", "0/92", k), "{x:?}");
        assert!((x.time_s - k as f64 * t).abs() < 1e-12 && (y.time_s - x.time_s - t).abs() < 1e-12, "{x:?} {y:?}");
    }
    assert!(sw.iter().all(|x| (x.port.as_str(), x.vc.as_str(), x.event) == ("p1", "0/92", "r")), "{:?}", sw[0]);
    assert!(ws2.iter().all(|x| (x.port.as_str(), x.vc.as_str(), x.event) == ("in", "0/92", "r")), "{:?}", ws2[0]);
    assert!((sw[0].time_s - t).abs() < 1e-12 && (ws2[0].time_s - 2.0 * t).abs() < 1e-12, "{:?} {:?}", sw[0], ws2[0]);
    // Cell k of the PDU is the k-th at each hop (pdu_cell names it), a cell time or
    // more later at ws2 than at the switch.
    // Its transmission on p2 starts when it comes in or when the port is free, and
    // ws2 has it one cell time later (no fibre).
    let out = first("sw", "-");
    assert_eq!(out.len(), 23);
    for (k, ((a, d), b)) in sw.iter().zip(&out).zip(&ws2).enumerate() {
        assert_eq!((a.pdu_cell as usize, d.pdu_cell as usize, b.pdu_cell as usize), (k, k, k));
        assert_eq!((d.port.as_str(), d.vc.as_str()), ("p2", "0/92"), "{d:?}");
        assert!(d.time_s >= a.time_s && (b.time_s - d.time_s - t).abs() < 1e-12, "{a:?} {d:?} {b:?}");
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
        ("trace.frames", "no", &["trace.frames", "true or false"]),
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
    let t = with_trace(&sc, &[("frames", "false")]).to_toml();
    let back = Scenario::from_text(&t, "back.toml").unwrap_or_else(|e| panic!("{e}\n{t}"));
    assert_eq!(back.trace.as_ref().map(|t| t.filter.frames), Some(false), "{t}");
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

/// The ATM–FDDI gateway's per-cell losses are `d` rows: a cell the SPP finds no room
/// for (`reassembly_full`) and one whose segment is already in error
/// (`segment_in_error`), as many per cause and flow as the ledger books; the frames
/// the MPP drops later (`frame_in_error`, cells already reassembled) are not.
#[test]
fn the_gateways_cell_losses_are_drop_rows() {
    let sc = Scenario::load(&format!("{}/../../scenarios/buddhikot92/bf1000.toml", env!("CARGO_MANIFEST_DIR"))).unwrap_or_else(|e| panic!("{e}"));
    let mut o: Vec<(String, String)> = vec![("scenario.duration".into(), "300 ms".into()), ("scenario.warmup".into(), "0 s".into())];
    for i in 1..=8 {
        o.push((format!("src{i}.mean"), "15 Mb/s".into()));
        o.push((format!("src{i}.peak"), "30 Mb/s".into()));
    }
    let sc = with_trace(&sc.with_overrides(&o).unwrap_or_else(|e| panic!("{e}")), &[("at", "gw")]);
    let r = run(&sc, 0);
    let mut traced: std::collections::BTreeMap<(String, String), u64> = Default::default();
    for x in r.trace.iter().filter(|x| x.event == "d") {
        *traced.entry((x.cause.to_string(), x.source.clone())).or_default() += 1;
    }
    let mut booked: std::collections::BTreeMap<(String, String), u64> = Default::default();
    for (&(cause, flow), &n) in &r.ledger.dropped {
        if cause != "frame_in_error" && n > 0 {
            booked.insert((cause.to_string(), format!("src{}", flow + 1)), n);
        }
    }
    assert!(booked.keys().any(|(c, _)| c == "reassembly_full"), "120 Mb/s at B = 1000 overflows the reassembly buffer: {booked:?}");
    assert_eq!(traced, booked);
    assert!(r.trace.iter().all(|x| x.component == "gw" && x.event != "-"));
}

fn buddhikot92(name: &str, duration: &str) -> Scenario {
    Scenario::load(&format!("{}/../../scenarios/buddhikot92/{name}", env!("CARGO_MANIFEST_DIR")))
        .and_then(|sc| sc.with_overrides(&[("scenario.duration".into(), duration.into()), ("scenario.warmup".into(), "0 s".into())]))
        .unwrap_or_else(|e| panic!("{e}"))
}

/// FDDI frames are rows too: the ring's stations start each frame's transmission (`-`
/// at `ring/sI`), receive it (`r` there) and drop it at a full transmit buffer (`d`),
/// as many as their probes count; the gateway's segments dropped in the MPP are `d`
/// rows whose cells are the ledger's `frame_in_error` cells; a trace still changes
/// nothing in the run.
#[test]
fn frames_on_the_ring_and_through_the_gateway_are_rows() {
    // 8 × 17.5 Mb/s offered: overload (140 Mb/s of cells into a 100 Mb/s ring), and
    // on two connections segments of 100 cells, longer than a reassembly queue (92
    // cells): a segment that fills its queue is in error with cells reassembled,
    // dropped in the MPP.
    let mut load: Vec<(String, String)> = (1..=8).map(|i| (format!("src{i}.mean"), "17.5 Mb/s".to_string())).collect();
    load.extend((1..=2).map(|i| (format!("src{i}.wucs_segment"), "100".to_string())));
    let sc = buddhikot92("pa8.toml", "600 ms").with_overrides(&load).unwrap_or_else(|e| panic!("{e}"));
    let plain = run(&sc, 0);
    let r = run(&with_trace(&sc, &[]), 0);
    assert_eq!((plain.fingerprint, plain.events), (r.fingerprint, r.events));
    let bits = |r: &atmsim_scenario::RunResult| r.probes.iter().map(|p| (p.component.clone(), p.probe, p.statistic.clone(), p.value.to_bits())).collect::<Vec<_>>();
    assert_eq!(bits(&plain), bits(&r));
    let probe = |comp: &str, name: &str| r.probes.iter().find(|p| p.component == comp && p.probe == name && p.statistic == "count").map_or(0.0, |p| p.value);
    let frames = |comp: &str, ev: &str| r.trace.iter().filter(|x| x.unit == "frame" && x.component == comp && x.event == ev).count() as f64;
    let (mut sent, mut counted) = (0.0, 0.0);
    for i in 0..4 {
        let s = format!("ring/s{i}");
        assert_eq!(frames(&s, "r"), probe(&s, "mac_rx_frames"), "{s}: frames received");
        assert_eq!(frames(&s, "d"), probe(&s, "mac_drop_frames"), "{s}: frames dropped");
        sent += frames(&s, "-");
        counted += probe(&s, "mac_tx_frames");
    }
    // A frame whose transmission began is counted sent when its last bit has left.
    assert!(sent - counted == 0.0 || sent - counted == 1.0, "{sent} transmissions begun, {counted} ended");
    assert!(sent > 100.0 && counted > 100.0, "{sent}");
    // Every frame the gateway writes arrives at the ring's gw_tx.
    let written = probe("gw", "gw_tx_frames");
    let at_ring: Vec<_> = r.trace.iter().filter(|x| x.unit == "frame" && x.component == "ring" && x.event == "r" && x.port == "gw_tx").collect();
    assert_eq!(at_ring.len() as f64, written);
    assert!(at_ring.iter().all(|x| x.source == "gw" && x.vc.is_empty() && x.carries.starts_with("dst ")), "{:?}", at_ring.first());
    // Each of them starts on the ring at the gateway station (station 0 here) after it
    // arrived, and arrives at the station it is addressed to after that.
    let mut followed = 0;
    for x in at_ring.iter().take(50) {
        let later = |comp: &str, ev: &str, after: f64| r.trace.iter().find(|y| y.unit == "frame" && y.source == x.source && y.seq == x.seq && y.component == comp && y.event == ev && y.time_s >= after).map(|y| y.time_s);
        let Some(start) = later("ring/s0", "-", x.time_s) else { continue };
        let dst = format!("ring/s{}", &x.carries[4..]);
        assert!(later(&dst, "r", start).is_some(), "frame {} to {dst}: no arrival after {start}", x.seq);
        followed += 1;
    }
    assert!(followed >= 40, "{followed} of the first 50 frames followed onto the ring");
    // Background frames are named by the station that made them.
    assert!(r.trace.iter().any(|x| x.unit == "frame" && x.source.starts_with("ring/s")));
    // The MPP's segments in error: their cells are the ledger's.
    let in_error: f64 = r.trace.iter().filter(|x| x.unit == "frame" && x.cause == "frame_in_error").map(|x| f64::from((x.octets - 28) / 45)).sum();
    let ledger = r.ledger.dropped_by_cause().get("frame_in_error").copied().unwrap_or(0) as f64;
    assert_eq!(in_error, ledger);
    assert!(ledger > 0.0, "this run drops segments in the MPP: {:?}", r.ledger.dropped_by_cause());
    // Cells still have their rows, 53 octets each.
    assert!(r.trace.iter().any(|x| x.unit == "cell" && x.octets == 53 && x.component == "gw"));
    // One station of the ring: its rows, none of the others' or the ring's own.
    let s2 = run(&with_trace(&sc, &[("at", "[\"ring/s2\"]")]), 0);
    assert!(!s2.trace.is_empty() && s2.trace.iter().all(|x| x.component == "ring/s2"), "{:?}", s2.trace.first());
    assert_eq!(s2.trace.len(), r.trace.iter().filter(|x| x.component == "ring/s2").count());
    for (name, needle) in [("ring/s4", "ring 'ring' has stations s0 … s3"), ("rin/s1", "no component 'rin/s1'")] {
        let m = match sc.with_overrides(&[("trace.cells".into(), "true".into()), ("trace.at".into(), format!("[\"{name}\"]"))]) {
            Ok(_) => panic!("accepted trace.at = {name}"),
            Err(e) => e.to_string(),
        };
        assert!(m.contains("trace.at") && m.contains(needle) && !m.contains('\n'), "{m}");
    }
    // frames = false keeps the cells' rows and no frame's.
    let cells_only = run(&with_trace(&sc, &[("frames", "false"), ("to", "\"100 ms\"")]), 0);
    assert!(!cells_only.trace.is_empty() && cells_only.trace.iter().all(|x| x.unit == "cell"));
}

/// The reverse path: frames the gateway drops at its full receive buffer (one frame,
/// drained onto a 50 Mb/s ATM link here, so that it overflows) are `d` rows there, as
/// many as the ledger's.
#[test]
fn frames_dropped_on_the_gateways_reverse_path_are_rows() {
    let set = [("gw.rx_buffer_frames".to_string(), "1".to_string()), ("gw.atm_rate".to_string(), "50 Mb/s".to_string())];
    let sc = buddhikot92("reverse.toml", "300 ms").with_overrides(&set).unwrap_or_else(|e| panic!("{e}"));
    let r = run(&with_trace(&sc, &[]), 0);
    assert!(rows_of(&r, "receive_buffer_full") > 0, "a one-frame receive buffer overflows");
    let ledger = r.ledger.dropped_by_cause();
    for cause in ["receive_buffer_full", "no_route"] {
        assert_eq!(rows_of(&r, cause), ledger.get(cause).copied().unwrap_or(0), "{cause}");
    }
    let arrived = r.trace.iter().filter(|x| x.unit == "frame" && x.event == "r" && x.component == "gw").count() as f64;
    let counted = r.probes.iter().find(|p| p.component == "gw" && p.probe == "rev_rx_frames").map_or(0.0, |p| p.value);
    assert_eq!(arrived, counted, "every frame off the ring arrives at the gateway as a row");
}

fn rows_of(r: &atmsim_scenario::RunResult, cause: &str) -> u64 {
    r.trace.iter().filter(|x| x.unit == "frame" && x.event == "d" && x.component == "gw" && x.cause == cause).count() as u64
}
