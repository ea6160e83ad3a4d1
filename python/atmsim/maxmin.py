"""Random ABR topologies for the max-min validation (``atmsim validate``, issue 15 item 7).

A topology is a chain of 2-8 switches joined by trunks of random rates; each of 2-20
sessions enters at one switch and leaves at a later one, so it crosses a random run of
trunks, and the bottlenecks fall where the rates and the session counts put them. Some
sessions have a minimum cell rate (MCR) and some a source-limited data rate. The
switch algorithm (ERICA, EPRCA or EFCI) runs on every trunk's forward port.

:func:`random_topology` returns the scenario text and, from the same random draw, the
links, routes, demands and minima that :func:`atmsim.analytic.max_min_shares` turns
into the expected rates — computed without the simulator.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from atmsim.analytic import CELL_BITS

#: OC-3c cell rate, Mb/s: the access ports and the trunks' links.
OC3C_MBPS = 149.76
#: Initial cell rate, Mb/s: low, so that no trunk starts with a backlog. With TM 4.0's
#: default ICR = PCR every session starts at 149.76 Mb/s and a slow trunk builds a
#: queue of tens of thousands of cells that ERICA (no queue control) drains only with its
#: 10% headroom, for seconds, delaying the RM cells that carry the feedback.
ICR_MBPS = 1.0  # (or the session's MCR, when higher: ICR ≥ MCR)
#: One in Nrm = 32 in-rate cells is a forward RM cell (TM 4.0 default): data get 31/32.
DATA_FRACTION = 31.0 / 32.0
#: The EPRCA sources' increase as a TM 4.0 RIF: the 1995 EPRCA draft adds AIR per cell
#: time, AIR·Nrm = 0.01892 × 32 Mb/s per backward RM cell, which at PCR = 155 Mb/s is
#: RIF = 1/256 (dastangoo96 Table 1; the `eprca95` set, docs/models/abr.md). TM 4.0's
#: default RIF = 1/16 adds 9.36 Mb/s at OC-3c per RM cell, more than most shares here.
EPRCA_RIF = 1.0 / 256.0


@dataclass
class Topology:
    text: str
    #: trunk name -> ABR capacity (Mb/s of cells): target utilisation × line rate
    capacity: dict[str, float]
    routes: list[list[str]]
    #: cell-rate cap per session (data rate × 32/31), math.inf when greedy
    demand: list[float]
    mcr: list[float]
    switches: int

    @property
    def sessions(self) -> int:
        return len(self.routes)


def random_topology(seed: int, algorithm: str = "erica", target: float = 0.9, duration_s: float = 0.6,
                    warmup_s: float = 0.3, delta: float = 0.1, single: bool = False,
                    erica_plus: bool = False, single_feedback: bool = False,
                    rif: float | None = None) -> Topology:
    """One random topology (reproducible from ``seed``).

    ``single``: one trunk between two switches that every session crosses, all
    sessions greedy (no MCR, no source limit): the single-bottleneck case where every
    VC at the congested port is bottlenecked there. Without it the draws are what they
    were before this option existed, so the other topologies do not change.

    ``erica_plus``: ERICA with ERICA+ queue control (`erica_plus = true`, default
    target delay; use ``target=1.0``, ERICA+ aims at the full line).

    ``single_feedback``: ERICA gives each VC one ER per averaging interval
    (`single_feedback = true`, 96-1172; docs/models/abr.md).

    ``rif``: the sources' rate increase factor (TM 4.0 defaults otherwise, RIF = 1/16);
    the EPRCA rows of ``atmsim validate`` use :data:`EPRCA_RIF`, the increase of the
    EPRCA draft's sources. The draws do not depend on it.
    """
    rng = np.random.default_rng(seed)
    n_sw = int(rng.integers(2, 9))
    n_s = int(rng.integers(2, 21))
    if single:
        n_sw = 2
    rates = [round(float(rng.uniform(30.0, OC3C_MBPS)), 3) for _ in range(n_sw - 1)]
    enter, leave = [], []
    for _ in range(n_s):
        a = int(rng.integers(0, n_sw - 1))
        b = int(rng.integers(a + 1, n_sw))
        enter.append(a)
        leave.append(b)
    routes = [[f"t{k}" for k in range(a, b)] for a, b in zip(enter, leave)]
    used = {t for r in routes for t in r}
    capacity = {f"t{k}": target * r for k, r in enumerate(rates) if f"t{k}" in used}
    # Minima: about a quarter of the sessions, each at most a fifth of the equal split
    # of its tightest trunk, so that the minima always fit.
    mcr, demand, demand_data = [], [], []
    for i in range(n_s):
        tight = min(capacity[t] / sum(1 for r in routes if t in r) for t in routes[i])
        mcr.append(round(float(rng.uniform(0.2, 1.0)) * tight / 5.0, 3) if rng.random() < 0.25 and not single else 0.0)
        if rng.random() < 0.2 and not single:
            d = round(float(rng.uniform(0.2, 0.8)) * tight, 3)
            demand_data.append(d)
            demand.append(d / DATA_FRACTION)
        else:
            demand_data.append(None)
            demand.append(math.inf)
    # Ports: p1 from/to the previous switch, p2 to/from the next, then one access port
    # per session entering or leaving here.
    port_of: dict[tuple[int, int, str], int] = {}
    nports = [2] * n_sw
    for i in range(n_s):
        for sw, role in ((enter[i], "in"), (leave[i], "out")):
            nports[sw] += 1
            port_of[(sw, i, role)] = nports[sw]
    conns: list[str] = []
    comps: list[str] = []
    for i in range(n_s):
        v = i + 1
        pin, pout = port_of[(enter[i], i, "in")], port_of[(leave[i], i, "out")]
        conns += [f"s{v} -> sw{enter[i]}.p{pin}", f"sw{enter[i]}.p{pin} -> s{v}.back",
                  f"sw{leave[i]}.p{pout} -> d{v}", f"d{v} -> sw{leave[i]}.p{pout}"]
        extra = ""
        if mcr[i] > 0:
            extra += f'mcr = "{mcr[i]} Mb/s"\n'
        if demand_data[i] is not None:
            extra += f'demand = "{demand_data[i]} Mb/s"\n'
        if rif is not None:
            extra += f"rif = {rif}\n"
        comps.append(f'[components.s{v}]\nkind = "abr_source"\nparams = "tm40"\npcr = "{OC3C_MBPS} Mb/s"\nicr = "{max(ICR_MBPS, mcr[i])} Mb/s"\nvc = {v}\n{extra}'
                     f'\n[components.d{v}]\nkind = "abr_dest"\n')
    for k in range(n_sw - 1):
        conns += [f"sw{k}.p2 -> f{k}", f"f{k} -> sw{k + 1}.p1", f"sw{k + 1}.p1 -> g{k}", f"g{k} -> sw{k}.p2"]
        for name in (f"f{k}", f"g{k}"):
            comps.append(f'[components.{name}]\nkind = "link"\nphy = "OC-3c"\nlength = "4 km"\n')
    for sw in range(n_sw):
        vcs = []
        for i in range(n_s):
            v = i + 1
            if enter[i] == sw:
                p = port_of[(sw, i, "in")]
                vcs += [f"p{p}:{v} -> p2:{v}", f"p2:{v} -> p{p}:{v}"]
            elif leave[i] == sw:
                p = port_of[(sw, i, "out")]
                vcs += [f"p1:{v} -> p{p}:{v}", f"p{p}:{v} -> p1:{v}"]
            elif enter[i] < sw < leave[i]:
                vcs += [f"p1:{v} -> p2:{v}", f"p2:{v} -> p1:{v}"]
        abr = ""
        if f"t{sw}" in capacity:
            abr = (f'port_phy = ["p2 = {rates[sw]} Mb/s"]\nabr = ["p2 = {algorithm}"]\n'
                   f"target_utilisation = {target}\ndelta = {delta}\nccr_on_grid = true\n")
            if erica_plus:
                abr += "erica_plus = true\n"
            if single_feedback:
                abr += "single_feedback = true\n"
            if algorithm == "efci":
                abr += 'efci_threshold = "500 cells"\n'
        comps.append(f'[components.sw{sw}]\nkind = "switch"\nports = {nports[sw]}\n{abr}vcs = {vcs!r}\n'.replace("'", '"'))
    head = "connections = [\n" + "".join(f'  "{c}",\n' for c in conns) + "]\n\n"
    head += (f'[scenario]\nname = "maxmin-{seed}"\ndescription = "random ABR topology {seed}: {n_sw} switches, '
             f'{n_s} sessions, {algorithm}"\nduration = "{duration_s} s"\nwarmup = "{warmup_s} s"\nseed = {seed}\n\n')
    return Topology(head + "\n".join(comps), capacity, routes, demand, mcr, n_sw)


def cells_per_s(mbps: float) -> float:
    return mbps * 1e6 / CELL_BITS
