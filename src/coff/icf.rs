//! Identical code folding (`/opt:icf`, MinGW `--icf=all|safe`), as lld's COFF `ICF.cpp`.
//!
//! COMDAT sections that are byte-for-byte the same, relocate the same way to equivalent targets
//! and have equivalent associative children (their `.pdata`/`.xdata`) are folded into one: the
//! first in input order stays, the others are dropped and every symbol in them takes the kept
//! section's address. Eligible are live, non-writable COMDAT sections that hold code, unwind
//! data (`.pdata`, `.xdata`) or vtables (`??_7`, `_ZTV`), and any other read-only COMDAT data whose
//! address is not significant (`.llvm_addrsig`; an object without that table makes all of its
//! symbols significant; exports are significant). `/opt:safeicf` keeps every address-significant
//! section.
//!
//! lld hashes the sections and refines the hash classes until they are stable; dtld computes the
//! same fixpoint directly by partition refinement: classes start from each section's constant
//! parts (characteristics, full name, size, COMDAT checksum, bytes, relocation types and offsets,
//! and what each relocation refers to), then are split by the classes of the sections
//! relocations point into and of the associative children, until nothing splits. The kept
//! section of each class is the one lld keeps, so `/verbose` prints lld's `Selected`/`Removed`
//! lines and the output is lld's.

use std::collections::HashMap;

use super::config::CoffConfig;
use super::symtab::{Def, FileId, Kind, Resolved, SymId, SymRef};

/// A section: (file, 0-based section index).
type Sec = (FileId, u32);

/// A section's constant parts: output characteristics, full name, size, COMDAT checksum,
/// bytes, and each relocation's type, offset and (unless it is a section) target.
type ConstKey<'a> = (u32, &'a str, u32, u32, &'a [u8], Vec<(u16, u32, Option<Target>)>);

/// What a relocation refers to, for comparing two sections.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
enum Target {
    /// A definition in a section (lld's `DefinedRegular`): its offset and the section.
    Regular(u32, Sec),
    /// Anything else: the same symbol is the same target.
    Global(SymId),
    /// A file's own absolute or unbound symbol.
    Local(FileId, usize),
}

fn target(r: &Resolved, f: FileId, idx: usize) -> Target {
    match r.files[f].syms.get(idx).copied() {
        Some(SymRef::Global(id)) => match r.symbols[id].def {
            Def::Regular(df, di) => {
                let s = &r.obj(df).symbols[di as usize];
                match (s.section as u32).checked_sub(1) {
                    Some(k) if s.section > 0 => Target::Regular(s.value, (df, k)),
                    _ => Target::Global(id),
                }
            }
            _ => Target::Global(id),
        },
        Some(SymRef::Local { sec, value }) if sec > 0 => Target::Regular(value, (f, sec - 1)),
        _ => Target::Local(f, idx),
    }
}

/// One ULEB128 number from the front of `b` and its length, or LLVM's `decodeULEB128` error.
fn uleb128(b: &[u8]) -> Result<(u64, usize), &'static str> {
    let (mut v, mut shift) = (0u64, 0u32);
    for (n, &byte) in b.iter().enumerate() {
        let slice = u64::from(byte & 0x7f);
        if (shift == 63 && slice > 1) || (shift > 63 && slice != 0) {
            return Err("uleb128 too big for uint64");
        }
        if shift < 64 {
            v |= slice << shift;
        }
        shift += 7;
        if byte & 0x80 == 0 {
            return Ok((v, n + 1));
        }
    }
    Err("malformed uleb128, extends past end")
}

/// lld's `markAddrsig` over exports and `.llvm_addrsig` tables: the sections whose address the
/// program may compare. A table lld cannot read stops the link (lld's `findKeepUniqueSections`).
fn keep_unique(r: &Resolved) -> Result<std::collections::HashSet<Sec>, String> {
    let mut out = std::collections::HashSet::new();
    let mut mark = |t: Target| {
        if let Target::Regular(_, s) = t {
            out.insert(s);
        }
    };
    for (_, id) in &r.exports {
        if let Def::Regular(df, di) = r.symbols[*id].def {
            let s = &r.obj(df).symbols[di as usize];
            if s.section > 0 {
                mark(Target::Regular(s.value, (df, s.section as u32 - 1)));
            }
        }
    }
    for &f in &r.obj_order {
        let Kind::Obj(obj) = &r.files[f].kind else { continue };
        let file = &r.files[f].name;
        match obj.sections.iter().find(|s| s.name == ".llvm_addrsig") {
            Some(sec) => {
                let mut b = sec.data;
                while !b.is_empty() {
                    let (v, n) = uleb128(b).map_err(|e| format!("{file}: could not decode addrsig section: {e}"))?;
                    if v >= r.files[f].syms.len() as u64 {
                        return Err(format!("{file}: invalid symbol index in addrsig section"));
                    }
                    b = &b[n..];
                    mark(target(r, f, v as usize));
                }
            }
            None => {
                for idx in 0..r.files[f].syms.len() {
                    mark(target(r, f, idx));
                }
            }
        }
    }
    Ok(out)
}

/// Runs ICF over the live sections of `r` and records the folds in `r.icf_folded`.
/// Returns lld's `/verbose` lines, or the error of an address-significance table lld cannot read.
pub fn fold(r: &mut Resolved, config: &CoffConfig) -> Result<Vec<String>, String> {
    let safe = config.icf_safe;
    let unique = keep_unique(r)?;
    // Every live section chunk, in lld's `getChunks()` order; the eligible ones.
    let mut order: Vec<Sec> = Vec::new();
    for &f in &r.obj_order {
        let file = &r.files[f];
        let Kind::Obj(_) = &file.kind else { continue };
        for c in &file.chunks {
            if let super::symtab::ChunkSrc::Sec(k) = *c {
                if file.live.get(k as usize).copied().unwrap_or(false) {
                    order.push((f, k));
                }
            }
        }
    }
    let leader_name = |r: &Resolved, (f, k): Sec| -> Option<&'static str> { r.files[f].leaders.get(&k).map(|&i| r.obj(f).symbols[i as usize].name) };
    let eligible = |r: &Resolved, (f, k): Sec| -> bool {
        let s = &r.obj(f).sections[k as usize];
        if s.chars & object::pe::IMAGE_SCN_MEM_WRITE != 0 || !s.is_comdat() || (safe && unique.contains(&(f, k))) {
            return false;
        }
        // String literals go to the tail-merged chunk instead (lld never sees them in ICF).
        if super::merge::is_mergeable(config, &r.files[f], r.obj(f), k) {
            return false;
        }
        if s.chars & object::pe::IMAGE_SCN_MEM_EXECUTE != 0 {
            return true;
        }
        let out = s.name.split('$').next().unwrap_or("");
        if out == ".pdata" || out == ".xdata" {
            return true;
        }
        if leader_name(r, (f, k)).is_some_and(|n| n.starts_with("??_7") || n.starts_with("_ZTV")) {
            return true;
        }
        !unique.contains(&(f, k))
    };
    let elig: Vec<Sec> = order.iter().copied().filter(|&s| eligible(r, s)).collect();
    if elig.len() < 2 {
        return Ok(Vec::new());
    }
    let index: HashMap<Sec, usize> = elig.iter().enumerate().map(|(i, &s)| (s, i)).collect();
    // Associative children that take part (not debug or CFG metadata), ordered by name as lld
    // keeps them.
    let mut children: Vec<Vec<Sec>> = vec![Vec::new(); elig.len()];
    let mut by_file: HashMap<FileId, HashMap<u32, Vec<u32>>> = HashMap::new();
    for (i, &(f, k)) in elig.iter().enumerate() {
        let kids = by_file.entry(f).or_insert_with(|| {
            let file = &r.files[f];
            super::gc::assoc_children(file, r.obj(f), config.mingw)
        });
        let obj = r.obj(f);
        let mut v: Vec<u32> = kids.get(&k).cloned().unwrap_or_default();
        v.retain(|&c| {
            let n = obj.sections[c as usize].name;
            r.files[f].live.get(c as usize).copied().unwrap_or(false) && !(n.starts_with(".debug") || n == ".gfids$y" || n == ".giats$y" || n == ".gljmp$y")
        });
        v.sort_by(|a, b| obj.sections[*b as usize].name.cmp(obj.sections[*a as usize].name));
        children[i] = v.into_iter().map(|c| (f, c)).collect();
    }
    // A section's class: its index's class if eligible, else the section itself.
    #[derive(Clone, PartialEq, Eq, Hash, Debug)]
    enum Class {
        Eq(usize),
        Other(Sec),
    }
    let class_of = |cls: &[usize], s: Sec| -> Class {
        match index.get(&s) {
            Some(&i) => Class::Eq(cls[i]),
            None => Class::Other(s),
        }
    };
    // Constant parts.
    let mut cls = vec![0usize; elig.len()];
    {
        let mut ids: HashMap<ConstKey, usize> = HashMap::new();
        for (i, &(f, k)) in elig.iter().enumerate() {
            let obj = r.obj(f);
            let s = &obj.sections[k as usize];
            let checksum = obj.symbols.iter().find(|y| y.secdef.is_some() && y.section == k as i32 + 1).map_or(0, |y| y.checksum);
            let relocs = s
                .relocs
                .iter()
                .map(|rel| {
                    let t = target(r, f, rel.symbol_table_index.get(object::LittleEndian) as usize);
                    // Sections are compared later; here only what is not a section.
                    let t = match t {
                        Target::Regular(..) => None,
                        other => Some(other),
                    };
                    (rel.typ.get(object::LittleEndian), rel.virtual_address.get(object::LittleEndian), t)
                })
                .collect();
            let n = ids.len();
            cls[i] = *ids.entry((s.out_chars(), s.name, s.size, checksum, s.data, relocs)).or_insert(n);
        }
    }
    // Refine by relocation targets and children until stable (the values of regular targets
    // are constant and part of the key from the first round on).
    loop {
        type Key = (usize, Vec<(u32, Class)>, Vec<Class>);
        let mut ids: HashMap<Key, usize> = HashMap::new();
        let mut next = vec![0usize; elig.len()];
        for (i, &(f, k)) in elig.iter().enumerate() {
            let s = &r.obj(f).sections[k as usize];
            let targets = s
                .relocs
                .iter()
                .filter_map(|rel| match target(r, f, rel.symbol_table_index.get(object::LittleEndian) as usize) {
                    Target::Regular(v, sec) => Some((v, class_of(&cls, sec))),
                    _ => None,
                })
                .collect();
            let kids = children[i].iter().map(|&c| class_of(&cls, c)).collect();
            let n = ids.len();
            next[i] = *ids.entry((cls[i], targets, kids)).or_insert(n);
        }
        let before = cls.iter().collect::<std::collections::HashSet<_>>().len();
        let after = ids.len();
        cls = next;
        if after == before {
            break;
        }
    }
    // Fold: the first section of each class (in chunk order) stays.
    let mut first: HashMap<usize, usize> = HashMap::new();
    let mut log = Vec::new();
    let mut selected_logged = std::collections::HashSet::new();
    for i in 0..elig.len() {
        let keep = *first.entry(cls[i]).or_insert(i);
        if keep == i {
            continue;
        }
        let (kf, kk) = elig[keep];
        let (f, k) = elig[i];
        if selected_logged.insert(keep) {
            log.push(format!("Selected {}", leader_name(r, (kf, kk)).unwrap_or("")));
        }
        log.push(format!("  Removed {}", leader_name(r, (f, k)).unwrap_or("")));
        r.files[f].live[k as usize] = false;
        r.icf_folded.insert((f, k), (kf, kk));
    }
    Ok(log)
}
