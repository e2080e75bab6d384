//! The names an archive member (or a `--start-lib` file) offers before it is extracted, kept
//! apart from `resolve.rs` (over its size limit) because lld's handling of them has a quirk of
//! its own: `SymbolTable::insert` files a `foo@@VER` definition under `foo` and renames the
//! symbol `foo@@VER` whether or not the member is ever extracted, so the VER travels with
//! each name (a weak reference that leaves the member lazy is then a versioned undefined
//! reference, which lld reports as `undefined symbol: foo@@VER`).

use object::elf;
use object::read::elf::Sym as _;

use super::state::{default_versioned, FileNames};
use crate::elf::symtab::{File, NameKey};
use crate::elf::types::LE;

/// Each global name file `file` defines, with the VER of a `foo@@VER` definition; `None` for a
/// file that offers no lazy names. `names`: the file's `FileNames` (the keys `load_obj` binds
/// an object's symbols under).
pub(super) fn offered_names(file: &File, names: &FileNames) -> Option<Vec<(NameKey, Option<&'static [u8]>)>> {
    let mut out = Vec::new();
    match file {
        File::Obj(o) => {
            // `foo@@VER` is filed as `foo` (its key, as `load_obj` binds it): a reference to
            // `foo` extracts the member (`version-exclude-libs.s`).
            let mut default_versions = names.default_versions.iter().peekable();
            for i in o.first_global..o.symbols.len() {
                let s = &o.symbols[i];
                let ver = default_versions.next_if(|&&(j, _)| j as usize == i).map(|&(_, v)| v);
                if s.st_shndx(LE) != elf::SHN_UNDEF && s.st_bind() != elf::STB_LOCAL {
                    out.push((names.keys[i - o.first_global], ver));
                }
            }
        }
        File::Bitcode(b) => {
            for k in 0..b.syms.len() {
                let s = b.sym(k);
                if !s.undefined() {
                    let (name, ver) = default_versioned(s.name);
                    out.push((NameKey::new(name), ver));
                }
            }
        }
        File::GccIr(g) => out.extend(g.defined_names().map(|n| (NameKey::new(n), None))),
        _ => return None,
    }
    Some(out)
}
