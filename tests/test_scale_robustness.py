"""Issue 44 items 1 and 5: memory linear in the number of components, and a cell
trace streamed to its file in bounded memory, with the rows the run booked."""
from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd

from atmsim.api import TRACE_COLUMNS, load
from conftest import ROOT, run_cli

POISSON = str(ROOT / "scenarios" / "examples" / "poisson_oc3.toml")


def _in_child(code: str) -> dict:
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


def _pairs_peak(n: int) -> int:
    return _in_child(f"import json; from atmsim.bench import _pairs_child; print(json.dumps(_pairs_child({n})))")["peak_rss_bytes"]


def test_memory_per_pair_does_not_grow_with_the_number_of_pairs():
    # N independent cbr -> sink pairs: each sink held per-flow books up to the largest
    # flow id it saw (sink k: k of them), so memory grew with N² (4,000 pairs: 782 MB;
    # 8,000 would need about 3 GB). The process's fixed part (its imports) is its peak
    # at 10 pairs, taken off; doubling the pairs at most doubles the rest (plus slack).
    base, mid, large = (_pairs_peak(n) for n in (10, 8_000, 16_000))
    assert mid - base < 250 * 2**20, "8,000 pairs in well under 250 MiB"
    assert large - base <= 2.5 * (mid - base), (mid - base, large - base)


def test_a_streamed_trace_has_the_rows_of_the_trace_held_in_memory(tmp_path):
    # 150 ms at 90% load: about 48,000 cells and 144,000 rows, three chunks of 65,536
    # rows merged; every row as the in-memory trace has it, in the same order.
    sc = load(POISSON).with_overrides({"scenario.duration": "150 ms", "scenario.warmup": "0 s"})
    held = sc.with_overrides({"trace.cells": "true"}).run().cell_trace
    out = tmp_path / "t.csv"
    res = sc.run(cell_trace=out)
    assert res.raw["trace_rows"] == len(held) > 2 * 65_536
    streamed = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert list(streamed.columns) == TRACE_COLUMNS
    assert streamed["event"].tolist() == held["event"].tolist()
    assert streamed["seq"].astype(int).tolist() == held["seq"].tolist()
    assert streamed["component"].tolist() == held["component"].tolist()
    # times are exact decimals of the integer picoseconds, equal to the floats held
    assert ((streamed["time_s"].astype(float) - held["time_s"]).abs() < 0.5e-12).all(), "the same instants"
    assert not streamed["time_s"].str.contains("e|9999999", regex=True).any()
    back = res.cell_trace
    assert list(back.columns) == TRACE_COLUMNS and back.dtypes.equals(held.dtypes), "Result.cell_trace reads the file back"
    assert back["carries"].tolist() == held["carries"].tolist() and back["flags"].tolist() == held["flags"].tolist()
    assert [p.name for p in tmp_path.iterdir()] == ["t.csv"], "no spill file left"


def test_a_long_trace_streams_in_bounded_memory(tmp_path):
    # The whole 1 s run: 958,000 rows; held in memory it took 874 MB.
    out = tmp_path / "full.csv"
    code = ("import json, atmsim; from atmsim.memory import peak_bytes; sc = atmsim.load(%r); before = peak_bytes(); "
            "r = sc.run(cell_trace=%r, progress=False); "
            "print(json.dumps({'rows': r.raw['trace_rows'], 'grew': peak_bytes() - before}))" % (POISSON, str(out)))
    got = _in_child(code)
    assert got["rows"] > 900_000
    assert got["grew"] < 64 * 2**20, got
    with open(out, encoding="utf-8") as fh:
        assert sum(1 for _ in fh) == got["rows"] + 1


def test_a_table_too_long_to_read_is_one_line(tmp_path):
    # 1,100 pairs: 20,900 probe rows, past the 20,000 a printed table holds.
    from atmsim.bench import pairs_scenario

    f = tmp_path / "pairs.toml"
    f.write_text(pairs_scenario(1_100), encoding="utf-8")
    p = run_cli("run", str(f), "-q")
    assert p.returncode == 0, p.stderr
    assert "probes       20,900 rows, more than a table shows (20,000): write them with --json" in p.stdout
    assert "statistic" not in p.stdout, "no probe table"
    assert "1,099  s1099" in p.stdout, "the flows table (1,100 rows) is still printed"
    full = run_cli("run", str(f), "-q", "--json")
    assert len(json.loads(full.stdout)["probes"]) == 20_900


#: Cells pile up in an unlimited buffer (1 Gb/s in, 1 Mb/s out): about 110 MB a
#: simulated second.
GROW = ('connections = ["src -> mux", "mux -> sink"]\n[scenario]\nduration = "10 s"\n'
        '[components.src]\nkind = "cbr"\nrate = "1 Gb/s"\n'
        '[components.mux]\nkind = "fifo"\nrate = "1 Mb/s"\ncapacity = "unlimited"\n'
        '[components.sink]\nkind = "sink"\n')


def _atmsim_in_150_mb(*args: str) -> subprocess.CompletedProcess:
    """`atmsim ARGS` with a 150 MB limit (ATMSIM_MEMORY_LIMIT stands for the machine's
    free memory)."""
    import os

    from conftest import atmsim_cmd

    env = {**os.environ, "ATMSIM_MEMORY_LIMIT": str(150 * 2**20)}
    return subprocess.run(atmsim_cmd() + list(args), capture_output=True, text=True, timeout=120, env=env)


def test_a_run_past_its_memory_stops_with_one_line(tmp_path):
    # The run stops at the limit with one line, not the OOM killer.
    f = tmp_path / "grow.toml"
    f.write_text(GROW, encoding="utf-8")
    p = _atmsim_in_150_mb("run", str(f), "-q")
    assert p.returncode == 1, p.stderr
    # The overload is meant: loading warns of it (issue 44 item 9), then the run stops.
    warning, *lines = p.stderr.strip().splitlines()
    assert warning.startswith("atmsim: warning: ") and "components.mux: offered 1000 Mb/s" in warning, warning
    assert len(lines) == 1 and lines[0].startswith("atmsim: error: out of memory: the run had grown to "), lines
    assert "past the 0.15 GiB this machine had for it" in lines[0]


def test_a_sweep_run_past_its_memory_is_recorded_failed_with_that_line(tmp_path):
    # The same growth in each of a local sweep's two workers: each run stops at the limit
    # and is recorded as failed with the one line; the sweep finishes (exit 1: failures).
    f = tmp_path / "grow.toml"
    f.write_text(GROW + "[sweep]\nreplications = 2\n", encoding="utf-8")
    db = tmp_path / "r.sqlite"
    p = _atmsim_in_150_mb("sweep", str(f), "--db", str(db), "--workers", "2")
    assert p.returncode == 1, p.stderr
    assert "2: 0 done, 2 failed" in p.stdout
    from atmsim import export

    runs = export.frame(str(db), "runs")
    assert list(runs["status"]) == ["failed", "failed"]
    assert all(e.startswith("out of memory: the run had grown to ") and "past the 0.15 GiB" in e for e in runs["error"])


def test_the_workers_of_a_local_sweep_share_the_machines_memory(monkeypatch):
    from atmsim import memory

    monkeypatch.delenv("ATMSIM_MEMORY_LIMIT", raising=False)
    monkeypatch.setattr(memory, "available_bytes", lambda: 10 * memory.GIB)
    monkeypatch.setattr(memory, "resident_bytes", lambda: memory.GIB)
    assert memory.limit_bytes() == memory.GIB + 9 * memory.GIB
    assert memory.limit_bytes(2) == memory.GIB + int(4.5 * memory.GIB)
    assert memory.MemoryGuard(share=4).limit == memory.GIB + int(0.9 * 10 * memory.GIB / 4)
