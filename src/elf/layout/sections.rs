//! Output sections: which output section each live input section joins (lld's name rules,
//! SHF_MERGE pieces, `.eh_frame` records), in what order sections and their chunks go
//! (lld's ranks, init priorities, SHF_LINK_ORDER).

#[allow(unused_imports)]
use std::collections::{BTreeMap, HashMap};

use object::elf;
use object::read::elf::Rela as _;

use crate::elf::object::{ObjFile, SecKind};
use crate::elf::symtab::{Def, File, FileId, Resolved};
use crate::elf::types::LE;
use crate::error::{Error, Result};
use crate::util::fasthash::FastMap;

use super::model::*;
use crate::elf::gc::Live;
use rayon::prelude::*;

/// Priority of `.init_array.N` / `.ctors.N` style names for sorting (no suffix = 65536).
pub(super) fn init_priority(name: &[u8]) -> u32 {
    let s = String::from_utf8_lossy(name);
    for p in [".init_array.", ".fini_array.", ".preinit_array."] {
        if let Some(rest) = s.strip_prefix(p) {
            return rest.parse().unwrap_or(65536);
        }
    }
    65536
}

/// lld's rank bits (getSectionRank): one bit per placement decision, so a smaller value goes
/// earlier. Read-only before executable, executable before writable-and-executable, then the
/// writable sections (TLS, other RELRO, the rest); within each, PROGBITS-like before NOBITS;
/// large (SHF_X86_64_LARGE) sections kept apart from the small ones.
mod rank_bits {
    /// x86-64 sections placed apart for the medium/large code models (`object` lacks it).
    pub const SHF_X86_64_LARGE: u64 = 0x1000_0000;
    pub const NOT_ALLOC: u32 = 1 << 26;
    pub const LARGE_EXEC_WRITE: u32 = 1 << 16;
    pub const WRITE: u32 = 1 << 14;
    pub const EXEC_WRITE: u32 = 1 << 13;
    pub const EXEC: u32 = 1 << 12;
    pub const RODATA: u32 = 1 << 11;
    pub const LARGE_EXEC: u32 = 1 << 10;
    pub const LARGE: u32 = 1 << 9;
    pub const NOT_RELRO: u32 = 1 << 8;
    pub const NOT_TLS: u32 = 1 << 7;
    pub const BSS: u32 = 1 << 6;
}

/// Where an output section goes without SECTIONS: lld's rank (sections given an address by
/// `--section-start` are ordered before all of these by the caller).
pub(super) fn rank(os: &OutSec, relro_enabled: bool) -> u32 {
    use rank_bits::*;
    if !flag(os.flags, elf::SHF_ALLOC) {
        return NOT_ALLOC;
    }
    let w = flag(os.flags, elf::SHF_WRITE);
    let x = flag(os.flags, elf::SHF_EXECINSTR);
    let large = os.flags & SHF_X86_64_LARGE != 0;
    let mut rank = 0;
    if !w && !x {
        if !large {
            rank |= LARGE;
        }
        rank |= if os.name == ".interp" {
            1
        } else if os.sh_type == elf::SHT_NOTE {
            2
        } else if os.sh_type != elf::SHT_PROGBITS {
            // .dynsym, .dynstr, .rela.dyn and the like, away from .text.
            3
        } else {
            RODATA
        };
    } else if x {
        rank |= match (large, w) {
            (true, true) => LARGE_EXEC_WRITE,
            (true, false) => LARGE_EXEC,
            (false, true) => EXEC_WRITE,
            (false, false) => EXEC,
        };
    } else {
        rank |= WRITE;
        if !flag(os.flags, elf::SHF_TLS) {
            rank |= NOT_TLS;
        }
        if !(os.relro && relro_enabled) {
            rank |= NOT_RELRO;
        }
        if large {
            rank |= LARGE;
        }
    }
    if os.sh_type == elf::SHT_NOBITS {
        rank |= BSS;
    }
    rank
}

pub(crate) fn is_relro_name(name: &str, flags: u64, sh_type: u32) -> bool {
    if !flag(flags, elf::SHF_WRITE) {
        return false;
    }
    if flag(flags, elf::SHF_TLS) {
        return true;
    }
    matches!(sh_type, elf::SHT_INIT_ARRAY | elf::SHT_FINI_ARRAY | elf::SHT_PREINIT_ARRAY)
        || matches!(
            name,
            ".data.rel.ro"
                | ".bss.rel.ro"
                | ".ctors"
                | ".dtors"
                | ".jcr"
                | ".dynamic"
                | ".got"
                | ".init_array"
                | ".fini_array"
                | ".preinit_array"
                | ".relro_padding"
        )
        || name.starts_with(".data.rel.ro.")
}

pub(crate) fn new_osec(name: &str, sh_type: u32, flags: u64, align: u64) -> OutSec {
    OutSec {
        name: name.to_string(),
        sh_type,
        flags,
        align,
        entsize: 0,
        chunks: Vec::new(),
        chunk_off: Vec::new(),
        size: 0,
        addr: 0,
        offset: 0,
        relro: false,
        shndx: 0,
        script_desc: None,
        noload: false,
    }
}

/// The output section type of an input section: init/fini arrays by type or by name (a
/// `.init_array.N` PROGBITS section is an init array), as lld.
fn output_type(ty: u32, oname: &[u8]) -> u32 {
    if !matches!(ty, elf::SHT_INIT_ARRAY | elf::SHT_FINI_ARRAY | elf::SHT_PREINIT_ARRAY) && oname != b".init_array" && oname != b".fini_array" {
        return ty;
    }
    if oname.starts_with(b".fini_array") {
        elf::SHT_FINI_ARRAY
    } else if oname.starts_with(b".preinit_array") {
        elf::SHT_PREINIT_ARRAY
    } else if oname.starts_with(b".init_array") {
        elf::SHT_INIT_ARRAY
    } else {
        ty
    }
}

/// The one `.eh_frame` output section: records split, FDEs of dead functions dropped, CIEs
/// deduplicated (`build_eh_frame`); every input `.eh_frame` maps to it.
fn add_eh_frame(l: &mut Layout, osecs: &mut Vec<OutSec>, eh_inputs: &[(FileId, u32)], live: &Live) -> Result<()> {
    build_eh_frame(l, eh_inputs, live)?;
    // Aligned as its most aligned input (8 from compilers; lld's EhFrameSection starts at 1).
    let align = eh_inputs.iter().map(|&(f, s)| l.obj(f).sections[s as usize].align).max().unwrap_or(1);
    let mut os = new_osec(".eh_frame", elf::SHT_PROGBITS, elf::SHF_ALLOC as u64, align);
    os.chunks.push(Chunk::Synthetic(Synth::EhFrame));
    osecs.push(os);
    let idx = osecs.len() - 1;
    l.synth_osec.insert(Synth::EhFrame, idx);
    for &(f, s) in eh_inputs {
        l.sec_osec[f][s as usize] = idx as u32;
    }
    Ok(())
}

/// lld's `commitSection` checks for an input joining an output section that already has
/// inputs: the TLS flag must agree, and different types must both be PROGBITS-like.
fn output_conflict(o: &ObjFile, sec: &crate::elf::object::InputSection, os: &OutSec, ty: u32) -> Option<String> {
    let lossy = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let tls = elf::SHF_TLS as u64;
    if (os.flags & tls) != (sec.flags & tls) {
        return Some(format!(
            "incompatible section flags for {}\n>>> {}:({}): 0x{:x}\n>>> output section {}: 0x{:x}",
            os.name,
            o.name(),
            lossy(sec.name),
            sec.flags,
            os.name,
            os.flags
        ));
    }
    let (rt, pl) = (crate::elf::types::type_name, crate::elf::types::progbits_like);
    if os.sh_type != ty && !(pl(os.sh_type) && pl(ty)) {
        return Some(format!(
            "section type mismatch for {}\n>>> {}:({}): {}\n>>> output section {}: {}",
            lossy(sec.name),
            o.name(),
            lossy(sec.name),
            rt(ty),
            os.name,
            rt(os.sh_type)
        ));
    }
    None
}

pub(super) fn assign_sections(l: &mut Layout, live: &Live, merge_refs: Option<&crate::util::fasthash::FastMap<(FileId, u32), Vec<u64>>>) -> Result<()> {
    let r = l.r;
    // Output section by (name, script description): looked up for every live input section
    // (10^5 and more in a large debug link), so a fast hash, borrowed names and a one-entry
    // cache for runs of inputs that go to the same output section.
    let mut by_key: FastMap<(&[u8], u32, u64), usize> = FastMap::default();
    let mut last_key: Option<((&[u8], u32, u64), usize)> = None;
    let mut osecs: Vec<OutSec> = Vec::new();
    l.sec_osec = live.iter().map(|v| vec![u32::MAX; v.len()]).collect();
    l.sec_off = live.iter().map(|v| vec![0; v.len()]).collect();
    let mut merge_key: FastMap<(usize, u64, u64, u64), usize> = FastMap::default();
    let mut merged_inputs: Vec<Vec<(FileId, u32)>> = Vec::new();
    let mut eh_inputs: Vec<(FileId, u32)> = Vec::new();
    // Output sections that have received an input section (for sh_entsize, see below).
    let mut has_input: Vec<bool> = Vec::new();
    let mut errors: Vec<String> = Vec::new();
    // Each live section's default output name, per file in parallel: the names are spread over
    // every input's section name table, and a large link has 10^5 and more sections.
    let keep_prefix = l.config.z_keep_text_section_prefix;
    let default_names: Vec<Vec<&'static [u8]>> = r
        .files
        .par_iter()
        .enumerate()
        .map(|(f, file)| match file {
            File::Obj(o) if !l.config.relocatable && r.loaded[f] => {
                o.sections.iter().enumerate().map(|(s, sec)| if live[f][s] { output_name(sec.name, keep_prefix) } else { &[][..] }).collect()
            }
            _ => Vec::new(),
        })
        .collect();
    for (f, o) in r.objects_in_load_order() {
        for (s, sec) in o.sections.iter().enumerate() {
            if !live[f][s] {
                continue;
            }
            if sec.kind == SecKind::EhFrame {
                // `/DISCARD/ : { *(.eh_frame) }` drops the records (and their relocations).
                if !l.script_plan.as_ref().is_some_and(|p| p.discard.contains(&(f, s as u32))) {
                    eh_inputs.push((f, s as u32));
                }
                continue;
            }
            // --strip-debug / -S (and --strip-all / -s) drop debug information, as lld does.
            if (l.config.strip_debug || l.config.strip_all)
                && sec.flags & elf::SHF_ALLOC as u64 == 0
                && (sec.name.starts_with(b".debug") || sec.name.starts_with(b".zdebug"))
            {
                continue;
            }
            // With a SECTIONS command an orphan keeps its own name (lld's getOutputSectionName:
            // the prefix grouping emulates GNU ld's internal script, which SECTIONS replaces);
            // it joins a description of that name, as do INSERT blocks without SECTIONS, whose
            // orphans keep the default names.
            let mut oname = if l.config.relocatable || l.config.script.has_sections { sec.name } else { default_names[f][s] };
            let mut script_desc = None;
            if let Some(plan) = l.script_plan.as_ref().or(l.insert_plan.as_ref().map(|i| &i.plan)) {
                if plan.discard.contains(&(f, s as u32)) {
                    continue;
                }
                script_desc = match plan.matches.get(&(f, s as u32)) {
                    Some(m) => Some(m.desc),
                    None => plan.desc_by_name(&String::from_utf8_lossy(oname)),
                };
                if let Some(d) = script_desc {
                    oname = plan.descs[d].name.as_bytes();
                }
            }
            // One output section per name, as lld: same-named inputs with other flags or
            // another PROGBITS-like type join it (union of flags, type PROGBITS); a TLS
            // mismatch or another type is lld's error (`output_conflict`).
            let ty = output_type(sec.sh_type, oname);
            let key = match script_desc {
                Some(d) => (oname, u32::MAX - d as u32, u64::MAX),
                None => (oname, 0, 0),
            };
            let idx = match last_key {
                Some((k, i)) if k == key => i,
                _ => {
                    let i = *by_key.entry(key).or_insert_with(|| {
                        let name = String::from_utf8_lossy(oname).into_owned();
                        let mut os = new_osec(&name, ty, 0, 1);
                        os.relro = is_relro_name(&name, sec.flags, ty);
                        os.script_desc = script_desc;
                        osecs.push(os);
                        has_input.push(false);
                        osecs.len() - 1
                    });
                    last_key = Some((key, i));
                    i
                }
            };
            join_output(o, sec, &mut osecs[idx], ty, &mut has_input[idx], &mut errors);
            l.sec_osec[f][s] = idx as u32;
            if sec.kind == SecKind::Merge {
                let ent = sec.hdr.sh_entsize.get(LE);
                let strings = flag(sec.flags, elf::SHF_STRINGS);
                // lld's grouping: same flags and entry size, and for strings the same
                // alignment (constants of different alignments share the largest).
                let key_flags = sec.flags & !(elf::SHF_GROUP as u64);
                let mk = (idx, ent, key_flags, if strings { sec.align } else { 0 });
                let m = *merge_key.entry(mk).or_insert_with(|| {
                    merged_inputs.push(Vec::new());
                    osecs[idx].chunks.push(Chunk::Merged(merged_inputs.len() - 1));
                    merged_inputs.len() - 1
                });
                merged_inputs[m].push((f, s as u32));
                l.sec_off[f][s] = m as u64;
            } else {
                osecs[idx].chunks.push(Chunk::Input(f, s as u32));
            }
        }
    }
    if !errors.is_empty() {
        return Err(Error::many(errors));
    }
    // RELRO by the output section's flags, which may have grown with later inputs.
    for os in osecs.iter_mut() {
        os.relro = is_relro_name(&os.name, os.flags, os.sh_type);
    }
    l.laps.lap("Assign sections");
    // Deduplicate merge pieces, deterministically in input order.
    let tail = l.config.opt_level >= 2;
    for inputs in merged_inputs {
        l.merged.push(crate::elf::merge::merge(r, &inputs, merge_refs, tail)?);
    }
    l.laps.lap("Merge sections");
    // .eh_frame: split records, drop FDEs of dead functions, deduplicate CIEs.
    if !eh_inputs.is_empty() && !l.config.relocatable {
        add_eh_frame(l, &mut osecs, &eh_inputs, live)?;
        l.laps.lap("Build .eh_frame");
    }
    if l.script_plan.is_none() {
        sort_init_arrays(r, &mut osecs);
    }
    l.osecs = osecs;
    Ok(())
}

/// Input section `sec` of `o` joins output section `os` (`has_input`: whether one did before):
/// one output section per name, as lld: same-named inputs with other flags or another
/// PROGBITS-like type join it (union of flags, type PROGBITS); a TLS mismatch or another type
/// is lld's error (`output_conflict`).
fn join_output(o: &ObjFile, sec: &crate::elf::object::InputSection, os: &mut OutSec, ty: u32, has_input: &mut bool, errors: &mut Vec<String>) {
    if *has_input {
        if let Some(e) = output_conflict(o, sec, os, ty) {
            errors.push(e);
        }
    }
    if *has_input && os.sh_type != ty {
        os.sh_type = elf::SHT_PROGBITS;
    }
    // Output flags are the union of the inputs' (lld keeps SHF_MERGE/STRINGS/GNU_RETAIN
    // too), minus the ones that only describe an input section.
    os.flags |= sec.flags & !(elf::SHF_GROUP as u64 | elf::SHF_INFO_LINK as u64);
    // sh_entsize is the inputs' entry size when they all agree, else 0 (lld's
    // commitSection): merged strings keep 1, merged 8-byte constants 8.
    let ent = sec.hdr.sh_entsize.get(LE);
    if !std::mem::replace(has_input, true) {
        os.entsize = ent;
    } else if os.entsize != ent {
        os.entsize = 0;
    }
    if !flag(sec.flags, elf::SHF_ALLOC) && flag(sec.flags, elf::SHF_MERGE) && flag(sec.flags, elf::SHF_STRINGS) {
        // .comment: keep merge flags so readers see strings.
        os.flags |= (elf::SHF_MERGE | elf::SHF_STRINGS) as u64;
        os.entsize = 1;
    }
    os.align = os.align.max(sec.align);
}

/// Init/fini array inputs sorted by priority (stable: same priority keeps input order), without
/// a SECTIONS script (which orders them itself, SORT_BY_INIT_PRIORITY, as in lld).
fn sort_init_arrays(r: &Resolved, osecs: &mut [OutSec]) {
    for os in osecs.iter_mut() {
        if matches!(os.sh_type, elf::SHT_INIT_ARRAY | elf::SHT_FINI_ARRAY | elf::SHT_PREINIT_ARRAY) {
            let mut chunks = std::mem::take(&mut os.chunks);
            chunks.sort_by_key(|c| match c {
                Chunk::Input(f, s) => init_priority(r.obj(*f).sections[*s as usize].name),
                _ => 65536,
            });
            os.chunks = chunks;
        }
    }
}

/// Input sections the symbol ordering file or the call graph profile orders go first in their output section, in that
/// order; the others follow in input order (lld's `sortISDBySectionOrder`; x86-64 needs no
/// thunk-aware insertion point).
pub(super) fn order_sections(l: &mut Layout) -> Result<()> {
    let order = match &l.config.symbol_ordering_file {
        Some(p) => crate::elf::symorder::section_order(l, p)?,
        None => crate::elf::cgsort::section_order(l)?,
    };
    if order.is_empty() {
        return Ok(());
    }
    // A script's descriptions order their sections again when the layout runs (orphans keep
    // the order given here).
    if l.script_plan.is_some() {
        l.section_priority = order.clone();
    }
    for os in l.osecs.iter_mut() {
        if os.name == ".init" || os.name == ".fini" {
            continue;
        }
        let prio = |c: &Chunk| match c {
            Chunk::Input(f, s) => order.get(&(*f, *s)).copied(),
            _ => None,
        };
        if !os.chunks.iter().any(|c| prio(c).is_some()) {
            continue;
        }
        let (mut ordered, unordered): (Vec<Chunk>, Vec<Chunk>) = os.chunks.iter().partition(|c| prio(c).is_some());
        ordered.sort_by_key(|c| prio(c));
        ordered.extend(unordered);
        os.chunks = ordered;
    }
    Ok(())
}

/// lld's `OffsetGetter`: every relocation of an `.eh_frame` section (but R_X86_64_NONE) must lie
/// inside one of its CIE or FDE records (`recs`, by offset).
fn pieces_hold_relocs(recs: &[crate::elf::eh_frame::Record], relocs: &[crate::elf::types::Rela]) -> Result<()> {
    for rel in relocs {
        if rel.r_type(LE, false) == elf::R_X86_64_NONE {
            continue;
        }
        let off = rel.r_offset(LE);
        let k = recs.partition_point(|r| r.offset <= off);
        let inside = k > 0 && {
            let r = &recs[k - 1];
            !r.is_terminator() && off < r.offset + r.len
        };
        if !inside {
            crate::bail!(".eh_frame: relocation is not in any piece");
        }
    }
    Ok(())
}

/// One `.eh_frame` input section, read for `build_eh_frame`.
struct EhScan {
    /// Its CIEs and the FDEs of live functions, in input order.
    records: Vec<EhItem>,
    /// A relocation outside every record (lld's error, a warning under --noinhibit-exec).
    misplaced_reloc: Option<Error>,
}

enum EhItem {
    Cie { offset: u64, len: u64, data: &'static [u8], personality: Option<Target> },
    Fde { offset: u64, len: u64, cie_offset: u64 },
}

/// Splits `.eh_frame` section `s` of file `f` into records and keeps the FDEs whose function
/// is live.
fn scan_eh_frame(l: &Layout, f: FileId, s: u32, live: &Live) -> Result<EhScan> {
    let r = l.r;
    let o = r.obj(f);
    let sec = &o.sections[s as usize];
    let recs = crate::elf::eh_frame::split(sec.data).map_err(|e| Error::new(e.message(&o.input.name)))?;
    let relocs = sec.relocs;
    let misplaced_reloc = pieces_hold_relocs(&recs, relocs).err();
    // The first relocation inside a record is the CIE's personality or the FDE's initial
    // location (lld's `firstRelocation`). Relocations are sorted by offset in practice: then a
    // binary search finds it, else the first one in the range.
    let sorted = relocs.is_sorted_by_key(|rel| rel.r_offset(LE));
    let first_rel = |off: u64, len: u64| {
        let inside = |rel: &&crate::elf::types::Rela| rel.r_offset(LE) >= off && rel.r_offset(LE) < off + len;
        if sorted {
            relocs.get(relocs.partition_point(|rel| rel.r_offset(LE) < off)).filter(inside)
        } else {
            relocs.iter().find(inside)
        }
    };
    let mut records = Vec::with_capacity(recs.len());
    for rec in &recs {
        if rec.is_terminator() {
            continue;
        }
        if rec.is_cie {
            let data: &'static [u8] = &sec.data[rec.offset as usize..(rec.offset + rec.len) as usize];
            let personality = first_rel(rec.offset, rec.len).map(|rel| l.target_of(f, rel.r_sym(LE, false) as usize));
            records.push(EhItem::Cie { offset: rec.offset, len: rec.len, data, personality });
            continue;
        }
        let Some(rel) = first_rel(rec.offset, rec.len) else { continue };
        let si = rel.r_sym(LE, false) as usize;
        let (tf, ts) = match r.reloc_target(f, si) {
            Some(id) => match r.symbols[id].def {
                Def::Defined(tf, ti) => (tf, r.obj(tf).shndx(ti) as usize),
                _ => continue,
            },
            None => (f, o.shndx(si) as usize),
        };
        if !live.get(tf).and_then(|v| v.get(ts)).copied().unwrap_or(false) {
            continue;
        }
        records.push(EhItem::Fde { offset: rec.offset, len: rec.len, cie_offset: rec.cie_offset });
    }
    Ok(EhScan { records, misplaced_reloc })
}

/// lld's `EhFrameSection`: every live FDE (one whose function's section is live) is kept, and
/// CIEs are deduplicated across all inputs by their bytes and personality routine. The output
/// is each distinct CIE, in order of first appearance, followed by the FDEs that use it, in
/// input order.
pub(super) fn build_eh_frame(l: &mut Layout, eh_inputs: &[(FileId, u32)], live: &Live) -> Result<()> {
    let r = l.r;
    // Each input section on its own, in parallel: its records, CIEs with their personality
    // routine, and the FDEs of live functions; then, in input order, CIEs are deduplicated and
    // FDEs attached to them.
    let lr = &*l;
    let scanned: Vec<Result<EhScan>> = eh_inputs.par_iter().map(|&(f, s)| scan_eh_frame(lr, f, s, live)).collect();
    // Per distinct CIE: (file, section, input offset of its first copy), then its FDEs.
    let mut cies: Vec<((FileId, u32, u64, u64), Vec<(FileId, u32, u64, u64)>)> = Vec::new();
    let mut cie_key: HashMap<(&'static [u8], Option<Target>), usize> = HashMap::new();
    for (&(f, s), scan) in eh_inputs.iter().zip(scanned) {
        let scan = scan?;
        if let Some(e) = scan.misplaced_reloc {
            // lld's `Err`: a warning under --noinhibit-exec (the relocation is not applied).
            if !l.config.noinhibit_exec {
                return Err(e);
            }
            l.config.diag.warn(&e.to_string());
        }
        // Input offset of a CIE → its index in `cies`, for this section.
        let mut local: HashMap<u64, usize> = HashMap::new();
        for rec in scan.records {
            match rec {
                EhItem::Cie { offset, len, data, personality } => {
                    let idx = *cie_key.entry((data, personality)).or_insert_with(|| {
                        cies.push(((f, s, offset, len), Vec::new()));
                        cies.len() - 1
                    });
                    local.insert(offset, idx);
                }
                EhItem::Fde { offset, len, cie_offset } => match local.get(&cie_offset) {
                    Some(&c) => cies[c].1.push((f, s, offset, len)),
                    None => crate::bail!("{}:(.eh_frame+0x{:x}): invalid CIE reference", r.obj(f).input.name, offset + 4),
                },
            }
        }
    }
    let mut out = 0u64;
    for ((cf, cs, coff, clen), fdes) in cies {
        // lld reads the FDE encoding of every (distinct) CIE to build .eh_frame_hdr, FDEs or
        // not, and refuses one it cannot read.
        if l.config.eh_frame_hdr {
            let o = r.obj(cf);
            let rec = &o.sections[cs as usize].data[coff as usize..(coff + clen) as usize];
            if let Err(mut e) = crate::elf::eh_frame::fde_encoding(rec) {
                e.offset += coff;
                return Err(Error::new(e.message(&o.input.name)));
            }
        }
        // A CIE no live FDE uses stays (lld keeps every CIE of a live `.eh_frame`).
        let cie_out = out;
        l.eh_records.push(EhRecord { file: cf, sec: cs, in_off: coff, len: clen, out_off: out, is_cie: true, cie_out_off: 0 });
        out += clen;
        for (f, s, off, len) in fdes {
            l.eh_records.push(EhRecord { file: f, sec: s, in_off: off, len, out_off: out, is_cie: false, cie_out_off: cie_out });
            out += len;
        }
    }
    // Per input section, its records by input offset (a CIE copy that was deduplicated away
    // has none: addresses into it resolve to the section's first kept record).
    let mut index: crate::util::fasthash::FastMap<(FileId, u32), Vec<u32>> = Default::default();
    for (i, rec) in l.eh_records.iter().enumerate() {
        index.entry((rec.file, rec.sec)).or_default().push(i as u32);
    }
    for v in index.values_mut() {
        v.sort_by_key(|&i| l.eh_records[i as usize].in_off);
    }
    l.eh_index = index;
    // A zero-length record ends the section: glibc's `classify_object_over_fdes` expects it
    // (lld adds it unconditionally, too).
    l.eh_size = out + 4;
    Ok(())
}

// ------------------------------------------------------------------------------------------------
// Relocation scan
// ------------------------------------------------------------------------------------------------

/// The section an `SHF_LINK_ORDER` input section is linked to (its `sh_link`), if any.
pub fn link_order_dep(l: &Layout, f: FileId, s: u32) -> Option<u32> {
    let sec = &l.obj(f).sections[s as usize];
    if !flag(sec.flags, elf::SHF_LINK_ORDER) {
        return None;
    }
    let to = object::read::elf::SectionHeader::sh_link(sec.hdr, LE);
    (to != 0 && (to as usize) < l.obj(f).sections.len()).then_some(to)
}

/// lld's `resolveShfLinkOrder`: the inputs of an `SHF_LINK_ORDER` output section are ordered as
/// the sections they are linked to are (sanitizer coverage's PC table must follow its counters,
/// for example); those linked to nothing go last. Output sections are already in address
/// order, and chunk positions follow offsets, so positions stand in for addresses.
pub(crate) fn sort_link_order(l: &mut Layout) {
    let targets: Vec<usize> = (0..l.osecs.len()).filter(|&i| flag(l.osecs[i].flags, elf::SHF_LINK_ORDER)).collect();
    if targets.is_empty() {
        return;
    }
    let mut pos: HashMap<(FileId, u32), (usize, usize)> = HashMap::new();
    for (oi, os) in l.osecs.iter().enumerate() {
        for (ci, c) in os.chunks.iter().enumerate() {
            if let Chunk::Input(f, s) = c {
                pos.insert((*f, *s), (oi, ci));
            }
        }
    }
    for oi in targets {
        let mut chunks = std::mem::take(&mut l.osecs[oi].chunks);
        chunks.sort_by_key(|c| match c {
            Chunk::Input(f, s) => match link_order_dep(l, *f, *s).and_then(|d| pos.get(&(*f, d))) {
                Some(&(o, k)) => (0, o, k),
                None => (1, 0, 0),
            },
            _ => (1, 0, 0),
        });
        l.osecs[oi].chunks = chunks;
    }
}
