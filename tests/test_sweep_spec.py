"""Sweep specifications: parsing, points, seeds and every kind of bad spec."""
from __future__ import annotations

import re

import pytest

from atmsim.exceptions import ScenarioError
from atmsim.sweep import canonical_point, fnv1a64, load_sweep, point_seed, run_key
from conftest import BASE
from test_cli import assert_one_line_error, line_of


def spec_file(write_scenario, sweep: str, base: str = BASE, name: str = "s.toml"):
    text = base + "\n" + sweep
    return write_scenario(text, name), text


def test_grid_range_zip_points(write_scenario):
    path, _ = spec_file(write_scenario, """
[sweep]
replications = 3
quick_replications = 1
[sweep.grid]
"src.rate" = ["80 Mb/s", "100 Mb/s"]
"mux.capacity" = { from = 8, to = 24, step = 8, unit = "cells" }
[sweep.zip]
"src.start" = ["0 s", "1 ms"]
"scenario.warmup" = ["0 s", "1 ms"]
[sweep.quick]
"scenario.duration" = "2 ms"
""")
    spec = load_sweep(str(path))
    assert spec.keys == ["src.rate", "mux.capacity", "src.start", "scenario.warmup"]
    assert len(spec.points) == 2 * 3 * 2
    # last axis varies fastest; zip keys move together
    assert spec.points[0] == {"src.rate": "80 Mb/s", "mux.capacity": "8 cells", "src.start": "0 s",
                              "scenario.warmup": "0 s"}
    assert spec.points[1] == {"src.rate": "80 Mb/s", "mux.capacity": "8 cells", "src.start": "1 ms",
                              "scenario.warmup": "1 ms"}
    assert [p["mux.capacity"] for p in spec.points[:6:2]] == ["8 cells", "16 cells", "24 cells"]
    assert spec.replications == 3 and spec.replications_for(True) == 1
    assert spec.quick_overrides == {"scenario.duration": "2 ms"}
    assert spec.target is None


def test_defaults_and_numbers(write_scenario):
    # replications default to [scenario] replications; numbers and float ranges
    base = BASE.replace('duration = "5 ms"', 'duration = "5 ms"\nreplications = 4')
    path, _ = spec_file(write_scenario, """
[sweep.grid]
"scenario.seed" = [1, 2]
"mux.capacity" = { from = 0.5, to = 1.0, step = 0.25, unit = "KiB" }
""", base=base)
    spec = load_sweep(str(path))
    assert spec.replications == 4 and spec.quick_replications == 2
    assert [p["mux.capacity"] for p in spec.points[:3]] == ["0.5 KiB", "0.75 KiB", "1 KiB"]
    assert spec.written[0]["scenario.seed"] == 1 and spec.points[0]["scenario.seed"] == "1"


def test_no_sweep_table_is_one_point(write_scenario):
    spec = load_sweep(str(write_scenario(BASE)))
    assert spec.points == [{}] and spec.keys == [] and spec.replications == 1


# --------------------------------------------------------------------------- seeds
def _independent_fnv1a_64(text: str) -> int:
    """FNV-1a, 64 bit, written from the reference description (not atmsim's code)."""
    acc = 14695981039346656037
    for octet in bytearray(text, "utf-8"):
        acc = ((acc ^ octet) * 1099511628211) % 2**64
    return acc


def test_fnv_vectors():
    for data, expected in ((b"", 0xCBF29CE484222325), (b"a", 0xAF63DC4C8601EC8C), (b"foobar", 0x85944171F73967E8)):
        assert fnv1a64(data) == expected


def test_seed_formula_is_stable():
    point = {"src.rate": "100 Mb/s", "mux.capacity": "8 cells"}
    assert canonical_point(point) == '{"mux.capacity":"8 cells","src.rate":"100 Mb/s"}'
    expected = 5997448379229580171  # hard-coded: changing it breaks every stored sweep
    text = 'atmsim-sweep-v1|1|{"mux.capacity":"8 cells","src.rate":"100 Mb/s"}'
    assert _independent_fnv1a_64(text) & (2**63 - 1) == expected
    assert point_seed(1, point) == expected
    assert point_seed(2, point) != expected
    assert 0 <= point_seed(7, {}) < 2**63


def test_seeds_ignore_comments_but_follow_scenario_seed(write_scenario):
    sweep = '[sweep.grid]\n"mux.capacity" = ["8 cells", "16 cells"]\n'
    a = load_sweep(str(spec_file(write_scenario, sweep, name="a.toml")[0]))
    b = load_sweep(str(spec_file(write_scenario, "# a comment\n\n" + sweep, name="b.toml")[0]))
    c = load_sweep(str(spec_file(write_scenario, sweep, base=BASE.replace('name = "t"', 'name = "t"\nseed = 9'),
                                 name="c.toml")[0]))
    seeds = lambda s: [s.seed_of(i) for i in range(len(s.points))]  # noqa: E731
    assert seeds(a) == seeds(b)
    assert seeds(a) != seeds(c)
    assert len(set(seeds(a))) == 2
    # the store key follows the file text (a re-run of an edited file recomputes)
    assert a.scenario_hash != b.scenario_hash
    assert run_key(a.scenario_hash, a.points[0], 0, False) != run_key(a.scenario_hash, a.points[0], 1, False)
    assert run_key(a.scenario_hash, a.points[0], 0, False) != run_key(a.scenario_hash, a.points[0], 0, True)


# --------------------------------------------------------------------------- bad specs
BAD = {
    "empty_grid": ("[sweep.grid]\n", "sweep.grid", "[sweep.grid]", "empty grid"),
    "empty_list": ('[sweep.grid]\n"mux.capacity" = []\n', "mux.capacity", '"mux.capacity" = []', "empty list"),
    "zip_unequal": ('[sweep.zip]\n"src.rate" = ["80 Mb/s", "90 Mb/s"]\n"src.start" = ["0 s"]\n',
                    "equal lengths", '"src.start"', "src.rate"),
    "step_zero": ('[sweep.grid]\n"mux.capacity" = { from = 8, to = 64, step = 0, unit = "cells" }\n',
                  "step", "step = 0", "> 0"),
    "from_gt_to": ('[sweep.grid]\n"mux.capacity" = { from = 64, to = 8, step = 8, unit = "cells" }\n',
                   "greater than", "from = 64", "inclusive"),
    "unit_mismatch": ('[sweep.grid]\n"src.rate" = ["20 Mb/s", "3 ms"]\n', "is a time, but a rate is needed",
                      '"src.rate" =', "src.rate"),
    "bad_param": ('[sweep.grid]\n"mux.capacty" = ["8 cells"]\n', "did you mean 'capacity'", '"mux.capacty"',
                  "unknown parameter"),
    "bad_component": ('[sweep.grid]\n"mxu.capacity" = ["8 cells"]\n', "did you mean 'mux'", '"mxu.capacity"',
                      "no component"),
    "in_grid_and_zip": ('[sweep.grid]\n"src.rate" = ["80 Mb/s"]\n[sweep.zip]\n"src.rate" = ["90 Mb/s"]\n',
                        "both", '[sweep.zip]', "src.rate"),
    "unknown_key": ("[sweep]\nreplication = 3\n", "did you mean 'replications'", "replication = 3", "valid:"),
    "bad_replications": ("[sweep]\nreplications = 0\n", "from 1 to 1000000", "replications = 0", "replications"),
    "no_dot": ('[sweep.grid]\ncapacity = ["8 cells"]\n', "COMPONENT.PARAM", 'capacity = ["8', "--set"),
    "range_unknown": ('[sweep.grid]\n"mux.capacity" = { from = 8, to = 9, stp = 1 }\n', "did you mean 'step'",
                      '"mux.capacity"', "range"),
    "duplicate": ('[sweep.grid]\n"mux.capacity" = ["8 cells", "8 cells"]\n', "twice", '"mux.capacity"', "distinct"),
    "target_probe": ('[sweep]\ntarget = { component = "mux", probe = "q_loss_rato", statistic = "value", '
                     'rel_half_width = 0.1, max_replications = 5 }\n', "did you mean 'q_loss_ratio'", "target =",
                     "no probe"),
    "combination": ('[sweep.grid]\n"scenario.duration" = ["2 ms", "20 ms"]\n"scenario.warmup" = ["1 ms", "4 ms"]\n',
                    "warm-up must be shorter", "[sweep.grid]", '"scenario.warmup":"4 ms"'),
    "quick_unit": ('[sweep.quick]\n"scenario.duration" = "5 cells"\n', "a time is needed", '"scenario.duration"',
                   "sweep.quick"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_spec_one_line_with_line_number(write_scenario, case):
    sweep, must, line_needle, also = BAD[case]
    path, text = spec_file(write_scenario, sweep)
    with pytest.raises(ScenarioError) as ei:
        load_sweep(str(path))
    msg = str(ei.value)
    assert "\n" not in msg
    m = re.match(r"^(.+?):(\d+): (sweep[^:]*): (.+)$", msg)
    assert m, msg
    assert m.group(1) == str(path)
    expected_line = line_of(text, line_needle) if case != "in_grid_and_zip" else line_of(text, '"src.rate" = ["90')
    assert int(m.group(2)) == expected_line, (msg, expected_line)
    assert must in msg and also in msg, msg


@pytest.mark.parametrize("case", ["empty_list", "unit_mismatch", "bad_param"])
def test_bad_spec_cli_exit_2_nothing_written(cli, write_scenario, tmp_path, case):
    path, _ = spec_file(write_scenario, BAD[case][0])
    db = tmp_path / "r.sqlite"
    p = cli("sweep", str(path), "--db", str(db), "--quiet")
    err = assert_one_line_error(p, 2, contains=(f"{path}:", "sweep"))
    assert BAD[case][1] in err
    assert not db.exists()


ONOFF_BASE = """\
connections = ["src -> sink"]

[scenario]
name = "z"
duration = "5 ms"

[components.src]
kind = "onoff"
peak = "20 Mb/s"
mean = "10 Mb/s"
burst_factor = "100 cells"

[components.sink]
kind = "sink"
"""


def test_zipped_keys_are_checked_together_not_one_by_one(write_scenario):
    # peak 10 with the base mean 10 is invalid on its own, but every zipped row is valid
    # (mean < peak): the spec must be accepted.
    path, _ = spec_file(write_scenario, """
[sweep.zip]
"src.mean" = ["4 Mb/s", "30 Mb/s"]
"src.peak" = ["10 Mb/s", "60 Mb/s"]
""", base=ONOFF_BASE)
    spec = load_sweep(str(path))
    assert spec.points == [{"src.mean": "4 Mb/s", "src.peak": "10 Mb/s"},
                           {"src.mean": "30 Mb/s", "src.peak": "60 Mb/s"}]


def test_an_invalid_zipped_row_is_one_line_naming_the_row(write_scenario):
    path, _ = spec_file(write_scenario, """
[sweep.zip]
"src.mean" = ["4 Mb/s", "70 Mb/s"]
"src.peak" = ["10 Mb/s", "60 Mb/s"]
""", base=ONOFF_BASE)
    with pytest.raises(ScenarioError) as e:
        load_sweep(str(path))
    msg = str(e.value)
    assert "\n" not in msg
    assert "sweep.zip" in msg and "row 2" in msg and "below the peak" in msg, msg


# --------------------------------------------------------------------------- the core's parser
LOSS_BASE = BASE.replace('"mux -> sink",', '"mux -> lo",\n  "lo -> sink",').replace(
    "[components.sink]", '[components.lo]\nkind = "loss"\np = 0.1\n\n[components.sink]')


def test_number_texts_and_seeds_are_unchanged(write_scenario):
    # Pinned from the Python implementation the core replaced: a number's text (Python's
    # repr of a float; ranges in exact decimal) is part of its point, hence of its seed.
    path, _ = spec_file(write_scenario, '[sweep.grid]\n"lo.p" = [0.1, 1e-05, 2.5e-7, 0.30000000000000004, 1.0, 0, -0.0]\n',
                        base=LOSS_BASE)
    spec = load_sweep(str(path))
    assert [p["lo.p"] for p in spec.points] == ["0.1", "1e-05", "2.5e-07", "0.30000000000000004", "1.0", "0", "-0.0"]
    assert [type(w["lo.p"]) for w in spec.written] == [float] * 5 + [int, float]
    assert [spec.seed_of(i) for i in range(len(spec.points))] == [
        4077586063264243636, 6113337721107112747, 5084540872469074781, 2879791733454539598, 8856787215883224288,
        2335547300660297561, 2375827151378788018]
    path, _ = spec_file(write_scenario, '[sweep.grid]\n"lo.p" = { from = 1e-5, to = 2e-5, step = 0.5e-5 }\n',
                        base=LOSS_BASE, name="r.toml")
    spec = load_sweep(str(path))
    assert [p["lo.p"] for p in spec.points] == ["0.00001", "0.000015", "0.00002"]
    assert [w["lo.p"] for w in spec.written] == [1e-05, 1.5e-05, 2e-05]
    assert [spec.seed_of(i) for i in range(3)] == [1792139422605391252, 2280611105781649789, 9143009072250236769]
    assert point_seed(42, {"scenario.description": 'café "q" \\ \n\t\x01\x7f ü€𝄞'}) == 7802635252378698533
    assert point_seed(2**64 - 1, {}) == 6359753631233127916


def test_errors_in_sub_tables_name_the_offending_key(write_scenario):
    cases = [
        ('[sweep.grid."mux.capacity"]\nfrom = 8\nto = 16\n\nstep = 0\nunit = "cells"\n', "step = 0",
         'sweep.grid."mux.capacity"', "range step = 0 must be > 0"),
        ('[sweep.target]\ncomponent = "mux"\nprobe = "q_loss_rato"\nstatistic = "value"\nrel_half_width = 0.1\n'
         'max_replications = 5\n', 'probe = "q_loss_rato"', "sweep.target", "did you mean 'q_loss_ratio'"),
        ('[sweep.grid]\n"mux.capacity" = [\n  "8 cells",\n  ["16 cells"],\n]\n', '["16 cells"]',
         'sweep.grid."mux.capacity"', "is an array"),
        ('[sweep]\nreplications = 2\ngrid."mux.capcity" = ["8 cells"]\n', "capcity", 'sweep.grid."mux.capcity"',
         "did you mean 'capacity'"),
    ]
    for i, (sweep, needle, key, must) in enumerate(cases):
        path, text = spec_file(write_scenario, sweep, name=f"e{i}.toml")
        with pytest.raises(ScenarioError) as ei:
            load_sweep(str(path))
        msg = str(ei.value)
        assert msg.startswith(f"{path}:{line_of(text, needle)}: {key}: ") and must in msg, msg


def test_unknown_target_statistic_names_the_target_line(write_scenario, tmp_path):
    # Found after the first round (the statistics a probe produces are known only then).
    path, text = spec_file(write_scenario, '[sweep]\nreplications = 2\n\n[sweep.target]\ncomponent = "mux"\n'
                                           'probe = "q_wait"\nstatistic = "meen"\nrel_half_width = 0.1\n'
                                           'max_replications = 4\n')
    from atmsim.sweep import run_sweep

    with pytest.raises(ScenarioError) as ei:
        run_sweep(str(path), str(tmp_path / "r.sqlite"), workers=1)
    msg = str(ei.value)
    assert msg.startswith(f"{path}:{line_of(text, '[sweep.target]')}: sweep.target: probe mux.q_wait has no "
                          f"statistic 'meen' (did you mean 'mean'?)"), msg
