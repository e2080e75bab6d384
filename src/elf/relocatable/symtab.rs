//! The output symbol table of a `-r` link: the table itself (`SymTab`, with its `.strtab` and
//! `.symtab_shndx` words), which locals each object keeps (`used_locals`, `file_locals`), and
//! the globals (`global_facts`, `globals`, `--defsym`). `symtab_order` decides the order of the
//! locals and section symbols.
//!
//! Why it exists: the symbol table is the largest part of `-r`'s writer that the section
//! layout does not need; apart, both stay readable.

use std::collections::HashSet;

use object::elf;
use object::read::elf::Sym as _;
use rayon::prelude::*;

use super::model::*;
use crate::elf::config::Config;
use crate::elf::symtab::{Def, File, FileId, Resolved};
use crate::elf::types::{reserved_shndx as reserved, split_shndx, LE};
use crate::error::{Error, Result};

/// The output `.symtab`, its `.strtab` and its `.symtab_shndx` words, filled in symbol index
/// order.
pub(super) struct SymTab {
    pub(super) data: Vec<u8>,
    pub(super) strtab: StrTab,
    /// One word per symbol: the section index of a symbol whose `st_shndx` is SHN_XINDEX, 0
    /// for the others (the SHT_SYMTAB_SHNDX contents).
    pub(super) xindex: Vec<u32>,
}

impl SymTab {
    /// A table holding the null symbol.
    pub(super) fn new() -> SymTab {
        SymTab { data: vec![0; SYM_SIZE as usize], strtab: StrTab::new(), xindex: vec![0] }
    }

    /// The number of symbols so far: the index of the next one.
    pub(super) fn count(&self) -> u32 {
        (self.data.len() as u64 / SYM_SIZE) as u32
    }

    /// Appends a symbol whose name is at `name` in the string table and whose section is
    /// `shndx` (an output section index, 0, or `reserved(..)`); returns its index. An index
    /// `st_shndx` cannot hold goes to the extended table, with SHN_XINDEX in its place.
    pub(super) fn push(&mut self, name: u32, info: u8, other: u8, shndx: u32, value: u64, size: u64) -> u32 {
        let idx = self.count();
        let (st_shndx, x) = split_shndx(shndx);
        self.xindex.push(x);
        let t = &mut self.data;
        t.extend_from_slice(&name.to_le_bytes());
        t.push(info);
        t.push(other);
        t.extend_from_slice(&st_shndx.to_le_bytes());
        t.extend_from_slice(&value.to_le_bytes());
        t.extend_from_slice(&size.to_le_bytes());
        idx
    }
}

/// Per file: which locals a relocation of a written section uses (those are kept whatever
/// the discard policy). Empty for files that are not objects of the link.
pub(super) fn used_locals(r: &Resolved, place: &[Vec<Place>]) -> Vec<Vec<bool>> {
    (0..r.files.len())
        .into_par_iter()
        .map(|f| {
            let File::Obj(o) = &r.files[f] else { return Vec::new() };
            if place[f].is_empty() {
                return Vec::new();
            }
            let mut u = vec![false; o.first_global];
            for (i, s) in o.sections.iter().enumerate() {
                if place[f][i].is_none() {
                    continue;
                }
                for rel in s.relocs {
                    let k = rel.r_sym(LE, false) as usize;
                    if k < u.len() {
                        u[k] = true;
                    }
                }
            }
            u
        })
        .collect()
}

/// The locals that name a kept group's signature: they must survive even when no relocation
/// uses them.
pub(super) fn signature_locals(osecs: &[OutSec]) -> HashSet<(FileId, usize)> {
    osecs.iter().filter_map(|os| os.group.as_ref().map(|g| (g.file, g.sig_sym))).collect()
}

/// The locals object `f` keeps, appended to `syms` (the order among files and section symbols
/// is `symtab_order`'s): its locals (section symbols excepted) that are defined in a written
/// section or absolute, unless `--discard-all`, or `--discard-locals` (or a merge section) for
/// `.L` names, drops them; a local that a relocation uses or that names a kept group (`must`)
/// is always kept. Returns the output index of each local (0 = not written).
pub(super) fn file_locals(
    config: &Config,
    r: &Resolved,
    f: FileId,
    secs: &Sections,
    used: &[Vec<bool>],
    must: &HashSet<(FileId, usize)>,
    syms: &mut SymTab,
) -> Vec<u32> {
    let (place, osecs) = (&secs.place, &secs.osecs);
    let o = r.obj(f);
    let mut lidx = vec![0; o.first_global];
    for i in 1..o.first_global {
        let s = &o.symbols[i];
        let ty = s.st_type();
        if ty == elf::STT_SECTION {
            continue;
        }
        let (out_shndx, value, in_merge) = match (s.st_shndx(LE), o.sym_section(i)) {
            (elf::SHN_ABS, _) => (reserved(elf::SHN_ABS), s.st_value(LE), false),
            (_, None) => continue,
            (_, Some(shndx)) => match locate(place, osecs, f, shndx as usize, s.st_value(LE)) {
                Some((os, at)) => (osecs[os as usize].index, at, o.sections[shndx as usize].flags & SHF_MERGE != 0),
                // GCC defines group signatures (`wm4.*`, `_ZN...C5Ev`) as locals in the
                // SHT_GROUP section itself; lld writes those of a discarded group as
                // absolute symbols (the group section has no input section), and so do we.
                None if o.sections[shndx as usize].sh_type == elf::SHT_GROUP => (reserved(elf::SHN_ABS), s.st_value(LE), false),
                None => continue,
            },
        };
        let name = o.sym_name(i);
        let keep = used[f].get(i).copied().unwrap_or(false) || must.contains(&(f, i)) || !config.discards_local(name, || in_merge);
        if !keep {
            continue;
        }
        let n = syms.strtab.add(name);
        lidx[i] = syms.push(n, s.st_info, s.st_other, out_shndx, value, s.st_size(LE));
    }
    lidx
}

/// What the objects say about each global: whether one names it, the type of its first
/// undefined reference, and its largest common alignment.
pub(super) struct GlobalFacts {
    pub(super) referenced: Vec<bool>,
    pub(super) und_type: Vec<u8>,
    pub(super) common_align: Vec<u64>,
}

/// Collects the `GlobalFacts` of every global from the objects, in load order.
pub(super) fn global_facts(r: &Resolved, objs: &[FileId]) -> GlobalFacts {
    let nsyms = r.symbols.len();
    let mut referenced = vec![false; nsyms];
    let mut und_type = vec![elf::STT_NOTYPE; nsyms];
    let mut und_seen = vec![false; nsyms];
    let mut common_align = vec![1u64; nsyms];
    for &f in objs {
        let o = r.obj(f);
        for (k, &id) in r.sym_ids[f].iter().enumerate() {
            let Some(s) = o.symbols.get(o.first_global + k) else { continue };
            let Some(slot) = referenced.get_mut(id) else { continue };
            *slot = true;
            match s.st_shndx(LE) {
                elf::SHN_UNDEF if !und_seen[id] => {
                    und_seen[id] = true;
                    und_type[id] = s.st_type();
                }
                elf::SHN_COMMON => common_align[id] = common_align[id].max(s.st_value(LE)),
                _ => {}
            }
        }
    }
    GlobalFacts { referenced, und_type, common_align }
}

/// An output symbol entry: (st_info, st_other, st_shndx, st_value, st_size).
pub(super) type SymEntry = (u8, u8, u32, u64, u64);

/// The globals, appended to `syms` in resolver order: defined ones (value relative to the
/// output section; undefined when their section is not written), commons (SHN_COMMON,
/// alignment in st_value), `--defsym` symbols, and undefined ones that an object names.
/// Returns per global symbol its output index (0 = not written); a `--defsym` whose target is
/// not in a written section is an error.
pub(super) fn globals(config: &Config, r: &Resolved, secs: &Sections, facts: &GlobalFacts, syms: &mut SymTab) -> Result<Vec<u32>> {
    let (place, osecs) = (&secs.place, &secs.osecs);
    let mut errors: Vec<String> = Vec::new();
    let mut gidx = vec![0u32; r.symbols.len()];
    for (id, sym) in r.symbols.iter().enumerate() {
        let weak_bind = |w: bool| if w { elf::STB_WEAK } else { elf::STB_GLOBAL };
        let vis = sym.visibility & 3;
        let (info, other, shndx, value, size) = match sym.def {
            Def::Defined(f, i) => {
                let o = r.obj(f);
                let s = &o.symbols[i];
                // STB_GNU_UNIQUE survives -r, as with lld.
                let bind = match s.st_bind() {
                    elf::STB_GNU_UNIQUE => elf::STB_GNU_UNIQUE,
                    b => weak_bind(b == elf::STB_WEAK),
                };
                let other = (s.st_other & !3) | vis;
                if s.st_shndx(LE) == elf::SHN_ABS {
                    ((bind << 4) | s.st_type(), other, reserved(elf::SHN_ABS), s.st_value(LE), s.st_size(LE))
                } else {
                    match locate(place, osecs, f, o.shndx(i) as usize, s.st_value(LE)) {
                        Some((os, at)) => ((bind << 4) | s.st_type(), other, osecs[os as usize].index, at, s.st_size(LE)),
                        // Defined in a section that is not written: an undefined reference.
                        None => ((bind << 4) | s.st_type(), vis, 0, 0, 0),
                    }
                }
            }
            Def::Common(f, i) => {
                let s = &r.obj(f).symbols[i];
                (
                    (elf::STB_GLOBAL << 4) | s.st_type(),
                    (s.st_other & !3) | vis,
                    reserved(elf::SHN_COMMON),
                    facts.common_align[id].max(s.st_value(LE)).max(1),
                    s.st_size(LE),
                )
            }
            Def::Synthetic => match defsym_entry(config, r, secs, sym.name, vis) {
                Some(Ok(e)) => e,
                Some(Err(e)) => {
                    errors.push(e);
                    continue;
                }
                None => continue,
            },
            Def::Undefined | Def::Lazy(_) => {
                if !facts.referenced[id] {
                    continue;
                }
                ((weak_bind(sym.weak) << 4) | facts.und_type[id], vis, 0, 0, 0)
            }
            Def::Shared(..) | Def::Bitcode(..) => continue,
        };
        let n = syms.strtab.add(sym.name);
        gidx[id] = syms.push(n, info, other, shndx, value, size);
    }
    if !errors.is_empty() {
        return Err(Error::many(errors));
    }
    Ok(gidx)
}

/// The entry of synthetic symbol `name` with visibility `vis`: its last `--defsym`, absolute
/// for a number, else its target's section and value plus the offset. `None` when no
/// `--defsym` defines it (the symbol is not written); an error message when the target is
/// not defined in a written section.
pub(super) fn defsym_entry(config: &Config, r: &Resolved, secs: &Sections, name: &[u8], vis: u8) -> Option<std::result::Result<SymEntry, String>> {
    let name = String::from_utf8_lossy(name);
    let (_, expr) = config.defsym.iter().rev().find(|(n, _)| *n == name)?;
    let add = crate::elf::config::defsym_offset(expr).unwrap_or(0) as u64;
    let Some(t) = crate::elf::config::defsym_target(expr) else {
        return Some(Ok(((elf::STB_GLOBAL << 4) | elf::STT_NOTYPE, vis, reserved(elf::SHN_ABS), add, 0)));
    };
    let target = r.lookup(t.as_bytes()).map(|t| r.symbols[t].def);
    let resolved = match target {
        Some(Def::Defined(f, i)) => {
            let s = &r.obj(f).symbols[i];
            if s.st_shndx(LE) == elf::SHN_ABS {
                Some((s.st_type(), reserved(elf::SHN_ABS), s.st_value(LE).wrapping_add(add)))
            } else {
                let o = r.obj(f);
                locate(&secs.place, &secs.osecs, f, o.shndx(i) as usize, s.st_value(LE))
                    .map(|(os, at)| (s.st_type(), secs.osecs[os as usize].index, at.wrapping_add(add)))
            }
        }
        _ => None,
    };
    Some(match resolved {
        Some((ty, sh, v)) => Ok(((elf::STB_GLOBAL << 4) | ty, vis, sh, v, 0)),
        None => Err(format!("--defsym {name}={expr}: {t} is not defined in a section of this -r link")),
    })
}
