//! Packet capture at hosts (`host` parameter `pcap`), an observer
//! ([`crate::observe`]) of PDUs: every AAL5 PDU a host hands to its adapter and every
//! one it reassembles whole, written as a libpcap file that
//! tcpdump and Wireshark read, so that a run's TCP connections can be studied with the
//! tools used on real captures (sequence graphs, round-trip times, retransmissions).
//!
//! Format: classic libpcap 2.4 with nanosecond timestamps (magic `a1b23c4d`),
//! link type 123, `LINKTYPE_SUNATM` — each record starts with SunATM's 4-octet
//! pseudo-header (octet 0: `0x80` when the host sent the PDU, `0x00` when it received
//! it, ORed with the traffic type `0x02`, LLC encapsulation; octet 1: VPI; octets 2–3:
//! VCI, big-endian), then the AAL5 CPCS-SDU: LLC/SNAP (RFC 1483), the IPv4 header, the
//! transport header on a datagram's first fragment, the data (zeros: the model carries
//! no user data). The emitted octets are those of the byte-exact checking mode
//! ([`crate::wirecheck::emit_sdu`]): checksums are real. Records are cut at the snap
//! length (`pcap_snaplen`; `orig_len` keeps the full length), as `tcpdump -s` does.
//!
//! Timestamps are simulated time from zero (the capture starts on 1 January 1970),
//! rounded to the nanosecond. A host records a PDU it sends when its SAR hands the
//! PDU's cells to the pacer or interface, and one it receives when the last cell
//! completes it (PDUs the AAL discards are not seen, as at a real host's driver).
//! SunATM has one octet for the VPI: a captured host with a VPI above 255 on any of its
//! VCs is refused when the scenario loads.

use std::fmt;
use std::fs::File;
use std::io::BufWriter;
use std::time::Duration;

use atmsim_kernel::{CompId, SimTime};
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, Endianness, TsResolution};

use atmsim_wire::sunatm::{SUNATM_HEADER, SUNATM_LLC, SUNATM_TX};

use crate::cell::vc_name;
use crate::observe::{Interest, Observation, Observer};
use crate::payload::Payloads;

/// One capture file.
struct Tap {
    path: String,
    snaplen: usize,
    /// None once closed.
    writer: Option<PcapWriter<BufWriter<File>>>,
    packets: u64,
}

/// The run's captures, by component index.
#[derive(Default)]
pub struct Capture {
    taps: Vec<Option<Tap>>,
    /// The first write that failed (the run fails with it when it ends).
    error: Option<String>,
}

impl fmt::Debug for Capture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.taps.iter().flatten().map(|t| (&t.path, t.packets))).finish()
    }
}

impl Capture {
    /// Creates `path` (truncating it) and starts capturing component `comp` into it,
    /// each record cut at `snaplen` octets (pseudo-header included).
    pub fn open(&mut self, comp: usize, path: &str, snaplen: usize) -> Result<(), String> {
        let file = File::create(path).map_err(|e| format!("cannot create the capture file {path}: {e}"))?;
        let header = PcapHeader {
            snaplen: snaplen as u32,
            datalink: DataLink::SUNATM,
            ts_resolution: TsResolution::NanoSecond,
            endianness: Endianness::Little,
            ..PcapHeader::default()
        };
        let writer = PcapWriter::with_header(BufWriter::new(file), header).map_err(|e| format!("writing the capture file {path}: {e}"))?;
        if self.taps.len() <= comp {
            self.taps.resize_with(comp + 1, || None);
        }
        self.taps[comp] = Some(Tap { path: path.to_string(), snaplen, writer: Some(writer), packets: 0 });
        Ok(())
    }

    /// Whether component `comp` is captured.
    #[inline]
    pub fn on(&self, comp: u32) -> bool {
        matches!(self.taps.get(comp as usize), Some(Some(_)))
    }

    /// Records one PDU of component `comp` at `now`: `sdu` sent (`tx`) or received on
    /// VC label `vc` (VPI << 16 | VCI). A failed write stops that capture; the run
    /// fails with the error when it ends ([`Capture::close`]).
    pub fn record(&mut self, comp: u32, now: SimTime, tx: bool, vc: u32, sdu: &[u8]) {
        if let Err(e) = self.write(comp, now, tx, vc, sdu) {
            if let Some(Some(tap)) = self.taps.get_mut(comp as usize) {
                tap.writer = None;
            }
            self.error.get_or_insert(e);
        }
    }

    fn write(&mut self, comp: u32, now: SimTime, tx: bool, vc: u32, sdu: &[u8]) -> Result<(), String> {
        let Some(Some(tap)) = self.taps.get_mut(comp as usize) else { return Ok(()) };
        let Some(writer) = tap.writer.as_mut() else { return Ok(()) };
        let vpi = vc >> 16;
        let vci = (vc & 0xffff) as u16;
        let vpi = u8::try_from(vpi).map_err(|_| format!("capture file {}: VPI {vpi} does not fit SunATM's one octet", tap.path))?;
        let mut data = Vec::with_capacity(tap.snaplen.min(SUNATM_HEADER + sdu.len()));
        data.push(if tx { SUNATM_TX | SUNATM_LLC } else { SUNATM_LLC });
        data.push(vpi);
        data.extend_from_slice(&vci.to_be_bytes());
        let keep = sdu.len().min(tap.snaplen.saturating_sub(SUNATM_HEADER));
        data.extend_from_slice(&sdu[..keep]);
        let ns = (now.0 + 500) / 1000;
        let packet = PcapPacket::new(Duration::from_nanos(ns), (SUNATM_HEADER + sdu.len()) as u32, &data);
        writer.write_packet(&packet).map_err(|e| format!("writing the capture file {}: {e}", tap.path))?;
        tap.packets += 1;
        Ok(())
    }

    /// Flushes and closes every capture file (the end of the run).
    pub fn finish(&mut self) -> Result<(), String> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        for tap in self.taps.iter_mut().flatten() {
            if let Some(w) = tap.writer.take() {
                w.into_writer().into_inner().map_err(|e| format!("writing the capture file {}: {}", tap.path, e.error()))?;
            }
        }
        Ok(())
    }

    /// Whether any component is captured.
    pub fn is_empty(&self) -> bool {
        self.taps.iter().all(Option::is_none)
    }

    /// `(path, PDUs recorded)` of each capture, in component order.
    pub fn files(&self) -> Vec<(String, u64)> {
        self.taps.iter().flatten().map(|t| (t.path.clone(), t.packets)).collect()
    }
}

impl Observer for Capture {
    fn interest(&self) -> Interest {
        Interest::PDU
    }
    fn observe(&mut self, time: SimTime, comp: CompId, what: &Observation<'_>, _: &Payloads) -> Result<(), String> {
        let (cell, payload, tx) = match *what {
            Observation::PduSent { cell, payload } => (cell, payload, true),
            Observation::PduReceived { cell, payload } => (cell, payload, false),
            _ => return Ok(()),
        };
        if !self.on(comp) {
            return Ok(());
        }
        let sdu = crate::wirecheck::emit_sdu(payload).map_err(|e| format!("capture: {} PDU: {e}", vc_name(cell.vc)))?;
        self.record(comp, time, tx, cell.vc, &sdu);
        Ok(())
    }
    fn close(&mut self) -> Result<(), String> {
        self.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("atmsim-capture-{}-{name}.pcap", std::process::id()))
    }

    /// The file's octets against libpcap's layout, written out here by hand: the
    /// 24-octet global header, then per record ts_sec, ts_nsec, incl_len, orig_len and
    /// the SunATM header before the SDU.
    #[test]
    fn records_follow_libpcap_and_sunatm_octet_for_octet() {
        let path = temp("layout");
        let mut c = Capture::default();
        c.open(2, path.to_str().unwrap(), 16).unwrap();
        assert!(c.on(2) && !c.on(1) && !c.on(3));
        let sdu: Vec<u8> = (1..=20).collect();
        // 1.5 s + 499 ps rounds down, + 500 ps up (to the nanosecond)
        c.record(2, SimTime(1_500_000_000_499), true, (7 << 16) | 0x0164, &sdu);
        c.record(2, SimTime(1_500_000_000_500), false, 0x0020, &sdu[..6]);
        c.record(1, SimTime(0), true, 1, &sdu); // not captured: nothing written
        assert_eq!(c.files(), vec![(path.to_str().unwrap().to_string(), 2)]);
        c.finish().unwrap();
        let b = std::fs::read(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        let mut want = vec![0x4d, 0x3c, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 16, 0, 0, 0, 123, 0, 0, 0];
        // 1 s, 500,000,000 ns (0x1dcd6500), 16 of 24 octets kept
        want.extend([1, 0, 0, 0, 0x00, 0x65, 0xcd, 0x1d, 16, 0, 0, 0, 24, 0, 0, 0]);
        want.extend([0x82, 7, 0x01, 0x64]);
        want.extend(1..=12u8);
        // received, 500,000,001 ns, the whole 4 + 6 octets
        want.extend([1, 0, 0, 0, 0x01, 0x65, 0xcd, 0x1d, 10, 0, 0, 0, 10, 0, 0, 0]);
        want.extend([0x02, 0, 0x00, 0x20]);
        want.extend(1..=6u8);
        assert_eq!(b, want);
    }

    #[test]
    fn a_vpi_beyond_one_octet_and_an_unwritable_file_fail_the_run_at_its_end() {
        let path = temp("vpi");
        let mut c = Capture::default();
        c.open(0, path.to_str().unwrap(), 64).unwrap();
        c.record(0, SimTime(0), true, 256 << 16 | 5, &[0; 8]);
        let e = c.finish().unwrap_err();
        std::fs::remove_file(&path).unwrap();
        assert!(e.contains("VPI 256") && e.contains("SunATM"), "{e}");
        let e = Capture::default().open(0, "/no/such/dir/x.pcap", 64).unwrap_err();
        assert!(e.contains("cannot create the capture file /no/such/dir/x.pcap"), "{e}");
    }
}
