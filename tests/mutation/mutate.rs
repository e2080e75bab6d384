//! Why this exists: the deterministic half of the mutation test. A small fixed-seed PRNG
//! (SplitMix64, written here so no `rand` dependency is needed) picks, for every variant index,
//! one damage to apply to one input file: truncation, bit flips, boundary-value overwrites of
//! header fields, archive header garbage, chunk fills or insertions. The same seed and index
//! always give the same bytes, so a failure is reproduced from `seed + index` alone.

use crate::layout::{Enc, Field, Layout};

/// SplitMix64: tiny, fast, and good enough to spread mutations.
pub struct Rng(u64);

impl Rng {
    /// A generator for variant `index` of the run seeded with `seed`: independent of how many
    /// variants ran before it, so `MUTATION_ONLY=index` reproduces exactly.
    pub fn for_variant(seed: u64, index: u64) -> Rng {
        let mut r = Rng(seed ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        r.next();
        r
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// The byte values the brief calls boundary values.
const BOUNDARY_BYTES: [u8; 4] = [0x00, 0xff, 0x7f, 0x80];

/// Field-name suffixes that locate or size other data: offsets, counts, sizes, links, indexes.
const KEY_FIELDS: [&str; 13] =
    ["e_shoff", "e_shnum", "e_shstrndx", "e_shentsize", "sh_offset", "sh_size", "sh_link", "sh_info", "st_name", "st_shndx", "r_info", ".size", ".count"];

/// Applies one random mutation to `data` and returns a description of what was done.
pub fn mutate(rng: &mut Rng, data: &mut Vec<u8>, layout: &Layout) -> String {
    let roll = rng.below(100);
    if data.is_empty() {
        data.push(0);
        return "grow empty file".into();
    }
    match roll {
        0..=19 => truncate(rng, data, layout),
        20..=31 => {
            let pos = interesting_pos(rng, data, layout);
            let bit = rng.below(8);
            data[pos] ^= 1 << bit;
            format!("flip bit {bit} at {pos:#x}{}", where_is(layout, pos))
        }
        32..=41 => {
            let n = 2 + rng.below(15);
            let mut spots = Vec::new();
            for _ in 0..n {
                let pos = interesting_pos(rng, data, layout);
                let bit = rng.below(8);
                data[pos] ^= 1 << bit;
                spots.push(format!("{pos:#x}.{bit}"));
            }
            format!("flip {n} bits at {}", spots.join(" "))
        }
        42..=79 => overwrite_field(rng, data, layout),
        80..=89 => {
            let n = 1 + rng.below(8);
            let mut spots = Vec::new();
            for _ in 0..n {
                let pos = interesting_pos(rng, data, layout);
                let v = *rng.pick(&BOUNDARY_BYTES);
                data[pos] = v;
                spots.push(format!("{pos:#x}={v:#04x}"));
            }
            format!("overwrite {n} bytes: {}", spots.join(" "))
        }
        90..=95 => {
            let start = interesting_pos(rng, data, layout);
            let len = (1 + rng.below(256)).min(data.len() - start);
            let fill = rng.below(3);
            for byte in &mut data[start..start + len] {
                *byte = match fill {
                    0 => 0,
                    1 => 0xff,
                    _ => rng.next() as u8,
                };
            }
            let what = ["zeros", "0xff", "random bytes"][fill];
            format!("fill {len} bytes at {start:#x}{} with {what}", where_is(layout, start))
        }
        _ => {
            let pos = interesting_pos(rng, data, layout);
            let len = 1 + rng.below(64);
            let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            data.splice(pos..pos, bytes);
            format!("insert {len} random bytes at {pos:#x}{}", where_is(layout, pos))
        }
    }
}

/// A position in the file: half the time inside a named region (headers, symbols, relocations,
/// archive headers ...), otherwise anywhere.
fn interesting_pos(rng: &mut Rng, data: &[u8], layout: &Layout) -> usize {
    if !layout.regions.is_empty() && rng.chance(50) {
        let r = rng.pick(&layout.regions);
        let pos = r.start + rng.below(r.end - r.start);
        if pos < data.len() {
            return pos;
        }
    }
    rng.below(data.len())
}

/// " (in <region>)" for the innermost region containing `pos`, for descriptions.
fn where_is(layout: &Layout, pos: usize) -> String {
    layout.regions.iter().filter(|r| r.start <= pos && pos < r.end).min_by_key(|r| r.end - r.start).map(|r| format!(" (in {})", r.name)).unwrap_or_default()
}

fn truncate(rng: &mut Rng, data: &mut Vec<u8>, layout: &Layout) -> String {
    let len = data.len();
    let at = match rng.below(4) {
        // Inside a region (including inside the ELF header, symtab, relocations, archive
        // headers and member bodies).
        0 | 1 if !layout.regions.is_empty() => {
            let r = rng.pick(&layout.regions);
            r.start + rng.below(r.end - r.start)
        }
        // Just around a region boundary.
        2 if !layout.regions.is_empty() => {
            let r = rng.pick(&layout.regions);
            let edge = if rng.chance(50) { r.start } else { r.end };
            (edge + rng.below(3)).saturating_sub(1)
        }
        _ => rng.below(len),
    }
    .min(len - 1);
    data.truncate(at);
    format!("truncate to {at} of {len} bytes{}", where_is(layout, at))
}

fn overwrite_field(rng: &mut Rng, data: &mut [u8], layout: &Layout) -> String {
    if layout.fields.is_empty() {
        let pos = rng.below(data.len());
        data[pos] = *rng.pick(&BOUNDARY_BYTES);
        return format!("overwrite byte at {pos:#x} (no fields known)");
    }
    // Pick a group first so that the many symbol and relocation fields do not drown the few
    // header fields.
    let mut groups: Vec<&str> = layout.fields.iter().map(|f| f.group).collect();
    groups.dedup();
    groups.sort_unstable();
    groups.dedup();
    let group = *rng.pick(&groups);
    let mut candidates: Vec<&Field> = layout.fields.iter().filter(|f| f.group == group).collect();
    // Half the time, aim at the fields a reader uses to find everything else.
    if rng.chance(50) {
        let key: Vec<&Field> = candidates.iter().copied().filter(|f| KEY_FIELDS.iter().any(|k| f.name.ends_with(k))).collect();
        if !key.is_empty() {
            candidates = key;
        }
    }
    let f = *rng.pick(&candidates);
    if f.offset + f.size > data.len() {
        return format!("no-op: field {} beyond end", f.name);
    }
    let slot = &mut data[f.offset..f.offset + f.size];
    let old = slot.to_vec();
    let what = match f.enc {
        Enc::Ascii => {
            let current: u64 = String::from_utf8_lossy(&old).trim().parse().unwrap_or(0);
            let choices = [
                "0".to_string(),
                "-1".to_string(),
                "9".repeat(f.size),
                (current + 1).to_string(),
                current.saturating_sub(1).to_string(),
                (current * 2).to_string(),
                " ".repeat(f.size),
                "0x10".to_string(),
                "12ab".to_string(),
                "4294967296".to_string(),
            ];
            let text = rng.pick(&choices).clone();
            let mut bytes = text.clone().into_bytes();
            bytes.resize(f.size, b' ');
            bytes.truncate(f.size);
            slot.copy_from_slice(&bytes);
            format!("\"{text}\"")
        }
        Enc::Raw => {
            let v = *rng.pick(&BOUNDARY_BYTES);
            if rng.chance(50) {
                slot.fill(v);
                format!("all bytes {v:#04x}")
            } else {
                let i = rng.below(f.size);
                slot[i] = v;
                format!("byte {i} = {v:#04x}")
            }
        }
        Enc::Le | Enc::Be => {
            let n = f.size;
            // Index of the most significant byte in memory order.
            let msb = if f.enc == Enc::Le { n - 1 } else { 0 };
            let old_val = old.iter().enumerate().fold(0u64, |acc, (i, &b)| {
                let shift = if f.enc == Enc::Le { 8 * i } else { 8 * (n - 1 - i) };
                acc | (u64::from(b) << shift)
            });
            let write = |v: u64, slot: &mut [u8]| {
                for (i, byte) in slot.iter_mut().enumerate() {
                    let shift = if f.enc == Enc::Le { 8 * i } else { 8 * (n - 1 - i) };
                    *byte = (v >> shift) as u8;
                }
            };
            match rng.below(9) {
                0 => {
                    slot.fill(0);
                    "0".into()
                }
                1 => {
                    slot.fill(0xff);
                    "all 0xff".into()
                }
                2 => {
                    slot.fill(0xff);
                    slot[msb] = 0x7f;
                    "signed max (0x7f..ff)".into()
                }
                3 => {
                    slot.fill(0);
                    slot[msb] = 0x80;
                    "signed min (0x80..00)".into()
                }
                4 => {
                    let i = rng.below(n);
                    let v = *rng.pick(&BOUNDARY_BYTES);
                    slot[i] = v;
                    format!("byte {i} = {v:#04x}")
                }
                5 => {
                    write(old_val.wrapping_add(1), slot);
                    "old + 1".into()
                }
                6 => {
                    write(old_val.wrapping_sub(1), slot);
                    "old - 1".into()
                }
                7 => {
                    let v = 1u64 << rng.below(8 * n);
                    write(v, slot);
                    format!("{v:#x}")
                }
                _ => {
                    let v = rng.next();
                    write(v, slot);
                    "random".into()
                }
            }
        }
    };
    format!("set {} @{:#x} ({} bytes, was {:02x?}) to {what}", f.name, f.offset, f.size, old)
}
