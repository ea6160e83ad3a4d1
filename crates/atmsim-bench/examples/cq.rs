fn main() {
    let which = std::env::args().nth(1).unwrap_or_default();
    let n: u64 = std::env::var("N").ok().and_then(|v| v.parse().ok()).unwrap_or(4_000_000);
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
