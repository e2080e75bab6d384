//! lld-link's call-graph ordering: `/call-graph-ordering-file:<file>` and the objects'
//! `.llvm.call-graph-profile` sections (`/call-graph-profile-sort`, on by default).
//!
//! Why this exists: lld-link places hot callers next to their callees whenever the inputs carry
//! a call-graph profile (clang writes one with `-fprofile-instr-use`), so a drop-in must place
//! every function where lld-link does. The graph is between section chunks:
//!
//! * `/call-graph-ordering-file:` lines of `from to weight` (trimmed, single spaces, `#`
//!   comments and empty lines skipped, the weight in any radix LLVM's `to_integer` reads). A name
//!   is looked up among the symbol-table entries of every object file (locals too; of equal
//!   names the last file's wins); a name none has is warned about (`/ignore:4037` silences it)
//!   and its edge dropped, as is an edge whose symbol is not defined in a section. The file
//!   replaces the objects' profiles.
//! * Otherwise each object's `.llvm.call-graph-profile`: records of (from symbol index, to
//!   symbol index, weight) as u32, u32, u64.
//!
//! Weights of a repeated pair are summed (lld's `MapVector`), sections ICF folded stand for the
//! section kept, and the graph goes through C³ (`util/hfsort.rs`) with every section's size.
//! Unlike ELF, no edge is dropped for joining two output sections: lld-link sorts before it has
//! output sections. The order then works as an `/order` file does (`order.rs`): a section is
//! placed by its COMDAT leader's name, so sections that are no COMDAT stay where they are.
//! `/order` turns all of this off, and naming both files is an error. `/print-symbol-order:`
//! writes the ordered sections' external COMDAT leaders, one a line.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use super::config::CoffConfig;
use super::symtab::{ChunkSrc, Def, FileId, Kind, Resolved, SymRef};
use crate::error::{Error, Result};

/// A section chunk: (file, 0-based section index).
type Sec = (FileId, u32);

/// lld's `callGraphProfile`: edges in first-seen order, weights of a repeated pair summed.
#[derive(Default)]
struct Profile {
    edges: Vec<(Sec, Sec, u64)>,
    index: HashMap<(Sec, Sec), usize>,
}

impl Profile {
    fn add(&mut self, from: Sec, to: Sec, w: u64) {
        match self.index.get(&(from, to)) {
            Some(&i) => self.edges[i].2 = self.edges[i].2.wrapping_add(w),
            None => {
                self.index.insert((from, to), self.edges.len());
                self.edges.push((from, to, w));
            }
        }
    }
}

/// Every section of the link that is a chunk (lld's `SectionChunk`s).
fn chunk_sections(r: &Resolved) -> HashSet<Sec> {
    let mut s = HashSet::new();
    for (f, file) in r.files.iter().enumerate() {
        for c in &file.chunks {
            if let ChunkSrc::Sec(k) = *c {
                s.insert((f, k));
            }
        }
    }
    s
}

/// The section chunk symbol `i` of file `f` is defined in (following a global to its
/// definition), if any.
fn section_of(r: &Resolved, chunks: &HashSet<Sec>, f: FileId, i: usize) -> Option<Sec> {
    let sec = match *r.files[f].syms.get(i)? {
        SymRef::Global(id) => match r.symbols[id].def {
            Def::Regular(df, di) => (df, u32::try_from(r.obj(df).symbols.get(di as usize)?.section).ok()?.checked_sub(1)?),
            _ => return None,
        },
        SymRef::Local { sec, .. } => (f, sec.checked_sub(1)?),
        SymRef::None | SymRef::Absolute(_) => return None,
    };
    chunks.contains(&sec).then_some(sec)
}

/// lld's `parseCallGraphFile`.
fn read_file(config: &CoffConfig, r: &Resolved, chunks: &HashSet<Sec>, path: &Path) -> Result<Profile> {
    let data = std::fs::read(path).map_err(|e| Error::new(format!("could not open {}: {}", path.display(), crate::error::io_error(&e))))?;
    if let Some(repro) = &config.repro {
        repro.read_owned(path, data.clone());
    }
    let mut by_name: HashMap<&str, (FileId, usize)> = HashMap::new();
    for (f, file) in r.files.iter().enumerate() {
        let Kind::Obj(obj) = &file.kind else { continue };
        for (i, s) in obj.symbols.iter().enumerate() {
            if !s.is_aux && !matches!(file.syms.get(i), None | Some(SymRef::None)) {
                by_name.insert(s.name, (f, i));
            }
        }
    }
    let name = path.display().to_string();
    let warn = !config.diag.ignored.iter().any(|c| c == "4037");
    let find = |n: &str| -> Option<Sec> {
        let Some(&(f, i)) = by_name.get(n) else {
            if warn {
                config.diag.warn(&format!("{name}: no such symbol: {n}"));
            }
            return None;
        };
        section_of(r, chunks, f, i)
    };
    let mut p = Profile::default();
    for line in String::from_utf8_lossy(&data).split('\n').map(str::trim).filter(|s| !s.is_empty() && !s.starts_with('#')) {
        let fields: Vec<&str> = line.split(' ').collect();
        let (Some(w), [from, to, _]) = (fields.get(2).and_then(|w| crate::util::hfsort::parse_weight(w)), &fields[..]) else {
            // lld stops reading at the first bad line; the link fails at its next check.
            config.diag.error(&format!("{name}: parse error"));
            return Ok(p);
        };
        if let Some(a) = find(from) {
            if let Some(b) = find(to) {
                p.add(a, b, w);
            }
        }
    }
    Ok(p)
}

/// lld's `readCallGraphsFromObjectFiles`.
fn read_objects(r: &Resolved, chunks: &HashSet<Sec>) -> Result<Profile> {
    let mut p = Profile::default();
    for (f, file) in r.files.iter().enumerate() {
        let Kind::Obj(obj) = &file.kind else { continue };
        for sec in obj.sections.iter().filter(|s| s.name == ".llvm.call-graph-profile") {
            let mut d = sec.data;
            let take = |d: &mut &[u8], n: usize, what: &str| -> Result<u64> {
                if d.len() < n {
                    return Err(Error::new(format!("{}: Expected {what} integer", file.name)));
                }
                let mut b = [0u8; 8];
                b[..n].copy_from_slice(&d[..n]);
                *d = &d[n..];
                Ok(u64::from_le_bytes(b))
            };
            while !d.is_empty() {
                let from = take(&mut d, 4, "32-bit")? as usize;
                let to = take(&mut d, 4, "32-bit")? as usize;
                let w = take(&mut d, 8, "64-bit")?;
                if let (Some(a), Some(b)) = (section_of(r, chunks, f, from), section_of(r, chunks, f, to)) {
                    p.add(a, b, w);
                }
            }
        }
    }
    Ok(p)
}

/// The `/order`-style priority (lower first) the call graph gives each COMDAT leader's name;
/// empty when nothing is to be ordered.
pub fn order(config: &CoffConfig, r: &Resolved) -> Result<HashMap<String, i64>> {
    if !config.call_graph_profile_sort || config.order_file.is_some() {
        return Ok(HashMap::new());
    }
    let chunks = chunk_sections(r);
    let profile = match &config.call_graph_ordering_file {
        Some(p) => read_file(config, r, &chunks, p)?,
        None => read_objects(r, &chunks)?,
    };
    if profile.edges.is_empty() {
        return Ok(HashMap::new());
    }
    // Nodes in order of first appearance, ICF-folded sections standing for the one kept.
    let repl = |s: Sec| r.icf_folded.get(&s).copied().unwrap_or(s);
    let mut node: HashMap<Sec, usize> = HashMap::new();
    let mut secs: Vec<Sec> = Vec::new();
    let mut edges = Vec::with_capacity(profile.edges.len());
    for &(from, to, w) in &profile.edges {
        let mut id = |s: Sec| {
            *node.entry(repl(s)).or_insert_with(|| {
                secs.push(repl(s));
                secs.len() - 1
            })
        };
        let (a, b) = (id(from), id(to));
        edges.push((a, b, w));
    }
    let sizes: Vec<u64> = secs.iter().map(|&(f, k)| r.obj(f).sections[k as usize].size as u64).collect();
    let mut out = HashMap::new();
    let mut printed = String::new();
    for (pos, &i) in crate::util::hfsort::hfsort(&sizes, &edges).iter().enumerate() {
        let (f, k) = secs[i];
        if let Some(&leader) = r.files[f].leaders.get(&k) {
            let sym = &r.obj(f).symbols[leader as usize];
            out.insert(sym.name.to_string(), i32::MIN as i64 + pos as i64);
            // lld prints external leaders only, though it orders static ones too.
            if sym.is_external() {
                printed.push_str(sym.name);
                printed.push('\n');
            }
        }
    }
    // `/print-symbol-order:`: the COMDAT leaders of the ordered sections, in order.
    if let Some(p) = &config.print_symbol_order {
        if let Err(e) = std::fs::write(p, printed) {
            config.diag.error(&format!("cannot open {}: {}", p.display(), crate::error::io_error(&e)));
        }
    }
    Ok(out)
}
