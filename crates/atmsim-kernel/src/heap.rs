//! A 4-ary min-heap on `u64` keys with the payloads kept in a parallel array.
//!
//! Why not `std::collections::BinaryHeap`: with thousands of pending events the heap's
//! cost is memory traffic. Here a node's four children's keys are adjacent (32 bytes,
//! one cache line or half of one), the tree is half as deep as a binary one, and a sift
//! compares keys only, touching a payload once per level it moves. On the hold
//! benchmark (10,000 pending events) the kernel went from 13.4 to 17.7 M events/s
//! against `BinaryHeap` of 32-byte entries (best of 7, `examples/cq.rs`). Variants
//! measured and not kept: 8 children (14.8), Floyd's bottom-up sift (16.5), keys in
//! 32-byte-aligned groups with `u64::MAX` sentinels (17.0), keys and payloads of a
//! group on one 128-byte line pair (17.4; 10.9 vs 12.3 with 100,000 pending).
//!
//! Order among equal keys is unspecified here; the event queue resolves ties itself.

/// Children per node.
const D: usize = 4;

/// The most entries sharing the root's key that [`KeyHeap::root_tie_first`] looks
/// through (more: the event queue takes them all out and sorts them instead).
pub const TIE_CAP: usize = 16;

/// The heap, plus one *staging slot* just past its last entry: the event queue writes
/// the first event a handler schedules there ([`KeyHeap::stage`]) and then either
/// replaces the root with it or pushes it. The staged payload is read back only where
/// it is finally stored, at the end of the sift: reading it at once (it was written a
/// few instructions earlier, field by field) was a store-forwarding stall that perf put
/// at ~11% of the hold benchmark.
#[derive(Clone, Debug)]
pub struct KeyHeap<V: Copy + Default> {
    /// `len + 1` keys: the heap, then the staging slot.
    keys: Vec<u64>,
    vals: Vec<V>,
    len: usize,
}

impl<V: Copy + Default> Default for KeyHeap<V> {
    fn default() -> Self {
        KeyHeap::with_capacity(0)
    }
}

impl<V: Copy + Default> KeyHeap<V> {
    pub fn with_capacity(n: usize) -> Self {
        let mut keys = Vec::with_capacity(n + 1);
        let mut vals = Vec::with_capacity(n + 1);
        keys.push(0);
        vals.push(V::default());
        KeyHeap { keys, vals, len: 0 }
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The smallest key and its payload.
    #[inline(always)]
    pub fn peek(&self) -> Option<(u64, V)> {
        if self.len == 0 {
            return None;
        }
        Some((self.keys[0], self.vals[0]))
    }

    /// Whether another entry than the root has the root's key (by the heap property,
    /// only the root's children need looking at).
    #[inline(always)]
    pub fn root_key_shared(&self) -> bool {
        if self.len < 2 {
            return false;
        }
        let end = self.len.min(D + 1);
        self.keys[1..end].contains(&self.keys[0])
    }

    /// Among the entries whose key equals the root's — by the heap property a subtree
    /// holding the root — moves the payload `first` puts first to the root, swapping
    /// payloads (the two keys are equal, so the heap stays a heap). Returns false, and
    /// moves nothing, when more than [`TIE_CAP`] entries share the key.
    #[inline]
    pub fn root_tie_first(&mut self, first: impl Fn(&V, &V) -> bool) -> bool {
        let Some(&k) = self.keys.first() else { return true };
        let mut stack = [0usize; TIE_CAP];
        let (mut sp, mut seen, mut best) = (1usize, 0usize, 0usize);
        while sp > 0 {
            sp -= 1;
            let p = stack[sp];
            seen += 1;
            if p != best && first(&self.vals[p], &self.vals[best]) {
                best = p;
            }
            let c0 = D * p + 1;
            for c in c0..(c0 + D).min(self.len) {
                if self.keys[c] == k {
                    if seen + sp >= TIE_CAP {
                        return false;
                    }
                    stack[sp] = c;
                    sp += 1;
                }
            }
        }
        if best != 0 {
            self.vals.swap(0, best);
        }
        true
    }

    /// Writes `(key, val)` into the staging slot (replacing what was staged).
    #[inline(always)]
    pub fn stage(&mut self, key: u64, val: V) {
        let n = self.len;
        self.keys[n] = key;
        self.vals[n] = val;
    }

    /// Adds the staged entry to the heap (the rarer path: its payload is read at once).
    #[inline]
    pub fn push_staged(&mut self) {
        let mut pos = self.len;
        let (key, val) = (self.keys[pos], self.vals[pos]);
        self.len += 1;
        self.keys.push(0);
        self.vals.push(V::default());
        // Sift up with a hole.
        while pos > 0 {
            let parent = (pos - 1) / D;
            let pk = self.keys[parent];
            if pk <= key {
                break;
            }
            self.keys[pos] = pk;
            self.vals[pos] = self.vals[parent];
            pos = parent;
        }
        self.keys[pos] = key;
        self.vals[pos] = val;
    }

    #[inline]
    pub fn push(&mut self, key: u64, val: V) {
        self.stage(key, val);
        self.push_staged();
    }

    /// Replaces the root by the staged entry and restores the heap. The heap must not
    /// be empty.
    #[inline(always)]
    pub fn replace_top_with_staged(&mut self) {
        let n = self.len;
        self.sift_down_from_root(self.keys[n], n, n);
    }

    /// Removes the root.
    #[inline]
    pub fn pop(&mut self) -> Option<(u64, V)> {
        let top = self.peek()?;
        self.len -= 1;
        let n = self.len;
        if n > 0 {
            // The last entry goes to the root's place and sinks.
            let k = self.keys[n];
            self.sift_down_from_root(k, n, n);
        }
        // Its old slot is the new staging slot; the old staging slot goes.
        self.keys.pop();
        self.vals.pop();
        Some(top)
    }

    /// Puts the entry in slot `from` (key `key`) at the root's place and moves it down
    /// among the first `n` entries (top-down, with a hole: each level compares keys
    /// only and moves one entry up). The payload is copied once, at the end.
    #[inline(always)]
    fn sift_down_from_root(&mut self, key: u64, from: usize, n: usize) {
        let keys = &mut self.keys[..=n];
        let vals = &mut self.vals[..=n];
        let mut pos = 0;
        loop {
            let first = D * pos + 1;
            if first >= n {
                break;
            }
            // Touch the grandchildren's keys (16 adjacent keys, two cache lines) so that
            // the next level's loads are under way while this level compares.
            let g = D * first + 1;
            if g + 2 * D < n {
                std::hint::black_box(keys[g] ^ keys[g + 2 * D]);
            }
            // The smallest child (all four at once when they exist: one bounds check).
            let (mut m, mut mk) = (first, keys[first]);
            if first + D <= n {
                let k = &keys[first..first + D];
                for (j, &kj) in k.iter().enumerate().skip(1) {
                    if kj < mk {
                        m = first + j;
                        mk = kj;
                    }
                }
            } else {
                for c in first + 1..n {
                    if keys[c] < mk {
                        m = c;
                        mk = keys[c];
                    }
                }
            }
            if mk >= key {
                break;
            }
            keys[pos] = mk;
            vals[pos] = vals[m];
            pos = m;
        }
        keys[pos] = key;
        vals[pos] = vals[from];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_key_order_under_mixed_pushes_and_replacements() {
        let mut h: KeyHeap<u32> = KeyHeap::default();
        let mut reference: Vec<u64> = Vec::new();
        let mut x: u64 = 99;
        let mut rnd = || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            x >> 40
        };
        for i in 0..20_000u32 {
            let k = rnd() % 1000;
            match i % 5 {
                0 | 1 | 2 => {
                    h.push(k, i);
                    reference.push(k);
                }
                3 if !h.is_empty() => {
                    let (top, _) = h.peek().unwrap();
                    reference.sort_unstable();
                    assert_eq!(top, reference[0]);
                    reference[0] = k;
                    h.stage(k, i);
                    h.replace_top_with_staged();
                }
                _ => {
                    reference.sort_unstable();
                    let got = h.pop().map(|e| e.0);
                    let want = if reference.is_empty() { None } else { Some(reference.remove(0)) };
                    assert_eq!(got, want);
                }
            }
            assert_eq!(h.len(), reference.len());
        }
        reference.sort_unstable();
        let rest: Vec<u64> = std::iter::from_fn(|| h.pop().map(|e| e.0)).collect();
        assert_eq!(rest, reference);
    }

    #[test]
    fn staged_entries_are_pushed_or_replace_the_root() {
        let mut h = KeyHeap::default();
        for k in [30u64, 10, 20] {
            h.stage(k, k + 1);
            h.push_staged();
        }
        h.stage(25, 26); // replaces 10
        h.replace_top_with_staged();
        h.stage(5, 6); // staged but not committed: not in the heap
        let got: Vec<(u64, u64)> = std::iter::from_fn(|| h.pop()).collect();
        assert_eq!(got, vec![(20, 21), (25, 26), (30, 31)]);
        assert!(h.is_empty() && h.peek().is_none());
    }

    #[test]
    fn payload_travels_with_its_key() {
        let mut h = KeyHeap::default();
        for k in [50u64, 10, 40, 20, 30, 60, 5] {
            h.push(k, k * 100);
        }
        while let Some((k, v)) = h.pop() {
            assert_eq!(v, k * 100);
        }
    }

    #[test]
    fn shared_root_key_is_seen() {
        let mut h = KeyHeap::default();
        h.push(7, 0u8);
        assert!(!h.root_key_shared());
        h.push(9, 1);
        assert!(!h.root_key_shared());
        h.push(7, 2);
        assert!(h.root_key_shared());
        h.pop();
        assert!(!h.root_key_shared());
    }
}
