"""Output paths, checked before any work starts (issue 44 item 4).

Every command that writes a file or directory (``run --series-csv/--cell-trace/--pcap``,
``sweep --db``, ``export --out``, ``reproduce --out``, ``bench --plot``) checks each path
with :func:`check_output` before it loads a scenario's traffic or runs anything, so a
typo costs a second, not a run: one line naming the flag, the path and what is wrong
(``ScenarioError``: the CLI prints it and exits 2).  ``-`` means standard output where a
flag says so (``stdout_ok``).

This module imports nothing heavy: the CLI calls it before anything else.
"""
from __future__ import annotations

import os
from typing import Optional

from atmsim.exceptions import ScenarioError

#: The path that means standard output (for CSV outputs).
STDOUT = "-"


def dir_writable(d: str) -> bool:
    """Can files be created in ``d``?  Permission bits do not stop root, and a
    read-only mount or a pseudo file system only says no when asked: create an
    anonymous temporary file (O_TMPFILE on Linux: nothing appears in ``d``)."""
    if not os.access(d, os.W_OK | os.X_OK):
        return False
    import tempfile

    try:
        with tempfile.TemporaryFile(dir=d):
            pass
    except OSError:
        return False
    return True


def output_problem(path: str, *, directory: bool = False, example: str = "out.csv",
                   flag: str = "output") -> Optional[str]:
    """What stops ``path`` from being written (a file, or with ``directory`` a directory
    that is created with its parents if missing), or None when nothing does.  ``example``
    is the file name suggested inside a directory given for a file, ``flag`` the option
    named in the advice."""
    if path.strip() == "":
        return "an empty path"
    p = os.path.abspath(path)
    if directory:
        if os.path.exists(p) and not os.path.isdir(p):
            return "exists and is not a directory"
        probe = p
        while not os.path.exists(probe):  # the nearest existing ancestor is where it is created
            probe = os.path.dirname(probe)
        if not os.path.isdir(probe):
            return f"{probe} is not a directory"
        if not dir_writable(probe):
            return f"directory {probe} is read-only; choose a writable {flag} path"
        return None
    if os.path.isdir(p):
        return f"is a directory; give a file path such as {os.path.join(path, example)}"
    d = os.path.dirname(p)
    if not os.path.exists(d):
        return f"directory {d} does not exist"
    if not os.path.isdir(d):
        return f"{d} is not a directory"
    if os.path.exists(p) and not os.access(p, os.W_OK):
        return f"the file is read-only; choose a writable {flag} path"
    if not dir_writable(d):
        return f"directory {d} is read-only; choose a writable {flag} path"
    return None


def check_output(flag: str, path: Optional[str], *, directory: bool = False, stdout_ok: bool = False,
                 example: str = "out.csv") -> None:
    """Raise ``ScenarioError("FLAG PATH: what is wrong")`` unless ``path`` can be
    written; None (the flag not given) and, with ``stdout_ok``, ``-`` pass."""
    if path is None or (stdout_ok and path == STDOUT):
        return
    problem = output_problem(path, directory=directory, example=example, flag=flag)
    if problem is not None:
        raise ScenarioError(f"{flag} {path}: {problem}")
