//! The resolved symbol table: what resolution (`resolve.rs`) produces and every later ELF
//! stage reads. One `Symbol` per global name with its final definition (`Def`), the files
//! that joined the link (`File`), and for every object the mapping from its symbol-table
//! indices to the global symbols (`Resolved`).
//!
//! Why it is a module of its own: the stages after resolution (LTO, liveness, layout, the
//! writer, `-r`) need these types but not the resolver that fills them; kept here, below all of
//! them, they import the table without importing the stage that drives it.

use object::elf;
use object::read::elf::Sym as _;

use crate::elf::object::ObjFile;
use crate::elf::shared::SharedFile;
use crate::elf::types::LE;
use crate::input::InputFile;
use crate::util::fasthash::{FastMap, PassThrough};

pub use crate::elf::gcc_lto::symtab::GccIrFile;
pub use crate::lto::bitcode::BitcodeFile;

/// A symbol name and its hash. The hash is computed once per name occurrence, in parallel while
/// the files are parsed (`FileNames`), so the serial resolution pass (one file after another,
/// as lld's order requires) neither scans for the name's end nor hashes it: in a large debug
/// link (dtld-reapi's: 114,000 global names, most of them long Rust names) that pass was 15 %
/// of the wall time, on one core.
#[derive(Clone, Copy)]
pub struct NameKey {
    hash: u64,
    pub name: &'static [u8],
}

impl NameKey {
    pub fn new(name: &'static [u8]) -> NameKey {
        NameKey { hash: xxhash_rust::xxh3::xxh3_64(name), name }
    }
}

impl std::hash::Hash for NameKey {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        h.write_u64(self.hash);
    }
}

impl PartialEq for NameKey {
    fn eq(&self, o: &NameKey) -> bool {
        self.hash == o.hash && self.name == o.name
    }
}

impl Eq for NameKey {}

/// Global names to symbols, keyed by `NameKey` (its hash is the table's hash).
pub type NameMap = std::collections::HashMap<NameKey, SymbolId, std::hash::BuildHasherDefault<PassThrough>>;

pub type FileId = usize;
pub type SymbolId = usize;

pub enum File {
    Obj(ObjFile),
    Shared(SharedFile),
    /// LLVM bitcode: resolved like an object from its irsymtab; LTO turns it into objects.
    Bitcode(BitcodeFile),
    /// A GCC LTO object (`gcc -flto`): resolved from its IR symbol table; GCC's plugin turns it
    /// into objects (`elf::gcc_lto`).
    GccIr(GccIrFile),
    /// Inputs this stage does not link (bitcode before LTO support, unused members that failed to
    /// parse lazily, ...).
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Def {
    Undefined,
    /// Defined by a member not (yet) extracted.
    Lazy(FileId),
    /// Defined in an object: (file, symbol index).
    Defined(FileId, usize),
    /// A common symbol (file, symbol index); becomes .bss space.
    Common(FileId, usize),
    /// Defined by a shared library: (file, index into `SharedFile::syms`).
    Shared(FileId, usize),
    /// Defined by the linker (`__bss_start`, `_end`, `__start_foo`, ...): value set in layout.
    Synthetic,
    /// Defined in an IR file: (file, index into `BitcodeFile::syms` or `GccIrFile::syms`).
    /// Exists only until the LTO objects join the link.
    Bitcode(FileId, usize),
}

#[derive(Debug, Clone)]
pub struct Symbol {
    /// The name as referenced (may contain `@VER` for explicit version references).
    pub name: &'static [u8],
    pub def: Def,
    /// Binding of the chosen definition is weak (or all references were weak if undefined).
    pub weak: bool,
    /// Referenced by a non-weak undefined symbol in a loaded object.
    pub strong_ref: bool,
    /// Referenced by a loaded shared library (so an executable must export it).
    pub dso_ref: bool,
    /// A loaded shared library references it non-weakly: an archive member read later that
    /// defines it is extracted, as for an object's reference (`shlib-undefined-archive.s`).
    pub dso_strong_ref: bool,
    /// Defined in an archive `--exclude-libs` names: never exported, whatever its version.
    pub excluded_lib: bool,
    /// Referenced (weakly or not) by a loaded object file.
    pub obj_ref: bool,
    /// Most constraining visibility seen among object-file occurrences.
    pub visibility: u8,
    /// A shared library defines a symbol of this name (used for as-needed and exports).
    pub in_dso: bool,
    /// lld's `isUsedInRegularObj`: a native object, `-u`, the entry point, `--defsym` or
    /// `--wrap` names this symbol, so LTO must keep it visible.
    pub used_in_regular: bool,
    /// `strong_ref` / `obj_ref` counting native objects only (what remains after LTO replaces
    /// the bitcode files by the objects it generated).
    pub strong_ref_native: bool,
    pub obj_ref_native: bool,
    /// Not exported: `--exclude-libs`, or `local:` in a version script (lld's VER_NDX_LOCAL);
    /// the symbol is written as a local one.
    pub forced_local: bool,
    /// Symbol version of a definition: 0 local (not exported), 1 global (unversioned), 2.. the
    /// named versions of the version script (`Resolved::versions`, from index 2).
    pub version: u16,
    /// A non-default version (`foo@VER`): hidden from unversioned lookups (versym bit 15).
    pub version_hidden: bool,
    /// `foo@@VER` in an object: the default version this definition carries.
    pub default_version: Option<&'static [u8]>,
    /// Named by `--export-dynamic-symbol=` or a `--dynamic-list`: exported from an executable,
    /// and preemptible in a library even with -Bsymbolic.
    pub dynamic_listed: bool,
    /// Defined by `--defsym`, or named by `--wrap` (LTO's `LinkerRedefined`: no inlining or
    /// other interprocedural optimization across it, its value is not final).
    pub script_defined: bool,
    /// `st_type` of the first undefined reference, from an object or a shared library (what an
    /// undefined symbol keeps in the output's symbol tables, as lld); `None` before one.
    pub ref_type: Option<u8>,
}

impl Symbol {
    /// The name in a message as lld's `toString(Symbol)` writes it: demangled, with the `@@VER`
    /// of a definition an object named `foo@@VER` (lld keeps that suffix after the name).
    pub fn shown_name(&self) -> String {
        let name = crate::elf::diag::demangle(self.name);
        match self.default_version {
            Some(v) => format!("{name}@@{}", String::from_utf8_lossy(v)),
            None => name,
        }
    }
}

pub struct Resolved {
    pub files: Vec<File>,
    /// Whether each file joined the link.
    pub loaded: Vec<bool>,
    pub symbols: Vec<Symbol>,
    pub by_name: NameMap,
    /// For each object file: global symbol index (from `first_global`) → SymbolId.
    pub sym_ids: Vec<Vec<SymbolId>>,
    /// For each object file: sections discarded because another file's COMDAT group won.
    pub discarded: Vec<Vec<bool>>,
    /// Shared libraries referenced by a non-weak reference (for --as-needed).
    pub dso_needed: Vec<bool>,
    /// For each file: a shared library under `--as-needed`. A library named again without it
    /// (same soname) is needed whatever its first mention said, as in lld.
    pub dso_as_needed: Vec<bool>,
    /// Every file of the link, in file-id order (inputs, then LTO-generated objects).
    pub inputs: Vec<&'static InputFile>,
    /// Files in the order they joined the link (archive members when extracted): lld's order
    /// of LTO modules, hence of ThinLTO tasks.
    pub load_order: Vec<FileId>,
    /// With --trace, what lld prints: `load_order` plus every later mention of a shared library
    /// already in the link (lld prints a file before it drops a second copy of a soname).
    pub trace_order: Vec<FileId>,
    /// The version script's named versions, in verdef order (verdef index = position + 2).
    pub versions: Vec<String>,
    /// Common symbols that several objects declare: the largest alignment of them all (lld
    /// keeps it whichever declaration wins on size).
    pub common_align: crate::util::fasthash::FastMap<SymbolId, u64>,
    /// `--wrap=foo`: `foo` → `__wrap_foo`, for the references of the object that defines `foo`
    /// (`reloc_target`); empty without `--wrap`.
    pub wrap_redirect: crate::util::fasthash::FastMap<SymbolId, SymbolId>,
    /// COMDAT group signature → the file whose group was kept (for lld's message about a
    /// reference into a discarded group).
    pub comdat_winners: FastMap<&'static [u8], FileId>,
    /// The first file LTO generated, if it ran: lld reads those objects ignoring COMDATs
    /// (each keeps its groups, even with a signature seen before).
    pub lto_first_file: Option<FileId>,
    /// With bitcode and a version script: what the script's checks found before LTO (lld's
    /// order), reported by `apply_versions` instead of checking the final symbols.
    pub version_errors_before_lto: Option<Vec<String>>,
}

impl Resolved {
    pub fn obj(&self, f: FileId) -> &ObjFile {
        match &self.files[f] {
            File::Obj(o) => o,
            _ => unreachable!("file {f} is not an object"),
        }
    }
    pub fn dso(&self, f: FileId) -> &SharedFile {
        match &self.files[f] {
            File::Shared(s) => s,
            _ => unreachable!("file {f} is not a shared library"),
        }
    }
    pub fn bitcode(&self, f: FileId) -> Option<&BitcodeFile> {
        match &self.files[f] {
            File::Bitcode(b) => Some(b),
            _ => None,
        }
    }
    /// Whether any bitcode file joined the link (so LTO must run).
    pub fn has_bitcode(&self) -> bool {
        self.files.iter().zip(&self.loaded).any(|(f, &l)| l && matches!(f, File::Bitcode(_)))
    }
    /// Whether any GCC LTO object joined the link (so GCC's plugin must run).
    pub fn has_gcc_ir(&self) -> bool {
        self.files.iter().zip(&self.loaded).any(|(f, &l)| l && matches!(f, File::GccIr(_)))
    }
    pub fn lookup(&self, name: &[u8]) -> Option<SymbolId> {
        // SAFETY: the key lives only for this lookup; the table never keeps it.
        let name: &'static [u8] = unsafe { std::mem::transmute::<&[u8], &'static [u8]>(name) };
        self.by_name.get(&NameKey::new(name)).copied()
    }
    /// The object files that joined the link, in the order they did (lld's `objectFiles`:
    /// command-line objects and archive members as they were extracted, then LTO's output).
    /// Output sections list input sections in this order.
    pub fn objects_in_load_order(&self) -> impl Iterator<Item = (FileId, &ObjFile)> + '_ {
        self.load_order.iter().filter_map(|&f| match &self.files[f] {
            File::Obj(o) => Some((f, o)),
            _ => None,
        })
    }
    /// A common symbol's alignment: the largest any object gave it (lld); 1 for other symbols.
    pub fn common_alignment(&self, id: SymbolId) -> u64 {
        match self.symbols[id].def {
            Def::Common(f, i) => self.common_align.get(&id).copied().unwrap_or(0).max(self.obj(f).symbols[i].st_value(LE)).max(1),
            _ => 1,
        }
    }
    /// The global symbol an object's symbol index refers to, if it is global.
    pub fn global_of(&self, f: FileId, i: usize) -> Option<SymbolId> {
        let o = self.obj(f);
        if i >= o.first_global {
            Some(self.sym_ids[f][i - o.first_global])
        } else {
            None
        }
    }

    /// The symbol a name in a `--defsym` or linker-script expression means: under
    /// `--wrap=foo`, `foo` is `__wrap_foo` (lld's `SymbolTable::wrap` renames its map, and
    /// expressions are evaluated after it).
    pub fn lookup_expr(&self, name: &[u8]) -> Option<SymbolId> {
        let id = self.lookup(name)?;
        Some(self.wrap_redirect.get(&id).copied().unwrap_or(id))
    }

    /// The global symbol a relocation against an object's symbol index `i` reaches, if it is
    /// global: `global_of`, except that under `--wrap=foo` the object defining `foo` reaches
    /// `__wrap_foo` too. lld rewrites every file's pointer to `foo` (`redirectSymbols`); the
    /// other objects' undefined `foo` already binds to `__wrap_foo` by name.
    pub fn reloc_target(&self, f: FileId, i: usize) -> Option<SymbolId> {
        let id = self.global_of(f, i)?;
        if self.wrap_redirect.is_empty() {
            return Some(id);
        }
        match self.wrap_redirect.get(&id) {
            Some(&w) if self.obj(f).symbols[i].st_shndx(LE) != elf::SHN_UNDEF => Some(w),
            _ => Some(id),
        }
    }
}

impl File {
    pub fn name(&self) -> &str {
        match self {
            File::Obj(o) => &o.input.name,
            File::Shared(s) => &s.input.name,
            File::Bitcode(b) => &b.input.name,
            File::GccIr(g) => &g.input.name,
            File::None => "",
        }
    }
}
