"""The result store: one SQLite file (WAL mode) per study, written by one process.

Schema (``SCHEMA_VERSION`` 1)::

    sweeps(sweep_key TEXT PRIMARY KEY,   -- sha256(scenario_hash | quick | overrides)
           scenario_name, scenario_path, scenario_hash,  -- sha256 of the file text
           quick INTEGER, overrides TEXT (JSON), created TEXT, software_version TEXT)
    runs(run_key TEXT PRIMARY KEY,       -- see atmsim.sweep.run_key
         sweep_key, scenario_hash, point_index INTEGER, point TEXT (canonical JSON),
         point_values TEXT (JSON, values as written), replication INTEGER, seed INTEGER,
         quick INTEGER, status TEXT ('done' | 'failed'), wall_s REAL, events INTEGER,
         fingerprint TEXT, software_version TEXT, error TEXT, finished TEXT)
    probe_values(run_key, component, probe, statistic, value REAL, unit,
                 PRIMARY KEY (run_key, component, probe, statistic))
    claims(run_key TEXT PRIMARY KEY, host TEXT, pid INTEGER, claimed TEXT)
                                         -- runs being computed (added in place to older stores)

Guarantees:

* **Atomic per run**: a run's row and all its probe rows are written in one
  transaction (``BEGIN IMMEDIATE … COMMIT``); a kill at any instant leaves either
  the whole run or nothing.  ``synchronous=NORMAL`` in WAL mode survives a killed
  process (the OS has the pages); only a power cut may lose the last commits,
  which a re-run then simply recomputes.
* **One row per run**: ``run_key`` is the primary key; a failed run that is retried
  replaces its row; a 'done' run is never rewritten (the sweep skips it).
* **One writer per sweep**: only a sweep's parent process writes; workers return
  results.  Several sweeps may share one store: each **claims** a run (a ``claims``
  row: host, pid) in the store before it starts it, skips runs another live process
  has claimed and waits for them; a claim whose process died (same host, pid gone) is
  taken over.  A run's row replaces its claim in one transaction.

Errors: :class:`StorePathError` (the ``--db`` path cannot be created or opened:
bad input, CLI exit 2, nothing written) and :class:`StoreError` (a write failed,
e.g. the disk is full: exit 1; the failed run's transaction is rolled back).
``ATMSIM_STORE_MAX_PAGES`` (testing only) caps the database size with
``PRAGMA max_page_count`` to simulate a full disk.
"""
from __future__ import annotations

import datetime as _dt
import errno
import json
import os
import socket
import sqlite3
import time
from typing import TYPE_CHECKING, Any, Iterable, Optional, Sequence

from atmsim.exceptions import AtmsimError, ScenarioError
from atmsim.paths import dir_writable

if TYPE_CHECKING:
    import pandas as pd  # imported by the methods that return frames: planning a sweep needs none

SCHEMA_VERSION = 1
MAX_PAGES_ENV = "ATMSIM_STORE_MAX_PAGES"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sweeps (
    sweep_key TEXT PRIMARY KEY,
    scenario_name TEXT NOT NULL,
    scenario_path TEXT NOT NULL,
    scenario_hash TEXT NOT NULL,
    quick INTEGER NOT NULL,
    overrides TEXT NOT NULL,
    created TEXT NOT NULL,
    software_version TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    run_key TEXT PRIMARY KEY,
    sweep_key TEXT NOT NULL REFERENCES sweeps(sweep_key),
    scenario_hash TEXT NOT NULL,
    point_index INTEGER NOT NULL,
    point TEXT NOT NULL,
    point_values TEXT NOT NULL,
    replication INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    quick INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('done', 'failed')),
    wall_s REAL,
    events INTEGER,
    fingerprint TEXT,
    software_version TEXT NOT NULL,
    error TEXT,
    finished TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_by_sweep ON runs (sweep_key, point_index, replication);
CREATE TABLE IF NOT EXISTS probe_values (
    run_key TEXT NOT NULL REFERENCES runs(run_key),
    component TEXT NOT NULL,
    probe TEXT NOT NULL,
    statistic TEXT NOT NULL,
    value REAL,
    unit TEXT NOT NULL,
    PRIMARY KEY (run_key, component, probe, statistic)
);
CREATE TABLE IF NOT EXISTS claims (
    run_key TEXT PRIMARY KEY,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    claimed TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS series_values (
    run_key TEXT NOT NULL REFERENCES runs(run_key),
    component TEXT NOT NULL,
    probe TEXT NOT NULL,
    idx INTEGER NOT NULL,
    time REAL NOT NULL,
    value REAL,
    unit TEXT NOT NULL,
    kind TEXT NOT NULL,
    PRIMARY KEY (run_key, component, probe, idx)
);
"""

SERIES_COLUMNS = ["run_key", "point_index", "replication", "component", "probe", "time", "value", "unit", "kind"]

RUN_COLUMNS = ["run_key", "sweep_key", "scenario_hash", "point_index", "point", "point_values",
               "replication", "seed", "quick", "status", "wall_s", "events", "fingerprint",
               "software_version", "error", "finished"]


class StoreError(AtmsimError):
    """Writing the result store failed (disk full, I/O error): CLI exit 1."""


class StorePathError(ScenarioError):
    """The ``--db`` path cannot be created or opened, or became unwritable (bad input):
    CLI exit 2."""


class StoreMixError(ScenarioError):
    """Resuming would mix runs of another atmsim version or of another text of the
    scenario file into one sweep (``--allow-mixed`` permits it): CLI exit 2."""


#: sqlite3 error texts that mean the store cannot be written at all (not a full disk):
#: re-running cannot help, the file or its directory must be made writable.
_UNWRITABLE = ("readonly", "read-only", "unable to open", "permission", "access denied")


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")


# Can files be created in a directory? (one helper with the CLI's output-path checks)
_dir_writable = dir_writable


def _explain_open_failure(path: str, exc: BaseException) -> str:
    d = os.path.dirname(os.path.abspath(path)) or "."
    if not os.path.isdir(d):
        return f"{path}: cannot create the result store: directory {d} does not exist; create it or choose another --db"
    if os.path.isdir(path):
        return f"{path}: is a directory; --db needs a file path such as {os.path.join(path, 'results.sqlite')}"
    if not _dir_writable(d) or isinstance(exc, OSError) and exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return (f"{path}: cannot write the result store: directory {d} is read-only "
                f"(SQLite needs to create {os.path.basename(path)}-wal beside it); choose a writable --db path")
    if os.path.exists(path) and not os.access(path, os.W_OK):
        return f"{path}: cannot write the result store: the file is read-only; choose a writable --db path"
    msg = " ".join(str(exc).split())
    return f"{path}: cannot open the result store ({msg}); is it an atmsim SQLite file in a writable directory?"


class Store:
    """An open result store.  Use as a context manager, or call :meth:`close`."""

    def __init__(self, path: str, *, readonly: bool = False) -> None:
        self.path = os.fspath(path)
        self.readonly = readonly
        try:
            if readonly:
                if not os.path.isfile(self.path):
                    raise StorePathError(f"{self.path}: no such result store (run `atmsim sweep ... --db {self.path}` first)")
                uri = "file:" + os.path.abspath(self.path) + "?mode=ro"
                self.conn = sqlite3.connect(uri, uri=True, isolation_level=None)
                self.conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            else:
                d = os.path.dirname(os.path.abspath(self.path))
                if not os.path.isdir(d) or os.path.isdir(self.path) or not _dir_writable(d):
                    raise StorePathError(_explain_open_failure(self.path, OSError(errno.EACCES, "")))
                self._open_writable()
        except sqlite3.DatabaseError as exc:
            if "full" in str(exc).lower():
                raise StoreError(f"{self.path}: the result store is full ({' '.join(str(exc).split())}); "
                                 f"free disk space and re-run the same command") from None
            raise StorePathError(_explain_open_failure(self.path, exc)) from None
        except OSError as exc:
            raise StorePathError(_explain_open_failure(self.path, exc)) from None

    def _open_writable(self) -> None:
        """Connects and sets the store up. Two sweeps opening one new store at once can
        meet SQLite's "database is locked" while one of them switches the file to WAL:
        that path returns at once instead of waiting on the busy timeout, so the open is
        retried (for up to the same 30 s) before it counts as a failure."""
        deadline = time.monotonic() + 30.0
        while True:
            self.conn = sqlite3.connect(self.path, isolation_level=None, timeout=30.0)
            try:
                self._setup()
                return
            except sqlite3.OperationalError as exc:
                self.conn.close()
                if "locked" not in str(exc).lower() and "busy" not in str(exc).lower() or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def _setup(self) -> None:
        c = self.conn
        mode = c.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise StorePathError(f"{self.path}: cannot switch the result store to WAL mode (got {mode}); "
                                 f"use a local file system for --db")
        c.execute("PRAGMA synchronous=NORMAL")
        c.execute("PRAGMA foreign_keys=ON")
        max_pages = os.environ.get(MAX_PAGES_ENV)
        if max_pages:
            c.execute(f"PRAGMA max_page_count={int(max_pages)}")
        try:
            c.execute("BEGIN IMMEDIATE")
            for stmt in _SCHEMA.split(";"):
                if stmt.strip():
                    c.execute(stmt)
            row = c.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            if row is None:
                c.execute("INSERT INTO meta(key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            elif int(row[0]) != SCHEMA_VERSION:
                raise StorePathError(f"{self.path}: result store schema version {row[0]}, this atmsim "
                                     f"reads version {SCHEMA_VERSION}; use a new --db file")
            c.execute("COMMIT")
        except BaseException:
            if c.in_transaction:
                c.execute("ROLLBACK")
            raise

    # ------------------------------------------------------------------ writing
    def ensure_sweep(self, sweep_key: str, *, name: str, path: str, scenario_hash: str, quick: bool,
                     overrides: dict[str, str], software_version: str) -> None:
        self._write(lambda c: c.execute(
            "INSERT OR IGNORE INTO sweeps(sweep_key, scenario_name, scenario_path, scenario_hash, quick, "
            "overrides, created, software_version) VALUES (?,?,?,?,?,?,?,?)",
            (sweep_key, name, path, scenario_hash, int(quick),
             json.dumps(overrides, sort_keys=True, separators=(",", ":"), ensure_ascii=False),
             now_iso(), software_version)))

    def write_run(self, run: dict[str, Any], probes: Sequence[Sequence[Any]] = (),
                  series: Sequence[Sequence[Any]] = ()) -> None:
        """Insert or replace one run, all its probe rows and its time series (``(component,
        probe, unit, kind, interval_s, values)``) in one transaction."""
        row = tuple(run.get(col) for col in RUN_COLUMNS)

        def tx(c: sqlite3.Connection) -> None:
            c.execute("DELETE FROM claims WHERE run_key=?", (run["run_key"],))
            c.execute("DELETE FROM probe_values WHERE run_key=?", (run["run_key"],))
            c.execute("DELETE FROM series_values WHERE run_key=?", (run["run_key"],))
            c.execute(f"INSERT OR REPLACE INTO runs({', '.join(RUN_COLUMNS)}) "
                      f"VALUES ({', '.join('?' * len(RUN_COLUMNS))})", row)
            if probes:
                c.executemany("INSERT INTO probe_values(run_key, component, probe, statistic, value, unit) "
                              "VALUES (?,?,?,?,?,?)",
                              [(run["run_key"], comp, probe, stat, _real(value), unit)
                               for comp, probe, stat, value, unit in probes])
            if series:
                c.executemany("INSERT INTO series_values(run_key, component, probe, idx, time, value, unit, kind) "
                              "VALUES (?,?,?,?,?,?,?,?)",
                              [(run["run_key"], comp, probe, k, (k + 1) * interval, _real(v), unit, kind)
                               for comp, probe, unit, kind, interval, values in series
                               for k, v in enumerate(values)])
        self._write(tx)

    def _write(self, fn) -> None:
        c = self.conn
        try:
            c.execute("BEGIN IMMEDIATE")
            fn(c)
            c.execute("COMMIT")
        except sqlite3.Error as exc:
            if c.in_transaction:
                try:
                    c.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
            msg = " ".join(str(exc).split())
            if "full" in msg.lower():
                raise StoreError(f"{self.path}: the result store is full ({msg}); free disk space and re-run "
                                 f"the same command to finish the missing runs") from None
            if any(w in msg.lower() for w in _UNWRITABLE):
                d = os.path.dirname(os.path.abspath(self.path)) or "."
                raise StorePathError(
                    f"{self.path}: the result store cannot be written ({msg}): re-running will not help; make "
                    f"{os.path.basename(self.path)} and its directory {d} writable for this user (SQLite also "
                    f"writes {os.path.basename(self.path)}-wal and -shm there), or give another --db; the runs "
                    f"finished so far are in {self.path}") from None
            raise StoreError(f"{self.path}: writing the result store failed ({msg}); re-run the same "
                             f"command to finish the missing runs") from None
        except BaseException:
            if c.in_transaction:
                c.execute("ROLLBACK")
            raise

    # ------------------------------------------------------------------ claims
    @property
    def me(self) -> tuple[str, int]:
        """This process, as claims name it: (host name, pid)."""
        return socket.gethostname(), os.getpid()

    def claim(self, run_key: str) -> str:
        """Claim ``run_key`` for this process before running it: ``"claimed"`` (run it;
        also when a claim of a dead process was taken over), ``"done"`` (another sweep
        finished it: skip it) or ``"busy"`` (a live process has it: come back later)."""
        host, pid = self.me
        out = "claimed"

        def tx(c: sqlite3.Connection) -> None:
            nonlocal out
            if c.execute("SELECT 1 FROM runs WHERE run_key=? AND status='done'", (run_key,)).fetchone():
                out = "done"
                return
            row = c.execute("SELECT host, pid FROM claims WHERE run_key=?", (run_key,)).fetchone()
            if row is not None and (row[0], int(row[1])) != (host, pid) and _alive(row[0], int(row[1])):
                out = "busy"
                return
            out = "claimed"
            c.execute("INSERT OR REPLACE INTO claims(run_key, host, pid, claimed) VALUES (?,?,?,?)",
                      (run_key, host, pid, now_iso()))
        self._write(tx)
        return out

    def release_claims(self) -> None:
        """Drop this process's remaining claims (runs it did not finish)."""
        host, pid = self.me
        self._write(lambda c: c.execute("DELETE FROM claims WHERE host=? AND pid=?", (host, pid)))

    def check_mixing(self, sweep_key: str, *, path: str, scenario_hash: str, quick: bool,
                     overrides: dict[str, str], software_version: str) -> None:
        """Raise :class:`StoreMixError` if resuming this sweep would mix results: done
        runs of it made by another atmsim version, or — when this sweep is new to the
        store — runs of the same scenario file (same path, quick mode and overrides)
        made from another text of it."""
        versions = [r[0] for r in self.conn.execute(
            "SELECT software_version, count(*) FROM runs WHERE sweep_key=? AND status='done' "
            "AND software_version != ? GROUP BY software_version ORDER BY software_version",
            (sweep_key, software_version))]
        if versions:
            n = self.conn.execute("SELECT count(*) FROM runs WHERE sweep_key=? AND status='done' "
                                  "AND software_version != ?", (sweep_key, software_version)).fetchone()[0]
            raise StoreMixError(
                f"{self.path}: holds {n} runs of this sweep made by atmsim {', '.join(versions)}, and this is atmsim "
                f"{software_version}: resuming would mix results of two code versions; give a new --db to "
                f"recompute, or --allow-mixed to reuse them (each run keeps its version in the store)")
        if self.conn.execute("SELECT 1 FROM sweeps WHERE sweep_key=?", (sweep_key,)).fetchone():
            return  # this text's sweep is in the store already (begun here, or mixing was allowed)
        ov = json.dumps(overrides, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        old = self.conn.execute(
            "SELECT s.created, count(r.run_key) FROM sweeps s JOIN runs r ON r.sweep_key = s.sweep_key "
            "WHERE s.scenario_path=? AND s.quick=? AND s.overrides=? AND s.scenario_hash != ? "
            "AND r.status='done' GROUP BY s.sweep_key ORDER BY s.created DESC",
            (path, int(quick), ov, scenario_hash)).fetchall()
        if old:
            n = sum(int(c) for _t, c in old)
            raise StoreMixError(
                f"{self.path}: holds {n} runs of {path} as the file read before it was changed (last such sweep "
                f"started {old[0][0]}): the new results would sit beside them in one store; give a new --db, or "
                f"--allow-mixed to keep both (they stay apart: each sweep's statistics use only its own runs)")

    # ------------------------------------------------------------------ reading
    def done_keys(self, sweep_key: str) -> set[str]:
        return {r[0] for r in self.conn.execute(
            "SELECT run_key FROM runs WHERE sweep_key=? AND status='done'", (sweep_key,))}

    def done_replications(self, sweep_key: str) -> list[tuple[int, str, int]]:
        """``(point_index, point, replication)`` of the sweep's 'done' runs: what a plan
        needs to count them without computing every run key it might have."""
        return self.conn.execute("SELECT point_index, point, replication FROM runs WHERE sweep_key=? AND status='done'",
                                 (sweep_key,)).fetchall()

    def runs(self, keys: Optional[Iterable[str]] = None) -> pd.DataFrame:
        """Run rows (all, or those with the given keys), ordered by point and replication."""
        import pandas as pd

        q = f"SELECT {', '.join(RUN_COLUMNS)} FROM runs"
        rows = self._select_keys(q, keys, "run_key", order="point_index, replication, run_key")
        return pd.DataFrame(rows, columns=RUN_COLUMNS)

    def values(self, keys: Optional[Iterable[str]] = None) -> pd.DataFrame:
        """Probe values of 'done' runs joined with their run's point and replication."""
        import pandas as pd

        q = ("SELECT r.run_key, r.sweep_key, r.point_index, r.point, r.replication, v.component, v.probe, "
             "v.statistic, v.value, v.unit FROM probe_values v JOIN runs r ON r.run_key = v.run_key "
             "WHERE r.status='done'")
        cols = ["run_key", "sweep_key", "point_index", "point", "replication", "component", "probe",
                "statistic", "value", "unit"]
        rows = self._select_keys(q, keys, "r.run_key", where_prefix=" AND ",
                                 order="r.point_index, r.replication, v.rowid")
        df = pd.DataFrame(rows, columns=cols)
        return df.astype({"value": "float64"})

    def series(self, keys: Optional[Iterable[str]] = None) -> pd.DataFrame:
        """Time series of 'done' runs (each sample at the end of its interval, as
        :attr:`atmsim.Result.series`), with the run's point and replication."""
        import pandas as pd

        q = ("SELECT r.run_key, r.point_index, r.replication, s.component, s.probe, s.time, s.value, s.unit, "
             "s.kind FROM series_values s JOIN runs r ON r.run_key = s.run_key WHERE r.status='done'")
        rows = self._select_keys(q, keys, "r.run_key", where_prefix=" AND ",
                                 order="r.point_index, r.replication, s.component, s.probe, s.idx")
        return pd.DataFrame(rows, columns=SERIES_COLUMNS).astype({"time": "float64", "value": "float64"})

    def sweeps(self) -> pd.DataFrame:
        import pandas as pd

        cols = ["sweep_key", "scenario_name", "scenario_path", "scenario_hash", "quick", "overrides",
                "created", "software_version"]
        return pd.DataFrame(self.conn.execute(f"SELECT {', '.join(cols)} FROM sweeps ORDER BY created").fetchall(),
                            columns=cols)

    def _select_keys(self, q: str, keys: Optional[Iterable[str]], col: str, *, where_prefix: str = " WHERE ",
                     order: str) -> list[tuple]:
        if keys is None:
            return self.conn.execute(f"{q} ORDER BY {order}").fetchall()
        keys = list(keys)
        self.conn.execute("CREATE TEMP TABLE IF NOT EXISTS wanted(k TEXT PRIMARY KEY)")
        self.conn.execute("DELETE FROM temp.wanted")
        self.conn.executemany("INSERT OR IGNORE INTO temp.wanted(k) VALUES (?)", ((k,) for k in keys))
        return self.conn.execute(f"{q}{where_prefix}{col} IN (SELECT k FROM temp.wanted) ORDER BY {order}").fetchall()

    def integrity_ok(self) -> bool:
        return self.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

    def close(self) -> None:
        try:
            self.conn.close()
        except sqlite3.Error:
            pass

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _alive(host: str, pid: int) -> bool:
    """Whether the claiming process still runs.  Only a process on this host can be
    checked; one on another host counts as alive (its claim is never taken over)."""
    if host != socket.gethostname():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie (exited, not yet reaped by its parent) is not running
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return True


def _real(value: Any) -> Optional[float]:
    """NaN is stored as NULL (SQLite has no NaN); read back as NaN."""
    if value is None:
        return None
    v = float(value)
    return None if v != v else v
