//! The order of the local part of a `-r` output's `.symtab`, which is observable: every
//! SHT_GROUP's sh_info names its signature by index, relocations name symbols by index, and
//! tools (and lld's own tests) read those numbers. ld.lld collects each object's kept locals
//! (in load order), then one STT_SECTION symbol per output section (attributed to the file of
//! the section's first input, or to no file for a merged synthetic section), then sorts the
//! locals stably by file, files in order of first appearance (`sortSymTabSymbols`). So a file's
//! locals come first in its run, its section symbols after them, and files that keep no local
//! follow, in output section order. This module reproduces that order; what a local is and
//! whether it is kept is decided by the writer (`file_locals`).

use std::collections::HashMap;

use object::elf;
use object::read::elf::SectionHeader as _;

use super::model::{OutSec, Sections, SHF_MERGE};
use super::symtab::{file_locals, signature_locals, SymTab};
use crate::elf::config::Config;
use crate::elf::symtab::{FileId, Resolved};
use crate::elf::types::LE;

/// Appends the locals to `syms` (after the null symbol) in lld's order, setting each written
/// output section's `sym`. `order` lists the output sections that get a section symbol, in
/// output order. Returns per object the output index of each local (0 = not written).
pub(super) fn push_locals(
    config: &Config,
    r: &Resolved,
    objs: &[FileId],
    secs: &mut Sections,
    order: &[usize],
    used: &[Vec<bool>],
    syms: &mut SymTab,
) -> Vec<Vec<u32>> {
    let owners: Vec<Option<FileId>> = order.iter().map(|&i| owner(r, &secs.osecs[i])).collect();
    let must = signature_locals(&secs.osecs);
    let mut lidx: Vec<Vec<u32>> = vec![Vec::new(); r.files.len()];
    // Each owner's output sections in output order, and the owners in order of first
    // appearance (linear: an output can have 100,000 sections).
    let mut by_owner: HashMap<Option<FileId>, Vec<usize>> = HashMap::new();
    let mut owner_order: Vec<Option<FileId>> = Vec::new();
    for (&i, &o) in order.iter().zip(&owners) {
        by_owner
            .entry(o)
            .or_insert_with(|| {
                owner_order.push(o);
                Vec::new()
            })
            .push(i);
    }
    let push_sections_of = |file: Option<FileId>, by_owner: &mut HashMap<Option<FileId>, Vec<usize>>, osecs: &mut [OutSec], syms: &mut SymTab| {
        for i in by_owner.remove(&file).unwrap_or_default() {
            let os = &mut osecs[i];
            // A section made only of a script's data commands has no section symbol in lld.
            if os.members.is_empty() && os.group.is_none() && !os.data.is_empty() {
                continue;
            }
            os.sym = syms.push(0, elf::STT_SECTION, 0, os.index, 0, 0);
        }
    };
    for &f in objs {
        let before = syms.count();
        lidx[f] = file_locals(config, r, f, secs, used, &must, syms);
        if syms.count() > before {
            push_sections_of(Some(f), &mut by_owner, &mut secs.osecs, syms);
        }
    }
    for o in owner_order {
        push_sections_of(o, &mut by_owner, &mut secs.osecs, syms);
    }
    lidx
}

/// The file lld attributes an output section's symbol to: its first input's, none for merged
/// SHF_MERGE contents (lld's synthetic merge section stands first there).
fn owner(r: &Resolved, os: &OutSec) -> Option<FileId> {
    match os.members.first() {
        Some(m) => {
            let s = &r.obj(m.file).sections[m.shndx as usize];
            (s.flags & SHF_MERGE == 0 || s.hdr.sh_entsize(LE) == 0).then_some(m.file)
        }
        None => os.group.as_ref().map(|g| g.file),
    }
}
