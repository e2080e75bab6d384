//! Identical code folding (`--icf=all`, `--icf=safe`), with the rules of lld's ELF `ICF.cpp`.
//!
//! Two sections fold when they have the same flags, output section, size and bytes, and their
//! relocations have the same offsets, types and targets, where targets in input sections are
//! the same when those sections are themselves in the same class. That is a fixpoint: the
//! classes start from each section's constant parts (everything but which section a relocation
//! points into) and are split by the classes of the relocations' target sections until nothing
//! splits (lld's optimistic algorithm; dtld refines the partition directly instead of hashing
//! first, which gives the same classes). Of each class the first section in input order stays;
//! the others leave the output, their `.eh_frame` FDEs and `SHF_LINK_ORDER` dependents with
//! them, and every symbol defined in them takes the kept section's address (`alias`).
//!
//! Eligible are live allocated sections that are not writable (`.data.rel.ro*` counts as
//! read-only), not `SHF_LINK_ORDER`, not `.init`/`.fini`, not named like a C identifier
//! (`__start_X` may enumerate them), not described by an FDE with an LSDA (their exception
//! tables may differ), and not address-significant: `--keep-unique`, exported symbols and the
//! `.llvm_addrsig` tables mark sections whose address the program may compare (an object
//! without such a table makes all of its symbols significant). `--icf=all` ignores that for
//! code, `--icf=all --ignore-data-address-equality` for everything; `--icf=safe` keeps them all.

use std::collections::{HashMap, HashSet};

use object::elf;
use object::read::elf::{Rela as _, SectionHeader as _, Sym as _};
use rayon::prelude::*;

use crate::elf::config::Icf;
use crate::elf::gc::{is_c_ident, Live};
use crate::elf::layout::model::{output_name, Layout, Target};
use crate::elf::object::SecKind;
use crate::elf::symtab::{Def, FileId};
use crate::elf::types::LE;
use crate::error::{Error, Result};

use crate::elf::layout::model::{Folded, Sec};

/// What one relocation resolves to, apart from which input section it points into.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum RelKey<'a> {
    /// Only the very same symbol with the same addend is the same target (undefined, shared,
    /// preemptible, defined by the linker, or in a section ICF does not look into).
    Same(Target, i64),
    /// An absolute value.
    Abs(u64),
    /// An offset in an input section (whose class is compared separately).
    InSec(u64),
    /// A place in a merged output section: that section (name, flags, entsize, alignment), the
    /// piece's bytes and the offset from the piece's start. Equal pieces are merged into one,
    /// so equal keys are the same output address.
    Merge(&'a [u8], u64, u64, u64, &'a [u8], u64),
}

/// The constant parts of a section: flags, type, output section name, size, bytes, and each
/// relocation's offset, type and `RelKey`.
type ConstKey<'a> = (u64, u32, &'a [u8], u64, &'a [u8], Vec<(u64, u32, RelKey<'a>)>);

/// A relocation target's class during refinement: an eligible section's current class, or an
/// ineligible section (a class of its own).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum TargetClass {
    Class(u32),
    Alone(FileId, u32),
}

/// LLVM's address-significance table.
const SHT_LLVM_ADDRSIG: u32 = 0x6fff_4c03;

fn flag(flags: u64, f: u32) -> bool {
    flags & f as u64 != 0
}

/// Folds identical sections: returns what was folded into what, and marks the folded sections
/// (and their `SHF_LINK_ORDER` dependents) not live.
pub fn fold(l: &Layout, live: &mut Live) -> Result<Folded> {
    let config = l.config;
    let r = l.r;
    let mut keep = keep_unique(l)?;
    let lsda = with_lsda(l, live);
    keep.extend(lsda.iter().copied());
    let out_name = |f: FileId, s: usize| output_name(r.obj(f).sections[s].name, config.z_keep_text_section_prefix);

    // Eligible sections, in input order.
    let mut secs: Vec<Sec> = Vec::new();
    for (f, o) in r.objects_in_load_order() {
        for (s, sec) in o.sections.iter().enumerate() {
            let n = sec.name;
            let eligible = live[f][s]
                && sec.kind == SecKind::Regular
                && flag(sec.flags, elf::SHF_ALLOC)
                && (!flag(sec.flags, elf::SHF_WRITE) || n == b".data.rel.ro" || n.starts_with(b".data.rel.ro."))
                && !flag(sec.flags, elf::SHF_LINK_ORDER)
                && n != b".init"
                && n != b".fini"
                && !is_c_ident(n)
                && !keep.contains(&(f, s as u32));
            if eligible {
                secs.push((f, s as u32));
            }
        }
    }
    let index: HashMap<Sec, usize> = secs.iter().enumerate().map(|(i, &s)| (s, i)).collect();

    // Constant parts, and for each relocation into an input section, that section.
    let parts: Vec<(ConstKey, Vec<Sec>)> = secs.par_iter().map(|&(f, s)| constant_parts(l, live, f, s, out_name(f, s as usize))).collect();
    let mut class: Vec<u32> = {
        let mut ids: HashMap<&ConstKey, u32> = HashMap::new();
        parts
            .iter()
            .map(|(k, _)| {
                let n = ids.len() as u32;
                *ids.entry(k).or_insert(n)
            })
            .collect()
    };
    let mut count = class.iter().copied().max().map_or(0, |m| m as usize + 1);
    // Refine by the targets' classes until no class splits.
    loop {
        let sigs: Vec<(u32, Vec<TargetClass>)> = (0..secs.len())
            .into_par_iter()
            .map(|i| {
                let t = parts[i].1.iter().map(|t| index.get(t).map_or(TargetClass::Alone(t.0, t.1), |&j| TargetClass::Class(class[j]))).collect();
                (class[i], t)
            })
            .collect();
        let mut ids: HashMap<&(u32, Vec<TargetClass>), u32> = HashMap::new();
        let next: Vec<u32> = sigs
            .iter()
            .map(|s| {
                let n = ids.len() as u32;
                *ids.entry(s).or_insert(n)
            })
            .collect();
        let n = ids.len();
        class = next;
        if n == count {
            break;
        }
        count = n;
    }

    // Members of each class, in input order; the first stays.
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); count];
    for (i, &c) in class.iter().enumerate() {
        members[c as usize].push(i);
    }
    let mut folded = Folded::new();
    let mut lines = String::new();
    let mut classes: Vec<&Vec<usize>> = members.iter().filter(|m| m.len() > 1).collect();
    if config.print_icf_sections {
        // lld lists the classes in the order of its hashes.
        let h = lld_hashes(l, live, &secs, &index, &lsda);
        classes.sort_by_key(|m| (h[m[0]], m[0]));
    }
    for m in classes {
        let kept = secs[m[0]];
        if config.print_icf_sections {
            lines.push_str(&format!("selected section {}\n", describe(l, kept)));
        }
        for &i in &m[1..] {
            if config.print_icf_sections {
                lines.push_str(&format!("  removing identical section {}\n", describe(l, secs[i])));
            }
            folded.insert(secs[i], kept);
        }
    }
    if !lines.is_empty() {
        use std::io::Write;
        let _ = std::io::stdout().lock().write_all(lines.as_bytes());
    }
    for &(f, s) in folded.keys() {
        live[f][s as usize] = false;
    }
    // SHF_LINK_ORDER sections describing a folded section go with it.
    for (f, o) in r.objects_in_load_order() {
        for (s, sec) in o.sections.iter().enumerate() {
            if live[f][s] && flag(sec.flags, elf::SHF_LINK_ORDER) && folded.contains_key(&(f, sec.hdr.sh_link(LE))) {
                live[f][s] = false;
            }
        }
    }
    Ok(folded)
}

/// lld's hash of each eligible section, which orders its classes (and so the lines of
/// `--print-icf-sections`): the low 32 bits of the contents' xxh3 with the top bit set, to
/// which two rounds add the hashes of the sections relocations point into. Sections ICF does
/// not fold count as a number of their own: first those with an LSDA, then the others in input
/// order.
fn lld_hashes(l: &Layout, live: &Live, secs: &[Sec], index: &HashMap<Sec, usize>, lsda: &[Sec]) -> Vec<u32> {
    let r = l.r;
    let mut unique: HashMap<Sec, u32> = HashMap::new();
    for &s in lsda {
        let n = unique.len() as u32 + 1;
        unique.entry(s).or_insert(n);
    }
    for (f, o) in r.objects_in_load_order() {
        for (s, sec) in o.sections.iter().enumerate() {
            // lld's InputSections: not merged, not .eh_frame, not dropped at parsing
            // (relocation sections are InputSections only with --emit-relocs).
            let is_input = match sec.kind {
                SecKind::Regular => true,
                SecKind::Ignored => l.config.emit_relocs && sec.sh_type == elf::SHT_RELA,
                _ => false,
            };
            let key = (f, s as u32);
            if is_input && !r.discarded[f][s] && !index.contains_key(&key) && !unique.contains_key(&key) {
                unique.insert(key, unique.len() as u32 + 1);
            }
        }
    }
    let targets: Vec<Vec<Sec>> = secs
        .iter()
        .map(|&(f, s)| {
            let o = l.obj(f);
            o.sections[s as usize]
                .relocs
                .iter()
                .filter_map(|rel| definition(l, f, rel.r_sym(LE, false) as usize).and_then(|d| section_of(l, d)))
                .filter(|&(tf, ts)| {
                    let t = &l.obj(tf).sections[ts as usize];
                    t.kind == SecKind::Regular && !r.discarded[tf][ts as usize]
                })
                .collect()
        })
        .collect();
    let _ = live;
    let mut h: Vec<u32> = secs.iter().map(|&(f, s)| (xxhash_rust::xxh3::xxh3_64(l.obj(f).sections[s as usize].data) as u32) | 1 << 31).collect();
    for _ in 0..2 {
        let class_of = |t: &Sec| index.get(t).map_or_else(|| unique.get(t).copied().unwrap_or(0), |&j| h[j]);
        h = (0..secs.len()).map(|i| targets[i].iter().fold(h[i], |acc, t| acc.wrapping_add(class_of(t))) | 1 << 31).collect();
    }
    h
}

/// `file:(section)`, as lld names an input section.
fn describe(l: &Layout, (f, s): Sec) -> String {
    let o = l.obj(f);
    format!("{}:({})", o.input.name, String::from_utf8_lossy(o.sections[s as usize].name))
}

/// The defining (file, symbol index) of symbol `i` of file `f`, if it is a regular definition.
fn definition(l: &Layout, f: FileId, i: usize) -> Option<(FileId, usize)> {
    match l.r.reloc_target(f, i) {
        Some(id) => match l.r.symbols[id].def {
            Def::Defined(df, di) => Some((df, di)),
            _ => None,
        },
        None => Some((f, i)),
    }
}

/// The input section a definition is in (none for absolute, common and undefined symbols).
fn section_of(l: &Layout, (f, i): (FileId, usize)) -> Option<Sec> {
    let sh = l.obj(f).sym_section(i)?;
    ((sh as usize) < l.obj(f).sections.len()).then_some((f, sh))
}

/// lld's `findKeepUniqueSections`: sections whose address must stay unique.
fn keep_unique(l: &Layout) -> Result<HashSet<Sec>> {
    let config = l.config;
    let r = l.r;
    let mut keep = HashSet::new();
    for name in &config.keep_unique {
        match r.lookup(name.as_bytes()).and_then(|id| match r.symbols[id].def {
            Def::Defined(f, i) => section_of(l, (f, i)),
            _ => None,
        }) {
            Some(s) => {
                keep.insert(s);
            }
            None => config.diag.warn(&format!("could not find symbol {name} to keep unique")),
        }
    }
    if config.icf == Icf::All && config.ignore_data_address_equality {
        return Ok(keep);
    }
    let safe = config.icf == Icf::Safe;
    // Under --icf=all code may lose its unique address; read-only data may not.
    let mut mark = |l: &Layout, d: Option<(FileId, usize)>| {
        if let Some((f, s)) = d.and_then(|d| section_of(l, d)) {
            if safe || !flag(l.obj(f).sections[s as usize].flags, elf::SHF_EXECINSTR) {
                keep.insert((f, s));
            }
        }
    };
    // Exported symbols may be compared by other modules.
    if l.has_dynamic {
        for s in &r.symbols {
            if let Def::Defined(f, i) = s.def {
                let exported = !s.forced_local
                    && matches!(s.visibility, elf::STV_DEFAULT | elf::STV_PROTECTED)
                    && (s.dso_ref || s.in_dso || s.dynamic_listed || config.export_dynamic || config.shared);
                if exported {
                    mark(l, Some((f, i)));
                }
            }
        }
    }
    let mut errors = Vec::new();
    for (f, o) in r.objects_in_load_order() {
        let addrsig = o.sections.iter().enumerate().find(|(_, s)| s.sh_type == SHT_LLVM_ADDRSIG);
        match addrsig {
            // `ld -r` and objcopy reorder symbol tables and leave sh_link 0: such a table
            // cannot be trusted.
            Some((_, sec)) if sec.hdr.sh_link(LE) != 0 => {
                let mut d = sec.data;
                while !d.is_empty() {
                    let Some((idx, n)) = uleb128(d) else {
                        errors.push(format!("{}: could not decode addrsig section: malformed uleb128, extends past end", o.input.name));
                        break;
                    };
                    d = &d[n..];
                    if (idx as usize) < o.symbols.len() {
                        mark(l, definition(l, f, idx as usize));
                    }
                }
            }
            other => {
                if let (Some((i, _)), true) = (other, safe) {
                    config.diag.warn(&format!(
                        "{}: --icf=safe conservatively ignores SHT_LLVM_ADDRSIG [index {i}] with sh_link=0 (likely created using objcopy or ld -r)",
                        o.input.name
                    ));
                }
                for i in 1..o.symbols.len() {
                    mark(l, definition(l, f, i));
                }
            }
        }
    }
    if !errors.is_empty() {
        return Err(Error::many(errors));
    }
    Ok(keep)
}

fn uleb128(d: &[u8]) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for (i, &b) in d.iter().enumerate().take(10) {
        v |= ((b & 0x7f) as u64) << (7 * i);
        if b & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    None
}

/// lld's `iterateFDEWithLSDA`: the live sections an FDE with an LSDA describes. Two functions
/// with the same code may catch different exceptions, so these never fold.
fn with_lsda(l: &Layout, live: &Live) -> Vec<Sec> {
    let mut out = Vec::new();
    for (f, o) in l.r.objects_in_load_order() {
        for (s, sec) in o.sections.iter().enumerate() {
            if sec.kind != SecKind::EhFrame || !live[f][s] {
                continue;
            }
            let Ok(recs) = crate::elf::eh_frame::split(sec.data) else { continue };
            let mut lsda_cies = HashSet::new();
            for rec in recs.iter().filter(|r| !r.is_terminator()) {
                let body = &sec.data[rec.offset as usize..(rec.offset + rec.len) as usize];
                if rec.is_cie {
                    let aug = body.get(9..).and_then(|a| a.split(|&b| b == 0).next()).unwrap_or(&[]);
                    if aug.contains(&b'L') {
                        lsda_cies.insert(rec.offset);
                    }
                    continue;
                }
                if !lsda_cies.contains(&rec.cie_offset) {
                    continue;
                }
                let Some(rel) = sec.relocs.iter().find(|x| x.r_offset(LE) >= rec.offset && x.r_offset(LE) < rec.offset + rec.len) else { continue };
                if let Some((tf, ts)) = definition(l, f, rel.r_sym(LE, false) as usize).and_then(|d| section_of(l, d)) {
                    if live[tf][ts as usize] {
                        out.push((tf, ts));
                    }
                }
            }
        }
    }
    out
}

/// A section's constant parts and the input sections its relocations point into.
fn constant_parts<'a>(l: &'a Layout, live: &Live, f: FileId, s: u32, out_name: &'a [u8]) -> (ConstKey<'a>, Vec<Sec>) {
    let o = l.obj(f);
    let sec = &o.sections[s as usize];
    let mut rels = Vec::with_capacity(sec.relocs.len());
    let mut targets = Vec::new();
    for rel in sec.relocs {
        let si = rel.r_sym(LE, false) as usize;
        let addend = rel.r_addend(LE);
        let same = RelKey::Same(l.target_of(f, si), addend);
        let key = match definition(l, f, si) {
            Some(d) if !matches!(l.target_of(f, si), t @ Target::Global(_) if l.is_preemptible(t)) => {
                let sym = l.sym(d.0, d.1);
                let value = sym.st_value(LE);
                if sym.st_shndx(LE) == elf::SHN_ABS {
                    RelKey::Abs(value.wrapping_add(addend as u64))
                } else {
                    match section_of(l, d) {
                        Some((tf, ts)) if live[tf][ts as usize] => {
                            let t = &l.obj(tf).sections[ts as usize];
                            match t.kind {
                                SecKind::Regular => {
                                    targets.push((tf, ts));
                                    RelKey::InSec(value.wrapping_add(addend as u64))
                                }
                                SecKind::Merge => merge_key(l, t, sym.st_type() == elf::STT_SECTION, value, addend).unwrap_or(same),
                                _ => same,
                            }
                        }
                        _ => same,
                    }
                }
            }
            _ => same,
        };
        rels.push((rel.r_offset(LE), rel.r_type(LE, false), key));
    }
    // Group membership and compression say nothing about the contents.
    let flags = sec.flags & !((elf::SHF_GROUP | elf::SHF_COMPRESSED | elf::SHF_INFO_LINK) as u64);
    let key = (flags, sec.sh_type, out_name, sec.size, sec.data, rels);
    (key, targets)
}

/// lld's offset in a merged section, as a key: the piece a reference lands in (a section
/// symbol's addend selects it; another symbol's value does, and the addend is added after).
fn merge_key<'a>(l: &Layout, t: &'a crate::elf::object::InputSection, is_section: bool, value: u64, addend: i64) -> Option<RelKey<'a>> {
    let at = if is_section { value.wrapping_add(addend as u64) } else { value } as usize;
    let d = t.data;
    if at >= d.len() {
        return None;
    }
    let (start, end) = if flag(t.flags, elf::SHF_STRINGS) {
        let es = (t.hdr.sh_entsize(LE) as usize).max(1);
        let zero = |p: usize| d[p..p + es].iter().all(|&b| b == 0);
        // Strings of `es`-byte characters end with an `es`-byte zero.
        let mut start_piece = at - at % es;
        while start_piece >= es && !zero(start_piece - es) {
            start_piece -= es;
        }
        let mut e = start_piece;
        while e + es <= d.len() && !zero(e) {
            e += es;
        }
        (start_piece, (e + es).min(d.len()))
    } else {
        let es = (t.hdr.sh_entsize(LE) as usize).max(1);
        let start = at - at % es;
        (start, (start + es).min(d.len()))
    };
    let within = ((at - start) as u64).wrapping_add(if is_section { 0 } else { addend as u64 });
    let name = output_name(t.name, l.config.z_keep_text_section_prefix);
    Some(RelKey::Merge(name, t.flags, t.hdr.sh_entsize(LE), t.align, &d[start..end], within))
}

/// Gives each folded section the output section and offset of the section kept in its place,
/// so that the symbols defined in it (and relocations against it) resolve there. `offsets`:
/// after addresses are assigned.
pub fn alias(l: &mut Layout, offsets: bool) {
    let folded: Vec<(Sec, Sec)> = l.icf_folded.iter().map(|(&a, &b)| (a, b)).collect();
    for ((f, s), (kf, ks)) in folded {
        l.sec_osec[f][s as usize] = l.sec_osec[kf][ks as usize];
        if offsets {
            l.sec_off[f][s as usize] = l.sec_off[kf][ks as usize];
        }
    }
}

/// Whether `t` is defined in a section ICF folded into another.
pub fn is_folded(l: &Layout, t: Target) -> bool {
    if l.icf_folded.is_empty() {
        return false;
    }
    let d = match t {
        Target::Local(f, i) => Some((f, i as usize)),
        Target::Global(id) => match l.r.symbols[id].def {
            Def::Defined(f, i) => Some((f, i)),
            _ => None,
        },
    };
    d.and_then(|d| section_of(l, d)).is_some_and(|s| l.icf_folded.contains_key(&s))
}
