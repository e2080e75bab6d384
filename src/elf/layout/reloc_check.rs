//! The relocation scan's checks and their messages in lld's words: an executable that would
//! define a library's protected symbol (`cannot preempt symbol`), a copy relocation under
//! `-z nocopyreloc`, a reference a position-independent output cannot express, a PC-relative
//! reference to an absolute symbol, and a reference to an undefined local symbol. Each message
//! ends with lld's `>>> defined in` / `>>> referenced by` lines.

use object::elf;
use object::read::elf::Sym as _;

use super::model::{Layout, Target, N_CANON, N_COPY};
use crate::elf::diag;
use crate::elf::object::ObjFile;
use crate::elf::symtab::{Def, FileId, SymbolId};
use crate::elf::types::LE;

/// The file that defines `t` as lld names it after `>>> defined in` (`f`, the referencing
/// object, for an undefined or local symbol; `<internal>` for one the linker defines).
pub(super) fn defined_in(l: &Layout, t: Target, f: FileId) -> String {
    let r = l.r;
    match t {
        Target::Local(g, _) => r.inputs[g].name.clone(),
        Target::Global(id) => match r.symbols[id].def {
            Def::Defined(g, _) | Def::Common(g, _) | Def::Shared(g, _) | Def::Bitcode(g, _) => r.inputs[g].name.clone(),
            Def::Synthetic => "<internal>".to_string(),
            Def::Undefined | Def::Lazy(_) => r.inputs[f].name.clone(),
        },
    }
}

/// The name of `t` (empty for a section symbol).
fn target_name(l: &Layout, t: Target) -> &'static [u8] {
    match t {
        Target::Global(id) => l.r.symbols[id].name,
        Target::Local(f, i) => {
            let o = l.r.obj(f);
            if o.symbols[i as usize].st_type() == elf::STT_SECTION {
                b""
            } else {
                o.sym_name(i as usize)
            }
        }
    }
}

/// `t`'s name in a message as lld's `toStr(Symbol)` writes it: demangled, with the `@@VER` of a
/// definition an object named `foo@@VER` (lld keeps that suffix after the name it truncates).
fn shown_name(l: &Layout, t: Target) -> String {
    match t {
        Target::Global(id) => l.r.symbols[id].shown_name(),
        Target::Local(..) => diag::demangle(target_name(l, t)),
    }
}

/// `relocation R cannot be used against symbol 'x'; recompile with -fPIC` (or `local symbol`).
pub(super) fn pic_error(l: &Layout, f: FileId, s: usize, off: u64, r_type: u32, t: Target) -> String {
    let o = l.r.obj(f);
    let name = target_name(l, t);
    let what = if name.is_empty() { "local symbol".to_string() } else { format!("symbol '{}'", shown_name(l, t)) };
    format!(
        "relocation {} cannot be used against {what}; recompile with -fPIC{}",
        dtld_arch::x86_64::rel_name(r_type),
        diag::print_location(&defined_in(l, t, f), o, s, off, name)
    )
}

/// An executable defines library symbol `id` for a direct reference: a copy (STT_OBJECT) or a
/// canonical PLT entry (STT_FUNC). Returns what the symbol needs, or pushes lld's error: a
/// protected symbol cannot be preempted (unless address equality may break), `-z
/// nocopyreloc` forbids copies, and any other type cannot be referenced this way.
pub(super) fn define_in_exe(l: &Layout, f: FileId, s: usize, off: u64, r_type: u32, id: SymbolId, errors: &mut Vec<String>) -> Option<u16> {
    let r = l.r;
    let Def::Shared(d, k) = r.symbols[id].def else { return None };
    let ds = r.dso(d).syms[k].sym;
    let func = l.is_func(id);
    let object = ds.st_type() == elf::STT_OBJECT;
    let o: &ObjFile = r.obj(f);
    let name = r.symbols[id].name;
    let loc = || diag::print_location(&r.inputs[d].name, o, s, off, name);
    if ds.st_other & 3 == elf::STV_PROTECTED && !((func && l.config.ignore_function_address_equality) || (object && l.config.ignore_data_address_equality)) {
        errors.push(format!("cannot preempt symbol: {}{}", diag::demangle(name), loc()));
        return None;
    }
    if object {
        if l.config.z_nocopyreloc {
            errors.push(format!(
                "unresolvable relocation {} against symbol '{}'; recompile with -fPIC or remove '-z nocopyreloc'{}",
                dtld_arch::x86_64::rel_name(r_type),
                diag::demangle(name),
                loc()
            ));
        }
        return Some(N_COPY);
    }
    if func {
        return Some(N_CANON);
    }
    errors.push(pic_error(l, f, s, off, r_type, Target::Global(id)));
    None
}

/// lld's `cannot create a copy relocation for symbol x`: the library symbol has no size, or
/// no alignment can be derived from its value and section.
pub(super) fn copy_error(l: &Layout, id: SymbolId) -> Option<String> {
    let r = l.r;
    let Def::Shared(d, k) = r.symbols[id].def else { return None };
    let dso = r.dso(d);
    let sym = dso.syms[k].sym;
    let align = dso.section_align(sym.st_shndx(LE) as usize);
    let v = sym.st_value(LE);
    let mut a = if v != 0 { 1u64 << v.trailing_zeros() } else { u64::MAX };
    if let Some(sa) = align {
        a = a.min(sa);
    }
    (sym.st_size(LE) == 0 || a == 0 || a > u64::from(u32::MAX))
        .then(|| format!("cannot create a copy relocation for symbol {}", diag::demangle(r.symbols[id].name)))
}

/// `relocation R cannot refer to absolute symbol: x`: a PC-relative reference to an absolute
/// symbol in position-independent output (the distance changes with the load address).
pub(super) fn absolute_pc_error(l: &Layout, f: FileId, s: usize, off: u64, r_type: u32, t: Target) -> Option<String> {
    let (g, i) = match t {
        Target::Global(id) => match l.r.symbols[id].def {
            Def::Defined(g, i) => (g, i),
            _ => return None,
        },
        Target::Local(g, i) => (g, i as usize),
    };
    let sym = &l.r.obj(g).symbols[i];
    if sym.st_shndx(LE) != elf::SHN_ABS || sym.st_type() == elf::STT_TLS {
        return None;
    }
    let name = target_name(l, t);
    Some(format!(
        "relocation {} cannot refer to absolute symbol: {}{}",
        dtld_arch::x86_64::rel_name(r_type),
        diag::demangle(name),
        diag::print_location(&defined_in(l, t, f), l.r.obj(f), s, off, name)
    ))
}

/// `undefined symbol: foo` for a reference to a local symbol that nothing defines.
pub(super) fn undefined_local(o: &ObjFile, si: usize, s: usize, off: u64) -> Option<String> {
    let sym = o.symbols.get(si)?;
    if si == 0 || si >= o.first_global || sym.st_shndx(LE) != elf::SHN_UNDEF || sym.st_type() == elf::STT_SECTION {
        return None;
    }
    let name = o.sym_name(si);
    Some(format!("undefined symbol: {}{}", diag::demangle(name), diag::referenced_by(o, s, off, name)))
}

/// lld's message for a reference to a local symbol (or section) whose section a COMDAT group
/// kept elsewhere made the link drop: the group's signature and the file that kept it, when the
/// group's header is the section just before (lld's `maybeReportDiscarded`).
pub(super) fn discarded_local(l: &Layout, f: FileId, si: usize, s: usize, off: u64) -> Option<String> {
    let o = l.r.obj(f);
    let sym = o.symbols.get(si)?;
    let shndx = sym.st_shndx(LE) as usize;
    if si == 0 || si >= o.first_global || shndx == 0 || shndx >= o.sections.len() || !l.r.discarded[f].get(shndx).copied().unwrap_or(false) {
        return None;
    }
    let sec_name = String::from_utf8_lossy(o.sections[shndx].name).to_string();
    let name = o.sym_name(si);
    let mut msg = if sym.st_type() == elf::STT_SECTION {
        format!("relocation refers to a discarded section: {sec_name}")
    } else {
        format!("relocation refers to a symbol in a discarded section: {}", diag::demangle(name))
    };
    msg.push_str(&format!("\n>>> defined in {}", o.input.name));
    let group = o.groups.iter().find(|(g, _, _)| *g as usize + 1 == shndx);
    if let Some((_, sig, _)) = group {
        if let Some(&w) = l.r.comdat_winners.get(sig) {
            msg.push_str(&format!("\n>>> section group signature: {}\n>>> prevailing definition is in {}", String::from_utf8_lossy(sig), l.r.inputs[w].name));
        }
    }
    let shown: &[u8] = if sym.st_type() == elf::STT_SECTION { b"" } else { name };
    msg.push_str(&diag::referenced_by(o, s, off, shown));
    Some(msg)
}

/// A global symbol defined in a section the link drops whole (SHF_EXCLUDE): lld turns it into
/// an undefined symbol that remembers the section.
pub(super) fn in_excluded_section(l: &Layout, id: SymbolId) -> bool {
    l.excluded_defs.get(id).copied().unwrap_or(false)
}

/// `Layout::excluded_defs`: computed once per symbol rather than once per reference.
pub(super) fn excluded_defs(r: &crate::elf::symtab::Resolved) -> Vec<bool> {
    use rayon::prelude::*;
    let excluded = |f: FileId| {
        r.loaded[f] && matches!(r.files[f], crate::elf::symtab::File::Obj(_)) && r.obj(f).sections.iter().any(|s| s.flags & u64::from(elf::SHF_EXCLUDE) != 0)
    };
    if !(0..r.files.len()).any(excluded) {
        return Vec::new();
    }
    r.symbols
        .par_iter()
        .map(|s| {
            let Def::Defined(g, i) = s.def else { return false };
            let o = r.obj(g);
            o.sym_section(i).and_then(|sh| o.sections.get(sh as usize)).is_some_and(|sec| sec.flags & u64::from(elf::SHF_EXCLUDE) != 0)
        })
        .collect()
}

/// lld's `offset is outside the section`: a reference into a mergeable section (its section
/// symbol plus addend, or another symbol's value) past its end. Checked by the scan for
/// allocated sections and by the writer for the others (where lld finds it too).
pub(crate) fn merge_offset_error(l: &Layout, t: Target, addend: i64) -> Option<String> {
    let Target::Local(g, i) = t else { return None };
    let o = l.r.obj(g);
    let sec = o.sections.get(o.sym_section(i as usize)? as usize)?;
    merge_offset_error_in(o, &o.symbols[i as usize], sec, addend)
}

/// `merge_offset_error` for symbol `sym` of `o`, defined in `sec`.
pub(crate) fn merge_offset_error_in(
    o: &crate::elf::object::ObjFile,
    sym: &crate::elf::types::Sym,
    sec: &crate::elf::object::InputSection,
    addend: i64,
) -> Option<String> {
    if sec.kind != crate::elf::object::SecKind::Merge {
        return None;
    }
    let off = if sym.st_type() == elf::STT_SECTION { sym.st_value(LE).wrapping_add(addend as u64) } else { sym.st_value(LE) };
    (off >= sec.data.len() as u64).then(|| format!("{}:({}): offset is outside the section", o.input.name, String::from_utf8_lossy(sec.name)))
}
