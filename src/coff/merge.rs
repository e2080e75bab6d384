//! String tail merging of MSVC string literals (lld's `MergeChunk`).
//!
//! cl.exe and clang-cl put every string literal in its own COMDAT `.rdata` section whose leader
//! is named `??_C@...`. lld-link (with ICF, or `/opt:lldtailmerge`) collects such sections
//! without relocations into one chunk per alignment and lays their bytes out as LLVM's
//! `StringTableBuilder` does in RAW mode: equal literals share one copy, and a literal that is
//! the tail of a longer one (`"world"` in `"hello world"`) points into it when the alignment
//! allows. This module decides which sections qualify and builds the merged bytes; the layout
//! places the chunks at the end of `.rdata` and gives each section its offset.

use super::config::CoffConfig;
use super::object::ObjFile;
use super::symtab::InFile;

/// Whether section `k` (0-based) of `file` is a string literal lld tail-merges: no relocations,
/// named `.rdata`, COMDAT leader mangled as a string literal (`??_C@`).
pub fn is_mergeable(config: &CoffConfig, file: &InFile, obj: &ObjFile, k: u32) -> bool {
    if !config.tail_merge() {
        return false;
    }
    let s = &obj.sections[k as usize];
    if !s.relocs.is_empty() || s.name != ".rdata" {
        return false;
    }
    file.leaders.get(&k).is_some_and(|&i| obj.symbols[i as usize].name.starts_with("??_C@"))
}

/// The merged bytes of `strings` with `align`-aligned starts, and each input's offset
/// (LLVM's `StringTableBuilder::finalize` for RAW tables: strings sorted by their reversed
/// bytes, descending, so a string that ends the previously placed one shares its bytes).
pub fn tail_merge(strings: &[&[u8]], align: u32) -> (Vec<u8>, Vec<u32>) {
    let align = align.max(1) as usize;
    let mut uniq: Vec<&[u8]> = strings.to_vec();
    uniq.sort_by(|a, b| b.iter().rev().cmp(a.iter().rev()));
    uniq.dedup();
    let mut offset: std::collections::HashMap<&[u8], usize> = std::collections::HashMap::with_capacity(uniq.len());
    let mut size = 0usize;
    let mut prev: &[u8] = &[];
    let mut placed: Vec<(&[u8], usize)> = Vec::with_capacity(uniq.len());
    for s in uniq {
        if prev.ends_with(s) {
            let pos = size - s.len();
            if pos & (align - 1) == 0 {
                offset.insert(s, pos);
                continue;
            }
        }
        size = size.div_ceil(align) * align;
        offset.insert(s, size);
        placed.push((s, size));
        size += s.len();
        prev = s;
    }
    let mut data = vec![0u8; size];
    for (s, at) in placed {
        data[at..at + s.len()].copy_from_slice(s);
    }
    (data, strings.iter().map(|s| offset[s] as u32).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tails_share_bytes() {
        let (data, off) = tail_merge(&[b"hello world\0", b"world\0", b"hello world\0"], 1);
        assert_eq!(data, b"hello world\0");
        assert_eq!(off, vec![0, 6, 0]);
    }

    #[test]
    fn alignment_blocks_sharing() {
        // "orld\0" starts at an odd offset inside "world\0": with 2-byte alignment it is copied.
        let (data, off) = tail_merge(&[b"world\0", b"orld\0"], 2);
        assert_eq!(off[0], 0);
        assert_eq!(off[1] % 2, 0);
        assert_eq!(&data[off[1] as usize..off[1] as usize + 5], b"orld\0");
        let (_, off) = tail_merge(&[b"world\0", b"rld\0"], 2);
        assert_eq!(off, vec![0, 2]);
    }

    #[test]
    fn unrelated_strings_are_laid_out_by_reversed_order() {
        let (data, off) = tail_merge(&[b"ab", b"ba"], 1);
        // Reversed: "ba" < "ab"; descending puts "ab" (reversed "ba") first.
        assert_eq!(data, b"abba");
        assert_eq!(off, vec![0, 2]);
    }
}
