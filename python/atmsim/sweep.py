"""Parameter sweeps with replications, a resumable result store and statistics.

A scenario file may carry a ``[sweep]`` table (the native loader accepts it and
ignores it for single runs; this module reads it with :mod:`tomllib`)::

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

    [sweep.quick]               # overrides applied only with --quick
    "scenario.duration" = "0.1 s"

See docs/experiments.md for the full description (seeds, store, executors,
statistics, resume).

Python API (also used by ``atmsim reproduce``)::

    from atmsim.sweep import run_sweep, load_sweep
    spec = load_sweep("scenarios/x.toml")     # SweepSpec: .points, .replications, ...
    res = run_sweep(scenario_path: str, db: str, *, quick: bool = False,
                    executor: str = "local", workers: int | None = None,
                    scheduler: str | None = None, progress: bool = False,
                    overrides: dict[str, str] | None = None) -> SweepResult

``SweepResult.runs`` is a DataFrame, one row per run: ``point, replication, seed,
status, wall_s, events, fingerprint, error`` and one column per swept key (the
value as written in the file).  ``SweepResult.stats`` has the columns ``point,
<one per swept key>, component, probe, statistic, unit, n, mean, std, ci_low,
ci_high`` (Student-t 95%, over the 'done' replications of each point).
``SweepResult.series`` holds the runs' time series when the scenario asks for some
(``[probes] series``): columns ``point, replication, <one per swept key>, component,
probe, time, value, unit, kind``, stored with each run (table ``series_values``) and
read back on resume.  ``SweepResult.failures`` lists the failed runs (dicts with
point, replication, seed, error and the point's values).  Bad specs raise ``ScenarioError`` (one line
``FILE:LINE: sweep...: what is wrong; what would be valid``); an unusable ``--db``
raises :class:`atmsim.store.StorePathError`; a failed store write raises
:class:`atmsim.store.StoreError`.

**Seeds** (stable across versions): the canonical form of a point is the JSON of its
overrides (values as the strings handed to ``with_overrides``), keys sorted, no
spaces, UTF-8; ``seed = FNV-1a-64("atmsim-sweep-v1|<scenario seed>|<canonical
point>") & 0x7FFF_FFFF_FFFF_FFFF``; replication r is the native run number.
"""
from __future__ import annotations

import dataclasses
import difflib
import hashlib
import itertools
import json
import math
import os
import re
import sys
import time
from decimal import Decimal, InvalidOperation
from typing import Any, Callable, Optional

import pandas as pd

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from atmsim import _atmsim
from atmsim.exceptions import AtmsimError, ScenarioError
from atmsim.stats import STAT_COLUMNS, summarize, target_satisfied
from atmsim.store import Store, now_iso

SEED_DOMAIN = "atmsim-sweep-v1"
SEED_MASK = 0x7FFF_FFFF_FFFF_FFFF
FNV64_OFFSET = 0xCBF29CE484222325
FNV64_PRIME = 0x100000001B3
DEFAULT_QUICK_REPLICATIONS = 2
MAX_RANGE_POINTS = 10_000
#: Testing only: comma-separated point indices whose runs raise in the worker.
FAIL_POINT_ENV = "ATMSIM_SWEEP_FAIL_POINT"

SWEEP_KEYS = ("replications", "quick_replications", "target", "grid", "zip", "quick")
TARGET_KEYS = ("component", "probe", "statistic", "rel_half_width", "max_replications", "batch")
RANGE_KEYS = ("from", "to", "step", "unit")
RUN_FRAME_COLUMNS = ["point", "replication", "seed", "status", "wall_s", "events", "fingerprint", "error"]


# --------------------------------------------------------------------------- seeds
def fnv1a64(data: bytes) -> int:
    h = FNV64_OFFSET
    for b in data:
        h ^= b
        h = (h * FNV64_PRIME) & 0xFFFF_FFFF_FFFF_FFFF
    return h


def canonical_point(point: dict[str, str]) -> str:
    """JSON of the point's overrides: sorted keys, no spaces, non-ASCII kept (UTF-8)."""
    return json.dumps(point, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def point_seed(scenario_seed: int, point: dict[str, str]) -> int:
    """The master seed of every replication of ``point`` (documented, stable)."""
    data = f"{SEED_DOMAIN}|{scenario_seed}|{canonical_point(point)}".encode("utf-8")
    return fnv1a64(data) & SEED_MASK


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

    def replications_for(self, quick: bool) -> int:
        return self.quick_replications if quick else self.replications

    def seed_of(self, index: int) -> int:
        return point_seed(self.seed, self.points[index])


def _norm_header(h: str) -> str:
    return re.sub(r"\s+", "", h).replace('"', "").replace("'", "")


def _line_of(text: str, table: str, key: Optional[str] = None) -> int:
    """Line of ``key`` inside ``[table]`` (or of the table header, or of any
    occurrence of the key, or 1): good enough to point a user at the mistake."""
    lines = text.splitlines()
    header_line = None
    current = None
    key_re = None
    if key is not None:
        k = re.escape(key)
        key_re = re.compile(rf'^\s*(?:"{k}"|\'{k}\'|{k})\s*=')
    for i, line in enumerate(lines, start=1):
        m = re.match(r"^\s*\[\s*([^\[\]]+?)\s*\]\s*(#.*)?$", line)
        if m:
            current = _norm_header(m.group(1))
            if current == table and header_line is None:
                header_line = i
            continue
        if key_re is not None and current == table and key_re.match(line):
            return i
    if key is not None:
        # dotted keys (grid."src.rate" = ...) or inline tables: any line naming the key
        for i, line in enumerate(lines, start=1):
            if re.search(rf'(^|[\s."\'{{,]){re.escape(key)}(["\'\s=]|$)', line) and not line.lstrip().startswith("#"):
                return i
    if header_line is not None:
        return header_line
    for i, line in enumerate(lines, start=1):
        if re.match(r"^\s*\[\s*sweep", line):
            return i
    return 1


class _Err:
    def __init__(self, path: str, text: str) -> None:
        self.path, self.text = path, text

    def __call__(self, table: str, key: Optional[str], msg: str) -> ScenarioError:
        line = _line_of(self.text, table, key)
        where = table if key is None else f"{table}.{_q(key)}"
        return ScenarioError(f"{self.path}:{line}: {where}: {msg}")


def _q(key: str) -> str:
    return f'"{key}"' if "." in key or " " in key else key


def _suggest(word: str, valid: Any) -> str:
    m = difflib.get_close_matches(word, list(valid), n=1, cutoff=0.6)
    return f" (did you mean '{m[0]}'?)" if m else ""


def _value_text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float, str)):
        return str(v)
    raise TypeError(type(v).__name__)


def _dec_text(d: Decimal) -> str:
    t = format(d.normalize(), "f")
    return "0" if t in ("-0", "") else t


def _range_values(err: _Err, table: str, key: str, spec: dict[str, Any]) -> tuple[list[str], list[Any]]:
    unknown = [k for k in spec if k not in RANGE_KEYS]
    if unknown:
        raise err(table, key, f"unknown range key '{unknown[0]}'{_suggest(unknown[0], RANGE_KEYS)}; "
                              f"a range is {{ from = 8, to = 64, step = 8, unit = \"cells\" }}")
    missing = [k for k in ("from", "to", "step") if k not in spec]
    if missing:
        raise err(table, key, f"range lacks '{missing[0]}'; a range is {{ from = 8, to = 64, step = 8, unit = \"cells\" }}")
    nums = {}
    for k in ("from", "to", "step"):
        v = spec[k]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and not math.isfinite(v)):
            raise err(table, key, f"range '{k}' = {v!r} must be a finite number; put the unit in unit = \"...\"")
        try:
            nums[k] = Decimal(str(v))
        except InvalidOperation:  # pragma: no cover - str of a finite number always parses
            raise err(table, key, f"range '{k}' = {v!r} is not a number") from None
    unit = spec.get("unit", "")
    if not isinstance(unit, str):
        raise err(table, key, f"range unit = {unit!r} must be a string such as \"cells\" or \"Mb/s\"")
    lo, hi, step = nums["from"], nums["to"], nums["step"]
    if step <= 0:
        raise err(table, key, f"range step = {spec['step']} must be > 0")
    if lo > hi:
        raise err(table, key, f"range from = {spec['from']} is greater than to = {spec['to']}; "
                              f"a range runs upwards from 'from' to 'to' (inclusive)")
    count = int((hi - lo) / step) + 1
    if count > MAX_RANGE_POINTS:
        raise err(table, key, f"range has {count} values (more than {MAX_RANGE_POINTS}); use a larger step")
    texts, written = [], []
    for i in range(count):
        v = _dec_text(lo + i * step)
        t = f"{v} {unit}".strip() if unit else v
        texts.append(t)
        written.append(t if unit else (int(v) if re.fullmatch(r"-?\d+", v) else float(v)))
    return texts, written


def _list_values(err: _Err, table: str, key: str, values: Any) -> tuple[list[str], list[Any]]:
    if not isinstance(values, list):
        raise err(table, key, f"expected a list of values (e.g. [\"8 cells\", \"16 cells\"]) or a range "
                              f"{{ from = 8, to = 64, step = 8, unit = \"cells\" }}, got {type(values).__name__}")
    if not values:
        raise err(table, key, "empty list: a sweep axis needs at least one value")
    texts = []
    for v in values:
        try:
            texts.append(_value_text(v))
        except TypeError:
            raise err(table, key, f"value {v!r} is a {type(v).__name__}; values are strings with units "
                                  f"(\"20 Mb/s\") or numbers") from None
    dup = [t for t in texts if texts.count(t) > 1]
    if dup:
        raise err(table, key, f"value {dup[0]!r} appears twice; each value of an axis must be distinct")
    return texts, list(values)


def _strip_native(msg: str) -> str:
    msg = " ".join(msg.split())
    return re.sub(r"^(?:--set|.*?\(with --set\):\d+):\s*", "", msg)


def _check_override(err: _Err, base: Any, table: str, key: str, text: str) -> None:
    if "." not in key:
        raise err(table, key, "a sweep key is COMPONENT.PARAM or scenario.KEY, as taken by --set "
                              "(e.g. \"mux.capacity\" or \"scenario.duration\")")
    try:
        base.with_overrides({key: text})
    except ScenarioError as exc:  # includes ParamError
        raise err(table, key, f"value {text!r}: {_strip_native(str(exc))}") from None


def load_sweep(path: str, overrides: Optional[dict[str, str]] = None) -> SweepSpec:
    """Read and validate the sweep spec of a scenario file (every point is checked with
    the native ``Scenario.with_overrides``).  Raises ScenarioError with one line
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
    base = _atmsim.loads(text, path)  # the native loader's own one-line errors
    overrides = {str(k): str(v) for k, v in (overrides or {}).items()}
    if overrides:
        base = base.with_overrides(overrides)
    err = _Err(path, text)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:  # pragma: no cover - the native loader rejects these first
        raise ScenarioError(f"{path}: {exc}") from None
    sweep = doc.get("sweep", {})
    has_table = "sweep" in doc
    if not isinstance(sweep, dict):
        raise err("sweep", None, "must be a table ([sweep])")
    for k in sweep:
        if k not in SWEEP_KEYS:
            raise err("sweep", k, f"unknown key{_suggest(k, SWEEP_KEYS)}; valid: {', '.join(SWEEP_KEYS)}")

    def _count(key: str, default: int) -> int:
        v = sweep.get(key, default)
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise err("sweep", key, f"{v!r}: must be a whole number >= 1")
        return v

    replications = _count("replications", base.replications)
    quick_replications = _count("quick_replications", DEFAULT_QUICK_REPLICATIONS)

    grid = sweep.get("grid", {})
    zipped = sweep.get("zip", {})
    quick = sweep.get("quick", {})
    for name, tbl in (("grid", grid), ("zip", zipped), ("quick", quick)):
        if not isinstance(tbl, dict):
            raise err("sweep", name, f"must be a table ([sweep.{name}]) of \"KEY\" = values")
    if "grid" in sweep and not grid:
        raise err("sweep.grid", None, "empty grid: give at least one axis, e.g. \"mux.capacity\" = [\"8 cells\", \"16 cells\"]")
    if "zip" in sweep and not zipped:
        raise err("sweep.zip", None, "empty zip table: give at least one key with a list of values")
    both = [k for k in grid if k in zipped]
    if both:
        raise err("sweep.zip", both[0], "is in both [sweep.grid] and [sweep.zip]; vary a key in one of them")

    # axes: list of (keys, [ (texts...) per position ], [ (written...) per position ])
    axes: list[tuple[list[str], list[tuple[str, ...]], list[tuple[Any, ...]]]] = []
    for key, vals in grid.items():
        if isinstance(vals, dict):
            texts, written = _range_values(err, "sweep.grid", key, vals)
        else:
            texts, written = _list_values(err, "sweep.grid", key, vals)
        for t in texts:
            _check_override(err, base, "sweep.grid", key, t)
        axes.append(([key], [(t,) for t in texts], [(w,) for w in written]))
    if zipped:
        zkeys, zcols, zwritten = [], [], []
        for key, vals in zipped.items():
            if isinstance(vals, dict):
                texts, written = _range_values(err, "sweep.zip", key, vals)
            else:
                texts, written = _list_values(err, "sweep.zip", key, vals)
            if "." not in key:
                raise err("sweep.zip", key, "a sweep key is COMPONENT.PARAM or scenario.KEY, as taken by --set "
                                            "(e.g. \"mux.capacity\" or \"scenario.duration\")")
            zkeys.append(key)
            zcols.append(texts)
            zwritten.append(written)
        lengths = {k: len(c) for k, c in zip(zkeys, zcols)}
        if len(set(lengths.values())) > 1:
            desc = ", ".join(f"{_q(k)}: {n}" for k, n in lengths.items())
            first_bad = next(k for k in zkeys if lengths[k] != lengths[zkeys[0]])
            raise err("sweep.zip", first_bad, f"zipped lists must have equal lengths ({desc})")
        # Zipped keys vary together, so each row is checked as a whole (a peak and a
        # mean that are valid only together must not be rejected one by one).
        for i, row in enumerate(zip(*zcols)):
            try:
                base.with_overrides(dict(zip(zkeys, row)))
            except ScenarioError as exc:
                raise err("sweep.zip", zkeys[0], f"row {i + 1} {dict(zip(zkeys, row))}: "
                                                 f"{_strip_native(str(exc))}") from None
        axes.append((zkeys, list(zip(*zcols)), list(zip(*zwritten))))

    quick_overrides = {}
    for key, v in quick.items():
        try:
            t = _value_text(v)
        except TypeError:
            raise err("sweep.quick", key, f"value {v!r} must be a string with a unit or a number") from None
        _check_override(err, base, "sweep.quick", key, t)
        quick_overrides[key] = t

    keys = [k for ks, _, _ in axes for k in ks]
    points: list[dict[str, str]] = []
    written: list[dict[str, Any]] = []
    for combo in itertools.product(*[range(len(a[1])) for a in axes]):
        p: dict[str, str] = {}
        w: dict[str, Any] = {}
        for (ks, texts, wr), i in zip(axes, combo):
            p.update(zip(ks, texts[i]))
            w.update(zip(ks, wr[i]))
        points.append(p)
        written.append(w)
    # Combinations can be invalid even when every value is (e.g. warmup >= duration).
    for p in points:
        for extra in ({}, quick_overrides) if quick_overrides else ({},):
            try:
                base.with_overrides({**p, **extra})
            except ScenarioError as exc:
                raise err("sweep", None, f"point {canonical_point(p)}"
                                         f"{' with [sweep.quick]' if extra else ''}: {_strip_native(str(exc))}") from None

    target = None
    if "target" in sweep:
        target = _parse_target(err, base, sweep["target"], replications)

    return SweepSpec(path=path, text=text, scenario_hash=hashlib.sha256(raw_bytes).hexdigest(),
                     name=base.name, seed=int(base.seed), keys=keys, points=points, written=written,
                     replications=replications, quick_replications=quick_replications,
                     quick_overrides=quick_overrides, target=target, overrides=overrides,
                     has_sweep_table=has_table)


def _parse_target(err: _Err, base: Any, t: Any, replications: int) -> Target:
    if not isinstance(t, dict):
        raise err("sweep", "target", "must be a table { component = ..., probe = ..., statistic = ..., "
                                     "rel_half_width = 0.1, max_replications = 50 }")
    for k in t:
        if k not in TARGET_KEYS:
            raise err("sweep", "target", f"unknown key '{k}'{_suggest(k, TARGET_KEYS)}; valid: {', '.join(TARGET_KEYS)}")
    for k in ("component", "probe", "statistic", "rel_half_width", "max_replications"):
        if k not in t:
            raise err("sweep", "target", f"lacks '{k}'; valid keys: {', '.join(TARGET_KEYS)}")
    for k in ("component", "probe", "statistic"):
        if not isinstance(t[k], str):
            raise err("sweep", "target", f"{k} = {t[k]!r} must be a string")
    comps = {c["name"]: c["kind"] for c in base.components()}
    if t["component"] not in comps:
        raise err("sweep", "target", f"no component '{t['component']}'{_suggest(t['component'], comps)}; "
                                     f"components: {', '.join(sorted(comps))}")
    probes = [p["name"] for p in _atmsim.describe_kind(comps[t["component"]])["probes"]]
    if t["probe"] not in probes:
        raise err("sweep", "target", f"component '{t['component']}' ({comps[t['component']]}) has no probe "
                                     f"'{t['probe']}'{_suggest(t['probe'], probes)}; probes: {', '.join(probes)}")
    rhw = t["rel_half_width"]
    if isinstance(rhw, bool) or not isinstance(rhw, (int, float)) or not (rhw > 0 and math.isfinite(rhw)):
        raise err("sweep", "target", f"rel_half_width = {rhw!r} must be a number > 0 (e.g. 0.1 for ±10%)")
    mx = t["max_replications"]
    if isinstance(mx, bool) or not isinstance(mx, int) or mx < max(2, replications):
        raise err("sweep", "target", f"max_replications = {mx!r} must be a whole number >= replications "
                                     f"({replications}) and >= 2")
    batch = t.get("batch", replications)
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise err("sweep", "target", f"batch = {batch!r} must be a whole number >= 1")
    return Target(t["component"], t["probe"], t["statistic"], float(rhw), mx, batch)


# --------------------------------------------------------------------------- running
@dataclasses.dataclass
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
    series: pd.DataFrame = dataclasses.field(default_factory=pd.DataFrame)

    @property
    def ok(self) -> bool:
        return not self.failures

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
            self.bar.close()


def _software_version() -> str:
    return _atmsim.version()


def _fail_points() -> set[int]:
    raw = os.environ.get(FAIL_POINT_ENV, "")
    return {int(x) for x in raw.split(",") if x.strip().lstrip("-").isdigit()}


def run_sweep(scenario_path: str, db: str, *, quick: bool = False, executor: str = "local",
              workers: Optional[int] = None, scheduler: Optional[str] = None, progress: bool = False,
              overrides: Optional[dict[str, str]] = None) -> SweepResult:
    """Run (or finish) a scenario's sweep into the store ``db``; see the module doc."""
    from atmsim.executors import check_executor_args, make_executor

    t_start = time.perf_counter()
    check_executor_args(executor, workers, scheduler)
    spec = load_sweep(scenario_path, overrides)
    reps = spec.replications_for(quick)
    fail_points = _fail_points()
    version = _software_version()
    run_overrides_base = {**(spec.quick_overrides if quick else {})}
    sweep_key = hashlib.sha256(
        f"{spec.scenario_hash}|{int(quick)}|{canonical_point(spec.overrides)}".encode("utf-8")).hexdigest()
    store = Store(db)
    ex = None
    bar = None
    executed = 0
    try:
        store.ensure_sweep(sweep_key, name=spec.name, path=os.path.abspath(spec.path),
                           scenario_hash=spec.scenario_hash, quick=quick, overrides=spec.overrides,
                           software_version=version)
        planned = {i: reps for i in range(len(spec.points))}
        keys: dict[tuple[int, int], str] = {}

        def key_of(i: int, r: int) -> str:
            k = keys.get((i, r))
            if k is None:
                k = keys[(i, r)] = run_key(spec.scenario_hash, spec.points[i], r, quick, spec.overrides)
            return k

        done = store.done_keys(sweep_key)
        all_planned = [(i, r) for i in planned for r in range(planned[i])]
        skipped = sum(1 for i, r in all_planned if key_of(i, r) in done)
        bar = _Bar(progress, len(all_planned), spec.name)
        bar.done = skipped
        if bar.bar is not None:
            bar.bar.update(skipped)
        todo = [(i, r) for i, r in all_planned if key_of(i, r) not in done]
        while True:
            if todo:
                if ex is None:
                    ex = make_executor(executor, workers, scheduler)
                executed += _execute(spec, store, ex, todo, key_of, sweep_key, quick, run_overrides_base,
                                     fail_points, version, bar)
            if spec.target is None or quick:
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
        store.close()
    runs, stats, failures = _frames(spec, runs_db, values)
    series = _insert_keys(spec, series_db.drop(columns=["run_key"]).rename(columns={"point_index": "point"}), at=2)
    return SweepResult(spec=spec, runs=runs, stats=stats, failures=failures, db=db, quick=quick, series=series,
                       executed=executed, skipped=skipped, wall_s=time.perf_counter() - t_start,
                       executor=ex.describe() if ex is not None else executor,
                       restarts=getattr(ex, "restarts", 0))


def _execute(spec: SweepSpec, store: Store, ex: Any, todo: list[tuple[int, int]], key_of: Callable,
             sweep_key: str, quick: bool, base_overrides: dict[str, str], fail_points: set[int],
             version: str, bar: _Bar) -> int:
    def tasks():
        for i, r in todo:
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
    return count


def _more_replications(spec: SweepSpec, store: Store, planned: dict[int, int], key_of: Callable) -> dict[int, int]:
    """Relative-precision stopping: {point: new planned replications} for the points
    whose target CI is still too wide and that are below the cap."""
    t = spec.target
    assert t is not None
    all_keys = [key_of(i, r) for i in planned for r in range(planned[i])]
    vals = store.values(all_keys)
    sel = vals[(vals["component"] == t.component) & (vals["probe"] == t.probe)]
    have = sel[sel["statistic"] == t.statistic]
    if have.empty and not vals.empty:
        stats = sorted(set(sel["statistic"]))
        raise ScenarioError(
            f"{spec.path}:{_line_of(spec.text, 'sweep', 'target')}: sweep.target: probe {t.component}.{t.probe} "
            f"has no statistic '{t.statistic}'{_suggest(t.statistic, stats)}; it has: {', '.join(stats) or 'none'}")
    more: dict[int, int] = {}
    st = summarize(have.drop(columns=["point"]).rename(columns={"point_index": "point"}), by=["point"]) if not have.empty else None
    by_point = {} if st is None else {int(r.point): r for r in st.itertuples(index=False)}
    for i, n_planned in planned.items():
        if n_planned >= t.max_replications:
            continue
        r = by_point.get(i)
        if r is not None and target_satisfied(int(r.n), float(r.mean), float(r.std), t.rel_half_width):
            continue
        more[i] = min(t.max_replications, n_planned + t.batch)
    return more


def _insert_keys(spec: SweepSpec, df: pd.DataFrame, at: int) -> pd.DataFrame:
    """``df`` with one column per swept key (the point's value as written), from
    column ``at`` on, looked up by its ``point`` column."""
    for pos, k in enumerate(spec.keys):
        df.insert(at + pos, k, [spec.written[int(i)].get(k) for i in df["point"]])
    return df


def _frames(spec: SweepSpec, runs_db: pd.DataFrame, values: pd.DataFrame):
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
    for k in spec.keys:
        runs[k] = [spec.written[i].get(k) for i in runs["point"]]
    vals = values.drop(columns=["point"]).rename(columns={"point_index": "point"})
    stats = summarize(vals[["point", "replication", "component", "probe", "statistic", "value", "unit"]],
                      by=["point"])
    stats = _insert_keys(spec, stats, at=1)
    stats = stats[["point", *spec.keys, *STAT_COLUMNS]]
    failures = []
    for row in runs.itertuples(index=False):
        if row.status != "done":
            failures.append({"point": int(row.point), "replication": int(row.replication), "seed": int(row.seed),
                             "error": row.error, "values": spec.written[int(row.point)]})
    return runs, stats, failures


__all__ = ["run_sweep", "load_sweep", "SweepSpec", "SweepResult", "Target", "point_seed", "canonical_point",
           "run_key", "fnv1a64", "AtmsimError"]
