//! The MinGW flavour of the GNU command line (`ld -m i386pep ...`), as lld's MinGW driver reads it.
//!
//! clang runs the linker for `--target=x86_64-w64-mingw32` with GNU-style options (`-m i386pep`,
//! `-Bdynamic`, `-lmingw32`, `--subsystem`, ...). lld's MinGW driver translates them into an
//! lld-link command line; dtld fills the same `CoffConfig` that `driver/link.rs` fills for
//! lld-link, with the MinGW driver's defaults (`-debug:dwarf`, `-build-id`, `-opt:noref`,
//! `-auto-import`, `-runtime-pseudo-reloc`, `-alternatename:__image_base__=__ImageBase`).
//! The `-l` search happens here, in lld's MinGW order: `lib<name>.dll.a`, `<name>.dll.a`,
//! `lib<name>.a`, `<name>.lib`, `lib<name>.dll`, `<name>.dll` per directory, only the `.a` and
//! `.lib` forms under `-Bstatic`.

use std::path::{Path, PathBuf};

use crate::coff::config::{CoffConfig, CoffInput, DebugMode};
use crate::driver::common::{parse_num, CoffAction};
use crate::driver::options::{self, lookup, nothing, opt, Opt, Report, Val};
use crate::driver::options::{Arity::*, Status::*};
use crate::error::{Error, Result};

/// Whether a GNU-style command line asks for a PE target (lld's `isPETarget`): the first `-m`
/// names a PE emulation.
pub fn is_pe_target(args: &[String]) -> bool {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let v = if a == "-m" {
            match it.next() {
                Some(v) => v.as_str(),
                None => return false,
            }
        } else if let Some(v) = a.strip_prefix("-m").filter(|v| v.ends_with("pe") || v.ends_with("pep")) {
            v
        } else {
            continue;
        };
        return matches!(v, "i386pe" | "i386pep" | "thumb2pe" | "arm64pe" | "arm64ecpe" | "arm64xpe");
    }
    false
}

/// Positional items of a MinGW command line, in order: inputs, `-l`, and the state switches.
enum Pos {
    Input(String),
    Lib(String),
    Whole(bool),
    Static(bool),
    /// `--push-state` / `--pop-state`: save and restore `-Bstatic` and `--whole-archive`.
    Push,
    Pop,
}

/// The MinGW parse state: the configuration being filled, and what is only settled after the
/// last argument (library search, subsystem and versions, strip modes, build id).
pub struct Mingw {
    c: CoffConfig,
    errors: Vec<String>,
    warnings: Vec<String>,
    search: Vec<PathBuf>,
    pos: Vec<Pos>,
    have_input: bool,
    dll_prefix: Option<String>,
    verbose_v: bool,
    version: bool,
    help: bool,
    os: (Option<String>, Option<String>),
    ss: (Option<String>, Option<String>),
    subsystem: Option<String>,
    strip_all: bool,
    strip_debug: bool,
    build_id: Option<bool>,
    /// How `--guard-longjmp` was spelled when it is the last of it and `--no-guard-longjmp`
    /// (lld warns that it does nothing without `--guard-cf`).
    longjmp: Option<String>,
    /// The LTO options lld's MinGW driver passes on to lld-link only as their last occurrence
    /// (`--lto-O` and `-plugin-opt=O`, `--thinlto-jobs=` and `-plugin-opt=jobs=`, ...), by
    /// lld-link's name for it (`lldlto`, `thinlto-cache-policy`, ...), the value and the option
    /// as spelled (`settle_lto`).
    lto_last: Vec<(&'static str, String, String)>,
}

impl Report for Mingw {
    fn warning(&mut self, msg: String) {
        self.warnings.push(msg);
    }
    fn error(&mut self, msg: String) {
        self.errors.push(msg);
    }
}

/// An LTO option by ld.lld's name for it (`CoffLto::set`), as the user spelled it.
fn push_lto(p: &mut Mingw, name: &str, v: &Val) {
    p.c.lto.set(name, v.value, &v.shown());
}

/// An LTO option lld's MinGW driver passes on as its last occurrence (`Mingw::lto_last`).
fn last_lto(p: &mut Mingw, kind: &'static str, value: &str, shown: String) {
    p.lto_last.retain(|(k, _, _)| *k != kind);
    p.lto_last.push((kind, value.to_string(), shown));
}

/// `-plugin-opt=`, by lld's MinGW option table: `O<n>` and `jobs=` are `--lto-O` and
/// `--thinlto-jobs=`, `-<x>` an LLVM option (`-mllvm:-<x>` to lld-link), GCC's collect2 options
/// and `thinlto` are ignored, the LLVMgold.so options lld-link has a flag for are read with the
/// link's LTO options; anything else is lld's error (a path to GCC's `lto-wrapper` aside).
fn plugin_opt(p: &mut Mingw, v: &Val) {
    let o = v.str();
    if crate::lto::options::is_gcc_collect2_opt(&o) || o.starts_with("thinlto") {
        return;
    }
    if o.starts_with('-') {
        p.c.lto.mllvm.push(o);
    } else if let Some(n) = o.strip_prefix('O') {
        last_lto(p, "lldlto", n, v.shown());
    } else if let Some(j) = o.strip_prefix("jobs=") {
        last_lto(p, "lldltojobs", j, v.shown());
    } else if ["cs-profile-generate", "emit-asm", "emit-llvm"].contains(&o.as_str())
        || ["cs-profile-path=", "dwo_dir=", "mcpu="].iter().any(|k| o.starts_with(k))
    {
        p.c.lto.plugin_opts.push(o);
    } else if !o.ends_with("lto-wrapper") && !o.ends_with("lto-wrapper.exe") {
        p.errors.push(format!("{}=: unknown plugin option '{o}'", v.spelling));
    }
}

fn icf(p: &mut Mingw, v: &Val) {
    match v.value.unwrap_or("") {
        "all" => p.c.icf = Some(true),
        "safe" => {
            p.c.icf = Some(true);
            p.c.icf_safe = true;
        }
        "none" => p.c.icf = Some(false),
        other => p.errors.push(format!("unknown parameter: --icf={other}")),
    }
}

fn error_limit(p: &mut Mingw, v: &Val) {
    match v.value.unwrap_or("").parse::<usize>() {
        Ok(n) => p.c.error_limit = n,
        // lld names the option as spelled, without its value (`--error-limit=x` too).
        Err(_) => p.errors.push(format!("{}: number expected, but got {}", v.spelling, v.str())),
    }
}

fn pdb(p: &mut Mingw, v: &Val) {
    // lld's MinGW driver: `--pdb=` (empty) names the PDB after the output.
    p.c.debug_pdb = true;
    p.c.debug_ghash = true;
    if let Some(f) = v.value.filter(|f| !f.is_empty()) {
        p.c.pdb = Some(PathBuf::from(f));
    }
}

fn guard_cf(p: &mut Mingw, on: bool) {
    p.c.guard_cf = on;
    p.c.guard_longjmp = on;
}

/// lld's MinGW option table (`MinGW/Options.td`: names, aliases, the options it accepts and
/// ignores) plus dtld's DTLTO options. Spellings take one dash or two; values go after `=` or
/// in the next argument; `-o -L -l -e -m -u -O` also take a joined value (`-lfoo`).
static OPTIONS: &[Opt<Mingw>] = &[
    opt(&["o"], Value, "<path>", "Path to file to write output", Implemented, |p, v| p.c.output = v.path()),
    opt(&["L"], Value, "<dir>", "Add a directory to the library search path", Implemented, |p, v| p.search.push(v.path())),
    opt(&["l"], Value, "<libName>", "Root name of library to use", Implemented, |p, v| {
        p.pos.push(Pos::Lib(v.str()));
        p.have_input = true;
    }),
    opt(&["e", "entry"], Value, "<entry>", "Name of entry point symbol", Implemented, |p, v| p.c.entry = Some(v.str())),
    opt(&["m"], Value, "<emulation>", "Set target emulation (i386pep)", Implemented, |p, v| {
        if v.value != Some("i386pep") {
            p.errors.push(format!("unknown parameter: -m{}", v.str()));
        }
    }),
    opt(&["u", "undefined"], Value, "<symbol>", "Include symbol in the link, if available", Implemented, |p, v| p.c.include_optional.push(v.str())),
    opt(&["require-defined"], Value, "<symbol>", "Force symbol to be added to symbol table as an undefined one", Implemented, |p, v| {
        p.c.includes.push(v.str())
    }),
    opt(&["subsystem"], Value, "<subsystem[:major[.minor]]>", "Specify subsystem", Implemented, |p, v| p.subsystem = Some(v.str())),
    opt(&["out-implib"], Value, "<path>", "Import library name", Implemented, |p, v| p.c.out_implib = Some(v.path())),
    // lld's MinGW driver passes `-Map` on as `-lldmap:`.
    opt(&["Map"], Value, "<path>", "Output a linker map", Implemented, |p, v| p.c.lldmap = Some(v.path())),
    opt(&["major-os-version"], Value, "<n>", "Set the OS and subsystem major version", Implemented, |p, v| p.os.0 = Some(v.str())),
    opt(&["minor-os-version"], Value, "<n>", "Set the OS and subsystem minor version", Implemented, |p, v| p.os.1 = Some(v.str())),
    opt(&["major-subsystem-version"], Value, "<n>", "Set the subsystem major version", Implemented, |p, v| p.ss.0 = Some(v.str())),
    opt(&["minor-subsystem-version"], Value, "<n>", "Set the subsystem minor version", Implemented, |p, v| p.ss.1 = Some(v.str())),
    opt(&["major-image-version"], Value, "<n>", "Set the image major version (ignored, as in lld)", Noop, nothing),
    opt(&["minor-image-version"], Value, "<n>", "Set the image minor version (ignored, as in lld)", Noop, nothing),
    opt(&["image-base"], Value, "<address>", "Base address of the program", Implemented, |p, v| {
        p.c.image_base = parse_num(v.value.unwrap_or("")).or_else(|| bad(&mut p.errors, "-base", v.value.unwrap_or("")))
    }),
    opt(&["stack"], Value, "<reserve[,commit]>", "Size of the stack", Implemented, |p, v| p.c.stack = pair(v.value.unwrap_or(""), p.c.stack, &mut p.errors)),
    opt(&["heap"], Value, "<reserve[,commit]>", "Size of the heap", Implemented, |p, v| p.c.heap = pair(v.value.unwrap_or(""), p.c.heap, &mut p.errors)),
    opt(&["file-alignment"], Value, "<n>", "Set file alignment", Implemented, |p, v| p.c.file_align = parse_num(v.value.unwrap_or("")).unwrap_or(512) as u32),
    opt(&["section-alignment"], Value, "<n>", "Set section alignment", Implemented, |p, v| {
        p.c.section_align = parse_num(v.value.unwrap_or("")).unwrap_or(4096) as u32
    }),
    opt(&["threads"], Value, "<n>", "Number of threads", Implemented, |p, v| p.c.threads = v.value.unwrap_or("").parse().ok()),
    opt(&["error-limit"], Value, "<n>", "Maximum number of errors to emit before stopping (0 = no limit)", Implemented, error_limit),
    opt(&["exclude-symbols"], Value, "<symbol,...>", "Exclude symbols from automatic export", Implemented, |p, v| {
        p.c.exclude_symbols.extend(v.str().split(',').map(String::from))
    }),
    opt(&["icf"], Value, "<all|safe|none>", "Identical code folding", Implemented, icf),
    opt(&["thinlto-cache-dir"], Value, "<dir>", "Path to ThinLTO cached object file directory", Implemented, |p, v| push_lto(p, "thinlto-cache-dir", v)),
    opt(&["thinlto-jobs"], Value, "<n>", "Number of ThinLTO jobs", Implemented, |p, v| last_lto(p, "lldltojobs", &v.str(), v.shown())),
    opt(&["thinlto-distributor"], Value, "<path>", "Distributor for DTLTO backend jobs", Implemented, |p, v| push_lto(p, "thinlto-distributor", v)),
    opt(&["thinlto-remote-compiler"], Value, "<path>", "Compiler for DTLTO backend jobs", Implemented, |p, v| push_lto(p, "thinlto-remote-compiler", v)),
    opt(&["thinlto-distributor-arg"], Value, "<arg>", "Argument for the DTLTO distributor", Implemented, |p, v| push_lto(p, "thinlto-distributor-arg", v)),
    opt(&["thinlto-remote-compiler-arg"], Value, "<arg>", "Argument for the DTLTO remote compiler", Implemented, |p, v| {
        push_lto(p, "thinlto-remote-compiler-arg", v)
    }),
    opt(&["lto-O"], Value, "<n>", "LTO optimization level", Implemented, |p, v| last_lto(p, "lldlto", &v.str(), format!("{}{}", v.spelling, v.str()))),
    opt(&["mllvm"], Value, "<arg>", "Options to pass to LLVM", Implemented, |p, v| p.c.lto.mllvm.push(v.str())),
    opt(&["plugin"], Value, "<path>", "The LLVMgold.so clang names (finds the user's LLVM)", Implemented, |p, v| p.c.lto.plugin = Some(v.str())),
    opt(&["plugin-opt"], Value, "<option>", "LTO options, as lld reads them", Implemented, plugin_opt),
    opt(&["Bdynamic", "dy", "call_shared"], Flag, "", "Link against shared libraries", Implemented, |p, _| p.pos.push(Pos::Static(false))),
    opt(&["Bstatic", "dn", "non_shared", "static"], Flag, "", "Do not link against shared libraries", Implemented, |p, _| p.pos.push(Pos::Static(true))),
    opt(&["shared", "dll"], Flag, "", "Build a shared object", Implemented, |p, _| p.c.dll = true),
    opt(&["whole-archive"], Flag, "", "Include all object files for following archives", Implemented, |p, _| p.pos.push(Pos::Whole(true))),
    opt(&["no-whole-archive"], Flag, "", "No longer include all object files for following archives", Implemented, |p, _| p.pos.push(Pos::Whole(false))),
    opt(&["gc-sections"], Flag, "", "Remove unused sections", Implemented, |p, _| p.c.gc = Some(true)),
    opt(&["no-gc-sections"], Flag, "", "Don't remove unused sections", Implemented, |p, _| p.c.gc = Some(false)),
    opt(&["s", "strip-all"], Flag, "", "Omit all symbol information from the output binary", Implemented, |p, _| p.strip_all = true),
    opt(&["S", "strip-debug"], Flag, "", "Omit all debug information, but keep symbol information", Implemented, |p, _| p.strip_debug = true),
    opt(&["export-all-symbols"], Flag, "", "Export all symbols even if a def file or dllexport attributes are used", Implemented, |p, _| p.c.export_all = true),
    opt(&["exclude-all-symbols"], Flag, "", "Don't automatically export any symbols", Implemented, |p, _| p.c.exclude_all = true),
    opt(&["enable-auto-import"], Flag, "", "Automatically import data symbols from DLLs", Implemented, |p, _| p.c.auto_import = true),
    opt(&["disable-auto-import"], Flag, "", "Don't automatically import data symbols from DLLs", Implemented, |p, _| p.c.auto_import = false),
    opt(&["enable-runtime-pseudo-reloc"], Flag, "", "Allow pseudo relocations", Implemented, |p, _| p.c.pseudo_relocs = true),
    opt(&["disable-runtime-pseudo-reloc"], Flag, "", "Don't allow pseudo relocations", Implemented, |p, _| p.c.pseudo_relocs = false),
    opt(&["dynamicbase"], Flag, "", "Enable ASLR", Implemented, |p, _| p.c.dynamic_base = true),
    opt(&["disable-dynamicbase", "no-dynamicbase"], Flag, "", "Disable ASLR", Implemented, |p, _| p.c.dynamic_base = false),
    opt(&["nxcompat"], Flag, "", "Enable data execution prevention", Implemented, |p, _| p.c.nx_compat = true),
    opt(&["disable-nxcompat"], Flag, "", "Disable data execution prevention", Implemented, |p, _| p.c.nx_compat = false),
    opt(&["high-entropy-va"], Flag, "", "Set the 'high entropy VA' flag", Implemented, |p, _| p.c.high_entropy_va = true),
    opt(&["disable-high-entropy-va"], Flag, "", "Don't set the 'high entropy VA' flag", Implemented, |p, _| p.c.high_entropy_va = false),
    opt(&["tsaware"], Flag, "", "Set the 'Terminal Server aware' flag", Implemented, |p, _| p.c.tsaware = true),
    opt(&["disable-tsaware"], Flag, "", "Don't set the 'Terminal Server aware' flag", Implemented, |p, _| p.c.tsaware = false),
    opt(&["large-address-aware"], Flag, "", "Enable large addresses", Implemented, |p, _| p.c.large_address_aware = true),
    opt(&["enable-reloc-section"], Flag, "", "Enable base relocations", Implemented, |p, _| p.c.fixed = false),
    opt(&["disable-reloc-section"], Flag, "", "Disable base relocations", Implemented, |p, _| p.c.fixed = true),
    opt(&["insert-timestamp"], Flag, "", "Include a PE header timestamp", Implemented, |p, _| p.c.timestamp = None),
    opt(&["no-insert-timestamp"], Flag, "", "Don't include a PE header timestamp", Implemented, |p, _| p.c.timestamp = Some(0)),
    opt(&["build-id"], OptValue, "[=<none>]", "Generate a build ID (--build-id=none: do not)", Implemented, |p, v| p.build_id = Some(v.value != Some("none"))),
    opt(&["allow-multiple-definition"], Flag, "", "Allow multiple definitions", Implemented, |p, _| p.c.allow_multiple = true),
    opt(&["no-allow-multiple-definition"], Flag, "", "Do not allow multiple definitions (default)", Implemented, |p, _| p.c.allow_multiple = false),
    opt(&["v"], Flag, "", "Display the version number", Implemented, |p, _| p.verbose_v = true),
    opt(&["version"], Flag, "", "Display the version number and exit", Implemented, |p, _| p.version = true),
    opt(&["verbose"], Flag, "", "Verbose mode", Implemented, |p, _| p.c.verbose = true),
    opt(&["help"], Flag, "", "Print option help", Implemented, |p, _| p.help = true),
    opt(&["demangle"], Flag, "", "Demangle symbol names (default)", Implemented, |p, _| p.c.demangle = true),
    opt(&["no-demangle"], Flag, "", "Do not demangle symbol names", Implemented, |p, _| p.c.demangle = false),
    opt(&["save-temps"], Flag, "", "Keep the DTLTO staging directory", Implemented, |p, v| push_lto(p, "save-temps", v)),
    opt(&["thinlto-index-only"], OptValue, "[=<file>]", "Write ThinLTO index files only", Implemented, |p, v| push_lto(p, "thinlto-index-only", v)),
    opt(&["thinlto-emit-imports-files"], Flag, "", "Write the ThinLTO import lists", Implemented, |p, v| push_lto(p, "thinlto-emit-imports-files", v)),
    opt(&["thinlto-prefix-replace"], Value, "<old;new>", "ThinLTO output path prefix replacement", Implemented, |p, v| {
        last_lto(p, "thinlto-prefix-replace", &v.str(), v.shown())
    }),
    opt(&["thinlto-object-suffix-replace"], Value, "<old;new>", "ThinLTO object suffix replacement", Implemented, |p, v| {
        last_lto(p, "thinlto-object-suffix-replace", &v.str(), v.shown())
    }),
    opt(&["thinlto-cache-policy"], Value, "<policy>", "ThinLTO cache pruning policy", Implemented, |p, v| {
        last_lto(p, "thinlto-cache-policy", &v.str(), v.shown())
    }),
    opt(&["lto-sample-profile"], Value, "<file>", "Sample profile for LTO", Implemented, |p, v| push_lto(p, "lto-sample-profile", v)),
    opt(&["lto-cs-profile-generate"], Flag, "", "Context-sensitive PGO instrumentation in LTO", Implemented, |p, v| push_lto(p, "lto-cs-profile-generate", v)),
    opt(&["lto-cs-profile-file"], Value, "<file>", "Context-sensitive profile for LTO", Implemented, |p, v| push_lto(p, "lto-cs-profile-file", v)),
    opt(&["lto-emit-asm"], Flag, "", "Emit assembly from LTO", Unsupported, nothing),
    opt(&["fatal-warnings"], Flag, "", "Treat warnings as errors", Implemented, |p, _| p.c.diag.fatal_warnings = true),
    opt(&["no-fatal-warnings"], Flag, "", "Do not treat warnings as errors (default)", Implemented, |p, _| p.c.diag.fatal_warnings = false),
    opt(&["wrap"], Value, "<symbol>", "Use wrapper functions for symbol", Implemented, |p, v| p.c.wrap.push(v.str())),
    opt(&["output-def"], Value, "<file>", "Output def file", Implemented, |p, v| p.c.output_def = Some(v.path())),
    opt(&["appcontainer"], Flag, "", "Set the appcontainer flag in the executable", Implemented, |p, _| p.c.appcontainer = true),
    opt(&["push-state"], Flag, "", "Save the current state of -Bstatic and --whole-archive", Implemented, |p, _| p.pos.push(Pos::Push)),
    opt(&["pop-state"], Flag, "", "Restore the state saved by --push-state", Implemented, |p, _| p.pos.push(Pos::Pop)),
    opt(&["dll-search-prefix"], Value, "<prefix>", "The prefix of DLLs to look for with -l (lib)", Implemented, |p, v| p.dll_prefix = Some(v.str())),
    opt(&["rpath"], Value, "<dir>", "Ignored (PE has no rpath), with a warning as lld", Implemented, |p, v| {
        p.warnings.push(format!("ignoring -rpath: {}", v.str()))
    }),
    opt(&["guard-cf"], Flag, "", "Enable Control Flow Guard", Implemented, |p, _| guard_cf(p, true)),
    opt(&["no-guard-cf"], Flag, "", "Do not enable Control Flow Guard (default)", Implemented, |p, _| guard_cf(p, false)),
    opt(&["guard-longjmp"], Flag, "", "Enable longjmp protection", Implemented, |p, v| {
        p.c.guard_longjmp = true;
        p.longjmp = Some(v.spelling.to_string());
    }),
    opt(&["no-guard-longjmp"], Flag, "", "Do not enable longjmp protection", Implemented, |p, _| {
        p.c.guard_longjmp = false;
        p.longjmp = None;
    }),
    opt(&["pdb"], Value, "<file>", "Output PDB debug info file (empty: named after the output)", Implemented, pdb),
    // Without effect on x86-64 (lld passes them to lld-link, which ignores them there), or
    // accepted and ignored by lld's MinGW driver.
    opt(&["kill-at"], Flag, "", "Remove @n from exported symbols (no effect on x86-64)", Noop, nothing),
    opt(&["no-seh"], Flag, "", "Set the 'no SEH' flag (ignored, as in lld)", Noop, nothing),
    opt(&["disable-no-seh"], Flag, "", "Do not set the 'no SEH' flag", Noop, nothing),
    opt(&["enable-stdcall-fixup"], Flag, "", "Resolve stdcall names (no effect on x86-64)", Noop, nothing),
    opt(&["disable-stdcall-fixup"], Flag, "", "Do not resolve stdcall names", Noop, nothing),
    opt(&["as-needed"], Flag, "", "Ignored (as in lld)", Noop, nothing),
    opt(&["disable-auto-image-base"], Flag, "", "Ignored (as in lld)", Noop, nothing),
    opt(&["enable-auto-image-base"], Flag, "", "Ignored (as in lld)", Noop, nothing),
    opt(&["start-group"], Flag, "", "Ignored (as in lld)", Noop, nothing),
    opt(&["end-group"], Flag, "", "Ignored (as in lld)", Noop, nothing),
    opt(&["full-shutdown"], Flag, "", "Ignored (as in lld)", Noop, nothing),
    opt(&["no-undefined"], Flag, "", "Ignored (as in lld)", Noop, nothing),
    opt(&["pic-executable"], Flag, "", "Ignored (as in lld)", Noop, nothing),
    opt(&["sort-common"], Flag, "", "Ignored (as in lld)", Noop, nothing),
    opt(&["O"], Value, "<n>", "Ignored (as in lld)", Noop, nothing),
    opt(&["sysroot"], Value, "<dir>", "Ignored (as in lld)", Noop, nothing),
    opt(&["fat-lto-objects"], Flag, "", "Ignored (as in lld)", Noop, nothing),
    opt(&["no-fat-lto-objects"], Flag, "", "Ignored (as in lld)", Noop, nothing),
    opt(&["lto-CGO"], Value, "<n>", "Code generation optimization level for LTO", Implemented, |p, v| {
        last_lto(p, "lldltocgo", &v.str(), format!("{}{}", v.spelling, v.str()))
    }),
    // lld options dtld does not implement; each would change the output, so each is an error.
    opt(&["delayload"], Value, "<dll>", "DLL to load only on demand", Unsupported, nothing),
    opt(&["functionpadmin"], OptValue, "[=<n>]", "Prepare for hot-patching", Unsupported, nothing),
    opt(&["Xlink"], Value, "<arg>", "Pass an argument to lld-link", Unsupported, nothing),
    opt(&["reproduce"], Value, "<file>", "Write a tar of the inputs and a response file", Unsupported, nothing),
    opt(&["dependent-load-flag"], Value, "<flags>", "Set the DLL load configuration flags", Unsupported, nothing),
    opt(&["undefined-glob"], Value, "<pattern>", "Force symbols matching the pattern to be undefined", Unsupported, nothing),
    opt(&["native-def"], Value, "<file>", "Native .def file (ARM64X)", Unsupported, nothing),
    opt(&["###"], Flag, "", "Print the lld-link command line and exit", Unsupported, nothing),
];

impl Mingw {
    /// A parse that starts from `c` (the MinGW driver's defaults).
    fn new(c: CoffConfig) -> Mingw {
        Mingw {
            c,
            errors: Vec::new(),
            warnings: Vec::new(),
            search: Vec::new(),
            pos: Vec::new(),
            have_input: false,
            dll_prefix: None,
            verbose_v: false,
            version: false,
            help: false,
            os: (None, None),
            ss: (None, None),
            subsystem: None,
            strip_all: false,
            strip_debug: false,
            build_id: None,
            longjmp: None,
            lto_last: Vec::new(),
        }
    }

    fn apply(&mut self, o: &Opt<Mingw>, spelling: &str, v: Option<&str>) {
        options::apply(self, o, spelling, v);
    }

    /// One argument (and, for a separate value, the next): returns how many it consumed.
    fn argument(&mut self, args: &[String], i: usize) -> usize {
        let a = &args[i];
        if !a.starts_with('-') || a == "-" {
            self.pos.push(Pos::Input(a.clone()));
            self.have_input = true;
            return 1;
        }
        let body = a.trim_start_matches('-');
        // The whole name: a flag, or an option whose value is the next argument.
        if let Some(o) = lookup(OPTIONS, body) {
            if o.arity != Value {
                self.apply(o, a, None);
                return 1;
            }
            match args.get(i + 1) {
                Some(v) => {
                    self.apply(o, a, Some(v));
                    return 2;
                }
                None => {
                    self.errors.push(format!("{a}: missing argument"));
                    return 1;
                }
            }
        }
        // `name=value`.
        if let Some((n, v)) = body.split_once('=') {
            if let Some(o) = lookup(OPTIONS, n).filter(|o| o.arity != Flag) {
                self.apply(o, &a[..a.len() - v.len() - 1], Some(v));
                return 1;
            }
        }
        // lld's joined LTO levels (`--lto-O2`, `--lto-CGO3`: clang writes them so).
        for name in ["lto-O", "lto-CGO"] {
            if let Some(v) = body.strip_prefix(name).filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit())) {
                if let Some(o) = lookup(OPTIONS, name) {
                    self.apply(o, &a[..a.len() - v.len()], Some(v));
                    return 1;
                }
            }
        }
        // A one-letter option with a joined value (`-lfoo`, `-L/dir`, `-omain`, `-mi386pep`).
        if !a.starts_with("--") && body.len() > 1 && matches!(body.as_bytes()[0], b'o' | b'L' | b'l' | b'e' | b'm' | b'u' | b'O') {
            if let Some(o) = lookup(OPTIONS, &body[..1]) {
                self.apply(o, &a[..2], Some(&body[1..]));
                return 1;
            }
        }
        self.errors.push(format!("unknown argument: {a}"));
        1
    }

    /// What depends on several options: strip modes and build id, subsystem and versions.
    /// lld-link's reading of the LTO options the MinGW driver passes on (their last occurrence),
    /// with lld-link's words for a bad value, when the command line is read; the link's LTO
    /// options get the good ones. What `CoffLto::set` and `finish` still refuse is an error here
    /// too: lld's are all command-line errors, with bitcode in the link or not.
    fn settle_lto(&mut self) {
        for (kind, value, shown) in std::mem::take(&mut self.lto_last) {
            // `-opt:lldlto=`, `-opt:lldltocgo=`, `-opt:lldltojobs=` to lld-link.
            if matches!(kind, "lldlto" | "lldltocgo" | "lldltojobs") {
                if let Err(e) = crate::driver::common::opt_lto(&mut self.c.lto, kind, &value, &shown) {
                    self.errors.push(e);
                }
                continue;
            }
            match kind {
                "thinlto-cache-policy" => match crate::lto::options::check_cache_policy(&value) {
                    Ok(()) => self.c.lto.set(kind, Some(&value), &shown),
                    Err(e) => self.errors.push(format!("/lldltocachepolicy: invalid cache policy: {value}: {e}")),
                },
                "thinlto-prefix-replace" | "thinlto-object-suffix-replace" if value.split_once(';').is_none_or(|(_, n)| n.is_empty()) => {
                    self.errors.push(format!("-{kind}: expects 'old;new' format, but got {value}"));
                }
                _ => self.c.lto.set(kind, Some(&value), &shown),
            }
        }
        if let Err(e) = self.c.lto.options() {
            self.errors.extend(e.messages);
        }
    }

    fn settle(&mut self) {
        // lld's MinGW driver: `-S` keeps the symbol table, `-s` drops it too; either one drops
        // the build id unless `--build-id` asks for it.
        let c = &mut self.c;
        c.debug = if self.strip_debug {
            DebugMode::Symtab
        } else if self.strip_all {
            DebugMode::None
        } else {
            DebugMode::Dwarf
        };
        // `--pdb` alone: lld's driver passes `-debug`, which keeps DWARF but writes no symbols.
        c.pdb_no_symbols = c.debug_pdb && c.debug == DebugMode::Dwarf;
        c.build_id = self.build_id.unwrap_or(!self.strip_all && !self.strip_debug);
        if let Some(s) = &self.subsystem {
            let (name, ver) = match s.split_once(':') {
                Some((n, v)) => (n, Some(v)),
                None => (s.as_str(), None),
            };
            c.subsystem = Some(match subsystem_id(name) {
                Some(id) => id,
                None => {
                    self.errors.push(format!("unknown subsystem: {name}"));
                    0
                }
            });
            if let Some(v) = ver {
                let (ma, mi) = v.split_once('.').unwrap_or((v, "0"));
                self.ss.0.get_or_insert(ma.to_string());
                self.ss.1.get_or_insert(mi.to_string());
            }
        }
        let errors = &mut self.errors;
        if self.os.0.is_some() || self.os.1.is_some() {
            c.os_version = Some((num(self.os.0.as_deref().unwrap_or("6"), errors), num(self.os.1.as_deref().unwrap_or("0"), errors)));
        }
        if self.ss.0.is_some() || self.ss.1.is_some() {
            c.subsystem_version = Some((num(self.ss.0.as_deref().unwrap_or("6"), errors), num(self.ss.1.as_deref().unwrap_or("0"), errors)));
        }
        if self.version || self.verbose_v {
            c.print_version = true;
        }
        if c.output.as_os_str().is_empty() {
            c.output = PathBuf::from(if c.dll { "a.dll" } else { "a.exe" });
        }
    }

    /// The inputs in order, with `-l` searched in lld's MinGW order at its position's state.
    /// Returns the `.def` input, which lld's MinGW driver passes as `-def:`.
    fn inputs(&mut self) -> Option<String> {
        let (mut whole, mut bstatic) = (false, false);
        let mut states = Vec::new();
        let mut def_file = None;
        for p in std::mem::take(&mut self.pos) {
            match p {
                Pos::Input(f) if f.len() >= 4 && f.as_bytes()[f.len() - 4..].eq_ignore_ascii_case(b".def") => def_file = Some(f),
                Pos::Input(f) => self.c.inputs.push(CoffInput::new(PathBuf::from(f), whole)),
                Pos::Lib(n) => match search_library(&n, &self.search, bstatic, self.dll_prefix.as_deref().unwrap_or("lib")) {
                    Some(path) => self.c.inputs.push(CoffInput::new(path, whole)),
                    None => self.errors.push(format!("unable to find library -l{n}")),
                },
                Pos::Whole(b) => whole = b,
                Pos::Static(b) => bstatic = b,
                Pos::Push => states.push((whole, bstatic)),
                Pos::Pop => match states.pop() {
                    Some((w, b)) => (whole, bstatic) = (w, b),
                    None => self.errors.push("unbalanced --push-state/--pop-state".into()),
                },
            }
        }
        def_file
    }
}

/// The `--help` text of the MinGW flavour, from its table.
pub fn help_text() -> String {
    format!(
        "OVERVIEW: dtld, MinGW flavour (compatible with GNU linkers)\n\nUSAGE: dtld -m i386pep [options] file...\n\nOPTIONS:\n{}",
        options::gnu_help(OPTIONS)
    )
}

/// Parses a MinGW command line (argv without the program name, response files expanded).
pub fn parse(argv: &[String]) -> Result<CoffAction> {
    let args = crate::driver::common::expand_response_files(argv)?;
    let mut c = CoffConfig::new(true);
    // `-m i386pep` becomes `-machine:x64`.
    c.machine_given = true;
    c.debug = DebugMode::Dwarf;
    // lld's MinGW driver always passes `-opt:ref` or `-opt:noref`.
    c.gc = Some(false);
    c.icf = Some(false);
    c.build_id = true;
    c.alternate_names.push(("__image_base__".into(), "__ImageBase".into()));
    let mut p = Mingw::new(c);
    let mut i = 0;
    while i < args.len() {
        i += p.argument(&args, i);
    }
    if p.help {
        return Ok(CoffAction::Help);
    }
    p.settle();
    if let Some(s) = p.longjmp.take().filter(|_| !p.c.guard_cf) {
        p.warnings.push(format!("parameter {s} only takes effect when used with --guard-cf"));
    }
    for w in &p.warnings {
        p.c.diag.warn(w);
    }
    if p.version || (p.verbose_v && !p.have_input) {
        return Ok(CoffAction::Version);
    }
    if !p.errors.is_empty() {
        return Err(Error::many(p.errors));
    }
    // lld's MinGW driver stops at its own errors; lld-link reads what it was passed.
    p.settle_lto();
    if !p.errors.is_empty() {
        return Err(Error::many(p.errors));
    }
    if !p.have_input {
        crate::bail!("no input files");
    }
    let def_file = p.inputs();
    if !p.errors.is_empty() {
        return Err(Error::many(p.errors));
    }
    let mut c = p.c;
    c.lib_paths = p.search;
    if let Some(d) = def_file {
        crate::coff::deffile::apply(&mut c, Path::new(&d)).map_err(Error::new)?;
        if c.inputs.is_empty() {
            // lld-link: a `/def:` without inputs links no entry point.
            c.no_entry = true;
        }
    }
    Ok(CoffAction::Link(c))
}

/// lld MinGW's `searchLibrary`.
pub fn search_library(name: &str, dirs: &[PathBuf], bstatic: bool, dll_prefix: &str) -> Option<PathBuf> {
    let exists = |d: &Path, f: &str| -> Option<PathBuf> {
        let p = d.join(f);
        p.exists().then_some(p)
    };
    if let Some(exact) = name.strip_prefix(':') {
        return dirs.iter().find_map(|d| exists(d, exact));
    }
    for d in dirs {
        let mut names = Vec::new();
        if !bstatic {
            names.push(format!("lib{name}.dll.a"));
            names.push(format!("{name}.dll.a"));
        }
        names.push(format!("lib{name}.a"));
        names.push(format!("{name}.lib"));
        if !bstatic {
            names.push(format!("{dll_prefix}{name}.dll"));
            names.push(format!("{name}.dll"));
        }
        if let Some(p) = names.iter().find_map(|n| exists(d, n)) {
            return Some(p);
        }
    }
    None
}

/// `IMAGE_SUBSYSTEM_*` for a subsystem name (lld-link's names).
pub fn subsystem_id(name: &str) -> Option<u16> {
    Some(match name.to_ascii_lowercase().as_str() {
        "boot_application" => 16,
        "console" => 3,
        "efi_application" => 10,
        "efi_boot_service_driver" => 11,
        "efi_rom" => 13,
        "efi_runtime_driver" => 12,
        "native" => 1,
        "posix" => 7,
        "windows" => 2,
        "windowsce" => 9,
        "xbox" => 14,
        "default" => 0,
        _ => return None,
    })
}

fn num(s: &str, errors: &mut Vec<String>) -> u16 {
    match s.parse::<u16>() {
        Ok(n) => n,
        Err(_) => {
            errors.push(format!("invalid number: {s}"));
            0
        }
    }
}

fn bad<T>(errors: &mut Vec<String>, opt: &str, v: &str) -> Option<T> {
    errors.push(format!("{opt}: invalid number: {v}"));
    None
}

/// `reserve[,commit]`.
fn pair(v: &str, old: (u64, u64), errors: &mut Vec<String>) -> (u64, u64) {
    let (a, b) = match v.split_once(',') {
        Some((a, b)) => (a, Some(b)),
        None => (v, None),
    };
    let r = parse_num(a).unwrap_or_else(|| {
        errors.push(format!("invalid number: {a}"));
        old.0
    });
    let c = b.and_then(parse_num).unwrap_or(old.1);
    (r, c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn detects_pe() {
        assert!(is_pe_target(&s(&["-m", "i386pep", "x.o"])));
        assert!(is_pe_target(&s(&["-mi386pep", "x.o"])));
        assert!(!is_pe_target(&s(&["-m", "elf_x86_64", "x.o"])));
        assert!(!is_pe_target(&s(&["-o", "x", "x.o"])));
    }

    #[test]
    fn parses_clang_line() {
        let a = s(&["-m", "i386pep", "-Bdynamic", "-o", "x.exe", "x.o", "--subsystem", "windows:6.2", "--no-insert-timestamp"]);
        let CoffAction::Link(c) = parse(&a).ok().unwrap() else { panic!() };
        assert_eq!(c.output, PathBuf::from("x.exe"));
        assert_eq!(c.subsystem, Some(2));
        assert_eq!(c.subsystem_version, Some((6, 2)));
        assert_eq!(c.timestamp, Some(0));
        assert_eq!(c.inputs.len(), 1);
    }

    /// lld's MinGW driver passes `--lto-O<n>` and `--lto-CGO<n>` on as `/opt:lldlto=<n>` and
    /// `/opt:lldltocgo=<n>`, joined or separate.
    #[test]
    fn lto_levels_are_read() {
        for spelled in [&["--lto-CGO3", "--lto-O1"][..], &["--lto-CGO", "3", "--lto-O", "1"]] {
            let a: Vec<String> = ["-m", "i386pep", "x.o"].iter().chain(spelled).map(|x| x.to_string()).collect();
            let CoffAction::Link(c) = parse(&a).ok().unwrap() else { panic!() };
            let o = c.lto.options().unwrap();
            assert_eq!((o.cg_opt_level, o.opt_level), (Some(3), 1), "{spelled:?}");
        }
    }

    /// Found by the link_coff fuzzer: an input whose last four bytes cut a multi-byte
    /// character (`€.o`) panicked in the `.def` suffix test.
    #[test]
    fn non_ascii_input_names() {
        for name in ["€.o", "x€.o", "€€", "ab€"] {
            let CoffAction::Link(c) = parse(&s(&["-m", "i386pep", name])).ok().unwrap() else { panic!() };
            assert_eq!(c.inputs.len(), 1, "{name}");
        }
        // Found by the response_file fuzzer: a one-letter option test sliced the first byte
        // of `-€`.
        for opt in ["-€", "-é", "-€x"] {
            assert!(parse(&s(&["-m", "i386pep", opt, "x.o"])).is_err(), "{opt}");
        }
        // A .def file that does not exist is an error, not a panic, whatever its name.
        assert!(parse(&s(&["-m", "i386pep", "x.o", "€é.def"])).is_err());
    }

    #[test]
    fn table_forms() {
        // Joined one-letter values, `=` values, separate values and aliases reach one row.
        let a = s(&["-m", "i386pep", "-lfoo", "--entry=start", "-e", "main2", "--no-dynamicbase", "--stack", "0x2000,0x1000", "x.o"]);
        let p = {
            let mut p = Mingw::new(CoffConfig::new(true));
            let mut i = 0;
            while i < a.len() {
                i += p.argument(&a, i);
            }
            p
        };
        assert!(p.errors.is_empty(), "{:?}", p.errors);
        assert_eq!(p.c.entry.as_deref(), Some("main2"));
        assert!(!p.c.dynamic_base);
        assert_eq!(p.c.stack, (0x2000, 0x1000));
        assert!(matches!(&p.pos[0], Pos::Lib(n) if n == "foo"));
        // Options dtld does not implement are refused by name; lld's no-ops are quiet.
        let e = parse(&s(&["-m", "i386pep", "--delayload", "x.dll", "x.o"])).err().unwrap();
        assert_eq!(e.messages, vec!["--delayload=x.dll is not supported".to_string()]);
        assert!(parse(&s(&["-m", "i386pep", "--kill-at", "--enable-auto-image-base", "x.o"])).is_ok());
        assert!(help_text().contains("--subsystem=<subsystem[:major[.minor]]>"));
    }

    #[test]
    fn unknown_option() {
        let e = parse(&s(&["-m", "i386pep", "--bogus", "x.o"])).err().unwrap();
        assert_eq!(e.messages, vec!["unknown argument: --bogus".to_string()]);
    }
}
