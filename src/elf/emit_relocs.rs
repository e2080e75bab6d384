//! `--emit-relocs` (`-q`): the output keeps the static relocations, as lld's `copyRelocations`.
//!
//! Tools that rewrite linked programs (BOLT, post-link optimisers, kernels' relocatable images)
//! read them. Each input `SHT_RELA` section whose target section went to the output joins an
//! output section `.rela<target output section>` (`.rela.text` for `.text.*`), after the
//! allocated sections; the relocations of sections `--gc-sections` or ICF removed go with them
//! (and, as in lld, `.eh_frame`'s under `--gc-sections`).
//! Written last, each entry gets the output address of its place (`r_offset`), the output
//! `.symtab` index of its symbol, and its addend. A relocation against a section symbol is
//! rewritten against the output section's section symbol, with the addend adjusted to the
//! same address (merged sections resolve the piece first); one against a section that is not in
//! the output becomes `R_X86_64_NONE`. The symbol table gets one section symbol per output
//! section holding input data, and keeps every local symbol such a relocation names.

use std::collections::{HashMap, HashSet};

use object::elf;
use object::read::elf::{Rela as _, SectionHeader as _};

use crate::elf::layout::model::{Chunk, Layout, OutSec};
use crate::elf::layout::sections::new_osec;
use crate::elf::object::SecKind;
use crate::elf::symtab::{FileId, SymbolId};
use crate::elf::types::LE;

/// Adds the `.rela*` output sections (after `assign_sections`, while `sec_osec` still says
/// which input sections are in the output).
pub fn create(l: &mut Layout) {
    let mut by_target: HashMap<u32, usize> = HashMap::new();
    let r = l.r;
    for (f, o) in r.objects_in_load_order() {
        for (s, sec) in o.sections.iter().enumerate() {
            if sec.sh_type != elf::SHT_RELA || r.discarded[f][s] {
                continue;
            }
            let t = sec.hdr.sh_info(LE) as usize;
            let Some(&os) = l.sec_osec[f].get(t) else { continue };
            if os == u32::MAX || o.sections[t].relocs.is_empty() || o.sections[t].kind == SecKind::Ignored {
                continue;
            }
            // lld's --gc-sections never marks `.eh_frame`'s relocation section live.
            if l.config.gc_sections && o.sections[t].kind == SecKind::EhFrame {
                continue;
            }
            // The writer writes one entry per relocation the object holds for the target.
            if sec.size != o.sections[t].relocs.len() as u64 * 24 {
                continue;
            }
            let idx = *by_target.entry(os).or_insert_with(|| {
                let name = format!(".rela{}", l.osecs[os as usize].name);
                let flags = sec.flags & !((elf::SHF_ALLOC | elf::SHF_GROUP) as u64);
                l.osecs.push(OutSec { entsize: 24, ..new_osec(&name, elf::SHT_RELA, flags, 8) });
                l.osecs.len() - 1
            });
            l.osecs[idx].chunks.push(Chunk::Input(f, s as u32));
            l.sec_osec[f][s] = idx as u32;
        }
    }
}

/// Names each `.rela*` output section after the final name of the section it relocates (a
/// SECTIONS script may place `.eh_frame` in `.foo`: its relocations go to `.rela.foo`). After
/// addresses are assigned.
pub fn finish(l: &mut Layout) {
    if !l.config.emit_relocs {
        return;
    }
    for i in 0..l.osecs.len() {
        if !is_rela_osec(l, &l.osecs[i]) {
            continue;
        }
        let Some(&Chunk::Input(f, s)) = l.osecs[i].chunks.first() else { continue };
        let t = l.obj(f).sections[s as usize].hdr.sh_info(LE) as usize;
        if let Some(&o) = l.sec_osec[f].get(t).filter(|&&o| o != u32::MAX) {
            l.osecs[i].name = format!(".rela{}", l.osecs[o as usize].name);
        }
    }
}

/// Whether output section `os` is one `create` made.
pub fn is_rela_osec(l: &Layout, os: &OutSec) -> bool {
    l.config.emit_relocs && os.sh_type == elf::SHT_RELA && matches!(os.chunks.first(), Some(Chunk::Input(..)))
}

/// For a `.rela*` output section: the section header index of the section it relocates.
pub fn info_of(l: &Layout, os: &OutSec) -> u32 {
    let Some(&Chunk::Input(f, s)) = os.chunks.first() else { return 0 };
    let t = l.obj(f).sections[s as usize].hdr.sh_info(LE) as usize;
    l.sec_osec[f].get(t).filter(|&&o| o != u32::MAX).map_or(0, |&o| l.osecs[o as usize].shndx)
}

/// Output sections that get a section symbol: those holding input data (lld leaves out
/// relocation sections and synthetic ones other than merged data and `.comment`).
pub fn wants_section_symbol(l: &Layout, os: &OutSec) -> bool {
    l.config.emit_relocs && !is_rela_osec(l, os) && symbol_chunk(l, os).is_some()
}

/// The file of output section `os`'s section symbol, as lld's: that of its first input
/// section that relocations may name; `None` (the linker's) when that is merged data or a
/// synthetic section.
pub fn section_symbol_file(l: &Layout, os: &OutSec) -> Option<FileId> {
    symbol_chunk(l, os).flatten()
}

/// The first chunk of `os` that gives it a section symbol: `Some(Some(file))` for an input
/// section (not `.eh_frame`), `Some(None)` for the linker's own data (merged data, `.comment`,
/// and `.interp`, which lld makes an ordinary input section of its own), `None` when there is
/// none.
fn symbol_chunk(l: &Layout, os: &OutSec) -> Option<Option<FileId>> {
    os.chunks.iter().find_map(|c| match *c {
        Chunk::Input(f, s) if l.obj(f).sections[s as usize].kind != SecKind::EhFrame => Some(Some(f)),
        Chunk::Merged(_) | Chunk::Synthetic(crate::elf::layout::model::Synth::Comment | crate::elf::layout::model::Synth::Interp) => Some(None),
        _ => None,
    })
}

/// The output sections (indices into `Layout::osecs`) in the order lld creates them: by
/// their first input section, the files in load order and their sections in index order;
/// those no input section reaches (synthetic ones) after, in output order.
pub fn creation_order(l: &Layout) -> Vec<usize> {
    let mut first = vec![usize::MAX; l.osecs.len()];
    let mut k = 0;
    for (f, _) in l.r.objects_in_load_order() {
        for &x in l.sec_osec.get(f).map(Vec::as_slice).unwrap_or(&[]) {
            if let Some(slot) = first.get_mut(x as usize) {
                if *slot == usize::MAX {
                    *slot = k;
                    k += 1;
                }
            }
        }
    }
    let mut order: Vec<usize> = (0..l.osecs.len()).collect();
    order.sort_by_key(|&i| (first[i], i));
    order
}

/// Local symbols the emitted relocations name: kept in `.symtab` whatever the discard policy.
pub fn referenced_locals(l: &Layout) -> HashSet<(FileId, usize)> {
    let mut out = HashSet::new();
    if !l.config.emit_relocs {
        return out;
    }
    for os in l.osecs.iter().filter(|os| is_rela_osec(l, os)) {
        for c in &os.chunks {
            let Chunk::Input(f, s) = *c else { continue };
            let o = l.obj(f);
            let t = o.sections[s as usize].hdr.sh_info(LE) as usize;
            for rel in o.sections[t].relocs {
                let i = rel.r_sym(LE, false) as usize;
                if i != 0 && i < o.first_global && o.symbols[i].st_type() != elf::STT_SECTION {
                    out.insert((f, i));
                }
            }
        }
    }
    out
}

/// Where symbols landed in `.symtab`.
#[derive(Default)]
pub struct SymIndex {
    pub locals: HashMap<(FileId, usize), u32>,
    pub globals: HashMap<SymbolId, u32>,
    /// Output section index (into `Layout::osecs`) → its section symbol.
    pub sections: HashMap<usize, u32>,
}

/// Writes every `.rela*` output section into `buf` (`offsets`: each output section's file
/// offset).
pub fn write(l: &Layout, index: &SymIndex, offsets: &[u64], buf: &mut [u8]) {
    for (oi, os) in l.osecs.iter().enumerate() {
        if !is_rela_osec(l, os) {
            continue;
        }
        for (c, &coff) in os.chunks.iter().zip(&os.chunk_off) {
            let Chunk::Input(f, s) = *c else { continue };
            let o = l.obj(f);
            let t = o.sections[s as usize].hdr.sh_info(LE);
            let mut at = (offsets[oi] + coff) as usize;
            for rel in o.sections[t as usize].relocs {
                let (off, ty, si, addend) = (rel.r_offset(LE), rel.r_type(LE, false), rel.r_sym(LE, false) as usize, rel.r_addend(LE));
                let r_offset = l.section_addr(f, t, off).unwrap_or(off);
                let (sym, ty, addend) = entry(l, index, f, si, ty, addend);
                let e = &mut buf[at..at + 24];
                e[0..8].copy_from_slice(&r_offset.to_le_bytes());
                e[8..16].copy_from_slice(&(((sym as u64) << 32) | ty as u64).to_le_bytes());
                e[16..24].copy_from_slice(&addend.to_le_bytes());
                at += 24;
            }
        }
    }
}

/// The output (symbol index, type, addend) of a relocation against symbol `si` of file `f`.
fn entry(l: &Layout, index: &SymIndex, f: FileId, si: usize, ty: u32, addend: i64) -> (u32, u32, i64) {
    let o = l.obj(f);
    if si >= o.first_global {
        let sym = l.r.reloc_target(f, si).and_then(|id| index.globals.get(&id)).copied().unwrap_or(0);
        return (sym, ty, addend);
    }
    let s = &o.symbols[si];
    if s.st_type() != elf::STT_SECTION {
        return (index.locals.get(&(f, si)).copied().unwrap_or(0), ty, addend);
    }
    // A section symbol: the output section's, at the same address.
    let sh = o.sym_section(si).map_or(usize::MAX, |x| x as usize);
    let os = l.sec_osec[f].get(sh).copied().unwrap_or(u32::MAX);
    if os == u32::MAX {
        return (0, elf::R_X86_64_NONE, addend);
    }
    let base = l.osecs[os as usize].addr;
    let a = l.addr_with_addend(crate::elf::layout::model::Target::Local(f, si as u32), addend).wrapping_sub(base) as i64;
    (index.sections.get(&(os as usize)).copied().unwrap_or(0), ty, a)
}
