//! The order in which GCC's plugin is offered the files: GNU ld's, not dtld's own load order.
//!
//! dtld decides *which* archive members join the link by lld's rules (a member joins the moment
//! a reference needs it, depth first). GNU ld reaches the same set in most links, but in another
//! order: it scans an archive's index in passes, loading in each pass, in index (= member)
//! order, every member that defines a symbol undefined at that moment, until a pass loads
//! nothing. The plugin lists the files it claimed in the order it claimed them, and that order
//! reaches GCC (the resolution file, `lto-wrapper`'s arguments): it decides the order of WPA's
//! symbol table and so the LTRANS partitions and the code GCC emits. Claiming in GNU ld's order
//! makes GCC compile for dtld exactly what it compiles for GNU ld (the tests compare the LTRANS
//! objects byte for byte).
//!
//! This module replays GNU ld's scan over the files dtld loaded, to order them only: members dtld
//! loaded that the replay never reaches (say, an archive named before the object that needs it,
//! or a `--start-group` rescan) keep their place at the end of their archive's run. Which files
//! are linked does not change.

use std::collections::HashSet;

use object::elf;
use object::read::elf::Sym as _;

use crate::elf::symtab::{File, FileId, Resolved};
use crate::elf::types::LE;

/// The names a file defines and the names it references without `weak`.
fn symbols(r: &Resolved, f: FileId) -> (Vec<&'static [u8]>, Vec<&'static [u8]>) {
    let (mut defs, mut refs) = (Vec::new(), Vec::new());
    match &r.files[f] {
        File::Obj(o) => {
            for i in o.first_global..o.symbols.len() {
                let s = &o.symbols[i];
                if s.st_shndx(LE) != elf::SHN_UNDEF {
                    defs.push(o.sym_name(i));
                } else if s.st_bind() != elf::STB_WEAK {
                    refs.push(o.sym_name(i));
                }
            }
        }
        File::GccIr(g) => {
            for s in &g.syms {
                if !s.undefined() {
                    defs.push(s.name);
                } else if !s.weak() {
                    refs.push(s.name);
                }
            }
        }
        File::Bitcode(b) => {
            for k in 0..b.syms.len() {
                let s = b.sym(k);
                if !s.undefined() {
                    defs.push(s.name);
                } else if !s.weak() {
                    refs.push(s.name);
                }
            }
        }
        File::Shared(s) => defs.extend(s.syms.iter().filter(|d| d.defined).map(|d| d.name)),
        File::None => {}
    }
    (defs, refs)
}

struct Replay<'r> {
    r: &'r Resolved,
    defined: HashSet<&'static [u8]>,
    undefined: HashSet<&'static [u8]>,
    order: Vec<FileId>,
}

impl Replay<'_> {
    fn add(&mut self, f: FileId) {
        let (defs, refs) = symbols(self.r, f);
        for d in defs {
            self.defined.insert(d);
            self.undefined.remove(d);
        }
        for u in refs {
            if !self.defined.contains(u) {
                self.undefined.insert(u);
            }
        }
        self.order.push(f);
    }

    fn needed(&self, f: FileId) -> bool {
        symbols(self.r, f).0.iter().any(|d| self.undefined.contains(d))
    }
}

/// The files pass 1 loaded (LTO's own objects excluded), in the order GNU ld would have loaded
/// them; `roots` are the names undefined before any file (`-u`, the entry point).
pub fn gnu_ld_order(r: &Resolved, roots: &[&str]) -> Vec<FileId> {
    let undefined = roots.iter().map(|s| &*crate::util::keep::slice(s.as_bytes().to_vec())).collect();
    let mut p = Replay { r, defined: HashSet::new(), undefined, order: Vec::new() };
    let n = r.files.len().min(r.loaded.len());
    let mut i = 0;
    while i < n {
        let input = r.inputs[i];
        if !input.lazy {
            if r.loaded[i] {
                p.add(i);
            }
            i += 1;
            continue;
        }
        // A run of lazy members of one archive.
        let archive = input.archive.as_ref().map(|(a, _)| a.clone());
        let mut j = i;
        while j < n && r.inputs[j].lazy && r.inputs[j].archive.as_ref().map(|(a, _)| a) == archive.as_ref() {
            j += 1;
        }
        let mut pending: Vec<FileId> = (i..j).filter(|&f| r.loaded[f]).collect();
        loop {
            let before = pending.len();
            let mut rest = Vec::with_capacity(pending.len());
            for f in pending {
                if p.needed(f) {
                    p.add(f);
                } else {
                    rest.push(f);
                }
            }
            pending = rest;
            if pending.len() == before {
                break;
            }
        }
        for f in pending {
            p.add(f);
        }
        i = j;
    }
    p.order
}
