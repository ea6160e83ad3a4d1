"""A local sweep's helper processes die with the process they serve (issue 44).

The local executor's workers are forked by a multiprocessing fork server, itself
started by the sweep's process. Nothing in multiprocessing stops them when that
process is killed outright (``kill -9``, the out-of-memory killer): each worker holds
the write end of its own task queue and the fork server's "alive" pipe, so none of
them ever sees end-of-file; they finish their run and then wait for good, and the
resource tracker (which exits when the last of them has gone) waits with them.

So each asks the kernel to kill it when its parent dies (Linux ``PR_SET_PDEATHSIG``,
through ``ctypes``): the fork server, whose parent is the sweep's process, imports
this module first (it is first in the server's preload list) and arms itself when the
environment names that process in :data:`PARENT_ENV`; each worker, whose parent is
the fork server, arms itself in its initializer (:func:`arm`). Then the chain goes
down by itself: sweep process → fork server → workers → resource tracker (end of
file on its pipe). The store needs nothing: only the sweep's process writes it, one
transaction per run, and a claim whose process has died is taken over on resume.

A parent that died before the signal was armed is noticed by comparing ``getppid()``
with the parent expected (the process then exits at once). Elsewhere than Linux
:func:`arm` does nothing. The signal is sent when the *thread* that started the fork
server ends; multiprocessing starts a new server when a later sweep needs one.
"""
from __future__ import annotations

import os
import signal
import sys
from typing import Optional

#: The environment variable naming (by pid) the process a fork server serves.
PARENT_ENV = "ATMSIM_POOL_PARENT"
_PR_SET_PDEATHSIG = 1

#: This process's pid when it is a sweep's fork server (inherited by the workers it
#: forks: the parent they expect); None elsewhere.
FORKSERVER_PID: Optional[int] = None


def arm(expected_parent: Optional[int]) -> None:
    """Be killed (SIGKILL) when the parent dies; exit now if it already has (its pid
    is no longer ``expected_parent``, when one is given)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):
        return
    if expected_parent is not None and os.getppid() != expected_parent:
        os._exit(0)


def _arm_fork_server() -> None:
    global FORKSERVER_PID
    parent = os.environ.get(PARENT_ENV, "")
    # Only in a fork server: the sweep's own process (whose pid the variable holds)
    # may import this module too, and must not be tied to its parent.
    if not parent.isdigit() or int(parent) == os.getpid():
        return
    FORKSERVER_PID = os.getpid()
    arm(int(parent))


_arm_fork_server()
