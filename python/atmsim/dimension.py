"""``atmsim dimension``: the smallest finite queue that meets a loss target (or, with
``largest``, the largest size that still meets one).

SPEC's first question ("how many buffers does this gateway need for a 10^-4 cell
loss?") as a command: given a scenario (its traffic as written, or changed with
``--set``), a size parameter named by its key (``gw.tx_buffer_frames``,
``gw.reassembly_frames``, ``mux.capacity``, ...) and a target on one probe statistic
(``gw.mpp_frame_loss <= 1e-3``), find the smallest size in ``[min, max]`` whose loss
meets the target, by bisection.

A size *meets* the target when the upper end of the 95% confidence interval of the
probe's mean over the replications is at or below the limit (the interval is the stats
layer's, :func:`atmsim.stats.interval`, in the probe's domain: Wilson for
proportions).  When every replication gives the same value (typically no loss at
all) there is no interval; the size then meets the target if that value does, and
the answer says so.  Bisection assumes the loss does not grow with the size; every
size it evaluates is listed, and a violation the sizes evaluated show (the statistic
moving the other way by more than its 95% intervals) is a warning.  A target naming a
component the scenario lacks or a probe its kind lacks is refused before any run, with
the closest name.  Replications of one size run on a
process pool with run numbers 0 … n−1 at the scenario's seed, the same at every size
(common random numbers: the sizes are compared on the same traffic).

``largest=True`` (``--largest``) asks the mirror question, for a statistic that does
not fall as the size grows: the largest size in ``[min, max]`` that meets the target.
The CLP = 1 threshold of a buffer is the example: the higher ``clp_threshold``, the
more room CLP = 1 cells get and the more CLP = 0 cells are lost, so the largest
threshold that keeps the CLP = 0 loss under its objective is the one that serves the
tagged cells best (``--key mux.clp_threshold --target 'hi.flow_loss_ratio <= 1e-5'
--largest``). So is a buffer sized for a delay objective (``sink/vc1.sink_delay.p99_9
<= 1e-3``): the delay's quantiles grow with the buffer, the largest buffer meeting the
objective loses least.

A target may also ask for a statistic to reach a limit, ``>=``: the smallest buffer
whose goodput ratio (``sink/vc1.sink_goodput.ratio >= 0.99``) or throughput reaches it,
met when the lower end of the interval is at or above the limit. The search is the same
either way: it assumes that the sizes above one that meets the target meet it too (or,
with ``largest``, those below).

The limit may carry a unit (``<= 250 us``, ``<= 1.5 Mb/s``, ``<= 30 cells``): a time
or a bit rate is converted to the probe's own unit (the one the runs report, as ``atmsim
run`` prints it), and a unit of another quantity is refused with one line. Without a
unit the limit is in the probe's own unit.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, Optional

if TYPE_CHECKING:
    from atmsim.executors import LocalExecutor

from atmsim.exceptions import ScenarioError
from atmsim.units import BIT_RATE_UNITS, TIME_UNITS, convert

#: Units a limit may carry besides time and bit rate: the probes' own count units.
_COUNT_UNITS = ("cells", "frames", "1")

_TARGET_RE = re.compile(r"^\s*([A-Za-z0-9_/\-]+)\.([A-Za-z0-9_]+)(?:\.([A-Za-z0-9_]+))?\s*(<=|>=)\s*"
                        r"([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-zµ/]+)?\s*$")


@dataclass(frozen=True)
class Target:
    """``component.probe[.statistic] <= limit [unit]`` or ``>= limit [unit]``
    (statistic ``value`` by default; without a unit the limit is in the probe's own
    unit, as ``atmsim run`` prints it)."""

    component: str
    probe: str
    statistic: str
    limit: float
    unit: str = ""
    #: ``>=``: the statistic must reach the limit (a goodput, a throughput) rather than
    #: stay under it
    at_least: bool = False

    def __str__(self) -> str:
        u = f" {self.unit}" if self.unit else ""
        op = ">=" if self.at_least else "<="
        return f"{self.component}.{self.probe}.{self.statistic} {op} {self.limit:g}{u}"

    def limit_in(self, unit: str) -> float:
        """The limit in the probe's ``unit`` (ScenarioError when the target's unit is not
        one of the same quantity)."""
        if not self.unit:
            return self.limit
        v = convert(self.limit, self.unit, unit)
        if v is None:
            raise ScenarioError(f"--target '{self}': the limit is in {self.unit}, but "
                                f"{self.component}.{self.probe} is in {unit}; give it in {unit} "
                                f"(or a unit of the same quantity), or as a bare number")
        return v


def parse_target(text: str) -> Target:
    """``"gw.mpp_frame_loss <= 1e-3"``, ``"sink/vc1.sink_delay.p99_9 <= 1 ms"`` → Target;
    ScenarioError with what is valid otherwise."""
    m = _TARGET_RE.match(text)
    if not m:
        raise ScenarioError(f"--target {text!r}: expected COMPONENT.PROBE[.STATISTIC] <= LIMIT [UNIT] (or >=), "
                            f"e.g. 'gw.mpp_frame_loss <= 1e-3', 'sink/vc1.sink_delay.p99 <= 250 us' or "
                            f"'sink/vc1.sink_goodput.ratio >= 0.99'")
    comp, probe, stat, op, limit, unit = m.groups()
    if unit and unit not in TIME_UNITS and unit not in BIT_RATE_UNITS and unit not in _COUNT_UNITS:
        raise ScenarioError(f"--target {text!r}: unknown unit {unit!r}; valid: {', '.join(TIME_UNITS)} (time), "
                            f"{', '.join(BIT_RATE_UNITS)} (bit rate), {', '.join(_COUNT_UNITS)}, or none "
                            f"(the probe's own unit)")
    return Target(comp, probe, stat or "value", float(limit), unit or "", op == ">=")


@dataclass(frozen=True)
class Evaluation:
    """One size: the replications' mean and 95% CI of the target statistic."""

    size: int
    n: int
    mean: float
    ci_low: float
    ci_high: float
    meets: bool
    note: str = ""


@dataclass
class Answer:
    key: str
    unit: str
    target: Target
    low: int
    high: int
    replications: int
    #: the smallest size that meets the target (``largest``: the largest), None when no
    #: size in [low, high] does
    size: Optional[int]
    evaluations: list[Evaluation] = field(default_factory=list)
    largest: bool = False

    @property
    def warning(self) -> Optional[str]:
        """The sizes evaluated contradict the bisection's assumption (:func:`monotone_warning`)."""
        return monotone_warning(self)

    def to_dict(self, context: str = "") -> dict:
        """The answer as plain data (``atmsim dimension --json``): the size (None when no
        size meets the target), the target's parts, every size evaluated with its mean,
        95% CI and verdict, and the sentence; non-finite numbers become None."""
        def num(x: float) -> Optional[float]:
            return x if x is not None and math.isfinite(x) else None

        t = self.target
        return {
            "key": self.key, "unit": self.unit, "size": self.size, "largest": self.largest,
            "min": self.low, "max": self.high, "replications": self.replications,
            "target": {"text": str(t), "component": t.component, "probe": t.probe, "statistic": t.statistic,
                       "limit": t.limit, "limit_unit": t.unit, "at_least": t.at_least},
            "evaluations": [{"size": e.size, "n": e.n, "mean": num(e.mean), "ci_low": num(e.ci_low),
                             "ci_high": num(e.ci_high), "meets": e.meets, "note": e.note}
                            for e in sorted(self.evaluations, key=lambda e: e.size)],
            "sentence": self.sentence(context),
            "warning": self.warning,
        }

    def at(self, size: int) -> Optional[Evaluation]:
        return next((e for e in self.evaluations if e.size == size), None)

    def sentence(self, context: str = "") -> str:
        """The answer in one sentence, e.g. "16 frames meet ... (95% CI ...)"."""
        u = f" {self.unit}" if self.unit else ""
        ctx = f" {context}" if context else ""
        # numbers to as many digits as tell them from the limit (when both are in the
        # probe's unit)
        lim = None if self.target.unit else self.target.limit

        def g(x: float) -> str:
            return _g(x, lim)

        def ci(ev: Optional[Evaluation]) -> str:
            return _ci(ev, lim)

        # the end the search starts from: the size most likely to meet the target
        best = self.low if self.largest else self.high
        if self.size is None:
            e = self.at(best)
            got = f"; at {best}{u} the mean is {g(e.mean)}, 95% CI {ci(e)}" if e else ""
            return f"no {self.key} in [{self.low}, {self.high}]{u} meets {self.target}{ctx}{got}"
        e = self.at(self.size)
        nxt = self.size + 1 if self.largest else self.size - 1
        other = self.at(nxt)
        why = f"95% CI {ci(e)}" if e and not e.note else (e.note if e else "")
        tail = ""
        if other is not None:
            tail = f"; {nxt}{u} do not (mean {g(other.mean)}, 95% CI {ci(other)})"
        most = "at most " if self.largest else ""
        return (f"{most}{self.size}{u} ({self.key}) meet {self.target}{ctx} (mean {g(e.mean) if e else '?'}, {why}, "
                f"{self.replications} replications){tail}")


def check_target(sc, target: Target) -> None:
    """Refuse a target whose component is not in the scenario ``sc`` (an
    :class:`atmsim.api.Scenario`) or whose probe its kind does not declare
    (``atmsim describe KIND``), with the closest valid name (difflib), before any run.
    A part (``sink/vc1``, ``sw/p3``) is checked by its component, the part before ``/``."""
    import difflib

    from atmsim import api

    def hint(word: str, names: list[str]) -> str:
        close = difflib.get_close_matches(word, names, n=1)
        return f"; did you mean {close[0]!r}?" if close else ""

    kinds = {c["name"]: c["kind"] for c in sc.components()}
    base = target.component.split("/", 1)[0]
    if base not in kinds:
        names = sorted(kinds)
        raise ScenarioError(f"--target '{target}': no component {base!r} in {sc.path}{hint(base, names)} "
                            f"(components: {', '.join(names)})")
    # the kind's declared probes, and the rows a 1 ps run of the scenario gives the
    # component (some rows, such as a switch's port_drop_cells, are not declared)
    names = {q["name"] for q in api.describe(kinds[base]).get("probes", [])}
    if target.probe not in names:
        brief = sc.with_overrides({"scenario.duration": "1 ps", "scenario.warmup": "0 s"}).run()
        names |= {probe for comp, probe, *_ in brief.raw.get("probes", []) if comp.split("/", 1)[0] == base}
    probes = sorted(names)
    if probes and target.probe not in probes:
        raise ScenarioError(f"--target '{target}': {base} ({kinds[base]}) has no probe {target.probe!r}"
                            f"{hint(target.probe, probes)} (its probes: atmsim describe {kinds[base]})")


def monotone_warning(ans: "Answer") -> Optional[str]:
    """A warning when the sizes evaluated show the statistic moving against the
    direction the bisection assumes (the smallest size meeting ``<=``: the statistic
    does not rise as the size grows; ``>=``, or ``largest``: the mirror cases) by more
    than its 95% intervals allow; None when they agree or cannot tell."""
    rising_assumed = ans.largest != ans.target.at_least  # the statistic is assumed not to fall
    evs = sorted(ans.evaluations, key=lambda e: e.size)

    def ends(e: Evaluation) -> tuple[float, float]:
        if math.isfinite(e.ci_low) and math.isfinite(e.ci_high):
            return e.ci_low, e.ci_high
        # every replication equal: the mean is the value; too few replications: cannot tell
        return (e.mean, e.mean) if e.note.startswith("all ") else (math.nan, math.nan)

    u = f" {ans.unit}" if ans.unit else ""
    for i, a in enumerate(evs):
        for b in evs[i + 1:]:
            (alo, ahi), (blo, bhi) = ends(a), ends(b)
            if not all(math.isfinite(x) for x in (alo, ahi, blo, bhi)):
                continue
            against = bhi < alo if rising_assumed else blo > ahi
            if against:
                way, assumed = ("falls", "does not fall") if rising_assumed else ("rises", "does not rise")
                return (f"{ans.target.component}.{ans.target.probe}.{ans.target.statistic} {way} from "
                        f"{_g(a.mean)} at {a.size}{u} to {_g(b.mean)} at {b.size}{u} (95% intervals apart, or every replication equal), but "
                        f"the bisection assumes it {assumed} as {ans.key} grows; the answer may be wrong "
                        f"(look at every size with atmsim sweep" +
                        ("" if ans.largest else ", or try --largest") + ")")
    return None


def max_evaluations(low: int, high: int) -> int:
    """Sizes the bisection runs at most: both ends, then ⌈log2(high − low)⌉ midpoints."""
    return 2 + max(0, math.ceil(math.log2(high - low))) if high > low else 1


def _g(x: float, near: Optional[float] = None) -> str:
    """``x`` to 3 significant digits, or as many more (up to 8) as tell it from ``near``
    (the limit: 0.989973 against 0.99 must not read 0.99)."""
    if x is None or not math.isfinite(x):
        return "nan"
    digits = 3
    while near is not None and x != near and digits < 8 and f"{x:.{digits}g}" == f"{near:.{digits}g}":
        digits += 1
    return f"{x:.{digits}g}"


def _ci(e: Optional[Evaluation], near: Optional[float] = None) -> str:
    if e is None or not (math.isfinite(e.ci_low) and math.isfinite(e.ci_high)):
        return "none" if e is None else (e.note or "none")
    return f"[{_g(e.ci_low, near)}, {_g(e.ci_high, near)}]"


def _one_run(path: str, overrides: dict[str, str], run: int, target: Target) -> tuple[float, str]:
    """Worker: one replication, the target statistic's value and unit (NaN and "" if
    the run lacks it)."""
    from atmsim import api

    res = api.load(path).with_overrides(overrides).run(run=run)
    p = res.probes
    sel = p[(p["component"] == target.component) & (p["probe"] == target.probe) & (p["statistic"] == target.statistic)]
    return (float(sel["value"].iloc[0]), str(sel["unit"].iloc[0])) if len(sel) else (math.nan, "")


def evaluate(path: str, key: str, size: int, unit: str, target: Target, replications: int,
             overrides: Mapping[str, str], pool: Optional["LocalExecutor"],
             on_run: Optional[Callable[[], None]] = None) -> Evaluation:
    """Run ``replications`` replications at ``size`` and judge the target (``on_run``
    is called as each replication finishes)."""
    from atmsim import stats

    over = {**overrides, key: f"{size} {unit}".strip()}
    if pool is None:
        results = (_one_run(path, over, i, target) for i in range(replications))
    else:
        results = pool.map(_one_run, [(path, over, i, target) for i in range(replications)])
    values, units = [], set()
    for v, u in results:
        values.append(v)
        units.add(u)
        if on_run:
            on_run()
    if all(math.isnan(v) for v in values):
        raise ScenarioError(f"{path}: no statistic {target.component}.{target.probe}.{target.statistic} in the "
                            f"runs (check --target: component and probe names as `atmsim run` prints them)")
    probe_unit = next((u for u in units if u), "")
    iv = stats.interval(values, stats.domain_of(target.probe, target.statistic, probe_unit))
    return judge(size, iv.n, iv.mean, iv.std, iv.low, iv.high, target.limit_in(probe_unit), iv.note,
                 at_least=target.at_least)


def judge(size: int, n: int, mean: float, std: float, low: float, high: float, limit: float,
          note: str = "", at_least: bool = False) -> Evaluation:
    """Whether a size whose replications gave ``mean`` and the 95% CI ``[low, high]``
    meets ``limit``: the CI's upper end at or below it (``at_least``: its lower end at or
    above it); without an interval (all replications equal, or too few) the mean, with
    the reason in ``note``."""
    if math.isfinite(high) and math.isfinite(low):
        return Evaluation(size, n, mean, low, high, low >= limit if at_least else high <= limit)
    why = f"all {n} replications gave {_g(mean, limit)}" if std == 0.0 else (note or "no interval")
    return Evaluation(size, n, mean, low, high, mean >= limit if at_least else mean <= limit, why)


def check_inputs(path: str | Path, key: str, low: int, high: int, target: Target, *, unit: str = "",
                 replications: int = 6, overrides: Optional[Mapping[str, str]] = None) -> None:
    """Bad file, key, value, range or target: one clear ScenarioError before any run
    (:func:`dimension` calls it; the CLI too, before it prints anything)."""
    from atmsim import api

    if low < 1 or high < low:
        raise ScenarioError(f"--min {low} --max {high}: expected 1 <= min <= max")
    if replications < 2:
        raise ScenarioError(f"--replications {replications}: at least 2 are needed for a confidence interval")
    check_target(api.load(str(path)).with_overrides({**dict(overrides or {}), key: f"{high} {unit}".strip()}), target)


def dimension(path: str | Path, key: str, low: int, high: int, target: Target | str, *, unit: str = "",
              replications: int = 6, overrides: Optional[Mapping[str, str]] = None, workers: Optional[int] = None,
              on_eval: Optional[Callable[[Evaluation], None]] = None,
              on_run: Optional[Callable[[], None]] = None, largest: bool = False) -> Answer:
    """Bisection for the smallest size in ``[low, high]`` meeting ``target`` (``largest``:
    the largest, for a statistic that does not fall as the size grows); ``on_eval``
    after each size, ``on_run`` after each replication."""
    tgt = parse_target(target) if isinstance(target, str) else target
    p = str(path)
    over = dict(overrides or {})
    check_inputs(p, key, low, high, tgt, unit=unit, replications=replications, overrides=over)
    ans = Answer(key, unit, tgt, low, high, replications, None, largest=largest)
    cache: dict[int, Evaluation] = {}

    def ev(size: int, pool) -> Evaluation:
        if size not in cache:
            cache[size] = evaluate(p, key, size, unit, tgt, replications, over, pool, on_run)
            ans.evaluations.append(cache[size])
            if on_eval:
                on_eval(cache[size])
        return cache[size]

    # The one local pool (atmsim.executors): its workers die with this process.
    from atmsim.executors import LocalExecutor

    pool = LocalExecutor(workers) if (workers or 0) != 1 else None
    # Written for the smallest size: `good` is the end most likely to meet the target,
    # `bad` the other, `step` the direction from good to bad.
    good, bad, step = (low, high, 1) if largest else (high, low, -1)
    try:
        if not ev(good, pool).meets:
            return ans
        if ev(bad, pool).meets:
            ans.size = bad
            return ans
        ok, ko = good, bad  # ok meets, ko does not
        while abs(ko - ok) > 1:
            mid = (ok + ko) // 2
            if ev(mid, pool).meets:
                ok = mid
            else:
                ko = mid
        ev(ok + step, pool)  # the next size past the answer, for its "do not"
        ans.size = ok
        return ans
    finally:
        if pool is not None:
            pool.close()
