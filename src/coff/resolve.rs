//! COFF symbol resolution: which files join the link and what every symbol binds to.
//!
//! This is lld's COFF model (`SymbolTable.cpp`, `InputFiles.cpp`, `Driver.cpp`): files are
//! processed from one FIFO queue — the command line first, then archive members in the order
//! undefined references asked for them; archive members are found through the archive's symbol
//! table and stay lazy until a non-weak undefined reference meets them. COMDAT leaders pick one
//! copy of each section (MinGW's `.pdata$f`/`.xdata$f` follow their `.text$f`), weak externals
//! fall back to their default definition at the end, and MinGW's rules finish the job:
//! `__imp_` symbols for local definitions, automatic import of data (`foo` → `__imp_foo`, marked
//! for a runtime pseudo relocation), and crtend.o moved last.
//!
//! Bitcode files take part with their irsymtab symbols; the result says whether any was loaded
//! so that LTO can run between resolution and layout and its objects join in a second pass
//! (`add_objects`), as lld's `compileBitcodeFiles` does.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};

use super::config::{CoffConfig, CoffInput, ExportSpec};
use super::drectve::{self, Directive};
use super::implib::{self, ImportKind, ShortImport};
use super::demangle::display as demangle;
use super::object::{self, ObjFile};
use crate::error::{Error, Result};

pub type FileId = usize;
pub type SymId = usize;

/// What a COFF symbol-table entry of a loaded object binds to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SymRef {
    /// An aux entry, a discarded section's local, or a debug symbol.
    None,
    Global(SymId),
    /// A static symbol: section number (1-based) and offset.
    Local { sec: u32, value: u32 },
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
    Bitcode(crate::lto::BitcodeFile),
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
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkSrc {
    /// A section (0-based index).
    Sec(u32),
    /// A common symbol (symbol index).
    Common(u32),
}

struct Archive {
    path: String,
    /// A thin archive: members are files next to it.
    thin: bool,
    /// Not an archive: one object between `/start-lib` and `/end-lib` (a lazy object, loaded
    /// like an archive member but named as a plain file).
    lazy_object: bool,
    /// Member header offset → (name, bytes).
    members: HashMap<usize, (String, &'static [u8])>,
    seen: HashSet<usize>,
}

enum Task {
    Path(CoffInput),
    /// An archive member: (archive, member offset, the symbol that asked for it, for
    /// `/verbose`'s `Loaded lib(member) for sym`).
    Member(usize, usize, String),
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
    /// Exports: command line, then `.drectve` (ExportSpec) with the symbol each names.
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

pub struct Resolver<'a> {
    config: &'a CoffConfig,
    r: Resolved,
    archives: Vec<Archive>,
    queue: VecDeque<Task>,
    visited: HashSet<PathBuf>,
    errors: Vec<String>,
    duplicates: Vec<String>,
    alternate_names: Vec<(String, String)>,
    include: Vec<String>,
    default_libs: Vec<String>,
    export_specs: Vec<ExportSpec>,
    /// The names in `export_specs`, for duplicate checks in constant time.
    export_names: HashSet<String>,
    /// `/failifmismatch`: key → (value, who set it).
    must_match: HashMap<String, (String, String)>,
    /// `.res` inputs (name, bytes), in command-line order.
    res_files: Vec<(String, &'static [u8])>,
    /// Objects with `.rsrc`/`.rsrc$*` sections, and those sections: held back until
    /// `convert_resources` decides (lld's `resourceChunks`).
    rsrc_objs: Vec<(FileId, Vec<u32>)>,
    /// `--wrap`: (symbol, `__real_` symbol, `__wrap_` symbol).
    wrapped: Vec<(SymId, SymId, SymId)>,
    /// The COMDAT selection of every leader section read: (file, 1-based section) → selection.
    comdat_sel: HashMap<(FileId, u32), u8>,
}

fn basename(p: &str) -> &str {
    p.rsplit(['/', '\\']).next().unwrap_or(p)
}

/// lld's `isCrtend`.
fn is_crtend(name: &str) -> bool {
    let Some(s) = name.strip_suffix(".o") else { return false };
    if s.ends_with("crtend") {
        return true;
    }
    !s.is_empty() && s[..s.len() - 1].ends_with("crtend")
}

impl<'a> Resolver<'a> {
    pub fn new(config: &'a CoffConfig) -> Resolver<'a> {
        Resolver {
            config,
            r: Resolved {
                files: Vec::new(),
                obj_order: Vec::new(),
                imports: Vec::new(),
                symbols: Vec::new(),
                by_name: HashMap::new(),
                entry: None,
                exports: Vec::new(),
                exclude_symbols: config.exclude_symbols.clone(),
                subsystem: 0,
                local_imports: Vec::new(),
                gc_dead_thunks: HashSet::new(),
                merges: config.merges.clone(),
                section_attrs: config.section_attrs.clone(),
                align_comm: config.align_comm.iter().cloned().collect(),
                icf_folded: HashMap::new(),
                import_syms: HashMap::new(),
            },
            archives: Vec::new(),
            queue: VecDeque::new(),
            visited: HashSet::new(),
            errors: Vec::new(),
            duplicates: Vec::new(),
            alternate_names: config.alternate_names.clone(),
            include: config.includes.clone(),
            default_libs: Vec::new(),
            export_specs: config.exports.clone(),
            export_names: config.exports.iter().map(|e| e.name.clone()).collect(),
            must_match: HashMap::new(),
            res_files: Vec::new(),
            rsrc_objs: Vec::new(),
            wrapped: Vec::new(),
            comdat_sel: HashMap::new(),
        }
    }

    fn insert(&mut self, name: &str) -> (SymId, bool) {
        if let Some(&id) = self.r.by_name.get(name) {
            return (id, false);
        }
        let name: &'static str = Box::leak(name.to_string().into_boxed_str());
        let id = self.r.symbols.len();
        self.r.symbols.push(Symbol { name, def: Def::Undefined, weak_alias: None, pending_load: false, pseudo_reloc: false, comdat: false, used_in_regular: false, weak_def: false, bitcode_common: 0, deferred: false });
        self.r.by_name.insert(name, id);
        (id, true)
    }

    fn is_lazy(&self, id: SymId) -> bool {
        matches!(self.r.symbols[id].def, Def::Lazy(..))
    }

    fn force_lazy(&mut self, id: SymId) {
        let s = &mut self.r.symbols[id];
        s.pending_load = true;
        if let Def::Lazy(a, off) = s.def {
            let name = s.name;
            self.add_member(a, off, name);
        }
    }

    fn add_member(&mut self, a: usize, off: usize, why: &str) {
        if self.archives[a].seen.insert(off) {
            self.queue.push_back(Task::Member(a, off, why.to_string()));
        }
    }

    /// lld's `addUndefined` for a reference from native code or the command line; weak
    /// externals override lazy symbols instead of loading them.
    pub fn add_undefined(&mut self, name: &str, override_lazy: bool) -> SymId {
        let id = self.undefined_ref(name, override_lazy);
        self.r.symbols[id].used_in_regular = true;
        id
    }

    /// A reference, from any file (bitcode references do not make a symbol used in regular code).
    fn undefined_ref(&mut self, name: &str, override_lazy: bool) -> SymId {
        let (id, new) = self.insert(name);
        if new || (override_lazy && self.is_lazy(id)) {
            self.r.symbols[id].def = Def::Undefined;
            return id;
        }
        if self.is_lazy(id) {
            self.force_lazy(id);
        }
        id
    }

    fn duplicate(&mut self, id: SymId, new_file: Option<FileId>) {
        self.duplicate_at(id, new_file, None);
    }

    /// lld's `reportDuplicate`: both definitions with their source positions when known
    /// (`new_at`: the new definition's section, 1-based, and offset).
    fn duplicate_at(&mut self, id: SymId, new_file: Option<FileId>, new_at: Option<(u32, u32)>) {
        let mingw = self.config.mingw;
        let old = match self.r.symbols[id].def {
            Def::Regular(f, i) => {
                let s = &self.r.obj(f).symbols[i as usize];
                let at = (s.section > 0).then_some((s.section as u32, s.value));
                super::locations::defined_at(&self.r, f, at, mingw)
            }
            Def::Common(f, _, _) | Def::ImportData(f) | Def::ImportThunk(f) | Def::Bitcode(f, _) => super::locations::defined_at(&self.r, f, None, mingw),
            _ => String::new(),
        };
        let new = new_file.map(|f| super::locations::defined_at(&self.r, f, new_at, mingw)).unwrap_or_default();
        let msg = format!("duplicate symbol: {}{old}{new}", demangle(self.r.symbols[id].name, self.config.demangle));
        // `/force:multiple` (MinGW `--allow-multiple-definition`): lld warns and keeps the first.
        if self.config.allow_multiple {
            self.config.diag.warn(&msg);
        } else {
            self.duplicates.push(msg);
        }
    }

    fn add_regular(&mut self, name: &str, f: FileId, idx: u32) -> SymId {
        let (id, new) = self.insert(name);
        let replace = new || !matches!(self.r.symbols[id].def, Def::Regular(..));
        if replace {
            let s = &mut self.r.symbols[id];
            s.def = Def::Regular(f, idx);
            s.comdat = false;
            s.weak_alias = None;
            s.bitcode_common = 0;
        } else {
            let s = &self.r.obj(f).symbols[idx as usize];
            let at = (s.section > 0).then_some((s.section as u32, s.value));
            self.duplicate_at(id, Some(f), at);
        }
        id
    }

    fn add_comdat(&mut self, name: &str, f: FileId, idx: u32) -> (SymId, bool) {
        let (id, new) = self.insert(name);
        if new || !matches!(self.r.symbols[id].def, Def::Regular(..)) {
            let s = &mut self.r.symbols[id];
            s.def = Def::Regular(f, idx);
            s.comdat = true;
            s.weak_alias = None;
            s.bitcode_common = 0;
            return (id, true);
        }
        if !self.r.symbols[id].comdat {
            self.duplicate(id, Some(f));
        }
        (id, false)
    }

    /// lld's `handleComdatSelection`: a second COMDAT leader for symbol `id` (section `sec`,
    /// 1-based, of `obj`, leader symbol `idx`, selection `sel`) meets the one already chosen. Returns whether the
    /// new section prevails ("largest" replaces a smaller leader).
    fn comdat_selection(&mut self, id: SymId, f: FileId, obj: &ObjFile, sec: usize, idx: u32, sel: u8) -> bool {
        const NODUPLICATES: u8 = 1;
        const ANY: u8 = 2;
        const SAME_SIZE: u8 = 3;
        const EXACT_MATCH: u8 = 4;
        const LARGEST: u8 = 6;
        let Def::Regular(lf, li) = self.r.symbols[id].def else { return false };
        let lobj = self.r.obj(lf);
        let lsec = lobj.symbols[li as usize].section as usize;
        let Some(lsection) = lsec.checked_sub(1).and_then(|k| lobj.sections.get(k)) else { return false };
        let (lsize, ldata) = (lsection.size, lsection.data);
        let llength = lobj.symbols.iter().find(|y| !y.is_aux && y.secdef.is_some() && y.section == lsec as i32).map(|y| y.sec_length);
        let mut lsel = self.comdat_sel.get(&(lf, lsec as u32)).copied().unwrap_or(ANY);
        let mut sel = sel;
        // "any" and "largest" merge as "largest" (cl.exe's vftables with and without /GR).
        if (sel == ANY && lsel == LARGEST) || (sel == LARGEST && lsel == ANY) {
            sel = LARGEST;
            lsel = LARGEST;
        }
        // GCC's selectany is "same size".
        if self.config.mingw && ((sel == ANY && lsel == SAME_SIZE) || (sel == SAME_SIZE && lsel == ANY)) {
            sel = SAME_SIZE;
            lsel = SAME_SIZE;
        }
        let new = &obj.sections[sec - 1];
        if sel != lsel {
            let name = demangle(self.r.symbols[id].name, self.config.demangle);
            self.log(&format!("conflicting comdat type for {name}: {lsel} in {} and {sel} in {}", self.r.files[lf].name, self.r.files[f].name));
            self.duplicate(id, Some(f));
            return false;
        }
        match sel {
            NODUPLICATES => self.duplicate(id, Some(f)),
            SAME_SIZE if lsize != new.size => {
                let length = obj.symbols.iter().find(|y| !y.is_aux && y.secdef.is_some() && y.section == sec as i32).map(|y| y.sec_length);
                if !self.config.mingw || llength.is_none() || llength != length {
                    self.duplicate(id, Some(f));
                }
            }
            EXACT_MATCH if ldata != new.data => {
                let value = obj.symbols[idx as usize].value;
                self.duplicate_at(id, Some(f), Some((sec as u32, value)));
            }
            LARGEST if lsize < new.size => {
                // The old section stays (unreferenced, so `/opt:ref` drops it), as in lld.
                self.r.symbols[id].def = Def::Regular(f, idx);
                return true;
            }
            _ => {}
        }
        false
    }

    fn add_common(&mut self, name: &str, f: FileId, idx: u32, size: u32) -> SymId {
        let (id, _) = self.insert(name);
        let s = &mut self.r.symbols[id];
        match s.def {
            // A definition wins over a common symbol; of two commons, the larger.
            Def::Regular(..) => {}
            Def::Common(_, _, old) if old >= size => {}
            Def::Bitcode(..) if s.bitcode_common == 0 || s.bitcode_common >= size => {}
            _ => {
                s.bitcode_common = 0;
                s.def = Def::Common(f, idx, size);
                s.weak_alias = None;
            }
        }
        id
    }

    /// lld's `addAbsolute`.
    pub fn add_absolute(&mut self, name: &str, value: u64, file: Option<FileId>) -> SymId {
        let (id, new) = self.insert(name);
        match self.r.symbols[id].def {
            _ if new => self.r.symbols[id].def = Def::Absolute(value),
            Def::Undefined | Def::Lazy(..) => {
                self.r.symbols[id].def = Def::Absolute(value);
                self.r.symbols[id].weak_alias = None;
            }
            Def::Absolute(v) if v != value => self.duplicate(id, file),
            Def::Absolute(_) | Def::Regular(..) | Def::Common(..) => {}
            _ => self.duplicate(id, file),
        }
        id
    }

    fn add_synthetic(&mut self, name: &str, s: Synth) -> SymId {
        let (id, _) = self.insert(name);
        let sym = &mut self.r.symbols[id];
        if matches!(sym.def, Def::Undefined | Def::Lazy(..) | Def::Absolute(_)) || matches!(s, Synth::CtorList | Synth::DtorList | Synth::PseudoRelocList | Synth::PseudoRelocListEnd) {
            sym.def = Def::Synthetic(s);
            sym.weak_alias = None;
            sym.comdat = false;
        }
        id
    }

    fn add_import(&mut self, name: &str, d: Def, f: FileId) -> SymId {
        let (id, new) = self.insert(name);
        if new || matches!(self.r.symbols[id].def, Def::Undefined | Def::Lazy(..)) {
            let s = &mut self.r.symbols[id];
            s.def = d;
            s.weak_alias = None;
        } else {
            self.duplicate(id, Some(f));
        }
        id
    }

    /// lld's `addLazyArchive` for one archive symbol-table entry.
    fn add_lazy(&mut self, name: &str, a: usize, off: usize) {
        let (id, new) = self.insert(name);
        if new {
            self.r.symbols[id].def = Def::Lazy(a, off);
            return;
        }
        let s = &self.r.symbols[id];
        if s.def != Def::Undefined || s.weak_alias.is_some() || s.pending_load {
            return;
        }
        self.r.symbols[id].pending_load = true;
        self.add_member(a, off, name);
    }

    /// Runs the queue until empty. Returns whether anything was processed.
    fn run(&mut self) -> bool {
        let mut any = false;
        while let Some(t) = self.queue.pop_front() {
            any = true;
            match t {
                Task::Path(i) => self.load_path(&i),
                Task::Member(a, off, why) => {
                    let Some((name, data)) = self.archives[a].members.get(&off).cloned() else {
                        continue;
                    };
                    if self.archives[a].lazy_object {
                        self.add_buffer(data, &name, "", None);
                        continue;
                    }
                    let parent = self.archives[a].path.clone();
                    let thin = self.archives[a].thin;
                    let before = self.r.files.len();
                    self.add_buffer(data, &name, &parent, Some((off, thin)));
                    // lld's addArchiveBuffer logs objects and bitcode, not import members.
                    if self.config.verbose && self.r.files.len() > before && !matches!(self.r.files[before].kind, Kind::Import(_)) {
                        self.log(&format!("Loaded {} for {}", self.r.files[before].name, demangle(&why, self.config.demangle)));
                    }
                }
            }
        }
        any
    }

    fn enqueue_path(&mut self, input: CoffInput) {
        // lld-link reads each file once (`findFileIfNew`).
        let key = std::fs::canonicalize(&input.path).unwrap_or_else(|_| input.path.clone());
        if !self.visited.insert(key) {
            return;
        }
        self.queue.push_back(Task::Path(input));
    }

    fn load_path(&mut self, input: &CoffInput) {
        let path = input.path.to_string_lossy().into_owned();
        self.log(&format!("Reading {path}"));
        let data = match crate::input::map_file(&input.path) {
            Ok(d) => d,
            Err(e) => {
                self.errors.push(format!("could not open '{path}': {}", crate::io_error(&e)));
                return;
            }
        };
        if data.starts_with(crate::archive::MAGIC) || data.starts_with(crate::archive::THIN_MAGIC) {
            let members = match crate::archive::parse(data) {
                Ok(m) => m,
                Err(e) if input.whole_archive => {
                    self.errors.extend(e.context(&path).messages);
                    return;
                }
                Err(e) => {
                    // lld/COFF reads a lazy archive with `CHECK(Archive::create(mb), this)`:
                    // `<archive>: <reason>` without ELF's "failed to parse archive:".
                    let strip = |m: String| m.strip_prefix("failed to parse archive: ").or_else(|| m.strip_prefix("Archive::children failed: ")).map(str::to_string).unwrap_or(m);
                    self.errors.extend(e.messages.into_iter().map(|m| format!("{path}: {}", strip(m))));
                    return;
                }
            };
            let a = self.archives.len();
            let mut map = HashMap::new();
            let mut order = Vec::new();
            for m in members {
                let bytes: &'static [u8] = match m.data {
                    Some(d) => d,
                    None => {
                        let dir = Path::new(&path).parent().unwrap_or(Path::new(""));
                        match crate::input::map_file(&dir.join(&m.name)) {
                            Ok(d) => d,
                            Err(e) => {
                                self.errors.push(format!("{path}: could not get the buffer for a child of the archive: {}", crate::io_error(&e)));
                                continue;
                            }
                        }
                    }
                };
                order.push(m.offset);
                map.insert(m.offset, (m.name.clone(), bytes));
            }
            let thin = data.starts_with(crate::archive::THIN_MAGIC);
            self.archives.push(Archive { path: path.clone(), thin, lazy_object: false, members: map, seen: HashSet::new() });
            if input.whole_archive {
                for off in order {
                    self.add_member(a, off, "<whole-archive>");
                }
                return;
            }
            match super::armap::symbols(data) {
                Some(syms) => {
                    for (name, off) in syms {
                        self.add_lazy(name, a, off);
                    }
                }
                None => {
                    // No symbol table: read the members' own (as `llvm-ar s` would write it).
                    for off in order {
                        let (_, bytes) = self.archives[a].members[&off];
                        for name in member_symbols(bytes) {
                            self.add_lazy(&name, a, off);
                        }
                    }
                }
            }
            return;
        }
        if input.lazy && !input.whole_archive {
            // `/start-lib`: the object's definitions are lazy, like an archive member's.
            let a = self.archives.len();
            self.archives.push(Archive { path: path.clone(), thin: false, lazy_object: true, members: HashMap::from([(0, (path.clone(), data))]), seen: HashSet::new() });
            for name in member_symbols(data) {
                self.add_lazy(&name, a, 0);
            }
            return;
        }
        self.add_buffer(data, &path, "", None);
    }

    /// Adds one object, import member or bitcode file (lld's `addArchiveBuffer`/`addFile`).
    /// `member`: the member's header offset in `parent` and whether the archive is thin.
    fn add_buffer(&mut self, data: &'static [u8], name: &str, parent: &str, member: Option<(usize, bool)>) {
        let display = if parent.is_empty() { name.to_string() } else { format!("{}({})", basename(parent), basename(name)) };
        if !parent.is_empty() {
            self.log(&format!("Reading {display}"));
        }
        if super::resources::is_res(data) {
            self.res_files.push((display, data));
            return;
        }
        if implib::is_short_import(data) {
            match implib::parse_short_import(data) {
                Ok(imp) => self.add_short_import(imp, display, name, parent),
                Err(e) => self.errors.push(format!("{display}: {e}")),
            }
            return;
        }
        if crate::lto::irsymtab::is_bitcode(data) {
            // The format-neutral description LTO works from (lld's module naming needs the
            // archive, the member and its offset).
            let (path, archive) = match member {
                Some((_, true)) => (Path::new(parent).parent().unwrap_or(Path::new("")).join(name), Some((parent.to_string(), name.to_string()))),
                Some((_, false)) => (PathBuf::from(parent), Some((parent.to_string(), name.to_string()))),
                None => (PathBuf::from(name), None),
            };
            let input: &'static crate::input::InputFile = Box::leak(Box::new(crate::input::InputFile {
                name: display.clone(),
                path,
                data,
                kind: crate::input::FileKind::Bitcode,
                lazy: false,
                archive,
                as_needed: false,
                needed_name: String::new(),
                archive_offset: member.map_or(0, |(off, _)| off as u64),
                thin_member: member.is_some_and(|(_, thin)| thin),
            }));
            match crate::lto::BitcodeFile::parse(input) {
                Ok(b) => self.add_bitcode(b, display, name, parent),
                Err(e) => self.errors.extend(e.messages),
            }
            return;
        }
        if object::is_cl_gl_object(data) {
            let q = if parent.is_empty() { "" } else { "?" };
            self.errors.push(format!("{display}: is not a native COFF file. Recompile without /GL{q}"));
            return;
        }
        if !object::is_coff_object(data) {
            if parent.is_empty() {
                self.errors.push(format!("{display}: unknown file type"));
            } else {
                self.errors.push(format!("unknown file type: {display}"));
            }
            return;
        }
        match object::parse(data) {
            Ok(obj) => self.add_object(obj, display, name, parent),
            Err(e) if e == object::NOT_PARSED => self.errors.push(format!("Could not parse {display}")),
            Err(e) if e.starts_with(object::NO_FILE) => self.errors.push(e[1..].to_string()),
            Err(e) => self.errors.push(format!("{display}: {e}")),
        }
    }

    fn new_file(&mut self, kind: Kind, display: String, name: &str, parent: &str) -> FileId {
        let f = self.r.files.len();
        self.r.files.push(InFile { name: display, parent: parent.to_string(), obj_name: name.to_string(), kind, syms: Vec::new(), live: Vec::new(), commons: Vec::new(), chunks: Vec::new(), leaders: HashMap::new() });
        f
    }

    fn add_short_import(&mut self, imp: ShortImport, display: String, name: &str, parent: &str) {
        let sym = imp.symbol.clone();
        let kind = imp.kind;
        let f = self.new_file(Kind::Import(imp), display, name, parent);
        self.r.imports.push(f);
        let imp = self.add_import(&format!("__imp_{sym}"), Def::ImportData(f), f);
        let mut installed = (None, None);
        if self.r.symbols[imp].def == Def::ImportData(f) {
            installed.0 = Some(imp);
        }
        match kind {
            ImportKind::Code => {
                let t = self.add_import(&sym, Def::ImportThunk(f), f);
                if self.r.symbols[t].def == Def::ImportThunk(f) {
                    installed.1 = Some(t);
                }
            }
            ImportKind::Const => {
                self.add_import(&sym, Def::ImportData(f), f);
            }
            ImportKind::Data => {}
        }
        self.r.import_syms.insert(f, installed);
    }

    /// lld's `BitcodeFile::parse`: the symbols LTO resolves (`BitcodeFile::syms`, index `k`
    /// in `Def::Bitcode`), then the module's linker options (`-export:` of dllexport).
    fn add_bitcode(&mut self, b: crate::lto::BitcodeFile, display: String, name: &str, parent: &str) {
        let syms: Vec<(String, bool, bool, bool, u32)> = (0..b.syms.len())
            .map(|k| b.sym(k))
            .map(|s| (String::from_utf8_lossy(s.name).into_owned(), s.undefined(), s.weak(), s.comdat.is_some(), if s.common() { s.common_size.max(1) } else { 0 }))
            .collect();
        let opts = b.ir.coff_linker_opts;
        let f = self.new_file(Kind::Bitcode(b), display, name, parent);
        for (k, (n, undef, weak, comdat, common)) in syms.into_iter().enumerate() {
            if undef {
                let id = self.undefined_ref(&n, weak);
                if weak {
                    self.r.symbols[id].deferred = true;
                }
            } else if common != 0 {
                // lld's `addCommon`: a common replaces anything but a definition, and a smaller
                // common; never a duplicate.
                let (id, new) = self.insert(&n);
                let s = &self.r.symbols[id];
                let replace = match s.def {
                    _ if new => true,
                    Def::Undefined | Def::Lazy(..) => true,
                    Def::Common(_, _, old) => common > old,
                    Def::Bitcode(..) => s.bitcode_common != 0 && common > s.bitcode_common,
                    _ => false,
                };
                if replace {
                    let s = &mut self.r.symbols[id];
                    s.def = Def::Bitcode(f, k);
                    s.weak_alias = None;
                    s.comdat = false;
                    s.weak_def = false;
                    s.bitcode_common = common;
                }
            } else {
                let (id, new) = self.insert(&n);
                let def = self.r.symbols[id].def;
                let old_common = matches!(def, Def::Common(..)) || (matches!(def, Def::Bitcode(..)) && self.r.symbols[id].bitcode_common != 0);
                let replaces_weak = matches!(def, Def::Bitcode(..)) && self.r.symbols[id].weak_def && !weak;
                if new || matches!(def, Def::Undefined | Def::Lazy(..)) || replaces_weak || old_common {
                    let s = &mut self.r.symbols[id];
                    s.def = Def::Bitcode(f, k);
                    s.weak_alias = None;
                    s.comdat = comdat;
                    s.weak_def = weak;
                    s.bitcode_common = 0;
                } else if !weak && !comdat && !self.r.symbols[id].comdat {
                    self.duplicate(id, Some(f));
                }
            }
        }
        if !opts.is_empty() {
            self.parse_directives(f, opts);
        }
    }

    /// lld's `ObjFile::initializeChunks` + `initializeSymbols`.
    fn add_object(&mut self, obj: ObjFile, display: String, name: &str, parent: &str) {
        let nsec = obj.sections.len();
        let nsym = obj.symbols.len();
        let directives = obj.directives;
        let obj = std::sync::Arc::new(obj);
        let f = self.new_file(Kind::Obj(obj.clone()), display, name, parent);
        self.r.obj_order.push(f);
        // The resolver's own handle: `self` may grow its file list while this object is read.
        let obj: &ObjFile = &obj;
        let include_dwarf = self.config.debug == super::config::DebugMode::Dwarf;
        // Section state: Some(true) live, Some(false) dropped, None pending COMDAT.
        let mut state: Vec<Option<bool>> = obj
            .sections
            .iter()
            .map(|s| {
                if s.is_comdat() {
                    None
                } else {
                    Some(keep_section(s, include_dwarf))
                }
            })
            .collect();
        let mut syms = vec![SymRef::None; nsym];
        let mut commons = Vec::new();
        let mut order: Vec<ChunkSrc> = (0..nsec).filter(|&k| state[k] == Some(true)).map(|k| ChunkSrc::Sec(k as u32)).collect();
        let mut comdat_defs: Vec<Option<u8>> = vec![None; nsec + 1];
        let mut leaders = HashMap::new();
        let mut pending = Vec::new();
        let mut weak = Vec::new();
        let mut prevailing_text: HashMap<&str, u32> = HashMap::new();
        let mingw = self.config.mingw;
        let mut i = 0;
        while i < nsym {
            let s = &obj.symbols[i];
            let naux = s.naux as usize;
            if s.is_undefined() {
                syms[i] = SymRef::Global(self.add_undefined(s.name, false));
            } else if s.is_weak_external() {
                let id = self.add_undefined(s.name, true);
                syms[i] = SymRef::Global(id);
                if let Some(tag) = s.weak_tag {
                    weak.push((id, tag));
                }
            } else if s.is_common() {
                commons.push(i as u32);
                order.push(ChunkSrc::Common(i as u32));
                syms[i] = SymRef::Global(self.add_common(s.name, f, i as u32, s.value));
            } else if s.is_absolute() {
                if s.name == "@comp.id" || s.name == "@feat.00" {
                } else if s.is_external() {
                    syms[i] = SymRef::Global(self.add_absolute(s.name, s.value as u64, Some(f)));
                } else {
                    syms[i] = SymRef::Absolute(s.value);
                }
            } else if s.section <= 0 {
                // Debug (-2) symbols and other reserved numbers.
            } else {
                let sec = s.section as usize;
                if let Some(sel) = comdat_defs[sec].take() {
                    leaders.insert(sec as u32 - 1, i as u32);
                    // The COMDAT leader.
                    let mut prevailing;
                    if !(1..=6).contains(&sel) {
                        // lld's `fatal`: link.exe does not know "newest" (7) either.
                        self.errors.push(format!("unknown comdat type {sel} for {} in {}", s.name, self.r.files[f].name));
                    }
                    self.comdat_sel.insert((f, sec as u32), sel);
                    if s.is_external() {
                        let was_comdat = self.r.find(s.name).is_some_and(|id| self.r.symbols[id].comdat && matches!(self.r.symbols[id].def, Def::Regular(..)));
                        let (id, p) = self.add_comdat(s.name, f, i as u32);
                        prevailing = p;
                        syms[i] = SymRef::Global(id);
                        if !p && was_comdat {
                            prevailing = self.comdat_selection(id, f, obj, sec, i as u32, sel);
                        }
                    } else {
                        prevailing = true;
                        syms[i] = SymRef::Local { sec: sec as u32, value: s.value };
                    }
                    state[sec - 1] = Some(prevailing && keep_section(&obj.sections[sec - 1], include_dwarf));
                    if state[sec - 1] == Some(true) {
                        order.push(ChunkSrc::Sec(sec as u32 - 1));
                    }
                    if mingw && prevailing && obj.sections[sec - 1].chars & 0x2000_0000 != 0 {
                        if let Some((_, suffix)) = obj.sections[sec - 1].name.split_once('$') {
                            prevailing_text.insert(suffix, sec as u32);
                        }
                    }
                } else if state[sec - 1].is_none() {
                    if let Some((sel, _)) = s.secdef {
                        if sel != 5 {
                            comdat_defs[sec] = Some(sel);
                        }
                    }
                    pending.push(i);
                } else {
                    syms[i] = self.create_regular(f, obj, i);
                }
            }
            i += 1 + naux;
        }
        for &i in &pending {
            let s = &obj.symbols[i];
            let sec = s.section as usize;
            if let Some((sel, assoc)) = s.secdef {
                if sel == 5 {
                    // IMAGE_COMDAT_SELECT_ASSOCIATIVE: live if the parent is.
                    let parent_state = (assoc as usize).checked_sub(1).and_then(|p| state.get(p).copied());
                    if parent_state == Some(None) {
                        // The parent is a COMDAT not decided yet: an associative section later
                        // in the file, or one without a leader (lld's readAssociativeDefinition).
                        let file = &self.r.files[f].name;
                        self.errors.push(format!("{file}: associative comdat {} (sec {sec}) has invalid reference to section {} (sec {assoc})", s.name, obj.sections[assoc as usize - 1].name));
                        continue;
                    }
                    let parent = parent_state.flatten();
                    state[sec - 1] = Some(parent == Some(true) && keep_section(&obj.sections[sec - 1], include_dwarf));
                } else if mingw {
                    for prefix in [".pdata$", ".xdata$", ".eh_frame$"] {
                        if let Some(func) = s.name.strip_prefix(prefix) {
                            if prevailing_text.contains_key(func) {
                                state[sec - 1] = Some(keep_section(&obj.sections[sec - 1], include_dwarf));
                            }
                        }
                    }
                }
            }
            if state[sec - 1].is_none() {
                // Stays undecided (an associative reference to it is an error, as in lld).
                self.log(&format!("comdat section {} without leader and unassociated, discarding", s.name));
                continue;
            }
            if state[sec - 1] == Some(true) && !order.contains(&ChunkSrc::Sec(sec as u32 - 1)) {
                order.push(ChunkSrc::Sec(sec as u32 - 1));
            }
            syms[i] = self.create_regular_in(f, obj, i, &state);
        }
        for (id, tag) in weak {
            let target = match syms[tag as usize] {
                SymRef::Global(t) => Some(t),
                _ => None,
            };
            if let Some(t) = target {
                let s = &mut self.r.symbols[id];
                if s.def == Def::Undefined && s.weak_alias.is_none() {
                    s.weak_alias = Some(t);
                } else if s.def == Def::Undefined && s.weak_alias != Some(t) && !mingw {
                    self.duplicate(id, Some(f));
                }
            }
        }
        let live: Vec<bool> = state.into_iter().map(|s| s == Some(true)).collect();
        // Resource sections wait for `convert_resources` (lld's `resourceChunks`).
        let rsrc: Vec<u32> = (0..nsec as u32).filter(|&k| live[k as usize] && (obj.sections[k as usize].name == ".rsrc" || obj.sections[k as usize].name.starts_with(".rsrc$"))).collect();
        if !rsrc.is_empty() {
            order.retain(|c| !matches!(c, ChunkSrc::Sec(k) if rsrc.contains(k)));
            self.rsrc_objs.push((f, rsrc));
        }
        for r in &syms {
            if let SymRef::Global(id) = *r {
                self.r.symbols[id].used_in_regular = true;
            }
        }
        let file = &mut self.r.files[f];
        file.syms = syms;
        file.live = live;
        file.commons = commons;
        file.chunks = order;
        file.leaders = leaders;
        if let Some(d) = directives {
            self.parse_directives(f, d);
        }
    }

    fn create_regular(&mut self, f: FileId, obj: &ObjFile, i: usize) -> SymRef {
        let sec = obj.symbols[i].section as usize;
        let live = keep_section(&obj.sections[sec - 1], self.config.debug == super::config::DebugMode::Dwarf);
        self.regular(f, obj, i, live)
    }

    fn create_regular_in(&mut self, f: FileId, obj: &ObjFile, i: usize, state: &[Option<bool>]) -> SymRef {
        let sec = obj.symbols[i].section as usize;
        self.regular(f, obj, i, state[sec - 1] == Some(true))
    }

    /// lld's `createRegular`.
    fn regular(&mut self, f: FileId, obj: &ObjFile, i: usize, live: bool) -> SymRef {
        let s = &obj.symbols[i];
        if s.is_external() {
            if live {
                return SymRef::Global(self.add_regular(s.name, f, i as u32));
            }
            if self.config.mingw && s.name.starts_with(".weak.") {
                return SymRef::None;
            }
            return SymRef::Global(self.add_undefined(s.name, false));
        }
        if live {
            SymRef::Local { sec: s.section as u32, value: s.value }
        } else {
            SymRef::None
        }
    }

    fn parse_directives(&mut self, f: FileId, text: &[u8]) {
        self.log(&format!("Directives: {}: {}", self.r.files[f].name, String::from_utf8_lossy(text)));
        let ds = match drectve::parse(text) {
            Ok(d) => d,
            Err(e) => {
                self.errors.push(format!("{}: {e}", self.r.files[f].name));
                return;
            }
        };
        for d in ds {
            match d {
                Directive::DefaultLib(l) => self.add_default_lib(&l),
                Directive::Export(e)
                    if self.export_names.insert(e.name.clone()) => {
                        self.add_undefined(e.internal.as_deref().unwrap_or(&e.name).to_string().as_str(), false);
                        self.export_specs.push(e);
                    }
                Directive::Include(n) => {
                    self.add_undefined(&n, false);
                    self.include.push(n);
                }
                Directive::AlternateName { from, to } => self.alternate_names.push((from, to)),
                Directive::ExcludeSymbols(v) => self.r.exclude_symbols.extend(v),
                Directive::Merge { from, to } => self.r.merges.push((from, to)),
                Directive::Section { name, characteristics } => self.r.section_attrs.push((name, characteristics)),
                Directive::AlignComm { name, alignment } => {
                    let a = self.r.align_comm.entry(name).or_insert(alignment);
                    *a = (*a).max(alignment);
                }
                Directive::FailIfMismatch { key, value } => {
                    let src = self.r.files[f].name.clone();
                    self.fail_if_mismatch(&key, &value, src);
                }
                Directive::Unknown(t) => eprintln!("dtld: warning: {}: ignoring unknown argument: {t}", self.r.files[f].name),
                _ => {}
            }
        }
    }

    /// lld-link's `findLib` (with MinGW's `lib<name>.a` first) for `/defaultlib:`.
    fn add_default_lib(&mut self, name: &str) {
        if self.config.no_default_all || self.config.no_default_libs.iter().any(|n| n.eq_ignore_ascii_case(name)) {
            return;
        }
        if self.default_libs.iter().any(|n| n.eq_ignore_ascii_case(name)) {
            return;
        }
        self.default_libs.push(name.to_string());
        let mut cands = Vec::new();
        if self.config.mingw && !name.contains('/') && !name.contains('\\') {
            let stem = name.rsplit_once('.').map(|(s, _)| s).unwrap_or(name);
            cands.push(format!("lib{stem}.a"));
        }
        if Path::new(name).extension().is_none() {
            cands.push(format!("{name}.lib"));
        } else {
            cands.push(name.to_string());
        }
        for c in &cands {
            if Path::new(c).is_absolute() && Path::new(c).exists() {
                self.enqueue_path(CoffInput::new(PathBuf::from(c), false));
                return;
            }
            for d in &self.config.lib_paths {
                let p = d.join(c);
                if p.exists() {
                    self.enqueue_path(CoffInput::new(p, false));
                    return;
                }
            }
        }
        // lld-link ignores default libraries it cannot find.
    }

    /// lld's `checkFailIfMismatch`: every `/failifmismatch:key=value` (command line and
    /// `.drectve`) must agree on each key's value.
    fn fail_if_mismatch(&mut self, key: &str, value: &str, source: String) {
        if let Some((old, old_src)) = self.must_match.get(key) {
            if old != value {
                self.errors.push(format!("/failifmismatch: mismatch detected for '{key}':\n>>> {old_src} has value {old}\n>>> {source} has value {value}"));
            }
        }
        self.must_match.insert(key.to_string(), (value.to_string(), source));
    }

    /// lld's `convertResources`: one resource object links as it is; `.res` files and several
    /// resource objects (MinGW only) become one object written like `llvm-cvtres`'s.
    fn convert_resources(&mut self) -> Result<()> {
        let config = self.config;
        let objs = std::mem::take(&mut self.rsrc_objs);
        let res = std::mem::take(&mut self.res_files);
        if !config.mingw && (objs.len() > 1 || (objs.len() == 1 && !res.is_empty())) {
            let second = if !res.is_empty() { super::resources::INTERNAL_NAME.to_string() } else { self.r.files[objs[1].0].name.clone() };
            crate::bail!("{second}: more than one resource obj file not allowed, already got {}", self.r.files[objs[0].0].name);
        }
        if res.is_empty() && objs.len() <= 1 {
            for (f, secs) in objs {
                self.r.files[f].chunks.extend(secs.into_iter().map(ChunkSrc::Sec));
            }
            return Ok(());
        }
        let mut tree = super::resources::Tree::new(config.mingw);
        let mut dups = Vec::new();
        for (name, data) in &res {
            tree.add_res(name, data, &mut dups).map_err(Error::new)?;
        }
        for (f, _) in &objs {
            let file = &self.r.files[*f];
            if let Kind::Obj(o) = &file.kind {
                tree.add_object(&file.name, o, &mut dups).map_err(Error::new)?;
            }
        }
        if config.mingw {
            tree.clean_up_manifests(&mut dups);
        }
        if !dups.is_empty() {
            if config.allow_multiple {
                for d in &dups {
                    config.diag.warn(d);
                }
            } else {
                return Err(Error::many(dups));
            }
        }
        let bytes: &'static [u8] = Box::leak(tree.write_coff(config.timestamp.unwrap_or(0)).into_boxed_slice());
        let before = self.rsrc_objs.len();
        self.add_buffer(bytes, super::resources::INTERNAL_NAME, "", None);
        for (f, secs) in self.rsrc_objs.drain(before..).collect::<Vec<_>>() {
            self.r.files[f].chunks.extend(secs.into_iter().map(ChunkSrc::Sec));
        }
        if !self.errors.is_empty() {
            return Err(Error::many(std::mem::take(&mut self.errors)));
        }
        Ok(())
    }

    /// lld's `wrapSymbols`: every object's reference to `x` now means `__wrap_x`, and to
    /// `__real_x` means `x`.
    fn wrap_symbols(&mut self) {
        if self.wrapped.is_empty() {
            return;
        }
        let mut map = HashMap::new();
        for &(sym, real, wrap) in &self.wrapped {
            map.insert(sym, wrap);
            map.insert(real, sym);
        }
        for f in &mut self.r.files {
            for s in &mut f.syms {
                if let SymRef::Global(id) = s {
                    if let Some(&to) = map.get(id) {
                        *s = SymRef::Global(to);
                    }
                }
            }
        }
        for &(sym, real, wrap) in &self.wrapped.clone() {
            // No reference to `__real_x` is left; `__wrap_x` must now be defined if used.
            if self.r.symbols[real].def == Def::Undefined {
                self.r.symbols[real].used_in_regular = false;
            }
            self.r.symbols[wrap].used_in_regular = true;
            let _ = sym;
        }
    }

    /// `/verbose` output (lld's `Log`).
    fn log(&self, msg: &str) {
        if self.config.verbose {
            eprintln!("dtld: {msg}");
        }
    }

    /// lld's `findMangle` for x86-64: the symbol itself if it is not undefined (an undefined
    /// one counts through its weak alias), else a C++ function of that name (`?name@@Y...`).
    fn find_mangle(&self, name: &str) -> Option<SymId> {
        if let Some(id) = self.r.find(name) {
            if self.r.symbols[id].def != Def::Undefined {
                return Some(id);
            }
            let mut cur = self.r.symbols[id].weak_alias;
            for _ in 0..100 {
                let Some(t) = cur else { break };
                if self.r.symbols[t].def != Def::Undefined {
                    return Some(t);
                }
                cur = self.r.symbols[t].weak_alias;
            }
            // An undefined symbol without a defined alias: look for its C++ mangling.
        }
        let prefix = format!("?{name}@@Y");
        self.r.symbols.iter().position(|s| s.name.starts_with(&prefix))
    }

    /// lld's `findUnderscoreMangle`: a definition (or lazy archive symbol) exists.
    fn find_underscore_mangle(&self, name: &str) -> bool {
        self.find_mangle(name).is_some_and(|id| self.r.symbols[id].def != Def::Undefined)
    }

    /// lld's `mangleMaybe`: an undefined symbol with a C++-mangled definition gets it as weak
    /// alias.
    fn mangle_maybe(&mut self, id: SymId) {
        if self.r.symbols[id].def != Def::Undefined || self.r.symbols[id].weak_alias.is_some() {
            return;
        }
        let Some(m) = self.find_mangle(self.r.symbols[id].name) else { return };
        if m == id {
            return;
        }
        let mname = self.r.symbols[m].name;
        self.log(&format!("{} aliased to {mname}", self.r.symbols[id].name));
        let t = self.add_undefined(mname, false);
        self.r.symbols[id].weak_alias = Some(t);
    }

    /// lld-link's `inferSubsystem`; `None`: nothing to infer it from.
    fn infer_subsystem(&self) -> Option<u16> {
        if self.config.dll {
            return Some(2);
        }
        if self.config.mingw {
            return Some(3);
        }
        let main = self.find_underscore_mangle("main");
        let wmain = self.find_underscore_mangle("wmain");
        let winmain = self.find_underscore_mangle("WinMain");
        let wwinmain = self.find_underscore_mangle("wWinMain");
        if main || wmain {
            if winmain || wwinmain {
                crate::diag::warn_plain(&format!(
                    "found {} and {}; defaulting to /subsystem:console",
                    if main { "main" } else { "wmain" },
                    if winmain { "WinMain" } else { "wWinMain" }
                ));
            }
            return Some(3);
        }
        (winmain || wwinmain).then_some(2)
    }

    /// lld-link's `findDefaultEntry`.
    fn find_default_entry(&self) -> &'static str {
        if self.config.mingw {
            return if self.r.subsystem == 2 { "WinMainCRTStartup" } else { "mainCRTStartup" };
        }
        if self.r.subsystem == 2 {
            if self.find_underscore_mangle("wWinMain") {
                if !self.find_underscore_mangle("WinMain") {
                    return "wWinMainCRTStartup";
                }
                crate::diag::warn_plain("found both wWinMain and WinMain; using latter");
            }
            return "WinMainCRTStartup";
        }
        if self.find_underscore_mangle("wmain") {
            if !self.find_underscore_mangle("main") {
                return "wmainCRTStartup";
            }
            crate::diag::warn_plain("found both wmain and main; using latter");
        }
        "mainCRTStartup"
    }

    /// Pass 1: every input read and bound, MinGW's automatic imports loaded and the exports
    /// chosen — what lld has done when it calls `compileBitcodeFiles`.
    pub fn start(&mut self) -> Result<()> {
        let config = self.config;
        for (k, v) in &config.fail_if_mismatch {
            self.fail_if_mismatch(k, v, "cmd-line".into());
        }
        // lld-link's `isWholeArchive`: an input is read whole when the same file (by identity,
        // not by spelling) is also named as a whole archive; `enqueue_path` skips the repeat.
        let whole: HashSet<PathBuf> = config.inputs.iter().filter(|i| i.whole_archive).filter_map(|i| std::fs::canonicalize(&i.path).ok()).collect();
        for i in &config.inputs {
            let mut i = i.clone();
            i.whole_archive |= !whole.is_empty() && std::fs::canonicalize(&i.path).is_ok_and(|p| whole.contains(&p));
            self.enqueue_path(i);
        }
        for l in &config.default_libs {
            self.add_default_lib(l);
        }
        self.run();
        if !self.errors.is_empty() {
            return Err(Error::many(std::mem::take(&mut self.errors)));
        }
        self.convert_resources()?;
        // lld stops after reading the command line's files if any of them clashed.
        if !self.duplicates.is_empty() {
            return Err(Error::many(std::mem::take(&mut self.duplicates)));
        }
        // Subsystem and entry point (they depend on the symbols read so far): lld-link's
        // `inferSubsystem` and `findDefaultEntry`.
        self.r.subsystem = match config.subsystem.filter(|&s| s != 0) {
            Some(s) => s,
            None => match self.infer_subsystem() {
                Some(s) => s,
                None => crate::bail!("subsystem must be defined"),
            },
        };
        if let Some(e) = &config.entry {
            if e.is_empty() {
                crate::bail!("missing entry point symbol name");
            }
            self.r.entry = Some(self.add_undefined(e, false));
        } else if !config.no_entry {
            let name = if config.dll {
                if config.mingw { "DllMainCRTStartup" } else { "_DllMainCRTStartup" }
            } else {
                let s = self.find_default_entry();
                self.log(&format!("Entry name inferred: {s}"));
                s
            };
            self.r.entry = Some(self.add_undefined(name, false));
        }
        // Symbols the linker defines (lld's Driver: before the resolution loop).
        if config.mingw || config.pseudo_relocs {
            self.add_absolute("__RUNTIME_PSEUDO_RELOC_LIST__", 0, None);
            self.add_absolute("__RUNTIME_PSEUDO_RELOC_LIST_END__", 0, None);
        }
        if config.mingw {
            self.add_absolute("__CTOR_LIST__", 0, None);
            self.add_absolute("__DTOR_LIST__", 0, None);
            for n in ["__data_start__", "__data_end__", "__bss_start__", "__bss_end__"] {
                self.add_absolute(n, 0, None);
            }
        }
        self.add_synthetic("__ImageBase", Synth::ImageBase);
        for g in ["__guard_fids_count", "__guard_fids_table", "__guard_flags", "__guard_iat_count", "__guard_iat_table", "__guard_longjmp_count", "__guard_longjmp_table", "__enclave_config", "__guard_eh_cont_count", "__guard_eh_cont_table"] {
            self.add_absolute(g, 0, None);
        }
        for n in config.includes.clone() {
            self.add_undefined(&n, false);
        }
        loop {
            let specs = self.export_specs.clone();
            for e in specs.iter().filter(|e| e.forward_to.is_none()) {
                self.add_undefined(e.internal.as_deref().unwrap_or(&e.name), false);
            }
            for (from, to) in self.alternate_names.clone() {
                if let Some(id) = self.r.find(&from) {
                    if self.r.symbols[id].def == Def::Undefined && self.r.symbols[id].weak_alias.is_none() {
                        let t = self.add_undefined(&to, false);
                        self.r.symbols[id].weak_alias = Some(t);
                    }
                }
            }
            if self.r.find("_load_config_used").is_some() {
                self.add_undefined("_load_config_used", false);
            }
            // lld's `mangleMaybe`: an entry point only defined as a C++ function
            // (`?main@@YAHXZ`) is reached through a weak alias.
            if let Some(e) = self.r.entry {
                self.mangle_maybe(e);
            }
            for n in config.include_optional.clone() {
                if self.r.find(&n).is_some_and(|id| self.is_lazy(id)) {
                    self.add_undefined(&n, false);
                }
            }
            if !self.run() {
                break;
            }
        }
        // lld's `addWrappedSymbols`: `__real_x` and `__wrap_x` for every wrapped `x` that exists.
        let mut seen = HashSet::new();
        for name in &config.wrap {
            if !seen.insert(name.as_str()) {
                continue;
            }
            let Some(sym) = self.r.find(name) else { continue };
            let real = self.add_undefined(&format!("__real_{name}"), false);
            let wrap = self.add_undefined(&format!("__wrap_{name}"), false);
            self.r.symbols[sym].used_in_regular = true;
            self.r.symbols[sym].deferred = true;
            self.r.symbols[real].deferred = true;
            self.wrapped.push((sym, real, wrap));
        }
        self.run();
        if config.mingw && config.auto_import {
            // lld's loadMinGWSymbols: load `__imp_foo` for an undefined `foo`.
            for id in 0..self.r.symbols.len() {
                let s = &self.r.symbols[id];
                if s.def != Def::Undefined || s.weak_alias.is_some() || s.name.starts_with("__imp_") {
                    continue;
                }
                let imp = format!("__imp_{}", s.name);
                if let Some(l) = self.r.find(&imp) {
                    if !self.r.symbols[l].pending_load && self.is_lazy(l) {
                        self.force_lazy(l);
                    }
                }
            }
            self.run();
        }
        if !self.errors.is_empty() {
            return Err(Error::many(std::mem::take(&mut self.errors)));
        }
        // Before LTO, as lld 22 does: exported bitcode definitions must stay visible.
        if config.mingw || config.export_all {
            self.auto_export();
        }
        Ok(())
    }

    /// lld's `reportUnresolvable`, before LTO spends time on a link that cannot succeed: every
    /// undefined symbol no alias, local definition or automatic import will resolve, referenced
    /// from objects or bitcode.
    pub fn report_unresolvable(&self) -> Result<()> {
        let mut undefs = Vec::new();
        for (id, s) in self.r.symbols.iter().enumerate() {
            if s.def != Def::Undefined || s.deferred {
                continue;
            }
            let mut cur = s.weak_alias;
            let mut aliased = false;
            for _ in 0..100 {
                let Some(t) = cur else { break };
                if self.r.symbols[t].def != Def::Undefined {
                    aliased = true;
                    break;
                }
                cur = self.r.symbols[t].weak_alias;
            }
            if aliased {
                continue;
            }
            let defined = |n: &str| self.r.find(n).is_some_and(|t| !matches!(self.r.symbols[t].def, Def::Undefined | Def::Lazy(..)));
            if let Some(base) = s.name.strip_prefix("__imp_") {
                if defined(base) {
                    continue;
                }
            }
            if s.name.contains("_PchSym_") {
                continue;
            }
            if self.config.auto_import && !s.name.starts_with("__imp_") && defined(&format!("__imp_{}", s.name)) {
                continue;
            }
            undefs.push(id);
        }
        if undefs.is_empty() {
            return Ok(());
        }
        let msgs = self.problem_messages(&undefs, true);
        let n = msgs.len();
        Err(Error::many(msgs.into_iter().enumerate().map(|(i, m)| if i + 1 < n && m.contains('\n') { format!("{m}\n") } else { m }).collect()))
    }

    /// The resolution as pass 1 left it (LTO reads the bitcode bindings from here).
    pub fn resolved(&self) -> &Resolved {
        &self.r
    }

    /// Pass 2 and the rest: remaining undefined symbols (weak externals, `__imp_` of local
    /// definitions, auto-import), the writer's symbols, crtend.o last, the export list.
    pub fn finish(mut self) -> Result<Resolved> {
        let config = self.config;
        self.wrap_symbols();
        self.resolve_remaining()?;
        // The writer's symbols replace whatever defined them (lld's `insertCtorDtorSymbols` and
        // `createRuntimePseudoRelocs` use `replaceSymbol` unconditionally).
        if config.auto_import && config.pseudo_relocs {
            self.add_synthetic("__RUNTIME_PSEUDO_RELOC_LIST__", Synth::PseudoRelocList);
            self.add_synthetic("__RUNTIME_PSEUDO_RELOC_LIST_END__", Synth::PseudoRelocListEnd);
        }
        if config.mingw {
            self.add_synthetic("__CTOR_LIST__", Synth::CtorList);
            self.add_synthetic("__DTOR_LIST__", Synth::DtorList);
            for (name, s) in [("__data_start__", Synth::DataStart), ("__data_end__", Synth::DataEnd), ("__bss_start__", Synth::BssStart), ("__bss_end__", Synth::BssEnd)] {
                self.add_synthetic(name, s);
            }
        }
        if config.mingw {
            if let Some(p) = self.r.obj_order.iter().position(|&f| is_crtend(&self.r.files[f].obj_name)) {
                let f = self.r.obj_order.remove(p);
                self.r.obj_order.push(f);
            }
        }
        let mut exports = Vec::new();
        for e in std::mem::take(&mut self.export_specs) {
            let n = e.internal.clone().unwrap_or_else(|| e.name.clone());
            let id = self.r.find(&n).unwrap_or_else(|| self.insert(&n).0);
            exports.push((e, id));
        }
        self.r.exports = exports;
        if !self.duplicates.is_empty() {
            return Err(Error::many(self.duplicates));
        }
        let live_before: Vec<Vec<bool>> = if config.verbose { self.r.files.iter().map(|f| f.live.clone()).collect() } else { Vec::new() };
        if config.do_gc() {
            let roots = super::gc::roots(&self.r, config, &self.include, &self.alternate_names);
            super::gc::mark_live(&mut self.r, &roots, config.mingw);
        }
        if config.do_icf() {
            for line in super::icf::fold(&mut self.r, config) {
                self.log(&line);
            }
        }
        if config.verbose {
            // lld's `printDiscardedMessage` for every section chunk `/opt:ref` dropped.
            for &f in &self.r.obj_order {
                let file = &self.r.files[f];
                for c in &file.chunks {
                    let ChunkSrc::Sec(k) = *c else { continue };
                    if live_before[f].get(k as usize) == Some(&true) && !file.live[k as usize] && !self.r.icf_folded.contains_key(&(f, k)) {
                        if let Some(&i) = file.leaders.get(&k) {
                            self.log(&format!("Discarded {}", self.r.obj(f).symbols[i as usize].name));
                        }
                    }
                }
            }
        }
        Ok(self.r)
    }

    /// MinGW: with no explicit exports, a DLL exports every eligible definition (lld's
    /// `maybeExportMinGWSymbols` with the `AutoExporter` rules).
    fn auto_export(&mut self) {
        let config = self.config;
        let mut ae = super::exports::AutoExporter::new(&self.r.exclude_symbols, &[], config.exclude_all);
        for i in config.inputs.iter().filter(|i| i.whole_archive) {
            ae.add_whole_archive(&i.path.to_string_lossy());
        }
        if !ae.enabled(config.dll, config.export_all, !self.export_specs.is_empty()) {
            return;
        }
        let mut ids: Vec<SymId> = (0..self.r.symbols.len()).collect();
        ids.sort_by(|&a, &b| self.r.symbols[a].name.cmp(self.r.symbols[b].name));
        let mut named: HashSet<String> = self.export_specs.iter().map(|e| e.name.clone()).collect();
        for id in ids {
            let s = &self.r.symbols[id];
            let (f, idx) = match s.def {
                Def::Regular(f, idx) | Def::Common(f, idx, _) => (f, idx),
                Def::Bitcode(f, k) => {
                    // A bitcode definition (lld gives it a fake chunk: code or data).
                    let file = &self.r.files[f];
                    let Kind::Bitcode(b) = &file.kind else { continue };
                    let exec = b.sym(k).executable();
                    let archive = (!file.parent.is_empty()).then_some(file.parent.as_str());
                    if s.pseudo_reloc || named.contains(s.name) || !ae.should_export_from(s.name, archive, &file.obj_name) {
                        continue;
                    }
                    named.insert(s.name.to_string());
                    self.export_names.insert(s.name.to_string());
                    self.export_specs.push(ExportSpec { name: s.name.to_string(), data: !exec, ..Default::default() });
                    self.r.symbols[id].used_in_regular = true;
                    continue;
                }
                _ => continue,
            };
            if s.pseudo_reloc || named.contains(s.name) {
                continue;
            }
            let file = &self.r.files[f];
            let Kind::Obj(obj) = &file.kind else { continue };
            // Members of dlltool-style import libraries (their thunks are imports, not ours).
            if obj.sections.iter().any(|s| s.name.starts_with(".idata$")) {
                continue;
            }
            let sym = &obj.symbols[idx as usize];
            let exec = match sym.section {
                n if n > 0 => {
                    if !file.live[n as usize - 1] {
                        continue;
                    }
                    obj.sections[n as usize - 1].chars & ::object::pe::IMAGE_SCN_MEM_EXECUTE != 0
                }
                0 => false, // common
                _ => continue,
            };
            let archive = (!file.parent.is_empty()).then_some(file.parent.as_str());
            if !ae.should_export_from(s.name, archive, &file.obj_name) {
                continue;
            }
            named.insert(s.name.to_string());
            self.export_names.insert(s.name.to_string());
            self.export_specs.push(ExportSpec { name: s.name.to_string(), data: !exec, ..Default::default() });
            self.r.symbols[id].used_in_regular = true;
        }
    }

    /// LTO's view of pass 1: every loaded bitcode file (in load order) with lld's COFF
    /// resolution of each of its symbols — `p` when this file's definition won, `x` when
    /// native code or the command line sees the symbol (lld/COFF/LTO.cpp sets no `l`, and
    /// `r` only for `--wrap`, which the COFF flavours do not have).
    pub fn lto_modules(&self) -> Vec<crate::lto::LtoModule<'_>> {
        let mut out = Vec::new();
        for (f, file) in self.r.files.iter().enumerate() {
            let Kind::Bitcode(b) = &file.kind else { continue };
            let flags = (0..b.syms.len())
                .map(|k| {
                    let name = std::str::from_utf8(b.sym(k).name).unwrap_or("");
                    let sym = self.r.find(name).map(|id| &self.r.symbols[id]);
                    let res = crate::elf::lto::SymRes {
                        prevailing: !b.sym(k).undefined() && sym.is_some_and(|s| s.def == Def::Bitcode(f, k)),
                        visible_to_regular: sym.is_some_and(|s| s.used_in_regular),
                        final_in_unit: false,
                        // `--wrap`: LTO must not inline what the linker renames (lld's
                        // `canInline = false`).
                        linker_redefined: sym.is_some_and(|_| self.r.find(name).is_some_and(|id| self.wrapped.iter().any(|&(s, r, _)| s == id || r == id))),
                    };
                    res.flags()
                })
                .collect();
            out.push(crate::lto::LtoModule { bitcode: b, flags });
        }
        out
    }

    /// Pass 2: the objects LTO compiled replace the bitcode definitions (lld undefines the
    /// prevailing bitcode symbols, then reads the new objects like any other input).
    pub fn add_lto_objects(&mut self, objects: &[crate::input::InputFile]) -> Result<()> {
        for s in &mut self.r.symbols {
            if let Def::Bitcode(..) = s.def {
                s.def = Def::Undefined;
                s.comdat = false;
                s.bitcode_common = 0;
            }
        }
        for o in objects {
            self.add_buffer(o.data, &o.name, "", None);
        }
        self.run();
        if self.errors.is_empty() { Ok(()) } else { Err(Error::many(std::mem::take(&mut self.errors))) }
    }

    /// lld's `resolveRemainingUndefines` and `reportUnresolvable`.
    fn resolve_remaining(&mut self) -> Result<()> {
        let mut undefs = Vec::new();
        for id in 0..self.r.symbols.len() {
            // Only what native code or the command line refers to matters (lld reports the
            // undefined symbols object files reference): a reference from bitcode that LTO
            // optimized away, or an internalized bitcode definition, is not an error.
            if self.r.symbols[id].def != Def::Undefined || !self.r.symbols[id].used_in_regular {
                continue;
            }
            // Weak alias chain.
            let mut seen = 0;
            let mut cur = self.r.symbols[id].weak_alias;
            let mut found = None;
            while let Some(t) = cur {
                seen += 1;
                if seen > 100 {
                    break;
                }
                match self.r.symbols[t].def {
                    Def::Undefined => cur = self.r.symbols[t].weak_alias,
                    Def::Lazy(..) => break,
                    d => {
                        found = Some((d, self.r.symbols[t].pseudo_reloc, self.r.symbols[t].comdat));
                        break;
                    }
                }
            }
            if let Some((d, p, c)) = found {
                let s = &mut self.r.symbols[id];
                s.def = d;
                s.pseudo_reloc = p;
                s.comdat = c;
                continue;
            }
            let name = self.r.symbols[id].name;
            if let Some(base) = name.strip_prefix("__imp_") {
                if let Some(t) = self.r.find(base) {
                    if !matches!(self.r.symbols[t].def, Def::Undefined | Def::Lazy(..)) {
                        self.r.symbols[id].def = Def::LocalImport(t);
                        self.r.local_imports.push(id);
                        continue;
                    }
                }
            }
            if self.config.auto_import && !name.starts_with("__imp_") {
                if let Some(imp) = self.r.find(&format!("__imp_{name}")) {
                    if let d @ (Def::ImportData(_) | Def::Regular(..)) = self.r.symbols[imp].def {
                        self.r.symbols[id].def = d;
                        self.r.symbols[id].pseudo_reloc = true;
                        self.drop_refptr(name, id, d);
                        continue;
                    }
                }
            }
            undefs.push(id);
        }
        self.warn_local_imports();
        if undefs.is_empty() {
            return Ok(());
        }
        let msgs = self.problem_messages(&undefs, false);
        if self.config.force_unresolved {
            // `/force:unresolved`: lld warns and links, the references resolving to 0.
            for m in &msgs {
                self.config.diag.warn(m);
            }
            return Ok(());
        }
        // lld separates a multi-line diagnostic from the next by a blank line.
        let n = msgs.len();
        let mut out: Vec<String> = msgs.into_iter().enumerate().map(|(i, m)| if i + 1 < n && m.contains('\n') { format!("{m}\n") } else { m }).collect();
        if out.len() > self.config.error_limit && self.config.error_limit > 0 {
            out.truncate(self.config.error_limit);
            out.push(format!("too many errors emitted, stopping now (use {} to see all errors)", if self.config.mingw { "--error-limit=0" } else { "/errorlimit:0" }));
        }
        Err(Error::many(out))
    }

    /// lld's LNK4217 warning: an object imports (`__imp_x`) what another object defines; once
    /// per object and symbol (`/ignore:4217` silences it; MinGW does not warn).
    fn warn_local_imports(&self) {
        if self.config.mingw || self.r.local_imports.is_empty() {
            return;
        }
        let locals: HashSet<SymId> = self.r.local_imports.iter().copied().collect();
        for &f in &self.r.obj_order {
            let mut seen = HashSet::new();
            for r in &self.r.files[f].syms {
                let SymRef::Global(id) = *r else { continue };
                if !locals.contains(&id) || !seen.insert(id) {
                    continue;
                }
                let Def::LocalImport(t) = self.r.symbols[id].def else { continue };
                let def_file = match self.r.symbols[t].def {
                    Def::Regular(df, _) | Def::Common(df, _, _) | Def::Bitcode(df, _) => self.r.files[df].name.clone(),
                    _ => "<internal>".into(),
                };
                let msg = format!("{}: locally defined symbol imported: {} (defined in {def_file}) [LNK4217]", self.r.files[f].name, demangle(self.r.symbols[t].name, self.config.demangle));
                self.config.diag.warn_code("4217", &msg);
            }
        }
    }

    /// MinGW: a `.refptr.<name>` holding only a pointer to an auto-imported `name` is replaced
    /// by the IAT slot itself (lld's `handleMinGWAutomaticImport`).
    fn drop_refptr(&mut self, name: &str, sym: SymId, imp: Def) {
        let Some(r) = self.r.find(&format!(".refptr.{name}")) else { return };
        let Def::Regular(f, idx) = self.r.symbols[r].def else { return };
        let file = &self.r.files[f];
        let Kind::Obj(obj) = &file.kind else { return };
        let s = &obj.symbols[idx as usize];
        let Some(sec) = (s.section as usize).checked_sub(1) else { return };
        let section = &obj.sections[sec];
        if section.size != 8 || section.relocs.len() != 1 {
            return;
        }
        let target = section.relocs[0].symbol_table_index.get(::object::LittleEndian) as usize;
        if file.syms.get(target) != Some(&SymRef::Global(sym)) {
            return;
        }
        self.r.files[f].live[sec] = false;
        let rs = &mut self.r.symbols[r];
        rs.def = imp;
    }

    /// lld's `reportProblemSymbols`: undefined GC roots (entry, `/include:`, exports) as
    /// `<root>: undefined symbol: x`, then every undefined symbol in the order objects (and,
    /// before LTO, bitcode files) first refer to it, with up to three `>>> referenced by` lines.
    fn problem_messages(&self, undefs: &[SymId], with_bitcode: bool) -> Vec<String> {
        let dm = self.config.demangle;
        let mut msgs = Vec::new();
        let undef_set: HashSet<SymId> = undefs.iter().copied().collect();
        let mut roots: Vec<SymId> = self.r.entry.into_iter().collect();
        roots.extend(self.include.iter().filter_map(|n| self.r.find(n)));
        roots.extend(self.export_specs.iter().filter(|e| e.forward_to.is_none()).filter_map(|e| self.r.find(e.internal.as_deref().unwrap_or(&e.name))));
        let mut root_seen = HashSet::new();
        for id in roots {
            if undef_set.contains(&id) && root_seen.insert(id) {
                msgs.push(format!("<root>: undefined symbol: {}", demangle(self.r.symbols[id].name, dm)));
            }
        }
        // (symbol, [(file, symbol-table index)]) in first-reference order.
        let mut diags: Vec<(SymId, Vec<(FileId, usize)>)> = Vec::new();
        let mut first: HashMap<SymId, usize> = HashMap::new();
        let mut note = |id: SymId, f: FileId, idx: usize, diags: &mut Vec<(SymId, Vec<(FileId, usize)>)>| match first.get(&id) {
            Some(&k) => diags[k].1.push((f, idx)),
            None => {
                first.insert(id, diags.len());
                diags.push((id, vec![(f, idx)]));
            }
        };
        for &f in &self.r.obj_order {
            for (idx, r) in self.r.files[f].syms.iter().enumerate() {
                if let SymRef::Global(id) = *r {
                    if undef_set.contains(&id) {
                        note(id, f, idx, &mut diags);
                    }
                }
            }
        }
        if with_bitcode {
            for (f, file) in self.r.files.iter().enumerate() {
                let Kind::Bitcode(b) = &file.kind else { continue };
                for k in 0..b.syms.len() {
                    let name = String::from_utf8_lossy(b.sym(k).name);
                    if let Some(id) = self.r.find(&name) {
                        if undef_set.contains(&id) {
                            note(id, f, k, &mut diags);
                        }
                    }
                }
            }
        }
        const MAX_REFS: usize = 3;
        for (id, refs) in diags {
            let mut m = format!("undefined symbol: {}", demangle(self.r.symbols[id].name, dm));
            let (mut shown, mut total) = (0, 0);
            for (f, idx) in refs {
                let (lines, n) = match self.r.files[f].kind {
                    Kind::Bitcode(_) => {
                        let v = if shown < MAX_REFS { vec![super::locations::bitcode_reference(&self.r, f)] } else { Vec::new() };
                        (v, 1)
                    }
                    _ => super::locations::symbol_locations(&self.r, f, idx, MAX_REFS - shown, self.config.mingw, dm),
                };
                total += n;
                shown += lines.len();
                m.push_str(&lines.concat());
            }
            if shown < total {
                m.push_str(&format!("\n>>> referenced {} more times", total - shown));
            }
            let name = self.r.symbols[id].name;
            // lld's hint for a dllimport reference that only an archive's plain definition matches.
            if let Some(Def::Lazy(a, _)) = name.strip_prefix("__imp_").and_then(|n| self.r.find(n)).map(|t| self.r.symbols[t].def) {
                m.push_str(&format!("\nNOTE: a relevant symbol '{}' is available in {} but cannot be used because it is not an import library.", &name[6..], self.archives[a].path));
            }
            msgs.push(m);
        }
        msgs
    }
}

use ::object::pe as object_pe;


/// lld's `readSection` filter: sections that never become chunks.
fn keep_section(s: &object::Section, include_dwarf: bool) -> bool {
    if s.name == ".drectve" || s.name == ".llvm_addrsig" || s.name == ".llvm.call-graph-profile" || s.name == ".deplibs" {
        return false;
    }
    if s.name == ".debug" || s.name.starts_with(".debug$") {
        return false;
    }
    if s.name.starts_with(".debug_") && !include_dwarf {
        return false;
    }
    s.chars & object_pe::IMAGE_SCN_LNK_REMOVE == 0
}

/// External definitions of an archive member (for archives without a symbol table).
fn member_symbols(data: &'static [u8]) -> Vec<String> {
    if implib::is_short_import(data) {
        return match implib::parse_short_import(data) {
            Ok(i) => {
                let mut v = vec![format!("__imp_{}", i.symbol)];
                if i.kind != ImportKind::Data {
                    v.push(i.symbol);
                }
                v
            }
            Err(_) => Vec::new(),
        };
    }
    if crate::lto::irsymtab::is_bitcode(data) {
        return match crate::lto::irsymtab::parse(data) {
            Ok(ir) => ir.lto_symbols().filter(|s| !s.undefined()).map(|s| String::from_utf8_lossy(s.name).into_owned()).collect(),
            Err(_) => Vec::new(),
        };
    }
    match object::parse(data) {
        Ok(o) => o.symbols.iter().filter(|s| !s.is_aux && s.is_external() && s.section != 0).map(|s| s.name.to_string()).collect(),
        Err(_) => Vec::new(),
    }
}
