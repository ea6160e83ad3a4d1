//! Prints every statistic of one replication of each scenario given, one line each
//! (`scenario component probe statistic value unit`, values exact as f64 bit patterns
//! and decimal): for comparing two builds' results (re-bless evidence). `STATS_RUNS=N`
//! dumps replications 0 … N−1; `STATS_FAST_PATH=true|sinks|false` overrides the
//! scenarios' `[scenario] fast_path` (to compare the paths).
use atmsim_scenario::Scenario;

fn main() {
    for path in std::env::args().skip(1) {
        let mut sc = match Scenario::load(&path) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("{path}: {e}");
                std::process::exit(2);
            }
        };
        match std::env::var("STATS_FAST_PATH").as_deref() {
            Ok("true") => (sc.fast_path, sc.deliver_ahead) = (true, true),
            Ok("sinks") => (sc.fast_path, sc.deliver_ahead) = (true, false),
            Ok("false") => (sc.fast_path, sc.deliver_ahead) = (false, false),
            _ => {}
        }
        let runs: u64 = std::env::var("STATS_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
        for run in 0..runs {
        match sc.run(sc.seed, run, &mut |_, _| true) {
            Ok(r) => {
                for p in &r.probes {
                    let path = if runs > 1 { format!("{path}#{run}") } else { path.clone() };
                    println!("{path}\t{}\t{}\t{}\t{:016x}\t{}\t{}", p.component, p.probe, p.statistic, p.value.to_bits(), p.value, p.unit);
                }
                for f in &r.flows {
                    println!("{path}\tflow\t{f:?}");
                }
            }
            Err(e) => {
                eprintln!("{path}: {e}");
                std::process::exit(1);
            }
        }
        }
    }
}
