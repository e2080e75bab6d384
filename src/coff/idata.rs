//! Import tables for short-format imports (what lld-link and llvm-dlltool import libraries hold).
//!
//! dlltool-style import libraries need no help: their members carry `.idata$2/4/5/6/7` sections
//! that ordinary linking lays out (layout sorts them by library and member). Short imports
//! (`IMPORT_OBJECT_HEADER` members) only name a DLL and a symbol, so the linker builds the
//! tables itself, as lld's `IdataContents` does: per DLL (in the order the DLLs were first
//! loaded) an import directory entry, an import lookup table and an import address table
//! (8-byte entries, sorted by symbol name, each zero-terminated), hint/name entries and the DLL
//! name; one null directory entry ends the list. This module decides the pieces and their
//! order; `layout.rs` places them and `write.rs` fills them.

use super::implib::ShortImport;
use super::symtab::{FileId, Kind, Resolved};

/// One DLL's imports, sorted by name.
pub struct DllImports {
    pub dll: String,
    /// Import files (short import members) in IAT order.
    pub entries: Vec<FileId>,
}

/// Groups the loaded short imports by DLL (lld's `binImports`).
pub fn group(r: &Resolved) -> Vec<DllImports> {
    let mut groups: Vec<DllImports> = Vec::new();
    for &f in &r.imports {
        let Kind::Import(imp) = &r.files[f].kind else { continue };
        let key = imp.dll.to_ascii_lowercase();
        match groups.iter_mut().find(|g| g.dll.to_ascii_lowercase() == key) {
            Some(g) => g.entries.push(f),
            None => groups.push(DllImports { dll: imp.dll.clone(), entries: vec![f] }),
        }
    }
    for g in &mut groups {
        g.entries.sort_by(|&a, &b| import(r, a).symbol.as_bytes().cmp(import(r, b).symbol.as_bytes()));
    }
    groups
}

pub fn import(r: &Resolved, f: FileId) -> &ShortImport {
    match &r.files[f].kind {
        Kind::Import(i) => i,
        _ => unreachable!("not an import"),
    }
}

/// A hint/name entry: 2-byte hint, the name, NUL, padded to 2 bytes.
pub fn hint_name(imp: &ShortImport) -> Option<Vec<u8>> {
    let name = imp.import_name.as_ref()?;
    let mut v = imp.hint.to_le_bytes().to_vec();
    v.extend_from_slice(name.as_bytes());
    v.push(0);
    if v.len() % 2 == 1 {
        v.push(0);
    }
    Some(v)
}

/// The 8-byte lookup/address entry: the hint/name RVA, or the ordinal with the top bit set.
pub fn lookup_entry(imp: &ShortImport, hint_rva: u32) -> u64 {
    match imp.import_name {
        Some(_) => hint_rva as u64,
        None => (1u64 << 63) | imp.ordinal.unwrap_or(imp.hint) as u64,
    }
}

/// An `IMAGE_IMPORT_DESCRIPTOR`.
pub fn directory(lookup_rva: u32, name_rva: u32, iat_rva: u32) -> [u8; 20] {
    let mut d = [0u8; 20];
    d[0..4].copy_from_slice(&lookup_rva.to_le_bytes());
    d[12..16].copy_from_slice(&name_rva.to_le_bytes());
    d[16..20].copy_from_slice(&iat_rva.to_le_bytes());
    d
}
