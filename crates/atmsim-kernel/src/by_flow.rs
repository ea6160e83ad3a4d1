//! Per-flow books of one component, kept sparsely.
//!
//! A run numbers its flows 0..F (one per cell source); each component sees a few of
//! them. A dense vector indexed by flow id, grown to the largest id a component saw,
//! made memory grow with the square of the number of components (N `cbr → sink`
//! pairs: sink k held k empty books; 100,000 pairs needed tens of GB, issue 44 item 1).
//! [`ByFlow`] holds one entry per flow the component has actually seen.
//!
//! Lookups on a cell's path: the last flow looked up is checked first (a sink or a
//! per-VC queue sees runs of one flow); a table of up to [`SCAN`] flows is scanned;
//! beyond that a hash index finds the slot. Iteration ([`ByFlow::iter`]) is in flow
//! order whatever the order flows first appeared in, so reports and ledgers do not
//! depend on it.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Tables of at most this many flows are searched by a scan instead of the index.
pub const SCAN: usize = 8;

/// A multiplicative hash of a flow id (the index is never iterated, so its order
/// cannot reach results).
#[derive(Default)]
pub struct FlowHasher(u64);

impl Hasher for FlowHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u32(&mut self, v: u32) {
        let h = u64::from(v).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 = h ^ (h >> 29);
    }
}

/// One value per flow seen, in the order flows first appeared; see the module doc.
#[derive(Clone, Debug)]
pub struct ByFlow<T> {
    flows: Vec<u32>,
    values: Vec<T>,
    /// The slot of the last flow looked up.
    last: usize,
    /// Flow → slot, built once the table outgrows [`SCAN`].
    index: Option<HashMap<u32, u32, BuildHasherDefault<FlowHasher>>>,
}

impl<T> Default for ByFlow<T> {
    fn default() -> Self {
        ByFlow { flows: Vec::new(), values: Vec::new(), last: 0, index: None }
    }
}

impl<T> ByFlow<T> {
    /// An empty table.
    pub const fn new() -> Self {
        ByFlow { flows: Vec::new(), values: Vec::new(), last: 0, index: None }
    }

    /// Flows seen.
    pub fn len(&self) -> usize {
        self.flows.len()
    }

    /// Whether no flow was seen.
    pub fn is_empty(&self) -> bool {
        self.flows.is_empty()
    }

    #[inline(always)]
    fn slot(&self, flow: u32) -> Option<usize> {
        if self.flows.get(self.last) == Some(&flow) {
            return Some(self.last);
        }
        self.find(flow)
    }

    #[inline]
    fn find(&self, flow: u32) -> Option<usize> {
        match &self.index {
            None => self.flows.iter().position(|&f| f == flow),
            Some(ix) => ix.get(&flow).map(|&s| s as usize),
        }
    }

    /// Flow `flow`'s value, if it was seen.
    pub fn get(&self, flow: u32) -> Option<&T> {
        self.slot(flow).map(|s| &self.values[s])
    }

    /// Flow `flow`'s value, if it was seen, to change.
    pub fn get_mut(&mut self, flow: u32) -> Option<&mut T> {
        let s = self.slot(flow)?;
        self.last = s;
        Some(&mut self.values[s])
    }

    /// Flow `flow`'s value, made by `make` if the flow is new here.
    #[inline(always)]
    pub fn entry_with(&mut self, flow: u32, make: impl FnOnce() -> T) -> &mut T {
        let s = match self.slot(flow) {
            Some(s) => s,
            None => self.insert(flow, make()),
        };
        self.last = s;
        &mut self.values[s]
    }

    #[cold]
    fn insert(&mut self, flow: u32, value: T) -> usize {
        let s = self.flows.len();
        self.flows.push(flow);
        self.values.push(value);
        match &mut self.index {
            Some(ix) => {
                ix.insert(flow, s as u32);
            }
            None if self.flows.len() > SCAN => {
                self.index = Some(self.flows.iter().enumerate().map(|(i, &f)| (f, i as u32)).collect());
            }
            None => {}
        }
        s
    }

    /// Every flow seen with its value, in flow order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &T)> + '_ {
        let mut order: Vec<usize> = (0..self.flows.len()).collect();
        order.sort_unstable_by_key(|&s| self.flows[s]);
        order.into_iter().map(move |s| (self.flows[s], &self.values[s]))
    }

    /// Every value, in no particular order (for resetting them all).
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut T> + '_ {
        self.values.iter_mut()
    }

    /// Every value, in no particular order (for sums).
    pub fn values(&self) -> impl Iterator<Item = &T> + '_ {
        self.values.iter()
    }
}

impl<T: Default> ByFlow<T> {
    /// Flow `flow`'s value, a default one if the flow is new here.
    #[inline(always)]
    pub fn entry(&mut self, flow: u32) -> &mut T {
        self.entry_with(flow, T::default)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn holds_only_the_flows_seen() {
        let mut b: ByFlow<u64> = ByFlow::new();
        *b.entry(99_999) += 1;
        assert_eq!(b.len(), 1);
        assert_eq!(b.get(99_999), Some(&1));
        assert_eq!(b.get(0), None);
        assert!(b.get_mut(5).is_none());
    }

    proptest! {
        // Against a dense vector, the books it replaces: the same totals per flow,
        // iterated in flow order, scanned or indexed, whatever the order of arrival.
        #[test]
        fn equals_a_dense_vector(seq in proptest::collection::vec(0u32..64, 0..400)) {
            let mut sparse: ByFlow<u64> = ByFlow::new();
            let mut dense = vec![0u64; 64];
            for &f in &seq {
                *sparse.entry(f) += 1;
                dense[f as usize] += 1;
            }
            let want: Vec<(u32, u64)> = dense.iter().enumerate().filter(|(_, &n)| n > 0).map(|(f, &n)| (f as u32, n)).collect();
            let got: Vec<(u32, u64)> = sparse.iter().map(|(f, &n)| (f, n)).collect();
            prop_assert_eq!(got, want);
            for f in 0..64u32 {
                prop_assert_eq!(sparse.get(f).copied().unwrap_or(0), dense[f as usize]);
            }
        }
    }
}
