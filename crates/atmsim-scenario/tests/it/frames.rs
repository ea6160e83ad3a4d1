//! The sink's AAL5 frame books (`frames = true`): whole and discarded frames, goodput
//! and frame delay per VC label, against counts and delays worked out here.

use super::*;

/// A trace file of `n` packets of `octets`, `gap` seconds apart.
fn packets(name: &str, n: usize, octets: u64, gap: f64) -> String {
    let text: String = (0..n).map(|k| format!("{:.9} {octets}\n", k as f64 * gap)).collect();
    let dir = std::env::temp_dir().join(format!("atmsim-frames-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap_or_else(|e| panic!("{e}"));
    p.display().to_string()
}

const T: f64 = 424.0 / 149.76e6;

fn has(r: &atmsim_scenario::RunResult, comp: &str, p: &str, stat: &str) -> bool {
    r.probes.iter().any(|x| x.component == comp && x.probe == p && x.statistic == stat)
}

/// `src` (a trace of `file`) through `between` (a component named `x`, or nothing) into
/// a sink with `sink` as given.
fn line(file: &str, between: &str, sink: &str, duration: &str) -> atmsim_scenario::RunResult {
    let (conns, x) = if between.is_empty() { ("\"src -> q\", \"q -> sink\"", String::new()) } else { ("\"src -> x\", \"x -> q\", \"q -> sink\"", format!("[components.x]\n{between}\n")) };
    let text = format!(
        "connections = [{conns}]\n[scenario]\nduration = \"{duration}\"\nseed = 3\n[components.src]\nkind = \"trace\"\nfile = \"{file}\"\n{x}\
         [components.q]\nkind = \"fifo\"\nphy = \"OC-3c\"\ncapacity = \"unlimited\"\n[components.sink]\nkind = \"sink\"\n{sink}\n"
    );
    run(&Scenario::from_text(&text, "frames.toml").unwrap_or_else(|e| panic!("{e}")), 0)
}

#[test]
fn whole_frames_their_goodput_and_their_delay() {
    // 1000-octet packets (+16 octets: 22 cells) every 1 ms for 100 ms. Each frame's cells
    // leave the source back to back at the OC-3c rate and the FIFO sends each one cell
    // time after its birth: the last cell arrives 22 cell times after the first was born.
    let f = packets("k1000.TL", 100, 1000, 1e-3);
    let r = line(&f, "", "frames = true\ndelay_quantiles = true", "100 ms");
    let c = "sink/vc1";
    assert_eq!(probe(&r, c, "aal5_rx_pdus", "count"), 100.0);
    assert_eq!(probe(&r, c, "aal5_drop_pdus", "count"), 0.0);
    assert_eq!(probe(&r, c, "sink_goodput", "ratio"), 1.0);
    assert!((probe(&r, c, "sink_goodput", "value") - probe(&r, c, "sink_throughput", "value")).abs() < 1e-9);
    assert!((probe(&r, c, "sink_goodput", "value") - 2200.0 * 424.0 / 0.1 / 1e6).abs() < 1e-9);
    for stat in ["min", "max", "p50", "p99_999"] {
        let v = probe(&r, c, "sink_frame_delay", stat);
        assert!((v - 22.0 * T).abs() < 1e-12, "{stat}: {v}");
    }
    let plain = line(&f, "", "", "100 ms");
    assert!(!has(&plain, c, "aal5_rx_pdus", "count") && !has(&plain, c, "sink_goodput", "value"), "frames only when asked for");
    assert_eq!(plain.fingerprint, r.fingerprint, "keeping the books changes no run");
}

#[test]
fn independent_cell_loss_leaves_whole_frames_at_one_minus_p_to_the_n_plus_one() {
    // 100,000 frames of n = 22 cells through 1% independent cell loss. A frame that lost
    // cells but kept its last fails its Length. One that lost its last cell runs into the
    // next (the sink's reassembly has no timeout), which then fails too: a frame is whole
    // when its own n cells and its predecessor's last cell all arrive, with probability
    // 0.99^23 = 0.7936 (0.99^22 = 0.8016 would ignore the merging: 6 standard deviations
    // away). Binomial sd over 100,000 frames: 0.0013; tolerance four of them.
    let f = packets("k100000.TL", 100_000, 1000, 1e-4);
    let r = line(&f, "kind = \"loss\"\np = 0.01", "frames = true", "10.001 s");
    let c = "sink/vc1";
    let whole = probe(&r, c, "aal5_rx_pdus", "count");
    let dropped = probe(&r, c, "aal5_drop_pdus", "count");
    let p_whole = 0.99f64.powi(23);
    let sd = (p_whole * (1.0 - p_whole) / 100_000.0).sqrt();
    assert!((whole / 100_000.0 - p_whole).abs() < 4.0 * sd, "{} against {p_whole}", whole / 100_000.0);
    assert_eq!(dropped, probe(&r, c, "aal5_drop_pdus", "length") + probe(&r, c, "aal5_drop_pdus", "crc"));
    // a merged pair closes once: whole + dropped frames fall short of those sent by the
    // frames whose last cell was lost (about 1%)
    let merged = 100_000.0 - whole - dropped;
    assert!((merged / 100_000.0 - 0.01).abs() < 4.0 * (0.01 * 0.99 / 100_000.0f64).sqrt(), "{merged}");
    let rx = probe(&r, c, "sink_rx_cells", "count");
    let ratio = probe(&r, c, "sink_goodput", "ratio");
    assert!((ratio - 22.0 * whole / rx).abs() < 1e-3, "{ratio} against {}", 22.0 * whole / rx);
    assert!((probe(&r, c, "sink_goodput", "value") - 22.0 * whole * 424.0 / 10.001 / 1e6).abs() < 1e-9);
}

#[test]
fn early_packet_discard_raises_the_goodput_to_every_cell_received() {
    // Two trace sources of 22-cell frames every 100 µs (93 Mb/s of cells each, 186 in
    // all) into one 256-cell OC-3c port. Tail drop cuts frames: the sink throws their
    // cells away. Early packet discard at 64 cells refuses frames whole (256 − 64 ≥ 22):
    // every cell that reaches the sink is in a whole frame.
    let f = packets("k2000.TL", 2_000, 1000, 1e-4);
    let text = |policy: &str| format!(
        "connections = [\"a -> q\", \"b -> q\", \"q -> sink\"]\n[scenario]\nduration = \"200 ms\"\nseed = 5\n\
         [components.a]\nkind = \"trace\"\nfile = \"{f}\"\nvc = 1\n[components.b]\nkind = \"trace\"\nfile = \"{f}\"\nvc = 2\ntime_scale = 1.03\n\
         [components.q]\nkind = \"fifo\"\nphy = \"OC-3c\"\ncapacity = \"256 cells\"\n{policy}\n[components.sink]\nkind = \"sink\"\nframes = true\n"
    );
    let tail = run(&Scenario::from_text(&text(""), "epd.toml").unwrap_or_else(|e| panic!("{e}")), 0);
    let epd = run(&Scenario::from_text(&text("epd_threshold = \"64 cells\""), "epd.toml").unwrap_or_else(|e| panic!("{e}")), 0);
    for vc in ["sink/vc1", "sink/vc2"] {
        assert!(probe(&tail, vc, "aal5_drop_pdus", "count") > 10.0, "{vc}");
        assert!(probe(&tail, vc, "sink_goodput", "ratio") < 0.95, "{vc}");
        assert_eq!(probe(&epd, vc, "aal5_drop_pdus", "count"), 0.0, "{vc}");
        assert_eq!(probe(&epd, vc, "sink_goodput", "ratio"), 1.0, "{vc}");
    }
    let good = |r: &atmsim_scenario::RunResult| probe(r, "sink/vc1", "sink_goodput", "value") + probe(r, "sink/vc2", "sink_goodput", "value");
    assert!(good(&epd) > good(&tail), "{} against {}", good(&epd), good(&tail));
}

#[test]
fn the_goodput_series_counts_whole_frames_per_interval() {
    // One 22-cell frame every 1 ms, sampled every 10 ms: 10 frames, 220 cells, per
    // interval: 220 × 424 bits / 10 ms = 9.328 Mb/s, as the throughput series.
    let f = packets("k1000s.TL", 100, 1000, 1e-3);
    let text = format!(
        "connections = [\"src -> q\", \"q -> sink\"]\n[scenario]\nduration = \"100 ms\"\n[components.src]\nkind = \"trace\"\nfile = \"{f}\"\n\
         [components.q]\nkind = \"fifo\"\nphy = \"OC-3c\"\n[components.sink]\nkind = \"sink\"\nframes = true\n\
         [probes]\nseries = [\"sink.sink_goodput\", \"sink/vc1.sink_goodput\", \"sink.sink_throughput\"]\ninterval = \"10 ms\"\n"
    );
    let r = run(&Scenario::from_text(&text, "s.toml").unwrap_or_else(|e| panic!("{e}")), 0);
    let get = |comp: &str, name: &str| r.series.iter().find(|s| s.component == comp && s.probe == name).map(|s| s.values.clone()).unwrap_or_default();
    let (all, one, thr) = (get("sink", "sink_goodput"), get("sink/vc1", "sink_goodput"), get("sink", "sink_throughput"));
    assert_eq!(all.len(), 10);
    assert_eq!(all, one);
    for (g, t) in all.iter().zip(&thr) {
        assert!((g - 9.328).abs() < 1e-9 && (g - t).abs() < 1e-9, "{g} {t}");
    }
    // without the frame books the series is refused with the parameter that gives it
    let e = Scenario::from_text(&text.replace("frames = true\n", ""), "s.toml").err().map(|e| e.to_string()).unwrap_or_default();
    assert!(e.contains("sink.sink_goodput") && e.contains("does not keep it as configured (with frames:"), "{e}");
    let one = text.replace("frames = true\n", "").replace("\"sink.sink_goodput\", ", "");
    let e = Scenario::from_text(&one, "s.toml").err().map(|e| e.to_string()).unwrap_or_default();
    assert!(e.contains("sink/vc1.sink_goodput") && e.contains("does not keep it as configured"), "{e}");
    // a VC that is not there is still no such series
    let e = Scenario::from_text(&text.replace("sink/vc1.sink_goodput", "sink/vcx.sink_goodput"), "s.toml").err().map(|e| e.to_string()).unwrap_or_default();
    assert!(e.contains("no such series"), "{e}");
}
