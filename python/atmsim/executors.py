"""Where sweep runs execute: a local process pool (default) or a Dask cluster.

Both run :func:`execute_run` on a *task* — a small dict with the scenario text and
path, the overrides of the run's point, its seed and run number — and hand back the
result dict.  The worker loads the scenario with the native ``atmsim._atmsim.loads``
(cached per scenario text), so results and fingerprints depend only on the task,
never on which worker or executor ran it.

* :class:`LocalExecutor` — ``concurrent.futures.ProcessPoolExecutor`` with the
  ``forkserver`` start method (workers fork from a clean server process that has
  imported atmsim once: cheap to start, no fork-with-threads hazards).  At most
  ``2 × workers`` tasks are in flight.  If a worker dies (``BrokenProcessPool``:
  SIGKILL, out-of-memory killer, a crash in native code) the pool is restarted and
  the tasks that had not finished are resubmitted; a task caught in
  ``MAX_BREAKS`` broken pools is reported as failed (it is probably what kills its
  worker).  Workers ignore SIGINT: Ctrl-C is handled by the parent, which
  terminates them.  When the parent is killed outright (``kill -9``), the fork
  server and the workers die with it (:mod:`atmsim._pool_guard`), and the resource
  tracker then exits too.
* :class:`DaskExecutor` — ``distributed.Client`` on an existing scheduler
  (``tcp://HOST:PORT``; its workers need the same atmsim installed) or on a
  ``LocalCluster(n_workers=N, threads_per_worker=1, processes=True)`` with the
  dashboard off.  Dask retries a task whose worker died (``allowed-failures``);
  ``KilledWorker`` and other errors become failed runs.

A run that raises inside the worker is not an executor error: :func:`execute_run`
returns ``{'status': 'failed', 'error': ...}`` and the sweep goes on.
"""
from __future__ import annotations

import contextlib
import hashlib
import multiprocessing
import multiprocessing.forkserver
import os
import signal
import sys
import time
import traceback
from collections import deque
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence

#: A task pending in this many broken pools is reported as failed.
MAX_BREAKS = 3

#: Testing only: a task whose ``fail`` field is set raises inside the worker, to
#: exercise failure recording (set by atmsim.sweep from ATMSIM_SWEEP_FAIL_POINT).
_scenario_cache: dict[tuple[str, str], Any] = {}


def _load_cached(text: str, path: str) -> Any:
    from atmsim import _atmsim

    key = (path, hashlib.sha256(text.encode("utf-8")).hexdigest())
    sc = _scenario_cache.get(key)
    if sc is None:
        if len(_scenario_cache) > 32:
            _scenario_cache.clear()
        sc = _scenario_cache[key] = _atmsim.loads(text, path)
    return sc


def execute_run(task: dict[str, Any]) -> dict[str, Any]:
    """Run one replication; never raises for a failing run.

    task: ``{'text', 'path', 'overrides': {key: str}, 'seed': int, 'run': int,
    'fail': bool}``.  Returns ``{'status': 'done', 'fingerprint', 'events', 'wall_s',
    'probes': [(component, probe, statistic, value, unit)], 'series': [(component,
    probe, unit, kind, interval_s, [values])]}`` or ``{'status': 'failed', 'error':
    one line, 'wall_s'}``."""
    t0 = time.perf_counter()
    try:
        if task.get("fail"):
            raise RuntimeError("ATMSIM_SWEEP_FAIL_POINT: failure injected for testing")
        sc = _load_cached(task["text"], task["path"])
        if task.get("overrides"):
            sc = sc.with_overrides(task["overrides"])
        if sc.traced:
            # A sweep's store keeps no cell trace: its runs do not record one.
            sc = sc.with_overrides({"trace.cells": "false"})
        from atmsim.memory import MemoryGuard

        raw = sc.run(seed=task["seed"], run=task["run"], progress=MemoryGuard(share=_memory_share))
        return {"status": "done", "fingerprint": raw["fingerprint"], "events": int(raw["events"]),
                "wall_s": float(raw["wall_s"]), "probes": [tuple(p) for p in raw["probes"]],
                "series": [(x["component"], x["probe"], x["unit"], x["kind"], float(x["interval_s"]),
                            [float(v) for v in x["values"]]) for x in raw.get("series", [])]}
    except Exception as exc:  # noqa: BLE001 - every failure is recorded, the sweep goes on
        msg = " ".join(str(exc).split()) or type(exc).__name__
        if not isinstance(exc, _atmsim_errors()):
            last = traceback.extract_tb(exc.__traceback__)[-1:]
            where = f" (at {os.path.basename(last[0].filename)}:{last[0].lineno})" if last else ""
            msg = f"{type(exc).__name__}: {msg}{where}"
        return {"status": "failed", "error": msg, "wall_s": time.perf_counter() - t0}


def _atmsim_errors() -> tuple[type, ...]:
    from atmsim.exceptions import AtmsimError

    return (AtmsimError,)


@contextlib.contextmanager
def _main_module_hidden() -> Iterator[None]:
    """Workers never need the parent's ``__main__`` (tasks call
    :func:`execute_run`), but multiprocessing re-imports it in every new worker
    when it has a ``__file__`` or ``__spec__``: a script without an
    ``if __name__ == "__main__"`` guard would start its sweep again in each worker,
    and ``python - < script`` crashes them ('/cwd/<stdin>' does not exist).  Hide
    both while workers are started (they are started synchronously by submit())."""
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    saved = {k: main.__dict__[k] for k in ("__file__", "__spec__") if k in main.__dict__}
    main.__dict__.pop("__file__", None)
    main.__dict__["__spec__"] = None
    try:
        yield
    finally:
        main.__dict__.pop("__spec__", None)
        main.__dict__.update(saved)


#: How many processes of this machine share its memory with this one (a local pool's
#: workers: set by their initializer).
_memory_share = 1


def _worker_init(workers: int = 1) -> None:
    global _memory_share
    _memory_share = workers
    # Ctrl-C and SIGTERM (also when sent to the whole process group, as `timeout`
    # does) are the parent's to handle: it stops the workers and the fork server.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    # Die with the fork server, which dies with the sweep's process (kill -9 included).
    from atmsim import _pool_guard

    _pool_guard.arm(_pool_guard.FORKSERVER_PID)


def default_workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


class LocalExecutor:
    """Process pool on this machine (see module doc)."""

    name = "local"

    def __init__(self, workers: Optional[int] = None) -> None:
        self.workers = workers or default_workers()
        self.restarts = 0
        self._ctx = multiprocessing.get_context("forkserver")
        # Workers fork from a server that has already imported the native module. The
        # server imports atmsim._pool_guard first: it dies with the process named in
        # the environment (this one), and its workers with it.
        from atmsim._pool_guard import PARENT_ENV

        os.environ[PARENT_ENV] = str(os.getpid())
        self._ctx.set_forkserver_preload(["atmsim._pool_guard", "atmsim.executors", "atmsim._atmsim"])
        self._pool: Optional[ProcessPoolExecutor] = None

    def _new_pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(max_workers=self.workers, mp_context=self._ctx, initializer=_worker_init,
                                   initargs=(self.workers,))

    def run(self, tasks: Iterable[tuple[Any, dict[str, Any]]]) -> Iterator[tuple[Any, dict[str, Any]]]:
        """Yield ``(tag, result)`` for every ``(tag, task)`` as runs finish (any order).
        ``tasks`` is drawn lazily, as workers free up (a sweep claims each run in the
        store when it is drawn)."""
        fresh = iter(tasks)
        todo: deque = deque()  # resubmissions after a worker died
        inflight: dict[Future, tuple[Any, dict[str, Any], int]] = {}
        window = 2 * self.workers
        if self._pool is None:
            self._pool = self._new_pool()
        exhausted = False
        while True:
            while len(inflight) < window:
                if todo:
                    tag, task, breaks = todo.popleft()
                else:
                    nxt = None if exhausted else next(fresh, None)
                    if nxt is None:
                        exhausted = True
                        break
                    (tag, task), breaks = nxt, 0
                try:
                    with _main_module_hidden():
                        fut = self._pool.submit(execute_run, task)
                except BrokenProcessPool:
                    todo.appendleft((tag, task, breaks))
                    self._restart(inflight, todo)
                    continue
                inflight[fut] = (tag, task, breaks)
            if not inflight:
                break
            done, _ = wait(list(inflight), return_when=FIRST_COMPLETED)
            broken = False
            for fut in done:
                tag, task, breaks = inflight.pop(fut)
                try:
                    result = fut.result()
                except BrokenProcessPool:
                    broken = True
                    if breaks + 1 >= MAX_BREAKS:
                        yield tag, {"status": "failed", "wall_s": None,
                                    "error": f"the worker process died {MAX_BREAKS} times running this point "
                                             f"(killed, out of memory or crashed)"}
                    else:
                        todo.appendleft((tag, task, breaks + 1))
                    continue
                except Exception as exc:  # noqa: BLE001 - e.g. a result that cannot be unpickled
                    result = {"status": "failed", "wall_s": None,
                              "error": f"{type(exc).__name__}: {' '.join(str(exc).split())}"}
                yield tag, result
            if broken:
                self._restart(inflight, todo)

    def _restart(self, inflight: dict, todo: deque) -> None:
        """A worker died: every unfinished future of the old pool is lost; resubmit."""
        for fut, (tag, task, breaks) in list(inflight.items()):
            if fut.done() and not isinstance(fut.exception(), BrokenProcessPool):
                continue  # finished before the break: collected on the next wait()
            inflight.pop(fut)
            todo.appendleft((tag, task, breaks + 1 if breaks + 1 < MAX_BREAKS else breaks))
        self.restarts += 1
        self._shutdown(kill=True)
        self._pool = self._new_pool()

    def map(self, fn: Callable[..., Any], argsets: Sequence[tuple]) -> Iterator[Any]:
        """``fn(*args)`` for each of ``argsets``, computed in the pool (``fn`` importable
        by name), yielded in order as each is ready; the pool stays up for the next
        call (:meth:`close` ends it). The first exception (a Ctrl-C included) stops and
        kills the workers and is raised here."""
        if self._pool is None:
            self._pool = self._new_pool()
        try:
            with _main_module_hidden():
                futures = [self._pool.submit(fn, *args) for args in argsets]
            for f in futures:
                yield f.result()
        except BaseException:
            self.close(kill=True)
            raise

    def call_all(self, fn: Callable[..., Any], argsets: Sequence[tuple]) -> list[Any]:
        """``[fn(*args) for args in argsets]`` (:meth:`map`), results in order; the
        pool is closed after."""
        results = list(self.map(fn, argsets))
        self.close()
        return results

    def _shutdown(self, kill: bool) -> None:
        pool, self._pool = self._pool, None
        if pool is None:
            return
        if kill:
            for p in list((getattr(pool, "_processes", None) or {}).values()):
                # By pid, not p.kill(): when the fork server died first (a SIGTERM to the
                # whole process group, as `timeout` sends), the pool already reads every
                # worker as exited (its status pipe closed) and p.kill() sends nothing,
                # leaving workers that ignore SIGTERM running after this process.
                try:
                    os.kill(p.pid, signal.SIGKILL)
                except (OSError, TypeError, ValueError):
                    pass
        # Wait even after a kill: the pool's management thread then sees the dead workers
        # and exits now, instead of racing interpreter shutdown (an atexit traceback,
        # "Bad file descriptor", after the one-line error).
        pool.shutdown(wait=True, cancel_futures=True)

    def close(self, kill: bool = False) -> None:
        self._shutdown(kill)
        if kill:
            # Stopped by a signal or an error: take the fork server down now rather
            # than when this process exits (it would otherwise hold the caller's pipes).
            stop = getattr(getattr(multiprocessing.forkserver, "_forkserver", None), "_stop", None)
            if stop is not None:
                try:
                    stop()
                except (OSError, ValueError):
                    pass

    def describe(self) -> str:
        return f"local, {self.workers} worker{'s' if self.workers != 1 else ''}"


class DaskExecutor:
    """Dask distributed (see module doc)."""

    name = "dask"

    def __init__(self, workers: Optional[int] = None, scheduler: Optional[str] = None) -> None:
        import logging

        from distributed import Client, LocalCluster

        # The cluster's own INFO logging would drown the progress bar.
        for name in ("distributed", "distributed.nanny", "distributed.scheduler", "distributed.worker"):
            logging.getLogger(name).setLevel(logging.ERROR)
        self.cluster = None
        self.scheduler = scheduler
        if scheduler:
            try:
                self.client = Client(scheduler, timeout="10s")
            except (OSError, TimeoutError) as exc:
                from atmsim.exceptions import ScenarioError

                raise ScenarioError(f"--scheduler {scheduler}: cannot connect to a Dask scheduler "
                                    f"({' '.join(str(exc).split())}); expected tcp://HOST:PORT of a running "
                                    f"`dask scheduler`") from None
            self.workers = len(self.client.scheduler_info().get("workers", {})) or (workers or 0)
        else:
            self.workers = workers or default_workers()
            with _main_module_hidden():  # the nannies spawn their workers while this blocks
                self.cluster = LocalCluster(n_workers=self.workers, threads_per_worker=1, processes=True,
                                            dashboard_address=None, silence_logs=logging.ERROR)
            self.client = Client(self.cluster)

    def run(self, tasks: Iterable[tuple[Any, dict[str, Any]]]) -> Iterator[tuple[Any, dict[str, Any]]]:
        from distributed import as_completed

        todo = iter(tasks)  # drawn lazily, as in LocalExecutor.run
        window = max(4, 4 * max(self.workers, 1))
        tags: dict[Any, Any] = {}
        ac = as_completed([], with_results=False)
        exhausted = False

        def submit_one() -> bool:
            nonlocal exhausted
            nxt = None if exhausted else next(todo, None)
            if nxt is None:
                exhausted = True
                return False
            tag, task = nxt
            fut = self.client.submit(execute_run, task, pure=False)
            tags[fut.key] = tag
            ac.add(fut)
            return True

        while len(tags) < window and submit_one():
            pass
        for fut in ac:
            tag = tags.pop(fut.key)
            try:
                result = fut.result()
            except Exception as exc:  # noqa: BLE001 - KilledWorker, lost connection, ...
                result = {"status": "failed", "wall_s": None,
                          "error": f"{type(exc).__name__}: {' '.join(str(exc).split())}"}
            fut.release()
            yield tag, result
            while len(tags) < window and submit_one():
                pass

    def close(self, kill: bool = False) -> None:
        try:
            self.client.close()
        finally:
            if self.cluster is not None:
                self.cluster.close()

    def describe(self) -> str:
        where = self.scheduler or "LocalCluster"
        return f"dask ({where}), {self.workers} worker{'s' if self.workers != 1 else ''}"


def check_executor_args(kind: str = "local", workers: Optional[int] = None, scheduler: Optional[str] = None) -> None:
    """Raise ScenarioError (bad input) for an unknown executor or bad options."""
    from atmsim.exceptions import ScenarioError

    if kind not in ("local", "dask"):
        raise ScenarioError(f"--executor {kind!r}: unknown executor; valid: local, dask")
    if workers is not None and workers < 1:
        raise ScenarioError(f"--workers {workers}: must be at least 1")
    if scheduler and kind != "dask":
        raise ScenarioError("--scheduler needs --executor dask")


def make_executor(kind: str = "local", workers: Optional[int] = None, scheduler: Optional[str] = None):
    check_executor_args(kind, workers, scheduler)
    if kind == "local":
        return LocalExecutor(workers)
    return DaskExecutor(workers, scheduler)
