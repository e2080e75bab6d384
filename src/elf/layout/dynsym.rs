//! The dynamic symbol table: which symbols a shared object or an executable exports or imports,
//! and the fields each gets.

#[allow(unused_imports)]
use std::collections::{BTreeMap, HashMap};

use object::elf;

use crate::elf::symtab::{Def, SymbolId};

use super::model::*;
use super::scan::*;

pub(super) fn build_dynsyms(l: &mut Layout) {
    if !l.has_dynamic {
        return;
    }
    let r = l.r;
    let mut list: Vec<SymbolId> = Vec::new();
    let dynamic_link = l.has_dso();
    for (id, s) in r.symbols.iter().enumerate() {
        let include = match s.def {
            Def::Shared(..) => (s.obj_ref && l.gc_used.as_ref().is_none_or(|u| u.contains(&id))) || l.sym_flags.contains_key(&Target::Global(id)),
            Def::Undefined | Def::Lazy(_) if l.config.shared => {
                s.obj_ref
                    && s.visibility == elf::STV_DEFAULT
                    && !l.is_linker_defined(id)
                    && (l.config.z_dynamic_undefined_weak || !s.weak)
                    && l.gc_used.as_ref().is_none_or(|u| u.contains(&id))
                    || exports_start_stop(l, id)
                    || l.exports_linker_defined(id)
                    || protected_undefined_over_dso(l, id)
            }
            Def::Undefined | Def::Lazy(_) => {
                // Non-weak ones reach here only through --unresolved-symbols=ignore-* or
                // --warn-unresolved-symbols; the loader binds them, as `is_preemptible` says.
                (dynamic_link
                    && (s.weak || l.config.unresolved_ignored() || l.config.warn_unresolved_symbols)
                    && s.obj_ref
                    && s.visibility == elf::STV_DEFAULT
                    && !l.is_linker_defined(id)
                    && l.gc_used.as_ref().is_none_or(|u| u.contains(&id)))
                    || exports_start_stop(l, id)
                    || l.exports_linker_defined(id)
                    || protected_undefined_over_dso(l, id)
            }
            Def::Defined(..) | Def::Common(..) => {
                !s.forced_local
                    && matches!(l.visibility(id), elf::STV_DEFAULT | elf::STV_PROTECTED)
                    && (s.dso_ref || s.in_dso || s.dynamic_listed || l.config.export_dynamic || l.config.shared)
            }
            // `--defsym` and linker-script definitions are exported like any definition.
            Def::Synthetic => {
                (l.config.defsym.iter().any(|(n, _)| n.as_bytes() == s.name) || l.config.script.assigns().iter().any(|a| a.name.as_bytes() == s.name))
                    && !s.forced_local
                    && l.visibility(id) == elf::STV_DEFAULT
                    && (l.config.shared || l.config.export_dynamic || s.dso_ref || s.dynamic_listed)
            }
            Def::Bitcode(..) => false,
        };
        if include {
            list.push(id);
        }
    }
    for &aid in l.copy_alias.keys() {
        if !list.contains(&aid) {
            list.push(aid);
        }
    }
    // With .gnu.hash: undefined first, then defined ones in .gnu.hash bucket order (assigned
    // when the hash table is built; here: stable order by name hash modulo is done in
    // synthetic). Without it (--hash-style=sysv) lld keeps symbol-table order, which decides
    // the order of dynamic relocations too (they sort by symbol index).
    if !l.config.hash_gnu {
        list.sort_unstable();
        assign_indices(l, list);
        return;
    }
    // Undefined ones first, then by bucket, then by symbol id: each key computed once (hashing
    // the names inside the comparisons cost clang's static link 15% of its CPU).
    let defined: Vec<bool> = list.iter().map(|&id| is_defined_for_dynsym(l, id)).collect();
    let nbuckets = crate::elf::types::gnu_hash_nbuckets(defined.iter().filter(|&&d| d).count());
    let mut keyed: Vec<(bool, u32, SymbolId)> =
        list.iter().zip(&defined).map(|(&id, &d)| (d, if d { crate::elf::types::gnu_hash(dyn_name(l, id)) % nbuckets } else { 0 }, id)).collect();
    keyed.sort_unstable();
    list.clear();
    list.extend(keyed.into_iter().map(|(_, _, id)| id));
    assign_indices(l, list);
}

/// Numbers the .dynsym entries in `list` order (index 0 is the null symbol).
fn assign_indices(l: &mut Layout, list: Vec<SymbolId>) {
    for (i, &id) in list.iter().enumerate() {
        l.dynsym_index.insert(id, i as u32 + 1);
    }
    l.dynsyms = list;
}

pub fn is_defined_for_dynsym(l: &Layout, id: SymbolId) -> bool {
    match l.r.symbols[id].def {
        Def::Defined(..) | Def::Common(..) | Def::Synthetic => true,
        // Canonical PLT entries must be found by the loader's hash lookup, so the library's own
        // references bind to the executable's address: they count as defined here.
        Def::Shared(..) => l.sym_flags.get(&Target::Global(id)).is_some_and(|f| f.copy || f.canonical),
        // `__start_foo`/`__stop_foo` exported dynamically: the linker defines them.
        Def::Undefined => {
            let s = &l.r.symbols[id];
            (start_stop_section_exists(l, s.name) && (l.config.export_dynamic || l.config.shared || s.in_dso)) || l.exports_linker_defined(id)
        }
        // So are the end markers a library exports.
        Def::Lazy(_) => l.exports_linker_defined(id),
        _ => false,
    }
}

/// The name written to .dynsym/.dynstr (without an `@version` suffix).
pub fn dyn_name(l: &Layout, id: SymbolId) -> &'static [u8] {
    let name = l.r.symbols[id].name;
    match name.iter().position(|&c| c == b'@') {
        Some(p) => &name[..p],
        None => name,
    }
}

// ------------------------------------------------------------------------------------------------
// Synthetic sections
// ------------------------------------------------------------------------------------------------

/// A protected reference that a library's definition could not satisfy (it stays undefined,
/// weak, resolved to 0) is still written to .dynsym: lld marks every name a library defines as
/// exported, and only hidden and internal visibility make a symbol local to the output. It is
/// not preemptible, so no dynamic relocation names it.
fn protected_undefined_over_dso(l: &Layout, id: SymbolId) -> bool {
    let s = &l.r.symbols[id];
    s.in_dso
        && s.obj_ref
        && s.visibility == elf::STV_PROTECTED
        && !s.forced_local
        && !l.is_linker_defined(id)
        && l.gc_used.as_ref().is_none_or(|u| u.contains(&id))
}

/// A `__start_foo`/`__stop_foo` the linker defines goes to .dynsym when the output exports
/// references (--export-dynamic, -shared) or when a library defines the name too: lld then
/// exports its own definition, referenced by an object or not.
fn exports_start_stop(l: &Layout, id: SymbolId) -> bool {
    let s = &l.r.symbols[id];
    ((s.obj_ref && (l.config.export_dynamic || l.config.shared)) || s.in_dso)
        && matches!(s.visibility, elf::STV_DEFAULT | elf::STV_PROTECTED)
        && start_stop_section_exists(l, s.name)
}
