//! The resolver's state, shared by the parts of resolution: the `Resolver` being filled, the
//! per-file names computed in parallel (`FileNames`), the pending steps of the files being
//! resolved (`Frame`, `Step`), and the name rules of `--wrap` and default versions.
//!
//! Why it is a module of its own: `resolve.rs` and its parts (`bind.rs`, `lazy.rs`, `wrap.rs`,
//! `versions.rs`) all work on this state; kept here, below all of them, the parts do not import
//! the module that drives them.

use object::elf;
use object::read::elf::Sym as _;

use crate::elf::config::Config;
use crate::elf::object::SecKind;
use crate::elf::symtab::{File, FileId, NameKey, Resolved, SymbolId};
use crate::elf::types::LE;
use crate::util::fasthash::FastMap;

/// `FileNames::sections` of a symbol in no section (undefined, absolute, common).
pub(super) const NO_SECTION: u32 = u32::MAX;
/// `FileNames::sections` of a symbol defined in an SHT_GROUP section.
pub(super) const IN_GROUP_SECTION: u32 = u32::MAX - 1;

/// What the serial pass needs of one file's global names, computed in parallel with its parse.
#[derive(Default)]
pub(super) struct FileNames {
    /// An object: one key per global symbol (from `first_global`), the name it binds under
    /// (`foo` for a `foo@@VER` definition, `__wrap_foo` for an undefined `foo` under
    /// `--wrap=foo`). A shared library: one per dynamic symbol, its plain name.
    pub(super) keys: Vec<NameKey>,
    /// An object: (symbol index, VER) of each `foo@@VER` definition, by index.
    pub(super) default_versions: Vec<(u32, &'static [u8])>,
    /// An object: each global symbol's section (`NO_SECTION`, or `IN_GROUP_SECTION` for one
    /// defined in an SHT_GROUP section itself, which never holds a definition).
    pub(super) sections: Vec<u32>,
    /// A shared library: `name@VER` of each versioned definition.
    pub(super) versioned: Vec<Option<NameKey>>,
}

impl FileNames {
    pub(super) fn of(file: &File, wrap: &[String]) -> FileNames {
        let mut out = FileNames::default();
        match file {
            File::Obj(o) => {
                out.keys.reserve_exact(o.symbols.len().saturating_sub(o.first_global));
                out.sections = (o.first_global..o.symbols.len())
                    .map(|i| match o.sym_section(i) {
                        Some(sh) if o.sections.get(sh as usize).is_some_and(|s| s.kind == SecKind::Ignored && s.sh_type == elf::SHT_GROUP) => IN_GROUP_SECTION,
                        Some(sh) => sh,
                        None => NO_SECTION,
                    })
                    .collect();
                for i in o.first_global..o.symbols.len() {
                    let name = o.sym_name(i);
                    let undefined = o.symbols[i].st_shndx(LE) == elf::SHN_UNDEF;
                    // `foo@@VER` defines `foo` (its default version): unversioned references
                    // bind to it.
                    let name = match (undefined, crate::elf::version_script::split_versioned(name)) {
                        (false, Some((base, ver, true))) if !ver.is_empty() => {
                            out.default_versions.push((i as u32, ver));
                            base
                        }
                        (true, _) => wrapped_name(wrap, name),
                        _ => name,
                    };
                    out.keys.push(NameKey::new(name));
                }
            }
            File::Shared(s) => {
                // A versioned reference is named `name@version` (lld's SharedFile::parse).
                out.keys = s
                    .syms
                    .iter()
                    .map(|d| match d.version.filter(|_| !d.defined) {
                        Some(v) => NameKey::new(crate::util::keep::slice([d.name, b"@", v].concat())),
                        None => NameKey::new(d.name),
                    })
                    .collect();
                out.versioned = s
                    .syms
                    .iter()
                    .map(|d| {
                        let v = d.version.filter(|_| d.defined)?;
                        let mut full = d.name.to_vec();
                        full.push(b'@');
                        full.extend_from_slice(v);
                        Some(NameKey::new(crate::util::keep::slice(full)))
                    })
                    .collect();
            }
            _ => {}
        }
        out
    }
}

/// A bitcode definition `foo@@VER` (`.symver` in module asm) binds as `foo`, as an object's
/// does and as lld files every `@@` name (its lazy archive symbols too): the name it binds
/// under and VER.
pub(super) fn default_versioned(name: &'static [u8]) -> (&'static [u8], Option<&'static [u8]>) {
    match crate::elf::version_script::split_versioned(name) {
        Some((base, ver, true)) if !ver.is_empty() => (base, Some(ver)),
        _ => (name, None),
    }
}

pub struct Resolver<'c> {
    pub(super) config: &'c Config,
    pub(super) r: Resolved,
    pub(super) comdats: FastMap<&'static [u8], FileId>,
    /// Files whose undefined references are being resolved, innermost last (see `load`).
    pub(super) frames: Vec<Frame>,
    /// `--warn-backrefs`: (symbol, referring file, extracted member), first reference only.
    pub(super) backrefs: Vec<(SymbolId, FileId, FileId)>,
    pub(super) errors: Vec<String>,
    /// Files from this id on were generated by LTO: their COMDAT groups are kept as they are
    /// (LTO already chose the prevailing copies), and bitcode can no longer be extracted.
    pub(super) lto_first_file: Option<FileId>,
    /// Sonames of the shared libraries loaded so far: a library named twice (`-lgcc_s ...
    /// -lgcc_s`) is linked once, as lld does.
    pub(super) sonames: std::collections::HashMap<String, FileId>,
    /// For each file: its global names, hashed (taken when an object loads).
    pub(super) names: Vec<FileNames>,
    /// The parts of pass 1 (parsing, binding), for `--time-trace`.
    pub laps: crate::trace::Laps,
    /// `--wrap=foo`: how the files referred to `foo` under the names they wrote (`foo`, bound as
    /// `__wrap_foo`, and `__real_foo`, bound as `foo`), keyed by `foo`'s id (`bind_wrapped`).
    pub(super) wrap_refs: FastMap<SymbolId, WrapRefs>,
    /// The `--wrap` names that take effect (`bind_wrapped`): lld ignores one no file names.
    /// The objects LTO generates are read with these.
    pub(super) wrap_active: Vec<String>,
}

/// One step of resolving a loaded file's references (see `Resolver::load`).
#[derive(Clone, Copy)]
pub(super) enum Step {
    /// An undefined symbol of an object or bitcode file.
    Undefined { id: SymbolId, weak: bool, native: bool },
    /// A shared library's non-weak undefined reference: it extracts a lazy definition.
    DsoRef(SymbolId),
    /// Under `--wrap=foo`, a reference written `foo` (`id` is `foo`'s; the reference itself is
    /// an `Undefined` step of `__wrap_foo`).
    Wrapped { id: SymbolId, weak: bool },
    /// Under `--wrap=foo`, a reference written `__real_foo` (`id` is `foo`'s).
    Real { id: SymbolId, weak: bool, native: bool },
}

pub(super) struct Frame {
    /// The file whose references these are.
    pub(super) file: FileId,
    pub(super) steps: Vec<Step>,
    pub(super) next: usize,
}

pub(super) fn leak_name(s: &str) -> &'static [u8] {
    crate::util::keep::slice(s.as_bytes().to_vec())
}

/// `--wrap=foo`: undefined references to `foo` bind to `__wrap_foo`, and references to
/// `__real_foo` bind to `foo` (GNU ld's rule: definitions keep their names).
pub(super) fn wrapped_name(wrap: &[String], name: &'static [u8]) -> &'static [u8] {
    if wrap.is_empty() {
        return name;
    }
    let s = match std::str::from_utf8(name) {
        Ok(s) => s,
        Err(_) => return name,
    };
    if wrap.iter().any(|w| w == s) {
        return leak_name(&format!("__wrap_{s}"));
    }
    if let Some(real) = s.strip_prefix("__real_") {
        if wrap.iter().any(|w| w == real) {
            return leak_name(real);
        }
    }
    name
}

/// The references to a `--wrap`ped name `foo`, by the names the files wrote (lld reads the files
/// with those names and redirects the references only afterwards, `addWrappedSymbols`).
#[derive(Clone, Copy, Default)]
pub(super) struct WrapRefs {
    /// `foo` was referenced (an object's reference binds to `__wrap_foo`; a library's weak
    /// reference to a lazy `foo` counts too: it makes the binding weak in lld).
    pub(super) renamed: bool,
    /// ... strongly: as in lld, that extracts the archive member defining `foo`.
    pub(super) renamed_strong: bool,
    /// `__real_foo` was referenced (each reference binds to `foo`).
    pub(super) real: bool,
    /// ... strongly.
    pub(super) real_strong: bool,
}
