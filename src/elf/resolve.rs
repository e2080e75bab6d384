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

use object::elf;
use object::read::elf::Sym as _;
use rayon::prelude::*;

use crate::elf::config::Config;
use crate::elf::object::{ObjFile, ParseOpts, SecKind};
use crate::elf::shared::SharedFile;
use crate::elf::types::LE;
use crate::error::{Error, Result};
use crate::input::{FileKind, InputFile};
use crate::util::fasthash::FastMap;

mod bind;
mod lazy;
mod state;
mod versions;
mod wrap;

pub use state::Resolver;
use state::{default_versioned, leak_name, wrapped_name, FileNames, Frame, Step, IN_GROUP_SECTION, NO_SECTION};
use versions::{apply_versions, mark_dynamic_listed};

use crate::elf::config::defsym_target;
use crate::elf::symtab::{BitcodeFile, Def, File, FileId, GccIrFile, NameKey, NameMap, Resolved, Symbol, SymbolId};

/// irsymtab visibility (LLVM's order: default, hidden, protected) as an ELF `STV_*`.
fn ir_visibility(v: u8) -> u8 {
    match v {
        1 => elf::STV_HIDDEN,
        2 => elf::STV_PROTECTED,
        _ => elf::STV_DEFAULT,
    }
}

/// A GCC IR visibility (`LDPV_*`: default, protected, internal, hidden) as an ELF `STV_*`.
fn gcc_visibility(v: u8) -> u8 {
    use crate::lto::plugin_api::{LDPV_HIDDEN, LDPV_INTERNAL, LDPV_PROTECTED};
    match v {
        LDPV_PROTECTED => elf::STV_PROTECTED,
        LDPV_INTERNAL => elf::STV_INTERNAL,
        LDPV_HIDDEN => elf::STV_HIDDEN,
        _ => elf::STV_DEFAULT,
    }
}

fn vis_rank(v: u8) -> u8 {
    match v {
        elf::STV_DEFAULT => 3,
        elf::STV_PROTECTED => 2,
        elf::STV_HIDDEN => 1,
        _ => 0,
    }
}

/// Parses one input; `opts.merge`: split SHF_MERGE sections (lld: at `-O1` and above, and always for
/// `-r`). An object carrying GCC LTO IR is a `GccIr` file when it is slim (it has no native
/// code) or when `claim_gcc` (GCC's plugin is in the link, which then compiles fat objects from
/// their IR too, as with GNU ld); objects LTO generated are never claimed.
/// `llvm`: where the user's LLVM is, for bitcode without a usable irsymtab.
fn parse_file(f: &'static InputFile, opts: ParseOpts, claim_gcc: bool, llvm: Option<&crate::lto::options::LtoOptions>) -> Result<File> {
    match f.kind {
        FileKind::Object => {
            let o = ObjFile::parse(f, opts)?;
            // A fat object without GCC's plugin is linked from its native code, whatever its IR.
            if GccIrFile::has_ir(&o) && (claim_gcc || GccIrFile::is_slim(&o)) {
                GccIrFile::from_object(&o).map(File::GccIr)
            } else {
                Ok(File::Obj(o))
            }
        }
        FileKind::Shared => SharedFile::parse(f).map(File::Shared),
        FileKind::Bitcode => BitcodeFile::parse(f, llvm).map(File::Bitcode),
    }
}

impl<'c> Resolver<'c> {
    /// Parses every input and binds every symbol (pass 1). With bitcode in the link, the LTO stage
    /// reads `resolved()`, and its objects join with `add_lto_objects` before `finish`.
    /// Parses every input in parallel (zero-copy validation, so cheap even for archive members
    /// that will never be extracted): the files, each one's names, and the errors lld gives for
    /// them (a corrupt member that is never extracted is no error, as in lld).
    fn parse_inputs(config: &Config, inputs: &'static [InputFile]) -> Result<(Vec<File>, Vec<FileNames>)> {
        // Parse every input in parallel: parsing is zero-copy validation, so it is cheap even for
        // archive members that will never be extracted.
        let opts = ParseOpts { merge: config.opt_level > 0 || config.relocatable, relocatable: config.relocatable, execstack: config.z_execstack };
        let claim_gcc = config.gcc_plugin().is_some();
        let lto_opts = Some(&config.lto);
        let wrap = &config.wrap;
        let (parsed, names): (Vec<Result<File>>, Vec<FileNames>) = inputs
            .par_iter()
            .map(|f| {
                let p = parse_file(f, opts, claim_gcc, lto_opts);
                let names = p.as_ref().map(|file| FileNames::of(file, wrap)).unwrap_or_default();
                (p, names)
            })
            .unzip();
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
        }
        // Bitcode for another machine, archive members included (lld checks every file it
        // parses against the first ELF file or the emulation, lazy or not).
        let mut against = None;
        for (f, input) in files.iter().zip(inputs) {
            if let File::Bitcode(b) = f {
                if b.foreign_machine().is_some() {
                    let with = against.get_or_insert_with(|| {
                        let first_elf = inputs.iter().find(|i| matches!(i.kind, FileKind::Object | FileKind::Shared));
                        crate::elf::input::incompatible_with(config, first_elf.map(|i| i.name.as_str()))
                    });
                    errors.push(format!("{} is incompatible with {with}", input.name));
                }
            }
        }
        if !errors.is_empty() {
            return Err(Error::many(errors));
        }
        Ok((files, names))
    }

    pub fn start(config: &'c Config, inputs: &'static [InputFile]) -> Result<Resolver<'c>> {
        let mut laps = crate::trace::Laps::default();
        let (files, names) = Self::parse_inputs(config, inputs)?;
        laps.lap("Parse input files");
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
                by_name: NameMap::default(),
                sym_ids,
                discarded,
                dso_needed: vec![false; n],
                dso_as_needed: inputs.iter().map(|i| i.as_needed).collect(),
                inputs: inputs.iter().collect(),
                load_order: Vec::new(),
                trace_order: Vec::new(),
                versions: Vec::new(),
                common_align: Default::default(),
                wrap_redirect: Default::default(),
                comdat_winners: Default::default(),
                lto_first_file: None,
                version_errors_before_lto: None,
            },
            comdats: FastMap::default(),
            frames: Vec::new(),
            backrefs: Vec::new(),
            errors: Vec::new(),
            lto_first_file: None,
            sonames: std::collections::HashMap::new(),
            names,
            laps,
            wrap_refs: Default::default(),
            wrap_active: config.wrap.clone(),
        };
        // -u and the entry symbol act as undefined references before any file, so they extract
        // archive members wherever they are on the command line.
        let mut roots: Vec<&str> = config.undefined.iter().map(String::as_str).collect();
        roots.extend(config.entry.as_deref());
        for name in roots {
            rs.add_root(name);
        }
        // --wrap: LTO must not inline or drop what the wrapped names bind to.
        for w in &config.wrap {
            for n in [w.clone(), format!("__wrap_{w}"), format!("__real_{w}")] {
                let id = rs.intern(leak_name(&n));
                rs.r.symbols[id].used_in_regular = true;
                // lld: the wrapped symbol and `__real_` must not be inlined (their final targets
                // are only known after renaming); the wrapper is an ordinary definition.
                if !n.starts_with("__wrap_") {
                    rs.r.symbols[id].script_defined = true;
                }
            }
        }
        for f in 0..n {
            if inputs[f].lazy {
                rs.add_lazy_member(f, inputs);
            } else {
                rs.load(f);
            }
        }
        rs.undefined_globs();
        rs.bind_wrapped();
        rs.report_backrefs();
        rs.laps.lap("Bind symbols");
        rs.bind_command_line_names();
        if !rs.errors.is_empty() {
            return Err(Error::many(rs.errors));
        }
        if rs.r.has_bitcode() {
            // LTO must keep what the dynamic symbol table will export (lld applies dynamic lists
            // before LTO too).
            mark_dynamic_listed(config, &mut rs.r)?;
        }
        Ok(rs)
    }

    /// After the files, as lld: the names `--defsym` and the script read and define join the
    /// symbol table (after the files' names).
    fn bind_command_line_names(&mut self) {
        // After the files, as lld: the symbols `--defsym` expressions read are referenced like
        // `-u` names (an archive member defining one is extracted now), then the names they
        // define join; names new to the link follow the files' in the symbol table.
        for name in self.config.defsym.iter().filter_map(|(_, e)| defsym_target(e)) {
            let id = self.add_root(name);
            self.add_unused_undefined(id);
        }
        for (name, _) in &self.config.defsym {
            let id = self.intern(leak_name(name));
            self.r.symbols[id].used_in_regular = true;
            self.r.symbols[id].script_defined = true;
        }
        // After the files, as lld (names new to the link follow theirs in the symbol table):
        // the symbols a script's expressions read are used like `-u` names, and its
        // assignments define symbols (PROVIDE only if referenced, decided in `finish`).
        // lld references each with `addUnusedUndefined` (a strong reference): an archive member
        // defining one is extracted, a library defining one is needed.
        for name in self.config.script.referenced_symbols() {
            let id = self.intern(leak_name(&name));
            self.r.symbols[id].used_in_regular = true;
            self.add_unused_undefined(id);
        }
        for a in self.config.script.assigns() {
            if a.name == "." || a.provide {
                continue;
            }
            let id = self.intern(leak_name(&a.name));
            self.r.symbols[id].used_in_regular = true;
            self.r.symbols[id].script_defined = true;
        }
    }

    /// lld's `addUnusedUndefined` after the files: a strong reference to `id` from the command
    /// line or a script extracts the archive member defining it, or makes the library defining
    /// it needed.
    fn add_unused_undefined(&mut self, id: SymbolId) {
        match self.r.symbols[id].def {
            Def::Lazy(m) => self.load(m),
            Def::Shared(df, _) => self.r.dso_needed[df] = true,
            _ => {}
        }
    }

    /// Before LTO, as lld (`handleLibcall`): an archive member in bitcode that defines one of
    /// `libcalls` (the runtime functions code generation may call, which no module's symbol
    /// table need name) is extracted now, so that LTO compiles it; native ones wait until the
    /// LTO objects are added (their extraction could bring in what the program never uses).
    pub fn extract_bitcode_libcalls(&mut self, libcalls: &[String]) {
        for name in libcalls {
            let Some(id) = self.r.lookup(name.as_bytes()) else { continue };
            if let Def::Lazy(m) = self.r.symbols[id].def {
                if self.r.inputs[m].kind == crate::input::FileKind::Bitcode {
                    self.load(m);
                }
            }
        }
    }

    /// Before LTO, as lld: the version script's checks on the symbols bitcode still defines.
    pub fn check_versions_before_lto(&mut self) -> Result<()> {
        self.r.version_errors_before_lto = crate::elf::version_checks::before_lto(self.config, &self.r)?;
        Ok(())
    }

    /// The state after pass 1, for the LTO stage.
    pub fn resolved(&self) -> &Resolved {
        &self.r
    }

    /// Pass 2: the objects LTO generated replace the bitcode files. Bitcode definitions become
    /// undefined (the objects define what survived), object references count native objects
    /// only, and the objects are loaded after all other files, as lld does. The binding an
    /// undefined symbol takes keeps the bitcode's references: lld's `Symbol::binding` is set
    /// while the bitcode is resolved and LTO does not reset it, so a name bitcode referenced
    /// strongly stays a GLOBAL undefined (`undefined symbol`) even when only a weak native
    /// reference is left after LTO.
    pub fn add_lto_objects(&mut self, objects: Vec<InputFile>) -> Result<()> {
        for sym in self.r.symbols.iter_mut() {
            if let Def::Bitcode(..) = sym.def {
                sym.def = Def::Undefined;
                sym.weak = false;
                // The object LTO generated names the version again if it keeps the definition.
                sym.default_version = None;
            }
            sym.obj_ref = sym.obj_ref_native;
        }
        let first = self.r.files.len();
        self.lto_first_file = Some(first);
        self.r.lto_first_file = Some(first);
        let objects: Vec<&'static InputFile> = objects.into_iter().map(|o| &*crate::util::keep::value(o)).collect();
        let opts =
            ParseOpts { merge: self.config.opt_level > 0 || self.config.relocatable, relocatable: self.config.relocatable, execstack: self.config.z_execstack };
        let wrap = &self.wrap_active;
        let (parsed, names): (Vec<Result<File>>, Vec<FileNames>) = objects
            .par_iter()
            .map(|f| {
                let p = match f.kind {
                    // What LTO generated is never claimed again (`-r` with GCC's plugin
                    // generates a GCC LTO object on purpose).
                    FileKind::Object => ObjFile::parse(f, opts).map(File::Obj),
                    _ => parse_file(f, opts, false, None),
                };
                let names = p.as_ref().map(|file| FileNames::of(file, wrap)).unwrap_or_default();
                (p, names)
            })
            .unzip();
        self.names.extend(names);
        let mut errors = Vec::new();
        for (p, input) in parsed.into_iter().zip(objects) {
            let file = p.unwrap_or_else(|e| {
                errors.extend(e.messages);
                File::None
            });
            self.r.sym_ids.push(match &file {
                File::Obj(o) => Vec::with_capacity(o.symbols.len().saturating_sub(o.first_global)),
                _ => Vec::new(),
            });
            self.r.discarded.push(match &file {
                File::Obj(o) => vec![false; o.sections.len()],
                _ => Vec::new(),
            });
            self.r.files.push(file);
            self.r.loaded.push(false);
            self.r.dso_needed.push(false);
            self.r.dso_as_needed.push(false);
            self.r.inputs.push(input);
        }
        if !errors.is_empty() {
            return Err(Error::many(errors));
        }
        for f in first..self.r.files.len() {
            // Libraries GCC's plugin asked for join like command-line ones (archive members lazy).
            if self.r.inputs[f].lazy {
                self.add_lazy_member(f, &[]);
            } else {
                self.load(f);
            }
        }
        if !self.errors.is_empty() {
            return Err(Error::many(std::mem::take(&mut self.errors)));
        }
        Ok(())
    }

    /// Final bindings: `--defsym` overrides, unreferenced lazy symbols become undefined.
    pub fn finish(mut self) -> Result<Resolved> {
        let config = self.config;
        let tls = self.tls_mismatches();
        if !tls.is_empty() {
            return Err(Error::many(tls));
        }
        let mut rs = &mut self;
        // --defsym definitions override whatever the inputs define, as in lld.
        for (name, _) in &config.defsym {
            let id = rs.intern(leak_name(name));
            let sym = &mut rs.r.symbols[id];
            sym.def = Def::Synthetic;
            sym.weak = false;
        }
        // Linker-script assignments, as lld's declareSymbols: a PROVIDE only for a name that is
        // referenced and not defined.
        for a in config.script.assigns() {
            if a.name == "." {
                continue;
            }
            let existing = rs.r.lookup(a.name.as_bytes());
            if a.provide {
                let Some(id) = existing else { continue };
                if !matches!(rs.r.symbols[id].def, Def::Undefined | Def::Lazy(_)) {
                    continue;
                }
            }
            let id = rs.intern(leak_name(&a.name));
            let sym = &mut rs.r.symbols[id];
            sym.def = Def::Synthetic;
            sym.weak = false;
            if a.hidden {
                sym.visibility = object::elf::STV_HIDDEN;
            }
        }
        // Symbols of --as-needed libraries that nothing needs are not bound to them (the library is
        // not in DT_NEEDED, so the reference stays an undefined weak one).
        let _ = &mut rs;
        self.r.comdat_winners = std::mem::take(&mut self.comdats);
        let mut r = self.r;
        // --exclude-libs: definitions from the named archives are not exported; before the
        // versions, which then need not exist for them (lld: `version-exclude-libs.s`).
        if !config.exclude_libs.is_empty() {
            let all = config.exclude_libs.iter().any(|l| l == "ALL");
            for sym in r.symbols.iter_mut() {
                let (Def::Defined(f, _) | Def::Common(f, _)) = sym.def else { continue };
                let Some((archive, _)) = &r.inputs[f].archive else { continue };
                let base = std::path::Path::new(archive).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                if all || config.exclude_libs.contains(&base) {
                    sym.forced_local = true;
                    sym.excluded_lib = true;
                }
            }
        }
        for w in &config.wrap {
            if let (Some(id), Some(wid)) = (r.lookup(w.as_bytes()), r.lookup(format!("__wrap_{w}").as_bytes())) {
                r.wrap_redirect.insert(id, wid);
            }
        }
        // Version scripts and dynamic lists.
        apply_versions(config, &mut r)?;
        demote_shared_start_stop(config, &mut r);
        let (files, dso_as_needed, dso_needed) = (&r.files, &r.dso_as_needed, &r.dso_needed);
        for sym in r.symbols.iter_mut() {
            // A hidden or protected reference must be satisfied inside the output, so a library's
            // definition met before that reference does not count either (lld: a shared symbol
            // with non-default merged visibility is treated as undefined).
            if matches!(sym.def, Def::Shared(..)) && sym.visibility != elf::STV_DEFAULT {
                sym.def = Def::Undefined;
            }
            // Whatever is still lazy or undefined is an undefined symbol, weak unless some object
            // referenced it strongly.
            if matches!(sym.def, Def::Lazy(_) | Def::Undefined) {
                sym.def = Def::Undefined;
                sym.weak = !sym.strong_ref;
            }
            demote_if_unneeded(sym, files, dso_as_needed, dso_needed);
        }
        Ok(r)
    }
}

/// The symbols of libraries `--as-needed` that `needed` says are not needed become undefined
/// weak references: lld keeps the library's symbol type (it shows in the symbol tables), but
/// the library is not needed, so the reference is written as an undefined weak one.
pub fn demote_unneeded_shared(r: &mut Resolved, needed: &[bool]) {
    let (files, dso_as_needed) = (&r.files, &r.dso_as_needed);
    for sym in r.symbols.iter_mut() {
        demote_if_unneeded(sym, files, dso_as_needed, needed);
    }
}

/// One symbol of `demote_unneeded_shared` (the resolution calls it in its own pass over the
/// symbols, with the libraries its references needed).
fn demote_if_unneeded(sym: &mut crate::elf::symtab::Symbol, files: &[File], dso_as_needed: &[bool], needed: &[bool]) {
    if let Def::Shared(f, k) = sym.def {
        if dso_as_needed[f] && !needed[f] {
            let File::Shared(dso) = &files[f] else { unreachable!() };
            let ty = dso.syms[k].sym.st_type();
            sym.def = Def::Undefined;
            sym.weak = true;
            sym.ref_type = Some(if ty == elf::STT_GNU_IFUNC { elf::STT_FUNC } else { ty });
        }
    }
}

/// `__start_foo`/`__stop_foo` that a shared library defines are still the linker's when the output
/// has a section `foo` (lld's addOptionalRegular replaces anything not defined in an object): they
/// become undefined here so that layout defines them, as it does for an unbound reference.
/// Without a SECTIONS script an input section `foo` makes an output section `foo`; with one the
/// library's definition is kept. The same holds for the end markers (`_end`, `etext`, `_edata`,
/// `__bss_start`, ...), which GNU ld's shared libraries often export: the output's own ones
/// win, so `&_end` in a program is its own end, as with lld.
fn demote_shared_start_stop(config: &Config, r: &mut Resolved) {
    if config.script.has_sections {
        return;
    }
    // The section names a library's `__start_`/`__stop_` symbols name: usually none, so the
    // sections are only looked at for those names (a large link has 10^5-10^6 sections).
    let wanted: crate::util::fasthash::FastSet<&[u8]> = r
        .symbols
        .iter()
        .filter(|s| matches!(s.def, Def::Shared(..)))
        .filter_map(|s| s.name.strip_prefix(b"__start_").or_else(|| s.name.strip_prefix(b"__stop_")))
        .collect();
    let mut present: crate::util::fasthash::FastSet<&[u8]> = Default::default();
    if !wanted.is_empty() {
        for (f, o) in r.objects_in_load_order() {
            for (i, s) in o.sections.iter().enumerate() {
                if wanted.contains(s.name) && s.kind != SecKind::Ignored && s.flags & elf::SHF_ALLOC as u64 != 0 && !r.discarded[f][i] {
                    present.insert(s.name);
                }
            }
        }
    }
    let demote: Vec<SymbolId> = (0..r.symbols.len())
        .filter(|&id| {
            let s = &r.symbols[id];
            let sec = s.name.strip_prefix(b"__start_").or_else(|| s.name.strip_prefix(b"__stop_"));
            matches!(s.def, Def::Shared(..)) && (sec.is_some_and(|sec| present.contains(sec)) || crate::elf::reserved::is_public_linker_defined(s.name))
        })
        .collect();
    for id in demote {
        r.symbols[id].def = Def::Undefined;
    }
}

impl<'c> Resolver<'c> {
    fn intern(&mut self, name: &'static [u8]) -> SymbolId {
        self.intern_key(NameKey::new(name))
    }

    fn intern_key(&mut self, key: NameKey) -> SymbolId {
        let id = self.r.symbols.len();
        let name = key.name;
        match self.r.by_name.entry(key) {
            std::collections::hash_map::Entry::Occupied(e) => return *e.get(),
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(id);
            }
        }
        self.r.symbols.push(Symbol {
            name,
            def: Def::Undefined,
            weak: false,
            strong_ref: false,
            dso_ref: false,
            dso_strong_ref: false,
            excluded_lib: false,
            obj_ref: false,
            visibility: elf::STV_DEFAULT,
            in_dso: false,
            used_in_regular: false,
            forced_local: false,
            dynamic_listed: false,
            version: 1,
            version_hidden: false,
            default_version: None,
            strong_ref_native: false,
            obj_ref_native: false,
            script_defined: false,
            ref_type: None,
        });
        id
    }

    /// Archive members are extracted depth-first, the moment a reference needs them, as lld
    /// does (`Symbol::extract` parses the member right away): a file's definitions are added
    /// first, then its undefined references are resolved one by one, and a reference that
    /// extracts a member resolves all of that member's references before the next one. The
    /// recursion is kept on an explicit stack (`frames`) so that long chains of members cannot
    /// overflow the thread's stack. The order files join the link in (`load_order`) is the
    /// order their sections take in the output.
    fn load(&mut self, f: FileId) {
        let base = self.frames.len();
        self.begin(f);
        while self.frames.len() > base {
            let top = self.frames.last_mut().unwrap();
            let Some(&step) = top.steps.get(top.next) else {
                self.frames.pop();
                continue;
            };
            top.next += 1;
            let from = top.file;
            let (member, id) = match step {
                Step::Undefined { id, weak, native } => (self.add_undefined(id, weak, native), id),
                Step::Wrapped { id, weak } => (self.add_wrapped_reference(id, weak), id),
                Step::Real { id, weak, native } => {
                    self.add_real_reference(id, weak, native);
                    (None, id)
                }
                Step::DsoRef(id) => match self.r.symbols[id].def {
                    Def::Lazy(m) => (Some(m), id),
                    _ => (None, id),
                },
            };
            if let Some(m) = member {
                self.begin(m);
                self.note_backref(id, from, m);
            }
        }
    }

    /// `--warn-backrefs`: the reference to `id` from file `from` extracted member `m`; it is a
    /// backward reference when `m`'s group comes before `from`'s, and the symbol is not weak
    /// (a later definition may override a weak one). lld reports it once per symbol, unless a
    /// later lazy definition dismisses it (`dismiss_backref`).
    fn note_backref(&mut self, id: SymbolId, from: FileId, m: FileId) {
        if !self.config.warn_backrefs || self.lto_first_file.is_some() || self.r.inputs[m].group >= self.r.inputs[from].group {
            return;
        }
        if self.r.symbols[id].weak || self.backrefs.iter().any(|b| b.0 == id) {
            return;
        }
        self.backrefs.push((id, from, m));
    }

    /// A lazy definition of `id` after it was defined: a traditional linker accepts
    /// `-ldef1 -lref -ldef2` (the "linking sandwich"), so lld drops its backward-reference
    /// warning for the symbol.
    fn dismiss_backref(&mut self, id: SymbolId) {
        if !self.backrefs.is_empty() {
            self.backrefs.retain(|b| b.0 != id);
        }
    }

    /// The `--warn-backrefs` warnings, in the order the references were found.
    fn report_backrefs(&self) {
        for &(id, from, m) in &self.backrefs {
            let to = &self.r.inputs[m].name;
            if self.config.warn_backrefs_exclude.iter().any(|g| crate::util::glob::glob_match(g.as_bytes(), to.as_bytes())) {
                continue;
            }
            let name = String::from_utf8_lossy(self.r.symbols[id].name);
            self.config.diag.warn(&format!("backward reference detected: {name} in {} refers to {to}", self.r.inputs[from].name));
        }
    }

    fn add_lazy_member(&mut self, f: FileId, inputs: &'static [InputFile]) {
        let _ = inputs;
        let Some(names) = lazy::offered_names(&self.r.files[f], &self.names[f]) else { return };
        for (key, ver) in names {
            let id = self.intern_key(key);
            let sym = &mut self.r.symbols[id];
            // lld renames the symbol `foo@@VER` whatever becomes of the member: a reference
            // left undefined (a weak one does not extract) is then a versioned one, an error
            // (`layout::scan`).
            if ver.is_some() {
                sym.default_version = ver;
            }
            if sym.def == Def::Undefined {
                if sym.strong_ref || sym.dso_strong_ref || self.wrap_refs.get(&id).is_some_and(|w| w.renamed_strong) {
                    self.load(f);
                } else {
                    sym.def = Def::Lazy(f);
                }
            } else if matches!(sym.def, Def::Defined(..) | Def::Bitcode(..) | Def::Common(..)) {
                self.dismiss_backref(id);
            }
        }
    }

    /// Adds file `f` to the link: its definitions now, its undefined references as a frame
    /// that `load` works through.
    fn begin(&mut self, f: FileId) {
        if self.r.loaded[f] {
            return;
        }
        if self.config.trace {
            self.r.trace_order.push(f);
        }
        if let File::Shared(s) = &self.r.files[f] {
            if let Some(&first) = self.sonames.get(&s.soname) {
                if !s.input.as_needed {
                    self.r.dso_as_needed[first] = false;
                }
                return;
            }
            self.sonames.insert(s.soname.clone(), f);
        }
        self.r.loaded[f] = true;
        self.r.load_order.push(f);
        match &self.r.files[f] {
            File::Obj(_) => self.load_obj(f),
            File::Shared(_) => self.load_shared(f),
            File::Bitcode(b) => {
                if self.lto_first_file.is_some() {
                    // LTO-generated code referenced a symbol only a bitcode member defines
                    // (typically a library call); LTO has already run, so it cannot join.
                    self.errors.push(format!(
                        "{}: bitcode member needed after LTO (referenced by LTO-generated code); link it explicitly or with --whole-archive",
                        b.input.name
                    ));
                    return;
                }
                self.load_bitcode(f)
            }
            File::GccIr(g) => {
                if self.lto_first_file.is_some() {
                    self.errors.push(format!(
                        "{}: GCC LTO member needed after LTO (referenced by LTO-generated code); link it explicitly or with --whole-archive",
                        g.input.name
                    ));
                    return;
                }
                self.load_gcc_ir(f)
            }
            File::None => {}
        }
    }

    fn load_obj(&mut self, f: FileId) {
        let File::Obj(o) = &self.r.files[f] else { unreachable!() };
        // COMDAT: the first file to bring a group signature keeps its members.
        let groups: Vec<(&'static [u8], Vec<u32>)> = o.groups.iter().map(|(_, sig, m)| (*sig, m.clone())).collect();
        let from_lto = self.lto_first_file.is_some_and(|first| f >= first);
        for (sig, members) in groups {
            if from_lto {
                continue;
            }
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
        // lld resolves a file's definitions before its undefined references, so that which
        // member a reference extracts does not depend on symbol order.
        let mut undefined_steps = Vec::new();
        // Taken: a file loads once.
        let names = std::mem::take(&mut self.names[f]);
        let mut default_versions = names.default_versions.iter().peekable();
        for i in first..count {
            let File::Obj(o) = &self.r.files[f] else { unreachable!() };
            let s = o.symbols[i];
            let key = names.keys[i - first];
            let name = key.name;
            let bind = s.st_bind();
            let shndx = s.st_shndx(LE);
            let vis = s.st_other & 3;
            let in_discarded = match names.sections[i - first] {
                NO_SECTION => false,
                IN_GROUP_SECTION => true,
                sh => self.r.discarded[f].get(sh as usize).copied().unwrap_or(false),
            };
            // `foo@@VER` defines `foo` (its default version, in `FileNames`): unversioned
            // references bind to it.
            let default_version = default_versions.next_if(|&&(j, _)| j as usize == i).map(|&(_, v)| v);
            // The name as written, for the error below (`key` holds the `--wrap` target of a
            // reference).
            let written = if bind == elf::STB_LOCAL && shndx == elf::SHN_UNDEF { o.sym_name(i) } else { name };
            let id = self.intern_key(key);
            if default_version.is_some() && bind != elf::STB_LOCAL {
                self.r.symbols[id].default_version = default_version;
            }
            ids.push(id);
            // A reference `--wrap` renamed (`foo` bound as `__wrap_foo`) gives its visibility to
            // the name it was written with: lld merges visibility while reading the file and
            // redirects the reference afterwards, so a hidden reference to `foo` hides `foo`.
            let vis_id = if shndx == elf::SHN_UNDEF && vis != elf::STV_DEFAULT && !self.config.wrap.is_empty() {
                let File::Obj(o) = &self.r.files[f] else { unreachable!() };
                let written = o.sym_name(i);
                if written != name {
                    self.intern_key(NameKey::new(written))
                } else {
                    id
                }
            } else {
                id
            };
            if vis_rank(vis) < vis_rank(self.r.symbols[vis_id].visibility) {
                self.r.symbols[vis_id].visibility = vis;
            }
            self.r.symbols[id].used_in_regular = true;
            if bind == elf::STB_LOCAL {
                self.errors.push(format!(
                    "{}: local symbol {} found in the global part of the symbol table",
                    self.r.files[f].name(),
                    String::from_utf8_lossy(written)
                ));
                continue;
            }
            if shndx == elf::SHN_UNDEF && self.r.symbols[id].ref_type.is_none() {
                self.r.symbols[id].ref_type = Some(s.st_type());
            }
            if shndx == elf::SHN_UNDEF && !self.config.wrap.is_empty() {
                let File::Obj(o) = &self.r.files[f] else { unreachable!() };
                let written = o.sym_name(i);
                self.wrapped_steps(written, name, id, bind == elf::STB_WEAK, true, &mut undefined_steps);
            } else if shndx == elf::SHN_UNDEF || in_discarded {
                undefined_steps.push(Step::Undefined { id, weak: bind == elf::STB_WEAK, native: true });
            } else if shndx == elf::SHN_COMMON {
                self.add_common(id, Def::Common(f, i));
            } else {
                self.add_defined(id, Def::Defined(f, i), bind == elf::STB_WEAK);
            }
        }
        self.r.sym_ids[f] = ids;
        self.frames.push(Frame { file: f, steps: undefined_steps, next: 0 });
    }

    fn load_bitcode(&mut self, f: FileId) {
        let File::Bitcode(b) = &self.r.files[f] else { unreachable!() };
        // COMDAT: the first file (bitcode or native) to bring a comdat keeps it; the symbols of
        // a comdat another file won are undefined here (LTO drops their definitions).
        let comdat_names: Vec<&'static [u8]> = b.ir.comdats.iter().map(|c| c.name).collect();
        let mut kept = Vec::with_capacity(comdat_names.len());
        for name in comdat_names {
            match self.comdats.get(name) {
                Some(&owner) => kept.push(owner == f),
                None => {
                    self.comdats.insert(name, f);
                    kept.push(true);
                }
            }
        }
        let File::Bitcode(b) = &self.r.files[f] else { unreachable!() };
        let syms: Vec<(&'static [u8], bool, bool, bool, u8)> = (0..b.syms.len())
            .map(|k| {
                let s = b.sym(k);
                let lost = s.comdat.is_some_and(|c| !kept.get(c as usize).copied().unwrap_or(true));
                (s.name, s.undefined() || lost, s.weak(), s.common(), ir_visibility(s.visibility()))
            })
            .collect();
        self.bind_ir_symbols(f, syms, true);
    }

    /// A GCC LTO object joins: its IR symbols bind like a bitcode file's. A COMDAT key another
    /// file brought first makes this file's members of that group undefined here (GNU ld keeps
    /// the first copy of a group, IR or native).
    fn load_gcc_ir(&mut self, f: FileId) {
        let File::GccIr(g) = &self.r.files[f] else { unreachable!() };
        // The symbols are `&'static`-backed; a copy lets the loop mutate the resolver.
        let syms = g.syms.clone();
        let syms: Vec<_> = syms
            .iter()
            .map(|s| {
                let lost = match s.comdat {
                    Some(key) if !s.undefined() => *self.comdats.entry(key).or_insert(f) != f,
                    _ => false,
                };
                (s.name, s.undefined() || lost, s.weak(), s.common(), gcc_visibility(s.visibility))
            })
            .collect();
        self.bind_ir_symbols(f, syms, false);
    }

    /// Binds the symbols of an IR file (LLVM bitcode or GCC LTO), given as (name, undefined,
    /// weak, common, visibility) in symbol-table order: the strictest visibility wins, undefined
    /// ones are queued as references (pulled depth-first after this file), definitions bind as
    /// `Def::Bitcode(f, k)`. `llvm`: lld's rules for bitcode, a `foo@@VER` definition binds as
    /// `foo`, and the definitions enter the symbol table before the references (lld's
    /// `BitcodeFile::parse`; the order decides which of two exported copies of one name comes
    /// first in `.dynsym`, `fuzz-lto-symver-exe-order`).
    fn bind_ir_symbols(&mut self, f: FileId, syms: Vec<(&'static [u8], bool, bool, bool, u8)>, llvm: bool) {
        let mut ids = vec![0; syms.len()];
        let mut undefined_steps = Vec::new();
        for pass in [false, true] {
            for (k, &(name, undefined, weak, common, vis)) in syms.iter().enumerate() {
                if llvm && undefined != pass {
                    continue;
                }
                let written = name;
                let (name, default_version) = match (undefined, llvm) {
                    (true, _) => (wrapped_name(&self.config.wrap, name), None),
                    (false, true) => default_versioned(name),
                    (false, false) => (name, None),
                };
                let id = self.intern(name);
                if default_version.is_some() {
                    self.r.symbols[id].default_version = default_version;
                }
                ids[k] = id;
                let sym = &mut self.r.symbols[id];
                if vis_rank(vis) < vis_rank(sym.visibility) {
                    sym.visibility = vis;
                }
                // lld reports no duplicate within one bitcode file (`BitcodeFile::postParse`):
                // `foo` and `.symver foo, foo@@@V` (`foo@@V`) are one symbol, its first
                // definition (`lto/version-script2.ll`).
                let same_file = matches!(sym.def, Def::Bitcode(df, _) if df == f) && !weak && !sym.weak;
                if undefined {
                    self.wrapped_steps(written, name, id, weak, false, &mut undefined_steps);
                } else if common {
                    self.add_common(id, Def::Bitcode(f, k));
                } else if !(llvm && same_file) {
                    self.add_defined(id, Def::Bitcode(f, k), weak);
                }
            }
            if !llvm {
                break;
            }
        }
        self.r.sym_ids[f] = ids;
        self.frames.push(Frame { file: f, steps: undefined_steps, next: 0 });
    }

    /// `--undefined-glob=`, after the files (lld's `handleUndefinedGlob`): each symbol of the
    /// table whose name matches, taken before any extraction, is kept from LTO's
    /// internalization, and extracts the archive member that defines it if it is still lazy
    /// when its turn comes. A pattern llvm's GlobPattern rejects is an error.
    fn undefined_globs(&mut self) {
        let config = self.config;
        for pat in &config.undefined_glob {
            let glob = match crate::elf::version_script::SymbolGlob::new(pat.as_bytes()) {
                Ok(g) => g,
                Err(e) => {
                    self.errors.push(format!("--undefined-glob: {e}: {pat}"));
                    continue;
                }
            };
            let matched: Vec<SymbolId> = (0..self.r.symbols.len()).filter(|&id| glob.matches(self.r.symbols[id].name)).collect();
            for id in matched {
                self.r.symbols[id].used_in_regular = true;
                if let Def::Lazy(m) = self.r.symbols[id].def {
                    self.load(m);
                }
            }
        }
    }

    /// A strong reference from the command line (`-u`, the entry, a `--defsym` target) to
    /// `name`, which is not an object's (no `obj_ref`); returns its symbol.
    fn add_root(&mut self, name: &str) -> SymbolId {
        let id = self.intern(leak_name(name));
        let sym = &mut self.r.symbols[id];
        sym.strong_ref = true;
        sym.strong_ref_native = true;
        sym.used_in_regular = true;
        id
    }

    fn load_shared(&mut self, f: FileId) {
        if self.config.is_static {
            // lld links a shared library named explicitly even with -static; -Bstatic only
            // stops the -l search from finding them.
        }
        let File::Shared(s) = &self.r.files[f] else { unreachable!() };
        let entries: Vec<(usize, bool, bool, bool, u8)> =
            s.syms.iter().enumerate().map(|(k, d)| (k, d.hidden, d.defined, d.sym.st_bind() == elf::STB_WEAK, d.sym.st_type())).collect();
        // Taken: a library loads once.
        let names = std::mem::take(&mut self.names[f]);
        let mut dso_steps = Vec::new();
        for (k, hidden, defined, weak, d_type) in entries {
            if !defined {
                // A library's undefined reference: the executable must export a definition.
                let id = self.intern_key(names.keys[k]);
                self.r.symbols[id].dso_ref = true;
                if self.r.symbols[id].ref_type.is_none() {
                    self.r.symbols[id].ref_type = Some(d_type);
                }
                // Not `used_in_regular` (lld sets isUsedInRegularObj for objects only): LTO
                // keeps the definition when the output exports it (`lto::exported`), so a
                // hidden one is internalized and the reference left undefined.
                if !weak {
                    self.r.symbols[id].dso_strong_ref = true;
                    dso_steps.push(Step::DsoRef(id));
                } else if !self.config.wrap.is_empty() && matches!(self.r.symbols[id].def, Def::Lazy(_) | Def::Undefined) {
                    // lld: a weak reference makes a lazy symbol's binding weak, a library's
                    // too, which `--wrap`'s `__real_` binding then keeps (`bind_wrapped`).
                    self.wrap_refs.entry(id).or_default().renamed = true;
                }
                continue;
            }
            let plain = Some(names.keys[k]).filter(|_| !hidden);
            for key in plain.into_iter().chain(names.versioned[k]) {
                let id = self.intern_key(key);
                let sym = &mut self.r.symbols[id];
                sym.in_dso = true;
                // A hidden or protected reference from an object cannot bind to a library's
                // definition (lld: a shared symbol replaces only a default-visibility undefined
                // or lazy one), so an archive member later on the command line can still define
                // it, and otherwise it stays undefined.
                let default_vis = sym.visibility == elf::STV_DEFAULT;
                match sym.def {
                    Def::Undefined if default_vis => {
                        sym.def = Def::Shared(f, k);
                        if sym.strong_ref_native {
                            self.r.dso_needed[f] = true;
                        }
                        sym.weak = weak;
                    }
                    Def::Lazy(_) if default_vis => {
                        sym.def = Def::Shared(f, k);
                        sym.weak = weak;
                    }
                    _ => {}
                }
            }
        }
        self.frames.push(Frame { file: f, steps: dso_steps, next: 0 });
    }
}
