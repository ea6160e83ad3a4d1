//! # atmsim-bench
//!
//! Two workloads, each in several implementations that do the same work, so that
//! `atmsim bench` can print their speeds side by side in one process run:
//!
//! - **hold**: `pending` exponential timers kept scheduled; each firing schedules one
//!   more (Vaucher & Duval's hold model). Implementations: `atmsim` (a `hold` component
//!   on the kernel, built from a scenario), `hand_heap` (a `BinaryHeap` loop).
//! - **cell_queue**: Poisson cells at `load` × the OC-3c cell rate into one FIFO of
//!   `capacity` cells (counting the one in transmission) served at the OC-3c cell rate.
//!   Implementations: `atmsim` (poisson → fifo → sink scenario), `hand_heap` (a
//!   `BinaryHeap` of arrival/departure events), `lindley` (the Lindley recursion on the
//!   unfinished work: no event list at all, the physical limit).
//!
//! Events are counted the same way everywhere: for hold, timers fired; for the cell
//! queue, arrivals plus departures.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::time::Instant;

use atmsim_kernel::{rng, Rate, SimTime};
use atmsim_scenario::Scenario;
use rand_distr::{Distribution, Exp1};

/// One benchmark measurement.
#[derive(Clone, Debug, PartialEq)]
pub struct Measurement {
    pub events: u64,
    pub wall_s: f64,
    /// A workload-specific number that shows the work was done (mean wait, loss …).
    pub check: f64,
    pub lost: u64,
}

/// OC-3c cell rate (149.76 Mb/s of cells), from the same preset table models use.
pub fn oc3c() -> Result<Rate, String> {
    atmsim_models::transmitter::phy_rate("OC-3c").ok_or_else(|| "no OC-3c preset".to_string())
}

const HOLD_MEAN_PS: f64 = 1_000_000.0; // 1 µs

fn bench_err(e: impl std::fmt::Display) -> String {
    format!("benchmark scenario failed: {e}")
}

/// Loads a benchmark scenario and runs it once, timing the run only (not the load).
fn run_timed(text: &str, name: &str, seed: u64) -> Result<(atmsim_scenario::RunResult, f64), String> {
    let sc = Scenario::from_text(text, name).map_err(bench_err)?;
    let t = Instant::now();
    let r = sc.run(seed, 0, &mut |_, _| true).map_err(bench_err)?;
    Ok((r, t.elapsed().as_secs_f64()))
}

/// Hold model on the atmsim kernel.
pub fn hold_atmsim(pending: u64, events: u64, seed: u64) -> Result<Measurement, String> {
    // Timers fire at rate pending / mean; run long enough for `events` of them.
    let duration_us = events as f64 / pending as f64;
    let text = format!(
        "[scenario]\nname = \"bench-hold\"\nduration = \"{duration_us} us\"\nseed = {seed}\n\n[components.hold]\nkind = \"hold\"\npending = {pending}\nmean = \"1 us\"\n"
    );
    let (r, wall_s) = run_timed(&text, "<bench hold>", seed)?;
    Ok(Measurement { events: r.events, wall_s, check: r.events as f64, lost: 0 })
}

/// Hold model as a hand-written binary-heap loop.
pub fn hold_hand_heap(pending: u64, events: u64, seed: u64) -> Measurement {
    let mut g = rng::stream(seed, 0, "hand_heap", "hold");
    let t = Instant::now();
    let mut heap: BinaryHeap<Reverse<u64>> = BinaryHeap::with_capacity(pending as usize);
    for _ in 0..pending {
        let x: f64 = Exp1.sample(&mut g);
        heap.push(Reverse((x * HOLD_MEAN_PS).round() as u64));
    }
    let mut n = 0u64;
    let mut last = 0u64;
    while n < events {
        let Some(Reverse(now)) = heap.pop() else { break };
        n += 1;
        last = now;
        let x: f64 = Exp1.sample(&mut g);
        heap.push(Reverse(now + (x * HOLD_MEAN_PS).round() as u64));
    }
    Measurement { events: n, wall_s: t.elapsed().as_secs_f64(), check: last as f64, lost: 0 }
}

/// Cell queue on the atmsim kernel (poisson → fifo → sink, through the scenario
/// builder and the same components real scenarios use).
pub fn cell_queue_atmsim(cells: u64, load: f64, capacity: u64, seed: u64) -> Result<Measurement, String> {
    let rate_bps = load * 149.76e6;
    let duration_s = cells as f64 / (rate_bps / 424.0);
    let text = format!(
        "connections = [\"src -> q\", \"q -> sink\"]\n[scenario]\nname = \"bench-cell-queue\"\nduration = \"{duration_s} s\"\nseed = {seed}\n\n[components.src]\nkind = \"poisson\"\nrate = \"{rate_bps} b/s\"\n\n[components.q]\nkind = \"fifo\"\nphy = \"OC-3c\"\ncapacity = \"{capacity} cells\"\n\n[components.sink]\nkind = \"sink\"\n"
    );
    let (r, wall_s) = run_timed(&text, "<bench cell_queue>", seed)?;
    let get = |p: &str, s: &str| r.probes.iter().find(|x| x.component == "q" && x.probe == p && x.statistic == s).map(|x| x.value).unwrap_or(f64::NAN);
    let arrivals = get("q_rx_cells", "count") as u64;
    let departures = get("q_tx_cells", "count") as u64;
    Ok(Measurement { events: arrivals + departures, wall_s, check: get("q_wait", "mean"), lost: get("q_drop_cells", "count") as u64 })
}

/// Cell queue as a hand-written binary-heap event loop (the naive event-driven
/// reference): events are (time, kind) with kind 0 = arrival, 1 = departure.
pub fn cell_queue_hand_heap(cells: u64, load: f64, capacity: u64, seed: u64) -> Result<Measurement, String> {
    let rate = oc3c()?;
    let slot = rate.cell_slot().ps();
    let mean_gap = rate.mean_cell_gap_ps() / load;
    let mut g = rng::stream(seed, 0, "hand_heap", "arrivals");
    let t = Instant::now();
    let mut heap: BinaryHeap<Reverse<(u64, u8)>> = BinaryHeap::with_capacity(4);
    let mut queue: VecDeque<u64> = VecDeque::with_capacity(capacity as usize);
    let (mut arrivals, mut departures, mut lost) = (0u64, 0u64, 0u64);
    let mut wait_sum = 0.0f64;
    let x: f64 = Exp1.sample(&mut g);
    heap.push(Reverse(((x * mean_gap).round() as u64, 0)));
    while let Some(Reverse((now, kind))) = heap.pop() {
        if kind == 0 {
            arrivals += 1;
            if queue.len() as u64 >= capacity {
                lost += 1;
            } else {
                queue.push_back(now);
                if queue.len() == 1 {
                    heap.push(Reverse((now + slot, 1)));
                }
            }
            if arrivals < cells {
                let x: f64 = Exp1.sample(&mut g);
                heap.push(Reverse((now + (x * mean_gap).round() as u64, 0)));
            }
        } else {
            departures += 1;
            queue.pop_front();
            if let Some(&arr) = queue.front() {
                wait_sum += (now - arr) as f64;
                heap.push(Reverse((now + slot, 1)));
            }
        }
    }
    let served = (arrivals - lost).max(1) as f64;
    Ok(Measurement { events: arrivals + departures, wall_s: t.elapsed().as_secs_f64(), check: wait_sum / served * 1e-12, lost })
}

/// Cell queue by the Lindley recursion on the unfinished work V (in ps): an arrival
/// finds ceil(V / slot) cells in the system; it is lost if that is the capacity,
/// otherwise V grows by one slot. No event list: the physical limit of speed.
pub fn cell_queue_lindley(cells: u64, load: f64, capacity: u64, seed: u64) -> Result<Measurement, String> {
    let rate = oc3c()?;
    let slot = rate.cell_slot().ps();
    let mean_gap = rate.mean_cell_gap_ps() / load;
    let mut g = rng::stream(seed, 0, "lindley", "arrivals");
    let t = Instant::now();
    let mut work: u64 = 0;
    let mut lost = 0u64;
    let mut wait_sum = 0.0f64;
    for _ in 0..cells {
        let x: f64 = Exp1.sample(&mut g);
        let gap = (x * mean_gap).round() as u64;
        work = work.saturating_sub(gap);
        let in_system = work.div_ceil(slot);
        if in_system >= capacity {
            lost += 1;
        } else {
            // The cell waits for the residual work before its own transmission.
            wait_sum += work as f64;
            work += slot;
        }
    }
    let served = (cells - lost).max(1) as f64;
    Ok(Measurement { events: 2 * cells - lost, wall_s: t.elapsed().as_secs_f64(), check: wait_sum / served * 1e-12, lost })
}

/// Time of the end of a hold run, for tests.
pub fn hold_end(events: u64, pending: u64) -> SimTime {
    SimTime((events as f64 / pending as f64 * HOLD_MEAN_PS) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pollaczek–Khinchine mean wait of M/D/1 at load ρ, in seconds.
    fn pk_wait(load: f64) -> f64 {
        let s = 424.0 / 149.76e6;
        load * s / (2.0 * (1.0 - load))
    }

    #[test]
    fn three_cell_queues_agree_with_each_other_and_with_md1() {
        // Unlimited buffer (capacity far above anything reached) at load 0.5.
        let n = 400_000;
        let a = cell_queue_atmsim(n, 0.5, 1_000_000, 3).unwrap();
        let h = cell_queue_hand_heap(n, 0.5, 1_000_000, 3).unwrap();
        let l = cell_queue_lindley(n, 0.5, 1_000_000, 3).unwrap();
        let w = pk_wait(0.5);
        for (name, m) in [("atmsim", &a), ("hand_heap", &h), ("lindley", &l)] {
            assert!((m.check - w).abs() / w < 0.05, "{name}: mean wait {} vs PK {}", m.check, w);
            assert_eq!(m.lost, 0, "{name}");
        }
    }

    #[test]
    fn finite_buffer_loses_cells_in_every_implementation() {
        let n = 200_000;
        let a = cell_queue_atmsim(n, 0.9, 8, 5).unwrap();
        let h = cell_queue_hand_heap(n, 0.9, 8, 5).unwrap();
        let l = cell_queue_lindley(n, 0.9, 8, 5).unwrap();
        let ra = a.lost as f64 / n as f64;
        let rh = h.lost as f64 / n as f64;
        let rl = l.lost as f64 / n as f64;
        // M/D/1/8 at 0.9 loses about 2%; three independent streams agree within noise.
        for r in [ra, rh, rl] {
            assert!(r > 0.01 && r < 0.04, "loss ratio {r}");
        }
    }

    #[test]
    fn hold_runs_the_requested_number_of_events() {
        let a = hold_atmsim(1000, 200_000, 1).unwrap();
        let h = hold_hand_heap(1000, 200_000, 1);
        assert_eq!(h.events, 200_000);
        // The kernel run stops at a time, not a count: within a few percent.
        assert!((a.events as f64 / 200_000.0 - 1.0).abs() < 0.05, "{}", a.events);
    }
}
