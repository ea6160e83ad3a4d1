"""``atmsim bench``: kernel speed, side by side in one process.

Two models, each in several implementations:

* **hold** — the classic hold model: ``pending`` events outstanding; each event, when
  it fires, schedules one successor after an exponential delay.  Measures pure event
  list cost.  Implementations: ``atmsim`` (the simulation kernel), ``hand_heap`` (a
  hand-written Rust binary-heap loop doing the same work), ``simpy`` (below).
* **cell_queue** — Poisson cells at load 0.9 of the OC-3c cell rate into one FIFO of
  256 cells served at the OC-3c cell rate; events = arrivals + departures.
  Implementations: ``atmsim``, ``hand_heap``, ``lindley`` (a Lindley-recursion loop —
  no event list at all, a lower bound), ``simpy``.

SimPy is ~100× slower, so it runs fewer events (``SIMPY_SHARE`` of the others) and is
compared per event.  All wall times are for the model loop only (no process start-up),
best of ``REPEAT`` runs.
"""
from __future__ import annotations

import json
import platform
import random
import time
from typing import Any

from atmsim import _atmsim
from atmsim.analytic import OC3C_SLOT_S

HOLD_PENDING = 10_000
HOLD_EVENTS = 5_000_000
CELLQ_CELLS = 2_000_000   # arrivals; events ≈ 2 × cells
CELLQ_LOAD = 0.9
CELLQ_CAPACITY = 256
SIMPY_SHARE = 0.04        # SimPy runs 4% of the events (200k for hold)
SEED = 1
REPEAT = 3                # best of 3 (full mode)


# --------------------------------------------------------------------------- SimPy models
def simpy_hold(pending: int, events: int, seed: int) -> dict[str, Any]:
    """N = ``pending`` processes, each looping ``yield env.timeout(Exp(1))``: at any
    instant exactly N timeouts are pending, as in the native hold model."""
    import simpy

    rng = random.Random(seed)
    env = simpy.Environment()
    count = [0]

    def holder():
        expo = rng.expovariate
        while True:
            yield env.timeout(expo(1.0))
            count[0] += 1

    for _ in range(pending):
        env.process(holder())
    # Start the processes and reach steady state (one time unit) before timing, so
    # that SimPy's process-initialisation events are not charged to the hold loop.
    env.run(until=1.0)
    count[0] = 0
    # N processes firing at rate 1 each: `events` events take events/N time units.
    t0 = time.perf_counter()
    env.run(until=1.0 + events / pending)
    wall = time.perf_counter() - t0
    return {"events": count[0], "wall_s": wall}


def simpy_cell_queue(cells: int, load: float, capacity: int, seed: int) -> dict[str, Any]:
    """Poisson arrivals (rate ``load`` per slot) into a FIFO holding at most
    ``capacity`` cells including the one in service; one server, service = one slot
    (time unit = one OC-3c cell slot).  Events = arrivals + departures."""
    import simpy

    rng = random.Random(seed)
    env = simpy.Environment()
    store = simpy.Store(env)
    state = {"in_system": 0, "arrivals": 0, "departures": 0, "lost": 0, "wait": 0.0}

    def source():
        expo = rng.expovariate
        for _ in range(cells):
            yield env.timeout(expo(load))
            state["arrivals"] += 1
            if state["in_system"] >= capacity:
                state["lost"] += 1
                continue
            state["in_system"] += 1
            store.put(env.now)

    def server():
        while True:
            arrived = yield store.get()
            state["wait"] += env.now - arrived
            yield env.timeout(1.0)
            state["in_system"] -= 1
            state["departures"] += 1

    env.process(source())
    env.process(server())
    t0 = time.perf_counter()
    env.run()
    wall = time.perf_counter() - t0
    served = max(state["departures"], 1)
    return {"events": state["arrivals"] + state["departures"], "wall_s": wall, "lost": state["lost"],
            "mean_wait_s": state["wait"] / served * OC3C_SLOT_S}


# --------------------------------------------------------------------------- driver
def _row(name: str, impl: str, r: dict[str, Any]) -> dict[str, Any]:
    wall = float(r["wall_s"])
    events = int(r["events"])
    return {"name": name, "impl": impl, "events": events, "wall_s": wall,
            "events_per_s": events / wall if wall > 0 else None}


def _best(fn, repeat: int) -> dict[str, Any]:
    """Best (shortest wall time) of ``repeat`` identical runs, as timeit does: the
    minimum is the run least disturbed by other load on the machine."""
    runs = [fn() for _ in range(repeat)]
    return min(runs, key=lambda r: r["wall_s"])


def run_all(quick: bool = False, repeat: int | None = None) -> list[dict[str, Any]]:
    div = 10 if quick else 1
    repeat = repeat or (1 if quick else REPEAT)
    hold_events = HOLD_EVENTS // div
    cells = CELLQ_CELLS // div
    rows = []
    for impl in ("atmsim", "hand_heap"):
        rows.append(_row("hold", impl, _best(
            lambda: _atmsim.bench_hold(impl, HOLD_PENDING, hold_events, SEED), repeat)))
    rows.append(_row("hold", "simpy", _best(
        lambda: simpy_hold(HOLD_PENDING, int(hold_events * SIMPY_SHARE), SEED), repeat)))
    for impl in ("atmsim", "hand_heap", "lindley"):
        rows.append(_row("cell_queue", impl, _best(
            lambda: _atmsim.bench_cell_queue(impl, cells, CELLQ_LOAD, CELLQ_CAPACITY, SEED), repeat)))
    rows.append(_row("cell_queue", "simpy", _best(
        lambda: simpy_cell_queue(int(cells * SIMPY_SHARE), CELLQ_LOAD, CELLQ_CAPACITY, SEED), repeat)))
    exp2 = switch_scenario_rate(0.1 if quick else 1.0)
    if exp2:
        rows.append(exp2)
    rows += rate_mismatch_rates(4.0 if quick else 30.0)
    return rows


def _scenario_run(name: str, paper: str, file: str, sim_seconds: float):
    """Runs ``scenarios/<paper>/<file>`` for ``sim_seconds`` (no warm-up): (row, result),
    or None if the scenario is not installed. The row has kernel events/s and simulated
    seconds per wall second."""
    from atmsim.api import load
    from atmsim.validate import scenario_dir

    path = scenario_dir().parent / paper / file
    if not path.exists():
        return None
    sc = load(path).with_overrides({"scenario.duration": f"{sim_seconds} s", "scenario.warmup": "0 s"})
    r = sc.run()
    wall = float(r.summary["wall_s"])
    row = _row(name, "atmsim", {"events": r.summary["events"], "wall_s": wall})
    row["sim_s_per_wall_s"] = sim_seconds / wall if wall > 0 else None
    return row, r


def switch_scenario_rate(sim_seconds: float) -> dict[str, Any] | None:
    """End-to-end speed on domingo95 experiment 2 (issue 4): hosts, a 16-port switch
    with re-circulating loops at ~1% cell loss, a WAN link. Reports kernel events/s,
    cells switched (transmitted at the switch's output ports) per wall second, and
    simulated seconds per wall second. None if the scenario is not installed."""
    got = _scenario_run("domingo95_exp2", "domingo95", "exp2.toml", sim_seconds)
    if got is None:
        return None
    row, r = got
    p = r.probes
    sw = p[p["component"].str.fullmatch(r"sw/p\d+") & (p["probe"] == "q_tx_cells") & (p["statistic"] == "count")]
    cells = float(sw["value"].sum())
    row.update({"cells_switched": int(cells), "cells_per_s": cells / row["wall_s"] if row["wall_s"] > 0 else None})
    return row


#: lazarou96 section 5: BONeS DESIGNER took 20 to 30 minutes per simulated second on the
#: rate-mismatch model (Figure 8) on a SPARCstation-10.
BONES_WALL_S_PER_SIM_S = (1200.0, 1800.0)


def rate_mismatch_rates(sim_seconds: float) -> list[dict[str, Any]]:
    """End-to-end speed on lazarou96's rate-mismatch scenario (issue 5): cell-level TCP in
    both directions, hosts with CPUs, the switch, without and with the 70 Mb/s pacer.
    Target: ≥ 10 simulated seconds per wall second on one core."""
    rows = []
    for name, file in (("lazarou96_mismatch", "mismatch.toml"), ("lazarou96_mismatch_paced", "mismatch_paced.toml")):
        got = _scenario_run(name, "lazarou96", file, sim_seconds)
        if got is None:
            continue
        row, _r = got
        sps = row["sim_s_per_wall_s"]
        row["x_bones"] = [b * sps for b in BONES_WALL_S_PER_SIM_S] if sps else None
        rows.append(row)
    return rows


def ratios(rows: list[dict[str, Any]]) -> list[tuple[str, str, float]]:
    """(benchmark, 'atmsim/OTHER', speed ratio = atmsim events/s ÷ OTHER events/s)."""
    out = []
    for name in ("hold", "cell_queue"):
        by_impl = {r["impl"]: r for r in rows if r["name"] == name}
        base = by_impl.get("atmsim")
        for other in ("hand_heap", "simpy", "lindley"):
            if base and other in by_impl and by_impl[other]["events_per_s"]:
                out.append((name, f"atmsim/{other}", base["events_per_s"] / by_impl[other]["events_per_s"]))
    return out


def machine() -> str:
    return f"{platform.machine()} {platform.processor() or ''} {platform.system()} {platform.release()}, " \
           f"Python {platform.python_version()}".replace("  ", " ")


def main(quick: bool = False, json_out: bool = False) -> None:
    rows = run_all(quick)
    if json_out:
        print(json.dumps({"benchmarks": rows, "quick": quick,
                          "ratios": [{"name": n, "ratio": k, "value": v} for n, k, v in ratios(rows)]}))
        return
    header = ["benchmark", "impl", "events", "wall s", "events/s"]
    body = [[r["name"], r["impl"], f"{r['events']:,}", f"{r['wall_s']:.3f}",
             f"{r['events_per_s'] / 1e6:.2f} M" if r["events_per_s"] else "-"] for r in rows]
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(header)]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    print("  ".join("-" * w for w in widths))
    for b in body:
        print("  ".join(c.ljust(w) for c, w in zip(b, widths)).rstrip())
    print("\nspeed ratios (events/s, higher = atmsim faster):")
    for name, k, v in ratios(rows):
        print(f"  {name:<10}  {k:<16}  {v:8.2f}")
    for r in rows:
        if r["name"] == "domingo95_exp2" and r.get("cells_per_s"):
            print(f"\ndomingo95 experiment 2 (switch, loops, hosts): {r['cells_switched']:,} cells switched, "
                  f"{r['cells_per_s'] / 1e6:.2f} M cells/s, {r['sim_s_per_wall_s']:.1f} simulated s per wall s")
    for r in rows:
        if r["name"].startswith("lazarou96_mismatch") and r.get("sim_s_per_wall_s"):
            lo, hi = r["x_bones"]
            print(f"{r['name']}: {r['sim_s_per_wall_s']:.0f} simulated s per wall s (target >= 10); "
                  f"{lo:,.0f}-{hi:,.0f}x BONeS DESIGNER's 20-30 min per simulated second (lazarou96 section 5)")
    print(f"\nmachine: {machine()}" + ("   (--quick: 10x fewer events, not a measurement)" if quick else ""))


# --------------------------------------------------------------------------- sweeps
# `atmsim bench --sweep`: what the sweep machinery (atmsim.sweep) costs and gains.
#
# * sweep_overhead — SWEEP_TINY_RUNS replications of a scenario of a couple of events
#   through the local process pool and the SQLite store: wall time per run is
#   (almost) all overhead: scheduling, pickling, the native load, the store
#   transaction.  Includes the pool start-up, so it is an upper bound.
# * sweep_speedup — SWEEP_LONG_RUNS runs of ≈ SWEEP_LONG_S seconds each (the
#   poisson-oc3 example, duration calibrated on this machine) on 1 and on 2 worker
#   processes; speed-up = wall(1) / wall(2).  The machine's load average is
#   reported beside it: other work on the cores lowers the speed-up.
SWEEP_TINY_RUNS = 200
SWEEP_LONG_RUNS = 4
SWEEP_LONG_S = 1.0

_TINY = """\
connections = ["src -> sink"]
[scenario]
name = "bench-tiny"
duration = "1 us"
[components.src]
kind = "cbr"
rate = "1 Gb/s"
[components.sink]
kind = "sink"
[sweep]
replications = {reps}
"""


def _sweep_scenario(tmp: str, text: str, name: str) -> str:
    import os

    path = os.path.join(tmp, name)
    with open(path, "w") as fh:
        fh.write(text)
    return path


def sweep_bench(quick: bool = False, workers: int = 2) -> dict[str, Any]:
    """Sweep overhead per run and local speed-up (see the comment above)."""
    import os
    import tempfile

    from atmsim.sweep import run_sweep

    runs = SWEEP_TINY_RUNS // (4 if quick else 1)
    long_s = SWEEP_LONG_S / (4 if quick else 1)
    out: dict[str, Any] = {"quick": quick, "load_before": os.getloadavg()}
    with tempfile.TemporaryDirectory(prefix="atmsim-bench-") as tmp:
        tiny = _sweep_scenario(tmp, _TINY.format(reps=runs), "tiny.toml")
        t0 = time.perf_counter()
        res = run_sweep(tiny, os.path.join(tmp, "tiny.sqlite"), workers=workers)
        wall = time.perf_counter() - t0
        sim = float(res.runs["wall_s"].sum())
        # steady state: the interval between the first and the last stored run
        import sqlite3
        from datetime import datetime

        con = sqlite3.connect(os.path.join(tmp, "tiny.sqlite"))
        first, last = con.execute("SELECT min(finished), max(finished) FROM runs").fetchone()
        con.close()
        span = (datetime.fromisoformat(last) - datetime.fromisoformat(first)).total_seconds()
        out["sweep_overhead"] = {"runs": runs, "workers": workers, "wall_s": wall,
                                 "events_per_run": float(res.runs["events"].mean()),
                                 "overhead_ms_per_run": (wall - sim / workers) / runs * 1e3,
                                 "steady_ms_per_run": (span - sim / workers) / max(runs - 1, 1) * 1e3}
        # calibrate: one simulated second of poisson-oc3 takes `per_s` of wall time here
        base = os.path.join(os.path.dirname(__file__), "..", "..", "scenarios", "examples", "poisson_oc3.toml")
        text = open(base).read() if os.path.exists(base) else None
        if text is None:
            return out
        probe = _atmsim.loads(text, base).with_overrides({"scenario.duration": "1 s"}).run(seed=1, run=0)
        per_s = max(float(probe["wall_s"]), 1e-6)
        duration = long_s / per_s
        text += f"\n[sweep]\nreplications = {SWEEP_LONG_RUNS}\n"
        long_path = _sweep_scenario(tmp, text, "long.toml")
        walls = {}
        run_walls = {}
        for w in (1, workers):
            t0 = time.perf_counter()
            r = run_sweep(long_path, os.path.join(tmp, f"long{w}.sqlite"), workers=w,
                          overrides={"scenario.duration": f"{duration:.3f} s"})
            walls[w] = time.perf_counter() - t0
            run_walls[w] = float(r.runs["wall_s"].mean())
        out["sweep_speedup"] = {"runs": SWEEP_LONG_RUNS, "simulated_s": duration, "run_wall_s": run_walls[1],
                                f"run_wall_s_{workers}": run_walls[workers],
                                "wall_1": walls[1], f"wall_{workers}": walls[workers], "workers": workers,
                                "speedup": walls[1] / walls[workers]}
    out["load_after"] = os.getloadavg()
    return out


def sweep_main(quick: bool = False, json_out: bool = False, workers: int = 2) -> None:
    r = sweep_bench(quick=quick, workers=workers)
    if json_out:
        print(json.dumps(r))
        return
    o = r["sweep_overhead"]
    print(f"sweep_overhead  {o['runs']} runs of {o['events_per_run']:.0f} events, local pool ({o['workers']} workers) "
          f"+ SQLite store: {o['wall_s']:.2f} s = {o['overhead_ms_per_run']:.2f} ms per run with pool start-up, "
          f"{o['steady_ms_per_run']:.2f} ms per run after it (target < 20 ms)")
    s = r.get("sweep_speedup")
    if s:
        w = s["workers"]
        print(f"sweep_speedup   {s['runs']} runs of {s['run_wall_s']:.2f} s: 1 worker {s['wall_1']:.2f} s, "
              f"{w} workers {s[f'wall_{w}']:.2f} s: speed-up {s['speedup']:.2f}x (target >= 1.8x); "
              f"one run took {s['run_wall_s']:.2f} s alone, {s[f'run_wall_s_{w}']:.2f} s beside another")
    la, lb = r["load_before"], r["load_after"]
    print(f"\nload average before {la[0]:.2f}, after {lb[0]:.2f} ({multiprocessing_cpus()} cores); "
          f"machine: {machine()}" + ("   (--quick: not a measurement)" if quick else ""))


def multiprocessing_cpus() -> int:
    from atmsim.executors import default_workers

    return default_workers()
