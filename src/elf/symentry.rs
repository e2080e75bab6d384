//! What the output's symbol tables say of a global symbol: its `(st_info, st_shndx, st_value,
//! st_size)` as its definition gives them (`global_entry`), and the section and type of
//! `--defsym`, script and linker-defined symbols, which lld derives from their targets.
//!
//! Why it is a module of its own: `.symtab` (the writer), `.dynsym` (`synthetic.rs`) and the
//! dynamic symbol table's decisions (`layout/dynsym.rs`) all ask it; kept here, below them,
//! they do not import each other for it.

use object::elf;
use object::read::elf::Sym as _;

use crate::elf::layout::model::{Chunk, Layout, Synth, Target};
use crate::elf::symtab::{Def, SymbolId};
use crate::elf::types::LE;

/// `st_shndx` of an absolute symbol as the symbol-table writers take it.
pub(crate) const ABS: u32 = crate::elf::types::reserved_shndx(elf::SHN_ABS);

/// The output section index of input section `sh` of file `f` (SHN_ABS stays); `None` when
/// the symbol is undefined, in a reserved index, or in a section not in the output.
pub(crate) fn osec_index(l: &Layout, f: usize, i: usize) -> Option<u32> {
    if l.sym(f, i).st_shndx(LE) == elf::SHN_ABS {
        return Some(ABS);
    }
    let sh = l.obj(f).sym_section(i)?;
    let x = *l.sec_osec[f].get(sh as usize)?;
    if x == u32::MAX {
        None
    } else {
        Some(l.osecs[x as usize].shndx)
    }
}

/// Global `id`'s (st_info, st_shndx, st_value, st_size) as its definition gives them, or
/// `None` when it is not written (defined in a section not in the output or in a merge piece
/// --gc-sections dropped, a shared symbol without a dynamic symbol, bitcode, an undefined
/// symbol neither linker-defined nor weak and named by an object).
pub(crate) fn global_entry(l: &Layout, id: crate::elf::symtab::SymbolId) -> Option<(u8, u32, u64, u64)> {
    let sym = &l.r.symbols[id];
    Some(match sym.def {
        Def::Defined(..) if l.ifunc_canonical.contains(&Target::Global(id)) => {
            // A canonical IFUNC is, to everyone, the function at its IPLT entry.
            let iplt = l.synth_osec.get(&Synth::Iplt).map(|&i| l.osecs[i].shndx).unwrap_or(0);
            let info = (sym_bind_of(l, id) << 4) | elf::STT_FUNC;
            (info, iplt, l.addr_of(Target::Global(id)), 0)
        }
        Def::Defined(f, i) => {
            let s = l.sym(f, i);
            let shndx = osec_index(l, f, i)?;
            // Like a local, a global defined in a merge piece that --gc-sections dropped is
            // left out (lld's includeInSymtab asks the piece's liveness for every symbol).
            if let Some(sh) = l.obj(f).sym_section(i) {
                if !l.merge_piece_live(f, sh, s.st_value(LE)) {
                    return None;
                }
            }
            let mut v = l.sym_value[id];
            if s.st_type() == elf::STT_TLS {
                v = v.wrapping_sub(l.tls_start());
            }
            let info = if s.st_bind() == elf::STB_GNU_UNIQUE && l.config.no_gnu_unique { (elf::STB_GLOBAL << 4) | s.st_type() } else { s.st_info() };
            (info, shndx, v, s.st_size(LE))
        }
        Def::Common(f, i) => {
            let s = l.sym(f, i);
            let shndx = l.osecs.iter().find(|o| o.chunks.contains(&Chunk::Bss(id))).map(|o| o.shndx).unwrap_or(0);
            let ty = if s.st_type() == elf::STT_TLS { elf::STT_TLS } else { elf::STT_OBJECT };
            (elf::STB_GLOBAL << 4 | ty, shndx, l.sym_value[id], s.st_size(LE))
        }
        // A script assignment never evaluated (in an ONLY_IF_RO/RW description that was
        // dropped) defines nothing, as in lld.
        Def::Synthetic if !l.synthetic_syms.contains_key(&id) => return None,
        Def::Synthetic => defsym_entry(l, id),
        Def::Shared(fi, k) => {
            let ds = l.r.dso(fi).syms[k].sym;
            if !l.dynsym_index.contains_key(&id) {
                return None;
            }
            let bind = if !sym.obj_ref {
                ds.st_bind()
            } else if sym.strong_ref {
                elf::STB_GLOBAL
            } else {
                elf::STB_WEAK
            };
            // A library's IFUNC is a plain function to its users, as in `.dynsym` (lld).
            let ty = if ds.st_type() == elf::STT_GNU_IFUNC { elf::STT_FUNC } else { ds.st_type() };
            let copy = l.sym_flags.get(&Target::Global(id)).is_some_and(|f| f.copy);
            if copy {
                let primary = l.copy_alias.get(&id).copied().unwrap_or(id);
                let shndx = l.osecs.iter().find(|o| o.chunks.contains(&Chunk::Bss(primary))).map(|o| o.shndx).unwrap_or(0);
                (bind << 4 | ty, shndx, l.sym_value[id], ds.st_size(LE))
            } else {
                (bind << 4 | ty, 0, 0, 0)
            }
        }
        Def::Bitcode(..) => return None,
        Def::Undefined | Def::Lazy(_) => {
            if let Some(&v) = l.synthetic_syms.get(&id) {
                linker_defined_entry(l, sym.name, v)
            } else if sym.weak && sym.obj_ref {
                // Only names a loaded object refers to: lazy symbols of members that were
                // never extracted are not part of the output (lld's isUsedInRegularObj).
                (elf::STB_WEAK << 4 | sym.ref_type.unwrap_or(elf::STT_NOTYPE), 0, 0, 0)
            } else if sym.obj_ref && l.gc_used.as_ref().is_none_or(|u| u.contains(&id)) {
                // Left to the loader (a shared library's, or `--unresolved-symbols=ignore-all`):
                // lld's includeInSymtab keeps it, under --gc-sections if a live section uses it.
                (elf::STB_GLOBAL << 4 | sym.ref_type.unwrap_or(elf::STT_NOTYPE), 0, 0, 0)
            } else {
                return None;
            }
        }
    })
}

/// A `--defsym` or script symbol's `.symtab` entry: its section, value and type as `.dynsym`
/// has them (`layout::defsym_fields`).
pub(crate) fn defsym_entry(l: &Layout, id: crate::elf::symtab::SymbolId) -> (u8, u32, u64, u64) {
    let (shndx, v, ty) = defsym_fields(l, id);
    (elf::STB_GLOBAL << 4 | ty, shndx, v, 0)
}

/// The output section index of `--defsym` symbol `id` (ABS for a number): `sym+4` stays in
/// `sym`'s section, even past its end as `etext+2` is (lld: the sum of an address and a
/// number is relative to the address's section); else the section holding its value.
pub(crate) fn defsym_shndx(l: &Layout, id: crate::elf::symtab::SymbolId) -> u32 {
    let name = l.r.symbols[id].name;
    let expr = l.config.defsym.iter().rev().find(|(n, _)| n.as_bytes() == name).map(|(_, e)| e.as_str());
    let Some(target) = expr.and_then(crate::elf::config::defsym_target) else {
        return if expr.is_some() { ABS } else { l.shndx_at(l.sym_value[id]) };
    };
    l.r.lookup_expr(target.as_bytes())
        .filter(|&t| !matches!(l.r.symbols[t].def, Def::Synthetic))
        .and_then(|t| global_entry(l, t))
        .map(|e| e.1)
        .filter(|&x| x != 0)
        .unwrap_or_else(|| l.shndx_at(l.sym_value[id]))
}

/// A linker-defined symbol `name` with value `v`: it belongs to the output section it
/// points into (`__start_foo` to `foo`, `__bss_start` to `.bss`, `_end` to the last
/// section), as in lld; absolute when there is none.
pub(crate) fn linker_defined_entry(l: &Layout, name: &[u8], v: u64) -> (u8, u32, u64, u64) {
    let sec = name.strip_prefix(b"__start_").or_else(|| name.strip_prefix(b"__stop_"));
    let shndx = match sec {
        Some(n) => l.osecs.iter().find(|o| o.name.as_bytes() == n).map(|o| o.shndx),
        None if name == b"__bss_start" => l.osecs.iter().find(|o| o.name == ".bss").map(|o| o.shndx),
        // lld defines these relative to the ELF header, which it reports as the first output
        // section.
        None if matches!(name, b"__ehdr_start" | b"__executable_start" | b"__dso_handle") => l.osecs.first().map(|o| o.shndx),
        // End symbols belong to the section they end (lld: `etext` in the last
        // code section, `edata` in the last PROGBITS one).
        None => l
            .osecs
            .iter()
            .filter(|o| o.flags & elf::SHF_ALLOC as u64 != 0 && o.size > 0 && o.addr < v && v <= o.addr + o.size)
            .chain(l.osecs.iter().filter(|o| o.flags & elf::SHF_ALLOC as u64 != 0 && o.addr == v))
            .map(|o| o.shndx)
            .next(),
    };
    (elf::STB_GLOBAL << 4 | elf::STT_NOTYPE, shndx.unwrap_or(ABS), v, 0)
}

pub(crate) fn sym_bind_of(l: &Layout, id: crate::elf::symtab::SymbolId) -> u8 {
    match l.r.symbols[id].def {
        Def::Defined(f, i) => l.sym(f, i).st_bind(),
        _ => elf::STB_GLOBAL,
    }
}

/// Defined-in-this-output for .dynsym purposes (copy relocations and canonical PLT entries are
/// "defined" in the sense that they have an address here, but lld keeps canonical PLT symbols
/// undefined with a non-zero value; copies are defined).
/// Section index (as `reserved_shndx` encodes it), value and symbol type of a `--defsym` or
/// script symbol, for `.symtab` and `.dynsym` alike: a script assignment is absolute or in the
/// section `.` was in; a `--defsym` (the last one of its name, whose value it has) is absolute
/// for a number, else in its target's section (`write::defsym_shndx`), typed like its target
/// (lld).
pub(crate) fn defsym_fields(l: &Layout, id: SymbolId) -> (u32, u64, u8) {
    let name = l.r.symbols[id].name;
    if let Some(&(v, sec)) = l.script_syms.get(&id) {
        // `alias = sym;` carries sym's type (lld's ExprValue), as a --defsym does below.
        let ty = l.script_alias_target(id).map_or(elf::STT_NOTYPE, |tid| alias_type(l, tid));
        let ty = if ty == elf::STT_TLS { elf::STT_NOTYPE } else { ty };
        return (sec.map_or(crate::elf::types::reserved_shndx(elf::SHN_ABS), |s| l.osecs[s].shndx), v, ty);
    }
    let v = l.sym_value[id];
    let expr = l.config.defsym.iter().rev().find(|(n, _)| n.as_bytes() == name).map(|(_, e)| e.as_str());
    let target = expr.and_then(crate::elf::config::defsym_target);
    let shndx = defsym_shndx(l, id);
    // Only a bare name carries its type (lld: `sym+4` is NOTYPE).
    let ty =
        target.filter(|t| expr.is_some_and(|e| e.trim() == *t)).and_then(|t| l.r.lookup_expr(t.as_bytes())).map_or(elf::STT_NOTYPE, |tid| alias_type(l, tid));
    (shndx, v, ty)
}

/// The type an alias of `tid` gets: its definition's, but the plain function at the IPLT
/// entry for a canonical IFUNC (lld redirects the symbol there before evaluating scripts).
pub(crate) fn alias_type(l: &Layout, tid: SymbolId) -> u8 {
    match l.r.symbols[tid].def {
        Def::Defined(..) if l.canonical_ifunc_addr(tid).is_some() => elf::STT_FUNC,
        Def::Defined(f, i) => l.sym(f, i).st_type(),
        // A library's symbol with a canonical PLT entry or a copy here (lld's replaceWithDefined
        // keeps its type).
        Def::Shared(f, k) if l.sym_flags.get(&Target::Global(tid)).is_some_and(|fl| fl.copy || fl.canonical) => l.r.dso(f).syms[k].sym.st_type(),
        _ => elf::STT_NOTYPE,
    }
}
