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
use crate::driver::parse_num;
use crate::driver::CoffAction;
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

/// Options that take a value (lld MinGW's `Separate`/`Joined` forms), by name without dashes:
/// lld's MinGW option table (`MinGW/Options.td`) plus dtld's DTLTO options.
const WITH_VALUE: &[&str] = &[
    "o", "L", "l", "e", "entry", "m", "u", "undefined", "require-defined", "subsystem", "out-implib",
    "major-os-version", "minor-os-version", "major-subsystem-version", "minor-subsystem-version",
    "major-image-version", "minor-image-version", "image-base", "stack", "heap", "file-alignment",
    "section-alignment", "Map", "threads", "error-limit", "exclude-symbols", "icf", "plugin-opt",
    "mllvm", "Xlink", "delayload", "wrap", "output-def", "reproduce", "sysroot", "lto-O", "lto-CGO",
    "thinlto-cache-dir", "thinlto-jobs", "thinlto-distributor", "thinlto-remote-compiler",
    "thinlto-distributor-arg", "thinlto-remote-compiler-arg", "plugin", "O", "pdb", "build-id",
    "dependent-load-flag", "functionpadmin", "dll-search-prefix", "undefined-glob", "thinlto-cache-policy",
    "native-def", "rpath", "lto-cs-profile-file", "lto-sample-profile", "thinlto-index-only",
    "thinlto-object-suffix-replace", "thinlto-prefix-replace",
];

/// Flags (lld's MinGW table, with its aliases and the options it accepts and ignores), so that
/// an unknown option is an error as in lld.
const FLAGS: &[&str] = &[
    "Bdynamic", "Bstatic", "dy", "dn", "call_shared", "non_shared", "static", "shared", "dll",
    "whole-archive", "no-whole-archive", "s", "strip-all", "S", "strip-debug", "gc-sections",
    "no-gc-sections", "export-all-symbols", "exclude-all-symbols", "enable-auto-import",
    "disable-auto-import", "enable-runtime-pseudo-reloc", "disable-runtime-pseudo-reloc",
    "dynamicbase", "disable-dynamicbase", "no-dynamicbase", "nxcompat", "disable-nxcompat",
    "high-entropy-va", "disable-high-entropy-va", "tsaware", "disable-tsaware", "large-address-aware",
    "v", "version", "verbose", "help", "build-id", "allow-multiple-definition",
    "no-allow-multiple-definition", "demangle", "no-demangle", "insert-timestamp", "no-insert-timestamp",
    "no-seh", "disable-no-seh", "enable-stdcall-fixup", "disable-stdcall-fixup", "kill-at",
    "fatal-warnings", "no-fatal-warnings", "enable-reloc-section", "disable-reloc-section",
    "appcontainer", "guard-cf", "no-guard-cf", "guard-longjmp", "no-guard-longjmp", "###",
    "push-state", "pop-state", "functionpadmin", "fat-lto-objects", "no-fat-lto-objects",
    "lto-emit-asm", "lto-cs-profile-generate", "thinlto-emit-imports-files", "thinlto-index-only",
    // Accepted and ignored by lld's MinGW driver.
    "as-needed", "disable-auto-image-base", "enable-auto-image-base", "end-group", "start-group",
    "full-shutdown", "no-undefined", "pic-executable", "sort-common",
    // dtld: keep the DTLTO staging directory.
    "save-temps",
];

/// Parses a MinGW command line (argv without the program name, response files expanded).
pub fn parse(argv: &[String]) -> Result<CoffAction> {
    let args = crate::driver::expand_response_files(argv)?;
    let mut c = CoffConfig::new(true);
    c.debug = DebugMode::Dwarf;
    // lld's MinGW driver always passes `-opt:ref` or `-opt:noref`.
    c.gc = Some(false);
    c.icf = Some(false);
    c.build_id = true;
    c.alternate_names.push(("__image_base__".into(), "__ImageBase".into()));
    let mut errors = Vec::new();
    let mut search: Vec<PathBuf> = Vec::new();
    // Positional items in order: inputs, -l, and the state switches.
    enum Pos {
        Input(String),
        Lib(String),
        Whole(bool),
        Static(bool),
        /// `--push-state` / `--pop-state`: save and restore `-Bstatic` and `--whole-archive`.
        Push,
        Pop,
    }
    let mut dll_prefix: Option<String> = None;
    let mut pos = Vec::new();
    let mut have_input = false;
    let (mut verbose_v, mut version) = (false, false);
    let (mut os_major, mut os_minor) = (None::<String>, None::<String>);
    let (mut ss_major, mut ss_minor) = (None::<String>, None::<String>);
    let mut subsystem: Option<String> = None;
    let (mut strip_all, mut strip_debug, mut build_id) = (false, false, None::<bool>);
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if !a.starts_with('-') || a == "-" {
            pos.push(Pos::Input(a.clone()));
            have_input = true;
            continue;
        }
        // Split `--name=value` / `-name=value`; then try the whole name, then one-letter options
        // with a joined value (`-lfoo`, `-L/dir`, `-omain`, `-mi386pep`).
        let body = a.trim_start_matches('-');
        let (name, joined): (&str, Option<String>) = match body.split_once('=') {
            Some((n, v)) if WITH_VALUE.contains(&n) || n == "build-id" => (n, Some(v.to_string())),
            _ => (body, None),
        };
        let (name, value) = if FLAGS.contains(&name) && joined.is_none() {
            (name.to_string(), None)
        } else if WITH_VALUE.contains(&name) {
            match joined {
                Some(v) => (name.to_string(), Some(v)),
                None if name == "build-id" => (name.to_string(), None),
                None => match args.get(i) {
                    Some(v) => {
                        i += 1;
                        (name.to_string(), Some(v.clone()))
                    }
                    None => {
                        errors.push(format!("{a}: missing argument"));
                        continue;
                    }
                },
            }
        } else if !a.starts_with("--") && body.len() > 1 && matches!(body.as_bytes()[0], b'o' | b'L' | b'l' | b'e' | b'm' | b'u' | b'O') {
            (body[..1].to_string(), Some(body[1..].to_string()))
        } else {
            errors.push(format!("unknown argument: {a}"));
            continue;
        };
        let v = value.unwrap_or_default();
        match name.as_str() {
            "o" => c.output = PathBuf::from(v),
            "L" => search.push(PathBuf::from(v)),
            "l" => {
                pos.push(Pos::Lib(v));
                have_input = true;
            }
            "e" | "entry" => c.entry = Some(v),
            "m" => {
                if v != "i386pep" {
                    errors.push(format!("unknown parameter: -m{v}"));
                }
            }
            "u" | "undefined" => c.include_optional.push(v),
            "require-defined" => c.includes.push(v),
            "subsystem" => subsystem = Some(v),
            "out-implib" => c.out_implib = Some(PathBuf::from(v)),
            // lld's MinGW driver passes `-Map` on as `-lldmap:`.
            "Map" | "map" => c.lldmap = Some(PathBuf::from(v)),
            "major-os-version" => os_major = Some(v),
            "minor-os-version" => os_minor = Some(v),
            "major-subsystem-version" => ss_major = Some(v),
            "minor-subsystem-version" => ss_minor = Some(v),
            // lld's MinGW driver accepts and ignores these.
            "major-image-version" | "minor-image-version" => {}
            "image-base" => c.image_base = parse_num(&v).or_else(|| bad(&mut errors, "-base", &v)),
            "stack" => c.stack = pair(&v, c.stack, &mut errors),
            "heap" => c.heap = pair(&v, c.heap, &mut errors),
            "file-alignment" => c.file_align = parse_num(&v).unwrap_or(512) as u32,
            "section-alignment" => c.section_align = parse_num(&v).unwrap_or(4096) as u32,
            "threads" => c.threads = v.parse().ok(),
            "error-limit" => match v.parse::<usize>() {
                Ok(n) => c.error_limit = n,
                Err(_) => errors.push(format!("{a}: number expected, but got {v}")),
            },
            "exclude-symbols" => c.exclude_symbols.extend(v.split(',').map(String::from)),
            "icf" => match v.as_str() {
                "all" => c.icf = Some(true),
                "safe" => {
                    c.icf = Some(true);
                    c.icf_safe = true;
                }
                "none" => c.icf = Some(false),
                _ => errors.push(format!("unknown parameter: --icf={v}")),
            },
            "thinlto-cache-dir" => c.lto.cache_dir = Some(v),
            "thinlto-jobs" => c.lto.jobs = Some(v),
            "thinlto-distributor" => c.lto.distributor = Some(v),
            "thinlto-remote-compiler" => c.lto.remote_compiler = Some(v),
            "thinlto-distributor-arg" => c.lto.distributor_args.push(v),
            "thinlto-remote-compiler-arg" => c.lto.remote_compiler_args.push(v),
            "lto-O" => c.lto.opt_level = v.parse().ok(),
            "mllvm" => c.lto.mllvm.push(v),
            "plugin" => c.lto.plugin = Some(v),
            "plugin-opt" => {
                c.lto.plugin_opts.push(v.clone());
                if let Some(o) = v.strip_prefix("O") {
                    c.lto.opt_level = o.parse().ok();
                } else if let Some(j) = v.strip_prefix("jobs=") {
                    c.lto.jobs = Some(j.to_string());
                }
            }
            "Bdynamic" | "dy" | "call_shared" => pos.push(Pos::Static(false)),
            "Bstatic" | "dn" | "non_shared" | "static" => pos.push(Pos::Static(true)),
            "shared" | "dll" => c.dll = true,
            "whole-archive" => pos.push(Pos::Whole(true)),
            "no-whole-archive" => pos.push(Pos::Whole(false)),
            "gc-sections" => c.gc = Some(true),
            "no-gc-sections" => c.gc = Some(false),
            "s" | "strip-all" => strip_all = true,
            "S" | "strip-debug" => strip_debug = true,
            "export-all-symbols" => c.export_all = true,
            "exclude-all-symbols" => c.exclude_all = true,
            "enable-auto-import" => c.auto_import = true,
            "disable-auto-import" => c.auto_import = false,
            "enable-runtime-pseudo-reloc" => c.pseudo_relocs = true,
            "disable-runtime-pseudo-reloc" => c.pseudo_relocs = false,
            "dynamicbase" => c.dynamic_base = true,
            "disable-dynamicbase" => c.dynamic_base = false,
            "nxcompat" => c.nx_compat = true,
            "disable-nxcompat" => c.nx_compat = false,
            "high-entropy-va" => c.high_entropy_va = true,
            "disable-high-entropy-va" => c.high_entropy_va = false,
            "tsaware" => c.tsaware = true,
            "disable-tsaware" => c.tsaware = false,
            "large-address-aware" => c.large_address_aware = true,
            "enable-reloc-section" => c.fixed = false,
            "disable-reloc-section" => c.fixed = true,
            "insert-timestamp" => c.timestamp = None,
            "no-insert-timestamp" => c.timestamp = Some(0),
            "build-id" => build_id = Some(v != "none"),
            "no-build-id" => build_id = Some(false),
            "allow-multiple-definition" => c.allow_multiple = true,
            "no-allow-multiple-definition" => c.allow_multiple = false,
            "v" => verbose_v = true,
            "version" => version = true,
            "verbose" => c.verbose = true,
            "demangle" => c.demangle = true,
            "no-demangle" => c.demangle = false,
            "save-temps" => c.lto.save_temps = true,
            "help" => return Ok(CoffAction::Help),
            "thinlto-index-only" if v.is_empty() => c.lto.extra.push("--thinlto-index-only".into()),
            "thinlto-index-only" => c.lto.extra.push(format!("--thinlto-index-only={v}")),
            "thinlto-emit-imports-files" => c.lto.extra.push("--thinlto-emit-imports-files".into()),
            "thinlto-prefix-replace" => c.lto.extra.push(format!("--thinlto-prefix-replace={v}")),
            "thinlto-object-suffix-replace" => c.lto.extra.push(format!("--thinlto-object-suffix-replace={v}")),
            "thinlto-cache-policy" => c.lto.extra.push(format!("--thinlto-cache-policy={v}")),
            "lto-sample-profile" => c.lto.extra.push(format!("--lto-sample-profile={v}")),
            "lto-cs-profile-generate" => c.lto.extra.push("--lto-cs-profile-generate".into()),
            "lto-cs-profile-file" => c.lto.extra.push(format!("--lto-cs-profile-file={v}")),
            "lto-emit-asm" => c.lto.extra.push("--lto-emit-asm".into()),
            "fatal-warnings" => c.diag.fatal_warnings = true,
            "no-fatal-warnings" => c.diag.fatal_warnings = false,
            "wrap" => c.wrap.push(v),
            "output-def" => c.output_def = Some(PathBuf::from(v)),
            "appcontainer" => c.appcontainer = true,
            "push-state" => pos.push(Pos::Push),
            "pop-state" => pos.push(Pos::Pop),
            "dll-search-prefix" => dll_prefix = Some(v),
            "rpath" => c.diag.warn(&format!("ignoring -rpath: {v}")),
            "guard-cf" => {
                c.guard_cf = true;
                c.guard_longjmp = true;
            }
            "no-guard-cf" => {
                c.guard_cf = false;
                c.guard_longjmp = false;
            }
            "guard-longjmp" => c.guard_longjmp = true,
            "no-guard-longjmp" => c.guard_longjmp = false,
            "pdb" => {
                // lld's MinGW driver: `--pdb=` (empty) names the PDB after the output.
                c.debug_pdb = true;
                if !v.is_empty() {
                    c.pdb = Some(PathBuf::from(v));
                }
            }
            // Without effect on x86-64 (lld passes them to lld-link, which ignores them there),
            // or accepted and ignored by lld's MinGW driver.
            "kill-at" | "no-seh" | "disable-no-seh" | "enable-stdcall-fixup" | "disable-stdcall-fixup" | "as-needed"
            | "disable-auto-image-base" | "enable-auto-image-base" | "end-group" | "start-group" | "full-shutdown"
            | "no-undefined" | "pic-executable" | "sort-common" | "O" | "sysroot" | "major-image-version-ignored"
            | "fat-lto-objects" | "no-fat-lto-objects" | "lto-CGO" => {}
            // lld options dtld does not implement: refused by name rather than silently ignored.
            _ => errors.push(format!("{a}: not supported by dtld")),
        }
    }
    // lld's MinGW driver: `-S` keeps the symbol table, `-s` drops it too; either one drops the
    // build id unless `--build-id` asks for it.
    c.debug = if strip_debug {
        DebugMode::Symtab
    } else if strip_all {
        DebugMode::None
    } else {
        DebugMode::Dwarf
    };
    c.build_id = build_id.unwrap_or(!strip_all && !strip_debug);
    if let Some(s) = &subsystem {
        let (name, ver) = match s.split_once(':') {
            Some((n, v)) => (n, Some(v)),
            None => (s.as_str(), None),
        };
        c.subsystem = Some(match subsystem_id(name) {
            Some(id) => id,
            None => {
                errors.push(format!("unknown subsystem: {name}"));
                0
            }
        });
        if let Some(v) = ver {
            let (ma, mi) = v.split_once('.').unwrap_or((v, "0"));
            ss_major.get_or_insert(ma.to_string());
            ss_minor.get_or_insert(mi.to_string());
        }
    }
    if os_major.is_some() || os_minor.is_some() {
        c.os_version = Some((num(os_major.as_deref().unwrap_or("6"), &mut errors), num(os_minor.as_deref().unwrap_or("0"), &mut errors)));
    }
    if ss_major.is_some() || ss_minor.is_some() {
        c.subsystem_version = Some((num(ss_major.as_deref().unwrap_or("6"), &mut errors), num(ss_minor.as_deref().unwrap_or("0"), &mut errors)));
    }
    if version || verbose_v {
        c.print_version = true;
    }
    if version || (verbose_v && !have_input) {
        return Ok(CoffAction::Version);
    }
    if !errors.is_empty() {
        return Err(Error::many(errors));
    }
    if !have_input {
        crate::bail!("no input files");
    }
    if c.output.as_os_str().is_empty() {
        c.output = PathBuf::from(if c.dll { "a.dll" } else { "a.exe" });
    }
    let (mut whole, mut bstatic) = (false, false);
    let mut states = Vec::new();
    // lld's MinGW driver passes a `.def` input as `-def:` (lld-link reads the last one).
    let mut def_file = None;
    for p in pos {
        match p {
            Pos::Input(f) if f.len() >= 4 && f.as_bytes()[f.len() - 4..].eq_ignore_ascii_case(b".def") => def_file = Some(f),
            Pos::Input(f) => c.inputs.push(CoffInput::new(PathBuf::from(f), whole)),
            Pos::Lib(n) => match search_library(&n, &search, bstatic, dll_prefix.as_deref().unwrap_or("lib")) {
                Some(path) => c.inputs.push(CoffInput::new(path, whole)),
                None => errors.push(format!("unable to find library -l{n}")),
            },
            Pos::Whole(b) => whole = b,
            Pos::Static(b) => bstatic = b,
            Pos::Push => states.push((whole, bstatic)),
            Pos::Pop => match states.pop() {
                Some((w, b)) => (whole, bstatic) = (w, b),
                None => errors.push("unbalanced --push-state/--pop-state".into()),
            },
        }
    }
    if !errors.is_empty() {
        return Err(Error::many(errors));
    }
    c.lib_paths = search;
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
    fn unknown_option() {
        let e = parse(&s(&["-m", "i386pep", "--bogus", "x.o"])).err().unwrap();
        assert_eq!(e.messages, vec!["unknown argument: --bogus".to_string()]);
    }
}
