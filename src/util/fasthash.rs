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

/// A key whose hash was computed already (merge-section pieces carry their xxh3): the table
/// uses that hash as is instead of hashing the bytes again.
#[derive(Clone, Copy)]
pub struct Prehashed<'a> {
    pub hash: u64,
    pub bytes: &'a [u8],
}

impl PartialEq for Prehashed<'_> {
    fn eq(&self, o: &Self) -> bool {
        self.hash == o.hash && self.bytes == o.bytes
    }
}
impl Eq for Prehashed<'_> {}

impl std::hash::Hash for Prehashed<'_> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        h.write_u64(self.hash);
    }
}

/// The hasher for `Prehashed` keys: the key's own hash, unchanged.
#[derive(Default, Clone, Copy)]
pub struct PassThrough(u64);

impl Hasher for PassThrough {
    fn write(&mut self, bytes: &[u8]) {
        // Only `Prehashed` keys use this hasher, and they write one u64.
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

pub type PrehashedMap<'a, V> = HashMap<Prehashed<'a>, V, BuildHasherDefault<PassThrough>>;

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
        let mut p: PrehashedMap<u32> = PrehashedMap::default();
        let h = |b: &[u8]| xxhash_rust::xxh3::xxh3_64(b);
        p.insert(Prehashed { hash: h(b"abc"), bytes: b"abc" }, 1);
        assert_eq!(p.get(&Prehashed { hash: h(b"abc"), bytes: b"abc" }), Some(&1));
        // The same hash with other bytes is another key.
        assert_eq!(p.get(&Prehashed { hash: h(b"abc"), bytes: b"abd" }), None);
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
