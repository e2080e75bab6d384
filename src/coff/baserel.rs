//! Base relocations (`.reloc`) for PE images.
//!
//! A PE image that can be loaded at an address other than its preferred
//! `ImageBase` (every DLL, and every EXE with `/dynamicbase`) carries a list of
//! the places the loader must patch. The list is stored in the `.reloc`
//! section as a sequence of `IMAGE_BASE_RELOCATION` blocks, one per 4 KiB
//! page: an 8-byte header (page RVA, block size including the header)
//! followed by 16-bit entries `(type << 12) | (rva - page)`. Each block is
//! padded to a multiple of 4 bytes with an `IMAGE_REL_BASED_ABSOLUTE` (zero)
//! entry, which the loader skips.
//!
//! This module turns the flat list of `(rva, type)` pairs collected by the
//! writer into the section contents, byte for byte as lld lays them out
//! (`BaserelChunk` in lld/COFF/Chunks.cpp and `Writer::addBaserelBlocks`):
//! lld emits the entries of a page in chunk order, which for a normal layout
//! is ascending RVA order; we sort explicitly (by RVA, then type) and drop
//! exact duplicates so the output does not depend on the order in which the
//! core collected the relocations.
//!
//! Pure: no I/O, no global state, deterministic.

use object::pe::IMAGE_REL_BASED_ABSOLUTE;

/// Size of a base relocation page (the low 12 bits of an entry are the
/// offset inside the page).
const PAGE_SIZE: u32 = 4096;

/// Builds the contents of the `.reloc` section from `(rva, type)` pairs,
/// where `type` is one of the `object::pe::IMAGE_REL_BASED_*` constants
/// (`IMAGE_REL_BASED_DIR64` for 64-bit absolute addresses on x86-64).
///
/// The input may be in any order and may contain duplicates. The output has
/// one block per 4 KiB page that contains at least one relocation, blocks in
/// ascending page order, entries within a block in ascending `(rva, type)`
/// order, and each block padded to a multiple of 4 bytes with an
/// `IMAGE_REL_BASED_ABSOLUTE` entry. An empty input gives an empty vector.
///
/// Only the low 4 bits of `type` are representable; higher bits are masked
/// off (callers only ever pass `IMAGE_REL_BASED_*` values, all < 16).
pub fn build(entries: &[(u32, u16)]) -> Vec<u8> {
    let mut sorted: Vec<(u32, u16)> = entries.iter().map(|&(rva, ty)| (rva, ty & 0xf)).collect();
    sorted.sort_unstable();
    sorted.dedup();

    let mut out = Vec::with_capacity(sorted.len() * 2 + 8 * (sorted.len() / 16 + 1));
    let mut i = 0;
    while i < sorted.len() {
        let page = sorted[i].0 & !(PAGE_SIZE - 1);
        let mut j = i;
        while j < sorted.len() && sorted[j].0 & !(PAGE_SIZE - 1) == page {
            j += 1;
        }
        let count = j - i;
        // 8-byte header plus 2 bytes per entry, rounded up to 4 bytes
        // (lld: alignTo(n * 2 + 8, 4)).
        let block_size = (8 + count * 2 + 3) & !3;
        out.extend_from_slice(&page.to_le_bytes());
        out.extend_from_slice(&(block_size as u32).to_le_bytes());
        for &(rva, ty) in &sorted[i..j] {
            let entry = (ty << 12) | (rva - page) as u16;
            out.extend_from_slice(&entry.to_le_bytes());
        }
        if count % 2 == 1 {
            // Padding entry: type IMAGE_REL_BASED_ABSOLUTE, offset 0.
            out.extend_from_slice(&(IMAGE_REL_BASED_ABSOLUTE << 12).to_le_bytes());
        }
        i = j;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use object::pe::{IMAGE_REL_BASED_DIR64, IMAGE_REL_BASED_HIGHLOW};

    fn u32_at(b: &[u8], off: usize) -> u32 {
        u32::from_le_bytes(b[off..off + 4].try_into().unwrap())
    }

    #[test]
    fn empty() {
        assert!(build(&[]).is_empty());
    }

    /// The example from the comment in lld's Chunks.cpp: 0x00030, 0x00500,
    /// 0x00700, 0x00A00, 0x20004, 0x20008 (DIR64).
    #[test]
    fn lld_comment_example() {
        let d = IMAGE_REL_BASED_DIR64;
        let got = build(&[(0x20008, d), (0x30, d), (0x500, d), (0x20004, d), (0x700, d), (0xA00, d)]);
        let mut want = Vec::new();
        want.extend_from_slice(&0u32.to_le_bytes());
        want.extend_from_slice(&16u32.to_le_bytes());
        for e in [0xA030u16, 0xA500, 0xA700, 0xAA00] {
            want.extend_from_slice(&e.to_le_bytes());
        }
        want.extend_from_slice(&0x20000u32.to_le_bytes());
        want.extend_from_slice(&12u32.to_le_bytes());
        for e in [0xA004u16, 0xA008] {
            want.extend_from_slice(&e.to_le_bytes());
        }
        assert_eq!(got, want);
    }

    #[test]
    fn odd_count_is_padded_with_absolute() {
        let got = build(&[(0x1ffe, IMAGE_REL_BASED_DIR64)]);
        assert_eq!(got.len(), 12);
        assert_eq!(u32_at(&got, 0), 0x1000);
        assert_eq!(u32_at(&got, 4), 12);
        assert_eq!(&got[8..10], &0xAFFEu16.to_le_bytes());
        assert_eq!(&got[10..12], &[0, 0]);
    }

    #[test]
    fn duplicates_removed_and_types_kept_distinct() {
        let got =
            build(&[(0x3010, IMAGE_REL_BASED_DIR64), (0x3008, IMAGE_REL_BASED_HIGHLOW), (0x3010, IMAGE_REL_BASED_DIR64), (0x3008, IMAGE_REL_BASED_HIGHLOW)]);
        assert_eq!(u32_at(&got, 0), 0x3000);
        assert_eq!(u32_at(&got, 4), 12);
        assert_eq!(&got[8..10], &0x3008u16.to_le_bytes());
        assert_eq!(&got[10..12], &0xA010u16.to_le_bytes());
    }

    #[test]
    fn page_boundaries() {
        let d = IMAGE_REL_BASED_DIR64;
        let got = build(&[(0xfff, d), (0x1000, d), (0x2fff, d)]);
        // Three blocks of one entry each (12 bytes apiece).
        assert_eq!(got.len(), 36);
        assert_eq!(u32_at(&got, 0), 0x0000);
        assert_eq!(u32_at(&got, 12), 0x1000);
        assert_eq!(u32_at(&got, 24), 0x2000);
        assert_eq!(&got[8..10], &0xAFFFu16.to_le_bytes());
        assert_eq!(&got[20..22], &0xA000u16.to_le_bytes());
        assert_eq!(&got[32..34], &0xAFFFu16.to_le_bytes());
    }

    /// Links a small DLL with ld.lld-22 (clang-22, MinGW target), decodes
    /// lld's `.reloc`, feeds the entries back in shuffled order and checks
    /// that the rebuilt section is byte-identical. Needs clang-22 and
    /// ld.lld-22 on PATH (always installed in CI); fails loudly otherwise.
    #[test]
    fn matches_lld_reloc_section() {
        let dir = std::env::temp_dir().join(format!("dtld-baserel-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let src = dir.join("r.c");
        std::fs::write(
            &src,
            "int a, b, c; int *ptrs[] = {&a, &b, &c, &a, &b};\n\
             __declspec(dllexport) int *get(int i) { return ptrs[i]; }\n\
             const char *strs[] = {\"x\", \"y\", \"z\"};\n",
        )
        .unwrap();
        let dll = dir.join("r.dll");
        let st = std::process::Command::new("clang-22")
            .args(["--target=x86_64-w64-mingw32", "-shared", "-fuse-ld=lld", "-o"])
            .arg(&dll)
            .arg(&src)
            .status()
            .expect("clang-22 must be installed");
        assert!(st.success());
        let img = std::fs::read(&dll).unwrap();
        let _ = std::fs::remove_dir_all(&dir);

        let pe = u32_at(&img, 0x3c) as usize;
        let nsec = u16::from_le_bytes([img[pe + 6], img[pe + 7]]) as usize;
        let opt_size = u16::from_le_bytes([img[pe + 20], img[pe + 21]]) as usize;
        let opt = pe + 24;
        // PE32+: data directories start at offset 112; base relocation is #5.
        let reloc_rva = u32_at(&img, opt + 112 + 5 * 8);
        let reloc_size = u32_at(&img, opt + 112 + 5 * 8 + 4) as usize;
        let shdrs = opt + opt_size;
        let mut reloc = None;
        for i in 0..nsec {
            let sh = shdrs + i * 40;
            let va = u32_at(&img, sh + 12);
            let raw = u32_at(&img, sh + 20) as usize;
            if va == reloc_rva {
                reloc = Some(img[raw..raw + reloc_size].to_vec());
            }
        }
        let reloc = reloc.expect(".reloc section");
        let mut entries = Vec::new();
        let mut off = 0;
        while off < reloc.len() {
            let page = u32_at(&reloc, off);
            let size = u32_at(&reloc, off + 4) as usize;
            for k in (off + 8..off + size).step_by(2) {
                let e = u16::from_le_bytes([reloc[k], reloc[k + 1]]);
                if e >> 12 != IMAGE_REL_BASED_ABSOLUTE {
                    entries.push((page + u32::from(e & 0xfff), e >> 12));
                }
            }
            off += size;
        }
        assert!(entries.len() > 4, "expected some base relocations");
        // Reverse and duplicate to exercise sorting and deduplication.
        let mut shuffled: Vec<_> = entries.iter().rev().copied().collect();
        shuffled.extend(entries.iter().step_by(3).copied());
        assert_eq!(build(&shuffled), reloc);
    }
}
