//! Turning the command line's input list into the files the link reads.
//!
//! This stage finds every file (`-l` search with `-Bstatic`/`-Bdynamic`, linker scripts such as
//! glibc's libc.so expanded in place), maps it into memory, splits archives (regular and GNU thin)
//! into members, and tags each file with what it is and how it was named (`--as-needed`,
//! `--whole-archive`). It decides nothing about symbols: archive members come out as *lazy* files
//! and the resolver decides which ones join the link, by lld's rules (no group rescans needed).
//!
//! Diagnostics use lld's wording (`cannot open x.o: No such file or directory`, `unable to find
//! library -lfoo`, `a.a(b.o): not an ELF file`, ...). Errors for one input do not stop the others:
//! all of them are reported together, as lld does.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::archive;
use crate::elf::config::{apply_sysroot, Config, InputArg};
use crate::elf::script;
use crate::error::{Error, Result};
pub use crate::input::{map_file, FileKind, InputFile};

/// What lld's "X is incompatible with Y" errors name as Y: the emulation when `-m` gave one,
/// else the first ELF file of the link (`first_elf`), else the emulation dtld links.
pub fn incompatible_with(config: &Config, first_elf: Option<&str>) -> String {
    match (&config.emulation, first_elf) {
        (None, Some(f)) => f.to_string(),
        _ => "elf_x86_64".into(),
    }
}

/// Loads every input named on the command line, in command-line order.
///
/// Linker scripts among the inputs can also set the entry point (`ENTRY`), add undefined
/// symbols (`EXTERN`), add library directories (`SEARCH_DIR`) and name the output (`OUTPUT`);
/// `load` drops those effects, `load_into` applies them to the `Config`.
pub fn load(config: &Config) -> Result<Vec<InputFile>> {
    let mut c = config.clone();
    load_into(&mut c)
}

/// `load`, applying the linker scripts' effects to `config`: `ENTRY(sym)` sets `entry` unless
/// `-e` did, `EXTERN(syms)` appends to `undefined`, `SEARCH_DIR(dir)` appends to
/// `library_paths`, `OUTPUT(file)` sets `output` if it is still the default `a.out`.
pub fn load_into(config: &mut Config) -> Result<Vec<InputFile>> {
    load_logged(config).0
}

/// Every file the loader read, in the order it first read it: the path it opened (after
/// `--chroot`) and the bytes (for `--reproduce`).
pub type ReadLog = Vec<(PathBuf, &'static [u8])>;

/// `load_into`, also returning every file read (linker scripts included), even when loading
/// fails.
pub fn load_logged(config: &mut Config) -> (Result<Vec<InputFile>>, ReadLog) {
    let mut l = Loader {
        log: Vec::new(),
        config,
        files: Vec::new(),
        errors: Vec::new(),
        state: State::default(),
        stack: Vec::new(),
        search: config.library_paths.clone(),
        maps: HashMap::new(),
        first_elf: None,
        format_binary: false,
        script_depth: 0,
        script_stack: Vec::new(),
        scripts_read: 0,
        entry: None,
        externs: Vec::new(),
        layout: Vec::new(),
        versions: Vec::new(),
        output: None,
        empty_archives: Vec::new(),
        nostdlib: config.nostdlib,
        in_lib: false,
        next_group: 0,
        in_group: false,
        arg_index: 0,
        assign_args: Vec::new(),
    };
    for (ai, arg) in config.inputs.iter().enumerate() {
        l.arg_index = ai;
        match arg {
            InputArg::File(p) => l.add_file(&p.to_string_lossy(), false),
            InputArg::Library(n) => l.add_library(n),
            InputArg::AsNeeded(b) => l.state.as_needed = *b,
            InputArg::Static(b) => l.state.bstatic = *b,
            InputArg::WholeArchive(b) => l.state.whole_archive = *b,
            InputArg::Binary(b) => l.format_binary = *b,
            InputArg::StartGroup => l.in_group = true,
            InputArg::StartLib => {
                l.in_lib = true;
                l.in_group = true;
            }
            InputArg::EndGroup | InputArg::EndLib => {
                l.in_lib = false;
                l.in_group = false;
                l.next_group += 1;
            }
            InputArg::PushState => l.stack.push(l.state),
            InputArg::PopState => match l.stack.pop() {
                Some(s) => l.state = s,
                None => l.errors.push("unbalanced --push-state/--pop-state".into()),
            },
        }
    }
    // -r keeps the specifiers in its output for the final link (lld).
    if l.config.dependent_libraries && !l.config.relocatable {
        l.add_dependent_libraries();
    }
    // lld's inferMachineType: without -m, the machine comes from an ELF or bitcode input
    // (archive members count); linker scripts alone do not say it.
    if l.errors.is_empty() && l.config.emulation.is_none() && l.first_elf.is_none() && !l.files.iter().any(|f| f.kind == FileKind::Bitcode) {
        l.errors.push("target emulation unknown: -m or at least one .o file required".into());
    }
    let Loader { files, mut errors, search, entry, externs, output, layout, versions, log, assign_args, empty_archives, .. } = l;
    let mut script = crate::elf::script::ast::LayoutScript::default();
    for c in layout {
        if let Err(e) = script.add(c) {
            errors.push(e);
        }
    }
    // INSERT blocks join a SECTIONS command's list now; without one, lld keeps its default
    // layout and the layout stage moves the blocks' sections (`script::insert`).
    if script.has_sections && !script.inserts.is_empty() {
        if let Err(e) = script.splice_inserts() {
            errors.push(e);
        }
    }
    let mut assigns = Vec::new();
    if !script.has_sections {
        // Without SECTIONS, plain assignments are `--defsym`s (the layout is the default one);
        // PROVIDE, ASSERT, `.` and other expressions are evaluated after the layout
        // (`script::toplevel`).
        for (k, c) in std::mem::take(&mut script.cmds).into_iter().enumerate() {
            let crate::elf::script::ast::SecCmd::Assign(a) = c else { continue };
            let text: String = a.text.chars().filter(|c| !c.is_whitespace()).collect();
            if a.provide || a.hidden || a.name == "." || !crate::elf::script::toplevel::is_simple_defsym(&text) {
                script.cmds.push(crate::elf::script::ast::SecCmd::Assign(a));
                continue;
            }
            assigns.push((assign_args.get(k).copied().unwrap_or(usize::MAX), a.name, text, a.pos.to_string()));
        }
    }
    if !errors.is_empty() {
        return (Err(Error::many(errors)), log);
    }
    if config.entry.is_none() {
        config.entry = entry;
    }
    config.undefined.extend(externs);
    config.empty_archives = empty_archives;
    merge_defsyms(config, assigns);
    config.script = script;
    config.inline_version_scripts.extend(versions);
    config.library_paths = search;
    if let Some(o) = output {
        if config.output == Path::new("a.out") {
            config.output = PathBuf::from(o);
        }
    }
    (Ok(files), log)
}

/// Puts a script's plain assignments among the `--defsym`s in command-line order (a later one
/// wins, as in lld): `assigns` are (input argument index, name, expression, script position).
fn merge_defsyms(config: &mut Config, assigns: Vec<(usize, String, String, String)>) {
    let mut all: Vec<(usize, usize, (String, String), String)> = Vec::new();
    let at = std::mem::take(&mut config.defsym_at);
    for (k, d) in std::mem::take(&mut config.defsym).into_iter().enumerate() {
        // A --defsym after n inputs comes before the scripts of input n.
        all.push((2 * at.get(k).copied().unwrap_or(0), all.len(), d, "--defsym:1".to_string()));
    }
    for (ai, name, text, pos) in assigns {
        all.push((2 * ai.min(usize::MAX / 4) + 1, all.len(), (name, text), pos));
    }
    all.sort_by_key(|&(pos, seq, _, _)| (pos, seq));
    (config.defsym, config.defsym_loc) = all.into_iter().map(|(_, _, d, loc)| (d, loc)).unzip();
}

/// The positional state that `--push-state` saves.
#[derive(Debug, Clone, Copy, Default)]
struct State {
    as_needed: bool,
    bstatic: bool,
    whole_archive: bool,
}

struct Loader<'c> {
    config: &'c Config,
    files: Vec<InputFile>,
    errors: Vec<String>,
    state: State,
    stack: Vec<State>,
    /// `-L` directories, then `SEARCH_DIR`s as scripts add them.
    search: Vec<PathBuf>,
    /// Each path is mapped once, however often it is named.
    maps: HashMap<PathBuf, &'static [u8]>,
    /// The first ELF file, which lld names in "is incompatible with" errors when there is no -m.
    first_elf: Option<String>,
    /// `-b binary` / `TARGET(binary)` in force.
    format_binary: bool,
    script_depth: usize,
    /// The scripts being read (canonical paths): a script that names itself, directly or
    /// through others, is an error instead of an exponential expansion.
    script_stack: Vec<PathBuf>,
    /// Every script read so far, against a budget (fan-out without a cycle).
    scripts_read: usize,
    entry: Option<String>,
    externs: Vec<String>,
    /// `sym = expr;` and `VERSION { }` from scripts.
    layout: Vec<crate::elf::script::ast::LayoutCmd>,
    /// The input argument being loaded, and the one each top-level assignment came from.
    arg_index: usize,
    assign_args: Vec<usize>,
    versions: Vec<(String, String)>,
    output: Option<String>,
    /// Archives without members (not under `--whole-archive`): where they came in the input
    /// list (`Config::empty_archives`).
    empty_archives: Vec<(usize, String)>,
    nostdlib: bool,
    log: ReadLog,
    /// Between `--start-lib` and `--end-lib`: objects join as lazy members of an implicit archive.
    in_lib: bool,
    /// The group ID the next file gets (`InputFile::group`), and whether the files being added
    /// share one (`--start-group`, `--start-lib`, a script's `GROUP`).
    next_group: u32,
    in_group: bool,
}

/// An `io::Error` as strerror text, the way lld prints it (no " (os error N)").
fn io_msg(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

const ELF_MAGIC: &[u8; 4] = b"\x7fELF";

fn is_bitcode(d: &[u8]) -> bool {
    d.starts_with(b"BC\xC0\xDE") || d.starts_with(&[0xDE, 0xC0, 0x17, 0x0B])
}

/// ELF e_type, read in the file's byte order as LLVM's `identify_magic` does.
fn elf_type(d: &[u8]) -> u16 {
    if d[5] == 2 {
        u16::from_be_bytes([d[16], d[17]])
    } else {
        u16::from_le_bytes([d[16], d[17]])
    }
}

impl Loader<'_> {
    fn read(&mut self, path: &str) -> std::result::Result<&'static [u8], String> {
        // `--chroot dir` (lld's): absolute paths are read below `dir` (the `--reproduce` tree).
        let key = match &self.config.chroot {
            Some(root) if path.starts_with('/') => {
                let mut p = root.as_os_str().to_owned();
                p.push(path);
                PathBuf::from(p)
            }
            _ => PathBuf::from(path),
        };
        if let Some(d) = self.maps.get(&key) {
            return Ok(d);
        }
        let d = map_file(&key).map_err(|e| io_msg(&e))?;
        self.maps.insert(key.clone(), d);
        self.log.push((key, d));
        Ok(d)
    }

    fn incompatible_with(&self) -> String {
        if self.config.emulation.is_some() {
            return "elf_x86_64".into();
        }
        self.first_elf.clone().unwrap_or_else(|| "elf_x86_64".into())
    }

    /// lld's ELF checks for an ET_REL/ET_DYN file (`getELFKind` and the machine check).
    fn check_elf(&mut self, d: &[u8], name: &str) -> std::result::Result<(), String> {
        if d[5] != 1 && d[5] != 2 {
            return Err(format!("{name}: corrupted ELF file: invalid data encoding"));
        }
        if d[4] != 1 && d[4] != 2 {
            return Err(format!("{name}: corrupted ELF file: invalid file class"));
        }
        let min = if d[4] == 2 { 64 } else { 52 };
        if d.len() < min {
            return Err(format!("{name}: corrupted ELF file: file is too short"));
        }
        let machine = if d[5] == 2 { u16::from_be_bytes([d[18], d[19]]) } else { u16::from_le_bytes([d[18], d[19]]) };
        if d[4] != 2 || d[5] != 1 || machine != 62 {
            return Err(format!("{name} is incompatible with {}", self.incompatible_with()));
        }
        if self.first_elf.is_none() {
            self.first_elf = Some(name.to_string());
        }
        Ok(())
    }

    /// With `--fat-lto-objects`, the bitcode of a FatLTO object: its section named `.llvm.lto`
    /// (or of type SHT_LLVM_LTO), as LLVM's `IRObjectFile::findBitcodeInMemBuffer` finds it, when
    /// the object is an x86-64 relocatable object with one and it holds bitcode.
    fn fat_lto_bitcode(&self, d: &'static [u8]) -> Option<&'static [u8]> {
        if !self.config.fat_lto_objects || d.len() < 64 || d[4] != 2 || d[5] != 1 || elf_type(d) != 1 {
            return None;
        }
        let u16_at = |o: usize| d.get(o..o + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
        let u32_at = |o: usize| d.get(o..o + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        let u64_at = |o: usize| d.get(o..o + 8).map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default()));
        let shoff = usize::try_from(u64_at(0x28)?).ok()?;
        let (shentsize, shnum, shstrndx) = (usize::from(u16_at(0x3a)?), usize::from(u16_at(0x3c)?), usize::from(u16_at(0x3e)?));
        if shentsize < 64 {
            return None;
        }
        let header = |i: usize| shoff.checked_add(i.checked_mul(shentsize)?);
        let range = |h: usize| -> Option<std::ops::Range<usize>> {
            let off = usize::try_from(u64_at(h + 0x18)?).ok()?;
            let size = usize::try_from(u64_at(h + 0x20)?).ok()?;
            let end = off.checked_add(size)?;
            (end <= d.len()).then_some(off..end)
        };
        let strtab = range(header(shstrndx)?)?;
        (1..shnum).find_map(|i| {
            let h = header(i)?;
            let name_off = strtab.start.checked_add(u32_at(h)? as usize)?;
            let name = d.get(name_off..strtab.end)?;
            let named = name.starts_with(b".llvm.lto\0");
            let typed = u32_at(h + 4)? == 0x6fff_4c0c;
            let body = &d[range(h)?];
            ((named || typed) && is_bitcode(body)).then_some(body)
        })
    }

    /// Adds the file at `path` (as written or as found). `with_l`: found by a library search,
    /// so a shared library's default DT_NEEDED is its file name.
    fn add_file(&mut self, path: &str, with_l: bool) {
        // lld's `--verbose` names every file it opens, as the command line (or a script) gives it.
        if self.config.verbose {
            self.config.diag.log(path);
        }
        let data = match self.read(path) {
            Ok(d) => d,
            Err(e) => {
                self.errors.push(format!("cannot open {path}: {e}"));
                return;
            }
        };
        // `-b binary`: whatever the file holds, its bytes are the input (lld checks this first).
        if self.format_binary {
            let obj: &'static [u8] = crate::util::keep::slice(crate::elf::binary_input::object_for(path, data));
            self.push(path, PathBuf::from(path), obj, FileKind::Object, String::new());
            return;
        }
        if data.starts_with(archive::MAGIC) || data.starts_with(archive::THIN_MAGIC) {
            self.add_archive(path, data);
            return;
        }
        if is_bitcode(data) {
            self.push(path, PathBuf::from(path), data, FileKind::Bitcode, String::new());
            return;
        }
        if data.len() >= 18 && data.starts_with(ELF_MAGIC) {
            if let Some(bc) = self.fat_lto_bitcode(data) {
                self.push(path, PathBuf::from(path), bc, FileKind::Bitcode, String::new());
                if let Some(f) = self.files.last_mut() {
                    f.fat_lto = true;
                }
                return;
            }
            let kind = match elf_type(data) {
                1 => FileKind::Object,
                3 => FileKind::Shared,
                _ => {
                    self.errors.push(format!("{path}: unknown file type"));
                    return;
                }
            };
            if let Err(e) = self.check_elf(data, path) {
                self.errors.push(e);
                return;
            }
            if kind == FileKind::Shared {
                if self.state.bstatic {
                    self.errors.push(format!("attempted static link of dynamic object {path}"));
                    return;
                }
                let needed = if with_l { Path::new(path).file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default() } else { path.to_string() };
                self.push(path, PathBuf::from(path), data, kind, needed);
            } else {
                self.push(path, PathBuf::from(path), data, kind, String::new());
            }
            return;
        }
        self.add_script(path, data);
    }

    fn push(&mut self, name: &str, path: PathBuf, data: &'static [u8], kind: FileKind, needed_name: String) {
        self.files.push(InputFile {
            name: name.to_string(),
            path,
            data,
            kind,
            lazy: self.in_lib && matches!(kind, FileKind::Object | FileKind::Bitcode),
            archive: None,
            as_needed: kind == FileKind::Shared && self.state.as_needed,
            needed_name,
            archive_offset: 0,
            thin_member: false,
            fat_lto: false,
            group: self.next_group,
        });
        if !self.in_group {
            self.next_group += 1;
        }
    }

    fn add_archive(&mut self, path: &str, data: &'static [u8]) {
        let members = match archive::parse(data) {
            Ok(m) => m,
            Err(e) => {
                self.errors.extend(e.context(path).messages);
                return;
            }
        };
        let whole = self.state.whole_archive;
        if members.is_empty() && !whole {
            self.empty_archives.push((self.files.len(), path.to_string()));
        }
        let dir = Path::new(path).parent().map(Path::to_path_buf).unwrap_or_default();
        for m in members {
            let display = format!("{path}({})", m.name);
            let (mdata, mpath) = match m.data {
                Some(d) => (d, PathBuf::from(path)),
                None => {
                    let p = if Path::new(&m.name).is_absolute() { PathBuf::from(&m.name) } else { dir.join(&m.name) };
                    match self.read(&p.to_string_lossy()) {
                        Ok(d) => (d, p),
                        Err(e) => {
                            self.errors.push(format!("{path}: could not get the buffer for a child of the archive: '{}': {e}", m.name));
                            return;
                        }
                    }
                }
            };
            let fat = (!is_bitcode(mdata) && mdata.len() >= 18 && mdata.starts_with(ELF_MAGIC)).then(|| self.fat_lto_bitcode(mdata)).flatten();
            let mdata = fat.unwrap_or(mdata);
            let kind = if is_bitcode(mdata) {
                FileKind::Bitcode
            } else if mdata.len() >= 18 && mdata.starts_with(ELF_MAGIC) && elf_type(mdata) == 1 {
                if let Err(e) = self.check_elf(mdata, &display) {
                    self.errors.push(e);
                    continue;
                }
                FileKind::Object
            } else if whole && !mdata.starts_with(ELF_MAGIC) {
                self.errors.push(format!("{display}: not an ELF file"));
                continue;
            } else {
                self.config.diag.warn(&format!("{path}: archive member '{}' is neither ET_REL nor LLVM bitcode", m.name));
                continue;
            };
            self.files.push(InputFile {
                name: display,
                path: mpath,
                data: mdata,
                kind,
                lazy: !whole,
                thin_member: m.data.is_none(),
                fat_lto: fat.is_some(),
                archive_offset: m.offset as u64,
                archive: Some((path.to_string(), m.name)),
                as_needed: false,
                needed_name: String::new(),
                group: self.next_group,
            });
        }
        // The members share the archive's group, so they may refer to each other.
        if !self.in_group {
            self.next_group += 1;
        }
    }

    /// Finds `name` in the library directories (lld's `findFromSearchPaths`).
    fn find_in_search_paths(&self, name: &str) -> Option<String> {
        self.search.iter().map(|d| d.join(name)).find(|p| p.exists()).map(|p| p.to_string_lossy().into_owned())
    }

    /// `libname.so` (unless -Bstatic) or `libname.a` in the first library directory that has
    /// one (lld's `searchLibraryBaseName`).
    fn search_library_base(&self, name: &str) -> Option<String> {
        for d in &self.search {
            if !self.state.bstatic {
                let p = d.join(format!("lib{name}.so"));
                if p.exists() {
                    return Some(p.to_string_lossy().into_owned());
                }
            }
            let p = d.join(format!("lib{name}.a"));
            if p.exists() {
                return Some(p.to_string_lossy().into_owned());
            }
        }
        None
    }

    /// Adds the dependent libraries (`deplibs`) of the objects always in the link, of the files
    /// they add, and of the archive members and bitcode files the resolver found in an earlier
    /// round (`Config::extracted_deplibs`), after the command line's files, as lld does.
    fn add_dependent_libraries(&mut self) {
        let mut extracted = self.config.extracted_deplibs.clone();
        let mut next = 0;
        loop {
            while next < self.files.len() {
                let f = &self.files[next];
                next += 1;
                // Bitcode's specifiers come from the resolver, which parses its irsymtab.
                if f.lazy || f.kind != FileKind::Object {
                    continue;
                }
                let name = f.name.clone();
                for spec in crate::elf::deplibs::object_specifiers(f.data) {
                    self.add_dependent_library(&name, &String::from_utf8_lossy(spec));
                }
            }
            if extracted.is_empty() {
                break;
            }
            for (from, spec) in std::mem::take(&mut extracted) {
                self.add_dependent_library(&from, &spec);
            }
        }
    }

    /// One dependent library specifier of file `from`: a library base name, else a file in the
    /// library directories, else a path (lld's `addDependentLibrary`).
    fn add_dependent_library(&mut self, from: &str, spec: &str) {
        if let Some(p) = self.search_library_base(spec).or_else(|| self.find_in_search_paths(spec)) {
            self.add_file(&p, true);
        } else if Path::new(spec).exists() {
            self.add_file(spec, false);
        } else {
            self.errors.push(format!("{from}: unable to find library from dependent library specifier: {spec}"));
        }
    }

    /// `-lfoo` / `-l:file`.
    fn add_library(&mut self, name: &str) {
        let found = match name.strip_prefix(':') {
            Some(exact) => self.find_in_search_paths(exact),
            None => self.search_library_base(name),
        };
        match found {
            Some(p) => self.add_file(&p, true),
            None => self.errors.push(format!("unable to find library -l{name}")),
        }
    }

    fn is_under_sysroot(&self, path: &str) -> bool {
        let Some(sysroot) = &self.config.sysroot else {
            return false;
        };
        let (Ok(s), Ok(p)) = (std::fs::canonicalize(sysroot), std::fs::canonicalize(path)) else {
            return false;
        };
        p.starts_with(s)
    }

    fn add_script(&mut self, path: &str, data: &[u8]) {
        if self.script_depth >= 32 {
            self.errors.push(format!("{path}: linker scripts nested too deeply"));
            return;
        }
        let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| PathBuf::from(path));
        if self.script_stack.contains(&canonical) {
            self.errors.push(format!("{path}: the linker script names itself (directly or through the scripts it names)"));
            return;
        }
        self.scripts_read += 1;
        if self.scripts_read > MAX_SCRIPTS {
            if self.scripts_read == MAX_SCRIPTS + 1 {
                self.errors.push(format!("{path}: more than {MAX_SCRIPTS} linker scripts read; the scripts name each other too often"));
            }
            return;
        }
        let (s, syntax_error) = script::parse_partial_in(path, data, &self.search);
        let errors_before = self.errors.len();
        self.script_depth += 1;
        self.script_stack.push(canonical);
        let under_sysroot = self.is_under_sysroot(path);
        let sysroot = self.config.sysroot.as_ref().map(|p| p.to_string_lossy().into_owned());
        let script_dir = Path::new(path).parent().map(Path::to_path_buf).unwrap_or_default();
        // Whether a `GROUP(...)` started inside another group (`--start-group`).
        let mut group_stack = Vec::new();
        for cmd in &s.commands {
            match cmd {
                script::Command::Input { name, as_needed, loc } => {
                    let saved = self.state.as_needed;
                    if *as_needed {
                        self.state.as_needed = true;
                    }
                    if under_sysroot && name.starts_with('/') {
                        let sr = sysroot.clone().unwrap_or_default();
                        let p = format!("{sr}{name}");
                        if Path::new(&p).exists() {
                            self.add_file(&p, false);
                        } else {
                            self.errors.push(s.error_at(loc, &format!("cannot find {name} inside {sr}")));
                        }
                    } else if name.starts_with('/') {
                        self.add_file(name, false);
                    } else if let Some(rest) = name.strip_prefix('=') {
                        match &sysroot {
                            Some(sr) => self.add_file(&format!("{sr}/{rest}"), false),
                            None => self.add_file(rest, false),
                        }
                    } else if let Some(lib) = name.strip_prefix("-l") {
                        self.add_library(lib);
                    } else {
                        let in_dir = script_dir.join(name);
                        if !script_dir.as_os_str().is_empty() && in_dir.exists() {
                            self.add_file(&in_dir.to_string_lossy(), false);
                        } else if Path::new(name).exists() {
                            self.add_file(name, false);
                        } else if let Some(p) = self.find_in_search_paths(name) {
                            self.add_file(&p, true);
                        } else {
                            self.errors.push(s.error_at(loc, &format!("unable to find {name}")));
                        }
                    }
                    self.state.as_needed = saved;
                }
                script::Command::SearchDir(d) => {
                    if !self.nostdlib {
                        let p = apply_sysroot(d, self.config.sysroot.as_deref());
                        self.search.push(p);
                    }
                }
                script::Command::Entry(e) => {
                    if self.entry.is_none() {
                        self.entry = Some(e.clone());
                    }
                }
                script::Command::Extern(syms) => self.externs.extend(syms.iter().cloned()),
                script::Command::Output(o) => self.output = Some(o.clone()),
                script::Command::Target(b) => self.format_binary = *b,
                script::Command::Group(true) => group_stack.push(std::mem::replace(&mut self.in_group, true)),
                script::Command::Group(false) => {
                    self.in_group = group_stack.pop().unwrap_or(false);
                    if !self.in_group {
                        self.next_group += 1;
                    }
                }
                script::Command::Layout(c) => {
                    if let crate::elf::script::ast::LayoutCmd::Assign(_) = c {
                        self.assign_args.push(self.arg_index);
                    }
                    self.layout.push(c.clone())
                }
                script::Command::Version(text) => self.versions.push((s.name.clone(), text.clone())),
                // Read again through the loader so that `--reproduce` packs it.
                script::Command::Include(path) => {
                    let _ = self.read(path);
                }
            }
            if self.errors.len() > errors_before {
                // lld stops reading a script at its first error.
                break;
            }
        }
        if let Some(&outer) = group_stack.first() {
            // The script stopped at an error inside its GROUP.
            self.in_group = outer;
        }
        if self.errors.len() == errors_before {
            if let Some(e) = syntax_error {
                self.errors.extend(e.messages);
            }
        }
        self.script_depth -= 1;
        self.script_stack.pop();
    }
}

/// At most this many linker-script inputs are read in one link (glibc's libc.so is one).
const MAX_SCRIPTS: usize = 4096;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::{gnu::parse, Action};
    use std::process::Command;

    struct Dir(PathBuf);
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn tmpdir(tag: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("dtld-input-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }

    fn config(args: &[String]) -> Config {
        match parse(args) {
            Ok(Action::Link(c)) => c,
            _ => panic!("bad args"),
        }
    }

    fn s(p: &Path) -> String {
        p.to_string_lossy().into_owned()
    }

    /// A minimal ELF64 x86-64 header of type `ty` (enough for identification).
    fn elf(ty: u16) -> Vec<u8> {
        let mut v = vec![0u8; 64];
        v[..4].copy_from_slice(ELF_MAGIC);
        v[4] = 2;
        v[5] = 1;
        v[6] = 1;
        v[16..18].copy_from_slice(&ty.to_le_bytes());
        v[18..20].copy_from_slice(&62u16.to_le_bytes());
        v
    }

    fn ar_member(out: &mut Vec<u8>, name: &str, body: &[u8]) {
        let h = format!("{:<16}{:<12}{:<6}{:<6}{:<8}{:<10}`\n", name, 0, 0, 0, 644, body.len());
        out.extend(h.as_bytes());
        out.extend_from_slice(body);
        if body.len() % 2 == 1 {
            out.push(b'\n');
        }
    }

    #[test]
    fn files_libraries_and_state() {
        let d = tmpdir("libs");
        let dir = &d.0;
        std::fs::write(dir.join("a.o"), elf(1)).unwrap();
        std::fs::write(dir.join("libfoo.so"), elf(3)).unwrap();
        let mut a = archive::MAGIC.to_vec();
        ar_member(&mut a, "m1.o/", &elf(1));
        ar_member(&mut a, "bc.o/", b"BC\xC0\xDEabc");
        std::fs::write(dir.join("libfoo.a"), &a).unwrap();
        ar_member(&mut a, "txt/", b"hello");
        std::fs::write(dir.join("withtxt.a"), &a).unwrap();
        std::fs::write(dir.join("plain.so"), elf(3)).unwrap();
        std::fs::write(dir.join("empty.o"), b"").unwrap();
        let args: Vec<String> = vec![
            s(&dir.join("a.o")),
            "-L".into(),
            s(dir),
            "--as-needed".into(),
            "-lfoo".into(),
            "--push-state".into(),
            "-Bstatic".into(),
            "--whole-archive".into(),
            "-lfoo".into(),
            "--pop-state".into(),
            "-l:libfoo.a".into(),
            s(&dir.join("plain.so")),
            s(&dir.join("empty.o")),
        ];
        let files = load(&config(&args)).unwrap();
        let summary: Vec<_> = files.iter().map(|f| (f.name.clone(), f.kind, f.lazy, f.as_needed)).collect();
        let p = |n: &str| s(&dir.join(n));
        assert_eq!(
            summary,
            vec![
                (p("a.o"), FileKind::Object, false, false),
                (p("libfoo.so"), FileKind::Shared, false, true),
                (format!("{}(m1.o)", p("libfoo.a")), FileKind::Object, false, false),
                (format!("{}(bc.o)", p("libfoo.a")), FileKind::Bitcode, false, false),
                (format!("{}(m1.o)", p("libfoo.a")), FileKind::Object, true, false),
                (format!("{}(bc.o)", p("libfoo.a")), FileKind::Bitcode, true, false),
                (p("plain.so"), FileKind::Shared, false, true),
            ]
        );
        assert_eq!(files[1].needed_name, "libfoo.so");
        assert_eq!(files[6].needed_name, p("plain.so"));
        assert_eq!(files[4].archive, Some((p("libfoo.a"), "m1.o".to_string())));
        // A member that is neither ELF nor bitcode: a warning, or under --whole-archive an error.
        assert_eq!(load(&config(&[p("withtxt.a")])).unwrap().len(), 2);
        let args2: Vec<String> = vec!["--whole-archive".into(), p("withtxt.a")];
        let e = load(&config(&args2)).unwrap_err().to_string();
        assert_eq!(e, format!("{}(txt): not an ELF file", p("withtxt.a")));
    }

    #[test]
    fn lld_wording_for_bad_inputs() {
        let d = tmpdir("bad");
        let dir = &d.0;
        let mut exec = elf(2);
        std::fs::write(dir.join("exec.o"), &exec).unwrap();
        exec[18] = 0xb7;
        exec[16] = 1;
        std::fs::write(dir.join("arm.o"), &exec).unwrap();
        let mut short = elf(1);
        short.truncate(40);
        std::fs::write(dir.join("short.o"), &short).unwrap();
        std::fs::write(dir.join("lib.so"), elf(3)).unwrap();
        let p = |n: &str| s(&dir.join(n));
        let args: Vec<String> = vec![
            p("missing.o"),
            p("exec.o"),
            p("arm.o"),
            p("short.o"),
            "-lnothere".into(),
            "-l:nothere.a".into(),
            s(dir),
            "-Bstatic".into(),
            p("lib.so"),
            "--pop-state".into(),
        ];
        let e = load(&config(&args)).unwrap_err();
        assert_eq!(
            e.messages,
            vec![
                format!("cannot open {}: No such file or directory", p("missing.o")),
                format!("{}: unknown file type", p("exec.o")),
                format!("{} is incompatible with elf_x86_64", p("arm.o")),
                format!("{}: corrupted ELF file: file is too short", p("short.o")),
                "unable to find library -lnothere".to_string(),
                "unable to find library -l:nothere.a".to_string(),
                format!("cannot open {}: Is a directory", s(dir)),
                format!("attempted static link of dynamic object {}", p("lib.so")),
                "unbalanced --push-state/--pop-state".to_string(),
            ]
        );
    }

    #[test]
    fn scripts() {
        let d = tmpdir("script");
        let dir = &d.0;
        let p = |n: &str| s(&dir.join(n));
        std::fs::create_dir_all(dir.join("lib")).unwrap();
        std::fs::write(dir.join("lib/libreal.so.1"), elf(3)).unwrap();
        std::fs::write(dir.join("lib/helper.a"), archive::MAGIC).unwrap();
        std::fs::write(dir.join("lib/libbar.so"), elf(3)).unwrap();
        std::fs::write(dir.join("lib/side.o"), elf(1)).unwrap();
        std::fs::write(
            dir.join("lib/libreal.so"),
            format!(
                "/* GNU ld script */\nOUTPUT_FORMAT(elf64-x86-64)\nGROUP ( {} {} AS_NEEDED ( -lbar ) side.o )\n\
                 ENTRY(my_start) EXTERN(ext1)\n",
                p("lib/libreal.so.1"),
                p("lib/helper.a")
            ),
        )
        .unwrap();
        let args: Vec<String> = vec!["-L".into(), p("lib"), "-lreal".into()];
        let mut c = config(&args);
        let files = load_into(&mut c).unwrap();
        let names: Vec<_> = files.iter().map(|f| (f.name.clone(), f.as_needed, f.needed_name.clone())).collect();
        assert_eq!(
            names,
            vec![
                (p("lib/libreal.so.1"), false, p("lib/libreal.so.1")),
                (p("lib/libbar.so"), true, "libbar.so".to_string()),
                (p("lib/side.o"), false, String::new()),
            ]
        );
        assert_eq!(c.entry.as_deref(), Some("my_start"));
        assert_eq!(c.undefined, vec!["ext1"]);

        // Errors carry the script's name and line.
        std::fs::write(dir.join("bad.t"), "INPUT(\n  nothere.o)\n").unwrap();
        let e = load(&config(&[p("bad.t")])).unwrap_err().to_string();
        assert_eq!(e, format!("{}:2: unable to find nothere.o\n>>>   nothere.o)\n>>>   ^", p("bad.t")));
        std::fs::write(dir.join("garbage.o"), [0u8, 1, 2, 0xff, 0x80, b'(', b'\n', 7]).unwrap();
        let e = load(&config(&[p("garbage.o")])).unwrap_err().to_string();
        assert!(e.starts_with(&format!("{}:1: unknown directive: ", p("garbage.o"))), "{e}");

        // A script including itself is an error, not a hang.
        std::fs::write(dir.join("loop.t"), format!("INPUT({})", p("loop.t"))).unwrap();
        assert!(load(&config(&[p("loop.t")])).is_err());

        // Sysroot: absolute paths in a script under the sysroot are inside it.
        std::fs::create_dir_all(dir.join("sr/usr/lib")).unwrap();
        std::fs::write(dir.join("sr/usr/lib/libc.so.6"), elf(3)).unwrap();
        std::fs::write(dir.join("sr/usr/lib/libc.so"), "GROUP(/usr/lib/libc.so.6 /usr/lib/missing.a)").unwrap();
        let args: Vec<String> = vec![format!("--sysroot={}", p("sr")), "-L=/usr/lib".into(), "-lc".into()];
        let e = load(&config(&args)).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "{}:1: cannot find /usr/lib/missing.a inside {}\n>>> GROUP(/usr/lib/libc.so.6 /usr/lib/missing.a)\n>>> {}^",
                p("sr/usr/lib/libc.so"),
                p("sr"),
                " ".repeat(25)
            )
        );
    }

    #[test]
    fn thin_archives() {
        let d = tmpdir("thin");
        let dir = &d.0;
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("sub/longname_object_file.o"), elf(1)).unwrap();
        std::fs::write(dir.join("m.o"), elf(1)).unwrap();
        let mut a = archive::THIN_MAGIC.to_vec();
        ar_member(&mut a, "//", b"longname_object_file.o/\n../m.o/\n");
        let h = |n: &str| format!("{:<16}{:<12}{:<6}{:<6}{:<8}{:<10}`\n", n, 0, 0, 0, 644, 64).into_bytes();
        a.extend(h("/0"));
        a.extend(h("/24"));
        std::fs::write(dir.join("sub/thin.a"), &a).unwrap();
        let ar = s(&dir.join("sub/thin.a"));
        let files = load(&config(std::slice::from_ref(&ar))).unwrap();
        assert_eq!(files.len(), 2);
        assert_eq!(files[0].name, format!("{ar}(longname_object_file.o)"));
        assert_eq!(files[0].path, dir.join("sub/longname_object_file.o"));
        assert_eq!(files[1].name, format!("{ar}(../m.o)"));
        assert!(files[1].lazy && files[1].kind == FileKind::Object);
        std::fs::remove_file(dir.join("m.o")).unwrap();
        let e = load(&config(std::slice::from_ref(&ar))).unwrap_err().to_string();
        assert_eq!(e, format!("{ar}: could not get the buffer for a child of the archive: '../m.o': No such file or directory"));
    }

    /// Real archives and glibc's scripts, when the tools are there.
    #[test]
    fn real_toolchain_files() {
        let libc = Path::new("/usr/lib/x86_64-linux-gnu/libc.so");
        if libc.exists() {
            let c = config(&["-L/usr/lib/x86_64-linux-gnu".into(), "-lc".into(), "-lm".into()]);
            let files = load(&c).unwrap();
            assert!(files.iter().any(|f| f.name.ends_with("libc.so.6") && f.kind == FileKind::Shared));
            assert!(files.iter().any(|f| f.name.contains("libc_nonshared.a(") && f.lazy));
            assert!(files.iter().any(|f| f.name.ends_with("ld-linux-x86-64.so.2") && f.as_needed));
        }
        let d = tmpdir("real");
        let dir = &d.0;
        let src = dir.join("f.c");
        std::fs::write(&src, "int f(void){return 1;}\n").unwrap();
        let obj = dir.join("a_rather_long_object_name.o");
        let ok = Command::new("clang-22").arg("-c").arg(&src).arg("-o").arg(&obj).status().map(|s| s.success()).unwrap_or(false);
        if !ok {
            return;
        }
        for (flags, file) in [("rc", "x.a"), ("rcT", "thin.a"), ("rcS", "noidx.a")] {
            let ar = dir.join(file);
            let ok = Command::new("llvm-ar-22").arg(flags).arg(&ar).arg(&obj).status().map(|s| s.success()).unwrap_or(false);
            if !ok {
                return;
            }
            let files = load(&config(&[s(&ar)])).unwrap();
            assert_eq!(files.len(), 1, "{file}");
            // llvm-ar stores a thin member's path as given (here absolute); lld prints it so.
            let member = if flags == "rcT" { s(&obj) } else { "a_rather_long_object_name.o".to_string() };
            assert_eq!(files[0].name, format!("{}({member})", s(&ar)));
            assert_eq!(files[0].data, std::fs::read(&obj).unwrap().as_slice());
        }
    }
}
