//! What an ELF link is asked to do: the GNU command line's meaning, filled by
//! `driver::gnu` and read by every ELF stage. It holds no parsing logic.

use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BuildId {
    #[default]
    None,
    Fast,
    Md5,
    Sha1,
    Uuid,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputArg {
    /// A file named on the command line (object, archive, shared library, linker script).
    File(PathBuf),
    /// `-lfoo` (name = "foo") or `-l:foo.a` (name = ":foo.a").
    Library(String),
    AsNeeded(bool),
    /// `-Bstatic` (true) / `-Bdynamic`, `-dy`, `-call_shared` (false).
    Static(bool),
    WholeArchive(bool),
    StartGroup,
    EndGroup,
    PushState,
    PopState,
    /// `--start-lib` / `--end-lib`: the object files between are lazy, like archive members.
    StartLib,
    EndLib,
    /// `--format=binary`/`-b binary` (true) or `elf`/`default` (false): how the following files
    /// are read (lld's formatBinary; not saved by --push-state).
    Binary(bool),
}

/// `--call-graph-profile-sort=`: the algorithm that orders code by its call graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CgProfileSort {
    None,
    /// Call-Chain Clustering (C³), lld's `hfsort`.
    Hfsort,
    /// Cache-Directed Sort, lld's default.
    Cdsort,
}

/// `-Bsymbolic` and its variants: which definitions of a shared library bind locally. The last
/// of `-Bsymbolic`, `-Bsymbolic-functions`, `-Bsymbolic-non-weak`,
/// `-Bsymbolic-non-weak-functions` and `-Bno-symbolic` wins, as in lld.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Bsymbolic {
    #[default]
    None,
    All,
    /// STT_FUNC definitions (lld's `isFunc`: not STT_GNU_IFUNC).
    Functions,
    /// Definitions that are not STB_WEAK.
    NonWeak,
    /// STT_FUNC definitions that are not STB_WEAK.
    NonWeakFunctions,
}

impl Bsymbolic {
    /// Whether a default-visibility definition of type `st_type`, weak or not, binds locally in
    /// a shared library (lld's `computeIsPreemptible`, before the dynamic list is consulted).
    pub fn binds_locally(self, st_type: u8, weak: bool) -> bool {
        let func = st_type == object::elf::STT_FUNC;
        match self {
            Bsymbolic::None => false,
            Bsymbolic::All => true,
            Bsymbolic::Functions => func,
            Bsymbolic::NonWeak => !weak,
            Bsymbolic::NonWeakFunctions => func && !weak,
        }
    }
}

/// `--icf=`: identical code folding (`elf::icf`).
/// Which segments `-z separate-code` / `-z separate-loadable-segments` keep on pages of their
/// own (lld's SeparateSegmentKind).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Separate {
    #[default]
    None,
    /// Executable segments start and end on a page boundary.
    Code,
    /// Every loadable segment does.
    Loadable,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Icf {
    #[default]
    None,
    /// Fold every eligible section; only read-only data keeps its address when significant.
    All,
    /// Fold only sections whose address is not significant (`.llvm_addrsig`).
    Safe,
}

#[derive(Debug, Clone)]
pub struct Config {
    pub output: PathBuf,
    pub inputs: Vec<InputArg>,
    /// `-L` directories in order (with sysroot applied), searched for `-l`.
    pub library_paths: Vec<PathBuf>,
    pub shared: bool,
    pub pie: bool,
    /// `-static`: no dynamic linking at all (also implies -Bstatic at the start).
    pub is_static: bool,
    pub relocatable: bool,
    pub dynamic_linker: Option<String>,
    pub no_dynamic_linker: bool,
    pub entry: Option<String>,
    pub undefined: Vec<String>,
    /// `--undefined-glob=` patterns, in order.
    pub undefined_glob: Vec<String>,
    pub export_dynamic: bool,
    pub hash_sysv: bool,
    pub hash_gnu: bool,
    pub build_id: BuildId,
    pub eh_frame_hdr: bool,
    pub gc_sections: bool,
    /// `--fat-lto-objects`: a relocatable object with a `.llvm.lto` section joins the link as
    /// that bitcode.
    pub fat_lto_objects: bool,
    pub print_gc_sections: bool,
    /// `--print-archive-stats=<file>`: lld's table of archive members used (archive_stats.rs).
    pub print_archive_stats: Option<std::path::PathBuf>,
    /// Archives without members the loader read (not under `--whole-archive`), each with the
    /// number of input files before it: `--print-archive-stats` lists them too, as lld does.
    pub empty_archives: Vec<(usize, String)>,
    pub icf: Icf,
    /// `--print-icf-sections`: list folded sections on stdout.
    pub print_icf_sections: bool,
    /// `--keep-unique=SYM`: the section defining SYM is never folded.
    pub keep_unique: Vec<String>,
    /// `--ignore-data-address-equality`: with `--icf=all`, read-only data folds too.
    pub ignore_data_address_equality: bool,
    /// `--ignore-function-address-equality`: a library's protected function may get a
    /// canonical PLT entry (its address then differs between the executable and the library).
    pub ignore_function_address_equality: bool,
    /// `-z nocopyreloc`: a copy relocation is an error.
    pub z_nocopyreloc: bool,
    /// `--emit-relocs` / `-q`: relocation sections are kept in the output.
    pub emit_relocs: bool,
    pub z_relro: bool,
    pub z_now: bool,
    pub z_execstack: bool,
    /// lld's policy for undefined symbols of objects, set in command-line order by
    /// `--unresolved-symbols=`, `--no-undefined`, `-z defs` and `-z undefs`: `Some(true)`
    /// report them, `Some(false)` ignore them; `None` is lld's default (report them, except in a
    /// shared library). See `unresolved_ignored`.
    pub report_unresolved: Option<bool>,
    pub z_text: bool,
    /// `-z separate-code` / `-z separate-loadable-segments`: no page holds both code and
    /// other data (lld's SeparateSegmentKind).
    pub z_separate: Separate,
    /// `-z rodynamic`: `.dynamic` is read-only and has no DT_DEBUG.
    pub z_rodynamic: bool,
    /// `--no-rosegment`: read-only data shares the executable segment.
    pub no_rosegment: bool,
    /// Finish the link in a forked child that releases the caller once the output is in place
    /// (`--fork`, the default; `--no-fork` as in mold; detach.rs).
    pub fork: bool,
    pub soname: Option<String>,
    pub rpath: Vec<String>,
    pub enable_new_dtags: bool,
    /// lld's policy for undefined symbols of the shared libraries of the link, set in
    /// command-line order by `--[no-]allow-shlib-undefined` and `--unresolved-symbols=`:
    /// `None` is lld's default (allowed in a shared library, reported in an executable).
    pub allow_shlib_undefined: Option<bool>,
    pub threads: Option<usize>,
    pub strip_all: bool,
    pub strip_debug: bool,
    pub defsym: Vec<(String, String)>,
    /// For each `--defsym`: how many input arguments (`-T` scripts included) came before it,
    /// so that it and the scripts' assignments apply in command-line order (lld).
    pub defsym_at: Vec<usize>,
    /// For each `defsym` after the scripts joined them: where lld says it was written
    /// (`--defsym:1`, or a script's `file:line`), for `symbol not found`.
    pub defsym_loc: Vec<String>,
    pub wrap: Vec<String>,
    pub plugin: Option<String>,
    pub plugin_opts: Vec<String>,
    pub mllvm: Vec<String>,
    pub sysroot: Option<PathBuf>,
    pub verbose: bool,
    /// `--incremental` (docs/incremental.md): keep a state beside the output, and end a relink
    /// that finds nothing changed.
    pub incremental: bool,
    /// Options we accept and ignore (recorded so `--verbose` can list them).
    /// `-nostdlib`: linker scripts' `SEARCH_DIR`s are not searched.
    pub nostdlib: bool,
    /// The diagnostics context of this link (`--fatal-warnings`, `--error-limit`, colors).
    pub diag: std::sync::Arc<crate::diag::Diag>,

    // ---- Added by the command-line work item (see docs/options.md). ----
    /// Bytes of `--build-id=0x<hex>`. When non-empty the note holds exactly these bytes (and
    /// `build_id` is `BuildId::None`, so code that ignores this field emits no note).
    pub build_id_hex: Vec<u8>,
    /// `-z start-stop-gc` (lld's default): `__start_foo` references do not keep `foo` sections
    /// alive under --gc-sections.
    pub z_start_stop_gc: bool,
    /// `-z dead-reloc-in-nonalloc=<glob>=<value>`, in command-line order (the last match wins):
    /// the value written for relocations from matching non-alloc sections to discarded code.
    pub dead_reloc_in_nonalloc: Vec<(String, u64)>,
    /// `-m <emulation>` as given (only `elf_x86_64` is accepted). lld words "incompatible" errors
    /// against it when present.
    pub emulation: Option<String>,
    /// `-v` together with inputs: print the version line, then link.
    pub print_version: bool,
    /// `-O<n>` (default 1, as in lld).
    pub opt_level: u32,
    /// `--compress-debug-sections=zlib|zstd`: non-alloc `.debug_*` sections are written
    /// compressed (`elf::compress`).
    pub compress_debug: Option<DebugCompression>,
    /// `--gdb-index`: write `.gdb_index` (`elf::gdb_index`).
    pub gdb_index: bool,
    /// The LTO options (`--lto-*`, `--thinlto-*`, `-plugin-opt=`, `-mllvm`), read once with
    /// the command line (`driver::gnu`), as lld's readConfigs reads them.
    pub lto: crate::lto::options::LtoOptions,
    /// `-Map` / `--Map=` / `-M` (`-M` prints to stdout: recorded as `-`).
    pub map_file: Option<PathBuf>,
    /// `--reproduce=<file.tar>` (`LLD_REPRODUCE` is read at link time).
    pub reproduce: Option<PathBuf>,
    /// `--chroot <dir>`: absolute input paths are read below `<dir>`.
    pub chroot: Option<PathBuf>,
    /// Contents of `.comment` without the terminating NUL: `Linker: dtld <version>`, or the
    /// `LLD_VERSION` environment variable when set (lld's hook for stable test output).
    pub comment: String,
    /// The command line as parsed, for `--reproduce`'s response.txt.
    pub cmdline: Vec<crate::cmdline::CmdArg>,
    /// `--version-script=` files, in order.
    pub version_scripts: Vec<PathBuf>,
    /// `--dynamic-list=` files, in order.
    pub dynamic_lists: Vec<PathBuf>,
    /// `--export-dynamic-symbol=` globs.
    pub export_dynamic_symbols: Vec<String>,
    pub bsymbolic: Bsymbolic,
    /// `--discard-all` / `-x`.
    pub discard_all: bool,
    /// `--discard-locals` / `-X`.
    pub discard_locals: bool,
    /// `--allow-multiple-definition` / `-z muldefs`.
    pub allow_multiple_definition: bool,
    /// `--relax` (default) / `--no-relax`: GOTPCRELX-style relaxations.
    pub relax: bool,
    /// `--call-graph-profile-sort=` (lld's default `cdsort`; `--no-call-graph-profile-sort` is
    /// `none`): how `.llvm.call-graph-profile` sections order code.
    pub cg_profile_sort: CgProfileSort,
    /// `--call-graph-ordering-file=`: a call graph (`from to weight` per line) replacing the
    /// objects' `.llvm.call-graph-profile` sections.
    pub call_graph_ordering_file: Option<PathBuf>,
    /// `--symbol-ordering-file=`: sections of the listed symbols first, in the file's order.
    pub symbol_ordering_file: Option<PathBuf>,
    /// `--print-symbol-order=`: where hfsort writes the symbol order it chose.
    pub print_symbol_order: Option<PathBuf>,
    /// `--warn-symbol-ordering` (default) / `--no-warn-symbol-ordering`: warn about names of
    /// `--call-graph-ordering-file=` that cannot be ordered.
    pub warn_symbol_ordering: bool,
    pub fatal_warnings: bool,
    /// `-z max-page-size=` / `-z common-page-size=`.
    pub max_page_size: Option<u64>,
    pub common_page_size: Option<u64>,
    pub z_origin: bool,
    pub z_nodelete: bool,
    pub z_nodlopen: bool,
    pub z_initfirst: bool,
    pub z_interpose: bool,
    pub z_nodefaultlib: bool,
    pub z_global: bool,
    pub z_ibt: bool,
    pub z_shstk: bool,
    pub z_nognustack: bool,
    pub z_keep_text_section_prefix: bool,
    /// `--pack-dyn-relocs=relr`: relative relocations go to `.relr.dyn` (DT_RELR).
    pub pack_relr: bool,
    /// `--pack-dyn-relocs=android` (or `android+relr`): `.rela.dyn` in Android's packed format
    /// (SHT_ANDROID_RELA, DT_ANDROID_RELA), `elf::android_rela`.
    pub pack_android: bool,
    /// `--use-android-relr-tags`: `.relr.dyn` as SHT_ANDROID_RELR with DT_ANDROID_RELR* tags.
    pub use_android_relr_tags: bool,
    /// `-z pack-relative-relocs` (the last of it and `-z nopack-relative-relocs`): RELR, plus the
    /// `GLIBC_ABI_DT_RELR` version need on glibc's libc.so.
    pub z_pack_relative_relocs: bool,
    /// `--orphan-handling`: what to say about input sections a SECTIONS script does not name.
    pub orphan_handling: OrphanHandling,
    /// `--sort-section=name|alignment`: how a SECTIONS script's input section descriptions
    /// sort what they match (lld: outermost for patterns without SORT, inner for one SORT).
    pub sort_section: crate::elf::script::ast::SortKind,
    /// `-z cet-report=none|warning|error`.
    pub z_cet_report: Option<String>,
    /// `--init=` / `--fini=` (DT_INIT / DT_FINI symbols).
    pub init: Option<String>,
    pub fini: Option<String>,
    /// `--time-trace[=file]` (empty path: `<output>.time-trace`) and `--time-trace-file=`.
    pub time_trace: Option<PathBuf>,
    pub time_trace_file: Option<PathBuf>,
    /// `--time-trace-granularity=`: the shortest event written, in µs (lld's default 500).
    pub time_trace_granularity: u64,
    /// `--exclude-libs=` archive names (`libfoo.a`) or `ALL`.
    pub exclude_libs: Vec<String>,
    /// `-z stack-size=` (PT_GNU_STACK's p_memsz).
    pub z_stack_size: Option<u64>,
    /// `--undefined-version`: version scripts may name symbols that are not defined.
    pub undefined_version: bool,
    /// `--trace` / `-t`: print each input file as it is loaded.
    pub trace: bool,
    /// `--dependent-libraries` (default) / `--no-dependent-libraries`: add the libraries the
    /// inputs name in `.deplibs` sections or bitcode (`deplibs`).
    pub dependent_libraries: bool,
    /// The dependent library specifiers of archive members the resolver extracted and of
    /// bitcode files, as (file name, specifier): the driver reloads with them
    /// (`deplibs::from_resolved`).
    pub extracted_deplibs: Vec<(String, String)>,
    /// `--export-dynamic-symbol-list=` files (dynamic-list syntax; unlike `--dynamic-list` they
    /// do not make a library's other symbols bind locally).
    pub export_dynamic_symbol_lists: Vec<PathBuf>,
    /// `-z [no]dynamic-undefined-weak`: a library's undefined weak symbols are resolved by the
    /// loader (default) or bound to 0 at link time.
    pub z_dynamic_undefined_weak: bool,
    /// `--warn-unresolved-symbols`: undefined symbols are reported as warnings, not errors
    /// (the last of it and `--error-unresolved-symbols` wins).
    pub warn_unresolved_symbols: bool,
    /// `--warn-common`: warn when a common symbol meets another common or a definition.
    pub warn_common: bool,
    /// `--warn-backrefs`: warn when a reference extracts an archive member named earlier on
    /// the command line (outside a common group); `--warn-backrefs-exclude=` globs name the
    /// archives (`*.a(*.o)`) or `--start-lib` objects not to warn about.
    pub warn_backrefs: bool,
    pub warn_backrefs_exclude: Vec<String>,
    /// `--no-gnu-unique`: STB_GNU_UNIQUE symbols are written as STB_GLOBAL.
    pub no_gnu_unique: bool,
    /// The layout commands of the link's linker scripts (`SECTIONS`, `MEMORY`, `PHDRS`,
    /// assignments), gathered in command-line order.
    pub script: crate::elf::script::ast::LayoutScript,
    /// `VERSION { ... }` blocks of linker scripts: (script name, version script text).
    pub inline_version_scripts: Vec<(String, String)>,
    /// `-F`/`--filter=` and `-f`/`--auxiliary=`: DT_FILTER / DT_AUXILIARY names.
    pub filter: Vec<String>,
    pub auxiliary: Vec<String>,
    /// `--apply-dynamic-relocs`: also write a dynamic relocation's value (or addend) in place.
    pub apply_dynamic_relocs: bool,
    /// `--noinhibit-exec`: undefined symbols are warnings and the output is written.
    pub noinhibit_exec: bool,
    /// `--retain-symbols-file=`: only the listed symbols stay global (lld: a version script
    /// `{ global: <names>; local: *; }`).
    pub retain_symbols_file: Option<PathBuf>,
    /// `-z wxneeded`: a PT_OPENBSD_WXNEEDED header.
    pub z_wxneeded: bool,
    /// `--section-start=name=addr`, `-Ttext=`, `-Tdata=`, `-Tbss=`: output sections placed at
    /// fixed addresses (the `-T<name>` options override `--section-start`, as in lld).
    pub section_start: std::collections::HashMap<String, u64>,
    /// `--image-base=`: where the first segment goes (and `.`'s start value in a script).
    pub image_base: Option<u64>,
    /// `-N` / `--omagic`: no page alignment, one writable and executable segment, no headers
    /// loaded.
    pub omagic: bool,
    /// `-n` / `--nmagic`: no page alignment, no headers loaded.
    pub nmagic: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            output: PathBuf::from("a.out"),
            inputs: Vec::new(),
            library_paths: Vec::new(),
            shared: false,
            pie: false,
            is_static: false,
            relocatable: false,
            dynamic_linker: None,
            no_dynamic_linker: false,
            entry: None,
            undefined: Vec::new(),
            undefined_glob: Vec::new(),
            export_dynamic: false,
            // ld.lld without --hash-style writes both tables (clang passes --hash-style=gnu only on some distributions).
            hash_sysv: true,
            hash_gnu: true,
            build_id: BuildId::None,
            eh_frame_hdr: false,
            gc_sections: false,
            fat_lto_objects: false,
            print_gc_sections: false,
            print_archive_stats: None,
            empty_archives: Vec::new(),
            icf: Icf::None,
            print_icf_sections: false,
            keep_unique: Vec::new(),
            ignore_data_address_equality: false,
            ignore_function_address_equality: false,
            z_nocopyreloc: false,
            emit_relocs: false,
            z_relro: true,
            z_now: false,
            z_execstack: false,
            report_unresolved: None,
            z_text: true,
            z_separate: Separate::None,
            z_rodynamic: false,
            no_rosegment: false,
            fork: true,
            soname: None,
            rpath: Vec::new(),
            enable_new_dtags: true,
            allow_shlib_undefined: None,
            threads: None,
            strip_all: false,
            strip_debug: false,
            defsym: Vec::new(),
            defsym_at: Vec::new(),
            defsym_loc: Vec::new(),
            wrap: Vec::new(),
            plugin: None,
            plugin_opts: Vec::new(),
            mllvm: Vec::new(),
            sysroot: None,
            verbose: false,
            incremental: false,
            nostdlib: false,
            diag: std::sync::Arc::new(crate::diag::Diag::default()),
            build_id_hex: Vec::new(),
            z_start_stop_gc: true,
            dead_reloc_in_nonalloc: Vec::new(),
            emulation: None,
            print_version: false,
            opt_level: 1,
            lto: Default::default(),
            map_file: None,
            reproduce: None,
            comment: COMMENT.to_string(),
            chroot: None,
            cmdline: Vec::new(),
            version_scripts: Vec::new(),
            dynamic_lists: Vec::new(),
            export_dynamic_symbols: Vec::new(),
            bsymbolic: Bsymbolic::None,
            discard_all: false,
            discard_locals: false,
            allow_multiple_definition: false,
            relax: true,
            cg_profile_sort: CgProfileSort::Cdsort,
            call_graph_ordering_file: None,
            symbol_ordering_file: None,
            print_symbol_order: None,
            warn_symbol_ordering: true,
            fatal_warnings: false,
            compress_debug: None,
            gdb_index: false,
            max_page_size: None,
            common_page_size: None,
            section_start: Default::default(),
            image_base: None,
            omagic: false,
            nmagic: false,
            z_origin: false,
            z_nodelete: false,
            z_nodlopen: false,
            z_initfirst: false,
            z_interpose: false,
            z_nodefaultlib: false,
            z_global: false,
            z_ibt: false,
            z_shstk: false,
            z_nognustack: false,
            z_keep_text_section_prefix: false,
            pack_relr: false,
            pack_android: false,
            use_android_relr_tags: false,
            z_pack_relative_relocs: false,
            orphan_handling: OrphanHandling::Place,
            sort_section: Default::default(),
            z_cet_report: None,
            init: None,
            fini: None,
            time_trace: None,
            time_trace_file: None,
            time_trace_granularity: 500,
            exclude_libs: Vec::new(),
            z_stack_size: None,
            undefined_version: false,
            trace: false,
            dependent_libraries: true,
            extracted_deplibs: Vec::new(),
            export_dynamic_symbol_lists: Vec::new(),
            z_dynamic_undefined_weak: true,
            warn_unresolved_symbols: false,
            warn_common: false,
            warn_backrefs: false,
            warn_backrefs_exclude: Vec::new(),
            no_gnu_unique: false,
            inline_version_scripts: Vec::new(),
            script: Default::default(),
            filter: Vec::new(),
            auxiliary: Vec::new(),
            apply_dynamic_relocs: false,
            noinhibit_exec: false,
            retain_symbols_file: None,
            z_wxneeded: false,
        }
    }
}

/// `=dir` and `$SYSROOT/dir` are relative to the sysroot (without one, the prefix is dropped).
pub fn apply_sysroot(dir: &str, sysroot: Option<&Path>) -> PathBuf {
    let rest = if let Some(r) = dir.strip_prefix('=') {
        r
    } else if let Some(r) = dir.strip_prefix("$SYSROOT") {
        r
    } else {
        return PathBuf::from(dir);
    };
    match sysroot {
        Some(s) => {
            let mut p = s.as_os_str().to_owned();
            if !rest.starts_with('/') && !rest.is_empty() {
                p.push("/");
            }
            p.push(rest);
            PathBuf::from(p)
        }
        None => PathBuf::from(rest),
    }
}

/// `--orphan-handling=place|warn|error` (lld's OrphanHandlingPolicy).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrphanHandling {
    Place,
    Warn,
    Error,
}

impl Config {
    /// lld's discard policy for a local symbol nothing else keeps: `--discard-all` (-x) drops
    /// every one, `--discard-locals` (-X) the `.L` temporaries, and by default `.L` names go
    /// only when they point into a mergeable section (`in_merge`, asked only for those).
    pub fn discards_local(&self, name: &[u8], in_merge: impl FnOnce() -> bool) -> bool {
        self.discard_all || (name.starts_with(b".L") && (self.discard_locals || in_merge()))
    }

    /// Whether undefined symbols of objects are ignored (lld's `UnresolvedPolicy::Ignore` for
    /// `unresolvedSymbols`): they stay undefined, dynamic in a shared library, zero in an
    /// executable. The default in a shared library, `--unresolved-symbols=ignore-all` or `-z
    /// undefs` elsewhere.
    pub fn unresolved_ignored(&self) -> bool {
        !self.report_unresolved.unwrap_or(!self.shared)
    }

    /// Whether undefined symbols of the link's shared libraries are reported (lld's
    /// `unresolvedSymbolsInShlib`, `--no-allow-shlib-undefined`): by default in an executable.
    pub fn shlib_undefined_reported(&self) -> bool {
        !self.allow_shlib_undefined.unwrap_or(self.shared)
    }

    /// RELR packing of relative relocations (either option), as lld's `relrPackDynRelocs`.
    pub fn relr(&self) -> bool {
        self.pack_relr || self.z_pack_relative_relocs
    }
}

pub use crate::elf::compress::DebugCompression;

/// dtld's `.comment` string (without its NUL), the default of `comment`.
pub const COMMENT: &str = "Linker: dtld 0.1.0";

impl Config {
    /// GCC's LTO plugin, when the command line names one with `-plugin` (`liblto_plugin.so`,
    /// also when versioned or installed as `/usr/lib/bfd-plugins/liblto_plugin.so`): then the
    /// link claims GCC IR objects (`elf::gcc_lto`).
    pub fn gcc_plugin(&self) -> Option<&str> {
        self.plugin.as_deref().filter(|p| Path::new(p).file_name().is_some_and(|n| n.to_string_lossy().contains("lto_plugin")))
    }
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
