"""Trace files as the ``trace`` source reads them (docs/models/traffic.md): the packets
of a ``TIME LENGTH`` trace, the frames of a frame-size trace, or the packets of a libpcap
or pcapng capture, read by the same Rust code the source uses, as a DataFrame; and a
summary of what a trace would offer a network: its rates, the cells it makes over
AAL5, its peak over short bins and its Hurst parameter.

``atmsim trace FILE`` prints the summary.  Nothing here simulates.
"""
from __future__ import annotations

import dataclasses
import math
import os
from typing import Any, Optional, Union

import numpy as np
import pandas as pd

from atmsim import _atmsim

#: Bins a Hurst estimate needs at least (the aggregated-variance plot needs blocks of
#: 1, 2, 4, ... bins with at least 8 blocks each; fewer than 128 bins leave four points).
HURST_MIN_BINS = 128

#: Bins a summary makes at most (8 octets each: 400 MB); a longer bin makes fewer.
MAX_BINS = 50_000_000


def read_trace(path: Union[str, os.PathLike], format: str = "packets", direction: str = "both",  # noqa: A002
               frame_rate: float = 24.0, vc: Optional[str] = None, filter: Optional[str] = None  # noqa: A002
               ) -> pd.DataFrame:
    """The trace as the ``trace`` source replays it: columns ``time`` (s from the first
    packet kept; frame k at k / ``frame_rate``) and ``octets`` (what the source adds its
    ``overhead`` to: for captures, the datagram behind the link-layer header).  ``path``
    is relative to the working directory, or ``data:NAME``; ``direction`` (``sent``,
    ``received``), ``vc`` (``"VPI/VCI"``, SunATM captures) and ``filter`` (tcpdump-style,
    ``"tcp port 5001 and src host 10.0.0.1"``) keep some of a capture's packets, as the
    source's ``direction``, ``capture_vc`` and ``capture_filter`` do.  Raises ScenarioError (one
    line: file, packet or line, what is wrong) or ParamError."""
    if not (isinstance(frame_rate, (int, float)) and math.isfinite(frame_rate) and frame_rate > 0):
        from atmsim.exceptions import ParamError

        raise ParamError(f"frame_rate {frame_rate!r}: frames per second, a positive number")
    times, lengths = _atmsim.read_trace(os.fspath(path), format, direction, None if vc is None else str(vc),
                                        None if filter is None else str(filter))
    t = np.frombuffer(times, dtype="<u8")
    time_s = t / frame_rate if format == "frames" else t / 1e12
    return pd.DataFrame({"time": time_s, "octets": np.frombuffer(lengths, dtype="<u4").astype(np.int64)})


@dataclasses.dataclass(frozen=True)
class TraceSummary:
    """What :func:`summarize_trace` finds (rates in b/s, times in s)."""
    packets: int
    octets: int
    duration: float          # the span plus one mean gap (packets) or N / frame_rate (frames)
    mean_rate: float         # octets · 8 / duration
    cells: int               # Σ ⌈(L + overhead) / 48⌉, zero-octet frames none
    cell_rate: float         # cells · 424 / duration
    min_octets: int
    mean_octets: float
    max_octets: int
    bin: float
    bins: int
    peak_rate: float         # the largest bin's octets · 8 / bin
    hurst_aggregated_variance: Optional[float]   # of octets per bin; None with < HURST_MIN_BINS bins or no variation
    hurst_periodogram: Optional[float]

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def summarize_trace(trace: pd.DataFrame, bin_s: float = 0.01, overhead: int = 16,
                    frame_rate: Optional[float] = None) -> TraceSummary:
    """Summarise a :func:`read_trace` frame.  ``duration`` is one pass of the source
    (``loop``): the span plus one mean gap for packets, N / ``frame_rate`` for frames
    (give ``frame_rate`` for a frame trace).  Octets per ``bin_s`` bin give the peak
    and the Hurst parameter by two estimators (aggregated variance, log-periodogram),
    the ones the self-similar source is tested with."""
    n = len(trace)
    if n == 0:
        raise ValueError("the trace has no packets")
    if not (bin_s > 0 and math.isfinite(bin_s)):
        raise ValueError(f"bin {bin_s!r} s: a positive time")
    times = trace["time"].to_numpy(dtype=float)
    octets = trace["octets"].to_numpy(dtype=np.int64)
    if frame_rate is not None:
        duration = n / frame_rate
    else:
        span = float(times[-1] - times[0])
        duration = span + (span / (n - 1) if n > 1 else 0.0)
    if duration <= 0:
        raise ValueError("the trace spans no time: its rates are undefined")
    cells_each = (octets + overhead + 47) // 48
    if frame_rate is not None:  # zero-octet frames send nothing (the source's rule)
        cells_each = np.where(octets > 0, cells_each, 0)
    cells = int(cells_each.sum())
    nbins = max(1, math.ceil(duration / bin_s - 1e-9))
    if nbins > MAX_BINS:
        raise ValueError(f"{nbins:,} bins of {bin_s:g} s over {duration:g} s: at most {MAX_BINS:,} (a longer bin)")
    # (1e-9 of a bin: a packet at k bins exactly, written in decimal, is not put in bin k − 1)
    idx = np.minimum(np.floor((times - times[0]) / bin_s + 1e-9).astype(np.int64), nbins - 1)
    per_bin = np.bincount(idx, weights=octets.astype(float), minlength=nbins)
    h_av = h_gph = None
    if nbins >= HURST_MIN_BINS:
        # octets per bin that never vary (a constant-rate trace) have no estimate: NaN
        h_av, h_gph = (h if math.isfinite(h) else None for h in _atmsim.hurst(per_bin.tolist()))
    total = int(octets.sum())
    return TraceSummary(
        packets=n, octets=total, duration=duration, mean_rate=total * 8 / duration,
        cells=cells, cell_rate=cells * 424 / duration,
        min_octets=int(octets.min()), mean_octets=float(octets.mean()), max_octets=int(octets.max()),
        bin=bin_s, bins=nbins, peak_rate=float(per_bin.max()) * 8 / bin_s,
        hurst_aggregated_variance=h_av, hurst_periodogram=h_gph)
