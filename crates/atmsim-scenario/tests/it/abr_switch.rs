//! ABR switch algorithms on a `switch`'s output ports: three greedy sessions through
//! two switches, three bottlenecks (scenarios/examples/abr_two_switches.toml), with
//! ERICA (per-port FIFO and per-VC queues), EPRCA and EFCI.

use super::*;

const FILE: &str = "scenarios/examples/abr_two_switches.toml";

fn text() -> String {
    std::fs::read_to_string(format!("{}/../../{FILE}", env!("CARGO_MANIFEST_DIR"))).expect("read")
}

fn scenario(over: &[(&str, &str)]) -> Scenario {
    let over: Vec<(String, String)> = over.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    Scenario::from_text(&text(), FILE).expect("load").with_overrides(&over).expect("override")
}

/// Cells/s of a line of `bps` (424 bits per cell).
fn cells(bps: f64) -> f64 {
    bps / 424.0
}
/// Cells/s → Mb/s at 424 bits per cell.
const MB: f64 = 424e-6;

fn within(x: f64, want: f64, rel: f64) -> bool {
    (x - want).abs() <= rel * want
}

/// Max-min fair rates by water-filling: `links` are (capacity, sessions crossing it).
/// Repeatedly the link with the smallest equal share of what its unfixed sessions may
/// still use fixes them at that share.
fn water_fill(n: usize, links: &[(f64, &[usize])]) -> Vec<f64> {
    let mut rate = vec![f64::NAN; n];
    loop {
        let mut best: Option<(f64, usize)> = None;
        for (l, (cap, on)) in links.iter().enumerate() {
            let free: Vec<usize> = on.iter().copied().filter(|&s| rate[s].is_nan()).collect();
            if free.is_empty() {
                continue;
            }
            let used: f64 = on.iter().filter(|&&s| !rate[s].is_nan()).map(|&s| rate[s]).sum();
            let share = (cap - used) / free.len() as f64;
            if best.map_or(true, |b| share < b.0) {
                best = Some((share, l));
            }
        }
        let Some((share, l)) = best else { return rate };
        for &s in links[l].1 {
            if rate[s].is_nan() {
                rate[s] = share;
            }
        }
    }
}

/// The max-min shares of the example's three sessions with ERICA's target
/// utilisation `u`: links A = sw1.p3 (100 Mb/s; s1, s2), B = sw2.p2 (40 Mb/s; s1),
/// C = sw2.p3 (OC-3c: 149.76 Mb/s of cells; s2, s3). Cells/s.
fn max_min(u: f64) -> Vec<f64> {
    water_fill(3, &[(u * cells(100e6), &[0, 1]), (u * cells(40e6), &[0]), (u * cells(149.76e6), &[1, 2])])
}

#[test]
fn water_filling_of_the_example() {
    // By hand: B = 0.9·40e6/424 = 84,905.7 fixes s1; A leaves 0.9·100e6/424 − 84,905.7
    // = 127,358.5 to s2 (below C's equal share 158,943.4); C leaves 317,886.8 −
    // 127,358.5 = 190,528.3 to s3.
    let r = max_min(0.9);
    for (got, want) in r.iter().zip([84_905.7, 127_358.5, 190_528.3]) {
        assert!((got - want).abs() < 0.1, "{r:?}");
    }
}

/// Mean ACRs since the warm-up and delivered data within `rel` of `want` (cells/s;
/// data: 31 of every Nrm = 32 cells); with `settled` the final ACRs too.
fn assert_max_min(r: &atmsim_scenario::RunResult, want: &[f64], rel: f64, settled: bool, what: &str) {
    for (k, s) in ["s1", "s2", "s3"].iter().enumerate() {
        let share = want[k] * MB;
        let mean = probe(r, s, "abr_acr", "mean");
        let last = probe(r, s, "abr_acr", "final");
        assert!(within(mean, share, rel), "{what}: {s} mean ACR {mean} Mb/s, max-min share {share}");
        assert!(!settled || within(last, share, rel), "{what}: {s} final ACR {last} Mb/s, max-min share {share}");
    }
    for (k, d) in ["d1/vc1", "d23/vc2", "d23/vc3"].iter().enumerate() {
        let data = probe(r, d, "sink_throughput", "value");
        assert!(within(data, want[k] * MB * 31.0 / 32.0, rel), "{what}: {d} data {data} Mb/s");
    }
    assert!(r.ledger.violations().is_empty(), "{what}: {:?}", r.ledger.violations());
}

/// ERICA on the switches' output ports gives each session its max-min share within
/// 5%, with per-port FIFO queues and with per-VC queues.
#[test]
fn erica_on_switch_ports_converges_to_max_min_shares() {
    let want = max_min(0.9);
    for q in ["fifo", "per-vc"] {
        let qq = format!("\"{q}\"");
        let r = run(&scenario(&[("sw1.queueing", &qq), ("sw2.queueing", &qq), ("sw1.vc_capacity", "\"unlimited\""), ("sw2.vc_capacity", "\"unlimited\"")]), 0);
        assert_max_min(&r, &want, 0.05, true, q);
        // Each ERICA port wrote ER into backward RM cells.
        for port in ["sw1/p3", "sw2/p2", "sw2/p3"] {
            assert!(probe(&r, port, "abr_er_cells", "count") > 0.0, "{q}: {port}");
        }
    }
}

/// EPRCA (94-0735R1 as dastangoo96 uses it) on the same ports: on average the
/// sessions get their max-min shares within 10%. EPRCA's ACRs oscillate around them
/// (the queue swings about qt), so the final ACRs are not checked.
#[test]
fn eprca_on_switch_ports_gets_fair_shares_within_10_percent() {
    // EPRCA has no target utilisation: its queue thresholds hold the line full.
    let want = max_min(1.0);
    let r = run(&scenario(&[("sw1.abr", "[\"p3 = eprca\"]"), ("sw2.abr", "[\"p2 = eprca\", \"p3 = eprca\"]")]), 0);
    assert_max_min(&r, &want, 0.10, false, "eprca");
    for port in ["sw1/p3", "sw2/p2", "sw2/p3"] {
        assert!(probe(&r, port, "abr_er_cells", "count") > 0.0, "{port}");
    }
}

/// EFCI marking above 500 cells (dastangoo96's threshold) on the three ports keeps
/// their queues bounded: after the warm-up each stays below twice the threshold and
/// averages below it.
#[test]
fn efci_on_switch_ports_keeps_queues_bounded() {
    let r = run(
        &scenario(&[
            ("sw1.abr", "[\"p3 = efci\"]"),
            ("sw2.abr", "[\"p2 = efci\", \"p3 = efci\"]"),
            ("sw1.efci_threshold", "\"500 cells\""),
            ("sw2.efci_threshold", "\"500 cells\""),
        ]),
        0,
    );
    for port in ["sw1/p3", "sw2/p2", "sw2/p3"] {
        let (max, mean) = (probe(&r, port, "q_len", "max"), probe(&r, port, "q_len", "mean"));
        assert!(max <= 1000.0 && mean < 500.0, "{port}: queue max {max}, mean {mean} cells");
    }
    assert!(probe(&r, "d1/vc1", "abr_ci_cells", "count") > 0.0, "destinations turned EFCI into CI");
    assert!(r.ledger.violations().is_empty(), "{:?}", r.ledger.violations());
}

/// The line of the first occurrence of `needle` in `text` (1-based).
fn line_of(text: &str, needle: &str) -> usize {
    let at = text.find(needle).unwrap_or_else(|| panic!("no {needle}"));
    text[..at].matches('\n').count() + 1
}

#[test]
fn bad_abr_port_settings_name_the_file_line_and_key() {
    let base = text();
    let anchor = "abr = [\"p3 = erica\"]";
    for (bad_value, want) in [
        ("abr = [\"p3 = wfq\"]", "not an ABR algorithm (efci, eprca, erica or erica+)"),
        ("abr = [\"p9 = erica\"]", "p9 does not exist"),
        ("abr = [\"p3 erica\"]", "is not \"pN = efci, eprca, erica or erica+\""),
        ("abr = [\"p3 = efci\"]", "needs efci_threshold"),
    ] {
        let bad = base.replacen(anchor, bad_value, 1);
        let e = err(&bad);
        assert!(e.starts_with(&format!("bad.toml:{}: components.sw1.abr: ", line_of(&bad, bad_value))) && e.contains(want) && !e.contains('\n'), "{bad_value}: {e}");
    }
    // ERICA on sw1.p1, which sends VC 1 to s1 as label 7: no backward RM cell of a VC
    // leaving p1 can come in on p1 with its label (p1's input knows only label 1).
    let bad = base.replacen(anchor, "abr = [\"p1 = erica\"]", 1).replacen("\"p3:1 -> p1:1\"", "\"p3:1 -> p1:7\"", 1);
    let e = err(&bad);
    assert!(e.starts_with(&format!("bad.toml:{}: components.sw1.abr: ", line_of(&bad, "abr = [\"p1"))) && e.contains("no VC leaving p1 comes back in on p1"), "{e}");
}


/// The start/stop runs: the example for 1.2 s in three phases — s1 and s2 alone until
/// s3 starts at 0.4 s, all three until s1 stops at 0.8 s, then s2 and s3 — with
/// `over`. Each session's ACR (series every 5 ms) averaged over the last 100 ms of each
/// phase must be within `rel` of its max-min share at utilisation `u`. Returns the run
/// and the shares without s1 (cells/s).
fn three_phases(over: &[(&str, &str)], u: f64, rel: f64) -> (atmsim_scenario::RunResult, Vec<f64>) {
    let mut all = vec![("scenario.duration", "\"1.2 s\""), ("scenario.warmup", "\"0 s\""), ("s3.start", "\"0.4 s\""), ("s1.stop", "\"0.8 s\"")];
    all.extend_from_slice(over);
    let r = run(&scenario(&all), 0);
    let acr = |s: &str| &r.series.iter().find(|x| x.component == s && x.probe == "acr").unwrap_or_else(|| panic!("no series {s}.acr")).values;
    let dt = r.series[0].interval_s;
    // Mean of series `v` over [t1 − 100 ms, t1).
    let tail = |v: &Vec<f64>, t1: f64| {
        let (a, b) = (((t1 - 0.1) / dt).round() as usize, (t1 / dt).round() as usize);
        let w = &v[a..b.min(v.len())];
        w.iter().sum::<f64>() / w.len() as f64
    };
    let both = max_min(u);
    let without_s1 = water_fill(3, &[(u * cells(100e6), &[1]), (u * cells(149.76e6), &[1, 2])]);
    let phases: [(f64, &[(&str, f64)]); 3] = [
        (0.4, &[("s1", both[0]), ("s2", both[1])]),
        (0.8, &[("s1", both[0]), ("s2", both[1]), ("s3", both[2])]),
        (1.2, &[("s2", without_s1[1]), ("s3", without_s1[2])]),
    ];
    for (t1, want) in phases {
        for &(s, share) in want {
            let got = tail(acr(s), t1);
            assert!(within(got, share * MB, rel), "{s}: ACR {got} Mb/s over the 100 ms before {t1} s, share {} Mb/s", share * MB);
        }
    }
    assert!(r.ledger.violations().is_empty(), "{:?}", r.ledger.violations());
    (r, without_s1)
}

/// Sessions that start and stop mid-run (each source's `start` and `stop`): with ERICA
/// the others re-converge to the new max-min shares ([`three_phases`]). Shares by
/// water-filling at target 0.9: s1 84,905.7 and s2 127,358.5 cells/s in the first two
/// phases (s2 is held by A, where s1 takes B's share), s3 190,528.3 in the second;
/// without s1, A no longer binds and s2 and s3 split C: 158,943.4 each. Each phase
/// within 5%, and the final ACRs of s2 and s3 too. δ = 0.04 as in `atmsim validate`
/// (docs/validation.md g): ERICA's fixed points span [1, 1 + δ] × share, so with the
/// example's δ = 0.1 a 5% bound is not ERICA's promise (measured with 0.1: s3 at
/// 1.063 × its share after its late start).
#[test]
fn erica_reconverges_when_sessions_start_and_stop_mid_run() {
    let (r, without_s1) = three_phases(&[("sw1.delta", "0.04"), ("sw2.delta", "0.04")], 0.9, 0.05);
    assert!((without_s1[1] - 158_943.4).abs() < 0.1 && (without_s1[2] - 158_943.4).abs() < 0.1, "{without_s1:?}");
    for (s, k) in [("s2", 1), ("s3", 2)] {
        let last = probe(&r, s, "abr_acr", "final");
        assert!(within(last, without_s1[k] * MB, 0.05), "{s}: final ACR {last} Mb/s");
    }
}

/// The same three phases with EPRCA on the three ports (issue 15 item 7: transients
/// converge again, EPRCA-ER within 10%). EPRCA has no target utilisation, so the
/// shares are water-filling of the full line rates: s1 94,339.6 and s2 141,509.4
/// cells/s while s1 sends, s3 211,698.1 beside them; without s1, s2 and s3 split C,
/// 176,603.8 each. EPRCA's ACRs swing around their shares as the queues cross QT, so
/// only each phase's last 100 ms average is checked, not the final ACRs (as in
/// `eprca_on_switch_ports_gets_fair_shares_within_10_percent`).
#[test]
fn eprca_reconverges_when_sessions_start_and_stop_mid_run() {
    let both = max_min(1.0);
    assert!((both[0] - 94_339.6).abs() < 0.1 && (both[1] - 141_509.4).abs() < 0.1 && (both[2] - 211_698.1).abs() < 0.1, "{both:?}");
    let (_, without_s1) = three_phases(&[("sw1.abr", "[\"p3 = eprca\"]"), ("sw2.abr", "[\"p2 = eprca\", \"p3 = eprca\"]")], 1.0, 0.10);
    assert!((without_s1[1] - 176_603.8).abs() < 0.1 && (without_s1[2] - 176_603.8).abs() < 0.1, "{without_s1:?}");
}

/// ERICA's capacity is net of CBR/VBR traffic (96-1172: target utilisation × (link
/// bandwidth − VBR and CBR usage)). A 40 Mb/s CBR source (94,339.6 cells/s, VC 9)
/// joins sw2.p3 (C) through a fifth port: C's ABR capacity falls from 0.9 · 353,207.5
/// to 0.9 · (353,207.5 − 94,339.6) = 232,981.1 cells/s, and water-filling now fixes s2
/// and s3 on C at 116,490.6 each (49.39 Mb/s), s1 still on B. Counted at the full line
/// rate, ERICA would offer s2 and s3 127,358.5 + 190,528.3 cells/s, which with the CBR
/// cells is 1.16 × the line: the queue would grow without bound. Each session's mean
/// and final ACR within 5% (δ = 0.04, as in `atmsim validate`), the CBR source loses
/// nothing and C's queue stays below 1000 cells.
#[test]
fn erica_capacity_is_net_of_cbr_traffic() {
    let text = text()
        .replacen("ports = 4\n", "ports = 5\n", 1)
        .replacen("\"p4:3 -> p3:3\",", "\"p4:3 -> p3:3\", \"p5:9 -> p3:9\",", 1)
        .replacen("\"s3 -> sw2.p4\",", "\"s3 -> sw2.p4\", \"cbr -> sw2.p5\",", 1)
        + "\n[components.cbr]\nkind = \"cbr\"\nrate = \"40 Mb/s\"\nvc = 9\n";
    let over: Vec<(String, String)> = [("sw1.delta", "0.04"), ("sw2.delta", "0.04")].iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let sc = Scenario::from_text(&text, FILE).expect("load").with_overrides(&over).expect("override");
    let r = run(&sc, 0);
    let cbr = cells(40e6);
    let want = water_fill(3, &[(0.9 * cells(100e6), &[0, 1]), (0.9 * cells(40e6), &[0]), (0.9 * (cells(149.76e6) - cbr), &[1, 2])]);
    assert!((want[1] - 116_490.6).abs() < 0.1 && (want[2] - 116_490.6).abs() < 0.1 && (want[0] - 84_905.7).abs() < 0.1, "{want:?}");
    for (k, s) in ["s1", "s2", "s3"].iter().enumerate() {
        let share = want[k] * MB;
        let (mean, last) = (probe(&r, s, "abr_acr", "mean"), probe(&r, s, "abr_acr", "final"));
        assert!(within(mean, share, 0.05) && within(last, share, 0.05), "{s}: mean ACR {mean}, final {last} Mb/s, share {share}");
    }
    let q = probe(&r, "sw2/p3", "q_len", "max");
    assert!(q < 1000.0, "sw2.p3 queue max {q} cells");
    assert!(r.ledger.violations().is_empty(), "{:?}", r.ledger.violations());
    let books = r.flows.iter().find(|f| f.source == "cbr").expect("cbr flow");
    assert_eq!(books.dropped, 0, "{books:?}");
}
