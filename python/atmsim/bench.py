"""``atmsim bench``: kernel speed, side by side in one process.

Two models, each in several implementations:

* **hold** — the classic hold model: ``pending`` events outstanding; each event, when
  it fires, schedules one successor after an exponential delay.  Measures pure event
  list cost.  Implementations: ``atmsim`` (the simulation kernel), ``hand_heap`` (a
  hand-written Rust binary-heap loop doing the same work), ``simpy`` (below).
* **mux** (issue 14) — 8 on-off sources (peak 40 Mb/s, mean 10 Mb/s, 100 cells per
  active period) into a 256-cell FIFO at 155.52 Mb/s for 27.26 simulated seconds;
  events = cells switched.  Implementations: ``atmsim`` and ``hand_heap`` (a heap with
  one arrival and one departure event per cell; results equal bit for bit, tested).
* **cell_queue** — Poisson cells at load 0.9 of the OC-3c cell rate into one FIFO of
  256 cells served at the OC-3c cell rate; events = arrivals + departures.
  Implementations: ``atmsim``, ``hand_heap`` (a ``BinaryHeap`` loop keeping the
  statistics the ``poisson``/``fifo``/``sink`` models keep: its results equal the
  scenario's bit for bit, a Rust test checks it), ``lindley`` (a Lindley-recursion
  loop — no event list at all, a lower bound), ``simpy``.

SimPy is ~100× slower, so it runs fewer events (``SIMPY_SHARE`` of the others) and is
compared per event.  All wall times are for the model loop only (no process start-up),
best of ``REPEAT`` runs; the paper scenarios' rows (below) time a whole run, building
included, best of ``REPEAT`` runs too, and list every run's time (``wall_s_runs``).
"""
from __future__ import annotations

import json
import os
import platform
import random
import time
from typing import Any

from atmsim import _atmsim
from atmsim.memory import peak_bytes, resident_bytes
from atmsim.analytic import OC3C_SLOT_S

HOLD_PENDING = 10_000
HOLD_EVENTS = 5_000_000
CELLQ_CELLS = 2_000_000   # arrivals; events ≈ 2 × cells
CELLQ_LOAD = 0.9
CELLQ_CAPACITY = 256
SIMPY_SHARE = 0.04        # SimPy runs 4% of the events (200k for hold)
MUX_SECONDS = 27.26       # issue 14: the mux workload's simulated seconds (~5.2 M cells)
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
    # mux (issue 14): events = cells switched, so events/s is cells/s.
    for impl in ("atmsim", "hand_heap"):
        rows.append(_row("mux", impl, _best(lambda: _atmsim.bench_mux(impl, MUX_SECONDS / div, SEED), repeat)))
    exp2 = switch_scenario_rate(0.1 if quick else 1.0, repeat)
    if exp2:
        rows.append(exp2)
    rows += rate_mismatch_rates(4.0 if quick else 30.0, repeat)
    rows += reference_rates(quick, repeat)
    gw = gateway_rate(0.1 if quick else 1.0, repeat)
    if gw:
        rows.append(gw)
    abr = parking_lot_rate(0.5 if quick else PARKING_SIM_S, repeat)
    if abr is not None:
        rows.append(abr)
    return rows


def _scenario_run(name: str, paper: str, file: str, sim_seconds: float,
                  overrides: dict[str, str] | None = None, repeat: int = 1):
    """Runs ``scenarios/<paper>/<file>`` for ``sim_seconds`` (no warm-up, plus
    ``overrides``), ``repeat`` times: (row, result) of the fastest run (the same
    results each time: the same seed), or None if the scenario is not installed. The
    row has kernel events/s, simulated seconds per wall second and every run's wall
    time (``wall_s_runs``)."""
    from atmsim.api import load
    from atmsim.validate import scenario_dir

    path = scenario_dir().parent / paper / file
    if not path.exists():
        return None
    sc = load(path).with_overrides({**(overrides or {}), "scenario.duration": f"{sim_seconds} s",
                                    "scenario.warmup": "0 s"})
    runs = [sc.run() for _ in range(max(1, repeat))]
    r = min(runs, key=lambda x: float(x.summary["wall_s"]))
    wall = float(r.summary["wall_s"])
    row = _row(name, "atmsim", {"events": r.summary["events"], "wall_s": wall})
    row["wall_s_runs"] = [float(x.summary["wall_s"]) for x in runs]
    row["sim_s_per_wall_s"] = sim_seconds / wall if wall > 0 else None
    row["sim_s_per_wall_s_runs"] = [sim_seconds / w if w > 0 else None for w in row["wall_s_runs"]]
    if name in BEFORE_EVENTS_PER_S:
        # The work in the event-per-departure path's events (`fast_path = false`,
        # untimed): what the "before" rate counted (see BEFORE_EVENTS_PER_S).
        exact = sc.with_overrides({"scenario.fast_path": "false"}).run()
        row["exact_events"] = int(exact.summary["events"])
        row["exact_events_per_s"] = row["exact_events"] / wall if wall > 0 else None
    return row, r


def reference_rates(quick: bool, repeat: int = 1) -> list[dict[str, Any]]:
    """The end-to-end speed targets' rows (issue 14: twice the speed before it): the
    frozen workloads of :data:`REFERENCE_WORKLOADS`, each run for as many simulated
    seconds as its paper scenario's row (the same split of a run's set-up and its
    events), timed, with the event-per-departure path's event count."""
    rows = []
    for name, (file, full_s, quick_s, _sha) in REFERENCE_WORKLOADS.items():
        got = _scenario_run(name, "bench", file, quick_s if quick else full_s, repeat=repeat)
        if got is not None:
            rows.append(got[0])
    return rows


def _probe_sum(r, components: str, probe: str) -> float:
    """Sum of ``probe``'s count over the components whose names match ``components``."""
    p = r.probes
    sel = p[p["component"].str.fullmatch(components) & (p["probe"] == probe) & (p["statistic"] == "count")]
    return float(sel["value"].sum())


def switch_scenario_rate(sim_seconds: float, repeat: int = 1) -> dict[str, Any] | None:
    """End-to-end speed on domingo95 experiment 2 (issue 4): hosts, a 16-port switch
    with re-circulating loops at ~1% cell loss, a WAN link. Reports kernel events/s,
    cells switched (transmitted at the switch's output ports) per wall second, and
    simulated seconds per wall second. None if the scenario is not installed."""
    got = _scenario_run("domingo95_exp2", "domingo95", "exp2.toml", sim_seconds, repeat=repeat)
    if got is None:
        return None
    row, r = got
    cells = _probe_sum(r, r"sw/p\d+", "q_tx_cells")
    row.update({"cells_switched": int(cells), "cells_per_s": cells / row["wall_s"] if row["wall_s"] > 0 else None})
    return row


#: Offered load of the gateway row (issue 16 item 7), Mb/s of 53-octet cells over the 8 connections.
GATEWAY_LOAD_MBPS = 120.0


def gateway_rate(sim_seconds: float, repeat: int = 1) -> dict[str, Any] | None:
    """End-to-end speed of the buddhikot92 ATM-FDDI gateway (issue 16 item 7):
    ``scenarios/buddhikot92/bf1000.toml`` at 120 Mb/s offered (8 on-off connections,
    peak/avg 2, B = 1000: above the knee, so the SPP drops cells and the MPP holds
    acknowledgements), the FIFO, the gateway and the four-node FDDI ring. Reports cells
    into the gateway per wall second and simulated seconds per wall second (target
    ≥ 10 on one core). None if the scenario is not installed."""
    mean = GATEWAY_LOAD_MBPS / 8
    over = {}
    for i in range(1, 9):
        over[f"src{i}.mean"] = f"{mean:g} Mb/s"
        over[f"src{i}.peak"] = f"{2 * mean:g} Mb/s"
    got = _scenario_run("buddhikot92_gateway", "buddhikot92", "bf1000.toml", sim_seconds, over, repeat)
    if got is None:
        return None
    row, r = got
    p = r.probes
    sel = p[(p["component"] == "mux") & (p["probe"] == "q_tx_cells") & (p["statistic"] == "count")]
    cells = float(sel["value"].sum())
    row.update({"cells_in": int(cells), "cells_per_s": cells / row["wall_s"] if row["wall_s"] > 0 else None,
                "offered_mbps": GATEWAY_LOAD_MBPS})
    return row


#: Issue 15 item 8: dastangoo96's WAN parking lot (six self-similar sessions through
#: edges, four EFCI switches, 1,333 km trunks) for 2 simulated seconds; target ≥ 5
#: simulated seconds per wall second on one core.
PARKING_SIM_S = 2.0
PARKING_TARGET_SIM_S_PER_WALL_S = 5.0


def parking_lot_rate(sim_seconds: float, repeat: int = 1) -> dict[str, Any] | None:
    """End-to-end speed on scenarios/dastangoo96/parking_lot_wan.toml (its own switch
    algorithm, EFCI): simulated seconds per wall second against the target, and kernel
    events per cell (events handled ÷ cells the six edges sent into the network, data
    and RM; and of those, the ones that went through the future-event list: deliveries
    handed over to passive components or through deferred inputs do not).
    None if the scenario is not installed."""
    got = _scenario_run("dastangoo96_parking_wan", "dastangoo96", "parking_lot_wan.toml", sim_seconds, repeat=repeat)
    if got is None:
        return None
    row, r = got
    cells = _probe_sum(r, r"e\d", "src_tx_cells")
    sps = row["sim_s_per_wall_s"]
    scheduled = r.summary.get("scheduled")
    row.update({"cells": int(cells), "events_per_cell": row["events"] / cells if cells else None,
                "scheduled_per_cell": scheduled / cells if cells and scheduled is not None else None,
                "target_sim_s_per_wall_s": PARKING_TARGET_SIM_S_PER_WALL_S,
                "met": None if sps is None else sps >= PARKING_TARGET_SIM_S_PER_WALL_S})
    return row


#: lazarou96 section 5: BONeS DESIGNER took 20 to 30 minutes per simulated second on the
#: rate-mismatch model (Figure 8) on a SPARCstation-10.
BONES_WALL_S_PER_SIM_S = (1200.0, 1800.0)


def rate_mismatch_rates(sim_seconds: float, repeat: int = 1) -> list[dict[str, Any]]:
    """End-to-end speed on lazarou96's rate-mismatch scenario (issue 5): cell-level TCP in
    both directions, hosts with CPUs, the switch, without and with the 70 Mb/s pacer.
    Target: ≥ 10 simulated seconds per wall second on one core."""
    rows = []
    for name, file in (("lazarou96_mismatch", "mismatch.toml"), ("lazarou96_mismatch_paced", "mismatch_paced.toml")):
        got = _scenario_run(name, "lazarou96", file, sim_seconds, repeat=repeat)
        if got is None:
            continue
        row, _r = got
        sps = row["sim_s_per_wall_s"]
        row["x_bones"] = [b * sps for b in BONES_WALL_S_PER_SIM_S] if sps else None
        rows.append(row)
    return rows


# Speed targets: atmsim at least this many times OTHER's events/s (issue 2: hold 0.7x
# the hand loop; issue 14: cell_queue 1.0x the hand loop, 50x SimPy, mux 2.0x the
# hand-written mux loop in cells/s).  Lindley (no event list) is a lower bound on the
# cost, with no target.
TARGETS = {("hold", "atmsim/hand_heap"): 0.7, ("hold", "atmsim/simpy"): 50.0,
           ("cell_queue", "atmsim/hand_heap"): 1.0, ("cell_queue", "atmsim/simpy"): 50.0,
           ("mux", "atmsim/hand_heap"): 2.0,
           ("domingo95_exp2_ref", "atmsim/before"): 2.0, ("lazarou96_mismatch_paced_ref", "atmsim/before"): 2.0}

#: Issue 14's "today" for the end-to-end scenarios: kernel events per wall second on the
#: development machine before issue 14 (docs/log/performance.md, issue 13's before/after
#: table, best "before" runs), when every departure was an event. The target is twice
#: these. A design that removes events per cell does the same work in fewer events, so
#: the ratio counts the work in the event-per-departure path's events: the same run with
#: `fast_path = false` gives the count (untimed), divided by the timed run's wall time.
#:
#: They were measured on the paper scenarios' files of that day, which have changed since
#: (domingo95's switch got receiving buffers and a fabric, its fibre loops and lazarou96's
#: hosts became the ports' own lines instead of links): today's files do other work in
#: other events, so the ratio would compare two workloads. The rows with these targets
#: (``*_ref``) run frozen copies of the files as they were (:data:`REFERENCE_WORKLOADS`);
#: the paper scenarios' own rows report their simulated seconds per wall second.
BEFORE_EVENTS_PER_S = {"domingo95_exp2_ref": 33.45e6, "lazarou96_mismatch_paced_ref": 39.35e6}

#: The reference workloads under ``scenarios/bench/``: row name -> (file, simulated
#: seconds in full and quick mode, SHA-256 of the file). The files must never change
#: (tests check the hash): the constants above count their work.
REFERENCE_WORKLOADS = {
    "domingo95_exp2_ref": ("domingo95_exp2_2026-11-24.toml", 1.0, 0.1,
                           "35462c74534c79ad81eb6603b8dbd9885eefc7e4145e63bdef0cd3f6420ed84e"),
    "lazarou96_mismatch_paced_ref": ("lazarou96_mismatch_paced_2026-11-24.toml", 30.0, 4.0,
                                     "895b37eee78be3b9e4acf355493ad36a4fe957841bb86cf03af089cc55efa608"),
}


def target_of(name: str, ratio_key: str) -> float | None:
    """The speed target of benchmark ``name``'s ratio ``ratio_key`` (e.g. ``cell_queue``,
    ``atmsim/hand_heap``); None: no target."""
    return TARGETS.get((name, ratio_key))


def ratios(rows: list[dict[str, Any]]) -> list[tuple[str, str, float]]:
    """(benchmark, 'atmsim/OTHER', speed ratio = atmsim events/s ÷ OTHER events/s);
    'atmsim/before' compares with :data:`BEFORE_EVENTS_PER_S`."""
    out = []
    for name in ("hold", "cell_queue", "mux"):
        by_impl = {r["impl"]: r for r in rows if r["name"] == name}
        base = by_impl.get("atmsim")
        for other in ("hand_heap", "simpy", "lindley"):
            if base and other in by_impl and by_impl[other]["events_per_s"]:
                out.append((name, f"atmsim/{other}", base["events_per_s"] / by_impl[other]["events_per_s"]))
    for r in rows:
        rate = r.get("exact_events_per_s") or r["events_per_s"]
        if r["name"] in BEFORE_EVENTS_PER_S and rate:
            out.append((r["name"], "atmsim/before", rate / BEFORE_EVENTS_PER_S[r["name"]]))
    return out


def build() -> str:
    """How the native module was compiled (tools/pgo-build.sh, docs/performance.md,
    "Profile-guided build")."""
    return {"pgo": "profile-guided build", "plain": "plain build (no profile)"}.get(
        _atmsim.build_profile(), _atmsim.build_profile())


def machine() -> str:
    return f"{platform.machine()} {platform.processor() or ''} {platform.system()} {platform.release()}, " \
           f"Python {platform.python_version()}, native module: {build()}".replace("  ", " ")


# --------------------------------------------------------------------------- start-up
#: Issue 19 item 8: `atmsim run` of a 1 ms scenario, whole process, at most this (s).
STARTUP_TARGET_S = 0.15


def startup_row(quick: bool = False) -> dict[str, Any]:
    """Wall time of the whole ``atmsim run`` process for a 1 ms scenario (the Poisson
    example shortened to 1 ms): interpreter start, imports, load, run, print.  The
    median of 7 runs (3 with --quick) after one warm-up run (file cache); ``met``
    compares the median with :data:`STARTUP_TARGET_S`."""
    import shutil
    import statistics
    import subprocess
    import sys
    from pathlib import Path

    script = Path(sys.executable).with_name("atmsim")
    cmd = [str(script)] if script.exists() else ([shutil.which("atmsim")] if shutil.which("atmsim")
                                                 else [sys.executable, "-m", "atmsim"])
    scenario = Path(__file__).resolve().parents[2] / "scenarios" / "examples" / "poisson_oc3.toml"
    args = cmd + ["run", str(scenario), "--quiet", "--set", "scenario.duration=1 ms", "--set", "scenario.warmup=0 s"]
    # As a user runs it: Python writes and reuses bytecode (the warm-up run writes it).
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONWARNINGS", "PYTHONDONTWRITEBYTECODE")}
    times = []
    for k in range((3 if quick else 7) + 1):
        t0 = time.perf_counter()
        proc = subprocess.run(args, capture_output=True, env=env)
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            raise RuntimeError(f"start-up benchmark: atmsim run failed: {proc.stderr.decode(errors='replace')}")
        if k:  # the first one warms the file cache
            times.append(wall)
    median = statistics.median(times)
    return {"name": "startup", "command": "atmsim run poisson_oc3.toml (1 ms simulated) --quiet",
            "runs": len(times), "median_s": median, "min_s": min(times), "target_s": STARTUP_TARGET_S,
            "met": median <= STARTUP_TARGET_S}


def main(quick: bool = False, json_out: bool = False) -> None:
    rows = run_all(quick)
    memory = memory_rows(quick)
    startup = startup_row(quick)
    if json_out:
        print(json.dumps({"benchmarks": rows, "quick": quick, "build": _atmsim.build_profile(),
                          "memory": memory, "startup": startup,
                          "ratios": [{"name": n, "ratio": k, "value": v, "target": target_of(n, k),
                                      "met": None if target_of(n, k) is None else v >= target_of(n, k)}
                                     for n, k, v in ratios(rows)]}))
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
        t = target_of(name, k)
        verdict = "" if t is None else f"   target >= {t:g}: {'met' if v >= t else 'NOT met'}"
        print(f"  {name:<10}  {k:<16}  {v:8.2f}{verdict}")
    for r in rows:
        if r["name"] == "domingo95_exp2" and r.get("cells_per_s"):
            print(f"\ndomingo95 experiment 2 (switch, loops, hosts): {r['cells_switched']:,} cells switched, "
                  f"{r['cells_per_s'] / 1e6:.2f} M cells/s, {r['sim_s_per_wall_s']:.1f} simulated s per wall s")
    for r in rows:
        if r["name"].startswith("lazarou96_mismatch") and r.get("x_bones"):
            lo, hi = r["x_bones"]
            print(f"{r['name']}: {r['sim_s_per_wall_s']:.0f} simulated s per wall s (target >= 10); "
                  f"{lo:,.0f}-{hi:,.0f}x BONeS DESIGNER's 20-30 min per simulated second (lazarou96 section 5)")
    for r in rows:
        if r["name"] == "buddhikot92_gateway" and r.get("cells_per_s"):
            sps = r["sim_s_per_wall_s"]
            print(f"buddhikot92 ATM-FDDI gateway at {r['offered_mbps']:g} Mb/s offered: {r['cells_in']:,} cells, "
                  f"{r['cells_per_s'] / 1e6:.2f} M cells/s, {sps:.1f} simulated s per wall s (target >= 10: "
                  f"{'met' if sps >= 10 else 'NOT met'})")
        if r["name"] == "dastangoo96_parking_wan" and r.get("sim_s_per_wall_s"):
            each = ", ".join(f"{x:.2f}" for x in r["sim_s_per_wall_s_runs"] if x)
            print(f"dastangoo96 WAN parking lot (6 ABR sessions, 4 switches): {r['sim_s_per_wall_s']:.2f} simulated s "
                  f"per wall s, best of {len(r['sim_s_per_wall_s_runs'])} runs ({each}) "
                  f"(target >= {r['target_sim_s_per_wall_s']:g}: {'met' if r['met'] else 'NOT met'}); "
                  f"{r['events_per_cell']:.1f} kernel events per cell sent ({r['cells']:,} cells), "
                  f"{r['scheduled_per_cell']:.1f} of them through the event list")
    print("\nmemory (SPEC section 6: 10,000 VCs and 10^6 queued cells well under 1 GB):")
    for m in memory:
        if m["name"] == "memory_scale":
            print(f"  {m['vcs']:,} VCs with {m['queued_cells']:,} cells queued: simulation {m['sim_bytes'] / 2**20:.0f} MiB, "
                  f"whole process at its peak {m['peak_rss_bytes'] / 2**20:.0f} MiB (loaded in {m['load_s']:.2f} s)")
        else:
            what = "queued cell" if m["name"] == "memory_per_queued_cell" else "VC"
            print(f"  per {what}: {m['bytes_per_unit']:.0f} bytes (between {m['sizes'][0]:,} and {m['sizes'][1]:,})")
    print(f"\nstart-up: {startup['command']}, whole process: median {startup['median_s']:.3f} s, "
          f"min {startup['min_s']:.3f} s over {startup['runs']} runs; target <= {startup['target_s']:g} s: "
          f"{'met' if startup['met'] else 'NOT met'}")
    print(f"\nmachine: {machine()}" + ("   (--quick: 10x fewer events, not a measurement)" if quick else ""))


# --------------------------------------------------------------------------- memory
# SPEC section 6 "Scale": memory per VC and per queued cell reported; 10,000 VCs and
# 10^6 queued cells fit in well under 1 GB.  Each measurement runs in a fresh
# interpreter (`python -c`), so earlier runs do not inflate it:
#
# * the simulation's memory is the largest resident set seen during the run (sampled
#   at every progress callback, i.e. every 65,536 events, before the result table is
#   built) minus the resident set after loading the scenario;
# * per queued cell: CBR cells at the OC-3c rate into an unlimited FIFO served at
#   1 kb/s, 10^5 and 10^6 cells queued; per VC: N CBR sources on their own VCs, a
#   multiplexer and a switch with per-VC queues and per-port per-VC counters, to a
#   sink with per-VC statistics, N = 1,000 and 10,000, lightly loaded (10 cells/s per
#   VC for 10 s); the figure is the difference between the two sizes divided by the
#   difference in cells or VCs (it includes each VC's source component, its random
#   stream, and its books in the ledger and at the sink);
# * scale: 10,000 VCs whose 10^6 cells all wait in the multiplexer at the end: the
#   process's peak resident set (VmHWM, atmsim.memory.peak_bytes: interpreter, scenario, simulation and the
#   result table included) against the 1 GB target.
MEM_CELLS = (100_000, 1_000_000)
MEM_VCS = (1_000, 10_000)
OC3C_CELLS_PER_S = 149.76e6 / 424


def _cells_scenario(cells: int) -> str:
    """CBR at the OC-3c cell rate for as long as it takes to send `cells` cells, into a
    FIFO served at 1 kb/s: at the end (almost) all of them are queued."""
    duration = (cells - 0.5) / OC3C_CELLS_PER_S
    return f"""connections = ["src -> q", "q -> sink"]
[scenario]
duration = "{duration!r} s"
[components.src]
kind = "cbr"
rate = "149.76 Mb/s"
[components.q]
kind = "fifo"
rate = "1 kb/s"
[components.sink]
kind = "sink"
"""


def _vcs_scenario(vcs: int, cells_per_vc: int, mux_rate: str, seconds: float) -> str:
    """`vcs` CBR sources (VCI 32 …) → mux (fifo at `mux_rate`) → switch p1 → p2 (per-VC
    queues) → sink, `seconds` long, each source sending `cells_per_vc` cells a second."""
    lines = ["connections = [" + ", ".join([f'"s{i} -> mux"' for i in range(vcs)] + ['"mux -> sw.p1"', '"sw.p2 -> sink"']) + "]",
             "[scenario]", f'duration = "{seconds} s"',
             "[components.mux]", 'kind = "fifo"', f'rate = "{mux_rate}"',
             "[components.sw]", 'kind = "switch"', "ports = 2", 'queueing = "per-vc"',
             "vcs = [" + ", ".join(f'"p1:{32 + i} -> p2:{32 + i}"' for i in range(vcs)) + "]",
             "[components.sink]", 'kind = "sink"']
    for i in range(vcs):
        lines += [f"[components.s{i}]", 'kind = "cbr"', f'rate = "{cells_per_vc * 424} b/s"', f"vc = {32 + i}"]
    return "\n".join(lines) + "\n"


def _memory_child(kind: str, n: int) -> dict[str, Any]:
    """Runs one memory measurement in this (fresh) process; see the comment above."""
    if kind == "cells":
        text = _cells_scenario(n)
    elif kind == "vcs":
        # 10 cells/s per VC (10^5 cells/s at 10,000 VCs: under the OC-3c port's 353,207),
        # 10 s so that even 1,000 VCs give the progress sampler several looks.
        text = _vcs_scenario(n, 10, "149.76 Mb/s", 10.0)
    else:  # scale: n VCs, 100 cells each, all still queued at 1 kb/s
        text = _vcs_scenario(n, 100, "1 kb/s", 1.0)
    t0 = time.perf_counter()
    sc = _atmsim.loads(text, f"<bench memory {kind} {n}>")
    load_s = time.perf_counter() - t0
    loaded = resident_bytes()
    peak = [loaded]

    def sample(_now: float, _events: int) -> bool:
        peak[0] = max(peak[0], resident_bytes())
        return True

    t0 = time.perf_counter()
    r = sc.run(seed=SEED, run=0, progress=sample)
    run_s = time.perf_counter() - t0
    return {"kind": kind, "n": n, "load_s": load_s, "run_s": run_s, "events": r["events"],
            "queued_cells": r["ledger"]["in_flight"], "sim_bytes": peak[0] - loaded,
            "peak_rss_bytes": peak_bytes()}


def _memory_in_child(kind: str, n: int) -> dict[str, Any]:
    import subprocess
    import sys

    code = f"import json; from atmsim.bench import _memory_child; print(json.dumps(_memory_child({kind!r}, {n})))"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    if p.returncode != 0:
        raise RuntimeError(f"memory benchmark {kind} {n} failed: {p.stderr.strip().splitlines()[-1:] or p.returncode}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def memory_rows(quick: bool = False) -> list[dict[str, Any]]:
    """Memory per queued cell and per VC, and the 10,000-VC, 10^6-cell scale point."""
    div = 10 if quick else 1
    rows = []
    a, b = (_memory_in_child("cells", n // div) for n in MEM_CELLS)
    rows.append({"name": "memory_per_queued_cell", "impl": "atmsim", "sizes": [a["queued_cells"], b["queued_cells"]],
                 "sim_bytes": [a["sim_bytes"], b["sim_bytes"]],
                 "bytes_per_unit": (b["sim_bytes"] - a["sim_bytes"]) / max(b["queued_cells"] - a["queued_cells"], 1)})
    a, b = (_memory_in_child("vcs", n // div) for n in MEM_VCS)
    rows.append({"name": "memory_per_vc", "impl": "atmsim", "sizes": [a["n"], b["n"]],
                 "sim_bytes": [a["sim_bytes"], b["sim_bytes"]], "load_s": [a["load_s"], b["load_s"]],
                 "bytes_per_unit": (b["sim_bytes"] - a["sim_bytes"]) / max(b["n"] - a["n"], 1)})
    s = _memory_in_child("scale", MEM_VCS[1] // div)
    rows.append({"name": "memory_scale", "impl": "atmsim", "vcs": s["n"], "queued_cells": s["queued_cells"],
                 "sim_bytes": s["sim_bytes"], "peak_rss_bytes": s["peak_rss_bytes"], "load_s": s["load_s"],
                 "run_s": s["run_s"]})
    return rows


# --------------------------------------------------------------------------- scale
# `atmsim bench --scale` (issue 14 item 5): cost per cell as the network grows.
#
# * scale_vcs — N Poisson sources, one VC each (VPI/VCI labels), spread over 16 OC-3c
#   multiplexers (unlimited FIFOs) feeding the 16 input ports of a 16-port switch with
#   per-VC queues, each VC routed to the next port's
#   output and on to one sink per port; the total offered load is fixed (half of each
#   OC-3c output port), so each VC carries 1/N of it and the run switches the same
#   number of cells whatever N: cells delivered per wall second of the event loop
#   (loading the scenario, building the components and writing the report are fixed
#   costs that grow with N; their times are reported beside it).
# * scale_pending — the hold model with 10 … 10^6 pending events: events per wall second.
#
# Goal (issue 14): a flat curve, cells/s at 100,000 VCs >= 0.5x cells/s at 10 VCs.
SCALE_VCS = (10, 1_000, 10_000, 100_000)
SCALE_PENDING = (10, 1_000, 100_000, 1_000_000)
SCALE_CELLS = 2_000_000
SCALE_PORTS = 16
SCALE_TARGET = 0.5


def _scale_scenario(vcs: int, seconds: float) -> str:
    per_vc_bps = SCALE_PORTS * 0.5 * 149.76e6 / vcs
    conns = [f'"s{i} -> in{i % SCALE_PORTS + 1}"' for i in range(vcs)]
    used = range(1, min(vcs, SCALE_PORTS) + 1)
    conns += [f'"in{k} -> sw.p{k}"' for k in used]
    conns += [f'"sw.p{k} -> sink{k}"' for k in range(1, SCALE_PORTS + 1)]
    # VPI/VCI labels: VCIs 32 … 60,031 on VPI 0, 1, … (a VCI has 16 bits).
    label = [(i // 60_000, 32 + i % 60_000) for i in range(vcs)]
    routes = ", ".join(f'"p{i % SCALE_PORTS + 1}:{p}/{c} -> p{(i + 1) % SCALE_PORTS + 1}:{p}/{c}"' for i, (p, c) in enumerate(label))
    lines = ["connections = [" + ", ".join(conns) + "]", "[scenario]", f'duration = "{seconds!r} s"',
             "[components.sw]", 'kind = "switch"', f"ports = {SCALE_PORTS}", 'queueing = "per-vc"',
             f"vcs = [{routes}]"]
    for k in used:
        lines += [f"[components.in{k}]", 'kind = "fifo"', 'phy = "OC-3c"']
    for k in range(1, SCALE_PORTS + 1):
        lines += [f"[components.sink{k}]", 'kind = "sink"']
    for i in range(vcs):
        p, c = label[i]
        lines += [f"[components.s{i}]", 'kind = "poisson"', f'rate = "{per_vc_bps!r} b/s"', f"vc = {p << 16 | c}"]
    return "\n".join(lines) + "\n"


# * scale_pairs — N independent ``cbr -> sink`` pairs (1 Mb/s each, 1 ms), N = 10 …
#   100,000 (issue 44 item 1: memory grew with N² and 100,000 pairs were killed by
#   the OOM killer at 23.8 GB): the whole process's peak resident memory and the wall
#   time to load and run, each N in a fresh process. Targets: 100,000 pairs in under
#   2 GB and 30 s; linear (bytes per pair at the most pairs ≤ 2× at 1,000).
SCALE_PAIRS = (10, 1_000, 10_000, 100_000)
PAIRS_MAX_BYTES = 2 * 1024**3
PAIRS_MAX_S = 30.0


def pairs_scenario(n: int) -> str:
    """N independent ``cbr -> sink`` pairs (1 Mb/s, VC i + 1), 1 ms."""
    lines = ["connections = [" + ", ".join(f'"s{i} -> k{i}"' for i in range(n)) + "]",
             "[scenario]", 'name = "pairs"', 'duration = "1 ms"', 'warmup = "0 s"']
    for i in range(n):
        lines += [f"[components.s{i}]", 'kind = "cbr"', 'rate = "1 Mb/s"', f"vc = {i + 1}", f"[components.k{i}]", 'kind = "sink"']
    return "\n".join(lines) + "\n"


def _pairs_child(n: int) -> dict[str, Any]:
    """Loads and runs ``pairs_scenario(n)`` in this (fresh) process."""
    text = pairs_scenario(n)
    t0 = time.perf_counter()
    sc = _atmsim.loads(text, f"<bench pairs {n}>")
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    r = sc.run(seed=SEED, run=0)
    run_s = time.perf_counter() - t0
    return {"name": "scale_pairs", "impl": "atmsim", "pairs": n, "components": 2 * n, "load_s": load_s, "run_s": run_s,
            "wall_s": load_s + run_s, "cells": int(r["ledger"]["delivered"]),
            "peak_rss_bytes": peak_bytes()}


def pairs_rows(quick: bool = False) -> list[dict[str, Any]]:
    """Memory and time against the number of independent pairs, each in a child."""
    import subprocess
    import sys

    rows = []
    for n in (SCALE_PAIRS[:2] if quick else SCALE_PAIRS):
        code = f"import json; from atmsim.bench import _pairs_child; print(json.dumps(_pairs_child({n})))"
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
        if p.returncode != 0:
            raise RuntimeError(f"scale benchmark, {n:,} pairs, failed: {p.stderr.strip().splitlines()[-1:] or p.returncode}")
        rows.append(json.loads(p.stdout.strip().splitlines()[-1]))
    return rows


def pairs_verdict(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """At the most pairs measured: within 2 GB and 30 s, and bytes per pair at most
    twice those at 1,000 pairs (the process's fixed ~40 MB taken off both)."""
    p = sorted((r for r in rows if r["name"] == "scale_pairs"), key=lambda r: r["pairs"])
    if len(p) < 2:
        return None
    base = p[0]["peak_rss_bytes"]
    ref = next((r for r in p if r["pairs"] >= 1_000), p[-1])
    per = lambda r: (r["peak_rss_bytes"] - base) / r["pairs"]  # noqa: E731
    last = p[-1]
    growth = per(last) / per(ref) if per(ref) > 0 else None
    return {"pairs": last["pairs"], "bytes": last["peak_rss_bytes"], "wall_s": last["wall_s"], "growth": growth,
            "met": last["peak_rss_bytes"] < PAIRS_MAX_BYTES and last["wall_s"] < PAIRS_MAX_S and (growth is None or growth <= 2.0)}


def scale_rows(quick: bool = False) -> list[dict[str, Any]]:
    """Cells per wall second against the number of VCs, and events per wall second
    against the number of pending events (see the comment above)."""
    div = 10 if quick else 1
    cells = SCALE_CELLS // div
    seconds = cells / (SCALE_PORTS * 0.5 * OC3C_CELLS_PER_S)
    rows = []
    for n in (SCALE_VCS[:2] if quick else SCALE_VCS):
        t0 = time.perf_counter()
        sc = _atmsim.loads(_scale_scenario(n, seconds), f"<bench scale {n} VCs>")
        load_s = time.perf_counter() - t0
        r = sc.run(seed=SEED, run=0)
        delivered = int(r["ledger"]["delivered"])
        loop = float(r["loop_s"])
        rows.append({"name": "scale_vcs", "impl": "atmsim", "vcs": n, "cells": delivered, "events": int(r["events"]),
                     "wall_s": loop, "load_s": load_s, "build_report_s": float(r["wall_s"]) - loop,
                     "cells_per_s": delivered / loop if loop > 0 else None})
    for n in (SCALE_PENDING[:2] if quick else SCALE_PENDING):
        m = _atmsim.bench_hold("atmsim", n, max(cells, 4 * n), SEED)
        rows.append({"name": "scale_pending", "impl": "atmsim", "pending": n, "events": int(m["events"]),
                     "wall_s": float(m["wall_s"]),
                     "events_per_s": m["events"] / m["wall_s"] if m["wall_s"] > 0 else None})
    rows += pairs_rows(quick)
    return rows


def scale_flatness(rows: list[dict[str, Any]]) -> float | None:
    """cells/s at the most VCs measured ÷ cells/s at the fewest (target >= 0.5)."""
    v = sorted((r for r in rows if r["name"] == "scale_vcs" and r["cells_per_s"]), key=lambda r: r["vcs"])
    return v[-1]["cells_per_s"] / v[0]["cells_per_s"] if len(v) >= 2 else None


def scale_main(quick: bool = False, json_out: bool = False, plot: str | None = None) -> None:
    rows = scale_rows(quick)
    if plot:
        from atmsim.plot import scale_figure

        scale_figure(rows, SCALE_TARGET, plot)
    if json_out:
        f = scale_flatness(rows)
        print(json.dumps({"scale": rows, "flatness": f, "target": SCALE_TARGET,
                          "met": None if f is None else f >= SCALE_TARGET, "pairs": pairs_verdict(rows), "quick": quick}))
        return
    print_scale(rows)
    print(f"\nmachine: {machine()}" + ("   (--quick: 10 and 1,000 only, not a measurement)" if quick else ""))


def print_scale(rows: list[dict[str, Any]]) -> None:
    print("cost as the network grows (issue 14):")
    for r in rows:
        if r["name"] == "scale_vcs":
            print(f"  {r['vcs']:>7,} VCs, 16-port switch, per-VC queues: {r['cells']:,} cells, "
                  f"{r['cells_per_s'] / 1e6:6.2f} M cells/s in the event loop   (loaded in {r['load_s']:.2f} s, "
                  f"built and reported in {r['build_report_s']:.2f} s)")
    for r in rows:
        if r["name"] == "scale_pending":
            print(f"  {r['pending']:>9,} pending events (hold): {r['events_per_s'] / 1e6:6.2f} M events/s")
    f = scale_flatness(rows)
    if f is not None:
        print(f"  flatness: cells/s at the most VCs / at 10 VCs = {f:.2f}   target >= {SCALE_TARGET:g}: "
              f"{'met' if f >= SCALE_TARGET else 'NOT met'}")
    pairs = [r for r in rows if r["name"] == "scale_pairs"]
    if pairs:
        print("memory and time against components (issue 44): N independent cbr -> sink pairs, 1 ms, each in a fresh process")
        for r in pairs:
            print(f"  {r['pairs']:>7,} pairs ({r['components']:,} components): peak {r['peak_rss_bytes'] / 2**20:8.1f} MiB, "
                  f"load {r['load_s']:6.2f} s, run {r['run_s']:6.2f} s")
        v = pairs_verdict(rows)
        if v is not None:
            growth = "" if v["growth"] is None else f", bytes per pair {v['growth']:.2f}x those at 1,000"
            print(f"  {v['pairs']:,} pairs: {v['bytes'] / 2**30:.2f} GiB, {v['wall_s']:.1f} s{growth}   "
                  f"target < {PAIRS_MAX_BYTES / 2**30:g} GiB, < {PAIRS_MAX_S:g} s, <= 2x: {'met' if v['met'] else 'NOT met'}")


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
