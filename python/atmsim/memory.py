"""A run that outgrows the machine's memory stops with one line, not the kernel's OOM
killer (issue 44 item 1).

Linux only (elsewhere nothing is checked): the limit is the process's resident memory
when the run starts plus 90% of what the machine had available then (MemAvailable), or
``ATMSIM_MEMORY_LIMIT`` bytes when that is set (a test, or a share of a machine); a
local sweep's workers divide the 90% between them (each run of a sweep is checked:
past its limit it is recorded as failed with that line, and the sweep goes on). The
run's progress callback, called every 65,536 events, compares the resident memory with
it; past it the run stops with :class:`~atmsim.exceptions.SimulationError` saying how
much it used and how much there was.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Optional

from atmsim.exceptions import SimulationError

GIB = 2**30


def resident_bytes() -> int:
    """This process's resident memory now (0 where /proc is missing)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def peak_bytes() -> int:
    """This process's peak resident memory since it started its program: Linux's
    VmHWM (``ru_maxrss`` is kept across exec, so a child started from a large
    process reports the parent's peak), else ``ru_maxrss``."""
    kib = _proc_kib("/proc/self/status", "VmHWM:")
    if kib is not None:
        return kib * 1024
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _proc_kib(path: str, key: str) -> Optional[int]:
    """The kB value of line ``key`` in a /proc file (None where there is none)."""
    try:
        with open(path, encoding="ascii") as fh:
            for line in fh:
                if line.startswith(key):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def available_bytes() -> Optional[int]:
    """The machine's MemAvailable (None where /proc/meminfo is missing)."""
    kib = _proc_kib("/proc/meminfo", "MemAvailable:")
    return None if kib is None else kib * 1024


def limit_bytes(share: int = 1) -> Optional[int]:
    """How large the process may grow during a run (None: no check); ``share``
    processes (a local sweep's workers) divide what the machine has between them."""
    env = os.environ.get("ATMSIM_MEMORY_LIMIT")
    if env:
        try:
            return int(env)
        except ValueError:
            raise SimulationError(f"ATMSIM_MEMORY_LIMIT={env!r}: expected a number of bytes") from None
    avail = available_bytes()
    if avail is None:
        return None
    return resident_bytes() + int(0.9 * avail / max(share, 1))


class MemoryGuard:
    """A progress callback that stops the run past :func:`limit_bytes`, then calls
    ``inner`` (the caller's progress, if any)."""

    def __init__(self, inner: Optional[Callable[[float, float], Any]] = None, share: int = 1) -> None:
        self.inner = inner
        self.limit = limit_bytes(share)

    def __call__(self, now_s: float, duration_s: float) -> Any:
        if self.limit is not None:
            used = resident_bytes()
            if used > self.limit:
                raise SimulationError(
                    f"out of memory: the run had grown to {used / GIB:.2f} GiB at {now_s:.6g} s of {duration_s:.6g} s "
                    f"simulated, past the {self.limit / GIB:.2f} GiB this machine had for it; shorten it, or give "
                    "buffers a capacity, or keep fewer probes, series or trace rows")
        return None if self.inner is None else self.inner(now_s, duration_s)
