//! COFF input loading: the file queue, archives and lazy symbols.
//!
//! It exists so that how a file joins the link (command-line path, archive member pulled by an
//! undefined reference, short import, bitcode) is read in one place, apart from what its symbols
//! bind to (`mod.rs`) and how a regular object's symbol table is read (`objfile.rs`).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::{basename, Resolver};
use super::{Archive, Task};
use crate::coff::config::CoffInput;
use crate::coff::implib::{self, ImportKind, ShortImport};
use crate::coff::object;
use crate::coff::symtab::{Def, FileId, InFile, Kind, SymId};

impl Resolver<'_> {
    pub(super) fn is_lazy(&self, id: SymId) -> bool {
        matches!(self.r.symbols[id].def, Def::Lazy(..))
    }

    pub(super) fn force_lazy(&mut self, id: SymId) {
        let s = &mut self.r.symbols[id];
        s.pending_load = true;
        if let Def::Lazy(a, off) = s.def {
            let name = s.name;
            self.add_member(a, off, name);
        }
    }

    pub(super) fn add_member(&mut self, a: usize, off: usize, why: &str) {
        if self.archives[a].seen.insert(off) {
            self.queue.push_back(Task::Member(a, off, why.to_string()));
        }
    }

    /// lld's `addLazyArchive` for one archive symbol-table entry.
    pub(super) fn add_lazy(&mut self, name: &str, a: usize, off: usize) {
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

    pub(super) fn enqueue_path(&mut self, input: CoffInput) {
        // lld-link reads each file once (`findFileIfNew`).
        let key = std::fs::canonicalize(&input.path).unwrap_or_else(|_| input.path.clone());
        if !self.visited.insert(key) {
            return;
        }
        self.queue.push_back(Task::Path(input));
    }

    pub(super) fn load_path(&mut self, input: &CoffInput) {
        let path = input.path.to_string_lossy().into_owned();
        self.log(&format!("Reading {path}"));
        let data = match crate::input::map_file(&input.path) {
            Ok(d) => d,
            Err(e) => {
                let suggestion = input.suggest.as_ref().map(|s| format!("; did you mean '{s}'")).unwrap_or_default();
                self.errors.push(format!("could not open '{path}': {}{suggestion}", crate::error::io_error(&e)));
                return;
            }
        };
        if let Some(r) = &self.config.repro {
            r.read(&input.path, data);
        }
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
                    let strip = |m: String| {
                        m.strip_prefix("failed to parse archive: ").or_else(|| m.strip_prefix("Archive::children failed: ")).map(str::to_string).unwrap_or(m)
                    };
                    self.errors.extend(e.messages.into_iter().map(|m| format!("{path}: {}", strip(m))));
                    return;
                }
            };
            let a = self.archives.len();
            let mut map = HashMap::new();
            let mut unreadable = HashMap::new();
            let mut order = Vec::new();
            for m in members {
                let bytes: &'static [u8] = match m.data {
                    Some(d) => d,
                    None => {
                        let dir = Path::new(&path).parent().unwrap_or(Path::new(""));
                        match crate::input::map_file(&dir.join(&m.name)) {
                            Ok(d) => d,
                            Err(e) if input.whole_archive => {
                                self.errors.push(format!(
                                    "{path}: could not get the buffer for a child of the archive: '{}': {}",
                                    m.name,
                                    crate::error::io_error(&e)
                                ));
                                continue;
                            }
                            Err(e) => {
                                unreadable.insert(m.offset, (m.name.clone(), crate::error::io_error(&e)));
                                continue;
                            }
                        }
                    }
                };
                order.push(m.offset);
                map.insert(m.offset, (m.name.clone(), bytes));
            }
            let thin = data.starts_with(crate::archive::THIN_MAGIC);
            self.archives.push(Archive { path: path.clone(), thin, lazy_object: false, dll: false, members: map, unreadable, seen: HashSet::new() });
            if input.whole_archive {
                // As lld-link: every member now, in order (before members that symbols of earlier
                // files extract, which wait in the queue), its LTO module named with the
                // member's index instead of its offset.
                for (index, off) in order.into_iter().enumerate() {
                    if self.archives[a].seen.insert(off) {
                        self.load_member(a, off, "<whole-archive>", index);
                    }
                }
                return;
            }
            let mut warned = HashSet::new();
            match crate::coff::armap::symbols(data) {
                Some(syms) => {
                    for (name, off) in syms {
                        if !self.imported_dllmain(a, name, off, &mut warned) {
                            self.add_lazy(name, a, off);
                        }
                    }
                }
                None => {
                    // No symbol table: read the members' own (as `llvm-ar s` would write it).
                    for off in order {
                        let (_, bytes) = self.archives[a].members[&off];
                        for name in member_symbols(bytes) {
                            if !self.imported_dllmain(a, &name, off, &mut warned) {
                                self.add_lazy(&name, a, off);
                            }
                        }
                    }
                }
            }
            return;
        }
        if input.lazy && !input.whole_archive {
            // `/start-lib`: the object's definitions are lazy, like an archive member's.
            let a = self.archives.len();
            self.archives.push(Archive {
                path: path.clone(),
                thin: false,
                lazy_object: true,
                dll: false,
                members: HashMap::from([(0, (path.clone(), data))]),
                unreadable: HashMap::new(),
                seen: HashSet::new(),
            });
            for name in member_symbols(data) {
                self.add_lazy(&name, a, 0);
            }
            return;
        }
        self.add_buffer(data, &path, "", None);
    }

    /// lld's `DLLFile`: a DLL in a MinGW link offers its exports as lazy import symbols.
    fn add_dll(&mut self, data: &[u8], display: String) {
        let exports = match crate::coff::dllinput::read(data, &display) {
            Ok(e) => e,
            Err(e) => {
                self.errors.extend(e);
                return;
            }
        };
        let a = self.archives.len();
        let mut members = HashMap::new();
        let mut symbols = Vec::new();
        for (k, e) in exports.into_iter().enumerate() {
            let dll = crate::coff::implib::parse_short_import(&e.member).map(|i| i.dll).unwrap_or_default();
            members.insert(k, (dll, &*crate::util::keep::slice(e.member)));
            symbols.extend(e.symbols.into_iter().map(|s| (s, k)));
        }
        self.archives.push(Archive { path: display, thin: false, lazy_object: false, dll: true, members, unreadable: HashMap::new(), seen: HashSet::new() });
        for (name, k) in symbols {
            self.add_lazy(&name, a, k);
        }
    }

    /// lld leaves out of the link a `DllMain` that an import library offers (a DLL that
    /// exported its own `DllMain` by mistake), saying so once per import member.
    fn imported_dllmain(&self, a: usize, name: &str, off: usize, warned: &mut HashSet<usize>) -> bool {
        if name != "DllMain" && name != "__imp_DllMain" {
            return false;
        }
        let Some((_, bytes)) = self.archives[a].members.get(&off) else { return false };
        if !implib::is_short_import(bytes) {
            return false;
        }
        if warned.insert(off) {
            self.config.diag.warn_code(
                "importeddllmain",
                &format!(
                    "{}: skipping imported DllMain symbol [importeddllmain]\nNOTE: this might be a mistake when the DLL/library was produced.",
                    self.archives[a].path
                ),
            );
        }
        true
    }

    /// lld's error for a module of machine `m` in an x64 link: an ARM64EC module without
    /// `/machine:` could belong to an ARM64EC or ARM64X image, and lld will not guess.
    fn machine_conflict(&self, display: &str, m: &str) -> String {
        if m == "arm64ec" && !self.config.machine_given {
            return format!("{display}: machine type arm64ec is ambiguous and cannot be inferred, use /machine:arm64ec or /machine:arm64x");
        }
        format!("{display}: machine type {m} conflicts with x64")
    }

    /// Adds one object, import member or bitcode file (lld's `addArchiveBuffer`/`addFile`).
    /// `member`: the member's header offset in `parent` and whether the archive is thin.
    pub(super) fn add_buffer(&mut self, data: &'static [u8], name: &str, parent: &str, member: Option<(usize, bool)>) {
        let display = if parent.is_empty() { name.to_string() } else { format!("{}({})", basename(parent), basename(name)) };
        if !parent.is_empty() {
            self.log(&format!("Reading {display}"));
        }
        if crate::coff::resources::is_res(data) {
            self.res_files.push((display, data));
            return;
        }
        if implib::is_short_import(data) {
            if parent.is_empty() {
                // lld reads an import member only from an archive; given by itself it is an
                // object that LLVM's COFF object reader refuses.
                self.errors.push(format!("{display} is not a COFF file"));
                return;
            }
            match implib::parse_short_import(data) {
                Ok(imp) => self.add_short_import(imp, display, name, parent),
                Err(e) if e == implib::BROKEN => self.errors.push(e),
                Err(e) => self.errors.push(format!("{display}: {e}")),
            }
            return;
        }
        if crate::lto::irsymtab::is_bitcode(data) {
            if self.lto_done {
                // A member the compiled code needs (`_fltused`, say) that is bitcode itself.
                self.errors.push(format!("LTO object file {display} linked in after doing LTO compilation."));
                return;
            }
            // The format-neutral description LTO works from (lld's module naming needs the
            // archive, the member and its offset).
            let (path, archive) = match member {
                Some((_, true)) => (Path::new(parent).parent().unwrap_or(Path::new("")).join(name), Some((parent.to_string(), name.to_string()))),
                Some((_, false)) => (PathBuf::from(parent), Some((parent.to_string(), name.to_string()))),
                None => (PathBuf::from(name), None),
            };
            let input: &'static crate::input::InputFile = crate::util::keep::value(crate::input::InputFile {
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
                fat_lto: false,
                group: 0,
            });
            match crate::lto::bitcode::BitcodeFile::parse(input, None) {
                // lld-link: a module for a known other machine conflicts with x64 (dtld's only).
                Ok(b) => match b.foreign_machine() {
                    Some(m) if !m.is_empty() => self.errors.push(self.machine_conflict(&display, m)),
                    _ => self.add_bitcode(b, display, name, parent),
                },
                Err(e) => self.errors.extend(e.messages),
            }
            return;
        }
        if object::is_cl_gl_object(data) {
            // lld's addArchiveBuffer names a member's buffer by the member name alone.
            let (who, q) = if parent.is_empty() { (display.as_str(), "") } else { (name, "?") };
            self.errors.push(format!("{who}: is not a native COFF file. Recompile without /GL{q}"));
            return;
        }
        // lld's `compatibleMachineType`: an object of another machine (which LLVM's
        // `identify_magic` knows as a COFF object) conflicts with x64.
        let other = (data.len() >= 20).then(|| match u16::from_le_bytes([data[0], data[1]]) {
            0x14c => Some("x86"),
            0x1c4 => Some("arm"),
            0xaa64 => Some("arm64"),
            0xa641 => Some("arm64ec"),
            0xa64e => Some("arm64x"),
            _ => None,
        });
        if let Some(Some(m)) = other {
            self.errors.push(self.machine_conflict(&display, m));
            return;
        }
        if parent.is_empty() && self.config.mingw && crate::coff::dllinput::is_pe_image(data) {
            self.add_dll(data, display);
            return;
        }
        if !object::is_coff_object(data) {
            if parent.is_empty() && data.starts_with(b"MZ") && !self.config.mingw && display.to_ascii_lowercase().ends_with(".dll") {
                self.errors.push(format!("{display}: bad file type. Did you specify a DLL instead of an import library?"));
            } else if parent.is_empty() {
                self.errors.push(format!("{display}: unknown file type"));
            } else {
                // lld's addArchiveBuffer names the member's buffer: the member name alone.
                self.errors.push(format!("unknown file type: {name}"));
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

    pub(super) fn new_file(&mut self, kind: Kind, display: String, name: &str, parent: &str) -> FileId {
        let f = self.r.files.len();
        self.r.files.push(InFile {
            name: display,
            parent: parent.to_string(),
            obj_name: name.to_string(),
            kind,
            syms: Vec::new(),
            live: Vec::new(),
            commons: Vec::new(),
            chunks: Vec::new(),
            leaders: HashMap::new(),
            guard_sections: Vec::new(),
        });
        f
    }

    pub(super) fn add_short_import(&mut self, imp: ShortImport, display: String, name: &str, parent: &str) {
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
    pub(super) fn add_bitcode(&mut self, b: crate::lto::bitcode::BitcodeFile, display: String, name: &str, parent: &str) {
        let syms: Vec<(String, bool, bool, bool, u32)> = (0..b.syms.len())
            .map(|k| b.sym(k))
            .map(|s| {
                (
                    String::from_utf8_lossy(s.name).into_owned(),
                    s.undefined(),
                    s.weak(),
                    s.comdat.is_some(),
                    if s.common() { b.ir.uncommon(s).common_size.max(1) } else { 0 },
                )
            })
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
}

/// External definitions of an archive member (for archives without a symbol table).
pub(super) fn member_symbols(data: &'static [u8]) -> Vec<String> {
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
