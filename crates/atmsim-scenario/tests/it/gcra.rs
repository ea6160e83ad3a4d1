//! The `gcra` kind in whole runs: the two algorithms give the same trace; the three
//! actions drop, tag or count exactly the non-conforming cells.

use super::*;

fn policed(algorithm: &str, action: &str) -> atmsim_scenario::RunResult {
    let text = format!(
        r#"connections = ["src -> upc", "upc -> sink"]
[scenario]
duration = "50 ms"
[components.src]
kind = "poisson"
rate = "120000 cells/s"
[components.upc]
kind = "gcra"
pcr = "100000 cells/s"
cdvt = "25 us"
algorithm = "{algorithm}"
action = "{action}"
[components.sink]
kind = "sink"
"#
    );
    run(&Scenario::from_text(&text, "gcra.toml").unwrap_or_else(|e| panic!("{e}")), 0)
}

#[test]
fn both_algorithms_give_the_same_trace() {
    for action in ["drop", "tag", "count"] {
        let (vs, lb) = (policed("virtual-scheduling", action), policed("leaky-bucket", action));
        assert_eq!(vs.fingerprint, lb.fingerprint, "{action}");
        assert_eq!(vs.probes, lb.probes, "{action}");
    }
}

#[test]
fn actions_drop_tag_or_count_the_nonconforming_cells() {
    let drop = policed("virtual-scheduling", "drop");
    let bad = probe(&drop, "upc", "upc_nonconforming_cells", "count");
    let rx = probe(&drop, "upc", "upc_rx_cells", "count");
    // 1.2 × the PCR offered: at least the excess 1/6 is non-conforming.
    assert!(bad / rx > 1.0 / 6.0 && bad / rx < 0.5, "{bad} of {rx}");
    assert_eq!(drop.ledger.dropped_of(0) as f64, bad);
    assert_eq!(probe(&drop, "sink/vc1", "sink_rx_cells", "count"), rx - bad);
    assert_eq!(probe(&drop, "sink/vc1", "sink_clp1_cells", "count"), 0.0);
    let tag = policed("virtual-scheduling", "tag");
    assert_eq!(tag.ledger.dropped_of(0), 0);
    assert_eq!(probe(&tag, "sink/vc1", "sink_rx_cells", "count"), rx);
    assert_eq!(probe(&tag, "sink/vc1", "sink_clp1_cells", "count"), bad);
    let count = policed("virtual-scheduling", "count");
    assert_eq!(probe(&count, "upc", "upc_nonconforming_cells", "count"), bad);
    assert_eq!(probe(&count, "sink/vc1", "sink_clp1_cells", "count"), 0.0);
    assert_eq!(probe(&count, "sink/vc1", "sink_rx_cells", "count"), rx);
}

#[test]
fn contract_errors_name_the_parameter() {
    let base = "connections = [\"src -> upc\", \"upc -> sink\"]\n[scenario]\nduration = \"1 ms\"\n[components.src]\nkind = \"cbr\"\nrate = \"10 Mb/s\"\n[components.upc]\nkind = \"gcra\"\n{X}\n[components.sink]\nkind = \"sink\"\n";
    for (x, msg) in [
        ("", "pcr"),
        ("pcr = \"1 Mb/s\"\nincrement = \"1 us\"", "either pcr or increment"),
        ("increment = \"0 s\"", "at least 1 ps"),
        ("pcr = \"1 Mb/s\"\naction = \"shape\"", "drop, tag, count"),
        ("pcr = \"1 Mb/s\"\nalgorithm = \"bucket\"", "leaky-bucket"),
    ] {
        let e = err(&base.replace("{X}", x));
        assert!(e.contains("components.upc") && e.contains(msg), "{x}: {e}");
    }
}

#[test]
fn per_vc_contracts_police_each_vc_alone() {
    // The same Poisson source as above on VC 1, beside a CBR stream on VC 2 within its
    // own contract and one on VC 3 with none.
    let text = r#"connections = ["src -> upc", "two -> upc", "three -> upc", "upc -> sink"]
[scenario]
duration = "50 ms"
[components.src]
kind = "poisson"
rate = "120000 cells/s"
[components.two]
kind = "cbr"
rate = "50000 cells/s"
vc = 2
[components.three]
kind = "cbr"
rate = "300000 cells/s"
vc = 3
[components.upc]
kind = "gcra"
pcr = "100000 cells/s"
cdvt = "25 us"
vcs = ["1", "2: pcr = 60000 cells/s, cdvt = 0 s"]
[components.sink]
kind = "sink"
"#;
    let r = run(&Scenario::from_text(text, "gcra.toml").unwrap_or_else(|e| panic!("{e}")), 0);
    let alone = policed("virtual-scheduling", "drop");
    // VC 1 sees exactly what the single-contract policer saw with VC 1 alone.
    assert_eq!(probe(&r, "upc/vc1", "upc_nonconforming_cells", "count"), probe(&alone, "upc", "upc_nonconforming_cells", "count"));
    assert_eq!(probe(&r, "upc/vc1", "upc_rx_cells", "count"), probe(&alone, "upc", "upc_rx_cells", "count"));
    // VC 2 keeps its contract (20 µs spacing against T = 16.7 µs); VC 3 is not policed.
    assert_eq!(probe(&r, "upc/vc2", "upc_nonconforming_cells", "count"), 0.0);
    assert_eq!(probe(&r, "sink/vc2", "sink_rx_cells", "count"), probe(&r, "two", "src_tx_cells", "count"));
    assert_eq!(probe(&r, "sink/vc3", "sink_rx_cells", "count"), probe(&r, "three", "src_tx_cells", "count"));
    // The component's totals count every cell and every non-conforming one.
    let total: f64 = ["src", "two", "three"].iter().map(|s| probe(&r, s, "src_tx_cells", "count")).sum();
    assert_eq!(probe(&r, "upc", "upc_rx_cells", "count"), total);
    assert_eq!(probe(&r, "upc", "upc_nonconforming_cells", "count"), probe(&r, "upc/vc1", "upc_nonconforming_cells", "count"));
}

/// buddhikot92's on-off source (peak 40, mean 10 Mb/s) policed at a peak of 40 Mb/s
/// (1 ms of CDVT: the Poisson clumping within bursts passes) and a sustainable rate of
/// 12 Mb/s with `extra` settings.
fn vbr(extra: &str, clp: u8) -> atmsim_scenario::RunResult {
    let text = format!(
        r#"connections = ["src -> upc", "upc -> sink"]
[scenario]
duration = "1 s"
[components.src]
kind = "onoff"
peak = "40 Mb/s"
mean = "10 Mb/s"
burst_factor = "250 cells"
clp = {clp}
[components.upc]
kind = "gcra"
pcr = "40 Mb/s"
cdvt = "1 ms"
scr = "12 Mb/s"
{extra}
[components.sink]
kind = "sink"
"#
    );
    run(&Scenario::from_text(&text, "vbr.toml").unwrap_or_else(|e| panic!("{e}")), 0)
}

#[test]
fn vbr_contracts_police_the_sustainable_rate_with_its_burst_tolerance() {
    let p = |r: &atmsim_scenario::RunResult, probe_name: &str| probe(r, "upc", probe_name, "count");
    // A burst tolerance far above the source's bursts (~330 cells): hardly any cell
    // exceeds the sustainable rate; a tolerance of 50 cells: many do.
    let loose = vbr("mbs = 100000", 0);
    let tight = vbr("mbs = 50", 0);
    let rx = p(&tight, "upc_rx_cells");
    assert!(p(&loose, "upc_scr_nonconforming_cells") < 0.01 * rx, "{}", p(&loose, "upc_scr_nonconforming_cells"));
    let over = p(&tight, "upc_scr_nonconforming_cells");
    assert!(over > 0.1 * rx, "{over} of {rx}");
    // VBR.1, action drop: every non-conforming cell is dropped (cause upc)
    assert_eq!(tight.ledger.dropped_by_cause().get("upc").copied(), Some(p(&tight, "upc_nonconforming_cells") as u64));
    // VBR.3: the cells beyond the sustainable rate are tagged and go on; only those
    // beyond the peak are dropped
    let vbr3 = vbr("mbs = 50\nscr_cells = \"clp0\"\nscr_action = \"tag\"", 0);
    let tagged = p(&vbr3, "upc_scr_nonconforming_cells");
    assert!(tagged > 0.1 * rx);
    assert_eq!(probe(&vbr3, "sink/vc1", "sink_clp1_cells", "count"), tagged);
    let peak_only = p(&vbr3, "upc_nonconforming_cells") - tagged;
    assert_eq!(vbr3.ledger.dropped_of(0) as f64, peak_only);
    // The same source sending CLP = 1 cells: a CLP = 0 contract leaves them to the peak
    // rate alone; a CLP = 0+1 contract (VBR.1) polices them all.
    let low = vbr("mbs = 50\nscr_cells = \"clp0\"", 1);
    assert_eq!(p(&low, "upc_scr_nonconforming_cells"), 0.0);
    let low_all = vbr("mbs = 50", 1);
    assert_eq!(p(&low_all, "upc_scr_nonconforming_cells"), over);
}

#[test]
fn vbr_settings_are_checked() {
    let text = |extra: &str| format!(
        "connections = [\"src -> upc\", \"upc -> sink\"]\n[scenario]\nduration = \"1 ms\"\n[components.src]\nkind = \"cbr\"\nrate = \"1 Mb/s\"\n[components.upc]\nkind = \"gcra\"\npcr = \"40 Mb/s\"\n{extra}\n[components.sink]\nkind = \"sink\"\n"
    );
    for (extra, want) in [
        ("scr = \"12 Mb/s\"", "scr needs mbs"),
        ("mbs = 10", "mbs needs scr"),
        ("scr = \"50 Mb/s\"\nmbs = 10", "must not exceed the peak rate"),
        ("scr_action = \"tag\"", "scr_action needs a sustainable rate"),
        ("cdvt_scr = \"1 ms\"", "cdvt_scr needs a sustainable rate"),
        ("scr = \"12 Mb/s\"\nmbs = 10\nscr_cells = \"clp1\"", "clp0+1"),
    ] {
        let e = err(&text(extra));
        assert!(e.contains(want), "{extra}: {e}");
        // the key at fault is named: the line of the setting that is wrong or missing
        let key = if want.contains("exceed") || want == "mbs needs scr" { "upc.scr" } else if want == "scr needs mbs" { "upc.mbs" } else { "upc." };
        assert!(e.contains(key), "{extra}: {e}");
    }
}

/// A CBR stream at exactly its peak rate, multiplexed with Poisson cells through an
/// OC-3c FIFO, then policed per VC at that peak rate with `cdvt` as given.
fn after_a_mux(cdvt: &str, action: &str) -> atmsim_scenario::RunResult {
    let text = format!(
        r#"connections = ["cbr -> mux", "bg -> mux", "mux -> upc", "upc -> sink"]
[scenario]
duration = "100 ms"
warmup = "10 ms"
[components.cbr]
kind = "cbr"
rate = "100000 cells/s"
vc = 1
[components.bg]
kind = "poisson"
rate = "100 Mb/s"
vc = 2
[components.mux]
kind = "fifo"
phy = "OC-3c"
[components.upc]
kind = "gcra"
pcr = "100000 cells/s"
action = "{action}"
vcs = ["1: cdvt = {cdvt}"]
[components.sink]
kind = "sink"
"#
    );
    run(&Scenario::from_text(&text, "cdvt.toml").unwrap_or_else(|e| panic!("{e}")), 0)
}

#[test]
fn the_cdvt_a_stream_needs_passes_every_cell_and_a_picosecond_less_does_not() {
    // The multiplexer's queue jitters the CBR cells: some arrive clumped ahead of the
    // 10 us clock. The largest clumping is the tolerance the UPC needs.
    let r = after_a_mux("0 s", "count");
    let need = probe(&r, "upc/vc1", "upc_cdvt_needed", "value");
    let ps = (need * 1e12).round() as u64;
    assert!(ps > 2_831_197 && ps < 200_000_000, "{need} s: more than a cell time of jitter, less than 200 us");
    assert!(probe(&r, "upc/vc1", "upc_nonconforming_cells", "count") > 0.0);
    let ok = after_a_mux(&format!("{ps} ps"), "count");
    assert_eq!(probe(&ok, "upc/vc1", "upc_nonconforming_cells", "count"), 0.0);
    assert_eq!(probe(&ok, "upc/vc1", "upc_cdvt_needed", "value"), need, "the same stream");
    let short = after_a_mux(&format!("{} ps", ps - 1), "count");
    assert!(probe(&short, "upc/vc1", "upc_nonconforming_cells", "count") >= 1.0);
    // one contract for every cell reports it on the component itself; per-VC only on its rows
    assert!(!r.probes.iter().any(|p| p.component == "upc" && p.probe == "upc_cdvt_needed"));
}
