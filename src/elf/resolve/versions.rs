//! After binding: the version script and dynamic lists applied to the resolved symbols (which
//! names are exported, under which version; lld's `SymbolTable::scanVersionScript` and
//! `handleDynamicList`), and the reading of those files (`-L` lookup, lld's errors).
//!
//! Why it exists: versions are a stage of their own after the files are bound; `finish` calls
//! it, and the script-file checks are also asked for before the link (`script_file_errors`).

use object::read::elf::Sym as _;

use rayon::prelude::*;

use crate::elf::config::Config;
use crate::elf::symtab::*;
use crate::elf::types::LE;
use crate::elf::version_input::{read_script_file, version_script};
use crate::error::{Error, Result};

/// `--dynamic-list=`, `--export-dynamic-symbol-list=` and `--export-dynamic-symbol=`: the symbols
/// an executable exports (and a library keeps preemptible).
pub(super) fn mark_dynamic_listed(config: &Config, r: &mut Resolved) -> Result<()> {
    use crate::elf::version_script as vs;
    let mut dyn_patterns = Vec::new();
    let mut errors = Vec::new();
    for p in config.dynamic_lists.iter().chain(&config.export_dynamic_symbol_lists) {
        let text = read_script_file(config, p)?;
        match vs::parse_dynamic_list(&text, &p.to_string_lossy()) {
            Ok(v) => dyn_patterns.extend(v),
            Err(e) => errors.push(e),
        }
    }
    if !errors.is_empty() {
        return Err(Error::many(errors));
    }
    if !dyn_patterns.is_empty() {
        let m = vs::DynamicListMatcher::new(&dyn_patterns);
        for sym in r.symbols.iter_mut() {
            if m.matches(sym.name) {
                sym.dynamic_listed = true;
            }
        }
    }
    for sym in r.symbols.iter_mut() {
        if config.export_dynamic_symbols.iter().any(|g| crate::util::glob::glob_match(g.as_bytes(), sym.name)) {
            sym.dynamic_listed = true;
        }
    }
    Ok(())
}

pub(super) fn apply_versions(config: &Config, r: &mut Resolved) -> Result<()> {
    use crate::elf::version_script::{self as vs, VersionAssign};
    let mut errors = Vec::new();
    let script = version_script(config)?;
    mark_dynamic_listed(config, r)?;
    // With bitcode, the script was checked before LTO (`version_checks::before_lto`).
    let checked = r.version_errors_before_lto.take();
    if let Some(s) = script.as_ref().filter(|_| checked.is_none()) {
        for w in s.warnings() {
            config.diag.warn(&w);
        }
    }
    if let Some(s) = &script {
        r.versions = s.version_names().iter().map(|v| v.to_string()).collect();
    }
    let defined = |d: Def| matches!(d, Def::Defined(..) | Def::Common(..));
    let reserved = |s: &Symbol| crate::elf::version_checks::reserved(config, s);
    // `.symver foo, foo@VER` keeps both names in the object: the unversioned `foo` at the same
    // place is not exported (lld), only `foo@VER` is.
    let mut aliased: Vec<SymbolId> = Vec::new();
    // Which names hold a version (`@`), found in parallel: both loops below ask, for every
    // definition, and the names are cold by now.
    let versioned: Vec<bool> = r.symbols.par_iter().map(|s| memchr::memchr(b'@', s.name).is_some()).collect();
    for (sym, _) in r.symbols.iter().zip(&versioned).filter(|(_, &v)| v) {
        let Def::Defined(f, i) = sym.def else { continue };
        let Some((base, ver, false)) = vs::split_versioned(sym.name) else { continue };
        if ver.is_empty() {
            continue;
        }
        if let Some(bid) = r.lookup(base) {
            // A `foo@@VER` definition is filed as `foo`: it is the default version, exported
            // under its own name next to `foo@OLD` (`version-script-twice.s`).
            if r.symbols[bid].default_version.is_some() {
                continue;
            }
            if let Def::Defined(bf, bi) = r.symbols[bid].def {
                let (a, b) = (&r.obj(f).symbols[i], &r.obj(bf).symbols[bi]);
                if bf == f && r.obj(f).shndx(i) == r.obj(bf).shndx(bi) && a.st_value(LE) == b.st_value(LE) {
                    aliased.push(bid);
                }
            }
        }
    }
    for bid in aliased {
        r.symbols[bid].forced_local = true;
    }
    for (sym, &has_version) in r.symbols.iter_mut().zip(&versioned) {
        if sym.forced_local && sym.version == 1 && sym.default_version.is_none() && !has_version {
            // Already hidden as an alias of `foo@VER` above.
            sym.version = 0;
            continue;
        }
        if !defined(sym.def) && !reserved(sym) {
            continue;
        }
        // The script sees the name as the object spelled it (`foo@@VER` included): lld's
        // `local:` patterns (`local: *`) can hide a versioned definition too.
        let raw: std::borrow::Cow<[u8]> = match sym.default_version {
            Some(v) => [sym.name, b"@@", v].concat().into(),
            None => sym.name.into(),
        };
        let assigned = script.as_ref().and_then(|s| s.assign(&raw));
        if assigned == Some(VersionAssign::Local) {
            sym.version = 0;
            sym.forced_local = true;
            continue;
        }
        // An explicit version from the object (`foo@VER`, `foo@@VER`).
        let explicit = match sym.default_version {
            Some(v) => Some((v, false)),
            None if has_version => vs::split_versioned(sym.name).filter(|(_, v, _)| !v.is_empty()).map(|(_, v, d)| (v, !d)),
            None => None,
        };
        if let Some((ver, hidden)) = explicit {
            if sym.excluded_lib {
                // Not exported (--exclude-libs): its version is never written or checked.
                sym.version = 0;
                continue;
            }
            match script.as_ref().and_then(|s| s.version_index(ver)) {
                Some(i) => {
                    sym.version = i;
                    sym.version_hidden = hidden;
                }
                // lld: only a shared object must define the versions its symbols name (an
                // executable may override a library's versioned symbol; `-r` keeps the name).
                None if !config.shared => sym.version = 1,
                None => errors.push(format!(
                    "{}symbol {} has undefined version {}",
                    match sym.def {
                        Def::Defined(f, _) | Def::Common(f, _) => format!("{}: ", r.inputs[f].name),
                        _ => String::new(),
                    },
                    String::from_utf8_lossy(&raw),
                    String::from_utf8_lossy(ver)
                )),
            }
            continue;
        }
        match assigned {
            Some(VersionAssign::Named(i)) => sym.version = i,
            _ => sym.version = 1,
        }
    }
    match (checked, script.as_ref()) {
        (Some(e), _) => errors.extend(e),
        (None, Some(s)) => errors.extend(crate::elf::version_checks::check(config, s, r)),
        (None, None) => {}
    }
    if !errors.is_empty() {
        return Err(Error::many(errors));
    }
    Ok(())
}
