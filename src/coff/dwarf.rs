//! MinGW objects' DWARF for diagnostics: with `-lldmingw` lld takes source positions from DWARF
//! (`getFileLineDwarf`) where an MSVC link reads CodeView (`cvlines.rs`). GCC and clang for
//! `*-windows-gnu` emit DWARF in COFF sections named `.debug_info`, `.debug_line`, ...; this file
//! applies their COFF relocations (implicit addends) and hands them to the format-neutral reader
//! (`crate::dwarf`). A 64-bit address into a code or data section keeps that section's number.

use object::pe;
use object::LittleEndian as LE;

use super::object::ObjFile;
pub use crate::dwarf::Dwarf;

/// Reads `obj`'s DWARF (empty without `.debug_info`).
pub fn read(obj: &ObjFile) -> Dwarf {
    if !obj.sections.iter().any(|s| s.name == ".debug_info") {
        return Dwarf::default();
    }
    Dwarf::from_sections(|name| relocated(obj, name))
}

/// A copy of debug section `name` with its relocations applied: SECREL (offsets into other
/// debug sections) and 32-bit addresses to the symbol's section offset, 64-bit addresses
/// into non-debug sections tagged with the section number (1-based, as `file_line` asks).
fn relocated(obj: &ObjFile, name: &str) -> Option<Vec<u8>> {
    let sec = obj.sections.iter().find(|s| s.name == name)?;
    let mut data = sec.data.to_vec();
    for rel in sec.relocs {
        let size = match rel.typ.get(LE) {
            pe::IMAGE_REL_AMD64_ADDR64 => 8,
            pe::IMAGE_REL_AMD64_ADDR32 | pe::IMAGE_REL_AMD64_SECREL => 4,
            _ => continue,
        };
        let off = rel.virtual_address.get(LE) as usize;
        let Some(field) = data.get_mut(off..off + size) else { continue };
        let Some(sym) = obj.symbols.get(rel.symbol_table_index.get(LE) as usize) else { continue };
        let mut addend = [0u8; 8];
        addend[..size].copy_from_slice(field);
        let mut v = u64::from_le_bytes(addend).wrapping_add(u64::from(sym.value));
        if size == 8 && sym.section > 0 {
            let target = obj.sections.get(sym.section as usize - 1);
            if target.is_some_and(|t| !t.name.starts_with(".debug")) {
                v = crate::dwarf::tag(v, sym.section as u32);
            }
        }
        field.copy_from_slice(&v.to_le_bytes()[..size]);
    }
    Some(data)
}
