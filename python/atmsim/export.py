"""``atmsim export``: a result store to Parquet or CSV (pandas + pyarrow).

* ``runs``   — one row per run: scenario, point index, the point's values (one column
  per swept key, as written; a column mixing numbers and strings across scenarios is
  written as strings), replication, seed, status, wall time, events, fingerprint,
  software version, error, finish time, run key.
* ``values`` — one row per run and probe statistic (done runs only).
* ``stats``  — one row per scenario sweep, point and probe statistic: n, mean, std and
  the Student-t 95% interval over the done replications (:mod:`atmsim.stats`).
* ``series`` — one row per run and time-series sample (done runs of scenarios with
  ``[probes] series``): time (s, the end of the sampling interval), value, unit, kind.
  A store without any raises :class:`atmsim.exceptions.NoSeriesError` (bad input: one
  line, CLI exit 2) rather than writing an empty file.
"""
from __future__ import annotations

import json
import os

import pandas as pd

from atmsim.exceptions import ScenarioError
from atmsim.stats import summarize
from atmsim.store import Store, StorePathError

WHAT = ("runs", "values", "stats", "series")


def _point_columns(df: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    parsed = [json.loads(v) for v in df["point_values"]] if len(df) else []
    keys: list[str] = []
    for p in parsed:
        for k in p:
            if k not in keys:
                keys.append(k)
    out = df.copy()
    for k in keys:
        col = [p.get(k) for p in parsed]
        kinds = {type(v) for v in col if v is not None}
        if len(kinds) > 1:
            col = [None if v is None else str(v) for v in col]
        out[k] = col
    return out, keys


def frame(db: str, what: str) -> pd.DataFrame:
    if what not in WHAT:
        raise ScenarioError(f"--what {what!r}: valid: {', '.join(WHAT)}")
    with Store(db, readonly=True) as st:
        try:
            sweeps = st.sweeps()
            runs = st.runs()
            values = st.values() if what in ("values", "stats") else None
            series = st.series() if what == "series" else None
        except Exception as exc:  # sqlite3.DatabaseError: not an atmsim store
            raise StorePathError(f"{db}: not an atmsim result store ({' '.join(str(exc).split())})") from None
    names = dict(zip(sweeps["sweep_key"], sweeps["scenario_name"]))
    runs = runs.assign(scenario=runs["sweep_key"].map(names))
    runs, keys = _point_columns(runs)
    if what == "runs":
        cols = ["scenario", "quick", "point_index", *keys, "replication", "seed", "status", "wall_s", "events",
                "fingerprint", "software_version", "error", "finished", "point", "run_key", "scenario_hash"]
        return runs[cols].rename(columns={"point_index": "point", "point": "point_json"})
    meta = runs.set_index("run_key")[["scenario", "quick", *keys]]
    if what == "series":
        assert series is not None
        if series.empty:
            from atmsim.exceptions import NoSeriesError

            raise NoSeriesError(
                f"{db}: the store holds no time series (none of its done runs recorded any); ask for them in the "
                f"scenario file, e.g. [probes] series = [\"mux.q_len\"], and run the sweep again, or export "
                f"--what runs, values or stats")
        series = series.join(meta, on="run_key")
        cols = ["scenario", "quick", "point_index", *keys, "replication", "component", "probe", "time", "value",
                "unit", "kind", "run_key"]
        return series[cols].rename(columns={"point_index": "point"})
    assert values is not None
    values = values.join(meta, on="run_key")
    if what == "values":
        cols = ["scenario", "quick", "point_index", *keys, "replication", "component", "probe", "statistic",
                "value", "unit", "run_key"]
        return values[cols].rename(columns={"point_index": "point"})
    v = values.drop(columns=["point"]).rename(columns={"point_index": "point"})
    st = summarize(v, by=["sweep_key", "point"])
    first = v.drop_duplicates(["sweep_key", "point"]).set_index(["sweep_key", "point"])[["scenario", "quick", *keys]]
    st = st.join(first, on=["sweep_key", "point"])
    return st[["scenario", "quick", "point", *keys, "component", "probe", "statistic", "unit", "domain", "n", "mean",
               "std", "ci_low", "ci_high", "interval", "ci_note", "sweep_key"]]


def export(db: str, out: str, what: str = "runs") -> int:
    """Write ``what`` from the store ``db`` to ``out`` (.parquet or .csv; ``-``: CSV to
    standard output); returns rows."""
    if out == "-":
        import sys

        df = frame(db, what)
        df.to_csv(sys.stdout, index=False)
        return len(df)
    ext = os.path.splitext(out)[1].lower()
    if ext not in (".parquet", ".csv"):
        raise ScenarioError(f"--out {out}: unknown format {ext or '(no extension)'}; use a .parquet or .csv file")
    df = frame(db, what)
    d = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(d):
        raise ScenarioError(f"--out {out}: directory {d} does not exist")
    try:
        if ext == ".parquet":
            df.to_parquet(out, index=False)
        else:
            df.to_csv(out, index=False)
    except OSError as exc:
        raise ScenarioError(f"--out {out}: cannot write: {exc.strerror or exc}") from None
    return len(df)
