//! The version script's checks against the symbol table: lld's reassignment warnings and its
//! `--no-undefined-version` errors ("version script assignment of 'V' to symbol 'x' failed:
//! symbol not defined").
//!
//! Why a module of its own: lld makes these checks in `SymbolTable::scanVersionScript`, which
//! its driver runs *before* LTO compiles the bitcode, so a bitcode definition that LTO later
//! internalizes and drops (a hidden function a version script names, fuzz case
//! `fuzz-lto-version-script-hidden`) still counts as defined. dtld assigns versions after LTO
//! (`resolve::apply_versions`, on the final symbols), so with bitcode in the link the checks
//! run here on the pre-LTO table (`before_lto`), and `apply_versions` reports what they found
//! instead of checking again.

use crate::elf::config::Config;
use crate::elf::symtab::{Def, Resolved, Symbol};
use crate::elf::version_script::VersionScript;

/// Whether `sym` counts as defined for the version script: a definition (native, common, or,
/// before LTO, bitcode), a lazy one, or a linker-defined end marker (`_end`, `etext`, ...)
/// something references, which lld defines before it applies the script.
pub fn defined_for_script(config: &Config, sym: &Symbol) -> bool {
    match sym.def {
        Def::Defined(..) | Def::Common(..) | Def::Lazy(_) | Def::Bitcode(..) => true,
        Def::Undefined => reserved(config, sym),
        _ => false,
    }
}

/// A referenced linker-defined end marker: lld defines it before the version script applies,
/// so `local: *` hides it and a version names it like a definition.
pub fn reserved(config: &Config, sym: &Symbol) -> bool {
    matches!(sym.def, Def::Undefined | Def::Lazy(_)) && !config.script.has_sections && crate::elf::reserved::is_public_linker_defined(sym.name)
}

/// The script's warnings about `r`'s symbols (printed now) and its errors (returned).
pub fn check(config: &Config, script: &VersionScript, r: &Resolved) -> Vec<String> {
    let names: Vec<&'static [u8]> = r.symbols.iter().filter(|s| defined_for_script(config, s)).map(|s| s.name).collect();
    for w in script.reassign_warnings(names.iter().copied()) {
        config.diag.warn(&w);
    }
    if config.undefined_version {
        return Vec::new();
    }
    script.undefined_version_errors(names)
}

/// lld's order with bitcode in the link: the script's own warnings, then its checks against
/// the symbols before LTO. The errors are kept for `apply_versions` (lld fails the link after
/// LTO has run); `None` without a version script.
pub fn before_lto(config: &Config, r: &Resolved) -> crate::error::Result<Option<Vec<String>>> {
    let Some(script) = crate::elf::version_input::version_script(config)? else { return Ok(None) };
    for w in script.warnings() {
        config.diag.warn(&w);
    }
    Ok(Some(check(config, &script, r)))
}
