"""Generate the buddhikot92 scenario files (run: python scenarios/buddhikot92/gen.py).

The files are written out in full (they are what `atmsim run`/`atmsim sweep` read);
this script only keeps them in step (the same ATM side, gateway and ring,
each varying what its figure varies).  Edit here, regenerate, commit the .toml files
too.  Every value and its source: docs/reproduce.md ("buddhikot92") and
docs/models/gateway.md.
"""
from __future__ import annotations

from pathlib import Path

from atmsim.reproduce.buddhikot92 import BAND_FILES

HERE = Path(__file__).resolve().parent

# ---- held constant (buddhikot92 Table 2; section 6) ------------------------------------
CONNECTIONS = 8                 # Table 2: number of active connections
ATM_LINK = "150 Mb/s"           # Table 2: ATM link capacity (the FIFO of section 5)
TTRT = "50 ms"                  # Table 2
PRIORITY = 7                    # Table 2: every node's priority
CLOCK = "25 ns"                 # Table 2: clock cycle
MAX_FRAME = "4096 B"            # Table 2: maximum FDDI frame size
BACKGROUND = "1 Mb/s"           # section 6.1: "all other hosts generate 1 Mbps background traffic"
STATIONS = 4                    # section 6: "a fixed four node FDDI network"
RING_TX_BUFFER = "256 KiB"      # section 7: SUPERNET's maximum transmit buffer, "256 KB (68 full
                                # size FDDI frames)": 68 x 3,853 octets = 262,004 <= 262,144

# ---- Table 3 defaults --------------------------------------------------------------------
TX_FRAMES = 16                  # Table 3: transmit buffer, maximum-size frames
SEGMENT = 85                    # Table 3: frame size assembled, cells
PEAK_TO_AVERAGE = 2             # Table 3
REASSEMBLY = 2                  # Table 3: maximum-size frames per connection

# ---- the NPE rate R (docs/reproduce.md, "The NPE rate") --------------------------------
# Section 6.3 gives R = 25 ... 100 "requests per microsecond"; the gateway's clock is
# 25 ns (Table 2), so one request per 10-40 ns would be 0.4-1.6 clock cycles of a
# general-purpose processor running software (section 2) -- the unit cannot be per us.
# Reading used: requests per millisecond.  `npe_rate` is in requests/us, so R/1000.
NPE_DEFAULT = 0.1               # 100 requests/ms: the fastest of section 6.3 (the other
                                # experiments do not give R; "adequately fast NPE", section 7)
NPE_RATES_PER_MS = [25, 50, 100]
NPE_LITERAL = 25                # the literal reading, 25 requests/us: the band's other edge
NPE_SEGMENT = 8                 # section 6.3: segment size fixed at 8 cells
NPE_BURSTS = [4, 43]            # section 6.3
# Where Drop Frame? acts on a segment in error (docs/models/gateway.md, "Where the NPE sits"):
# Figure 11's block order has the NPE serve it first ("serve", the files above); sections 6.3
# and 7 count as NPE requests only the writes to the transmit buffer ("skip", npe_b*_skip.toml).
# Only the rates with a knee are rerun: at 100/ms and 25/us no segment is in error at 8 cells.
NPE_SKIP_RATES_PER_MS = [25, 50]

# ---- offered load axis: the sum of the 8 mean rates (53-octet cells) ---------------------
LOADS = list(range(40, 141, 5))  # Mb/s, Figures 13-23 x axis: 40-140 in 5 Mb/s steps (the middle, 90,
                                 # is the files' own load; 10 Mb/s steps told the cut-offs of B = 500
                                 # and 1000 apart from neither each other nor their knees)
NPE_LOADS = [20, 40, 60, 80, 100, 120, 140]

# ---- run lengths ----------------------------------------------------------------------------
DURATION = "4 s"
WARMUP = "200 ms"
REPLICATIONS = 6
NPE_DURATION = "2 s"            # the NPE experiments' bursts are short (B = 4, 43 cells) and their
NPE_REPLICATIONS = 4            # 8-cell segments cost more events per cell: shorter, fewer runs
QUICK_DURATION = "0.3 s"
QUICK_WARMUP = "50 ms"
QUICK_REPLICATIONS = 3

# ---- reverse path (section 6.5) ---------------------------------------------------------------
REV_LOADS = [20, 40, 60, 70, 80, 90, 95]    # Mb/s on the ring to the gateway, all stations
REV_PEAK = 100.0                # Mb/s: each station bursts at the ring's rate ("peak 100 Mbps
                                # traffic from FDDI", section 6.5; burstiness not quantified)


def mbps(x: float) -> str:
    return f"{x:g} Mb/s"


def header(lines: list[str]) -> str:
    return "".join(f"# {ln}".rstrip() + "\n" for ln in lines)


def sources(mean: float, pa: float, burst: int, segment: int) -> str:
    out = []
    for i in range(1, CONNECTIONS + 1):
        out.append(f"""[components.src{i}]
kind = "onoff"
peak = "{mbps(mean * pa)}"
mean = "{mbps(mean)}"
burst_factor = "{burst} cells"
wucs_segment = {segment}
vc = {i}
""")
    return "\n".join(out)


def gateway(segment: int, tx: int, npe: float, in_error: str | None = None) -> str:
    conns = ", ".join(f'"{i}: {i} -> {(i - 1) % (STATIONS - 1) + 1}"' for i in range(1, CONNECTIONS + 1))
    return f"""[components.gw]
kind = "atm_fddi_gateway"
connections = [{conns}]
segment_cells = {segment}
max_frame = "{MAX_FRAME}"
reassembly_frames = {REASSEMBLY}
tx_buffer_frames = {tx}
npe_rate = {npe!r}            # requests/us; {npe * 1000:g} requests/ms (see the header)
{"" if in_error is None else f'npe_in_error = "{in_error}"   # a segment in error: NPE {in_error}s it (header)' + chr(10)}clock = "{CLOCK}"
"""


def ring(traffic: str, rate: str, connections: list[str], peak_to_mean: float | None = None) -> str:
    conns = ", ".join(f'"{c}"' for c in connections)
    ptm = "" if peak_to_mean is None else f"peak_to_mean = {peak_to_mean!r}\n"
    return f"""[components.ring]
kind = "fddi_ring"
stations = {STATIONS}
ttrt = "{TTRT}"
gateway = 0
gateway_notice = true
priority = {PRIORITY}
traffic = "{traffic}"
rate = "{rate}"
{ptm}frame_data = "{MAX_FRAME}"
tx_buffer = "{RING_TX_BUFFER}"
connections = [{conns}]
"""


def load_zip(loads: list[float], pa: float) -> str:
    lines = []
    for i in range(1, CONNECTIONS + 1):
        means = ", ".join(f'"{mbps(x / CONNECTIONS)}"' for x in loads)
        peaks = ", ".join(f'"{mbps(x / CONNECTIONS * pa)}"' for x in loads)
        lines.append(f'"src{i}.mean" = [{means}]')
        lines.append(f'"src{i}.peak" = [{peaks}]')
    return "\n".join(lines) + "\n"


COMMON = [
    "ATM side (section 5, Figure 8): 8 two-state Markov on-off sources <peak, mean, B>, one",
    "per connection (Table 2), sending MCHIP segments marked with the WUCS F and C bits, into",
    "a FIFO of unlimited size served at the 150 Mb/s ATM link rate (Table 2).  Offered load =",
    "the sum of the 8 mean rates (53-octet cells), swept along one zipped axis.",
    "Gateway (atm_fddi_gateway, docs/models/gateway.md): reassembly buffer of 2 maximum-size",
    "(4096 B, Table 2) frames per connection, 25 ns clock (Table 2).  NPE rate R in requests",
    "per ms (section 6.3 says per us, which the 25 ns clock rules out: docs/reproduce.md).",
    "FDDI (Table 2): four stations, TTRT 50 ms, priority 7, all traffic asynchronous; the",
    "gateway is station 0, the others send 1 Mb/s of bursty background (section 6.1).",
    "Generated by gen.py (keep the files in step by regenerating, not by hand).",
]

RING_FORWARD = ["1: 11 -> 2", "2: 21 -> 3", "3: 31 -> 1"]


def forward(name: str, title: list[str], *, burst: int, pa: float, segment: int, tx: int,
            npe: float, loads: list[float], npe_axis: list[float] | None = None,
            duration: str = DURATION, replications: int = REPLICATIONS, in_error: str | None = None) -> str:
    base_mean = loads[len(loads) // 2] / CONNECTIONS
    grid = ""
    if npe_axis is not None:
        grid = "\n[sweep.grid]\n" + f'"gw.npe_rate" = [{", ".join(repr(r) for r in npe_axis)}]\n'
    text = header(title + [""] + COMMON) + f"""connections = [
{"".join(f'  "src{i} -> mux",{chr(10)}' for i in range(1, CONNECTIONS + 1))}  "mux -> gw.atm_in",
  "gw.fddi_tx -> ring.gw_tx",
  "ring.gw_rx -> gw.fddi_rx",
  "ring.gw_done -> gw.fddi_done",
  "gw.atm_out -> sink",
]

[scenario]
name = "buddhikot92-{name}"
description = "buddhikot92: 8 on-off sources (peak/mean {pa:g}, B = {burst} cells, {segment}-cell segments) into the ATM-FDDI gateway (transmit buffer {tx} frames) and a four-node FDDI ring"
duration = "{duration}"
warmup = "{WARMUP}"
seed = 1992

{sources(base_mean, pa, burst, segment)}
[components.mux]
kind = "fifo"
rate = "{ATM_LINK}"
capacity = "unlimited"

{gateway(segment, tx, npe, in_error)}
{ring("bursty", BACKGROUND, RING_FORWARD)}
[components.sink]
kind = "sink"

[sweep]
replications = {replications}
quick_replications = {QUICK_REPLICATIONS}
{grid}
[sweep.zip]
{load_zip(loads, pa)}
[sweep.quick]
"scenario.duration" = "{QUICK_DURATION}"
"scenario.warmup" = "{QUICK_WARMUP}"
"""
    return text


def reverse() -> str:
    per = [x / (STATIONS - 1) for x in REV_LOADS]
    title = [
        "buddhikot92 section 6.5: the reverse path (FDDI -> ATM).",
        "",
        "Stations 1-3 of the four-node ring (TTRT 50 ms, priority 7, Table 2) send bursty",
        "asynchronous traffic (on-off bursts of Poisson 4096-byte frames at a peak of 100 Mb/s,",
        "mean bursts of 10 ms: 'very bursty', not quantified in the paper) to the gateway",
        "(station 0) on ICNs 1-3; the",
        "gateway's receive buffer holds 16 frames (section 6.5); the MPP's ICXT lookup gives",
        "the VC and the SPP segments each frame onto the 150 Mb/s ATM link (Table 2).  The",
        "swept load is the sum of the three stations' mean rates (information field), 20 to",
        "95 Mb/s: 'peak 100 Mbps traffic from FDDI'.  The ATM side only trickles (one",
        "source, 10 kb/s: the gateway's atm_in must be wired); the forward path is idle.",
        "Generated by gen.py.",
    ]
    conns = ", ".join(f'"{i}: {i} -> {i}"' for i in range(1, STATIONS))
    rates = ", ".join(f'"{mbps(round(x, 4))}"' for x in per)
    ptms = ", ".join(repr(round(REV_PEAK / x, 4)) for x in per)
    return header(title) + f"""connections = [
  "src1 -> gw.atm_in",
  "gw.fddi_tx -> ring.gw_tx",
  "ring.gw_rx -> gw.fddi_rx",
  "ring.gw_done -> gw.fddi_done",
  "gw.atm_out -> sink",
]

[scenario]
name = "buddhikot92-reverse"
description = "buddhikot92 section 6.5: bursty FDDI traffic from three stations through the gateway's 16-frame receive buffer onto ATM"
duration = "{DURATION}"
warmup = "{WARMUP}"
seed = 1992

[components.src1]
kind = "onoff"
peak = "0.02 Mb/s"
mean = "0.01 Mb/s"
burst_factor = "4 cells"
wucs_segment = {SEGMENT}
vc = 1

[components.gw]
kind = "atm_fddi_gateway"
connections = [{conns}]
segment_cells = {SEGMENT}
max_frame = "{MAX_FRAME}"
rx_buffer_frames = 16
clock = "{CLOCK}"
atm_rate = "{ATM_LINK}"

{ring("bursty", mbps(round(per[3], 4)), [f"{i}: {i} -> 0" for i in range(1, STATIONS)], round(REV_PEAK / per[3], 4))}
[components.sink]
kind = "sink"

[sweep]
replications = {REPLICATIONS}
quick_replications = {QUICK_REPLICATIONS}

[sweep.zip]
"ring.rate" = [{rates}]
"ring.peak_to_mean" = [{ptms}]

[sweep.quick]
"scenario.duration" = "{QUICK_DURATION}"
"scenario.warmup" = "{QUICK_WARMUP}"
"""


def band(name: str, axes: dict[str, list[str]]) -> str:
    """One lossy point of Figure 14 (B = 1000, 100 Mb/s) with one group of open
    parameters varied (BAND_FILES in atmsim/reproduce/buddhikot92.py)."""
    text = forward(name.replace("_", "-"), [
        "buddhikot92: sensitivity to the parameters the paper leaves open.",
        "One point of Figure 14 (burst factor 1000, peak-to-average 2, 16 frames, 100 Mb/s",
        f"offered), where the SPP loses cells, with {', '.join(axes)} varied (the first value is",
        "the default of the other experiments).  The offered load is fixed here, not swept.",
    ], burst=1000, pa=PEAK_TO_AVERAGE, segment=SEGMENT, tx=TX_FRAMES, npe=NPE_DEFAULT, loads=[100])
    head, _, _ = text.partition("[sweep.zip]")

    def lit(v: str) -> str:
        try:
            float(v)
            return v
        except ValueError:
            return f'"{v}"'
    zipped = len(axes) > 1 and all(len(v) == 2 for v in axes.values()) and name == "band_ring"
    table = "[sweep.zip]" if zipped else "[sweep.grid]"
    lines = "\n".join(f'"{k}" = [{", ".join(lit(v) for v in vals)}]' for k, vals in axes.items())
    return head + f"""{table}
{lines}

[sweep.quick]
"scenario.duration" = "{QUICK_DURATION}"
"scenario.warmup" = "{QUICK_WARMUP}"
"""


# ---- transmit buffer dimensioning (section 6.4 / 7; `atmsim dimension`'s criterion on a grid) --
TXDIM_SIZES = [8, 16, 24, 32, 40, 48, 56, 64, 68]   # frames; 68 = SUPERNET's maximum (section 7)
TXDIM_LOAD = 50                 # Mb/s offered, peak/avg 8, B = 1000 (the bursty traffic of 6.4)
TXDIM_REPLICATIONS = 8

# ---- the throughput gain of a larger transmit buffer at 140 Mb/s (section 6.4, Figure 21) ----------
# At 140 Mb/s the gain of 32 over 16 frames is about 1 Mb/s against a run-to-run spread of about
# 1.4 Mb/s (of the paired difference: about 0.5 Mb/s; 24 replications gave 1.17 [0.95, 1.39] Mb/s,
# 12 are enough to resolve it).  This file is that one load with more replications; the reproduction runs it three
# times, with gw.tx_buffer_frames = 16, 32 and 68 as overrides (experiments txgain16/32/68), so the
# three sizes share the point's seed: common random numbers, and the gain's interval is the paired
# t interval of the per-replication differences (a swept size would change the seed).
TXGAIN_LOAD = 140
TXGAIN_SIZES = [16, 32, 68]
TXGAIN_REPLICATIONS = 12


def txgain() -> str:
    return forward("txgain", [
        "buddhikot92 section 6.4 (Figure 21): the throughput gain of a larger transmit buffer at",
        f"{TXGAIN_LOAD} Mb/s offered (fixed), peak-to-average 8, burst factor 1000 cells, with",
        f"{TXGAIN_REPLICATIONS} replications.  The reproduction runs this file with gw.tx_buffer_frames =",
        f"{', '.join(str(n) for n in TXGAIN_SIZES)} as overrides: the same seeds for every size (common",
        "random numbers), so each replication's gain is one paired difference.",
    ], burst=1000, pa=8, segment=SEGMENT, tx=TX_FRAMES, npe=NPE_DEFAULT, loads=[TXGAIN_LOAD],
        replications=TXGAIN_REPLICATIONS)


def txdim() -> str:
    text = forward("txdim", [
        "buddhikot92 section 6.4 / 7: dimensioning the transmit buffer.",
        f"Peak-to-average 8, burst factor 1000 cells, {TXDIM_LOAD} Mb/s offered (fixed), the transmit",
        "buffer swept from 8 to 68 maximum-size frames (SUPERNET's maximum, section 7); the report",
        "gives the smallest size whose frame loss meets 1e-3 by its 95% CI (atmsim dimension's rule).",
    ], burst=1000, pa=8, segment=SEGMENT, tx=TX_FRAMES, npe=NPE_DEFAULT, loads=[TXDIM_LOAD],
        replications=TXDIM_REPLICATIONS)
    head, _, _ = text.partition("[sweep.zip]")
    return head + f"""[sweep.grid]
"gw.tx_buffer_frames" = [{", ".join(str(n) for n in TXDIM_SIZES)}]

[sweep.quick]
"scenario.duration" = "{QUICK_DURATION}"
"scenario.warmup" = "{QUICK_WARMUP}"
"""


def generated() -> dict[str, str]:
    """Every file this script writes: its path under scenarios/buddhikot92/ and text."""
    files: dict[str, str] = {}
    for b in (250, 500, 1000):
        files[f"bf{b}"] = forward(
            f"bf{b}", [f"buddhikot92 section 6.1 (Table 3, Figures 13-16): burst factor B = {b} cells.",
                       "Peak-to-average 2, 85-cell segments, transmit buffer 16 frames (Table 3)."],
            burst=b, pa=PEAK_TO_AVERAGE, segment=SEGMENT, tx=TX_FRAMES, npe=NPE_DEFAULT, loads=LOADS)
    for pa in (4, 8):
        files[f"pa{pa}"] = forward(
            f"pa{pa}", [f"buddhikot92 section 6.2 (Figures 17-18): peak-to-average ratio {pa}.",
                        "Burst factor 1000 cells; transmit buffer, reassembly buffer and segment size as",
                        "in Table 3 (the ratio-2 curve is bf1000.toml)."],
            burst=1000, pa=pa, segment=SEGMENT, tx=TX_FRAMES, npe=NPE_DEFAULT, loads=LOADS)
    for tx in (32, 68):
        files[f"tx{tx}"] = forward(
            f"tx{tx}", [f"buddhikot92 section 6.4 (Figures 21-23): transmit buffer {tx} maximum-size frames.",
                        "Peak-to-average 8, burst factor 1000 cells, reassembly buffer as in Table 3 (the",
                        "16-frame curve is pa8.toml).  68 frames of 85 cells (3,853 octets on the medium)",
                        "are the ring's 256 KB transmit buffer (section 7)."],
            burst=1000, pa=8, segment=SEGMENT, tx=tx, npe=NPE_DEFAULT, loads=LOADS)
    for b in NPE_BURSTS:
        axis = [r / 1000 for r in NPE_RATES_PER_MS] + [float(NPE_LITERAL)]
        files[f"npe_b{b}"] = forward(
            f"npe-b{b}", [f"buddhikot92 section 6.3 (Figures 19-20): NPE rate R, burst factor {b} cells.",
                          "Segments of 8 cells, peak-to-average 2, buffers as in Table 3.  R = 25, 50,",
                          "100 requests/ms (gw.npe_rate 0.025 ... 0.1 requests/us) and, as the other edge of",
                          "the unit's band, the literal 25 requests/us."],
            burst=b, pa=PEAK_TO_AVERAGE, segment=NPE_SEGMENT, tx=TX_FRAMES, npe=NPE_DEFAULT,
            loads=NPE_LOADS, npe_axis=axis, duration=NPE_DURATION, replications=NPE_REPLICATIONS)
        files[f"npe_b{b}_skip"] = forward(
            f"npe-b{b}-skip", [f"buddhikot92 section 6.3 (Figures 19-20): NPE rate R, burst factor {b} cells, the",
                               "other reading of where Drop Frame? acts: a segment in error is dropped by the MPP",
                               "before the NPE (only transmit buffer writes are NPE requests, sections 6.3 and 7).",
                               "Segments of 8 cells, peak-to-average 2, buffers as in Table 3.  R = 25 and 50",
                               "requests/ms (the rates with a knee; npe_b*.toml has Figure 11's order)."],
            burst=b, pa=PEAK_TO_AVERAGE, segment=NPE_SEGMENT, tx=TX_FRAMES, npe=NPE_SKIP_RATES_PER_MS[0] / 1000,
            loads=NPE_LOADS, npe_axis=[r / 1000 for r in NPE_SKIP_RATES_PER_MS], duration=NPE_DURATION,
            replications=NPE_REPLICATIONS, in_error="skip")
    files["reverse"] = reverse()
    files["txdim"] = txdim()
    files["txgain"] = txgain()
    for name, axes in BAND_FILES.items():
        files[name] = band(name, axes)
    return {f"{name}.toml": text for name, text in files.items()}


def main() -> None:
    for name, text in generated().items():
        (HERE / name).write_text(text, encoding="utf-8")
        print(f"wrote {name}")


if __name__ == "__main__":
    main()
