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

__all__ = ["AtmsimError", "ScenarioError", "ParamError", "SimulationError"]
