//! The COFF link's options, whichever command line they came from.
//!
//! Two front ends fill a `CoffConfig`: the MinGW flavour of the GNU command line
//! (`driver/mingw.rs`, chosen by `-m i386pep`) and lld-link's MSVC flavour (`driver/link.rs`).
//! lld translates the first into the second and parses again; dtld fills the same structure
//! from both directly, with lld-link's defaults, so every later stage reads one set of options.

use std::path::PathBuf;

/// How much debug information the output keeps (lld-link's `/debug:` modes as the MinGW driver
/// picks them: `-s` → none, `-S` → symbol table only, otherwise DWARF sections and symbols).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DebugMode {
    None,
    Symtab,
    Dwarf,
}

/// One input named on the command line: a path already found (MinGW `-l` search is done by the
/// driver, as lld's MinGW driver does).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoffInput {
    pub path: PathBuf,
    /// `--whole-archive` / `/wholearchive:`: every member joins the link.
    pub whole_archive: bool,
    /// Between `/start-lib` and `/end-lib` (`--start-lib`/`--end-lib`): an object that joins
    /// the link only if it defines something referenced, like an archive member.
    pub lazy: bool,
    /// For an input that does not exist: the lld-link option it may be a misspelling of
    /// (lld-link's `could not open '/entri:main': ...; did you mean '/entry:main'`).
    pub suggest: Option<String>,
}

impl CoffInput {
    pub fn new(path: PathBuf, whole_archive: bool) -> CoffInput {
        CoffInput { path, whole_archive, lazy: false, suggest: None }
    }
}

/// Warnings of one link: the diagnostics context both formats share (`/WX` is
/// `fatal_warnings`, `/ignore:` codes are `ignored`).
pub use crate::diag::Diag;

/// An export named on the command line (`/export:`) or in a `.drectve` section.
pub use super::drectve::ExportSpec;

/// ThinLTO / DTLTO options: the shared engine's `LtoOptions`, filled by the lld-link and MinGW
/// drivers' option rows as they read their spellings of them (`set`), and finished once per
/// link (`options`).
#[derive(Debug, Clone)]
pub struct CoffLto {
    pub options: crate::lto::options::LtoOptions,
    /// What `set` refused, in the words of the option as the user spelled it: command-line
    /// errors (`options`, which both drivers call once the command line is read).
    pub errors: Vec<String>,
    pub mllvm: Vec<String>,
    /// `-plugin <llvm>/lib/LLVMgold.so`: clang passes it when the linker is not lld; it names
    /// the user's LLVM (`lto::llvm`), and `-plugin-opt=` values are read as lld reads them.
    pub plugin: Option<String>,
    pub plugin_opts: Vec<String>,
}

impl Default for CoffLto {
    fn default() -> CoffLto {
        CoffLto { options: crate::lto::options::LtoOptions::new(), errors: Vec::new(), mllvm: Vec::new(), plugin: None, plugin_opts: Vec::new() }
    }
}

impl CoffLto {
    /// One LTO option, by ld.lld's name for it (`LtoOptions::set`); `spelled` is the argument
    /// as the user wrote it (`/lto-obj-path:x.obj`, `/opt:lldltocgo=3`).
    pub fn set(&mut self, name: &str, value: Option<&str>, spelled: &str) {
        if let Err(e) = self.options.set(name, value, spelled) {
            self.errors.extend(e.messages);
        }
    }

    /// The link's LTO options, with `-plugin`, `-plugin-opt=` and `-mllvm` (read once per
    /// link; lld-link checks no options together, so nothing else is added).
    pub fn options(&self) -> crate::error::Result<crate::lto::options::LtoOptions> {
        let mut o = self.options.clone();
        let mut errors = self.errors.clone();
        if let Err(e) = o.finish(self.plugin.as_deref(), &self.plugin_opts, &self.mllvm, crate::lto::options::Flavor::LldLink) {
            errors.extend(e.messages);
        }
        if !errors.is_empty() {
            return Err(crate::error::Error::many(errors));
        }
        Ok(o)
    }
}

#[derive(Debug, Clone)]
pub struct CoffConfig {
    /// MinGW semantics (`-lldmingw`): auto-import, pseudo relocations, auto-export, `.ctors`.
    pub mingw: bool,
    pub output: PathBuf,
    pub dll: bool,
    /// `/entry:`; `None` picks lld-link's default for the subsystem.
    pub entry: Option<String>,
    pub no_entry: bool,
    pub subsystem: Option<u16>,
    pub subsystem_version: Option<(u16, u16)>,
    /// `/osversion:`; `None` follows the subsystem version, as lld-link does.
    pub os_version: Option<(u16, u16)>,
    pub image_version: (u16, u16),
    pub image_base: Option<u64>,
    pub dynamic_base: bool,
    pub nx_compat: bool,
    pub high_entropy_va: bool,
    pub tsaware: bool,
    pub large_address_aware: bool,
    /// `/fixed`: no `.reloc` section.
    pub fixed: bool,
    pub stack: (u64, u64),
    pub heap: (u64, u64),
    pub file_align: u32,
    pub section_align: u32,
    pub out_implib: Option<PathBuf>,
    /// `/lldmap[:file]` (MinGW `-Map <file>`): lld's COFF map (`map.rs`).
    pub lldmap: Option<PathBuf>,
    /// `LIBRARY`/`NAME` of a `.def` file: the DLL name the import library refers to (lld's
    /// `importName`); `None` uses the output's file name.
    pub import_name: Option<String>,
    pub export_all: bool,
    pub exclude_all: bool,
    pub exclude_symbols: Vec<String>,
    pub exports: Vec<ExportSpec>,
    pub auto_import: bool,
    pub pseudo_relocs: bool,
    pub debug: DebugMode,
    pub build_id: bool,
    pub inputs: Vec<CoffInput>,
    pub lib_paths: Vec<PathBuf>,
    pub default_libs: Vec<String>,
    pub no_default_libs: Vec<String>,
    pub no_default_all: bool,
    /// `/include:` (`--require-defined`): must be defined, and pulls archive members.
    pub includes: Vec<String>,
    /// `/includeoptional:` (`-u`): pulls archive members if any define it.
    pub include_optional: Vec<String>,
    pub alternate_names: Vec<(String, String)>,
    pub allow_multiple: bool,
    pub verbose: bool,
    /// `/demangle[:no]` (MinGW `--(no-)demangle`): C++ names in diagnostics and maps.
    pub demangle: bool,
    pub threads: Option<usize>,
    pub error_limit: usize,
    pub lto: CoffLto,
    /// `/timestamp:` / `--no-insert-timestamp` (0).
    pub timestamp: Option<u32>,
    pub print_version: bool,
    /// `/opt:ref` (`Some(true)`, MinGW `--gc-sections`) or `/opt:noref`; `None` is lld-link's
    /// default: collect unless debug information is kept.
    pub gc: Option<bool>,
    /// `/opt:icf` (MinGW `--icf=all`), `/opt:noicf`; `None`: lld-link's default (with `/opt:ref`).
    pub icf: Option<bool>,
    /// `/opt:safeicf` (MinGW `--icf=safe`): only sections whose address is not taken.
    pub icf_safe: bool,
    /// `/incremental[:no]`; the driver settles it (lld: an unchanged import library is kept).
    pub incremental: Option<bool>,
    /// `/opt:lldtailmerge` (`Some(true)`), `/opt:nolldtailmerge`; `None`: with ICF (lld).
    pub tail_merge: Option<bool>,
    pub diag: Diag,
    /// `/failifmismatch:key=value` of the command line.
    pub fail_if_mismatch: Vec<(String, String)>,
    /// `/allowbind:no` clears, `/allowisolation:no`, `/appcontainer`, `/integritycheck`.
    pub allow_bind: bool,
    pub allow_isolation: bool,
    pub appcontainer: bool,
    pub integrity_check: bool,
    /// `/swaprun:` COFF header bits (`IMAGE_FILE_*_RUN_FROM_SWAP`).
    pub swaprun: u16,
    /// `/driver` (`Some((wdm, uponly))`).
    pub driver: Option<(bool, bool)>,
    /// `/merge:from=to`, in command-line order.
    pub merges: Vec<(String, String)>,
    /// `/section:name,attrs`: (name, `IMAGE_SCN_MEM_*` bits).
    pub section_attrs: Vec<(String, u32)>,
    /// `/order:@file`.
    pub order_file: Option<PathBuf>,
    /// `/call-graph-ordering-file:` and `/call-graph-profile-sort[:no]` (on by default): the
    /// call-graph order of `cgsort.rs`.
    pub call_graph_ordering_file: Option<PathBuf>,
    pub call_graph_profile_sort: bool,
    /// `/print-symbol-order:`: where the call-graph order's symbols are written.
    pub print_symbol_order: Option<PathBuf>,
    /// `/aligncomm:name,n` (alignment `1 << n`).
    pub align_comm: Vec<(String, u32)>,
    /// `/functionpadmin[:n]`.
    pub function_pad_min: Option<u32>,
    /// `/delayload:dll`.
    pub delay_load: Vec<String>,
    /// `/wrap:sym` (MinGW `--wrap`).
    pub wrap: Vec<String>,
    /// `/guard:cf` (and `longjmp`, `ehcont`).
    pub guard_cf: bool,
    /// `/machine:` given (else lld warns when no input file sets the machine).
    pub machine_given: bool,
    /// `/dependentloadflag:<n>`: written into `_load_config_used` (lld's DependentLoadFlags).
    pub dependent_load_flags: u16,
    pub guard_longjmp: bool,
    pub guard_ehcont: bool,
    /// `/pdb:` (`/debug` without it: next to the output).
    pub pdb: Option<PathBuf>,
    pub pdb_altpath: Option<String>,
    /// `/debug` asked for a PDB (lld-link's `/debug`, `/debug:full`, `/debug:ghash`).
    pub debug_pdb: bool,
    /// lld merges the PDB's types by their global hashes (`/debug`, `/debug:full`,
    /// `/debug:ghash`; not `/debug:noghash`).
    pub debug_ghash: bool,
    /// MinGW `--pdb` without `-S`/`-s`: DWARF sections stay but the symbol table gets no
    /// symbols (lld's MinGW driver passes `-debug` only; its string table still names long
    /// section names).
    pub pdb_no_symbols: bool,
    /// `/map[:file]`: link.exe's map format (`linkmap.rs`); `/mapinfo:exports` adds the exports.
    pub map: Option<PathBuf>,
    pub map_info_exports: bool,
    /// `/Brepro` (the map says `Repro mode` instead of the time stamp's date).
    pub brepro: bool,
    /// `/noimplib`: no import library for a DLL.
    pub no_implib: bool,
    /// `/force:unresolved` (or `/force`): undefined symbols are warnings.
    pub force_unresolved: bool,
    /// `/release`: the PE checksum.
    pub release: bool,
    /// `/stub:file`: the DOS stub.
    pub stub: Option<PathBuf>,
    /// `/output-def:` (MinGW `--output-def`): the exports as a `.def` file.
    pub output_def: Option<PathBuf>,
    /// `/def:` without inputs: only the import library is written (lld's `createImportLibrary`
    /// with `asLib`).
    pub implib_only: bool,
    /// `/linkrepro:`, `/reproduce:` or `LLD_REPRODUCE`: the archive and what the link reads
    /// into it (`reproduce.rs`).
    pub repro: Option<super::reproduce::Repro>,
}

impl CoffConfig {
    /// lld-link's defaults for x86-64.
    pub fn new(mingw: bool) -> CoffConfig {
        CoffConfig {
            mingw,
            output: PathBuf::new(),
            lldmap: None,
            dll: false,
            entry: None,
            no_entry: false,
            subsystem: None,
            subsystem_version: None,
            os_version: None,
            image_version: (0, 0),
            image_base: None,
            dynamic_base: true,
            nx_compat: true,
            high_entropy_va: true,
            tsaware: true,
            large_address_aware: true,
            fixed: false,
            stack: (1 << 20, 4096),
            heap: (1 << 20, 4096),
            file_align: 512,
            section_align: 4096,
            out_implib: None,
            import_name: None,
            export_all: false,
            exclude_all: false,
            exclude_symbols: Vec::new(),
            exports: Vec::new(),
            auto_import: mingw,
            pseudo_relocs: mingw,
            debug: DebugMode::None,
            build_id: false,
            inputs: Vec::new(),
            lib_paths: Vec::new(),
            default_libs: Vec::new(),
            no_default_libs: Vec::new(),
            no_default_all: false,
            includes: Vec::new(),
            include_optional: Vec::new(),
            alternate_names: Vec::new(),
            allow_multiple: false,
            verbose: false,
            demangle: true,
            threads: None,
            error_limit: 20,
            lto: CoffLto::default(),
            timestamp: None,
            print_version: false,
            gc: None,
            icf: None,
            icf_safe: false,
            tail_merge: None,
            incremental: None,
            diag: Diag::default(),
            fail_if_mismatch: Vec::new(),
            allow_bind: true,
            allow_isolation: true,
            appcontainer: false,
            integrity_check: false,
            swaprun: 0,
            driver: None,
            merges: Vec::new(),
            section_attrs: Vec::new(),
            order_file: None,
            call_graph_ordering_file: None,
            call_graph_profile_sort: true,
            print_symbol_order: None,
            repro: None,
            map_info_exports: false,
            brepro: false,
            align_comm: Vec::new(),
            function_pad_min: None,
            delay_load: Vec::new(),
            wrap: Vec::new(),
            guard_cf: false,
            machine_given: false,
            dependent_load_flags: 0,
            guard_longjmp: false,
            guard_ehcont: false,
            pdb: None,
            pdb_altpath: None,
            debug_pdb: false,
            debug_ghash: false,
            pdb_no_symbols: false,
            map: None,
            no_implib: false,
            force_unresolved: false,
            release: false,
            stub: None,
            output_def: None,
            implib_only: false,
        }
    }

    /// The image base: `/base:` or lld-link's default (EXE 0x140000000, DLL 0x180000000).
    pub fn image_base(&self) -> u64 {
        self.image_base.unwrap_or(if self.dll { 0x1_8000_0000 } else { 0x1_4000_0000 })
    }

    /// Whether unreferenced COMDAT sections are dropped (lld-link's `doGC`).
    pub fn do_gc(&self) -> bool {
        self.gc.unwrap_or(self.debug == DebugMode::None && !self.debug_pdb)
    }

    /// Whether identical COMDAT sections are folded (lld-link's `doICF`: on with `/opt:ref`
    /// unless `/opt:noicf`).
    pub fn do_icf(&self) -> bool {
        self.icf.unwrap_or_else(|| self.gc.unwrap_or(self.debug == DebugMode::None && !self.debug_pdb))
    }

    /// Whether MSVC string literals are tail-merged (lld's `config->tailMerge`).
    pub fn tail_merge(&self) -> bool {
        self.tail_merge.unwrap_or_else(|| self.do_icf())
    }

    /// The subsystem version (`/subsystem:x,maj.min`; lld-link's default 6.0 for x64).
    pub fn subsystem_version(&self) -> (u16, u16) {
        self.subsystem_version.unwrap_or((6, 0))
    }

    /// The OS version: `/osversion:`, else the subsystem version (lld-link).
    pub fn os_version(&self) -> (u16, u16) {
        self.os_version.unwrap_or_else(|| self.subsystem_version())
    }

    /// Whether the image can be rebased (has a `.reloc` section).
    pub fn relocatable(&self) -> bool {
        !self.fixed
    }
}
