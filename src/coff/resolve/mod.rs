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
use super::demangle::display as demangle;
use super::symtab::{ChunkSrc, Def, FileId, Kind, Resolved, SymId, SymRef, Symbol, Synth};
use crate::error::{Error, Result};

mod comdat;
mod directives;
mod entry;
mod load;
mod mingw;
mod objfile;
mod report;

struct Archive {
    path: String,
    /// A thin archive: members are files next to it.
    thin: bool,
    /// Not an archive: one object between `/start-lib` and `/end-lib` (a lazy object, loaded
    /// like an archive member but named as a plain file).
    lazy_object: bool,
    /// A DLL given to a MinGW link: its "members" are the import members of its exports
    /// (`dllinput.rs`), each named by the DLL's own name, as lld names them.
    dll: bool,
    /// Member header offset → (name, bytes).
    members: HashMap<usize, (String, &'static [u8])>,
    /// Thin-archive members that could not be read: offset → (name, reason). As lld-link, it
    /// is an error only when a symbol extracts the member.
    unreadable: HashMap<usize, (String, String)>,
    seen: HashSet<usize>,
}

enum Task {
    Path(CoffInput),
    /// An archive member: (archive, member offset, the symbol that asked for it, for
    /// `/verbose`'s `Loaded lib(member) for sym`).
    Member(usize, usize, String),
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
    /// LTO has compiled the bitcode: a bitcode file read from now on comes too late.
    lto_done: bool,
    /// The `.drectve` exports seen, each kept once.
    directive_exports: HashSet<ExportSpec>,
    /// The command line's exports have been added to the link: a `.drectve` export read from
    /// now on follows them in lld's list.
    exports_added: bool,
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
                includes: Vec::new(),
                alternate_names: Vec::new(),
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
            lto_done: false,
            directive_exports: HashSet::new(),
            exports_added: false,
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
        let name: &'static str = crate::util::keep::str(name.to_string());
        let id = self.r.symbols.len();
        self.r.symbols.push(Symbol {
            name,
            def: Def::Undefined,
            weak_alias: None,
            pending_load: false,
            pseudo_reloc: false,
            comdat: false,
            used_in_regular: false,
            weak_def: false,
            bitcode_common: 0,
            deferred: false,
        });
        self.r.by_name.insert(name, id);
        (id, true)
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
        if matches!(sym.def, Def::Undefined | Def::Lazy(..) | Def::Absolute(_))
            || matches!(s, Synth::CtorList | Synth::DtorList | Synth::PseudoRelocList | Synth::PseudoRelocListEnd)
        {
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

    /// Loads member `off` of archive `a`, extracted for `why` (a symbol, or `<whole-archive>`);
    /// `named_off` is the offset its LTO module is named with (lld-link's `addArchiveBuffer`).
    pub(super) fn load_member(&mut self, a: usize, off: usize, why: &str, named_off: usize) {
        let Some((name, data)) = self.archives[a].members.get(&off).cloned() else {
            if let Some((member, reason)) = self.archives[a].unreadable.get(&off) {
                let e = format!(
                    "could not get the buffer for the member defining symbol {}: {}({member}): {reason}",
                    demangle(why, self.config.demangle),
                    self.archives[a].path
                );
                self.errors.push(e);
            }
            return;
        };
        if self.archives[a].lazy_object {
            self.add_buffer(data, &name, "", None);
            return;
        }
        if self.archives[a].dll {
            // lld's `DLLFile::makeImport`: the import file is named by the DLL's name alone.
            match crate::coff::implib::parse_short_import(data) {
                Ok(imp) => self.add_short_import(imp, name.clone(), &name, ""),
                Err(e) => self.errors.push(format!("{name}: {e}")),
            }
            return;
        }
        let parent = self.archives[a].path.clone();
        let thin = self.archives[a].thin;
        if let (true, Some(r)) = (thin, &self.config.repro) {
            // lld reads a thin archive's member when it is extracted.
            r.read(&Path::new(&parent).parent().unwrap_or(Path::new("")).join(&name), data);
        }
        let before = self.r.files.len();
        self.add_buffer(data, &name, &parent, Some((named_off, thin)));
        // lld's addArchiveBuffer logs objects and bitcode, not import members.
        if self.config.verbose && self.r.files.len() > before && !matches!(self.r.files[before].kind, Kind::Import(_)) {
            self.log(&format!("Loaded {} for {}", self.r.files[before].name, demangle(why, self.config.demangle)));
        }
    }

    /// Runs the queue until empty. Returns whether anything was processed.
    fn run(&mut self) -> bool {
        let mut any = false;
        while let Some(t) = self.queue.pop_front() {
            any = true;
            match t {
                Task::Path(i) => self.load_path(&i),
                Task::Member(a, off, why) => self.load_member(a, off, &why, off),
            }
        }
        any
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
        let bytes: &'static [u8] = crate::util::keep::slice(tree.write_coff(config.timestamp.unwrap_or(0)));
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
            self.config.diag.log(msg);
        }
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
        // lld takes the machine from the first file that has one; with none read yet (only
        // archives so far) and no /machine, it assumes x64 aloud.
        if !config.machine_given && self.r.files.is_empty() {
            config.diag.warn("/machine is not specified. x64 is assumed");
        }
        self.convert_resources()?;
        // lld stops after reading the command line's files if any of them clashed.
        if !self.duplicates.is_empty() {
            return Err(Error::many(std::mem::take(&mut self.duplicates)));
        }
        if let Some(r) = &config.repro {
            r.response_point();
        }
        self.choose_entry()?;
        self.define_linker_symbols();
        for n in config.includes.clone() {
            self.add_undefined(&n, false);
        }
        self.exports_added = true;
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
        self.add_wrapped_symbols();
        self.run();
        if config.mingw && config.auto_import {
            self.load_mingw_imports();
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

    /// Subsystem and entry point (they depend on the symbols read so far): lld-link's
    /// `inferSubsystem` and `findDefaultEntry`.
    fn choose_entry(&mut self) -> Result<()> {
        let config = self.config;
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
                if config.mingw {
                    "DllMainCRTStartup"
                } else {
                    "_DllMainCRTStartup"
                }
            } else {
                let s = self.find_default_entry();
                self.log(&format!("Entry name inferred: {s}"));
                s
            };
            self.r.entry = Some(self.add_undefined(name, false));
        }
        Ok(())
    }

    /// Symbols the linker defines (lld's Driver: before the resolution loop).
    fn define_linker_symbols(&mut self) {
        let config = self.config;
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
        for g in [
            "__guard_fids_count",
            "__guard_fids_table",
            "__guard_flags",
            "__guard_iat_count",
            "__guard_iat_table",
            "__guard_longjmp_count",
            "__guard_longjmp_table",
            "__enclave_config",
            "__guard_eh_cont_count",
            "__guard_eh_cont_table",
        ] {
            self.add_absolute(g, 0, None);
        }
    }

    /// lld's `addWrappedSymbols`: `__real_x` and `__wrap_x` for every wrapped `x` that exists.
    fn add_wrapped_symbols(&mut self) {
        let config = self.config;
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
    }

    /// lld's loadMinGWSymbols: load `__imp_foo` for an undefined `foo`.
    fn load_mingw_imports(&mut self) {
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
            for (name, s) in
                [("__data_start__", Synth::DataStart), ("__data_end__", Synth::DataEnd), ("__bss_start__", Synth::BssStart), ("__bss_end__", Synth::BssEnd)]
            {
                self.add_synthetic(name, s);
            }
        }
        if config.mingw {
            self.move_crtend_last();
        }
        if !self.duplicates.is_empty() {
            return Err(Error::many(self.duplicates));
        }
        // lld's `fixupExports`: one export per name, with its warnings.
        let (specs, warnings) = crate::coff::drectve::unique_exports(std::mem::take(&mut self.export_specs)).map_err(Error::new)?;
        for w in &warnings {
            config.diag.warn(w);
        }
        let mut exports = Vec::new();
        for e in specs {
            let n = e.internal.clone().unwrap_or_else(|| e.name.clone());
            let id = self.r.find(&n).unwrap_or_else(|| self.insert(&n).0);
            exports.push((e, id));
        }
        self.r.exports = exports;
        // lld's driver, after the exports: `/aligncomm:` for a name the link never saw.
        let mut names: Vec<&String> = self.r.align_comm.keys().filter(|n| self.r.find(n).is_none()).collect();
        names.sort();
        for n in names {
            config.diag.warn(&format!("/aligncomm symbol {n} not found"));
        }
        if config.call_graph_profile_sort {
            check_call_graph_profiles(&self.r).map_err(Error::new)?;
        }
        // What GC's roots name (`gc::roots`), as the command line and the directives left them.
        self.r.includes = std::mem::take(&mut self.include);
        self.r.alternate_names = std::mem::take(&mut self.alternate_names);
        Ok(self.r)
    }

    /// LTO's view of pass 1: every loaded bitcode file (in load order) with lld's COFF
    /// resolution of each of its symbols — `p` when this file's definition won, `x` when
    /// native code or the command line sees the symbol (lld/COFF/LTO.cpp sets no `l`, and
    /// `r` only for `--wrap`, which the COFF flavours do not have).
    pub fn lto_modules(&self) -> Vec<crate::lto::bitcode::LtoModule<'_>> {
        let mut out = Vec::new();
        for (f, file) in self.r.files.iter().enumerate() {
            let Kind::Bitcode(b) = &file.kind else { continue };
            let flags = (0..b.syms.len())
                .map(|k| {
                    let name = std::str::from_utf8(b.sym(k).name).unwrap_or("");
                    let sym = self.r.find(name).map(|id| &self.r.symbols[id]);
                    let res = crate::lto::bitcode::SymRes {
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
            out.push(crate::lto::bitcode::LtoModule { bitcode: b, flags });
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
        self.lto_done = true;
        for o in objects {
            self.add_buffer(o.data, &o.name, "", None);
        }
        self.run();
        if self.errors.is_empty() {
            Ok(())
        } else {
            Err(Error::many(std::mem::take(&mut self.errors)))
        }
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
        // (Diag separates a multi-line message from the next by a blank line, as lld.)
        let mut out: Vec<String> = msgs;
        if out.len() > self.config.error_limit && self.config.error_limit > 0 {
            out.truncate(self.config.error_limit);
            out.push(format!(
                "too many errors emitted, stopping now (use {} to see all errors)",
                if self.config.mingw { "--error-limit=0" } else { "/errorlimit:0" }
            ));
        }
        Err(Error::many(out))
    }
}

/// lld reads each object's `.llvm.call-graph-profile` (records of a 32-bit caller index, a
/// 32-bit callee index and a 64-bit count) before it collects garbage, and stops at a record
/// cut short: checked here, where lld reads them (the ordering is `coff::cgsort`'s).
fn check_call_graph_profiles(r: &Resolved) -> Result<(), String> {
    for &f in &r.obj_order {
        let Kind::Obj(obj) = &r.files[f].kind else { continue };
        let Some(sec) = obj.sections.iter().find(|s| s.name == ".llvm.call-graph-profile") else { continue };
        let mut n = sec.data.len() % 16;
        if n != 0 {
            // The first field the remainder cannot hold.
            n = if n < 8 { 32 } else { 64 };
            return Err(format!("{}: Expected {n}-bit integer", r.files[f].name));
        }
    }
    Ok(())
}
