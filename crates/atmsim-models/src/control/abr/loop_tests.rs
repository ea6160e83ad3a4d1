//! The state machines in closed loops, without the kernel: sources, a bottleneck port
//! (a fluid queue drained at the line rate) and destinations, with zero propagation
//! delay, stepped in fixed time steps. Expected values come from the theory (max-min
//! fair shares), never from the code.

use atmsim_kernel::{SimDuration, SimTime};

use super::dest::AbrDest;
use super::erica::{Averaging, Erica, EricaParams};
use super::params::{AbrParams, Decrease};
use super::source::{AbrSource, Send};
use crate::cell::{Cell, FLAG_EFCI};
use crate::control::buffer_policy::BufferPolicy;

const LINK: f64 = 100_000.0; // cells/s
const STEP_PS: u64 = 2_000_000; // 2 µs

/// The switch algorithm at the bottleneck port, as the loop drives it.
enum Port {
    Erica(Erica),
    /// EFCI marking above a threshold: a data cell leaving a buffer of `len` cells.
    Efci(BufferPolicy),
}

struct Run {
    /// Mean ACR of each source over the second half (cells/s).
    mean_acr: Vec<f64>,
    max_queue: f64,
}

/// tm40 with PCR = the line and ICR 1,000 cells/s.
fn tm40() -> AbrParams {
    AbrParams { icr: 1_000.0, ..AbrParams::tm40(LINK) }
}

/// `n` greedy sources with parameters `p` through one port for `secs` seconds.
fn run(n: usize, p: AbrParams, mut port: Port, secs: f64) -> Run {
    let mut src: Vec<AbrSource> = (0..n).map(|_| AbrSource::new(p)).collect();
    let mut dst: Vec<AbrDest> = (0..n).map(|_| AbrDest::new(false)).collect();
    let mut q = 0.0f64;
    let mut max_queue = 0.0f64;
    let steps = (secs * 1e12 / STEP_PS as f64) as u64;
    let mut sum = vec![0.0; n];
    let mut samples = 0u64;
    for k in 0..steps {
        let now = SimTime(k * STEP_PS);
        q = (q - LINK * STEP_PS as f64 * 1e-12).max(0.0);
        for i in 0..n {
            if now < src[i].next_send_at() {
                continue;
            }
            let vc = i as u32;
            q += 1.0;
            let ql = q as u64;
            match src[i].send(now, true, false) {
                Some(Send::ForwardRm(rm)) => {
                    let mut b = dst[i].turn_around(&rm);
                    match &mut port {
                        Port::Erica(e) => {
                            e.on_cell(now, vc, ql);
                            e.on_forward_rm(vc, &rm);
                            e.on_backward_rm(now, vc, &mut b, ql);
                        }
                        Port::Efci(_) => {}
                    }
                    src[i].on_backward_rm(&b);
                }
                Some(Send::Data) => match &mut port {
                    Port::Erica(e) => e.on_cell(now, vc, ql),
                    Port::Efci(policy) => {
                        let mut cell = Cell::plain(now, vc, vc, 0);
                        policy.departure(&mut cell, ql as usize);
                        dst[i].on_data(now, cell.flags & FLAG_EFCI != 0);
                    }
                },
                other => panic!("a greedy source sent {other:?}"),
            }
        }
        max_queue = max_queue.max(q);
        if k >= steps / 2 {
            for i in 0..n {
                sum[i] += src[i].acr();
            }
            samples += 1;
        }
    }
    Run { mean_acr: sum.iter().map(|s| s / samples as f64).collect(), max_queue }
}

#[test]
fn erica_shares_a_bottleneck_fairly_between_two_greedy_sources() {
    let e = Erica::new(EricaParams { link_rate: LINK, target_utilisation: 0.9, averaging: Averaging::Time(SimDuration(1_000_000_000)), delta: 0.1, queue_control: None, ccr_on_grid: false, per_vc_ccr: false, single_feedback: false });
    let r = run(2, tm40(), Port::Erica(e), 2.0);
    // Max-min: each gets half of the 90% target, 45,000 cells/s.
    for acr in &r.mean_acr {
        assert!((acr / 45_000.0 - 1.0).abs() < 0.05, "ACR {acr} cells/s, fair share 45,000");
    }
}

#[test]
fn erica_shares_among_three() {
    let e = Erica::new(EricaParams { link_rate: LINK, target_utilisation: 0.9, averaging: Averaging::Cells(100), delta: 0.1, queue_control: None, ccr_on_grid: false, per_vc_ccr: false, single_feedback: false });
    let r = run(3, tm40(), Port::Erica(e), 2.0);
    for acr in &r.mean_acr {
        assert!((acr / 30_000.0 - 1.0).abs() < 0.05, "ACR {acr} cells/s, fair share 30,000");
    }
}

#[test]
fn efci_marking_drives_the_sources_back_below_the_line() {
    let r = run(2, tm40(), Port::Efci(BufferPolicy::new(None, false, Some(50))), 2.0);
    // Without marking both would climb to PCR (200% of the line) and the queue grow
    // without bound; with it the sum stays near the line and the queue bounded.
    let total: f64 = r.mean_acr.iter().sum();
    assert!(total < 1.2 * LINK, "sum of ACRs {total} cells/s, line {LINK}");
    assert!(total > 0.5 * LINK, "sum of ACRs {total} cells/s, line {LINK}");
    assert!(r.max_queue < 5_000.0, "queue reached {} cells", r.max_queue);
}

#[test]
fn both_decrease_readings_keep_an_efci_loop_stable() {
    // The eprca95 set's rate factors (RIF 1/256, RDF 1/16) on this loop's line.
    let base = AbrParams { pcr: LINK, icr: 1_000.0, mcr: 0.0, ..AbrParams::eprca95() };
    for decrease in [Decrease::PerRm, Decrease::PerCell] {
        let r = run(2, AbrParams { decrease, ..base }, Port::Efci(BufferPolicy::new(None, false, Some(50))), 2.0);
        let total: f64 = r.mean_acr.iter().sum();
        assert!(total > 0.5 * LINK && total < 1.2 * LINK, "{decrease:?}: sum of ACRs {total} cells/s, line {LINK}");
        assert!(r.max_queue < 5_000.0, "{decrease:?}: queue reached {} cells", r.max_queue);
        if std::env::var_os("ATMSIM_ABR_REPORT").is_some() {
            eprintln!("{decrease:?}: ACRs {:?} sum {total:.0} max queue {:.0}", r.mean_acr, r.max_queue);
        }
    }
}
