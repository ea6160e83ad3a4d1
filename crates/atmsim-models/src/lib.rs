//! # atmsim-models
//!
//! The model library, one folder per area so that any model is one hop away:
//!
//! | area        | kinds                                   | what it models                          |
//! |-------------|-----------------------------------------|-----------------------------------------|
//! | [`traffic`] | `cbr`, `poisson`, `onoff`, `selfsimilar`, `trace`, `sink` | sources (one flow each) and the measuring sink |
//! | [`link`]    | `fifo`, `link`, `loss`                  | the transmitter (buffer + line rate, physical-layer presets, propagation), random loss |
//! | [`switch`]  | `switch`                                | N-port output-buffered switch, VC translation |
//! | [`aal`]     | (parts)                                 | AAL5 segmentation and reassembly         |
//! | [`host`]    | `host`                                  | workstation: IP over AAL5, ping/UDP, TCP Reno, CPU, NIC |
//! | [`control`] | `pacer`, `gcra`, `iofm` (+ buffer policies), `abr_source`, `abr_edge`, `abr_dest`, `abr_mux`, `credit_sender`, `credit_buffer` | pacing, UPC, i-out-of-m rate control, EPD/PPD/EFCI, ABR rate control (TM 4.0 end systems, edge device; EFCI/EPRCA/ERICA multiplexer, and on switch ports), hop-by-hop credit flow control (evans96 WAN) |
//! | [`lan`]     | `fddi_ring`                             | FDDI timed-token ring, stations, gateway station |
//! | [`gateway`] | `atm_fddi_gateway`                      | buddhikot92's ATM–FDDI gateway: SPP, NPE, MPP, buffers |
//! | [`hold`]    | `hold`                                  | kernel benchmark workload                |
//!
//! [`KINDS`] is the registry the scenario loader and `atmsim describe` read. [`Model`]
//! is the closed enum the kernel dispatches on (static dispatch, one `match` per event).

pub mod aal;
pub mod cell;
pub mod control;
pub mod drops;
pub mod hold;
pub mod kind;
pub mod lan;
pub mod gateway;
pub mod host;
pub mod link;
pub mod observe;
pub mod observers;
pub mod params;
pub mod part;
pub mod payload;
pub mod series;
pub mod suggest;
pub mod switch;
pub mod timer;
pub mod traffic;
pub mod wirecheck;

use control::{gcra, iofm, pacer};
use link::{loss, transmitter};
use traffic::sink;

use std::borrow::{Borrow, BorrowMut};

use atmsim_kernel::probe::Report;
use atmsim_kernel::{Component, Ledger, PortId, SimTime};

pub use cell::{Carries, Cell, Frame, Msg};
pub use observe::Store;
pub use payload::{Payload, PayloadId, Payloads};
pub use kind::{BuildInfo, Cx, Kind, KindInfo, KindSpec, PortDecl, PortSpec, Ports};

/// The type a variant holds: the model itself, or a box for the large ones (so that
/// the enum stays small and cache-friendly).
macro_rules! variant_ty {
    ($t:ty) => { $t };
    ($t:ty, boxed) => { Box<$t> };
}

/// Generates, from one list of `Variant(Type[, boxed]) = [KIND, ...]`, the closed
/// [`Model`] enum, the [`KINDS`] registry and the kernel's `Component` for `Model`:
/// every dispatch is an exhaustive `match` over the list, with no catch-all arm.
macro_rules! models {
    ($( $variant:ident ( $ty:ty $(, $boxed:ident)? ) = [ $( $info:path ),+ ] ),+ $(,)?) => {
        /// Every component, as one closed enum (static dispatch, one `match` per event).
        #[derive(Clone, Debug)]
        pub enum Model {
            $( $variant(variant_ty!($ty $(, $boxed)?)), )+
        }

        /// Every component kind atmsim knows: what the scenario loader and `atmsim
        /// describe` read.
        pub static KINDS: &[KindSpec] = &[
            $( $( KindSpec { info: $info, build: |p, b| <$ty as Kind>::build(p, b).map(|m| Model::$variant(From::from(m))) }, )+ )+
        ];

        impl Model {
            /// The index of series `name` at sub-path `sub` of this instance (see [`series`]).
            pub fn series_index(&self, sub: &str, name: &str) -> Option<u64> {
                match self { $( Model::$variant(m) => <$ty as Kind>::series_index(Borrow::<$ty>::borrow(m), sub, name), )+ }
            }
            /// The flow and VC label of a source.
            pub fn source_flow(&self) -> Option<(u32, u32)> {
                match self { $( Model::$variant(m) => <$ty as Kind>::source_flow(Borrow::<$ty>::borrow(m)), )+ }
            }
        }

        impl Component for Model {
            type Msg = Msg;
            type Store = Store;

            fn start(&mut self, ctx: &mut Cx<'_>) {
                match self { $( Model::$variant(m) => <$ty as Kind>::start(BorrowMut::<$ty>::borrow_mut(m), ctx), )+ }
            }
            #[inline(always)]
            fn on_timer(&mut self, tag: u32, ctx: &mut Cx<'_>) {
                match self { $( Model::$variant(m) => <$ty as Kind>::on_timer(BorrowMut::<$ty>::borrow_mut(m), tag, ctx), )+ }
            }
            #[inline(always)]
            fn on_message(&mut self, port: PortId, msg: Msg, ctx: &mut Cx<'_>) {
                match msg {
                    Msg::Cell(cell) => match self { $( Model::$variant(m) => <$ty as Kind>::on_cell(BorrowMut::<$ty>::borrow_mut(m), port, cell, ctx), )+ },
                    Msg::Frame(frame) => match self { $( Model::$variant(m) => <$ty as Kind>::on_frame(BorrowMut::<$ty>::borrow_mut(m), port, frame, ctx), )+ },
                }
            }
            #[inline(always)]
            fn digest(msg: &Msg, store: &Store) -> u64 {
                cell::digest(msg, &store.payloads)
            }
            fn observe(time: SimTime, comp: atmsim_kernel::CompId, port: PortId, msg: &Msg, store: &mut Store) {
                store.arrived(time, comp, port, msg)
            }
            fn reset_stats(&mut self, now: SimTime) {
                match self { $( Model::$variant(m) => <$ty as Kind>::reset_stats(BorrowMut::<$ty>::borrow_mut(m), now), )+ }
            }
            fn report(&self, now: SimTime, path: &str, out: &mut Report) {
                match self { $( Model::$variant(m) => <$ty as Kind>::report(Borrow::<$ty>::borrow(m), now, path, out), )+ }
            }
            fn ledger(&self, l: &mut Ledger) {
                match self { $( Model::$variant(m) => <$ty as Kind>::ledger(Borrow::<$ty>::borrow(m), l), )+ }
            }
            fn sample(&self, index: u64, _now: SimTime) -> f64 {
                match self { $( Model::$variant(m) => <$ty as Kind>::sample(Borrow::<$ty>::borrow(m), index), )+ }
            }
            fn passive(&self) -> bool {
                match self { $( Model::$variant(m) => <$ty as Kind>::passive(Borrow::<$ty>::borrow(m)), )+ }
            }
            fn settle(&mut self, before: SimTime) {
                match self { $( Model::$variant(m) => <$ty as Kind>::settle(BorrowMut::<$ty>::borrow_mut(m), before), )+ }
            }
            fn book(msg: &Msg, l: &mut Ledger) {
                cell::book(msg, l)
            }
        }
    };
}

// The one list of model kinds. A new kind is one line here plus its module (its
// `KindInfo` constant and its `impl Kind`); see docs/architecture.md.
models! {
    Cbr(traffic::cbr::Cbr) = [traffic::cbr::KIND],
    Poisson(traffic::poisson::Poisson) = [traffic::poisson::KIND],
    OnOff(traffic::onoff::OnOff) = [traffic::onoff::KIND],
    SelfSimilar(traffic::selfsimilar::SelfSimilar, boxed) = [traffic::selfsimilar::KIND],
    Trace(traffic::trace::TraceSource, boxed) = [traffic::trace::KIND],
    Transmitter(transmitter::Transmitter, boxed) = [transmitter::FIFO_KIND, transmitter::LINK_KIND],
    Switch(switch::Switch, boxed) = [switch::KIND],
    Host(host::Host, boxed) = [host::KIND],
    Loss(loss::Loss) = [loss::KIND],
    Pacer(pacer::PacerNode) = [pacer::KIND],
    Gcra(gcra::Upc) = [gcra::KIND],
    Iofm(control::iofm::Iofm, boxed) = [iofm::KIND],
    Sink(sink::Sink) = [sink::KIND],
    AbrSource(control::abr::source_kind::AbrSourceNode, boxed) = [control::abr::source_kind::KIND, control::abr::source_kind::EDGE_KIND],
    AbrDest(control::abr::dest_kind::AbrDestNode, boxed) = [control::abr::dest_kind::KIND],
    AbrMux(control::abr::mux::AbrMux, boxed) = [control::abr::mux::KIND],
    CreditSender(control::credit::sender_kind::CreditSender, boxed) = [control::credit::sender_kind::KIND],
    CreditBuffer(control::credit::buffer_kind::CreditBuffer, boxed) = [control::credit::buffer_kind::KIND],
    Hold(hold::Hold) = [hold::KIND],
    FddiRing(lan::fddi::ring::Ring, boxed) = [lan::fddi::ring::KIND],
    AtmFddiGateway(gateway::atm_fddi::Gateway, boxed) = [gateway::atm_fddi::KIND],
    MeasurementChip(control::measure::MeasureNode, boxed) = [control::measure::KIND],
}

/// Looks a kind up by name.
pub fn kind(name: &str) -> Option<&'static KindSpec> {
    KINDS.iter().find(|k| k.kind == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_declares_distinct_params_and_valid_defaults() {
        for k in KINDS {
            let mut names: Vec<_> = k.params().map(|p| p.name).collect();
            let n = names.len();
            names.sort();
            names.dedup();
            assert_eq!(n, names.len(), "duplicate parameter in {}", k.kind);
            for p in k.params() {
                if let Some(d) = p.default {
                    let raw = params::default_raw(d);
                    params::parse_value(p, &raw).unwrap_or_else(|e| panic!("{}.{} default: {e}", k.kind, p.name));
                }
            }
        }
    }
}
