"""atmsim — a fast cell-level discrete-event simulator for ATM networks.

Quick start::

    import atmsim
    sc = atmsim.load("scenarios/examples/poisson_oc3.toml")
    res = atmsim.run(sc, seed=1, run=0, set={"src.rate": "120 Mb/s"})
    res.summary["fingerprint"], res.probes.head()
    res.value("mux", "q_wait", "mean")

The engine is the native module ``atmsim._atmsim`` (Rust, built with maturin); this
package adds scenario/result objects, the CLI (``atmsim``), analytic validation,
benchmarks and sweeps (``atmsim.run_sweep``, see :mod:`atmsim.sweep`).
"""
from atmsim._atmsim import version as _native_version
from atmsim.api import Result, Scenario, describe, load, loads, run
from atmsim.exceptions import AtmsimError, AtmsimWarning, ParamError, ScenarioError, SimulationError

__version__: str = _native_version()

__all__ = [
    "__version__",
    "load",
    "loads",
    "run",
    "describe",
    "Scenario",
    "Result",
    "AtmsimError",
    "ScenarioError",
    "ParamError",
    "SimulationError",
    "AtmsimWarning",
    "run_sweep",
    "Sweep",
    "read_trace",
    "summarize_trace",
]


def __getattr__(name: str):
    # atmsim.run_sweep is atmsim.sweep.run_sweep, imported on first use (it pulls in
    # scipy and sqlite, which single runs do not need).
    if name in ("run_sweep", "Sweep"):
        from atmsim import sweep

        return getattr(sweep, name)
    if name in ("read_trace", "summarize_trace"):  # numpy and pandas, on first use too
        from atmsim import traces

        return getattr(traces, name)
    raise AttributeError(f"module 'atmsim' has no attribute {name!r}")
