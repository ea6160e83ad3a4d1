//! Packet captures as traces (`trace` source, `format = "pcap"`): the times and lengths
//! of the packets in a libpcap or pcapng file, such as tcpdump, Wireshark or dumpcap
//! write on a real LAN, or atmsim's own host captures ([`crate::capture`]).
//!
//! A packet's length is that of the datagram its link layer carries — what RFC 1483
//! routed encapsulation puts behind LLC/SNAP on an AAL5 VC — so that the `trace`
//! source's `overhead` (LLC/SNAP and the AAL5 trailer, 16 octets) applies to a capture
//! as to a `TIME LENGTH` trace. It is the packet's original length on the wire (not
//! the captured part: a capture cut at a snap length still gives whole lengths) less
//! its link-layer header, by link type ([`LINK_TYPES`]):
//!
//! | link type | header subtracted |
//! |---|---|
//! | 1 Ethernet | 14 octets, plus 4 for each 802.1Q/802.1ad tag the captured octets show |
//! | 10 FDDI | 13 (frame control and addresses), plus 8 for LLC/SNAP (`AA AA 03`) or 3 for plain LLC |
//! | 123 SunATM | the 4-octet pseudo-header, plus 8 for LLC/SNAP (`AA AA 03`) |
//! | 0 BSD loopback, 108 OpenBSD loopback | 4 (the address family) |
//! | 113 Linux cooked v1, 276 Linux cooked v2 | 16, 20 |
//! | 101 raw IP (and 12, 14: older files' DLT_RAW), 228 IPv4, 229 IPv6 | none |
//!
//! An Ethernet frame check sequence, where a capture keeps it, is counted as data (a
//! pcap file does not say whether it is there). `direction` keeps the packets a host
//! sent or those it received, for link types that record it (SunATM: bit 7 of the
//! pseudo-header; Linux cooked: packet type 4, "outgoing", against the others);
//! `capture_vc` keeps one VC of a SunATM capture (the pseudo-header's VPI and VCI);
//! `capture_filter` keeps the packets a tcpdump-style filter passes
//! ([`super::capture_filter`]), read from the octets behind the link-layer header.
//!
//! Times are each packet's time stamp less the first one's, exact to the picosecond
//! for micro- and nanosecond stamps; pcapng stamps follow their interface's
//! `if_tsresol` (decimal or binary fractions, microseconds when absent) and
//! `if_tsoffset`. The file must be in time order, as the text format must: a packet
//! stamped earlier than the one before is refused with its number (sort such a capture
//! first, e.g. with Wireshark's `reordercap`). Errors name the packet as tcpdump and
//! Wireshark number them, from 1.

use pcap_file::pcap::PcapReader;
use pcap_file::pcapng::blocks::interface_description::{InterfaceDescriptionBlock, InterfaceDescriptionOption};
use pcap_file::pcapng::{Block, PcapNgReader};
use pcap_file::{DataLink, Endianness, PcapError, TsResolution};

use super::capture_filter::Filter;
use atmsim_kernel::PS_PER_S;

/// A trace as read (from a capture here, or from text by `super::trace::parse`):
/// times (ps from the first) and lengths (octets).
#[derive(Debug, PartialEq)]
pub struct TraceData {
    pub times_ps: Vec<u64>,
    pub lengths: Vec<u32>,
}

/// Which packets of a capture to keep (`trace` parameter `direction`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    Both,
    Sent,
    Received,
}

/// Which packets of a capture to keep: a direction, for SunATM captures one VC, and
/// those a filter passes (`trace` parameters `direction`, `capture_vc` and
/// `capture_filter`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Select {
    pub direction: Direction,
    /// A VC label ([`crate::cell::vc_label`]); None: every VC.
    pub vc: Option<u32>,
    /// None: every packet.
    pub filter: Option<Filter>,
}

impl From<Direction> for Select {
    fn from(direction: Direction) -> Self {
        Select { direction, vc: None, filter: None }
    }
}

/// The `direction` parameter's names.
pub const DIRECTIONS: [&str; 3] = ["both", "sent", "received"];

/// The link types atmsim reads, as `number name`.
pub const LINK_TYPES: &str = "0 NULL, 1 ETHERNET, 10 FDDI, 12 and 14 (raw IP), 101 RAW, 108 LOOP, 113 LINUX_SLL, 123 SUNATM, 228 IPV4, 229 IPV6, 276 LINUX_SLL2";

/// SNAP after 802.2 LLC: DSAP, SSAP, control.
const LLC_SNAP: [u8; 3] = [0xAA, 0xAA, 0x03];

/// Length and direction of one packet, from its link layer. `data` is what was
/// captured (perhaps cut short), `orig` the length on the wire. `Ok(None)`: the
/// packet is not of the chosen direction.
fn datagram(link: u32, data: &[u8], orig: u32, sel: &Select) -> Result<Option<u32>, String> {
    let dir = sel.direction;
    let sent: Option<bool>;
    let header: u32 = match link {
        0 | 108 => {
            sent = None;
            4
        }
        1 => {
            sent = None;
            let mut h = 14usize;
            // 802.1Q (0x8100), 802.1ad (0x88a8) and the old QinQ 0x9100, stacked
            while data.len() >= h && matches!(u16::from_be_bytes([data[h - 2], data[h - 1]]), 0x8100 | 0x88a8 | 0x9100) {
                h += 4;
            }
            h as u32
        }
        10 => {
            sent = None;
            13 + if data.get(13..16) == Some(&LLC_SNAP[..]) { 8 } else { 3 }
        }
        // 12 and 14: the platforms' DLT_RAW written into files by older tools (dpkt,
        // OpenBSD), read as raw IP as Wireshark reads them
        12 | 14 | 101 | 228 | 229 => {
            sent = None;
            0
        }
        113 | 276 => {
            let at = if link == 113 { 0 } else { 10 };
            sent = data.get(at..at + 2).map(|t| u16::from_be_bytes([t[0], t[1]]) == 4);
            if link == 113 { 16 } else { 20 }
        }
        123 => {
            sent = data.first().map(|b| b & atmsim_wire::sunatm::SUNATM_TX != 0);
            4 + if data.get(4..7) == Some(&LLC_SNAP[..]) { 8 } else { 0 }
        }
        other => {
            return Err(format!(
                "link type {other} ({:?}) is not one atmsim can read; valid: {LINK_TYPES}",
                DataLink::from(other)
            ))
        }
    };
    if dir != Direction::Both {
        match sent {
            Some(s) => {
                if s != (dir == Direction::Sent) {
                    return Ok(None);
                }
            }
            None if link == 113 || link == 276 || link == 123 => {
                return Err("too little of it was captured to tell its direction".into())
            }
            None => {
                return Err(format!(
                    "link type {link} ({:?}) does not record who sent a packet: use direction = \"both\" (SunATM and Linux cooked captures record it)",
                    DataLink::from(link)
                ))
            }
        }
    }
    if let Some(want) = sel.vc {
        if link != 123 {
            return Err(format!(
                "link type {link} ({:?}) carries no VC: capture_vc needs a SunATM capture (link type 123)",
                DataLink::from(link)
            ));
        }
        // SunATM pseudo-header: VPI in octet 1, VCI in octets 2-3
        let Some(h) = data.get(..4) else { return Err("too little of it was captured to tell its VC".into()) };
        if crate::cell::vc_label(u16::from(h[1]), u16::from_be_bytes([h[2], h[3]])) != want {
            return Ok(None);
        }
    }
    if orig < header {
        return Err(format!("its {orig} octets are fewer than its link-layer header ({header} octets)"));
    }
    if let Some(f) = &sel.filter {
        if !f.matches(data.get(header as usize..).unwrap_or_default()) {
            return Ok(None);
        }
    }
    Ok(Some(orig - header))
}

/// Picoseconds of `units` fractions of a second given by a pcapng `if_tsresol`
/// (bit 7 clear: 10^-v s; set: 2^-v s).
fn units_to_ps(units: u64, tsresol: u8) -> Result<u128, String> {
    let v = u32::from(tsresol & 0x7F);
    let u = u128::from(units);
    if tsresol & 0x80 == 0 {
        if v > 38 {
            return Err(format!("if_tsresol 10^-{v} s is finer than atmsim can represent"));
        }
        Ok(if v <= 12 { u * 10u128.pow(12 - v) } else { (u + 10u128.pow(v - 12) / 2) / 10u128.pow(v - 12) })
    } else {
        if v > 64 {
            return Err(format!("if_tsresol 2^-{v} s is finer than atmsim can represent"));
        }
        Ok((u * u128::from(PS_PER_S) + (1u128 << v) / 2) >> v)
    }
}

/// Collects packets in order and makes their times relative to the first.
#[derive(Default)]
struct Builder {
    abs_ps: Vec<u128>,
    lengths: Vec<u32>,
    /// Packets seen (kept or not), to number errors as tcpdump does.
    seen: u64,
    last: Option<u128>,
}

impl Builder {
    fn push(&mut self, at_ps: u128, link: u32, data: &[u8], orig: u32, sel: &Select) -> Result<(), String> {
        let n = self.seen;
        if let Some(last) = self.last {
            if at_ps < last {
                return Err(format!(
                    "packet {n}: stamped {} µs before packet {} (sort the capture in time order first, e.g. with reordercap)",
                    (last - at_ps) as f64 / 1e6,
                    n - 1
                ));
            }
        }
        self.last = Some(at_ps);
        if let Some(len) = datagram(link, data, orig, sel).map_err(|m| format!("packet {n}: {m}"))? {
            self.abs_ps.push(at_ps);
            self.lengths.push(len);
        }
        Ok(())
    }

    fn finish(self, sel: &Select) -> Result<TraceData, String> {
        let Some(&t0) = self.abs_ps.first() else {
            return Err(if self.seen == 0 {
                "the capture has no packets".to_string()
            } else if let Some(f) = &sel.filter {
                format!("none of the capture's {} packet(s) passes capture_filter '{f}' (with the direction and VC chosen)", self.seen)
            } else if sel.vc.is_some() {
                format!("none of the capture's {} packet(s) is on the VC (and in the direction) chosen", self.seen)
            } else {
                format!("none of the capture's {} packet(s) is in the direction chosen", self.seen)
            });
        };
        let times_ps = self
            .abs_ps
            .iter()
            .map(|&t| u64::try_from(t - t0).map_err(|_| "the capture spans more than 213 days, atmsim's time range".to_string()))
            .collect::<Result<Vec<u64>, String>>()?;
        Ok(TraceData { times_ps, lengths: self.lengths })
    }
}

fn pcap_error(e: PcapError, what: &str) -> String {
    match e {
        PcapError::IncompleteBuffer => format!("{what} is cut short (the file ends inside it)"),
        PcapError::IoError(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => format!("{what} is cut short (the file ends inside it)"),
        PcapError::IoError(io) => format!("{what}: cannot read the file: {io}"),
        other => format!("{what}: {other}"),
    }
}

/// True when `bytes` start like a libpcap or pcapng file.
pub fn is_capture(bytes: &[u8]) -> bool {
    matches!(
        bytes.get(..4),
        Some([0xA1, 0xB2, 0xC3, 0xD4] | [0xD4, 0xC3, 0xB2, 0xA1] | [0xA1, 0xB2, 0x3C, 0x4D] | [0x4D, 0x3C, 0xB2, 0xA1] | [0x0A, 0x0D, 0x0D, 0x0A])
    )
}

/// Reads a libpcap or pcapng capture held in memory.
pub fn parse(bytes: &[u8], select: impl Into<Select>) -> Result<TraceData, String> {
    read(bytes, select)
}

/// Reads a libpcap or pcapng capture (told apart by their first four octets) as it
/// streams from `r` — a file of any size needs memory only for the packets kept (12
/// octets each) and the reader's buffer (the `pcap-file` crate's, 8 MB).
pub fn read<R: std::io::Read>(mut r: R, select: impl Into<Select>) -> Result<TraceData, String> {
    let dir = select.into();
    let mut magic = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        match r.read(&mut magic[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(format!(" cannot read the file: {e}")),
        }
    }
    let whole = std::io::Read::chain(&magic[..got], r);
    match magic {
        _ if got < 4 || !is_capture(&magic) => Err(" not a libpcap or pcapng file (its first octets are not a capture's magic number)".into()),
        [0x0A, 0x0D, 0x0D, 0x0A] => read_pcapng(whole, &dir),
        _ => read_pcap(whole, &dir),
    }
}

fn read_pcap<R: std::io::Read>(r: R, dir: &Select) -> Result<TraceData, String> {
    let mut reader = PcapReader::new(r).map_err(|e| pcap_error(e, "the file header"))?;
    let header = reader.header();
    let link = u32::from(header.datalink);
    let per_frac: u128 = match header.ts_resolution {
        TsResolution::MicroSecond => 1_000_000,
        TsResolution::NanoSecond => 1_000,
    };
    let frac_limit = match header.ts_resolution {
        TsResolution::MicroSecond => 1_000_000,
        TsResolution::NanoSecond => 1_000_000_000,
    };
    let mut b = Builder::default();
    while let Some(p) = reader.next_raw_packet() {
        b.seen += 1;
        let n = b.seen;
        let p = p.map_err(|e| pcap_error(e, &format!("packet {n}")))?;
        if p.ts_frac >= frac_limit {
            return Err(format!("packet {n}: time stamp fraction {} is not below {frac_limit}", p.ts_frac));
        }
        if p.incl_len > p.orig_len {
            return Err(format!("packet {n}: {} octets captured of a packet of {}", p.incl_len, p.orig_len));
        }
        let at = u128::from(p.ts_sec) * u128::from(PS_PER_S) + u128::from(p.ts_frac) * per_frac;
        b.push(at, link, &p.data, p.orig_len, dir)?;
    }
    b.finish(dir)
}

/// An interface's link type, stamp resolution and offset (seconds).
fn interface(idb: &InterfaceDescriptionBlock) -> (u32, u8, u64) {
    let mut tsresol = 6u8;
    let mut offset = 0u64;
    for o in &idb.options {
        match o {
            InterfaceDescriptionOption::IfTsResol(r) => tsresol = *r,
            InterfaceDescriptionOption::IfTsOffset(s) => offset = *s,
            _ => {}
        }
    }
    (u32::from(idb.linktype), tsresol, offset)
}

fn read_pcapng<R: std::io::Read>(r: R, dir: &Select) -> Result<TraceData, String> {
    let mut reader = PcapNgReader::new(r).map_err(|e| pcap_error(e, "the section header block"))?;
    let mut b = Builder::default();
    let mut block = 1u64;
    // the packet's captured octets, copied out of the reader's buffer so that the
    // reader's interfaces can be consulted
    let mut data: Vec<u8> = Vec::new();
    loop {
        block += 1;
        let (iface, raw_ts, orig, obsolete) = match reader.next_block() {
            None => break,
            Some(Err(e)) => return Err(pcap_error(e, &format!("block {block} (after packet {})", b.seen))),
            // pcap-file hands the raw stamp over as if it were nanoseconds: take it back
            // as units of the interface's resolution.
            Some(Ok(Block::EnhancedPacket(p))) => {
                data.clear();
                data.extend_from_slice(&p.data);
                (p.interface_id, p.timestamp.as_nanos() as u64, p.original_len, false)
            }
            Some(Ok(Block::Packet(p))) => {
                data.clear();
                data.extend_from_slice(&p.data);
                (u32::from(p.interface_id), p.timestamp, p.original_len, true)
            }
            Some(Ok(Block::SimplePacket(_))) => {
                return Err(format!("packet {}: a Simple Packet Block carries no time stamp", b.seen + 1));
            }
            Some(Ok(_)) => continue,
        };
        // pcap-file reads the obsolete Packet Block's two 32-bit halves as one 64-bit
        // word: right in big-endian sections, halves swapped in little-endian ones.
        let raw_ts = match (obsolete, reader.section().endianness) {
            (true, Endianness::Little) => raw_ts.rotate_left(32),
            _ => raw_ts,
        };
        b.seen += 1;
        let n = b.seen;
        let Some(idb) = reader.interfaces().get(iface as usize) else {
            return Err(format!("packet {n}: interface {iface} is not described before it"));
        };
        let (link, tsresol, offset) = interface(idb);
        let at = units_to_ps(raw_ts, tsresol).map_err(|m| format!("packet {n}: {m}"))? + u128::from(offset) * u128::from(PS_PER_S);
        b.push(at, link, &data, orig, dir)?;
    }
    b.finish(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A classic libpcap file, written out field by field (little-endian, microseconds
    /// unless `nano`): `(seconds, fraction, captured octets, original length)`.
    fn pcap_le(link: u32, nano: bool, packets: &[(u32, u32, &[u8], u32)]) -> Vec<u8> {
        let mut f = Vec::new();
        f.extend_from_slice(if nano { &[0x4D, 0x3C, 0xB2, 0xA1] } else { &[0xD4, 0xC3, 0xB2, 0xA1] });
        f.extend_from_slice(&[2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        f.extend_from_slice(&65_535u32.to_le_bytes());
        f.extend_from_slice(&link.to_le_bytes());
        for (s, frac, data, orig) in packets {
            for w in [*s, *frac, data.len() as u32, *orig] {
                f.extend_from_slice(&w.to_le_bytes());
            }
            f.extend_from_slice(data);
        }
        f
    }

    fn ether(ethertype: [u8; 2], tags: usize) -> Vec<u8> {
        let mut d = vec![0u8; 12];
        for _ in 0..tags {
            d.extend_from_slice(&[0x81, 0x00, 0x00, 0x05]);
        }
        d.extend_from_slice(&ethertype);
        d.extend_from_slice(&[0x45, 0, 0, 0]);
        d
    }

    #[test]
    fn ethernet_captures_give_datagram_lengths_at_their_stamps() {
        let plain = ether([0x08, 0x00], 0);
        let tagged = ether([0x08, 0x00], 1);
        let qinq = ether([0x08, 0x00], 2);
        // a packet cut at a 16-octet snap length still gives its whole length
        let f = pcap_le(1, false, &[
            (1_000, 999_999, &plain, 1_514),
            (1_001, 250_000, &tagged, 64),
            (1_001, 250_000, &qinq, 1_522),
            (1_002, 0, &plain[..16], 1_000),
        ]);
        let t = parse(&f, Direction::Both).unwrap();
        assert_eq!(t.lengths, vec![1_500, 46, 1_500, 986]);
        assert_eq!(t.times_ps, vec![0, 250_001_000_000, 250_001_000_000, 1_000_001_000_000]);
    }

    #[test]
    fn nanosecond_and_big_endian_files_keep_their_stamps_exact() {
        let d = [0u8; 20];
        let f = pcap_le(101, true, &[(7, 999_999_999, &d, 40), (8, 1, &d, 576)]);
        let t = parse(&f, Direction::Both).unwrap();
        assert_eq!((t.times_ps, t.lengths), (vec![0, 2_000], vec![40, 576]));
        // the same two packets, big-endian, written out octet by octet
        let mut be = vec![0xA1, 0xB2, 0x3C, 0x4D, 0, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0, 0, 0, 101];
        be.extend_from_slice(&[0, 0, 0, 7, 0x3B, 0x9A, 0xC9, 0xFF, 0, 0, 0, 0, 0, 0, 0, 40]);
        be.extend_from_slice(&[0, 0, 0, 8, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0x02, 0x40]);
        let t = parse(&be, Direction::Both).unwrap();
        assert_eq!((t.times_ps, t.lengths), (vec![0, 2_000], vec![40, 576]));
    }

    #[test]
    fn sunatm_and_linux_cooked_captures_split_by_direction() {
        let snap = |tx: u8| vec![tx | 0x02, 0, 0, 32, 0xAA, 0xAA, 0x03, 0, 0, 0, 0x08, 0x00];
        let f = pcap_le(123, true, &[(0, 0, &snap(0x80), 9_180 + 12), (0, 5, &snap(0), 52 + 12), (0, 9, &snap(0x80), 552 + 12)]);
        assert_eq!(parse(&f, Direction::Both).unwrap().lengths, vec![9_180, 52, 552]);
        let sent = parse(&f, Direction::Sent).unwrap();
        assert_eq!((sent.lengths, sent.times_ps), (vec![9_180, 552], vec![0, 9_000]));
        assert_eq!(parse(&f, Direction::Received).unwrap().lengths, vec![52]);
        // one VC of several: VPI 1 / VCI 300 (octets 1-3 of the pseudo-header)
        let on = |tx: u8, vpi: u8, vci: u16| {
            let mut h = snap(tx);
            h[1] = vpi;
            h[2..4].copy_from_slice(&vci.to_be_bytes());
            h
        };
        let f = pcap_le(123, true, &[(0, 0, &on(0x80, 1, 300), 112), (0, 1, &on(0x80, 0, 300), 212), (0, 2, &on(0, 1, 300), 312)]);
        let vc = crate::cell::vc_label(1, 300);
        assert_eq!(parse(&f, Select { direction: Direction::Both, vc: Some(vc), filter: None }).unwrap().lengths, vec![100, 300]);
        assert_eq!(parse(&f, Select { direction: Direction::Sent, vc: Some(vc), filter: None }).unwrap().lengths, vec![100]);
        let none = Select { direction: Direction::Both, vc: Some(crate::cell::vc_label(0, 5)), filter: None };
        assert_eq!(parse(&f, none).unwrap_err(), "none of the capture's 3 packet(s) is on the VC (and in the direction) chosen");
        // Linux cooked v1: packet type 4 is outgoing, 0 is to this host
        let mut out = vec![0, 4];
        out.resize(16, 0);
        let mut inn = vec![0, 0];
        inn.resize(16, 0);
        let f = pcap_le(113, false, &[(0, 0, &out, 116), (0, 1, &inn, 56)]);
        assert_eq!(parse(&f, Direction::Sent).unwrap().lengths, vec![100]);
        assert_eq!(parse(&f, Direction::Received).unwrap().lengths, vec![40]);
    }

    #[test]
    fn a_capture_filter_keeps_one_flow_behind_any_link_layer() {
        // IPv4 headers with TCP or UDP ports, behind Ethernet (one frame 802.1Q-tagged)
        // and behind raw IP; lengths are the datagrams' on the wire.
        let ip = |src: u8, proto: u8, sport: u16, dport: u16| {
            let mut p = vec![0x45, 0, 0, 0, 0, 0, 0, 0, 64, proto, 0, 0, 10, 0, 0, src, 10, 0, 0, 99];
            p.extend(sport.to_be_bytes());
            p.extend(dport.to_be_bytes());
            p
        };
        let eth = |vlan: bool, payload: Vec<u8>| {
            let mut f = vec![0u8; 12];
            if vlan {
                f.extend([0x81, 0x00, 0, 7]);
            }
            f.extend([0x08, 0x00]);
            f.extend(payload);
            f
        };
        let arp = [vec![0u8; 12], vec![0x08, 0x06, 0, 1, 8, 0]].concat();
        let pkts = [eth(false, ip(1, 6, 40000, 5001)), eth(true, ip(2, 6, 40001, 5001)), eth(false, ip(1, 17, 53, 53)), arp];
        let f = pcap_le(1, false, &[(0, 0, &pkts[0], 14 + 1500), (0, 10, &pkts[1], 18 + 1000), (0, 20, &pkts[2], 14 + 80), (0, 30, &pkts[3], 14 + 28)]);
        let keep = |filter: &str| {
            let sel = Select { direction: Direction::Both, vc: None, filter: Some(Filter::parse(filter).unwrap()) };
            parse(&f, sel).map(|t| (t.lengths, t.times_ps))
        };
        assert_eq!(keep("tcp port 5001").unwrap(), (vec![1500, 1000], vec![0, 10_000_000]));
        // times start at the first packet kept
        assert_eq!(keep("tcp and src host 10.0.0.2").unwrap(), (vec![1000], vec![0]));
        assert_eq!(keep("udp or not ip").unwrap(), (vec![80, 28], vec![0, 10_000_000]));
        assert_eq!(keep("port 22").unwrap_err(), "none of the capture's 4 packet(s) passes capture_filter 'port 22' (with the direction and VC chosen)");
        let raw = pcap_le(101, false, &[(0, 0, &ip(1, 6, 1, 80), 40), (0, 1, &ip(3, 6, 1, 443), 60)]);
        let sel = Select { direction: Direction::Both, vc: None, filter: Some(Filter::parse("dst port 443").unwrap()) };
        assert_eq!(parse(&raw, sel).unwrap().lengths, vec![60]);
    }

    #[test]
    fn fddi_frames_lose_their_mac_header_and_llc() {
        let mut snap = vec![0x50; 13];
        snap.extend_from_slice(&[0xAA, 0xAA, 0x03, 0, 0, 0, 0x08, 0x00]);
        let mut llc = vec![0x50; 13];
        llc.extend_from_slice(&[0x42, 0x42, 0x03]);
        let f = pcap_le(10, false, &[(0, 0, &snap, 4_500), (0, 0, &llc, 100)]);
        assert_eq!(parse(&f, Direction::Both).unwrap().lengths, vec![4_479, 84]);
    }

    /// SHB, then two interfaces: Ethernet at the default microseconds, raw IP at
    /// 2^-10 s with an offset of 1 s; then an EPB on each and an obsolete Packet Block.
    fn pcapng_two_interfaces() -> Vec<u8> {
        fn block(ty: u32, body: &[u8]) -> Vec<u8> {
            let len = 12 + body.len() as u32;
            let mut b = ty.to_le_bytes().to_vec();
            b.extend_from_slice(&len.to_le_bytes());
            b.extend_from_slice(body);
            b.extend_from_slice(&len.to_le_bytes());
            b
        }
        let mut f = block(0x0A0D_0D0A, &[0x4D, 0x3C, 0x2B, 0x1A, 1, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]);
        f.extend(block(1, &[1, 0, 0, 0, 0, 0, 0, 0]));
        let mut idb = vec![101, 0, 0, 0, 0, 0, 0, 0];
        idb.extend_from_slice(&[9, 0, 1, 0, 0x8A, 0, 0, 0]); // if_tsresol = 2^-10
        idb.extend_from_slice(&[14, 0, 8, 0, 1, 0, 0, 0, 0, 0, 0, 0]); // if_tsoffset = 1 s
        idb.extend_from_slice(&[0, 0, 0, 0]);
        f.extend(block(1, &idb));
        let epb = |iface: u32, ts: u64, data: &[u8], orig: u32| {
            let mut b = iface.to_le_bytes().to_vec();
            b.extend_from_slice(&((ts >> 32) as u32).to_le_bytes());
            b.extend_from_slice(&(ts as u32).to_le_bytes());
            b.extend_from_slice(&(data.len() as u32).to_le_bytes());
            b.extend_from_slice(&orig.to_le_bytes());
            b.extend_from_slice(data);
            b.resize(b.len().div_ceil(4) * 4, 0);
            block(6, &b)
        };
        let eth = ether([0x08, 0x00], 0);
        // 1.5 s on the Ethernet interface (microseconds)
        f.extend(epb(0, 1_500_000, &eth, 1_514));
        // 512/1024 s + 1 s = 1.5 s on the raw one, then 1.75 s
        f.extend(epb(1, 512, &[0x45, 0, 0, 0], 40));
        f.extend(epb(1, 768, &[0x45, 0, 0, 0], 60));
        // an obsolete Packet Block (type 2) on interface 0 at 2 s
        let mut pb = vec![0, 0, 0, 0];
        pb.extend_from_slice(&0u32.to_le_bytes());
        pb.extend_from_slice(&2_000_000u32.to_le_bytes());
        pb.extend_from_slice(&(eth.len() as u32).to_le_bytes());
        pb.extend_from_slice(&114u32.to_le_bytes());
        pb.extend_from_slice(&eth);
        pb.resize(pb.len().div_ceil(4) * 4, 0);
        f.extend(block(2, &pb));
        f
    }

    #[test]
    fn pcapng_stamps_follow_each_interfaces_resolution_and_offset() {
        let f = pcapng_two_interfaces();
        let t = parse(&f, Direction::Both).unwrap();
        assert_eq!(t.lengths, vec![1_500, 40, 60, 100]);
        assert_eq!(t.times_ps, vec![0, 0, 250_000_000_000, 500_000_000_000]);
    }

    proptest::proptest! {
        /// SPEC section 7: malformed input never crashes the process. Valid files with
        /// octets overwritten or cut anywhere give a trace or an error, never a panic.
        #[test]
        fn damaged_captures_are_refused_not_panicked_on(
            ng in proptest::bool::ANY,
            cut in 0usize..400,
            edits in proptest::collection::vec((0usize..400, proptest::num::u8::ANY), 0..8),
        ) {
            let eth = ether([0x08, 0x00], 1);
            let mut f = if ng { pcapng_two_interfaces() } else { pcap_le(1, true, &[(1, 2, &eth, 60), (1, 3, &eth, 1_514), (2, 0, &eth[..5], 90)]) };
            for (at, v) in edits {
                let n = f.len();
                f[at % n] = v;
            }
            f.truncate(cut.max(1));
            for dir in [Direction::Both, Direction::Sent, Direction::Received] {
                match parse(&f, dir) {
                    Ok(t) => proptest::prop_assert_eq!(t.times_ps.len(), t.lengths.len()),
                    Err(e) => proptest::prop_assert!(!e.trim().is_empty()),
                }
            }
        }
    }

    /// A reader that hands over at most three octets a call, as a pipe or a slow
    /// disk may: the capture's records straddle every read.
    struct Trickle<'a>(&'a [u8]);

    impl std::io::Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.0.len().min(buf.len()).min(3);
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn a_capture_streamed_in_small_reads_reads_as_a_whole_one() {
        let eth = ether([0x08, 0x00], 1);
        let pcap = pcap_le(1, true, &[(1, 2, &eth, 60), (1, 3, &eth, 1_514), (2, 0, &eth, 90)]);
        for f in [pcap, pcapng_two_interfaces()] {
            let whole = parse(&f, Direction::Both).unwrap();
            assert!(whole.lengths.len() >= 2);
            assert_eq!(read(Trickle(&f), Direction::Both).unwrap(), whole);
            let cut = read(Trickle(&f[..f.len() - 2]), Direction::Both).unwrap_err();
            assert!(cut.contains("is cut short"), "{cut}");
        }
        assert!(read(Trickle(&[0xD4, 0xC3]), Direction::Both).unwrap_err().contains("not a libpcap or pcapng file"));
    }

    #[test]
    fn units_convert_exactly_or_to_the_nearest_picosecond() {
        assert_eq!(units_to_ps(3, 6).unwrap(), 3_000_000);
        assert_eq!(units_to_ps(3, 9).unwrap(), 3_000);
        assert_eq!(units_to_ps(3, 12).unwrap(), 3);
        assert_eq!(units_to_ps(15, 13).unwrap(), 2);
        assert_eq!(units_to_ps(1, 0x80).unwrap(), 1_000_000_000_000);
        assert_eq!(units_to_ps(1, 0x80 | 40).unwrap(), 1); // 0.909 ps
        assert!(units_to_ps(1, 39).is_err() && units_to_ps(1, 0x80 | 65).is_err());
    }

    #[test]
    fn bad_captures_name_the_packet_and_what_is_wrong() {
        let eth = ether([0x08, 0x00], 0);
        let e = parse(b"0.1 100\n", Direction::Both).unwrap_err();
        assert!(e.contains("not a libpcap or pcapng file"), "{e}");
        let f = pcap_le(1, false, &[(5, 0, &eth, 100), (4, 999_999, &eth, 100)]);
        assert_eq!(parse(&f, Direction::Both).unwrap_err(), "packet 2: stamped 1 µs before packet 1 (sort the capture in time order first, e.g. with reordercap)");
        let f = pcap_le(1, false, &[(5, 0, &eth, 100), (6, 0, &eth[..10], 10)]);
        assert_eq!(parse(&f, Direction::Both).unwrap_err(), "packet 2: its 10 octets are fewer than its link-layer header (14 octets)");
        let f = pcap_le(1, false, &[(5, 1_000_000, &eth, 100)]);
        assert!(parse(&f, Direction::Both).unwrap_err().starts_with("packet 1: time stamp fraction 1000000"));
        let f = pcap_le(1, false, &[(5, 0, &eth, 17)]);
        assert_eq!(parse(&f, Direction::Both).unwrap_err(), "packet 1: 18 octets captured of a packet of 17");
        let f = pcap_le(1, false, &[(5, 0, &eth, 100)]);
        assert!(parse(&f[..f.len() - 3], Direction::Both).unwrap_err().starts_with("packet 1 is cut short"));
        assert!(parse(&f[..20], Direction::Both).unwrap_err().starts_with("the file header is cut short"));
        let e = parse(&pcap_le(147, false, &[(5, 0, &eth, 100)]), Direction::Both).unwrap_err();
        assert!(e.starts_with("packet 1: link type 147 (") && e.contains("valid: 0 NULL, 1 ETHERNET"), "{e}");
        let e = parse(&f, Direction::Sent).unwrap_err();
        assert!(e.starts_with("packet 1: link type 1 (ETHERNET) does not record who sent a packet"), "{e}");
        assert_eq!(parse(&pcap_le(1, false, &[]), Direction::Both).unwrap_err(), "the capture has no packets");
        let e = parse(&f, Select { direction: Direction::Both, vc: Some(32), filter: None }).unwrap_err();
        assert!(e.starts_with("packet 1: link type 1 (ETHERNET) carries no VC: capture_vc needs a SunATM capture"), "{e}");
        let f = pcap_le(123, false, &[(0, 0, &[0x02, 0, 0, 5], 60)]);
        assert_eq!(parse(&f, Direction::Sent).unwrap_err(), "none of the capture's 1 packet(s) is in the direction chosen");
    }
}
