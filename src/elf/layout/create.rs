//! Synthetic sections: which of `.got`, `.plt`, `.dynamic`, `.rela.dyn`, `.gnu.hash`, version
//! sections, notes, `.eh_frame_hdr`, ... a link needs, and which output section each joins.

#[allow(unused_imports)]
use std::collections::{BTreeMap, HashMap};

use dtld_arch::x86_64::{self as arch};
use object::elf;
use object::read::elf::Sym as _;

use crate::elf::symtab::{Def, File, SymbolId};
use crate::elf::types::LE;

use super::model::*;
use super::sizes::bss_align;
use super::{addresses::*, sections::*};

pub(crate) fn add_synth(l: &mut Layout, s: Synth, name: &str, sh_type: u32, flags: u32, align: u64) {
    let mut os = new_osec(name, sh_type, flags as u64, align);
    os.chunks.push(Chunk::Synthetic(s));
    os.relro = is_relro_name(name, flags as u64, sh_type);
    l.osecs.push(os);
    l.synth_osec.insert(s, l.osecs.len() - 1);
}

/// The synthetic sections of the link, in the order they are created (which breaks ties in
/// the section order): the notes and dynamic symbol sections, then the dynamic relocations
/// are counted (so `.rela.dyn` is known to be needed), the relocation, PLT and GOT sections,
/// `.comment`, `.bss` for commons and copies, and `.relro_padding`.
pub(super) fn create_synthetic(l: &mut Layout) {
    add_note_sections(l);
    add_dynamic_symbol_sections(l);
    collect_dynamic_relocs(l);
    add_reloc_plt_got_sections(l);
    add_comment(l);
    place_bss_symbols(l);
    let c = l.config;
    // With a SECTIONS script, lld makes .relro_padding only when the script says where RELRO
    // ends (DATA_SEGMENT_RELRO_END); it goes just before that assignment.
    if c.z_relro
        && ((!c.script.has_sections && c.script.phdrs.is_empty()) || c.script.seen_relro_end())
        && l.osecs.iter().any(|o| o.relro && needs_load(o))
        && !c.relocatable
    {
        add_synth(l, Synth::RelroPadding, ".relro_padding", elf::SHT_NOBITS, elf::SHF_ALLOC | elf::SHF_WRITE, 1);
        let i = l.synth_osec[&Synth::RelroPadding];
        l.osecs[i].relro = true;
    }
}

/// `.interp` (lld's needsInterpSection: any executable given a dynamic linker, even one that
/// links no shared library, as `-nostdlib` with clang's default `-dynamic-linker`), the x86
/// CET `.note.gnu.property` (sets `l.x86_features`) and `.note.gnu.build-id`.
fn add_note_sections(l: &mut Layout) {
    let c = l.config;
    let a = elf::SHF_ALLOC;
    // A PHDRS command without PT_INTERP leaves .interp out (lld's needsInterpSection).
    let script_allows = c.script.phdrs.is_empty() || c.script.phdrs.iter().any(|d| d.p_type == elf::PT_INTERP);
    let interp = !c.shared && !c.relocatable && !c.no_dynamic_linker && c.dynamic_linker.as_deref().is_some_and(|d| !d.is_empty()) && script_allows;
    if interp {
        add_synth(l, Synth::Interp, ".interp", elf::SHT_PROGBITS, a, 1);
    }
    // x86 CET properties: the AND of every object's feature bits (an object without the note
    // has none), plus what -z shstk forces, as lld.
    let mut features = u32::MAX;
    for (f, file) in l.r.files.iter().enumerate() {
        if let File::Obj(o) = file {
            if l.r.loaded[f] {
                features &= crate::elf::object::x86_features(o);
            }
        }
    }
    if features == u32::MAX {
        features = 0;
    }
    if c.z_shstk {
        features |= 2;
    }
    l.x86_features = features & 3;
    if l.x86_features != 0 {
        add_synth(l, Synth::GnuProperty, ".note.gnu.property", elf::SHT_NOTE, a, 8);
    }
    if c.build_id != crate::elf::config::BuildId::None || !c.build_id_hex.is_empty() {
        add_synth(l, Synth::BuildId, ".note.gnu.build-id", elf::SHT_NOTE, a, 4);
    }
}

/// With a dynamic section: `.dynsym`, the version sections the link needs (`.gnu.version`
/// when versions are defined or needed), the hash tables `--hash-style` asks for, `.dynstr`.
fn add_dynamic_symbol_sections(l: &mut Layout) {
    if !l.has_dynamic {
        return;
    }
    let c = l.config;
    let a = elf::SHF_ALLOC;
    add_synth(l, Synth::DynSym, ".dynsym", elf::SHT_DYNSYM, a, 8);
    let verdefs = !l.r.versions.is_empty();
    if !l.verneed.is_empty() || verdefs {
        add_synth(l, Synth::Versym, ".gnu.version", elf::SHT_GNU_VERSYM, a, 2);
    }
    if verdefs {
        add_synth(l, Synth::Verdef, ".gnu.version_d", elf::SHT_GNU_VERDEF, a, 4);
    }
    if !l.verneed.is_empty() {
        add_synth(l, Synth::Verneed, ".gnu.version_r", elf::SHT_GNU_VERNEED, a, 4);
    }
    if c.hash_gnu {
        add_synth(l, Synth::GnuHash, ".gnu.hash", elf::SHT_GNU_HASH, a, 8);
    }
    if c.hash_sysv {
        add_synth(l, Synth::SysvHash, ".hash", elf::SHT_HASH, a, 4);
    }
    add_synth(l, Synth::DynStr, ".dynstr", elf::SHT_STRTAB, a, 1);
}

/// The dynamic relocations, counted now so section sizes are known: IRELATIVE for each IPLT
/// slot (`l.irelatives`), then per GOT slot what the loader must fill, and COPY for each copy
/// relocation (`l.dynrels`), RELATIVE ones first (so DT_RELACOUNT can cover them), as lld
/// sorts them.
fn collect_dynamic_relocs(l: &mut Layout) {
    // IFUNC: IRELATIVE for each IPLT slot.
    for i in 0..l.iplt.len() {
        let t = l.iplt[i];
        l.irelatives.push(DynRel {
            place: Place::GotPltSlot(l.plt.len() as u32 + i as u32),
            r_type: arch::r::IRELATIVE,
            sym: None,
            addend: Addend::AddrOf(t, 0),
        });
    }
    let got = l.got.clone();
    for (slot, &(t, kind)) in got.iter().enumerate() {
        got_slot_reloc(l, slot, t, kind);
    }
    for &id in &l.copies.clone() {
        l.dynrels.push(DynRel { place: Place::Copy(id), r_type: arch::r::COPY, sym: Some(id), addend: Addend::Const(0) });
    }
    let mut rels = std::mem::take(&mut l.dynrels);
    rels.sort_by_key(|d| if d.r_type == arch::r::RELATIVE { 0 } else { 1 });
    l.relative_count = rels.iter().filter(|d| d.r_type == arch::r::RELATIVE).count();
    l.dynrels = rels;
    crate::elf::relr::split(l);
}

/// The dynamic relocation GOT slot `slot` (for `t`, of `kind`) needs, if any: symbolic when
/// `t` is preemptible; otherwise RELATIVE for an address in PIC output (a canonical IFUNC's
/// IPLT entry included), a TP offset in a shared library, a module ID for TLS.
pub(super) fn got_slot_reloc(l: &mut Layout, slot: usize, t: Target, kind: GotKind) {
    let c = l.config;
    let preempt = l.is_preemptible(t);
    let place = Place::GotSlot(slot as u32);
    match kind {
        GotKind::Addr => {
            if preempt {
                let Target::Global(id) = t else { unreachable!() };
                l.dynrels.push(DynRel { place, r_type: arch::r::GLOB_DAT, sym: Some(id), addend: Addend::Const(0) });
            } else if l.is_pic && (!l.is_absolute(t) || l.iplt_index.contains_key(&t)) {
                l.dynrels.push(DynRel { place, r_type: arch::r::RELATIVE, sym: None, addend: Addend::AddrOf(t, 0) });
            }
        }
        GotKind::TpOff => {
            if preempt {
                let Target::Global(id) = t else { unreachable!() };
                l.dynrels.push(DynRel { place, r_type: arch::r::TPOFF64, sym: Some(id), addend: Addend::Const(0) });
            } else if c.shared {
                // The library's TLS block is placed by the loader: TP offset at load time.
                l.dynrels.push(DynRel { place, r_type: arch::r::TPOFF64, sym: None, addend: Addend::TlsOffsetOf(t, 0) });
            }
        }
        GotKind::TlsGdMod => {
            let sym = if preempt {
                if let Target::Global(id) = t {
                    Some(id)
                } else {
                    None
                }
            } else {
                None
            };
            l.dynrels.push(DynRel { place, r_type: arch::r::DTPMOD64, sym, addend: Addend::Const(0) });
        }
        GotKind::TlsGdOff => {
            if preempt {
                let Target::Global(id) = t else { unreachable!() };
                l.dynrels.push(DynRel { place, r_type: arch::r::DTPOFF64, sym: Some(id), addend: Addend::Const(0) });
            }
        }
        GotKind::TlsLdMod => {
            l.dynrels.push(DynRel { place, r_type: arch::r::DTPMOD64, sym: None, addend: Addend::Const(0) });
        }
        GotKind::Zero => {}
        GotKind::TlsDesc => {
            if preempt {
                let Target::Global(id) = t else { unreachable!() };
                l.dynrels.push(DynRel { place, r_type: arch::r::TLSDESC, sym: Some(id), addend: Addend::Const(0) });
            } else {
                l.dynrels.push(DynRel { place, r_type: arch::r::TLSDESC, sym: None, addend: Addend::TlsOffsetOf(t, 0) });
            }
        }
    }
}

/// The sections the relocations and stubs need: `.rela.dyn`, `.rela.plt`, `.eh_frame_hdr`
/// (`--eh-frame-hdr` with an `.eh_frame`), `.plt`, `.iplt`, `.dynamic`, `.got`, and
/// `.got.plt` (for PLT entries or a use of `_GLOBAL_OFFSET_TABLE_`; RELRO with `-z now`).
fn add_reloc_plt_got_sections(l: &mut Layout) {
    let c = l.config;
    let a = elf::SHF_ALLOC;
    let w = elf::SHF_WRITE;
    let x = elf::SHF_EXECINSTR;
    let need_reladyn = !l.dynrels.is_empty() || !l.irelatives.is_empty();
    if need_reladyn {
        let t = if crate::elf::android_rela::enabled(l) { crate::elf::android_rela::SHT_ANDROID_RELA } else { elf::SHT_RELA };
        add_synth(l, Synth::RelaDyn, ".rela.dyn", t, a, 8);
    }
    if !l.relr.is_empty() {
        let t = if c.use_android_relr_tags { crate::elf::android_rela::SHT_ANDROID_RELR } else { elf::SHT_RELR };
        add_synth(l, Synth::RelrDyn, ".relr.dyn", t, a, 8);
    }
    if !l.plt.is_empty() {
        add_synth(l, Synth::RelaPlt, ".rela.plt", elf::SHT_RELA, a | elf::SHF_INFO_LINK, 8);
    }
    if c.eh_frame_hdr && l.synth_osec.contains_key(&Synth::EhFrame) {
        add_synth(l, Synth::EhFrameHdr, ".eh_frame_hdr", elf::SHT_PROGBITS, a, 4);
    }
    if !l.plt.is_empty() {
        add_synth(l, Synth::Plt, ".plt", elf::SHT_PROGBITS, a | x, 16);
    }
    if !l.iplt.is_empty() {
        add_synth(l, Synth::Iplt, ".iplt", elf::SHT_PROGBITS, a | x, 16);
    }
    if l.has_dynamic {
        // -z rodynamic: read-only, for loaders that do not write DT_DEBUG (lld).
        add_synth(l, Synth::Dynamic, ".dynamic", elf::SHT_DYNAMIC, if l.config.z_rodynamic { a } else { a | w }, 8);
    }
    if !l.got.is_empty() {
        add_synth(l, Synth::Got, ".got", elf::SHT_PROGBITS, a | w, 8);
    }
    let got_sym_used = l.r.lookup(b"_GLOBAL_OFFSET_TABLE_").is_some_and(|id| l.r.symbols[id].obj_ref);
    let need_gotplt = !l.plt.is_empty() || !l.iplt.is_empty() || got_sym_used;
    if need_gotplt {
        add_synth(l, Synth::GotPlt, ".got.plt", elf::SHT_PROGBITS, a | w, 8);
        if c.z_now && c.z_relro {
            let i = l.synth_osec[&Synth::GotPlt];
            l.osecs[i].relro = true;
        }
    }
}

/// Our `.comment` (a merged string section), which takes in the inputs' `.comment` sections
/// (their output section is emptied and loses its name).
fn add_comment(l: &mut Layout) {
    add_synth(l, Synth::Comment, ".comment", elf::SHT_PROGBITS, 0, 1);
    {
        let i = l.synth_osec[&Synth::Comment];
        l.osecs[i].flags = (elf::SHF_MERGE | elf::SHF_STRINGS) as u64;
        l.osecs[i].entsize = 1;
    }
    // Merge input .comment sections into ours.
    // The merged section stays where the inputs' `.comment` is (lld adds its own string
    // as the last input of that output section); without one, ours follows every input
    // section, as lld creates it after them.
    if let Some(pos) = l.osecs.iter().position(|o| o.name == ".comment" && !o.chunks.iter().any(|c| matches!(c, Chunk::Synthetic(_)))) {
        let ci = l.synth_osec[&Synth::Comment];
        let ours = std::mem::take(&mut l.osecs[ci].chunks);
        l.osecs[ci].name = String::new();
        let os = &mut l.osecs[pos];
        os.chunks.extend(ours);
        os.flags = (elf::SHF_MERGE | elf::SHF_STRINGS) as u64;
        os.entsize = 1;
        os.sh_type = elf::SHT_PROGBITS;
        l.synth_osec.insert(Synth::Comment, pos);
    }
}

/// The output section `.bss`, created if the inputs have none.
fn bss_section(l: &mut Layout) -> usize {
    match l.osecs.iter().position(|o| o.name == ".bss" && !flag(o.flags, elf::SHF_TLS)) {
        Some(i) => i,
        None => {
            l.osecs.push(new_osec(".bss", elf::SHT_NOBITS, (elf::SHF_ALLOC | elf::SHF_WRITE) as u64, 1));
            l.osecs.len() - 1
        }
    }
}

/// Space for common symbols and copy relocations: `.bss` (created if the inputs have none),
/// `.tbss` for TLS ones, `.bss.rel.ro` (RELRO) for copies of read-only data; each section
/// aligned for its largest symbol. A SECTIONS script's `COMMON` pattern puts a common symbol in
/// its description's output section instead (created as NOBITS if nothing else went there).
fn place_bss_symbols(l: &mut Layout) {
    let a = elf::SHF_ALLOC;
    let w = elf::SHF_WRITE;
    let mut bss_syms: Vec<SymbolId> = Vec::new();
    for (id, s) in l.r.symbols.iter().enumerate() {
        if let Def::Common(..) = s.def {
            bss_syms.push(id);
        }
    }
    bss_syms.extend(l.copies.iter().copied());
    if bss_syms.is_empty() {
        return;
    }
    let script_common = |l: &Layout, id: SymbolId| l.script_plan.as_ref().and_then(|p| p.commons.get(&id)).map(|m| m.desc);
    // `.bss` (made first, so that it precedes the others in ties), unless a script places all.
    let ro_copy = |l: &Layout, id: SymbolId| match l.r.symbols[id].def {
        Def::Shared(f, k) => l.r.dso(f).is_read_only(l.r.dso(f).syms[k].sym.st_value(LE)),
        _ => false,
    };
    let mut bss_idx = None;
    if bss_syms.iter().any(|&id| script_common(l, id).is_none() && !ro_copy(l, id) && !l.is_tls(Target::Global(id))) {
        bss_idx = Some(bss_section(l));
    }
    let mut tbss_idx = None;
    let mut relro_idx = None;
    for id in bss_syms {
        let is_tls = l.is_tls(Target::Global(id));
        let target = if ro_copy(l, id) {
            *relro_idx.get_or_insert_with(|| {
                let mut os = new_osec(".bss.rel.ro", elf::SHT_NOBITS, (a | w) as u64, 1);
                os.relro = true;
                l.osecs.push(os);
                l.osecs.len() - 1
            })
        } else if is_tls {
            *tbss_idx.get_or_insert_with(|| match l.osecs.iter().position(|o| o.name == ".tbss") {
                Some(i) => i,
                None => {
                    let mut os = new_osec(".tbss", elf::SHT_NOBITS, (a | w | elf::SHF_TLS) as u64, 1);
                    os.relro = true;
                    l.osecs.push(os);
                    l.osecs.len() - 1
                }
            })
        } else if let Some(d) = script_common(l, id) {
            match l.osecs.iter().position(|o| o.script_desc == Some(d) && !o.name.is_empty()) {
                Some(i) => i,
                None => {
                    let name = l.script_plan.as_ref().map_or(String::new(), |p| p.descs[d].name.clone());
                    let mut os = new_osec(&name, elf::SHT_NOBITS, (a | w) as u64, 1);
                    os.script_desc = Some(d);
                    l.osecs.push(os);
                    l.osecs.len() - 1
                }
            }
        } else {
            *bss_idx.get_or_insert_with(|| bss_section(l))
        };
        l.osecs[target].chunks.push(Chunk::Bss(id));
        let al = bss_align(l, id);
        l.osecs[target].align = l.osecs[target].align.max(al);
    }
}
