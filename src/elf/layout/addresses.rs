//! Addresses: segments (lld's PT_LOAD grouping and RELRO), every output section's address and
//! file offset, and each chunk's place within its section.

#[allow(unused_imports)]
use std::collections::{BTreeMap, HashMap};

use object::elf;

use crate::elf::config::Config;
use crate::elf::object::SecKind;
use crate::error::Result;

use super::model::*;
use super::sections::*;
use super::sizes::{chunk_size_align, synth_order};
use crate::elf::config::Separate;

// ------------------------------------------------------------------------------------------------
// Addresses
// ------------------------------------------------------------------------------------------------

/// Output section order, sizes, segments, addresses, file offsets, program headers and
/// section indices, each pass deciding from what the previous ones fixed.
pub(super) fn assign_addresses(l: &mut Layout) -> Result<()> {
    let relro_on = l.config.z_relro;
    sort_sections(l, relro_on)?;
    // INSERT can put other sections among the RELRO ones (lld's check in createPhdrs).
    if l.insert_plan.is_some() {
        crate::elf::script::segments::relro_contiguous(l, relro_on)?;
    }
    size_sections(l);
    let groups = segment_groups(l, relro_on);
    let plan = plan_phdrs(l, relro_on, groups.len());
    let placed = place_segments(l, &groups, 64 + plan.nphdr as u64 * 56, relro_on);
    let off = place_nonalloc(l, placed.end_off);
    if let Some((start, _, _, memsz)) = placed.tls_range {
        l.tls = Some((start, memsz, placed.tls_align));
    }
    let empty_loads = placed.empty_loads;
    let ph = program_headers(l, &plan, placed);
    debug_assert_eq!(ph.len() + empty_loads, plan.nphdr);
    l.phdrs = ph;
    // Section header indices.
    for (idx, os) in (1..).zip(l.osecs.iter_mut()) {
        os.shndx = idx;
    }
    l.file_size = off;
    if !l.config.relocatable {
        check_image_base(l)?;
    }
    Ok(())
}

/// The output section order: stable by rank (`.tbss` after `.tdata`), synthetic sections in
/// lld's order within their rank; placeholders emptied earlier (no name) are dropped, and
/// `synth_osec`/`sec_osec` follow the new indices. Then SHF_LINK_ORDER contents are sorted.
fn sort_sections(l: &mut Layout, relro_on: bool) -> Result<()> {
    let mut order: Vec<usize> = (0..l.osecs.len()).filter(|&i| !l.osecs[i].name.is_empty()).collect();
    order.sort_by_key(|&i| {
        let o = &l.osecs[i];
        let rk = rank(o, relro_on);
        let so = synth_order(o);
        // Sections given an address (`--section-start`, `-Ttext`) come first, by address, as
        // lld ranks them.
        let start = l.config.section_start.get(&o.name).copied();
        (start.is_none(), start.unwrap_or(0), rk, so, i)
    });
    crate::elf::script::insert::apply_moves(l, &mut order)?;
    let osecs: Vec<OutSec> = order.iter().map(|&i| l.osecs[i].clone()).collect();
    // Remap synth_osec and sec_osec indices.
    let mut remap = vec![usize::MAX; l.osecs.len()];
    for (new, &old) in order.iter().enumerate() {
        remap[old] = new;
    }
    for v in l.synth_osec.values_mut() {
        *v = remap[*v];
    }
    for v in l.sec_osec.iter_mut() {
        for x in v.iter_mut() {
            if *x != u32::MAX {
                let n = remap[*x as usize];
                *x = if n == usize::MAX { u32::MAX } else { n as u32 };
            }
        }
    }
    l.osecs = osecs;
    sort_link_order(l);
    Ok(())
}

/// Chunk offsets and section sizes and alignments (synthetic sizes may depend on earlier
/// decisions only); records each input section's offset (`.eh_frame` inputs excepted: the
/// writer rebuilds that section).
fn size_sections(l: &mut Layout) {
    for i in 0..l.osecs.len() {
        let chunks = l.osecs[i].chunks.clone();
        let mut off = 0u64;
        let mut offs = Vec::with_capacity(chunks.len());
        let mut align = l.osecs[i].align;
        for c in &chunks {
            let (size, al) = chunk_size_align(l, *c);
            off = align_up(off, al);
            offs.push(off);
            if let Chunk::Input(f, s) = c {
                if l.obj(*f).sections[*s as usize].kind != SecKind::EhFrame {
                    l.sec_off[*f][*s as usize] = off;
                }
            }
            off += size;
            align = align.max(al);
        }
        l.osecs[i].chunk_off = offs;
        l.osecs[i].size = off;
        l.osecs[i].align = align;
    }
}

/// One PT_NOTE per run of adjacent notes with the same alignment (lld): a reader walks a
/// PT_NOTE with its p_align, so 8-aligned property notes cannot share one with 4-aligned ones.
fn note_runs(l: &Layout) -> Vec<Vec<usize>> {
    let mut runs: Vec<Vec<usize>> = Vec::new();
    let mut prev: Option<(usize, u64)> = None;
    for (i, o) in l.osecs.iter().enumerate() {
        if !(o.sh_type == elf::SHT_NOTE && flag(o.flags, elf::SHF_ALLOC)) {
            continue;
        }
        match (prev, runs.last_mut()) {
            (Some((pi, pa)), Some(run)) if pi + 1 == i && pa == o.align => run.push(i),
            _ => runs.push(vec![i]),
        }
        prev = Some((i, o.align));
    }
    runs
}

/// Which program headers the output has, and how many (their table's size fixes where the
/// sections start).
struct PhdrPlan {
    has_phdr: bool,
    has_interp: bool,
    has_relro: bool,
    has_note: bool,
    has_property: bool,
    nphdr: usize,
}

/// The program headers: PT_PHDR (every executable and shared object, as lld), PT_INTERP,
/// one PT_LOAD per segment group (`nloads`), PT_TLS, PT_DYNAMIC, PT_GNU_RELRO,
/// PT_GNU_EH_FRAME, PT_GNU_STACK, one PT_NOTE per note run, PT_GNU_PROPERTY.
fn plan_phdrs(l: &Layout, relro_on: bool, nloads: usize) -> PhdrPlan {
    // -N/-n output has no PT_PHDR or PT_INTERP (lld).
    let paged = paged(l.config);
    let has_interp = paged && l.synth_osec.contains_key(&Synth::Interp);
    let has_phdr = paged && !l.config.relocatable;
    let has_tls = l.osecs.iter().any(|o| flag(o.flags, elf::SHF_TLS) && flag(o.flags, elf::SHF_ALLOC));
    let has_relro = relro_on && l.osecs.iter().any(|o| o.relro && needs_load(o));
    let mut nphdr = 0;
    if has_phdr {
        nphdr += 1;
    }
    if has_interp {
        nphdr += 1;
    }
    // LOAD count: R, RX, RW(relro), RW.
    nphdr += nloads;
    if has_tls {
        nphdr += 1;
    }
    if l.has_dynamic {
        nphdr += 1;
    }
    if has_relro {
        nphdr += 1;
    }
    if l.synth_osec.contains_key(&Synth::EhFrameHdr) {
        nphdr += 1;
    }
    nphdr += 1; // GNU_STACK
    if l.config.z_wxneeded {
        nphdr += 1;
    }
    let n_note_runs = note_runs(l).len();
    nphdr += n_note_runs;
    let has_note = n_note_runs > 0;
    let has_property = l.synth_osec.contains_key(&Synth::GnuProperty);
    if has_property {
        nphdr += 1;
    }
    PhdrPlan { has_phdr, has_interp, has_relro, has_note, has_property, nphdr }
}

/// What placing the segments decided besides each section's address and offset.
struct Placed {
    loads: Vec<Phdr>,
    /// The TLS template: (start address, offset, file size, memory size), and its alignment.
    tls_range: Option<(u64, u64, u64, u64)>,
    tls_align: u64,
    /// The RELRO region: (start address, offset, file size, memory size).
    relro_range: Option<(u64, u64, u64, u64)>,
    /// Segments that got no PT_LOAD (their header slot stays, as lld's).
    empty_loads: usize,
    /// The file offset after the last allocated byte.
    end_off: u64,
}

/// A segment that would span no memory (an empty `.text`, a part holding only `.tbss`) gets
/// no PT_LOAD, as lld's removeEmptyPTLoad; its sections keep their addresses. The first one
/// also maps the headers. As in lld, the header table keeps room for it (PT_PHDR covers the
/// room, e_phnum counts the headers written), so no address moves.
fn empty_groups(l: &Layout, groups: &[SegGroup]) -> Vec<bool> {
    groups
        .iter()
        .enumerate()
        .map(|(gi, g)| {
            gi > 0
                && g.sections.iter().all(|&i| {
                    let o = &l.osecs[i];
                    let padding = matches!(o.chunks.first(), Some(Chunk::Synthetic(Synth::RelroPadding)));
                    !padding && (o.size == 0 || (o.sh_type == elf::SHT_NOBITS && flag(o.flags, elf::SHF_TLS)))
                })
        })
        .collect()
}

/// Addresses and file offsets of the allocated sections, segment by segment after the
/// headers (`headers_size`): each segment on a new page at the same offset modulo the page
/// size (`-z max-page-size`), the TLS block aligned for its most aligned section, `.tbss`
/// taking no address space outside the template, `.relro_padding` sized to end RELRO on a
/// `-z common-page-size` boundary.
fn place_segments(l: &mut Layout, groups: &[SegGroup], headers_size: u64, relro_on: bool) -> Placed {
    let base = l.image_base;
    let mut off = headers_size;
    let mut addr = base + headers_size;
    let mut loads: Vec<Phdr> = Vec::new();
    let mut tls_range: Option<(u64, u64, u64, u64)> = None; // (start addr, offset, filesz, memsz)
    let mut tls_align = 1;
    let mut relro_range: Option<(u64, u64, u64, u64)> = None;
    let empty_group = empty_groups(l, groups);
    // .tbss-like sections take no address space, but follow each other in the TLS template.
    let mut tbss_cursor: Option<u64> = None;
    // -z max-page-size aligns segments; -z common-page-size ends RELRO (lld's defaults: 4 KiB).
    let max_page = l.config.max_page_size.unwrap_or(PAGE);
    let common_page = l.config.common_page_size.unwrap_or(PAGE).min(max_page);
    let paged = paged(l.config);
    let mut padding_start: Option<u64> = None;
    let last_exec = (l.config.z_separate != Separate::None).then(|| groups.iter().rposition(|g| g.flags & elf::PF_X != 0)).flatten();
    for (gi, g) in groups.iter().enumerate() {
        if gi > 0 || !paged {
            (off, addr) = segment_start(l, groups, gi, (off, addr), padding_start, max_page);
        }
        // The first segment maps the headers from the image base (-N/-n: not loaded).
        let (seg_start_addr, seg_start_off) = if gi == 0 && paged { (base, 0) } else { (addr, off) };
        let mut seg_end_addr = seg_start_addr;
        let mut seg_end_off = seg_start_off;
        // The first section's place: where the PT_LOAD starts (lld's p_vaddr = firstSec->addr).
        let mut first: Option<(u64, u64)> = None;
        let mut seg_align = max_page;
        for &i in &g.sections {
            let os = &l.osecs[i];
            let nobits = os.sh_type == elf::SHT_NOBITS;
            let is_tls = flag(os.flags, elf::SHF_TLS);
            let mut al = os.align;
            if is_tls && tls_range.is_none() {
                // The TLS block starts aligned to the largest TLS alignment.
                let max_tls = l.osecs.iter().filter(|o| flag(o.flags, elf::SHF_TLS)).map(|o| o.align).max().unwrap_or(1);
                al = al.max(max_tls);
            }
            if matches!(l.osecs[i].chunks.first(), Some(Chunk::Synthetic(Synth::RelroPadding))) {
                let end = addr;
                let padded = align_up(end, common_page);
                l.osecs[i].size = padded - end;
            }
            let os = &l.osecs[i];
            let size = os.size;
            if let Some(&a) = l.config.section_start.get(&os.name) {
                addr = a;
            }
            let saved_addr = addr;
            if nobits && is_tls {
                if let Some(c) = tbss_cursor {
                    addr = addr.max(c);
                }
            }
            let a = align_up(addr, al);
            addr = a;
            // Inside a segment the file offset tracks the address, so a PROGBITS section after a
            // NOBITS one (e.g. .got after .bss.rel.ro) still has offset ≡ address (mod page).
            // A NOBITS section after the segment's first keeps the running offset (lld: its
            // offset is not significant), except the first section of PT_TLS.
            let tls_first = is_tls && tls_range.is_none();
            if !(nobits && first.is_some() && !tls_first) {
                off = seg_start_off.wrapping_add(addr.wrapping_sub(seg_start_addr));
            }
            let os = &mut l.osecs[i];
            os.addr = addr;
            os.offset = off;
            first.get_or_insert((addr, off));
            seg_align = seg_align.max(os.align);
            padding_start = matches!(os.chunks.first(), Some(Chunk::Synthetic(Synth::RelroPadding))).then_some(addr);
            if is_tls {
                tls_align = tls_align.max(os.align);
                let e = tls_range.get_or_insert((addr, off, 0, 0));
                if !nobits {
                    e.2 = addr + size - e.0;
                }
                e.3 = addr + size - e.0;
            }
            if os.relro && relro_on && needs_load(os) {
                let e = relro_range.get_or_insert((addr, off, 0, 0));
                e.3 = addr + size - e.0;
                // p_filesz ends with the last section that has file contents (lld: a trailing
                // .relro_padding or .bss.rel.ro is memory only).
                if !nobits {
                    e.2 = addr + size - e.0;
                }
            }
            if nobits && is_tls {
                // .tbss takes no address space outside the TLS template.
                tbss_cursor = Some(addr + size);
                addr = saved_addr;
                off = seg_start_off.wrapping_add(addr.wrapping_sub(seg_start_addr));
                continue;
            }
            addr += size;
            if !nobits {
                off += size;
                seg_end_off = off;
            }
            seg_end_addr = addr;
        }
        // -z separate-code: the file after the last executable segment starts on a new page.
        if Some(gi) == last_exec {
            off = align_up(off, max_page);
        }
        if empty_group[gi] {
            continue;
        }
        let (vaddr, offset) = if gi == 0 && paged {
            // The headers' segment covers them even without sections.
            seg_end_addr = seg_end_addr.max(base + headers_size);
            seg_end_off = seg_end_off.max(headers_size);
            (base, 0)
        } else {
            first.unwrap_or((seg_start_addr, seg_start_off))
        };
        loads.push(Phdr {
            p_type: elf::PT_LOAD,
            flags: g.flags,
            offset,
            vaddr,
            filesz: seg_end_off.max(offset) - offset,
            memsz: seg_end_addr.wrapping_sub(vaddr),
            align: seg_align,
            paddr: None,
        });
    }
    // -z separate-code: a last executable segment is padded to its page's end in the file (the
    // writer fills the padding with traps).
    if let Some(last) = loads.last_mut().filter(|p| p.flags & elf::PF_X != 0 && l.config.z_separate != Separate::None) {
        last.filesz = align_up(last.filesz, max_page);
        last.memsz = last.memsz.max(last.filesz);
    }
    let empty_loads = empty_group.iter().filter(|&&e| e).count();
    Placed { loads, tls_range, tls_align, relro_range, empty_loads, end_off: off }
}

/// Where segment `gi` starts (file offset, address), given where the previous one ended
/// (`at`): a section given an address (`--section-start`, `-T<sec>`) starts it there, at an
/// offset congruent to it modulo the page size (lld's computeFileOffset); otherwise the next
/// page at the same offset modulo the page size (no file padding), or a page of its own under
/// `-z separate-code`.
fn segment_start(l: &Layout, groups: &[SegGroup], gi: usize, at: (u64, u64), padding_start: Option<u64>, max_page: u64) -> (u64, u64) {
    let (off, addr) = at;
    let g = &groups[gi];
    match g.sections.first().and_then(|&i| l.config.section_start.get(&l.osecs[i].name).copied()) {
        Some(a) => (align_to_skew(off, max_page, a), a),
        None if gi > 0 => {
            let addr = if own_page(l.config.z_separate, groups[gi - 1].flags, g.flags) {
                align_up(addr, max_page)
            } else {
                // After `.relro_padding` lld continues from where the padding starts.
                let skew = padding_start.unwrap_or(addr) % max_page;
                align_up(addr, max_page) + skew
            };
            // The segment's alignment is its largest section's if that exceeds a page (lld's
            // p_align), and its first section's offset is congruent to its address modulo it.
            let seg_align = g.sections.iter().map(|&i| l.osecs[i].align).max().unwrap_or(1).max(max_page);
            if seg_align > max_page {
                let first_align = g.sections.first().map_or(1, |&i| l.osecs[i].align);
                let d = align_up(addr, first_align) - addr;
                return (align_to_skew(off, seg_align, addr + d).wrapping_sub(d), addr);
            }
            (align_to_skew(off, max_page, addr), addr)
        }
        None => (off, addr),
    }
}

/// Whether a segment with `flags` after one with `prev` starts on a page of its own, not at
/// the same offset within the next page (lld's fixSectionAlignments under -z separate-code).
fn own_page(sep: Separate, prev: u32, flags: u32) -> bool {
    match sep {
        Separate::None => false,
        Separate::Loadable => true,
        Separate::Code => (prev ^ flags) & elf::PF_X != 0,
    }
}

/// Whether segments are page-aligned and map the headers (not with -N/-n).
pub(super) fn paged(c: &Config) -> bool {
    !c.omagic && !c.nmagic
}

/// The smallest value at least `v` that is congruent to `skew` modulo `align` (lld's alignTo
/// with a skew): where a segment starting at address `skew` goes in the file.
fn align_to_skew(v: u64, align: u64, skew: u64) -> u64 {
    let skew = skew % align;
    let base = v - v % align + skew;
    if base >= v {
        base
    } else {
        base + align
    }
}

/// lld's check without SECTIONS: no allocated section below the image base (a `-Ttext` lower
/// than the default base needs `--image-base`).
pub(super) fn check_image_base(l: &Layout) -> Result<()> {
    let errs: Vec<String> = l
        .osecs
        .iter()
        .filter(|o| flag(o.flags, elf::SHF_ALLOC) && o.addr < l.image_base)
        .map(|o| format!("section '{}' address (0x{:x}) is smaller than image base (0x{:x}); specify --image-base", o.name, o.addr, l.image_base))
        .collect();
    if errs.is_empty() {
        return Ok(());
    }
    Err(crate::error::Error::many(errs))
}

/// Non-allocated sections follow in the file from `off`, at address 0; returns the file's
/// size.
fn place_nonalloc(l: &mut Layout, mut off: u64) -> u64 {
    for os in l.osecs.iter_mut() {
        if flag(os.flags, elf::SHF_ALLOC) {
            continue;
        }
        off = align_up(off, os.align);
        os.offset = off;
        os.addr = 0;
        off += os.size;
    }
    off
}

/// The program header table `plan` announced, from the placed sections and segments.
fn program_headers(l: &Layout, plan: &PhdrPlan, placed: Placed) -> Vec<Phdr> {
    let base = l.image_base;
    let nphdr = plan.nphdr;
    let Placed { loads, tls_range, tls_align, relro_range, .. } = placed;
    let mut ph = Vec::new();
    if plan.has_phdr {
        ph.push(Phdr {
            p_type: elf::PT_PHDR,
            flags: elf::PF_R,
            offset: 64,
            vaddr: base + 64,
            filesz: nphdr as u64 * 56,
            memsz: nphdr as u64 * 56,
            align: 8,
            paddr: None,
        });
    }
    if plan.has_interp {
        let i = l.synth_osec[&Synth::Interp];
        let o = &l.osecs[i];
        ph.push(Phdr { p_type: elf::PT_INTERP, flags: elf::PF_R, offset: o.offset, vaddr: o.addr, filesz: o.size, memsz: o.size, align: 1, paddr: None });
    }
    ph.extend(loads);
    if let Some((start, toff, filesz, memsz)) = tls_range {
        ph.push(Phdr { p_type: elf::PT_TLS, flags: elf::PF_R, offset: toff, vaddr: start, filesz, memsz, align: tls_align, paddr: None });
    }
    if l.has_dynamic {
        let i = l.synth_osec[&Synth::Dynamic];
        let o = &l.osecs[i];
        ph.push(Phdr {
            p_type: elf::PT_DYNAMIC,
            flags: if flag(o.flags, elf::SHF_WRITE) { elf::PF_R | elf::PF_W } else { elf::PF_R },
            offset: o.offset,
            vaddr: o.addr,
            filesz: o.size,
            memsz: o.size,
            align: 8,
            paddr: None,
        });
    }
    if plan.has_relro {
        if let Some((start, roff, filesz, memsz)) = relro_range {
            ph.push(Phdr { p_type: elf::PT_GNU_RELRO, flags: elf::PF_R, offset: roff, vaddr: start, filesz, memsz, align: 1, paddr: None });
        }
    }
    if let Some(&i) = l.synth_osec.get(&Synth::EhFrameHdr) {
        let o = &l.osecs[i];
        ph.push(Phdr { p_type: elf::PT_GNU_EH_FRAME, flags: elf::PF_R, offset: o.offset, vaddr: o.addr, filesz: o.size, memsz: o.size, align: 4, paddr: None });
    }
    ph.push(Phdr {
        p_type: elf::PT_GNU_STACK,
        flags: if l.config.z_execstack { elf::PF_R | elf::PF_W | elf::PF_X } else { elf::PF_R | elf::PF_W },
        offset: 0,
        vaddr: 0,
        filesz: 0,
        memsz: l.config.z_stack_size.unwrap_or(0),
        align: 0,
        paddr: None,
    });
    if l.config.z_wxneeded {
        // OpenBSD's marker for programs that map memory writable and executable.
        ph.push(Phdr { p_type: PT_OPENBSD_WXNEEDED, flags: elf::PF_X, offset: 0, vaddr: 0, filesz: 0, memsz: 0, align: 0, paddr: None });
    }
    if plan.has_note {
        for run in note_runs(l) {
            let first = &l.osecs[run[0]];
            let last = &l.osecs[run[run.len() - 1]];
            ph.push(Phdr {
                p_type: elf::PT_NOTE,
                flags: elf::PF_R,
                offset: first.offset,
                vaddr: first.addr,
                filesz: last.offset + last.size - first.offset,
                memsz: last.addr + last.size - first.addr,
                align: first.align,
                paddr: None,
            });
        }
    }
    if plan.has_property {
        let o = &l.osecs[l.synth_osec[&Synth::GnuProperty]];
        ph.push(Phdr { p_type: elf::PT_GNU_PROPERTY, flags: elf::PF_R, offset: o.offset, vaddr: o.addr, filesz: o.size, memsz: o.size, align: 8, paddr: None });
    }
    ph
}

const PT_OPENBSD_WXNEEDED: u32 = 0x65a3_dbe7;

pub struct SegGroup {
    pub flags: u32,
    pub sections: Vec<usize>,
}

/// Whether a section gets a PT_LOAD (lld's needsPtLoad): `.tbss` takes memory only in PT_TLS.
pub(super) fn needs_load(os: &OutSec) -> bool {
    flag(os.flags, elf::SHF_ALLOC) && !(flag(os.flags, elf::SHF_TLS) && os.sh_type == elf::SHT_NOBITS)
}

/// lld's createPhdrs for the default layout: a new PT_LOAD where the flags change (with
/// `--no-rosegment` read-only data joins the code), where RELRO ends, and for file contents
/// after a NOBITS section (NOBITS may only end a segment). `.tbss` joins the segment it falls
/// in without starting or ending one.
pub(super) fn segment_groups(l: &Layout, relro_on: bool) -> Vec<SegGroup> {
    let mut groups: Vec<SegGroup> = Vec::new();
    // The flags the current segment was opened with, whether it is RELRO, and whether its last
    // loaded section is NOBITS.
    let mut cur: Option<(u32, bool, bool)> = None;
    for (i, os) in l.osecs.iter().enumerate() {
        if !flag(os.flags, elf::SHF_ALLOC) {
            continue;
        }
        if !needs_load(os) {
            match groups.last_mut() {
                Some(g) => g.sections.push(i),
                None => {
                    groups.push(SegGroup { flags: elf::PF_R, sections: vec![i] });
                    cur = Some((elf::PF_R, false, false));
                }
            }
            continue;
        }
        let mut pf = elf::PF_R;
        if flag(os.flags, elf::SHF_WRITE) {
            pf |= elf::PF_W;
        }
        if flag(os.flags, elf::SHF_EXECINSTR) {
            pf |= elf::PF_X;
        }
        if l.config.omagic {
            // -N: one writable, executable segment.
            pf = elf::PF_R | elf::PF_W | elf::PF_X;
        }
        let relro = os.relro && relro_on;
        let nobits = os.sh_type == elf::SHT_NOBITS;
        let joins = cur.is_some_and(|(flags, seg_relro, last_nobits)| {
            let mut incompatible = flags ^ pf;
            if l.config.no_rosegment && pf & elf::PF_W == 0 {
                incompatible &= !elf::PF_X;
            }
            incompatible == 0 && seg_relro == relro && (nobits || !last_nobits)
        });
        match (joins, groups.last_mut()) {
            (true, Some(g)) => {
                g.flags |= pf;
                g.sections.push(i);
                if let Some(c) = cur.as_mut() {
                    c.2 = nobits;
                }
            }
            _ => {
                groups.push(SegGroup { flags: pf, sections: vec![i] });
                cur = Some((pf, relro, nobits));
            }
        }
    }
    if paged(l.config) && (groups.is_empty() || groups[0].flags & elf::PF_W != 0 || (groups[0].flags & elf::PF_X != 0 && !l.config.no_rosegment)) {
        // The first segment maps the ELF and program headers: make it read-only on its own
        // (-N/-n do not load the headers).
        groups.insert(0, SegGroup { flags: elf::PF_R, sections: Vec::new() });
    }
    groups
}

// ------------------------------------------------------------------------------------------------
// Symbol values
// ------------------------------------------------------------------------------------------------
