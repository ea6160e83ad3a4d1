//! The **mux** workload (issue 14): 8 on-off sources (peak 40 Mb/s, mean 10 Mb/s,
//! burst factor 75 cells, so 100 cells per active period on average) into one FIFO of
//! 256 cells (counting the one in transmission) served at 155.52 Mb/s (424-bit cells),
//! then a sink, for 27.26 simulated seconds: about 5.1 million cells at a mean load of
//! 0.51. This is the multiplexer workload on which the fastest public cell-level ATM
//! simulator is compared.
//!
//! Two implementations doing the same work:
//! - `atmsim`: `onoff` ×8 → `fifo` → `sink`, a scenario through the loader and the same
//!   components real scenarios use;
//! - `hand_heap`: the straightforward hand-written loop — a binary heap holding one
//!   arrival event per cell (each source's next cell or state switch) and one departure
//!   event per cell — drawing the `onoff` components' random streams with the same draws,
//!   using the exact cell clock, ordering simultaneous events as the kernel does (by
//!   the order they were scheduled), and keeping every statistic the three models report.
//!   Its results equal the scenario's bit for bit (tested).
//!
//! The speed compared is cells switched (transmitted by the FIFO) per wall second.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::time::Instant;

use atmsim_kernel::rate::CellClock;
use atmsim_kernel::{rng, LevelHistogram, Rate, SimTime, Tally};
use atmsim_models::traffic::exp_ps;
use rand::Rng;

use crate::{run_timed, tally_s};

/// The workload's constants (issue 14).
pub const SOURCES: usize = 8;
pub const PEAK_BPS: f64 = 40e6;
pub const MEAN_BPS: f64 = 10e6;
pub const BURST_FACTOR_CELLS: f64 = 75.0;
pub const CAPACITY: u64 = 256;
pub const SERVICE_BPS: f64 = 155.52e6;
/// Simulated seconds of the full workload.
pub const SECONDS: f64 = 27.26;

/// What the scenario reports, model by model.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MuxStats {
    /// Cells each source generated.
    pub generated: Vec<u64>,
    /// Cells per completed active period, per source: count, mean, std, max.
    pub bursts: Vec<[f64; 4]>,
    pub arrivals: u64,
    pub departures: u64,
    pub lost: u64,
    /// Wait before transmission (s): count, mean, std, max.
    pub wait: [f64; 4],
    /// Cells in the buffer over time: mean, max, fraction of time above 0.
    pub q_len: [f64; 3],
    /// Source-to-sink delay per VC (s): count, mean, std, max.
    pub delay: Vec<[f64; 4]>,
}

/// One mux run: cells switched, wall time, and the statistics.
#[derive(Clone, Debug, PartialEq)]
pub struct MuxRun {
    pub cells: u64,
    pub wall_s: f64,
    pub stats: MuxStats,
}

impl MuxRun {
    pub fn cells_per_s(&self) -> f64 {
        if self.wall_s > 0.0 {
            self.cells as f64 / self.wall_s
        } else {
            f64::NAN
        }
    }
}

fn end_of(seconds: f64) -> SimTime {
    SimTime((seconds * 1e12).round() as u64)
}

/// The scenario text of the workload for `seconds` simulated seconds.
pub fn scenario(seconds: f64, seed: u64) -> String {
    let end = end_of(seconds).0;
    let mut t = String::from("connections = [");
    for i in 0..SOURCES {
        t.push_str(&format!("\"s{i} -> q\", "));
    }
    t.push_str("\"q -> sink\"]\n");
    t.push_str(&format!("[scenario]\nname = \"bench-mux\"\nduration = \"{end} ps\"\nseed = {seed}\n\n"));
    for i in 0..SOURCES {
        t.push_str(&format!(
            "[components.s{i}]\nkind = \"onoff\"\npeak = \"{PEAK_BPS} b/s\"\nmean = \"{MEAN_BPS} b/s\"\nburst_factor = \"{BURST_FACTOR_CELLS} cells\"\n\n"
        ));
    }
    t.push_str(&format!("[components.q]\nkind = \"fifo\"\nrate = \"{SERVICE_BPS} b/s\"\ncapacity = \"{CAPACITY} cells\"\n\n[components.sink]\nkind = \"sink\"\n"));
    t
}

/// The workload on the atmsim kernel.
pub fn mux_atmsim(seconds: f64, seed: u64) -> Result<MuxRun, String> {
    let (r, wall_s) = run_timed(&scenario(seconds, seed), "<bench mux>", seed)?;
    let get = |c: &str, p: &str, s: &str| r.probes.iter().find(|x| x.component == c && x.probe == p && x.statistic == s).map(|x| x.value).unwrap_or(f64::NAN);
    let tally = |c: &str, p: &str| [get(c, p, "count"), get(c, p, "mean"), get(c, p, "std"), get(c, p, "max")];
    let stats = MuxStats {
        generated: (0..SOURCES).map(|i| get(&format!("s{i}"), "src_tx_cells", "count") as u64).collect(),
        bursts: (0..SOURCES).map(|i| tally(&format!("s{i}"), "src_burst_cells")).collect(),
        arrivals: get("q", "q_rx_cells", "count") as u64,
        departures: get("q", "q_tx_cells", "count") as u64,
        lost: get("q", "q_drop_cells", "count") as u64,
        wait: tally("q", "q_wait"),
        q_len: [get("q", "q_len", "mean"), get("q", "q_len", "max"), get("q", "q_len_tail", "p_gt_0")],
        delay: (0..SOURCES).map(|i| tally(&format!("sink/vc{}", i + 1), "sink_delay")).collect(),
    };
    Ok(MuxRun { cells: stats.departures, wall_s, stats })
}

/// One on-off source as the `onoff` component behaves (its draws, in its order).
struct OnOffSrc {
    rng: atmsim_kernel::Stream,
    peak_gap_ps: f64,
    mean_on_ps: f64,
    mean_off_ps: f64,
    active: bool,
    on_end: u64,
    burst: u64,
    bursts: Tally,
    generated: u64,
}

/// What a source's next event is.
const CELL: u32 = 0;
const SWITCH: u32 = 1;
/// The FIFO's end of transmission.
const DEPART: u32 = u32::MAX;

impl OnOffSrc {
    /// In the active state from `from`: the next cell, or the end of the period.
    fn step_active(&mut self, from: u64) -> (u64, u32) {
        let t = from + exp_ps(&mut self.rng, self.peak_gap_ps);
        if t < self.on_end {
            (t, CELL)
        } else {
            (self.on_end, SWITCH)
        }
    }

    fn go_active(&mut self, from: u64) -> (u64, u32) {
        self.active = true;
        self.burst = 0;
        self.on_end = from + exp_ps(&mut self.rng, self.mean_on_ps);
        self.step_active(from)
    }

    /// A state switch at `now`: the next event.
    fn switch(&mut self, now: u64) -> (u64, u32) {
        if self.active {
            self.bursts.add(self.burst as f64);
            self.active = false;
            (now + exp_ps(&mut self.rng, self.mean_off_ps), SWITCH)
        } else {
            self.go_active(now)
        }
    }
}

/// The workload as a hand-written binary-heap loop (see the module docs).
pub fn mux_hand_heap(seconds: f64, seed: u64) -> Result<MuxRun, String> {
    let peak = Rate::from_bps(PEAK_BPS).ok_or("bad peak rate")?;
    let mean = Rate::from_bps(MEAN_BPS).ok_or("bad mean rate")?;
    let service = Rate::from_bps(SERVICE_BPS).ok_or("bad service rate")?;
    let (lp, la) = (peak.cells_per_s(), mean.cells_per_s());
    let t_on = BURST_FACTOR_CELLS / (lp - la);
    let t_off = t_on * (lp / la - 1.0);
    let end = end_of(seconds);
    let mut srcs: Vec<OnOffSrc> = (0..SOURCES)
        .map(|i| OnOffSrc {
            rng: rng::stream(seed, 0, &format!("s{i}"), "onoff"),
            peak_gap_ps: peak.mean_cell_gap_ps(),
            mean_on_ps: t_on * 1e12,
            mean_off_ps: t_off * 1e12,
            active: false,
            on_end: 0,
            burst: 0,
            bursts: Tally::default(),
            generated: 0,
        })
        .collect();
    let t = Instant::now();
    // (time, schedule order, what): simultaneous events in the order they were
    // scheduled, as the kernel runs them. `what`: source index << 1 | CELL/SWITCH, or
    // DEPART.
    let mut heap: BinaryHeap<Reverse<(u64, u64, u32)>> = BinaryHeap::with_capacity(SOURCES + 1);
    let mut seq = 0u64;
    let mut push = |heap: &mut BinaryHeap<Reverse<(u64, u64, u32)>>, at: u64, what: u32| {
        heap.push(Reverse((at, seq, what)));
        seq += 1;
    };
    let p_on = la / lp;
    for (i, s) in srcs.iter_mut().enumerate() {
        let (at, kind) = if s.rng.random::<f64>() < p_on {
            s.go_active(0)
        } else {
            s.active = false;
            (exp_ps(&mut s.rng, s.mean_off_ps), SWITCH)
        };
        push(&mut heap, at, (i as u32) << 1 | kind);
    }
    // Birth instants and VCs of the cells in the buffer (the first one is being sent).
    let mut queue: VecDeque<(u64, u32)> = VecDeque::with_capacity(CAPACITY as usize);
    let mut clock = CellClock::new(service);
    let mut levels = LevelHistogram::new(SimTime::ZERO, 1 << 20);
    let mut wait = Tally::default();
    let mut delay: Vec<Tally> = vec![Tally::default(); SOURCES];
    let (mut arrivals, mut departures, mut lost) = (0u64, 0u64, 0u64);
    while let Some(Reverse((now, _, what))) = heap.pop() {
        if now >= end.0 {
            break;
        }
        if what == DEPART {
            departures += 1;
            let (born, vc) = queue.pop_front().unwrap_or((now, 0));
            if let Some(&(next, _)) = queue.front() {
                wait.add((now - next) as f64);
                push(&mut heap, clock.advance().0, DEPART);
            }
            levels.set(SimTime(now), queue.len());
            delay[vc as usize].add((now - born) as f64);
            continue;
        }
        let i = (what >> 1) as usize;
        let s = &mut srcs[i];
        if what & 1 == SWITCH {
            let (at, kind) = s.switch(now);
            push(&mut heap, at, (i as u32) << 1 | kind);
            continue;
        }
        // A cell: the source emits it and schedules its next event; the FIFO takes it.
        s.generated += 1;
        s.burst += 1;
        let (at, kind) = s.step_active(now);
        push(&mut heap, at, (i as u32) << 1 | kind);
        arrivals += 1;
        if queue.len() as u64 >= CAPACITY {
            lost += 1;
            continue;
        }
        queue.push_back((now, i as u32));
        if queue.len() == 1 {
            clock.restart(SimTime(now));
            wait.add(0.0);
            push(&mut heap, clock.advance().0, DEPART);
        }
        levels.set(SimTime(now), queue.len());
    }
    let wall_s = t.elapsed().as_secs_f64();
    let stats = MuxStats {
        generated: srcs.iter().map(|s| s.generated).collect(),
        bursts: srcs.iter().map(|s| [s.bursts.count() as f64, s.bursts.mean(), s.bursts.std(), s.bursts.max()]).collect(),
        arrivals,
        departures,
        lost,
        wait: tally_s(&wait),
        q_len: [levels.mean(end), levels.max() as f64, levels.p_greater(end, 0)],
        delay: delay.iter().map(tally_s).collect(),
    };
    Ok(MuxRun { cells: departures, wall_s, stats })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hand_loop_does_the_same_work_as_the_models() {
        // Every statistic of the three models equals the hand loop's, bit for bit, over
        // a shortened run (with buffer losses at this burstiness) and two seeds.
        for seed in [1, 7] {
            let a = mux_atmsim(0.5, seed).unwrap();
            let h = mux_hand_heap(0.5, seed).unwrap();
            assert_eq!(a.stats, h.stats, "seed {seed}");
            assert_eq!(a.cells, h.cells);
            // The workload is what issue 14 describes: mean 10 Mb/s per source (about
            // 23,585 cells/s), 100 cells per active period on average.
            let gen: u64 = a.stats.generated.iter().sum();
            let per_source = gen as f64 / SOURCES as f64 / 0.5;
            assert!((per_source / (MEAN_BPS / 424.0) - 1.0).abs() < 0.1, "{per_source} cells/s per source");
            let bursts: f64 = a.stats.bursts.iter().map(|b| b[0] * b[1]).sum::<f64>() / a.stats.bursts.iter().map(|b| b[0]).sum::<f64>();
            assert!((bursts / 100.0 - 1.0).abs() < 0.1, "{bursts} cells per active period");
            assert!(a.stats.delay.iter().all(|d| d[0] > 1_000.0));
        }
    }
}
