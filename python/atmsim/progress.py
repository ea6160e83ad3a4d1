"""Progress reporting for long runs.

The native ``Scenario.run`` calls ``progress(sim_now_s, duration_s)`` about every 65k
events while holding the GIL.  :class:`RunProgress` turns those calls into a tqdm bar
with an ETA on stderr that only appears once a run has taken ``delay_s`` (2 s) of wall
time, so short runs stay silent.  It is disabled for ``--quiet`` and when stderr is
not a terminal (logs and pipes get no bar noise).

Ctrl-C: the callback is ordinary Python code, so a pending ``KeyboardInterrupt`` is
raised inside it; the native run stops and re-raises it.  The callback is therefore
always installed (as a no-op when the bar is disabled) so that Ctrl-C is honoured
even for quiet runs.
"""
from __future__ import annotations

import io
import math
import os
import sys
from typing import TYPE_CHECKING, Optional, TextIO

if TYPE_CHECKING:  # tqdm is imported when a bar is drawn (start-up time of `atmsim run`)
    from tqdm import tqdm

#: Wall time (s) before a bar is shown.
DEFAULT_DELAY_S = 2.0


def stderr_is_tty(stream: Optional[TextIO] = None) -> bool:
    stream = sys.stderr if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _fixed_ncols(stream: TextIO) -> Optional[int]:
    """None when the terminal reports its width (tqdm then follows resizes), else 80:
    a pty with an unset size reports 0 columns and tqdm would draw nothing."""
    try:
        return None if os.get_terminal_size(stream.fileno()).columns > 0 else 80
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return 80


def time_bar_format(duration_s: float) -> str:
    """tqdm ``bar_format`` for a run of ``duration_s`` simulated seconds: done and total
    read like times, in positional notation with the total's precision ("1500/2000 s",
    "0.0125/0.1 s"; never "2e+03 s")."""
    from atmsim.units import fmt_value

    total = fmt_value(duration_s, digits=6)
    a = abs(duration_s)
    decimals = 0 if not a or not math.isfinite(a) else max(0, 2 - math.floor(math.log10(a)))
    total = total.replace("{", "{{").replace("}", "}}")
    return "{desc} {percentage:3.0f}%|{bar}| {n:." + str(decimals) + "f}/" + total + " s simulated [{elapsed}<{remaining}]"


class RunProgress:
    """Callable progress sink for one simulation run (a context manager)."""

    def __init__(self, label: str = "", enabled: Optional[bool] = None,
                 delay_s: float = DEFAULT_DELAY_S, stream: Optional[TextIO] = None) -> None:
        self.stream = sys.stderr if stream is None else stream
        self.enabled = stderr_is_tty(self.stream) if enabled is None else enabled
        self.label = label
        self.delay_s = delay_s
        self._bar: Optional[tqdm] = None

    def __call__(self, sim_now_s: float, duration_s: float) -> None:
        if not self.enabled:
            return
        if self._bar is None:
            # tqdm's own `delay` keeps the bar hidden until delay_s of wall time passed
            # since it was created, i.e. since the first callback (≈ run start).
            ncols = _fixed_ncols(self.stream)
            from tqdm import tqdm

            self._bar = tqdm(
                total=duration_s, desc=self.label, unit="s", unit_scale=False,
                file=self.stream, delay=self.delay_s, leave=False,
                dynamic_ncols=ncols is None, ncols=ncols, nrows=None if ncols is None else 24,
                bar_format=time_bar_format(duration_s),
            )
        self._bar.update(max(0.0, sim_now_s - self._bar.n))

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> "RunProgress":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def progress_iter(iterable, total: int, desc: str, enabled: Optional[bool] = None):
    """A tqdm over many short runs (validation replications), same rules as above."""
    enabled = stderr_is_tty() if enabled is None else enabled
    from tqdm import tqdm

    return tqdm(iterable, total=total, desc=desc, file=sys.stderr, disable=not enabled,
                delay=DEFAULT_DELAY_S, leave=False, dynamic_ncols=True)
