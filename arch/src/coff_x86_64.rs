//! x86-64 COFF relocations (`IMAGE_REL_AMD64_*`): what each one means and how it is applied.
//!
//! The PE writer never names a relocation number: it asks `kind` what a raw type means and
//! `apply` to patch the field, the split `x86_64.rs` makes for ELF. COFF relocations are REL-style
//! (the addend is already in the section bytes), so applying one adds to the field in place, as
//! lld's `applyRelX64` does. The import thunk template (`jmp *__imp_f(%rip)`) lives here too.

/// What a COFF x86-64 relocation computes. `s` is the target's RVA, `p` the field's RVA.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CoffRelKind {
    /// `IMAGE_REL_AMD64_ABSOLUTE`: no-op.
    None,
    /// `ADDR64`: 64-bit VA (`s + image_base`); needs a DIR64 base relocation.
    Addr64,
    /// `ADDR32`: 32-bit VA.
    Addr32,
    /// `ADDR32NB`: 32-bit RVA (`s`).
    Addr32Nb,
    /// `REL32` .. `REL32_5`: `s - p - 4 - extra`.
    Rel32 { extra: u8 },
    /// `SECTION`: 16-bit index of the target's output section.
    Section,
    /// `SECREL`: 32-bit offset of the target from its output section's start.
    SecRel,
    /// `SECREL7`: 7-bit section-relative offset.
    SecRel7,
}

pub const IMAGE_REL_AMD64_ADDR64: u16 = 1;

/// The meaning of a raw `IMAGE_REL_AMD64_*` type, or `None` if dtld does not support it.
pub const fn kind(ty: u16) -> Option<CoffRelKind> {
    Some(match ty {
        0 => CoffRelKind::None,
        1 => CoffRelKind::Addr64,
        2 => CoffRelKind::Addr32,
        3 => CoffRelKind::Addr32Nb,
        4..=9 => CoffRelKind::Rel32 { extra: (ty - 4) as u8 },
        0xA => CoffRelKind::Section,
        0xB => CoffRelKind::SecRel,
        0xC => CoffRelKind::SecRel7,
        _ => return None,
    })
}

/// LLVM's name for a relocation type (for diagnostics).
pub fn name(ty: u16) -> &'static str {
    match ty {
        0 => "IMAGE_REL_AMD64_ABSOLUTE",
        1 => "IMAGE_REL_AMD64_ADDR64",
        2 => "IMAGE_REL_AMD64_ADDR32",
        3 => "IMAGE_REL_AMD64_ADDR32NB",
        4 => "IMAGE_REL_AMD64_REL32",
        5 => "IMAGE_REL_AMD64_REL32_1",
        6 => "IMAGE_REL_AMD64_REL32_2",
        7 => "IMAGE_REL_AMD64_REL32_3",
        8 => "IMAGE_REL_AMD64_REL32_4",
        9 => "IMAGE_REL_AMD64_REL32_5",
        0xA => "IMAGE_REL_AMD64_SECTION",
        0xB => "IMAGE_REL_AMD64_SECREL",
        0xC => "IMAGE_REL_AMD64_SECREL7",
        0xD => "IMAGE_REL_AMD64_TOKEN",
        0xE => "IMAGE_REL_AMD64_SREL32",
        0xF => "IMAGE_REL_AMD64_PAIR",
        0x10 => "IMAGE_REL_AMD64_SSPAN32",
        _ => "Unknown",
    }
}

/// Bytes the relocated field occupies.
pub const fn width(k: CoffRelKind) -> usize {
    match k {
        CoffRelKind::None => 0,
        CoffRelKind::Addr64 => 8,
        CoffRelKind::Section => 2,
        CoffRelKind::SecRel7 => 1,
        _ => 4,
    }
}

/// The base relocation (`IMAGE_REL_BASED_*`) a relocation of this kind needs when the image can
/// be rebased: absolute addresses, 64-bit and (truncated) 32-bit ones, as lld 22's
/// `getBaserelType`.
pub const fn baserel_type(k: CoffRelKind) -> Option<u16> {
    match k {
        CoffRelKind::Addr64 => Some(10), // IMAGE_REL_BASED_DIR64
        CoffRelKind::Addr32 => Some(3),  // IMAGE_REL_BASED_HIGHLOW
        _ => None,
    }
}

/// The width in bits of a runtime pseudo relocation for this kind (MinGW auto-import), or 0
/// when the kind cannot be fixed up at run time (lld's `getRuntimePseudoRelocSize`).
pub const fn pseudo_reloc_bits(k: CoffRelKind) -> u32 {
    match k {
        CoffRelKind::Addr64 => 64,
        // Not ADDR32NB: an RVA cannot be fixed up at run time (lld: "unable to automatically
        // import from ... with relocation type IMAGE_REL_AMD64_ADDR32NB").
        CoffRelKind::Addr32 | CoffRelKind::Rel32 { .. } => 32,
        _ => 0,
    }
}

/// The values a relocation may need besides the target RVA.
#[derive(Debug, Clone, Copy)]
pub struct Place {
    /// RVA of the relocated field.
    pub p: u64,
    pub image_base: u64,
    /// RVA of the target's output section (for SECREL), if it has one.
    pub section_rva: Option<u64>,
    /// 1-based index of the target's output section (for SECTION).
    pub section_index: u16,
}

/// Adds the relocation's value to `field` (which starts at the relocated offset and is at least
/// `width(k)` bytes). Returns false if the value does not fit in the field.
pub fn apply(k: CoffRelKind, field: &mut [u8], s: u64, pl: Place) -> bool {
    let add32 = |f: &mut [u8], v: u64| {
        let old = u32::from_le_bytes([f[0], f[1], f[2], f[3]]);
        f[..4].copy_from_slice(&old.wrapping_add(v as u32).to_le_bytes());
    };
    match k {
        CoffRelKind::None => {}
        CoffRelKind::Addr64 => {
            let old = u64::from_le_bytes(field[..8].try_into().unwrap());
            field[..8].copy_from_slice(&old.wrapping_add(s.wrapping_add(pl.image_base)).to_le_bytes());
        }
        CoffRelKind::Addr32 => add32(field, s.wrapping_add(pl.image_base)),
        CoffRelKind::Addr32Nb => add32(field, s),
        CoffRelKind::Rel32 { extra } => {
            let v = s.wrapping_sub(pl.p).wrapping_sub(4 + extra as u64) as i64;
            if v < i32::MIN as i64 || v > i32::MAX as i64 {
                return false;
            }
            add32(field, v as u64)
        }
        CoffRelKind::Section => {
            let old = u16::from_le_bytes([field[0], field[1]]);
            field[..2].copy_from_slice(&old.wrapping_add(pl.section_index).to_le_bytes());
        }
        CoffRelKind::SecRel => {
            let v = s.wrapping_sub(pl.section_rva.unwrap_or(0));
            add32(field, v)
        }
        CoffRelKind::SecRel7 => {
            let v = s.wrapping_sub(pl.section_rva.unwrap_or(0));
            field[0] = (field[0] & 0x80) | ((field[0] as u64).wrapping_add(v) as u8 & 0x7f);
        }
    }
    true
}

/// An import thunk: `jmp *disp32(%rip)`, the displacement pointing at the IAT slot. Patch it
/// with `import_thunk`.
pub const IMPORT_THUNK_SIZE: usize = 6;

/// The thunk at RVA `thunk` that jumps through the IAT slot at RVA `iat`.
pub fn import_thunk(thunk: u32, iat: u32) -> [u8; IMPORT_THUNK_SIZE] {
    let d = iat.wrapping_sub(thunk).wrapping_sub(IMPORT_THUNK_SIZE as u32).to_le_bytes();
    [0xff, 0x25, d[0], d[1], d[2], d[3]]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(p: u64) -> Place {
        Place { p, image_base: 0x1_4000_0000, section_rva: Some(0x1000), section_index: 3 }
    }

    #[test]
    fn kinds() {
        assert_eq!(kind(4), Some(CoffRelKind::Rel32 { extra: 0 }));
        assert_eq!(kind(9), Some(CoffRelKind::Rel32 { extra: 5 }));
        assert_eq!(kind(0x11), None);
        assert_eq!(baserel_type(CoffRelKind::Addr64), Some(10));
        assert_eq!(baserel_type(CoffRelKind::Addr32), Some(3));
        assert_eq!(baserel_type(CoffRelKind::Addr32Nb), None);
    }

    #[test]
    fn apply_rel32_and_addr64() {
        let mut f = [0u8; 4];
        assert!(apply(CoffRelKind::Rel32 { extra: 0 }, &mut f, 0x2000, place(0x1000)));
        assert_eq!(u32::from_le_bytes(f), 0x2000 - 0x1000 - 4);
        let mut g = 8u64.to_le_bytes();
        apply(CoffRelKind::Addr64, &mut g, 0x3000, place(0));
        assert_eq!(u64::from_le_bytes(g), 0x1_4000_3008);
        let mut h = [0u8; 4];
        apply(CoffRelKind::SecRel, &mut h, 0x1010, place(0));
        assert_eq!(u32::from_le_bytes(h), 0x10);
        let mut s = [0u8; 2];
        apply(CoffRelKind::Section, &mut s, 0, place(0));
        assert_eq!(u16::from_le_bytes(s), 3);
    }

    #[test]
    fn thunk() {
        assert_eq!(import_thunk(0x1000, 0x2000), [0xff, 0x25, 0xfa, 0x0f, 0, 0]);
    }
}
