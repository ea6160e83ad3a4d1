//! Dropping a cell: the one way a model does it. [`Drops::drop`] books the cell under
//! its ledger cause for its flow, tells the run's observers ([`crate::observe`]) and
//! releases its payload, so that a dropped cell never leaves a payload behind and every
//! drop is seen.

use atmsim_kernel::{ByFlow, Ledger};

use crate::cell::Cell;
use crate::kind::Cx;
use crate::observe::{observe, Event, Observation};

/// Drops `cell` where it is: releases its payload. Every model that drops a cell calls
/// this (and books the drop under its cause in its ledger), so a dropped cell never
/// leaves a payload behind.
#[inline(always)]
pub fn discard(cell: &Cell, ctx: &mut Cx<'_>) {
    if cell.payload.is_some() {
        ctx.store().payloads.release(cell.payload);
    }
}

/// Drops `cell` where it is ([`discard`]), telling the run's observers that this
/// component dropped it under ledger cause `cause`. A model that books its
/// drops by cause itself (not with [`Drops`]) calls this.
#[inline(always)]
pub fn dropped_here(cause: &'static str, cell: &Cell, ctx: &mut Cx<'_>) {
    observe(Observation::Cell { event: Event::Drop(cause), cell }, ctx);
    discard(cell, ctx);
}

/// The cells one component dropped under one cause, per flow: the one way a model
/// drops a cell ([`Drops::drop`] counts it for the ledger and releases its payload).
#[derive(Clone, Debug)]
pub struct Drops {
    cause: &'static str,
    by_flow: ByFlow<u64>,
}

impl Drops {
    /// A drop book for `cause` (a ledger cause such as `buffer_full` or `no_route`).
    pub const fn new(cause: &'static str) -> Drops {
        Drops { cause, by_flow: ByFlow::new() }
    }
    /// Drops `cell`: books it under this cause for its flow and releases its payload.
    #[cold]
    pub fn drop(&mut self, cell: &Cell, ctx: &mut Cx<'_>) {
        *self.by_flow.entry(cell.flow) += 1;
        dropped_here(self.cause, cell, ctx);
    }
    /// Cells dropped, all flows.
    pub fn total(&self) -> u64 {
        self.by_flow.values().sum()
    }
    /// Adds these drops to the ledger under their cause.
    pub fn ledger(&self, l: &mut Ledger) {
        for (f, &n) in self.by_flow.iter() {
            l.add_dropped(self.cause, f, n);
        }
    }
}
