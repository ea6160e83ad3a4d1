//! SunATM's 4-octet pseudo-header, which libpcap's link type 123 (`LINKTYPE_SUNATM`)
//! puts before each captured AAL5 CPCS-SDU: octet 0 holds the direction (bit 7 set:
//! sent by the captured host) and the traffic type in its low four bits (2: LLC
//! encapsulation); octet 1 the VPI; octets 2–3 the VCI, big-endian (libpcap's
//! `pcap-linktype(7)`; Wireshark's `packet-sunatm.c`).

/// Octet 0, bit 7: the PDU was sent by the captured host.
pub const SUNATM_TX: u8 = 0x80;
/// Octet 0, low 4 bits: traffic type LLC encapsulation.
pub const SUNATM_LLC: u8 = 0x02;
/// Octets of the pseudo-header.
pub const SUNATM_HEADER: usize = 4;
