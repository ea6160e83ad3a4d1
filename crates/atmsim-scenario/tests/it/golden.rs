//! Golden fingerprints: every scenario shipped under `scenarios/` (examples, validation,
//! every paper) is run with its own seed, replication 0, and its event-trace fingerprint
//! (covering what each delivered message carries: `fingerprint_content`) and event
//! count are compared with the ones committed in `golden_fingerprints.tsv`
//! beside this file. A refactor must keep them all; a change that legitimately alters a
//! trace rewrites the file with `ATMSIM_BLESS=1 make test` (or
//! `ATMSIM_BLESS=1 cargo test --release -p atmsim-scenario golden`) in a commit of its
//! own whose message says why the trace changed. A new scenario adds its own line
//! (`ATMSIM_BLESS=1` writes it; `git diff` must show no other line changed): that is
//! not a re-bless, since no existing trace moved, and it lands with the scenario.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use atmsim_scenario::Scenario;

const GOLDEN: &str = "tests/it/golden_fingerprints.tsv";
const HEADER: &str = "# scenario\tseed\trun\tfingerprint\tevents";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `*.toml` under `scenarios/`, as paths relative to the repository root, sorted.
fn shipped() -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir).expect("read scenarios/").map(|e| e.expect("dir entry").path()).collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "toml") {
                out.push(p);
            }
        }
    }
    let root = root();
    let mut files = Vec::new();
    walk(&root.join("scenarios"), &mut files);
    let mut rel: Vec<String> = files.iter().map(|p| p.strip_prefix(&root).expect("under root").to_string_lossy().replace('\\', "/")).collect();
    rel.sort();
    rel
}

/// `scenario -> (seed, run, fingerprint, events)`, one line per scenario.
type Golden = BTreeMap<String, (u64, u64, String, u64)>;

fn read_golden(path: &Path) -> Golden {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut out = Golden::new();
    for (i, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 5, "{GOLDEN}:{}: expected 5 tab-separated fields", i + 1);
        let num = |s: &str| s.parse::<u64>().unwrap_or_else(|_| panic!("{GOLDEN}:{}: '{s}' is not a number", i + 1));
        out.insert(f[0].to_string(), (num(f[1]), num(f[2]), f[3].to_string(), num(f[4])));
    }
    out
}

/// Scenario `rel`, its fingerprint covering message contents.
fn load(rel: &str) -> Scenario {
    let path = root().join(rel);
    let mut sc = Scenario::load(path.to_str().expect("utf-8 path")).unwrap_or_else(|e| panic!("{rel}: {e}"));
    sc.fingerprint_content = true;
    sc
}

fn run_one(rel: &str) -> (u64, u64, String, u64) {
    let sc = load(rel);
    let r = sc.run(sc.seed, 0, &mut |_, _| true).unwrap_or_else(|e| panic!("{rel}: {e}"));
    (sc.seed, 0, format!("{:016x}", r.fingerprint), r.events)
}

/// Runs `files` on two threads (the machines this runs on have two cores).
fn run_all<T: Send>(files: &[String], f: impl Fn(&str) -> T + Sync) -> Vec<(String, T)> {
    let (a, b): (Vec<_>, Vec<_>) = files.iter().enumerate().partition(|(i, _)| i % 2 == 0);
    let f = &f;
    std::thread::scope(|s| {
        let hs: Vec<_> = [a, b].into_iter().map(|part| s.spawn(move || part.into_iter().map(|(_, name)| (name.clone(), f(name))).collect::<Vec<_>>())).collect();
        hs.into_iter().flat_map(|h| h.join().expect("scenario run")).collect()
    })
}

/// `--check-wire` on every shipped scenario: every payload-carrying PDU goes through the
/// wire layer and back, the runs pass, and the checking mode changes no trace (the
/// golden fingerprints hold with it on).
#[test]
fn check_wire_passes_on_every_shipped_scenario_and_changes_no_trace() {
    let want = read_golden(&Path::new(env!("CARGO_MANIFEST_DIR")).join(GOLDEN));
    let got = run_all(&shipped(), |rel| {
        let mut sc = load(rel);
        sc.check_wire = true;
        let r = sc.run(sc.seed, 0, &mut |_, _| true).unwrap_or_else(|e| panic!("{rel} with check_wire: {e}"));
        (format!("{:016x}", r.fingerprint), r.events, r.ledger.wire_checked)
    });
    let mut checked = Vec::new();
    for (rel, (fp, events, n)) in got {
        if let Some(w) = want.get(&rel) {
            assert_eq!((&fp, events), (&w.2, w.3), "{rel}: check_wire changed the trace, or the golden line is stale (golden::every fails for it too if so)");
        }
        if n > 0 {
            checked.push(rel);
        }
    }
    // Every scenario with a host carries payloads (IP headers on every PDU): domingo95
    // (6, ping and UDP), lazarou96 (11), evans96 (2), tcp_pftk, tcp_window,
    // ping_through_switch, epd_udp, indep_loss.
    assert!(checked.len() >= 24, "only {} scenarios had PDUs checked: {checked:?}", checked.len());
}

#[test]
fn every_shipped_scenario_keeps_its_golden_fingerprint() {
    let files = shipped();
    assert!(files.len() >= 30, "found only {} scenarios under scenarios/", files.len());
    let got: Golden = run_all(&files, run_one).into_iter().collect();
    let golden_path = Path::new(env!("CARGO_MANIFEST_DIR")).join(GOLDEN);
    if std::env::var("ATMSIM_BLESS").is_ok_and(|v| v == "1") {
        let mut text = format!("{HEADER}\n");
        for (f, (seed, run, fp, ev)) in &got {
            text.push_str(&format!("{f}\t{seed}\t{run}\t{fp}\t{ev}\n"));
        }
        std::fs::write(&golden_path, text).expect("write golden fingerprints");
        eprintln!("blessed {} golden fingerprints into {}", got.len(), golden_path.display());
        return;
    }
    let want = read_golden(&golden_path);
    let mut bad = Vec::new();
    for (f, g) in &got {
        match want.get(f) {
            None => bad.push(format!("{f}: no golden fingerprint (new scenario? bless it)")),
            Some(w) if w != g => bad.push(format!("{f}: fingerprint {} events {} (seed {}, run {}), golden {} events {}", g.2, g.3, g.0, g.1, w.2, w.3)),
            Some(_) => {}
        }
    }
    for f in want.keys().filter(|f| !got.contains_key(*f)) {
        bad.push(format!("{f}: golden fingerprint for a scenario that no longer exists"));
    }
    assert!(
        bad.is_empty(),
        "{} of {} scenarios changed their event trace; if the change is meant, re-bless with ATMSIM_BLESS=1 in a commit of its own saying why:\n  {}",
        bad.len(),
        got.len(),
        bad.join("\n  ")
    );
}

/// Every statistic a run reports, bit for bit: probe rows, flow books and series.
fn statistics(r: &atmsim_scenario::RunResult) -> Vec<String> {
    let mut out: Vec<String> = r.probes.iter().map(|p| format!("{} {} {} {:x} {}", p.component, p.probe, p.statistic, p.value.to_bits(), p.unit)).collect();
    out.extend(r.flows.iter().map(|f| format!("{f:?}")));
    out.extend(r.series.iter().map(|s| format!("{} {} {:?}", s.component, s.probe, s.values.iter().map(|v| v.to_bits()).collect::<Vec<_>>())));
    out
}

/// The fast path (timed deliveries to passive components, FIFOs computing departures
/// on arrival) is equivalent to the event-per-departure path: on every shipped
/// scenario, every probe statistic, flow book and series value is the same bit for bit
/// with it on and off; only the events differ (fewer with it on).
#[test]
fn fast_path_changes_no_statistic_on_any_shipped_scenario() {
    let got = run_all(&shipped(), |rel| {
        let mut sc = load(rel);
        let fast = sc.run(sc.seed, 0, &mut |_, _| true).unwrap_or_else(|e| panic!("{rel} fast: {e}"));
        sc.fast_path = false;
        let exact = sc.run(sc.seed, 0, &mut |_, _| true).unwrap_or_else(|e| panic!("{rel} exact: {e}"));
        (statistics(&fast), statistics(&exact), fast.events, exact.events)
    });
    let mut faster = Vec::new();
    let mut bad = Vec::new();
    for (rel, (fast, exact, fe, ee)) in &got {
        if fast != exact {
            let first = fast.iter().zip(exact).find(|(a, b)| a != b).map(|(a, b)| format!("fast {a} / exact {b}")).unwrap_or_else(|| format!("{} against {} rows", fast.len(), exact.len()));
            bad.push(format!("{rel}: {first}"));
        }
        assert!(fe <= ee, "{rel}: the fast path handled more events ({fe}) than the exact one ({ee})");
        if fe < ee {
            faster.push(rel.as_str());
        }
    }
    assert!(bad.is_empty(), "the fast path changed statistics:\n  {}", bad.join("\n  "));
    // Scenarios with a fifo feeding a sink take it (and so are checked above).
    for rel in ["scenarios/validation/md1.toml", "scenarios/validation/md1k.toml", "scenarios/validation/ndd1.toml", "scenarios/examples/poisson_oc3.toml", "scenarios/examples/onoff8_fifo.toml", "scenarios/examples/cbr_wan.toml"] {
        assert!(faster.contains(&rel), "{rel} did not take the fast path (took it: {faster:?})");
    }
}
