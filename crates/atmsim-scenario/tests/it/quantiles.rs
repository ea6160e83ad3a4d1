//! The sink's delay distribution (`delay_quantiles`): quantiles and peak-to-peak CDV
//! per VC, reset at the warm-up, off by default; the ABR destination keeps them too.

use super::*;

/// One source (`src`, as given) into an OC-3c FIFO and a sink with `sink` as given.
fn line(source: &str, sink: &str, duration: &str, warmup: &str) -> atmsim_scenario::RunResult {
    let text = format!(
        r#"connections = ["src -> q", "q -> sink"]
[scenario]
duration = "{duration}"
warmup = "{warmup}"
[components.src]
{source}
[components.q]
kind = "fifo"
phy = "OC-3c"
capacity = "unlimited"
[components.sink]
kind = "sink"
{sink}
"#
    );
    run(&Scenario::from_text(&text, "quantiles.toml").unwrap_or_else(|e| panic!("{e}")), 0)
}

const LEVELS: [&str; 6] = ["p50", "p90", "p99", "p99_9", "p99_99", "p99_999"];

fn has(r: &atmsim_scenario::RunResult, comp: &str, p: &str, stat: &str) -> bool {
    r.probes.iter().any(|x| x.component == comp && x.probe == p && x.statistic == stat)
}

#[test]
fn a_constant_delay_has_every_quantile_equal_to_it_and_no_variation() {
    // CBR below the line rate never queues: each cell's delay is its own cell time.
    let r = line("kind = \"cbr\"\nrate = \"30 Mb/s\"", "delay_quantiles = true", "20 ms", "0 s");
    let min = probe(&r, "sink/vc1", "sink_delay", "min");
    assert_eq!(min, probe(&r, "sink/vc1", "sink_delay", "max"));
    assert!((min - 424.0 / 149.76e6).abs() < 1e-12, "{min}");
    for stat in LEVELS {
        assert_eq!(probe(&r, "sink/vc1", "sink_delay", stat), min, "{stat}");
        assert_eq!(probe(&r, "sink/vc1", "sink_cdv", stat), 0.0, "{stat}");
    }
}

#[test]
fn quantiles_are_off_unless_asked_for() {
    let r = line("kind = \"cbr\"\nrate = \"30 Mb/s\"", "", "5 ms", "0 s");
    assert!(has(&r, "sink/vc1", "sink_delay", "mean"));
    assert!(!has(&r, "sink/vc1", "sink_delay", "p50"));
    assert!(!r.probes.iter().any(|x| x.probe == "sink_cdv"));
}

#[test]
fn quantiles_are_ordered_and_the_variation_is_the_quantile_less_the_minimum() {
    let r = line("kind = \"poisson\"\nrate = \"130 Mb/s\"", "delay_quantiles = true\ndelay_digits = 2", "50 ms", "5 ms");
    let (min, max) = (probe(&r, "sink/vc1", "sink_delay", "min"), probe(&r, "sink/vc1", "sink_delay", "max"));
    let mut last = min;
    for stat in LEVELS {
        let q = probe(&r, "sink/vc1", "sink_delay", stat);
        assert!(q >= last && q <= max, "{stat}: {q} after {last}, max {max}");
        assert!((probe(&r, "sink/vc1", "sink_cdv", stat) - (q - min)).abs() < 1e-15, "{stat}");
        last = q;
    }
    // Queueing at load 0.87: the median is above the minimum and the tail far above.
    assert!(probe(&r, "sink/vc1", "sink_delay", "p50") > min);
    assert!(probe(&r, "sink/vc1", "sink_delay", "p99") > 3.0 * probe(&r, "sink/vc1", "sink_delay", "p50"));
}

#[test]
fn the_warm_up_restarts_the_distribution() {
    // 160 Mb/s of CBR into 149.76: the queue, and each cell's delay, grow linearly, so
    // the cells delivered after the warm-up (the second half of the run) have delays
    // spread evenly between the run's largest and about half of it, and their median
    // lies midway. Kept from the start, the distribution's median would be the
    // post-warm-up minimum (half the run's cells have smaller delays).
    let r = line("kind = \"cbr\"\nrate = \"160 Mb/s\"", "delay_quantiles = true", "100 ms", "50 ms");
    let (min, max) = (probe(&r, "sink/vc1", "sink_delay", "min"), probe(&r, "sink/vc1", "sink_delay", "max"));
    let p50 = probe(&r, "sink/vc1", "sink_delay", "p50");
    assert!(min > 0.4 * max, "min {min}, max {max}");
    assert!((p50 - (min + max) / 2.0).abs() < 0.02 * (max - min), "p50 {p50}, min {min}, max {max}");
}

#[test]
fn bad_digits_are_refused_with_the_key() {
    let base = "connections = [\"src -> sink\"]\n[scenario]\nduration = \"1 ms\"\n[components.src]\nkind = \"cbr\"\nrate = \"1 Mb/s\"\n[components.sink]\nkind = \"sink\"\ndelay_quantiles = true\ndelay_digits = 6\n";
    let e = Scenario::from_text(base, "q.toml").map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("delay_digits") && e.contains("q.toml"), "{e}");
}

#[test]
fn the_abr_destination_keeps_the_distribution_too() {
    let text = std::fs::read_to_string(format!("{}/../../scenarios/examples/abr_two_sessions.toml", env!("CARGO_MANIFEST_DIR"))).expect("read");
    let sc = Scenario::from_text(&text, "abr_two_sessions.toml").expect("load");
    let sc = sc.with_overrides(&[("d1.delay_quantiles".to_string(), "true".to_string()), ("scenario.duration".to_string(), "150 ms".to_string()), ("scenario.warmup".to_string(), "50 ms".to_string())]).expect("override");
    let r = run(&sc, 0);
    let p99 = probe(&r, "d1/vc1", "sink_delay", "p99");
    assert!(p99 >= probe(&r, "d1/vc1", "sink_delay", "p50") && p99 <= probe(&r, "d1/vc1", "sink_delay", "max"));
    assert!(!has(&r, "d2/vc2", "sink_delay", "p99"), "only the destination that asked");
}

/// Host `a` sends UDP (`udp`, as given) straight to host `b`, which answers nothing;
/// both with `extra` as given.
fn udp_hosts(udp: &str, extra: &str) -> atmsim_scenario::RunResult {
    let text = format!(
        "connections = [\"a -> b\", \"b -> a\"]\n[scenario]\nduration = \"200 ms\"\n[components.a]\nkind = \"host\"\nvc = 5\napp = \"udp\"\nlength = \"1024 B\"\n{udp}\n{extra}\n[components.b]\nkind = \"host\"\nvc = 5\n{extra}\n"
    );
    run(&Scenario::from_text(&text, "udp_quantiles.toml").unwrap_or_else(|e| panic!("{e}")), 0)
}

#[test]
fn a_hosts_udp_delay_is_its_datagrams_cells_on_the_line() {
    // 1024 + 8 (UDP) + 20 (IP) + 8 (LLC/SNAP) + 8 (AAL5 trailer) = 1068 octets: 23 cells,
    // which leave back to back at the OC-3c cell rate; the datagram is whole when its last
    // cell has arrived. At 1 Mb/s no datagram waits for another.
    let r = udp_hosts("udp_rate = \"1 Mb/s\"", "delay_quantiles = true");
    let want = 23.0 * 424.0 / 149.76e6;
    let n = probe(&r, "b", "udp_rx", "count");
    assert!(n > 20.0 && probe(&r, "b", "udp_delay", "count") == n, "{n}");
    for stat in ["min", "max", "mean", "p50", "p99_999"] {
        let v = probe(&r, "b", "udp_delay", stat);
        assert!((v - want).abs() < 1e-12, "{stat}: {v} against {want}");
    }
    assert!(!has(&r, "a", "udp_delay", "count"), "a received no datagram");
}

#[test]
fn udp_delays_that_queue_spread_their_quantiles_in_order() {
    // Exponential gaps at 120 Mb/s of datagrams, near the most the line carries: datagrams
    // wait behind each other in a's interface.
    let r = udp_hosts("udp_rate = \"120 Mb/s\"\nudp_spacing = \"poisson\"", "delay_quantiles = true\ndelay_digits = 2");
    let (min, max) = (probe(&r, "b", "udp_delay", "min"), probe(&r, "b", "udp_delay", "max"));
    assert!((min - 23.0 * 424.0 / 149.76e6).abs() < 1e-12, "{min}");
    let mut last = min;
    for stat in LEVELS {
        let q = probe(&r, "b", "udp_delay", stat);
        assert!(q >= last && q <= max, "{stat}: {q} after {last}, max {max}");
        last = q;
    }
    assert!(probe(&r, "b", "udp_delay", "p90") > 2.0 * min);
    let plain = udp_hosts("udp_rate = \"120 Mb/s\"\nudp_spacing = \"poisson\"", "");
    assert!(has(&plain, "b", "udp_delay", "max") && !has(&plain, "b", "udp_delay", "p50"), "quantiles only when asked for");
    assert_eq!(probe(&plain, "b", "udp_delay", "mean"), probe(&r, "b", "udp_delay", "mean"), "keeping them changes no run");
}

#[test]
fn a_constant_ping_round_trip_has_every_quantile_equal_to_it() {
    let text = "connections = [\"a -> b\", \"b -> a\"]\n[scenario]\nduration = \"2 s\"\n[components.a]\nkind = \"host\"\nvc = 5\napp = \"ping\"\ncount = 50\ninterval = \"10 ms\"\ndelay_quantiles = true\n[components.b]\nkind = \"host\"\nvc = 5\n";
    let r = run(&Scenario::from_text(text, "ping_quantiles.toml").unwrap_or_else(|e| panic!("{e}")), 0);
    let rtt = probe(&r, "a", "ping_rtt", "min");
    assert_eq!(probe(&r, "a", "ping_rtt", "count"), 50.0);
    assert_eq!(rtt, probe(&r, "a", "ping_rtt", "max"));
    for stat in LEVELS {
        assert_eq!(probe(&r, "a", "ping_rtt", stat), rtt, "{stat}");
    }
}

#[test]
fn a_hosts_delay_digits_out_of_range_is_one_clear_line() {
    let text = "connections = [\"a -> b\", \"b -> a\"]\n[scenario]\nduration = \"1 s\"\n[components.a]\nkind = \"host\"\nvc = 5\napp = \"ping\"\ndelay_quantiles = true\ndelay_digits = 7\n[components.b]\nkind = \"host\"\nvc = 5\n";
    let e = Scenario::from_text(text, "bad.toml").err().map(|e| e.to_string()).unwrap_or_default();
    assert!(e.contains("components.a.delay_digits"), "{e}");
}

/// A TCP connection from `snd` to `rcv` over two OC-3c links of 1 ms, window `window`,
/// both hosts with `extra`.
fn tcp_pair(window: &str, extra: &str) -> atmsim_scenario::RunResult {
    let text = format!(
        "connections = [\"snd -> fwd\", \"fwd -> rcv\", \"rcv -> back\", \"back -> snd\"]\n[scenario]\nduration = \"1 s\"\nwarmup = \"100 ms\"\n\
         [components.snd]\nkind = \"host\"\ntcp = [\"send 100 ack 200 window {window}\"]\n{extra}\n\
         [components.rcv]\nkind = \"host\"\ntcp = [\"recv 100 ack 200 window {window}\"]\n{extra}\n\
         [components.fwd]\nkind = \"link\"\nphy = \"OC-3c\"\ndelay = \"1 ms\"\n[components.back]\nkind = \"link\"\nphy = \"OC-3c\"\ndelay = \"1 ms\"\n"
    );
    run(&Scenario::from_text(&text, "tcp_quantiles.toml").unwrap_or_else(|e| panic!("{e}")), 0)
}

#[test]
fn a_lone_tcp_segment_takes_its_cells_and_the_line() {
    // A window of one segment: each segment travels alone. A data segment (9140 + 40
    // + 8 + 8 octets: 192 cells) leaves the sender's interface back to back and is
    // serialised once more by the link: its last cell arrives 193 cell times and 1 ms
    // after the segment was handed to AAL5; an ACK (2 cells) 3 cell times and 1 ms after.
    let r = tcp_pair("9140 B", "delay_quantiles = true");
    let t = 424.0 / 149.76e6;
    for (comp, cells) in [("rcv/tcp/vc100", 193.0), ("snd/tcp/vc100", 3.0)] {
        let want = cells * t + 1e-3;
        assert!(probe(&r, comp, "tcp_segment_delay", "count") > 100.0, "{comp}");
        for stat in ["min", "max", "p50", "p99_999"] {
            let v = probe(&r, comp, "tcp_segment_delay", stat);
            assert!((v - want).abs() < 1e-11, "{comp} {stat}: {v} against {want}");
        }
    }
}

#[test]
fn tcp_segments_that_queue_in_the_senders_interface_spread_their_delay() {
    // A 64 KiB window puts about seven segments at once into the sender's interface:
    // the later ones wait for the earlier ones' cells.
    let r = tcp_pair("64 KiB", "delay_quantiles = true");
    let c = "rcv/tcp/vc100";
    let (min, max) = (probe(&r, c, "tcp_segment_delay", "min"), probe(&r, c, "tcp_segment_delay", "max"));
    assert!((min - (193.0 * 424.0 / 149.76e6 + 1e-3)).abs() < 1e-11, "{min}");
    assert!(max > min + 192.0 * 424.0 / 149.76e6, "{max}: a segment waited behind another");
    let mut last = min;
    for stat in LEVELS {
        let q = probe(&r, c, "tcp_segment_delay", stat);
        assert!(q >= last && q <= max, "{stat}: {q} after {last}, max {max}");
        last = q;
    }
    let plain = tcp_pair("64 KiB", "");
    assert!(has(&plain, c, "tcp_segment_delay", "mean") && !has(&plain, c, "tcp_segment_delay", "p50"));
}
