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
    /// of time ([`Ctx::may_deliver_ahead`]).
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
    /// Per component, the input ports it defers ([`Ctx::defer_input`]), one bit each.
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

impl<M, S> Ctx<'_, M, S> {
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
            // [`Ctx::defer_input`]).
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
    /// [`Ctx::send_at`] of each of `items` in turn: the same deliveries in the same
    /// order, with the route and its lane looked up once (a source handing a train of
    /// cells over ahead). A message going on behind the last one waiting in the lane
    /// is appended here; any other (to a passive component, into an empty lane, out of
    /// order, not later than now) goes through [`Ctx::send_at`].
    pub fn send_at_each(&mut self, port: PortId, items: impl IntoIterator<Item = (SimTime, M)>) {
        let route = self.core.route(self.id, port);
        let lane = (route.comp != CompId::MAX && !self.core.passive.get(route.comp as usize).copied().unwrap_or(true))
            .then(|| self.core.route_index(self.id, port));
        for (t, msg) in items {
            let behind = match lane.and_then(|i| self.core.lanes.get_mut(i)) {
                Some(l) if t > self.now && l.back().is_some_and(|b| b.0 <= t) => {
                    l.push_back((t, msg));
                    continue;
                }
                _ => msg,
            };
            self.send_at(t, port, behind);
        }
    }
    /// Whether what this component sends on output port `port` goes to a passive
    /// component (which takes timed deliveries without an event each).
    pub fn passive_downstream(&self, port: PortId) -> bool {
        let r = self.core.route(self.id, port);
        self.core.passive.get(r.comp as usize).copied().unwrap_or(false)
    }
    /// Whether this component may hand what it sends on output port `port` over ahead
    /// of time ([`Ctx::send_at`]) instead of sending it when it is due: always to a
    /// passive component; to an ordinary one when the run allows it
    /// ([`Simulation::deliver_ahead`]), at the price of the order of simultaneous
    /// events there (a delivery sent ahead takes its place among the events of its
    /// instant by when it was sent: see docs/architecture.md, the ordering rules).
    ///
    /// Never to itself (a port wired back into its own component, as a switch's fibre
    /// loop): its deliveries would take their places among its own events of an instant
    /// by when it sent them, an order the exact path does not have, and there is no
    /// other component's event to save.
    pub fn may_deliver_ahead(&self, port: PortId) -> bool {
        let to = self.core.route(self.id, port).comp;
        (self.core.ahead && to != CompId::MAX && to != self.id) || self.passive_downstream(port)
    }
    /// Whether what this component sends ahead on output `port` waits in a lane of its
    /// own until its instant ([`Ctx::send_at`] to an ordinary component, when the run
    /// delivers ahead), so that [`Ctx::sent_ahead_mut`] can still change it. Called at
    /// start.
    pub fn keeps_lane(&self, port: PortId) -> bool {
        self.may_deliver_ahead(port) && !self.passive_downstream(port)
    }
    /// The message sent ahead on output `port` `back` places before the last one sent
    /// there, while it waits in the port's lane for its instant: for a field that
    /// depends on what happens before it leaves (a FIFO port's EFCI mark, decided by
    /// the cells that arrive while it waits). None once it is delivered, or where the
    /// port keeps no lane ([`Ctx::keeps_lane`]).
    pub fn sent_ahead_mut(&mut self, port: PortId, back: usize) -> Option<&mut M> {
        let idx = self.core.route_index(self.id, port);
        let lane = self.core.lanes.get_mut(idx)?;
        let i = lane.len().checked_sub(back + 1)?;
        lane.get_mut(i).map(|(_, m)| m)
    }
    /// Defers input `port` (`on`), or stops deferring it: while an input is deferred,
    /// the timed deliveries sent to it on lanes ([`Ctx::send_at`] in time order) are
    /// not events. They wait, and the kernel hands them over, each at its own instant
    /// and in time order, before anything else this component handles at a later
    /// instant (a timer, a message), before it is sampled or reset and at the end of
    /// the run. A component may defer an input while a message there only changes its
    /// own state: handling a deferred message it must not schedule, send, or change
    /// what it defers (a model fault). Stopping makes the first waiting message an
    /// event again. Deliveries for the instant being handled wait until the next
    /// (so they come after this component's other events of that instant). True if
    /// the run allows it (the fast path with deliveries ahead,
    /// [`Ctx::may_deliver_ahead`]) and `port` < 64; otherwise nothing changes.
    pub fn defer_input(&mut self, port: PortId, on: bool) -> bool {
        if !self.core.ahead || port >= 64 {
            return false;
        }
        let core = &mut *self.core;
        let me = self.id;
        let Some(d) = core.deferred.get_mut(me as usize) else { return false };
        let bit = 1u64 << port;
        if (*d & bit != 0) == on {
            return true;
        }
        if core.handing_deferred {
            core.fail(format!("a component handed a deferred message changed what it defers (input {port})"));
            return false;
        }
        *d ^= bit;
        if !on {
            // Lanes left waiting become events again, at their first's instant.
            for &idx in core.into.get(me as usize).map_or(&[][..], |v| &v[..]) {
                let i = idx as usize;
                if core.routes.get(i).is_some_and(|r| r.port == port) && !core.armed.get(i).copied().unwrap_or(true) {
                    if let Some(&(t, _)) = core.lanes.get(i).and_then(|l| l.front()) {
                        if t < self.now {
                            core.fail(format!("a deferred message for {t} was not handed over before {}", self.now));
                            return false;
                        }
                        core.queue.schedule(t, me | TIMED, LANE | idx);
                        core.armed[i] = true;
                    }
                }
            }
        }
        true
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
    /// [`Ctx::passive_downstream`] true, so components that choose a fast path by it
    /// take their exact one).
    pub fn fast_path(&mut self, on: bool) {
        self.fast_path = on;
    }

    /// Whether components may also hand messages to ordinary components ahead of time
    /// ([`Ctx::may_deliver_ahead`]; on by default, and only with the fast path on).
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

    /// Counts a message handed over late (to a passive component, or through a deferred
    /// input) and folds it into `comp`'s own trace, whose order (time, then sending)
    /// does not depend on when the kernel hands messages over.
    #[inline(always)]
    fn fold_handed<const CONTENT: bool>(&mut self, comp: CompId, time: SimTime, port: PortId, msg: &C::Msg) {
        let h = &mut self.later_fp[comp as usize];
        *h = mix(mix(*h, time.0), ((comp as u64) << 32) | 0x8000_0000 | port as u64);
        if CONTENT {
            if self.content {
                *h = mix(*h, C::digest(msg, &self.core.store));
            }
            if self.observe {
                C::observe(time, comp, port, msg, &mut self.core.store);
            }
        }
        self.events += 1;
    }

    /// Hands passive component `comp` its timed deliveries due before `before`, in
    /// order, each at its own instant.
    fn hand_over<const CONTENT: bool>(&mut self, comp: CompId, before: SimTime) -> Result<(), SimError> {
        loop {
            let q = &mut self.core.later[comp as usize];
            if !q.front().is_some_and(|e| e.time < before) {
                return Ok(());
            }
            let Some(Later { time, port, msg, .. }) = q.pop_front() else { return Ok(()) };
            self.fold_handed::<CONTENT>(comp, time, port, &msg);
            let (scheduled, mail) = (self.core.queue.scheduled(), self.core.mail.len());
            let mut ctx = Ctx { now: time, id: comp, core: &mut self.core };
            self.comps[comp as usize].on_message(port, msg, &mut ctx);
            if self.core.fault.is_none() && (self.core.queue.scheduled() != scheduled || self.core.mail.len() != mail) {
                self.core.fault = Some("a passive component scheduled a timer or sent a message".into());
            }
            if self.core.fault.is_some() {
                let m = self.core.fault.take().unwrap_or_default();
                return Err(self.model_panic(comp, time, m));
            }
        }
    }

    /// Hands component `comp` the messages waiting on lanes into its deferred inputs
    /// for instants before `before` ([`Ctx::defer_input`]), in time order (ties: the
    /// lane of the lower route first), each at its own instant.
    #[cold]
    fn hand_over_deferred<const CONTENT: bool>(&mut self, comp: CompId, before: SimTime) -> Result<(), SimError> {
        let c = comp as usize;
        let n_into = self.core.into.get(c).map_or(0, Vec::len);
        let (scheduled, mail) = (self.core.queue.scheduled(), self.core.mail.len());
        let mut last = SimTime::ZERO;
        self.core.handing_deferred = true;
        loop {
            // The waiting lane with the earliest first message (ties: the lower
            // route), and how far it may run before another lane's first.
            // `limit`: the next lane's first (and that lane), or `before`.
            let (mut first, mut head) = (None, before);
            let mut limit = (before, usize::MAX);
            for k in 0..n_into {
                let i = self.core.into[c][k] as usize;
                if self.core.armed[i] {
                    continue;
                }
                if let Some(&(t, _)) = self.core.lanes[i].front() {
                    if t < head {
                        if let Some(f) = first {
                            limit = (head, f);
                        }
                        (first, head) = (Some(i), t);
                    } else if t < limit.0 {
                        limit = (t, i);
                    }
                }
            }
            let Some(i) = first else { break };
            let port = self.core.routes[i].port;
            while let Some(&(time, _)) = self.core.lanes[i].front() {
                // Up to the next lane's first; at a tie the lower route goes first.
                if time > limit.0 || (time == limit.0 && (limit.1 == usize::MAX || limit.1 < i)) {
                    break;
                }
                let Some((_, msg)) = self.core.lanes[i].pop_front() else { break };
                self.fold_handed::<CONTENT>(comp, time, port, &msg);
                last = time;
                let mut ctx = Ctx { now: time, id: comp, core: &mut self.core };
                self.comps[c].on_message(port, msg, &mut ctx);
                if self.core.fault.is_some() {
                    break;
                }
            }
            // No other lane had a message before `before` (the limit was `before`
            // itself): this lane's are handed over up to there, and a handler here
            // adds to no lane, so nothing is left to scan for.
            if self.core.fault.is_some() || limit.1 == usize::MAX {
                break;
            }
        }
        self.core.handing_deferred = false;
        if self.core.fault.is_none() && (self.core.queue.scheduled() != scheduled || self.core.mail.len() != mail) {
            self.core.fault = Some("a component handed a deferred message scheduled a timer or sent a message".into());
        }
        if self.core.fault.is_some() {
            let m = self.core.fault.take().unwrap_or_default();
            return Err(self.model_panic(comp, last, m));
        }
        Ok(())
    }

    /// Hands over what passive components were sent for instants now past.
    #[cold]
    fn hand_over_due<const CONTENT: bool>(&mut self, now: SimTime) -> Result<(), SimError> {
        while let Some(c) = self.core.due.pop() {
            self.hand_over::<CONTENT>(c, now)?;
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

    /// Delivers the message of a timed-delivery event (tag `slot`: a slab slot, or a
    /// lane's first) to `comp`; a lane's next becomes an event first.
    #[inline(always)]
    fn deliver_timed<const CONTENT: bool>(&mut self, now: SimTime, comp: CompId, slot: u32) {
        let (port, msg) = if slot & LANE != 0 {
            let idx = (slot & !LANE) as usize;
            let port = self.core.routes.get(idx).map_or(PortId::MAX, |r| r.port);
            let waits = self.core.defers(comp, port);
            let Some(lane) = self.core.lanes.get_mut(idx) else {
                return self.core.fail(format!("timed delivery on lane {idx}, which does not exist"));
            };
            let Some((_, msg)) = lane.pop_front() else {
                return self.core.fail(format!("timed delivery on lane {idx}, which is empty"));
            };
            match lane.front() {
                Some(&(next, _)) if !waits => self.core.queue.schedule(next, comp | TIMED, slot),
                // A lane into a deferred input waits without an event.
                _ => {
                    if let Some(a) = self.core.armed.get_mut(idx) {
                        *a = false;
                    }
                }
            }
            (port, msg)
        } else {
            let Some(got) = self.core.slab.get_mut(slot as usize).and_then(Option::take) else {
                return self.core.fail(format!("timed delivery {slot} has no message"));
            };
            self.core.free.push(slot);
            got
        };
        self.fingerprint = mix(mix(self.fingerprint, now.0), ((comp as u64) << 32) | 0x8000_0000 | port as u64);
        if CONTENT {
            if self.content {
                self.fingerprint = mix(self.fingerprint, C::digest(&msg, &self.core.store));
            }
            if self.observe {
                C::observe(now, comp, port, &msg, &mut self.core.store);
            }
        }
        self.events += 1;
        let mut ctx = Ctx { now, id: comp, core: &mut self.core };
        self.comps[comp as usize].on_message(port, msg, &mut ctx);
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
mod tests {
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
                    r.defer = ctx.defer_input(0, true);
                }
                r.timers.iter().for_each(|&t| ctx.schedule_at(SimTime(t), 7));
            }
            if let Part::Q(q) = self {
                q.set(Some(ctx.may_deliver_ahead(0)));
            }
            if let Part::M(m) = self {
                m.lane.set(Some(ctx.keeps_lane(0)));
                m.plan.iter().for_each(|&(t, x)| ctx.send_at(SimTime(t), 0, x));
                ctx.schedule_at(SimTime(25), 1);
            }
            if let Part::E(e) = self {
                if BATCH.get() {
                    ctx.send_at_each(0, e.plan.iter().map(|&(t, m)| (SimTime(t), m)));
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
                    ctx.defer_input(0, false);
                }
            }
            if let Part::E(e) = self {
                if BATCH.get() {
                    ctx.send_at_each(0, e.later.iter().map(|&(t, m)| (SimTime(t), m)));
                } else {
                    e.later.iter().for_each(|&(t, m)| ctx.send_at(SimTime(t), 0, m));
                }
            }
            if let Part::M(m) = self {
                if m.lane.get() == Some(true) {
                    for &b in &m.back {
                        let got = ctx.sent_ahead_mut(0, b).map(|x| *x += 100).is_some();
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
}
