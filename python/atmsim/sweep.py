"""Parameter sweeps with replications, a resumable result store and statistics.

A scenario file may carry a ``[sweep]`` table (ignored by single runs).  The native
core reads and checks it (``atmsim_scenario::sweep``, through
``_atmsim.loads_sweep``) from the same TOML parse as the rest of the file, with the
same one-line errors and did-you-mean hints; the per-point seed is the core's too::

    [sweep]
    replications = 5            # per point (default: [scenario] replications)
    quick_replications = 2      # with --quick (default 2)
    target = { component = "mux", probe = "q_loss_ratio", statistic = "value",
               rel_half_width = 0.1, max_replications = 50 }   # optional, see below

    [sweep.grid]                # cartesian product of these axes, in file order
    "src.rate" = ["20 Mb/s", "40 Mb/s"]
    "mux.capacity" = { from = 8, to = 64, step = 8, unit = "cells" }

    [sweep.zip]                 # varied together: one more axis of the grid
    "src.peak" = ["20 Mb/s", "40 Mb/s"]
    "src.mean" = ["10 Mb/s", "20 Mb/s"]

    [sweep.quick]               # applied only with --quick
    "scenario.duration" = "0.1 s"           # a value: an override of an unswept key
    "src.rate" = ["20 Mb/s"]                # a list: only these values of a swept key

See docs/experiments.md for the full description (seeds, store, executors,
statistics, resume).

Python API (also used by ``atmsim reproduce``)::

    from atmsim.sweep import run_sweep, load_sweep
    spec = load_sweep("scenarios/x.toml")     # SweepSpec: .points, .replications, ...
    spec, plan = plan_sweep("scenarios/x.toml", "results.sqlite")   # what would run (--dry-run)
    sw = Sweep(atmsim.load("x.toml"), grid={"mux.capacity": ["8 cells", "16 cells"]},
               replications=5)              # or a sweep built in Python (class Sweep)
    res = run_sweep(scenario_path: str | Sweep | Scenario, db: str, *, quick: bool = False,
                    executor: str = "local", workers: int | None = None,
                    scheduler: str | None = None, progress: bool = False,
                    overrides: dict[str, str] | None = None,
                    precision: bool = True) -> SweepResult   # False: fixed replications

``SweepResult.runs`` is a DataFrame, one row per run: ``point, replication, seed,
status, wall_s, events, fingerprint, error`` and the swept keys' columns
(:func:`key_columns`: per key the value as written in the file, then, for numbers with
units, the number in a column ``"KEY [UNIT]"``, e.g. ``mux.capacity [cells]``; so in
every frame below where it says "one per swept key").  ``SweepResult.stats`` has the columns ``point,
<one per swept key>, component, probe, statistic, unit, domain, n, mean, std,
ci_low, ci_high, interval, ci_note`` (95% intervals that respect each statistic's
domain, over the 'done' replications of each point; see :mod:`atmsim.stats`).
``SweepResult.series`` holds the runs' time series when the scenario asks for some
(``[probes] series``): columns ``point, replication, <one per swept key>, component,
probe, time, value, unit, kind``, stored with each run (table ``series_values``) and
read back on resume.  ``SweepResult.values`` keeps every replication's value of every
probe statistic (what ``stats`` summarises; the store's ``probe_values``): columns
``point, replication, <one per swept key>, component, probe, statistic, value, unit``
— for intervals the per-point summary cannot give, e.g. paired differences of two
configurations run with the same seeds (:func:`atmsim.stats.paired_difference`).
``SweepResult.failures`` lists the failed runs (dicts with
point, replication, seed, error and the point's values).  Bad specs raise ``ScenarioError`` (one line
``FILE:LINE: sweep...: what is wrong; what would be valid``); an unusable ``--db``
raises :class:`atmsim.store.StorePathError`; a failed store write raises
:class:`atmsim.store.StoreError`.

**Seeds** (stable across versions): the canonical form of a point is the JSON of its
overrides (values as the strings handed to ``with_overrides``), keys sorted, no
spaces, UTF-8; ``seed = FNV-1a-64("atmsim-sweep-v1|<scenario seed>|<canonical
point>") & 0x7FFF_FFFF_FFFF_FFFF`` (FNV-1a of ``atmsim_kernel::rng``, the one
implementation; :func:`point_seed` calls it); replication r is the native run number.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import re
import sys
import time
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional

from atmsim import _atmsim
from atmsim.exceptions import ArgumentError, AtmsimError, ScenarioError
from atmsim.store import Store, now_iso

if TYPE_CHECKING:
    import pandas as pd

# pandas and the statistics (numpy, scipy) are imported where results are made, not
# here: `atmsim sweep --dry-run` and loading a spec need neither (issue 44 item 12).

# The spec's constants, defined once in the core (atmsim_scenario::sweep).
SEED_DOMAIN: str = _atmsim.SWEEP_SEED_DOMAIN                      # "atmsim-sweep-v1"
SEED_MASK: int = _atmsim.SWEEP_SEED_MASK                          # 0x7FFF_FFFF_FFFF_FFFF
DEFAULT_QUICK_REPLICATIONS: int = _atmsim.SWEEP_DEFAULT_QUICK_REPLICATIONS   # 2
MAX_RANGE_POINTS: int = _atmsim.SWEEP_MAX_RANGE_POINTS            # 10_000
MAX_REPLICATIONS: int = _atmsim.SWEEP_MAX_REPLICATIONS            # 1_000_000 per point
SWEEP_KEYS: tuple[str, ...] = _atmsim.SWEEP_KEYS
TARGET_KEYS: tuple[str, ...] = _atmsim.SWEEP_TARGET_KEYS
RANGE_KEYS: tuple[str, ...] = _atmsim.SWEEP_RANGE_KEYS
#: Testing only: comma-separated point indices whose runs raise in the worker.
FAIL_POINT_ENV = "ATMSIM_SWEEP_FAIL_POINT"

RUN_FRAME_COLUMNS = ["point", "replication", "seed", "status", "wall_s", "events", "fingerprint", "error"]


def _pandas():
    import pandas

    return pandas


# --------------------------------------------------------------------------- seeds
def fnv1a64(data: bytes) -> int:
    """FNV-1a, 64-bit (the core's ``atmsim_kernel::rng::fnv1a64``)."""
    return _atmsim.fnv1a64(bytes(data))


def canonical_point(point: dict[str, str]) -> str:
    """JSON of the point's overrides: sorted keys, no spaces, non-ASCII kept (UTF-8)."""
    return _atmsim.canonical_point(point)


def point_seed(scenario_seed: int, point: dict[str, str]) -> int:
    """The master seed of every replication of ``point`` (documented, stable; computed
    by the core, ``atmsim_scenario::sweep::point_seed``)."""
    return _atmsim.point_seed(scenario_seed, point)


def run_key(scenario_hash: str, point: dict[str, str], replication: int, quick: bool,
            overrides: Optional[dict[str, str]] = None) -> str:
    """sha256 of ``<scenario hash>|<canonical point>|<replication>|<0 or 1>`` (plus
    ``|set=<canonical overrides>`` when the sweep was given extra overrides)."""
    material = f"{scenario_hash}|{canonical_point(point)}|{replication}|{int(bool(quick))}"
    if overrides:
        material += f"|set={canonical_point(overrides)}"
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------- spec
@dataclasses.dataclass(frozen=True)
class Target:
    component: str
    probe: str
    statistic: str
    rel_half_width: float
    max_replications: int
    batch: int
    #: The line of ``target`` in the scenario file (for errors found while running).
    line: Optional[int] = dataclasses.field(default=None, compare=False, repr=False)


@dataclasses.dataclass
class SweepSpec:
    """A scenario file's sweep: the points (override dicts), replications, target."""
    path: str
    text: str
    scenario_hash: str
    name: str
    seed: int                           # the scenario's seed (after extra overrides)
    keys: list[str]                     # swept keys, in axis order
    points: list[dict[str, str]]        # override strings per point
    written: list[dict[str, Any]]       # the same values as written in the file
    replications: int
    quick_replications: int
    quick_overrides: dict[str, str]
    target: Optional[Target]
    overrides: dict[str, str]           # extra overrides (run_sweep(overrides=...), --set)
    has_sweep_table: bool
    #: ``[sweep] precision`` with ``statistics``: one target per named statistic.
    precision: list[Target] = dataclasses.field(default_factory=list)
    #: ``[sweep.quick]`` lists: swept key -> the values --quick runs (empty: all).
    quick_select: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    #: The indices of the points --quick runs (the core's selection).
    quick_points: Optional[list[int]] = None

    @property
    def targets(self) -> list[Target]:
        """The statistics whose relative precision stops a point's replications:
        ``target``, or every statistic ``precision`` names (empty: fixed replications)."""
        return [self.target] if self.target is not None else list(self.precision)

    def replications_for(self, quick: bool) -> int:
        return self.quick_replications if quick else self.replications

    def seed_of(self, index: int) -> int:
        return point_seed(self.seed, self.points[index])

    def sweep_key(self, quick: bool) -> str:
        """The store's key of this sweep: the file's text, the mode and the extra
        overrides (two runs of the same command share it and so their runs)."""
        material = f"{self.scenario_hash}|{int(quick)}|{canonical_point(self.overrides)}"
        return hashlib.sha256(material.encode("utf-8")).hexdigest()

    def point_indices(self, quick: bool) -> list[int]:
        """The points that run: every one, or with --quick those ``[sweep.quick]``
        lists select (same indices and seeds as in the full sweep)."""
        if quick and self.quick_points is not None:
            return list(self.quick_points)
        return list(range(len(self.points)))


def load_sweep(path: str, overrides: Optional[dict[str, str]] = None) -> SweepSpec:
    """Read and validate the sweep spec of a scenario file (every value and every point
    is checked with the native ``with_overrides``).  Raises ScenarioError with one line
    ``FILE:LINE: sweep...: what is wrong; what would be valid``."""
    from atmsim.api import _check_readable

    path = os.fspath(path)
    _check_readable(path)
    with open(path, "rb") as fh:
        raw_bytes = fh.read()
    try:
        text = raw_bytes.decode("utf-8")
    except UnicodeDecodeError:
        raise ScenarioError(f"{path}: not UTF-8 text; scenario files are UTF-8 TOML") from None
    return _spec_from_text(text, path, hashlib.sha256(raw_bytes).hexdigest(), overrides)


def _check_overrides(overrides: Any) -> dict[str, str]:
    if overrides is None:
        return {}
    if not isinstance(overrides, dict):
        raise ArgumentError(f"overrides: expected a dict {{'COMPONENT.PARAM': value}}, got {type(overrides).__name__}")
    from atmsim.api import _to_text

    return {str(k): _to_text(v) for k, v in overrides.items()}


def _spec_from_text(text: str, path: str, scenario_hash: str, overrides: Optional[dict[str, str]]) -> SweepSpec:
    """The checked spec of a scenario's text (its ``[sweep]`` table); errors of the
    extra ``overrides`` name them so (the CLI says ``--set``)."""
    from atmsim.api import renamed

    overrides = _check_overrides(overrides)
    try:
        d = _atmsim.loads_sweep(text, path, overrides)
    except ScenarioError as exc:
        raise renamed(exc, "--set", "overrides") from None

    def as_target(t: dict[str, Any]) -> Target:
        return Target(t["component"], t["probe"], t["statistic"], t["rel_half_width"], t["max_replications"],
                      t["batch"], t["line"])

    target = None if d["target"] is None else as_target(d["target"])
    precision = [as_target(t) for t in d.get("precision", [])]
    return SweepSpec(path=path, text=text, scenario_hash=scenario_hash,
                     name=d["name"], seed=int(d["seed"]), keys=d["keys"], points=d["points"], written=d["written"],
                     replications=d["replications"], quick_replications=d["quick_replications"],
                     quick_overrides=d["quick_overrides"], target=target, overrides=overrides,
                     has_sweep_table=d["has_sweep_table"], precision=precision,
                     quick_select=d["quick_select"], quick_points=list(d["quick_points"]))


# --------------------------------------------------------------------------- Python sweeps
class Sweep:
    """A sweep built in Python: the same spec as a scenario file's ``[sweep]`` table,
    read by the same core parser (the arguments are written as that table and appended
    to the scenario's TOML), so points, seeds, checks and results are those of the file
    with that table::

        sw = atmsim.Sweep(atmsim.load("scenarios/examples/poisson_oc3.toml"),
                          grid={"mux.capacity": ["16 cells", "64 cells"], "src.rate": range(100, 141, 20)},
                          zip={"src.peak": ["20 Mb/s", "40 Mb/s"], "src.mean": ["10 Mb/s", "20 Mb/s"]},
                          replications=5, precision=0.05, statistics=["mux.q_loss_ratio.value"])
        res = atmsim.run_sweep(sw, "results.sqlite")

    ``scenario``: an :class:`atmsim.Scenario` (with its overrides) or a path (its own
    ``[sweep]`` table, if any, is not used). ``grid``, ``zip``, ``quick``: dicts of
    ``"COMPONENT.PARAM"`` (or ``"scenario.KEY"``) to a list of values (strings with
    units, numbers, booleans), a ``range`` of integers, or a dict ``{"from": 8, "to":
    64, "step": 8, "unit": "cells"}``; ``quick`` may also map an unswept key to one
    value. ``replications``, ``quick_replications``, ``target`` (a dict),
    ``precision`` with ``statistics`` and ``max_replications``: as the keys of
    ``[sweep]`` (docs/experiments.md). Errors are :class:`~atmsim.exceptions.ScenarioError`
    naming these arguments (``grid['mux.capacity']: ...``), raised here."""

    def __init__(self, scenario: Any, grid: Optional[dict] = None, zip: Optional[dict] = None, *,  # noqa: A002
                 replications: Optional[int] = None, quick_replications: Optional[int] = None,
                 precision: Optional[float] = None, statistics: Optional[list[str]] = None,
                 max_replications: Optional[int] = None, target: Optional[dict] = None,
                 quick: Optional[dict] = None) -> None:
        from atmsim.api import _as_scenario

        self.scenario = _as_scenario(scenario, "Sweep(scenario)")
        self.path = self.scenario.path
        table = _sweep_table({"replications": replications, "quick_replications": quick_replications,
                              "precision": precision, "statistics": statistics,
                              "max_replications": max_replications, "target": target},
                             {"grid": grid, "zip": zip, "quick": quick})
        self.text = self.scenario.to_toml() + "\n" + table
        self._spec = self.spec()  # checked now: a bad argument fails where it is given

    @property
    def label(self) -> str:
        """How the store and messages name this sweep: the scenario's path and the hash
        of the sweep's text (two Python sweeps of one scenario are two sweeps)."""
        return f"{self.path} (Python sweep {hashlib.sha256(self.text.encode('utf-8')).hexdigest()[:12]})"

    def spec(self, overrides: Optional[dict[str, str]] = None) -> SweepSpec:
        """The checked :class:`SweepSpec` (with extra ``overrides`` applied at every point)."""
        label = self.label
        try:
            return _spec_from_text(self.text, label, hashlib.sha256(self.text.encode("utf-8")).hexdigest(), overrides)
        except ScenarioError as exc:
            raise _python_error(exc, label) from None

    @property
    def points(self) -> list[dict[str, str]]:
        return self._spec.points

    @property
    def keys(self) -> list[str]:
        return self._spec.keys

    def __repr__(self) -> str:
        return (f"Sweep(scenario={self.scenario.name!r}, keys={self._spec.keys}, points={len(self._spec.points)}, "
                f"replications={self._spec.replications})")


_SWEEP_KEY = re.compile(r'sweep(?:\.(grid|zip|quick|[a-z_]+))?(?:\."((?:[^"\\]|\\.)*)")?')


def _argument(m: "re.Match[str]") -> str:
    table, key = m.group(1), m.group(2)
    if table is None:
        return "Sweep"
    return f"{table}[{key!r}]" if key is not None else table


def _python_error(exc: ScenarioError, label: str) -> ScenarioError:
    """A core error about the generated ``[sweep]`` text, naming the Python arguments
    instead (``grid['mux.capacity']: ...`` rather than ``FILE:LINE: sweep.grid."mux.capacity": ...``)."""
    msg = str(exc)
    msg = re.sub(re.escape(label) + r"(?::\d+)?: " + _SWEEP_KEY.pattern, lambda m: _argument(m), msg)
    for table, arg in (("[sweep.grid]", "grid"), ("[sweep.zip]", "zip"), ("[sweep.quick]", "quick"),
                       ("[sweep]", "Sweep")):
        msg = msg.replace(table, arg)
    return type(exc)(msg)


def _toml(value: Any, where: str) -> str:
    """A Python value as TOML (what the ``[sweep]`` table would hold)."""
    if hasattr(value, "item") and callable(value.item) and not isinstance(value, (list, tuple, dict)):
        value = value.item()  # numpy scalars
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else ("nan" if math.isnan(value) else ("inf" if value > 0 else "-inf"))
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, range):
        if len(value) == 0 or value.step < 0:
            raise ScenarioError(f"{where}: {value!r} is empty or runs downwards; give an increasing range")
        return _toml({"from": value.start, "to": value[-1], "step": value.step}, where)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v, where) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(str(k))} = {_toml(v, where)}" for k, v in value.items()) + " }"
    raise ArgumentError(f"{where}: a value of type {type(value).__name__} cannot be swept; give strings with units "
                        f"('8 cells'), numbers or booleans")


def _sweep_table(scalars: dict[str, Any], tables: dict[str, Optional[dict]]) -> str:
    """The ``[sweep]`` TOML of :class:`Sweep`'s arguments."""
    lines = ["[sweep]"]
    for name, v in scalars.items():
        if v is not None:
            if name == "target" and not isinstance(v, dict):
                raise ArgumentError(f"target: expected a dict {{'component': ..., 'probe': ..., 'statistic': ..., "
                                    f"'rel_half_width': 0.1, 'max_replications': 50}}, got {type(v).__name__}")
            lines.append(f"{name} = {_toml(v, name)}")
    for name, t in tables.items():
        if t is None:
            continue
        if not isinstance(t, dict):
            raise ArgumentError(f"{name}: expected a dict {{'COMPONENT.PARAM': [values]}}, got {type(t).__name__}")
        lines.append(f"[sweep.{name}]")
        for k, v in t.items():
            if not isinstance(k, str):
                raise ArgumentError(f"{name}: key {k!r} is not a str; keys are 'COMPONENT.PARAM' or 'scenario.KEY'")
            lines.append(f"{json.dumps(k, ensure_ascii=False)} = {_toml(v, f'{name}[{k!r}]')}")
    return "\n".join(lines) + "\n"


def _as_spec(what: Any, overrides: Optional[dict[str, str]], where: str) -> SweepSpec:
    """The spec of a scenario file (its ``[sweep]``), a :class:`Sweep` or a Scenario
    (a sweep of one point, its own replications)."""
    from atmsim.api import Scenario

    if isinstance(what, (Scenario, _atmsim.Scenario)):
        what = Sweep(what)
    if isinstance(what, Sweep):
        return what.spec(overrides)
    if not isinstance(what, (str, os.PathLike)):
        raise ArgumentError(f"{where}: expected the path of a scenario file, an atmsim.Sweep or an atmsim.Scenario, "
                            f"got {type(what).__name__}")
    return load_sweep(what, overrides)


# --------------------------------------------------------------------------- running
@dataclasses.dataclass(repr=False)
class SweepResult:
    """What :func:`run_sweep` returns (see module doc)."""
    spec: SweepSpec
    runs: pd.DataFrame
    stats: pd.DataFrame
    failures: list[dict[str, Any]]
    db: str
    quick: bool
    executed: int = 0          # runs computed by this call
    skipped: int = 0           # runs found 'done' in the store
    wall_s: float = 0.0
    executor: str = ""
    restarts: int = 0          # local pool restarts after a worker died
    # The runs' time series ([probes] series), long form: point, replication, the swept
    # keys, component, probe, time, value, unit, kind.
    series: pd.DataFrame = dataclasses.field(default_factory=lambda: _pandas().DataFrame())
    # Every replication's value of every probe statistic, long form: point, replication,
    # the swept keys, component, probe, statistic, value, unit (module doc).
    values: pd.DataFrame = dataclasses.field(default_factory=lambda: _pandas().DataFrame())

    @property
    def ok(self) -> bool:
        return not self.failures

    @property
    def precision(self) -> Optional[pd.DataFrame]:
        """With ``[sweep] target`` or ``precision`` (and not --quick): per point, the
        replications it took, whether every target statistic met its relative
        half-width and which points hit the cap (:func:`precision_report`); else None."""
        if not self.spec.targets or self.quick:
            return None
        return precision_report(self.spec, self.runs, self.stats)

    #: Summary rows shown by :meth:`_repr_html_` (all of them are in :attr:`stats`).
    HTML_STAT_ROWS = 30

    def _counts(self) -> str:
        return (f"{len(self.spec.points)} point(s), {len(self.runs)} run(s) "
                f"({self.executed} computed, {self.skipped} from the store), {len(self.failures)} failed")

    def __repr__(self) -> str:
        return (f"SweepResult(db={self.db!r}, {self._counts()}, quick={self.quick}, "
                f"executor={self.executor!r}, wall_s={self.wall_s:.3g}, stats={len(self.stats)} rows)")

    def _repr_html_(self) -> str:
        """Jupyter's view: the store, points, runs and failures, then the first
        :attr:`HTML_STAT_ROWS` summary rows (mean and 95% interval per point)."""
        from atmsim.api import _h, head_html

        keys = ", ".join(self.spec.keys) or "none"
        fails = "".join(f"<br>failed: {_h(f.get('error', f))}" for f in self.failures[:5])
        return (f"<div><b>Sweep</b> <code>{_h(self.db)}</code>: {_h(self._counts())}; swept keys {_h(keys)}; "
                f"{'quick' if self.quick else 'full'} mode, {_h(self.executor)} executor, {self.wall_s:.3g} s wall"
                f"{fails}{head_html(self.stats, self.HTML_STAT_ROWS, '.stats')}</div>")

    def plot(self, component: str, probe: str, statistic: str = "mean", x: str | None = None,
             path: str | None = None):
        """One line: ``component.probe`` ``statistic`` (its mean over replications, with
        the 95% CI) against the swept key ``x`` (default the first), one line per value
        of the other swept keys; a matplotlib ``Figure``, saved to ``path`` if given.
        See :func:`atmsim.plot.sweep_figure`."""
        from atmsim.plot import sweep_figure

        return sweep_figure(self.stats, self.spec.keys, component, probe, statistic, x=x, path=path)


class _Bar:
    """tqdm over runs on stderr with ETA and done/failed counts."""

    def __init__(self, enabled: bool, total: int, desc: str) -> None:
        self.bar = None
        if enabled:
            from tqdm import tqdm

            from atmsim.progress import _fixed_ncols

            ncols = _fixed_ncols(sys.stderr)
            self.bar = tqdm(total=total, desc=desc, unit="run", file=sys.stderr, leave=False,
                            dynamic_ncols=ncols is None, ncols=ncols, nrows=None if ncols is None else 24,
                            mininterval=0.2)
        self.done = self.failed = 0

    def grow(self, total: int) -> None:
        if self.bar is not None and total != self.bar.total:
            self.bar.total = total
            self.bar.refresh()

    def step(self, ok: bool) -> None:
        if ok:
            self.done += 1
        else:
            self.failed += 1
        if self.bar is not None:
            self.bar.set_postfix_str(f"done {self.done}, failed {self.failed}", refresh=False)
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            # draw the final counts once: with fast runs mininterval may have kept every
            # update off the screen
            self.bar.refresh()
            self.bar.close()


#: Seconds between looks at runs another sweep on the same store is computing.
CLAIM_POLL_S = 0.2


def _software_version() -> str:
    return _atmsim.version()


def _fail_points() -> set[int]:
    raw = os.environ.get(FAIL_POINT_ENV, "")
    return {int(x) for x in raw.split(",") if x.strip().lstrip("-").isdigit()}


def plan_sweep(scenario_path: str, db: Optional[str] = None, *, quick: bool = False,
               overrides: Optional[dict[str, str]] = None) -> tuple[SweepSpec, pd.DataFrame]:
    """What :func:`run_sweep` would run, without running anything: the checked spec and
    one row per point that runs (``point``, the swept keys as written, ``seed``,
    ``replications`` — the fixed count, or the first round of a precision rule — and
    ``done``, how many of those are already done in ``db``; 0 without a store or when
    the file does not exist). The store is opened read-only."""
    spec, rows = plan_rows(scenario_path, db, quick=quick, overrides=overrides)
    return spec, _pandas().DataFrame(rows)


def plan_rows(scenario_path: str, db: Optional[str] = None, *, quick: bool = False,
              overrides: Optional[dict[str, str]] = None) -> tuple[SweepSpec, list[dict[str, Any]]]:
    """:func:`plan_sweep`'s rows as dicts, without pandas (``atmsim sweep --dry-run``)."""
    spec = _as_spec(scenario_path, overrides, "plan_sweep(scenario)")
    reps = spec.replications_for(quick)
    indices = spec.point_indices(quick)
    done: set[tuple[int, int]] = set()
    if db is not None:
        _check_db_path(db)
        if os.path.isfile(db):
            with Store(db, readonly=True) as st:
                done = _done_pairs(spec, st, spec.sweep_key(quick), {i: reps for i in indices})
    per_point: dict[int, int] = {}
    for i, _r in done:
        per_point[i] = per_point.get(i, 0) + 1
    cols = key_columns(spec)
    rows = [{"point": i, **{name: v[i] for name, v in cols}, "seed": spec.seed_of(i),
             "replications": reps, "done": per_point.get(i, 0)} for i in indices]
    return spec, rows


def _done_pairs(spec: SweepSpec, store: Store, sweep_key: str, planned: dict[int, int]) -> set[tuple[int, int]]:
    """The planned ``(point, replication)`` pairs already 'done' in ``store``, read from
    its rows (a run counts when its point is the spec's point of that index): the cost
    is that of the store's runs, not of every run the plan might make (a million
    replications planned in no time)."""
    canon: dict[int, str] = {}
    out: set[tuple[int, int]] = set()
    for i, point, r in store.done_replications(sweep_key):
        i, r = int(i), int(r)
        if i not in planned or r >= planned[i]:
            continue
        c = canon.get(i)
        if c is None:
            c = canon[i] = canonical_point(spec.points[i])
        if c == point:
            out.add((i, r))
    return out


def _check_db_path(db: str) -> None:
    """What a dry run can tell of ``db`` without writing: a directory, or a file in a
    directory that does not exist, can never be the store (the run would refuse it):
    :class:`atmsim.store.StorePathError`, one line, as the run gives it."""
    from atmsim.store import StorePathError, _explain_open_failure

    if os.path.isdir(db) or not os.path.isdir(os.path.dirname(os.path.abspath(db))):
        raise StorePathError(_explain_open_failure(db, OSError()))


def run_sweep(scenario_path: str, db: str, *, quick: bool = False, executor: str = "local",
              workers: Optional[int] = None, scheduler: Optional[str] = None, progress: bool = False,
              overrides: Optional[dict[str, str]] = None, allow_mixed: bool = False,
              precision: bool = True) -> SweepResult:
    """Run (or finish) a scenario's sweep into the store ``db``; see the module doc.
    Refuses (StoreMixError) to resume over runs of another atmsim version or of
    another text of the scenario file unless ``allow_mixed``. ``precision=False``
    runs the file's fixed ``replications`` and ignores its ``target``/``precision``
    stopping rule (a sensitivity variant of a file whose own point needs the rule)."""
    from atmsim.executors import check_executor_args, make_executor

    t_start = time.perf_counter()
    check_executor_args(executor, workers, scheduler)
    spec = _as_spec(scenario_path, overrides, "run_sweep(scenario)")
    reps = spec.replications_for(quick)
    fail_points = _fail_points()
    version = _software_version()
    run_overrides_base = {**(spec.quick_overrides if quick else {})}
    sweep_key = spec.sweep_key(quick)
    store = Store(db)
    ex = None
    bar = None
    executed = 0
    try:
        if not allow_mixed:
            store.check_mixing(sweep_key, path=os.path.abspath(spec.path), scenario_hash=spec.scenario_hash,
                               quick=quick, overrides=spec.overrides, software_version=version)
        store.ensure_sweep(sweep_key, name=spec.name, path=os.path.abspath(spec.path),
                           scenario_hash=spec.scenario_hash, quick=quick, overrides=spec.overrides,
                           software_version=version)
        planned = {i: reps for i in spec.point_indices(quick)}
        keys: dict[tuple[int, int], str] = {}

        def key_of(i: int, r: int) -> str:
            k = keys.get((i, r))
            if k is None:
                k = keys[(i, r)] = run_key(spec.scenario_hash, spec.points[i], r, quick, spec.overrides)
            return k

        # The plan is drawn lazily: the runs already done are read from the store's rows,
        # and a run's key is computed when it is handed to a worker.
        done_pairs = _done_pairs(spec, store, sweep_key, planned)
        skipped = len(done_pairs)
        total = sum(planned.values())
        bar = _Bar(progress, total, spec.name)
        bar.done = skipped
        if bar.bar is not None:
            bar.bar.update(skipped)
        todo: Iterable[tuple[int, int]] = (
            ((i, r) for i in planned for r in range(planned[i]) if (i, r) not in done_pairs)
            if skipped < total else [])
        while True:
            while todo:  # a generator (always true) only while there is work
                if ex is None:
                    ex = make_executor(executor, workers, scheduler)
                n_run, n_other, deferred = _execute(spec, store, ex, todo, key_of, sweep_key, quick,
                                                    run_overrides_base, fail_points, version, bar)
                executed += n_run
                skipped += n_other
                # runs another live sweep on this store holds: wait for them, or take them
                # over if their process dies
                todo = deferred
                if todo:
                    time.sleep(CLAIM_POLL_S)
            if not spec.targets or quick or not precision:
                break
            more = _more_replications(spec, store, planned, key_of)
            if not more:
                break
            todo = []
            done = store.done_keys(sweep_key)
            for i, new_total in more.items():
                for r in range(planned[i], new_total):
                    if key_of(i, r) in done:
                        skipped += 1
                        bar.step(True)
                    else:
                        todo.append((i, r))
                planned[i] = new_total
            bar.grow(sum(planned.values()))
        all_keys = [key_of(i, r) for i in planned for r in range(planned[i])]
        runs_db = store.runs(all_keys)
        values = store.values(all_keys)
        series_db = store.series(all_keys)
    finally:
        if bar is not None:
            bar.close()
        if ex is not None:
            ex.close(kill=sys.exc_info()[0] is not None)
        try:
            store.release_claims()
        except AtmsimError:
            pass  # an unwritable store: the claims die with this process anyway
        store.close()
    runs, stats, failures = _frames(spec, runs_db, values)
    series = _insert_keys(spec, series_db.drop(columns=["run_key"]).rename(columns={"point_index": "point"}), at=2)
    per_run = _insert_keys(spec, values.drop(columns=["point"]).rename(columns={"point_index": "point"})[
        ["point", "replication", "component", "probe", "statistic", "value", "unit"]].reset_index(drop=True), at=2)
    return SweepResult(spec=spec, runs=runs, stats=stats, failures=failures, db=db, quick=quick, series=series,
                       values=per_run,
                       executed=executed, skipped=skipped, wall_s=time.perf_counter() - t_start,
                       executor=ex.describe() if ex is not None else executor,
                       restarts=getattr(ex, "restarts", 0))


def _execute(spec: SweepSpec, store: Store, ex: Any, todo: Iterable[tuple[int, int]], key_of: Callable,
             sweep_key: str, quick: bool, base_overrides: dict[str, str], fail_points: set[int],
             version: str, bar: _Bar) -> tuple[int, int, list[tuple[int, int]]]:
    """Run ``todo``, claiming each run in the store as it is handed to a worker:
    (runs made here, runs another sweep finished meanwhile, runs another live sweep
    holds)."""
    others = 0
    busy: list[tuple[int, int]] = []

    def tasks():
        nonlocal others
        for i, r in todo:
            state = store.claim(key_of(i, r))
            if state == "done":
                others += 1
                bar.step(True)
                continue
            if state == "busy":
                busy.append((i, r))
                continue
            yield (i, r), {"text": spec.text, "path": spec.path,
                           "overrides": {**spec.overrides, **base_overrides, **spec.points[i]},
                           "seed": spec.seed_of(i), "run": r, "fail": i in fail_points}

    count = 0
    for (i, r), res in ex.run(tasks()):
        ok = res.get("status") == "done"
        row = {
            "run_key": key_of(i, r), "sweep_key": sweep_key, "scenario_hash": spec.scenario_hash,
            "point_index": i, "point": canonical_point(spec.points[i]),
            "point_values": json.dumps(spec.written[i], sort_keys=True, separators=(",", ":"), ensure_ascii=False),
            "replication": r, "seed": spec.seed_of(i), "quick": int(quick),
            "status": "done" if ok else "failed", "wall_s": res.get("wall_s"),
            "events": res.get("events"), "fingerprint": res.get("fingerprint"),
            "software_version": version, "error": None if ok else res.get("error", "unknown error"),
            "finished": now_iso(),
        }
        store.write_run(row, res.get("probes", ()) if ok else (), res.get("series", ()) if ok else ())
        bar.step(ok)
        count += 1
    return count, others, busy


def _more_replications(spec: SweepSpec, store: Store, planned: dict[int, int], key_of: Callable) -> dict[int, int]:
    """Relative-precision stopping: {point: new planned replications} for the points
    where some target statistic's CI is still too wide and that are below the cap."""
    all_keys = [key_of(i, r) for i in planned for r in range(planned[i])]
    unmet = _unmet_targets(spec, store.values(all_keys))
    more: dict[int, int] = {}
    for i, n_planned in planned.items():
        caps = [t for t in unmet.get(i, ())]
        if not caps:
            continue
        cap = min(t.max_replications for t in caps)
        if n_planned >= cap:
            continue
        more[i] = min(cap, n_planned + max(t.batch for t in caps))
    return more


def _unmet_targets(spec: SweepSpec, vals: pd.DataFrame) -> dict[int, list[Target]]:
    """{point: the targets of :attr:`SweepSpec.targets` its replications do not meet yet}
    (every point of ``vals``' runs; a point with no value of a target does not meet it)."""
    from atmsim.stats import Interval, summarize, target_satisfied

    points = sorted({int(p) for p in vals["point_index"]}) if not vals.empty else []
    unmet: dict[int, list[Target]] = {i: [] for i in points}
    for t in spec.targets:
        sel = vals[(vals["component"] == t.component) & (vals["probe"] == t.probe)]
        have = sel[sel["statistic"] == t.statistic]
        if have.empty and not vals.empty:
            stats = sorted(set(sel["statistic"]))
            where = spec.path if t.line is None else f"{spec.path}:{t.line}"
            key = "sweep.target" if spec.target is not None else "sweep.statistics"
            raise ScenarioError(
                f"{where}: {key}: probe {t.component}.{t.probe} has no statistic "
                f"'{t.statistic}'{_atmsim.did_you_mean(t.statistic, stats)}; it has: {', '.join(stats) or 'none'}")
        st = summarize(have.drop(columns=["point"]).rename(columns={"point_index": "point"}), by=["point"]) \
            if not have.empty else None
        by_point = {} if st is None else {int(r.point): r for r in st.itertuples(index=False)}
        for i in points:
            r = by_point.get(i)
            if r is None or not target_satisfied(
                    Interval(int(r.n), float(r.mean), float(r.std), float(r.ci_low), float(r.ci_high),
                             str(r.interval), str(r.ci_note)), t.rel_half_width):
                unmet[i].append(t)
    return unmet


def precision_report(spec: SweepSpec, runs: pd.DataFrame, stats: pd.DataFrame) -> pd.DataFrame:
    """One row per point of a sweep with targets: ``point``, the swept keys,
    ``replications`` (done), ``met`` (every target statistic within its relative
    half-width), ``hit_cap`` (not met and at the cap: more replications were not run),
    ``unmet`` (the statistics not met, ``COMPONENT.PROBE.STATISTIC (relative half-width
    or why none)``, ``; ``-separated)."""
    import pandas as pd

    from atmsim.stats import Interval, relative_half_width, target_satisfied

    rows = []
    done = runs[runs["status"] == "done"].groupby("point").size().to_dict() if len(runs) else {}
    for i in range(len(spec.points)):
        unmet = []
        for t in spec.targets:
            sel = stats[(stats["point"] == i) & (stats["component"] == t.component) & (stats["probe"] == t.probe)
                        & (stats["statistic"] == t.statistic)]
            name = f"{t.component}.{t.probe}.{t.statistic}"
            if sel.empty:
                unmet.append(f"{name} (no value)")
                continue
            r = sel.iloc[0]
            iv = Interval(int(r["n"]), float(r["mean"]), float(r["std"]), float(r["ci_low"]), float(r["ci_high"]),
                          str(r["interval"]), str(r["ci_note"]))
            if not target_satisfied(iv, t.rel_half_width):
                rel = relative_half_width(iv)
                unmet.append(f"{name} ({r['ci_note'] or 'no interval'})" if math.isnan(rel) else f"{name} (±{rel:.3g})")
        n = int(done.get(i, 0))
        cap = min((t.max_replications for t in spec.targets), default=n)
        rows.append({"point": i, **{name: v[i] for name, v in key_columns(spec)}, "replications": n,
                     "met": not unmet, "hit_cap": bool(unmet) and n >= cap, "unmet": "; ".join(unmet)})
    return pd.DataFrame(rows, columns=["point", *(name for name, _ in key_columns(spec)), "replications", "met",
                                       "hit_cap", "unmet"])


def _number_and_unit(v: Any) -> Optional[tuple[float, str]]:
    """``"100 Mb/s"`` → ``(100.0, "Mb/s")``; None for anything else."""
    if not isinstance(v, str):
        return None
    num, _, unit = v.strip().partition(" ")
    unit = unit.strip()
    try:
        x = float(num)
    except ValueError:
        return None
    return (x, unit) if unit and math.isfinite(x) else None


def numeric_columns(spec: SweepSpec) -> dict[str, tuple[str, list[Optional[float]]]]:
    """{swept key: (column name, value per point)} for the keys whose values are all
    numbers with units of one quantity: ``"mux.capacity [cells]"`` and the numbers, in
    the unit of the first value (``"1 Mb/s"``, ``"500 kb/s"`` → ``src.rate [Mb/s]``: 1.0,
    0.5). Keys swept as plain numbers are numbers already; keys with words
    (``"unlimited"``) or units of different quantities have no such column."""
    from atmsim.units import convert

    out: dict[str, tuple[str, list[Optional[float]]]] = {}
    for k in spec.keys:
        parsed = [_number_and_unit(w.get(k)) for w in spec.written]
        if not parsed or any(p is None for p in parsed):
            continue
        unit = parsed[0][1]  # type: ignore[index]
        values = [convert(x, u, unit) for x, u in parsed]  # type: ignore[misc]
        if any(v is None for v in values):
            continue
        out[k] = (f"{k} [{unit}]", values)
    return out


def key_columns(spec: SweepSpec) -> list[tuple[str, list[Any]]]:
    """The columns of the swept keys in result frames, in order, each with its value per
    point: per key its value as written, then (see :func:`numeric_columns`) its number
    in the column ``"KEY [UNIT]"``."""
    numeric = numeric_columns(spec)
    cols: list[tuple[str, list[Any]]] = []
    for k in spec.keys:
        cols.append((k, [w.get(k) for w in spec.written]))
        if k in numeric:
            cols.append(numeric[k])
    return cols


def _insert_keys(spec: SweepSpec, df: pd.DataFrame, at: int) -> pd.DataFrame:
    """``df`` with the swept keys' columns (:func:`key_columns`), from column ``at``
    on, looked up by its ``point`` column."""
    import pandas as pd

    points = [int(i) for i in df["point"]]
    for pos, (name, values) in enumerate(key_columns(spec)):
        col = [values[i] for i in points]
        df.insert(at + pos, name, col if name in spec.keys else pd.Series(col, dtype="float64", index=df.index))
    return df


def _frames(spec: SweepSpec, runs_db: pd.DataFrame, values: pd.DataFrame):
    import pandas as pd

    from atmsim.stats import STAT_COLUMNS, summarize

    runs = pd.DataFrame({
        "point": runs_db["point_index"].astype("int64"),
        "replication": runs_db["replication"].astype("int64"),
        "seed": runs_db["seed"].astype("int64"),
        "status": runs_db["status"].astype(str),
        "wall_s": runs_db["wall_s"].astype("float64"),
        "events": runs_db["events"].astype("Int64"),
        "fingerprint": runs_db["fingerprint"],
        "error": runs_db["error"],
    }, columns=RUN_FRAME_COLUMNS)
    for name, per_point in key_columns(spec):
        runs[name] = [per_point[i] for i in runs["point"]]
    vals = values.drop(columns=["point"]).rename(columns={"point_index": "point"})
    stats = summarize(vals[["point", "replication", "component", "probe", "statistic", "value", "unit"]],
                      by=["point"])
    stats = _insert_keys(spec, stats, at=1)
    stats = stats[["point", *(name for name, _ in key_columns(spec)), *STAT_COLUMNS]]
    failures = []
    for row in runs.itertuples(index=False):
        if row.status != "done":
            failures.append({"point": int(row.point), "replication": int(row.replication), "seed": int(row.seed),
                             "error": row.error, "values": spec.written[int(row.point)]})
    return runs, stats, failures


__all__ = ["run_sweep", "load_sweep", "plan_sweep", "Sweep", "SweepSpec", "SweepResult", "Target", "point_seed", "canonical_point",
           "run_key", "fnv1a64", "AtmsimError"]
