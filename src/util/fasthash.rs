//! A fast, unkeyed hasher for the link's internal tables.
//!
//! Why this exists: std's `HashMap` hashes with SipHash-1-3, keyed per process to resist
//! hash flooding. A linker's tables are keyed by symbol names, (file, section) pairs and piece
//! contents of its own inputs, looked up once or more per symbol and per relocation: in a large
//! debug link SipHash alone was an eighth of the profile. lld and mold hash with xxh3 and no key
//! for the same reason. Iteration order never reaches the output (std's random keys already
//! forbid relying on it), so the hasher changes speed only.
//!
//! Byte strings are hashed with xxh3 (one call per key, good distribution for names that share
//! long prefixes, like mangled C++ and Rust symbols); integers are folded in with a multiply and
//! rotate, which is all a table index needs.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// The multiplier of the integer mix (an odd constant with well-spread bits).
const K: u64 = 0xf135_7aea_2e62_a9c5;

#[derive(Default, Clone, Copy)]
pub struct FastHasher {
    state: u64,
}

impl FastHasher {
    #[inline]
    fn mix(&mut self, v: u64) {
        self.state = (self.state.rotate_left(26) ^ v).wrapping_mul(K);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        self.mix(xxhash_rust::xxh3::xxh3_64(bytes));
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.mix(i as u64);
    }
    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.mix(i as u64);
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.mix(i as u64);
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.mix(i);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.mix(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        // hashbrown takes its control bits from the top of the hash: fold the high-entropy
        // low half of the last multiply up.
        self.state.rotate_left(20)
    }
}

pub type FastBuild = BuildHasherDefault<FastHasher>;
pub type FastMap<K, V> = HashMap<K, V, FastBuild>;
pub type FastSet<K> = HashSet<K, FastBuild>;

/// The hasher for keys that are a hash already (merge-section pieces carry their xxh3): a
/// `u64` key is used as is instead of being hashed again.
#[derive(Default, Clone, Copy)]
pub struct PassThrough(u64);

impl Hasher for PassThrough {
    fn write(&mut self, bytes: &[u8]) {
        // Only `u64` keys that are hashes use this hasher; they write one u64.
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(K);
        }
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.0 = i;
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// A table keyed by precomputed 64-bit hashes (see `PassThrough`).
pub type HashKeyedMap<V> = HashMap<u64, V, BuildHasherDefault<PassThrough>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_find_what_they_hold() {
        let mut m: FastMap<&[u8], usize> = FastMap::default();
        let names: Vec<Vec<u8>> = (0..5000).map(|i| format!("_ZN4core3fmt{i}E").into_bytes()).collect();
        for (i, n) in names.iter().enumerate() {
            m.insert(n, i);
        }
        for (i, n) in names.iter().enumerate() {
            assert_eq!(m.get(n.as_slice()), Some(&i));
        }
        assert_eq!(m.get(&b"_ZN4core3fmtE"[..]), None);
        let mut p: HashKeyedMap<u32> = HashKeyedMap::default();
        let h = |b: &[u8]| xxhash_rust::xxh3::xxh3_64(b);
        p.insert(h(b"abc"), 1);
        assert_eq!(p.get(&h(b"abc")), Some(&1));
        assert_eq!(p.get(&h(b"abd")), None);
    }

    #[test]
    fn integer_keys_spread_over_the_top_bits() {
        // hashbrown's control byte comes from the top 7 bits: consecutive keys must not share it.
        let tops: FastSet<u64> = (0u64..256)
            .map(|i| {
                let mut h = FastHasher::default();
                h.write_u64(i);
                h.finish() >> 57
            })
            .collect();
        assert!(tops.len() > 64, "{} distinct top bits", tops.len());
    }
}
