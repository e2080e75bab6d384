//! GCC LTO objects: recognising them and reading their IR symbol table.
//!
//! `gcc -flto` writes an ELF relocatable whose code is GCC's IR in `.gnu.lto_*` sections
//! (SHF_EXCLUDE). A *slim* object (GCC's default) holds nothing else and marks itself with the
//! common symbol `__gnu_lto_slim`; a *fat* one (`-ffat-lto-objects`) also holds ordinary native
//! code, which a link without the plugin uses.
//!
//! The symbols the IR defines and references are listed in `.gnu.lto_.symtab.<id>` (one per IR
//! module: an object made by `ld -r` from several LTO objects has several). Each entry is
//! `name\0 comdat-key\0 kind:u8 visibility:u8 size:u64 slot:u32` (GCC's `lto-plugin.c`
//! `parse_table_entry`; the format has not changed since GCC 4.5). dtld reads this table itself,
//! as it reads LLVM's irsymtab, so that GCC IR symbols take part in resolution like any other —
//! archive members included, which are only *claimed* by the plugin once they join the link
//! (GCC 12's plugin has no way to un-claim a file: every claimed file goes to `lto-wrapper`).
//! The plugin host checks that the plugin's view of each file's symbols is this one.

use crate::elf::object::ObjFile;
use crate::error::{Error, Result};
use crate::input::InputFile;
use crate::lto::plugin_api::{LDPK_COMMON, LDPK_UNDEF, LDPK_WEAKDEF, LDPK_WEAKUNDEF};

/// One entry of the IR symbol table (after merging duplicates, as the plugin does).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GccSymbol {
    pub name: &'static [u8],
    /// The COMDAT group the definition belongs to (`None` when the key is empty).
    pub comdat: Option<&'static [u8]>,
    /// `LDPK_*`.
    pub kind: u8,
    /// `LDPV_*`.
    pub visibility: u8,
    /// Size of a common symbol (0 otherwise).
    pub size: u64,
}

impl GccSymbol {
    pub fn undefined(&self) -> bool {
        self.kind == LDPK_UNDEF || self.kind == LDPK_WEAKUNDEF
    }
    pub fn weak(&self) -> bool {
        self.kind == LDPK_WEAKDEF || self.kind == LDPK_WEAKUNDEF
    }
    pub fn common(&self) -> bool {
        self.kind == LDPK_COMMON
    }
}

/// An object file carrying GCC LTO IR.
pub struct GccIrFile {
    pub input: &'static InputFile,
    pub syms: Vec<GccSymbol>,
}

/// How strongly a kind binds, by the plugin's `symbol_strength`: of two entries with one name in
/// one file, the linker is shown the strongest.
fn strength(kind: u8) -> u8 {
    match kind {
        LDPK_UNDEF | LDPK_WEAKUNDEF => 0,
        LDPK_WEAKDEF => 1,
        _ => 2,
    }
}

fn c_string(data: &'static [u8], at: &mut usize) -> Option<&'static [u8]> {
    let rest = data.get(*at..)?;
    let n = rest.iter().position(|&b| b == 0)?;
    *at += n + 1;
    Some(&rest[..n])
}

/// Parses one `.gnu.lto_.symtab` section, appending to `out`.
fn parse_table(data: &'static [u8], out: &mut Vec<GccSymbol>) -> std::result::Result<(), String> {
    let mut at = 0;
    while at < data.len() {
        let start = at;
        let bad = |what: &str| format!("entry at offset {start:#x}: {what}");
        let name = c_string(data, &mut at).ok_or_else(|| bad("unterminated name"))?;
        let comdat = c_string(data, &mut at).ok_or_else(|| bad("unterminated comdat key"))?;
        let fixed = data.get(at..at + 14).ok_or_else(|| bad("truncated"))?;
        at += 14;
        let kind = fixed[0];
        let visibility = fixed[1];
        if kind > LDPK_COMMON {
            return Err(bad(&format!("invalid symbol kind {kind}")));
        }
        if visibility > 3 {
            return Err(bad(&format!("invalid symbol visibility {visibility}")));
        }
        let size = u64::from_le_bytes(fixed[2..10].try_into().expect("8 bytes"));
        out.push(GccSymbol { name, comdat: (!comdat.is_empty()).then_some(comdat), kind, visibility, size });
    }
    Ok(())
}

/// Keeps one entry per name, the strongest (first among equals), in first-seen order: the
/// symbols the plugin gives the linker (`resolve_conflicts`; the others get their resolution
/// from the kept one inside the plugin).
fn merge_duplicates(syms: Vec<GccSymbol>) -> Vec<GccSymbol> {
    let mut index: std::collections::HashMap<&'static [u8], usize> = std::collections::HashMap::with_capacity(syms.len());
    let mut out: Vec<GccSymbol> = Vec::with_capacity(syms.len());
    for s in syms {
        match index.get(s.name) {
            Some(&i) => {
                if strength(out[i].kind) < strength(s.kind) {
                    out[i] = s;
                }
            }
            None => {
                index.insert(s.name, out.len());
                out.push(s);
            }
        }
    }
    out
}

/// `.gnu.lto_.symtab.<id>` (GCC 10 and later) or `.gnu.lto_.symtab` (before); not
/// `.gnu.lto_.ext_symtab`, which only adds symbol types.
fn is_table(name: &[u8]) -> bool {
    name == b".gnu.lto_.symtab" || name.starts_with(b".gnu.lto_.symtab.")
}

impl GccIrFile {
    /// Whether the object carries GCC LTO IR (an IR symbol table).
    pub fn has_ir(obj: &ObjFile) -> bool {
        obj.sections.iter().any(|s| is_table(s.name))
    }

    /// Whether it carries nothing else (`__gnu_lto_slim`, which GCC defines in slim objects).
    pub fn is_slim(obj: &ObjFile) -> bool {
        (obj.first_global..obj.symbols.len()).any(|i| obj.sym_name(i) == b"__gnu_lto_slim")
    }

    /// Reads the IR symbol tables of an object that has some (`has_ir`); an error names the
    /// object when one is malformed.
    pub fn from_object(obj: &ObjFile) -> Result<GccIrFile> {
        let mut syms = Vec::new();
        for s in obj.sections.iter().filter(|s| is_table(s.name)) {
            parse_table(s.data, &mut syms)
                .map_err(|e| Error::new(format!("{}: corrupt GCC LTO symbol table {}: {e}", obj.input.name, String::from_utf8_lossy(s.name))))?;
        }
        Ok(GccIrFile { input: obj.input, syms: merge_duplicates(syms) })
    }

    /// The symbols this file defines (what makes a lazy archive member join the link).
    pub fn defined_names(&self) -> impl Iterator<Item = &'static [u8]> + '_ {
        self.syms.iter().filter(|s| !s.undefined()).map(|s| s.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lto::plugin_api::LDPK_DEF;

    fn entry(name: &str, comdat: &str, kind: u8, vis: u8, size: u64) -> Vec<u8> {
        let mut v = name.as_bytes().to_vec();
        v.push(0);
        v.extend_from_slice(comdat.as_bytes());
        v.push(0);
        v.push(kind);
        v.push(vis);
        v.extend_from_slice(&size.to_le_bytes());
        v.extend_from_slice(&7u32.to_le_bytes());
        v
    }

    #[test]
    fn table() {
        let mut d = entry("foo", "", LDPK_DEF, 0, 0);
        d.extend(entry("_Z1fv", "_Z1fv", LDPK_WEAKDEF, 3, 0));
        d.extend(entry("c", "", LDPK_COMMON, 0, 16));
        d.extend(entry("ext", "", LDPK_UNDEF, 0, 0));
        let data: &'static [u8] = crate::util::keep::slice(d);
        let mut out = Vec::new();
        parse_table(data, &mut out).unwrap();
        assert_eq!(out.len(), 4);
        assert_eq!(out[1], GccSymbol { name: b"_Z1fv", comdat: Some(b"_Z1fv"), kind: LDPK_WEAKDEF, visibility: 3, size: 0 });
        assert!(out[2].common() && out[2].size == 16);
        assert!(out[3].undefined() && !out[3].weak());
        assert!(out[1].weak() && !out[1].undefined());
    }

    #[test]
    fn malformed() {
        let mut out = Vec::new();
        assert!(parse_table(b"foo\0\0\x00", &mut out).unwrap_err().contains("truncated"));
        assert!(parse_table(b"foo", &mut out).unwrap_err().contains("unterminated name"));
        let bad: &'static [u8] = crate::util::keep::slice(entry("x", "", 9, 0, 0));
        assert!(parse_table(bad, &mut out).unwrap_err().contains("invalid symbol kind 9"));
    }

    #[test]
    fn duplicates_keep_the_strongest() {
        let s = |name: &'static [u8], kind| GccSymbol { name, comdat: None, kind, visibility: 0, size: 0 };
        let merged = merge_duplicates(vec![s(b"a", LDPK_UNDEF), s(b"b", LDPK_DEF), s(b"a", LDPK_WEAKDEF), s(b"a", LDPK_UNDEF), s(b"b", LDPK_WEAKDEF)]);
        assert_eq!(merged, vec![s(b"a", LDPK_WEAKDEF), s(b"b", LDPK_DEF)]);
    }
}
