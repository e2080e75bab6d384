//! The `-r` output as data: its output sections (`OutSec`) and their members and groups, the
//! merged pieces, the string tables, the synthetic sections and the header slots, and a
//! script description's data commands.
//!
//! Why it is a module of its own: the `-r` writer (`relocatable.rs`) and its parts (`script.rs`,
//! `symtab.rs`, `symtab_order.rs`) all build or read these; kept here, below all of them, the
//! parts do not import the module that drives them.

use std::collections::HashMap;

use object::elf;

use crate::elf::symtab::FileId;

pub(super) const SHF_ALLOC: u64 = elf::SHF_ALLOC as u64;
pub(super) const SHF_EXECINSTR: u64 = elf::SHF_EXECINSTR as u64;
pub(super) const SHF_MERGE: u64 = elf::SHF_MERGE as u64;
pub(super) const SHF_STRINGS: u64 = elf::SHF_STRINGS as u64;
pub(super) const SHF_INFO_LINK: u64 = elf::SHF_INFO_LINK as u64;
pub(super) const SHF_LINK_ORDER: u64 = elf::SHF_LINK_ORDER as u64;
pub(super) const SHF_GROUP: u64 = elf::SHF_GROUP as u64;
pub(super) const SHF_TLS: u64 = elf::SHF_TLS as u64;
pub(super) const GNU_PROPERTY_X86_FEATURE_1_IBT: u32 = 1;
pub(super) const GNU_PROPERTY_X86_FEATURE_1_SHSTK: u32 = 2;
pub(super) const SYM_SIZE: u64 = 24;
pub(super) const RELA_SIZE: u64 = 24;
pub(super) const SHDR_SIZE: u64 = 64;

/// An input section's place in the output: (output section id, offset in it).
pub(super) type Place = Option<(u32, u64)>;

#[derive(Clone, Copy)]
pub(super) struct Member {
    pub(super) file: FileId,
    pub(super) shndx: u32,
    pub(super) off: u64,
}

pub(super) struct Group {
    pub(super) file: FileId,
    /// The group's flag word (GRP_COMDAT or 0) and its member section indices.
    pub(super) flag: u32,
    pub(super) members: Vec<u32>,
    /// The input symbol index (sh_info) of the signature.
    pub(super) sig_sym: usize,
}

pub(super) struct OutSec {
    pub(super) name: &'static [u8],
    pub(super) group: Option<Group>,
    pub(super) sh_type: u32,
    pub(super) flags: u64,
    pub(super) align: u64,
    pub(super) entsize: u64,
    /// Every input is SHF_MERGE with the same entry size and string-ness.
    pub(super) merge_ok: bool,
    pub(super) members: Vec<Member>,
    pub(super) size: u64,
    /// The output section an SHF_LINK_ORDER section links to.
    pub(super) link_dep: Option<usize>,
    /// The output order: the position of the first input (index in load order, section index,
    /// 0), or for SHF_LINK_ORDER sections their linked section's (then 1 + their own index),
    /// as lld's `-r` creates those output sections right after their linked sections'.
    pub(super) first: (usize, u32, u32),
    pub(super) nrelocs: u64,
    pub(super) index: u32,
    pub(super) rela_index: u32,
    pub(super) sym: u32,
    /// Deduplicated pieces of SHF_MERGE inputs: the contents, and for
    /// each input its pieces as (input offset, output offset), sorted.
    pub(super) merged: Option<Merged>,
    /// A script's data commands in this section, and their offsets once placed.
    pub(super) data: Vec<DataCmd>,
    pub(super) data_off: Vec<u64>,
    /// A script's description: the place of its `.rela` section, which lld creates as an
    /// orphan where the first input relocation section of its inputs stands (`first`'s form).
    pub(super) rela_first: Option<(usize, u32, u32)>,
}

pub(super) struct Merged {
    pub(super) data: Vec<u8>,
    pub(super) pieces: HashMap<(FileId, u32), Vec<(u64, u64)>>,
}

/// A section the writer adds itself.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Synth {
    GnuProperty,
    BuildId,
    GnuStack,
    Symtab,
    /// `.symtab_shndx`: symbols' section indices that do not fit `st_shndx` (written when
    /// the output has 65,280 sections or more, as lld does).
    SymtabShndx,
    Shstrtab,
    Strtab,
}

/// One section header of the output, in index order.
#[derive(Clone, Copy)]
pub(super) enum Slot {
    Sec(usize),
    Rela(usize),
    Synth(Synth),
}

/// A string table with deduplicated entries.
#[derive(Default)]
pub(super) struct StrTab {
    pub(super) data: Vec<u8>,
    pub(super) map: HashMap<&'static [u8], u32>,
}

impl StrTab {
    pub(super) fn new() -> StrTab {
        StrTab { data: vec![0], map: HashMap::new() }
    }
    pub(super) fn add(&mut self, s: &'static [u8]) -> u32 {
        if s.is_empty() {
            return 0;
        }
        if let Some(&o) = self.map.get(s) {
            return o;
        }
        let o = self.data.len() as u32;
        self.data.extend_from_slice(s);
        self.data.push(0);
        self.map.insert(s, o);
        o
    }
}

/// An output section with nothing in it yet: no members, no group, not mergeable.
pub(super) fn empty_osec(name: &'static [u8], sh_type: u32, flags: u64, align: u64, first: (usize, u32, u32)) -> OutSec {
    OutSec {
        name,
        group: None,
        sh_type,
        flags,
        align,
        entsize: 0,
        merge_ok: false,
        members: Vec::new(),
        size: 0,
        link_dep: None,
        first,
        nrelocs: 0,
        index: 0,
        rela_index: 0,
        sym: 0,
        merged: None,
        data: Vec::new(),
        data_off: Vec::new(),
        rela_first: None,
    }
}

/// A data command of a description, constant-valued: `key` orders it among the description's
/// inputs (their `order`s: the command index in the top bits), `size` bytes of `value`.
#[derive(Clone, Copy)]
pub(super) struct DataCmd {
    pub(super) key: u64,
    pub(super) size: u8,
    pub(super) value: u64,
}

/// The output sections and which input goes where.
pub(super) struct Sections {
    pub(super) osecs: Vec<OutSec>,
    /// Per object, per input section: its output section and offset (the offset is 0 until
    /// `place_inputs`).
    pub(super) place: Vec<Vec<Place>>,
    /// Per output section: its inputs in order (file, section index).
    pub(super) members_of: Vec<Vec<(FileId, u32)>>,
}

/// Where offset `x` of input section `shndx` of file `f` is in the output: (output section,
/// offset in it), through the piece table when the strings were merged.
pub(super) fn locate(place: &[Vec<Place>], osecs: &[OutSec], f: FileId, shndx: usize, x: u64) -> Option<(u32, u64)> {
    let (os, off) = place.get(f)?.get(shndx).copied().flatten()?;
    match &osecs[os as usize].merged {
        Some(m) => {
            let t = m.pieces.get(&(f, shndx as u32)).map(Vec::as_slice).unwrap_or(&[]);
            Some((os, map_piece(t, x)))
        }
        None => Some((os, off.wrapping_add(x))),
    }
}

/// The output offset of input offset `x` given a piece table; offsets before the first piece
/// (negative addends) or past the last follow the nearest piece, as the bytes around a string
/// move with it.
pub(super) fn map_piece(t: &[(u64, u64)], x: u64) -> u64 {
    let (i, o) = if (x as i64) < 0 || t.is_empty() {
        t.first().copied().unwrap_or((0, 0))
    } else {
        let k = t.partition_point(|&(i, _)| i <= x);
        t[k.saturating_sub(1)]
    };
    o.wrapping_add(x.wrapping_sub(i))
}
