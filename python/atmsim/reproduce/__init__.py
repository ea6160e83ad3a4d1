"""``atmsim reproduce``: run a paper's experiments, draw its figures, write the report.

Every paper plugs in the same way (see docs/reproduce.md):

1. scenario files with a ``[sweep]`` table in ``scenarios/<name>/``;
2. a :class:`~atmsim.reproduce.base.Reproduction` subclass in
   ``atmsim/reproduce/<name>.py`` listing them as experiments and implementing
   ``analyse`` (figures via :mod:`atmsim.plot`, comparison rows);
3. one line in :data:`_BUILTIN` below.

:func:`reproduce` runs each experiment with :func:`atmsim.sweep.run_sweep` into
``DIR/results.sqlite`` (re-running resumes: completed runs are not recomputed), then
writes ``DIR/comparison.csv``, ``DIR/<name>.html`` per paper, ``DIR/report.html`` (the
paper's page, or an index for ``all``) and the figures under ``DIR/figures/<name>/``.
"""
from __future__ import annotations

import difflib
import importlib
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional, Sequence

from atmsim.exceptions import AtmsimError, ScenarioError
from atmsim.reproduce.base import (COMPARISON_COLUMNS, ComparisonRow, Experiment, ExperimentResult,
                                   Figure, Reproduction)

#: The reproduction names SPEC section 4 defines, in report order.
PAPERS: tuple[str, ...] = ("buddhikot92", "evans96", "domingo95", "dastangoo96", "lazarou96")

#: name → "module:Class" of the reproductions implemented so far.
_BUILTIN: dict[str, str] = {
    "buddhikot92": "atmsim.reproduce.buddhikot92:Buddhikot92",
    "dastangoo96": "atmsim.reproduce.dastangoo96:Dastangoo96",
    "domingo95": "atmsim.reproduce.domingo95:Domingo95",
    "evans96": "atmsim.reproduce.evans96:Evans96",
    "lazarou96": "atmsim.reproduce.lazarou96:Lazarou96",
}

_registry: dict[str, Callable[[], Reproduction]] = {}


def register(name: str, factory: Callable[[], Reproduction]) -> None:
    """Register (or replace) a reproduction under ``name``."""
    _registry[name] = factory


def available() -> list[str]:
    """Names that ``atmsim reproduce`` can run now, in SPEC order."""
    names = set(_BUILTIN) | set(_registry)
    return [p for p in PAPERS if p in names] + sorted(names - set(PAPERS))


def get(name: str) -> Reproduction:
    """The reproduction called ``name``; ScenarioError (exit 2 in the CLI) naming what
    is available, with a did-you-mean, for anything else."""
    if name in _registry:
        return _registry[name]()
    if name in _BUILTIN:
        module, _, cls = _BUILTIN[name].partition(":")
        return getattr(importlib.import_module(module), cls)()
    raise ScenarioError(unknown_message(name))


def unknown_message(name: str) -> str:
    avail = available()
    listing = f"available: {', '.join(avail + ['all'])}"
    if name in PAPERS:
        return f"reproduction {name!r} is not implemented yet; {listing}"
    close = difflib.get_close_matches(name, list(PAPERS) + ["all"], n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown reproduction {name!r}{hint}; {listing}"


def resolve(name: str) -> list[Reproduction]:
    """``all`` → every available reproduction; otherwise the one named."""
    if name == "all":
        return [get(n) for n in available()]
    return [get(name)]


@dataclass
class PaperOutcome:
    """One paper's results after :func:`reproduce`."""

    repro: Reproduction
    results: list[ExperimentResult]
    figures: list[Figure] = field(default_factory=list)
    rows: list[ComparisonRow] = field(default_factory=list)
    page: Optional[Path] = None

    @property
    def failures(self) -> int:
        return sum(r.failure_count() for r in self.results)


@dataclass
class ReproduceOutcome:
    out_dir: Path
    papers: list[PaperOutcome]
    report: Path
    comparison: Path
    db: Path

    @property
    def failures(self) -> int:
        return sum(p.failures for p in self.papers)


def _run_sweep():
    try:
        from atmsim.sweep import run_sweep
    except ImportError as exc:  # only while the sweep layer is missing from a checkout
        raise ScenarioError(f"atmsim reproduce needs atmsim.sweep.run_sweep, which is unavailable: {exc}") from None
    return run_sweep


def run_experiments(repro: Reproduction, db: Path, *, quick: bool, executor: str = "local",
                    workers: Optional[int] = None, scheduler: Optional[str] = None,
                    progress: bool = False) -> list[ExperimentResult]:
    """Run every experiment of ``repro`` as one sweep each, all into ``db``."""
    run_sweep = _run_sweep()
    out = []
    for exp in repro.experiments:
        path = repro.scenario_path(exp)
        if not path.is_file():
            raise ScenarioError(f"{path}: no such file (scenario of reproduction {repro.name!r}, experiment {exp.key!r})")
        if progress:
            print(f"{repro.name}: {exp.key} ({path.name})", file=sys.stderr, flush=True)
        # allow_mixed: OUT/results.sqlite is a working store that `make run` refreshes after
        # scenario edits; each experiment's statistics use only its own runs, and the
        # report names the version that made them (docs/experiments.md, "Resume semantics")
        sr = run_sweep(str(path), str(db), quick=quick, executor=executor, workers=workers,
                       scheduler=scheduler, progress=progress, allow_mixed=True,
                       overrides=dict(exp.overrides) or None, precision=exp.precision)
        out.append(ExperimentResult(exp, path, sr.stats, sr.runs, getattr(sr, "failures", None),
                                    getattr(sr, "series", None), getattr(sr, "values", None)))
    return out


def _analyse_stored(name: str, db: str, out_dir: str, quick: bool) -> tuple[list[Figure], list[ComparisonRow]]:
    """In a pool worker: the built-in reproduction ``name``'s figures and rows from the
    runs stored in ``db`` (all done: nothing runs; the results a resumed reproduction
    analyses, which equal the whole run's)."""
    repro = get(name)
    return repro.analyse(run_experiments(repro, Path(db), quick=quick, workers=1), Path(out_dir))


def analyse_all(papers: Sequence[PaperOutcome], db: Path, out: Path, *, quick: bool,
                workers: Optional[int] = None) -> list[tuple[list[Figure], list[ComparisonRow]]]:
    """Every paper's ``analyse`` (figures and comparison rows), in order. With more than
    one paper and more than one core, the built-in papers are analysed side by side in
    a local pool of ``workers`` processes (default: one per core), each reading its
    paper's runs back from the store: drawing the figures is most of an analysis, on one
    core. Reproductions registered at run time (:func:`register`) are analysed here,
    where they are known."""
    from atmsim.executors import LocalExecutor, default_workers

    n = min(len(papers), workers or default_workers())
    pooled = [i for i, p in enumerate(papers) if p.repro.name in _BUILTIN and p.repro.name not in _registry]
    if n < 2 or len(pooled) < 2:
        return [p.repro.analyse(p.results, out) for p in papers]
    # the papers with the most to read (and, mostly, to draw) first, so that no long one starts last
    pooled.sort(key=lambda i: -sum(len(r.stats) + (0 if r.series is None else len(r.series)) for r in papers[i].results))
    done = dict(zip(pooled, LocalExecutor(n).call_all(
        _analyse_stored, [(papers[i].repro.name, str(db), str(out), quick) for i in pooled])))
    return [done[i] if i in done else p.repro.analyse(p.results, out) for i, p in enumerate(papers)]


def reproduce(name: str, out_dir: Path | str, *, quick: bool = False, executor: str = "local",
              workers: Optional[int] = None, scheduler: Optional[str] = None,
              progress: bool = False) -> ReproduceOutcome:
    """Run one reproduction (or ``all``) and write everything into ``out_dir``."""
    from atmsim import report

    repros = resolve(name)  # fail on a bad name before creating anything
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ScenarioError(f"{out}: cannot create output directory: {exc.strerror or exc}") from None
    db = out / "results.sqlite"
    papers: list[PaperOutcome] = []
    for repro in repros:
        results = run_experiments(repro, db, quick=quick, executor=executor, workers=workers,
                                  scheduler=scheduler, progress=progress)
        papers.append(PaperOutcome(repro, results))
    try:
        for p, (figures, rows) in zip(papers, analyse_all(papers, db, out, quick=quick, workers=workers)):
            p.figures, p.rows = figures, rows
        comparison = report.write_comparison_csv(out / "comparison.csv",
                                                 [(p.repro.name, p.rows) for p in papers])
        ctx = report.ReportContext.collect(quick=quick)
        for p in papers:
            p.page = report.write_paper_page(out, p, ctx)
        if name == "all":
            rep = report.write_index(out, papers, ctx)
        else:
            rep = out / "report.html"
            rep.write_text(papers[0].page.read_text(encoding="utf-8"), encoding="utf-8")
    except OSError as exc:  # full disk, read-only directory: one line, not a traceback
        raise AtmsimError(f"{out}: cannot write the report: {exc.strerror or exc}") from None
    return ReproduceOutcome(out, papers, rep, comparison, db)


__all__ = [
    "PAPERS", "COMPARISON_COLUMNS", "ComparisonRow", "Experiment", "ExperimentResult", "Figure",
    "Reproduction", "PaperOutcome", "ReproduceOutcome", "available", "get", "register", "reproduce",
    "resolve", "unknown_message",
]
