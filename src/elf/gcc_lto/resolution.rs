//! What GCC's LTO plugin is told about every IR symbol: GNU ld's `get_symbols` rules, from
//! dtld's own bindings.
//!
//! The plugin writes these answers into the resolution file (`-fresolution=`) that `lto1`
//! reads: whether this file's definition prevails, whether anything outside the IR can see it,
//! and where an undefined reference went. They decide what GCC may internalize, inline away or
//! drop, so they follow `ld/plugin.c` (`get_symbols`, `is_visible_from_outside`) exactly:
//!
//! * a reference (or a common) that stayed undefined → `UNDEF`; bound to a definition the
//!   linker made (`__bss_start`, `--defsym`, ...) → `RESOLVED_EXEC`; to this file's own common →
//!   prevailing, as below; to another IR file → `RESOLVED_IR`; to a shared library →
//!   `RESOLVED_DYN`; to a native object → `RESOLVED_EXEC`;
//! * a definition that lost to another IR file → `PREEMPTED_IR`; to anything else →
//!   `PREEMPTED_REG`; a definition that prevails is `PREVAILING_DEF` when a native object (or
//!   `-u`, the entry point, `--defsym`, `--wrap`) references it, `PREVAILING_DEF_IRONLY_EXP`
//!   when it is visible from outside the link (`-r`; or a shared library references or defines
//!   it, `--export-dynamic`, `-shared`, `--dynamic-list`; in each case unless a version script
//!   makes it local or its visibility is hidden or internal), and `PREVAILING_DEF_IRONLY`
//!   otherwise.
//!
//! A native object's *definition* of the same name does not count as a reference (GNU ld marks
//! only references as "non-IR"), so an IR definition overriding a native weak one stays
//! `IRONLY`. `--wrap=X`: the definition of `__wrap_X`, and that of `X` when `__real_X` is referenced,
//! are `PREVAILING_DEF` (LTO's output reaches them through the linker's renaming), and a reference to `X` bound to this
//! file's own `__wrap_X` is `RESOLVED_IR`. A `--defsym` name is bound where its target is (the linker's own definition for a number).

use std::collections::{HashMap, HashSet};
use std::ffi::c_int;

use object::elf;

use crate::elf::config::defsym_target;
use crate::elf::config::Config;
use crate::elf::symtab::{Def, File, FileId, Resolved, Symbol};
use crate::elf::version_script::{self as vs, DynamicListMatcher, VersionAssign, VersionScript};
use crate::error::{Error, Result};
use crate::lto::plugin_api::{
    is_undef, LDPK_COMMON, LDPR_PREEMPTED_IR, LDPR_PREEMPTED_REG, LDPR_PREVAILING_DEF, LDPR_PREVAILING_DEF_IRONLY, LDPR_PREVAILING_DEF_IRONLY_EXP,
    LDPR_RESOLVED_DYN, LDPR_RESOLVED_EXEC, LDPR_RESOLVED_IR, LDPR_UNDEF,
};

/// What the command line says about exports, read before resolution finishes (where dtld
/// applies it to symbols): version scripts (`local:` hides a definition) and dynamic lists.
#[derive(Default)]
pub struct Exports {
    script: Option<VersionScript>,
    list: Option<DynamicListMatcher>,
    globs: Vec<String>,
}

impl Exports {
    pub fn read(config: &Config) -> Result<Exports> {
        let read = |p: &std::path::Path| -> Result<String> {
            std::fs::read(p)
                .map(|d| String::from_utf8_lossy(&d).into_owned())
                .map_err(|e| Error::new(format!("cannot open {}: {}", p.display(), crate::error::io_error(&e))))
        };
        let mut scripts = Vec::new();
        for p in &config.version_scripts {
            scripts.push(vs::parse(&read(p)?, &p.to_string_lossy()).map_err(Error::new)?);
        }
        for (name, text) in &config.inline_version_scripts {
            scripts.push(vs::parse(text, name).map_err(Error::new)?);
        }
        let mut patterns = Vec::new();
        for p in config.dynamic_lists.iter().chain(&config.export_dynamic_symbol_lists) {
            patterns.extend(vs::parse_dynamic_list(&read(p)?, &p.to_string_lossy()).map_err(Error::new)?);
        }
        Ok(Exports {
            script: (!scripts.is_empty()).then(|| VersionScript::merge(scripts)),
            list: (!patterns.is_empty()).then(|| DynamicListMatcher::new(&patterns)),
            globs: config.export_dynamic_symbols.clone(),
        })
    }

    fn listed(&self, name: &[u8]) -> bool {
        self.list.as_ref().is_some_and(|m| m.matches(name)) || self.globs.iter().any(|g| crate::util::glob::glob_match(g.as_bytes(), name))
    }

    fn local(&self, name: &[u8]) -> bool {
        self.script.as_ref().and_then(|s| s.assign(name)) == Some(VersionAssign::Local)
    }
}

/// `is_visible_from_outside`: could something outside this link's IR reach the definition?
fn visible_from_outside(config: &Config, exports: &Exports, sym: &Symbol) -> bool {
    if config.relocatable {
        return true;
    }
    let dynamic = sym.dso_ref || sym.in_dso || config.export_dynamic || config.shared || exports.listed(sym.name);
    if !dynamic || exports.local(sym.name) {
        return false;
    }
    matches!(sym.visibility, elf::STV_DEFAULT | elf::STV_PROTECTED)
}

/// The `LDPR_*` resolution of every symbol (in `GccIrFile::syms` order) of each GCC IR file in
/// `files`.
pub fn compute(config: &Config, exports: &Exports, r: &Resolved, files: &[FileId]) -> Vec<Vec<c_int>> {
    // `--defsym` definitions are the linker's own (they override any input's in `finish`); one
    // that names a symbol lives where that symbol does (GNU ld gives it the target's section).
    let defsym: HashMap<&[u8], Def> = config
        .defsym
        .iter()
        .map(|(n, e)| (n.as_bytes(), defsym_target(e).and_then(|t| r.lookup(t.as_bytes())).map_or(Def::Synthetic, |t| r.symbols[t].def)))
        .collect();
    // `--wrap=X`: `X` is *wrapped* (references bind to `__wrap_X`), `__wrap_X` is the *wrapper*.
    let wrapped: HashSet<&[u8]> = config.wrap.iter().map(|w| w.as_bytes()).collect();
    let wrappers: HashSet<Vec<u8>> = config.wrap.iter().map(|w| format!("__wrap_{w}").into_bytes()).collect();
    files
        .iter()
        .map(|&f| {
            let File::GccIr(g) = &r.files[f] else { return Vec::new() };
            g.syms
                .iter()
                .enumerate()
                .map(|(k, s)| {
                    let sym = &r.symbols[r.sym_ids[f][k]];
                    let def = defsym.get(sym.name).copied().unwrap_or(sym.def);
                    let reference = is_undef(s.kind) || s.kind == LDPK_COMMON;
                    let res = if reference {
                        match def {
                            Def::Undefined | Def::Lazy(_) => LDPR_UNDEF,
                            Def::Synthetic => LDPR_RESOLVED_EXEC,
                            Def::Bitcode(df, _) if df == f => LDPR_PREVAILING_DEF_IRONLY,
                            Def::Bitcode(..) => LDPR_RESOLVED_IR,
                            Def::Shared(..) => LDPR_RESOLVED_DYN,
                            Def::Defined(..) | Def::Common(..) => LDPR_RESOLVED_EXEC,
                        }
                    } else {
                        match def {
                            Def::Bitcode(df, dk) if df == f && dk == k => LDPR_PREVAILING_DEF_IRONLY,
                            Def::Bitcode(..) => LDPR_PREEMPTED_IR,
                            Def::Undefined | Def::Lazy(_) => LDPR_UNDEF,
                            _ => LDPR_PREEMPTED_REG,
                        }
                    };
                    if res != LDPR_PREVAILING_DEF_IRONLY {
                        res
                    } else if sym.obj_ref_native
                        || sym.strong_ref_native
                        || (!reference && (wrappers.contains(sym.name) || (wrapped.contains(sym.name) && sym.obj_ref)))
                    {
                        // Referenced from native code or the command line; or a wrapper, or a
                        // wrapped definition that `__real_` references reach (references from
                        // LTO's output reach both through the linker's renaming).
                        LDPR_PREVAILING_DEF
                    } else if reference && wrapped.contains(s.name) {
                        // A reference to a wrapped name, bound to this file's `__wrap_` one.
                        LDPR_RESOLVED_IR
                    } else if visible_from_outside(config, exports, sym) {
                        LDPR_PREVAILING_DEF_IRONLY_EXP
                    } else {
                        LDPR_PREVAILING_DEF_IRONLY
                    }
                })
                .collect()
        })
        .collect()
}
