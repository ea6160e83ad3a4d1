"""Exact queueing results used by ``atmsim validate``.

Everything here is computed independently of the simulator (numpy/scipy only) so
that the validation compares atmsim against theory, never against itself.

References
----------
* Pollaczek–Khinchine mean value formula for M/G/1, specialised to deterministic
  service: Kleinrock, *Queueing Systems* vol. 1 (1975), eq. 5.73.
* M/G/1/K via the departure-epoch embedded Markov chain: Gross & Harris,
  *Fundamentals of Queueing Theory*, 3rd ed. (1998), section 5.1.3.
* M/D/1/K with partial buffer sharing (space priority; CLP = 1 cells refused from a
  threshold T on): the departure-epoch chain of a queue with state-dependent Poisson
  arrivals, time averages by the semi-Markov argument; H. Kröner, G. Hébuterne,
  P. Boyer, A. Gravey, "Priority management in ATM switching nodes", IEEE JSAC 9(3),
  1991 (the mechanism); Gross & Harris 5.1.3 (the chain).
* M/D/1 waiting-time distribution (Erlang 1909; Crommelin 1932):
  P(W ≤ t) = (1−ρ) Σ_{k=0}^{⌊t/S⌋} (λ(kS−t))^k / k! · e^{−λ(kS−t)}; L. Kleinrock,
  *Queueing Systems* vol. 1 (1975), problem 5.15; evaluated in decimal arithmetic,
  since its terms alternate in sign and grow like e^{2λt}.
* M/G/1 with non-preemptive priority classes (Cobham's formula): A. Cobham, "Priority
  assignment in waiting line problems", Operations Research 2(1), 1954; Kleinrock,
  *Queueing Systems* vol. 2 (1976), eq. 3.30.
* N·D/D/1 queue tail: J. W. Roberts and J. T. Virtamo, "The superposition of periodic
  cell arrival streams in an ATM multiplexer", IEEE Trans. Commun. 39(2), 1991.
* Buddhikot–Kapoor–Parulkar on-off source (buddhikot92): alternating renewal process,
  renewal-reward theorem.
* TCP Reno throughput under loss (PFTK): J. Padhye, V. Firoiu, D. Towsley, J. Kurose,
  "Modeling TCP throughput: a simple model and its empirical validation", ACM SIGCOMM
  1998, eq. (31).
"""
from __future__ import annotations

import math
from typing import Optional

import numpy as np
from scipy import stats

#: Bits in one ATM cell (53 bytes).
CELL_BITS = 424
#: SONET OC-3c payload rate available to cells (bit/s).
OC3C_BPS = 149.76e6
#: One OC-3c cell slot in seconds (424 bit / 149.76 Mb/s ≈ 2.8312 µs).
OC3C_SLOT_S = CELL_BITS / OC3C_BPS


def md1_mean_wait(rho: float, service_s: float = OC3C_SLOT_S) -> float:
    """Mean waiting time in queue (arrival → start of service) of M/D/1.

    Pollaczek–Khinchine with deterministic service S: Wq = ρ·S / (2(1−ρ)).
    """
    if not 0.0 <= rho < 1.0:
        raise ValueError(f"M/D/1 needs 0 <= rho < 1, got {rho}")
    return rho * service_s / (2.0 * (1.0 - rho))


def md1_wait_cdf(t_s: float, rho: float, service_s: float = OC3C_SLOT_S) -> float:
    """P(W ≤ t) of the M/D/1 FIFO waiting time (arrival → start of service).

    Erlang's formula, P(W ≤ t) = (1−ρ) Σ_{k=0}^{⌊t/S⌋} (λ(kS−t))^k / k! · e^{−λ(kS−t)}
    with λ = ρ/S. Its terms alternate in sign and reach e^{2λt} in size, so the sum is
    taken in decimal arithmetic with enough digits to lose none of the result's.
    """
    if not 0.0 < rho < 1.0:
        raise ValueError(f"M/D/1 needs 0 < rho < 1, got {rho}")
    if t_s < 0.0:
        return 0.0
    from decimal import Decimal, localcontext

    x = Decimal(t_s) / Decimal(service_s)         # t in service times
    lam = Decimal(rho)                             # arrivals per service time
    with localcontext() as ctx:
        # e^{2λt} needs 2λt/ln 10 digits before the result's own 30.
        ctx.prec = 40 + int(2.0 * rho * float(x) / math.log(10.0))
        total = Decimal(0)
        k = 0
        while k <= x:
            a = lam * (Decimal(k) - x)             # λ(kS − t) ≤ 0
            power = a ** k if k else Decimal(1)    # Decimal's 0 ** 0 is undefined
            term = power / math.factorial(k) * (-a).exp()
            total += term
            k += 1
        return float((1 - lam) * total)


def md1_delay_quantile(p: float, rho: float, service_s: float = OC3C_SLOT_S) -> float:
    """The p quantile of an M/D/1 cell's delay through the queue, waiting time plus its
    own service time S: the smallest d with P(W + S ≤ d) ≥ p (bisection on
    [`md1_wait_cdf`]). W has an atom of 1−ρ at 0, so for p ≤ 1−ρ the quantile is S."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"a quantile level is in (0, 1), got {p}")
    if p <= 1.0 - rho:
        return service_s
    lo, hi = 0.0, service_s
    while md1_wait_cdf(hi, rho, service_s) < p:
        lo, hi = hi, 2.0 * hi
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if md1_wait_cdf(mid, rho, service_s) < p:
            lo = mid
        else:
            hi = mid
    return hi + service_s


def _poisson_pmf(rho: float, kmax: int) -> np.ndarray:
    return stats.poisson.pmf(np.arange(kmax + 1), rho)


def md1k_departure_distribution(rho: float, k: int) -> np.ndarray:
    """Stationary distribution π^d of the number left behind by a departure in
    M/D/1/K (states 0..K−1), service time = 1 so arrivals per service ~ Poisson(ρ).

    Transition matrix (Gross & Harris 5.1.3), a_j = e^{−ρ} ρ^j / j!:
      P[0, j] = a_j,          j < K−1;   P[0, K−1] = Σ_{n≥K−1} a_n
      P[i, j] = a_{j−i+1},    i−1 ≤ j < K−1; P[i, K−1] = Σ_{n≥K−i} a_n   (i ≥ 1)
    Tail masses use the Poisson survival function so that tiny loss probabilities
    are not lost to cancellation.
    """
    if k < 1:
        raise ValueError("K must be >= 1")
    if rho <= 0:
        raise ValueError("rho must be > 0")
    a = _poisson_pmf(rho, k)
    p = np.zeros((k, k))
    for i in range(k):
        base = max(i - 1, 0)  # the lowest reachable state
        for j in range(base, k - 1):
            p[i, j] = a[j - base]
        # everything else is clipped at K−1 (arrivals that find the system full are lost)
        n_min = (k - 1) - base
        p[i, k - 1] = stats.poisson.sf(n_min - 1, rho)
    # Solve π (P − I) = 0 with Σπ = 1 (replace one balance equation by normalisation).
    a_mat = (p - np.eye(k)).T
    a_mat[-1, :] = 1.0
    b = np.zeros(k)
    b[-1] = 1.0
    pi = np.linalg.solve(a_mat, b)
    return pi


def md1k_loss(rho: float, k: int) -> float:
    """Cell loss probability of M/D/1/K, K = places in the system including the one
    in service: P_loss = 1 − 1/(π^d_0 + ρ)  (Gross & Harris, M/G/1/K).

    Sanity: K = 1 gives ρ/(1+ρ) (Erlang loss with one server)."""
    pi = md1k_departure_distribution(rho, k)
    return 1.0 - 1.0 / (pi[0] + rho)


def md1_priority_waits(rhos: list[float], service_s: float = OC3C_SLOT_S) -> list[float]:
    """Mean waiting times (arrival → start of service) of the priority classes of an
    M/D/1 queue with strict, non-preemptive priority (class 0 first, FIFO or any
    order blind to the service times within a class), class k at load ρ_k.

    Cobham: W_k = W0 / ((1 − σ_{k−1})(1 − σ_k)), σ_k = ρ_0 + … + ρ_k, where
    W0 = Σ λ_i E[S²]/2 = ρ S/2 for a deterministic service S is the mean residual work
    of the cell in service an arrival finds. Needs σ < 1."""
    if any(r < 0 for r in rhos) or not 0 < sum(rhos) < 1:
        raise ValueError("priority classes need loads >= 0 summing to a value in (0, 1)")
    w0 = sum(rhos) * service_s / 2.0
    waits, below = [], 0.0
    for r in rhos:
        waits.append(w0 / ((1.0 - below) * (1.0 - below - r)))
        below += r
    return waits


def md1k_pbs_occupancy(rho0: float, rho1: float, k: int, t: int) -> np.ndarray:
    """Time-average distribution of the number in system (the cell in service
    included), states 0..K, of a unit-service FIFO of K places fed by two Poisson
    streams of loads ρ0 (CLP = 0: admitted while fewer than K are there) and ρ1
    (CLP = 1: admitted while fewer than T are there), 1 ≤ T ≤ K.

    Between departures the number in system is a pure-birth process with rate
    λ(n) = ρ0 + ρ1 below T, ρ0 from T to K − 1, 0 at K (generator Q). A service
    starting with s cells ends with m cells with probability [e^Q]_{s,m}, so the
    number left by a departure is a Markov chain (state 0 behaves as 1: the next
    arrival starts a service). Its stationary law π weighs what each cycle spends in
    each state — ∫₀¹ e^{Qu} du from row s, from one block exponential (Van Loan 1978),
    plus an idle period of mean 1/(ρ0 + ρ1) after a departure that empties the
    system — over the cycle's mean length. With T = K it is M/D/1/K
    (:func:`md1k_loss` = p_K)."""
    from scipy.linalg import expm

    if not 1 <= t <= k:
        raise ValueError("partial buffer sharing needs 1 <= T <= K")
    if rho0 < 0 or rho1 < 0 or rho0 + rho1 <= 0:
        raise ValueError("loads must be >= 0 and not both 0")
    lam = np.array([rho0 + rho1 if n < t else (rho0 if n < k else 0.0) for n in range(k + 1)])
    q = np.zeros((k + 1, k + 1))
    for n in range(k):
        q[n, n], q[n, n + 1] = -lam[n], lam[n]
    block = np.zeros((2 * (k + 1), 2 * (k + 1)))
    block[: k + 1, : k + 1] = q
    block[: k + 1, k + 1:] = np.eye(k + 1)
    e = expm(block)
    ends, spent = e[: k + 1, : k + 1], e[: k + 1, k + 1:]
    p = np.zeros((k, k))
    for i in range(k):
        s = max(i, 1)
        p[i, s - 1:] = ends[s, s:]
    a_mat = (p - np.eye(k)).T
    a_mat[-1, :] = 1.0
    b = np.zeros(k)
    b[-1] = 1.0
    pi = np.linalg.solve(a_mat, b)
    idle = 1.0 / lam[0]
    occupancy = pi[0] * spent[1] + pi[1:] @ spent[1:k]
    occupancy[0] += pi[0] * idle
    return occupancy / (1.0 + pi[0] * idle)


def md1k_pbs_loss(rho0: float, rho1: float, k: int, t: int) -> tuple[float, float]:
    """(CLP = 0 loss, CLP = 1 loss) of partial buffer sharing in a unit-service FIFO
    of K places with threshold T (:func:`md1k_pbs_occupancy`): by PASTA, a CLP = 0
    cell is lost when it finds K cells, a CLP = 1 cell when it finds T or more."""
    occ = md1k_pbs_occupancy(rho0, rho1, k, t)
    return float(occ[k]), float(occ[t:].sum())


def ndd1_tail(n_sources: int, period_slots: int, x: int) -> float:
    """Pr{Q > x} for N periodic (CBR) sources of period D slots with independent,
    uniformly distributed phases into a unit-service FIFO (Roberts & Virtamo 1991):

      Pr{Q > x} = Σ_{n=x+1}^{N} C(N,n) ((n−x)/D)^n (1 − (n−x)/D)^{N−n} (D−N+x)/(D−n+x)

    Q is the unfinished work (in slots) at an arbitrary instant; for integer x this
    is the same event as "more than x cells in the system" (the cell in service has
    residual work in (0, 1]).  Needs N < D (load below 1)."""
    n, d = n_sources, period_slots
    if not 0 < n < d:
        raise ValueError("N·D/D/1 needs 0 < N < D")
    if x < 0:
        raise ValueError("x must be >= 0")
    total = 0.0
    for m in range(x + 1, n + 1):
        u = (m - x) / d
        # log-space binomial term: avoids overflow of C(N, m) for large N
        log_term = (
            math.lgamma(n + 1) - math.lgamma(m + 1) - math.lgamma(n - m + 1)
            + m * math.log(u)
            + ((n - m) * math.log1p(-u) if n > m else 0.0)
        )
        total += math.exp(log_term) * (d - n + x) / (d - m + x)
    return total


def onoff_timing(peak_cps: float, mean_cps: float, burst_factor: float) -> tuple[float, float]:
    """Mean active and idle periods (s) of the buddhikot92 on-off source:
    T_on = B / (Λp − Λa), T_off = T_on·(Λp/Λa − 1), rates in cells/s."""
    if not 0 < mean_cps < peak_cps:
        raise ValueError("on-off source needs 0 < mean < peak")
    t_on = burst_factor / (peak_cps - mean_cps)
    t_off = t_on * (peak_cps / mean_cps - 1.0)
    return t_on, t_off


def onoff_mean_rate(peak_cps: float, mean_cps: float, burst_factor: float) -> float:
    """Long-run cell rate (cells/s) = Λp·T_on/(T_on+T_off) = Λa (renewal-reward)."""
    t_on, t_off = onoff_timing(peak_cps, mean_cps, burst_factor)
    return peak_cps * t_on / (t_on + t_off)


def onoff_mean_burst_cells(peak_cps: float, mean_cps: float, burst_factor: float) -> float:
    """Mean cells per active period = Λp·T_on = B·Λp/(Λp − Λa)."""
    t_on, _ = onoff_timing(peak_cps, mean_cps, burst_factor)
    return peak_cps * t_on


def ip_over_aal5_cells(data: int, transport_header: int = 8, mtu: int = 9180) -> int:
    """Cells carrying one datagram of `data` octets (plus an 8-octet ICMP/UDP header)
    over IPv4 (20-octet header, RFC 791 fragmentation at `mtu`), LLC/SNAP (8 octets,
    RFC 1483) and AAL5 (8-octet trailer, padded to 48-octet cells, I.363.5)."""
    payload = data + transport_header
    per = ((mtu - 20) // 8) * 8
    sizes = []
    while payload + 20 > mtu:
        sizes.append(per + 20)
        payload -= per
    sizes.append(payload + 20)
    return sum(-(-(ip + 8 + 8) // 48) for ip in sizes)


def aal5_cells(octets: int, overhead: int = 16) -> int:
    """Cells of one AAL5 PDU carrying a packet or frame of `octets` with `overhead`
    octets added (LLC/SNAP 8 and the trailer 8, RFC 1483 and I.363.5), padded to
    48-octet cells."""
    return -(-(octets + overhead) // 48)


def independent_pdu_loss(p: float, n: int) -> float:
    """Probability that a unit of n cells loses at least one when each cell is lost
    independently with probability p: 1 - (1 - p)^n."""
    return 1.0 - (1.0 - p) ** n


def student_t_ci(samples, confidence: float = 0.95) -> tuple[float, float, float]:
    """(mean, low, high): two-sided Student-t confidence interval of the mean of
    independent replications.  Needs at least two samples."""
    x = np.asarray(samples, dtype=float)
    if x.size < 2:
        raise ValueError("a confidence interval needs at least two replications")
    mean = float(x.mean())
    half = float(stats.t.ppf(0.5 + confidence / 2.0, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size))
    return mean, mean - half, mean + half


#: Octets of data in one TCP segment at the default IP over ATM MTU (9180 − 40).
TCP_MSS_9180 = 9140


def pftk_throughput(rtt_s: float, p: float, rto_s: float, b: int = 2,
                    wmax_segments: float | None = None, mss_bytes: int = TCP_MSS_9180) -> float:
    """TCP Reno bulk-transfer throughput (bit/s of data) under random loss from the
    PFTK "approximate model" (J. Padhye, V. Firoiu, D. Towsley, J. Kurose, "Modeling
    TCP throughput: a simple model and its empirical validation", ACM SIGCOMM 1998,
    eq. (31)):

      B(p) = min( Wmax/RTT,
                  1 / ( RTT·√(2bp/3) + T0·min(1, 3·√(3bp/8))·p·(1 + 32p²) ) )

    in segments per second, times ``mss_bytes``·8.  p is the probability that a
    segment is lost (the model's loss indications are triple-duplicate ACKs and
    timeouts), b the number of segments acknowledged by one ACK (2 with delayed
    ACKs), T0 = ``rto_s`` the first timeout of a timeout sequence (later ones double,
    which the factor 1 + 32p² approximates), Wmax the receiver's window in segments
    (None: not limited)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"PFTK needs 0 < p < 1, got {p}")
    if rtt_s <= 0 or rto_s <= 0:
        raise ValueError("RTT and T0 must be > 0")
    if b < 1:
        raise ValueError("b must be >= 1")
    td = rtt_s * math.sqrt(2.0 * b * p / 3.0)
    to = rto_s * min(1.0, 3.0 * math.sqrt(3.0 * b * p / 8.0)) * p * (1.0 + 32.0 * p * p)
    segments_per_s = 1.0 / (td + to)
    if wmax_segments is not None:
        if wmax_segments <= 0:
            raise ValueError("Wmax must be > 0")
        segments_per_s = min(segments_per_s, wmax_segments / rtt_s)
    return segments_per_s * mss_bytes * 8.0


def fddi_saturated_async_utilisation(n: int, ttrt_s: float, latency_s: float) -> float:
    """Fraction of time an FDDI ring carries frames when n stations always have
    asynchronous frames to send (no synchronous traffic): n(T − D)/(nT + D), T the
    TTRT and D the ring latency (R. Jain, "Performance analysis of FDDI token ring
    networks: effect of parameters and guidelines for setting TTRT", ACM SIGCOMM 1990;
    from the timed-token rules: n + 1 rotations of total length nT + D carry n(T − D)).
    Assumes frames that end exactly when the holding time does and a token of no
    length."""
    if n < 1 or not 0 <= latency_s < ttrt_s:
        raise ValueError("need n >= 1 and 0 <= D < TTRT")
    return n * (ttrt_s - latency_s) / (n * ttrt_s + latency_s)


def max_min_shares(capacity: dict[str, float], routes: list[list[str]],
                   demand: Optional[list[float]] = None, mcr: Optional[list[float]] = None) -> list[float]:
    """Max-min fair rates by progressive filling (water-filling; Bertsekas & Gallager,
    *Data Networks*, 2nd ed., section 6.5.2), with minimum rates and demand caps.

    ``capacity`` maps each link to its capacity; ``routes[i]`` lists the links session i
    crosses; ``demand[i]`` caps its rate (``math.inf``: greedy); ``mcr[i]`` is its
    guaranteed minimum. A water level L rises from 0; every session not yet frozen has
    rate max(MCR_i, L) (TM 4.0's "maximum of MCR or max-min share"). A session freezes
    when L reaches its demand, or when a link it crosses fills up (then at its rate at
    that level). The minima must fit: sum of MCR on a link ≤ its capacity.
    """
    n = len(routes)
    demand = list(demand) if demand is not None else [math.inf] * n
    mcr = list(mcr) if mcr is not None else [0.0] * n
    for link, c in capacity.items():
        if sum(mcr[i] for i in range(n) if link in routes[i]) > c * (1 + 1e-12):
            raise ValueError(f"the minimum rates on link {link} exceed its capacity {c}")
    rate = [math.nan] * n
    frozen = [False] * n
    while not all(frozen):
        # The level at which each link fills, given the frozen sessions' rates.
        best = math.inf
        full: list[str] = []
        for link, c in capacity.items():
            users = [i for i in range(n) if link in routes[i]]
            free = [i for i in users if not frozen[i]]
            if not free:
                continue
            room = c - sum(rate[i] for i in users if frozen[i])
            level = _fill_level(room, [mcr[i] for i in free])
            if level < best - 1e-12:
                best, full = level, [link]
            elif abs(level - best) <= 1e-12:
                full.append(link)
        dem = min((max(demand[i], mcr[i]) for i in range(n) if not frozen[i]), default=math.inf)
        if dem < best - 1e-12:
            for i in range(n):
                if not frozen[i] and max(demand[i], mcr[i]) <= dem + 1e-12:
                    rate[i], frozen[i] = max(demand[i], mcr[i]), True
            continue
        if not math.isfinite(best):
            raise ValueError("a session crosses no link and has no demand cap: its share is unbounded")
        for i in range(n):
            if not frozen[i] and any(link in routes[i] for link in full):
                rate[i], frozen[i] = max(mcr[i], best), True
    return rate


def _fill_level(room: float, mins: list[float]) -> float:
    """The level L with sum(max(m, L) for m in mins) = room (the sum rises with L)."""
    ms = sorted(mins)
    k = len(ms)
    # Between consecutive minima the sum is (sessions below L)·L + (minima above L).
    for j in range(k + 1):
        above = sum(ms[j:])
        level = (room - above) / j if j else -math.inf
        lo = ms[j - 1] if j else -math.inf
        hi = ms[j] if j < k else math.inf
        if j and lo - 1e-12 <= level <= hi + 1e-12:
            return level
    return max(ms) if ms else math.inf
