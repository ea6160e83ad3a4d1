"""What a paper reproduction is: experiments (scenario files), figures, comparison rows.

A reproduction is a subclass of :class:`Reproduction` registered with
:func:`atmsim.reproduce.register`.  The framework (:func:`atmsim.reproduce.reproduce`)
runs every :class:`Experiment` through :func:`atmsim.sweep.run_sweep` into one result
store, then hands the statistics to the reproduction, which draws its figures and
returns its comparison rows.  Writing the CSV and the HTML is the framework's job
(:mod:`atmsim.report`), so every paper's output looks the same.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

import pandas as pd

#: ``DIR/comparison.csv`` columns: SPEC section 4's, then the band of a prediction over
#: the parameters the paper leaves open (issue 18: ``band_low``, ``band_high``; empty
#: where no band was computed).
COMPARISON_COLUMNS = ["paper", "experiment", "quantity", "unit", "paper_value",
                      "simulated", "ci_low", "ci_high", "rel_diff", "band_low", "band_high"]

#: The repository's ``scenarios/`` directory (reproductions ship their files there).
SCENARIOS_DIR = Path(__file__).resolve().parents[3] / "scenarios"


@dataclass(frozen=True)
class Experiment:
    """One scenario file of a reproduction, run as one sweep.

    ``key`` names the experiment in comparison rows and figure file names;
    ``labels`` carries anything the reproduction wants to know about it later
    (e.g. the burst factor of a curve)."""

    key: str
    file: str  # relative to scenarios/<paper>/
    title: str
    labels: Mapping[str, Any] = field(default_factory=dict)
    #: Parameter overrides (``--set`` style, ``{"dec.pace_unit": "cell"}``): a variant of
    #: the file, for bands and ablations.
    overrides: Mapping[str, str] = field(default_factory=dict)
    #: False: run the file's fixed ``replications`` even where it asks for
    #: relative-precision stopping (band and ablation variants: sensitivities).
    precision: bool = True


@dataclass
class ExperimentResult:
    """What one sweep produced (``stats`` and ``runs`` as in ``SweepResult``)."""

    experiment: Experiment
    path: Path
    stats: pd.DataFrame
    runs: pd.DataFrame
    failures: Any = None
    #: The runs' time series (``SweepResult.series``; empty when the scenario asks for none).
    series: Optional[pd.DataFrame] = None
    #: Every replication's value of every probe statistic (``SweepResult.values``; None
    #: when built without them): what paired comparisons need.
    values: Optional[pd.DataFrame] = None

    def failure_count(self) -> int:
        f = self.failures
        if f is None:
            return 0
        try:
            return len(f)
        except TypeError:
            return 0


@dataclass(frozen=True)
class Figure:
    """A drawn figure: files relative to the output directory."""

    key: str
    title: str
    png: str
    svg: str
    caption: str = ""


@dataclass(frozen=True)
class ComparisonRow:
    """One compared quantity.  ``paper_value`` None means the paper gives no number
    for it (or it is withheld): the row is a prediction.  ``note`` is shown in the
    HTML report only (the CSV keeps the SPEC columns); so is ``detail``."""

    experiment: str
    quantity: str
    unit: str
    simulated: float
    ci_low: Optional[float] = None
    ci_high: Optional[float] = None
    paper_value: Optional[float] = None
    note: str = ""
    #: True for the many per-point rows behind a figure: the report folds them away
    #: under the headline rows (the CSV has them all).
    detail: bool = False
    #: The range of the prediction over the parameters the paper leaves open (None: no
    #: band computed), and the parameter that moves it most.
    band_low: Optional[float] = None
    band_high: Optional[float] = None
    band_param: str = ""

    @property
    def is_prediction(self) -> bool:
        return self.paper_value is None

    @property
    def rel_diff(self) -> Optional[float]:
        """(simulated − paper) / |paper|; None for predictions or a zero paper value."""
        if self.paper_value is None or self.paper_value == 0 or not _finite(self.simulated):
            return None
        return (self.simulated - self.paper_value) / abs(self.paper_value)

    def csv_record(self, paper: str) -> dict[str, Any]:
        return {
            "paper": paper,
            "experiment": self.experiment,
            "quantity": self.quantity,
            "unit": self.unit,
            "paper_value": _opt(self.paper_value),
            "simulated": _opt(self.simulated),
            "ci_low": _opt(self.ci_low),
            "ci_high": _opt(self.ci_high),
            "rel_diff": _opt(self.rel_diff),
            "band_low": _opt(self.band_low),
            "band_high": _opt(self.band_high),
        }


def _finite(x: Any) -> bool:
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x)


def _opt(x: Optional[float]) -> Optional[float]:
    return float(x) if _finite(x) else None


class Reproduction:
    """Base class of a paper reproduction.  Subclasses set the class attributes and
    implement :meth:`analyse`.

    name:        the ``atmsim reproduce`` name (SPEC section 4), also ``scenarios/<name>/``
    title:       the paper, as cited in the report
    summary:     one paragraph (HTML-escaped by the report) saying what is reproduced
                 and with which model; say plainly when a model is a stand-in
    experiments: the scenario files, each run as one sweep
    """

    name: str = ""
    title: str = ""
    summary: str = ""
    experiments: Sequence[Experiment] = ()

    @property
    def scenario_dir(self) -> Path:
        return SCENARIOS_DIR / self.name

    def scenario_path(self, exp: Experiment) -> Path:
        return self.scenario_dir / exp.file

    def analyse(self, results: Sequence[ExperimentResult], out_dir: Path) -> tuple[list[Figure], list[ComparisonRow]]:
        """Draw the figures into ``out_dir/figures/<name>/`` and return them with the
        comparison rows.  ``results`` are in the order of :attr:`experiments`."""
        raise NotImplementedError

    def notes(self) -> list[str]:
        """Extra paragraphs for the report (plain text, escaped by the report)."""
        return []


def point(stats: pd.DataFrame, component: str, probe: str, statistic: str,
          scale: float = 1.0) -> Optional[tuple[float, Optional[float], Optional[float]]]:
    """(mean, ci_low, ci_high) × ``scale`` of one statistic of a single-point
    experiment (the first row if there are several); None when absent."""
    if stats is None or stats.empty:
        return None
    sel = stats[(stats["component"] == component) & (stats["probe"] == probe) & (stats["statistic"] == statistic)]
    if sel.empty:
        return None
    r = sel.iloc[0]
    m = finite(r["mean"])
    if m is None:
        return None
    lo, hi = finite(r["ci_low"]), finite(r["ci_high"])
    return m * scale, None if lo is None else lo * scale, None if hi is None else hi * scale


def finite(x: Any) -> Optional[float]:
    """``x`` as a float, or None when it is missing, not a number or not finite."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def rel_path(p: Path | str, root: Path | str) -> str:
    """``p`` relative to ``root``, with forward slashes (figure paths in the report)."""
    return Path(p).resolve().relative_to(Path(root).resolve()).as_posix()
