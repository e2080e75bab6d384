//! The GNU ld / ld.lld command line: its option table and how arguments are matched to it.
//!
//! GNU ld's grammar does not fit an argument-parsing crate: options are positional
//! (`--as-needed`, `-Bstatic`, `--start-group` change how the inputs after them are read), long
//! options may be spelled with one dash or two (`-pie`, `--pie`), values may be joined or separate
//! (`-soname=x`, `-soname x`, `-hx`), and `-z` takes keywords. `parse` turns argv into an
//! `elf::config::Config` plus an ordered list of `InputArg`s that keeps the positional state
//! changes in order.
//!
//! Matching follows lld's option table: the whole option name (after one or two dashes) is looked
//! up first, so `-pie` is `--pie` and `-static` is `--static`; only when no long option matches
//! does a single-dash argument fall back to a one-letter option with a joined value (`-omain` is
//! `-o main`, `-lfoo`, `-L/dir`, `-znow`, `-O2`). One-letter options never take two dashes
//! (`--omain` is an unknown argument, as in lld). Each option is one row of `OPTIONS` (see
//! `options.rs` for the statuses); `-z` keywords are rows of `Z`. Diagnostics use lld's wording.

use std::path::PathBuf;

use super::options::{self, lookup, nothing, opt, Arity::*, Opt, Report, Status::*, Val};
use super::{parse_num, Action, CmdArg};
use crate::elf::config::{apply_sysroot, Bsymbolic, BuildId, CgProfileSort, Config, InputArg, Separate};
use crate::error::{Error, Result};

/// The parse state the table's handlers update.
pub struct Gnu {
    pub cfg: Config,
    /// What `LtoOptions::set` refused, reported where lld reports its LTO options' errors
    /// (`check_lto_options`, after the command line).
    lto_errors: Vec<String>,
    /// The options for LLVM's option parser (`-mllvm`, `-plugin-opt=-...`), each with how lld
    /// names the option that carried it and whether it came through `-plugin-opt`
    /// (`check_lto_options`).
    llvm_cl: Vec<(String, String, bool)>,
    /// The option being applied had its value joined with `=` (`-mllvm=-x`).
    joined: bool,
    errors: Vec<String>,
    warnings: Vec<String>,
    in_group: bool,
    in_lib: bool,
    raw_lib_paths: Vec<String>,
    has_input: bool,
    version: bool,
    help: bool,
    color: Option<bool>,
    error_limit: usize,
    no_warnings: bool,
    vs_diagnostics: bool,
    /// `--[no-]demangle`: names in diagnostics and the map file.
    demangle: bool,
    /// `-Ttext=`/`-Tdata=`/`-Tbss=` (the last of each), merged into `section_start` at the end.
    t_sections: Vec<(&'static str, u64)>,
    /// `--image-base`'s value as written (for lld's warning).
    image_base_text: Option<String>,
    /// What lld's `checkOptions` looks at once every option is read.
    checks: Checks,
    /// Indexes in `cfg.inputs` of the `-T` scripts (searched in the -L paths, as lld's
    /// `searchScript`).
    scripts: Vec<usize>,
    /// The last `--pack-dyn-relocs=` value.
    pack_dyn_relocs: Option<String>,
}

/// Options lld refuses for x86-64 or in some combinations (its `checkOptions`), and the
/// `-z` report policies (`-z bti-report=warning`): recorded while parsing, checked in lld's
/// order by `check_options` once the whole command line is read.
#[derive(Default)]
struct Checks {
    cmse_implib: bool,
    in_implib: bool,
    out_implib: bool,
    fix_cortex_a8: bool,
    be8: bool,
    execute_only: bool,
    fix_cortex_a53: bool,
    z_pac_plt: bool,
    z_force_bti: bool,
    z_force_ibt: bool,
    z_retpolineplt: bool,
    z_ifunc_noplt: bool,
    z_nosectionheader: bool,
    toc_optimize: bool,
    pcrel_optimize: bool,
    relax_gp: bool,
    debug_names: bool,
    /// `-z <name>-report=<policy>`, the last of each (none, warning or error).
    reports: Vec<(&'static str, &'static str)>,
    z_gcs: bool,
    z_zicfilp: bool,
    z_zicfiss: bool,
}

impl Checks {
    fn report(&self, name: &str) -> &'static str {
        self.reports.iter().rev().find(|(n, _)| *n == name).map_or("none", |(_, v)| v)
    }
}

impl Report for Gnu {
    fn warning(&mut self, msg: String) {
        self.warnings.push(msg);
    }
    fn error(&mut self, msg: String) {
        self.errors.push(msg);
    }
}

impl Gnu {
    fn input(&mut self, a: InputArg) {
        self.cfg.inputs.push(a);
    }
    fn file_input(&mut self, path: String) {
        self.cfg.inputs.push(InputArg::File(PathBuf::from(path)));
        self.has_input = true;
    }
}

fn emulation(p: &mut Gnu, v: &Val) {
    let e = v.str();
    match e.as_str() {
        "elf_x86_64" | "elf64_x86_64" => p.cfg.emulation = Some(e),
        "elf_i386" | "elf32_x86_64" | "elf_amd64" | "elf_iamcu" | "aarch64linux" | "aarch64elf" | "armelf" | "armelf_linux_eabi" | "elf64lriscv"
        | "elf32lriscv" | "elf64ppc" | "elf64lppc" | "elf32ppc" | "elf_x86_64_fbsd" | "elf_i386_fbsd" => {
            p.errors.push(format!("unsupported emulation: {e} (dtld links only elf_x86_64)"))
        }
        _ => p.errors.push(format!("unknown emulation: {e}")),
    }
}

/// `--format`/`-b` (lld's isFormatBinary): positional, for the files that follow.
fn format(p: &mut Gnu, v: &Val) {
    match v.value.unwrap_or("") {
        "binary" => p.input(InputArg::Binary(true)),
        "elf" | "default" => p.input(InputArg::Binary(false)),
        other => p.errors.push(format!("unknown --format value: {other} (supported formats: elf, default, binary)")),
    }
}

fn hash_style(p: &mut Gnu, v: &Val) {
    // The last --hash-style wins (ld.lld 22: `--hash-style=gnu --hash-style=sysv` writes only
    // .hash); clang passes its own first.
    let c = &mut p.cfg;
    c.hash_sysv = false;
    c.hash_gnu = false;
    match v.value.unwrap_or("") {
        "sysv" => c.hash_sysv = true,
        "gnu" => c.hash_gnu = true,
        "both" => {
            c.hash_sysv = true;
            c.hash_gnu = true;
        }
        other => p.errors.push(format!("unknown --hash-style: {other}")),
    }
}

fn build_id(p: &mut Gnu, v: &Val) {
    let c = &mut p.cfg;
    let kind = match v.value {
        // A bare --build-id is SHA-1 (20 bytes) in ld.lld 22, as in GNU ld.
        None | Some("sha1") | Some("tree") => BuildId::Sha1,
        Some("fast") => BuildId::Fast,
        Some("md5") => BuildId::Md5,
        Some("uuid") => BuildId::Uuid,
        Some("none") => BuildId::None,
        Some(s) if s.starts_with("0x") || s.starts_with("0X") => {
            match parse_hex(&s[2..]) {
                Some(bytes) => {
                    c.build_id = BuildId::None;
                    c.build_id_hex = bytes;
                }
                None => p.errors.push(format!("--build-id=0x: invalid hex string: {}", &s[2..])),
            }
            return;
        }
        Some(s) => {
            p.errors.push(format!("unknown --build-id style: {s}"));
            return;
        }
    };
    c.build_id = kind;
    c.build_id_hex.clear();
}

/// lld's `setUnresolvedSymbolPolicy`: each value sets both policies (objects, shared libraries),
/// and later options override earlier ones.
fn unresolved_symbols(p: &mut Gnu, v: &Val) {
    let (objects, shlibs) = match v.value.unwrap_or("") {
        "ignore-all" => (false, false),
        "ignore-in-object-files" => (false, true),
        "ignore-in-shared-libs" => (true, false),
        "report-all" => (true, true),
        other => {
            p.errors.push(format!("unknown --unresolved-symbols value: {other}"));
            return;
        }
    };
    p.cfg.report_unresolved = Some(objects);
    p.cfg.allow_shlib_undefined = Some(!shlibs);
}

fn threads(p: &mut Gnu, v: &Val) {
    match v.value.unwrap_or("").parse::<usize>() {
        Ok(n) if n > 0 => p.cfg.threads = Some(n),
        _ => p.errors.push(format!("--threads: expected a positive integer, but got '{}'", v.str())),
    }
}

fn defsym(p: &mut Gnu, v: &Val) {
    match v.value.unwrap_or("").split_once('=') {
        Some((name, value)) if !name.trim().is_empty() && !value.trim().is_empty() => {
            p.cfg.defsym.push((name.trim().to_string(), value.trim().to_string()));
            p.cfg.defsym_at.push(p.cfg.inputs.len());
        }
        _ => p.errors.push("--defsym:1: unexpected EOF".into()),
    }
}

/// lld's section addresses: hexadecimal, with or without `0x`.
fn section_address(p: &mut Gnu, v: &Val, addr: &str) -> Option<u64> {
    let digits = addr.strip_prefix("0x").unwrap_or(addr);
    match u64::from_str_radix(digits, 16) {
        Ok(n) if !digits.starts_with('+') => Some(n),
        _ => {
            p.errors.push(format!("invalid argument: {}", v.shown()));
            None
        }
    }
}

/// `-Ttext=`, `-Tdata=`, `-Tbss=`: applied after every `--section-start` (lld's order).
fn t_section(p: &mut Gnu, v: &Val, name: &'static str) {
    if let Some(a) = section_address(p, v, &v.str()) {
        p.t_sections.retain(|(n, _)| *n != name);
        p.t_sections.push((name, a));
    }
}

fn section_start(p: &mut Gnu, v: &Val) {
    let s = v.str();
    let (name, addr) = s.split_once('=').unwrap_or((s.as_str(), ""));
    if let Some(a) = section_address(p, v, addr) {
        p.cfg.section_start.insert(name.to_string(), a);
    }
}

/// `--image-base=`: a number in C syntax (lld's `to_integer`).
fn image_base(p: &mut Gnu, v: &Val) {
    let s = v.str();
    p.image_base_text = Some(s.clone());
    match parse_num(&s) {
        Some(n) => p.cfg.image_base = Some(n),
        None => {
            p.errors.push(format!("--image-base: number expected, but got {s}"));
            p.cfg.image_base = Some(0);
        }
    }
}

fn opt_level(p: &mut Gnu, v: &Val) {
    match v.value.unwrap_or("").parse::<u32>() {
        Ok(n) => p.cfg.opt_level = n,
        Err(_) => p.errors.push(format!("{}{}: number expected, but got '{}'", v.spelling, v.str(), v.str())),
    }
}

fn cg_profile_sort(p: &mut Gnu, v: &Val) {
    p.cfg.cg_profile_sort = match v.str().as_str() {
        "none" => CgProfileSort::None,
        "hfsort" => CgProfileSort::Hfsort,
        "cdsort" => CgProfileSort::Cdsort,
        other => {
            p.errors.push(format!("unknown --call-graph-profile-sort= value: {other}"));
            return;
        }
    }
}

fn color(p: &mut Gnu, v: &Val) {
    match v.value {
        // A bare --color-diagnostics is lld's alias for =always.
        None => p.color = Some(true),
        Some("auto") | Some("always") | Some("never") => p.color = crate::diag::color_choice(v.value),
        Some(other) => p.errors.push(format!("unknown option: --color-diagnostics={other}")),
    }
}

fn error_limit(p: &mut Gnu, v: &Val) {
    match v.value.unwrap_or("").parse::<usize>() {
        Ok(n) => p.error_limit = n,
        Err(_) => p.errors.push(format!("--error-limit={}: number expected, but got '{}'", v.str(), v.str())),
    }
}

/// `--icf=`: `none` (the default), `all` or `safe` (`elf::icf`); `safe_thunks` is AArch64's
/// (a warning: the program is the same without folding).
fn icf(p: &mut Gnu, v: &Val) {
    match v.value.unwrap_or("") {
        "none" => p.cfg.icf = crate::elf::config::Icf::None,
        "all" => p.cfg.icf = crate::elf::config::Icf::All,
        "safe" => p.cfg.icf = crate::elf::config::Icf::Safe,
        "safe_thunks" => p.warnings.push(format!("{} is not supported; ignored", v.shown())),
        other => p.errors.push(format!("unknown argument '{}={other}'", v.spelling)),
    }
}

/// `--pack-dyn-relocs=`: the last value counts; it is read once every option is (`finish_packing`),
/// since `-z pack-relative-relocs` overrides it.
fn pack_dyn_relocs(p: &mut Gnu, v: &Val) {
    p.pack_dyn_relocs = Some(v.str());
}

/// lld's getPackDynRelocs, which it consults only without `-z pack-relative-relocs` (that one
/// turns RELR on by itself, and an unknown `--pack-dyn-relocs` format then goes unreported).
fn finish_packing(p: &mut Gnu) {
    if p.cfg.z_pack_relative_relocs {
        return;
    }
    let (android, relr) = match p.pack_dyn_relocs.as_deref().unwrap_or("none") {
        "none" => (false, false),
        "relr" => (false, true),
        "android" => (true, false),
        "android+relr" => (true, true),
        other => {
            p.errors.push(format!("unknown --pack-dyn-relocs format: {other}"));
            (false, false)
        }
    };
    p.cfg.pack_android = android;
    p.cfg.pack_relr = relr;
}

fn compress_debug_sections(p: &mut Gnu, v: &Val) {
    match v.value.unwrap_or("") {
        "none" => p.cfg.compress_debug = None,
        "zlib" => p.cfg.compress_debug = Some(crate::elf::config::DebugCompression::Zlib),
        "zstd" => p.cfg.compress_debug = Some(crate::elf::config::DebugCompression::Zstd),
        other => p.errors.push(format!("unknown --compress-debug-sections value: {other}")),
    }
}

fn sort_section(p: &mut Gnu, v: &Val) {
    use crate::elf::script::ast::SortKind;
    match v.value.unwrap_or("") {
        "name" => p.cfg.sort_section = SortKind::Name,
        "alignment" => p.cfg.sort_section = SortKind::Alignment,
        other => p.errors.push(format!("unknown --sort-section rule: {other}")),
    }
}

fn orphan_handling(p: &mut Gnu, v: &Val) {
    match v.value.unwrap_or("") {
        "place" => p.cfg.orphan_handling = crate::elf::config::OrphanHandling::Place,
        "warn" => p.cfg.orphan_handling = crate::elf::config::OrphanHandling::Warn,
        "error" => p.cfg.orphan_handling = crate::elf::config::OrphanHandling::Error,
        other => p.errors.push(format!("unknown --orphan-handling mode: {other}")),
    }
}

fn hash_size(p: &mut Gnu, v: &Val) {
    if v.value.unwrap_or("").parse::<u64>().is_err() {
        p.errors.push(format!("{}: invalid value: {}", v.spelling, v.str()));
    }
}

fn start_group(p: &mut Gnu, _: &Val) {
    if p.in_group {
        p.errors.push("nested --start-group".into());
    }
    p.in_group = true;
    p.input(InputArg::StartGroup);
}

fn start_lib(p: &mut Gnu, _: &Val) {
    if p.in_lib {
        p.errors.push("nested --start-lib".into());
    }
    if p.in_group {
        p.errors.push("may not nest --start-lib in --start-group".into());
    }
    p.in_lib = true;
    // lld's isInGroup: --start-lib opens a group too (a --start-group inside is "nested").
    p.in_group = true;
    p.input(InputArg::StartLib);
}

fn end_lib(p: &mut Gnu, _: &Val) {
    if !p.in_lib {
        p.errors.push("stray --end-lib".into());
    }
    p.in_lib = false;
    p.in_group = false;
    p.input(InputArg::EndLib);
}

fn end_group(p: &mut Gnu, _: &Val) {
    if !p.in_group {
        p.errors.push("stray --end-group".into());
    }
    p.in_group = false;
    p.input(InputArg::EndGroup);
}

/// Every option dtld knows. Order matters only for `--help`.
static OPTIONS: &[Opt<Gnu>] = &[
    opt(&["o", "output"], Value, "<path>", "Path to the output file", Implemented, |p, v| p.cfg.output = v.path()),
    opt(&["l", "library"], Value, "<lib>", "Search for library <lib> (-lfoo, -l:file.a)", Implemented, |p, v| {
        p.input(InputArg::Library(v.str()));
        p.has_input = true;
    }),
    opt(&["L", "library-path"], Value, "<dir>", "Add <dir> to the library search path", Implemented, |p, v| p.raw_lib_paths.push(v.str())),
    opt(&["shared", "Bshareable"], Flag, "", "Build a shared object", Implemented, |p, _| p.cfg.shared = true),
    opt(&["pie", "pic-executable"], Flag, "", "Build a position-independent executable", Implemented, |p, _| p.cfg.pie = true),
    opt(&["no-pie", "no-pic-executable"], Flag, "", "Do not build a position-independent executable (default)", Implemented, |p, _| p.cfg.pie = false),
    opt(&["static"], Flag, "", "Do not link against shared libraries; no dynamic linking", Implemented, |p, _| {
        p.cfg.is_static = true;
        p.input(InputArg::Static(true));
    }),
    opt(&["relocatable", "r"], Flag, "", "Create a relocatable object file", Implemented, |p, _| p.cfg.relocatable = true),
    opt(&["emit-relocs", "q"], Flag, "", "Keep relocations in the output", Implemented, |p, _| p.cfg.emit_relocs = true),
    opt(&["Bstatic", "dn", "non_shared"], Flag, "", "Do not link against shared libraries (positional)", Implemented, |p, _| p.input(InputArg::Static(true))),
    opt(&["Bdynamic", "dy", "call_shared"], Flag, "", "Link against shared libraries (positional, default)", Implemented, |p, _| {
        p.input(InputArg::Static(false))
    }),
    opt(&["as-needed"], Flag, "", "Only set DT_NEEDED for shared libraries if used (positional)", Implemented, |p, _| p.input(InputArg::AsNeeded(true))),
    opt(&["no-as-needed"], Flag, "", "Always set DT_NEEDED for shared libraries (positional, default)", Implemented, |p, _| p.input(InputArg::AsNeeded(false))),
    opt(&["whole-archive"], Flag, "", "Include all members of following archives (positional)", Implemented, |p, _| p.input(InputArg::WholeArchive(true))),
    opt(&["no-whole-archive"], Flag, "", "Stop --whole-archive (positional)", Implemented, |p, _| p.input(InputArg::WholeArchive(false))),
    opt(&["start-group", "("], Flag, "", "Start a group of archives (positional)", Implemented, start_group),
    opt(&["end-group", ")"], Flag, "", "End a group of archives (positional)", Implemented, end_group),
    opt(&["start-lib"], Flag, "", "Start a grouping of objects that should be treated as if they were members of an archive", Implemented, start_lib),
    opt(&["end-lib"], Flag, "", "End a grouping of objects that should be treated as if they were members of an archive", Implemented, end_lib),
    opt(&["push-state"], Flag, "", "Save --as-needed, -Bstatic and --whole-archive state", Implemented, |p, _| p.input(InputArg::PushState)),
    opt(&["pop-state"], Flag, "", "Restore the state saved by --push-state", Implemented, |p, _| p.input(InputArg::PopState)),
    opt(&["entry", "e"], Value, "<sym>", "Name of the entry point symbol", Implemented, |p, v| p.cfg.entry = Some(v.str())),
    opt(&["undefined", "u"], Value, "<sym>", "Force <sym> to be an undefined symbol", Implemented, |p, v| p.cfg.undefined.push(v.str())),
    opt(&["undefined-glob"], Value, "<pattern>", "Extract the archive members that define the symbols matching <pattern>", Implemented, |p, v| {
        p.cfg.undefined_glob.push(v.str())
    }),
    opt(&["soname", "h"], Value, "<name>", "Set DT_SONAME", Implemented, |p, v| p.cfg.soname = Some(v.str())),
    opt(&["rpath", "R"], Value, "<dir>", "Add a DT_RUNPATH (or DT_RPATH) entry", Implemented, |p, v| p.cfg.rpath.push(v.str())),
    opt(&["rpath-link"], Value, "<dir>", "Ignored (as in lld)", Noop, nothing),
    opt(&["dynamic-linker", "I"], Value, "<path>", "Which dynamic linker to use (PT_INTERP)", Implemented, |p, v| {
        p.cfg.dynamic_linker = Some(v.str());
        p.cfg.no_dynamic_linker = false;
    }),
    opt(&["no-dynamic-linker"], Flag, "", "Do not emit PT_INTERP", Implemented, |p, _| {
        p.cfg.no_dynamic_linker = true;
        p.cfg.dynamic_linker = None;
    }),
    opt(&["m"], Value, "<emulation>", "Set target emulation (only elf_x86_64)", Implemented, emulation),
    opt(&["z"], Value, "<keyword>", "Linker option extensions (see docs/options.md)", Implemented, |p, v| z_keyword(p, &v.str())),
    opt(&["export-dynamic", "E"], Flag, "", "Put all global symbols in the dynamic symbol table", Implemented, |p, _| p.cfg.export_dynamic = true),
    opt(&["no-export-dynamic"], Flag, "", "Do not put all global symbols in the dynamic symbol table (default)", Implemented, |p, _| {
        p.cfg.export_dynamic = false
    }),
    opt(&["export-dynamic-symbol"], Value, "<glob>", "Put symbols matching <glob> in the dynamic symbol table", Implemented, |p, v| {
        p.cfg.export_dynamic_symbols.push(v.str())
    }),
    opt(&["export-dynamic-symbol-list"], Value, "<file>", "Export the symbols listed in <file> (dynamic-list syntax)", Implemented, |p, v| {
        p.cfg.export_dynamic_symbol_lists.push(v.path())
    }),
    opt(&["dynamic-list"], Value, "<file>", "Read a list of dynamic symbols", Implemented, |p, v| p.cfg.dynamic_lists.push(v.path())),
    opt(&["version-script"], Value, "<file>", "Read a version script", Implemented, |p, v| p.cfg.version_scripts.push(v.path())),
    opt(&["undefined-version"], Flag, "", "Allow version scripts to name undefined symbols", Implemented, |p, _| p.cfg.undefined_version = true),
    opt(&["no-undefined-version"], Flag, "", "Version scripts naming undefined symbols are an error (default)", Implemented, |p, _| {
        p.cfg.undefined_version = false
    }),
    opt(&["format", "b"], Value, "[default,elf,binary]", "Change the input format of the inputs following this option", Implemented, format),
    opt(&["hash-style"], Value, "<style>", "Hash table style: sysv, gnu or both", Implemented, hash_style),
    opt(&["build-id"], OptValue, "[=fast|md5|sha1|uuid|none|0x<hex>]", "Generate a .note.gnu.build-id section", Implemented, build_id),
    opt(&["eh-frame-hdr"], Flag, "", "Create .eh_frame_hdr and PT_GNU_EH_FRAME", Implemented, |p, _| p.cfg.eh_frame_hdr = true),
    opt(&["no-eh-frame-hdr"], Flag, "", "Do not create .eh_frame_hdr", Implemented, |p, _| p.cfg.eh_frame_hdr = false),
    opt(&["gc-sections"], Flag, "", "Garbage-collect unused sections", Implemented, |p, _| p.cfg.gc_sections = true),
    opt(&["fat-lto-objects"], Flag, "", "Use the .llvm.lto section of FatLTO objects (their bitcode) instead of their code", Implemented, |p, _| {
        p.cfg.fat_lto_objects = true
    }),
    opt(&["no-fat-lto-objects"], Flag, "", "Use the code of FatLTO objects, not their bitcode (default)", Implemented, |p, _| p.cfg.fat_lto_objects = false),
    opt(&["no-gc-sections"], Flag, "", "Do not garbage-collect unused sections (default)", Implemented, |p, _| p.cfg.gc_sections = false),
    opt(&["print-gc-sections"], Flag, "", "List removed unused sections", Implemented, |p, _| p.cfg.print_gc_sections = true),
    opt(&["print-archive-stats"], Value, "<file>", "Write how many members of each archive the link used to <file>", Implemented, |p, v| {
        p.cfg.print_archive_stats = Some(v.path())
    }),
    // lld's hidden `--stats` prints statistics only in builds with LLVM's statistics enabled
    // (Debian's prints nothing) and changes no output.
    opt(&["stats"], Flag, "", "", Noop, nothing),
    opt(&["no-print-gc-sections"], Flag, "", "Do not list removed unused sections (default)", Implemented, |p, _| p.cfg.print_gc_sections = false),
    opt(&["enable-new-dtags"], Flag, "", "Use DT_RUNPATH (default)", Implemented, |p, _| p.cfg.enable_new_dtags = true),
    opt(&["disable-new-dtags"], Flag, "", "Use DT_RPATH", Implemented, |p, _| p.cfg.enable_new_dtags = false),
    opt(&["allow-shlib-undefined"], Flag, "", "Allow unresolved references in shared libraries", Implemented, |p, _| p.cfg.allow_shlib_undefined = Some(true)),
    opt(&["no-allow-shlib-undefined"], Flag, "", "Report unresolved references in shared libraries", Implemented, |p, _| {
        p.cfg.allow_shlib_undefined = Some(false)
    }),
    opt(&["no-undefined"], Flag, "", "Report unresolved symbols even if linking a shared object (-z defs)", Implemented, |p, _| {
        p.cfg.report_unresolved = Some(true)
    }),
    opt(&["unresolved-symbols"], Value, "<policy>", "ignore-all, ignore-in-object-files, ignore-in-shared-libs or report-all", Implemented, unresolved_symbols),
    opt(&["warn-unresolved-symbols"], Flag, "", "Report unresolved symbols as warnings", Implemented, |p, _| p.cfg.warn_unresolved_symbols = true),
    opt(&["error-unresolved-symbols"], Flag, "", "Report unresolved symbols as errors (default)", Implemented, |p, _| p.cfg.warn_unresolved_symbols = false),
    opt(&["gnu-unique"], Flag, "", "Keep STB_GNU_UNIQUE bindings (default)", Implemented, |p, _| p.cfg.no_gnu_unique = false),
    opt(&["no-gnu-unique"], Flag, "", "Write STB_GNU_UNIQUE symbols as STB_GLOBAL", Implemented, |p, _| p.cfg.no_gnu_unique = true),
    opt(&["allow-multiple-definition"], Flag, "", "Allow multiple definitions", Implemented, |p, _| p.cfg.allow_multiple_definition = true),
    opt(&["no-allow-multiple-definition"], Flag, "", "Do not allow multiple definitions (default)", Implemented, |p, _| {
        p.cfg.allow_multiple_definition = false
    }),
    opt(&["Bsymbolic"], Flag, "", "Bind defined symbols locally in a shared object", Implemented, |p, _| p.cfg.bsymbolic = Bsymbolic::All),
    opt(&["Bsymbolic-functions"], Flag, "", "Bind defined function symbols locally in a shared object", Implemented, |p, _| {
        p.cfg.bsymbolic = Bsymbolic::Functions
    }),
    opt(&["Bsymbolic-non-weak"], Flag, "", "Bind defined non-weak symbols locally in a shared object", Implemented, |p, _| {
        p.cfg.bsymbolic = Bsymbolic::NonWeak
    }),
    opt(&["Bsymbolic-non-weak-functions"], Flag, "", "Bind defined non-weak function symbols locally in a shared object", Implemented, |p, _| {
        p.cfg.bsymbolic = Bsymbolic::NonWeakFunctions
    }),
    opt(&["Bno-symbolic"], Flag, "", "Do not bind symbols locally (default)", Implemented, |p, _| p.cfg.bsymbolic = Bsymbolic::None),
    opt(&["sysroot"], Value, "<dir>", "Set the system root", Implemented, |p, v| p.cfg.sysroot = Some(v.path())),
    opt(&["nostdlib"], Flag, "", "Only search directories given on the command line, not SEARCH_DIR", Implemented, |p, _| p.cfg.nostdlib = true),
    opt(&["threads"], Value, "<n>", "Number of threads to use", Implemented, threads),
    opt(&["strip-all", "s"], Flag, "", "Strip all symbols", Implemented, |p, _| p.cfg.strip_all = true),
    opt(&["strip-debug", "S"], Flag, "", "Strip debugging information", Implemented, |p, _| p.cfg.strip_debug = true),
    opt(&["discard-all", "x"], Flag, "", "Delete all local symbols", Implemented, |p, _| p.cfg.discard_all = true),
    opt(&["discard-locals", "X"], Flag, "", "Delete temporary local symbols", Implemented, |p, _| p.cfg.discard_locals = true),
    opt(&["discard-none"], Flag, "", "Keep all local symbols", Implemented, |p, _| {
        p.cfg.discard_all = false;
        p.cfg.discard_locals = false;
    }),
    opt(&["defsym"], Value, "<sym>=<value>", "Define a symbol", Implemented, defsym),
    opt(&["warn-backrefs-exclude"], Value, "<glob>", "An archive (or --start-lib object) that --warn-backrefs does not warn about", Implemented, |p, v| {
        match crate::util::glob::glob_error(&v.str()) {
            Some(e) => p.errors.push(format!("{}: {e}: {}", v.spelling, v.str())),
            None => p.cfg.warn_backrefs_exclude.push(v.str()),
        }
    }),
    opt(&["wrap"], Value, "<sym>", "Use wrapper functions for <sym>", Implemented, |p, v| p.cfg.wrap.push(v.str())),
    opt(&["init"], Value, "<sym>", "Symbol for DT_INIT", Implemented, |p, v| p.cfg.init = Some(v.str())),
    opt(&["fini"], Value, "<sym>", "Symbol for DT_FINI", Implemented, |p, v| p.cfg.fini = Some(v.str())),
    opt(&["plugin"], Value, "<path>", "Linker plugin: LLVMgold.so (finds the user's LLVM) or GCC's liblto_plugin.so", Implemented, |p, v| {
        p.cfg.plugin = Some(v.str())
    }),
    opt(&["plugin-opt"], Value, "<opt>", "Option for the linker plugin / LTO", Implemented, |p, v| {
        // lld's alias of `--time-trace=<file>` (clang passes it for `-ftime-trace`).
        if let Some(f) = v.str().strip_prefix("time-trace=") {
            p.cfg.time_trace = Some(PathBuf::from(f));
        }
        // lld: `-plugin-opt=-<x>` is an LLVM option, named `-plugin-opt=-` in its errors.
        if v.str().starts_with('-') && !crate::lto::options::is_gcc_collect2_opt(&v.str()) {
            p.llvm_cl.push((format!("{}=-", v.spelling), v.str(), true));
        }
        p.cfg.plugin_opts.push(v.str())
    }),
    opt(&["mllvm"], Value, "<opt>", "Option for LLVM (LTO)", Implemented, |p, v| {
        // lld names the joined form (`-mllvm=-x`) by its alias's first spelling, `--mllvm`.
        p.llvm_cl.push((if p.joined { "--mllvm".to_string() } else { v.spelling.to_string() }, v.str(), false));
        p.cfg.mllvm.push(v.str())
    }),
    opt(&["Map"], Value, "<file>", "Print a link map to <file>", Implemented, |p, v| p.cfg.map_file = Some(v.path())),
    opt(&["print-map", "M"], Flag, "", "Print a link map to stdout", Implemented, |p, _| p.cfg.map_file = Some(PathBuf::from("-"))),
    opt(&["Ttext"], Value, "<addr>", "Same as --section-start with .text as the section name", Implemented, |p, v| t_section(p, v, ".text")),
    opt(&["Tdata"], Value, "<addr>", "Same as --section-start with .data as the section name", Implemented, |p, v| t_section(p, v, ".data")),
    opt(&["Tbss"], Value, "<addr>", "Same as --section-start with .bss as the section name", Implemented, |p, v| t_section(p, v, ".bss")),
    // ld.lld refuses it too, pointing to --image-base.
    opt(&["Ttext-segment"], Value, "<addr>", "Refused as by ld.lld (use --image-base)", Implemented, |p, _| {
        p.errors.push("-Ttext-segment is not supported. Use --image-base if you intend to set the base address".into())
    }),
    opt(&["section-start"], Value, "<section=address>", "Set address of section", Implemented, section_start),
    opt(&["image-base"], Value, "<addr>", "Set the base address", Implemented, image_base),
    opt(
        &["omagic", "N"],
        Flag,
        "",
        "Set the text and data sections to be readable and writable, do not page align sections, link against static libraries",
        Implemented,
        |p, _| {
            p.cfg.omagic = true;
            p.input(InputArg::Static(true));
        },
    ),
    opt(&["no-omagic"], Flag, "", "Do not set the text data sections to be writable, page align sections (default)", Implemented, |p, _| p.cfg.omagic = false),
    opt(&["nmagic", "n"], Flag, "", "Do not page align sections, link against static libraries", Implemented, |p, _| {
        p.cfg.nmagic = true;
        p.input(InputArg::Static(true));
    }),
    opt(&["no-nmagic"], Flag, "", "Page align sections (default)", Implemented, |p, _| p.cfg.nmagic = false),
    opt(&["script", "T"], Value, "<file>", "Read a linker script", Implemented, |p, v| {
        p.scripts.push(p.cfg.inputs.len());
        p.file_input(v.str())
    }),
    opt(&["reproduce"], Value, "<file>", "Write a tar file with the inputs and command line to reproduce the link", Implemented, |p, v| {
        p.cfg.reproduce = Some(v.path())
    }),
    opt(&["chroot"], Value, "<dir>", "Read absolute input paths below <dir> (for --reproduce trees)", Implemented, |p, v| p.cfg.chroot = Some(v.path())),
    opt(&["verbose"], Flag, "", "Verbose mode", Implemented, |p, _| p.cfg.verbose = true),
    opt(&["time-trace"], OptValue, "[=<file>]", "Write a Chrome trace of the link's stages to <file> (default <output>.time-trace)", Implemented, |p, v| {
        p.cfg.time_trace = Some(match v.value {
            Some(f) if !f.is_empty() => PathBuf::from(f),
            _ => PathBuf::new(),
        })
    }),
    opt(&["time-trace-file"], Value, "<file>", "Where --time-trace writes", Implemented, |p, v| p.cfg.time_trace_file = Some(v.path())),
    opt(&["time-trace-granularity"], Value, "<us>", "Shortest stage or part --time-trace writes, in microseconds (default 500)", Implemented, |p, v| {
        match v.str().parse::<u64>() {
            Ok(n) => p.cfg.time_trace_granularity = n,
            Err(_) => p.errors.push(format!("{}: number expected, but got '{}'", v.shown(), v.str())),
        }
    }),
    opt(&["v", "V"], Flag, "", "Print the version and continue", Implemented, |p, _| p.cfg.print_version = true),
    opt(&["version"], Flag, "", "Print the version and exit", Implemented, |p, _| p.version = true),
    opt(&["help"], Flag, "", "Print option help", Implemented, |p, _| p.help = true),
    opt(&["O"], Value, "<n>", "Optimization level (merge sections at 1, tail-merge strings at 2)", Implemented, opt_level),
    opt(
        &["call-graph-profile-sort"],
        Value,
        "[none,hfsort,cdsort]",
        "Reorder input sections with call graph profile using the specified algorithm (default: cdsort)",
        Implemented,
        cg_profile_sort,
    ),
    opt(&["no-call-graph-profile-sort"], Flag, "", "Do not reorder sections with call graph profile", Implemented, |p, _| {
        p.cfg.cg_profile_sort = CgProfileSort::None
    }),
    opt(&["call-graph-ordering-file"], Value, "<file>", "Layout sections to optimize the given callgraph", Implemented, |p, v| {
        p.cfg.call_graph_ordering_file = Some(v.path())
    }),
    opt(&["symbol-ordering-file"], Value, "<file>", "Layout sections in the order specified by symbol file", Implemented, |p, v| {
        p.cfg.symbol_ordering_file = Some(v.path())
    }),
    opt(
        &["print-symbol-order"],
        Value,
        "<file>",
        "Print a symbol order specified by --call-graph-ordering-file into the specified file",
        Implemented,
        |p, v| p.cfg.print_symbol_order = Some(v.path()),
    ),
    opt(&["warn-symbol-ordering"], Flag, "", "Warn about problems with the symbol ordering file (default)", Implemented, |p, _| {
        p.cfg.warn_symbol_ordering = true
    }),
    opt(&["no-warn-symbol-ordering"], Flag, "", "Do not warn about problems with the symbol ordering file", Implemented, |p, _| {
        p.cfg.warn_symbol_ordering = false
    }),
    opt(&["fatal-warnings"], Flag, "", "Treat warnings as errors", Implemented, |p, _| p.cfg.fatal_warnings = true),
    opt(&["no-fatal-warnings"], Flag, "", "Do not treat warnings as errors (default)", Implemented, |p, _| p.cfg.fatal_warnings = false),
    opt(&["no-warnings", "w"], Flag, "", "Suppress warnings", Implemented, |p, _| p.no_warnings = true),
    opt(&["color-diagnostics"], OptValue, "[=auto|always|never]", "Use colors in diagnostics", Implemented, color),
    opt(&["no-color-diagnostics"], Flag, "", "Do not use colors in diagnostics", Implemented, |p, _| p.color = Some(false)),
    opt(&["vs-diagnostics"], Flag, "", "Print diagnostics in the Visual Studio format (file(line): error: ...)", Implemented, |p, _| p.vs_diagnostics = true),
    opt(&["error-limit"], Value, "<n>", "Maximum number of errors to print before stopping (0: no limit; default 20)", Implemented, error_limit),
    opt(&["relax"], Flag, "", "Enable target-specific relaxations (default)", Implemented, |p, _| p.cfg.relax = true),
    opt(&["no-relax"], Flag, "", "Disable target-specific relaxations", Implemented, |p, _| p.cfg.relax = false),
    opt(&["icf"], Value, "<none|all|safe>", "Identical code folding", Implemented, icf),
    opt(&["print-icf-sections"], Flag, "", "List identical folded sections", Implemented, |p, _| p.cfg.print_icf_sections = true),
    opt(&["no-print-icf-sections"], Flag, "", "Do not list identical folded sections (default)", Implemented, |p, _| p.cfg.print_icf_sections = false),
    opt(&["keep-unique"], Value, "<symbol>", "Do not fold the section defining <symbol> with --icf", Implemented, |p, v| p.cfg.keep_unique.push(v.str())),
    opt(&["ignore-data-address-equality"], Flag, "", "With --icf=all, fold read-only data whose address is significant", Implemented, |p, _| {
        p.cfg.ignore_data_address_equality = true
    }),
    opt(
        &["ignore-function-address-equality"],
        Flag,
        "",
        "lld can break the address equality of functions (a protected function of a library may get a canonical PLT entry)",
        Implemented,
        |p, _| p.cfg.ignore_function_address_equality = true,
    ),
    opt(
        &["pack-dyn-relocs"],
        Value,
        "<none|android|relr|android+relr>",
        "Pack dynamic relocations: Android's packed format (APS2) and/or RELR",
        Implemented,
        pack_dyn_relocs,
    ),
    opt(&["use-android-relr-tags"], Flag, "", "Use SHT_ANDROID_RELR / DT_ANDROID_RELR* tags instead of SHT_RELR / DT_RELR*", Implemented, |p, _| {
        p.cfg.use_android_relr_tags = true
    }),
    opt(&["no-use-android-relr-tags"], Flag, "", "Use SHT_RELR / DT_RELR* tags (default)", Implemented, |p, _| p.cfg.use_android_relr_tags = false),
    opt(&["compress-debug-sections"], Value, "<none|zlib|zstd>", "Compress debug sections", Implemented, compress_debug_sections),
    opt(
        &["exclude-libs"],
        Value,
        "<libs>",
        "Hide symbols of these archives (comma- or colon-separated names, or ALL) from the dynamic symbol table",
        Implemented,
        |p, v| p.cfg.exclude_libs.extend(v.str().split([',', ':']).filter(|s| !s.is_empty()).map(str::to_string)),
    ),
    opt(&["orphan-handling"], Value, "<mode>", "Orphan section handling", Implemented, orphan_handling),
    opt(&["sort-section"], Value, "<rule>", "Sort sections by name or alignment (SECTIONS scripts)", Implemented, sort_section),
    opt(&["trace", "t"], Flag, "", "Print the name of each input file", Implemented, |p, _| p.cfg.trace = true),
    opt(&["dependent-libraries"], Flag, "", "Process dependent library specifiers from input files (default)", Implemented, |p, _| {
        p.cfg.dependent_libraries = true
    }),
    opt(&["no-dependent-libraries"], Flag, "", "Ignore dependent library specifiers from input files", Implemented, |p, _| p.cfg.dependent_libraries = false),
    opt(&["trace-symbol", "y"], Value, "<sym>", "Trace references to a symbol", Ignored, nothing),
    opt(&["hash-size"], Value, "<n>", "GNU ld hash table size (no effect, as in lld)", Noop, hash_size),
    opt(&["g"], Flag, "", "Ignored (as in lld)", Noop, nothing),
    opt(&["no-warn-mismatch"], Flag, "", "Ignored (as in lld)", Noop, nothing),
    // The rest of lld's silently ignored GNU ld options (Options.td: "silently ignored for
    // compatibility"). --warn-once changes nothing: lld reports each undefined symbol once.
    opt(&["d"], Flag, "", "Ignored (as in lld)", Noop, nothing),
    opt(&["G"], Value, "<size>", "Ignored (as in lld)", Noop, nothing),
    opt(&["long-plt"], Flag, "", "Ignored (as in lld)", Noop, nothing),
    opt(&["no-add-needed"], Flag, "", "Ignored (as in lld)", Noop, nothing),
    opt(&["no-ctors-in-init-array"], Flag, "", "Ignored (as in lld)", Noop, nothing),
    opt(&["no-keep-memory"], Flag, "", "Ignored (as in lld)", Noop, nothing),
    opt(&["secure-plt"], Flag, "", "Ignored (as in lld)", Noop, nothing),
    opt(&["warn-execstack"], Flag, "", "Ignored (as in lld)", Noop, nothing),
    opt(&["warn-once"], Flag, "", "Ignored (as in lld: each undefined symbol is reported once)", Noop, nothing),
    opt(&["sort-common"], OptValue, "", "Ignored (as in lld)", Noop, nothing),
    opt(&["warn-common"], Flag, "", "Warn about duplicate common symbols", Implemented, |p, _| p.cfg.warn_common = true),
    opt(&["no-warn-common"], Flag, "", "Do not warn about duplicate common symbols (default)", Implemented, |p, _| p.cfg.warn_common = false),
    opt(&["reduce-memory-overheads"], Flag, "", "Ignored (as in lld)", Noop, nothing),
    opt(&["no-copy-dt-needed-entries"], Flag, "", "Ignored (the default, as in lld)", Noop, nothing),
    opt(&["warn-shared-textrel"], Flag, "", "Ignored (as in lld)", Noop, nothing),
    opt(&["cref"], Flag, "", "Output a cross reference table", Ignored, nothing),
    // LTO's IR verifier cannot be turned off in llvm-lto2; on valid IR the output is the same.
    opt(&["disable-verify"], Flag, "", "Do not verify LLVM IR before LTO", Ignored, nothing),
    opt(&["demangle"], Flag, "", "Demangle symbol names in diagnostics and the map file (default)", Implemented, |p, _| p.demangle = true),
    opt(&["no-demangle"], Flag, "", "Do not demangle symbol names in diagnostics and the map file", Implemented, |p, _| p.demangle = false),
    opt(&["gdb-index"], Flag, "", "Generate .gdb_index", Implemented, |p, _| p.cfg.gdb_index = true),
    opt(&["no-gdb-index"], Flag, "", "Do not generate .gdb_index (default)", Implemented, |p, _| p.cfg.gdb_index = false),
    opt(&["warn-backrefs"], Flag, "", "Warn about backward symbol references to extract archive members", Implemented, |p, _| p.cfg.warn_backrefs = true),
    opt(&["no-warn-backrefs"], Flag, "", "Do not warn about backward references (default)", Implemented, |p, _| p.cfg.warn_backrefs = false),
    opt(&["noinhibit-exec"], Flag, "", "Retain the output file even if errors occur (undefined symbols are warnings)", Implemented, |p, _| {
        p.cfg.noinhibit_exec = true
    }),
    opt(&["filter", "F"], Value, "<name>", "Set DT_FILTER field to the specified name", Implemented, |p, v| p.cfg.filter.push(v.str())),
    opt(&["auxiliary", "f"], Value, "<name>", "Set DT_AUXILIARY field to the specified name", Implemented, |p, v| p.cfg.auxiliary.push(v.str())),
    opt(&["apply-dynamic-relocs"], Flag, "", "Apply link-time values for dynamic relocations", Implemented, |p, _| p.cfg.apply_dynamic_relocs = true),
    opt(&["no-apply-dynamic-relocs"], Flag, "", "Do not apply link-time values for dynamic relocations (default)", Implemented, |p, _| {
        p.cfg.apply_dynamic_relocs = false
    }),
    opt(&["retain-symbols-file"], Value, "<file>", "Retain only the symbols listed in the file", Implemented, |p, v| {
        p.cfg.retain_symbols_file = Some(v.path())
    }),
    opt(&["rosegment"], Flag, "", "Put read-only non-executable sections in their own segment (default)", Implemented, |p, _| p.cfg.no_rosegment = false),
    opt(&["no-rosegment"], Flag, "", "Do not put read-only non-executable sections in their own segment", Implemented, |p, _| p.cfg.no_rosegment = true),
    opt(&["fork"], Flag, "", "Finish the link in a child process that releases the caller once the output is written (default)", Implemented, |p, _| {
        p.cfg.fork = true
    }),
    opt(&["no-fork"], Flag, "", "Link in one process (for debuggers)", Implemented, |p, _| p.cfg.fork = false),
    opt(
        &["incremental"],
        Flag,
        "",
        "Keep <output>.dtld-incremental; a relink that finds nothing changed ends at once (docs/incremental.md)",
        Implemented,
        |p, _| p.cfg.incremental = true,
    ),
    opt(&["no-incremental"], Flag, "", "A full link without state (default)", Implemented, |p, _| p.cfg.incremental = false),
    opt(&["enable-non-contiguous-regions"], Flag, "", "Spill input sections to later matching output sections", Ignored, nothing),
    // Options for other targets: errors on x86-64, as in lld (check_options).
    opt(&["cmse-implib"], Flag, "", "ARM only (an error on x86-64, as in lld)", Implemented, |p, _| p.checks.cmse_implib = true),
    opt(&["in-implib"], Value, "<file>", "ARM only (an error on x86-64, as in lld)", Implemented, |p, _| p.checks.in_implib = true),
    opt(&["out-implib"], Value, "<file>", "ARM only (an error on x86-64, as in lld)", Implemented, |p, _| p.checks.out_implib = true),
    opt(&["fix-cortex-a8"], Flag, "", "ARM only (an error on x86-64, as in lld)", Implemented, |p, _| p.checks.fix_cortex_a8 = true),
    opt(&["be8"], Flag, "", "ARM only (an error on x86-64, as in lld)", Implemented, |p, _| p.checks.be8 = true),
    opt(&["execute-only"], Flag, "", "AArch64 only (an error on x86-64, as in lld)", Implemented, |p, _| p.checks.execute_only = true),
    opt(&["no-execute-only"], Flag, "", "AArch64 only (the default)", Implemented, |p, _| p.checks.execute_only = false),
    opt(&["fix-cortex-a53-843419"], Flag, "", "AArch64 only (an error on x86-64, as in lld)", Implemented, |p, _| p.checks.fix_cortex_a53 = true),
    opt(&["toc-optimize"], Flag, "", "PowerPC64 only (an error on x86-64, as in lld)", Implemented, |p, _| p.checks.toc_optimize = true),
    opt(&["no-toc-optimize"], Flag, "", "PowerPC64 only (the default elsewhere)", Implemented, |p, _| p.checks.toc_optimize = false),
    opt(&["pcrel-optimize"], Flag, "", "PowerPC64 only (an error on x86-64, as in lld)", Implemented, |p, _| p.checks.pcrel_optimize = true),
    opt(&["no-pcrel-optimize"], Flag, "", "PowerPC64 only (the default elsewhere)", Implemented, |p, _| p.checks.pcrel_optimize = false),
    opt(&["relax-gp"], Flag, "", "RISC-V only (an error on x86-64, as in lld)", Implemented, |p, _| p.checks.relax_gp = true),
    opt(&["no-relax-gp"], Flag, "", "RISC-V only (the default)", Implemented, |p, _| p.checks.relax_gp = false),
    opt(&["debug-names"], Flag, "", "Generate a merged .debug_names section (not implemented: an error)", Implemented, |p, _| p.checks.debug_names = true),
    opt(&["no-debug-names"], Flag, "", "Do not generate .debug_names (default)", Implemented, |p, _| p.checks.debug_names = false),
];

/// One-letter options that take a value joined or separate (single dash only).
const SHORT_WITH_VALUE: &[char] = &['o', 'l', 'L', 'e', 'u', 'h', 'R', 'I', 'm', 'z', 'y', 'O', 'T', 'F', 'f'];

/// Arguments lld forwards to its LTO stage unparsed (`--lto-*`, `--thinlto-*`, `--save-temps`);
/// `lto::options` reads them.
fn is_lto_option(body: &str) -> bool {
    body.starts_with("lto-")
        || body.starts_with("thinlto-")
        || body.starts_with("lto=")
        || body.starts_with("no-lto-")
        || body.starts_with("opt-remarks-")
        || body == "save-temps"
        || body.starts_with("save-temps=")
}

/// LTO options that take their value in the next argument too (`--x <v>`), as in lld.
const LTO_SEPARATE: &[&str] = &[
    "thinlto-cache-policy",
    "thinlto-distributor-arg",
    "thinlto-remote-compiler-prepend-arg",
    "thinlto-remote-compiler-arg",
    "opt-remarks-filename",
    "opt-remarks-passes",
    "opt-remarks-format",
];

impl Gnu {
    fn new() -> Gnu {
        Gnu {
            cfg: Config { lto: crate::lto::options::LtoOptions::new(), ..Config::default() },
            lto_errors: Vec::new(),
            llvm_cl: Vec::new(),
            joined: false,
            errors: Vec::new(),
            warnings: Vec::new(),
            in_group: false,
            in_lib: false,
            raw_lib_paths: Vec::new(),
            has_input: false,
            version: false,
            help: false,
            color: None,
            error_limit: crate::diag::DEFAULT_ERROR_LIMIT,
            no_warnings: false,
            vs_diagnostics: false,
            demangle: true,
            t_sections: Vec::new(),
            image_base_text: None,
            pack_dyn_relocs: None,
            checks: Checks::default(),
            scripts: Vec::new(),
        }
    }

    /// An LTO option, into `cfg.lto` as it is read (`spelled`: the argument as written).
    fn set_lto(&mut self, spelled: &str) {
        if let Err(e) = self.cfg.lto.set_arg(spelled) {
            self.lto_errors.extend(e.messages);
        }
    }

    /// Applies option `o` as spelled `spelling` with value `v`, recording it for `--reproduce`.
    fn apply(&mut self, o: &Opt<Gnu>, spelling: &str, v: Option<&str>) {
        self.cfg.cmdline.push(CmdArg::option(o.names[0], spelling, v, o.arity == OptValue));
        options::apply(self, o, spelling, v);
    }

    /// One argument (and, for a separate value, the next): returns how many it consumed.
    fn argument(&mut self, args: &[String], i: usize) -> usize {
        let a = &args[i];
        if !a.starts_with('-') || a == "-" {
            self.cfg.cmdline.push(CmdArg::Input(a.clone()));
            self.file_input(a.clone());
            return 1;
        }
        let (dashes, body) = match a.strip_prefix("--") {
            Some(b) => ("--", b),
            None => ("-", &a[1..]),
        };
        // 1. The whole name: a flag, or an option whose value is the next argument.
        let one_letter = body.chars().count() == 1;
        if let Some(o) = lookup(OPTIONS, body).filter(|_| !(one_letter && dashes == "--")) {
            if o.arity != Value {
                self.apply(o, a, None);
                return 1;
            }
            match args.get(i + 1) {
                Some(v) => self.apply(o, a, Some(v)),
                None => self.errors.push(format!("{a}: missing argument")),
            }
            return 2;
        }
        // 2. `name=value`.
        if let Some((n, v)) = body.split_once('=') {
            if let Some(o) = lookup(OPTIONS, n) {
                if o.arity != Flag && n.len() > 1 {
                    self.joined = true;
                    self.apply(o, &format!("{dashes}{n}"), Some(v));
                    self.joined = false;
                    return 1;
                }
            }
        }
        // 3. LTO options, recorded raw.
        if is_lto_option(body) {
            if LTO_SEPARATE.contains(&body) {
                match args.get(i + 1) {
                    Some(v) => {
                        let spelled = format!("--{body}={v}");
                        self.set_lto(&spelled);
                        self.cfg.cmdline.push(CmdArg::Raw(spelled));
                    }
                    None => self.errors.push(format!("{a}: missing argument")),
                }
                return 2;
            }
            self.cfg.cmdline.push(CmdArg::Raw(a.clone()));
            self.set_lto(a);
            return 1;
        }
        // 4. A one-letter option with a joined value (`-omain`, `-lfoo`, `-znow`, `-O2`).
        if dashes == "-" {
            if let Some(c) = body.chars().next().filter(|c| SHORT_WITH_VALUE.contains(c)) {
                if let Some(o) = lookup(OPTIONS, &c.to_string()) {
                    self.apply(o, &format!("-{c}"), Some(&body[c.len_utf8()..]));
                    return 1;
                }
            }
        }
        // lld's suggestion: the nearest option one edit away.
        match super::options::nearest(OPTIONS, &["-", "--"], '=', a) {
            Some(n) => self.errors.push(format!("unknown argument '{a}', did you mean '{n}'")),
            None => self.errors.push(format!("unknown argument '{a}'")),
        }
        1
    }
}

/// Parses argv (without argv[0]).
pub fn parse(argv: &[String]) -> Result<Action<Config>> {
    let args = super::expand_response_files(argv)?;
    let mut p = Gnu::new();
    let mut i = 0;
    while i < args.len() {
        i += p.argument(&args, i);
    }
    // lld's order: `--help` wins over everything; `--version` and `-v` print the version line
    // even when the command line has errors (an unknown argument, a bad `-mllvm` option), and
    // the run then fails.
    if p.help {
        return Ok(Action::Help);
    }
    if p.version {
        // lld reads its configuration before it leaves for `--version`: its errors (an unknown
        // `-mllvm` option, an invalid LTO level) still fail the run.
        check_lto_options(&mut p);
        if !p.errors.is_empty() {
            println!("{}", super::version_string());
            return Err(Error::many(p.errors));
        }
        return Ok(Action::Version);
    }
    if p.cfg.symbol_ordering_file.is_some() {
        if p.cfg.call_graph_ordering_file.is_some() {
            p.errors.push("--symbol-ordering-file and --call-graph-order-file may not be used together".into());
        }
        // The listed order replaces the call graph's, as in lld.
        p.cfg.cg_profile_sort = CgProfileSort::None;
    }
    // lld's --noinhibit-exec reports undefined symbols as warnings and writes the output.
    if p.cfg.noinhibit_exec {
        p.cfg.warn_unresolved_symbols = true;
    }
    check_lto_options(&mut p);
    check_options(&mut p);
    finish_addresses(&mut p);
    finish_packing(&mut p);
    // Apply the sysroot to `-L=dir` and `-L$SYSROOT/dir` (it may come after the -L options).
    let sysroot = p.cfg.sysroot.clone();
    p.cfg.library_paths = p.raw_lib_paths.iter().map(|d| apply_sysroot(d, sysroot.as_deref())).collect();
    find_scripts(&mut p);
    let mut diag = crate::diag::Diag::new(p.cfg.fatal_warnings, p.error_limit, p.color);
    diag.suppress_warnings = p.no_warnings;
    diag.vs_diagnostics = p.vs_diagnostics;
    diag.demangle = p.demangle;
    if !p.errors.is_empty() {
        if p.cfg.print_version {
            println!("{}", super::version_string());
        }
        for w in &p.warnings {
            diag.warn(w);
        }
        return Err(Error::many(p.errors));
    }
    for w in &p.warnings {
        diag.warn(w);
    }
    if !p.has_input {
        if p.cfg.print_version {
            return Ok(Action::Version);
        }
        // lld reads the dynamic lists and version scripts with the command line: their errors
        // come before `no input files` (through `diag`, for --vs-diagnostics).
        let script_errors = crate::elf::version_input::script_file_errors(&p.cfg);
        if !script_errors.is_empty() {
            for e in &script_errors {
                diag.error(e);
            }
            return Err(Error::many(Vec::new()));
        }
        crate::bail!("no input files");
    }
    p.cfg.diag = std::sync::Arc::new(diag);
    // lld writes a non-empty LLD_VERSION as `.comment` in place of its own name (for tests).
    if let Some(v) = std::env::var("LLD_VERSION").ok().filter(|v| !v.is_empty()) {
        p.cfg.comment = v;
    }
    Ok(Action::Link(p.cfg))
}

/// lld's `checkOptions`, in its order: options for other targets (dtld links x86-64 only),
/// then combinations lld refuses.
fn check_options(p: &mut Gnu) {
    let k = &p.checks;
    let c = &p.cfg;
    let mut e: Vec<String> = Vec::new();
    let mut say = |cond: bool, msg: &str| {
        if cond {
            e.push(msg.to_string());
        }
    };
    say(k.cmse_implib, "--cmse-implib is only supported on ARM targets");
    say(k.in_implib, "--in-implib is only supported on ARM targets");
    say(k.out_implib, "--out-implib is only supported on ARM targets");
    say(k.fix_cortex_a8 && !c.relocatable, "--fix-cortex-a8 is only supported on ARM targets");
    say(k.be8, "--be8 is only supported on ARM targets");
    say(k.execute_only, "--execute-only is only supported on AArch64 targets");
    say(k.fix_cortex_a53 && !c.relocatable, "--fix-cortex-a53-843419 is only supported on AArch64");
    say(k.z_pac_plt, "-z pac-plt only supported on AArch64");
    say(k.z_force_bti, "-z force-bti only supported on AArch64");
    say(k.report("bti-report") != "none", "-z bti-report only supported on AArch64");
    say(k.report("pauth-report") != "none", "-z pauth-report only supported on AArch64");
    say(k.report("gcs-report") != "none", "-z gcs-report only supported on AArch64");
    // Unset, -z gcs-report-dynamic follows -z gcs-report (capped at warning).
    let gcs_dynamic = k.reports.iter().any(|(n, _)| *n == "gcs-report-dynamic");
    say(k.report("gcs-report-dynamic") != "none" || (!gcs_dynamic && k.report("gcs-report") != "none"), "-z gcs-report-dynamic only supported on AArch64");
    say(k.z_gcs, "-z gcs only supported on AArch64");
    say(k.report("execute-only-report") != "none", "-z execute-only-report only supported on AArch64 and ARM");
    say(k.toc_optimize, "--toc-optimize is only supported on PowerPC64 targets");
    say(k.pcrel_optimize, "--pcrel-optimize is only supported on PowerPC64 targets");
    say(k.relax_gp, "--relax-gp is only supported on RISC-V targets");
    say(k.report("zicfilp-unlabeled-report") != "none", "-z zicfilip-unlabeled-report is only supported on RISC-V targets");
    say(k.report("zicfilp-func-sig-report") != "none", "-z zicfilip-func-sig-report is only supported on RISC-V targets");
    say(k.report("zicfiss-report") != "none", "-z zicfiss-report is only supported on RISC-V targets");
    say(k.z_zicfilp, "-z zicfilp is only supported on RISC-V targets");
    say(k.z_zicfiss, "-z zicfiss is only supported on RISC-V targets");
    say(c.pie && c.shared, "-shared and -pie may not be used together");
    say(!c.shared && !c.filter.is_empty(), "-F may not be used without -shared");
    say(!c.shared && !c.auxiliary.is_empty(), "-f may not be used without -shared");
    say(c.strip_all && c.emit_relocs, "--strip-all and --emit-relocs may not be used together");
    // -z text is lld's default.
    say(c.z_text && k.z_ifunc_noplt, "-z text and -z ifunc-noplt may not be used together");
    if c.relocatable {
        say(c.shared, "-r and -shared may not be used together");
        say(c.gdb_index, "-r and --gdb-index may not be used together");
        say(c.icf != crate::elf::config::Icf::None, "-r and --icf may not be used together");
        say(c.pie, "-r and -pie may not be used together");
        // -shared implies --export-dynamic.
        say(c.export_dynamic || c.shared, "-r and --export-dynamic may not be used together");
        say(k.debug_names, "-r and --debug-names may not be used together");
        say(k.z_nosectionheader, "-r and -z nosectionheader may not be used together");
    }
    say(k.execute_only && c.no_rosegment, "--execute-only and --no-rosegment cannot be used together");
    say(k.z_retpolineplt && k.z_force_ibt, "-z force-ibt may not be used with -z retpolineplt");
    // What lld implements and dtld does not, once lld's own refusals are said.
    if e.is_empty() {
        let unsupported = [
            (k.z_force_ibt, "-z force-ibt is not supported"),
            (k.z_retpolineplt, "-z retpolineplt is not supported"),
            (k.z_ifunc_noplt, "-z ifunc-noplt is not supported"),
            (k.z_nosectionheader, "-z nosectionheader is not supported"),
            (k.debug_names, "--debug-names is not supported"),
        ];
        e.extend(unsupported.iter().filter(|(on, _)| *on).map(|(_, m)| m.to_string()));
    }
    p.errors.extend(e);
}

/// `-T file`: the file as named, else in the -L paths (lld's `searchScript`), else lld's error.
fn find_scripts(p: &mut Gnu) {
    for i in std::mem::take(&mut p.scripts) {
        let Some(InputArg::File(path)) = p.cfg.inputs.get(i) else { continue };
        if path.exists() {
            continue;
        }
        let found = p.cfg.library_paths.iter().map(|d| d.join(path)).find(|c| c.exists());
        match found {
            Some(f) => p.cfg.inputs[i] = InputArg::File(f),
            None => p.errors.push(format!("cannot find linker script {}", path.display())),
        }
    }
}

/// lld reads its LTO options with the command line (readConfigs): their errors do not wait
/// for bitcode, and every later stage reads `cfg.lto`, filled as each option was read
/// (`LtoOptions::set`) and finished here.
fn check_lto_options(p: &mut Gnu) {
    p.errors.append(&mut p.lto_errors);
    let c = &mut p.cfg;
    if let Err(e) = c.lto.finish(c.plugin.as_deref(), &c.plugin_opts, &c.mllvm, crate::lto::options::Flavor::Gnu) {
        p.errors.extend(e.messages);
    }
    // LLVM's parser on the LLVM options, as lld's readConfigs runs it: `-plugin-opt=-...` first,
    // then `-mllvm`; `-plugin-opt=` values are GCC's when GCC's plugin is named (`finish`).
    let gcc_plugin = c.plugin.as_deref().is_some_and(|pl| pl.rsplit('/').next().unwrap_or(pl).contains("liblto_plugin"));
    let mut checks: Vec<(String, String)> =
        p.llvm_cl.iter().filter(|(_, _, from_plugin)| *from_plugin && !gcc_plugin).map(|(s, v, _)| (s.clone(), v.clone())).collect();
    checks.extend(p.llvm_cl.iter().filter(|(_, _, from_plugin)| !*from_plugin).map(|(s, v, _)| (s.clone(), v.clone())));
    let checked = crate::lto::cloptions::check(&c.lto, &checks, crate::lto::cloptions::Style::Lld);
    p.errors.extend(checked.errors);
    p.warnings.extend(checked.warning);
    c.lto.llvm_loaded = checked.loaded;
}

/// Section addresses and paging after every option is read: `-T<section>` over
/// `--section-start`; `-N`/`-n` turn paging off (page sizes 1, no RELRO), warning about page
/// sizes set anyway; `--image-base` should be page-aligned (lld's checks, in its order).
fn finish_addresses(p: &mut Gnu) {
    for (name, a) in std::mem::take(&mut p.t_sections) {
        p.cfg.section_start.insert(name.to_string(), a);
    }
    let c = &mut p.cfg;
    if c.omagic || c.nmagic {
        c.z_relro = false;
        if c.max_page_size.is_some_and(|v| v != crate::elf::layout::model::PAGE) {
            p.warnings.push("-z max-page-size set, but paging disabled by omagic or nmagic".into());
        }
        if c.common_page_size.is_some_and(|v| v != crate::elf::layout::model::PAGE) {
            p.warnings.push("-z common-page-size set, but paging disabled by omagic or nmagic".into());
        }
        c.max_page_size = Some(1);
        c.common_page_size = Some(1);
    }
    if let Some(b) = c.image_base {
        let page = c.max_page_size.unwrap_or(crate::elf::layout::model::PAGE);
        if b % page != 0 {
            let shown = p.image_base_text.clone().unwrap_or(format!("0x{b:x}"));
            p.warnings.push(format!("--image-base: address isn't multiple of page size: {shown}"));
        }
    }
}

/// `-z` keywords: (keyword, status, effect). Keywords with a value (`max-page-size=`) are read
/// by `z_keyword_value`.
type ZRow = (&'static str, options::Status, fn(&mut Config));
static Z: &[ZRow] = &[
    ("relro", Implemented, |c| c.z_relro = true),
    ("norelro", Implemented, |c| c.z_relro = false),
    ("now", Implemented, |c| c.z_now = true),
    ("lazy", Implemented, |c| c.z_now = false),
    ("execstack", Implemented, |c| c.z_execstack = true),
    ("noexecstack", Implemented, |c| c.z_execstack = false),
    ("defs", Implemented, |c| c.report_unresolved = Some(true)),
    ("undefs", Implemented, |c| c.report_unresolved = Some(false)),
    ("text", Implemented, |c| c.z_text = true),
    ("notext", Implemented, |c| c.z_text = false),
    ("start-stop-gc", Implemented, |c| c.z_start_stop_gc = true),
    ("nostart-stop-gc", Implemented, |c| c.z_start_stop_gc = false),
    ("separate-code", Implemented, |c| c.z_separate = Separate::Code),
    ("noseparate-code", Implemented, |c| c.z_separate = Separate::None),
    ("separate-loadable-segments", Implemented, |c| c.z_separate = Separate::Loadable),
    ("rodynamic", Implemented, |c| c.z_rodynamic = true),
    ("origin", Implemented, |c| c.z_origin = true),
    ("nodelete", Implemented, |c| c.z_nodelete = true),
    ("nodlopen", Implemented, |c| c.z_nodlopen = true),
    ("initfirst", Implemented, |c| c.z_initfirst = true),
    ("interpose", Implemented, |c| c.z_interpose = true),
    ("nodefaultlib", Implemented, |c| c.z_nodefaultlib = true),
    ("global", Implemented, |c| c.z_global = true),
    ("muldefs", Implemented, |c| c.allow_multiple_definition = true),
    ("ibt", Implemented, |c| c.z_ibt = true),
    ("shstk", Implemented, |c| c.z_shstk = true),
    ("nognustack", Implemented, |c| c.z_nognustack = true),
    ("dynamic-undefined-weak", Implemented, |c| c.z_dynamic_undefined_weak = true),
    ("nodynamic-undefined-weak", Implemented, |c| c.z_dynamic_undefined_weak = false),
    ("keep-text-section-prefix", Implemented, |c| c.z_keep_text_section_prefix = true),
    ("nokeep-text-section-prefix", Implemented, |c| c.z_keep_text_section_prefix = false),
    ("pack-relative-relocs", Implemented, |c| c.z_pack_relative_relocs = true),
    ("nopack-relative-relocs", Implemented, |c| c.z_pack_relative_relocs = false),
    ("copyreloc", Implemented, |c| c.z_nocopyreloc = false),
    ("nocopyreloc", Implemented, |c| c.z_nocopyreloc = true),
    // No effect in lld on x86-64 either.
    ("combreloc", Noop, |_| {}),
    ("nocombreloc", Noop, |_| {}),
    ("rela", Noop, |_| {}),
    ("hazardplt", Noop, |_| {}),
    // AArch64 only: errors on x86-64 (check_options), as in lld.
    ("force-bti", Implemented, |_| {}),
    ("pac-plt", Implemented, |_| {}),
    ("nopac-plt", Implemented, |_| {}),
    ("nomark-plt", Noop, |_| {}),
    ("nounique", Noop, |_| {}),
    ("wxneeded", Implemented, |c| c.z_wxneeded = true),
    // Not implemented; the program means the same without them.
    ("rel", Ignored, |_| {}),
    ("unique", Ignored, |_| {}),
    ("mark-plt", Ignored, |_| {}),
    ("ibtplt", Ignored, |_| {}),
    ("x86-64-baseline", Ignored, |_| {}),
    ("x86-64-v2", Ignored, |_| {}),
    ("x86-64-v3", Ignored, |_| {}),
    ("x86-64-v4", Ignored, |_| {}),
    ("report-relative", Ignored, |_| {}),
    ("sectionheader", Noop, |_| {}),
    // Not implemented, and the output would not have the property asked for: refused by
    // check_options after lld's own checks on them.
    ("retpolineplt", Unsupported, |_| {}),
    ("force-ibt", Unsupported, |_| {}),
    ("ifunc-noplt", Unsupported, |_| {}),
    ("nosectionheader", Unsupported, |_| {}),
];

fn z_keyword(p: &mut Gnu, k: &str) {
    if let Some(&(_, status, apply)) = Z.iter().find(|(n, _, _)| *n == k) {
        apply(&mut p.cfg);
        let ck = &mut p.checks;
        match k {
            "pac-plt" => ck.z_pac_plt = true,
            "nopac-plt" => ck.z_pac_plt = false,
            "force-bti" => ck.z_force_bti = true,
            "retpolineplt" => ck.z_retpolineplt = true,
            "force-ibt" => ck.z_force_ibt = true,
            "ifunc-noplt" => ck.z_ifunc_noplt = true,
            "nosectionheader" => ck.z_nosectionheader = true,
            "sectionheader" => ck.z_nosectionheader = false,
            _ => {}
        }
        match status {
            // Said by check_options, after lld's own checks.
            _ if matches!(k, "retpolineplt" | "force-ibt" | "ifunc-noplt" | "nosectionheader") => {}
            Implemented | Noop => {}
            Ignored => p.warnings.push(format!("-z {k} is not supported; ignored")),
            Unsupported => p.errors.push(format!("-z {k} is not supported")),
        }
        return;
    }
    match k.split_once('=') {
        Some((key, value)) => z_keyword_value(p, k, key, value),
        None => p.warnings.push(format!("unknown -z value: {k}")),
    }
}

fn z_keyword_value(p: &mut Gnu, k: &str, key: &str, value: &str) {
    let c = &mut p.cfg;
    let int = parse_num(value.trim());
    match key {
        "max-page-size" | "common-page-size" => match int {
            None => p.errors.push(format!("invalid {key}: {value}")),
            Some(n) if n == 0 || !n.is_power_of_two() => p.errors.push(format!("{key}: value isn't a power of 2")),
            Some(n) if key == "max-page-size" => c.max_page_size = Some(n),
            Some(n) => c.common_page_size = Some(n),
        },
        "dead-reloc-in-nonalloc" => match value.rsplit_once('=') {
            Some((glob, v)) if !glob.is_empty() && !v.is_empty() => match parse_num(v.trim()) {
                Some(_) if crate::util::glob::glob_error(glob).is_some() => {
                    p.errors.push(format!("-z dead-reloc-in-nonalloc=: {}: {glob}", crate::util::glob::glob_error(glob).unwrap_or_default()))
                }
                Some(n) => c.dead_reloc_in_nonalloc.push((glob.to_string(), n)),
                None => p.errors.push(format!("-z dead-reloc-in-nonalloc=: expected a non-negative integer, but got '{v}'")),
            },
            _ => p.errors.push("-z dead-reloc-in-nonalloc=: expected <section_glob>=<value>".to_string()),
        },
        "stack-size" => match int {
            Some(n) => c.z_stack_size = Some(n),
            None => p.errors.push(format!("invalid stack-size: {value}")),
        },
        "cet-report" => match value {
            "none" | "warning" | "error" => c.z_cet_report = Some(value.to_string()),
            _ => p.errors.push(format!("unknown -z cet-report= value: {value}")),
        },
        // lld's report policies for other targets: refused by check_options unless `none`.
        "bti-report"
        | "execute-only-report"
        | "gcs-report"
        | "gcs-report-dynamic"
        | "pauth-report"
        | "zicfilp-unlabeled-report"
        | "zicfilp-func-sig-report"
        | "zicfiss-report" => {
            const KEYS: &[&str] = &[
                "bti-report",
                "execute-only-report",
                "gcs-report",
                "gcs-report-dynamic",
                "pauth-report",
                "zicfilp-unlabeled-report",
                "zicfilp-func-sig-report",
                "zicfiss-report",
            ];
            let key = KEYS.iter().copied().find(|n| *n == key).unwrap_or("bti-report");
            match value {
                "none" => p.checks.reports.push((key, "none")),
                "warning" => p.checks.reports.push((key, "warning")),
                "error" => p.checks.reports.push((key, "error")),
                _ => p.errors.push(format!("unknown -z {key}= value: {value}")),
            }
        }
        "gcs" => match value {
            "implicit" => p.checks.z_gcs = false,
            "never" | "always" => p.checks.z_gcs = true,
            _ => p.errors.push(format!("unknown -z gcs= value: {value}")),
        },
        "zicfilp" => match value {
            "implicit" => p.checks.z_zicfilp = false,
            "unlabeled" | "func-sig" | "never" => p.checks.z_zicfilp = true,
            _ => p.errors.push(format!("unknown -z zicfilp= value: {value}")),
        },
        "zicfiss" => match value {
            "implicit" => p.checks.z_zicfiss = false,
            "always" | "never" => p.checks.z_zicfiss = true,
            _ => p.errors.push(format!("unknown -z zicfiss= value: {value}")),
        },
        // lld's default visibility for __start_/__stop_ symbols.
        "start-stop-visibility" if value == "protected" => {}
        "start-stop-visibility" => match value {
            "default" | "internal" | "hidden" => p.warnings.push(format!("-z {k} is not supported; ignored")),
            _ => p.errors.push(format!("unknown -z start-stop-visibility= value: {value}")),
        },
        _ => p.warnings.push(format!("unknown -z value: {k}")),
    }
}

fn parse_hex(s: &str) -> Option<Vec<u8>> {
    let s = s.trim();
    if s.is_empty() || !s.len().is_multiple_of(2) || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok()).collect()
}

/// The text `--help` prints, from the table.
pub fn help_text() -> String {
    let mut s = String::new();
    s.push_str("OVERVIEW: dtld, an x86-64 ELF and COFF linker with integrated distributed ThinLTO (compatible with GNU linkers)\n\n");
    s.push_str("USAGE: dtld [options] file...\n\nOPTIONS:\n");
    s.push_str(&options::gnu_help(OPTIONS));
    s.push_str("  --lto-*, --thinlto-*            LTO options (recorded for the LTO stage)\n");
    s.push_str("  @<file>                        Read options from <file>\n");
    s
}

/// The table's rows, for the man page and docs/options.md.
pub fn rows() -> Vec<options::RowInfo> {
    options::rows(OPTIONS)
}

#[cfg(test)]
/// The generated part of docs/options.md: every row of the GNU table and every `-z` keyword
/// with its status, so the document cannot claim what the code does not do.
pub fn options_markdown() -> String {
    let status = |s: options::Status| match s {
        Implemented => "implemented",
        Noop => "no-op (as in lld)",
        Ignored => "**ignored, warns**",
        Unsupported => "**error**",
    };
    let table = |rows: Vec<options::RowInfo>| {
        let mut s = String::from("| Option | Status | Meaning |\n| --- | --- | --- |\n");
        for r in rows {
            let meta = if r.meta.is_empty() { String::new() } else { format!(" {}", r.meta) };
            let spell: Vec<String> = r.spellings.iter().map(|n| format!("`{n}{meta}`").replace('|', "\\|")).collect();
            s.push_str(&format!("| {} | {} | {} |\n", spell.join(", "), status(r.status), r.help.replace('|', "\\|")));
        }
        s
    };
    let mut s = table(rows());
    s.push_str("\n| `-z` keyword | Status |\n| --- | --- |\n");
    for (k, st, _) in Z {
        s.push_str(&format!("| `{k}` | {} |\n", status(*st)));
    }
    s.push_str("\n### lld-link (`dtld` run as `lld-link`, or `-flavor link`)\n\n");
    s.push_str(&table(super::link::rows()));
    s.push_str("\n### lld-link `/lib` (llvm-lib: `lld-link /lib ...`, `dtld -flavor link /lib ...`)\n\n");
    s.push_str(&table(super::lib::rows()));
    s
}

/// The `-z` keywords of the table and what dtld does with each, for the man page. Keywords
/// with a value (`max-page-size=`) are not in it.
pub fn z_rows() -> Vec<(&'static str, options::Status)> {
    Z.iter().map(|&(k, status, _)| (k, status)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::{tokenize_gnu, version_string};
    use crate::elf::config::InputArg;
    use std::path::PathBuf;

    /// docs/options.md's generated table matches the option table (`DTLD_BLESS=1` rewrites it).
    #[test]
    fn options_doc_is_current() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/options.md");
        let doc = std::fs::read_to_string(&path).unwrap();
        let (begin, end) = ("<!-- generated by `DTLD_BLESS=1 cargo test options_doc_is_current` -->\n", "<!-- end of generated table -->");
        let a = doc.find(begin).expect("docs/options.md lacks the generated-table marker") + begin.len();
        let b = doc.find(end).expect("docs/options.md lacks the end marker");
        let want = options_markdown();
        if std::env::var_os("DTLD_BLESS").is_some() {
            std::fs::write(&path, format!("{}{want}{}", &doc[..a], &doc[b..])).unwrap();
        } else {
            assert!(doc[a..b] == want, "docs/options.md is stale: run DTLD_BLESS=1 cargo test options_doc_is_current");
        }
    }

    fn args(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    /// The warnings a command line prints.
    fn warnings(s: &[&str]) -> Vec<String> {
        let a = args(s);
        let mut p = Gnu::new();
        let mut i = 0;
        while i < a.len() {
            i += p.argument(&a, i);
        }
        finish_addresses(&mut p);
        p.warnings
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
        assert_eq!(cfg(&["--entry=start", "a.o"]).entry.as_deref(), Some("start"));
        assert_eq!(cfg(&["-entry", "s", "a.o"]).entry.as_deref(), Some("s"));
        assert_eq!(cfg(&["-emain", "a.o"]).entry.as_deref(), Some("main"));
        assert_eq!(cfg(&["-u", "f", "--undefined=g", "-uh", "a.o"]).undefined, vec!["f", "g", "h"]);
        assert_eq!(cfg(&["-m", "elf_x86_64", "a.o"]).emulation.as_deref(), Some("elf_x86_64"));
        assert_eq!(cfg(&["-melf_x86_64", "a.o"]).emulation.as_deref(), Some("elf_x86_64"));
        let c = cfg(&["-L", "/a", "-L/b", "--library-path=/c", "a.o"]);
        assert_eq!(c.library_paths, vec![PathBuf::from("/a"), PathBuf::from("/b"), PathBuf::from("/c")]);
        let c = cfg(&["-lfoo", "-l", "bar", "-l:baz.a", "--library=qux"]);
        assert_eq!(
            c.inputs,
            vec![InputArg::Library("foo".into()), InputArg::Library("bar".into()), InputArg::Library(":baz.a".into()), InputArg::Library("qux".into())]
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
        assert!(c.shared && c.bsymbolic == Bsymbolic::All && c.export_dynamic);
        let c = cfg(&["-static", "-pie", "--no-dynamic-linker", "a.o"]);
        assert!(c.is_static && c.pie && c.no_dynamic_linker);
        assert_eq!(c.inputs[0], InputArg::Static(true));
        let c = cfg(&["-E", "-s", "-S", "-x", "-X", "a.o"]);
        assert!(c.export_dynamic && c.strip_all && c.strip_debug && c.discard_all && c.discard_locals);
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
        let c = cfg(&["-z", "now", "-znorelro", "-z", "noexecstack", "-z", "defs", "-z", "max-page-size=0x200000", "a.o"]);
        assert!(c.z_now && !c.z_relro && !c.z_execstack && c.report_unresolved == Some(true));
        assert_eq!(c.max_page_size, Some(0x200000));
        let c = cfg(&["-z", "execstack", "-z", "notext", "-zseparate-code", "-z", "common-page-size=4096", "a.o"]);
        assert!(c.z_execstack && !c.z_text && c.z_separate == Separate::Code);
        assert_eq!(c.common_page_size, Some(4096));
        // Unknown keywords only warn.
        let w = warnings(&["-z", "bogus-keyword", "-z", "combreloc", "a.o"]);
        assert_eq!(w, vec!["unknown -z value: bogus-keyword".to_string()]);
        assert_eq!(err(&["-z", "max-page-size=abc", "a.o"]), "invalid max-page-size: abc");
        assert_eq!(err(&["-z", "common-page-size=3", "a.o"]), "common-page-size: value isn't a power of 2");
        assert!(cfg(&["--no-undefined", "a.o"]).report_unresolved == Some(true));
        // lld's order: the last of them decides each policy.
        let c = cfg(&["-shared", "--unresolved-symbols=report-all", "-z", "undefs", "a.o"]);
        assert!(c.unresolved_ignored() && c.shlib_undefined_reported());
        let c = cfg(&["-shared", "--unresolved-symbols=report-all", "a.o"]);
        assert!(!c.unresolved_ignored());
        let c = cfg(&["--unresolved-symbols=ignore-in-shared-libs", "a.o"]);
        assert!(!c.unresolved_ignored() && !c.shlib_undefined_reported());
    }

    #[test]
    fn errors_in_lld_wording() {
        assert_eq!(err(&["--bogus", "a.o"]), "unknown argument '--bogus'");
        // lld's suggestions (ld.lld-22's words): one edit away, value kept.
        assert_eq!(err(&["--gc-section", "a.o"]), "unknown argument '--gc-section', did you mean '--gc-sections'");
        assert_eq!(err(&["--verbos", "a.o"]), "unknown argument '--verbos', did you mean '--verbose'");
        assert_eq!(err(&["-shred", "a.o"]), "unknown argument '-shred', did you mean '-shared'");
        assert_eq!(err(&["--sort-secton=name", "a.o"]), "unknown argument '--sort-secton=name', did you mean '--sort-section=name'");
        assert_eq!(err(&["--no-undefinde", "a.o"]), "unknown argument '--no-undefinde'");
        assert_eq!(err(&["-bogus", "a.o"]), "unknown argument '-bogus'");
        assert_eq!(err(&["a.o", "-o"]), "-o: missing argument");
        assert_eq!(err(&["a.o", "--soname"]), "--soname: missing argument");
        assert_eq!(err(&["a.o", "-soname"]), "-soname: missing argument");
        assert_eq!(err(&["--omain", "a.o"]), "unknown argument '--omain'");
        assert_eq!(err(&["--lfoo"]), "unknown argument '--lfoo'");
        assert_eq!(err(&["-pie=3", "a.o"]), "unknown argument '-pie=3'");
        assert_eq!(err(&["--as-needed=3", "a.o"]), "unknown argument '--as-needed=3'");
        assert_eq!(err(&["--hash-style=foo", "a.o"]), "unknown --hash-style: foo");
        assert_eq!(err(&["--build-id=foo", "a.o"]), "unknown --build-id style: foo");
        assert_eq!(err(&["--threads=x", "a.o"]), "--threads: expected a positive integer, but got 'x'");
        assert_eq!(err(&["--threads=0", "a.o"]), "--threads: expected a positive integer, but got '0'");
        assert_eq!(err(&["-m", "foo", "a.o"]), "unknown emulation: foo");
        assert_eq!(err(&["-Ox", "a.o"]), "-Ox: number expected, but got 'x'");
        assert_eq!(err(&[]), "no input files");
        assert_eq!(err(&["-pie"]), "no input files");
        assert_eq!(err(&["--pop-state", "--bogus", "-x1"]), "unknown argument '--bogus'\nunknown argument '-x1'");
        assert_eq!(err(&["--start-group", "--start-group", "a.o"]), "nested --start-group");
        assert_eq!(err(&["--end-group", "a.o"]), "stray --end-group");
        assert_eq!(err(&["--color-diagnostics=bad", "a.o"]), "unknown option: --color-diagnostics=bad");
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
        assert_eq!(cfg(&["--build-id", "--build-id=none", "a.o"]).build_id, BuildId::None);
        let c = cfg(&["--build-id=0xdeadBEEF", "a.o"]);
        assert_eq!((c.build_id, c.build_id_hex), (BuildId::None, vec![0xde, 0xad, 0xbe, 0xef]));
        assert!(cfg(&["--build-id=0x01", "--build-id=sha1", "a.o"]).build_id_hex.is_empty());
        let c = cfg(&["--eh-frame-hdr", "--gc-sections", "--print-gc-sections", "--threads=3", "a.o"]);
        assert!(c.eh_frame_hdr && c.gc_sections && c.print_gc_sections);
        assert_eq!(c.threads, Some(3));
        assert_eq!(cfg(&["--threads", "2", "a.o"]).threads, Some(2));
        let c = cfg(&["--defsym=a=b+1", "--defsym", "c=0x10", "--wrap=malloc", "--wrap", "free", "a.o"]);
        assert_eq!(c.defsym, vec![("a".into(), "b+1".into()), ("c".into(), "0x10".into())]);
        assert_eq!(c.wrap, vec!["malloc", "free"]);
        let c = cfg(&[
            "-plugin",
            "/usr/lib/gcc/liblto_plugin.so",
            "-plugin-opt=/usr/lib/gcc/lto-wrapper",
            "-plugin-opt=-fresolution=/tmp/x.res",
            "--plugin-opt=O2",
            "-mllvm",
            "-import-instr-limit=5",
            "a.o",
        ]);
        assert_eq!(c.plugin.as_deref(), Some("/usr/lib/gcc/liblto_plugin.so"));
        assert_eq!(c.plugin_opts, vec!["/usr/lib/gcc/lto-wrapper", "-fresolution=/tmp/x.res", "O2"]);
        assert_eq!(c.mllvm, vec!["-import-instr-limit=5"]);
        let c = cfg(&["--lto-O3", "--thinlto-cache-dir=/tmp/c", "--lto-partitions=2", "-O2", "a.o"]);
        assert_eq!((c.lto.opt_level, c.lto.cache_dir.as_deref(), c.lto.partitions), (3, Some(std::path::Path::new("/tmp/c")), 2));
        assert_eq!(c.opt_level, 2);
        assert_eq!(cfg(&["-O", "0", "a.o"]).opt_level, 0);
        let c = cfg(&["-Map", "out.map", "--version-script=v.map", "--version-script", "w.map", "a.o"]);
        assert_eq!(c.map_file, Some(PathBuf::from("out.map")));
        assert_eq!(c.version_scripts, vec![PathBuf::from("v.map"), PathBuf::from("w.map")]);
        assert_eq!(cfg(&["--Map=m", "a.o"]).map_file, Some(PathBuf::from("m")));
        // lld's no-ops are silent; what lld does and dtld does not warns.
        let w = warnings(&["--sort-common", "--warn-common", "--hash-size=31", "--reduce-memory-overheads", "-g", "--cref", "a.o"]);
        assert_eq!(w, vec!["--cref is not supported; ignored".to_string()]);
        assert!(cfg(&["--warn-common", "a.o"]).warn_common && !cfg(&["--warn-common", "--no-warn-common", "a.o"]).warn_common);
        // lld's default is both hash tables; the last --hash-style wins.
        let c = cfg(&["a.o"]);
        assert!(c.hash_sysv && c.hash_gnu);
        let c = cfg(&["--warn-unresolved-symbols", "--error-unresolved-symbols", "-warn-unresolved-symbols", "a.o"]);
        assert!(c.warn_unresolved_symbols);
        assert_eq!(cfg(&["--symbol-ordering-file", "o.txt", "a.o"]).cg_profile_sort, CgProfileSort::None);
        assert_eq!(
            err(&["--symbol-ordering-file=o", "--call-graph-ordering-file=c", "a.o"]),
            "--symbol-ordering-file and --call-graph-order-file may not be used together"
        );
        // -Ttext=0 is the text address, not `-T text=0`; addresses are hexadecimal, and
        // -T<section> wins over --section-start whatever the order (lld).
        let c = cfg(&["-Ttext", "1000", "--section-start=.text=0x20", "--section-start", ".foo=0x10", "-Tbss=0x30", "a.o"]);
        let want: std::collections::HashMap<String, u64> =
            [(".text", 0x1000), (".foo", 0x10), (".bss", 0x30)].into_iter().map(|(n, a)| (n.to_string(), a)).collect();
        assert_eq!(c.section_start, want);
        assert_eq!(cfg(&["-Ttext=0", "a.o"]).section_start[".text"], 0);
        assert_eq!(err(&["-Ttext=0xg", "a.o"]), "invalid argument: -Ttext=0xg");
        assert_eq!(err(&["-Ttext-segment=0x1000", "a.o"]), "-Ttext-segment is not supported. Use --image-base if you intend to set the base address");
        assert_eq!(cfg(&["--image-base=0x400000", "a.o"]).image_base, Some(0x400000));
        assert_eq!(err(&["--image-base=x", "a.o"]), "--image-base: number expected, but got x");
        let c = cfg(&["-N", "-z", "max-page-size=0x10", "a.o"]);
        assert!(c.omagic && !c.z_relro && c.max_page_size == Some(1) && c.common_page_size == Some(1));
        assert_eq!(c.inputs, vec![InputArg::Static(true), InputArg::File("a.o".into())]);
        let w = warnings(&["-n", "-z", "max-page-size=0x10", "-z", "common-page-size=0x10", "a.o"]);
        assert_eq!(
            w,
            vec!["-z max-page-size set, but paging disabled by omagic or nmagic", "-z common-page-size set, but paging disabled by omagic or nmagic"]
        );
        assert_eq!(warnings(&["--image-base=0x100800", "a.o"]), vec!["--image-base: address isn't multiple of page size: 0x100800"]);
        let c = cfg(&["--start-lib", "a.o", "--end-lib", "b.o"]);
        assert_eq!(c.inputs, vec![InputArg::StartLib, InputArg::File("a.o".into()), InputArg::EndLib, InputArg::File("b.o".into())]);
        // lld says both (its group check sees the open --start-lib as a group).
        assert_eq!(err(&["--start-lib", "--start-lib", "a.o"]), "nested --start-lib\nmay not nest --start-lib in --start-group");
        assert_eq!(err(&["--end-lib", "a.o"]), "stray --end-lib");
        // lld takes --thinlto-cache-policy's value joined or separate.
        assert_eq!(cfg(&["--thinlto-cache-policy", "prune_after=1h", "a.o"]).lto.cache_policy.as_deref(), Some("prune_after=1h"));
        assert!(cfg(&["--gnu-unique", "--no-gnu-unique", "a.o"]).no_gnu_unique);
        let c = cfg(&["--no-relax", "--fatal-warnings", "--icf=none", "--error-limit=0", "-nostdlib", "a.o"]);
        assert!(!c.relax && c.fatal_warnings);
        let c = cfg(&["--allow-shlib-undefined", "--disable-new-dtags", "a.o"]);
        assert_eq!(c.allow_shlib_undefined, Some(true));
        assert!(!c.enable_new_dtags);
        assert_eq!(cfg(&["--no-allow-shlib-undefined", "a.o"]).allow_shlib_undefined, Some(false));
        assert!(cfg(&["--verbose", "a.o"]).verbose);
        assert!(cfg(&["-v", "a.o"]).print_version);
        assert!(matches!(parse(&args(&["-v"])), Ok(Action::Version)));
        assert!(matches!(parse(&args(&["--version", "a.o"])), Ok(Action::Version)));
        assert!(matches!(parse(&args(&["-V"])), Ok(Action::Version)));
        assert!(matches!(parse(&args(&["--help"])), Ok(Action::Help)));
        assert!(version_string().contains("compatible with GNU linkers"));
        assert!(help_text().contains("--as-needed"));
    }

    #[test]
    fn sysroot_applies_to_library_paths() {
        let c = cfg(&["-L=/usr/lib", "-L$SYSROOT/lib", "-L/plain", "--sysroot=/sr", "a.o"]);
        assert_eq!(c.library_paths, vec![PathBuf::from("/sr/usr/lib"), PathBuf::from("/sr/lib"), PathBuf::from("/plain")]);
        let c = cfg(&["-L=/usr/lib", "a.o"]);
        assert_eq!(c.library_paths, vec![PathBuf::from("/usr/lib")]);
    }

    #[test]
    fn response_file_quoting() {
        assert_eq!(tokenize_gnu("a b\t c\n d"), vec!["a", "b", "c", "d"]);
        assert_eq!(tokenize_gnu(r#""a b" 'c d' e\ f"#), vec!["a b", "c d", "e f"]);
        assert_eq!(tokenize_gnu(r#""a \"q\" \\ b" 'x\y'"#), vec![r#"a "q" \ b"#, r"x\y"]);
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
        assert_eq!(c.inputs, vec![InputArg::File("b c.o".into()), InputArg::File("a.o".into()), InputArg::Library("m".into())]);
        // A missing @file stays an argument.
        let c = cfg(&["@/nonexistent/dtld/rsp"]);
        assert_eq!(c.inputs, vec![InputArg::File("@/nonexistent/dtld/rsp".into())]);
        // Recursion is an error, not a hang.
        std::fs::write(&r2, format!("@{}", r1.display())).unwrap();
        let e = err(&[&format!("@{}", r1.display())]);
        assert!(e.starts_with("recursive expansion of: '"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
