use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::time::Instant;
use atmsim_kernel::{rng, EventQueue, SimTime};
use rand_distr::{Distribution, Exp1};

#[derive(Clone, Copy, PartialEq, Eq)]
struct E24 { time: u64, seq: u64, comp: u32, tag: u32 }
impl Ord for E24 { fn cmp(&self, o: &Self) -> Ordering { let a=((self.time as u128)<<64)|self.seq as u128; let b=((o.time as u128)<<64)|o.seq as u128; b.cmp(&a) } }
impl PartialOrd for E24 { fn partial_cmp(&self, o: &Self) -> Option<Ordering> { Some(self.cmp(o)) } }

#[derive(Clone, Copy, PartialEq, Eq)]
struct E16 { time: u64, seq: u32, target: u32 }
impl Ord for E16 { #[inline(always)] fn cmp(&self, o: &Self) -> Ordering { let a=((self.time as u128)<<32)|self.seq as u128; let b=((o.time as u128)<<32)|o.seq as u128; b.cmp(&a) } }
impl PartialOrd for E16 { #[inline(always)] fn partial_cmp(&self, o: &Self) -> Option<Ordering> { Some(self.cmp(o)) } }
#[derive(Clone, Copy, PartialEq, Eq)]
struct E16b { time: u64, seq: u32, target: u32 }
impl Ord for E16b { #[inline(always)] fn cmp(&self, o: &Self) -> Ordering { o.time.cmp(&self.time).then(o.seq.cmp(&self.seq)) } }
impl PartialOrd for E16b { #[inline(always)] fn partial_cmp(&self, o: &Self) -> Option<Ordering> { Some(self.cmp(o)) } }

fn main() {
    let pending = 10_000u64; let events = 10_000_000u64; let mean = 1e6f64;
    // u64
    let mut g = rng::stream(1,0,"x","y");
    let t = Instant::now();
    let mut h: BinaryHeap<Reverse<u64>> = BinaryHeap::new();
    for _ in 0..pending { let x: f64 = Exp1.sample(&mut g); h.push(Reverse((x*mean) as u64)); }
    for _ in 0..events { let Reverse(now) = h.pop().unwrap(); let x: f64 = Exp1.sample(&mut g); h.push(Reverse(now + (x*mean) as u64)); }
    println!("u64 std     {:.1} M/s", events as f64 / t.elapsed().as_secs_f64() / 1e6);
    let mut g = rng::stream(1,0,"x","y");
    let t = Instant::now();
    let mut h: BinaryHeap<E24> = BinaryHeap::new(); let mut seq=0;
    for _ in 0..pending { let x: f64 = Exp1.sample(&mut g); h.push(E24{time:(x*mean) as u64, seq, comp:0, tag:0}); seq+=1; }
    for _ in 0..events { let e = h.pop().unwrap(); let x: f64 = Exp1.sample(&mut g); h.push(E24{time: e.time + (x*mean) as u64, seq, comp: e.comp, tag: e.tag}); seq+=1; }
    println!("E24 std     {:.1} M/s", events as f64 / t.elapsed().as_secs_f64() / 1e6);
    let mut g = rng::stream(1,0,"x","y");
    let t = Instant::now();
    let mut h: BinaryHeap<E16> = BinaryHeap::new(); let mut seq=0u32;
    for _ in 0..pending { let x: f64 = Exp1.sample(&mut g); h.push(E16{time:(x*mean) as u64, seq, target:0}); seq+=1; }
    for _ in 0..events { let e = h.pop().unwrap(); let x: f64 = Exp1.sample(&mut g); h.push(E16{time: e.time + (x*mean) as u64, seq, target: e.target}); seq=seq.wrapping_add(1); }
    println!("E16 std     {:.1} M/s", events as f64 / t.elapsed().as_secs_f64() / 1e6);
    let mut g = rng::stream(1,0,"x","y");
    let t = Instant::now();
    let mut h: BinaryHeap<E16b> = BinaryHeap::new(); let mut seq=0u32;
    for _ in 0..pending { let x: f64 = Exp1.sample(&mut g); h.push(E16b{time:(x*mean) as u64, seq, target:0}); seq+=1; }
    for _ in 0..events { let e = h.pop().unwrap(); let x: f64 = Exp1.sample(&mut g); h.push(E16b{time: e.time + (x*mean) as u64, seq, target: e.target}); seq=seq.wrapping_add(1); }
    println!("E16b std    {:.1} M/s", events as f64 / t.elapsed().as_secs_f64() / 1e6);
    let mut g = rng::stream(1,0,"x","y");
    let t = Instant::now();
    let mut q = EventQueue::default();
    for _ in 0..pending { let x: f64 = Exp1.sample(&mut g); q.schedule(SimTime((x*mean) as u64), 0, 0); }
    for _ in 0..events { let e = q.pop().unwrap(); let x: f64 = Exp1.sample(&mut g); q.schedule(SimTime(e.time.0 + (x*mean) as u64), 0, 0); }
    println!("EventQueue  {:.1} M/s", events as f64 / t.elapsed().as_secs_f64() / 1e6);
}
