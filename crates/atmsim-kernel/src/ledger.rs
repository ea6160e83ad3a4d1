//! The conservation ledger.
//!
//! At the end of every run each component adds what it knows to one ledger, per flow
//! (a flow is one source's cells, whatever VPI/VCI they carry on the way):
//! sources add `generated`, sinks `delivered`, queues and links their `dropped` (by
//! cause) and whatever they still hold as `in_flight`. The run fails unless, for every
//! flow, generated = delivered + dropped + in flight.

use std::collections::BTreeMap;

/// Per-flow cell accounting for one run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ledger {
    pub generated: Vec<u64>,
    pub delivered: Vec<u64>,
    pub in_flight: Vec<u64>,
    pub replicated: Vec<u64>,
    /// (cause, flow) → cells dropped.
    pub dropped: BTreeMap<(&'static str, u32), u64>,
    /// Message payloads the run's store still holds at the end of the run.
    pub payloads_live: u64,
    /// Payloads referred to by messages the components still hold (in buffers, on
    /// wires). Every other live payload was never released: a leak.
    pub payloads_held: u64,
    /// PDUs the byte-exact checking mode emitted and parsed back (0 when it is off).
    pub wire_checked: u64,
}

fn bump(v: &mut Vec<u64>, flow: u32, n: u64) {
    let i = flow as usize;
    if v.len() <= i {
        v.resize(i + 1, 0);
    }
    v[i] += n;
}

impl Ledger {
    pub fn add_generated(&mut self, flow: u32, n: u64) {
        bump(&mut self.generated, flow, n);
    }
    pub fn add_delivered(&mut self, flow: u32, n: u64) {
        bump(&mut self.delivered, flow, n);
    }
    pub fn add_replicated(&mut self, flow: u32, n: u64) {
        bump(&mut self.replicated, flow, n);
    }
    pub fn add_in_flight(&mut self, flow: u32, n: u64) {
        bump(&mut self.in_flight, flow, n);
    }
    pub fn add_payloads_held(&mut self, n: u64) {
        self.payloads_held += n;
    }
    pub fn add_dropped(&mut self, cause: &'static str, flow: u32, n: u64) {
        if n > 0 {
            *self.dropped.entry((cause, flow)).or_insert(0) += n;
        }
    }
    fn at(v: &[u64], flow: usize) -> u64 {
        v.get(flow).copied().unwrap_or(0)
    }
    pub fn flows(&self) -> usize {
        let d = self.dropped.keys().map(|&(_, f)| f as usize + 1).max().unwrap_or(0);
        self.generated.len().max(self.delivered.len()).max(self.in_flight.len()).max(self.replicated.len()).max(d)
    }
    pub fn dropped_of(&self, flow: u32) -> u64 {
        self.dropped.iter().filter(|((_, f), _)| *f == flow).map(|(_, n)| n).sum()
    }
    pub fn dropped_by_cause(&self) -> BTreeMap<&'static str, u64> {
        let mut m = BTreeMap::new();
        for (&(cause, _), &n) in &self.dropped {
            *m.entry(cause).or_insert(0) += n;
        }
        m
    }
    pub fn totals(&self) -> (u64, u64, u64, u64) {
        (
            self.generated.iter().sum(),
            self.delivered.iter().sum(),
            self.dropped.values().sum(),
            self.in_flight.iter().sum(),
        )
    }
    /// Flows whose books do not balance, as readable lines.
    pub fn violations(&self) -> Vec<String> {
        let mut out = Vec::new();
        for f in 0..self.flows() {
            let g = Self::at(&self.generated, f);
            let d = Self::at(&self.delivered, f);
            let x = self.dropped_of(f as u32);
            let i = Self::at(&self.in_flight, f);
            let r = Self::at(&self.replicated, f);
            if g + r != d + x + i {
                out.push(format!(
                    "flow {f}: generated {g} + replicated {r} != delivered {d} + dropped {x} + in flight {i}"
                ));
            }
        }
        if self.payloads_live != self.payloads_held {
            out.push(format!(
                "payloads: {} live in the store at the end of the run, {} held by messages in flight ({} never released)",
                self.payloads_live,
                self.payloads_held,
                self.payloads_live.abs_diff(self.payloads_held)
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn balanced_and_unbalanced_books() {
        let mut l = Ledger::default();
        l.add_generated(0, 10);
        l.add_delivered(0, 7);
        l.add_dropped("buffer_full", 0, 2);
        l.add_in_flight(0, 1);
        assert!(l.violations().is_empty());
        l.add_generated(1, 3);
        l.add_delivered(1, 2);
        assert_eq!(l.violations().len(), 1);
        assert!(l.violations()[0].starts_with("flow 1:"));
        // a copy made by a multipoint switch must be delivered or accounted for too
        l.add_replicated(0, 2);
        l.add_delivered(0, 1);
        assert_eq!(l.violations().len(), 2);
        l.add_dropped("buffer_full", 0, 1);
        assert_eq!(l.violations().len(), 1);
    }
}
