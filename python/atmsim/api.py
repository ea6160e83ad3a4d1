"""Python API: scenarios as objects, results as pandas DataFrames.

``Scenario`` wraps the native, immutable ``atmsim._atmsim.Scenario`` handle;
``Result`` wraps the dict returned by one native run.  Nothing here simulates:
all numbers come from the Rust core.
"""
from __future__ import annotations

import math
import os
import warnings
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Sequence, Union

from atmsim import _atmsim
from atmsim.exceptions import ArgumentError, AtmsimWarning, ParamError, ScenarioError
from atmsim.progress import RunProgress

if TYPE_CHECKING:  # pandas is imported when a DataFrame is first asked for (start-up time)
    import pandas as pd

PROBE_COLUMNS = ["component", "probe", "statistic", "value", "unit"]
#: The columns of :attr:`Result.probes`: the run (scenario name, seed, run number), then
#: :data:`PROBE_COLUMNS`, so that frames of several runs concatenate without losing which.
RESULT_PROBE_COLUMNS = ["scenario", "seed", "run", *PROBE_COLUMNS]
SERIES_COLUMNS = ["component", "probe", "time", "value", "unit", "kind"]
#: The columns of :attr:`Result.cell_trace` (docs/architecture.md, "Cell traces").
TRACE_COLUMNS = ["time_s", "event", "component", "port", "cause", "unit", "octets", "vc", "source", "seq", "pdu_cell",
                 "born_s", "flags", "carries"]

ProgressArg = Union[None, bool, Callable[[float, float], Any]]


class Scenario:
    """A parsed, validated scenario.  Immutable: overrides return a new object."""

    __slots__ = ("_native",)

    def __init__(self, native: "_atmsim.Scenario") -> None:
        self._native = native

    @property
    def native(self) -> "_atmsim.Scenario":
        """The underlying native handle."""
        return self._native

    @property
    def name(self) -> str:
        return self._native.name

    @property
    def path(self) -> str:
        return self._native.path

    @property
    def duration_s(self) -> float:
        return self._native.duration_s

    @property
    def warmup_s(self) -> float:
        return self._native.warmup_s

    @property
    def seed(self) -> int:
        return self._native.seed

    @property
    def replications(self) -> int:
        return self._native.replications

    @property
    def warnings(self) -> list[str]:
        """What loading found suspicious but legal, one line each (issued as
        :class:`AtmsimWarning` at load): a buffer or link whose open-loop sources offer
        more than its line rate."""
        return self._native.warnings

    def components(self) -> list[dict[str, Any]]:
        """``[{'name', 'kind', 'params': {name: value as written or default}}]``."""
        return self._native.components()

    def with_overrides(self, overrides: Optional[Mapping[str, Any]]) -> "Scenario":
        """Apply ``--set`` style overrides: keys ``COMPONENT.PARAM`` or ``scenario.KEY``,
        values as in TOML without quotes (``"0.8"``, ``"256 cells"``).  Non-string values
        are converted with ``str``.  Raises ScenarioError/ParamError."""
        return apply_overrides(self, overrides, "overrides")

    def to_toml(self) -> str:
        return self._native.to_toml()

    def run(self, seed: Optional[int] = None, run: int = 0, progress: ProgressArg = None,
            cell_trace: Optional[Union[str, os.PathLike]] = None) -> "Result":
        """Run one replication (see :func:`run`); ``cell_trace``: a CSV file the cell
        trace is streamed to during the run, in bounded memory (the scenario then keeps
        a trace as if ``[trace] cells = true``; :attr:`Result.cell_trace` reads it back)."""
        return _run_scenario(self, seed=seed, run=run, progress=progress, cell_trace=cell_trace)

    def __repr__(self) -> str:
        return (f"Scenario(name={self.name!r}, path={self.path!r}, duration_s={self.duration_s:g}, "
                f"warmup_s={self.warmup_s:g}, seed={self.seed})")

    def _repr_html_(self) -> str:
        """Jupyter's view: the run settings and one row per component with its
        parameters (as written or defaulted)."""
        comps = self.components()
        rows = "".join(
            f"<tr><td>{_h(c['name'])}</td><td>{_h(c['kind'])}</td>"
            f"<td>{_h(', '.join(f'{k} = {v}' for k, v in sorted(c['params'].items())))}</td></tr>"
            for c in comps)
        return (f"<div><b>Scenario {_h(self.name)}</b> <code>{_h(self.path)}</code><br>"
                f"duration {self.duration_s:g} s, warm-up {self.warmup_s:g} s, seed {self.seed}, "
                f"{len(comps)} component(s)"
                f"<table><thead><tr><th>component</th><th>kind</th><th>parameters</th></tr></thead>"
                f"<tbody>{rows}</tbody></table></div>")


def apply_overrides(sc: Scenario, overrides: Optional[Mapping[str, Any]], name: str) -> Scenario:
    """``sc`` with ``overrides``; errors name them as ``name`` (``--set`` on the command
    line, ``set`` for :func:`run`, ``overrides`` for :meth:`Scenario.with_overrides`)."""
    if not overrides:
        return sc
    if not isinstance(overrides, Mapping):
        raise ArgumentError(f"{name}: expected a dict {{'COMPONENT.PARAM': value}}, got {type(overrides).__name__}")
    try:
        native = sc.native.with_overrides({str(k): _to_text(v) for k, v in overrides.items()})
    except ScenarioError as exc:
        raise renamed(exc, "--set", name) from None
    return _loaded(native)


def _loaded(native: "_atmsim.Scenario") -> Scenario:
    """The scenario just loaded, its load-time warnings (an open-loop load above a line
    rate, say) issued as :class:`AtmsimWarning`."""
    for w in native.warnings:
        warnings.warn(w, AtmsimWarning, stacklevel=3)
    return Scenario(native)


def renamed(exc: ScenarioError, cli: str, name: str) -> ScenarioError:
    """The core's one-line error that starts with ``cli`` (a CLI flag such as ``--set``)
    with the flag, there and in its text, replaced by the Python argument ``name``;
    ``exc`` itself when it does not start so."""
    msg = str(exc)
    if name == cli or not msg.startswith(cli):
        return exc
    return type(exc)(msg.replace(cli, name))


def _to_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class Result:
    """One replication: ``summary`` (dict), ``probes`` (DataFrame), ``series``
    (DataFrame of the sampled time series), ``ledger``, ``flows``."""

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self.raw = dict(raw)
        self._probes: Optional[pd.DataFrame] = None
        self._series: Optional[pd.DataFrame] = None
        self._trace: Optional[pd.DataFrame] = None
        self._index: Optional[dict[tuple[str, str, str], float]] = None
        self.summary: dict[str, Any] = {
            "name": raw["name"],
            "seed": raw["seed"],
            "run": raw["run"],
            "fingerprint": raw["fingerprint"],
            "events": raw["events"],
            "scheduled": raw.get("scheduled"),
            "duration_s": raw["duration_s"],
            "warmup_s": raw.get("warmup_s", 0.0),
            "wall_s": raw["wall_s"],
            "check_wire": raw.get("check_wire", False),
            "wire_checked": raw.get("wire_checked", 0),
            "ledger": raw["ledger"],
            "flows": raw["flows"],
        }

    @property
    def probes(self) -> pd.DataFrame:
        """One row per (component, probe, statistic): columns scenario (its name), seed,
        run (this run's), component, probe, statistic, value (float64), unit.  Built on first use (validation runs
        thousands of short replications and only needs :meth:`value`)."""
        if self._probes is None:
            import pandas as pd

            rows = self.raw.get("probes", [])
            probes = pd.DataFrame([tuple(row) for row in rows], columns=PROBE_COLUMNS).astype({"value": "float64"})
            probes.insert(0, "scenario", [self.summary["name"]] * len(probes))
            # seed and run are u64: a value above 2^63 - 1 keeps an exact uint64 column
            probes.insert(1, "seed", pd.array([self.summary["seed"]] * len(probes), dtype="uint64"))
            probes.insert(2, "run", pd.array([self.summary["run"]] * len(probes), dtype="uint64"))
            self._probes = probes
        return self._probes

    @property
    def series(self) -> pd.DataFrame:
        """The time series asked for in the scenario's ``[probes] series``, long form:
        columns component, probe, time (s, the end of each sampling interval), value,
        unit, kind (``level``: the value at that instant; ``rate``: per second over the
        interval ending there).  Empty (same columns) when none were asked for."""
        if self._series is None:
            import pandas as pd

            frames = []
            for s in self.raw.get("series", []):
                n = len(s["values"])
                frames.append(pd.DataFrame({
                    "component": [s["component"]] * n,
                    "probe": [s["probe"]] * n,
                    "time": [(k + 1) * s["interval_s"] for k in range(n)],
                    "value": pd.array(s["values"], dtype="float64"),
                    "unit": [s["unit"]] * n,
                    "kind": [s["kind"]] * n,
                }))
            self._series = (pd.concat(frames, ignore_index=True) if frames
                            else pd.DataFrame({c: pd.Series(dtype="float64" if c in ("time", "value") else "object")
                                               for c in SERIES_COLUMNS}))
        return self._series

    @property
    def cell_trace(self) -> pd.DataFrame:
        """The cell trace asked for in the scenario's ``[trace]`` table (``cells =
        true``; ``atmsim run --cell-trace FILE``), one row per cell delivered to a
        component's input (``event`` ``r``, the input ``port`` named), per start of a
        cell's transmission on a line (``-``, the output ``port`` named: a buffer's
        line, a switch port's, a host adapter's, a sender's own) and per cell dropped
        (``d``, ``cause`` as the ledger books it), in time order: time_s, event,
        component, port, cause, unit (``cell`` or ``frame``), octets (53 for a cell,
        a frame's length on the medium), vc (``VPI/VCI`` there; empty for a frame),
        source, seq (the cell's number, or its PDU's for hosts and AAL5 traces; a
        frame's), pdu_cell (its place in the PDU), born_s, flags (``eop``, ``clp``,
        ``efci``; as the cell arrived), carries (the payload in a few words; a frame's
        starts with ``dst N``, the station or ICN it is sent to).  FDDI frames have
        rows too (``[trace] frames = false`` leaves them out): delivered to a
        component's frame port, and at the ring's stations (component ``RING/sI``)
        starting a transmission, receiving, dropped.  Empty (same columns) without a
        trace.  See :attr:`Result.cell_waits` for each hop's wait."""
        if self._trace is None:
            import pandas as pd

            if self.raw.get("trace_file"):
                # Streamed to its file during the run: read back, the same columns.
                text = [c for c in TRACE_COLUMNS if c not in ("time_s", "born_s", "seq", "pdu_cell", "octets")]
                self._trace = pd.read_csv(self.raw["trace_file"], dtype={c: str for c in text}, keep_default_na=False)
                self._trace = self._trace[TRACE_COLUMNS]
            else:
                t = self.raw.get("trace") or {}
                self._trace = pd.DataFrame({c: t.get(c, []) for c in TRACE_COLUMNS})
            self._trace = self._trace.astype({"time_s": "float64", "born_s": "float64", "seq": "int64", "pdu_cell": "int64",
                                              "octets": "int64"})
        return self._trace

    @property
    def cell_waits(self) -> pd.DataFrame:
        """Each transmission of the cell trace (its ``-`` rows) with how long the cell
        or frame waited there: component, port, unit, vc, source, seq, pdu_cell,
        arrived_s (its last ``r`` row at that component — for a ring's station, at the
        station or the ring's port that handed it over — or its birth where it was
        made), started_s,
        wait_s (started_s − arrived_s; NaN where the trace has no arrival, e.g. one
        filtered out with ``at``).  A cell that passes a component twice (a loop) is
        paired with its arrival before each start, and each copy of a replicated cell
        with the arrival it was copied from.  Empty without a trace."""
        from atmsim.cell_trace import cell_waits

        return cell_waits(self.cell_trace)

    def plot_cell_trace(self, path: Optional[Union[str, os.PathLike]] = None):
        """One line: the cell trace as a space-time diagram (components down, time
        across; dots for cells arriving, ticks for transmissions starting, crosses for
        cells dropped, by cause); a
        matplotlib ``Figure``, saved to ``path`` if given.  See
        :func:`atmsim.plot.trace_figure`."""
        if not self.raw.get("trace") or not self.raw["trace"].get("time_s"):  # before importing matplotlib
            from atmsim.exceptions import ASK_FOR_TRACE, NoSeriesError

            raise NoSeriesError(ASK_FOR_TRACE)
        from atmsim.plot import trace_figure

        return trace_figure(self.cell_trace, path)

    def plot_series(self, which: Optional[Sequence[str]] = None, path: Optional[Union[str, os.PathLike]] = None):
        """One line: the run's time series, one panel per ``component.probe`` (``which``
        picks some), sharing the time axis; a matplotlib ``Figure`` (Jupyter shows it),
        saved to ``path`` if given.  See :func:`atmsim.plot.series_figure`."""
        if not self.raw.get("series"):  # before importing matplotlib
            from atmsim.exceptions import ASK_FOR_SERIES, NoSeriesError

            raise NoSeriesError(ASK_FOR_SERIES)
        from atmsim.plot import series_figure

        return series_figure(self.series, which, path)

    # convenience accessors
    @property
    def warnings(self) -> list[str]:
        """Warnings about the run's input, one line each (e.g. a ``[probes] keep``
        pattern that matched no probe row); also issued as :class:`AtmsimWarning`."""
        return list(self.raw.get("warnings") or [])

    @property
    def fingerprint(self) -> str:
        return self.summary["fingerprint"]

    @property
    def ledger(self) -> dict[str, Any]:
        return self.summary["ledger"]

    @property
    def flows(self) -> list[dict[str, Any]]:
        return self.summary["flows"]

    @property
    def events(self) -> int:
        return self.summary["events"]

    @property
    def wall_s(self) -> float:
        return self.summary["wall_s"]

    def value(self, component: str, probe: str, statistic: str) -> float:
        """The value of one probe statistic; KeyError (listing what exists) if absent."""
        if self._index is None:
            self._index = {(c, p, s): float(v) for c, p, s, v, _u in self.raw.get("probes", [])}
        try:
            return self._index[(component, probe, statistic)]
        except KeyError:
            pass
        known = [(p, s) for (c, p, s) in self._index if c == component]
        if not known:
            comps = ", ".join(sorted({c for c, _p, _s in self._index}))
            raise KeyError(f"no component {component!r} in results; components: {comps}") from None
        have = ", ".join(f"{p}.{s}" for p, s in known)
        raise KeyError(f"no probe statistic {probe}.{statistic} for {component!r}; it has: {have}") from None

    def ledger_balances(self) -> bool:
        """Conservation: generated + replicated (point-to-multipoint copies) ==
        delivered + dropped (all causes) + in flight."""
        led = self.ledger
        return (led["generated"] + led.get("replicated", 0)
                == led["delivered"] + sum(led["dropped"].values()) + led["in_flight"])

    def to_json_obj(self) -> dict[str, Any]:
        """The ``atmsim run --json`` object (NaN/inf become None)."""
        return _json_clean({
            "scenario": self.summary["name"],
            "seed": self.summary["seed"],
            "run": self.summary["run"],
            "fingerprint": self.summary["fingerprint"],
            "wall_s": self.summary["wall_s"],
            "events": self.summary["events"],
            "duration_s": self.summary["duration_s"],
            "warmup_s": self.summary["warmup_s"],
            "check_wire": self.summary["check_wire"],
            "wire_checked": self.summary["wire_checked"],
            "probes": [dict(zip(PROBE_COLUMNS, (c, p, s, float(v), u)))
                       for c, p, s, v, u in self.probes[PROBE_COLUMNS].itertuples(index=False)],
            "ledger": self.summary["ledger"],
            "flows": self.summary["flows"],
            "series": self.raw.get("series", []),
        })

    def __repr__(self) -> str:
        s = self.summary
        return (f"Result(name={s['name']!r}, seed={s['seed']}, run={s['run']}, "
                f"fingerprint={s['fingerprint']!r}, events={s['events']}, probes={len(self.probes)} rows)")

    #: Probe rows shown by :meth:`_repr_html_` (all of them are in :attr:`probes`).
    HTML_PROBE_ROWS = 30

    def _repr_html_(self) -> str:
        """Jupyter's view: the run, its cell books (conservation checked) and the first
        :attr:`HTML_PROBE_ROWS` probe rows, saying how many more :attr:`probes` holds."""
        s, led = self.summary, self.ledger
        dropped = ", ".join(f"{_h(k)} {v:,}" for k, v in sorted(led["dropped"].items())) or "none"
        balance = "balances" if self.ledger_balances() else "<b>does not balance</b>"
        table = head_html(self.probes, self.HTML_PROBE_ROWS, ".probes")
        warn = "".join(f"<br>warning: {_h(w)}" for w in self.warnings)
        return (f"<div><b>Result {_h(s['name'])}</b>: seed {s['seed']}, run {s['run']}, "
                f"{s['duration_s']:g} s simulated (warm-up {s['warmup_s']:g} s) in {s['wall_s']:.3g} s wall, "
                f"{s['events']:,} events, fingerprint <code>{_h(s['fingerprint'])}</code><br>"
                f"cells: generated {led['generated']:,}, replicated {led.get('replicated', 0):,}, "
                f"delivered {led['delivered']:,}, dropped {dropped}, in flight {led['in_flight']:,} "
                f"(the ledger {balance}){warn}{table}</div>")


def head_html(frame: "pd.DataFrame", rows: int, attribute: str) -> str:
    """The first ``rows`` rows of ``frame`` as an HTML table (text escaped, counts exact),
    then how many more the object's ``attribute`` holds: the notebook views' tables."""
    shown = frame.head(rows).to_html(index=False, escape=True, float_format=_cell_text, na_rep="")
    more = f"<br>… {len(frame) - rows:,} more rows in <code>{_h(attribute)}</code>" if len(frame) > rows else ""
    return shown + more


def _cell_text(v: float) -> str:
    """A probe value for display: counts exactly (as the CLI prints them), others to 6
    significant digits."""
    return f"{v:,.0f}" if math.isfinite(v) and v.is_integer() and abs(v) < 1e15 else f"{v:.6g}"


def _h(text: Any) -> str:
    """HTML-escaped text (names and values come from user files)."""
    import html

    return html.escape(str(text))


def _json_clean(obj: Any) -> Any:
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): _json_clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_clean(v) for v in obj]
    if hasattr(obj, "item") and callable(obj.item):  # numpy scalars
        return _json_clean(obj.item())
    return obj


def _check_readable(path: str) -> None:
    """Turn file-system problems into one-line ScenarioErrors (bad input, exit 2)."""
    if not os.path.exists(path):
        raise ScenarioError(f"{path}: no such file")
    if os.path.isdir(path):
        raise ScenarioError(f"{path}: is a directory, expected a scenario .toml file")
    try:
        with open(path, "rb") as fh:
            fh.read(1)
    except OSError as exc:
        raise ScenarioError(f"{path}: cannot read: {exc.strerror or exc}") from None


def load(path: Union[str, os.PathLike]) -> Scenario:
    """Parse and validate a scenario file.  Raises ScenarioError/ParamError
    (:class:`~atmsim.exceptions.ArgumentError` when ``path`` is no path)."""
    if not isinstance(path, (str, os.PathLike)):
        raise ArgumentError(f"load(path): expected the path of a scenario .toml file (str or os.PathLike), "
                            f"got {type(path).__name__}")
    path = os.fspath(path)
    if not isinstance(path, str):
        raise ArgumentError(f"load(path): expected a text path, got {type(path).__name__}")
    _check_readable(path)
    return _loaded(_atmsim.load(path))


def loads(text: str, path: str = "<string>") -> Scenario:
    """Parse and validate scenario text (``path`` is used in error messages)."""
    if not isinstance(text, str):
        hint = "; decode it first, e.g. loads(data.decode('utf-8'))" if isinstance(text, (bytes, bytearray)) else ""
        raise ArgumentError(f"loads(text): expected the scenario's TOML text as str, got {type(text).__name__}{hint}")
    if not isinstance(path, (str, os.PathLike)):
        raise ArgumentError(f"loads(path): expected a str naming the text in messages, got {type(path).__name__}")
    return _loaded(_atmsim.loads(text, os.fspath(path)))


def _as_scenario(scenario_or_path: Union[Scenario, str, os.PathLike, "_atmsim.Scenario"],
                 where: str = "run(scenario)") -> Scenario:
    if isinstance(scenario_or_path, Scenario):
        return scenario_or_path
    if isinstance(scenario_or_path, _atmsim.Scenario):
        return Scenario(scenario_or_path)
    if not isinstance(scenario_or_path, (str, os.PathLike)):
        raise ArgumentError(f"{where}: expected an atmsim.Scenario or the path of a scenario .toml file, "
                            f"got {type(scenario_or_path).__name__}")
    return load(scenario_or_path)


#: Seeds and run numbers are unsigned 64-bit integers in the core.
U64_MAX = 2**64 - 1


def check_seed_run(seed: Optional[int], run: int, names: tuple[str, str] = ("seed", "run")) -> None:
    """Raise ParamError (one line, what would be valid) unless ``seed`` (or None) and
    ``run`` are integers from 0 to 2^64 − 1; the message names them as ``names``
    (the Python arguments; the CLI passes ``("--seed", "--run")``)."""
    for i, (name, v) in enumerate(zip(names, (seed, run))):
        if v is None and i == 0:
            continue
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= U64_MAX:
            what = "a seed" if i == 0 else "a run (replication) number"
            shown = f"{name} {v}" if name.startswith("-") else f"{name}={v!r}"
            raise ParamError(f"{shown}: {what} is an integer from 0 to {U64_MAX}")


def _run_scenario(sc: Scenario, seed: Optional[int], run: int, progress: ProgressArg,
                  cell_trace: Optional[Union[str, os.PathLike]] = None) -> Result:
    check_seed_run(seed, run)
    trace_file = None
    if cell_trace is not None:
        trace_file = os.fspath(cell_trace)
        if not sc.native.traced:
            sc = sc.with_overrides({"trace.cells": "true"})
    from atmsim.memory import MemoryGuard

    if progress is None or isinstance(progress, bool):
        # Always hand the native run a callback: it is where Ctrl-C is noticed, and
        # where a run that outgrows the machine's memory is stopped (atmsim.memory).
        with RunProgress(label=sc.name, enabled=None if progress is None else progress) as bar:
            res = Result(sc.native.run(seed=seed, run=run, progress=MemoryGuard(bar), trace_file=trace_file))
    else:
        res = Result(sc.native.run(seed=seed, run=run, progress=MemoryGuard(progress), trace_file=trace_file))
    for w in res.warnings:
        warnings.warn(w, AtmsimWarning, stacklevel=3)
    return res


def run(scenario_or_path: Union[Scenario, str, os.PathLike], seed: Optional[int] = None, run: int = 0,
        set: Optional[Mapping[str, Any]] = None, progress: ProgressArg = None) -> Result:  # noqa: A002
    """Run one replication of a scenario (object or path).

    seed: master seed (None → the scenario's); run: replication number (selects
    independent random streams); set: ``--set`` style overrides; progress: None → a
    bar on stderr for runs over 2 s when stderr is a terminal, False → none, True →
    always allowed, or your own ``callable(sim_now_s, duration_s)``."""
    sc = apply_overrides(_as_scenario(scenario_or_path), set, "set")
    return _run_scenario(sc, seed=seed, run=run, progress=progress)


def describe(kind: Optional[str] = None) -> Union[list[dict[str, str]], dict[str, Any]]:
    """All component kinds (``[{'kind','help','source'}]``) or one kind's parameters,
    ports and probes.  Raises ScenarioError (with a did-you-mean) for an unknown kind."""
    if kind is None:
        return _atmsim.describe_kinds()
    return _atmsim.describe_kind(kind)
