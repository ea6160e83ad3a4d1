"""Sweeps built in Python (issue 44 item 8): atmsim.Sweep gives the same spec as the
TOML [sweep] table it stands for; result frames carry the swept values as numbers with
the unit in the column name; Python API errors name Python arguments and are atmsim
exceptions."""
from __future__ import annotations

import pandas as pd
import pytest

import atmsim
from atmsim.exceptions import ArgumentError, ParamError, ScenarioError
from atmsim.sweep import Sweep, load_sweep, plan_sweep, run_sweep
from conftest import BASE

TOML_SWEEP = """
[sweep]
replications = 2
[sweep.grid]
"mux.capacity" = ["4 cells", "16 cells"]
[sweep.zip]
"src.rate" = ["100 Mb/s", "140 Mb/s"]
"src.vc" = [1, 2]
"""
GRID = {"mux.capacity": ["4 cells", "16 cells"]}
ZIP = {"src.rate": ["100 Mb/s", "140 Mb/s"], "src.vc": [1, 2]}


def test_a_python_sweep_is_the_toml_sweep_it_stands_for(write_scenario, tmp_path):
    path = write_scenario(BASE + TOML_SWEEP)
    from_file = load_sweep(str(path))
    sw = Sweep(atmsim.loads(BASE, str(tmp_path / "base.toml")), grid=GRID, zip=ZIP, replications=2)
    spec = sw.spec()
    assert (spec.keys, spec.points, spec.replications) == (from_file.keys, from_file.points, 2)
    assert [spec.seed_of(i) for i in range(4)] == [from_file.seed_of(i) for i in range(4)]
    a = run_sweep(sw, str(tmp_path / "py.sqlite"), workers=1)
    b = run_sweep(str(path), str(tmp_path / "toml.sqlite"), workers=1)
    assert a.ok and a.runs["fingerprint"].tolist() == b.runs["fingerprint"].tolist()
    # A second call resumes from the store like a file's sweep.
    again = run_sweep(sw, str(tmp_path / "py.sqlite"), workers=1)
    assert again.executed == 0 and again.skipped == 8


def test_ranges_precision_and_a_scenario_alone(tmp_path):
    sc = atmsim.loads(BASE, "base.toml")
    sw = Sweep(sc, grid={"mux.capacity": {"from": 8, "to": 24, "step": 8, "unit": "cells"},
                         "scenario.seed": range(1, 3)},
               replications=2, precision=0.5, statistics=["mux.q_loss_ratio.value"], max_replications=3)
    spec = sw.spec()
    assert spec.points[0] == {"mux.capacity": "8 cells", "scenario.seed": "1"} and len(spec.points) == 6
    assert [t.rel_half_width for t in spec.precision] == [0.5] and spec.precision[0].max_replications == 3
    # a Scenario object alone is a sweep of one point (it used to be a raw TypeError)
    spec1, plan = plan_sweep(sc)
    assert spec1.keys == [] and plan["replications"].tolist() == [1]
    res = run_sweep(sc, str(tmp_path / "one.sqlite"), workers=1)
    assert res.ok and len(res.runs) == 1


def test_frames_give_swept_values_as_numbers_with_their_unit(write_scenario, tmp_path):
    res = run_sweep(str(write_scenario(BASE + TOML_SWEEP)), str(tmp_path / "r.sqlite"), workers=1)
    runs, stats = res.runs, res.stats
    assert list(runs.columns[8:]) == ["mux.capacity", "mux.capacity [cells]", "src.rate", "src.rate [Mb/s]", "src.vc"]
    assert runs["mux.capacity [cells]"].dtype == "float64" and runs["src.rate [Mb/s]"].dtype == "float64"
    assert runs["mux.capacity [cells]"].tolist() == [4.0] * 4 + [16.0] * 4
    assert runs["src.rate [Mb/s]"].tolist()[:4] == [100.0, 100.0, 140.0, 140.0]
    assert list(stats.columns[:6]) == ["point", "mux.capacity", "mux.capacity [cells]", "src.rate",
                                       "src.rate [Mb/s]", "src.vc"]
    assert stats["src.rate [Mb/s]"].dtype == "float64"
    assert "mux.capacity [cells]" in res.values.columns


def test_mixed_units_of_one_quantity_convert_to_the_first(write_scenario, tmp_path):
    spec, plan = plan_sweep(str(write_scenario(BASE + '[sweep.grid]\n"src.rate" = ["1 Mb/s", "500 kb/s"]\n')))
    assert plan["src.rate [Mb/s]"].tolist() == [1.0, 0.5]


@pytest.mark.parametrize("kwargs,message", [
    ({"grid": {"mux.capacity": ["8 cells", "424 B"]}},
     "grid['mux.capacity']: values '8 cells' and '424 B' are equal after unit conversion"),
    ({"grid": {"mux.capacty": ["8 cells"]}}, "grid['mux.capacty']: value '8 cells': components.mux.capacty"),
    ({"replications": 0}, "replications: 0: must be a whole number from 1 to 1000000"),
    ({"zip": {"src.rate": ["1 Mb/s"], "src.vc": [1, 2]}}, "zip['src.vc']: zipped lists must have equal lengths"),
    ({"grid": {}}, "grid: empty grid"),
    ({"precision": 0.1}, "precision: needs the statistics"),
])
def test_sweep_errors_name_the_python_arguments(kwargs, message):
    with pytest.raises(ScenarioError) as ei:
        Sweep(atmsim.loads(BASE, "base.toml"), **kwargs)
    msg = str(ei.value)
    assert msg.startswith(message) and "\n" not in msg, msg
    assert "sweep." not in msg and "base.toml" not in msg, msg


def test_sweep_arguments_of_the_wrong_type_are_atmsim_errors():
    sc = atmsim.loads(BASE, "base.toml")
    with pytest.raises(ArgumentError, match=r"^grid\['mux.capacity'\]: a value of type object cannot be swept"):
        Sweep(sc, grid={"mux.capacity": [object()]})
    with pytest.raises(ArgumentError, match=r"^grid: expected a dict"):
        Sweep(sc, grid=[("mux.capacity", ["8 cells"])])
    with pytest.raises(ArgumentError, match=r"^run_sweep\(scenario\): expected the path of a scenario file, an "
                                            r"atmsim.Sweep or an atmsim.Scenario, got int"):
        run_sweep(123, "r.sqlite")


def test_overrides_errors_name_the_argument_not_the_cli_flag(write_scenario, tmp_path):
    path = str(write_scenario(BASE + TOML_SWEEP))
    with pytest.raises(ScenarioError) as ei:
        run_sweep(path, str(tmp_path / "r.sqlite"), overrides={"mux.capacity": "8 cells"})
    assert str(ei.value).startswith("overrides: mux.capacity: the sweep varies this key") and "--set" not in str(ei.value)
    with pytest.raises(ScenarioError, match=r"^overrides: components.src.rat: unknown parameter"):
        plan_sweep(path, overrides={"src.rat": "1 Mb/s"})
    sc = atmsim.loads(BASE, "base.toml")
    with pytest.raises(ScenarioError, match=r"^set: components.src.rat: unknown parameter"):
        atmsim.run(sc, set={"src.rat": "1 Mb/s"}, progress=False)
    with pytest.raises(ScenarioError, match=r"^overrides: components.src.rat: unknown parameter"):
        sc.with_overrides({"src.rat": "1 Mb/s"})
    with pytest.raises(ParamError, match=r"^seed=-1: a seed is an integer from 0 to"):
        sc.run(seed=-1, progress=False)
    with pytest.raises(ParamError, match=r"^run='2': a run \(replication\) number is an integer"):
        atmsim.run(sc, run="2", progress=False)


def test_the_cli_still_names_its_flags(cli, write_scenario, tmp_path):
    path = str(write_scenario(BASE + TOML_SWEEP))
    p = cli("sweep", path, "--db", str(tmp_path / "r.sqlite"), "--set", "src.rat=1 Mb/s", "--dry-run")
    assert p.returncode == 2 and p.stderr.startswith("atmsim: error: --set: components.src.rat: unknown"), p.stderr
    p = cli("run", path, "-q", "--set", "src.rat=1 Mb/s")
    assert p.returncode == 2 and p.stderr.startswith("atmsim: error: --set: components.src.rat: unknown"), p.stderr


@pytest.mark.parametrize("call,message", [
    (lambda: atmsim.load(None), r"^load\(path\): expected the path of a scenario .toml file \(str or os.PathLike\), "
                                r"got NoneType"),
    (lambda: atmsim.loads(b"[scenario]"), r"^loads\(text\): expected the scenario's TOML text as str, got bytes; "
                                          r"decode it first"),
    (lambda: atmsim.run(123), r"^run\(scenario\): expected an atmsim.Scenario or the path of a scenario .toml file, "
                              r"got int"),
])
def test_wrong_argument_types_raise_atmsim_errors(call, message):
    with pytest.raises(ArgumentError, match=message) as ei:
        call()
    assert isinstance(ei.value, atmsim.ScenarioError) and isinstance(ei.value, TypeError)


def test_probes_carry_scenario_seed_and_run():
    res = atmsim.loads(BASE, "base.toml").run(seed=7, run=3, progress=False)
    p = res.probes
    assert list(p.columns[:3]) == ["scenario", "seed", "run"]
    assert set(p["scenario"]) == {"t"} and set(p["seed"]) == {7} and set(p["run"]) == {3}
    both = pd.concat([p, atmsim.loads(BASE, "base.toml").run(seed=7, run=4, progress=False).probes])
    assert both.groupby("run").size().tolist() == [len(p), len(p)]
    # the JSON form keeps its own fields
    assert set(res.to_json_obj()["probes"][0]) == {"component", "probe", "statistic", "value", "unit"}
