//! Random streams.
//!
//! Every component draws from its own streams, one per purpose, seeded from
//! `(master seed, run number, stream id)` where the stream id is the FNV-1a 64-bit hash
//! of `"<component path>#<purpose>"`. FNV-1a is fixed by its definition (unlike Rust's
//! std hasher), so stream seeds are stable across versions and platforms, and adding or
//! removing a component never changes any other component's numbers. The three words
//! are combined with SplitMix64 finalisers; the generator is xoshiro256++ (rand_xoshiro),
//! whose 256-bit state is itself filled from SplitMix64 by `seed_from_u64`.

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// The generator type every model uses.
pub type Stream = Xoshiro256PlusPlus;

/// FNV-1a, 64-bit.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The SplitMix64 output function (Steele, Lea, Flood 2014).
pub fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Seed of the stream for `(seed, run, path, purpose)`.
pub fn stream_seed(seed: u64, run: u64, path: &str, purpose: &str) -> u64 {
    let mut key = Vec::with_capacity(path.len() + purpose.len() + 1);
    key.extend_from_slice(path.as_bytes());
    key.push(b'#');
    key.extend_from_slice(purpose.as_bytes());
    let id = fnv1a64(&key);
    splitmix64(splitmix64(splitmix64(seed) ^ run) ^ id)
}

/// A fresh generator for `(seed, run, path, purpose)`.
pub fn stream(seed: u64, run: u64, path: &str, purpose: &str) -> Stream {
    Stream::seed_from_u64(stream_seed(seed, run, path, purpose))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn fnv1a_matches_published_vectors() {
        // Vectors from the FNV reference (draft-eastlake-fnv): "" and "a".
        assert_eq!(fnv1a64(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a64(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x85944171f73967e8);
    }

    #[test]
    fn streams_depend_on_every_key_part() {
        let a: u64 = stream(1, 0, "src1", "arrivals").random();
        assert_eq!(a, stream(1, 0, "src1", "arrivals").random::<u64>());
        assert_ne!(a, stream(2, 0, "src1", "arrivals").random::<u64>());
        assert_ne!(a, stream(1, 1, "src1", "arrivals").random::<u64>());
        assert_ne!(a, stream(1, 0, "src2", "arrivals").random::<u64>());
        assert_ne!(a, stream(1, 0, "src1", "phase").random::<u64>());
    }
}
