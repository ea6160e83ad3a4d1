"""A run's cell trace (``Result.cell_trace``, docs/architecture.md "Cell traces") read
hop by hop: how long each cell waited where it was transmitted.

Nothing here simulates: it pairs the trace's rows.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

#: The columns of :func:`cell_waits`.
WAIT_COLUMNS = ["component", "port", "unit", "vc", "source", "seq", "pdu_cell", "arrived_s", "started_s", "wait_s"]

#: What names one cell or frame at one component: what it is, its source, its number
#: there and its place in its PDU (a switch's copies of a replicated cell share them).
_CELL = ["component", "unit", "source", "seq", "pdu_cell"]


def cell_waits(trace: pd.DataFrame) -> pd.DataFrame:
    """One row per transmission of ``trace`` (its ``-`` rows), in time order, with the
    cell's (or frame's) arrival at that component — the last ``r`` row of the same cell
    there at or before the start (for a station ``RING/sI``, there or at ``RING``), or
    its birth where it was made (its source is the component) — and the wait between
    them (NaN where the trace has no arrival)."""
    starts = trace[trace["event"] == "-"]
    if starts.empty:
        return pd.DataFrame({c: pd.Series(dtype="float64" if c.endswith("_s") else "object") for c in WAIT_COLUMNS})
    starts = starts.rename(columns={"time_s": "started_s"}).sort_values("started_s", kind="stable")
    arrivals = trace[trace["event"] == "r"][_CELL + ["time_s"]].rename(columns={"time_s": "arrived_s"})
    arrivals = arrivals.sort_values("arrived_s", kind="stable")
    out = pd.merge_asof(starts, arrivals, left_on="started_s", right_on="arrived_s", by=_CELL, direction="backward")
    # A station inside a component (a ring's ``RING/sI``) also receives what the
    # component's port handed it (the gateway's frames on the ring's gw_tx).
    station = out["arrived_s"].isna() & out["component"].str.contains("/", regex=False)
    if station.any():
        parent = out.loc[station, "component"].map(lambda c: c.rsplit("/", 1)[0])
        inner = out[station].drop(columns="arrived_s").assign(component=parent.astype(arrivals["component"].dtype))
        inner = pd.merge_asof(inner.reset_index().sort_values("started_s", kind="stable"), arrivals, left_on="started_s",
                              right_on="arrived_s", by=_CELL, direction="backward").set_index("index")
        out.loc[inner.index, "arrived_s"] = inner["arrived_s"]
    made_here = out["arrived_s"].isna() & (out["source"] == out["component"])
    out["arrived_s"] = np.where(made_here, out["born_s"], out["arrived_s"])
    out["wait_s"] = out["started_s"] - out["arrived_s"]
    return out[WAIT_COLUMNS].reset_index(drop=True)
