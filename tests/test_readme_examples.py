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


# --------------------------------------------------------------------------- README commands
# Issue 44 item 6: the README is executable documentation. Every command of its ```sh
# blocks runs, in order (the pcap replay reads the capture the line before it writes),
# in a scratch copy of scenarios/, exactly as written (each takes seconds: a long run
# belongs in the ```text block, or gets --set scenario.duration=... in the README
# itself), and a comment's `prints "TEXT"` is checked against what the command prints.


def _split_comment(line: str) -> tuple[str, str]:
    """``command  # comment`` → (command, comment): the first ``#`` starting a word
    outside quotes."""
    quote = None
    for i, c in enumerate(line):
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip(), line[i + 1:].strip()
    return line.rstrip(), ""


def readme_commands() -> list[tuple[str, str]]:
    """(command, comment) of every command line of the README's ```sh and ```console
    blocks, continuation lines joined."""
    out = []
    for block in re.findall(r"```(?:sh|console)\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S):
        logical, comments = "", []
        for raw in block.splitlines():
            text, comment = _split_comment(raw)
            comments.append(comment)
            if text.endswith("\\"):
                logical += text[:-1].strip() + " "
                continue
            logical += text.strip()
            if logical:
                out.append((logical.strip(), " ".join(c for c in comments if c)))
            logical, comments = "", []
    return out


def test_readme_commands_are_concrete():
    cmds = [c for c, _ in readme_commands()]
    assert len(cmds) >= 20 and all(c.startswith("atmsim ") for c in cmds), cmds
    # a synopsis ([OPTION], FILE, ...) belongs in a ```text block: these run as written
    assert not [c for c in cmds if re.search(r"\[[-A-Z]|\.\.\.|scenarios/x\.toml", c)]
    assert sum('prints "' in comment for _, comment in readme_commands()) >= 4


def test_readme_commands_run_as_written_and_print_what_it_says(tmp_path):
    shutil.copytree(ROOT / "scenarios", tmp_path / "scenarios")
    exe = atmsim_cmd()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONWARNINGS", "COLUMNS")}
    prefix = "" if len(exe) == 1 else f"atmsim() {{ {' '.join(exe)} \"$@\"; }}; "
    if len(exe) == 1:
        env["PATH"] = f"{os.path.dirname(exe[0])}{os.pathsep}{env.get('PATH', '')}"
    for cmd, comment in readme_commands():
        p = subprocess.run(["bash", "-c", f"{prefix}{cmd}"], capture_output=True, text=True, cwd=tmp_path,
                           env=env, timeout=600)
        assert p.returncode == 0, (cmd, p.stderr[-2000:])
        for expected in re.findall(r'prints "([^"]*)"', comment):
            assert expected in p.stdout, (cmd, expected, p.stdout[-2000:])
