"""The exceptions atmsim raises, shared by the Rust core and the Python front end.

``AtmsimError`` is the root.  ``ScenarioError`` (and its subclass ``ParamError``) mean
bad input — a user mistake in a scenario file, a ``--set`` override or a path; their
text is one line ``FILE:LINE: KEY: what is wrong; what would be valid``.  The CLI
turns them into exit code 2.  ``SimulationError`` means a run failed (conservation
violated, model invariant broken, interrupted); the CLI exits 1.

The classes are created once, in the native module (``atmsim._atmsim``), so an error
raised in Rust and one raised here are the same type.
"""
from atmsim._atmsim import AtmsimError, ParamError, ScenarioError, SimulationError


class AtmsimWarning(UserWarning):
    """Input that is valid but almost certainly not what was meant (the CLI prints it
    as one line ``atmsim: warning: FILE:LINE: KEY: ...``)."""


class NoSeriesError(ScenarioError, ValueError):
    """A run without time series was asked to plot or export them (a ValueError too,
    as before it was an atmsim error)."""


class ArgumentError(ScenarioError, TypeError):
    """A Python API argument of the wrong type (``atmsim.load(None)``,
    ``atmsim.loads(b"...")``, ``atmsim.run(123)``): bad input, one line naming the
    argument; a TypeError too, as Python's own checks raise."""


#: How to ask for time series (the text of every NoSeriesError).
ASK_FOR_SERIES = ("the run has no time series; ask for them in the scenario file, e.g. "
                  "[probes] series = [\"mux.q_len\", \"sink.sink_throughput\"] "
                  "(atmsim describe KIND lists each kind's series)")

#: What a run without a cell trace says when one is asked of it.
ASK_FOR_TRACE = ("the run kept no cell trace; ask for one in the scenario file, [trace] cells = true "
                 "(narrow it with flows, vcs, at, from, to), or with atmsim run --cell-trace FILE")

__all__ = ["AtmsimError", "ScenarioError", "ParamError", "SimulationError", "AtmsimWarning", "NoSeriesError", "ArgumentError",
           "ASK_FOR_SERIES", "ASK_FOR_TRACE"]
