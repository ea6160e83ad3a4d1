"""The README and examples work as written (issue 19 item 7)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import warnings
from collections import Counter

import pytest

import atmsim
from atmsim.exceptions import AtmsimError, AtmsimWarning
from conftest import BASE, ROOT, atmsim_cmd

README = ROOT / "README.md"


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_readme_python_snippet_runs_as_printed(monkeypatch):
    blocks = [b for b in _python_blocks(README.read_text(encoding="utf-8")) if "atmsim.load(" in b]
    assert len(blocks) == 1, blocks
    monkeypatch.chdir(ROOT)  # its paths are relative to the repository, as it says
    env: dict = {}
    exec(compile(blocks[0], "README.md", "exec"), env)  # noqa: S102 - the snippet is the test
    assert len(env["tcp"].plot_series().axes) == len(env["tcp"].raw["series"]) > 0
    assert env["res"].value("mux", "q_wait", "mean") > 0


def test_plot_series_without_series_says_how_to_ask_for_them():
    res = atmsim.run(atmsim.loads(BASE, "s.toml"))
    with pytest.raises(AtmsimError, match=r"ask for them in the scenario file, e\.g\. \[probes\] series = "):
        res.plot_series()


def test_no_path_points_outside_the_repository():
    files = [README, *sorted((ROOT / "docs").rglob("*.md"))]
    bad = []
    for f in files:
        text = f.read_text(encoding="utf-8")
        for needle in ("/work/", "../shared", "/home/", "/tmp/"):
            if needle in text:
                bad.append(f"{f.relative_to(ROOT)}: {needle}")
        for target in re.findall(r"\]\(([^)#\s]+)", text):  # markdown links
            if "://" in target or target.startswith("mailto:"):
                continue
            dest = (f.parent / target).resolve()
            if ROOT.resolve() not in dest.parents and dest != ROOT.resolve():
                bad.append(f"{f.relative_to(ROOT)}: link {target}")
    assert not bad, bad


def _cli(*args: str, env_extra: dict | None = None, cwd=ROOT) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONWARNINGS", "COLUMNS")}
    env.update(env_extra or {})
    return subprocess.run(atmsim_cmd() + list(args), capture_output=True, text=True, timeout=300, cwd=cwd, env=env)


@pytest.mark.parametrize("name", ["bellcore_trace.toml", "iofm_shaping.toml"])
def test_trace_examples_find_their_trace_wherever_copied(tmp_path, name):
    copy = tmp_path / "elsewhere" / name
    copy.parent.mkdir()
    shutil.copy(ROOT / "scenarios" / "examples" / name, copy)
    p = _cli("run", str(copy), "--quiet", "--set", "scenario.duration=50 ms", "--set", "scenario.warmup=0 s",
             cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "trace_pdus" in p.stdout


def test_unknown_shipped_trace_lists_the_names(tmp_path):
    text = (ROOT / "scenarios" / "examples" / "bellcore_trace.toml").read_text(encoding="utf-8")
    assert 'file = "data:BC-pAug89-small.TL"' in text
    s = tmp_path / "s.toml"
    s.write_text(text.replace("data:BC-pAug89-small.TL", "data:BC-pAug98.TL"))
    p = _cli("run", str(s), "--quiet")
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    line = next(i for i, l in enumerate(s.read_text().splitlines(), 1) if "data:BC-pAug98.TL" in l)
    assert p.stderr.startswith(f"atmsim: error: {s}:{line}: components.src.file: 'data:BC-pAug98.TL': no shipped trace")
    assert "valid: data:BC-pAug89-small.TL, data:starwars.frames.old" in p.stderr


@pytest.mark.parametrize("columns", [60, 100])
@pytest.mark.parametrize("args", [("describe",), ("describe", "fifo"), ("describe", "host")])
def test_describe_fits_the_terminal_width(args, columns):
    p = _cli(*args, env_extra={"COLUMNS": str(columns)})
    assert p.returncode == 0, p.stderr
    wide = [l for l in p.stdout.splitlines() if len(l) > columns]
    assert not wide, wide
    # nothing is lost: the same characters (but the rules' dashes), only placed on more lines
    full = _cli(*args)

    def chars(text):
        return Counter(c for line in text.splitlines() if set(line.strip()) - {"-", " "} for c in line if not c.isspace())

    assert chars(full.stdout) == chars(p.stdout)


def test_run_table_fits_the_terminal_width():
    p = _cli("run", "scenarios/examples/tcp_window.toml", "--quiet",
             "--set", "scenario.duration=0.2 s", env_extra={"COLUMNS": "72"})
    assert p.returncode == 0, p.stderr
    wide = [l for l in p.stdout.splitlines() if len(l) > 72 and not l.startswith("ledger")]
    assert not wide, wide


KEEP = BASE + '\n[probes]\nkeep = ["mux.*", "snik.*"]\n'


def test_keep_glob_matching_nothing_is_a_warning(tmp_path):
    s = tmp_path / "s.toml"
    s.write_text(KEEP)
    p = _cli("run", str(s), "--quiet")
    assert p.returncode == 0, p.stderr
    line = next(i for i, l in enumerate(KEEP.splitlines(), 1) if l.startswith("keep"))
    assert p.stderr.strip() == (
        f"atmsim: warning: {s}:{line}: probes.keep[1]: 'snik.*' matches no probe row, so it keeps nothing; "
        "rows are COMPONENT.PROBE, e.g. src.src_tx_cells, src.src_tx_rate, mux.q_rx_cells"), p.stderr
    with pytest.warns(AtmsimWarning, match=r"probes\.keep\[1\]: 'snik\.\*' matches no probe row"):
        atmsim.run(atmsim.loads(KEEP, "s.toml"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = atmsim.run(atmsim.loads(KEEP.replace("snik.*", "sink/*"), "s.toml"))
    assert res.warnings == []


@pytest.mark.parametrize("value", ["1e30 cells", "1e18 B", "1e16 cells"])
def test_huge_capacity_is_rejected_not_unlimited(tmp_path, value):
    s = tmp_path / "s.toml"
    s.write_text(BASE)
    p = _cli("run", str(s), "--quiet", "--set", f"mux.capacity={value}")
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert "a size must be at most 2^53" in p.stderr and 'write "unlimited" for no limit' in p.stderr
