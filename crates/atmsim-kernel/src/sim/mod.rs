//! The simulation engine: components, ports, dispatch, warm-up, fingerprint.
//!
//! A model is a type implementing [`Component`]; a whole simulation holds a `Vec` of one
//! closed enum of all model kinds, so dispatch is a `match`, statically compiled, with no
//! `dyn` call and no allocation per event. Components talk through numbered ports: a
//! component calls [`Ctx::send`] on one of its output ports, and the kernel delivers the
//! message, at the same instant, to the input port wired to it. Zero-time deliveries go
//! through a FIFO outbox and are handled before the next timed event, in the order they
//! were sent (breadth first), so a chain source → queue → sink costs no heap operations.
//! Anything that takes time (transmission, propagation, processing) is a timer the
//! component schedules on itself with [`Ctx::schedule_at`] while keeping the data.
//!
//! *Timed deliveries.* [`Ctx::send_at`] hands a message over for delivery at a later
//! instant (a FIFO server that computes each departure on arrival, see
//! docs/architecture.md, "Timed deliveries"). To an ordinary component it is one event
//! carrying the message; what one output port sends in time order waits on that
//! port's lane, and only the lane's first is in the event queue. A *passive* component ([`Component::passive`]: one that only
//! records what it receives — never schedules, never sends) takes its timed deliveries
//! without an event each: they wait in a list sorted by (instant, order of sending) and
//! are handed over, each with `now` set to its own instant, in batches once enough wait,
//! before a zero-time delivery to it, and before the warm-up reset, every sample
//! and the end of the run — so at every instant anything outside can observe, the
//! component has seen exactly the deliveries due by then, in time order (the
//! fingerprint folds them per component, in that order, so that when the kernel hands
//! them over — which sampling changes — does not change the trace). Components
//! that compute state ahead of time likewise bring it up to date in
//! [`Component::settle`]. `Simulation::fast_path(false)` turns all of this off (no
//! component is passive): the equivalence tests compare the two.
//!
//! The event-trace fingerprint is a running 64-bit hash of (time, component, event kind)
//! for every timer and every message delivery; equal fingerprints mean equal traces.
//! With [`Simulation::fingerprint_content`] it also covers what each delivered message
//! carries ([`Component::digest`]), so that two runs delivering different messages at
//! the same instants differ (a run option: it costs about 5% on the plain cell queue;
//! the golden-fingerprint tests always turn it on).

mod lanes;
pub use lanes::Lanes;

use std::collections::VecDeque;

use crate::error::SimError;
use crate::ledger::Ledger;
use crate::probe::Report;
use crate::queue::{CompId, EventQueue};
use crate::series::{Sampler, SeriesOut, SeriesProbe};
use crate::time::{SimDuration, SimTime};

/// Port number on a component (inputs and outputs are numbered separately).
pub type PortId = u16;

/// Per-run state a model set shares through [`Ctx::store`] (atmsim's models keep
/// message payloads there). The kernel knows nothing of what it holds; at the end of a
/// run it asks for its books ([`Ledger::payloads_live`]), so a payload that was never
/// released fails the conservation check like a lost cell.
pub trait RunStore: Default {
    /// The run has ended: finish what the store writes outside the run (capture
    /// files). An error fails the run ([`SimError::Output`]).
    fn close(&mut self) -> Result<(), String> {
        Ok(())
    }
    /// Adds what the store still holds to the ledger.
    fn ledger(&self, ledger: &mut Ledger) {
        let _ = ledger;
    }
    /// Whether something in the store watches every delivery ([`Component::observe`]):
    /// read when the run starts, as [`Simulation::observe`] is.
    fn observes_deliveries(&self) -> bool {
        false
    }
}

impl RunStore for () {}

/// A model component.
pub trait Component {
    /// The message type that crosses ports.
    type Msg;
    /// The per-run store handlers reach through [`Ctx::store`] (`()` for none).
    type Store: RunStore;
    /// Called once at time zero, in component order.
    fn start(&mut self, ctx: &mut Ctx<'_, Self::Msg, Self::Store>);
    /// A timer this component scheduled has fired.
    fn on_timer(&mut self, tag: u32, ctx: &mut Ctx<'_, Self::Msg, Self::Store>);
    /// A message arrived on input port `port`.
    fn on_message(&mut self, port: PortId, msg: Self::Msg, ctx: &mut Ctx<'_, Self::Msg, Self::Store>);
    /// Warm-up deletion: forget statistics gathered before `now`.
    fn reset_stats(&mut self, now: SimTime);
    /// Write this component's probe rows; `path` is its name.
    fn report(&self, now: SimTime, path: &str, out: &mut Report);
    /// Add this component's cells to the conservation ledger.
    fn ledger(&self, ledger: &mut Ledger);
    /// A digest of what `msg` carries (the fields models act on and its payload's
    /// contents, read from the run's `store`), folded into the fingerprint with each
    /// delivery so that two runs delivering different messages at the same instants
    /// differ. The default says nothing about the message.
    #[inline(always)]
    fn digest(msg: &Self::Msg, store: &Self::Store) -> u64 {
        let _ = (msg, store);
        0
    }
    /// In a run that observes its deliveries ([`Simulation::observe`]): `msg` is
    /// delivered to input `port` of component `comp` at `time` (each delivery once, at
    /// its own instant, whether it was an event or handed over late). The default
    /// ignores it.
    #[inline(always)]
    fn observe(time: SimTime, comp: CompId, port: PortId, msg: &Self::Msg, store: &mut Self::Store) {
        let _ = (time, comp, port, msg, store);
    }
    /// The current value of the quantity `index` (an index this component handed out
    /// when a series was resolved; see [`crate::series`]). Only read, never while an
    /// event is being handled.
    fn sample(&self, index: u64, now: SimTime) -> f64 {
        let _ = (index, now);
        f64::NAN
    }
    /// Whether this component is passive: it only records what it receives (it never
    /// schedules a timer or sends a message), so the kernel may hand it timed
    /// deliveries late, in time order, without an event each (see the module doc).
    fn passive(&self) -> bool {
        false
    }
    /// Brings state this component computes ahead of time up to date with every
    /// instant before `before` (called before the warm-up reset, each sample and the
    /// report). Nothing to do for most.
    fn settle(&mut self, before: SimTime) {
        let _ = before;
    }
    /// Books a message the kernel still holds at the end of the run (a timed delivery
    /// not yet due) in the conservation ledger.
    fn book(msg: &Self::Msg, ledger: &mut Ledger) {
        let _ = (msg, ledger);
    }
}

/// A message on its way from an output port.
struct Outgoing<M> {
    msg: M,
    src: CompId,
    port: PortId,
}

/// Messages sent and not yet delivered, oldest first. Most handlers send at most one,
/// so the oldest sits in `first` (no queue operation at all); the others queue in
/// `rest`. `first` is filled only when `rest` is empty, so it is always the oldest.
struct Mail<M> {
    first: Option<Outgoing<M>>,
    rest: VecDeque<Outgoing<M>>,
}

impl<M> Mail<M> {
    #[inline(always)]
    fn post(&mut self, o: Outgoing<M>) {
        if self.first.is_none() && self.rest.is_empty() {
            self.first = Some(o);
        } else {
            self.rest.push_back(o);
        }
    }
    /// Messages waiting (to tell whether a handler sent any).
    #[inline(always)]
    fn len(&self) -> usize {
        usize::from(self.first.is_some()) + self.rest.len()
    }
    #[inline(always)]
    fn next(&mut self) -> Option<Outgoing<M>> {
        match self.first.take() {
            Some(o) => Some(o),
            None => self.rest.pop_front(),
        }
    }
}

/// A timed delivery waiting for a passive component: its instant, the input port and
/// the message (the list keeps them in order of sending within an instant).
struct Later<M> {
    time: SimTime,
    port: PortId,
    msg: M,
}

/// The flag on an event's component id marking a timed delivery (its tag is the slot
/// holding the message). Component ids never reach it.
const TIMED: CompId = 1 << 31;

/// The flag on a timed-delivery event's tag marking a lane's head (the rest of the tag
/// is the route's index); without it the tag is a slab slot.
const LANE: u32 = 1 << 31;

/// A passive component's timed deliveries are handed over once this many wait (or
/// whenever something may observe it): one hand-over loop per batch, not per delivery.
const LATER_BATCH: usize = 128;

/// What handlers change besides their component: the future-event list, the mail, a
/// reported fault, the run's store, and the timed deliveries. One struct, so that a
/// `Ctx` is three words to set up per event. The wiring (`port_base`, `routes`) and
/// which components are passive are here too, read-only, so that a handler's
/// [`Ctx::send_at`] can place its message at once.
struct Core<M, S> {
    queue: EventQueue,
    mail: Mail<M>,
    fault: Option<String>,
    store: S,
    port_base: Vec<u32>,
    routes: Vec<Route>,
    passive: Vec<bool>,
    /// Whether components may hand messages to ordinary (not passive) components ahead
    /// of time ([`Lanes::may_deliver_ahead`]).
    ahead: bool,
    /// Per passive component, its timed deliveries not yet handed over, in (instant,
    /// sending order); empty for the others.
    later: Vec<std::collections::VecDeque<Later<M>>>,
    /// Passive components with a delivery due before the current instant.
    due: Vec<CompId>,
    /// Whether the handler running now left work for the kernel (mail, a fault, a
    /// passive delivery due): one test after each event instead of three.
    dirty: bool,
    /// Per route (output port), the timed deliveries to an ordinary component sent on
    /// it in time order, not yet due: only the first is an event in the queue (a lane).
    lanes: Vec<VecDeque<(SimTime, M)>>,
    /// Messages of pending timed-delivery events (input port, message), by slot: those
    /// sent earlier than the last one waiting on their lane.
    slab: Vec<Option<(PortId, M)>>,
    free: Vec<u32>,
    /// Per component, the input ports it defers ([`Lanes::defer_input`]), one bit each.
    deferred: Vec<u64>,
    /// Per route, whether its lane's first is an event in the queue (a lane into a
    /// deferred port waits without one).
    armed: Vec<bool>,
    /// Per component, the routes (lanes) that lead to it.
    into: Vec<Vec<u32>>,
    /// Set while the kernel hands a component its deferred messages.
    handing_deferred: bool,
}

impl<M, S> Core<M, S> {
    /// Reports a broken model invariant (the first one stands); the run stops after
    /// the current handler.
    #[cold]
    fn fail(&mut self, msg: String) {
        self.dirty = true;
        if self.fault.is_none() {
            self.fault = Some(msg);
        }
    }
    #[inline(always)]
    fn route(&self, src: CompId, port: PortId) -> Route {
        self.routes.get(self.route_index(src, port)).copied().unwrap_or(NO_ROUTE)
    }
    /// The index of output port `port` of `src` among all routes (lanes).
    #[inline(always)]
    fn route_index(&self, src: CompId, port: PortId) -> usize {
        self.port_base[src as usize] as usize + port as usize
    }
    /// Whether input `port` of `comp` is deferred.
    #[inline(always)]
    fn defers(&self, comp: CompId, port: PortId) -> bool {
        port < 64 && self.deferred.get(comp as usize).is_some_and(|d| d & (1 << port) != 0)
    }
    /// Whether `comp` defers any input.
    #[inline(always)]
    fn defers_any(&self, comp: CompId) -> bool {
        self.deferred.get(comp as usize).is_some_and(|&d| d != 0)
    }
}

/// What a component may do while handling an event.
pub struct Ctx<'a, M, S = ()> {
    /// The current instant.
    pub now: SimTime,
    id: CompId,
    core: &'a mut Core<M, S>,
}

impl<'a, M, S> Ctx<'a, M, S> {
    /// The run's store (see [`RunStore`]).
    #[inline(always)]
    pub fn store(&mut self) -> &mut S {
        &mut self.core.store
    }
    /// Schedules timer `tag` on this component at `t`. A time in the past is a model bug:
    /// the run stops with [`SimError::ModelPanic`].
    #[inline(always)]
    pub fn schedule_at(&mut self, t: SimTime, tag: u32) {
        if t < self.now {
            self.fail(format!("timer {tag} scheduled in the past ({t} < {})", self.now));
            return;
        }
        self.core.queue.schedule(t, self.id, tag);
    }
    /// Schedules timer `tag` on this component after `d`.
    #[inline(always)]
    pub fn schedule_in(&mut self, d: SimDuration, tag: u32) {
        self.core.queue.schedule(self.now.plus(d), self.id, tag);
    }
    /// Sends `msg` out of output port `port`, delivered at this same instant.
    #[inline(always)]
    pub fn send(&mut self, port: PortId, msg: M) {
        self.core.mail.post(Outgoing { msg, src: self.id, port });
        self.core.dirty = true;
    }
    /// Sends `msg` out of output port `port` for delivery at `t` (not before now; at
    /// now it is [`Ctx::send`]). Messages sent from one port for the same instant are
    /// delivered in the order they were sent.
    #[inline(always)]
    pub fn send_at(&mut self, t: SimTime, port: PortId, msg: M) {
        if t <= self.now {
            if t < self.now {
                self.fail(format!("delivery on port {port} sent into the past ({t} < {})", self.now));
            }
            self.send(port, msg);
            return;
        }
        let route = self.core.route(self.id, port);
        if route.comp == CompId::MAX {
            self.fail(format!("send on unwired output port {port}"));
            return;
        }
        let core = &mut *self.core;
        if core.passive.get(route.comp as usize).copied().unwrap_or(false) {
            let q = &mut core.later[route.comp as usize];
            let entry = Later { time: t, port: route.port, msg };
            // Usually the latest instant: the list stays sorted, ties in sending order.
            match q.back() {
                Some(b) if b.time > t => {
                    let at = q.partition_point(|e| e.time <= t);
                    q.insert(at, entry);
                }
                _ => q.push_back(entry),
            }
            // Handed over in batches: nothing outside sees a passive component between
            // the points where the kernel brings it up to date (see the module doc).
            if q.len() >= LATER_BATCH && q.front().is_some_and(|e| e.time < self.now) && core.due.last() != Some(&route.comp) {
                core.due.push(route.comp);
                core.dirty = true;
            }
        } else {
            // A lane: deliveries from one port in time order wait in a FIFO, and only
            // its first is an event (one heap entry per busy port, not per message in
            // flight). Its next becomes an event when it is delivered.
            let idx = core.route_index(self.id, port) as u32;
            // A lane into a deferred input waits without an event (see
            // [`Lanes::defer_input`]).
            let waits = core.defers(route.comp, route.port);
            if let Some(lane) = core.lanes.get_mut(idx as usize) {
                match lane.back() {
                    None => {
                        lane.push_back((t, msg));
                        if !waits {
                            core.queue.schedule(t, route.comp | TIMED, LANE | idx);
                            if let Some(a) = core.armed.get_mut(idx as usize) {
                                *a = true;
                            }
                        }
                        return;
                    }
                    Some(b) if b.0 <= t => {
                        lane.push_back((t, msg));
                        return;
                    }
                    Some(_) => {}
                }
            }
            let slot = match core.free.pop() {
                Some(s) => {
                    core.slab[s as usize] = Some((route.port, msg));
                    s
                }
                None => {
                    core.slab.push(Some((route.port, msg)));
                    (core.slab.len() - 1) as u32
                }
            };
            core.queue.schedule(t, route.comp | TIMED, slot);
        }
    }
    /// The timed-delivery lanes' capability, for the few models that hand cells over
    /// ahead of time or defer inputs ([`Lanes`]).
    #[inline(always)]
    pub fn lanes(&mut self) -> Lanes<'_, 'a, M, S> {
        Lanes { ctx: self }
    }
    /// Reports a broken model invariant; the run stops after this handler.
    pub fn fail(&mut self, msg: String) {
        self.core.fail(msg);
    }
    pub fn id(&self) -> CompId {
        self.id
    }
}

/// Where an output port leads: (component, input port).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    pub comp: CompId,
    pub port: PortId,
}

const NO_ROUTE: Route = Route { comp: CompId::MAX, port: PortId::MAX };

/// What a finished run reports besides the probes.
#[derive(Clone, Debug)]
pub struct RunOutcome<S = ()> {
    pub fingerprint: u64,
    /// Events handled: timers and message deliveries (zero-time, timed, handed over
    /// to passive components or through deferred inputs).
    pub events: u64,
    /// Of those, how many were put on the future-event list (timers and timed
    /// deliveries that were events of their own), including any still pending at the end.
    pub scheduled: u64,
    pub end: SimTime,
    pub report: Report,
    pub ledger: Ledger,
    /// The time series asked for with [`Simulation::sample_every`] (empty otherwise).
    pub series: SeriesOut,
    /// Wall-clock seconds of the event loop alone (from the first event to the end
    /// instant: not the components' start, nor the report and the ledger).
    pub loop_s: f64,
    /// The run's store as the run left it (closed: [`RunStore::close`]).
    pub store: S,
}

/// Progress callbacks come every this many events.
pub const PROGRESS_EVERY: u64 = 1 << 16;

/// A built simulation, ready to run once.
pub struct Simulation<C: Component> {
    comps: Vec<C>,
    paths: Vec<String>,
    core: Core<C::Msg, C::Store>,
    /// Let passive components take timed deliveries without an event each.
    fast_path: bool,
    /// Let components hand messages to ordinary components ahead of time.
    deliver_ahead: bool,
    fingerprint: u64,
    /// Per passive component, the fingerprint of the timed deliveries handed to it
    /// (folded into `fingerprint` at the end of the run).
    later_fp: Vec<u64>,
    /// Fold each delivered message's [`Component::digest`] into the fingerprint.
    content: bool,
    /// Tell [`Component::observe`] of every delivery.
    observe: bool,
    events: u64,
    series: Option<(SimDuration, Vec<SeriesProbe>)>,
}

#[inline]
fn mix(h: u64, v: u64) -> u64 {
    (h.rotate_left(5) ^ v).wrapping_mul(0x517c_c1b7_2722_0a95)
}

impl<C: Component> Simulation<C> {
    /// `routes[c][p]` is where output port `p` of component `c` leads (None: unwired,
    /// which the scenario builder never produces; a send on it stops the run).
    pub fn new(comps: Vec<C>, paths: Vec<String>, routes: Vec<Vec<Option<Route>>>) -> Self {
        let mut port_base = Vec::with_capacity(comps.len());
        let mut flat = Vec::new();
        for r in &routes {
            port_base.push(flat.len() as u32);
            flat.extend(r.iter().map(|x| x.unwrap_or(NO_ROUTE)));
        }
        while port_base.len() < comps.len() {
            port_base.push(flat.len() as u32);
        }
        let n = comps.len();
        let lanes = (0..flat.len()).map(|_| VecDeque::new()).collect();
        let n_routes = flat.len();
        let mut into = vec![Vec::new(); n];
        for (i, r) in flat.iter().enumerate() {
            if let Some(v) = into.get_mut(r.comp as usize) {
                v.push(i as u32);
            }
        }
        Simulation {
            comps,
            paths,
            core: Core {
                queue: EventQueue::with_capacity(1024),
                mail: Mail { first: None, rest: VecDeque::with_capacity(64) },
                fault: None,
                store: C::Store::default(),
                port_base,
                routes: flat,
                passive: vec![false; n],
                ahead: false,
                later: (0..n).map(|_| VecDeque::new()).collect(),
                lanes,
                due: Vec::new(),
                dirty: false,
                slab: Vec::new(),
                free: Vec::new(),
                deferred: vec![0; n],
                armed: vec![false; n_routes],
                into,
                handing_deferred: false,
            },
            fast_path: true,
            deliver_ahead: true,
            later_fp: vec![0; n],
            fingerprint: 0xcbf2_9ce4_8422_2325,
            content: false,
            observe: false,
            events: 0,
            series: None,
        }
    }

    /// Makes the fingerprint cover what each delivered message carries, not only when
    /// and where it was delivered (see the module doc).
    pub fn fingerprint_content(&mut self, on: bool) {
        self.content = on;
    }

    /// Tells [`Component::observe`] of every message delivery (a cell trace). It runs
    /// the instrumented loop, as [`Simulation::fingerprint_content`] does, and changes
    /// nothing in the run: same events, same fingerprint.
    pub fn observe(&mut self, on: bool) {
        self.observe = on;
    }

    /// Whether passive components take timed deliveries without an event each (on by
    /// default; off, every timed delivery is an event and no component sees
    /// [`Lanes::passive_downstream`] true, so components that choose a fast path by it
    /// take their exact one).
    pub fn fast_path(&mut self, on: bool) {
        self.fast_path = on;
    }

    /// Whether components may also hand messages to ordinary components ahead of time
    /// ([`Lanes::may_deliver_ahead`]; on by default, and only with the fast path on).
    /// Each such delivery is one event, ordered among the events of its instant by when
    /// it was sent, so the order of simultaneous events there may differ from the
    /// exact path's; off, only passive components are handed messages ahead (every
    /// statistic then equals the exact path's).
    pub fn deliver_ahead(&mut self, on: bool) {
        self.deliver_ahead = on;
    }

    /// The run's store, to configure it before the run (e.g. a checking mode).
    pub fn store_mut(&mut self) -> &mut C::Store {
        &mut self.core.store
    }

    /// Samples `probes` every `interval` during the run (see [`crate::series`]).
    pub fn sample_every(&mut self, interval: SimDuration, probes: Vec<SeriesProbe>) {
        if interval.ps() > 0 && !probes.is_empty() {
            self.series = Some((interval, probes));
        }
    }

    fn read_all(&self, sampler: &Sampler, now: SimTime) -> Vec<f64> {
        sampler.probes().iter().map(|p| self.comps[p.comp as usize].sample(p.index, now)).collect()
    }

    /// Brings sampling and the warm-up up to date, in time order: samples at instants
    /// before `sample_before` and the warm-up reset if it falls at or before
    /// `warm_upto` (a reset at the warm-up instant comes before the events of that
    /// instant, a sample after them).
    #[cold]
    fn catch_up<const CONTENT: bool>(&mut self, sample_before: SimTime, warm_upto: SimTime, warmup: SimTime, warm: &mut bool, sampler: &mut Option<Sampler>) -> Result<(), SimError> {
        loop {
            let s_next = sampler.as_ref().map(|s| s.next).filter(|&s| s < sample_before);
            let w_due = !*warm && warmup <= warm_upto;
            match (s_next, w_due) {
                (None, false) => return Ok(()),
                (Some(s), true) if s < warmup => self.take_sample::<CONTENT>(sampler, s)?,
                (Some(s), false) => self.take_sample::<CONTENT>(sampler, s)?,
                (_, true) => {
                    self.settle_all::<CONTENT>(warmup)?;
                    let before = sampler.as_ref().map(|s| self.read_all(s, warmup));
                    self.comps.iter_mut().for_each(|c| c.reset_stats(warmup));
                    let after = sampler.as_ref().map(|s| self.read_all(s, warmup));
                    if let (Some(s), Some(before), Some(after)) = (sampler.as_mut(), before, after) {
                        s.carry_reset(&before, &after);
                    }
                    *warm = true;
                }
            }
        }
    }

    fn take_sample<const CONTENT: bool>(&mut self, sampler: &mut Option<Sampler>, at: SimTime) -> Result<(), SimError> {
        // A sample shows the state after every event of its instant.
        self.settle_all::<CONTENT>(SimTime(at.0.saturating_add(1)))?;
        if let Some(s) = sampler.as_mut() {
            let comps = &self.comps;
            s.sample(&mut |p| comps[p.comp as usize].sample(p.index, at));
        }
        Ok(())
    }

    /// Brings every component up to date with the instants before `before`: state
    /// computed ahead of time ([`Component::settle`]) and passive components' timed
    /// deliveries due before it.
    #[cold]
    fn settle_all<const CONTENT: bool>(&mut self, before: SimTime) -> Result<(), SimError> {
        for c in 0..self.comps.len() {
            self.comps[c].settle(before);
            if !self.core.later[c].is_empty() {
                self.hand_over::<CONTENT>(c as CompId, before)?;
            }
            if self.core.defers_any(c as CompId) {
                self.hand_over_deferred::<CONTENT>(c as CompId, before)?;
            }
        }
        Ok(())
    }

    fn model_panic(&self, comp: CompId, now: SimTime, msg: String) -> SimError {
        let path = self.paths.get(comp as usize).cloned().unwrap_or_else(|| format!("#{comp}"));
        SimError::ModelPanic { path, time: now, msg }
    }

    /// Delivers zero-time messages until none is left, in the order they were sent
    /// (breadth first: what a delivery sends comes after everything already sent).
    #[inline(always)]
    fn drain<const CONTENT: bool>(&mut self, now: SimTime) -> Result<(), SimError> {
        while let Some(Outgoing { msg, src, port }) = self.core.mail.next() {
            let route = self.core.route(src, port);
            if route.comp == CompId::MAX {
                return Err(self.model_panic(src, now, format!("send on unwired output port {port}")));
            }
            if !self.core.later[route.comp as usize].is_empty() {
                // A passive component first sees what was due up to now.
                self.hand_over::<CONTENT>(route.comp, SimTime(now.0.saturating_add(1)))?;
            }
            if self.core.defers_any(route.comp) {
                self.hand_over_deferred::<CONTENT>(route.comp, now)?;
            }
            self.fingerprint = mix(mix(self.fingerprint, now.0), ((route.comp as u64) << 32) | 0x8000_0000 | route.port as u64);
            if CONTENT {
                if self.content {
                    self.fingerprint = mix(self.fingerprint, C::digest(&msg, &self.core.store));
                }
                if self.observe {
                    C::observe(now, route.comp, route.port, &msg, &mut self.core.store);
                }
            }
            self.events += 1;
            let mut ctx = Ctx { now, id: route.comp, core: &mut self.core };
            self.comps[route.comp as usize].on_message(route.port, msg, &mut ctx);
            if self.core.fault.is_some() {
                let m = self.core.fault.take().unwrap_or_default();
                return Err(self.model_panic(route.comp, now, m));
            }
        }
        Ok(())
    }

    /// What a handler left to do: its fault, its mail (and what that sends in turn),
    /// passive components' deliveries now due.
    #[inline(always)]
    fn after_event<const CONTENT: bool>(&mut self, comp: CompId, now: SimTime) -> Result<(), SimError> {
        if self.core.fault.is_some() {
            let m = self.core.fault.take().unwrap_or_default();
            return Err(self.model_panic(comp, now, m));
        }
        if self.core.mail.first.is_some() {
            self.drain::<CONTENT>(now)?;
        }
        if !self.core.due.is_empty() {
            self.hand_over_due::<CONTENT>(now)?;
        }
        self.core.dirty = false;
        Ok(())
    }

    /// Runs over `[0, end)`, deleting statistics gathered before `warmup`. `progress` is
    /// called every [`PROGRESS_EVERY`] events with (now, events); returning false stops
    /// the run with [`SimError::Interrupted`].
    pub fn run(
        mut self,
        end: SimTime,
        warmup: SimTime,
        progress: &mut dyn FnMut(SimTime, u64) -> bool,
    ) -> Result<RunOutcome<C::Store>, SimError> {
        // Two compiled loops, so that a run without content hashing or observation
        // pays no branch for them per delivery.
        self.observe |= self.core.store.observes_deliveries();
        if self.content || self.observe {
            self.run_loop::<true>(end, warmup, progress)
        } else {
            self.run_loop::<false>(end, warmup, progress)
        }
    }

    fn run_loop<const CONTENT: bool>(
        mut self,
        end: SimTime,
        warmup: SimTime,
        progress: &mut dyn FnMut(SimTime, u64) -> bool,
    ) -> Result<RunOutcome<C::Store>, SimError> {
        for i in 0..self.comps.len() {
            self.core.passive[i] = self.fast_path && self.comps[i].passive();
        }
        self.core.ahead = self.fast_path && self.deliver_ahead;
        for i in 0..self.comps.len() {
            let mut ctx = Ctx { now: SimTime::ZERO, id: i as CompId, core: &mut self.core };
            self.comps[i].start(&mut ctx);
            if let Some(m) = self.core.fault.take() {
                return Err(self.model_panic(i as CompId, SimTime::ZERO, m));
            }
            self.drain::<CONTENT>(SimTime::ZERO)?;
        }
        let mut sampler = self.series.take().map(|(interval, probes)| Sampler::new(interval, probes, end));
        if let Some(s) = sampler.as_mut() {
            let comps = &self.comps;
            s.baseline(&mut |p| comps[p.comp as usize].sample(p.index, SimTime::ZERO));
        }
        let mut warm = warmup == SimTime::ZERO;
        // One comparison per event covers the end of the run, the warm-up instant and
        // the next sampling instant (a sample is taken once an event lies past it).
        let next_checkpoint = |warm: bool, sampler: &Option<Sampler>| {
            let mut c = end;
            if !warm {
                c = c.min(warmup);
            }
            if let Some(s) = sampler {
                c = c.min(SimTime(s.next.0.saturating_add(1)));
            }
            c
        };
        let mut checkpoint = next_checkpoint(warm, &sampler);
        let mut next_progress = PROGRESS_EVERY;
        let loop_started = std::time::Instant::now();
        while let Some(ev) = self.core.queue.begin() {
            if ev.time >= checkpoint {
                if ev.time >= end {
                    break;
                }
                self.catch_up::<CONTENT>(ev.time, ev.time, warmup, &mut warm, &mut sampler)?;
                checkpoint = next_checkpoint(warm, &sampler);
            }
            let now = ev.time;
            if self.core.defers_any(ev.comp & !TIMED) {
                self.hand_over_deferred::<CONTENT>(ev.comp & !TIMED, now)?;
            }
            if ev.comp & TIMED == 0 {
                self.fingerprint = mix(mix(self.fingerprint, now.0), ((ev.comp as u64) << 32) | ev.tag as u64);
                self.events += 1;
                let mut ctx = Ctx { now, id: ev.comp, core: &mut self.core };
                self.comps[ev.comp as usize].on_timer(ev.tag, &mut ctx);
            } else {
                self.deliver_timed::<CONTENT>(now, ev.comp & !TIMED, ev.tag);
            }
            if self.core.dirty {
                self.after_event::<CONTENT>(ev.comp & !TIMED, now)?;
            }
            self.core.queue.finish();
            if self.events >= next_progress {
                next_progress = self.events + PROGRESS_EVERY;
                if !progress(now, self.events) {
                    return Err(SimError::Interrupted(now));
                }
            }
        }
        let loop_s = loop_started.elapsed().as_secs_f64();
        // Samples up to and including the end; a warm-up the events never reached.
        self.catch_up::<CONTENT>(SimTime(end.0.saturating_add(1)), end, warmup, &mut warm, &mut sampler)?;
        self.settle_all::<CONTENT>(end)?;
        self.core.store.close().map_err(SimError::Output)?;
        if !warm {
            // The run ended before the warm-up did: nothing is measured.
            self.comps.iter_mut().for_each(|c| c.reset_stats(end));
        }
        let mut report = Report::default();
        let mut ledger = Ledger::default();
        for (c, path) in self.comps.iter().zip(&self.paths) {
            c.report(end, path, &mut report);
            c.ledger(&mut ledger);
        }
        // Timed deliveries not due before the end are still on their way.
        for e in self.core.later.iter().flatten() {
            C::book(&e.msg, &mut ledger);
        }
        for (_, msg) in self.core.slab.iter().flatten() {
            C::book(msg, &mut ledger);
        }
        for (_, msg) in self.core.lanes.iter().flatten() {
            C::book(msg, &mut ledger);
        }
        self.core.store.ledger(&mut ledger);
        let bad = ledger.violations();
        if !bad.is_empty() {
            return Err(SimError::Conservation(bad.join("; ")));
        }
        for (c, &h) in self.later_fp.iter().enumerate() {
            if h != 0 {
                self.fingerprint = mix(mix(self.fingerprint, c as u64), h);
            }
        }
        let series = sampler.map(Sampler::finish).unwrap_or_default();
        let scheduled = self.core.queue.scheduled();
        Ok(RunOutcome { fingerprint: self.fingerprint, events: self.events, scheduled, end, report, ledger, series, loop_s, store: self.core.store })
    }
}

#[cfg(test)]
mod tests;
