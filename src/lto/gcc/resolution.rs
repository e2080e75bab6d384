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
//! `IRONLY`.

use std::ffi::c_int;

use object::elf;

use crate::driver::args::Config;
use crate::elf::version_script::{VersionAssign, VersionScript};
use crate::lto::plugin_api::{
    is_undef, LDPK_COMMON, LDPR_PREEMPTED_IR, LDPR_PREEMPTED_REG, LDPR_PREVAILING_DEF, LDPR_PREVAILING_DEF_IRONLY, LDPR_PREVAILING_DEF_IRONLY_EXP,
    LDPR_RESOLVED_DYN, LDPR_RESOLVED_EXEC, LDPR_RESOLVED_IR, LDPR_UNDEF,
};
use crate::resolve::{Def, File, FileId, Resolved, Symbol};

/// The version scripts of the link, merged, when there are any (`local:` makes a definition
/// invisible from outside).
pub fn version_script(config: &Config) -> crate::error::Result<Option<VersionScript>> {
    use crate::elf::version_script as vs;
    let mut scripts = Vec::new();
    for p in &config.version_scripts {
        let text = std::fs::read(p).map_err(|e| crate::error::Error::new(format!("cannot open {}: {}", p.display(), crate::io_error(&e))))?;
        scripts.push(vs::parse(&String::from_utf8_lossy(&text), &p.to_string_lossy()).map_err(crate::error::Error::new)?);
    }
    for (name, text) in &config.inline_version_scripts {
        scripts.push(vs::parse(text, name).map_err(crate::error::Error::new)?);
    }
    Ok((!scripts.is_empty()).then(|| VersionScript::merge(scripts)))
}

/// `is_visible_from_outside`: could something outside this link's IR reach the definition?
fn visible_from_outside(config: &Config, script: Option<&VersionScript>, sym: &Symbol) -> bool {
    if config.relocatable {
        return true;
    }
    let dynamic = sym.dso_ref || sym.in_dso || sym.dynamic_listed || config.export_dynamic || config.shared;
    if !dynamic {
        return false;
    }
    if script.and_then(|s| s.assign(sym.name)) == Some(VersionAssign::Local) {
        return false;
    }
    matches!(sym.visibility, elf::STV_DEFAULT | elf::STV_PROTECTED)
}

/// The `LDPR_*` resolution of every symbol (in `GccIrFile::syms` order) of each GCC IR file in
/// `files`.
pub fn compute(config: &Config, script: Option<&VersionScript>, r: &Resolved, files: &[FileId]) -> Vec<Vec<c_int>> {
    files
        .iter()
        .map(|&f| {
            let File::GccIr(g) = &r.files[f] else { return Vec::new() };
            g.syms
                .iter()
                .enumerate()
                .map(|(k, s)| {
                    let sym = &r.symbols[r.sym_ids[f][k]];
                    let res = if is_undef(s.kind) || s.kind == LDPK_COMMON {
                        match sym.def {
                            Def::Undefined | Def::Lazy(_) => LDPR_UNDEF,
                            Def::Synthetic => LDPR_RESOLVED_EXEC,
                            Def::Bitcode(df, _) if df == f => LDPR_PREVAILING_DEF_IRONLY,
                            Def::Bitcode(..) => LDPR_RESOLVED_IR,
                            Def::Shared(..) => LDPR_RESOLVED_DYN,
                            Def::Defined(..) | Def::Common(..) => LDPR_RESOLVED_EXEC,
                        }
                    } else {
                        match sym.def {
                            Def::Bitcode(df, dk) if df == f && dk == k => LDPR_PREVAILING_DEF_IRONLY,
                            Def::Bitcode(..) => LDPR_PREEMPTED_IR,
                            Def::Undefined | Def::Lazy(_) => LDPR_UNDEF,
                            _ => LDPR_PREEMPTED_REG,
                        }
                    };
                    if res != LDPR_PREVAILING_DEF_IRONLY {
                        res
                    } else if sym.obj_ref_native || sym.strong_ref_native {
                        LDPR_PREVAILING_DEF
                    } else if visible_from_outside(config, script, sym) {
                        LDPR_PREVAILING_DEF_IRONLY_EXP
                    } else {
                        LDPR_PREVAILING_DEF_IRONLY
                    }
                })
                .collect()
        })
        .collect()
}
