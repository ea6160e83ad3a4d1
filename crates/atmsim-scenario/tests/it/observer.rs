//! An observer written outside the model library, in this one file: a per-VC histogram
//! of the delay cells have when they reach one component, subscribed to a built run
//! (issue 45: adding an observer is one new file). Its counts and means are the sink's
//! own `sink_delay` statistics, and subscribing it changes nothing in the run.

use super::*;
use atmsim_kernel::{CompId, SimTime};
use atmsim_models::observe::{Event, Interest, Observation, Observer};
use atmsim_models::Payloads;
use std::collections::BTreeMap;

/// Cell delays at component `at`, per VC label: a histogram of 1 µs bins, the count
/// and the sum.
struct VcDelays {
    at: CompId,
    by_vc: BTreeMap<u32, (BTreeMap<u64, u64>, u64, f64)>,
}

impl Observer for VcDelays {
    fn interest(&self) -> Interest {
        Interest::ARRIVE
    }
    fn observe(&mut self, time: SimTime, comp: CompId, what: &Observation<'_>, _: &Payloads) -> Result<(), String> {
        if let (true, Observation::Cell { event: Event::Arrive(_), cell }) = (comp == self.at, what) {
            let delay_s = (time.0 - cell.born.0) as f64 * 1e-12;
            let (bins, n, sum) = self.by_vc.entry(cell.vc).or_default();
            *bins.entry((delay_s * 1e6) as u64).or_default() += 1;
            *n += 1;
            *sum += delay_s;
        }
        Ok(())
    }
}

#[test]
fn an_observer_outside_the_library_sees_what_the_sink_measures() {
    let path = format!("{}/../../scenarios/examples/onoff8_fifo.toml", env!("CARGO_MANIFEST_DIR"));
    let sc = Scenario::load(&path).expect("load").with_overrides(&[("scenario.duration".into(), "100 ms".into()), ("scenario.warmup".into(), "0 s".into())]).expect("overrides");
    let plain = run(&sc, 0);
    let sink = sc.components.iter().position(|c| c.name == "sink").expect("a sink") as CompId;
    let mut sim = sc.build(sc.seed, 0).expect("build");
    sim.store_mut().observers.subscribe(Box::new(VcDelays { at: sink, by_vc: BTreeMap::new() }));
    let end = SimTime::ZERO.plus(sc.duration);
    let mut out = sim.run(end, SimTime::ZERO, &mut |_, _| true).expect("run");
    assert_eq!((out.fingerprint, out.events), (plain.fingerprint, plain.events), "observing changed the run");
    let seen = out.store.observers.take::<VcDelays>().expect("still subscribed");
    assert_eq!(seen.by_vc.len(), 8, "the eight sources' VCs");
    for (vc, (bins, n, sum)) in &seen.by_vc {
        let at = format!("sink/vc{vc}");
        assert_eq!(*n as f64, probe(&plain, &at, "sink_delay", "count"), "{at}");
        assert_eq!(bins.values().sum::<u64>(), *n, "{at}");
        let mean = probe(&plain, &at, "sink_delay", "mean");
        assert!((sum / *n as f64 - mean).abs() <= 1e-9 * mean, "{at}: {} against the sink's {mean}", sum / *n as f64);
    }
}
