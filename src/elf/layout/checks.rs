//! Checks lld makes once the inputs are read and the live sections known, before any address
//! exists: an object that defines a symbol the linker reserves for itself, and an
//! `SHF_LINK_ORDER` section that stays while the section it describes was discarded (its
//! metadata would describe nothing). They live here, not in the stages that use the facts,
//! because each must fail the link before the layout is built on them.

use object::elf;
use object::read::elf::SectionHeader as _;

use crate::elf::config::Config;
use crate::elf::gc::Live;
use crate::elf::object::SecKind;
use crate::elf::symtab::{Def, File, FileId, Resolved, SymbolId};
use crate::elf::types::LE;
use std::collections::HashSet;

/// lld's `addReservedSymbols`: `_GLOBAL_OFFSET_TABLE_` names the GOT, so an input that defines
/// it is refused (not for `-r`, which defines nothing).
pub(super) fn reserved_symbol_errors(config: &Config, r: &Resolved) -> Vec<String> {
    let name = b"_GLOBAL_OFFSET_TABLE_";
    if config.relocatable {
        return Vec::new();
    }
    match r.lookup(name).map(|id| r.symbols[id].def) {
        Some(Def::Defined(f, _)) | Some(Def::Common(f, _)) => {
            vec![format!("{} cannot redefine linker defined symbol '{}'", r.inputs[f].name, String::from_utf8_lossy(name))]
        }
        _ => Vec::new(),
    }
}

/// lld's `--no-allow-shlib-undefined` (the default for an executable): every shared library of
/// the link whose `DT_NEEDED` libraries are all in the link must find each symbol it needs (a
/// non-weak undefined symbol of its dynamic symbol table) defined by a library or by the output,
/// and not by a definition the output keeps local. `linker_defined`: a symbol the linker
/// defines (`_end`, `__bss_start`, ...), which the output exports.
/// `dead(file, symbol)`: the definition's section was garbage-collected (lld then demotes the
/// symbol to undefined, so a library's reference to it is an undefined reference).
pub(super) fn shlib_undefined_errors(
    config: &Config,
    r: &Resolved,
    linker_defined: &dyn Fn(SymbolId) -> bool,
    dead: &dyn Fn(FileId, usize) -> bool,
) -> Vec<String> {
    if config.relocatable || !config.shlib_undefined_reported() {
        return Vec::new();
    }
    let sonames: HashSet<&str> = r.files.iter().filter_map(|f| if let File::Shared(d) = f { Some(d.soname.as_str()) } else { None }).collect();
    let mut errors = Vec::new();
    for (f, file) in r.files.iter().enumerate() {
        let File::Shared(dso) = file else { continue };
        if !r.loaded[f] || !dso.needed.iter().all(|n| sonames.contains(n.as_str())) {
            continue;
        }
        let mut seen = HashSet::new();
        for ds in dso.syms.iter().filter(|s| !s.defined && s.sym.st_bind() != elf::STB_WEAK) {
            // A versioned reference is the symbol `name@version` (resolve.rs names it so).
            let versioned = ds.version.map(|v| [ds.name, b"@", v].concat());
            let Some(id) = r.lookup(versioned.as_deref().unwrap_or(ds.name)).filter(|&id| seen.insert(id)) else { continue };
            let sym = &r.symbols[id];
            if sym.in_dso {
                continue;
            }
            match sym.def {
                // An object's weak references make the symbol weak: lld then reports nothing. A
                // symbol only libraries reference keeps their (global) binding, though dtld's
                // resolver calls it weak for want of a strong object reference.
                Def::Undefined | Def::Lazy(_) if !linker_defined(id) && !weakly_referenced(sym) => errors.push(format!(
                    "undefined reference: {}\n>>> referenced by {} (disallowed by --no-allow-shlib-undefined)",
                    crate::elf::diag::demangle(sym.name),
                    r.inputs[f].name
                )),
                // lld's demoteDefined makes a weak definition GLOBAL undefined, so a library's
                // reference to it is reported whatever the definition's binding.
                Def::Defined(g, di) if dead(g, di) => errors.push(format!(
                    "undefined reference: {}\n>>> referenced by {} (disallowed by --no-allow-shlib-undefined)",
                    crate::elf::diag::demangle(sym.name),
                    r.inputs[f].name
                )),
                Def::Defined(g, _) | Def::Common(g, _) if sym.forced_local || matches!(sym.visibility, elf::STV_HIDDEN | elf::STV_INTERNAL) => {
                    errors.push(format!("non-exported symbol '{}' in '{}' is referenced by DSO '{}'", sym.shown_name(), r.inputs[g].name, r.inputs[f].name))
                }
                _ => {}
            }
        }
    }
    errors
}

/// An object referenced the symbol, and only weakly (lld then leaves the library's reference
/// alone).
fn weakly_referenced(sym: &crate::elf::symtab::Symbol) -> bool {
    sym.weak && sym.obj_ref
}

/// lld's check in `resolveShfLinkOrder`: a live `SHF_LINK_ORDER` section whose linked-to
/// section was garbage-collected. (One whose linked-to section lost its COMDAT group goes with
/// it; that is not an error.)
pub(super) fn link_order_errors(r: &Resolved, live: &Live) -> Vec<String> {
    let mut errors = Vec::new();
    for (f, file) in r.files.iter().enumerate() {
        let File::Obj(o) = file else { continue };
        for (s, sec) in o.sections.iter().enumerate() {
            if !live[f][s] || sec.flags & u64::from(elf::SHF_LINK_ORDER) == 0 || sec.kind == SecKind::Ignored {
                continue;
            }
            let to = sec.hdr.sh_link(LE) as usize;
            let Some(target) = o.sections.get(to).filter(|_| to != 0) else { continue };
            if live[f][to] || target.kind == SecKind::Ignored || r.discarded[f][to] {
                continue;
            }
            errors.push(format!(
                "{}:({}): sh_link points to discarded section {}:({})",
                o.input.name,
                String::from_utf8_lossy(sec.name),
                o.input.name,
                String::from_utf8_lossy(target.name)
            ));
        }
    }
    errors
}

/// `-z cet-report=warning|error` (lld's readSecurityNotes): each object, in the order it joined
/// the link, without the x86 IBT or SHSTK feature bit in its `.note.gnu.property`.
pub(super) fn cet_report(config: &Config, r: &Resolved) {
    let Some(policy) = config.z_cet_report.as_deref().filter(|p| *p != "none") else {
        return;
    };
    for &f in &r.load_order {
        let File::Obj(o) = &r.files[f] else { continue };
        let features = crate::elf::object::x86_features(o);
        for (bit, name) in [(1, "IBT"), (2, "SHSTK")] {
            if features & bit == 0 {
                let msg = format!("{}: -z cet-report: file does not have GNU_PROPERTY_X86_FEATURE_1_{name} property", r.inputs[f].name);
                if policy == "error" {
                    config.diag.error(&msg);
                } else {
                    config.diag.warn(&msg);
                }
            }
        }
    }
}
