//! Message payloads: what a cell or frame carries beyond its metadata (a TCP/IP
//! header, an RM cell's fields, ...), kept in a per-run store and referred to by a
//! [`PayloadId`] handle.
//!
//! A cell without a payload pays nothing for this layer: its handle is
//! [`PayloadId::NONE`] and no store operation happens. Payload types are the wire
//! crate's `Repr` types wherever one exists, so a payload can always be emitted as
//! bytes and parsed back (the byte-exact checking mode).
//!
//! Lifetime rules (docs/architecture.md, "Message layer"):
//! - a payload is created by the component that creates the message carrying it
//!   ([`Payloads::insert`]);
//! - whoever consumes the message takes the payload out ([`Payloads::take`]); whoever
//!   drops it releases it ([`crate::drops::discard`]); a replicated cell gets a copy
//!   ([`Payloads::duplicate`]);
//! - at the end of a run every live payload must be referred to by a message still in
//!   flight (components count them in their ledger, [`crate::cell::book_in_flight`]),
//!   otherwise the run fails its conservation check, as for a lost cell.

use atmsim_wire::credit::CreditCellRepr;
use atmsim_wire::icmp::IcmpEchoRepr;
use atmsim_wire::ipv4::Ipv4Repr;
use atmsim_wire::rm::RmRepr;
use atmsim_wire::tcp::TcpRepr;
use atmsim_wire::udp::UdpRepr;

/// A handle into the run's [`Payloads`]; 0 is "no payload".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PayloadId(u32);

impl PayloadId {
    pub const NONE: PayloadId = PayloadId(0);
    #[inline(always)]
    pub fn is_some(self) -> bool {
        self.0 != 0
    }
    #[inline(always)]
    pub fn is_none(self) -> bool {
        self.0 == 0
    }
}

/// What a message can carry.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Payload {
    /// An IP packet's headers (RFC 791): the IPv4 header and, on a datagram's first
    /// fragment, its transport header. Carried by the last cell of the packet's AAL5
    /// PDU (the cell whose arrival completes the PDU).
    Ip { ip: Ipv4Repr, l4: L4 },
    /// An ABR resource-management cell's fields (ATM Forum TM 4.0, Table 5-4).
    Rm(RmRepr),
    /// A credit cell's entries (evans96's WAN credit flow control: up to 24 entries of
    /// VCI and credit 1–16; `control/credit/`).
    Credit(CreditCellRepr),
}

/// The transport header an IP packet carries.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum L4 {
    /// A TCP segment's header (RFC 793; TCP segments are never fragmented here).
    Tcp(TcpRepr),
    /// An ICMP echo request or reply (RFC 792), on the first fragment.
    Echo(IcmpEchoRepr),
    /// A UDP header (RFC 768), on the first fragment.
    Udp(UdpRepr),
    /// A fragment after the first: data only, no transport header.
    Continuation,
}

/// The per-run payload store: a slab with a free list (no allocation per message once
/// warm), owned by the simulation and reached through `Ctx::store` (the run's
/// [`crate::observe::Store`]). It holds payloads only: what observers keep (the wire
/// check's bytes, a trace's rows) they keep themselves.
#[derive(Debug, Default)]
pub struct Payloads {
    slots: Vec<Option<Payload>>,
    free: Vec<u32>,
    live: u64,
}

impl Payloads {
    /// Stores `p` and returns its handle.
    pub fn insert(&mut self, p: Payload) -> PayloadId {
        self.live += 1;
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = Some(p);
                PayloadId(i + 1)
            }
            None => {
                self.slots.push(Some(p));
                PayloadId(self.slots.len() as u32)
            }
        }
    }

    /// The payload behind `id`, if it is live.
    pub fn get(&self, id: PayloadId) -> Option<&Payload> {
        let i = (id.0 as usize).checked_sub(1)?;
        self.slots.get(i)?.as_ref()
    }

    /// The payload behind `id`, to change in place (a switch writing ER into a
    /// backward RM cell, a destination turning a forward RM cell around).
    pub fn get_mut(&mut self, id: PayloadId) -> Option<&mut Payload> {
        let i = (id.0 as usize).checked_sub(1)?;
        self.slots.get_mut(i)?.as_mut()
    }

    /// Takes the payload behind `id` out of the store (the message was consumed).
    pub fn take(&mut self, id: PayloadId) -> Option<Payload> {
        let i = (id.0 as usize).checked_sub(1)?;
        let p = self.slots.get_mut(i)?.take()?;
        self.free.push(i as u32);
        self.live -= 1;
        Some(p)
    }

    /// Releases the payload behind `id` (the message was dropped).
    #[inline]
    pub fn release(&mut self, id: PayloadId) {
        let _ = self.take(id);
    }

    /// A copy of the payload behind `id` under a new handle (point-to-multipoint
    /// replication); `NONE` stays `NONE`.
    pub fn duplicate(&mut self, id: PayloadId) -> PayloadId {
        match self.get(id).cloned() {
            Some(p) => self.insert(p),
            None => PayloadId::NONE,
        }
    }

    /// The slot behind `id` (0 for the first), for an observer keeping something per
    /// payload; None for [`PayloadId::NONE`].
    pub fn slot(id: PayloadId) -> Option<usize> {
        (id.0 as usize).checked_sub(1)
    }

    /// Payloads stored and not yet taken or released.
    pub fn live(&self) -> u64 {
        self.live
    }
}

/// A digest of a payload's contents (for the run's fingerprint).
pub fn digest(p: &Payload) -> u64 {
    let words: [u64; 4] = match p {
        Payload::Ip { ip, l4 } => [
            u64::from_be_bytes([ip.src[0], ip.src[1], ip.src[2], ip.src[3], ip.dst[0], ip.dst[1], ip.dst[2], ip.dst[3]]),
            ((ip.ident as u64) << 48) | ((ip.protocol as u64) << 40) | ((ip.frag_offset as u64) << 16) | ((ip.more_frags as u64) << 1) | ip.dont_frag as u64,
            match l4 {
                L4::Tcp(tcp) => ((tcp.seq as u64) << 32) | tcp.ack as u64,
                L4::Echo(e) => (1 << 63) | ((e.reply as u64) << 48) | ((e.ident as u64) << 32) | ((e.seq as u64) << 16),
                L4::Udp(u) => (2 << 62) | ((u.src_port as u64) << 32) | ((u.dst_port as u64) << 16),
                L4::Continuation => 3 << 62,
            },
            match l4 {
                L4::Tcp(tcp) => ((tcp.src_port as u64) << 48) | ((tcp.dst_port as u64) << 32) | ((tcp.window as u64) << 16) | ((tcp.flags.0 as u64) << 8) ^ (tcp.payload_len as u64).rotate_left(40),
                L4::Echo(e) => e.data_len as u64,
                L4::Udp(u) => u.payload_len as u64,
                L4::Continuation => ip.payload_len as u64,
            },
        ],
        Payload::Rm(r) => [
            ((r.protocol_id as u64) << 8) | ((r.backward as u64) << 4) | ((r.bn as u64) << 3) | ((r.ci as u64) << 2) | ((r.ni as u64) << 1) | r.ra as u64,
            ((r.er.0 as u64) << 32) | ((r.ccr.0 as u64) << 16) | r.mcr.0 as u64,
            ((r.ql as u64) << 32) | r.sn as u64,
            1,
        ],
        Payload::Credit(c) => {
            // Its own fold (the other payloads' digests stay as they were).
            return c.entries().fold(0x84_2222_5bd5_u64 ^ c.len() as u64, |h, e| (h ^ ((u64::from(e.vci) << 8) | u64::from(e.credit))).wrapping_mul(0x0000_0100_0000_01b3).rotate_left(17));
        }
    };
    words.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &w| (h ^ w).wrapping_mul(0x0000_0100_0000_01b3).rotate_left(29))
}

#[cfg(test)]
mod tests {
    use super::*;
    use atmsim_kernel::Ledger;
    use atmsim_wire::rm::RmRate;

    fn rm(sn: u32) -> Payload {
        let r = RmRate::from_cells_per_s(1000.0);
        Payload::Rm(RmRepr { protocol_id: 1, backward: false, bn: false, ci: false, ni: false, ra: false, er: r, ccr: r, mcr: r, ql: 0, sn })
    }

    #[test]
    fn handles_are_reused_and_books_count_live_payloads() {
        let mut s = Payloads::default();
        let a = s.insert(rm(1));
        let b = s.insert(rm(2));
        assert!(a.is_some() && b.is_some() && a != b);
        assert_eq!(s.live(), 2);
        assert_eq!(s.take(a), Some(rm(1)));
        assert_eq!(s.take(a), None, "a payload is taken once");
        assert_eq!(s.get(a), None);
        let c = s.insert(rm(3));
        assert_eq!(c, a, "the freed slot is reused");
        let d = s.duplicate(b);
        assert_eq!(s.get(d), Some(&rm(2)));
        assert_eq!(s.duplicate(PayloadId::NONE), PayloadId::NONE);
        s.release(b);
        s.release(PayloadId::NONE);
        assert_eq!(s.live(), 2);
        let mut l = Ledger::default();
        let store = crate::observe::Store { payloads: s, ..Default::default() };
        atmsim_kernel::RunStore::ledger(&store, &mut l);
        l.payloads_held = 1;
        assert_eq!(l.violations().len(), 1, "one live payload no message holds is a leak");
        l.payloads_held = 2;
        assert!(l.violations().is_empty());
    }
}
