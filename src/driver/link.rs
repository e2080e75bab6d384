//! lld-link's command line (the MSVC flavour), chosen when dtld runs as `lld-link` or with
//! `-flavor link`.
//!
//! Options start with `/` or `-`, are case-insensitive, and take their value after a colon
//! (`/out:x.exe`, `-entry:main`). The table below is lld-link's whole option set (lld's
//! `COFF/Options.td`), so that every option is either applied, accepted as lld accepts it (the
//! link.exe compatibility no-ops), or refused or warned about by name — never read as an input.
//! As in LLVM's option parser, an argument that matches no option is an input file when it
//! starts with `/` (an absolute path on Unix) and an ignored unknown argument (with lld-link's
//! warning) when it starts with `-`. The result is the same `CoffConfig` the MinGW driver fills.

use std::path::PathBuf;

use crate::coff::config::{CoffConfig, CoffInput, DebugMode};
use crate::driver::mingw::subsystem_id;
use crate::driver::parse_num;
use crate::driver::CoffAction;
use crate::error::{Error, Result};

/// How an option takes its value (LLVM's option kinds as lld-link's table uses them).
#[derive(Clone, Copy, PartialEq, Eq)]
enum K {
    /// `/name` only.
    Flag,
    /// `/name:value`.
    Joined,
    /// `/name` and `/name:no` (lld's `B<>`): the value is "" or "no".
    Bool,
}

/// lld-link's options (lowercase names; `Joined` ones without their colon).
const OPTS: &[(&str, K)] = &[
    ("align", K::Joined),
    ("aligncomm", K::Joined),
    ("alternatename", K::Joined),
    ("base", K::Joined),
    ("defaultlib", K::Joined),
    ("delayload", K::Joined),
    ("diasdkdir", K::Joined),
    ("dwodir", K::Joined),
    ("entry", K::Joined),
    ("errorlimit", K::Joined),
    ("exclude-symbols", K::Joined),
    ("export", K::Joined),
    ("failifmismatch", K::Joined),
    ("filealign", K::Joined),
    ("functionpadmin", K::Flag),
    ("functionpadmin", K::Joined),
    ("dependentloadflag", K::Flag),
    ("dependentloadflag", K::Joined),
    ("guard", K::Joined),
    ("heap", K::Joined),
    ("ignore", K::Joined),
    ("implib", K::Joined),
    ("noimplib", K::Flag),
    ("lib", K::Flag),
    ("libpath", K::Joined),
    ("linkrepro", K::Joined),
    ("lldignoreenv", K::Flag),
    ("lldltocache", K::Joined),
    ("lldltocachepolicy", K::Joined),
    ("lldsavetemps", K::Flag),
    ("lldsavetemps", K::Joined),
    ("lto-sample-profile", K::Joined),
    ("machine", K::Joined),
    ("merge", K::Joined),
    ("mllvm", K::Joined),
    ("nodefaultlib", K::Joined),
    ("opt", K::Joined),
    ("order", K::Joined),
    ("out", K::Joined),
    ("natvis", K::Joined),
    ("pdb", K::Joined),
    ("pdbaltpath", K::Joined),
    ("pdbpagesize", K::Joined),
    ("pdbstripped", K::Joined),
    ("pdbstream", K::Joined),
    ("section", K::Joined),
    ("stack", K::Joined),
    ("stub", K::Joined),
    ("subsystem", K::Joined),
    ("timestamp", K::Joined),
    ("vctoolsdir", K::Joined),
    ("vctoolsversion", K::Joined),
    ("version", K::Joined),
    ("wholearchive", K::Joined),
    ("winsdkdir", K::Joined),
    ("winsdkversion", K::Joined),
    ("winsysroot", K::Joined),
    ("disallowlib", K::Joined),
    ("manifest", K::Flag),
    ("manifest", K::Joined),
    ("manifestuac", K::Joined),
    ("manifestfile", K::Joined),
    ("manifestdependency", K::Joined),
    ("manifestinput", K::Joined),
    ("include", K::Joined),
    ("def", K::Joined),
    ("defarm64native", K::Joined),
    ("debug", K::Flag),
    ("debug", K::Joined),
    ("debugtype", K::Joined),
    ("dll", K::Flag),
    ("driver", K::Flag),
    ("driver:wdm", K::Flag),
    ("driver:uponly", K::Flag),
    ("driver:wdm,uponly", K::Flag),
    ("driver:uponly,wdm", K::Flag),
    ("nodefaultlib", K::Flag),
    ("noentry", K::Flag),
    ("profile", K::Flag),
    ("brepro", K::Flag),
    ("reproduce", K::Joined),
    ("swaprun", K::Joined),
    ("swaprun:cd", K::Flag),
    ("swaprun:net", K::Flag),
    ("verbose", K::Flag),
    ("wholearchive", K::Flag),
    ("release", K::Flag),
    ("force", K::Flag),
    ("force:unresolved", K::Flag),
    ("force:multiple", K::Flag),
    ("force:multipleres", K::Flag),
    ("wx", K::Bool),
    ("allowbind", K::Bool),
    ("allowisolation", K::Bool),
    ("appcontainer", K::Bool),
    ("cetcompat", K::Bool),
    ("dynamicbase", K::Bool),
    ("fixed", K::Bool),
    ("highentropyva", K::Bool),
    ("incremental", K::Bool),
    ("inferasanlibs", K::Bool),
    ("integritycheck", K::Bool),
    ("largeaddressaware", K::Bool),
    ("nxcompat", K::Bool),
    ("safeseh", K::Bool),
    ("tsaware", K::Bool),
    ("help", K::Flag),
    ("?", K::Flag),
    ("??", K::Flag),
    ("auto-import", K::Bool),
    ("runtime-pseudo-reloc", K::Bool),
    ("end-lib", K::Flag),
    ("exclude-all-symbols", K::Flag),
    ("export-all-symbols", K::Flag),
    ("demangle", K::Bool),
    ("includeoptional", K::Joined),
    ("kill-at", K::Flag),
    ("lld-allow-duplicate-weak", K::Bool),
    ("lldemit", K::Joined),
    ("lldmingw", K::Flag),
    ("noseh", K::Flag),
    ("osversion", K::Joined),
    ("output-def", K::Joined),
    ("pdbsourcepath", K::Joined),
    ("start-lib", K::Flag),
    ("stdcall-fixup", K::Bool),
    ("thinlto-emit-imports-files", K::Flag),
    ("thinlto-index-only", K::Flag),
    ("thinlto-index-only", K::Joined),
    ("thinlto-object-suffix-replace", K::Joined),
    ("thinlto-prefix-replace", K::Joined),
    ("thinlto-distributor", K::Joined),
    ("thinlto-distributor-arg", K::Joined),
    ("thinlto-remote-compiler", K::Joined),
    ("thinlto-remote-compiler-arg", K::Joined),
    ("lto-obj-path", K::Joined),
    ("lto-cs-profile-generate", K::Flag),
    ("lto-cs-profile-file", K::Joined),
    ("lto-pgo-warn-mismatch", K::Bool),
    ("threads", K::Joined),
    ("call-graph-ordering-file", K::Joined),
    ("call-graph-profile-sort", K::Bool),
    ("print-symbol-order", K::Joined),
    ("wrap", K::Joined),
    ("vfsoverlay", K::Joined),
    ("time", K::Flag),
    ("build-id", K::Bool),
    ("includeglob", K::Joined),
    ("lldmap", K::Flag),
    ("lldmap", K::Joined),
    ("map", K::Flag),
    ("map", K::Joined),
    ("mapinfo", K::Joined),
    ("print-search-paths", K::Flag),
    ("summary", K::Flag),
    // link.exe compatibility: accepted, no effect (as in lld).
    ("ignoreidl", K::Flag),
    ("ltcg", K::Flag),
    ("assemblydebug", K::Flag),
    ("nologo", K::Flag),
    ("throwingnew", K::Flag),
    ("editandcontinue", K::Flag),
    ("fastfail", K::Flag),
    ("kernel", K::Flag),
    ("pdbcompress", K::Flag),
    ("emitpogophaseinfo", K::Flag),
    ("noexp", K::Flag),
    ("delay", K::Joined),
    ("errorreport", K::Joined),
    ("idlout", K::Joined),
    ("ilk", K::Joined),
    ("ltcg", K::Joined),
    ("assemblydebug", K::Joined),
    ("ltcgout", K::Joined),
    ("maxilksize", K::Joined),
    ("tlbid", K::Joined),
    ("tlbout", K::Joined),
    ("verbose", K::Joined),
    ("guardsym", K::Joined),
    ("arm64xsameaddress", K::Joined),
];

/// The options lld itself accepts and ignores (link.exe compatibility).
const NO_EFFECT: &[&str] = &[
    "ignoreidl",
    "ltcg",
    "assemblydebug",
    "nologo",
    "throwingnew",
    "editandcontinue",
    "fastfail",
    "kernel",
    "pdbcompress",
    "emitpogophaseinfo",
    "noexp",
    "delay",
    "errorreport",
    "idlout",
    "ilk",
    "ltcgout",
    "maxilksize",
    "tlbid",
    "tlbout",
    "guardsym",
    "arm64xsameaddress",
    "diasdkdir",
    "vctoolsdir",
    "vctoolsversion",
    "winsdkdir",
    "winsdkversion",
    "winsysroot",
    "lldignoreenv",
    "natvis",
    "pdbpagesize",
    "pdbsourcepath",
    "pdbstream",
    "pdbstripped",
    "print-search-paths",
    "vfsoverlay",
    "time",
    "summary",
    "safeseh",
    "noseh",
    "lld-allow-duplicate-weak",
    "stdcall-fixup",
    "kill-at",
    "inferasanlibs",
    "call-graph-profile-sort",
    "lto-pgo-warn-mismatch",
    "dependentloadflag",
    "manifestuac",
    "manifestfile",
    "manifestdependency",
    "manifestinput",
    "dwodir",
];

/// One command-line argument matched against the table: (canonical name, value).
/// `None`: not an option.
fn lookup(arg: &str) -> Option<(&'static str, String)> {
    let body = ["/??", "-??", "/?", "-?", "/", "-"].iter().find_map(|p| arg.strip_prefix(p).map(|b| (p.len(), b)));
    let (plen, body) = body?;
    // `/?` and `/??` are help.
    if body.is_empty() {
        return (plen > 1).then_some(("help", String::new()));
    }
    let lower = body.to_ascii_lowercase();
    // Exact flags (and the `:no` forms of boolean options) first, then the longest joined name.
    for &(name, k) in OPTS {
        match k {
            K::Flag if lower == name => return Some((name, String::new())),
            K::Bool if lower == name => return Some((name, String::new())),
            K::Bool if lower.strip_prefix(name) == Some(":no") => return Some((name, "no".into())),
            _ => {}
        }
    }
    let mut best: Option<(&'static str, String)> = None;
    for &(name, k) in OPTS {
        if k != K::Joined || lower.len() <= name.len() || !lower.starts_with(name) || lower.as_bytes()[name.len()] != b':' {
            continue;
        }
        if best.as_ref().is_none_or(|b| b.0.len() < name.len()) {
            best = Some((name, body[name.len() + 1..].to_string()));
        }
    }
    best
}

/// lld-link's response files: Windows quoting unless `--rsp-quoting=posix`.
fn expand(argv: &[String], posix: bool, depth: usize, out: &mut Vec<String>) -> Result<()> {
    for a in argv {
        let Some(name) = a.strip_prefix('@') else {
            out.push(a.clone());
            continue;
        };
        let Ok(bytes) = std::fs::read(name) else {
            out.push(a.clone());
            continue;
        };
        if depth > 64 {
            crate::bail!("recursive expansion of: '{name}'");
        }
        let text = String::from_utf8_lossy(&bytes);
        let words = if posix { crate::driver::tokenize_gnu(&text) } else { crate::coff::drectve::tokenize(&text) };
        expand(&words, posix, depth + 1, out)?;
    }
    Ok(())
}

/// Expands response files, honouring `--rsp-quoting=` (lld's `ArgParser::parse`).
fn expand_response_files(argv: &[String]) -> Result<Vec<String>> {
    let mut posix = false;
    for a in argv {
        if let Some(q) = a.strip_prefix("--rsp-quoting=") {
            posix = match q {
                "posix" => true,
                "windows" => false,
                _ => crate::bail!("invalid response file quoting: {q}"),
            };
        }
    }
    let mut out = Vec::new();
    expand(argv, posix, 0, &mut out)?;
    Ok(out)
}

/// lld-link's `findFile`: a name without a directory is looked up in the current directory,
/// then the `/libpath:` directories, also with `.obj` appended when it has no extension.
fn find_file(name: &str, lib_paths: &[PathBuf]) -> PathBuf {
    if name.contains(['/', '\\']) {
        return PathBuf::from(name);
    }
    let has_ext = name.contains('.');
    let dirs = std::iter::once(PathBuf::new()).chain(lib_paths.iter().cloned());
    for d in dirs {
        let p = d.join(name);
        if p.exists() {
            return p;
        }
        if !has_ext {
            let p = d.join(format!("{name}.obj"));
            if p.exists() {
                return p;
            }
        }
    }
    PathBuf::from(name)
}

/// lld's `parseVersion`: `major[.minor]`.
fn version(v: &str, errors: &mut Vec<String>) -> (u16, u16) {
    let (ma, mi) = v.split_once('.').unwrap_or((v, "0"));
    match (ma.parse(), mi.parse()) {
        (Ok(a), Ok(b)) => (a, b),
        _ => {
            errors.push(format!("invalid number: {v}"));
            (0, 0)
        }
    }
}

pub fn parse(argv: &[String]) -> Result<CoffAction> {
    // `/lib` as the first argument: lld-link acts as llvm-lib.
    if argv.first().is_some_and(|a| lookup(a).is_some_and(|(n, _)| n == "lib")) {
        crate::bail!("/lib (llvm-lib) is not supported by dtld");
    }
    // lld-link's `LINK` (before the command line) and `_LINK_` (after it) environment variables.
    let mut all = Vec::new();
    if !argv.iter().any(|a| lookup(a).is_some_and(|(n, _)| n == "lldignoreenv")) {
        if let Ok(e) = std::env::var("LINK") {
            all.extend(crate::coff::drectve::tokenize(&e));
        }
        all.extend(argv.iter().cloned());
        if let Ok(e) = std::env::var("_LINK_") {
            all.extend(crate::coff::drectve::tokenize(&e));
        }
    } else {
        all.extend(argv.iter().cloned());
    }
    let args = expand_response_files(&all)?;
    let mut c = CoffConfig::new(false);
    // `/WX` first: it turns the parser's own warnings into errors (lld's `ArgParser::parse`).
    for a in &args {
        if let Some(("wx", v)) = lookup(a) {
            c.diag.fatal_warnings = v.is_empty();
        }
    }
    let mut errors = Vec::new();
    let mut have_input = false;
    let mut whole_all = false;
    let mut whole_paths = Vec::new();
    // Inputs in order, with whether they are between `/start-lib` and `/end-lib`.
    let mut inputs: Vec<(String, bool)> = Vec::new();
    let mut in_lib = false;
    let mut def_file = None;
    // `/lldmap` and `/map` (`Some("")`: named after the output).
    let mut lldmap: Option<String> = None;
    let mut map: Option<String> = None;
    let mut implib_given = false;
    let mut profile = false;
    for a in &args {
        if let Some(rest) = a.strip_prefix("--") {
            match rest {
                "version" => return Ok(CoffAction::Version),
                "color-diagnostics" | "no-color-diagnostics" => {}
                _ if rest.starts_with("color-diagnostics=") || rest.starts_with("rsp-quoting=") || rest.starts_with("time-trace") => {}
                _ => c.diag.warn(&format!("ignoring unknown argument '{a}'")),
            }
            continue;
        }
        let Some((name, v)) = lookup(a) else {
            if a.starts_with('-') {
                c.diag.warn(&format!("ignoring unknown argument '{a}'"));
            } else {
                inputs.push((a.clone(), in_lib));
                have_input = true;
            }
            continue;
        };
        let yes = v.is_empty();
        let ignored = |c: &CoffConfig, what: &str| c.diag.warn(&format!("{what} is not supported; ignored"));
        match name {
            _ if NO_EFFECT.contains(&name) => {}
            "out" => c.output = PathBuf::from(v),
            "entry" => c.entry = Some(v),
            "noentry" => c.no_entry = true,
            "subsystem" => {
                let (n, ver) = match v.split_once(',') {
                    Some((n, ver)) => (n, Some(ver)),
                    None => (v.as_str(), None),
                };
                match subsystem_id(n) {
                    Some(id) => c.subsystem = Some(id),
                    None => errors.push(format!("unknown subsystem: {n}")),
                }
                if let Some(ver) = ver {
                    c.subsystem_version = Some(version(ver, &mut errors));
                }
            }
            "osversion" => c.os_version = Some(version(&v, &mut errors)),
            "version" => c.image_version = version(&v, &mut errors),
            "help" => return Ok(CoffAction::Help),
            "dll" => c.dll = true,
            "libpath" => c.lib_paths.push(PathBuf::from(v)),
            "defaultlib" => c.default_libs.push(v),
            "nodefaultlib" if v.is_empty() => c.no_default_all = true,
            "nodefaultlib" | "disallowlib" => c.no_default_libs.push(v.to_ascii_lowercase()),
            "base" => c.image_base = parse_num(v.split(',').next().unwrap_or("")),
            "stack" | "heap" => {
                let mut it = v.split(',').map(parse_num);
                let r = it.next().flatten().unwrap_or(1 << 20);
                let cm = it.next().flatten().unwrap_or(4096);
                if name == "stack" {
                    c.stack = (r, cm)
                } else {
                    c.heap = (r, cm)
                }
            }
            "include" => c.includes.push(v),
            "includeoptional" => c.include_optional.push(v),
            "alternatename" => match v.split_once('=') {
                Some((a, b)) if !a.is_empty() && !b.is_empty() => {
                    if let Some((_, old)) = c.alternate_names.iter().find(|(f, _)| f == a) {
                        if old != b {
                            errors.push(format!("/alternatename: conflicts: {v}"));
                        }
                    }
                    c.alternate_names.push((a.to_string(), b.to_string()))
                }
                _ => errors.push(format!("/alternatename: invalid argument: {v}")),
            },
            "export" => match crate::coff::drectve::parse_export(&v) {
                Ok(e) => c.exports.push(e),
                Err(e) => errors.push(e),
            },
            "implib" => {
                c.out_implib = Some(PathBuf::from(v));
                implib_given = true;
            }
            "noimplib" => c.no_implib = true,
            "lldmap" => lldmap = Some(v),
            "map" => map = Some(v),
            "opt" => {
                for o in v.split(',') {
                    match o.to_ascii_lowercase().as_str() {
                        "ref" => c.gc = Some(true),
                        "noref" => c.gc = Some(false),
                        "icf" => c.icf = Some(true),
                        "safeicf" => {
                            c.icf = Some(true);
                            c.icf_safe = true;
                        }
                        "noicf" => c.icf = Some(false),
                        o if o.starts_with("icf=") => c.icf = Some(true),
                        "lldtailmerge" => c.tail_merge = Some(true),
                        "nolldtailmerge" => c.tail_merge = Some(false),
                        "lbr" | "nolbr" | "ltodebugpassmanager" => {}
                        o if o.starts_with("lldlto=") => c.lto.opt_level = o[7..].parse().ok(),
                        o if o.starts_with("lldltojobs=") => c.lto.jobs = Some(o[11..].to_string()),
                        o if o.starts_with("lldltopartitions=") || o.starts_with("lldltocgo=") => {}
                        _ => errors.push(format!("/opt: unknown option: {o}")),
                    }
                }
            }
            "def" => def_file = Some(v),
            "machine" => {
                if !v.eq_ignore_ascii_case("x64") && !v.eq_ignore_ascii_case("amd64") {
                    errors.push(format!("unknown /machine argument: {v}"));
                }
            }
            "debug" => match v.to_ascii_lowercase().as_str() {
                "" | "full" | "ghash" | "noghash" => {
                    c.debug = DebugMode::Dwarf;
                    c.debug_pdb = true;
                }
                "fastlink" => {
                    c.diag.warn("/debug:fastlink unsupported; using /debug:full");
                    c.debug = DebugMode::Dwarf;
                    c.debug_pdb = true;
                }
                "none" => {
                    c.debug = DebugMode::None;
                    c.debug_pdb = false;
                }
                "dwarf" => c.debug = DebugMode::Dwarf,
                "symtab" => c.debug = DebugMode::Symtab,
                o => errors.push(format!("/debug: unknown option: {o}")),
            },
            "debugtype" => {
                for t in v.split(',') {
                    if !matches!(t.to_ascii_lowercase().as_str(), "cv" | "pdata" | "fixup" | "dwarf") {
                        // lld warns and goes on (parseDebugTypes).
                        c.diag.warn(&format!("/debugtype: unknown option '{t}'"));
                    }
                }
            }
            "pdb" => c.pdb = Some(PathBuf::from(v)),
            "pdbaltpath" => c.pdb_altpath = Some(v),
            "filealign" => c.file_align = parse_num(&v).unwrap_or(512) as u32,
            "align" => c.section_align = parse_num(&v).unwrap_or(4096) as u32,
            "aligncomm" => match v.split_once(',').and_then(|(n, a)| Some((n, a.parse::<u32>().ok()?))) {
                Some((n, a)) if a < 32 => c.align_comm.push((n.to_string(), 1 << a)),
                _ => errors.push(format!("/aligncomm: invalid argument: {v}")),
            },
            "timestamp" => match v.parse() {
                Ok(t) => c.timestamp = Some(t),
                Err(_) => errors.push(format!("invalid timestamp: {v}.  Expected 32-bit integer")),
            },
            "brepro" => c.timestamp = Some(0),
            "dynamicbase" => c.dynamic_base = yes,
            "nxcompat" => c.nx_compat = yes,
            "highentropyva" => c.high_entropy_va = yes,
            "largeaddressaware" => c.large_address_aware = yes,
            "tsaware" => c.tsaware = yes,
            "fixed" => c.fixed = yes,
            "allowbind" => c.allow_bind = yes,
            "allowisolation" => c.allow_isolation = yes,
            "appcontainer" => c.appcontainer = yes,
            "integritycheck" => c.integrity_check = yes,
            "wx" => {}
            "swaprun" | "swaprun:cd" | "swaprun:net" => {
                let v = if name == "swaprun" { v } else { name[8..].to_string() };
                for w in v.split(',') {
                    match w.to_ascii_lowercase().as_str() {
                        "cd" => c.swaprun |= object::pe::IMAGE_FILE_REMOVABLE_RUN_FROM_SWAP,
                        "net" => c.swaprun |= object::pe::IMAGE_FILE_NET_RUN_FROM_SWAP,
                        "" => errors.push("/swaprun: missing argument".into()),
                        w if w.starts_with("cd") || w.starts_with("net") => errors.push(format!("/swaprun: invalid argument: {w}")),
                        _ => errors.push(format!("/swaprun: invalid argument: {w}")),
                    }
                }
                if v.is_empty() {
                    errors.push("/swaprun: missing argument".into());
                }
            }
            "driver" => c.driver = Some((false, false)),
            "driver:wdm" => c.driver = Some((true, false)),
            "driver:uponly" => c.driver = Some((false, true)),
            "driver:wdm,uponly" | "driver:uponly,wdm" => c.driver = Some((true, true)),
            "force" => {
                c.allow_multiple = true;
                c.force_unresolved = true;
            }
            "force:multiple" | "force:multipleres" => c.allow_multiple = true,
            "force:unresolved" => c.force_unresolved = true,
            "wholearchive" if v.is_empty() => whole_all = true,
            "wholearchive" => {
                whole_paths.push(v.clone());
                inputs.push((v, false));
                have_input = true;
            }
            "start-lib" => {
                if in_lib {
                    errors.push(format!("nested {a}"));
                }
                in_lib = true;
            }
            "end-lib" => {
                if !in_lib {
                    errors.push(format!("stray {a}"));
                }
                in_lib = false;
            }
            "errorlimit" => match v.parse() {
                Ok(n) => c.error_limit = n,
                Err(_) => errors.push(format!("/errorlimit: number expected, but got {v}")),
            },
            "threads" => c.threads = v.parse().ok(),
            "verbose" => c.verbose = true,
            "demangle" => c.demangle = yes,
            "ignore" => c.diag.ignored.extend(v.split(',').map(|s| s.to_ascii_lowercase())),
            "failifmismatch" => match v.split_once('=') {
                Some((k, val)) if !k.is_empty() && !val.is_empty() => c.fail_if_mismatch.push((k.to_string(), val.to_string())),
                _ => errors.push(format!("/failifmismatch: invalid argument: {v}")),
            },
            "merge" => match v.split_once('=') {
                Some((f, t)) if !f.is_empty() && !t.is_empty() => c.merges.push((f.to_string(), t.to_string())),
                _ => errors.push(format!("/merge: invalid argument: {v}")),
            },
            "section" => match crate::coff::drectve::parse_option(&format!("/section:{v}")) {
                Ok(crate::coff::drectve::Directive::Section { name, characteristics }) => c.section_attrs.push((name, characteristics)),
                Ok(_) => {}
                Err(e) => errors.push(e),
            },
            "order" => match v.strip_prefix('@') {
                Some(f) => c.order_file = Some(PathBuf::from(f)),
                None => errors.push("malformed /order option: '@' missing".to_string()),
            },
            "functionpadmin" => c.function_pad_min = Some(if v.is_empty() { 6 } else { parse_num(&v).unwrap_or(6) as u32 }),
            "delayload" => c.delay_load.push(v),
            "wrap" => c.wrap.push(v),
            "guard" => {
                for g in v.split(',') {
                    match g.to_ascii_lowercase().as_str() {
                        "no" => {
                            c.guard_cf = false;
                            c.guard_longjmp = false;
                            c.guard_ehcont = false;
                        }
                        "nolongjmp" => c.guard_longjmp = false,
                        "noehcont" => c.guard_ehcont = false,
                        "cf" | "full" => {
                            c.guard_cf = true;
                            c.guard_longjmp = true;
                        }
                        "longjmp" => {
                            c.guard_cf = true;
                            c.guard_longjmp = true;
                        }
                        "ehcont" => {
                            c.guard_cf = true;
                            c.guard_ehcont = true;
                        }
                        g => errors.push(format!("invalid argument to /guard: {g}")),
                    }
                }
            }
            "release" => c.release = true,
            "stub" => c.stub = Some(PathBuf::from(v)),
            "output-def" => c.output_def = Some(PathBuf::from(v)),
            "lldsavetemps" => c.lto.save_temps = true,
            "lldmingw" => {
                c.mingw = true;
                c.auto_import = true;
                c.pseudo_relocs = true;
            }
            "auto-import" => c.auto_import = yes,
            "runtime-pseudo-reloc" => c.pseudo_relocs = yes,
            "export-all-symbols" => c.export_all = true,
            "exclude-all-symbols" => c.exclude_all = true,
            "exclude-symbols" => c.exclude_symbols.extend(v.split(',').map(String::from)),
            "build-id" => c.build_id = yes,
            "thinlto-distributor" => c.lto.distributor = Some(v),
            "thinlto-remote-compiler" => c.lto.remote_compiler = Some(v),
            "thinlto-distributor-arg" => c.lto.distributor_args.push(v),
            "thinlto-remote-compiler-arg" => c.lto.remote_compiler_args.push(v),
            "lldltocache" => c.lto.cache_dir = Some(v),
            "mllvm" => c.lto.mllvm.push(v),
            "manifest" if v.eq_ignore_ascii_case("no") => {}
            "cetcompat" if !yes => {}
            "profile" => {
                // lld: `/profile` implies `/opt:ref,noicf` and `/fixed:no`.
                c.gc.get_or_insert(true);
                c.icf.get_or_insert(false);
                profile = true;
            }
            "incremental" => c.incremental = Some(yes),
            // Known to lld, changing the output, and not implemented here: refused.
            // LTO side files and tuning, through the shared LTO option engine.
            "thinlto-index-only" if v.is_empty() => c.lto.extra.push("--thinlto-index-only".into()),
            "thinlto-index-only" => c.lto.extra.push(format!("--thinlto-index-only={v}")),
            "thinlto-emit-imports-files" => c.lto.extra.push("--thinlto-emit-imports-files".into()),
            "thinlto-prefix-replace" => c.lto.extra.push(format!("--thinlto-prefix-replace={v}")),
            "thinlto-object-suffix-replace" => c.lto.extra.push(format!("--thinlto-object-suffix-replace={v}")),
            "lto-obj-path" => c.lto.extra.push(format!("--lto-obj-path={v}")),
            "lldltocachepolicy" => c.lto.extra.push(format!("--thinlto-cache-policy={v}")),
            "lto-sample-profile" => c.lto.extra.push(format!("--lto-sample-profile={v}")),
            "lto-cs-profile-generate" => c.lto.extra.push("--lto-cs-profile-generate".into()),
            "lto-cs-profile-file" => c.lto.extra.push(format!("--lto-cs-profile-file={v}")),
            "manifest"
            | "cetcompat"
            | "linkrepro"
            | "reproduce"
            | "lldemit"
            | "includeglob"
            | "call-graph-ordering-file"
            | "print-symbol-order"
            | "defarm64native"
            | "mapinfo"
            | "lib" => {
                let spelled = a.split(':').next().unwrap_or(a);
                if name == "mapinfo" {
                    ignored(&c, spelled);
                } else {
                    errors.push(format!("{spelled} is not supported by dtld"));
                }
            }
            _ => errors.push(format!("{a}: option not handled")),
        }
    }
    if c.lto.distributor.is_some() && c.lto.remote_compiler.as_deref().unwrap_or("").is_empty() {
        errors.push("A value must be specified for /thinlto-remote-compiler if /thinlto-distributor is specified.".into());
    }
    // lld's `/incremental` (only what it changes here: an unchanged import library is kept);
    // on by default unless something it cannot coexist with is.
    let mut incremental = c.incremental.unwrap_or(!c.do_gc() && !c.do_icf() && c.order_file.is_none() && !profile);
    for (clash, why) in [
        (profile, "due to '/profile' specification"),
        (c.order_file.is_some(), "due to '/order' specification"),
        (c.do_gc(), "because REF is enabled; use '/opt:noref' to disable"),
        (c.do_icf(), "because ICF is enabled; use '/opt:noicf' to disable"),
    ] {
        if incremental && clash {
            c.diag.warn(&format!("ignoring '/incremental' {why}"));
            incremental = false;
        }
    }
    c.incremental = Some(incremental);
    if c.diag.error_count() > 0 && errors.is_empty() {
        // `/WX` made a warning an error; lld stops here too.
        return Err(Error::many(Vec::new()));
    }
    if !errors.is_empty() {
        return Err(Error::many(errors));
    }
    if !have_input && def_file.is_none() {
        crate::bail!("no input files");
    }
    if let Some(d) = &def_file {
        // lld-link's `parseModuleDefs` (after `/export:`, before the inputs are read).
        crate::coff::deffile::apply(&mut c, std::path::Path::new(d)).map_err(Error::new)?;
        if !have_input {
            c.implib_only = true;
        }
    }
    for (i, lazy) in inputs {
        let whole = whole_all || whole_paths.contains(&i);
        c.inputs.push(CoffInput { path: find_file(&i, &c.lib_paths), whole_archive: whole, lazy });
    }
    if c.output.as_os_str().is_empty() && !c.inputs.is_empty() {
        // lld-link names the output after the first input.
        let first = c.inputs[0].path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        c.output = PathBuf::from(format!("{first}.{}", if c.dll { "dll" } else { "exe" }));
    }
    // lld-link writes an import library for every DLL or image with exports: `/implib:`, or the
    // output's name with `.lib` (in MinGW mode only when asked for).
    if !implib_given && !c.no_implib && !c.mingw && (c.dll || !c.exports.is_empty()) {
        c.out_implib = Some(c.output.with_extension("lib"));
    }
    if c.no_implib {
        c.out_implib = None;
    }
    let named_after_output = |m: String, ext: &str| -> PathBuf {
        // lld's getMapFile: without a name, the output's path up to its last `.`, plus `.map`.
        PathBuf::from(if m.is_empty() {
            let out = c.output.to_string_lossy();
            format!("{}.{ext}", &out[..out.rfind('.').unwrap_or(out.len())])
        } else {
            m
        })
    };
    if let Some(m) = lldmap {
        c.lldmap = Some(named_after_output(m, "map"));
    }
    if let Some(m) = map {
        c.map = Some(named_after_output(m, "map"));
    }
    if c.debug_pdb && c.pdb.is_none() {
        c.pdb = Some(named_after_output(String::new(), "pdb"));
    }
    Ok(CoffAction::Link(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn options_any_case_and_prefix() {
        let CoffAction::Link(c) = parse(&s(&["/OUT:a.exe", "-Entry:main", "/subsystem:console", "/nodefaultlib", "/nologo", "a.obj"])).ok().unwrap() else {
            panic!()
        };
        assert_eq!(c.output, PathBuf::from("a.exe"));
        assert_eq!(c.entry.as_deref(), Some("main"));
        assert_eq!(c.subsystem, Some(3));
        assert!(c.no_default_all);
    }

    #[test]
    fn distributor_needs_remote_compiler() {
        let e = parse(&s(&["/thinlto-distributor:d", "a.obj"])).err().unwrap();
        assert_eq!(e.messages[0], "A value must be specified for /thinlto-remote-compiler if /thinlto-distributor is specified.");
    }

    #[test]
    fn known_options_are_never_inputs() {
        assert_eq!(lookup("/failifmismatch:k=v"), Some(("failifmismatch", "k=v".into())));
        assert_eq!(lookup("/debugtype:pdata"), Some(("debugtype", "pdata".into())));
        assert_eq!(lookup("/DEBUG:FULL"), Some(("debug", "FULL".into())));
        assert_eq!(lookup("/debug"), Some(("debug", "".into())));
        assert_eq!(lookup("/WX:no"), Some(("wx", "no".into())));
        assert_eq!(lookup("/force:unresolved"), Some(("force:unresolved", "".into())));
        assert_eq!(lookup("/lldltocachepolicy:x"), Some(("lldltocachepolicy", "x".into())));
        assert_eq!(lookup("/work/x.obj"), None);
        let CoffAction::Link(c) = parse(&s(&["/allowbind:no", "/swaprun:cd,net", "/failifmismatch:a=b", "/dll", "x.obj"])).ok().unwrap() else { panic!() };
        assert!(!c.allow_bind);
        assert_eq!(c.swaprun, object::pe::IMAGE_FILE_REMOVABLE_RUN_FROM_SWAP | object::pe::IMAGE_FILE_NET_RUN_FROM_SWAP);
        assert_eq!(c.fail_if_mismatch, vec![("a".to_string(), "b".to_string())]);
        assert_eq!(c.out_implib, Some(PathBuf::from("x.lib")));
    }
}
