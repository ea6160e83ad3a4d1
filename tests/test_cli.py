"""The `atmsim` command: output formats, exit codes, one-line errors."""
from __future__ import annotations

import json

import pytest

from conftest import BASE, EXAMPLES, ROOT

POISSON = str(ROOT / "scenarios" / "examples" / "poisson_oc3.toml")
SHORT = ["--set", "scenario.duration=20 ms", "--set", "scenario.warmup=1 ms"]


def assert_one_line_error(proc, code=2, contains=()):
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    err = proc.stderr.strip()
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    assert len(err.splitlines()) == 1, err
    assert err.startswith("atmsim: error: "), err
    for c in contains:
        assert c in err, (c, err)
    return err


def line_of(text: str, needle: str) -> int:
    for i, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return i
    raise AssertionError(needle)


def test_run_table(cli):
    p = cli("run", POISSON, *SHORT, "--quiet")
    assert p.returncode == 0, p.stderr
    out = p.stdout
    for word in ("poisson-oc3", "fingerprint", "events", "wall time", "q_wait", "ledger"):
        assert word in out
    assert p.stderr == ""


def test_run_json(cli):
    p = cli("run", POISSON, *SHORT, "--seed", "3", "--run", "2", "--json")
    assert p.returncode == 0, p.stderr
    obj = json.loads(p.stdout)
    for key in ("scenario", "seed", "run", "fingerprint", "wall_s", "events", "probes", "ledger", "flows"):
        assert key in obj
    assert obj["scenario"] == "poisson-oc3" and obj["seed"] == 3 and obj["run"] == 2
    assert obj["probes"] and set(obj["probes"][0]) == {"component", "probe", "statistic", "value", "unit"}
    assert "NaN" not in p.stdout and "Infinity" not in p.stdout
    led = obj["ledger"]
    assert led["generated"] + led["replicated"] == led["delivered"] + sum(led["dropped"].values()) + led["in_flight"]


def test_run_json_nan_is_null(cli, write_scenario):
    # nothing reaches the fifo before the source starts: wait statistics are undefined
    text = BASE.replace('rate = "100 Mb/s"', 'rate = "100 Mb/s"\nstart = "1 s"')
    p = cli("run", str(write_scenario(text)), "--json")
    assert p.returncode == 0, p.stderr
    obj = json.loads(p.stdout)  # strict: json.loads accepts NaN, so also check the text
    assert "NaN" not in p.stdout
    assert any(row["value"] is None for row in obj["probes"])


def test_json_same_seed_same_fingerprint(cli):
    a = json.loads(cli("run", POISSON, *SHORT, "--json").stdout)
    b = json.loads(cli("run", POISSON, *SHORT, "--json").stdout)
    c = json.loads(cli("run", POISSON, *SHORT, "--run", "1", "--json").stdout)
    assert a["fingerprint"] == b["fingerprint"] and a["probes"] == b["probes"]
    assert a["fingerprint"] != c["fingerprint"]


def _value(obj, comp, probe, stat):
    for r in obj["probes"]:
        if (r["component"], r["probe"], r["statistic"]) == (comp, probe, stat):
            return r["value"]
    raise KeyError((comp, probe, stat))


def test_set_changes_results(cli):
    a = json.loads(cli("run", POISSON, *SHORT, "--json").stdout)
    b = json.loads(cli("run", POISSON, *SHORT, "--set", "mux.capacity=4 cells", "--json").stdout)
    assert _value(b, "mux", "q_drop_cells", "count") > _value(a, "mux", "q_drop_cells", "count")
    c = json.loads(cli("run", POISSON, *SHORT, "--set", "src.rate=50 Mb/s", "--json").stdout)
    assert _value(c, "src", "src_tx_rate", "mean") == pytest.approx(50, rel=0.05)


def test_misspelled_key_names_file_and_line(cli, write_scenario):
    text = BASE.replace('capacity = "64 cells"', 'capcity = "64 cells"')
    path = write_scenario(text, "typo.toml")
    err = assert_one_line_error(cli("run", str(path)), 2)
    assert f"typo.toml:{line_of(text, 'capcity')}:" in err
    assert "capacity" in err  # the suggestion


def test_unknown_kind_did_you_mean(cli, write_scenario):
    text = BASE.replace('kind = "fifo"', 'kind = "fifoo"')
    path = write_scenario(text, "kind.toml")
    err = assert_one_line_error(cli("run", str(path)), 2, contains=["did you mean"])
    assert f"kind.toml:{line_of(text, 'fifoo')}:" in err


@pytest.mark.parametrize("bad, value", [
    ("missing unit", '"100"'),
    ("zero rate", '"0 Mb/s"'),
    ("negative rate", '"-5 Mb/s"'),
    ("unknown unit", '"100 furlongs"'),
    ("not a string", "true"),
])
def test_bad_rate_values(cli, write_scenario, bad, value):
    text = BASE.replace('rate = "100 Mb/s"', f"rate = {value}")
    path = write_scenario(text, "rate.toml")
    err = assert_one_line_error(cli("run", str(path)), 2)
    assert "rate.toml:" in err, bad


def test_duplicate_component_name(cli, write_scenario):
    text = BASE + '\n[components.mux]\nkind = "fifo"\nphy = "OC-3c"\n'
    assert_one_line_error(cli("run", str(write_scenario(text, "dup.toml"))), 2, contains=["dup.toml"])


def test_toml_syntax_error(cli, write_scenario):
    text = BASE.replace('name = "t"', 'name = "t')
    assert_one_line_error(cli("run", str(write_scenario(text, "syntax.toml"))), 2, contains=["syntax.toml"])


def test_dangling_output_port(cli, write_scenario):
    text = BASE.replace('  "mux -> sink",\n', "")
    assert_one_line_error(cli("run", str(write_scenario(text, "dangle.toml"))), 2, contains=["dangle.toml"])


def test_connection_to_unknown_component(cli, write_scenario):
    text = BASE.replace('"mux -> sink"', '"mux -> snk"')
    assert_one_line_error(cli("run", str(write_scenario(text, "unk.toml"))), 2, contains=["did you mean"])


def test_doubly_connected_input(cli, write_scenario):
    # a link's input takes one connection (a fifo multiplexes several)
    text = """\
connections = ["a -> wan", "b -> wan", "wan -> sink"]

[scenario]
name = "t"
duration = "5 ms"

[components.a]
kind = "cbr"
rate = "10 Mb/s"

[components.b]
kind = "cbr"
rate = "10 Mb/s"

[components.wan]
kind = "link"
phy = "OC-3c"
length = "10 km"

[components.sink]
kind = "sink"
"""
    assert_one_line_error(cli("run", str(write_scenario(text, "twice.toml"))), 2, contains=["twice.toml"])


def test_unknown_port(cli, write_scenario):
    text = BASE.replace('"src -> mux"', '"src.output -> mux.in"')
    assert_one_line_error(cli("run", str(write_scenario(text, "port.toml"))), 2, contains=["port.toml"])


def test_file_not_found(cli):
    assert_one_line_error(cli("run", "does/not/exist.toml"), 2, contains=["does/not/exist.toml"])


def test_directory_instead_of_file(cli):
    assert_one_line_error(cli("run", str(ROOT / "scenarios")), 2)


def test_not_utf8(cli, tmp_path):
    p = tmp_path / "bin.toml"
    p.write_bytes(b"\xff\xfe\x00garbage[[[")
    assert_one_line_error(cli("run", str(p)), 2)


@pytest.mark.parametrize("arg", ["novalue", "=5", "mux.capacity=", "capacity=5"])
def test_bad_set_syntax(cli, arg):
    assert_one_line_error(cli("run", POISSON, "--set", arg), 2, contains=["--set"])


def test_set_unknown_key(cli):
    assert_one_line_error(cli("run", POISSON, "--set", "mux.capcity=4 cells"), 2)
    assert_one_line_error(cli("run", POISSON, "--set", "mux.capacity=-4 cells"), 2)
    assert_one_line_error(cli("run", POISSON, "--set", "nosuch.rate=4 Mb/s"), 2)


def test_usage_errors_exit_2(cli):
    p = cli("run")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    p = cli("run", POISSON, "--bogus")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    p = cli("frobnicate")
    assert p.returncode == 2 and "Traceback" not in p.stderr


def test_describe_lists_kinds(cli):
    p = cli("describe")
    assert p.returncode == 0, p.stderr
    for kind in ("cbr", "poisson", "onoff", "fifo", "link", "sink"):
        assert kind in p.stdout


def test_describe_kind_params(cli):
    p = cli("describe", "fifo")
    assert p.returncode == 0, p.stderr
    for word in ("capacity", "phy", "q_wait", "q_loss_ratio", "default", "inputs", "outputs"):
        assert word in p.stdout
    assert "inputs:  in (cells)" in p.stdout and "outputs: out (cells)" in p.stdout
    p = cli("describe", "onoff", "--json")
    info = json.loads(p.stdout)
    assert {"peak", "mean", "burst_factor"} <= {q["name"] for q in info["params"]}


def test_describe_unknown_kind(cli):
    assert_one_line_error(cli("describe", "fifoo"), 2, contains=["did you mean"])


def test_help(cli):
    p = cli("--help")
    assert p.returncode == 0
    for cmd in ("run", "describe", "validate", "bench"):
        assert cmd in p.stdout


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_examples_run_and_ledger_balances(cli, path):
    p = cli("run", str(path), "--json")
    assert p.returncode == 0, p.stderr
    obj = json.loads(p.stdout)
    led = obj["ledger"]
    assert led["generated"] > 0
    assert led["generated"] + led["replicated"] == led["delivered"] + sum(led["dropped"].values()) + led["in_flight"]
    for f in obj["flows"]:
        assert f["generated"] + f["replicated"] == f["delivered"] + f["dropped"] + f["in_flight"]
    # Examples stay small (measured by work done, not by wall time).
    assert obj["events"] < 20_000_000, "examples should take well under a second"


def test_check_wire_checks_the_tcp_pdus_and_keeps_the_trace(cli):
    path = str(ROOT / "scenarios" / "examples" / "tcp_window.toml")
    short = ("--set", "scenario.duration=0.5 s", "--set", "scenario.warmup=0.1 s")
    plain = json.loads(cli("run", path, *short, "--json").stdout)
    p = cli("run", path, *short, "--check-wire", "--json")
    assert p.returncode == 0, p.stderr
    checked = json.loads(p.stdout)
    assert checked["fingerprint"] == plain["fingerprint"] and checked["events"] == plain["events"]
    t = cli("run", path, *short, "--check-wire", "--quiet")
    assert t.returncode == 0, t.stderr
    line = next(x for x in t.stdout.splitlines() if x.startswith("check-wire"))
    assert int(line.split()[1].replace(",", "")) > 0 and "all equal" in line


def test_check_wire_must_be_a_boolean(cli):
    assert_one_line_error(cli("run", POISSON, "--set", "scenario.check_wire=maybe"), 2, contains=["check_wire", "true or false"])


@pytest.mark.parametrize("key, value, says", [
    # issue 44 item 10: the message says which way the value is wrong
    ("src.rate", "1e30 Mb/s", "'1e30 Mb/s': too large; the largest rate is 1.8e16 b/s (18,446,744 Gb/s)"),
    ("src.rate", "0.0001 b/s", "'0.0001 b/s': below the rate resolution; the smallest rate is 0.001 b/s"),
    ("scenario.duration", "0.1 ps",
     "'0.1 ps': below the 1 ps time resolution; the shortest nonzero time is 1 ps (or write 0 s)"),
    ("scenario.duration", "1e9 s", "'1e9 s': too large; the longest time is 18446744 s (about 213 days"),
])
def test_out_of_range_rate_or_time_says_what_is_wrong(cli, key, value, says):
    err = assert_one_line_error(cli("run", POISSON, "--set", f"{key}={value}"), 2)
    assert says in err, err
    assert "must be positive" not in err


def test_version_option(cli):
    import atmsim

    p = cli("--version")
    assert p.returncode == 0 and p.stdout == f"atmsim {atmsim.__version__}\n", (p.stdout, p.stderr)


def test_a_load_above_the_line_rate_is_one_warning_line_before_the_run(cli, write_scenario):
    """Issue 44 item 9: `MB/s` typed for `Mb/s` offers eight times the rate."""
    p = cli("run", str(write_scenario(BASE.replace('rate = "100 Mb/s"', 'rate = "100 MB/s"'))), "--quiet", "--json")
    assert p.returncode == 0, p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("atmsim: warning: ") and f":{line_of(BASE, '[components.mux]')}: components.mux: offered 800 Mb/s" in lines[0], lines[0]
    assert "line rate of 149.76 Mb/s" in lines[0] and "MB/s is megabytes" in lines[0], lines[0]
    # The same rate in Mb/s: no warning.
    p = cli("run", str(write_scenario(BASE)), "--quiet", "--json")
    assert p.returncode == 0 and p.stderr == "", p.stderr


def test_python_load_issues_the_overload_as_an_atmsim_warning(write_scenario):
    import warnings

    import atmsim
    from atmsim.exceptions import AtmsimWarning

    path = write_scenario(BASE.replace('rate = "100 Mb/s"', 'rate = "100 MB/s"'))
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        sc = atmsim.load(path)
    assert [w.category for w in got] == [AtmsimWarning], got
    assert sc.warnings == [str(got[0].message)] and "offered 800 Mb/s" in sc.warnings[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert atmsim.load(write_scenario(BASE, "plain.toml")).warnings == []
        # An override that brings it below the line rate loads without a warning.
        with pytest.warns(AtmsimWarning):
            over = atmsim.load(path)
        assert over.with_overrides({"src.rate": "100 Mb/s"}).warnings == []
