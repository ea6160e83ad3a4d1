"""evans96 — the MAGIC WAN's TCP rate-mismatch results (section "The Need for ATM-Layer
Traffic Control in WANs" and "Static ATM-Layer Traffic Control").

Evans, Frost, Minden et al. (1996), *A 622 Mb/s LAN/WAN Gateway…*: TCP from DEC 3000s
(OC-3c) to a SPARCstation-10 (TAXI) across an 8.8 ms MAGIC path with a 155 -> 100 Mb/s
constriction, 128 KB windows and 64 KB ttcp writes: 870 kb/s for one stream and 1.6 Mb/s
for two without traffic control; 68.2 and 52.3 Mb/s with 70 Mb/s cell pacing.

The TCP part only (the gateway, i-out-of-m shaping and credit flow control come with a
later issue). The one-stream case is the same experiment as lazarou96 section 4.4 and
runs lazarou96's scenarios; the hosts, switches and TCP are lazarou96's (Table 1).
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from atmsim.reproduce.base import ComparisonRow, Experiment, ExperimentResult, Figure, Reproduction, point

#: (experiment, quantity, receiving component, probe statistic, paper value Mb/s).
ROWS = (
    ("one-stream", "one stream, no traffic control", "sparc/tcp/vc100", "value", 0.87),
    ("one-stream-paced", "one stream, 70 Mb/s cell pacing", "sparc/tcp/vc100", "value", 68.2),
    ("two-streams", "two streams from two hosts, no traffic control (combined)", "sparc", "rx_total", 1.6),
    ("two-streams-paced", "two streams from two hosts, 70 Mb/s cell pacing each (combined)", "sparc", "rx_total", 52.3),
)


class Evans96(Reproduction):
    name = "evans96"
    title = ("J. B. Evans, V. S. Frost, G. J. Minden et al. (1996), A 622 Mb/s LAN/WAN Gateway — TCP over the "
             "MAGIC rate mismatch, with and without cell-level pacing")
    summary = (
        "TCP (4.3BSD-Reno timers) from DEC 3000 AXPs with OC-3c adapters to a SPARCstation-10 on TAXI across "
        "the 8.8 ms MAGIC path, whose switch port toward the TAXI host (256 cells per VC) is a 155 -> 100 Mb/s "
        "constriction; 128 KB windows, 64 KB ttcp writes. One stream and two streams from two hosts, each "
        "without traffic control and with the senders' VCs paced at 70 Mb/s in the adapter. Hosts, switches "
        "and TCP are lazarou96's model (its Table 1), with nothing fitted to these results. Only the TCP part "
        "of the paper is reproduced here."
    )
    experiments = (
        Experiment("one-stream", "../lazarou96/mismatch.toml", "one stream, no pacing (lazarou96's scenario)"),
        Experiment("one-stream-paced", "../lazarou96/mismatch_paced.toml", "one stream, 70 Mb/s pacing"),
        Experiment("two-streams", "two_streams.toml", "two streams, no pacing"),
        Experiment("two-streams-paced", "two_streams_paced.toml", "two streams, 70 Mb/s pacing"),
    )

    def notes(self) -> list[str]:
        return [
            "Throughput is ttcp -r's: data delivered in order to the receiving application x 8 / time after "
            "a warm-up; the two-stream rows add the receiver's two connections within each run.",
            "Pacing rates count whole 53-octet cells, so 70 Mb/s of cells carries at most 62.9 Mb/s of TCP "
            "data: the measured 68.2 Mb/s is above what a pacer of that definition allows (the paper also "
            "reports a '5 Mb/s' setting observed as 5.3 Mb/s of cells).",
            "With two paced streams the TAXI port receives 2 x 70 Mb/s of cells: the per-VC queues overflow "
            "and the BSD timers set the pace again; the paper attributes its lower two-stream figure to the "
            "receiving host processing two streams, which the model's per-segment CPU time also charges.",
        ]

    def analyse(self, results: Sequence[ExperimentResult], out_dir: Path) -> tuple[list[Figure], list[ComparisonRow]]:
        by_key = {r.experiment.key: r for r in results if r.stats is not None and not r.stats.empty}
        rows: list[ComparisonRow] = []
        for key, quantity, comp, stat, paper in ROWS:
            if key not in by_key:
                continue
            v = point(by_key[key].stats, comp, "tcp_throughput", stat, scale=1e-6)
            if v:
                rows.append(ComparisonRow(key, f"TCP throughput, {quantity}", "Mb/s", *v, paper_value=paper,
                                          note="evans96, measured"))
            if key.startswith("two"):
                for vc in (101, 102):
                    s = point(by_key[key].stats, f"sparc/tcp/vc{vc}", "tcp_throughput", "value", scale=1e-6)
                    if s:
                        rows.append(ComparisonRow(key, f"{quantity}: stream on VC {vc}", "Mb/s", *s, detail=True))
        return [], rows
