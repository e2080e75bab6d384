//! A small deterministic random number generator (SplitMix64) for the link fuzzer. The
//! generator must give the same program for the same seed on every machine and every Rust
//! version, so it does not use `rand` or `std`'s randomly seeded hashers.

#[derive(Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator for the stream named by `parts` (e.g. `[program]` or `[program, shape]`).
    pub fn new(parts: &[u64]) -> Rng {
        let mut r = Rng(0x5eed_f00d_cafe_d00d);
        for &p in parts {
            r.0 ^= p.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            r.next();
        }
        r
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: u32) -> bool {
        self.below(100) < percent as usize
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// One of `items` with the given weights (their sum must be positive).
    pub fn weighted<T: Copy>(&mut self, items: &[(u32, T)]) -> T {
        let total: u32 = items.iter().map(|(w, _)| w).sum();
        let mut n = self.below(total as usize) as u32;
        for &(w, item) in items {
            if n < w {
                return item;
            }
            n -= w;
        }
        items[items.len() - 1].1
    }

    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}
