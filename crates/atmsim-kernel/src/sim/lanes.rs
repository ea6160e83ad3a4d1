//! The timed-delivery lanes as a capability: what a model that hands its cells over
//! ahead of time asks of the kernel (a source handing a train over, a transmitter
//! computing departures on arrival, a line delivering ahead, an input deferred while
//! messages there only change its own state). An ordinary model never needs it; its
//! context's core API is `now`, `id`, `store`, `schedule_at`, `schedule_in`, `send`,
//! `send_at` and `fail`. The lanes themselves (one FIFO per busy output port, one event
//! each) are kept by `Ctx::send_at`; see the module doc of `sim` and
//! docs/architecture.md, "Timed deliveries".

use super::*;

/// [`Ctx::lanes`]: the timed-delivery operations on the component running a context.
pub struct Lanes<'c, 'a, M, S> {
    pub(super) ctx: &'c mut Ctx<'a, M, S>,
}

impl<'c, M, S> Lanes<'c, '_, M, S> {
    /// [`Ctx::send_at`] of each of `items` in turn: the same deliveries in the same
    /// order, with the route and its lane looked up once (a source handing a train of
    /// cells over ahead). A message going on behind the last one waiting in the lane
    /// is appended here; any other (to a passive component, into an empty lane, out of
    /// order, not later than now) goes through [`Ctx::send_at`].
    pub fn send_at_each(&mut self, port: PortId, items: impl IntoIterator<Item = (SimTime, M)>) {
        let route = self.ctx.core.route(self.ctx.id, port);
        let lane = (route.comp != CompId::MAX && !self.ctx.core.passive.get(route.comp as usize).copied().unwrap_or(true))
            .then(|| self.ctx.core.route_index(self.ctx.id, port));
        for (t, msg) in items {
            let behind = match lane.and_then(|i| self.ctx.core.lanes.get_mut(i)) {
                Some(l) if t > self.ctx.now && l.back().is_some_and(|b| b.0 <= t) => {
                    l.push_back((t, msg));
                    continue;
                }
                _ => msg,
            };
            self.ctx.send_at(t, port, behind);
        }
    }
    /// Whether what this component sends on output port `port` goes to a passive
    /// component (which takes timed deliveries without an event each).
    pub fn passive_downstream(&self, port: PortId) -> bool {
        let r = self.ctx.core.route(self.ctx.id, port);
        self.ctx.core.passive.get(r.comp as usize).copied().unwrap_or(false)
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
        let to = self.ctx.core.route(self.ctx.id, port).comp;
        (self.ctx.core.ahead && to != CompId::MAX && to != self.ctx.id) || self.passive_downstream(port)
    }
    /// Whether what this component sends ahead on output `port` waits in a lane of its
    /// own until its instant ([`Ctx::send_at`] to an ordinary component, when the run
    /// delivers ahead), so that [`Lanes::sent_ahead_mut`] can still change it. Called at
    /// start.
    pub fn keeps_lane(&self, port: PortId) -> bool {
        self.may_deliver_ahead(port) && !self.passive_downstream(port)
    }
    /// The message sent ahead on output `port` `back` places before the last one sent
    /// there, while it waits in the port's lane for its instant: for a field that
    /// depends on what happens before it leaves (a FIFO port's EFCI mark, decided by
    /// the cells that arrive while it waits). None once it is delivered, or where the
    /// port keeps no lane ([`Lanes::keeps_lane`]).
    pub fn sent_ahead_mut(self, port: PortId, back: usize) -> Option<&'c mut M> {
        let idx = self.ctx.core.route_index(self.ctx.id, port);
        let lane = self.ctx.core.lanes.get_mut(idx)?;
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
    /// [`Lanes::may_deliver_ahead`]) and `port` < 64; otherwise nothing changes.
    pub fn defer_input(&mut self, port: PortId, on: bool) -> bool {
        if !self.ctx.core.ahead || port >= 64 {
            return false;
        }
        let core = &mut *self.ctx.core;
        let me = self.ctx.id;
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
                        if t < self.ctx.now {
                            core.fail(format!("a deferred message for {t} was not handed over before {}", self.ctx.now));
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
}

/// The kernel's side of timed deliveries: passive components' late hand-overs, deferred
/// inputs, and a lane's or slab entry's delivery when its event comes.
impl<C: Component> Simulation<C> {
    /// Counts a message handed over late (to a passive component, or through a deferred
    /// input) and folds it into `comp`'s own trace, whose order (time, then sending)
    /// does not depend on when the kernel hands messages over.
    #[inline(always)]
    pub(super) fn fold_handed<const CONTENT: bool>(&mut self, comp: CompId, time: SimTime, port: PortId, msg: &C::Msg) {
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
    pub(super) fn hand_over<const CONTENT: bool>(&mut self, comp: CompId, before: SimTime) -> Result<(), SimError> {
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
    /// for instants before `before` ([`Lanes::defer_input`]), in time order (ties: the
    /// lane of the lower route first), each at its own instant.
    #[cold]
    pub(super) fn hand_over_deferred<const CONTENT: bool>(&mut self, comp: CompId, before: SimTime) -> Result<(), SimError> {
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
    pub(super) fn hand_over_due<const CONTENT: bool>(&mut self, now: SimTime) -> Result<(), SimError> {
        while let Some(c) = self.core.due.pop() {
            self.hand_over::<CONTENT>(c, now)?;
        }
        Ok(())
    }

    /// Delivers the message of a timed-delivery event (tag `slot`: a slab slot, or a
    /// lane's first) to `comp`; a lane's next becomes an event first.
    #[inline(always)]
    pub(super) fn deliver_timed<const CONTENT: bool>(&mut self, now: SimTime, comp: CompId, slot: u32) {
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
}
