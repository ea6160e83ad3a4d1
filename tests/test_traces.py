"""`atmsim trace` and atmsim.traces: a trace read as the trace source reads it, and its
summary, checked against numbers computed here from the files themselves."""
from __future__ import annotations

import json

import dpkt
import numpy as np
import pytest

from atmsim.exceptions import ParamError, ScenarioError
from atmsim.traces import read_trace, summarize_trace
from conftest import ROOT
from test_cli import assert_one_line_error

BELLCORE = ROOT / "scenarios" / "data" / "BC-pAug89-small.TL"
STARWARS = ROOT / "scenarios" / "data" / "starwars.frames.old"


def test_the_bellcore_trace_reads_and_sums_as_its_lines_say():
    raw = np.loadtxt(BELLCORE)
    t = read_trace("data:BC-pAug89-small.TL")
    assert len(t) == len(raw) == 10_000
    np.testing.assert_allclose(t["time"], raw[:, 0] - raw[0, 0], atol=1e-9)
    assert (t["octets"].to_numpy() == raw[:, 1]).all()
    s = summarize_trace(t)
    span = raw[-1, 0] - raw[0, 0]
    duration = span + span / (len(raw) - 1)
    assert s.packets == 10_000 and s.octets == raw[:, 1].sum()
    assert s.duration == pytest.approx(duration)
    assert s.mean_rate == pytest.approx(raw[:, 1].sum() * 8 / duration)
    cells = sum(-(-(int(n) + 16) // 48) for n in raw[:, 1])
    assert s.cells == cells and s.cell_rate == pytest.approx(cells * 424 / duration)
    assert (s.min_octets, s.max_octets) == (64, 1518)
    # the busiest 10 ms bin, counted here
    bins = np.floor((raw[:, 0] - raw[0, 0]) / 0.01).astype(int)
    assert s.peak_rate == pytest.approx(np.bincount(bins, weights=raw[:, 1]).max() * 8 / 0.01)


def test_a_poisson_trace_has_a_hurst_parameter_near_one_half(tmp_path):
    # independent arrivals: no long-range dependence, H = 0.5 (both estimators' sd at
    # 2,000 bins is about 0.05)
    rng = np.random.default_rng(7)
    times = np.cumsum(rng.exponential(1e-3, 200_000))
    lengths = rng.integers(40, 1500, len(times))
    f = tmp_path / "poisson.TL"
    f.write_text("".join(f"{a:.9f} {b}\n" for a, b in zip(times, lengths)))
    s = summarize_trace(read_trace(f), bin_s=0.1)
    assert s.bins >= 1_900
    assert abs(s.hurst_aggregated_variance - 0.5) < 0.12 and abs(s.hurst_periodogram - 0.5) < 0.12, s
    # too few bins for an estimate: none, and the CLI says why
    assert summarize_trace(read_trace(f), bin_s=5.0).hurst_aggregated_variance is None


def test_frame_traces_time_frames_by_the_frame_rate_and_empty_frames_make_no_cells(tmp_path):
    f = tmp_path / "v.frames"
    f.write_text("100\n0\n2000\n")
    t = read_trace(f, "frames", frame_rate=25.0)
    assert t["time"].tolist() == [0.0, 0.04, 0.08] and t["octets"].tolist() == [100, 0, 2000]
    s = summarize_trace(t, frame_rate=25.0)
    assert s.duration == pytest.approx(0.12) and s.cells == 3 + 42


def test_captures_read_like_the_trace_source(tmp_path):
    cap = tmp_path / "x.pcap"
    with open(cap, "wb") as fh:
        w = dpkt.pcap.Writer(fh, linktype=dpkt.pcap.DLT_RAW)
        for k, n in enumerate([40, 576, 1500]):
            w.writepkt(b"\x45" + b"\0" * (n - 1), ts=100.0 + k * 0.25)
    t = read_trace(cap, "pcap")
    assert t["octets"].tolist() == [40, 576, 1500] and t["time"].tolist() == [0.0, 0.25, 0.5]
    with pytest.raises(ScenarioError, match="does not record who sent"):
        read_trace(cap, "pcap", "sent")
    with pytest.raises(ParamError, match="valid: packets, frames, pcap"):
        read_trace(cap, "pcapng")
    with pytest.raises(ParamError, match="direction needs format pcap"):
        read_trace(BELLCORE, "packets", "sent")


def test_the_cli_prints_the_summary_and_its_json(cli):
    p = cli("trace", "data:starwars.frames.old", "--format", "frames", "--bin", "1 s")
    assert p.returncode == 0, p.stderr
    assert "frames      171,000" in p.stdout and "busiest of 7,125 bins of 1 s" in p.stdout
    p = cli("trace", str(BELLCORE), "--json")
    d = json.loads(p.stdout)
    assert d["packets"] == 10_000 and d["bins"] == 2_571 and 0 < d["hurst_aggregated_variance"] < 1


@pytest.mark.parametrize("args,contains", [
    (["nosuch.TL"], ["cannot read trace", "nosuch.TL"]),
    ([str(BELLCORE), "--bin", "5 kg"], ["unknown unit 'kg'"]),
    ([str(BELLCORE), "--bin", "0 s"], ["--bin 0 s"]),
    ([str(BELLCORE), "--format", "csv"], ["valid: packets, frames, pcap"]),
    ([str(BELLCORE), "--direction", "sent"], ["direction needs format pcap"]),
    ([str(BELLCORE), "--format", "pcap"], ["not a libpcap or pcapng file"]),
    ([str(BELLCORE), "--overhead", "-1"], ["--overhead -1"]),
    ([str(STARWARS), "--format", "frames", "--frame-rate", "0"], ["frame_rate 0.0"]),
])
def test_bad_trace_input_is_one_line_exit_2(cli, args, contains):
    assert_one_line_error(cli("trace", *args), contains=contains)


def test_one_vc_of_a_sunatm_capture(tmp_path, cli):
    cap = tmp_path / "atm.pcap"
    with open(cap, "wb") as fh:
        w = dpkt.pcap.Writer(fh, linktype=dpkt.pcap.DLT_SUNATM)
        # SunATM pseudo-header (flags, VPI, VCI), then LLC/SNAP and a datagram
        for k, (vpi, vci, n) in enumerate([(0, 32, 100), (1, 32, 200), (0, 32, 300), (0, 33, 400)]):
            w.writepkt(bytes([0x82, vpi]) + vci.to_bytes(2, "big") + b"\xaa\xaa\x03\0\0\0\x08\x00" + b"\0" * n,
                       ts=1.0 + k)
    assert read_trace(cap, "pcap")["octets"].tolist() == [100, 200, 300, 400]
    assert read_trace(cap, "pcap", vc="32")["octets"].tolist() == [100, 300]
    assert read_trace(cap, "pcap", vc="1/32")["octets"].tolist() == [200]
    p = cli("trace", str(cap), "--format", "pcap", "--vc", "0/32", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["packets"] == 2
    # one packet spans no time: no rates to give
    assert_one_line_error(cli("trace", str(cap), "--format", "pcap", "--vc", "0/33"), contains=["spans no time"])
    assert_one_line_error(cli("trace", str(cap), "--format", "pcap", "--vc", "x/1"), contains=["vc 'x/1'", "VPI"])
    assert_one_line_error(cli("trace", str(BELLCORE), "--vc", "32"), contains=["vc needs format pcap"])


def test_a_constant_rate_trace_has_no_hurst_estimate_and_bins_are_bounded(tmp_path, cli):
    f = tmp_path / "cbr.TL"
    f.write_text("".join(f"{k * 0.001:.6f} 500\n" for k in range(2_000)))
    s = summarize_trace(read_trace(f), bin_s=0.01)
    assert s.bins == 200 and s.peak_rate == pytest.approx(500 * 8 * 10 / 0.01)
    assert s.hurst_aggregated_variance is None and s.hurst_periodogram is None
    p = cli("trace", str(f))
    assert p.returncode == 0 and "not estimated: the octets per bin hardly vary" in p.stdout, p
    assert json.loads(cli("trace", str(f), "--json").stdout)["hurst_periodogram"] is None
    assert_one_line_error(cli("trace", str(f), "--bin", "1 ns"), contains=["bins of 1e-09 s", "a longer bin"])


def test_a_capture_filter_keeps_one_flow(tmp_path, cli):
    # An Ethernet capture built with dpkt (an independent IPv4/TCP/UDP encoder): two
    # TCP connections, DNS over UDP and an ARP frame, one packet every 10 ms.
    cap = tmp_path / "lan.pcap"
    eth = dpkt.ethernet.Ethernet
    ip4 = lambda s, d, p, proto: dpkt.ip.IP(src=bytes([10, 0, 0, s]), dst=bytes([10, 0, 0, d]), p=proto, data=p)  # noqa: E731
    packets = [
        eth(type=dpkt.ethernet.ETH_TYPE_IP, data=ip4(1, 2, dpkt.tcp.TCP(sport=40000, dport=5001, data=b"x" * 1000), 6)),
        eth(type=dpkt.ethernet.ETH_TYPE_IP, data=ip4(3, 2, dpkt.tcp.TCP(sport=40001, dport=80, data=b"y" * 500), 6)),
        eth(type=dpkt.ethernet.ETH_TYPE_IP, data=ip4(1, 9, dpkt.udp.UDP(sport=5353, dport=53, data=b"q" * 30), 17)),
        eth(type=dpkt.ethernet.ETH_TYPE_ARP, data=dpkt.arp.ARP()),
        eth(type=dpkt.ethernet.ETH_TYPE_IP, data=ip4(2, 1, dpkt.tcp.TCP(sport=5001, dport=40000), 6)),
    ]
    with open(cap, "wb") as fh:
        w = dpkt.pcap.Writer(fh, linktype=dpkt.pcap.DLT_EN10MB)
        for k, p in enumerate(packets):
            w.writepkt(bytes(p), ts=1.0 + 0.01 * k)
    lengths = [len(p) - 14 for p in packets]
    keep = lambda f: read_trace(cap, "pcap", filter=f)["octets"].tolist()  # noqa: E731
    assert keep("tcp port 5001") == [lengths[0], lengths[4]]
    assert keep("tcp dst port 5001 and src host 10.0.0.1") == [lengths[0]]
    assert keep("udp or host 10.0.0.3") == [lengths[1], lengths[2]]
    assert keep("not ip") == [lengths[3]]
    assert read_trace(cap, "pcap", filter="host 10.0.0.3")["time"].tolist() == [0.0]
    p = cli("trace", str(cap), "--format", "pcap", "--filter", "tcp port 5001", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["packets"] == 2
    p = cli("trace", str(cap), "--format", "pcap", "--filter", "ip")
    assert p.returncode == 0 and "filter 'ip'" in p.stdout.splitlines()[0], p.stdout + p.stderr
    assert_one_line_error(cli("trace", str(cap), "--format", "pcap", "--filter", "port ssh"),
                          contains=["filter 'port ssh'", "at 'ssh': expected a port number"])
    assert_one_line_error(cli("trace", str(cap), "--format", "pcap", "--filter", "port 22"),
                          contains=["passes capture_filter 'port 22'"])
    assert_one_line_error(cli("trace", str(BELLCORE), "--filter", "tcp"), contains=["filter needs format pcap"])
