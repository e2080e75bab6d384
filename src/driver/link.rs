//! lld-link's command line (the MSVC flavour), chosen when dtld runs as `lld-link` or with
//! `-flavor link`.
//!
//! Options start with `/` or `-`, are case-insensitive, and take their value after a colon
//! (`/out:x.exe`, `-entry:main`). The table below, rows of the option engine shared with the GNU
//! and MinGW command lines (`driver/options.rs`), is lld-link's whole option set (lld's
//! `COFF/Options.td`), so that every option is either applied, accepted as lld accepts it (the
//! link.exe compatibility no-ops), or refused or warned about by name — never read as an input;
//! `--help` and docs/options.md are generated from it.
//! As in LLVM's option parser, an argument that matches no option is an input file when it
//! starts with `/` (an absolute path on Unix) and an ignored unknown argument (with lld-link's
//! warning) when it starts with `-`. The result is the same `CoffConfig` the MinGW driver fills.

use std::path::PathBuf;

use crate::coff::config::{CoffConfig, CoffInput, DebugMode};
use crate::driver::mingw::subsystem_id;
use crate::driver::options::{self, nothing, opt, Arity::*, Opt, Report, Status::*, Val};
use crate::driver::parse_num;
use crate::driver::{CmdArg, CoffAction};
use crate::error::{Error, Result};

/// The lld-link parse state: the configuration being filled, and what is settled only after the
/// last argument (inputs and their archive modes, map and import-library names, `/incremental`).
pub struct Link {
    c: CoffConfig,
    errors: Vec<String>,
    help: bool,
    have_input: bool,
    whole_all: bool,
    whole_paths: Vec<String>,
    /// Inputs in order, with whether they are between `/start-lib` and `/end-lib`.
    inputs: Vec<(String, bool)>,
    in_lib: bool,
    def_file: Option<String>,
    /// `/lldmap` and `/map` (`Some("")`: named after the output); `/mapinfo:`s (spelling,
    /// value), read only with `/map`.
    lldmap: Option<String>,
    map: Option<String>,
    mapinfo: Vec<(String, String)>,
    implib_given: bool,
    profile: bool,
    /// The last of `/dynamicbase` and `/dynamicbase:no` (lld's check against `/fixed`).
    dynamicbase_arg: Option<bool>,
    /// `/manifest:embed` given (what `/manifestinput:` requires).
    manifest_embed: bool,
    manifest_input: bool,
    pdbpagesize: Option<String>,
    align: Option<String>,
    driver_given: bool,
    mingw_ignored_dirs: bool,
    /// `/hotpatchcompatible` (lld requires 6 bytes of `/functionpadmin` with it).
    hotpatch: bool,
    /// The arguments as read, for `/linkrepro`'s response file; the last `/reproduce:` and
    /// `/linkrepro:`.
    cmdline: Vec<CmdArg>,
    reproduce: Option<String>,
    linkrepro: Option<String>,
}

impl Report for Link {
    fn warning(&mut self, msg: String) {
        self.c.diag.warn(&msg);
    }
    fn error(&mut self, msg: String) {
        self.errors.push(msg);
    }
    fn separator(&self) -> char {
        ':'
    }
    fn errors_so_far(&self) -> usize {
        self.errors.len()
    }
}

impl Link {
    fn err(&mut self, msg: String) {
        self.errors.push(msg);
    }

    fn version(&mut self, v: &str) -> (u16, u16) {
        version(v, &mut self.errors)
    }

    /// An LTO option by ld.lld's name for it (`CoffLto::set`), as the user spelled it.
    fn lto(&mut self, name: &str, v: &Val) {
        self.c.lto.set(name, v.value, &v.shown());
    }

    fn input(&mut self, name: String) {
        let lazy = self.in_lib;
        self.inputs.push((name, lazy));
        self.have_input = true;
    }
}

fn subsystem(p: &mut Link, v: &Val) {
    let v = v.str();
    let (n, ver) = match v.split_once(',') {
        Some((n, ver)) => (n, Some(ver)),
        None => (v.as_str(), None),
    };
    match subsystem_id(n) {
        Some(id) => p.c.subsystem = Some(id),
        None => p.err(format!("unknown subsystem: {n}")),
    }
    if let Some(ver) = ver {
        p.c.subsystem_version = Some(p.version(ver));
    }
}

/// `/stack:reserve[,commit]` and `/heap:reserve[,commit]` (lld's `parseNumbers`).
fn reserve_commit(p: &mut Link, v: &Val) -> (u64, u64) {
    match crate::coff::drectve::parse_numbers(v.value.unwrap_or("")) {
        Ok((r, c)) => (r, c.unwrap_or(4096)),
        Err(e) => {
            p.err(e);
            (1 << 20, 4096)
        }
    }
}

/// lld's `parseNumbers` for one number (`/base:`, `/filealign:`, `/align:`).
fn number(p: &mut Link, v: &Val) -> Option<u64> {
    crate::coff::drectve::parse_numbers(v.value.unwrap_or("")).map_err(|e| p.err(e)).ok().map(|(n, _)| n)
}

fn alternatename(p: &mut Link, v: &Val) {
    let s = v.str();
    match s.split_once('=') {
        Some((a, b)) if !a.is_empty() && !b.is_empty() => {
            if p.c.alternate_names.iter().any(|(f, old)| f == a && old != b) {
                p.err(format!("/alternatename: conflicts: {s}"));
            }
            p.c.alternate_names.push((a.to_string(), b.to_string()))
        }
        _ => p.err(format!("/alternatename: invalid argument: {s}")),
    }
}

/// `/opt:` takes a comma-separated list.
fn opt_list(p: &mut Link, v: &Val) {
    for o in v.str().split(',') {
        let c = &mut p.c;
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
            // ARM64 branch-range thunks; nothing to do on x86-64 (lld ignores them there too).
            "lbr" | "nolbr" => {}
            "ltodebugpassmanager" => c.lto.set("lto-debug-pass-manager", None, &format!("{}{}{o}", v.spelling, v.sep)),
            o if o.starts_with("lldlto=") || o.starts_with("lldltojobs=") || o.starts_with("lldltocgo=") => {
                let (name, value) = o.split_once('=').unwrap_or((o, ""));
                if let Err(e) = crate::driver::common::opt_lto(&mut c.lto, name, value, &format!("{}{}{o}", v.spelling, v.sep)) {
                    p.errors.push(e);
                }
            }
            o if o.starts_with("lldltopartitions=") => match o[17..].parse::<u32>() {
                Ok(n) if n > 0 => c.lto.set("lto-partitions", Some(&o[17..]), &format!("{}{}{o}", v.spelling, v.sep)),
                _ => p.errors.push(format!("/opt:lldltopartitions: invalid partition count: {}", &o[17..])),
            },
            o => p.errors.push(format!("/opt: unknown option: {o}")),
        }
    }
}

fn debug(p: &mut Link, v: &Val) {
    let c = &mut p.c;
    match v.str().to_ascii_lowercase().as_str() {
        "" | "full" | "ghash" | "noghash" => {
            c.debug = DebugMode::Dwarf;
            c.debug_pdb = true;
            c.debug_ghash = !v.str().eq_ignore_ascii_case("noghash");
        }
        "fastlink" => {
            c.diag.warn("/debug:fastlink unsupported; using /debug:full");
            c.debug = DebugMode::Dwarf;
            c.debug_pdb = true;
            c.debug_ghash = true;
        }
        "none" => {
            c.debug = DebugMode::None;
            c.debug_pdb = false;
            c.debug_ghash = false;
        }
        "dwarf" => c.debug = DebugMode::Dwarf,
        "symtab" => c.debug = DebugMode::Symtab,
        o => p.errors.push(format!("/debug: unknown option: {o}")),
    }
}

fn debugtype(p: &mut Link, v: &Val) {
    for t in v.str().split(',') {
        if !matches!(t.to_ascii_lowercase().as_str(), "cv" | "pdata" | "fixup" | "dwarf") {
            // lld warns and goes on (parseDebugTypes).
            p.c.diag.warn(&format!("/debugtype: unknown option '{t}'"));
        }
    }
}

fn swaprun(p: &mut Link, list: &str) {
    if list.is_empty() {
        p.err("/swaprun: missing argument".into());
    }
    for w in list.split(',') {
        match w.to_ascii_lowercase().as_str() {
            "cd" => p.c.swaprun |= object::pe::IMAGE_FILE_REMOVABLE_RUN_FROM_SWAP,
            "net" => p.c.swaprun |= object::pe::IMAGE_FILE_NET_RUN_FROM_SWAP,
            "" => p.err("/swaprun: missing argument".into()),
            w => p.err(format!("/swaprun: invalid argument: {w}")),
        }
    }
}

/// `/guard:`: lld reads only the last one (an earlier invalid value is no error), each of its
/// comma-separated words in turn.
fn guard(p: &mut Link, v: &Val) {
    p.errors.retain(|e| !e.starts_with("invalid argument to /guard: "));
    let c = &mut p.c;
    c.guard_cf = false;
    c.guard_longjmp = false;
    c.guard_ehcont = false;
    for g in v.str().split(',') {
        match g.to_ascii_lowercase().as_str() {
            "no" => {
                c.guard_cf = false;
                c.guard_longjmp = false;
                c.guard_ehcont = false;
            }
            "nolongjmp" => c.guard_longjmp = false,
            "noehcont" => c.guard_ehcont = false,
            "cf" | "longjmp" => {
                c.guard_cf = true;
                c.guard_longjmp = true;
            }
            "ehcont" => {
                c.guard_cf = true;
                c.guard_ehcont = true;
            }
            g => p.errors.push(format!("invalid argument to /guard: {g}")),
        }
    }
}

/// `key=value` arguments (`/failifmismatch:`, `/merge:`).
fn pair(p: &mut Link, v: &Val, what: &str) -> Option<(String, String)> {
    let s = v.str();
    match s.split_once('=') {
        Some((k, val)) if !k.is_empty() && !val.is_empty() => Some((k.to_string(), val.to_string())),
        _ => {
            p.err(format!("/{what}: invalid argument: {s}"));
            None
        }
    }
}

fn section(p: &mut Link, v: &Val) {
    match crate::coff::drectve::parse_option(&format!("/section:{}", v.str())) {
        Ok(crate::coff::drectve::Directive::Section { name, characteristics }) => p.c.section_attrs.push((name, characteristics)),
        Ok(_) => {}
        Err(e) => p.err(e),
    }
}

/// lld's `getOldNewOptions`: `old;new`; whether the value is one.
fn old_new(p: &mut Link, v: &Val) -> bool {
    if v.str().split_once(';').is_none_or(|(_, n)| n.is_empty()) {
        p.err(format!("{} expects 'old;new' format, but got {}", v.spelling_joined(), v.str()));
        return false;
    }
    true
}

/// lld's `parseManifest`: `EMBED[,ID=<n>]` or `NO`; dtld writes no manifest, so only `no` links.
fn manifest(p: &mut Link, v: &Val) {
    let Some(arg) = v.value else {
        return p.err(format!("{} is not supported", v.spelling));
    };
    if arg.eq_ignore_ascii_case("no") {
        return;
    }
    let lower = arg.to_ascii_lowercase();
    let Some(rest) = lower.strip_prefix("embed") else {
        return p.err(format!("invalid option {arg}"));
    };
    let rest = &arg[arg.len() - rest.len()..];
    if !rest.is_empty() {
        let Some(id) = rest.to_ascii_lowercase().strip_prefix(",id=").map(|_| &rest[4..]) else {
            return p.err(format!("invalid option {rest}"));
        };
        if parse_num(id).is_none() {
            return p.err(format!("invalid option {id}"));
        }
    }
    p.manifest_embed = true;
    p.err(format!("{} is not supported", v.shown()));
}

/// lld's `parseManifestUAC`: `NO`, or `level=<x>` and `uiAccess=<x>` words.
fn manifestuac(p: &mut Link, v: &Val) {
    let mut arg = v.value.unwrap_or("");
    if arg.eq_ignore_ascii_case("no") {
        return;
    }
    loop {
        arg = arg.trim_start();
        if arg.is_empty() {
            return;
        }
        let lower = arg.to_ascii_lowercase();
        let Some(n) = ["level=", "uiaccess="].iter().find(|k| lower.starts_with(*k)).map(|k| k.len()) else {
            return p.err(format!("invalid option {arg}"));
        };
        arg = arg[n..].split_once(' ').map_or("", |(_, r)| r);
    }
}

/// Options that change the output and are not implemented: refused, except in their
/// "off" form (`/manifest:no`, `/cetcompat:no`), which is what dtld does anyway.
fn unless_no(p: &mut Link, v: &Val) {
    if !v.value.is_some_and(|x| x.eq_ignore_ascii_case("no")) {
        p.err(format!("{} is not supported", v.spelling));
    }
}

/// lld-link's whole option set (lld's `COFF/Options.td`): lowercase names, matched ignoring
/// case. `Value` rows take `/name:value`; `OptValue` rows `/name` or `/name:value`; `Bool` rows
/// `/name` or `/name:no`. Names with a colon (`/force:unresolved`) are flags spelled as one word.
static OPTIONS: &[Opt<Link>] = &[
    opt(&["out"], Value, "<file>", "Path to file to write output", Implemented, |p, v| p.c.output = v.path()),
    opt(&["entry"], Value, "<symbol>", "Name of entry point symbol", Implemented, |p, v| p.c.entry = Some(v.str())),
    opt(&["noentry"], Flag, "", "Don't add reference to DllMainCRTStartup; only valid with /dll", Implemented, |p, _| p.c.no_entry = true),
    opt(&["subsystem"], Value, "<name[,ver]>", "Specify subsystem", Implemented, subsystem),
    opt(&["osversion"], Value, "<ver>", "Set the OS version in the PE header", Implemented, |p, v| p.c.os_version = Some(p.version(&v.str()))),
    opt(&["version"], Value, "<ver>", "Specify a version number in the PE header", Implemented, |p, v| p.c.image_version = p.version(&v.str())),
    opt(&["help", "?", "??"], Flag, "", "Display available options", Implemented, |p, _| p.help = true),
    opt(&["dll"], Flag, "", "Create a DLL", Implemented, |p, _| p.c.dll = true),
    opt(&["libpath"], Value, "<dir>", "Additional library search path", Implemented, |p, v| p.c.lib_paths.push(v.path())),
    opt(&["defaultlib"], Value, "<lib>", "Add the library to the list of input files", Implemented, |p, v| p.c.default_libs.push(v.str())),
    opt(&["nodefaultlib"], OptValue, "<lib>", "Remove a default library (all of them without a name)", Implemented, |p, v| match v.value {
        None => p.c.no_default_all = true,
        Some(l) => p.c.no_default_libs.push(l.to_ascii_lowercase()),
    }),
    opt(&["disallowlib"], Value, "<lib>", "Same as /nodefaultlib:<lib>", Implemented, |p, v| p.c.no_default_libs.push(v.str().to_ascii_lowercase())),
    opt(&["base"], Value, "<address>", "Base address of the program", Implemented, |p, v| p.c.image_base = number(p, v)),
    opt(&["stack"], Value, "<reserve[,commit]>", "Size of the stack", Implemented, |p, v| p.c.stack = reserve_commit(p, v)),
    opt(&["heap"], Value, "<reserve[,commit]>", "Size of the heap", Implemented, |p, v| p.c.heap = reserve_commit(p, v)),
    opt(&["include"], Value, "<symbol>", "Force symbol to be added to symbol table as undefined one", Implemented, |p, v| p.c.includes.push(v.str())),
    opt(&["includeoptional"], Value, "<symbol>", "Add symbol as undefined, but allow it to remain undefined", Implemented, |p, v| {
        p.c.include_optional.push(v.str())
    }),
    opt(&["alternatename"], Value, "<from=to>", "Define weak alias", Implemented, alternatename),
    opt(&["export"], Value, "<symbol[,...]>", "Export a function", Implemented, |p, v| match crate::coff::drectve::parse_export(&v.str()) {
        Ok(e) => p.c.exports.push(e),
        Err(e) => p.err(e),
    }),
    opt(&["implib"], Value, "<file>", "Import library name", Implemented, |p, v| {
        p.c.out_implib = Some(v.path());
        p.implib_given = true;
    }),
    opt(&["noimplib"], Flag, "", "Don't output an import lib", Implemented, |p, _| p.c.no_implib = true),
    opt(&["lldmap"], OptValue, "<file>", "Write an lld map file", Implemented, |p, v| p.lldmap = Some(v.str())),
    opt(&["map"], OptValue, "<file>", "Write a link.exe-style map file", Implemented, |p, v| p.map = Some(v.str())),
    opt(&["mapinfo"], Value, "<exports>", "Include the specified information in a map file", Implemented, |p, v| {
        p.mapinfo.push((v.spelling_joined(), v.str()))
    }),
    opt(&["opt"], Value, "<options>", "Control optimizations (ref, noref, icf, noicf, lldtailmerge, lldlto=N, ...)", Implemented, opt_list),
    opt(&["def"], Value, "<file>", "Use module-definition file", Implemented, |p, v| p.def_file = Some(v.str())),
    opt(&["machine"], Value, "<machine>", "Specify target platform (x64)", Implemented, |p, v| {
        let m = v.str();
        p.c.machine_given = true;
        if !m.eq_ignore_ascii_case("x64") && !m.eq_ignore_ascii_case("amd64") {
            p.err(format!("unknown /machine argument: {m}"));
        }
    }),
    opt(&["debug"], OptValue, "<full|none|dwarf|symtab|ghash|noghash>", "Embed a symbol table in the image, or write a PDB", Implemented, debug),
    opt(&["debugtype"], Value, "<types>", "Debug info types (cv, pdata, fixup, dwarf)", Implemented, debugtype),
    opt(&["pdb"], Value, "<file>", "PDB file path", Implemented, |p, v| p.c.pdb = Some(v.path())),
    opt(&["pdbaltpath"], Value, "<path>", "PDB file path to embed in the image", Implemented, |p, v| p.c.pdb_altpath = Some(v.str())),
    opt(&["filealign"], Value, "<n>", "Section alignment in the output file", Implemented, |p, v| {
        if let Some(n) = number(p, v) {
            if !n.is_power_of_two() {
                p.err(format!("/filealign: not a power of two: {n}"));
            }
            p.c.file_align = n as u32;
        }
    }),
    opt(&["align"], Value, "<n>", "Section alignment", Implemented, |p, v| {
        if let Some(n) = number(p, v) {
            p.c.section_align = n as u32;
            p.align = Some(v.str());
        }
    }),
    opt(&["aligncomm"], Value, "<symbol,n>", "Set common symbol alignment (log2)", Implemented, |p, v| {
        let s = v.str();
        match s.split_once(',').and_then(|(n, a)| Some((n, a.parse::<u32>().ok()?))) {
            Some((n, a)) if a < 32 => p.c.align_comm.push((n.to_string(), 1 << a)),
            _ => p.err(format!("/aligncomm: invalid argument: {s}")),
        }
    }),
    opt(&["timestamp"], Value, "<n>", "Specify the PE header timestamp", Implemented, |p, v| match v.str().parse() {
        Ok(t) => p.c.timestamp = Some(t),
        Err(_) => p.err(format!("invalid timestamp: {}.  Expected 32-bit integer", v.str())),
    }),
    opt(&["brepro"], Flag, "", "Use a hash of the executable as the PE header timestamp", Implemented, |p, _| {
        p.c.timestamp = Some(0);
        p.c.brepro = true;
    }),
    opt(&["dynamicbase"], Bool, "", "Enable ASLR (default)", Implemented, |p, v| {
        p.c.dynamic_base = v.yes();
        p.dynamicbase_arg = Some(v.yes());
    }),
    opt(&["nxcompat"], Bool, "", "Enable data execution prevention (default)", Implemented, |p, v| p.c.nx_compat = v.yes()),
    opt(&["highentropyva"], Bool, "", "Enable 64-bit ASLR (default on 64-bit)", Implemented, |p, v| p.c.high_entropy_va = v.yes()),
    opt(&["largeaddressaware"], Bool, "", "Enable large addresses (default on 64-bit)", Implemented, |p, v| p.c.large_address_aware = v.yes()),
    opt(&["tsaware"], Bool, "", "Create Terminal Server aware executable (default)", Implemented, |p, v| p.c.tsaware = v.yes()),
    opt(&["fixed"], Bool, "", "Disable base relocations", Implemented, |p, v| p.c.fixed = v.yes()),
    opt(&["allowbind"], Bool, "", "Enable DLL binding (default)", Implemented, |p, v| p.c.allow_bind = v.yes()),
    opt(&["allowisolation"], Bool, "", "Enable DLL isolation (default)", Implemented, |p, v| p.c.allow_isolation = v.yes()),
    opt(&["appcontainer"], Bool, "", "Image can only be run in an app container", Implemented, |p, v| p.c.appcontainer = v.yes()),
    opt(&["integritycheck"], Bool, "", "Set FORCE_INTEGRITY bit in PE header", Implemented, |p, v| p.c.integrity_check = v.yes()),
    // Read before the other arguments (see `parse`): it turns the parser's warnings into errors.
    opt(&["wx"], Bool, "", "Treat warnings as errors", Implemented, nothing),
    opt(&["swaprun"], Value, "<cd,net>", "Set IMAGE_FILE_{REMOVABLE,NET}_RUN_FROM_SWAP", Implemented, |p, v| swaprun(p, &v.str())),
    opt(&["swaprun:cd"], Flag, "", "", Implemented, |p, _| swaprun(p, "cd")),
    opt(&["swaprun:net"], Flag, "", "", Implemented, |p, _| swaprun(p, "net")),
    opt(&["driver"], Flag, "", "Generate a Windows NT Kernel Mode Driver", Implemented, |p, _| {
        p.c.driver = Some((false, false));
        p.driver_given = true;
    }),
    opt(&["driver:wdm"], Flag, "", "Set IMAGE_FILE_UP_SYSTEM_ONLY", Implemented, |p, _| p.c.driver = Some((true, false))),
    opt(&["driver:uponly"], Flag, "", "Set IMAGE_DLL_CHARACTERISTICS_WDM_DRIVER", Implemented, |p, _| p.c.driver = Some((false, true))),
    opt(&["driver:wdm,uponly", "driver:uponly,wdm"], Flag, "", "", Implemented, |p, _| p.c.driver = Some((true, true))),
    opt(&["force"], Flag, "", "Allow undefined and multiply defined symbols", Implemented, |p, _| {
        p.c.allow_multiple = true;
        p.c.force_unresolved = true;
    }),
    opt(&["force:multiple", "force:multipleres"], Flag, "", "Allow multiply defined symbols", Implemented, |p, _| p.c.allow_multiple = true),
    opt(&["force:unresolved"], Flag, "", "Allow undefined symbols", Implemented, |p, _| p.c.force_unresolved = true),
    opt(&["wholearchive"], OptValue, "<lib>", "Include every object file of an archive (all archives without a name)", Implemented, |p, v| match v.value {
        None => p.whole_all = true,
        Some(f) => {
            p.whole_paths.push(f.to_string());
            p.inputs.push((f.to_string(), false));
            p.have_input = true;
        }
    }),
    opt(&["start-lib"], Flag, "", "Start group of objects treated as if they were in a library", Implemented, |p, v| {
        if p.in_lib {
            p.err(format!("nested {}", v.spelling));
        }
        p.in_lib = true;
    }),
    opt(&["end-lib"], Flag, "", "End group of objects treated as if they were in a library", Implemented, |p, v| {
        if !p.in_lib {
            p.err(format!("stray {}", v.spelling));
        }
        p.in_lib = false;
    }),
    opt(&["errorlimit"], Value, "<n>", "Maximum number of errors to emit before stopping (0 = no limit)", Implemented, |p, v| match v.str().parse() {
        Ok(n) => p.c.error_limit = n,
        Err(_) => p.err(format!("/errorlimit: number expected, but got {}", v.str())),
    }),
    opt(&["threads"], Value, "<n>", "Number of threads", Implemented, |p, v| {
        // LLVM's `to_integer(v, n, 0)`: any radix prefix, and more than zero.
        match crate::coff::drectve::parse_numbers(&v.str()) {
            Ok((n, None)) if n > 0 && !v.str().contains(',') => p.c.threads = Some(n as usize),
            _ => p.err(format!("{}: expected a positive integer, but got '{}'", v.spelling_joined(), v.str())),
        }
    }),
    opt(&["verbose"], OptValue, "<level>", "Print what the link does", Implemented, |p, _| p.c.verbose = true),
    opt(&["demangle"], Bool, "", "Demangle symbols in output (default)", Implemented, |p, v| p.c.demangle = v.yes()),
    opt(&["ignore"], Value, "<ids>", "Specify warning codes to ignore", Implemented, |p, v| {
        p.c.diag.ignored.extend(v.str().split(',').map(|s| s.to_ascii_lowercase()))
    }),
    opt(&["failifmismatch"], Value, "<key=value>", "Fail if the same key has two values", Implemented, |p, v| {
        if let Some(kv) = pair(p, v, "failifmismatch") {
            p.c.fail_if_mismatch.push(kv);
        }
    }),
    opt(&["merge"], Value, "<from=to>", "Combine sections", Implemented, |p, v| {
        if let Some(kv) = pair(p, v, "merge") {
            p.c.merges.push(kv);
        }
    }),
    opt(&["section"], Value, "<name,attrs>", "Specify section attributes", Implemented, section),
    opt(&["order"], Value, "<@file>", "Put functions in order", Implemented, |p, v| match v.str().strip_prefix('@') {
        Some(f) => p.c.order_file = Some(PathBuf::from(f)),
        None => p.err("malformed /order option: '@' missing".to_string()),
    }),
    opt(&["functionpadmin"], OptValue, "<n>", "Prepare the image for hotpatching", Unsupported, |p, v| match v.value {
        Some(n) if parse_num(n).is_none() => p.err(format!("/functionpadmin: invalid argument: {n}")),
        _ => p.c.function_pad_min = Some(v.value.map_or(6, |n| parse_num(n).unwrap_or(6) as u32)),
    }),
    opt(&["delayload"], Value, "<dll>", "Delay loaded DLL name", Unsupported, |p, v| p.c.delay_load.push(v.str())),
    opt(&["wrap"], Value, "<symbol>", "Use wrapper functions for symbol", Implemented, |p, v| p.c.wrap.push(v.str())),
    opt(&["guard"], Value, "<cf|longjmp|ehcont|no|...>", "Control flow guard tables (the last /guard: counts)", Implemented, guard),
    opt(&["release"], Flag, "", "Set the checksum in the PE header", Unsupported, |p, _| p.c.release = true),
    opt(&["stub"], Value, "<file>", "Specify DOS stub file", Unsupported, |p, v| {
        // lld's `parseDosStub` reads the file and checks its `MZ` first.
        match std::fs::read(v.str()) {
            Err(e) => p.err(format!("could not open {}: {}", v.str(), crate::error::io_error(&e))),
            Ok(d) if d.len() < 64 => p.err(format!("/stub: stub must be greater than or equal to 64 bytes: {}", v.str())),
            Ok(d) if !d.starts_with(b"MZ") => p.err(format!("/stub: invalid DOS signature: {}", v.str())),
            Ok(_) => {}
        }
        p.c.stub = Some(v.path())
    }),
    opt(&["output-def"], Value, "<file>", "Write a module-definition file for the exports", Implemented, |p, v| p.c.output_def = Some(v.path())),
    opt(&["lldsavetemps"], OptValue, "<stages>", "Save intermediate LTO compilation results", Implemented, |p, v| {
        const STAGES: &[&str] = &["resolution", "preopt", "promote", "internalize", "import", "opt", "precodegen", "prelink", "combinedindex"];
        match v.value {
            Some(s) if !STAGES.contains(&s) => p.err(format!("unknown /lldsavetemps value: {s}")),
            _ => p.c.lto.set("save-temps", None, &v.shown()),
        }
    }),
    opt(&["lldmingw"], Flag, "", "MinGW semantics (auto-import, pseudo relocations)", Implemented, |p, _| {
        p.c.mingw = true;
        p.c.auto_import = true;
        p.c.pseudo_relocs = true;
    }),
    opt(&["auto-import"], Bool, "", "Automatically import data symbols from DLLs (MinGW)", Implemented, |p, v| p.c.auto_import = v.yes()),
    opt(&["runtime-pseudo-reloc"], Bool, "", "Add runtime pseudo relocations (MinGW)", Implemented, |p, v| p.c.pseudo_relocs = v.yes()),
    opt(&["export-all-symbols"], Flag, "", "Export all symbols (MinGW)", Implemented, |p, _| p.c.export_all = true),
    opt(&["exclude-all-symbols"], Flag, "", "Don't automatically export any symbols (MinGW)", Implemented, |p, _| p.c.exclude_all = true),
    opt(&["exclude-symbols"], Value, "<symbols>", "Exclude symbols from automatic export (MinGW)", Implemented, |p, v| {
        p.c.exclude_symbols.extend(v.str().split(',').map(String::from))
    }),
    opt(&["build-id"], Bool, "", "Write a build ID (a CodeView debug directory)", Implemented, |p, v| p.c.build_id = v.yes()),
    opt(&["thinlto-distributor"], Value, "<path>", "Distributor to run the ThinLTO backend compilations (DTLTO)", Implemented, |p, v| {
        p.lto("thinlto-distributor", v)
    }),
    opt(&["thinlto-distributor-arg"], Value, "<arg>", "Argument for the ThinLTO distributor", Implemented, |p, v| p.lto("thinlto-distributor-arg", v)),
    opt(&["thinlto-remote-compiler"], Value, "<path>", "Compiler the distributor runs for backend compilations", Implemented, |p, v| {
        p.lto("thinlto-remote-compiler", v)
    }),
    opt(&["thinlto-remote-compiler-arg"], Value, "<arg>", "Argument for the remote compiler", Implemented, |p, v| p.lto("thinlto-remote-compiler-arg", v)),
    opt(&["lldltocache"], Value, "<dir>", "Path to ThinLTO cached object file directory", Implemented, |p, v| p.lto("thinlto-cache-dir", v)),
    opt(&["lldltocachepolicy"], Value, "<policy>", "Pruning policy for the ThinLTO cache", Implemented, |p, v| {
        match crate::lto::options::check_cache_policy(&v.str()) {
            Err(e) => p.err(format!("/lldltocachepolicy: invalid cache policy: {}: {e}", v.str())),
            Ok(()) => p.lto("thinlto-cache-policy", v),
        }
    }),
    opt(&["mllvm"], Value, "<option>", "Options to pass to LLVM", Implemented, |p, v| p.c.lto.mllvm.push(v.str())),
    opt(&["thinlto-index-only"], OptValue, "<file>", "Write the ThinLTO index files and stop", Implemented, |p, v| p.lto("thinlto-index-only", v)),
    opt(&["thinlto-emit-imports-files"], Flag, "", "Write the imports files of ThinLTO", Implemented, |p, v| p.lto("thinlto-emit-imports-files", v)),
    opt(&["thinlto-prefix-replace"], Value, "<old;new>", "Replace a path prefix in ThinLTO output file names", Implemented, |p, v| {
        if old_new(p, v) {
            p.lto("thinlto-prefix-replace", v)
        }
    }),
    opt(&["thinlto-object-suffix-replace"], Value, "<old;new>", "Replace a suffix of ThinLTO object file names", Implemented, |p, v| {
        if old_new(p, v) {
            p.lto("thinlto-object-suffix-replace", v)
        }
    }),
    opt(&["lto-obj-path"], Value, "<path>", "Output path for the LTO object file", Implemented, |p, v| p.lto("lto-obj-path", v)),
    opt(&["lto-sample-profile"], Value, "<file>", "Sample profile file path", Implemented, |p, v| p.lto("lto-sample-profile", v)),
    opt(&["lto-cs-profile-generate"], Flag, "", "Context sensitive PGO instrumentation", Implemented, |p, v| p.lto("lto-cs-profile-generate", v)),
    opt(&["lto-cs-profile-file"], Value, "<file>", "Context sensitive profile file path", Implemented, |p, v| p.lto("lto-cs-profile-file", v)),
    opt(&["profile"], Flag, "", "Implies /opt:ref,noicf and /fixed:no", Implemented, |p, _| {
        p.c.gc.get_or_insert(true);
        p.c.icf.get_or_insert(false);
        p.profile = true;
    }),
    opt(&["incremental"], Bool, "", "Keep an unchanged import library (lld's /incremental)", Implemented, |p, v| p.c.incremental = Some(v.yes())),
    opt(&["manifest"], OptValue, "<embed|no>", "Create a manifest (only /manifest:no)", Implemented, manifest),
    opt(&["cetcompat"], Bool, "", "Mark the image CET shadow-stack compatible (only /cetcompat:no)", Implemented, unless_no),
    opt(&["linkrepro"], Value, "<dir>", "Write repro.tar to the directory", Implemented, |p, v| p.linkrepro = Some(v.str())),
    opt(&["reproduce"], Value, "<file>", "Write a tar file with the inputs and command line", Implemented, |p, v| p.reproduce = Some(v.str())),
    opt(&["lldemit"], Value, "<obj|llvm|asm>", "What the LTO code generator emits", Implemented, |p, v| match v.str().as_str() {
        "obj" | "llvm" | "asm" => p.err(format!("{} is not supported", v.shown())),
        s => p.err(format!("/lldemit: unknown option: {s}")),
    }),
    opt(&["includeglob"], Value, "<glob>", "Force symbols matching the glob to be undefined", Unsupported, |p, v| {
        if let Some(e) = glob_error(v.value.unwrap_or("")) {
            p.err(format!("/includeglob: {e}"));
        }
    }),
    opt(&["call-graph-ordering-file"], Value, "<file>", "Layout sections to optimize the given callgraph", Implemented, |p, v| {
        p.c.call_graph_ordering_file = Some(v.path())
    }),
    opt(&["call-graph-profile-sort"], Bool, "", "Order sections by the objects' call-graph profiles (default)", Implemented, |p, v| {
        p.c.call_graph_profile_sort = v.yes()
    }),
    opt(&["print-symbol-order"], Value, "<file>", "Print the symbol order of the call-graph sort", Implemented, |p, v| p.c.print_symbol_order = Some(v.path())),
    opt(&["defarm64native"], Value, "<file>", "ARM64EC: native exports module-definition file", Unsupported, nothing),
    opt(&["lib"], Flag, "", "Act as llvm-lib (as the first argument; elsewhere ignored with a warning)", Implemented, |p, _| {
        p.c.diag.warn("ignoring /lib since it's not the first argument")
    }),
    // Accepted and ignored, as lld does (link.exe compatibility, host SDK discovery, PDB and
    // LTO tuning that does not change the image).
    opt(
        &["ignoreidl", "nologo", "throwingnew", "editandcontinue", "fastfail", "kernel", "pdbcompress", "emitpogophaseinfo", "noexp"],
        Flag,
        "",
        "",
        Noop,
        nothing,
    ),
    opt(&["ltcg", "assemblydebug"], OptValue, "", "", Noop, nothing),
    opt(&["delay", "errorreport", "idlout", "ilk", "ltcgout", "maxilksize", "tlbid", "tlbout", "guardsym", "arm64xsameaddress"], Value, "", "", Noop, nothing),
    opt(&["diasdkdir", "vctoolsversion", "winsdkdir", "winsdkversion"], Value, "<dir>", "", Noop, nothing),
    opt(&["vctoolsdir", "winsysroot"], Value, "<dir>", "", Noop, |p, _| p.mingw_ignored_dirs = true),
    opt(&["lldignoreenv"], Flag, "", "Ignore the LINK and _LINK_ environment variables", Implemented, nothing),
    opt(&["natvis", "pdbsourcepath", "pdbstream", "vfsoverlay", "dwodir"], Value, "", "", Noop, nothing),
    opt(&["print-search-paths", "time", "summary", "noseh", "kill-at"], Flag, "", "", Noop, nothing),
    opt(&["safeseh", "lld-allow-duplicate-weak", "stdcall-fixup", "lto-pgo-warn-mismatch"], Bool, "", "", Noop, nothing),
    opt(&["pdbpagesize"], Value, "", "", Noop, |p, v| p.pdbpagesize = Some(v.str())),
    opt(&["pdbstripped"], Value, "", "", Noop, |p, _| p.c.diag.warn("ignoring /pdbstripped flag, it is not yet supported")),
    opt(&["inferasanlibs"], Bool, "", "", Noop, |p, v| {
        if v.yes() {
            p.c.diag.warn("ignoring '/inferasanlibs', this flag is not supported");
        }
    }),
    opt(&["dependentloadflag"], OptValue, "<flags>", "DependentLoadFlags of the load configuration (_load_config_used)", Implemented, |p, v| match v.value {
        None => p.err("/dependentloadflag: no argument specified".into()),
        Some(n) if parse_num(n).is_none() => p.err(format!("/dependentloadflag: invalid argument: {n}")),
        Some(n) => p.c.dependent_load_flags = parse_num(n).unwrap_or(0) as u16,
    }),
    // Valid only with `/functionpadmin` (refused), so never more than lld's check.
    opt(&["hotpatchcompatible"], Flag, "", "", Noop, |p, _| p.hotpatch = true),
    opt(&["manifestuac"], Value, "", "", Noop, manifestuac),
    opt(&["manifestinput"], Value, "", "", Noop, |p, _| p.manifest_input = true),
    opt(&["manifestfile", "manifestdependency"], Value, "", "", Noop, nothing),
];

/// Matches one command-line argument against the table: the row, the option as spelled (for
/// messages) and its value. `None`: not an option.
fn lookup(arg: &str) -> Option<(&'static Opt<Link>, &str, Option<&str>)> {
    let body = arg.strip_prefix(['/', '-'])?;
    let lower = body.to_ascii_lowercase();
    // Exact names (flags, bare booleans and optional values, and the `:no` forms) first.
    for o in OPTIONS {
        for n in o.names {
            match o.arity {
                Flag | Bool | OptValue if lower == *n => return Some((o, arg, None)),
                Bool if lower.strip_prefix(n) == Some(":no") => return Some((o, &arg[..1 + n.len()], Some("no"))),
                _ => {}
            }
        }
    }
    // Then the longest name that takes a value after its colon.
    let mut best: Option<(&'static Opt<Link>, usize)> = None;
    for o in OPTIONS.iter().filter(|o| matches!(o.arity, Value | OptValue)) {
        for n in o.names {
            let joined = lower.len() > n.len() && lower.starts_with(n) && lower.as_bytes()[n.len()] == b':';
            if joined && best.is_none_or(|(_, l)| l < n.len()) {
                best = Some((o, n.len()));
            }
        }
    }
    best.map(|(o, l)| (o, &arg[..1 + l], Some(&body[l + 1..])))
}

/// How lld's `getSpelling` names an lld-link option in a message (`/opt:` for `/opt:ref`), or
/// `None` when the argument is no lld-link option.
pub fn option_spelling(arg: &str) -> Option<String> {
    let (o, spelling, v) = lookup(arg)?;
    Some(match (o.arity, v) {
        (Value | OptValue, Some(_)) => format!("{spelling}:"),
        _ => spelling.to_string(),
    })
}

/// The `--help` text of the lld-link flavour, from its table. The first line keeps lld-link's
/// words, which scripts probing for an lld-link-compatible linker look for.
pub fn help_text() -> String {
    format!("OVERVIEW: LLVM Linker (dtld, the lld-link command line)\n\nUSAGE: lld-link [options] file...\n\nOPTIONS:\n{}", options::link_help(OPTIONS))
}

/// The table's rows, for docs/options.md.
#[cfg(test)]
pub fn rows() -> Vec<options::RowInfo> {
    options::link_rows(OPTIONS)
}

pub fn parse(argv: &[String]) -> Result<CoffAction> {
    // lld-link's `LINK` (before the command line) and `_LINK_` (after it) environment variables.
    let mut all = Vec::new();
    if !argv.iter().any(|a| lookup(a).is_some_and(|(o, _, _)| o.names[0] == "lldignoreenv")) {
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
    let mut p = Link {
        c: CoffConfig::new(false),
        errors: Vec::new(),
        help: false,
        have_input: false,
        whole_all: false,
        whole_paths: Vec::new(),
        inputs: Vec::new(),
        in_lib: false,
        def_file: None,
        lldmap: None,
        map: None,
        mapinfo: Vec::new(),
        implib_given: false,
        profile: false,
        dynamicbase_arg: None,
        manifest_embed: false,
        manifest_input: false,
        pdbpagesize: None,
        align: None,
        driver_given: false,
        mingw_ignored_dirs: false,
        hotpatch: false,
        cmdline: Vec::new(),
        reproduce: None,
        linkrepro: None,
    };
    // `/WX` first: it turns the parser's own warnings into errors (lld's `ArgParser::parse`).
    for a in &args {
        if let Some((o, _, v)) = lookup(a).filter(|(o, _, _)| o.names[0] == "wx") {
            p.c.diag.fatal_warnings = v.is_none() && o.arity == Bool;
        }
    }
    // Colors first too: lld reports unknown options after parsing the whole command line.
    // `--color-diagnostics` alone means `always` in lld-link.
    for a in &args {
        let name = a.trim_start_matches('-');
        if a.starts_with('-') {
            match name {
                "color-diagnostics" | "color-diagnostics=always" => p.c.diag.color = true,
                "color-diagnostics=never" | "no-color-diagnostics" => p.c.diag.color = false,
                _ => {}
            }
        }
    }
    for a in &args {
        if let Some(rest) = a.strip_prefix("--") {
            match rest {
                "version" => return Ok(CoffAction::Version),
                "color-diagnostics" | "no-color-diagnostics" => {}
                _ if rest.strip_prefix("color-diagnostics=").is_some_and(|v| !matches!(v, "always" | "never" | "auto")) => {
                    p.err(format!("unknown option: {a}"))
                }
                _ if rest.starts_with("color-diagnostics=") || rest.starts_with("rsp-quoting=") || rest.starts_with("time-trace") => {}
                _ => p.c.diag.warn(&format!("ignoring unknown argument '{a}'")),
            }
            p.cmdline.push(CmdArg::Raw(a.clone()));
            continue;
        }
        if matches!(a.trim_start_matches('-'), "color-diagnostics" | "no-color-diagnostics") || a.trim_start_matches('-').starts_with("color-diagnostics=") {
            p.cmdline.push(CmdArg::Raw(a.clone()));
            continue;
        }
        match lookup(a) {
            Some((o, spelling, v)) => {
                p.cmdline.push(CmdArg::option(o.names[0], spelling, v, true));
                options::apply(&mut p, o, spelling, v)
            }
            None if a.starts_with('-') => {
                p.cmdline.push(CmdArg::Raw(a.clone()));
                match options::nearest(OPTIONS, &["/", "-"], ':', a) {
                    Some(n) => p.c.diag.warn(&format!("ignoring unknown argument '{a}', did you mean '{n}'")),
                    None => p.c.diag.warn(&format!("ignoring unknown argument '{a}'")),
                }
            }
            None => {
                p.cmdline.push(CmdArg::Input(a.clone()));
                p.input(a.clone())
            }
        }
    }
    if !p.c.mingw {
        // lld-link's `addClangLibSearchPaths`: clang's runtime libraries, found from the
        // linker's own place (`<root>/bin/lld-link`), come before `LIB`'s directories.
        if let Some(root) = std::env::current_exe().ok().and_then(|e| Some(e.parent()?.parent()?.to_path_buf())) {
            let rt = root.join("lib/clang/22/lib");
            p.c.lib_paths.extend([rt.join("windows"), rt, root.join("lib")]);
        }
    }
    if p.help {
        return Ok(CoffAction::Help);
    }
    // lld-link's `addLibSearchPaths`: the `LIB` environment variable's directories are
    // searched after the `/libpath:` ones, unless `/lldignoreenv`.
    if !argv.iter().any(|a| lookup(a).is_some_and(|(o, _, _)| o.names[0] == "lldignoreenv")) {
        if let Some(lib) = std::env::var_os("LIB") {
            let lib = lib.to_string_lossy().into_owned();
            p.c.lib_paths.extend(lib.split(';').filter(|d| !d.is_empty()).map(PathBuf::from));
        }
    }
    p.finish()
}

impl Link {
    /// `/linkrepro`, `/reproduce`, `LLD_REPRODUCE`: the archive is opened before lld-link's other
    /// checks (its error comes first, and `no input files` after it).
    fn reproducer(&mut self) -> Result<()> {
        let Some(tar) = crate::coff::reproduce::tar_path(self.reproduce.as_deref(), self.linkrepro.as_deref()) else { return Ok(()) };
        match crate::coff::reproduce::check_tar(&tar) {
            Err(e) if !self.have_input && self.def_file.is_none() => return Err(Error::many(vec![e, "no input files".into()])),
            Err(e) => self.errors.insert(0, e),
            Ok(()) => {
                let response = crate::coff::reproduce::response_file(&self.cmdline, &self.c.lib_paths);
                let mut r = crate::coff::reproduce::Repro::new(tar, response);
                r.def_file = self.def_file.as_ref().map(PathBuf::from);
                self.c.repro = Some(r);
            }
        }
        Ok(())
    }

    /// What depends on the whole command line: `/incremental`, the inputs, default names.
    fn finish(mut self) -> Result<CoffAction> {
        self.reproducer()?;
        let c = &mut self.c;
        if c.lto.options.distributor.is_some() && c.lto.options.remote_compiler.is_none() {
            self.errors.push("A value must be specified for /thinlto-remote-compiler if /thinlto-distributor is specified.".into());
        }
        // lld-link reads its LTO options with the command line: what they refuse is an error of
        // every link, with bitcode or without.
        if let Err(e) = c.lto.options() {
            self.errors.extend(e.messages);
        }
        // lld's `/incremental` (only what it changes here: an unchanged import library is kept);
        // on by default unless something it cannot coexist with is.
        let mut incremental = c.incremental.unwrap_or(!c.do_gc() && !c.do_icf() && c.order_file.is_none() && !self.profile);
        for (clash, why) in [
            (self.profile, "due to '/profile' specification"),
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
        // lld's checks of `linkerMain`, in its order.
        if c.no_entry && !c.dll {
            self.errors.push("/noentry must be specified with /dll".into());
        }
        if c.fixed && self.dynamicbase_arg == Some(true) {
            self.errors.push("/fixed must not be specified with /dynamicbase".into());
        }
        if let Some(s) = &self.pdbpagesize {
            if c.debug_pdb && !matches!(crate::coff::drectve::parse_numbers(s), Ok((4096 | 8192 | 16384 | 32768, None))) {
                self.errors.push(format!("/pdbpagesize: invalid argument: {s}"));
            }
        }
        if let Some(a) = &self.align {
            if !c.section_align.is_power_of_two() {
                c.diag.error(&format!("/align: not a power of two: {a}"));
            }
            if !self.driver_given {
                c.diag.warn("/align specified without /driver; image may not run");
            }
        }
        if self.hotpatch && c.function_pad_min.is_none_or(|n| n < 6) {
            self.errors.push("/hotpatchcompatible: requires at least 6 bytes of /functionpadmin".into());
        }
        if self.manifest_input && !self.manifest_embed {
            self.errors.push("/manifestinput: requires /manifest:embed".into());
        }
        if self.mingw_ignored_dirs && c.mingw {
            c.diag.warn("ignoring /vctoolsdir or /winsysroot flags in MinGW mode");
        }
        if c.debug_pdb {
            if let Some(alt) = &c.pdb_altpath {
                // lld's `parsePDBAltPath`: only %_PDB% and %_EXT% are expanded.
                let mut rest = alt.as_str();
                while let Some(a) = rest.find('%') {
                    let Some(b) = rest[a + 1..].find('%') else { break };
                    let var = &rest[a..a + b + 2];
                    if !var.eq_ignore_ascii_case("%_pdb%") && !var.eq_ignore_ascii_case("%_ext%") {
                        c.diag.warn(&format!("only %_PDB% and %_EXT% supported in /pdbaltpath:, keeping {var} as literal"));
                    }
                    rest = &rest[a + b + 2..];
                }
            }
        }
        if c.diag.error_count() > 0 && self.errors.is_empty() {
            // `/WX` made a warning an error; lld stops here too.
            return Err(Error::many(Vec::new()));
        }
        if !self.errors.is_empty() {
            return Err(Error::many(self.errors));
        }
        if !self.have_input && self.def_file.is_none() {
            crate::bail!("no input files");
        }
        let mut c = self.c;
        if let Some(d) = &self.def_file {
            // lld-link's `parseModuleDefs` (after `/export:`, before the inputs are read).
            crate::coff::deffile::apply(&mut c, std::path::Path::new(d)).map_err(Error::new)?;
            if !self.have_input {
                c.implib_only = true;
            }
        }
        for (i, lazy) in self.inputs {
            let whole = self.whole_all || self.whole_paths.contains(&i);
            let path = find_file(&i, &c.lib_paths);
            let suggest = if path.exists() { None } else { super::options::nearest(OPTIONS, &["/", "-"], ':', &i) };
            c.inputs.push(CoffInput { path, whole_archive: whole, lazy, suggest });
        }
        if c.output.as_os_str().is_empty() && !c.inputs.is_empty() {
            // lld-link names the output after the first input.
            let first = c.inputs[0].path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            c.output = PathBuf::from(format!("{first}.{}", if c.dll { "dll" } else { "exe" }));
        }
        // lld's `tryCreateFile`: fail early if the output cannot be written.
        if !c.inputs.is_empty() && !c.output.exists() {
            match std::fs::OpenOptions::new().write(true).create_new(true).open(&c.output) {
                Ok(_) => {
                    let _ = std::fs::remove_file(&c.output);
                }
                Err(e) => crate::bail!("cannot open output file {}: {}", c.output.display(), crate::error::io_error(&e)),
            }
        }
        // lld-link writes an import library for every DLL or image with exports: `/implib:`, or
        // the output's name with `.lib` (in MinGW mode only when asked for).
        if !self.implib_given && !c.no_implib && !c.mingw && (c.dll || !c.exports.is_empty()) {
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
        if self.map.is_some() {
            for (spelling, v) in &self.mapinfo {
                match v.as_str() {
                    "exports" => c.map_info_exports = true,
                    _ => crate::bail!("unknown option: {spelling}{v}"),
                }
            }
        }
        let mut lldmap = self.lldmap.map(|m| named_after_output(m, "map"));
        let map = self.map.map(|m| named_after_output(m, "map"));
        if lldmap.is_some() && lldmap == map {
            c.diag.warn(&format!(
                "/lldmap and /map have the same output file '{}'.\n>>> ignoring /lldmap",
                map.as_ref().map_or(String::new(), |m| m.display().to_string())
            ));
            lldmap = None;
        }
        let pdb = (c.debug_pdb && c.pdb.is_none()).then(|| named_after_output(String::new(), "pdb"));
        c.lldmap = lldmap.or(c.lldmap.take());
        c.map = map.or(c.map.take());
        if pdb.is_some() {
            c.pdb = pdb;
        }
        Ok(CoffAction::Link(c))
    }
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

/// Expands response files with the Windows quoting rules only, as llvm-lib does.
pub(crate) fn expand_windows_response_files(argv: &[String]) -> Result<Vec<String>> {
    let mut out = Vec::new();
    expand(argv, false, 0, &mut out)?;
    Ok(out)
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
    let Ok(a) = ma.parse() else {
        errors.push(format!("invalid number: {ma}"));
        return (0, 0);
    };
    let Ok(b) = mi.parse() else {
        errors.push(format!("invalid number: {mi}"));
        return (0, 0);
    };
    (a, b)
}

/// What LLVM's `GlobPattern::create` says of a pattern it refuses (only the unmatched `[`,
/// the one way a glob is malformed; dtld refuses `/includeglob` itself otherwise).
fn glob_error(pat: &str) -> Option<&'static str> {
    let b = pat.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'[' => {
                // `[]...]` and `[!]...]`: a `]` right after the opening is a member.
                let mut j = i + 1;
                if j < b.len() && (b[j] == b'!' || b[j] == b'^') {
                    j += 1;
                }
                match b.get(j + 1..).and_then(|rest| rest.iter().position(|&c| c == b']')) {
                    Some(k) => i = j + 1 + k + 1,
                    None => return Some("invalid glob pattern, unmatched '['"),
                }
            }
            _ => i += 1,
        }
    }
    None
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
    fn lto_opt_keywords_reach_the_lto_options() {
        let CoffAction::Link(c) = parse(&s(&["/opt:lldltocgo=3,lldltopartitions=2,ltodebugpassmanager", "a.obj"])).ok().unwrap() else { panic!() };
        let o = c.lto.options().unwrap();
        assert_eq!(o.cg_opt_level, Some(3));
        assert!(o.debug_pass_manager);
        // One partition is what dtld compiles; the option is reported when LTO runs.
        assert_eq!(o.dropped, vec![("/opt:lldltopartitions=2".to_string(), false)]);
    }

    #[test]
    fn distributor_needs_remote_compiler() {
        let e = parse(&s(&["/thinlto-distributor:d", "a.obj"])).err().unwrap();
        assert_eq!(e.messages[0], "A value must be specified for /thinlto-remote-compiler if /thinlto-distributor is specified.");
    }

    #[test]
    fn known_options_are_never_inputs() {
        let l = |a: &'static str| lookup(a).map(|(o, s, v)| (o.names[0], s, v));
        assert_eq!(l("/failifmismatch:k=v"), Some(("failifmismatch", "/failifmismatch", Some("k=v"))));
        assert_eq!(l("/debugtype:pdata"), Some(("debugtype", "/debugtype", Some("pdata"))));
        assert_eq!(l("/DEBUG:FULL"), Some(("debug", "/DEBUG", Some("FULL"))));
        assert_eq!(l("/debug"), Some(("debug", "/debug", None)));
        assert_eq!(l("/WX:no"), Some(("wx", "/WX", Some("no"))));
        assert_eq!(l("/force:unresolved"), Some(("force:unresolved", "/force:unresolved", None)));
        assert_eq!(l("-lldltocachepolicy:x"), Some(("lldltocachepolicy", "-lldltocachepolicy", Some("x"))));
        assert_eq!(l("/??"), Some(("help", "/??", None)));
        assert_eq!(l("/work/x.obj"), None);
        let CoffAction::Link(c) = parse(&s(&["/allowbind:no", "/swaprun:cd,net", "/failifmismatch:a=b", "/dll", "x.obj"])).ok().unwrap() else { panic!() };
        assert!(!c.allow_bind);
        assert_eq!(c.swaprun, object::pe::IMAGE_FILE_REMOVABLE_RUN_FROM_SWAP | object::pe::IMAGE_FILE_NET_RUN_FROM_SWAP);
        assert_eq!(c.fail_if_mismatch, vec![("a".to_string(), "b".to_string())]);
        assert_eq!(c.out_implib, Some(PathBuf::from("x.lib")));
    }

    #[test]
    fn statuses_warn_or_refuse_by_name() {
        let e = parse(&s(&["/delayload:a.dll", "/defarm64native:d", "/manifest:no", "/cetcompat:no", "x.obj"])).err().unwrap();
        assert_eq!(e.messages, ["/delayload:a.dll is not supported", "/defarm64native:d is not supported"]);
        assert!(parse(&s(&["/manifest", "x.obj"])).is_err());
        assert!(parse(&s(&["/mapinfo:exports", "/nologo", "/ltcg:pgo", "/winsdkdir:x", "x.obj"])).is_ok());
        // Every option of the table is found by each of its names, with its arity.
        for o in OPTIONS {
            for n in o.names {
                let a = match o.arity {
                    Value => format!("/{n}:x"),
                    _ => format!("/{n}"),
                };
                assert!(lookup(&a).is_some_and(|(f, _, _)| std::ptr::eq(f, o)), "{a}");
            }
        }
        assert!(help_text().contains("/out:<file>") && help_text().contains("/dynamicbase[:no]"));
    }
}
