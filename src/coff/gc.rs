//! Dead-section elimination for COFF (`--gc-sections` / `/opt:ref`), as lld's `markLive`.
//!
//! This module exists so that `--gc-sections` output matches lld's: only COMDAT sections are
//! subject to collection (with `-ffunction-sections -fdata-sections` every function and
//! variable has one). Every non-COMDAT section that resolution kept is a root (DWARF sections
//! and `/guard:cf`'s `.gfids$y`-like index sections are kept but do not keep anything alive),
//! and so are the symbols lld's driver adds as GC roots (the entry point, `/include:` and `-u`,
//! exports — auto-exported ones too —, the targets of `/alternatename:`, `_load_config_used`). Marking follows relocations: a
//! relocation to a symbol defined in a section keeps that section; to a short import's `__imp_`
//! symbol keeps the import; to its thunk keeps the import and the thunk. A kept section keeps
//! its associative COMDAT children (and, in MinGW mode, the `.pdata$f`/`.xdata$f`/
//! `.eh_frame$f` sections implicitly associated with `.text$f`).
//!
//! The result is written back into the resolution: collected sections become not live (so they
//! get no chunk, and their symbols leave the output's symbol table), unreferenced short imports
//! leave `Resolved::imports`, and unreferenced thunks are listed in `gc_dead_thunks`. Like lld,
//! a `__imp_` pointer to a local definition does not keep that definition alive.

use std::collections::{HashMap, HashSet};

use super::config::CoffConfig;
use super::symtab::{ChunkSrc, Def, FileId, Kind, Resolved, SymId, SymRef};

/// lld's `SectionChunk::isDWARF`.
fn is_dwarf(name: &str) -> bool {
    name.starts_with(".debug_") || name == ".eh_frame"
}

/// The GC roots lld's driver registers (`LinkerDriver::addUndefined` / `addGCRoot`):
/// The `/include:` names and `/alternatename:` pairs are resolution's (`Resolved::includes`).
pub fn roots(r: &Resolved, config: &CoffConfig) -> Vec<SymId> {
    let (includes, alternate_names) = (&r.includes, &r.alternate_names);
    let mut out: Vec<SymId> = Vec::new();
    out.extend(r.entry);
    for n in includes.iter().chain(&config.include_optional) {
        out.extend(r.find(n));
    }
    for (e, id) in &r.exports {
        if e.forward_to.is_none() {
            out.push(*id);
        }
    }
    for (from, to) in alternate_names {
        if r.find(from).is_some() {
            out.extend(r.find(to));
        }
    }
    out.extend(r.find("_load_config_used"));
    out
}

/// Marks what is reachable from `roots` and the non-COMDAT sections, and drops the rest.
pub fn mark_live(r: &mut Resolved, roots: &[SymId], mingw: bool) {
    // Per object file: which sections are candidates (kept by resolution), which are marked.
    let nfiles = r.files.len();
    let mut marked: Vec<Vec<bool>> = vec![Vec::new(); nfiles];
    let mut children: Vec<HashMap<u32, Vec<u32>>> = vec![HashMap::new(); nfiles];
    let mut work: Vec<(FileId, u32)> = Vec::new();
    for f in 0..nfiles {
        let file = &r.files[f];
        let Kind::Obj(obj) = &file.kind else { continue };
        let n = obj.sections.len().min(file.live.len());
        marked[f] = vec![false; file.live.len()];
        children[f] = assoc_children(file, obj, mingw);
        for k in 0..n {
            if file.live[k] && !obj.sections[k].is_comdat() {
                marked[f][k] = true;
                // Nor do `/guard:cf`'s index sections, which are no chunks in lld.
                if !is_dwarf(obj.sections[k].name) && !super::guardcf::is_guard_section(obj.sections[k].name) {
                    work.push((f, k as u32));
                }
            }
        }
    }

    let mut live_imports: HashSet<FileId> = HashSet::new();
    let mut live_thunks: HashSet<FileId> = HashSet::new();
    // lld's `addSym`.
    let add_sym =
        |r: &Resolved, id: SymId, marked: &mut Vec<Vec<bool>>, work: &mut Vec<(FileId, u32)>, imports: &mut HashSet<FileId>, thunks: &mut HashSet<FileId>| {
            match r.symbols[id].def {
                Def::Regular(df, di) => {
                    let Kind::Obj(o) = &r.files[df].kind else { return };
                    let Some(sec) = o.symbols.get(di as usize).and_then(|s| usize::try_from(s.section).ok()).and_then(|s| s.checked_sub(1)) else { return };
                    enqueue(r, marked, work, df, sec as u32);
                }
                Def::ImportData(f) => {
                    imports.insert(f);
                }
                Def::ImportThunk(f) => {
                    imports.insert(f);
                    thunks.insert(f);
                }
                _ => {}
            }
        };
    for &id in roots {
        add_sym(r, id, &mut marked, &mut work, &mut live_imports, &mut live_thunks);
    }
    while let Some((f, k)) = work.pop() {
        let Kind::Obj(obj) = &r.files[f].kind else { continue };
        let Some(sec) = obj.sections.get(k as usize) else { continue };
        for rel in sec.relocs {
            let idx = rel.symbol_table_index.get(object::LittleEndian) as usize;
            match r.files[f].syms.get(idx).copied() {
                Some(SymRef::Global(id)) => add_sym(r, id, &mut marked, &mut work, &mut live_imports, &mut live_thunks),
                Some(SymRef::Local { sec, .. }) => {
                    if let Some(s) = sec.checked_sub(1) {
                        enqueue(r, &mut marked, &mut work, f, s);
                    }
                }
                _ => {}
            }
        }
        if let Some(kids) = children[f].get(&k) {
            for &c in kids {
                enqueue(r, &mut marked, &mut work, f, c);
            }
        }
    }

    // Write the result back.
    for (f, m) in marked.into_iter().enumerate() {
        if let Kind::Obj(_) = r.files[f].kind {
            let live = &mut r.files[f].live;
            for (k, l) in live.iter_mut().enumerate() {
                *l = *l && m.get(k).copied().unwrap_or(false);
            }
        }
    }
    let dead_thunks: Vec<FileId> = r.imports.iter().copied().filter(|f| !live_thunks.contains(f)).collect();
    r.imports.retain(|f| live_imports.contains(f));
    r.gc_dead_thunks = dead_thunks.into_iter().collect();
}

/// Each live COMDAT section's associative children (section indices, 0-based): by the
/// `IMAGE_COMDAT_SELECT_ASSOCIATIVE` of their definition, and in MinGW mode `.pdata$f`,
/// `.xdata$f`, `.eh_frame$f` for a `.text$f` (lld's implicit association).
pub fn assoc_children(file: &super::symtab::InFile, obj: &super::object::ObjFile, mingw: bool) -> HashMap<u32, Vec<u32>> {
    let n = obj.sections.len().min(file.live.len());
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    // MinGW: `.text$f` sections (live, executable, COMDAT) by suffix, for the implicit
    // association of `.pdata$f` / `.xdata$f` / `.eh_frame$f`.
    let mut text_by_suffix: HashMap<&str, u32> = HashMap::new();
    if mingw {
        for k in 0..n {
            let s = &obj.sections[k];
            if file.live[k] && s.is_comdat() && s.chars & object::pe::IMAGE_SCN_MEM_EXECUTE != 0 {
                if let Some((_, suffix)) = s.name.split_once('$') {
                    text_by_suffix.entry(suffix).or_insert(k as u32);
                }
            }
        }
    }
    // Associative children, from each section's definition symbol.
    let mut seen = vec![false; n];
    for s in &obj.symbols {
        let Some((sel, assoc)) = s.secdef else { continue };
        let Some(k) = usize::try_from(s.section).ok().and_then(|x| x.checked_sub(1)).filter(|&k| k < n) else { continue };
        if std::mem::replace(&mut seen[k], true) || !obj.sections[k].is_comdat() {
            continue;
        }
        let parent = if sel == 5 {
            assoc.checked_sub(1).filter(|&p| (p as usize) < n)
        } else if mingw {
            [".pdata$", ".xdata$", ".eh_frame$"]
                .iter()
                .find_map(|p| s.name.strip_prefix(p))
                .and_then(|func| text_by_suffix.get(func).copied())
                .filter(|&p| p as usize != k)
        } else {
            None
        };
        if let Some(p) = parent {
            children.entry(p).or_default().push(k as u32);
        }
    }
    children
}

/// lld's `enqueue`: marks a section kept by resolution and queues it once.
fn enqueue(r: &Resolved, marked: &mut [Vec<bool>], work: &mut Vec<(FileId, u32)>, f: FileId, k: u32) {
    let k = k as usize;
    if !r.files[f].live.get(k).copied().unwrap_or(false) {
        return;
    }
    let Some(m) = marked[f].get_mut(k) else { return };
    if *m {
        return;
    }
    *m = true;
    work.push((f, k as u32));
}

/// Which sections of each file are live, before GC and ICF drop some (for `log_discarded`).
pub fn liveness(r: &Resolved) -> Vec<Vec<bool>> {
    r.files.iter().map(|f| f.live.clone()).collect()
}

/// `/verbose`: lld's `printDiscardedMessage`, a `Discarded <leader>` line for every section
/// chunk `/opt:ref` dropped (those ICF folded are not discarded, they are replaced).
pub fn log_discarded(r: &Resolved, before: &[Vec<bool>], config: &CoffConfig) {
    for &f in &r.obj_order {
        let file = &r.files[f];
        for c in &file.chunks {
            let ChunkSrc::Sec(k) = *c else { continue };
            if before[f].get(k as usize) == Some(&true) && !file.live[k as usize] && !r.icf_folded.contains_key(&(f, k)) {
                if let Some(&i) = file.leaders.get(&k) {
                    config.diag.log(&format!("Discarded {}", r.obj(f).symbols[i as usize].name));
                }
            }
        }
    }
}
