"""Packet capture at hosts (`host` parameter `pcap`, `atmsim run --pcap HOST=FILE`):
the files are read back with dpkt, an independent libpcap and IPv4/TCP parser, and
the checksums recomputed here, not by the code under test."""
from __future__ import annotations

import json
import struct
import sys

import dpkt
import pytest

from conftest import ROOT, run_cli
from test_cli import assert_one_line_error

WINDOW = str(ROOT / "scenarios" / "examples" / "tcp_window.toml")
PING = str(ROOT / "scenarios" / "examples" / "ping_through_switch.toml")
SNAP = bytes([0xAA, 0xAA, 0x03, 0x00, 0x00, 0x00, 0x08, 0x00])  # RFC 1483 LLC/SNAP, IPv4
DURATION = 0.3


def ones_complement(data: bytes) -> int:
    """The Internet checksum's sum (RFC 1071), folded to 16 bits."""
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def records(path):
    """(time s, sent?, vpi, vci, the SDU's captured octets) per record."""
    with open(path, "rb") as fh:
        magic = fh.read(4)
        fh.seek(0)
        reader = dpkt.pcap.Reader(fh)
        assert reader.datalink() == dpkt.pcap.DLT_SUNATM == 123
        assert reader.snaplen > 0
        out = []
        for ts, buf in reader:
            flags, vpi, vci = buf[0], buf[1], struct.unpack("!H", buf[2:4])[0]
            assert flags & 0x0F == 0x02, flags  # traffic type: LLC
            out.append((float(ts), bool(flags & 0x80), vpi, vci, buf[4:]))
    # nanosecond libpcap, little-endian (a1b23c4d written least significant octet first)
    assert magic == bytes([0x4D, 0x3C, 0xB2, 0xA1])
    return out


tcp_capture_path = {}


@pytest.fixture(scope="module")
def tcp_capture(tmp_path_factory):
    d = tmp_path_factory.mktemp("capture")
    tcp_capture_path["dec"] = d / "dec.pcap"
    p = run_cli("run", WINDOW, "--quiet", "--json", "--set", f"scenario.duration={DURATION} s",
            "--pcap", f"dec={tcp_capture_path['dec']}", "--set", "sparc.pcap=" + str(d / "sparc-{run}.pcap"),
            "--set", "sparc.pcap_snaplen=64 KiB", "--run", "3")
    assert p.returncode == 0, p.stderr
    probes = {(r["component"], r["probe"], r["statistic"]): r["value"] for r in json.loads(p.stdout)["probes"]}
    return records(d / "dec.pcap"), records(d / "sparc-3.pcap"), probes


def tcp_of(sdu: bytes):
    assert sdu[:8] == SNAP
    ip = dpkt.ip.IP(sdu[8:])
    return ip, ip.data


def test_every_record_is_llc_snap_ipv4_with_a_correct_header_checksum(tcp_capture):
    dec, sparc, _ = tcp_capture
    assert dec and sparc
    for _, _, vpi, vci, sdu in dec + sparc:
        assert vpi == 0 and vci in (100, 200)
        ip, _ = tcp_of(sdu)
        assert ip.v == 4 and ip.p == dpkt.ip.IP_PROTO_TCP
        assert ones_complement(bytes(sdu[8:28])) == 0xFFFF  # the IPv4 header checksum holds


def test_whole_segments_carry_correct_tcp_checksums(tcp_capture):
    _, sparc, _ = tcp_capture
    whole = [sdu for _, _, _, _, sdu in sparc]
    data = 0
    for sdu in whole:
        ip, tcp = tcp_of(sdu)
        segment = bytes(sdu[8 + ip.hl * 4: 8 + ip.len])
        assert len(segment) == ip.len - ip.hl * 4  # a 64 KiB snap length keeps the whole PDU
        pseudo = ip.src + ip.dst + struct.pack("!BBH", 0, 6, len(segment))
        assert ones_complement(pseudo + segment) == 0xFFFF
        data += len(tcp.data) > 0
    assert data > 5


def test_directions_times_and_vcs_follow_the_scenario(tcp_capture):
    dec, sparc, _ = tcp_capture
    for recs, host in ((dec, "dec"), (sparc, "sparc")):
        times = [t for t, *_ in recs]
        assert times == sorted(times) and 0 <= times[0] and times[-1] <= DURATION
        for _, sent, _, vci, sdu in recs:
            ip, tcp = tcp_of(sdu)
            # dec sends data on VC 100 and takes ACKs on VC 200; the sparc the reverse
            data_vc = vci == 100
            assert sent == (data_vc == (host == "dec")), (host, sent, vci)
            if data_vc:  # a 9,140-octet segment (the MSS of the 9,180 MTU)
                assert ip.len == 9180 and tcp.flags & dpkt.tcp.TH_PUSH and (tcp.sport, tcp.dport) == (1124, 5001)
            else:  # a pure ACK
                assert ip.len == 40 and tcp.flags & dpkt.tcp.TH_ACK and (tcp.sport, tcp.dport) == (5001, 1124)


def test_the_captures_agree_with_each_other_and_with_the_probes(tcp_capture):
    dec, sparc, probes = tcp_capture
    sent = [(t, tcp_of(sdu)[1].seq) for t, tx, _, _, sdu in dec if tx]
    got = [(t, tcp_of(sdu)[1].seq) for t, tx, _, _, sdu in sparc if not tx]
    # every segment the dec's TCP made is in its capture (its SAR has no delay), but one
    # or two that may still wait for the CPU when the run ends
    made = probes[("dec/tcp/vc100", "tcp_segments", "count")]
    assert made - 2 <= len(sent) <= made
    # each segment the sparc received whole was sent by the dec at least one path delay
    # (4.4 ms of fibre, 4 us in the switch) earlier; lost ones are missing
    first_sent = {}
    for t, seq in sent:
        first_sent.setdefault(seq, t)
    assert got and len(got) <= len(sent)
    for t, seq in got:
        assert seq in first_sent and t - first_sent[seq] >= 4.4e-3
    # ACKs: what the sparc sent, the dec received (none lost on the way back)
    acks_sent = [tcp_of(sdu)[1].ack for _, tx, _, _, sdu in sparc if tx]
    acks_got = [tcp_of(sdu)[1].ack for _, tx, _, _, sdu in dec if not tx]
    assert acks_got == acks_sent[: len(acks_got)] and len(acks_sent) - len(acks_got) <= 2


def test_a_snap_length_cuts_records_and_keeps_the_length(tcp_capture):
    dec, _, _ = tcp_capture
    # dec's default 128-octet snap length: 124 octets of the SDU after SunATM's 4
    data = [sdu for _, tx, _, _, sdu in dec if tx]
    assert data and all(len(sdu) == 124 for sdu in data)
    # the record headers (read here octet by octet): incl_len 128, orig_len the whole PDU
    # (SunATM 4 + LLC/SNAP 8 + a 9,180-octet IP datagram)
    raw = (dec_path := tcp_capture_path["dec"]).read_bytes()
    assert struct.unpack("<IHHiIII", raw[:24])[1:] == (2, 4, 0, 0, 128, 123)  # version 2.4, snaplen, SUNATM
    at, lens = 24, []
    while at < len(raw):
        incl, orig = struct.unpack("<II", raw[at + 8: at + 16])
        lens.append((incl, orig))
        at += 16 + incl
    assert at == len(raw), dec_path
    assert (128, 4 + 8 + 9180) in lens and all(i == min(128, o) for i, o in lens)


def test_ping_fragments_are_captured(tmp_path, cli):
    out = tmp_path / "ws1.pcap"
    # 4,000-octet pings from a host with a 1,500-octet MTU: three fragments each; ws2
    # answers in the same pieces (the host model mirrors the request's fragmentation)
    p = cli("run", PING, "--quiet", "--json", "--pcap", f"ws1={out}", "--set", "ws1.length=4000 B",
            "--set", "ws1.mtu=1500 B", "--set", "ws1.pcap_snaplen=16 KiB")
    assert p.returncode == 0, p.stderr
    probes = {r["probe"]: r["value"] for r in json.loads(p.stdout)["probes"]
              if r["component"] == "ws1" and r["statistic"] == "count"}
    recs = records(out)
    frags = {}
    for _, sent, _, vci, sdu in recs:
        ip = dpkt.ip.IP(sdu[8:])
        assert ip.p == dpkt.ip.IP_PROTO_ICMP and vci == (92 if sent else 93)
        frags.setdefault((sent, ip.id), []).append((ip.offset * 8, ip.mf, ip.len))  # dpkt: 8-octet units
    requests = [v for (sent, _), v in frags.items() if sent]
    replies = [v for (sent, _), v in frags.items() if not sent]
    assert requests and replies
    # 4,008 octets of ICMP in 1,480-octet pieces: offsets 0, 1480, 2960, the last without MF
    assert all(v == [(0, 1, 1500), (1480, 1, 1500), (2960, 0, 20 + 4008 - 2960)] for v in requests)
    # the background loses some replies: every one the host counts came whole, in the
    # request's pieces, and every PDU it reassembled is in the capture
    assert len(requests) == probes["ping_tx"] == 100
    assert len(replies) == probes["ping_rx"] > 0 and all(v == requests[0] for v in replies)
    assert sum(not sent for _, sent, *_ in recs) == probes["aal5_rx_pdus"]
    types = {(sent, sdu[8 + 20]) for _, sent, _, _, sdu in recs if dpkt.ip.IP(sdu[8:]).offset == 0}
    assert types == {(True, 8), (False, 0)}  # ICMP echo request out, echo reply in


@pytest.mark.parametrize("args,contains", [
    (["--pcap", "nosuch=x.pcap"], ["nosuch"]),
    (["--pcap", "sw=x.pcap"], ["pcap"]),
    (["--pcap", "dec"], ["--pcap dec", "HOST=FILE"]),
    (["--pcap", "dec=/no/such/dir/x.pcap"], ["pcap", "/no/such/dir", "does not exist"]),
    (["--pcap", "dec=x.pcap", "--set", "dec.pcap_snaplen=8 B"], ["pcap_snaplen", "16 B"]),
])
def test_bad_captures_are_one_line_exit_2(cli, args, contains, tmp_path):
    p = cli("run", WINDOW, "--quiet", *args)
    assert_one_line_error(p, contains=contains)


# --- captures as traces: the `trace` source's format = "pcap" -----------------------

def ethernet_frame(ip_len: int, vlan: bool = False) -> bytes:
    """An Ethernet II frame carrying an IPv4 datagram of `ip_len` octets (dpkt builds it)."""
    ip = dpkt.ip.IP(src=b"\x0a\0\0\x01", dst=b"\x0a\0\0\x02", p=dpkt.ip.IP_PROTO_UDP,
                    data=b"\0" * (ip_len - 20))
    frame = bytes(dpkt.ethernet.Ethernet(src=b"\x02" * 6, dst=b"\x04" * 6, type=dpkt.ethernet.ETH_TYPE_IP, data=ip))
    if vlan:  # an 802.1Q tag (TPID 0x8100, VLAN 5) between the addresses and the type
        frame = frame[:12] + b"\x81\x00\x00\x05" + frame[12:]
    return frame


# (time s, IP datagram octets, tagged?): lengths 40-9180, cell counts ⌈(L + 16)/48⌉
PACKETS = [(1000.0, 40, False), (1000.0005, 1500, False), (1000.25, 576, True), (1000.5, 9180, False),
           (1000.75, 1500, True), (1001.0, 1000, False)]


@pytest.mark.parametrize("kind", ["pcap-us", "pcap-ns", "pcapng"])
def test_a_capture_written_by_dpkt_replays_packet_for_packet(kind, tmp_path, cli):
    cap = tmp_path / "lan.cap"
    assert sys.byteorder == "little"  # dpkt writes libpcap in the machine's order
    with open(cap, "wb") as fh:
        if kind == "pcapng":
            w = dpkt.pcapng.Writer(fh, snaplen=96, linktype=dpkt.pcap.DLT_EN10MB)
        else:
            dpkt.pcap.Writer(fh, snaplen=96, linktype=dpkt.pcap.DLT_EN10MB, nano=kind == "pcap-ns")
        for t, length, vlan in PACKETS:
            frame = ethernet_frame(length, vlan)
            if kind == "pcapng":
                w.writepkt(frame, ts=t)  # (dpkt's pcapng blocks keep whole packets)
            else:
                # cut at the snap length, the original length kept, as tcpdump -s 96 does
                frac = round((t % 1) * (1e9 if kind == "pcap-ns" else 1e6))
                cut = frame[:96]
                fh.write(bytes(dpkt.pcap.LEPktHdr(tv_sec=int(t), tv_usec=frac, caplen=len(cut), len=len(frame))) + cut)
    # the packets that start before each duration, counted from the list above
    for duration, start_before in [(0.2, 2), (0.6, 4), (2.0, 6)]:
        scen = tmp_path / "replay.toml"
        scen.write_text(f'''connections = ["src -> sink"]
[scenario]
duration = "{duration} s"
[components.src]
kind = "trace"
file = "lan.cap"
format = "pcap"
[components.sink]
kind = "sink"
''')
        p = cli("run", str(scen), "--quiet", "--json")
        assert p.returncode == 0, p.stderr
        probes = {(r["component"], r["probe"], r["statistic"]): r["value"] for r in json.loads(p.stdout)["probes"]}
        lengths = [n for _, n, _ in PACKETS[:start_before]]
        assert probes[("src", "trace_pdus", "count")] == start_before, (kind, duration)
        assert probes[("src", "src_tx_cells", "count")] == sum(-(-(n + 16) // 48) for n in lengths), (kind, duration)


@pytest.mark.parametrize("extra,contains", [
    ('format = "pcap"\nfile = "text.TL"', ["components.src.file", "not a libpcap or pcapng file"]),
    ('file = "lan.cap"', ["components.src.file", 'is a packet capture: read it with format = "pcap"']),
    ('format = "pcap"\nfile = "lan.cap"\ndirection = "sent"', ["packet 1", "does not record who sent"]),
    ('format = "pcap"\nfile = "lan.cap"\ndirection = "upward"', ["components.src.direction", "both"]),
])
def test_bad_capture_traces_are_one_line_exit_2(extra, contains, tmp_path, cli):
    with open(tmp_path / "lan.cap", "wb") as fh:
        w = dpkt.pcap.Writer(fh, linktype=dpkt.pcap.DLT_EN10MB)
        w.writepkt(ethernet_frame(100), ts=1.0)
    (tmp_path / "text.TL").write_text("0.0 64\n")
    scen = tmp_path / "bad.toml"
    scen.write_text(f'connections = ["src -> sink"]\n[scenario]\nduration = "1 s"\n'
                    f'[components.src]\nkind = "trace"\n{extra}\n[components.sink]\nkind = "sink"\n')
    assert_one_line_error(cli("run", str(scen), "--quiet"), contains=contains)
