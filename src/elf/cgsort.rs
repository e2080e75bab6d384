//! Code ordering from a call graph profile (lld's `CallGraphSort.cpp` and Writer's
//! `sortISDBySectionOrder`).
//!
//! Objects built with profile data (`-fprofile-instr-use`, `-fprofile-sample-use`) carry an
//! `.llvm.call-graph-profile` section: one weight per call edge, whose caller and callee are
//! named by a pair of (REL) relocations. `--call-graph-ordering-file=` gives the same graph as
//! text. The linker turns the graph into an order of the input sections that the edges connect,
//! so that hot callers and callees end up next to each other (fewer i-TLB and i-cache misses),
//! and places those sections first in their output section. This never changes what the
//! program does, only where its functions are.
//!
//! Two algorithms, as lld offers: `hfsort` (Call-Chain Clustering, C³, in `util/hfsort.rs`,
//! shared with the COFF link) and `cdsort` (Cache-Directed Sort, `cdsort.rs`), lld's default. This
//! file reads the graph, builds the node list each algorithm expects and turns the order into
//! section priorities.

use std::collections::HashMap;
use std::io::Write;

use object::elf;
use object::read::elf::Sym as _;

use crate::elf::config::CgProfileSort;

use crate::elf::layout::model::Layout;
use crate::elf::symtab::{Def, FileId};
use crate::error::{Error, Result};

/// `SHT_LLVM_CALL_GRAPH_PROFILE`.
const SHT_LLVM_CALL_GRAPH_PROFILE: u32 = 0x6fff_4c09;

/// An input section: (file, section index).
pub type Sec = (FileId, u32);

/// The weighted call graph between input sections, edges in first-seen order (weights of
/// repeated pairs are summed, as lld's `MapVector`).
#[derive(Default)]
pub struct Profile {
    pub edges: Vec<(Sec, Sec, u64)>,
}

impl Profile {
    fn add(&mut self, index: &mut HashMap<(Sec, Sec), usize>, from: Sec, to: Sec, w: u64) {
        match index.get(&(from, to)) {
            Some(&i) => self.edges[i].2 = self.edges[i].2.saturating_add(w),
            None => {
                index.insert((from, to), self.edges.len());
                self.edges.push((from, to, w));
            }
        }
    }
}

/// The section a symbol of file `f` is defined in, following the resolution of globals. A
/// local symbol of a COMDAT group another file won is no definition (lld makes it undefined).
pub(crate) fn section_of(l: &Layout, f: FileId, si: usize) -> Option<Sec> {
    let r = l.r;
    let (df, di) = match r.global_of(f, si) {
        Some(id) => match r.symbols[id].def {
            Def::Defined(df, di) => (df, di),
            _ => return None,
        },
        None => (f, si),
    };
    let sh = r.obj(df).sym_section(di)? as usize;
    let defined = sh < r.obj(df).sections.len();
    // A section ICF folded is ordered where the section kept in its place goes.
    (defined && !r.discarded[df].get(sh).copied().unwrap_or(false)).then(|| l.icf_folded.get(&(df, sh as u32)).copied().unwrap_or((df, sh as u32)))
}

/// lld's `readCallGraphsFromObjectFiles`.
fn read_objects(l: &Layout) -> Result<Profile> {
    let mut p = Profile::default();
    let mut index = HashMap::new();
    for (f, o) in l.r.objects_in_load_order() {
        for sec in &o.sections {
            if sec.sh_type != SHT_LLVM_CALL_GRAPH_PROFILE {
                continue;
            }
            let weights: Vec<u64> = sec.data.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect();
            // lld's words, with the file named.
            if sec.relocs.is_empty() {
                l.config.diag.warn(&format!("{}: SHT_LLVM_CALL_GRAPH_PROFILE exists, but relocation section doesn't", o.input.name));
                continue;
            }
            if sec.relocs.len() != weights.len() * 2 {
                return Err(Error::new(format!("{}: number of relocations doesn't match Weights", o.input.name)));
            }
            for (k, &w) in weights.iter().enumerate() {
                let from = sec.relocs[2 * k].r_sym(crate::elf::types::LE, false) as usize;
                let to = sec.relocs[2 * k + 1].r_sym(crate::elf::types::LE, false) as usize;
                if let (Some(a), Some(b)) = (section_of(l, f, from), section_of(l, f, to)) {
                    p.add(&mut index, a, b, w);
                }
            }
        }
    }
    Ok(p)
}

/// lld's `maybeWarnUnorderableSymbol`: why symbol `k` of file `f`, named in the ordering file,
/// cannot be placed (a shared library's, an absolute one, or one whose section is discarded),
/// naming the file that provides it.
pub(crate) fn unorderable(l: &Layout, f: FileId, k: usize) -> Option<String> {
    let r = l.r;
    let name = String::from_utf8_lossy(r.obj(f).sym_name(k)).into_owned();
    let (df, di) = match r.global_of(f, k) {
        Some(id) => match r.symbols[id].def {
            Def::Shared(df, _) => return Some(format!("{}: unable to order shared symbol: {name}", r.inputs[df].name)),
            Def::Defined(df, di) => (df, di),
            // lld says nothing when unresolved symbols are ignored (no undefined-symbol
            // diagnostic either).
            Def::Undefined if !l.config.unresolved_ignored() => {
                return Some(format!("{}: unable to order undefined symbol: {name}", r.inputs[f].name));
            }
            _ => return None,
        },
        None => (f, k),
    };
    let raw = r.obj(df).symbols.get(di)?.st_shndx(crate::elf::types::LE);
    let file = &r.inputs[df].name;
    if raw == elf::SHN_ABS {
        return Some(format!("{file}: unable to order absolute symbol: {name}"));
    }
    let sh = r.obj(df).sym_section(di)?;
    let discarded =
        r.discarded[df].get(sh as usize).copied().unwrap_or(false) || l.sec_osec.get(df).and_then(|v| v.get(sh as usize)).is_some_and(|&o| o == u32::MAX);
    discarded.then(|| format!("{file}: unable to order discarded symbol: {name}"))
}

/// lld's `readCallGraph`: `--call-graph-ordering-file=` lines of `from to weight`, separated
/// by single spaces (lines are trimmed; empty lines and `#` comments are skipped). A name is
/// looked up among every symbol of every object file, locals included; of equal names the last
/// file's wins.
fn read_file(l: &Layout, path: &std::path::Path) -> Result<Profile> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::new(format!("cannot open {}: {}", path.display(), crate::error::io_error(&e))))?;
    let name = path.display().to_string();
    let mut by_name: HashMap<&[u8], (FileId, usize)> = HashMap::new();
    for (f, o) in l.r.objects_in_load_order() {
        for k in 0..o.symbols.len() {
            by_name.insert(o.sym_name(k), (f, k));
        }
    }
    let mut p = Profile::default();
    let mut index = HashMap::new();
    let warn = l.config.warn_symbol_ordering;
    let sec = |n: &str| -> Option<Sec> {
        let Some(&(f, k)) = by_name.get(n.as_bytes()) else {
            if warn {
                l.config.diag.warn(&format!("{name}: no such symbol: {n}"));
            }
            return None;
        };
        if warn {
            if let Some(msg) = unorderable(l, f, k) {
                l.config.diag.warn(&msg);
            }
        }
        section_of(l, f, k)
    };
    for line in text.split('\n').map(str::trim).filter(|s| !s.is_empty() && !s.starts_with('#')) {
        let fields: Vec<&str> = line.split(' ').collect();
        let (Some(w), [from, to, _]) = (fields.get(2).and_then(|w| crate::util::hfsort::parse_weight(w)), &fields[..]) else {
            return Err(Error::new(format!("{name}: parse error")));
        };
        let Some(a) = sec(from) else { continue };
        if let Some(b) = sec(to) {
            p.add(&mut index, a, b, w);
        }
    }
    Ok(p)
}

/// The priority of every section the call graph orders (lower goes first), or an empty map.
///
/// As lld, nothing is ordered under `--call-graph-profile-sort=none` (not even by
/// `--call-graph-ordering-file=`, which otherwise replaces the objects' profiles), and the
/// chosen algorithm orders either graph.
pub fn section_order(l: &Layout) -> Result<HashMap<Sec, u32>> {
    let algorithm = l.config.cg_profile_sort;
    let profile = match &l.config.call_graph_ordering_file {
        _ if algorithm == CgProfileSort::None => return Ok(HashMap::new()),
        Some(p) => read_file(l, p)?,
        None => read_objects(l)?,
    };
    if profile.edges.is_empty() {
        return Ok(HashMap::new());
    }
    // Edges between different output sections are ignored, as they cannot be placed next to
    // each other; as in lld, two sections in none (discarded by --gc-sections) count as in the
    // same one, and still weigh in the algorithm. Nodes are numbered in order of first
    // appearance; cdsort makes none for calls of weight 0, as lld.
    let osec = |s: Sec| l.sec_osec.get(s.0).and_then(|v| v.get(s.1 as usize)).copied().filter(|&o| o != u32::MAX);
    let mut node: HashMap<Sec, usize> = HashMap::new();
    let mut secs: Vec<Sec> = Vec::new();
    let mut edges = Vec::new();
    for &(from, to, w) in &profile.edges {
        if osec(from) != osec(to) {
            continue;
        }
        if w == 0 && algorithm == CgProfileSort::Cdsort {
            continue;
        }
        let mut id = |s: Sec| {
            *node.entry(s).or_insert_with(|| {
                secs.push(s);
                secs.len() - 1
            })
        };
        let (a, b) = (id(from), id(to));
        edges.push((a, b, w));
    }
    let sizes: Vec<u64> = secs.iter().map(|&(f, s)| l.obj(f).sections[s as usize].size).collect();
    let order = match algorithm {
        CgProfileSort::Cdsort => crate::elf::cdsort::cache_directed_sort(&sizes, &edges),
        _ => {
            let order = crate::util::hfsort::hfsort(&sizes, &edges);
            // lld writes the symbol order only from C³ (its cdsort ignores the option).
            if let Some(p) = &l.config.print_symbol_order {
                print_symbol_order(l, p, &order, &secs)?;
            }
            order
        }
    };
    Ok(order.iter().enumerate().map(|(k, &i)| (secs[i], k as u32 + 1)).collect())
}

/// `--print-symbol-order=`: the named symbols of each ordered section, in the chosen order.
fn print_symbol_order(l: &Layout, path: &std::path::Path, order: &[usize], secs: &[Sec]) -> Result<()> {
    let mut out = Vec::new();
    for &i in order {
        let (f, s) = secs[i];
        let o = l.obj(f);
        for (k, sym) in o.symbols.iter().enumerate().skip(1) {
            if sym.st_type() == elf::STT_SECTION || o.shndx(k) != s {
                continue;
            }
            if let Some(id) = l.r.global_of(f, k) {
                if l.r.symbols[id].def != Def::Defined(f, k) {
                    continue;
                }
            }
            out.extend_from_slice(o.sym_name(k));
            out.push(b'\n');
        }
    }
    let mut file = std::fs::File::create(path).map_err(|e| Error::new(format!("cannot open {}: {}", path.display(), crate::error::io_error(&e))))?;
    file.write_all(&out).map_err(|e| Error::new(format!("cannot write {}: {}", path.display(), crate::error::io_error(&e))))
}
