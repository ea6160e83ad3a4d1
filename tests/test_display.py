"""Numbers shown as they are (issue 19 item 3): counters as exact integers, one unit per
quantity (bit rates in one unit, --units), progress totals that read like times."""
from __future__ import annotations

import io
import json

import pytest

from atmsim.progress import RunProgress, time_bar_format
from atmsim.units import fmt_value
from conftest import ROOT

POISSON = str(ROOT / "scenarios" / "examples" / "poisson_oc3.toml")
TCP = str(ROOT / "scenarios" / "examples" / "tcp_window.toml")


def _table_rows(stdout: str) -> dict[tuple[str, str, str], tuple[str, str]]:
    """{(component, probe, statistic): (value text, unit)} of `atmsim run`'s probe table."""
    lines = stdout.splitlines()
    start = next(i for i, l in enumerate(lines) if l.split()[:2] == ["component", "probe"])
    rows, comp = {}, ""
    for line in lines[start + 2:]:
        if not line.strip() or line.startswith("("):
            break
        head = line[:len(line) - len(line.lstrip())]
        parts = line.split()
        if head == "":
            comp, parts = parts[0], parts[1:]
        probe, stat, value, unit = parts[0], parts[1], parts[2], " ".join(parts[3:])
        rows[(comp, probe, stat)] = (value, unit)
    return rows


@pytest.mark.parametrize("x, text", [(95358100.0, "95358100"), (2.0 ** 53, "9007199254740992"), (-3.0, "-3"),
                                     (1277346, "1277346"), (135.3721, "135.372"), (12345678.25, "12345678")])
def test_fmt_value(x, text):
    assert fmt_value(x) == text


def test_counters_print_as_exact_integers(cli):
    # 4 s of the Poisson source: more than 10^6 cells, where 6 significant digits were
    # printed as 1.26e+06
    args = [POISSON, "--set", "scenario.duration=4 s", "--quiet"]
    table = cli("run", *args)
    assert table.returncode == 0, table.stderr
    obj = json.loads(cli("run", *args, "--json").stdout)
    rows = _table_rows(table.stdout)
    counts = [r for r in obj["probes"] if r["statistic"] == "count"]
    assert any(r["value"] > 1e6 for r in counts)
    for r in counts:
        value, _unit = rows[(r["component"], r["probe"], r["statistic"])]
        assert value == str(int(r["value"])), (r, value)
    assert "e+" not in table.stdout


def _tcp_rows(cli, *extra):
    args = [TCP, "--set", "scenario.duration=0.3 s", "--quiet"]
    table = cli("run", *args, *extra)
    assert table.returncode == 0, table.stderr
    return _table_rows(table.stdout), json.loads(cli("run", *args, "--json").stdout)


def test_bit_rates_share_one_unit_across_kinds(cli):
    rows, obj = _tcp_rows(cli)
    # the host reports TCP throughput in b/s, sinks, sources and queues in Mb/s
    assert "b/s" in {r["unit"] for r in obj["probes"]}
    shown = {unit for _v, unit in rows.values()}
    assert shown & {"b/s", "kb/s", "Mb/s", "Gb/s", "B/s"} == {"Mb/s"}
    for r in obj["probes"]:
        if r["unit"] == "b/s" and r["value"]:
            value, unit = rows[(r["component"], r["probe"], r["statistic"])]
            assert unit == "Mb/s" and float(value) == pytest.approx(r["value"] / 1e6, rel=1e-5)


def test_units_option_chooses_the_rate_unit(cli):
    rows, obj = _tcp_rows(cli, "--units", "kb/s")
    for r in obj["probes"]:
        if r["unit"] in ("b/s", "Mb/s") and r["value"]:
            value, unit = rows[(r["component"], r["probe"], r["statistic"])]
            factor = 1e-3 if r["unit"] == "b/s" else 1e3
            assert unit == "kb/s" and float(value) == pytest.approx(r["value"] * factor, rel=1e-5)


@pytest.mark.parametrize("units", [["--units", "kb/s,us"], ["--units", "us", "--units", "kb/s"]])
def test_units_option_chooses_the_time_unit_too(cli, units):
    # issue 44 item 11: --units covers times (delays, waits, RTTs) as well as bit rates
    rows, obj = _tcp_rows(cli, *units)
    times = [r for r in obj["probes"] if r["unit"] == "s" and r["value"]]
    assert times
    for r in times:
        value, unit = rows[(r["component"], r["probe"], r["statistic"])]
        assert unit == "us" and float(value) == pytest.approx(r["value"] * 1e6, rel=1e-5), (r, value)
    for r in obj["probes"]:
        if r["unit"] == "b/s" and r["value"]:
            assert rows[(r["component"], r["probe"], r["statistic"])][1] == "kb/s"


def test_two_units_of_one_quantity_are_refused(cli):
    p = cli("run", POISSON, "--units", "ms,us", "--quiet")
    assert p.returncode == 2 and p.stderr.strip().count("\n") == 0
    assert "atmsim: error: --units 'us': a second time unit (after 'ms'); give one per quantity" in p.stderr


def test_bad_units_is_one_line(cli):
    p = cli("run", POISSON, "--units", "furlongs", "--quiet")
    assert p.returncode == 2 and p.stderr.strip().count("\n") == 0
    assert "atmsim: error: --units 'furlongs'" in p.stderr and "valid: b/s, kb/s, Mb/s, Gb/s" in p.stderr
    assert "s, ms, us, µs, ns, ps (times)" in p.stderr


@pytest.mark.parametrize("done, total, text", [(1500.0, 2000.0, "1500/2000 s"), (0.05, 0.1, "0.050/0.1 s"),
                                               (3.5, 10.0, "3.5/10 s")])
def test_progress_total_reads_like_a_time(done, total, text):
    from tqdm import tqdm

    line = tqdm.format_meter(done, total, elapsed=1.0, ncols=100, prefix="run", bar_format=time_bar_format(total))
    assert text in line and "e+" not in line, line


def test_run_progress_uses_the_time_format():
    buf = io.StringIO()
    with RunProgress("run", enabled=True, delay_s=0.0, stream=buf) as bar:
        bar(0.0, 2000.0)
    assert "0/2000 s simulated" in buf.getvalue(), buf.getvalue()
