//! The COFF link's resolved symbol table, which every stage after resolution reads: the files
//! that joined the link (`InFile`, with what each section became: `ChunkSrc`), the global
//! symbols and what each is bound to (`Symbol`, `Def`, `Synth`), and `Resolved`, the whole of it.
//! Below the resolver that fills it (`resolve/`) and the stages that read it (GC, ICF, layout,
//! PDB, the writer), so that none of them imports the resolver (as `elf/symtab.rs` for ELF).

use std::collections::{HashMap, HashSet};

use super::config::ExportSpec;
use super::implib::ShortImport;
use super::object::ObjFile;

pub type FileId = usize;
pub type SymId = usize;

/// What a COFF symbol-table entry of a loaded object binds to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SymRef {
    /// An aux entry, a discarded section's local, or a debug symbol.
    None,
    Global(SymId),
    /// A static symbol: section number (1-based) and offset.
    Local {
        sec: u32,
        value: u32,
    },
    Absolute(u32),
}

/// Symbols the linker defines itself; their addresses come from the layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Synth {
    /// `__ImageBase`: RVA 0.
    ImageBase,
    CtorList,
    DtorList,
    PseudoRelocList,
    PseudoRelocListEnd,
    /// MinGW's `__data_start__`, `__data_end__`, `__bss_start__`, `__bss_end__` (GNU ld's
    /// script defines them; lld 22 too, for Cygwin's fork emulation).
    DataStart,
    DataEnd,
    BssStart,
    BssEnd,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Def {
    Undefined,
    /// An archive member (archive index, member header offset) defines it.
    Lazy(usize, usize),
    /// Defined in an object: (file, symbol index).
    Regular(FileId, u32),
    Common(FileId, u32, u32),
    Absolute(u64),
    Synthetic(Synth),
    /// `__imp_f` of a short import: the IAT slot.
    ImportData(FileId),
    /// `f` of a short import of code: the `jmp *__imp_f` thunk.
    ImportThunk(FileId),
    /// `__imp_f` for a locally defined `f`: a pointer in `.rdata`.
    LocalImport(SymId),
    /// Defined in a bitcode file (file, irsymtab index); replaced after LTO.
    Bitcode(FileId, usize),
}

#[derive(Debug, Clone)]
pub struct Symbol {
    pub name: &'static str,
    pub def: Def,
    /// Set while undefined: the weak external's default (or `/alternatename:`).
    pub weak_alias: Option<SymId>,
    pub pending_load: bool,
    /// MinGW auto-import: references become runtime pseudo relocations.
    pub pseudo_reloc: bool,
    /// Definition is COMDAT (duplicates allowed).
    pub comdat: bool,
    /// Native code, the command line (entry, `/include:`, exports) or auto-export can see it:
    /// LTO must keep it (lld's `isUsedInRegularObj`, the `x` resolution bit).
    pub used_in_regular: bool,
    /// A weak bitcode definition (weak/linkonce linkage): a later strong one replaces it.
    pub weak_def: bool,
    /// A bitcode common symbol (`-fcommon`): its size (lld's `DefinedCommon` without a chunk);
    /// 0 for anything else.
    pub bitcode_common: u32,
    /// Not reported as unresolvable before LTO (lld's `deferUndefined`: weak bitcode
    /// references, `--wrap` symbols).
    pub deferred: bool,
}

pub enum Kind {
    /// Shared so that resolution can read an object while it adds more files (`add_object`).
    Obj(std::sync::Arc<ObjFile>),
    Import(ShortImport),
    Bitcode(crate::lto::bitcode::BitcodeFile),
}

pub struct InFile {
    /// lld's name for diagnostics: the path, or `lib.a(member.o)`.
    pub name: String,
    /// The archive path as given ("" for a plain file).
    pub parent: String,
    /// The member name or the path (lld's `getName()`), for sorting `.idata$*`.
    pub obj_name: String,
    pub kind: Kind,
    /// Obj: what each symbol-table index binds to.
    pub syms: Vec<SymRef>,
    /// Obj: whether each section (0-based) is part of the output.
    pub live: Vec<bool>,
    /// Obj: symbol indices of common symbols, in order (each gets a `.bss` chunk).
    pub commons: Vec<u32>,
    /// Obj: lld's chunk order: non-COMDAT sections, then COMDAT sections and commons in the
    /// order their symbols were read, then associative sections.
    pub chunks: Vec<ChunkSrc>,
    /// Obj: per section (0-based), the symbol index of its COMDAT leader (lld's
    /// `SectionChunk::sym`: names it in ICF's and `/verbose`'s messages).
    pub leaders: HashMap<u32, u32>,
    /// Obj: the live `.gfids$y`-like sections (0-based) in lld's chunk order; they list symbol
    /// indices for `/guard:cf` (`guardcf.rs`) and are no chunks.
    pub guard_sections: Vec<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkSrc {
    /// A section (0-based index).
    Sec(u32),
    /// A common symbol (symbol index).
    Common(u32),
}

/// The resolution result.
pub struct Resolved {
    pub files: Vec<InFile>,
    /// Object files in lld's chunk order (crtend.o last in MinGW mode).
    pub obj_order: Vec<FileId>,
    /// Loaded short imports, in load order.
    pub imports: Vec<FileId>,
    pub symbols: Vec<Symbol>,
    pub by_name: HashMap<&'static str, SymId>,
    pub entry: Option<SymId>,
    /// Exports, one per name in lld's list order (`.drectve` of the command line's objects,
    /// `/export`, `/def`, later `.drectve`), with the symbol each names.
    pub exports: Vec<(ExportSpec, SymId)>,
    pub exclude_symbols: Vec<String>,
    pub subsystem: u16,
    /// `__imp_` symbols bound to local definitions, in creation order.
    pub local_imports: Vec<SymId>,
    /// Short imports whose thunk `--gc-sections` found unreferenced (`gc.rs`).
    pub gc_dead_thunks: HashSet<FileId>,
    /// `/merge:from=to` of the command line and `.drectve`, in that order (lld's `parseMerge`).
    pub merges: Vec<(String, String)>,
    /// `/section:name,attrs` of the command line and `.drectve`.
    pub section_attrs: Vec<(String, u32)>,
    /// `/aligncomm:name,n` (alignment in bytes) of the command line and `.drectve`.
    pub align_comm: HashMap<String, u32>,
    /// Sections ICF folded into another: (file, section) → the section that stays (`icf.rs`).
    pub icf_folded: HashMap<(FileId, u32), (FileId, u32)>,
    /// The `/include:` names (command line and `.drectve`) and every `/alternatename:` pair, as
    /// resolution left them: what GC's roots name (`gc::roots`).
    pub includes: Vec<String>,
    pub alternate_names: Vec<(String, String)>,
    /// Per short import: the `__imp_` symbol and the thunk symbol it defined when read (lld's
    /// `impSym`/`thunkSym`; a later definition replacing them is an error).
    pub import_syms: HashMap<FileId, (Option<SymId>, Option<SymId>)>,
}

impl Resolved {
    pub fn find(&self, name: &str) -> Option<SymId> {
        self.by_name.get(name).copied()
    }
    pub fn obj(&self, f: FileId) -> &ObjFile {
        match &self.files[f].kind {
            Kind::Obj(o) => o,
            _ => unreachable!("not an object"),
        }
    }
    /// Index into `exports` of the first export with each export-table name (linear lookups
    /// instead of a scan per export: DLLs export thousands of symbols).
    pub fn exports_by_table_name(&self) -> HashMap<&str, usize> {
        let mut m = HashMap::with_capacity(self.exports.len());
        for (k, (spec, _)) in self.exports.iter().enumerate() {
            m.entry(spec.table_name()).or_insert(k);
        }
        m
    }
    pub fn has_bitcode(&self) -> bool {
        self.files.iter().any(|f| matches!(f.kind, Kind::Bitcode(_)))
    }
}
