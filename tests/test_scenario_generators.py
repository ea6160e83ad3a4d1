"""The scenario files a paper's `gen.py` writes are committed (they are what `atmsim run`
and `atmsim reproduce` read); each generator must still write exactly those files, so
that an edit to one side alone (a file edited by hand, a generator changed and not run)
fails here instead of being undone by the next regeneration."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios"


def _generator(paper: str):
    spec = importlib.util.spec_from_file_location(f"gen_{paper}", SCENARIOS / paper / "gen.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("paper", ["buddhikot92", "domingo95", "lazarou96"])
def test_the_committed_files_are_what_the_generator_writes(paper):
    files = _generator(paper).generated()
    assert len(files) >= 5
    stale = [name for name, text in files.items() if (SCENARIOS / paper / name).read_text(encoding="utf-8") != text]
    assert not stale, f"scenarios/{paper}: run `python scenarios/{paper}/gen.py` and commit: {stale}"
    # And no committed .toml beside them that the generator no longer writes.
    on_disk = {str(p.relative_to(SCENARIOS / paper)) for p in (SCENARIOS / paper).rglob("*.toml")}
    assert on_disk == set(files), f"scenarios/{paper}: not generated: {sorted(on_disk - set(files))}"
