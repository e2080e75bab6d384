//! Android's packed relocations (`--pack-dyn-relocs=android`, `android+relr`) and Android's
//! RELR tags (`--use-android-relr-tags`), as lld writes them for x86-64.
//!
//! Android's loader (before API level 30 it knew no DT_RELR) reads `.rela.dyn` in a compact
//! format instead of 24-byte `Elf64_Rela` entries: the bytes `APS2`, then SLEB128 numbers — the
//! relocation count, an initial offset, then groups of relocations that share their `r_info`,
//! their offset delta or their addend, each relocation storing only what differs from the one
//! before. The section is SHT_ANDROID_RELA, found through DT_ANDROID_RELA / DT_ANDROID_RELASZ.
//! The grouping decisions are lld's (`AndroidPackedRelocationSection::updateAllocSize`), so the
//! bytes are the same: runs of 8 or more relative relocations a word apart become run-length
//! groups, the other relative ones one group sorted by offset, non-relative ones grouped by
//! `r_info` (and addend) when 3 or more share it and the addend is 0, the rest sorted by offset.
//!
//! The encoding's size depends on the addresses it encodes and `.rela.dyn` precedes the code, so
//! the layout reassigns addresses until the size settles (`update`), as for `.relr.dyn`; the
//! section never shrinks (a shorter encoding is padded with zeros) so the iteration ends.

use dtld_arch::x86_64 as arch;

use crate::elf::layout::model::Layout;

/// SHT_ANDROID_REL / SHT_ANDROID_RELA (SHT_LOOS + 1 / + 2) and SHT_ANDROID_RELR.
pub const SHT_ANDROID_RELA: u32 = 0x6000_0002;
pub const SHT_ANDROID_RELR: u32 = 0x6fff_ff00;
/// DT_ANDROID_RELA / DT_ANDROID_RELASZ (DT_LOOS + 4 / + 5).
pub const DT_ANDROID_RELA: u32 = 0x6000_0011;
pub const DT_ANDROID_RELASZ: u32 = 0x6000_0012;
/// DT_ANDROID_RELR, DT_ANDROID_RELRSZ, DT_ANDROID_RELRENT (Android's tags from before RELR
/// was standardised).
pub const DT_ANDROID_RELR: u32 = 0x6fff_e000;
pub const DT_ANDROID_RELRSZ: u32 = 0x6fff_e001;
pub const DT_ANDROID_RELRENT: u32 = 0x6fff_e003;

const GROUPED_BY_INFO: i64 = 1;
const GROUPED_BY_OFFSET_DELTA: i64 = 2;
const GROUP_HAS_ADDEND: i64 = 8;

/// One relocation as the packed format sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rela {
    pub offset: u64,
    pub info: u64,
    pub addend: i64,
}

/// Whether `.rela.dyn` is written packed: `--pack-dyn-relocs=android` in an output with a
/// dynamic section (a static executable's IRELATIVE relocations stay a plain table, which its
/// startup code walks between `__rela_iplt_start` and `__rela_iplt_end`).
pub fn enabled(l: &Layout) -> bool {
    l.config.pack_android && l.has_dynamic
}

/// Re-encodes `.rela.dyn` from the current addresses; true when its size changed (the layout
/// must then assign addresses again).
pub fn update(l: &mut Layout) -> bool {
    if !enabled(l) || (l.dynrels.is_empty() && l.irelatives.is_empty()) {
        return false;
    }
    let relas: Vec<Rela> = l
        .dynrels
        .iter()
        .chain(l.irelatives.iter())
        .map(|d| {
            let (offset, info, addend) = crate::elf::layout::model::rela_fields(l, d);
            Rela { offset, info, addend: addend as i64 }
        })
        .collect();
    let mut bytes = encode(&relas);
    let old = l.android_rela.len();
    if bytes.len() < old {
        bytes.resize(old, 0);
    }
    let changed = bytes.len() != old;
    l.android_rela = bytes;
    changed
}

/// The packed section's contents for `relas` (any order), lld's grouping.
pub fn encode(relas: &[Rela]) -> Vec<u8> {
    let mut out = b"APS2".to_vec();
    let mut add = |v: i64| sleb128(&mut out, v);
    add(relas.len() as i64);
    add(0);
    let relative = arch::r::RELATIVE as u64;
    let (mut relatives, mut others): (Vec<Rela>, Vec<Rela>) = relas.iter().partition(|r| r.info & 0xffff_ffff == relative);
    relatives.sort_by_key(|r| r.offset);
    // Runs of relative relocations a word apart (vtables): 8 or more make a group of their own.
    let mut ungrouped_relatives = Vec::new();
    let mut relative_groups: Vec<Vec<Rela>> = Vec::new();
    let mut i = 0;
    while i < relatives.len() {
        let mut j = i + 1;
        while j < relatives.len() && relatives[j - 1].offset.wrapping_add(8) == relatives[j].offset {
            j += 1;
        }
        if j - i < 8 {
            ungrouped_relatives.extend_from_slice(&relatives[i..j]);
        } else {
            relative_groups.push(relatives[i..j].to_vec());
        }
        i = j;
    }
    // The others by r_info (the symbol index is its high half: one symbol's relocations are
    // adjacent), then addend, then offset; 3 or more with one r_info and a zero addend group.
    others.sort_by_key(|r| (r.info, r.addend, r.offset));
    let mut ungrouped_others = Vec::new();
    let mut other_groups: Vec<&[Rela]> = Vec::new();
    let mut i = 0;
    while i < others.len() {
        let mut j = i + 1;
        while j < others.len() && others[j].info == others[i].info && others[j].addend == others[i].addend {
            j += 1;
        }
        if j - i < 3 || others[i].addend != 0 {
            ungrouped_others.extend_from_slice(&others[i..j]);
        } else {
            other_groups.push(&others[i..j]);
        }
        i = j;
    }
    ungrouped_others.sort_by_key(|r| r.offset);

    let mut offset = 0u64;
    let mut addend = 0i64;
    let delta = |a: u64, b: u64| a.wrapping_sub(b) as i64;
    for g in &relative_groups {
        // Two groups per run: the first relocation (moving the offset to the run), then the
        // rest, a word apart.
        add(1);
        add(GROUPED_BY_OFFSET_DELTA | GROUPED_BY_INFO | GROUP_HAS_ADDEND);
        add(delta(g[0].offset, offset));
        add(relative as i64);
        add(g[0].addend.wrapping_sub(addend));
        addend = g[0].addend;
        add(g.len() as i64 - 1);
        add(GROUPED_BY_OFFSET_DELTA | GROUPED_BY_INFO | GROUP_HAS_ADDEND);
        add(8);
        add(relative as i64);
        for r in &g[1..] {
            add(r.addend.wrapping_sub(addend));
            addend = r.addend;
        }
        offset = g[g.len() - 1].offset;
    }
    if !ungrouped_relatives.is_empty() {
        add(ungrouped_relatives.len() as i64);
        add(GROUPED_BY_INFO | GROUP_HAS_ADDEND);
        add(relative as i64);
        for r in &ungrouped_relatives {
            add(delta(r.offset, offset));
            offset = r.offset;
            add(r.addend.wrapping_sub(addend));
            addend = r.addend;
        }
    }
    for g in &other_groups {
        add(g.len() as i64);
        add(GROUPED_BY_INFO);
        add(g[0].info as i64);
        for r in g.iter() {
            add(delta(r.offset, offset));
            offset = r.offset;
        }
        addend = 0;
    }
    if !ungrouped_others.is_empty() {
        add(ungrouped_others.len() as i64);
        add(GROUP_HAS_ADDEND);
        for r in &ungrouped_others {
            add(delta(r.offset, offset));
            offset = r.offset;
            add(r.info as i64);
            add(r.addend.wrapping_sub(addend));
            addend = r.addend;
        }
    }
    out
}

/// Signed LEB128, shortest form.
fn sleb128(out: &mut Vec<u8>, mut v: i64) {
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        let done = (v == 0 && byte & 0x40 == 0) || (v == -1 && byte & 0x40 != 0);
        out.push(if done { byte } else { byte | 0x80 });
        if done {
            return;
        }
    }
}

/// `.rela.dyn`'s packed contents.
pub fn write(l: &Layout, buf: &mut [u8]) {
    buf[..l.android_rela.len()].copy_from_slice(&l.android_rela);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decodes a packed section (the format's reader, for the tests).
    fn decode(b: &[u8]) -> Vec<Rela> {
        assert_eq!(&b[..4], b"APS2");
        let mut p = 4;
        let mut next = || {
            let (mut v, mut shift) = (0i64, 0);
            loop {
                let byte = b[p];
                p += 1;
                v |= ((byte & 0x7f) as i64) << shift;
                shift += 7;
                if byte & 0x80 == 0 {
                    if shift < 64 && byte & 0x40 != 0 {
                        v |= -1i64 << shift;
                    }
                    return v;
                }
            }
        };
        let mut n = next();
        let mut offset = next() as u64;
        let (mut info, mut addend) = (0u64, 0i64);
        let mut out = Vec::new();
        while n > 0 {
            let size = next();
            let flags = next();
            let by_delta = flags & GROUPED_BY_OFFSET_DELTA != 0;
            let by_info = flags & GROUPED_BY_INFO != 0;
            let has_addend = flags & GROUP_HAS_ADDEND != 0;
            let group_delta = if by_delta { next() } else { 0 };
            if by_info {
                info = next() as u64;
            }
            for _ in 0..size {
                offset = offset.wrapping_add(if by_delta { group_delta } else { next() } as u64);
                if !by_info {
                    info = next() as u64;
                }
                if has_addend {
                    addend = addend.wrapping_add(next());
                } else {
                    addend = 0;
                }
                out.push(Rela { offset, info, addend });
            }
            n -= size;
        }
        out
    }

    fn sorted(mut v: Vec<Rela>) -> Vec<Rela> {
        v.sort_by_key(|r| (r.offset, r.info));
        v
    }

    #[test]
    fn sleb128_is_shortest() {
        let enc = |v| {
            let mut o = Vec::new();
            sleb128(&mut o, v);
            o
        };
        assert_eq!(enc(0), [0]);
        assert_eq!(enc(63), [0x3f]);
        assert_eq!(enc(64), [0xc0, 0x00]);
        assert_eq!(enc(-1), [0x7f]);
        assert_eq!(enc(-65), [0xbf, 0x7f]);
        assert_eq!(enc(0x26b0), [0xb0, 0xcd, 0x00]);
    }

    #[test]
    fn round_trips_every_grouping() {
        let rel = |offset, addend| Rela { offset, info: 8, addend };
        let glob = |offset, sym: u64| Rela { offset, info: sym << 32 | 6, addend: 0 };
        let mut v: Vec<Rela> = (0..10).map(|k| rel(0x4000 + 8 * k, 0x1000 + 16 * k as i64)).collect();
        v.extend([rel(0x3000, 0x10), rel(0x3010, 0x20)]);
        v.extend([glob(0x5000, 3), glob(0x5008, 3), glob(0x5010, 3), glob(0x5020, 1), glob(0x5028, 2)]);
        v.push(Rela { offset: 0x5030, info: 1 << 32 | 1, addend: -8 });
        let packed = encode(&v);
        assert_eq!(sorted(decode(&packed)), sorted(v));
    }

    /// lld's bytes for a PIE with nine relative relocations in short runs and five GLOB_DAT
    /// ones, each against its own symbol (no group but the ungrouped ones).
    #[test]
    fn matches_lld_for_short_runs() {
        let rel = |offset, addend| Rela { offset, info: 8, addend };
        let v = vec![
            rel(0x26b0, 0x1610),
            rel(0x26b8, 0x1650),
            rel(0x3888, 0x3888),
            rel(0x38a0, 0x3890),
            rel(0x38a8, 0x3894),
            rel(0x38b0, 0x3898),
            rel(0x38b8, 0x3890),
            rel(0x38c0, 0x3894),
            rel(0x38c8, 0x3898),
        ];
        let p = encode(&v);
        assert_eq!(&p[..13], [b'A', b'P', b'S', b'2', 9, 0, 9, 9, 8, 0xb0, 0xcd, 0x00, 0x90]);
    }
}
