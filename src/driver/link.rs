//! lld-link's command line (the MSVC flavour), chosen when dtld runs as `lld-link` or with
//! `-flavor link`.
//!
//! Options start with `/` or `-`, are case-insensitive, and take their value after a colon
//! (`/out:x.exe`, `-entry:main`). An argument that is not a known option is an input file when it
//! starts with `/` (an absolute path on Unix) and an ignored unknown argument (with lld-link's
//! warning) when it starts with `-`. The result is the same `CoffConfig` the MinGW driver fills.

use std::path::PathBuf;

use crate::coff::config::{CoffConfig, CoffInput, DebugMode};
use crate::driver::args::parse_num;
use crate::driver::mingw::subsystem_id;
use crate::driver::CoffAction;
use crate::error::{Error, Result};


/// Options that take a value, lowercased, without the prefix.
const VALUED: &[&str] = &[
    "out", "entry", "subsystem", "libpath", "defaultlib", "nodefaultlib", "base", "stack", "heap",
    "include", "includeoptional", "alternatename", "export", "implib", "machine", "debug", "opt",
    "filealign", "align", "timestamp", "thinlto-distributor", "thinlto-remote-compiler",
    "thinlto-distributor-arg", "thinlto-remote-compiler-arg", "wholearchive", "osversion", "version",
    "errorlimit", "threads", "dynamicbase", "nxcompat", "highentropyva", "largeaddressaware",
    "fixed", "tsaware", "lldltocache", "opt", "mllvm", "pdb", "map", "lldmap", "manifest", "merge",
    "section", "ignore", "guard", "lldlto", "lldltojobs", "thinlto-jobs", "force", "auto-import",
    "runtime-pseudo-reloc", "demangle", "wx", "incremental", "manifestuac", "manifestfile",
    "pdbaltpath", "natvis", "delayload", "def", "order", "brepro", "build-id", "exclude-symbols",
    "export-all-symbols", "exclude-all-symbols", "noentry", "dll", "lldmingw", "verbose", "release",
];

/// Options without a value.
const FLAGS: &[&str] = &[
    "dll", "lldsavetemps", "nologo", "nodefaultlib", "noentry", "verbose", "lldmingw", "dynamicbase", "nxcompat",
    "highentropyva", "largeaddressaware", "fixed", "tsaware", "debug", "wholearchive", "force",
    "incremental", "brepro", "release", "export-all-symbols", "exclude-all-symbols", "auto-import",
    "runtime-pseudo-reloc", "demangle", "wx", "manifest", "build-id", "help", "?", "version",
    "map", "lldmap",
];

pub fn parse(argv: &[String]) -> Result<CoffAction> {
    let args = crate::driver::args::expand_response_files(argv)?;
    let mut c = CoffConfig::new(false);
    let mut errors = Vec::new();
    let mut have_input = false;
    let mut whole_all = false;
    let mut whole_paths = Vec::new();
    let mut inputs = Vec::new();
    let mut def_file = None;
    // `/lldmap` (`Some("")`: named after the output).
    let mut lldmap: Option<String> = None;
    for a in &args {
        let prefixed = a.starts_with('/') || a.starts_with('-');
        let body = if prefixed { &a[1..] } else { a.as_str() };
        let (name, value) = match body.split_once(':') {
            Some((n, v)) => (n.to_ascii_lowercase(), Some(v.to_string())),
            None => (body.to_ascii_lowercase(), None),
        };
        let known = prefixed && (if value.is_some() { VALUED.contains(&name.as_str()) } else { FLAGS.contains(&name.as_str()) });
        if !known {
            if a.starts_with('-') {
                eprintln!("dtld: warning: ignoring unknown argument '{a}'");
            } else {
                inputs.push(a.clone());
                have_input = true;
            }
            continue;
        }
        let v = value.unwrap_or_default();
        let yes = |v: &str| !v.eq_ignore_ascii_case("no");
        match name.as_str() {
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
                    let (ma, mi) = ver.split_once('.').unwrap_or((ver, "0"));
                    c.subsystem_version = Some((ma.parse().unwrap_or(6), mi.parse().unwrap_or(0)));
                }
            }
            "osversion" => {
                let (ma, mi) = v.split_once('.').unwrap_or((&v, "0"));
                c.os_version = Some((ma.parse().unwrap_or(6), mi.parse().unwrap_or(0)));
            }
            "version" if !v.is_empty() => {
                let (ma, mi) = v.split_once('.').unwrap_or((&v, "0"));
                c.image_version = (ma.parse().unwrap_or(0), mi.parse().unwrap_or(0));
            }
            "version" => return Ok(CoffAction::Version),
            "help" | "?" => return Ok(CoffAction::Help),
            "dll" => c.dll = true,
            "libpath" => c.lib_paths.push(PathBuf::from(v)),
            "defaultlib" => c.default_libs.push(v),
            "nodefaultlib" if v.is_empty() => c.no_default_all = true,
            "nodefaultlib" => c.no_default_libs.push(v.to_ascii_lowercase()),
            "base" => c.image_base = parse_num(v.split(',').next().unwrap_or("")),
            "stack" | "heap" => {
                let mut it = v.split(',').map(parse_num);
                let r = it.next().flatten().unwrap_or(1 << 20);
                let cm = it.next().flatten().unwrap_or(4096);
                if name == "stack" { c.stack = (r, cm) } else { c.heap = (r, cm) }
            }
            "include" => c.includes.push(v),
            "includeoptional" => c.include_optional.push(v),
            "alternatename" => match v.split_once('=') {
                Some((a, b)) => c.alternate_names.push((a.to_string(), b.to_string())),
                None => errors.push(format!("/alternatename: invalid argument: {v}")),
            },
            "export" => match crate::coff::drectve::parse(format!("/export:{v}").as_bytes()) {
                Ok(ds) => {
                    for d in ds {
                        if let crate::coff::drectve::Directive::Export(e) = d {
                            c.exports.push(e);
                        }
                    }
                }
                Err(e) => errors.push(e),
            },
            "implib" => c.out_implib = Some(PathBuf::from(v)),
            "lldmap" => lldmap = Some(v),
            // link.exe's map format (lld's MapFile.cpp) is not implemented: say so rather than
            // silently writing nothing.
            "map" => errors.push("/map (link.exe's map format) is not supported; use /lldmap for lld's map".into()),
            "opt" => {
                for o in v.split(',') {
                    match o.to_ascii_lowercase().as_str() {
                        "ref" => c.gc = Some(true),
                        "noref" => c.gc = Some(false),
                        _ => {}
                    }
                }
            }
            "def" => def_file = Some(v),
            "machine" => {
                if !v.eq_ignore_ascii_case("x64") && !v.eq_ignore_ascii_case("amd64") {
                    errors.push(format!("unknown /machine argument: {v}"));
                }
            }
            "debug" => {
                c.debug = match v.to_ascii_lowercase().as_str() {
                    "none" => DebugMode::None,
                    "symtab" => DebugMode::Symtab,
                    _ => DebugMode::Dwarf,
                }
            }
            "filealign" => c.file_align = parse_num(&v).unwrap_or(512) as u32,
            "align" => c.section_align = parse_num(&v).unwrap_or(4096) as u32,
            "timestamp" => c.timestamp = v.parse().ok(),
            "brepro" => c.timestamp = Some(0),
            "dynamicbase" => c.dynamic_base = yes(&v),
            "nxcompat" => c.nx_compat = yes(&v),
            "highentropyva" => c.high_entropy_va = yes(&v),
            "largeaddressaware" => c.large_address_aware = yes(&v),
            "tsaware" => c.tsaware = yes(&v),
            "fixed" => c.fixed = yes(&v),
            "force" => c.allow_multiple = v.is_empty() || v.eq_ignore_ascii_case("multiple"),
            "wholearchive" if v.is_empty() => whole_all = true,
            "wholearchive" => {
                whole_paths.push(v.clone());
                inputs.push(v);
                have_input = true;
            }
            "errorlimit" => c.error_limit = v.parse().unwrap_or(20),
            "threads" => c.threads = v.parse().ok(),
            "verbose" => c.verbose = true,
            "demangle" => c.demangle = yes(&v),
            "lldsavetemps" => c.lto.save_temps = true,
            "lldmingw" => {
                c.mingw = true;
                c.auto_import = true;
                c.pseudo_relocs = true;
            }
            "auto-import" => c.auto_import = yes(&v),
            "runtime-pseudo-reloc" => c.pseudo_relocs = yes(&v),
            "export-all-symbols" => c.export_all = true,
            "exclude-all-symbols" => c.exclude_all = true,
            "exclude-symbols" => c.exclude_symbols.extend(v.split(',').map(String::from)),
            "build-id" => c.build_id = yes(&v),
            "thinlto-distributor" => c.lto.distributor = Some(v),
            "thinlto-remote-compiler" => c.lto.remote_compiler = Some(v),
            "thinlto-distributor-arg" => c.lto.distributor_args.push(v),
            "thinlto-remote-compiler-arg" => c.lto.remote_compiler_args.push(v),
            "lldltocache" => c.lto.cache_dir = Some(v),
            "thinlto-jobs" | "lldltojobs" => c.lto.jobs = Some(v),
            "mllvm" => c.lto.mllvm.push(v),
            _ => {} // accepted, no effect for dtld (/nologo, /opt:, /incremental, /manifest, ...)
        }
    }
    if c.lto.distributor.is_some() && c.lto.remote_compiler.as_deref().unwrap_or("").is_empty() {
        errors.push("A value must be specified for /thinlto-remote-compiler if /thinlto-distributor is specified.".into());
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
            c.no_entry = true;
        }
    }
    for i in inputs {
        let whole = whole_all || whole_paths.contains(&i);
        c.inputs.push(CoffInput { path: PathBuf::from(i), whole_archive: whole });
    }
    if c.output.as_os_str().is_empty() && !c.inputs.is_empty() {
        // lld-link names the output after the first input.
        let first = c.inputs[0].path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        c.output = PathBuf::from(format!("{first}.{}", if c.dll { "dll" } else { "exe" }));
    }
    if let Some(m) = lldmap {
        // lld's getMapFile: without a name, the output's path up to its last `.`, plus `.map`.
        c.lldmap = Some(PathBuf::from(if m.is_empty() {
            let out = c.output.to_string_lossy();
            format!("{}.map", &out[..out.rfind('.').unwrap_or(out.len())])
        } else {
            m
        }));
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
        let CoffAction::Link(c) = parse(&s(&["/OUT:a.exe", "-Entry:main", "/subsystem:console", "/nodefaultlib", "/nologo", "a.obj"])).ok().unwrap() else { panic!() };
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
}
