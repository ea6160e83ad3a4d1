//! Profiling driver for the benchmark workloads (not part of `atmsim bench`):
//! `cargo build --release -p atmsim-bench --example cq`, then
//! `target/release/examples/cq WORKLOAD` with WORKLOAD one of `atmsim` (cell queue on
//! the kernel, the default), `hand`, `hold`, `holdhand`, `hold10`, `holdhand10`,
//! `hold100k`, or `skel`: the cell queue on the kernel with three minimal components
//! (a `u64` message, no statistics), which separates the kernel's own cost from the
//! models'. `N` sets the cell count (default 4,000,000). Prints M events/s.
//! Also `mux` and `muxhand` (the mux workload of issue 14 on the kernel and as the
//! hand-written loop; `S` sets the simulated seconds, default 2: prints M cells/s), and
//! a path to any scenario `.toml` (runs it once: events and wall time).

fn main() {
    let which = std::env::args().nth(1).unwrap_or_default();
    if which == "sizes" {
        println!("Model {} B, Poisson {} B, Transmitter {} B, Sink {} B, OnOff {} B", std::mem::size_of::<atmsim_models::Model>(), std::mem::size_of::<atmsim_models::traffic::poisson::Poisson>(), std::mem::size_of::<atmsim_models::link::transmitter::Transmitter>(), std::mem::size_of::<atmsim_models::traffic::sink::Sink>(), std::mem::size_of::<atmsim_models::traffic::onoff::OnOff>());
        return;
    }
    let n: u64 = std::env::var("N").ok().and_then(|v| v.parse().ok()).unwrap_or(4_000_000);
    if which == "skel" {
        println!("skel: {:.1} M ev/s", skel::run(n));
        return;
    }
    if which == "mux" || which == "muxhand" {
        let s: f64 = std::env::var("S").ok().and_then(|v| v.parse().ok()).unwrap_or(2.0);
        let r = if which == "mux" { atmsim_bench::mux::mux_atmsim(s, 1) } else { atmsim_bench::mux::mux_hand_heap(s, 1) };
        let r = r.unwrap();
        println!("{which}: {} cells, {:.2} M cells/s", r.cells, r.cells_per_s() / 1e6);
        return;
    }
    if which.ends_with(".toml") {
        let sc = atmsim_scenario::Scenario::load(&which).unwrap();
        let t = std::time::Instant::now();
        let r = sc.run(sc.seed, 0, &mut |_, _| true).unwrap();
        println!("{which}: {} events in {:.3} s (event loop {:.3} s)", r.events, t.elapsed().as_secs_f64(), r.loop_s);
        return;
    }
    let m = match which.as_str() {
        "hand" => atmsim_bench::cell_queue_hand_heap(n, 0.9, 256, 1).unwrap(),
        "hold" => atmsim_bench::hold_atmsim(10_000, 10_000_000, 1).unwrap(),
        "hold100k" => atmsim_bench::hold_atmsim(100_000, 10_000_000, 1).unwrap(),
        "hold10" => atmsim_bench::hold_atmsim(10, 10_000_000, 1).unwrap(),
        "holdhand10" => atmsim_bench::hold_hand_heap(10, 10_000_000, 1),
        "holdhand" => atmsim_bench::hold_hand_heap(10_000, 10_000_000, 1),
        _ => atmsim_bench::cell_queue_atmsim(n, 0.9, 256, 1).unwrap(),
    };
    println!("{which}: {:.1} M ev/s", m.events as f64 / m.wall_s / 1e6);
}

/// The cell queue through the kernel with the least possible model: a source drawing
/// exponential gaps, a 256-cell FIFO served every cell slot, a counting sink.
mod skel {
    use atmsim_kernel::*;
    use rand_distr::{Distribution, Exp1};
    use std::collections::VecDeque;
    pub enum M {
        Src { g: Stream, mean: f64, left: u64 },
        Q { q: VecDeque<u64>, slot: u64 },
        Sink { n: u64 },
    }
    impl Component for M {
        type Msg = u64;
        type Store = ();
        fn start(&mut self, ctx: &mut Ctx<'_, u64>) {
            if let M::Src { g, mean, .. } = self {
                let x: f64 = Exp1.sample(g);
                ctx.schedule_in(SimDuration((x * *mean + 0.5) as u64), 0);
            }
        }
        #[inline(always)]
        fn on_timer(&mut self, _tag: u32, ctx: &mut Ctx<'_, u64>) {
            match self {
                M::Src { g, mean, left } => {
                    ctx.send(0, ctx.now.0);
                    *left -= 1;
                    if *left > 0 {
                        let x: f64 = Exp1.sample(g);
                        ctx.schedule_in(SimDuration((x * *mean + 0.5) as u64), 0);
                    }
                }
                M::Q { q, slot } => {
                    let c = q.pop_front().unwrap_or(0);
                    if !q.is_empty() {
                        ctx.schedule_in(SimDuration(*slot), 0);
                    }
                    ctx.send(0, c);
                }
                M::Sink { .. } => {}
            }
        }
        #[inline(always)]
        fn on_message(&mut self, _port: PortId, msg: u64, ctx: &mut Ctx<'_, u64>) {
            match self {
                M::Q { q, slot } => {
                    if q.len() < 256 {
                        q.push_back(msg);
                        if q.len() == 1 {
                            ctx.schedule_in(SimDuration(*slot), 0);
                        }
                    }
                }
                M::Sink { n } => *n += 1,
                M::Src { .. } => {}
            }
        }
        fn reset_stats(&mut self, _now: SimTime) {}
        fn report(&self, _now: SimTime, _path: &str, _out: &mut Report) {}
        fn ledger(&self, _l: &mut Ledger) {}
    }
    pub fn run(n: u64) -> f64 {
        let rate = atmsim_bench::oc3c().unwrap();
        let slot = rate.cell_slot().ps();
        let mean = rate.mean_cell_gap_ps() / 0.9;
        let comps = vec![
            M::Src { g: rng::stream(1, 0, "s", "a"), mean, left: n },
            M::Q { q: VecDeque::with_capacity(256), slot },
            M::Sink { n: 0 },
        ];
        let routes = vec![vec![Some(Route { comp: 1, port: 0 })], vec![Some(Route { comp: 2, port: 0 })], vec![]];
        let sim = Simulation::new(comps, vec!["s".into(), "q".into(), "k".into()], routes);
        let t = std::time::Instant::now();
        let out = sim.run(SimTime::MAX, SimTime::ZERO, &mut |_, _| true).unwrap();
        let w = t.elapsed().as_secs_f64();
        (out.events / 2) as f64 / w / 1e6
    }
}
