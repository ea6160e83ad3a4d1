//! `[probes]`: time series sampled during a run, and the `keep` filter on probe rows.

use super::*;

const CBR: &str = r#"connections = ["src -> q", "q -> sink"]
[scenario]
duration = "10 ms"
warmup = "3 ms"
[components.src]
kind = "cbr"
rate = "37.44 Mb/s"
[components.q]
kind = "fifo"
phy = "OC-3c"
capacity = "16 cells"
[components.sink]
kind = "sink"
"#;

fn with_probes(base: &str, probes: &str) -> Scenario {
    Scenario::from_text(&format!("{base}[probes]\n{probes}\n"), "s.toml").unwrap_or_else(|e| panic!("{e}"))
}

fn series<'a>(r: &'a atmsim_scenario::RunResult, comp: &str, name: &str) -> &'a atmsim_scenario::SeriesRow {
    r.series.iter().find(|s| s.component == comp && s.probe == name).unwrap_or_else(|| panic!("no series {comp}.{name}"))
}

/// CBR at a quarter of OC-3c: 88,301.9 cells/s, so each 1 ms interval holds 88 or 89
/// cells at every point of the path, and the queue holds 0 or 1 cell.
#[test]
fn cbr_rates_are_exact_per_interval_and_cross_the_warm_up() {
    let sc = with_probes(CBR, r#"series = ["src.src_tx_cells", "q.q_tx_cells", "sink.sink_throughput", "q.q_len"]
interval = "1 ms""#);
    let r = run(&sc, 0);
    let cells_per_s = 37.44e6 / 424.0;
    for (comp, name, per_cell) in [("src", "src_tx_cells", 1.0), ("q", "q_tx_cells", 1.0), ("sink", "sink_throughput", 424e-6)] {
        let s = series(&r, comp, name);
        assert_eq!(s.values.len(), 10, "{comp}.{name}");
        assert_eq!(s.interval_s, 1e-3);
        assert_eq!(s.kind, "rate");
        // Interval 4 spans the warm-up reset at 3 ms: still a full interval's worth.
        for (k, v) in s.values.iter().enumerate() {
            let cells = v / per_cell * 1e-3;
            assert!((cells - cells_per_s * 1e-3).abs() <= 1.0 + 1e-9, "{comp}.{name}[{k}] = {cells} cells");
        }
    }
    let q = series(&r, "q", "q_len");
    assert_eq!(q.kind, "level");
    assert!(q.values.iter().all(|&v| v == 0.0 || v == 1.0), "{:?}", q.values);
}

#[test]
fn sampling_changes_neither_the_trace_nor_the_probes() {
    let plain = Scenario::from_text(CBR, "s.toml").unwrap();
    let sampled = with_probes(CBR, r#"series = ["q.q_len", "sink.sink_rx_cells"]
interval = "0.1 ms""#);
    let (a, b) = (run(&plain, 0), run(&sampled, 0));
    assert_eq!((a.fingerprint, a.events), (b.fingerprint, b.events));
    assert_eq!(a.probes, b.probes);
    assert_eq!(series(&b, "sink", "sink_rx_cells").values.len(), 100);
}

#[test]
fn the_interval_defaults_to_a_thousandth_of_the_run() {
    let r = run(&with_probes(CBR, r#"series = ["q.q_len"]"#), 0);
    assert_eq!(r.series[0].values.len(), 1000);
    assert!((r.series[0].interval_s - 10e-6).abs() < 1e-15);
}

#[test]
fn keep_filters_probe_rows_by_component_and_probe() {
    let r = run(&with_probes(CBR, r#"keep = ["q.q_len", "sink/*"]"#), 0);
    assert!(!r.probes.is_empty());
    for p in &r.probes {
        assert!((p.component == "q" && p.probe == "q_len") || p.component.starts_with("sink/"), "{p:?}");
    }
    assert!(r.probes.iter().any(|p| p.probe == "sink_delay"));
}

#[test]
fn series_errors_name_the_line_and_what_is_valid() {
    let bad = |probes: &str| err(&format!("{CBR}[probes]\n{probes}\n"));
    let e = bad("series = [\"q.q_lenn\"]");
    assert!(e.starts_with("s.toml:") || e.starts_with("bad.toml:"), "{e}");
    assert!(e.contains(":15:") && e.contains("probes.series") && e.contains("did you mean 'q_len'") && e.contains("q_tx_rate"), "{e}");
    let e = bad("series = [\"qq.q_len\"]");
    assert!(e.contains("no component 'qq'") && e.contains("did you mean 'q'"), "{e}");
    let e = bad("series = [\"q\"]");
    assert!(e.contains("COMPONENT[/SUB].NAME"), "{e}");
    let e = bad("series = [\"q/p1.q_len\"]");
    assert!(e.contains("no such series"), "{e}");
    let e = bad("series = [\"sink/vc7.sink_rx_cells\", \"src.q_len\"]");
    assert!(e.contains("'src.q_len'") && e.contains("src_tx_rate"), "{e}");
    let e = bad("intervall = \"1 ms\"");
    assert!(e.contains("probes.intervall") && e.contains("did you mean 'interval'"), "{e}");
    let e = bad("series = [\"q.q_len\"]\ninterval = \"0 s\"");
    assert!(e.contains("positive"), "{e}");
    let e = bad("series = [\"q.q_len\"]\ninterval = \"1 ps\"");
    assert!(e.contains("sample less often"), "{e}");
    let e = bad("keep = [\"\"]");
    assert!(e.contains("empty pattern"), "{e}");
    let e = bad("series = \"q.q_len\"\nkeep = 3");
    assert!(e.contains("probes.keep") && e.contains("list of strings"), "{e}");
}

#[test]
fn overrides_reach_the_probes_table() {
    let sc = with_probes(CBR, r#"series = ["q.q_len"]"#);
    let sc = sc.with_overrides(&[("probes.interval".into(), "2 ms".into())]).unwrap();
    assert_eq!(run(&sc, 0).series[0].values.len(), 5);
    let round = Scenario::from_text(&sc.to_toml(), "again.toml").unwrap();
    assert_eq!(round.series.len(), 1);
    assert_eq!(round.interval, sc.interval);
}

/// A switch's output port and a TCP connection's window: slow start doubles the
/// window every round trip, so early samples of a loss-free transfer only grow, and
/// the throughput series averages to the run's throughput probe.
#[test]
fn switch_ports_and_tcp_connections_have_series() {
    let text = r#"connections = ["snd -> sw.p1", "sw.p2 -> rcv", "rcv -> sw.p3", "sw.p4 -> snd"]
[scenario]
duration = "2 s"
[components.snd]
kind = "host"
tcp = ["send 100 ack 200 window 256 KiB"]
[components.rcv]
kind = "host"
tcp = ["recv 100 ack 200 window 256 KiB"]
[components.sw]
kind = "switch"
vcs = ["p1:100 -> p2:100", "p3:200 -> p4:200"]
delay = "1 ms"
[probes]
series = ["sw/p2.q_len", "snd/tcp/vc100.tcp_cwnd", "snd/tcp/vc100.tcp_throughput", "rcv/tcp/vc100.tcp_throughput", "snd/nic.q_tx_rate", "snd.cpu_util"]
interval = "10 ms"
"#;
    let sc = Scenario::from_text(text, "tcp.toml").unwrap_or_else(|e| panic!("{e}"));
    let r = run(&sc, 0);
    let cwnd = &series(&r, "snd/tcp/vc100", "tcp_cwnd").values;
    assert_eq!(cwnd.len(), 200);
    assert!(cwnd[0] > 0.0 && cwnd.iter().all(|v| v.is_finite()));
    assert!(cwnd.windows(2).take(5).all(|w| w[1] >= w[0]), "{:?}", &cwnd[..6]);
    assert!(cwnd.iter().cloned().fold(0.0, f64::max) > cwnd[0]);
    for who in ["snd", "rcv"] {
        let s = &series(&r, &format!("{who}/tcp/vc100"), "tcp_throughput").values;
        let mean = s.iter().sum::<f64>() / s.len() as f64;
        let whole = probe(&r, &format!("{who}/tcp/vc100"), "tcp_throughput", "value");
        assert!((mean - whole).abs() / whole < 1e-9, "{who}: series mean {mean} vs probe {whole}");
    }
    assert!(series(&r, "sw/p2", "q_len").values.iter().all(|&v| v >= 0.0));
    let cpu = &series(&r, "snd", "cpu_util").values;
    assert!(cpu.iter().all(|&u| (0.0..=1.0 + 1e-9).contains(&u)), "{cpu:?}");
    let e = err(&text.replace("\"sw/p2.q_len\"", "\"sw/p99.q_len\""));
    assert!(e.contains("no such series") && e.contains("sw/p<N>"), "{e}");
    let e = err(&text.replace("\"snd/tcp/vc100.tcp_cwnd\"", "\"snd/tcp/vc101.tcp_cwnd\""));
    assert!(e.contains("no such series") && e.contains("snd/tcp/vc<N>: tcp_cwnd"), "{e}");
}
