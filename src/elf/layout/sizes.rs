//! Sizes and orders of the layout's pieces: a chunk's size and alignment (an input section, a
//! merged section, a common or copied symbol's space, a synthetic section), and a synthetic
//! section's place among the sections of its rank.
//!
//! Why it is a module of its own: the default address assignment (`addresses.rs`), the script
//! layout stage (`script::place`), the synthetic sections' creation, the map and the writer all
//! ask these questions; kept here, below them, the address phase and the script stage do not
//! import each other for them.

use object::elf;
use object::read::elf::Sym as _;

use super::model::{flag, Chunk, Layout, OutSec, Synth};
use crate::elf::symtab::{Def, SymbolId};
use crate::elf::types::LE;

pub(crate) fn bss_align(l: &Layout, id: SymbolId) -> u64 {
    match l.r.symbols[id].def {
        // The largest alignment any object gave the common symbol (lld).
        Def::Common(..) => l.r.common_alignment(id),
        Def::Shared(f, k) => {
            // Alignment of the copy (lld's getAlignment): the largest power of two dividing
            // both the DSO address and its section's alignment.
            let dso = l.r.dso(f);
            let sym = dso.syms[k].sym;
            let v = sym.st_value(LE);
            let sec_align = dso.section_align(sym.st_shndx(LE) as usize).unwrap_or(1 << 63).max(1);
            let tz = if v == 0 { 63 } else { v.trailing_zeros() };
            1u64 << tz.min(sec_align.trailing_zeros()).min(63)
        }
        _ => 1,
    }
}

pub(crate) fn bss_size(l: &Layout, id: SymbolId) -> u64 {
    match l.r.symbols[id].def {
        Def::Common(f, i) => l.sym(f, i).st_size(LE),
        Def::Shared(f, k) => l.r.dso(f).syms[k].sym.st_size(LE),
        _ => 0,
    }
}

pub(crate) fn chunk_size_align(l: &Layout, c: Chunk) -> (u64, u64) {
    match c {
        Chunk::Input(f, s) => {
            let sec = &l.obj(f).sections[s as usize];
            (sec.size, sec.align)
        }
        Chunk::Merged(m) => (l.merged[m].size(), l.merged[m].align),
        Chunk::Bss(id) => (bss_size(l, id), bss_align(l, id)),
        Chunk::Synthetic(s) => (crate::elf::synthetic::size(l, s), 1),
    }
}

/// A synthetic section's place among the sections of its rank, in lld's order (500 for the
/// other sections).
pub(crate) fn synth_order(o: &OutSec) -> u32 {
    match o.chunks.first() {
        // `--emit-relocs` sections: lld creates them with the first input relocation section,
        // before the synthetic `.comment`.
        Some(Chunk::Input(..)) if o.sh_type == elf::SHT_RELA && !flag(o.flags, elf::SHF_ALLOC) => 0,
        Some(Chunk::Synthetic(s)) => match s {
            Synth::Interp => 0,
            // lld creates these after the input sections' output sections, so they follow
            // notes such as `.note.ABI-tag`.
            Synth::BuildId => 600,
            Synth::GnuProperty => 601,
            Synth::DynSym => 2,
            Synth::Versym => 3,
            Synth::Verdef => 4,
            Synth::Verneed => 4,
            Synth::GnuHash => 5,
            Synth::SysvHash => 6,
            Synth::DynStr => 7,
            Synth::RelaDyn => 8,
            Synth::RelrDyn => 9,
            Synth::RelaPlt => 10,
            Synth::EhFrameHdr => 1001,
            Synth::EhFrame => 1002,
            Synth::Plt => 1003,
            Synth::Iplt => 1004,
            // A read-only `.dynamic` (-z rodynamic) goes where lld creates it, before `.dynstr`.
            Synth::Dynamic if o.flags & elf::SHF_WRITE as u64 == 0 => 6,
            Synth::Dynamic => 1005,
            Synth::Got => 1006,
            Synth::RelroPadding => 1007,
            // After .dynamic and .got (lld creates it later); only -z norelro puts them in one rank.
            Synth::GotPlt => 1008,
            // In creation order, after the input sections (see `add_comment`).
            Synth::Comment => 500,
            // lld creates it after every other section.
            Synth::GdbIndex => 501,
        },
        _ => 500,
    }
}
