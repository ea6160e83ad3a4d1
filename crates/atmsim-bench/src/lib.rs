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
//!
//! *The same work.* `hand_heap` draws the same random numbers as the kernel's
//! components (the same stream, the same exponential draw), runs to the same end
//! instant, computes transmission ends with the same exact cell clock and, for the cell
//! queue, keeps the statistics the `poisson`, `fifo` and `sink` models keep (queue
//! length over time, wait and delay tallies, counters), where they keep them. So the two
//! report identical numbers — a test checks every one — and the ratio measures the
//! kernel and the models' machinery, not different work. (Keeping the statistics costs
//! the hand loop nothing measurable: 57.5 against 56.1 M events/s without them, best of
//! five, interleaved.)

pub mod mux;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::time::Instant;

use atmsim_kernel::rate::CellClock;
use atmsim_kernel::{rng, LevelHistogram, Rate, SimTime, Tally};
use atmsim_models::traffic::exp_ps;
use atmsim_scenario::Scenario;

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
    atmsim_models::link::transmitter::phy_rate("OC-3c").ok_or_else(|| "no OC-3c preset".to_string())
}

const HOLD_MEAN_PS: f64 = 1_000_000.0; // 1 µs

fn bench_err(e: impl std::fmt::Display) -> String {
    format!("benchmark scenario failed: {e}")
}

/// Loads a benchmark scenario and runs it once, timing the run only (not the load).
pub(crate) fn run_timed(text: &str, name: &str, seed: u64) -> Result<(atmsim_scenario::RunResult, f64), String> {
    let sc = Scenario::from_text(text, name).map_err(bench_err)?;
    let t = Instant::now();
    let r = sc.run(seed, 0, &mut |_, _| true).map_err(bench_err)?;
    Ok((r, t.elapsed().as_secs_f64()))
}

/// End of a hold run: `events` firings on average (`pending` timers, mean 1 µs each).
pub fn hold_end(events: u64, pending: u64) -> SimTime {
    SimTime((events as f64 / pending as f64 * HOLD_MEAN_PS).round() as u64)
}

/// Hold model on the atmsim kernel.
pub fn hold_atmsim(pending: u64, events: u64, seed: u64) -> Result<Measurement, String> {
    let end = hold_end(events, pending).0;
    let text = format!(
        "[scenario]\nname = \"bench-hold\"\nduration = \"{end} ps\"\nseed = {seed}\n\n[components.hold]\nkind = \"hold\"\npending = {pending}\nmean = \"1 us\"\n"
    );
    let (r, wall_s) = run_timed(&text, "<bench hold>", seed)?;
    Ok(Measurement { events: r.events, wall_s, check: r.events as f64, lost: 0 })
}

/// Hold model as a hand-written binary-heap loop: the `hold` component's random stream
/// and draws, up to the same end instant.
pub fn hold_hand_heap(pending: u64, events: u64, seed: u64) -> Measurement {
    let end = hold_end(events, pending).0;
    let mut g = rng::stream(seed, 0, "hold", "hold");
    let t = Instant::now();
    let mut heap: BinaryHeap<Reverse<u64>> = BinaryHeap::with_capacity(pending as usize);
    for _ in 0..pending {
        heap.push(Reverse(exp_ps(&mut g, HOLD_MEAN_PS)));
    }
    let mut n = 0u64;
    while let Some(Reverse(now)) = heap.pop() {
        if now >= end {
            break;
        }
        n += 1;
        heap.push(Reverse(now + exp_ps(&mut g, HOLD_MEAN_PS)));
    }
    Measurement { events: n, wall_s: t.elapsed().as_secs_f64(), check: n as f64, lost: 0 }
}

/// The cell queue's results, as the `poisson`, `fifo` and `sink` models report them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CellQueueStats {
    pub generated: u64,
    pub arrivals: u64,
    pub departures: u64,
    pub lost: u64,
    pub delivered: u64,
    /// Wait before transmission (s): count, mean, std, max.
    pub wait: [f64; 4],
    /// Source-to-sink delay (s): count, mean, std, max.
    pub delay: [f64; 4],
    /// Cells in the buffer over time: mean, max, fraction of time above 0.
    pub q_len: [f64; 3],
}

impl CellQueueStats {
    fn measurement(&self, wall_s: f64) -> Measurement {
        Measurement { events: self.arrivals + self.departures, wall_s, check: self.wait[1], lost: self.lost }
    }
}

pub(crate) fn tally_s(t: &Tally) -> [f64; 4] {
    [t.count() as f64, t.mean() * 1e-12, t.std() * 1e-12, t.max() * 1e-12]
}

/// End of a cell-queue run: `cells` arrivals on average at `load` × the OC-3c cell rate.
pub fn cell_queue_end(cells: u64, load: f64) -> SimTime {
    SimTime((cells as f64 / (load * 149.76e6 / 424.0) * 1e12).round() as u64)
}

/// Cell queue on the atmsim kernel (poisson → fifo → sink, through the scenario
/// builder and the same components real scenarios use).
pub fn cell_queue_atmsim(cells: u64, load: f64, capacity: u64, seed: u64) -> Result<Measurement, String> {
    cell_queue_atmsim_stats(cells, load, capacity, seed).map(|(m, _)| m)
}

/// [`cell_queue_atmsim`], with the results.
pub fn cell_queue_atmsim_stats(cells: u64, load: f64, capacity: u64, seed: u64) -> Result<(Measurement, CellQueueStats), String> {
    let rate_bps = load * 149.76e6;
    let end = cell_queue_end(cells, load).0;
    let text = format!(
        "connections = [\"src -> q\", \"q -> sink\"]\n[scenario]\nname = \"bench-cell-queue\"\nduration = \"{end} ps\"\nseed = {seed}\n\n[components.src]\nkind = \"poisson\"\nrate = \"{rate_bps} b/s\"\n\n[components.q]\nkind = \"fifo\"\nphy = \"OC-3c\"\ncapacity = \"{capacity} cells\"\n\n[components.sink]\nkind = \"sink\"\n"
    );
    let (r, wall_s) = run_timed(&text, "<bench cell_queue>", seed)?;
    let get = |c: &str, p: &str, s: &str| r.probes.iter().find(|x| x.component == c && x.probe == p && x.statistic == s).map(|x| x.value).unwrap_or(f64::NAN);
    let tally = |c: &str, p: &str| [get(c, p, "count"), get(c, p, "mean"), get(c, p, "std"), get(c, p, "max")];
    let st = CellQueueStats {
        generated: get("src", "src_tx_cells", "count") as u64,
        arrivals: get("q", "q_rx_cells", "count") as u64,
        departures: get("q", "q_tx_cells", "count") as u64,
        lost: get("q", "q_drop_cells", "count") as u64,
        delivered: get("sink/vc1", "sink_rx_cells", "count") as u64,
        wait: tally("q", "q_wait"),
        delay: tally("sink/vc1", "sink_delay"),
        q_len: [get("q", "q_len", "mean"), get("q", "q_len", "max"), get("q", "q_len_tail", "p_gt_0")],
    };
    Ok((st.measurement(wall_s), st))
}

/// Cell queue as a hand-written binary-heap event loop (the naive event-driven
/// reference) doing the atmsim scenario's work: events are (time, kind), kind 0 = an
/// arrival, 1 = the end of a transmission; the `src` component's arrival stream, the
/// exact cell clock, and the models' statistics updated where the models update them.
pub fn cell_queue_hand_heap(cells: u64, load: f64, capacity: u64, seed: u64) -> Result<Measurement, String> {
    cell_queue_hand_heap_stats(cells, load, capacity, seed).map(|(m, _)| m)
}

/// [`cell_queue_hand_heap`], with the results.
pub fn cell_queue_hand_heap_stats(cells: u64, load: f64, capacity: u64, seed: u64) -> Result<(Measurement, CellQueueStats), String> {
    let rate = oc3c()?;
    let mean_gap = rate.mean_cell_gap_ps() / load;
    let end = cell_queue_end(cells, load);
    let mut g = rng::stream(seed, 0, "src", "arrivals");
    let t = Instant::now();
    let mut heap: BinaryHeap<Reverse<(u64, u8)>> = BinaryHeap::with_capacity(4);
    // Arrival instants of the cells in the buffer (the first one is being sent).
    let mut queue: VecDeque<u64> = VecDeque::with_capacity(capacity.min(1 << 16) as usize);
    let mut clock = CellClock::new(rate);
    let mut levels = LevelHistogram::new(SimTime::ZERO, 1 << 20);
    let (mut wait, mut delay) = (Tally::default(), Tally::default());
    let (mut arrivals, mut departures, mut lost) = (0u64, 0u64, 0u64);
    heap.push(Reverse((exp_ps(&mut g, mean_gap), 0)));
    while let Some(Reverse((now, kind))) = heap.pop() {
        if now >= end.0 {
            break;
        }
        if kind == 0 {
            arrivals += 1;
            if queue.len() as u64 >= capacity {
                lost += 1;
            } else {
                queue.push_back(now);
                if queue.len() == 1 {
                    clock.restart(SimTime(now));
                    wait.add(0.0);
                    heap.push(Reverse((clock.advance().0, 1)));
                }
                levels.set(SimTime(now), queue.len());
            }
            heap.push(Reverse((now + exp_ps(&mut g, mean_gap), 0)));
        } else {
            departures += 1;
            let born = queue.pop_front().unwrap_or(now);
            if let Some(&next) = queue.front() {
                wait.add((now - next) as f64);
                heap.push(Reverse((clock.advance().0, 1)));
            }
            levels.set(SimTime(now), queue.len());
            delay.add((now - born) as f64);
        }
    }
    let wall_s = t.elapsed().as_secs_f64();
    let st = CellQueueStats {
        generated: arrivals,
        arrivals,
        departures,
        lost,
        delivered: departures,
        wait: tally_s(&wait),
        delay: tally_s(&delay),
        q_len: [levels.mean(end), levels.max() as f64, levels.p_greater(end, 0)],
    };
    Ok((st.measurement(wall_s), st))
}

/// Cell queue by the Lindley recursion on the unfinished work V (in ps): an arrival
/// finds ceil(V / slot) cells in the system; it is lost if that is the capacity,
/// otherwise V grows by one slot. No event list: the physical limit of speed.
pub fn cell_queue_lindley(cells: u64, load: f64, capacity: u64, seed: u64) -> Result<Measurement, String> {
    let rate = oc3c()?;
    let slot = rate.cell_slot().ps();
    let mean_gap = rate.mean_cell_gap_ps() / load;
    let mut g = rng::stream(seed, 0, "src", "arrivals");
    let t = Instant::now();
    let mut work: u64 = 0;
    let mut lost = 0u64;
    let mut wait_sum = 0.0f64;
    for _ in 0..cells {
        let gap = exp_ps(&mut g, mean_gap);
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
    fn hold_on_the_kernel_and_by_hand_fire_the_same_events() {
        // Same stream, same draws, same end: the same number of firings (ties among
        // identical timers cannot change the times drawn).
        let a = hold_atmsim(1000, 200_000, 1).unwrap();
        let h = hold_hand_heap(1000, 200_000, 1);
        assert_eq!(a.events, h.events);
        // About the number asked for (the run stops at a time, not a count).
        assert!((a.events as f64 / 200_000.0 - 1.0).abs() < 0.05, "{}", a.events);
        // Past the event queue's FAR_FROM the kernel runs its far-event calendar: the
        // same firings as the plain heap.
        let n = atmsim_kernel::queue::FAR_FROM as u64 + 7_000;
        let a = hold_atmsim(n, 10 * n, 2).unwrap();
        let h = hold_hand_heap(n, 10 * n, 2);
        assert_eq!(a.events, h.events);
        assert!(a.events > 9 * n, "{}", a.events);
    }

    #[test]
    fn the_hand_loop_does_the_same_work_as_the_models() {
        // Every statistic the bench scenario reports equals the hand loop's, bit for
        // bit: same arrivals, same transmission clock, same updates in the same order.
        // With losses (8 cells at 0.9) and without (unlimited at 0.5).
        for (load, capacity, seed) in [(0.9, 8, 5), (0.5, 1_000_000, 3), (0.95, 64, 11)] {
            let (ma, a) = cell_queue_atmsim_stats(150_000, load, capacity, seed).unwrap();
            let (mh, h) = cell_queue_hand_heap_stats(150_000, load, capacity, seed).unwrap();
            assert_eq!(a, h, "load {load} capacity {capacity}");
            assert_eq!((ma.events, ma.lost), (mh.events, mh.lost));
            assert!(a.arrivals > 140_000 && a.departures > 0 && a.delay[0] > 0.0);
            assert_eq!(a.lost > 0, capacity == 8 || load > 0.9, "load {load} capacity {capacity}: {} lost", a.lost);
        }
    }
}
