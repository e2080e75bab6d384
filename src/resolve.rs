//! Symbol resolution: which definition every name binds to, and which archive members join.
//!
//! This follows lld's model rather than GNU ld's: every archive member's defined symbols are
//! remembered as *lazy* when the archive is read, and a member is extracted the moment a non-weak
//! reference meets one of its lazy symbols (or a lazy symbol meets an existing reference). That
//! makes `--start-group` unnecessary (mutually dependent archives just work) and visits each file
//! once. Files are processed in command-line order and extracted members right after the file
//! that needed them, so which duplicate or COMDAT copy wins is the same as with lld.
//!
//! The result is one `Symbol` per global name, each pointing at its final definition, plus for
//! every object the mapping from its symbol-table indices to those global symbols.

use std::collections::HashMap;

use object::elf;
use object::read::elf::Sym as _;
use rayon::prelude::*;

use crate::driver::args::Config;
use crate::elf::object::{ObjFile, SecKind};
use crate::elf::shared::SharedFile;
use crate::elf::LE;
use crate::error::{Error, Result};
use crate::input::{FileKind, InputFile};

pub type FileId = usize;
pub type SymbolId = usize;

pub enum File {
    Obj(ObjFile),
    Shared(SharedFile),
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
    /// Referenced (weakly or not) by a loaded object file.
    pub obj_ref: bool,
    /// Most constraining visibility seen among object-file occurrences.
    pub visibility: u8,
    /// A shared library defines a symbol of this name (used for as-needed and exports).
    pub in_dso: bool,
}

pub struct Resolved {
    pub files: Vec<File>,
    /// Whether each file joined the link.
    pub loaded: Vec<bool>,
    pub symbols: Vec<Symbol>,
    pub by_name: HashMap<&'static [u8], SymbolId>,
    /// For each object file: global symbol index (from `first_global`) → SymbolId.
    pub sym_ids: Vec<Vec<SymbolId>>,
    /// For each object file: sections discarded because another file's COMDAT group won.
    pub discarded: Vec<Vec<bool>>,
    /// Shared libraries referenced by a non-weak reference (for --as-needed).
    pub dso_needed: Vec<bool>,
}

fn vis_rank(v: u8) -> u8 {
    match v {
        elf::STV_DEFAULT => 3,
        elf::STV_PROTECTED => 2,
        elf::STV_HIDDEN => 1,
        _ => 0,
    }
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
    pub fn lookup(&self, name: &[u8]) -> Option<SymbolId> {
        self.by_name.get(name).copied()
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
}

struct Resolver<'c> {
    config: &'c Config,
    r: Resolved,
    comdats: HashMap<&'static [u8], FileId>,
    pending: Vec<FileId>,
    errors: Vec<String>,
}

pub fn resolve(config: &Config, inputs: &'static [InputFile]) -> Result<Resolved> {
    // Parse every input in parallel: parsing is zero-copy validation, so it is cheap even for
    // archive members that will never be extracted.
    let parsed: Vec<Result<File>> = inputs
        .par_iter()
        .map(|f| match f.kind {
            FileKind::Object => ObjFile::parse(f).map(File::Obj),
            FileKind::Shared => SharedFile::parse(f).map(File::Shared),
            FileKind::Bitcode => Ok(File::None),
        })
        .collect();
    let mut files = Vec::with_capacity(parsed.len());
    let mut errors = Vec::new();
    for (p, input) in parsed.into_iter().zip(inputs) {
        match p {
            Ok(f) => files.push(f),
            Err(e) => {
                // A corrupt archive member that is never extracted is not an error for lld
                // either (it is only read when needed); we report it only when it is.
                if input.lazy {
                    files.push(File::None);
                    continue;
                }
                errors.extend(e.messages);
                files.push(File::None);
            }
        }
        if input.kind == FileKind::Bitcode {
            errors.push(format!(
                "{}: LLVM bitcode inputs are not supported yet (ThinLTO arrives in a later release)",
                input.name
            ));
        }
    }
    if !errors.is_empty() {
        return Err(Error::many(errors));
    }
    let n = files.len();
    let sym_ids = files
        .iter()
        .map(|f| match f {
            File::Obj(o) => Vec::with_capacity(o.symbols.len().saturating_sub(o.first_global)),
            _ => Vec::new(),
        })
        .collect();
    let discarded = files
        .iter()
        .map(|f| match f {
            File::Obj(o) => vec![false; o.sections.len()],
            _ => Vec::new(),
        })
        .collect();
    let mut rs = Resolver {
        config,
        r: Resolved {
            files,
            loaded: vec![false; n],
            symbols: Vec::new(),
            by_name: HashMap::new(),
            sym_ids,
            discarded,
            dso_needed: vec![false; n],
        },
        comdats: HashMap::new(),
        pending: Vec::new(),
        errors: Vec::new(),
    };
    // -u and the entry symbol act as undefined references before any file, so they extract
    // archive members wherever they are on the command line.
    for u in &config.undefined {
        let id = rs.intern(leak_name(u));
        rs.r.symbols[id].strong_ref = true;
    }
    if let Some(e) = &config.entry {
        let id = rs.intern(leak_name(e));
        rs.r.symbols[id].strong_ref = true;
    }
    for (_, expr) in &config.defsym {
        if let Some(target) = defsym_target(expr) {
            let id = rs.intern(leak_name(target));
            rs.r.symbols[id].strong_ref = true;
        }
    }
    for f in 0..n {
        if inputs[f].lazy {
            rs.add_lazy_member(f, inputs);
        } else {
            rs.load(f);
        }
        rs.drain();
    }
    if !rs.errors.is_empty() {
        return Err(Error::many(rs.errors));
    }
    // --defsym definitions override whatever the inputs define, as in lld.
    for (name, _) in &config.defsym {
        let id = rs.intern(leak_name(name));
        let sym = &mut rs.r.symbols[id];
        sym.def = Def::Synthetic;
        sym.weak = false;
    }
    // Symbols of --as-needed libraries that nothing needs are not bound to them (the library is
    // not in DT_NEEDED, so the reference stays an undefined weak one).
    let mut r = rs.r;
    for sym in r.symbols.iter_mut() {
        // Whatever is still lazy or undefined is an undefined symbol, weak unless some object
        // referenced it strongly.
        if matches!(sym.def, Def::Lazy(_) | Def::Undefined) {
            sym.def = Def::Undefined;
            sym.weak = !sym.strong_ref;
        }
        if let Def::Shared(f, _) = sym.def {
            if inputs[f].as_needed && !r.dso_needed[f] {
                sym.def = Def::Undefined;
                sym.weak = true;
            }
        }
    }
    let rs_r = r;
    Ok(rs_r)
}

/// The symbol a `--defsym` expression refers to (`sym`, `sym+4`), or `None` for a number.
pub fn defsym_target(expr: &str) -> Option<&str> {
    let base = expr.split(['+', '-']).next().unwrap_or("").trim();
    if base.is_empty() || base.starts_with(|c: char| c.is_ascii_digit()) {
        None
    } else {
        Some(base)
    }
}

/// The constant part of a `--defsym` expression (`sym+4` → 4, `0x1000` → 0x1000).
pub fn defsym_offset(expr: &str) -> Option<i64> {
    let parse = |t: &str| -> Option<i64> {
        let t = t.trim();
        if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
            i64::from_str_radix(h, 16).ok()
        } else {
            t.parse().ok()
        }
    };
    match expr.find(['+', '-']) {
        Some(p) if defsym_target(expr).is_some() => {
            let v = parse(&expr[p + 1..])?;
            Some(if &expr[p..p + 1] == "-" { -v } else { v })
        }
        Some(_) | None if defsym_target(expr).is_some() => Some(0),
        _ => parse(expr),
    }
}

fn leak_name(s: &str) -> &'static [u8] {
    Box::leak(s.as_bytes().to_vec().into_boxed_slice())
}

impl<'c> Resolver<'c> {
    fn intern(&mut self, name: &'static [u8]) -> SymbolId {
        if let Some(&id) = self.r.by_name.get(name) {
            return id;
        }
        let id = self.r.symbols.len();
        self.r.symbols.push(Symbol {
            name,
            def: Def::Undefined,
            weak: false,
            strong_ref: false,
            dso_ref: false,
            obj_ref: false,
            visibility: elf::STV_DEFAULT,
            in_dso: false,
        });
        self.r.by_name.insert(name, id);
        id
    }

    /// `--wrap=foo`: undefined references to `foo` bind to `__wrap_foo`, and references to
    /// `__real_foo` bind to `foo` (GNU ld's rule: definitions keep their names).
    fn wrapped_name(&self, name: &'static [u8], undefined: bool) -> &'static [u8] {
        if !undefined || self.config.wrap.is_empty() {
            return name;
        }
        let s = match std::str::from_utf8(name) {
            Ok(s) => s,
            Err(_) => return name,
        };
        if self.config.wrap.iter().any(|w| w == s) {
            return leak_name(&format!("__wrap_{s}"));
        }
        if let Some(real) = s.strip_prefix("__real_") {
            if self.config.wrap.iter().any(|w| w == real) {
                return leak_name(real);
            }
        }
        name
    }

    fn drain(&mut self) {
        while !self.pending.is_empty() {
            let f = self.pending.remove(0);
            self.load(f);
        }
    }

    fn extract(&mut self, f: FileId) {
        if !self.r.loaded[f] && !self.pending.contains(&f) {
            self.pending.push(f);
        }
    }

    fn add_lazy_member(&mut self, f: FileId, inputs: &'static [InputFile]) {
        let _ = inputs;
        let File::Obj(o) = &self.r.files[f] else { return };
        let mut names = Vec::new();
        for i in o.first_global..o.symbols.len() {
            let s = &o.symbols[i];
            let shndx = s.st_shndx(LE);
            if shndx == elf::SHN_UNDEF || s.st_bind() == elf::STB_LOCAL {
                continue;
            }
            names.push(o.sym_name(i));
        }
        for name in names {
            let id = self.intern(name);
            let sym = &mut self.r.symbols[id];
            match sym.def {
                Def::Undefined => {
                    if sym.strong_ref {
                        self.extract(f);
                    } else {
                        sym.def = Def::Lazy(f);
                    }
                }
                _ => {}
            }
        }
    }

    fn load(&mut self, f: FileId) {
        if self.r.loaded[f] {
            return;
        }
        self.r.loaded[f] = true;
        match &self.r.files[f] {
            File::Obj(_) => self.load_obj(f),
            File::Shared(_) => self.load_shared(f),
            File::None => {}
        }
    }

    fn load_obj(&mut self, f: FileId) {
        let File::Obj(o) = &self.r.files[f] else { unreachable!() };
        // COMDAT: the first file to bring a group signature keeps its members.
        let groups: Vec<(&'static [u8], Vec<u32>)> =
            o.groups.iter().map(|(_, sig, m)| (*sig, m.clone())).collect();
        for (sig, members) in groups {
            if self.comdats.contains_key(sig) {
                for m in members {
                    self.r.discarded[f][m as usize] = true;
                }
            } else {
                self.comdats.insert(sig, f);
            }
        }
        let File::Obj(o) = &self.r.files[f] else { unreachable!() };
        let first = o.first_global;
        let count = o.symbols.len();
        let mut ids = Vec::with_capacity(count.saturating_sub(first));
        for i in first..count {
            let File::Obj(o) = &self.r.files[f] else { unreachable!() };
            let s = o.symbols[i];
            let name = o.sym_name(i);
            let bind = s.st_bind();
            let shndx = s.st_shndx(LE);
            let vis = s.st_other & 3;
            let in_discarded = shndx != elf::SHN_UNDEF
                && shndx < elf::SHN_LORESERVE
                && (self.r.discarded[f][shndx as usize]
                    || o.sections.get(shndx as usize).map_or(false, |s| s.kind == SecKind::Ignored && s.sh_type == elf::SHT_GROUP));
            let undefined = shndx == elf::SHN_UNDEF;
            let id = self.intern(self.wrapped_name(name, undefined));
            ids.push(id);
            {
                let sym = &mut self.r.symbols[id];
                if vis_rank(vis) < vis_rank(sym.visibility) {
                    sym.visibility = vis;
                }
            }
            if bind == elf::STB_LOCAL {
                self.errors.push(format!("{}: local symbol {} found in the global part of the symbol table", self.r.files[f].name(), String::from_utf8_lossy(name)));
                continue;
            }
            if shndx == elf::SHN_UNDEF || in_discarded {
                self.add_undefined(id, bind == elf::STB_WEAK);
            } else if shndx == elf::SHN_COMMON {
                self.add_common(id, f, i);
            } else {
                self.add_defined(id, f, i, bind == elf::STB_WEAK);
            }
        }
        self.r.sym_ids[f] = ids;
    }

    fn add_undefined(&mut self, id: SymbolId, weak: bool) {
        let sym = &mut self.r.symbols[id];
        sym.obj_ref = true;
        if !weak {
            sym.strong_ref = true;
        }
        match sym.def {
            Def::Lazy(m) if !weak => {
                self.extract(m);
            }
            Def::Shared(df, _) if !weak => {
                self.r.dso_needed[df] = true;
            }
            Def::Undefined => {
                if weak && !sym.strong_ref {
                    sym.weak = true;
                } else {
                    sym.weak = false;
                }
            }
            _ => {}
        }
    }

    fn add_common(&mut self, id: SymbolId, f: FileId, i: usize) {
        let size = |r: &Resolved, f: FileId, i: usize| r.obj(f).symbols[i].st_size(LE);
        let new_size = size(&self.r, f, i);
        let sym = &self.r.symbols[id];
        match sym.def {
            Def::Undefined | Def::Lazy(_) | Def::Shared(..) => {
                let sym = &mut self.r.symbols[id];
                sym.def = Def::Common(f, i);
                sym.weak = false;
            }
            Def::Common(of, oi) => {
                if new_size > size(&self.r, of, oi) {
                    self.r.symbols[id].def = Def::Common(f, i);
                }
            }
            Def::Defined(..) => {
                // A weak definition loses to a common symbol, as in lld.
                if sym.weak {
                    let sym = &mut self.r.symbols[id];
                    sym.def = Def::Common(f, i);
                    sym.weak = false;
                }
            }
            Def::Synthetic => {}
        }
    }

    fn add_defined(&mut self, id: SymbolId, f: FileId, i: usize, weak: bool) {
        let sym = &self.r.symbols[id];
        match sym.def {
            Def::Undefined | Def::Lazy(_) | Def::Shared(..) | Def::Synthetic => {
                let sym = &mut self.r.symbols[id];
                sym.def = Def::Defined(f, i);
                sym.weak = weak;
            }
            Def::Common(..) => {
                if !weak {
                    let sym = &mut self.r.symbols[id];
                    sym.def = Def::Defined(f, i);
                    sym.weak = false;
                }
            }
            Def::Defined(of, oi) => {
                if sym.weak && !weak {
                    let sym = &mut self.r.symbols[id];
                    sym.def = Def::Defined(f, i);
                    sym.weak = false;
                } else if !sym.weak && !weak {
                    let msg = self.duplicate_message(id, (of, oi), (f, i));
                    self.errors.push(msg);
                }
            }
        }
    }

    fn duplicate_message(&self, id: SymbolId, a: (FileId, usize), b: (FileId, usize)) -> String {
        let name = crate::diag::demangle(self.r.symbols[id].name);
        let loc = |(f, i): (FileId, usize)| {
            let o = self.r.obj(f);
            let s = &o.symbols[i];
            let shndx = s.st_shndx(LE) as usize;
            let sec = o.sections.get(shndx).map(|s| String::from_utf8_lossy(s.name).into_owned()).unwrap_or_default();
            let src = crate::diag::source_file(o);
            let src = src.map(|s| format!(">>> defined at {s}\n>>>            ")).unwrap_or_else(|| ">>> defined at ".to_string());
            format!("{src}{}:({}+0x{:x})", o.input.name, sec, s.st_value(LE))
        };
        format!("duplicate symbol: {name}\n{}\n{}", loc(a), loc(b))
    }

    fn load_shared(&mut self, f: FileId) {
        if self.config.is_static {
            // lld links a shared library named explicitly even with -static; -Bstatic only
            // stops the -l search from finding them.
        }
        let File::Shared(s) = &self.r.files[f] else { unreachable!() };
        let entries: Vec<(usize, &'static [u8], Option<&'static [u8]>, bool, bool, bool)> = s
            .syms
            .iter()
            .enumerate()
            .map(|(k, d)| (k, d.name, d.version, d.hidden, d.defined, d.sym.st_bind() == elf::STB_WEAK))
            .collect();
        for (k, name, version, hidden, defined, weak) in entries {
            if !defined {
                // A library's undefined reference: the executable must export a definition.
                let id = self.intern(name);
                self.r.symbols[id].dso_ref = true;
                if !weak {
                    if let Def::Lazy(m) = self.r.symbols[id].def {
                        self.extract(m);
                    }
                }
                continue;
            }
            let mut keys: Vec<&'static [u8]> = Vec::new();
            if !hidden {
                keys.push(name);
            }
            if let Some(v) = version {
                let mut full = name.to_vec();
                full.push(b'@');
                full.extend_from_slice(v);
                keys.push(Box::leak(full.into_boxed_slice()));
            }
            for key in keys {
                let id = self.intern(key);
                let sym = &mut self.r.symbols[id];
                sym.in_dso = true;
                match sym.def {
                    Def::Undefined => {
                        sym.def = Def::Shared(f, k);
                        if sym.strong_ref {
                            self.r.dso_needed[f] = true;
                        }
                        sym.weak = weak;
                    }
                    Def::Lazy(_) => {
                        sym.def = Def::Shared(f, k);
                        sym.weak = weak;
                    }
                    _ => {}
                }
            }
        }
    }
}

impl File {
    pub fn name(&self) -> &str {
        match self {
            File::Obj(o) => &o.input.name,
            File::Shared(s) => &s.input.name,
            File::None => "",
        }
    }
}
