//! The `selfsimilar` source end to end: cells per bin, read back through a time series,
//! have the asked-for mean and Hurst parameter.

use super::*;
use atmsim_models::traffic::selfsimilar::{hurst_aggregated_variance, hurst_periodogram};

fn source(h: f64, seconds: f64, extra: &str) -> Scenario {
    let text = format!(
        r#"connections = ["src -> sink"]
[scenario]
duration = "{seconds} s"
[components.src]
kind = "selfsimilar"
hurst = {h}
mean = "10 Mb/s"
std = "2.5 Mb/s"
{extra}
[components.sink]
kind = "sink"
[probes]
series = ["src.src_tx_cells"]
interval = "1 ms"
"#
    );
    Scenario::from_text(&text, "ss.toml").unwrap_or_else(|e| panic!("{e}"))
}

/// Four replications of one 65,536-bin block each. One path's variance-time estimate
/// scatters by a few hundredths and the estimator is biased low for large H (it gives
/// 0.87 on exact fGn paths at H = 0.9: see the unit test), hence the 0.08 tolerance on
/// the average; the mean of N fGn bins has standard deviation std·N^(H−1) per run.
#[test]
fn cells_per_bin_have_the_mean_and_the_hurst_parameter() {
    let mut last = 0.0;
    for h in [0.6, 0.75, 0.9] {
        let (mut est, mut mean) = (0.0, 0.0);
        for rep in 0..4 {
            let r = run(&source(h, 65.536, ""), rep);
            let counts: Vec<f64> = r.series[0].values.iter().map(|v| v * 1e-3).collect();
            assert_eq!(counts.len(), 65_536);
            mean += counts.iter().sum::<f64>() / counts.len() as f64 * 424.0 / 1e-3 / 1e6 / 4.0;
            est += hurst_aggregated_variance(&counts) / 4.0;
        }
        assert!((mean - 10.0).abs() < 1.0, "H = {h}: mean {mean} Mb/s");
        assert!((est - h).abs() < 0.08, "H = {h}: estimated {est}");
        assert!(est > last, "H = {h}: estimate {est} not above the previous {last}");
        last = est;
    }
}

/// Issue 15 item 4: the source as dastangoo96 uses it (H = 0.75, the 76 Mb/s source with
/// scenarios/dastangoo96's open std of 0.5 × the mean, clipped at 0 in 2% of the bins)
/// is one continuous fGn path over the whole run (65,536 bins of 1 ms, the default block:
/// every dastangoo96 run, 2 s, lies in one block), and two independent estimators over
/// the whole run give H = 0.75 ± 0.05. Four replications averaged: the periodogram
/// estimate's standard error is then about 0.012, the variance-time one's a few
/// hundredths (see the unit tests in selfsimilar.rs).
#[test]
fn the_dastangoo96_source_has_h_075_by_two_estimators_over_the_whole_run() {
    let text = r#"connections = ["src -> sink"]
[scenario]
duration = "65.536 s"
[components.src]
kind = "selfsimilar"
mean = "76 Mb/s"
std = "38 Mb/s"
peak = "1 Gb/s"
[components.sink]
kind = "sink"
[probes]
series = ["src.src_tx_cells"]
interval = "1 ms"
"#;
    let sc = Scenario::from_text(text, "ss76.toml").unwrap_or_else(|e| panic!("{e}"));
    let (mut av, mut pg) = (0.0f64, 0.0f64);
    for rep in 0..4 {
        let r = run(&sc, rep);
        let counts: Vec<f64> = r.series[0].values.iter().map(|v| v * 1e-3).collect();
        assert_eq!(counts.len(), 65_536);
        av += hurst_aggregated_variance(&counts) / 4.0;
        pg += hurst_periodogram(&counts) / 4.0;
    }
    assert!((av - 0.75).abs() < 0.05, "variance-time estimate {av}");
    assert!((pg - 0.75).abs() < 0.05, "periodogram estimate {pg}");
}

#[test]
fn runs_are_reproducible_and_replications_differ() {
    let sc = source(0.75, 1.0, "");
    assert_eq!(run(&sc, 0).fingerprint, run(&sc, 0).fingerprint);
    assert_ne!(run(&sc, 0).fingerprint, run(&sc, 1).fingerprint);
}

#[test]
fn parameter_errors() {
    let text = |extra: &str| format!("connections = [\"src -> sink\"]\n[scenario]\nduration = \"1 s\"\n[components.src]\nkind = \"selfsimilar\"\nmean = \"10 Mb/s\"\nstd = \"2.5 Mb/s\"\n{extra}\n[components.sink]\nkind = \"sink\"\n");
    let e = err(&text("peak = \"5 Mb/s\""));
    assert!(e.contains("components.src.peak") && e.contains("at least the mean"), "{e}");
    let e = err(&text("hurst = 1.2"));
    assert!(e.contains("components.src.hurst") && e.contains("out of range"), "{e}");
    let e = err(&text("bin = \"0 s\""));
    assert!(e.contains("components.src.bin"), "{e}");
    let e = err(&text("").replace("std = \"2.5 Mb/s\"\n", ""));
    assert!(e.contains("components.src.std") && e.contains("missing required"), "{e}");
}

/// On the fast path a self-similar source hands each bin's cells over at the bin's
/// start (one event per bin, not one timer per cell): the cells, their instants and
/// every statistic are the event path's — the source's own counts and series with a
/// warm-up, a stop and samples falling inside bins, the FIFO the cells cross, the
/// sinks. A second source feeds a sink directly (a passive component: no event per
/// cell at all once the source hands its bins over).
#[test]
fn each_bin_is_handed_over_in_one_event_with_the_event_paths_statistics() {
    let text = |fast: &str| {
        format!(
            r#"connections = ["src -> q", "q -> sink", "src2 -> sink2"]
[scenario]
duration = "25 ms"
warmup = "3.3 ms"
fast_path = {fast}
[components.src]
kind = "selfsimilar"
mean = "40 Mb/s"
std = "15 Mb/s"
stop = "20.5 ms"
[components.src2]
kind = "selfsimilar"
mean = "40 Mb/s"
std = "15 Mb/s"
[components.q]
kind = "fifo"
rate = "45 Mb/s"
[components.sink]
kind = "sink"
[components.sink2]
kind = "sink"
[probes]
series = ["src.src_tx_cells", "q.q_len", "src2.src_tx_rate"]
interval = "0.7 ms"
"#
        )
    };
    let sc = |fast: &str| Scenario::from_text(&text(fast), "ss_ahead.toml").unwrap_or_else(|e| panic!("{e}"));
    let (fast, exact) = (run(&sc("true"), 0), run(&sc("false"), 0));
    assert_eq!(super::golden::statistics(&fast), super::golden::statistics(&exact));
    let cells = probe(&exact, "src", "src_tx_cells", "count");
    assert!(cells > 1500.0, "{cells} cells");
    // The event path: a timer per cell at each source and a departure per cell at the
    // FIFO (about 3 per cell of `src`). Ahead: the sources' bins (25 events each) and
    // the FIFO's arrivals; with a timer per cell the sources would add 2 per cell.
    assert!((fast.scheduled as f64) < 0.45 * exact.scheduled as f64, "{} events scheduled against {}", fast.scheduled, exact.scheduled);
}
