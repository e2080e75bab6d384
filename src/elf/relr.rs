//! RELR: packed relative relocations (`-z pack-relative-relocs`, `--pack-dyn-relocs=relr`).
//!
//! A relative relocation only says "add the load base to the word at this address"; RELR
//! lists those addresses compactly instead of one 24-byte `R_X86_64_RELATIVE` each. This module
//! decides which relative relocations qualify (as lld: an even offset in a section aligned to at
//! least 2; the others stay in `.rela.dyn`), and encodes `.relr.dyn` once addresses are known.
//! The encoding's size depends on the addresses, and the section sits before the code, so the
//! layout reassigns addresses until the size settles (`update`), as lld's
//! `finalizeAddressDependentContent` loop does.

use dtld_arch::x86_64 as arch;

use crate::elf::config::Config;
use crate::elf::layout::model::{DynRel, Layout, Place};
use crate::elf::symtab::{FileId, Resolved};

/// Moves the relative relocations RELR can carry from `l.dynrels` to `l.relr`.
pub fn split(l: &mut Layout) {
    if !l.config.relr() {
        return;
    }
    let rels = std::mem::take(&mut l.dynrels);
    let (relr, rest): (Vec<DynRel>, Vec<DynRel>) = rels.into_iter().partition(|d| d.r_type == arch::r::RELATIVE && qualifies(l, d.place));
    l.dynrels = rest;
    l.relative_count = l.dynrels.iter().filter(|d| d.r_type == arch::r::RELATIVE).count();
    l.relr = relr.into_iter().map(|d| d.place).collect();
}

/// RELR cannot express an odd address; lld also keeps relocations of byte-aligned input
/// sections in `.rela.dyn` (their output offset might be odd).
pub(crate) fn qualifies(l: &Layout, p: Place) -> bool {
    match p {
        Place::Input(f, s, off) => l.obj(f).sections[s as usize].align >= 2 && off.is_multiple_of(2),
        Place::GotSlot(_) => true,
        Place::GotPltSlot(_) | Place::Copy(_) => false,
    }
}

/// The version glibc's loader checks for before it accepts DT_RELR (glibc 2.36+).
pub const GLIBC_ABI_DT_RELR: &[u8] = b"GLIBC_ABI_DT_RELR";

/// With `-z pack-relative-relocs` (not `--pack-dyn-relocs=relr`), the entry of `verneed` that
/// gets a `GLIBC_ABI_DT_RELR` need: the library named `libc.so.*` from which the output needs a
/// `GLIBC_2.*` version, as lld decides. Whether any relocation was packed does not matter.
pub fn glibc_verneed(c: &Config, r: &Resolved, verneed: &[(FileId, Vec<&'static [u8]>)]) -> Option<usize> {
    if !c.z_pack_relative_relocs {
        return None;
    }
    verneed.iter().position(|(f, vers)| r.dso(*f).soname.starts_with("libc.so.") && vers.iter().any(|v| v.starts_with(b"GLIBC_2.")))
}

/// Re-encodes `.relr.dyn` from the current addresses; true when its size changed (the layout
/// must then assign addresses again). The section never shrinks: a shorter encoding is padded
/// with `1` words (an empty bitmap), so the iteration cannot oscillate, as in lld.
pub fn update(l: &mut Layout) -> bool {
    if l.relr.is_empty() {
        return false;
    }
    let mut addrs: Vec<u64> = l.relr.iter().map(|&p| crate::elf::layout::model::place_addr(l, p)).collect();
    addrs.sort_unstable();
    let mut words = encode(&addrs);
    let old = l.relr_words.len();
    if words.len() < old {
        words.resize(old, 1);
    }
    debug_assert_eq!(decode(&words), addrs);
    let changed = words.len() != old;
    l.relr_words = words;
    changed
}

/// The SHT_RELR encoding of sorted addresses: an address word (even), then bitmap words (odd)
/// whose bits 1..=63 mark the 63 words after the last covered one.
pub fn encode(sorted: &[u64]) -> Vec<u64> {
    const BITS: u64 = 63;
    let mut out = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        out.push(sorted[i]);
        let mut base = sorted[i] + 8;
        i += 1;
        loop {
            let mut bitmap = 0u64;
            while i < sorted.len() {
                let d = sorted[i].wrapping_sub(base);
                if d >= BITS * 8 || !d.is_multiple_of(8) {
                    break;
                }
                bitmap |= 1 << (d / 8);
                i += 1;
            }
            if bitmap == 0 {
                break;
            }
            out.push((bitmap << 1) | 1);
            base += BITS * 8;
        }
    }
    out
}

/// Decodes RELR words back into addresses (tests, and a self-check of `encode`).
pub fn decode(words: &[u64]) -> Vec<u64> {
    let mut out = Vec::new();
    let mut base = 0u64;
    for &w in words {
        if w & 1 == 0 {
            out.push(w);
            base = w + 8;
        } else {
            for k in 0..63 {
                if (w >> (k + 1)) & 1 != 0 {
                    out.push(base + k * 8);
                }
            }
            base += 63 * 8;
        }
    }
    out
}

/// `.relr.dyn`'s contents.
pub fn write(l: &Layout, buf: &mut [u8]) {
    for (i, w) in l.relr_words.iter().enumerate() {
        buf[i * 8..i * 8 + 8].copy_from_slice(&w.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_runs_as_bitmaps() {
        let a: Vec<u64> = vec![0x1000, 0x1008, 0x1010, 0x1020];
        assert_eq!(encode(&a), vec![0x1000, 0b1011 << 1 | 1]);
        assert_eq!(decode(&encode(&a)), a);
    }

    #[test]
    fn long_and_sparse_runs_round_trip() {
        let mut a: Vec<u64> = (0..200).map(|k| 0x2000 + k * 8).collect();
        a.extend([0x9000, 0x9004, 0x9010, 0x10_0000]);
        let w = encode(&a);
        // 0x2000, then 199 following words in four bitmaps (63 each); the rest as addresses
        // (0x9004 is not word-aligned after 0x9000: it starts a new run).
        assert_eq!(w[0], 0x2000);
        assert!(w[1..5].iter().all(|x| x & 1 == 1));
        assert_eq!(decode(&w), a);
    }

    #[test]
    fn padding_words_decode_to_nothing() {
        assert_eq!(decode(&[0x1000, 1, 1]), vec![0x1000]);
    }
}
