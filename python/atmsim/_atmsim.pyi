"""Typed stub of the native module built from crates/atmsim-py (the contract between
the Rust core and the Python front end)."""
from typing import Any, Callable, Optional

class AtmsimError(Exception): ...
class ScenarioError(AtmsimError):
    """Bad scenario input. str(e) is one line: 'FILE:LINE: KEY: what is wrong; what would be valid'."""
class ParamError(ScenarioError):
    """A parameter value is out of range or has the wrong unit (same one-line format)."""
class SimulationError(AtmsimError):
    """A run failed: conservation violated, model invariant broken, or interrupted."""

def version() -> str: ...
def build_profile() -> str: ...

class Scenario:
    """A parsed, validated scenario (immutable)."""
    name: str
    path: str
    duration_s: float
    warmup_s: float
    seed: int
    replications: int
    traced: bool  # each run keeps a cell trace ([trace] cells = true)
    def components(self) -> list[dict[str, Any]]:
        """[{'name': str, 'kind': str, 'params': {name: value-as-written-or-default (str)}}]"""
    def with_overrides(self, overrides: dict[str, str]) -> "Scenario":
        """Apply --set style overrides. Keys: 'COMPONENT.PARAM' or 'scenario.KEY'
        (duration, warmup, seed, replications). Values are strings as in TOML without
        quotes, e.g. '0.8', '256 cells', '8.8 ms'. Raises ScenarioError/ParamError
        ('--set KEY: ...')."""
    def to_toml(self) -> str: ...
    def run(self, seed: Optional[int] = None, run: int = 0,
            progress: Optional[Callable[[float, float], Any]] = None,
            trace_file: Optional[str] = None) -> dict[str, Any]:
        """Runs one replication. seed None → scenario seed. trace_file: stream the cell
        trace to this CSV file during the run (bounded memory; the dict then has
        'trace_file' instead of 'trace'; 'trace_rows' counts the rows either way).
        progress(sim_now_s, duration_s)
        is called about every 65k events (with the GIL); if it raises (e.g.
        KeyboardInterrupt) the run stops and that exception propagates. Returns
        {'name','seed','run','fingerprint' (16 hex digits),'events','duration_s','warmup_s',
         'wall_s','probes': [(component, probe, statistic, value, unit), ...],
         'ledger': {'generated','delivered','dropped' ({cause: n}),'dropped_total','in_flight','replicated'},
         'flows': [{'flow','source','vc','generated','delivered','dropped','in_flight','replicated'}]}.
        Conservation (checked by the core, a violation raises SimulationError):
        generated + replicated = delivered + dropped + in_flight.
        Raises SimulationError."""

def load(path: str) -> Scenario: ...
def loads(text: str, path: str = "<string>") -> Scenario: ...
def describe_kinds() -> list[dict[str, str]]:
    """[{'kind','help','source'}]"""
def describe_kind(kind: str) -> dict[str, Any]:
    """{'kind','help','source','params':[{'name','unit','default','help','source','required'}],
        'inputs':[port names],'outputs':[port names],'probes':[{'name','unit','kind','help'}]}
    Raises ScenarioError for an unknown kind (with a did-you-mean)."""

def bench_hold(impl: str, pending: int, events: int, seed: int) -> dict[str, Any]:
    """impl in {'atmsim','hand_heap'}. Returns {'events': int, 'wall_s': float, 'check': float}."""
def bench_cell_queue(impl: str, cells: int, load: float, capacity: int, seed: int) -> dict[str, Any]:
    """impl in {'atmsim','hand_heap','lindley'}: Poisson cells at `load` × OC-3c cell rate into
    one FIFO of `capacity` cells served at the OC-3c cell rate (149.76 Mb/s payload).
    events = arrivals + departures. Returns {'events','wall_s','lost','mean_wait_s'}."""
def bench_mux(impl: str, seconds: float, seed: int) -> dict[str, Any]:
    """The mux workload: 8 on-off sources into a 256-cell FIFO at 155.52 Mb/s for
    ``seconds`` simulated seconds; ``impl`` is ``atmsim`` or ``hand_heap``. Returns
    cells (switched), events (= cells), wall_s, lost."""
    ...

# Sweeps: the [sweep] table and the per-point seed (crates/atmsim-scenario/src/sweep.rs).
SWEEP_SEED_DOMAIN: str              # "atmsim-sweep-v1"
SWEEP_SEED_MASK: int                # 0x7FFF_FFFF_FFFF_FFFF
SWEEP_KEYS: tuple[str, ...]         # the keys of [sweep]
SWEEP_TARGET_KEYS: tuple[str, ...]  # the keys of [sweep] target
SWEEP_RANGE_KEYS: tuple[str, ...]   # the keys of a range { from, to, step, unit }
SWEEP_MAX_RANGE_POINTS: int         # at most this many values in one range
SWEEP_MAX_REPLICATIONS: int         # at most this many replications per point (1_000_000)
SWEEP_DEFAULT_QUICK_REPLICATIONS: int

def loads_sweep(text: str, path: str = "<string>", overrides: Optional[dict[str, str]] = None) -> dict[str, Any]:
    """Parses and checks a scenario file's text and its [sweep] table, with the extra
    overrides (--set) applied to the scenario first. Every value and every point is
    checked with Scenario.with_overrides. Returns
    {'name': str, 'seed': int (the scenario's, after overrides), 'keys': [swept keys, axis order],
     'points': [{key: value text}, ...] (grid axes in file order, then the zip axis; last fastest),
     'written': [{key: value as written: str | int | float | bool}, ...],
     'replications': int, 'quick_replications': int, 'quick_overrides': {key: value text},
     'target': None | {'component','probe','statistic','rel_half_width': float,
                       'max_replications': int,'batch': int,'line': int | None},
     'has_sweep_table': bool, 'line': int | None (of [sweep])}.
    Raises ScenarioError/ParamError, one line 'FILE:LINE: sweep...: what is wrong; what would
    be valid' (scenario errors as loads raises them; bad overrides as '--set: KEY: ...')."""
def point_seed(scenario_seed: int, point: dict[str, str]) -> int:
    """FNV-1a-64('atmsim-sweep-v1|<scenario seed>|<canonical_point(point)>') & SWEEP_SEED_MASK."""
def canonical_point(point: dict[str, str]) -> str:
    """JSON of the point: keys sorted, separators ',' and ':', non-ASCII kept."""
def fnv1a64(data: bytes) -> int:
    """FNV-1a, 64-bit (offset basis 0xcbf29ce484222325, prime 0x100000001b3)."""
def did_you_mean(word: str, candidates: list[str]) -> str:
    """The core's hint: ' (did you mean \'x\'?)' for the closest candidate within a small edit
    distance, else ''."""
def read_trace(path: str, format: str, direction: str, vc: Optional[str] = None,
               filter: Optional[str] = None) -> tuple[bytes, bytes]:
    """A trace as the `trace` source reads it (format packets, frames or pcap; direction both,
    sent or received; vc one VC of a SunATM capture; filter a tcpdump-style capture
    filter, as the source's capture_filter): the times in ps from the first packet
    kept (frame numbers for frames) as little-endian u64s, the lengths in octets as
    little-endian u32s.  Raises ScenarioError/ParamError, one line."""
def hurst(values: list[float]) -> tuple[float, float]:
    """The Hurst parameter of a series by aggregated variance and by log-periodogram
    regression (NaN where the series does not vary)."""
def parse_time_s(text: str) -> float:
    """Seconds of a time written as in scenario files ('10 ms'); ParamError if not a time."""
