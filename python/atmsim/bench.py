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
    print(f"\nmachine: {machine()}" + ("   (--quick: 10x fewer events, not a measurement)" if quick else ""))
