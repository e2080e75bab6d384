//! ELF objects' debug sections relocated for `crate::dwarf` (lld's `DWARFCache` over an ELF
//! object): the reader itself is format-neutral, only the relocations are ELF's.

use object::elf;
use object::read::elf::{Rela as _, Sym as _};

pub use crate::dwarf::Dwarf;
use crate::elf::object::ObjFile;
use crate::elf::types::LE;

/// Reads `o`'s debug information; an object without (or with unreadable) DWARF gives an empty
/// one, as lld then falls back to the STT_FILE name.
pub fn read(o: &ObjFile) -> Dwarf {
    if !o.sections.iter().any(|s| s.name == b".debug_info") {
        return Dwarf::default();
    }
    Dwarf::from_sections(|name| relocated(o, name.as_bytes()))
}

/// A copy of debug section `name` of `o` with its relocations applied: absolute references to
/// other debug sections resolve to offsets, 64-bit references into allocated sections to the
/// offset tagged with the section's index (plus one, so that 0 means "absolute").
fn relocated(o: &ObjFile, name: &[u8]) -> Option<Vec<u8>> {
    let sec = o.sections.iter().find(|s| s.name == name)?;
    let mut data = sec.data.to_vec();
    for rel in sec.relocs {
        let r_type = rel.r_type(LE, false);
        let size = match r_type {
            elf::R_X86_64_64 => 8,
            elf::R_X86_64_32 | elf::R_X86_64_32S => 4,
            _ => continue,
        };
        let off = rel.r_offset(LE) as usize;
        let Some(field) = data.get_mut(off..off + size) else { continue };
        let si = rel.r_sym(LE, false) as usize;
        let Some(sym) = o.symbols.get(si) else { continue };
        let mut v = sym.st_value(LE).wrapping_add(rel.r_addend(LE) as u64);
        if let Some(shndx) = o.sym_section(si) {
            let alloc = o.sections.get(shndx as usize).is_some_and(|s| s.flags & u64::from(elf::SHF_ALLOC) != 0);
            if size == 8 && alloc {
                v = crate::dwarf::tag(v, shndx);
            }
        }
        field.copy_from_slice(&v.to_le_bytes()[..size]);
    }
    Some(data)
}
