//! The GNU ld / ld.lld command line, parsed by our own option table.
//!
//! GNU ld's grammar does not fit an argument-parsing crate: options are positional
//! (`--as-needed`, `-Bstatic`, `--start-group` change how the inputs after them are read), long
//! options may be spelled with one dash or two (`-pie`, `--pie`), values may be joined or separate
//! (`-soname=x`, `-soname x`, `-hx`), and `-z` takes keywords. `parse` turns argv into a `Config`
//! plus an ordered list of `InputArg`s that keeps the positional state changes in order.
//!
//! Matching follows lld's option table: the whole option name (after one or two dashes) is looked
//! up first, so `-pie` is `--pie` and `-static` is `--static`; only when no long option matches
//! does a single-dash argument fall back to a one-letter option with a joined value (`-omain` is
//! `-o main`, `-lfoo`, `-L/dir`, `-znow`, `-O2`). One-letter options never take two dashes
//! (`--omain` is an unknown argument, as in lld). Diagnostics use lld's wording.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

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
    pub export_dynamic: bool,
    pub hash_sysv: bool,
    pub hash_gnu: bool,
    pub build_id: BuildId,
    pub eh_frame_hdr: bool,
    pub gc_sections: bool,
    pub print_gc_sections: bool,
    pub z_relro: bool,
    pub z_now: bool,
    pub z_execstack: bool,
    pub z_defs: bool,
    pub z_text: bool,
    pub z_separate_code: bool,
    pub soname: Option<String>,
    pub rpath: Vec<String>,
    pub enable_new_dtags: bool,
    pub allow_shlib_undefined: Option<bool>,
    pub threads: Option<usize>,
    pub strip_all: bool,
    pub strip_debug: bool,
    pub defsym: Vec<(String, String)>,
    pub wrap: Vec<String>,
    pub plugin: Option<String>,
    pub plugin_opts: Vec<String>,
    pub mllvm: Vec<String>,
    pub sysroot: Option<PathBuf>,
    pub verbose: bool,
    /// Options we accept and ignore (recorded so `--verbose` can list them).
    pub ignored: Vec<String>,

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
    /// Raw `--lto-*` / `--thinlto-*` arguments, as written (implemented by the LTO stage).
    pub lto_args: Vec<String>,
    /// `-Map` / `--Map=` / `-M` (`-M` prints to stdout: recorded as `-`).
    pub map_file: Option<PathBuf>,
    /// `--reproduce=<file.tar>` (`LLD_REPRODUCE` is read at link time).
    pub reproduce: Option<PathBuf>,
    /// `--chroot <dir>`: absolute input paths are read below `<dir>`.
    pub chroot: Option<PathBuf>,
    /// The command line as parsed, for `--reproduce`'s response.txt.
    pub cmdline: Vec<crate::elf::reproduce::CmdArg>,
    /// `--version-script=` files, in order.
    pub version_scripts: Vec<PathBuf>,
    /// `--dynamic-list=` files, in order.
    pub dynamic_lists: Vec<PathBuf>,
    /// `--export-dynamic-symbol=` globs.
    pub export_dynamic_symbols: Vec<String>,
    pub bsymbolic: bool,
    pub bsymbolic_functions: bool,
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
    /// `-z cet-report=none|warning|error`.
    pub z_cet_report: Option<String>,
    /// `--init=` / `--fini=` (DT_INIT / DT_FINI symbols).
    pub init: Option<String>,
    pub fini: Option<String>,
    /// `--time-trace[=file]` (empty path: `<output>.time-trace`) and `--time-trace-file=`.
    pub time_trace: Option<PathBuf>,
    pub time_trace_file: Option<PathBuf>,
    /// `--exclude-libs=` archive names (`libfoo.a`) or `ALL`.
    pub exclude_libs: Vec<String>,
    /// `-z stack-size=` (PT_GNU_STACK's p_memsz).
    pub z_stack_size: Option<u64>,
    /// `--undefined-version`: version scripts may name symbols that are not defined.
    pub undefined_version: bool,
    /// `--trace` / `-t`: print each input file as it is loaded.
    pub trace: bool,
    /// `--export-dynamic-symbol-list=` files (dynamic-list syntax; unlike `--dynamic-list` they
    /// do not make a library's other symbols bind locally).
    pub export_dynamic_symbol_lists: Vec<PathBuf>,
    /// `-z [no]dynamic-undefined-weak`: a library's undefined weak symbols are resolved by the
    /// loader (default) or bound to 0 at link time.
    pub z_dynamic_undefined_weak: bool,
    /// `--unresolved-symbols=ignore-all|ignore-in-object-files`: undefined symbols of objects
    /// are not errors (they stay undefined: dynamic in a library, zero in an executable).
    pub ignore_unresolved_in_objects: bool,
    /// `VERSION { ... }` blocks of linker scripts: (script name, version script text).
    pub inline_version_scripts: Vec<(String, String)>,
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
            export_dynamic: false,
            hash_sysv: false,
            hash_gnu: true,
            build_id: BuildId::None,
            eh_frame_hdr: false,
            gc_sections: false,
            print_gc_sections: false,
            z_relro: true,
            z_now: false,
            z_execstack: false,
            z_defs: false,
            z_text: true,
            z_separate_code: false,
            soname: None,
            rpath: Vec::new(),
            enable_new_dtags: true,
            allow_shlib_undefined: None,
            threads: None,
            strip_all: false,
            strip_debug: false,
            defsym: Vec::new(),
            wrap: Vec::new(),
            plugin: None,
            plugin_opts: Vec::new(),
            mllvm: Vec::new(),
            sysroot: None,
            verbose: false,
            ignored: Vec::new(),
            build_id_hex: Vec::new(),
            z_start_stop_gc: true,
            dead_reloc_in_nonalloc: Vec::new(),
            emulation: None,
            print_version: false,
            opt_level: 1,
            lto_args: Vec::new(),
            map_file: None,
            reproduce: None,
            chroot: None,
            cmdline: Vec::new(),
            version_scripts: Vec::new(),
            dynamic_lists: Vec::new(),
            export_dynamic_symbols: Vec::new(),
            bsymbolic: false,
            bsymbolic_functions: false,
            discard_all: false,
            discard_locals: false,
            allow_multiple_definition: false,
            relax: true,
            cg_profile_sort: CgProfileSort::Cdsort,
            call_graph_ordering_file: None,
            print_symbol_order: None,
            warn_symbol_ordering: true,
            fatal_warnings: false,
            max_page_size: None,
            common_page_size: None,
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
            z_cet_report: None,
            init: None,
            fini: None,
            time_trace: None,
            time_trace_file: None,
            exclude_libs: Vec::new(),
            z_stack_size: None,
            undefined_version: false,
            trace: false,
            export_dynamic_symbol_lists: Vec::new(),
            z_dynamic_undefined_weak: true,
            ignore_unresolved_in_objects: false,
            inline_version_scripts: Vec::new(),
        }
    }
}

/// What the command line asks for.
pub enum Action {
    Link(Config),
    /// `--version` / `-v` with no inputs: print and exit 0.
    Version,
    Help,
}

/// The line `--version` prints. Configure scripts and compiler drivers grep for
/// "compatible with GNU linkers", so that phrase must stay.
pub fn version_string() -> String {
    format!(
        "dtld {} (compatible with GNU linkers)",
        env!("CARGO_PKG_VERSION")
    )
}

/// Prints a warning the way lld does (`dtld: warning: ...`).
pub fn warn(msg: &str) {
    eprintln!("dtld: warning: {msg}");
}

// ------------------------------------------------------------------------------------------------
// The option table.
// ------------------------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    /// No value: matches only the exact name.
    Flag,
    /// A value: `--name=v`, `--name v`, `-name=v`, `-name v`.
    Value,
    /// An optional value: `--name` or `--name=v`, never takes the next argument.
    OptValue,
}

struct Opt {
    /// Spellings without dashes; the first is the canonical one used by `apply`.
    names: &'static [&'static str],
    kind: Kind,
    /// Meta-variable for `--help` (empty for flags).
    meta: &'static str,
    help: &'static str,
}

const fn o(
    names: &'static [&'static str],
    kind: Kind,
    meta: &'static str,
    help: &'static str,
) -> Opt {
    Opt {
        names,
        kind,
        meta,
        help,
    }
}

use Kind::*;

/// Every option dtld knows. Order matters only for `--help`.
static OPTIONS: &[Opt] = &[
    o(&["o", "output"], Value, "<path>", "Path to the output file"),
    o(
        &["l", "library"],
        Value,
        "<lib>",
        "Search for library <lib> (-lfoo, -l:file.a)",
    ),
    o(
        &["L", "library-path"],
        Value,
        "<dir>",
        "Add <dir> to the library search path",
    ),
    o(&["shared", "Bshareable"], Flag, "", "Build a shared object"),
    o(
        &["pie", "pic-executable"],
        Flag,
        "",
        "Build a position-independent executable",
    ),
    o(
        &["no-pie", "no-pic-executable"],
        Flag,
        "",
        "Do not build a position-independent executable (default)",
    ),
    o(
        &["static"],
        Flag,
        "",
        "Do not link against shared libraries; no dynamic linking",
    ),
    o(
        &["relocatable", "r"],
        Flag,
        "",
        "Create a relocatable object file",
    ),
    o(&["emit-relocs", "q"], Flag, "", "Keep relocations in the output (not supported yet: an error)"),
    o(
        &["Bstatic", "dn", "non_shared"],
        Flag,
        "",
        "Do not link against shared libraries (positional)",
    ),
    o(
        &["Bdynamic", "dy", "call_shared"],
        Flag,
        "",
        "Link against shared libraries (positional, default)",
    ),
    o(
        &["as-needed"],
        Flag,
        "",
        "Only set DT_NEEDED for shared libraries if used (positional)",
    ),
    o(
        &["no-as-needed"],
        Flag,
        "",
        "Always set DT_NEEDED for shared libraries (positional, default)",
    ),
    o(
        &["whole-archive"],
        Flag,
        "",
        "Include all members of following archives (positional)",
    ),
    o(
        &["no-whole-archive"],
        Flag,
        "",
        "Stop --whole-archive (positional)",
    ),
    o(
        &["start-group", "("],
        Flag,
        "",
        "Start a group of archives (positional)",
    ),
    o(
        &["end-group", ")"],
        Flag,
        "",
        "End a group of archives (positional)",
    ),
    o(
        &["push-state"],
        Flag,
        "",
        "Save --as-needed, -Bstatic and --whole-archive state",
    ),
    o(
        &["pop-state"],
        Flag,
        "",
        "Restore the state saved by --push-state",
    ),
    o(
        &["entry", "e"],
        Value,
        "<sym>",
        "Name of the entry point symbol",
    ),
    o(
        &["undefined", "u"],
        Value,
        "<sym>",
        "Force <sym> to be an undefined symbol",
    ),
    o(&["soname", "h"], Value, "<name>", "Set DT_SONAME"),
    o(
        &["rpath", "R"],
        Value,
        "<dir>",
        "Add a DT_RUNPATH (or DT_RPATH) entry",
    ),
    o(&["rpath-link"], Value, "<dir>", "Accepted and ignored"),
    o(
        &["dynamic-linker", "I"],
        Value,
        "<path>",
        "Which dynamic linker to use (PT_INTERP)",
    ),
    o(&["no-dynamic-linker"], Flag, "", "Do not emit PT_INTERP"),
    o(
        &["m"],
        Value,
        "<emulation>",
        "Set target emulation (only elf_x86_64)",
    ),
    o(
        &["z"],
        Value,
        "<keyword>",
        "Linker option extensions (see docs/options.md)",
    ),
    o(
        &["export-dynamic", "E"],
        Flag,
        "",
        "Put all global symbols in the dynamic symbol table",
    ),
    o(
        &["no-export-dynamic"],
        Flag,
        "",
        "Do not put all global symbols in the dynamic symbol table (default)",
    ),
    o(
        &["export-dynamic-symbol"],
        Value,
        "<glob>",
        "Put symbols matching <glob> in the dynamic symbol table",
    ),
    o(
        &["dynamic-list"],
        Value,
        "<file>",
        "Read a list of dynamic symbols",
    ),
    o(
        &["version-script"],
        Value,
        "<file>",
        "Read a version script",
    ),
    o(
        &["hash-style"],
        Value,
        "<style>",
        "Hash table style: sysv, gnu or both",
    ),
    o(
        &["build-id"],
        OptValue,
        "[=fast|md5|sha1|uuid|none|0x<hex>]",
        "Generate a .note.gnu.build-id section",
    ),
    o(
        &["eh-frame-hdr"],
        Flag,
        "",
        "Create .eh_frame_hdr and PT_GNU_EH_FRAME",
    ),
    o(
        &["no-eh-frame-hdr"],
        Flag,
        "",
        "Do not create .eh_frame_hdr",
    ),
    o(
        &["gc-sections"],
        Flag,
        "",
        "Garbage-collect unused sections",
    ),
    o(
        &["no-gc-sections"],
        Flag,
        "",
        "Do not garbage-collect unused sections (default)",
    ),
    o(
        &["print-gc-sections"],
        Flag,
        "",
        "List removed unused sections",
    ),
    o(
        &["no-print-gc-sections"],
        Flag,
        "",
        "Do not list removed unused sections (default)",
    ),
    o(&["enable-new-dtags"], Flag, "", "Use DT_RUNPATH (default)"),
    o(&["disable-new-dtags"], Flag, "", "Use DT_RPATH"),
    o(
        &["allow-shlib-undefined"],
        Flag,
        "",
        "Allow unresolved references in shared libraries",
    ),
    o(
        &["no-allow-shlib-undefined"],
        Flag,
        "",
        "Report unresolved references in shared libraries",
    ),
    o(
        &["no-undefined"],
        Flag,
        "",
        "Report unresolved symbols even if linking a shared object (-z defs)",
    ),
    o(
        &["allow-multiple-definition"],
        Flag,
        "",
        "Allow multiple definitions",
    ),
    o(
        &["no-allow-multiple-definition"],
        Flag,
        "",
        "Do not allow multiple definitions (default)",
    ),
    o(
        &["Bsymbolic"],
        Flag,
        "",
        "Bind defined symbols locally in a shared object",
    ),
    o(
        &["Bsymbolic-functions"],
        Flag,
        "",
        "Bind defined function symbols locally in a shared object",
    ),
    o(
        &["Bno-symbolic"],
        Flag,
        "",
        "Do not bind symbols locally (default)",
    ),
    o(&["sysroot"], Value, "<dir>", "Set the system root"),
    o(&["threads"], Value, "<n>", "Number of threads to use"),
    o(&["strip-all", "s"], Flag, "", "Strip all symbols"),
    o(
        &["strip-debug", "S"],
        Flag,
        "",
        "Strip debugging information",
    ),
    o(&["discard-all", "x"], Flag, "", "Delete all local symbols"),
    o(
        &["discard-locals", "X"],
        Flag,
        "",
        "Delete temporary local symbols",
    ),
    o(&["discard-none"], Flag, "", "Keep all local symbols"),
    o(&["defsym"], Value, "<sym>=<value>", "Define a symbol"),
    o(&["wrap"], Value, "<sym>", "Use wrapper functions for <sym>"),
    o(&["init"], Value, "<sym>", "Symbol for DT_INIT"),
    o(&["fini"], Value, "<sym>", "Symbol for DT_FINI"),
    o(
        &["plugin"],
        Value,
        "<path>",
        "Linker plugin (recorded; LTO is built in)",
    ),
    o(
        &["plugin-opt"],
        Value,
        "<opt>",
        "Option for the linker plugin / LTO",
    ),
    o(&["mllvm"], Value, "<opt>", "Option for LLVM (LTO)"),
    o(&["Map"], Value, "<file>", "Print a link map to <file>"),
    o(&["print-map", "M"], Flag, "", "Print a link map to stdout"),
    o(
        &["script", "T"],
        Value,
        "<file>",
        "Read a linker script (only input-file commands)",
    ),
    o(&["reproduce"], Value, "<file>", "Write a tar file with the inputs and command line to reproduce the link"),
    o(&["chroot"], Value, "<dir>", "Read absolute input paths below <dir> (for --reproduce trees)"),
    o(&["verbose"], Flag, "", "Verbose mode"),
    o(&["time-trace"], OptValue, "[=<file>]", "Write a Chrome trace of the link's stages to <file> (default <output>.time-trace)"),
    o(&["time-trace-file"], Value, "<file>", "Where --time-trace writes"),
    o(&["time-trace-granularity"], Value, "<us>", "Accepted (dtld traces whole stages)"),
    o(&["v", "V"], Flag, "", "Print the version and continue"),
    o(&["version"], Flag, "", "Print the version and exit"),
    o(&["help"], Flag, "", "Print option help"),
    o(&["O"], Value, "<n>", "Optimization level"),
    o(&["call-graph-profile-sort"], Value, "[none,hfsort,cdsort]", "Reorder input sections with call graph profile using the specified algorithm (default: cdsort)"),
    o(&["no-call-graph-profile-sort"], Flag, "", "Do not reorder sections with call graph profile"),
    o(&["call-graph-ordering-file"], Value, "<file>", "Layout sections to optimize the given callgraph"),
    o(&["print-symbol-order"], Value, "<file>", "Print a symbol order specified by --call-graph-ordering-file into the specified file"),
    o(&["warn-symbol-ordering"], Flag, "", "Warn about problems with the symbol ordering file (default)"),
    o(&["no-warn-symbol-ordering"], Flag, "", "Do not warn about problems with the symbol ordering file"),
    o(&["fatal-warnings"], Flag, "", "Treat warnings as errors"),
    o(
        &["no-fatal-warnings"],
        Flag,
        "",
        "Do not treat warnings as errors (default)",
    ),
    o(
        &["relax"],
        Flag,
        "",
        "Enable target-specific relaxations (default)",
    ),
    o(
        &["no-relax"],
        Flag,
        "",
        "Disable target-specific relaxations",
    ),
    o(
        &["color-diagnostics"],
        OptValue,
        "[=auto|always|never]",
        "Use colors in diagnostics (accepted and ignored)",
    ),
    o(
        &["no-color-diagnostics"],
        Flag,
        "",
        "Do not use colors in diagnostics",
    ),
    o(
        &["error-limit"],
        Value,
        "<n>",
        "Maximum number of errors to print (accepted and ignored)",
    ),
    o(
        &["icf"],
        Value,
        "<none|all|safe>",
        "Identical code folding (accepted; only none is done)",
    ),
    o(
        &["pack-dyn-relocs"],
        Value,
        "<none|relr|...>",
        "Pack dynamic relocations (accepted; none is done)",
    ),
    o(
        &["compress-debug-sections"],
        Value,
        "<none|zlib|zstd>",
        "Compress debug sections (accepted and ignored)",
    ),
    o(
        &["exclude-libs"],
        Value,
        "<libs>",
        "Hide symbols of these archives (comma- or colon-separated names, or ALL) from the dynamic symbol table",
    ),
    o(
        &["orphan-handling"],
        Value,
        "<mode>",
        "Orphan section handling (accepted and ignored)",
    ),
    o(
        &["trace-symbol", "y"],
        Value,
        "<sym>",
        "Trace references to a symbol (accepted and ignored)",
    ),
    o(
        &["hash-size"],
        Value,
        "<n>",
        "GNU ld hash table size (accepted and ignored)",
    ),
    o(&["g"], Flag, "", "Ignored (GNU compatibility)"),
    o(
        &["nostdlib"],
        Flag,
        "",
        "Only search directories given on the command line (accepted and ignored)",
    ),
    o(&["no-warn-mismatch"], Flag, "", "Accepted and ignored"),
    o(&["sort-common"], OptValue, "", "Accepted and ignored"),
    o(&["warn-common"], Flag, "", "Accepted and ignored"),
    o(&["no-warn-common"], Flag, "", "Accepted and ignored"),
    o(
        &["reduce-memory-overheads"],
        Flag,
        "",
        "Accepted and ignored",
    ),
    o(&["no-undefined-version"], Flag, "", "Accepted and ignored"),
    o(&["undefined-version"], Flag, "", "Allow version scripts to name undefined symbols"),
    o(&["unresolved-symbols"], Value, "<policy>", "ignore-all, ignore-in-object-files, ignore-in-shared-libs or report-all"),
    o(&["no-undefined-version"], Flag, "", "Version scripts naming undefined symbols are an error (default)"),
    o(&["export-dynamic-symbol-list"], Value, "<file>", "Export the symbols listed in <file> (dynamic-list syntax)"),
    o(&["trace", "t"], Flag, "", "Print the name of each input file"),
    o(&["cref"], Flag, "", "Accepted and ignored"),
    o(&["demangle"], Flag, "", "Accepted and ignored"),
    o(&["no-demangle"], Flag, "", "Accepted and ignored"),
    o(&["gdb-index"], Flag, "", "Accepted and ignored"),
    o(&["no-gdb-index"], Flag, "", "Accepted and ignored"),
    o(&["warn-backrefs"], Flag, "", "Accepted and ignored"),
    o(&["no-warn-backrefs"], Flag, "", "Accepted and ignored"),
    o(&["noinhibit-exec"], Flag, "", "Accepted and ignored"),
    o(
        &["no-copy-dt-needed-entries"],
        Flag,
        "",
        "Accepted and ignored (the default)",
    ),
    o(&["rosegment"], Flag, "", "Accepted and ignored"),
    o(&["no-rosegment"], Flag, "", "Accepted and ignored"),
    o(&["warn-shared-textrel"], Flag, "", "Accepted and ignored"),
    o(&["no-warnings", "w"], Flag, "", "Accepted and ignored"),
    o(
        &["enable-non-contiguous-regions"],
        Flag,
        "",
        "Accepted and ignored",
    ),
];

fn lookup(name: &str) -> Option<&'static Opt> {
    OPTIONS.iter().find(|o| o.names.contains(&name))
}

/// One-letter options that take a value joined or separate (single dash only).
const SHORT_WITH_VALUE: &[char] = &[
    'o', 'l', 'L', 'e', 'u', 'h', 'R', 'I', 'm', 'z', 'y', 'O', 'T',
];

/// A `-z` keyword that takes no action here but that lld (or GNU ld) accepts.
const Z_IGNORED: &[&str] = &[
    "combreloc",
    "nocombreloc",
    "copyreloc",
    "nocopyreloc",
    "hazardplt",
    "ibtplt",
    "lazy",
    "nokeep-text-section-prefix",
    "nopack-relative-relocs",
    "pack-relative-relocs",
    "nostart-stop-gc",
    "start-stop-gc",
    "pac-plt",
    "rel",
    "rela",
    "retpolineplt",
    "rodynamic",
    "separate-loadable-segments",
    "wxneeded",
    "force-ibt",
    "force-bti",
    "noexecstack",
    "nognustack",
    "noseparate-code",
    "report-relative",
    "unique",
    "nounique",
    "x86-64-baseline",
    "x86-64-v2",
    "x86-64-v3",
    "x86-64-v4",
    "mark-plt",
    "nomark-plt",
    "notext",
    "text",
    "undefs",
];
/// `-z key=value` keywords accepted and ignored.
const Z_IGNORED_EQ: &[&str] = &[
    "bti-report",
    "execute-only-report",
    "gcs",
    "gcs-report",
    "memtag-mode",
    "start-stop-visibility",
    "stack-size",
    "zicfilp",
    "zicfiss",
    "zicfilp-report",
    "zicfiss-report",
    "zicfilp-unlabeled-report",
    "zicfilp-func-sig-report",
    "isa-level-report",
    "pauth-report",
];

struct Parser {
    cfg: Config,
    errors: Vec<String>,
    in_group: bool,
    hash_style_seen: bool,
    raw_lib_paths: Vec<String>,
    has_input: bool,
    version: bool,
    help: bool,
}

/// Parses argv (without argv[0]).
pub fn parse(argv: &[String]) -> Result<Action> {
    let args = expand_response_files(argv)?;
    let mut p = Parser {
        cfg: Config::default(),
        errors: Vec::new(),
        in_group: false,
        hash_style_seen: false,
        raw_lib_paths: Vec::new(),
        has_input: false,
        version: false,
        help: false,
    };
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if !a.starts_with('-') || a == "-" {
            p.cfg.cmdline.push(crate::elf::reproduce::CmdArg::Input(a.clone()));
            p.cfg.inputs.push(InputArg::File(PathBuf::from(a)));
            p.has_input = true;
            continue;
        }
        let (dashes, body) = if let Some(b) = a.strip_prefix("--") {
            ("--", b)
        } else {
            ("-", &a[1..])
        };

        // 1. The whole name: a flag, or an option whose value is the next argument.
        let one_letter = body.chars().count() == 1;
        if let Some(opt) = lookup(body).filter(|_| !(one_letter && dashes == "--")) {
            match opt.kind {
                Flag | OptValue => p.apply(opt.names[0], a, None),
                Value => {
                    if i < args.len() {
                        let v = args[i].clone();
                        i += 1;
                        p.apply(opt.names[0], a, Some(&v));
                    } else {
                        p.errors.push(format!("{a}: missing argument"));
                    }
                }
            }
            continue;
        }
        // 2. `name=value`.
        if let Some((n, v)) = body.split_once('=') {
            if let Some(opt) = lookup(n) {
                if matches!(opt.kind, Value | OptValue) && n.len() > 1 {
                    p.apply(opt.names[0], &format!("{dashes}{n}"), Some(v));
                    continue;
                }
            }
        }
        // 3. LTO options, recorded raw.
        if body.starts_with("lto-") || body.starts_with("thinlto-") || body.starts_with("lto=") || body == "no-lto-pgo-warn-mismatch" || body == "save-temps" || body.starts_with("save-temps=") {
            // These take their value in the next argument too (`--x <v>`), as in lld.
            const SEPARATE: &[&str] = &[
                "thinlto-distributor-arg",
                "thinlto-remote-compiler-prepend-arg",
                "thinlto-remote-compiler-arg",
            ];
            if SEPARATE.contains(&body) {
                if i < args.len() {
                    p.cfg.cmdline.push(crate::elf::reproduce::CmdArg::Raw(format!("--{body}={}", args[i])));
                    p.cfg.lto_args.push(format!("--{body}={}", args[i]));
                    i += 1;
                } else {
                    p.errors.push(format!("{a}: missing argument"));
                }
                continue;
            }
            p.cfg.cmdline.push(crate::elf::reproduce::CmdArg::Raw(a.clone()));
            p.cfg.lto_args.push(a.clone());
            continue;
        }
        // 4. A one-letter option with a joined value (`-omain`, `-lfoo`, `-znow`, `-O2`).
        if dashes == "-" {
            if let Some(c) = body.chars().next() {
                if SHORT_WITH_VALUE.contains(&c) {
                    let v = &body[c.len_utf8()..];
                    let canon = lookup(&c.to_string()).map(|o| o.names[0]).unwrap_or("");
                    p.apply(canon, &format!("-{c}"), Some(v));
                    continue;
                }
            }
        }
        p.errors.push(format!("unknown argument '{a}'"));
    }

    if p.version {
        return Ok(Action::Version);
    }
    if p.help {
        return Ok(Action::Help);
    }
    if p.in_group && p.errors.is_empty() {
        // lld accepts a missing --end-group silently.
    }
    // Apply the sysroot to `-L=dir` and `-L$SYSROOT/dir` (it may come after the -L options).
    let sysroot = p.cfg.sysroot.clone();
    p.cfg.library_paths = p
        .raw_lib_paths
        .iter()
        .map(|d| apply_sysroot(d, sysroot.as_deref()))
        .collect();

    if !p.errors.is_empty() {
        return Err(Error::many(p.errors));
    }
    if !p.has_input {
        if p.cfg.print_version {
            return Ok(Action::Version);
        }
        crate::bail!("no input files");
    }
    Ok(Action::Link(p.cfg))
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

fn parse_int(s: &str) -> Option<u64> {
    // lld's to_integer(value, 0), on the trimmed text.
    parse_num(s.trim())
}

/// Decimal, `0x` hex or `0` octal, as LLVM's `getAsInteger(0, ...)` reads numbers (the GNU,
/// MinGW and lld-link command lines alike).
pub fn parse_num(s: &str) -> Option<u64> {
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else if s.len() > 1 && s.starts_with('0') {
        u64::from_str_radix(&s[1..], 8).ok()
    } else {
        s.parse().ok()
    }
}

impl Parser {
    fn ignore(&mut self, spelling: &str, v: Option<&str>) {
        self.cfg.ignored.push(match v {
            Some(v) => format!("{spelling}={v}"),
            None => spelling.to_string(),
        });
    }

    /// Applies option `canon` (as spelled `spelling`, for messages) with value `v`.
    fn apply(&mut self, canon: &'static str, spelling: &str, v: Option<&str>) {
        let joined = lookup(canon).is_some_and(|o| o.kind == OptValue);
        self.cfg.cmdline.push(crate::elf::reproduce::CmdArg::option(canon, spelling, v, joined));
        let c = &mut self.cfg;
        let val = || v.unwrap_or("").to_string();
        match canon {
            "o" => c.output = PathBuf::from(val()),
            "l" => {
                c.inputs.push(InputArg::Library(val()));
                self.has_input = true;
            }
            "L" => self.raw_lib_paths.push(val()),
            "shared" => c.shared = true,
            "pie" => c.pie = true,
            "no-pie" => c.pie = false,
            "static" => {
                c.is_static = true;
                c.inputs.push(InputArg::Static(true));
            }
            "relocatable" => c.relocatable = true,
            "emit-relocs" => self.errors.push("--emit-relocs is not supported yet".to_string()),
            "Bstatic" => c.inputs.push(InputArg::Static(true)),
            "Bdynamic" => c.inputs.push(InputArg::Static(false)),
            "as-needed" => c.inputs.push(InputArg::AsNeeded(true)),
            "no-as-needed" => c.inputs.push(InputArg::AsNeeded(false)),
            "whole-archive" => c.inputs.push(InputArg::WholeArchive(true)),
            "no-whole-archive" => c.inputs.push(InputArg::WholeArchive(false)),
            "start-group" => {
                if self.in_group {
                    self.errors.push("nested --start-group".into());
                }
                self.in_group = true;
                c.inputs.push(InputArg::StartGroup);
            }
            "end-group" => {
                if !self.in_group {
                    self.errors.push("stray --end-group".into());
                }
                self.in_group = false;
                c.inputs.push(InputArg::EndGroup);
            }
            "push-state" => c.inputs.push(InputArg::PushState),
            "pop-state" => c.inputs.push(InputArg::PopState),
            "entry" => c.entry = Some(val()),
            "undefined" => c.undefined.push(val()),
            "soname" => c.soname = Some(val()),
            "rpath" => c.rpath.push(val()),
            "dynamic-linker" => {
                c.dynamic_linker = Some(val());
                c.no_dynamic_linker = false;
            }
            "no-dynamic-linker" => {
                c.no_dynamic_linker = true;
                c.dynamic_linker = None;
            }
            "m" => {
                let e = val();
                match e.as_str() {
                    "elf_x86_64" | "elf64_x86_64" => c.emulation = Some(e),
                    "elf_i386" | "elf32_x86_64" | "elf_amd64" | "elf_iamcu" | "aarch64linux"
                    | "aarch64elf" | "armelf" | "armelf_linux_eabi" | "elf64lriscv"
                    | "elf32lriscv" | "elf64ppc" | "elf64lppc" | "elf32ppc" | "elf_x86_64_fbsd"
                    | "elf_i386_fbsd" => self.errors.push(format!(
                        "unsupported emulation: {e} (dtld links only elf_x86_64)"
                    )),
                    _ => self.errors.push(format!("unknown emulation: {e}")),
                }
            }
            "z" => self.z_keyword(&val()),
            "export-dynamic" => c.export_dynamic = true,
            "no-export-dynamic" => c.export_dynamic = false,
            "export-dynamic-symbol" => c.export_dynamic_symbols.push(val()),
            "dynamic-list" => c.dynamic_lists.push(PathBuf::from(val())),
            "export-dynamic-symbol-list" => c.export_dynamic_symbol_lists.push(PathBuf::from(val())),
            "undefined-version" => c.undefined_version = true,
            "unresolved-symbols" => match v.unwrap_or("") {
                "ignore-all" | "ignore-in-object-files" => c.ignore_unresolved_in_objects = true,
                "report-all" | "ignore-in-shared-libs" => c.ignore_unresolved_in_objects = false,
                other => self.errors.push(format!("unknown --unresolved-symbols value: {other}")),
            },
            "no-undefined-version" => c.undefined_version = false,
            "trace" => c.trace = true,
            "version-script" => c.version_scripts.push(PathBuf::from(val())),
            "hash-style" => {
                // The last --hash-style wins (ld.lld 22: `--hash-style=gnu --hash-style=sysv`
                // writes only .hash); clang passes its own first.
                c.hash_sysv = false;
                c.hash_gnu = false;
                self.hash_style_seen = true;
                match v.unwrap_or("") {
                    "sysv" => c.hash_sysv = true,
                    "gnu" => c.hash_gnu = true,
                    "both" => {
                        c.hash_sysv = true;
                        c.hash_gnu = true;
                    }
                    other => self.errors.push(format!("unknown --hash-style: {other}")),
                }
            }
            "build-id" => match v {
                // A bare --build-id is SHA-1 (20 bytes) in ld.lld 22, as in GNU ld.
                None | Some("sha1") | Some("tree") => {
                    c.build_id = BuildId::Sha1;
                    c.build_id_hex.clear();
                }
                Some("fast") => {
                    c.build_id = BuildId::Fast;
                    c.build_id_hex.clear();
                }
                Some("md5") => {
                    c.build_id = BuildId::Md5;
                    c.build_id_hex.clear();
                }
                Some("uuid") => {
                    c.build_id = BuildId::Uuid;
                    c.build_id_hex.clear();
                }
                Some("none") => {
                    c.build_id = BuildId::None;
                    c.build_id_hex.clear();
                }
                Some(s) if s.starts_with("0x") || s.starts_with("0X") => match parse_hex(&s[2..]) {
                    Some(bytes) => {
                        c.build_id = BuildId::None;
                        c.build_id_hex = bytes;
                    }
                    None => self
                        .errors
                        .push(format!("--build-id=0x: invalid hex string: {}", &s[2..])),
                },
                Some(s) => self.errors.push(format!("unknown --build-id style: {s}")),
            },
            "eh-frame-hdr" => c.eh_frame_hdr = true,
            "no-eh-frame-hdr" => c.eh_frame_hdr = false,
            "gc-sections" => c.gc_sections = true,
            "no-gc-sections" => c.gc_sections = false,
            "print-gc-sections" => c.print_gc_sections = true,
            "no-print-gc-sections" => c.print_gc_sections = false,
            "enable-new-dtags" => c.enable_new_dtags = true,
            "disable-new-dtags" => c.enable_new_dtags = false,
            "allow-shlib-undefined" => c.allow_shlib_undefined = Some(true),
            "no-allow-shlib-undefined" => c.allow_shlib_undefined = Some(false),
            "no-undefined" => c.z_defs = true,
            "allow-multiple-definition" => c.allow_multiple_definition = true,
            "no-allow-multiple-definition" => c.allow_multiple_definition = false,
            "Bsymbolic" => c.bsymbolic = true,
            "Bsymbolic-functions" => c.bsymbolic_functions = true,
            "Bno-symbolic" => {
                c.bsymbolic = false;
                c.bsymbolic_functions = false;
            }
            "sysroot" => c.sysroot = Some(PathBuf::from(val())),
            "threads" => match v.unwrap_or("").parse::<usize>() {
                Ok(n) if n > 0 => c.threads = Some(n),
                _ => self.errors.push(format!(
                    "--threads: expected a positive integer, but got '{}'",
                    val()
                )),
            },
            "strip-all" => c.strip_all = true,
            "strip-debug" => c.strip_debug = true,
            "discard-all" => c.discard_all = true,
            "discard-locals" => c.discard_locals = true,
            "discard-none" => {
                c.discard_all = false;
                c.discard_locals = false;
            }
            "defsym" => match v.unwrap_or("").split_once('=') {
                Some((name, value)) if !name.trim().is_empty() && !value.trim().is_empty() => c
                    .defsym
                    .push((name.trim().to_string(), value.trim().to_string())),
                _ => self.errors.push("--defsym:1: unexpected EOF".into()),
            },
            "wrap" => c.wrap.push(val()),
            "init" => c.init = Some(val()),
            "fini" => c.fini = Some(val()),
            "plugin" => c.plugin = Some(val()),
            "plugin-opt" => c.plugin_opts.push(val()),
            "mllvm" => c.mllvm.push(val()),
            "Map" => c.map_file = Some(PathBuf::from(val())),
            "print-map" => c.map_file = Some(PathBuf::from("-")),
            "script" => {
                c.inputs.push(InputArg::File(PathBuf::from(val())));
                self.has_input = true;
            }
            "reproduce" => c.reproduce = Some(PathBuf::from(val())),
            "chroot" => c.chroot = Some(PathBuf::from(val())),
            "verbose" => c.verbose = true,
            "time-trace" => {
                c.time_trace = Some(match v {
                    Some(f) if !f.is_empty() => PathBuf::from(f),
                    _ => PathBuf::new(),
                })
            }
            "time-trace-file" => c.time_trace_file = Some(PathBuf::from(val())),
            "time-trace-granularity" => {}
            "v" => c.print_version = true,
            "version" => self.version = true,
            "help" => self.help = true,
            "O" => match v.unwrap_or("").parse::<u32>() {
                Ok(n) => c.opt_level = n,
                Err(_) => self.errors.push(format!(
                    "{spelling}{}: number expected, but got '{}'",
                    val(),
                    val()
                )),
            },
            "fatal-warnings" => c.fatal_warnings = true,
            "no-fatal-warnings" => c.fatal_warnings = false,
            "relax" => c.relax = true,
            "no-relax" => c.relax = false,
            "call-graph-profile-sort" => match val().as_str() {
                "none" => c.cg_profile_sort = CgProfileSort::None,
                "hfsort" => c.cg_profile_sort = CgProfileSort::Hfsort,
                "cdsort" => c.cg_profile_sort = CgProfileSort::Cdsort,
                other => self.errors.push(format!("unknown --call-graph-profile-sort= value: {other}")),
            },
            "no-call-graph-profile-sort" => c.cg_profile_sort = CgProfileSort::None,
            "call-graph-ordering-file" => c.call_graph_ordering_file = Some(PathBuf::from(val())),
            "print-symbol-order" => c.print_symbol_order = Some(PathBuf::from(val())),
            "warn-symbol-ordering" => c.warn_symbol_ordering = true,
            "no-warn-symbol-ordering" => c.warn_symbol_ordering = false,
            "color-diagnostics" => match v {
                None | Some("auto") | Some("always") | Some("never") => self.ignore(spelling, v),
                Some(other) => self
                    .errors
                    .push(format!("unknown option: --color-diagnostics={other}")),
            },
            "error-limit" => match v.unwrap_or("").parse::<u64>() {
                Ok(_) => self.ignore(spelling, v),
                Err(_) => self.errors.push(format!(
                    "--error-limit={}: number expected, but got '{}'",
                    val(),
                    val()
                )),
            },
            "icf" => match v.unwrap_or("") {
                "none" => {}
                "all" | "safe" | "safe_thunks" => self.ignore(spelling, v),
                other => self
                    .errors
                    .push(format!("unknown argument '{spelling}={other}'")),
            },
            "pack-dyn-relocs" => match v.unwrap_or("") {
                "none" => {}
                "relr" | "android" | "android+relr" => self.ignore(spelling, v),
                other => self
                    .errors
                    .push(format!("unknown --pack-dyn-relocs format: {other}")),
            },
            "hash-size" => {
                if v.unwrap_or("").parse::<u64>().is_err() {
                    self.errors
                        .push(format!("{spelling}: invalid value: {}", val()));
                } else {
                    self.ignore(spelling, v);
                }
            }
            "exclude-libs" => c.exclude_libs.extend(val().split([',', ':']).filter(|s| !s.is_empty()).map(str::to_string)),
            "compress-debug-sections"
            | "orphan-handling"
            | "trace-symbol"
            | "rpath-link"
            | "no-color-diagnostics"
            | "g"
            | "nostdlib"
            | "no-warn-mismatch"
            | "sort-common"
            | "warn-common"
            | "no-warn-common"
            | "reduce-memory-overheads"
            | "cref"
            | "demangle"
            | "no-demangle"
            | "gdb-index"
            | "no-gdb-index"
            | "warn-backrefs"
            | "no-warn-backrefs"
            | "noinhibit-exec"
            | "no-copy-dt-needed-entries"
            | "rosegment"
            | "no-rosegment"
            | "warn-shared-textrel"
            | "no-warnings"
            | "enable-non-contiguous-regions" => self.ignore(spelling, v),
            _ => self.errors.push(format!("unknown argument '{spelling}'")),
        }
    }

    fn z_keyword(&mut self, k: &str) {
        let c = &mut self.cfg;
        match k {
            "relro" => c.z_relro = true,
            "norelro" => c.z_relro = false,
            "now" => c.z_now = true,
            "lazy" => c.z_now = false,
            "execstack" => c.z_execstack = true,
            "noexecstack" => c.z_execstack = false,
            "defs" => c.z_defs = true,
            "undefs" => c.z_defs = false,
            "text" => c.z_text = true,
            "notext" => c.z_text = false,
            "start-stop-gc" => c.z_start_stop_gc = true,
            "nostart-stop-gc" => c.z_start_stop_gc = false,
            "separate-code" => c.z_separate_code = true,
            "noseparate-code" => c.z_separate_code = false,
            "origin" => c.z_origin = true,
            "nodelete" => c.z_nodelete = true,
            "nodlopen" => c.z_nodlopen = true,
            "initfirst" => c.z_initfirst = true,
            "interpose" => c.z_interpose = true,
            "nodefaultlib" => c.z_nodefaultlib = true,
            "global" => c.z_global = true,
            "muldefs" => c.allow_multiple_definition = true,
            "ibt" => c.z_ibt = true,
            "shstk" => c.z_shstk = true,
            "nognustack" => c.z_nognustack = true,
            "dynamic-undefined-weak" => c.z_dynamic_undefined_weak = true,
            "nodynamic-undefined-weak" => c.z_dynamic_undefined_weak = false,
            "keep-text-section-prefix" => c.z_keep_text_section_prefix = true,
            "nokeep-text-section-prefix" => c.z_keep_text_section_prefix = false,
            _ => {
                if let Some((key, value)) = k.split_once('=') {
                    match key {
                        "max-page-size" | "common-page-size" => match parse_int(value) {
                            None => self.errors.push(format!("invalid {key}: {value}")),
                            Some(n) if n == 0 || !n.is_power_of_two() => {
                                self.errors.push(format!("{key}: value isn't a power of 2"))
                            }
                            Some(n) => {
                                if key == "max-page-size" {
                                    c.max_page_size = Some(n);
                                } else {
                                    c.common_page_size = Some(n);
                                }
                            }
                        },
                        "dead-reloc-in-nonalloc" => match value.rsplit_once('=') {
                            Some((glob, v)) if !glob.is_empty() && !v.is_empty() => match parse_int(v) {
                                Some(n) => c.dead_reloc_in_nonalloc.push((glob.to_string(), n)),
                                None => self.errors.push(format!(
                                    "-z dead-reloc-in-nonalloc=: expected a non-negative integer, but got '{v}'"
                                )),
                            },
                            _ => self
                                .errors
                                .push("-z dead-reloc-in-nonalloc=: expected <section_glob>=<value>".to_string()),
                        },
                        "stack-size" => match parse_int(value) {
                            Some(n) => c.z_stack_size = Some(n),
                            None => self.errors.push(format!("invalid stack-size: {value}")),
                        },
                        "cet-report" => match value {
                            "none" | "warning" | "error" => {
                                c.z_cet_report = Some(value.to_string())
                            }
                            _ => self
                                .errors
                                .push(format!("unknown -z cet-report= value: {value}")),
                        },
                        _ if Z_IGNORED_EQ.contains(&key) => c.ignored.push(format!("-z {k}")),
                        _ => warn(&format!("unknown -z value: {k}")),
                    }
                } else if Z_IGNORED.contains(&k) {
                    c.ignored.push(format!("-z {k}"));
                } else {
                    warn(&format!("unknown -z value: {k}"));
                }
            }
        }
    }
}

fn parse_hex(s: &str) -> Option<Vec<u8>> {
    let s = s.trim();
    if s.is_empty() || !s.len().is_multiple_of(2) || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok())
        .collect()
}

// ------------------------------------------------------------------------------------------------
// Response files.
// ------------------------------------------------------------------------------------------------

/// Expands `@file` arguments (recursively), as clang and GNU ld do. A missing file leaves the
/// argument as it is (it then fails as an input file named `@file`, like lld).
pub fn expand_response_files(argv: &[String]) -> Result<Vec<String>> {
    let mut out = Vec::with_capacity(argv.len());
    let mut active: Vec<PathBuf> = Vec::new();
    let mut budget = RSP_BUDGET;
    expand_into(argv, &mut out, &mut active, &mut budget)?;
    Ok(out)
}

/// How many bytes of response files one command line may read in all, nested and repeated
/// ones counted each time: real links (Chromium's) stay below 16 MiB, and the expanded words
/// take a few times the text, so the link's memory stays well under 1 GiB.
const RSP_BUDGET: u64 = 64 << 20;

/// How many words a command line may expand to (each costs a `String`): real links name
/// tens of thousands of files.
const MAX_ARGS: usize = 4 << 20;

fn expand_into(args: &[String], out: &mut Vec<String>, active: &mut Vec<PathBuf>, budget: &mut u64) -> Result<()> {
    for a in args {
        let Some(name) = a.strip_prefix('@') else {
            out.push(a.clone());
            continue;
        };
        let Ok(file) = std::fs::File::open(name) else {
            out.push(a.clone());
            continue;
        };
        let abs = std::fs::canonicalize(name).unwrap_or_else(|_| PathBuf::from(name));
        if active.contains(&abs) || active.len() > 64 {
            crate::bail!("recursive expansion of: '{}'", abs.display());
        }
        // Read no more than what is left of the budget (the file may be a pipe or growing).
        let mut bytes = Vec::new();
        use std::io::Read;
        let read = file.take(*budget + 1).read_to_end(&mut bytes);
        if read.is_err() {
            out.push(a.clone());
            continue;
        }
        if bytes.len() as u64 > *budget {
            crate::bail!("response file {name}: the response files of this command line are larger than {} MiB in all", RSP_BUDGET >> 20);
        }
        *budget -= bytes.len() as u64;
        let text = String::from_utf8_lossy(&bytes);
        let words = tokenize_gnu(&text);
        drop(bytes);
        if out.len() + words.len() > MAX_ARGS {
            crate::bail!("response file {name}: the command line expands to more than {MAX_ARGS} arguments");
        }
        active.push(abs);
        expand_into(&words, out, active, budget)?;
        active.pop();
    }
    Ok(())
}

/// Splits response-file text by the GNU rules (LLVM's `TokenizeGNUCommandLine`): whitespace
/// separates words; `'...'` quotes literally; `"..."` quotes with backslash escapes; a backslash
/// outside quotes escapes the next character. Quotes may join parts of one word (`a"b c"d`).
pub fn tokenize_gnu(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars().peekable();
    while let Some(ch) = chars.next() {
        match ch {
            c if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\\' => {
                in_word = true;
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            '\'' => {
                in_word = true;
                for n in chars.by_ref() {
                    if n == '\'' {
                        break;
                    }
                    cur.push(n);
                }
            }
            '"' => {
                in_word = true;
                while let Some(n) = chars.next() {
                    match n {
                        '"' => break,
                        '\\' => {
                            if let Some(m) = chars.next() {
                                cur.push(m);
                            }
                        }
                        _ => cur.push(n),
                    }
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    out
}

// ------------------------------------------------------------------------------------------------
// --help
// ------------------------------------------------------------------------------------------------

/// The text `--help` prints.
pub fn help_text() -> String {
    let mut s = String::new();
    s.push_str("OVERVIEW: dtld, an x86-64 ELF linker (compatible with GNU linkers)\n\n");
    s.push_str("USAGE: dtld [options] file...\n\nOPTIONS:\n");
    for opt in OPTIONS {
        if opt.help.is_empty() {
            continue;
        }
        let mut spell: Vec<String> = Vec::new();
        for n in opt.names {
            let short = n.len() == 1 || *n == "(" || *n == ")";
            let d = if short { "-" } else { "--" };
            let meta = match (opt.kind, short) {
                (Flag, _) => String::new(),
                (OptValue, _) => opt.meta.to_string(),
                (_, true) => format!(" {}", opt.meta),
                (_, false) => format!("={}", opt.meta),
            };
            spell.push(format!("{d}{n}{meta}"));
        }
        let left = spell.join(", ");
        if left.len() < 30 {
            s.push_str(&format!("  {left:<30} {}\n", opt.help));
        } else {
            s.push_str(&format!("  {left}\n  {:<30} {}\n", "", opt.help));
        }
    }
    s.push_str("  --lto-*, --thinlto-*            LTO options (recorded for the LTO stage)\n");
    s.push_str("  @<file>                        Read options from <file>\n");
    s
}

// ------------------------------------------------------------------------------------------------
// Tests
// ------------------------------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    fn cfg(s: &[&str]) -> Config {
        match parse(&args(s)) {
            Ok(Action::Link(c)) => c,
            Ok(_) => panic!("not a link"),
            Err(e) => panic!("error: {e}"),
        }
    }

    fn err(s: &[&str]) -> String {
        match parse(&args(s)) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("expected an error for {s:?}"),
        }
    }

    #[test]
    fn joined_and_separate_values() {
        let c = cfg(&["-omain", "a.o"]);
        assert_eq!(c.output, PathBuf::from("main"));
        let c = cfg(&["-o", "x", "a.o", "--soname=libx.so.1"]);
        assert_eq!(c.output, PathBuf::from("x"));
        assert_eq!(c.soname.as_deref(), Some("libx.so.1"));
        assert_eq!(cfg(&["-soname", "y", "a.o"]).soname.as_deref(), Some("y"));
        assert_eq!(cfg(&["-soname=y", "a.o"]).soname.as_deref(), Some("y"));
        assert_eq!(cfg(&["-h", "z", "a.o"]).soname.as_deref(), Some("z"));
        assert_eq!(cfg(&["-hz", "a.o"]).soname.as_deref(), Some("z"));
        assert_eq!(cfg(&["-e", "start", "a.o"]).entry.as_deref(), Some("start"));
        assert_eq!(
            cfg(&["--entry=start", "a.o"]).entry.as_deref(),
            Some("start")
        );
        assert_eq!(cfg(&["-entry", "s", "a.o"]).entry.as_deref(), Some("s"));
        assert_eq!(cfg(&["-emain", "a.o"]).entry.as_deref(), Some("main"));
        assert_eq!(
            cfg(&["-u", "f", "--undefined=g", "-uh", "a.o"]).undefined,
            vec!["f", "g", "h"]
        );
        assert_eq!(
            cfg(&["-m", "elf_x86_64", "a.o"]).emulation.as_deref(),
            Some("elf_x86_64")
        );
        assert_eq!(
            cfg(&["-melf_x86_64", "a.o"]).emulation.as_deref(),
            Some("elf_x86_64")
        );
        let c = cfg(&["-L", "/a", "-L/b", "--library-path=/c", "a.o"]);
        assert_eq!(
            c.library_paths,
            vec![
                PathBuf::from("/a"),
                PathBuf::from("/b"),
                PathBuf::from("/c")
            ]
        );
        let c = cfg(&["-lfoo", "-l", "bar", "-l:baz.a", "--library=qux"]);
        assert_eq!(
            c.inputs,
            vec![
                InputArg::Library("foo".into()),
                InputArg::Library("bar".into()),
                InputArg::Library(":baz.a".into()),
                InputArg::Library("qux".into())
            ]
        );
        let c = cfg(&["-dynamic-linker", "/lib/ld.so", "a.o"]);
        assert_eq!(c.dynamic_linker.as_deref(), Some("/lib/ld.so"));
        let c = cfg(&["--dynamic-linker=/x", "-I/y", "a.o"]);
        assert_eq!(c.dynamic_linker.as_deref(), Some("/y"));
        let c = cfg(&["-rpath", "/r1", "-R/r2", "--rpath=/r3", "-rpath=/r4", "a.o"]);
        assert_eq!(c.rpath, vec!["/r1", "/r2", "/r3", "/r4"]);
    }

    #[test]
    fn single_dash_long_options() {
        let c = cfg(&["-pie", "a.o"]);
        assert!(c.pie);
        let c = cfg(&["--pie", "-no-pie", "a.o"]);
        assert!(!c.pie);
        let c = cfg(&["-shared", "-Bsymbolic", "-export-dynamic", "a.o"]);
        assert!(c.shared && c.bsymbolic && c.export_dynamic);
        let c = cfg(&["-static", "-pie", "--no-dynamic-linker", "a.o"]);
        assert!(c.is_static && c.pie && c.no_dynamic_linker);
        assert_eq!(c.inputs[0], InputArg::Static(true));
        let c = cfg(&["-E", "-s", "-S", "-x", "-X", "a.o"]);
        assert!(
            c.export_dynamic && c.strip_all && c.strip_debug && c.discard_all && c.discard_locals
        );
        assert!(cfg(&["-r", "a.o"]).relocatable);
        assert!(cfg(&["--relocatable", "a.o"]).relocatable);
    }

    #[test]
    fn positional_state_in_order() {
        let c = cfg(&[
            "a.o",
            "--as-needed",
            "-lc",
            "--no-as-needed",
            "-Bstatic",
            "-dy",
            "-dn",
            "-non_shared",
            "-call_shared",
            "-Bdynamic",
            "--whole-archive",
            "x.a",
            "--no-whole-archive",
            "--start-group",
            "y.a",
            "--end-group",
            "-(",
            "z.a",
            "-)",
            "--push-state",
            "--pop-state",
        ]);
        use InputArg::*;
        assert_eq!(
            c.inputs,
            vec![
                File("a.o".into()),
                AsNeeded(true),
                Library("c".into()),
                AsNeeded(false),
                Static(true),
                Static(false),
                Static(true),
                Static(true),
                Static(false),
                Static(false),
                WholeArchive(true),
                File("x.a".into()),
                WholeArchive(false),
                StartGroup,
                File("y.a".into()),
                EndGroup,
                StartGroup,
                File("z.a".into()),
                EndGroup,
                PushState,
                PopState,
            ]
        );
    }

    #[test]
    fn z_keywords() {
        let c = cfg(&[
            "-z",
            "now",
            "-znorelro",
            "-z",
            "noexecstack",
            "-z",
            "defs",
            "-z",
            "max-page-size=0x200000",
            "a.o",
        ]);
        assert!(c.z_now && !c.z_relro && !c.z_execstack && c.z_defs);
        assert_eq!(c.max_page_size, Some(0x200000));
        let c = cfg(&[
            "-z",
            "execstack",
            "-z",
            "notext",
            "-zseparate-code",
            "-z",
            "common-page-size=4096",
            "a.o",
        ]);
        assert!(c.z_execstack && !c.z_text && c.z_separate_code);
        assert_eq!(c.common_page_size, Some(4096));
        // Unknown keywords only warn.
        let c = cfg(&["-z", "bogus-keyword", "-z", "combreloc", "a.o"]);
        assert!(c.ignored.contains(&"-z combreloc".to_string()));
        assert_eq!(
            err(&["-z", "max-page-size=abc", "a.o"]),
            "invalid max-page-size: abc"
        );
        assert_eq!(
            err(&["-z", "common-page-size=3", "a.o"]),
            "common-page-size: value isn't a power of 2"
        );
        assert!(cfg(&["--no-undefined", "a.o"]).z_defs);
    }

    #[test]
    fn errors_in_lld_wording() {
        assert_eq!(err(&["--bogus", "a.o"]), "unknown argument '--bogus'");
        assert_eq!(err(&["-bogus", "a.o"]), "unknown argument '-bogus'");
        assert_eq!(err(&["a.o", "-o"]), "-o: missing argument");
        assert_eq!(err(&["a.o", "--soname"]), "--soname: missing argument");
        assert_eq!(err(&["a.o", "-soname"]), "-soname: missing argument");
        assert_eq!(err(&["--omain", "a.o"]), "unknown argument '--omain'");
        assert_eq!(err(&["--lfoo"]), "unknown argument '--lfoo'");
        assert_eq!(err(&["-pie=3", "a.o"]), "unknown argument '-pie=3'");
        assert_eq!(
            err(&["--as-needed=3", "a.o"]),
            "unknown argument '--as-needed=3'"
        );
        assert_eq!(
            err(&["--hash-style=foo", "a.o"]),
            "unknown --hash-style: foo"
        );
        assert_eq!(
            err(&["--build-id=foo", "a.o"]),
            "unknown --build-id style: foo"
        );
        assert_eq!(
            err(&["--threads=x", "a.o"]),
            "--threads: expected a positive integer, but got 'x'"
        );
        assert_eq!(
            err(&["--threads=0", "a.o"]),
            "--threads: expected a positive integer, but got '0'"
        );
        assert_eq!(err(&["-m", "foo", "a.o"]), "unknown emulation: foo");
        assert_eq!(err(&["-Ox", "a.o"]), "-Ox: number expected, but got 'x'");
        assert_eq!(err(&[]), "no input files");
        assert_eq!(err(&["-pie"]), "no input files");
        assert_eq!(
            err(&["--pop-state", "--bogus", "-x1"]),
            "unknown argument '--bogus'\nunknown argument '-x1'"
        );
        assert_eq!(
            err(&["--start-group", "--start-group", "a.o"]),
            "nested --start-group"
        );
        assert_eq!(err(&["--end-group", "a.o"]), "stray --end-group");
        assert_eq!(
            err(&["--color-diagnostics=bad", "a.o"]),
            "unknown option: --color-diagnostics=bad"
        );
    }

    #[test]
    fn misc_options() {
        let c = cfg(&["--hash-style=sysv", "a.o"]);
        assert!(c.hash_sysv && !c.hash_gnu);
        let c = cfg(&["--hash-style=both", "a.o"]);
        assert!(c.hash_sysv && c.hash_gnu);
        // The last --hash-style wins, as in ld.lld 22 (checked by the hash-style-sysv fixture).
        let c = cfg(&["--hash-style", "gnu", "--hash-style=sysv", "a.o"]);
        assert!(c.hash_sysv && !c.hash_gnu);
        // A bare --build-id is SHA-1 in ld.lld 22 (20-byte note).
        assert_eq!(cfg(&["--build-id", "a.o"]).build_id, BuildId::Sha1);
        assert_eq!(cfg(&["--build-id=fast", "a.o"]).build_id, BuildId::Fast);
        assert_eq!(cfg(&["--build-id=sha1", "a.o"]).build_id, BuildId::Sha1);
        assert_eq!(cfg(&["--build-id=md5", "a.o"]).build_id, BuildId::Md5);
        assert_eq!(cfg(&["--build-id=uuid", "a.o"]).build_id, BuildId::Uuid);
        assert_eq!(
            cfg(&["--build-id", "--build-id=none", "a.o"]).build_id,
            BuildId::None
        );
        let c = cfg(&["--build-id=0xdeadBEEF", "a.o"]);
        assert_eq!(
            (c.build_id, c.build_id_hex),
            (BuildId::None, vec![0xde, 0xad, 0xbe, 0xef])
        );
        assert!(cfg(&["--build-id=0x01", "--build-id=sha1", "a.o"])
            .build_id_hex
            .is_empty());
        let c = cfg(&[
            "--eh-frame-hdr",
            "--gc-sections",
            "--print-gc-sections",
            "--threads=3",
            "a.o",
        ]);
        assert!(c.eh_frame_hdr && c.gc_sections && c.print_gc_sections);
        assert_eq!(c.threads, Some(3));
        assert_eq!(cfg(&["--threads", "2", "a.o"]).threads, Some(2));
        let c = cfg(&[
            "--defsym=a=b+1",
            "--defsym",
            "c=0x10",
            "--wrap=malloc",
            "--wrap",
            "free",
            "a.o",
        ]);
        assert_eq!(
            c.defsym,
            vec![("a".into(), "b+1".into()), ("c".into(), "0x10".into())]
        );
        assert_eq!(c.wrap, vec!["malloc", "free"]);
        let c = cfg(&[
            "-plugin",
            "/usr/lib/gcc/liblto_plugin.so",
            "-plugin-opt=/usr/lib/gcc/lto-wrapper",
            "-plugin-opt=-fresolution=/tmp/x.res",
            "--plugin-opt=O2",
            "-mllvm",
            "-foo",
            "a.o",
        ]);
        assert_eq!(c.plugin.as_deref(), Some("/usr/lib/gcc/liblto_plugin.so"));
        assert_eq!(
            c.plugin_opts,
            vec!["/usr/lib/gcc/lto-wrapper", "-fresolution=/tmp/x.res", "O2"]
        );
        assert_eq!(c.mllvm, vec!["-foo"]);
        let c = cfg(&[
            "--lto-O3",
            "--thinlto-cache-dir=/tmp/c",
            "--lto-partitions=2",
            "-O2",
            "a.o",
        ]);
        assert_eq!(
            c.lto_args,
            vec![
                "--lto-O3",
                "--thinlto-cache-dir=/tmp/c",
                "--lto-partitions=2"
            ]
        );
        assert_eq!(c.opt_level, 2);
        assert_eq!(cfg(&["-O", "0", "a.o"]).opt_level, 0);
        let c = cfg(&[
            "-Map",
            "out.map",
            "--version-script=v.map",
            "--version-script",
            "w.map",
            "a.o",
        ]);
        assert_eq!(c.map_file, Some(PathBuf::from("out.map")));
        assert_eq!(
            c.version_scripts,
            vec![PathBuf::from("v.map"), PathBuf::from("w.map")]
        );
        assert_eq!(cfg(&["--Map=m", "a.o"]).map_file, Some(PathBuf::from("m")));
        let c = cfg(&[
            "--sort-common",
            "--warn-common",
            "--hash-size=31",
            "--reduce-memory-overheads",
            "-g",
            "a.o",
        ]);
        assert_eq!(c.ignored.len(), 5);
        let c = cfg(&[
            "--no-relax",
            "--fatal-warnings",
            "--icf=none",
            "--error-limit=0",
            "-nostdlib",
            "a.o",
        ]);
        assert!(!c.relax && c.fatal_warnings);
        let c = cfg(&["--allow-shlib-undefined", "--disable-new-dtags", "a.o"]);
        assert_eq!(c.allow_shlib_undefined, Some(true));
        assert!(!c.enable_new_dtags);
        assert_eq!(
            cfg(&["--no-allow-shlib-undefined", "a.o"]).allow_shlib_undefined,
            Some(false)
        );
        assert!(cfg(&["--verbose", "a.o"]).verbose);
        assert!(cfg(&["-v", "a.o"]).print_version);
        assert!(matches!(parse(&args(&["-v"])), Ok(Action::Version)));
        assert!(matches!(
            parse(&args(&["--version", "a.o"])),
            Ok(Action::Version)
        ));
        assert!(matches!(parse(&args(&["-V"])), Ok(Action::Version)));
        assert!(matches!(parse(&args(&["--help"])), Ok(Action::Help)));
        assert!(version_string().contains("compatible with GNU linkers"));
        assert!(help_text().contains("--as-needed"));
    }

    #[test]
    fn sysroot_applies_to_library_paths() {
        let c = cfg(&[
            "-L=/usr/lib",
            "-L$SYSROOT/lib",
            "-L/plain",
            "--sysroot=/sr",
            "a.o",
        ]);
        assert_eq!(
            c.library_paths,
            vec![
                PathBuf::from("/sr/usr/lib"),
                PathBuf::from("/sr/lib"),
                PathBuf::from("/plain")
            ]
        );
        let c = cfg(&["-L=/usr/lib", "a.o"]);
        assert_eq!(c.library_paths, vec![PathBuf::from("/usr/lib")]);
    }

    #[test]
    fn response_file_quoting() {
        assert_eq!(tokenize_gnu("a b\t c\n d"), vec!["a", "b", "c", "d"]);
        assert_eq!(
            tokenize_gnu(r#""a b" 'c d' e\ f"#),
            vec!["a b", "c d", "e f"]
        );
        assert_eq!(
            tokenize_gnu(r#""a \"q\" \\ b" 'x\y'"#),
            vec![r#"a "q" \ b"#, r"x\y"]
        );
        assert_eq!(tokenize_gnu(r#"a"b c"d ''"#), vec!["ab cd", ""]);
        assert_eq!(tokenize_gnu("  "), Vec::<String>::new());
    }

    #[test]
    fn response_files_nested() {
        let dir = std::env::temp_dir().join(format!("dtld-args-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let r1 = dir.join("r1");
        let r2 = dir.join("r2");
        std::fs::write(&r2, "-o 'out file' \"b c.o\"\n").unwrap();
        std::fs::write(&r1, format!("-pie @{}\na.o", r2.display())).unwrap();
        let c = cfg(&[&format!("@{}", r1.display()), "-lm"]);
        assert!(c.pie);
        assert_eq!(c.output, PathBuf::from("out file"));
        assert_eq!(
            c.inputs,
            vec![
                InputArg::File("b c.o".into()),
                InputArg::File("a.o".into()),
                InputArg::Library("m".into())
            ]
        );
        // A missing @file stays an argument.
        let c = cfg(&["@/nonexistent/dtld/rsp"]);
        assert_eq!(
            c.inputs,
            vec![InputArg::File("@/nonexistent/dtld/rsp".into())]
        );
        // Recursion is an error, not a hang.
        std::fs::write(&r2, format!("@{}", r1.display())).unwrap();
        let e = err(&[&format!("@{}", r1.display())]);
        assert!(e.starts_with("recursive expansion of: '"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
