use super::*;
use crate::series::SeriesKind;

/// A ping-pong pair: each message bounces back after a fixed delay.
struct Bouncer {
    delay: SimDuration,
    got: Vec<(u64, u32)>,
    pending: Vec<u32>,
    serve: bool,
}

impl Component for Bouncer {
    type Msg = u32;
    type Store = ();
    fn start(&mut self, ctx: &mut Ctx<'_, u32>) {
        if self.serve {
            ctx.send(0, 1);
        }
    }
    fn on_timer(&mut self, _tag: u32, ctx: &mut Ctx<'_, u32>) {
        let m = self.pending.remove(0);
        ctx.send(0, m + 1);
    }
    fn on_message(&mut self, _port: PortId, msg: u32, ctx: &mut Ctx<'_, u32>) {
        self.got.push((ctx.now.0, msg));
        self.pending.push(msg);
        ctx.schedule_in(self.delay, 0);
    }
    fn reset_stats(&mut self, _now: SimTime) {}
    fn report(&self, _now: SimTime, path: &str, out: &mut Report) {
        out.push(path, "got", "count", self.got.len() as f64, "1");
    }
    fn ledger(&self, _l: &mut Ledger) {}
}

fn pair() -> Simulation<Bouncer> {
    let a = Bouncer { delay: SimDuration(7), got: vec![], pending: vec![], serve: true };
    let b = Bouncer { delay: SimDuration(3), got: vec![], pending: vec![], serve: false };
    Simulation::new(
        vec![a, b],
        vec!["a".into(), "b".into()],
        vec![vec![Some(Route { comp: 1, port: 0 })], vec![Some(Route { comp: 0, port: 0 })]],
    )
}

#[test]
fn messages_and_timers_interleave_exactly() {
    let out = pair().run(SimTime(25), SimTime::ZERO, &mut |_, _| true).unwrap();
    // b gets 1 at 0, a gets 2 at 3, b gets 3 at 10, a gets 4 at 13, b gets 5 at 20, a gets 6 at 23
    let rows: Vec<_> = out.report.rows.iter().map(|r| (r.component.clone(), r.value)).collect();
    assert_eq!(rows, vec![("a".into(), 3.0), ("b".into(), 3.0)]);
    // 6 deliveries + 5 timers before t = 25
    assert_eq!(out.events, 11);
}

/// Logs every delivery into a shared list; comp 0 sends 1, 2, 3 at start on ports
/// 0..3, and each other comp forwards m·10 (once) on its port 0.
struct Relay {
    log: std::rc::Rc<std::cell::RefCell<Vec<(CompId, u32)>>>,
}

impl Component for Relay {
    type Msg = u32;
    type Store = ();
    fn start(&mut self, ctx: &mut Ctx<'_, u32>) {
        if ctx.id() == 0 {
            (1..=3).for_each(|m| ctx.send(m as PortId - 1, m));
        }
    }
    fn on_timer(&mut self, _tag: u32, _ctx: &mut Ctx<'_, u32>) {}
    fn on_message(&mut self, _port: PortId, msg: u32, ctx: &mut Ctx<'_, u32>) {
        self.log.borrow_mut().push((ctx.id(), msg));
        if msg < 10 {
            ctx.send(0, msg * 10);
        }
    }
    fn reset_stats(&mut self, _now: SimTime) {}
    fn report(&self, _now: SimTime, _path: &str, _out: &mut Report) {}
    fn ledger(&self, _l: &mut Ledger) {}
}

#[test]
fn zero_time_messages_are_delivered_breadth_first_in_send_order() {
    let log = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let comps = (0..5).map(|_| Relay { log: log.clone() }).collect();
    let to = |c: CompId| Some(Route { comp: c, port: 0 });
    let routes = vec![vec![to(1), to(2), to(3)], vec![to(4)], vec![to(4)], vec![to(4)], vec![]];
    let paths = (0..5).map(|i| format!("c{i}")).collect();
    Simulation::new(comps, paths, routes).run(SimTime(1), SimTime::ZERO, &mut |_, _| true).unwrap();
    // What comp 0 sent comes first, in order; then what those deliveries sent.
    assert_eq!(*log.borrow(), vec![(1, 1), (2, 2), (3, 3), (4, 10), (4, 20), (4, 30)]);
}

/// A timer every 10 ps counting its firings; the count restarts at a stats reset.
struct Ticker {
    count: u64,
}

impl Component for Ticker {
    type Msg = ();
    type Store = ();
    fn start(&mut self, ctx: &mut Ctx<'_, ()>) {
        ctx.schedule_in(SimDuration(10), 0);
    }
    fn on_timer(&mut self, _tag: u32, ctx: &mut Ctx<'_, ()>) {
        self.count += 1;
        ctx.schedule_in(SimDuration(10), 0);
    }
    fn on_message(&mut self, _port: PortId, _msg: (), _ctx: &mut Ctx<'_, ()>) {}
    fn reset_stats(&mut self, _now: SimTime) {
        self.count = 0;
    }
    fn report(&self, _now: SimTime, _path: &str, _out: &mut Report) {}
    fn ledger(&self, _l: &mut Ledger) {}
    fn sample(&self, _index: u64, _now: SimTime) -> f64 {
        self.count as f64
    }
}

fn ticker_series(warmup: u64) -> RunOutcome {
    let mut sim = Simulation::new(vec![Ticker { count: 0 }], vec!["t".into()], vec![vec![]]);
    // Scale 25e-12 turns "per second over 25 ps" back into "per interval".
    let probe = |kind| SeriesProbe { comp: 0, index: 0, kind, scale: if kind == SeriesKind::Rate { 25e-12 } else { 1.0 } };
    sim.sample_every(SimDuration(25), vec![probe(SeriesKind::Level), probe(SeriesKind::Rate)]);
    sim.run(SimTime(100), SimTime(warmup), &mut |_, _| true).unwrap()
}

#[test]
fn series_sample_the_state_after_each_instant() {
    let out = ticker_series(0);
    // Firings at 10, 20, …, 90 (the run ends before 100).
    assert_eq!(out.series.values[0], vec![2.0, 5.0, 7.0, 9.0]);
    let rate: Vec<f64> = out.series.values[1].iter().map(|v| v.round()).collect();
    assert_eq!(rate, vec![2.0, 3.0, 2.0, 2.0]);
}

#[test]
fn rate_series_run_through_the_warm_up_reset() {
    let out = ticker_series(40);
    // The count restarts before the firing at 40 (3 so far): 2, then 2, 4, 6.
    assert_eq!(out.series.values[0], vec![2.0, 2.0, 4.0, 6.0]);
    let rate: Vec<f64> = out.series.values[1].iter().map(|v| v.round()).collect();
    assert_eq!(rate, vec![2.0, 3.0, 2.0, 2.0]);
}

#[test]
fn sampling_leaves_the_trace_alone() {
    let plain = Simulation::new(vec![Ticker { count: 0 }], vec!["t".into()], vec![vec![]]).run(SimTime(100), SimTime(40), &mut |_, _| true).unwrap();
    let sampled = ticker_series(40);
    assert_eq!((plain.fingerprint, plain.events), (sampled.fingerprint, sampled.events));
    assert!(plain.series.values.is_empty());
}

#[test]
fn fingerprint_is_reproducible_and_sensitive() {
    let f1 = pair().run(SimTime(100), SimTime::ZERO, &mut |_, _| true).unwrap().fingerprint;
    let f2 = pair().run(SimTime(100), SimTime::ZERO, &mut |_, _| true).unwrap().fingerprint;
    let f3 = pair().run(SimTime(101), SimTime::ZERO, &mut |_, _| true).unwrap().fingerprint;
    assert_eq!(f1, f2);
    assert_ne!(f1, f3);
}

#[test]
fn unwired_port_is_a_model_error_not_a_panic() {
    let a = Bouncer { delay: SimDuration(1), got: vec![], pending: vec![], serve: true };
    let sim = Simulation::new(vec![a], vec!["a".into()], vec![vec![None]]);
    match sim.run(SimTime(10), SimTime::ZERO, &mut |_, _| true) {
        Err(SimError::ModelPanic { path, .. }) => assert_eq!(path, "a"),
        other => panic!("expected a model error, got {other:?}"),
    }
}

/// Records every delivery (instant, message); passive or not as told; a `rogue`
/// one sends what it gets on (which a passive component may not do).
struct Recorder {
    passive: bool,
    rogue: bool,
    got: std::rc::Rc<std::cell::RefCell<Vec<(u64, u32)>>>,
    count: u64,
    /// Defers its input 0 at start; logs each of `timers` as (t, 1000 + t), and
    /// stops deferring at the timer at `wake`.
    defer: bool,
    timers: Vec<u64>,
    wake: u64,
}

impl Recorder {
    fn plain() -> Recorder {
        Recorder { passive: false, rogue: false, got: Default::default(), count: 0, defer: false, timers: vec![], wake: u64::MAX }
    }
}

/// Sends `plan` (instant, message) from its port 0 with `send_at` at start, and
/// `later` from a timer at 5.
struct Emitter {
    plan: Vec<(u64, u32)>,
    later: Vec<(u64, u32)>,
}

enum Part {
    R(Recorder),
    E(Emitter),
    /// Asks at start whether it may deliver ahead on its port 0 and keeps the answer.
    Q(std::rc::Rc<std::cell::Cell<Option<bool>>>),
    M(Marker),
}

/// Asks at start whether its port 0 keeps a lane (keeping the answer in `lane`),
/// sends `plan` ahead, and at 25, if it does, adds 100 to the messages sent ahead
/// `back` places before the last that still wait there (noting which it found).
struct Marker {
    plan: Vec<(u64, u32)>,
    back: Vec<usize>,
    lane: std::rc::Rc<std::cell::Cell<Option<bool>>>,
    found: std::rc::Rc<std::cell::RefCell<Vec<(usize, bool)>>>,
}

thread_local! {
    /// Whether emitters send their plans with one `send_at_each` instead of a
    /// `send_at` per message.
    static BATCH: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// What [`Component::observe`] was told, (time, component, port, message).
    static OBSERVED: std::cell::RefCell<Vec<(u64, CompId, PortId, u32)>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Component for Part {
    type Msg = u32;
    type Store = ();
    fn observe(time: SimTime, comp: CompId, port: PortId, msg: &u32, _store: &mut ()) {
        OBSERVED.with(|o| o.borrow_mut().push((time.0, comp, port, *msg)));
    }
    fn start(&mut self, ctx: &mut Ctx<'_, u32>) {
        if let Part::R(r) = self {
            if r.defer {
                r.defer = ctx.lanes().defer_input(0, true);
            }
            r.timers.iter().for_each(|&t| ctx.schedule_at(SimTime(t), 7));
        }
        if let Part::Q(q) = self {
            q.set(Some(ctx.lanes().may_deliver_ahead(0)));
        }
        if let Part::M(m) = self {
            m.lane.set(Some(ctx.lanes().keeps_lane(0)));
            m.plan.iter().for_each(|&(t, x)| ctx.send_at(SimTime(t), 0, x));
            ctx.schedule_at(SimTime(25), 1);
        }
        if let Part::E(e) = self {
            if BATCH.get() {
                ctx.lanes().send_at_each(0, e.plan.iter().map(|&(t, m)| (SimTime(t), m)));
            } else {
                e.plan.iter().for_each(|&(t, m)| ctx.send_at(SimTime(t), 0, m));
            }
            if !e.later.is_empty() {
                ctx.schedule_at(SimTime(5), 0);
            }
        }
    }
    fn on_timer(&mut self, _tag: u32, ctx: &mut Ctx<'_, u32>) {
        if let Part::R(r) = self {
            r.got.borrow_mut().push((ctx.now.0, 1000 + ctx.now.0 as u32));
            if ctx.now.0 == r.wake {
                ctx.lanes().defer_input(0, false);
            }
        }
        if let Part::E(e) = self {
            if BATCH.get() {
                ctx.lanes().send_at_each(0, e.later.iter().map(|&(t, m)| (SimTime(t), m)));
            } else {
                e.later.iter().for_each(|&(t, m)| ctx.send_at(SimTime(t), 0, m));
            }
        }
        if let Part::M(m) = self {
            if m.lane.get() == Some(true) {
                for &b in &m.back {
                    let got = ctx.lanes().sent_ahead_mut(0, b).map(|x| *x += 100).is_some();
                    m.found.borrow_mut().push((b, got));
                }
            }
        }
    }
    fn on_message(&mut self, _port: PortId, msg: u32, ctx: &mut Ctx<'_, u32>) {
        if let Part::R(r) = self {
            r.got.borrow_mut().push((ctx.now.0, msg));
            r.count += 1;
            if r.rogue {
                ctx.send(0, msg);
            }
        }
    }
    fn reset_stats(&mut self, _now: SimTime) {
        if let Part::R(r) = self {
            r.count = 0;
        }
    }
    fn report(&self, _now: SimTime, path: &str, out: &mut Report) {
        if let Part::R(r) = self {
            out.push(path, "count", "count", r.count as f64, "1");
        }
    }
    fn ledger(&self, l: &mut Ledger) {
        // Each message is a flow of its own: generated by its emitter, delivered
        // or still on its way.
        match self {
            Part::R(r) => r.got.borrow().iter().filter(|&&(_, m)| m < 1000).for_each(|&(_, m)| l.add_delivered(m, 1)),
            Part::E(e) => e.plan.iter().chain(&e.later).for_each(|&(_, m)| l.add_generated(m, 1)),
            // What still waited at 25 carries the mark.
            Part::M(m) => {
                let marked = m.lane.get() == Some(true);
                m.plan.iter().for_each(|&(t, x)| l.add_generated(if marked && t > 25 { x + 100 } else { x }, 1));
            }
            Part::Q(_) => {}
        }
    }
    fn sample(&self, _index: u64, _now: SimTime) -> f64 {
        match self {
            Part::R(r) => r.count as f64,
            Part::E(_) | Part::Q(_) | Part::M(_) => f64::NAN,
        }
    }
    fn passive(&self) -> bool {
        matches!(self, Part::R(r) if r.passive)
    }
    fn book(msg: &u32, l: &mut Ledger) {
        l.add_in_flight(*msg, 1);
    }
}

type Log = std::rc::Rc<std::cell::RefCell<Vec<(u64, u32)>>>;

/// Two emitters into `rec`; returns the run.
fn two_emitters_into(rec: Recorder, fast: bool, warmup: u64, sample: bool) -> RunOutcome {
    two_emitters_observed(rec, fast, warmup, sample, false)
}

/// [`two_emitters_into`], the run observing its deliveries or not.
fn two_emitters_observed(rec: Recorder, fast: bool, warmup: u64, sample: bool, observe: bool) -> RunOutcome {
    // Out of order across the two emitters, ties at 30 (sent in order a then b),
    // one at 100 (after the end), one at 5 from a timer at 5 (a zero-time send).
    let a = Part::E(Emitter { plan: vec![(10, 1), (30, 2), (50, 3), (100, 4)], later: vec![(5, 5), (40, 6)] });
    let b = Part::E(Emitter { plan: vec![(20, 7), (30, 8), (45, 9)], later: vec![] });
    let to = Some(Route { comp: 0, port: 0 });
    let mut sim = Simulation::new(vec![Part::R(rec), a, b], vec!["r".into(), "a".into(), "b".into()], vec![vec![], vec![to], vec![to]]);
    sim.fast_path(fast);
    sim.observe(observe);
    if sample {
        sim.sample_every(SimDuration(20), vec![SeriesProbe { comp: 0, index: 0, kind: SeriesKind::Level, scale: 1.0 }]);
    }
    sim.run(SimTime(60), SimTime(warmup), &mut |_, _| true).unwrap_or_else(|e| panic!("{e}"))
}

/// Observing tells of every delivery once, at its own instant, whether it was an
/// event, handed over late to a passive component or through a deferred input, and
/// changes nothing in the run.
#[test]
fn observing_tells_of_each_delivery_once_and_changes_nothing() {
    let want: Vec<(u64, CompId, PortId, u32)> = [(5, 5), (10, 1), (20, 7), (30, 2), (30, 8), (40, 6), (45, 9), (50, 3)].iter().map(|&(t, m)| (t, 0, 0, m)).collect();
    for (passive, defer, fast) in [(false, false, true), (true, false, true), (false, true, true), (false, false, false)] {
        let rec = || Recorder { passive, defer, ..Recorder::plain() };
        let plain = two_emitters_observed(rec(), fast, 0, true, false);
        OBSERVED.with(|o| o.borrow_mut().clear());
        let seen = two_emitters_observed(rec(), fast, 0, true, true);
        let mut got = OBSERVED.with(|o| o.borrow_mut().split_off(0));
        // Late hand-overs come after other events: in time order they are the
        // deliveries (a stable sort keeps an instant's order).
        got.sort_by_key(|x| x.0);
        assert_eq!(got, want, "passive {passive} defer {defer} fast {fast}");
        assert_eq!((plain.fingerprint, plain.events), (seen.fingerprint, seen.events), "passive {passive} defer {defer} fast {fast}");
        assert_eq!(plain.series.values, seen.series.values);
    }
}

/// Two emitters into one recorder; returns the run and the recorder's log.
fn timed(passive: bool, fast: bool, warmup: u64, sample: bool) -> (RunOutcome, Log) {
    let log: Log = Default::default();
    let rec = Recorder { passive, got: log.clone(), ..Recorder::plain() };
    (two_emitters_into(rec, fast, warmup, sample), log)
}

#[test]
fn timed_deliveries_arrive_in_time_order_passive_or_not() {
    let want = vec![(5, 5), (10, 1), (20, 7), (30, 2), (30, 8), (40, 6), (45, 9), (50, 3)];
    for (passive, fast) in [(false, true), (true, true), (true, false)] {
        let (out, log) = timed(passive, fast, 0, false);
        assert_eq!(*log.borrow(), want, "passive {passive} fast {fast}");
        // Still on its way at the end: message 4 (booked as flow 4).
        assert_eq!(out.ledger.in_flight.get(4), Some(&1), "passive {passive} fast {fast}");
    }
    // Passive: no event per delivery, but each is still counted as handled.
    let (evented, _) = timed(false, true, 0, false);
    let (lazy, _) = timed(true, true, 0, false);
    assert_eq!(evented.events, lazy.events);
}

#[test]
fn a_passive_component_is_up_to_date_at_warm_up_and_at_every_sample() {
    for warmup in [0, 30, 31, 45] {
        let (slow, _) = timed(true, false, warmup, true);
        let (fast, _) = timed(true, true, warmup, true);
        assert_eq!(slow.report.rows[0].value, fast.report.rows[0].value, "warm-up {warmup}");
        assert_eq!(slow.series.values, fast.series.values, "warm-up {warmup}");
    }
    // Sampling hands deliveries over at other moments: the trace is the same.
    let (plain, _) = timed(true, true, 30, false);
    let (sampled, _) = timed(true, true, 30, true);
    assert_eq!((plain.fingerprint, plain.events), (sampled.fingerprint, sampled.events));
    // Warm-up at 30: the reset comes before both deliveries at 30.
    let (out, _) = timed(true, true, 30, true);
    assert_eq!(out.report.rows[0].value, 5.0);
    // Samples at 20, 40, 60 (after the instant's deliveries): 3, then 2 + 3 since
    // the reset, then 2 + 5.
    assert_eq!(out.series.values[0], vec![3.0, 3.0, 5.0]);
}

/// [`timed`]'s two emitters into a recorder that defers its input (or not), with
/// timers at 25 and 45 and, if `wake`, no longer deferring from 25 on.
fn deferred(defer: bool, wake: bool, fast: bool, warmup: u64, sample: bool) -> (RunOutcome, Log) {
    let log: Log = Default::default();
    let rec = Recorder { got: log.clone(), defer, timers: vec![25, 45], wake: if wake { 25 } else { u64::MAX }, ..Recorder::plain() };
    (two_emitters_into(rec, fast, warmup, sample), log)
}

#[test]
fn deferred_messages_are_handed_over_in_time_order_before_the_components_next_instant() {
    // Message 5 is sent for now (from a timer at 5): never deferred. The timers at
    // 25 and 45 see every message before their instant; message 9 (at 45) comes
    // after the timer of its instant, as on the event path, where the timer was
    // scheduled first.
    let want = vec![(5, 5), (10, 1), (20, 7), (25, 1025), (30, 2), (30, 8), (40, 6), (45, 1045), (45, 9), (50, 3)];
    for (defer, wake, fast) in [(false, false, true), (true, false, true), (true, true, true), (true, false, false)] {
        let (out, log) = deferred(defer, wake, fast, 0, false);
        assert_eq!(*log.borrow(), want, "defer {defer} wake {wake} fast {fast}");
        assert_eq!(out.ledger.in_flight.get(4), Some(&1), "defer {defer} wake {wake} fast {fast}");
        assert_eq!(out.events, 11, "defer {defer} wake {wake} fast {fast}");
    }
}

#[test]
fn a_deferring_component_is_up_to_date_at_warm_up_and_at_every_sample() {
    for warmup in [0, 30, 31, 45] {
        let (events, _) = deferred(false, false, true, warmup, true);
        let (lazy, _) = deferred(true, false, true, warmup, true);
        assert_eq!(events.report.rows[0].value, lazy.report.rows[0].value, "warm-up {warmup}");
        assert_eq!(events.series.values, lazy.series.values, "warm-up {warmup}");
    }
    // Sampling hands messages over at other moments: the trace is the same.
    let (plain, _) = deferred(true, false, true, 30, false);
    let (sampled, _) = deferred(true, false, true, 30, true);
    assert_eq!((plain.fingerprint, plain.events), (sampled.fingerprint, sampled.events));
    // Deferring changes the trace's fingerprint (messages fold into the
    // component's own trace), stopping at 25 less so than never.
    let (never, _) = deferred(true, false, true, 0, false);
    let (woken, _) = deferred(true, true, true, 0, false);
    let (events, _) = deferred(false, false, true, 0, false);
    assert_ne!(never.fingerprint, events.fingerprint);
    assert_ne!(never.fingerprint, woken.fingerprint);
}

proptest::proptest! {
    /// Whatever two emitters send (in or out of time order, ties included) and
    /// whenever the recorder's timers fire or it stops deferring, a deferring
    /// recorder sees the same deliveries at the same instants as one that does not,
    /// in time order, with the same books.
    #[test]
    fn deferring_changes_no_delivery_and_no_instant(
        a in proptest::collection::vec(1u64..60, 0..12),
        b in proptest::collection::vec(1u64..60, 0..12),
        timers in proptest::collection::vec(1u64..60, 0..4),
        wake in proptest::option::of(1u64..60),
        warmup in 0u64..40,
    ) {
        let run = |defer: bool| {
            let log: Log = Default::default();
            let rec = Recorder { got: log.clone(), defer, timers: timers.clone(), wake: wake.unwrap_or(u64::MAX), ..Recorder::plain() };
            let ea = Part::E(Emitter { plan: a.iter().enumerate().map(|(i, &t)| (t, i as u32 + 1)).collect(), later: vec![] });
            let eb = Part::E(Emitter { plan: b.iter().enumerate().map(|(i, &t)| (t, i as u32 + 101)).collect(), later: vec![] });
            let to = Some(Route { comp: 0, port: 0 });
            let mut sim = Simulation::new(vec![Part::R(rec), ea, eb], vec!["r".into(), "a".into(), "b".into()], vec![vec![], vec![to], vec![to]]);
            sim.sample_every(SimDuration(7), vec![SeriesProbe { comp: 0, index: 0, kind: SeriesKind::Level, scale: 1.0 }]);
            let out = sim.run(SimTime(50), SimTime(warmup), &mut |_, _| true).unwrap_or_else(|e| panic!("{e}"));
            let got = log.borrow().clone();
            (out, got)
        };
        let ((plain, mut want), (lazy, mut got)) = (run(false), run(true));
        proptest::prop_assert!(got.windows(2).all(|w| w[0].0 <= w[1].0), "deferred: out of time order {:?}", got);
        want.sort_unstable();
        got.sort_unstable();
        proptest::prop_assert_eq!(got, want);
        proptest::prop_assert_eq!(lazy.report.rows[0].value, plain.report.rows[0].value);
        proptest::prop_assert_eq!(&lazy.series.values, &plain.series.values);
        proptest::prop_assert_eq!(lazy.events, plain.events);
        proptest::prop_assert_eq!(lazy.ledger.in_flight, plain.ledger.in_flight);
    }
}

#[test]
fn a_component_that_sends_while_handed_a_deferred_message_is_a_model_error() {
    let rec = Part::R(Recorder { rogue: true, defer: true, timers: vec![15], ..Recorder::plain() });
    let a = Part::E(Emitter { plan: vec![(10, 1), (20, 2)], later: vec![] });
    let to = Some(Route { comp: 0, port: 0 });
    let back = Some(Route { comp: 1, port: 0 });
    let sim = Simulation::new(vec![rec, a], vec!["r".into(), "a".into()], vec![vec![back], vec![to]]);
    match sim.run(SimTime(60), SimTime::ZERO, &mut |_, _| true) {
        Err(SimError::ModelPanic { path, msg, time }) => {
            assert_eq!((path.as_str(), time), ("r", SimTime(10)));
            assert!(msg.contains("deferred"), "{msg}");
        }
        other => panic!("expected a model error, got {other:?}"),
    }
}

#[test]
fn a_passive_component_that_sends_is_a_model_error() {
    let rec = Part::R(Recorder { passive: true, rogue: true, ..Recorder::plain() });
    let a = Part::E(Emitter { plan: vec![(10, 1), (20, 2)], later: vec![] });
    let to = Some(Route { comp: 0, port: 0 });
    let back = Some(Route { comp: 1, port: 0 });
    let sim = Simulation::new(vec![rec, a], vec!["r".into(), "a".into()], vec![vec![back], vec![to]]);
    match sim.run(SimTime(60), SimTime::ZERO, &mut |_, _| true) {
        Err(SimError::ModelPanic { path, msg, .. }) => {
            assert_eq!(path, "r");
            assert!(msg.contains("passive"), "{msg}");
        }
        other => panic!("expected a model error, got {other:?}"),
    }
}

/// Whether a component may deliver ahead: always to a passive one (with the fast
/// path on); to an ordinary one only with the fast path and delivering ahead on;
/// never on an unwired port.
#[test]
fn delivering_ahead_is_allowed_as_the_run_says() {
    let ask = |passive: bool, fast: bool, ahead: bool, wired: bool| {
        let answer: std::rc::Rc<std::cell::Cell<Option<bool>>> = Default::default();
        let rec = Part::R(Recorder { passive, ..Recorder::plain() });
        let q = Part::Q(answer.clone());
        let to = wired.then_some(Route { comp: 0, port: 0 });
        let mut sim = Simulation::new(vec![rec, q], vec!["r".into(), "q".into()], vec![vec![], vec![to]]);
        sim.fast_path(fast);
        sim.deliver_ahead(ahead);
        sim.run(SimTime(10), SimTime::ZERO, &mut |_, _| true).unwrap_or_else(|e| panic!("{e}"));
        answer.get().unwrap_or_else(|| panic!("start did not run"))
    };
    assert!(ask(true, true, false, true));
    assert!(ask(true, true, true, true));
    assert!(!ask(true, false, true, true));
    assert!(ask(false, true, true, true));
    assert!(!ask(false, true, false, true));
    assert!(!ask(false, false, true, true));
    assert!(!ask(false, true, true, false));
}

/// A port wired back into its own component never delivers ahead, even with the
/// fast path and delivering ahead on (a switch's fibre loop): the exact path's order
/// of its own events stays.
#[test]
fn a_component_never_delivers_ahead_to_itself() {
    let ask = |to_itself: bool| {
        let answer: std::rc::Rc<std::cell::Cell<Option<bool>>> = Default::default();
        let rec = Part::R(Recorder::plain());
        let q = Part::Q(answer.clone());
        let to = Some(Route { comp: if to_itself { 1 } else { 0 }, port: 0 });
        let mut sim = Simulation::new(vec![rec, q], vec!["r".into(), "q".into()], vec![vec![], vec![to]]);
        sim.fast_path(true);
        sim.deliver_ahead(true);
        sim.run(SimTime(10), SimTime::ZERO, &mut |_, _| true).unwrap_or_else(|e| panic!("{e}"));
        answer.get().unwrap_or_else(|| panic!("start did not run"))
    };
    assert!(ask(false));
    assert!(!ask(true));
}

/// Deliveries to an ordinary component sent from one port in time order wait on
/// that port's lane, and only its first is an event: a lane's next message takes its
/// place among the events of its instant when the one before it is delivered
/// (ordering rule 5). Here a's 2 (at 10, sent before b's 4) comes after b's 4,
/// which was scheduled at start, after a's 1; an earlier instant sent after later
/// ones (a's 5 from the timer at 5) goes around the lane and still comes in time.
#[test]
fn a_lane_orders_its_next_delivery_when_the_one_before_is_delivered() {
    let log: Log = Default::default();
    let rec = Part::R(Recorder { got: log.clone(), ..Recorder::plain() });
    let a = Part::E(Emitter { plan: vec![(10, 1), (10, 2), (20, 3), (100, 6)], later: vec![(7, 5)] });
    let b = Part::E(Emitter { plan: vec![(10, 4)], later: vec![] });
    let to = Some(Route { comp: 0, port: 0 });
    let sim = Simulation::new(vec![rec, a, b], vec!["r".into(), "a".into(), "b".into()], vec![vec![], vec![to], vec![to]]);
    let out = sim.run(SimTime(60), SimTime::ZERO, &mut |_, _| true).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(*log.borrow(), vec![(7, 5), (10, 1), (10, 4), (10, 2), (20, 3)]);
    // Message 6 is still on its lane at the end: booked in flight.
    assert_eq!(out.ledger.in_flight.get(6), Some(&1));
}

/// A message sent ahead can still be changed by its sender while it waits in its
/// port's lane, counted from the last one sent (here, at 25, the messages due at
/// 30 and 40: those due at 10 and 20 are delivered, so nothing is found three
/// places back). A port keeps a lane only to an ordinary component in a run that
/// delivers ahead.
#[test]
fn a_message_sent_ahead_can_be_changed_while_it_waits_in_its_lane() {
    let run = |passive: bool, ahead: bool| {
        let log: Log = Default::default();
        let lane: std::rc::Rc<std::cell::Cell<Option<bool>>> = Default::default();
        let found: std::rc::Rc<std::cell::RefCell<Vec<(usize, bool)>>> = Default::default();
        let rec = Part::R(Recorder { passive, got: log.clone(), ..Recorder::plain() });
        let m = Part::M(Marker { plan: vec![(10, 1), (20, 2), (30, 3), (40, 4)], back: vec![0, 1, 2], lane: lane.clone(), found: found.clone() });
        let to = Some(Route { comp: 0, port: 0 });
        let mut sim = Simulation::new(vec![rec, m], vec!["r".into(), "m".into()], vec![vec![], vec![to]]);
        sim.deliver_ahead(ahead);
        if let Err(e) = sim.run(SimTime(60), SimTime::ZERO, &mut |_, _| true) {
            panic!("{e}");
        }
        let got = log.borrow().clone();
        let found = found.borrow().clone();
        (got, lane.get(), found)
    };
    let (got, lane, found) = run(false, true);
    assert_eq!(lane, Some(true));
    assert_eq!(got, vec![(10, 1), (20, 2), (30, 103), (40, 104)]);
    assert_eq!(found, vec![(0, true), (1, true), (2, false)]);
    // No lane of its own: to a passive component, or without delivering ahead.
    for (passive, ahead) in [(true, true), (false, false)] {
        let (got, lane, found) = run(passive, ahead);
        assert_eq!(lane, Some(false), "passive {passive} ahead {ahead}");
        assert_eq!(got, vec![(10, 1), (20, 2), (30, 3), (40, 4)], "passive {passive} ahead {ahead}");
        assert!(found.is_empty());
    }
}

/// `send_at_each` is `send_at` of each message in turn: the same deliveries at the
/// same instants and the same fingerprint, whether the messages go on behind others
/// in a lane, into an empty one, out of order (40 after 50), at the sending instant
/// (5 at 5), to a passive receiver or one that defers its input, delivering ahead
/// or not.
#[test]
fn sending_a_train_at_once_is_sending_each_in_turn() {
    for (passive, defer, ahead) in [(false, false, true), (false, true, true), (true, false, true), (false, false, false)] {
        let run = |batch: bool| {
            BATCH.with(|b| b.set(batch));
            let log: Log = Default::default();
            let rec = Recorder { passive, defer, got: log.clone(), ..Recorder::plain() };
            let a = Part::E(Emitter { plan: vec![(10, 1), (30, 2), (50, 3), (100, 4)], later: vec![(5, 5), (40, 6)] });
            let b = Part::E(Emitter { plan: vec![(20, 7), (30, 8), (45, 9)], later: vec![] });
            let to = Some(Route { comp: 0, port: 0 });
            let mut sim = Simulation::new(vec![Part::R(rec), a, b], vec!["r".into(), "a".into(), "b".into()], vec![vec![], vec![to], vec![to]]);
            sim.deliver_ahead(ahead);
            let out = sim.run(SimTime(60), SimTime::ZERO, &mut |_, _| true).unwrap_or_else(|e| panic!("{e}"));
            BATCH.with(|b| b.set(false));
            let got = log.borrow().clone();
            (out.fingerprint, out.events, got)
        };
        let (one, each) = (run(false), run(true));
        assert_eq!(one.2, vec![(5, 5), (10, 1), (20, 7), (30, 2), (30, 8), (40, 6), (45, 9), (50, 3)], "passive {passive} defer {defer} ahead {ahead}");
        assert_eq!(each, one, "passive {passive} defer {defer} ahead {ahead}");
    }
}
