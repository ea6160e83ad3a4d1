//! Observing a run: the one mechanism through which anything outside the models — the
//! cell trace, the byte-exact wire check, packet capture, an exporter a user adds —
//! learns what happens in a run, in the manner of ns-3's trace sources.
//!
//! A model fires a typed [`Observation`] where something happens (a cell or frame
//! arrives, starts its transmission, is dropped under a ledger cause; a host hands a PDU
//! to its adapter or receives one whole; a control cell ends its hop) with
//! [`observe`]. Observers ([`Observer`], in [`crate::observers`]) subscribe to the kinds
//! they want ([`Interest`]) in the run's [`Observers`]; no model imports one. With
//! nothing subscribed an observation costs one test of a bit mask in the run's store
//! (measured: docs/performance.md, "Observation cost").
//!
//! Observing changes nothing in the run: an observer sees messages and payloads, never
//! the models, and a run with observers has the same events and fingerprint as one
//! without (tested, `tests/it`). An observer that finds something wrong (the wire check's
//! mismatch) fails the run with its message.

use std::any::Any;

use atmsim_kernel::{CompId, Ctx, Ledger, PortId, SimTime};
use atmsim_wire::credit::{CreditCellRepr, CreditEntry};
use atmsim_wire::rm::RmRepr;

use crate::cell::{Cell, Frame, Msg};
use crate::payload::{Payload, Payloads};

/// The context every model's handlers get: the kernel's, over the run's [`Store`]
/// (re-exported as `crate::kind::Cx`, beside the rest of what a kind uses).
pub type Cx<'a> = Ctx<'a, Msg, Store>;

/// What happened to a cell or frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// Delivered to input `port` of the component ([`FRAME_NO_PORT`]: a frame's last bit
    /// reached a station inside it).
    Arrive(PortId),
    /// Its transmission on the line of output `port` starts (its wait there is over;
    /// its last bit leaves one cell time later, and the next hop receives it after the
    /// line's propagation delay; [`FRAME_NO_PORT`]: a station of a ring sends it).
    Depart(PortId),
    /// Dropped by the component, booked in the ledger under this cause.
    Drop(&'static str),
}

/// The port an event inside a component names when it happened at one of its stations,
/// not at a port.
pub const FRAME_NO_PORT: PortId = PortId::MAX;

/// Where inside a component a frame's event happens, and whose frame it is: `station`
/// is where (None: the component is one place), `origin` the station that made it
/// when the component's stations share one flow (None: the frame's flow names it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FramePlace {
    pub station: Option<u16>,
    pub origin: Option<u16>,
}

/// A control cell at the end of its hop, as the component that acts on it read it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Control<'a> {
    /// An RM cell at an ABR end system.
    Rm(&'a RmRepr),
    /// A credit cell (a 48-octet payload of entries).
    CreditCell(&'a CreditCellRepr),
    /// A credit carried in a cell's header (its one entry, `atmsim_wire::credit`).
    CreditHeader(&'a CreditCellRepr),
    /// A credit piggybacked in the GFC of a cell going upstream.
    Piggyback(CreditEntry),
}

/// Something that happened in a run, fired by the model where it happened.
#[derive(Clone, Copy, Debug)]
pub enum Observation<'a> {
    /// A cell arrived, departs or was dropped.
    Cell { event: Event, cell: &'a Cell },
    /// A frame arrived, departs or was dropped, at `place`.
    Frame { event: Event, frame: &'a Frame, place: FramePlace },
    /// A host hands an AAL5 PDU to its adapter: `cell` is its last cell, carrying
    /// `payload` (the IP packet's headers).
    PduSent { cell: &'a Cell, payload: &'a Payload },
    /// A host reassembled a PDU whole and delivers it: `cell` is its last cell.
    PduReceived { cell: &'a Cell, payload: &'a Payload },
    /// A control cell ended its hop at the component acting on it.
    Control { cell: &'a Cell, control: Control<'a> },
}

impl Observation<'_> {
    /// The interest this observation belongs to.
    #[inline(always)]
    pub fn interest(&self) -> Interest {
        match self {
            Observation::Cell { event, .. } | Observation::Frame { event, .. } => match event {
                Event::Arrive(_) => Interest::ARRIVE,
                Event::Depart(_) => Interest::DEPART,
                Event::Drop(_) => Interest::DROP,
            },
            Observation::PduSent { .. } | Observation::PduReceived { .. } => Interest::PDU,
            Observation::Control { .. } => Interest::CONTROL,
        }
    }
}

/// Kinds of observation an observer subscribes to (a bit mask).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Interest(pub u8);

impl Interest {
    pub const NONE: Interest = Interest(0);
    /// Deliveries of cells and frames to components' inputs (and frames' last bits at
    /// stations inside a component).
    pub const ARRIVE: Interest = Interest(1);
    /// Starts of transmission.
    pub const DEPART: Interest = Interest(2);
    /// Drops, with their ledger cause.
    pub const DROP: Interest = Interest(4);
    /// PDUs sent and received whole at hosts.
    pub const PDU: Interest = Interest(8);
    /// Control cells (RM, credit) at the end of their hop.
    pub const CONTROL: Interest = Interest(16);

    #[inline(always)]
    pub fn any(self, other: Interest) -> bool {
        self.0 & other.0 != 0
    }
}

impl std::ops::BitOr for Interest {
    type Output = Interest;
    fn bitor(self, o: Interest) -> Interest {
        Interest(self.0 | o.0)
    }
}

/// Something that watches a run. One file in [`crate::observers`] each.
pub trait Observer: Any + Send {
    /// The observations it wants.
    fn interest(&self) -> Interest;
    /// `what` happened at `time` at component `comp`; `payloads` is the run's store
    /// (what a cell carries). An error fails the run with that message.
    fn observe(&mut self, time: SimTime, comp: CompId, what: &Observation<'_>, payloads: &Payloads) -> Result<(), String>;
    /// The run has ended: finish what the observer writes outside the run. An error
    /// fails the run.
    fn close(&mut self) -> Result<(), String> {
        Ok(())
    }
    /// Adds what the observer counted to the run's books.
    fn ledger(&self, ledger: &mut Ledger) {
        let _ = ledger;
    }
}

/// The observers of one run, in the order they subscribed.
#[derive(Default)]
pub struct Observers {
    list: Vec<Box<dyn Observer>>,
    /// The union of their interests: the one test an observation pays with nothing
    /// subscribed.
    mask: Interest,
    /// The first error of an observation fired where no handler could fail the run at
    /// once (reported when the run ends).
    error: Option<String>,
}

impl std::fmt::Debug for Observers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Observers").field("count", &self.list.len()).field("mask", &self.mask).finish()
    }
}

impl Observers {
    /// Subscribes `o` (after those already subscribed).
    pub fn subscribe(&mut self, o: Box<dyn Observer>) {
        self.mask = self.mask | o.interest();
        self.list.push(o);
    }

    /// Whether some observer wants observations of `kind`.
    #[inline(always)]
    pub fn wants(&self, kind: Interest) -> bool {
        self.mask.any(kind)
    }

    /// The first subscribed observer of type `T`.
    pub fn get_mut<T: Observer>(&mut self) -> Option<&mut T> {
        self.list.iter_mut().find_map(|o| (o.as_mut() as &mut dyn Any).downcast_mut::<T>())
    }

    /// Unsubscribes and returns the first observer of type `T`.
    pub fn take<T: Observer>(&mut self) -> Option<T> {
        let i = self.list.iter().position(|o| (o.as_ref() as &dyn Any).is::<T>())?;
        let o: Box<dyn Any> = self.list.remove(i);
        self.mask = self.list.iter().fold(Interest::NONE, |m, o| m | o.interest());
        o.downcast::<T>().ok().map(|b| *b)
    }

    /// Tells every observer that wants it of `what` (the first error stops the round).
    #[cold]
    #[inline(never)]
    pub fn fire(&mut self, time: SimTime, comp: CompId, what: &Observation<'_>, payloads: &Payloads) -> Result<(), String> {
        let kind = what.interest();
        for o in self.list.iter_mut().filter(|o| o.interest().any(kind)) {
            o.observe(time, comp, what, payloads)?;
        }
        Ok(())
    }

    /// Closes every observer; the first error (an earlier one kept first).
    pub fn close(&mut self) -> Result<(), String> {
        let mut first = self.error.take();
        for o in &mut self.list {
            if let Err(e) = o.close() {
                first.get_or_insert(e);
            }
        }
        first.map_or(Ok(()), Err)
    }

    /// Adds what every observer counted to the run's books.
    pub fn ledger(&self, ledger: &mut Ledger) {
        for o in &self.list {
            o.ledger(ledger);
        }
    }
}

/// The run's store, which handlers reach through `Ctx::store`: the payloads messages
/// carry and the observers watching the run.
#[derive(Debug, Default)]
pub struct Store {
    pub payloads: Payloads,
    pub observers: Observers,
}

impl Store {
    /// Fires `what` at `time` at component `comp` if an observer wants it; an error is
    /// kept and fails the run when it ends.
    #[inline(always)]
    pub fn observe(&mut self, time: SimTime, comp: CompId, what: Observation<'_>) {
        if self.observers.wants(what.interest()) {
            if let Err(e) = self.observers.fire(time, comp, &what, &self.payloads) {
                self.observers.error.get_or_insert(e);
            }
        }
    }

    /// The kernel's delivery of `msg` to input `port` of `comp` at `time`, in a run
    /// that observes arrivals.
    pub fn arrived(&mut self, time: SimTime, comp: CompId, port: PortId, msg: &Msg) {
        let what = match msg {
            Msg::Cell(cell) => Observation::Cell { event: Event::Arrive(port), cell },
            Msg::Frame(frame) => Observation::Frame { event: Event::Arrive(port), frame, place: FramePlace::default() },
        };
        self.observe(time, comp, what);
    }
}

impl atmsim_kernel::RunStore for Store {
    fn close(&mut self) -> Result<(), String> {
        self.observers.close()
    }
    fn ledger(&self, ledger: &mut Ledger) {
        ledger.payloads_live += self.payloads.live();
        self.observers.ledger(ledger);
    }
    fn observes_deliveries(&self) -> bool {
        self.observers.wants(Interest::ARRIVE)
    }
}

/// Fires `what` now at the component running `ctx`, at `time` (a transmission's start
/// may lie ahead on the fast path). False, the run failed, when an observer found
/// something wrong: the handler stops there.
#[inline(always)]
pub fn observe_at(time: SimTime, what: Observation<'_>, ctx: &mut Cx<'_>) -> bool {
    if !ctx.store().observers.wants(what.interest()) {
        return true;
    }
    fire(time, what, ctx)
}

/// [`observe_at`] at the current instant.
#[inline(always)]
pub fn observe(what: Observation<'_>, ctx: &mut Cx<'_>) -> bool {
    let now = ctx.now;
    observe_at(now, what, ctx)
}

#[cold]
#[inline(never)]
fn fire(time: SimTime, what: Observation<'_>, ctx: &mut Cx<'_>) -> bool {
    let id = ctx.id();
    let store = ctx.store();
    match store.observers.fire(time, id, &what, &store.payloads) {
        Ok(()) => true,
        Err(e) => {
            ctx.fail(e);
            false
        }
    }
}

/// Whether the run observes `kind`: what a component firing many observations reads
/// once, when the run starts (a transmitter's departures).
pub fn observing(kind: Interest, ctx: &mut Cx<'_>) -> bool {
    ctx.store().observers.wants(kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts what it is told, and fails on a drop when asked to.
    struct Count {
        wants: Interest,
        seen: Vec<(SimTime, CompId, Interest)>,
        fail_on_drop: bool,
    }

    impl Observer for Count {
        fn interest(&self) -> Interest {
            self.wants
        }
        fn observe(&mut self, time: SimTime, comp: CompId, what: &Observation<'_>, _: &Payloads) -> Result<(), String> {
            self.seen.push((time, comp, what.interest()));
            if self.fail_on_drop && what.interest() == Interest::DROP {
                return Err("drop seen".into());
            }
            Ok(())
        }
        fn ledger(&self, l: &mut Ledger) {
            l.wire_checked += self.seen.len() as u64;
        }
    }

    fn count(wants: Interest) -> Box<Count> {
        Box::new(Count { wants, seen: Vec::new(), fail_on_drop: false })
    }

    #[test]
    fn an_observer_is_told_only_what_it_subscribed_to() {
        let mut s = Store::default();
        let c = Cell::plain(SimTime::ZERO, 0, 1, 0);
        s.observe(SimTime(1), 0, Observation::Cell { event: Event::Drop("x"), cell: &c });
        assert!(!s.observers.wants(Interest::DROP), "nothing subscribed");
        s.observers.subscribe(count(Interest::ARRIVE | Interest::DROP));
        s.observers.subscribe(count(Interest::DEPART));
        s.arrived(SimTime(2), 3, 0, &Msg::Cell(c));
        s.observe(SimTime(3), 4, Observation::Cell { event: Event::Depart(1), cell: &c });
        s.observe(SimTime(4), 5, Observation::Cell { event: Event::Drop("buffer_full"), cell: &c });
        assert!(!s.observers.wants(Interest::PDU));
        let mut l = Ledger::default();
        atmsim_kernel::RunStore::ledger(&s, &mut l);
        assert_eq!(l.wire_checked, 3, "each observer's books are added");
        let first = s.observers.take::<Count>().unwrap();
        assert_eq!(first.seen, vec![(SimTime(2), 3, Interest::ARRIVE), (SimTime(4), 5, Interest::DROP)]);
        assert!(!s.observers.wants(Interest::ARRIVE), "the mask follows the observers left");
        assert_eq!(s.observers.get_mut::<Count>().unwrap().seen, vec![(SimTime(3), 4, Interest::DEPART)]);
    }

    #[test]
    fn an_observers_error_fails_the_run_when_it_ends() {
        let mut s = Store::default();
        s.observers.subscribe(Box::new(Count { wants: Interest::DROP, seen: Vec::new(), fail_on_drop: true }));
        let c = Cell::plain(SimTime::ZERO, 0, 1, 0);
        s.observe(SimTime(1), 0, Observation::Cell { event: Event::Drop("x"), cell: &c });
        s.observe(SimTime(2), 0, Observation::Cell { event: Event::Drop("y"), cell: &c });
        assert_eq!(atmsim_kernel::RunStore::close(&mut s), Err("drop seen".to_string()));
    }
}
