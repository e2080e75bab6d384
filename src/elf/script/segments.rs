//! The program headers of a script layout: lld's createPhdrs over the script's section order
//! (or the script's own `PHDRS`), where the headers go (allocateHeaders), the file offsets of
//! the sections (assignFileOffsets) and the headers' fields (setPhdrs). Split from `place`,
//! which decides the order and the addresses.

use object::elf;

use super::plan::{Extra, Plan};
use crate::elf::layout::model::{align_up, Layout, OutSec, Phdr, Synth};
use crate::error::{Error, Result};

/// The number of program headers the script layout will create (for SIZEOF_HEADERS).
pub(super) fn count_phdrs(l: &Layout, plan: &Plan, relro_on: bool) -> usize {
    if !l.config.script.phdrs.is_empty() {
        return l.config.script.phdrs.len();
    }
    let segs = segments(l, plan, relro_on);
    segs.len()
}

/// A program header and the output sections it covers.
#[derive(Debug, Clone)]
struct Seg {
    p_type: u32,
    flags: u32,
    secs: Vec<usize>,
    /// The first PT_LOAD (holds the headers when they fit).
    headers: bool,
    /// With PHDRS: it maps the program headers but not the ELF header (PHDRS without FILEHDR).
    phdrs_only: bool,
}

fn phdr_flags(os: &OutSec) -> u32 {
    let mut f = elf::PF_R;
    if os.flags & elf::SHF_WRITE as u64 != 0 {
        f |= elf::PF_W;
    }
    if os.flags & elf::SHF_EXECINSTR as u64 != 0 {
        f |= elf::PF_X;
    }
    f
}

fn needs_load(os: &OutSec) -> bool {
    os.flags & elf::SHF_ALLOC as u64 != 0 && !(os.flags & elf::SHF_TLS as u64 != 0 && os.sh_type == elf::SHT_NOBITS) && !os.noload
}

/// lld's RELRO walk in `createPhdrs`: the RELRO sections of the first run (what PT_GNU_RELRO
/// covers), the section that ends the last run, and the RELRO sections after the first run, which no
/// PT_GNU_RELRO can cover (a script can put `.got.plt` between `.dynamic` and `.bss.rel.ro`).
struct RelroRun {
    secs: Vec<usize>,
    end: Option<usize>,
    late: Vec<usize>,
}

fn relro_run(l: &Layout, relro_on: bool) -> RelroRun {
    let mut run = RelroRun { secs: Vec::new(), end: None, late: Vec::new() };
    let mut in_relro = false;
    for (i, o) in l.osecs.iter().enumerate() {
        if !needs_load(o) {
            continue;
        }
        if relro_on && o.relro {
            in_relro = true;
            if run.end.is_none() {
                run.secs.push(i);
            } else {
                run.late.push(i);
            }
        } else if in_relro {
            in_relro = false;
            run.end = Some(i);
        }
    }
    run
}

/// lld's error for each RELRO section after the end of the RELRO run.
pub(crate) fn relro_contiguous(l: &Layout, relro_on: bool) -> Result<()> {
    let late = relro_run(l, relro_on).late;
    if late.is_empty() {
        return Ok(());
    }
    Err(Error::many(late.iter().map(|&i| format!("section: {} is not contiguous with other relro sections", l.osecs[i].name)).collect()))
}

/// lld's `createPhdrs` over the script's section order.
fn segments(l: &Layout, plan: &Plan, relro_on: bool) -> Vec<Seg> {
    let mut v: Vec<Seg> = Vec::new();
    // -N/-n output has no PT_PHDR or PT_INTERP; -N makes every PT_LOAD RWX (lld's computeFlags).
    let paged = !l.config.omagic && !l.config.nmagic;
    let load_flags = |o: &OutSec| if l.config.omagic { elf::PF_R | elf::PF_W | elf::PF_X } else { phdr_flags(o) };
    if paged {
        v.push(Seg { p_type: elf::PT_PHDR, flags: elf::PF_R, secs: vec![], headers: false, phdrs_only: false });
        if let Some(&i) = l.synth_osec.get(&Synth::Interp) {
            v.push(Seg { p_type: elf::PT_INTERP, flags: elf::PF_R, secs: vec![i], headers: false, phdrs_only: false });
        }
    }
    let mut flags = if l.config.omagic { elf::PF_R | elf::PF_W | elf::PF_X } else { elf::PF_R };
    v.push(Seg { p_type: elf::PT_LOAD, flags, secs: vec![], headers: true, phdrs_only: false });
    let mut cur = v.len() - 1;
    let RelroRun { secs: relro_secs, end: relro_end, .. } = relro_run(l, relro_on);
    let region_of = |i: usize| l.osecs[i].script_desc.and_then(|d| plan.descs[d].region.clone());
    let lma_region_of = |i: usize| l.osecs[i].script_desc.and_then(|d| plan.descs[d].lma_region.clone());
    let lma_expr_of = |i: usize| l.osecs[i].script_desc.is_some_and(|d| plan.descs[d].lma.is_some());
    let mut first_of_load: Option<usize> = None;
    for (i, o) in l.osecs.iter().enumerate() {
        if o.flags & elf::SHF_ALLOC as u64 == 0 {
            continue;
        }
        if !needs_load(o) {
            continue;
        }
        let nf = load_flags(o);
        let new = match first_of_load {
            None => nf != flags,
            // A section loaded at its own address (AT) or in another load region (AT>) starts
            // a segment; one in the same load region continues it (lld's sameLMARegion).
            Some(f0) => lma_expr_of(i) || lma_region_of(i) != lma_region_of(f0) || region_of(i) != region_of(f0) || flags != nf || relro_end == Some(i),
        };
        if new {
            v.push(Seg { p_type: elf::PT_LOAD, flags: nf, secs: vec![], headers: false, phdrs_only: false });
            cur = v.len() - 1;
            flags = nf;
            first_of_load = Some(i);
        } else if first_of_load.is_none() {
            first_of_load = Some(i);
        }
        v[cur].secs.push(i);
    }
    let tls: Vec<usize> =
        (0..l.osecs.len()).filter(|&i| l.osecs[i].flags & elf::SHF_TLS as u64 != 0 && l.osecs[i].flags & elf::SHF_ALLOC as u64 != 0).collect();
    if !tls.is_empty() {
        v.push(Seg { p_type: elf::PT_TLS, flags: elf::PF_R, secs: tls, headers: false, phdrs_only: false });
    }
    if let Some(&i) = l.synth_osec.get(&Synth::Dynamic) {
        v.push(Seg { p_type: elf::PT_DYNAMIC, flags: phdr_flags(&l.osecs[i]), secs: vec![i], headers: false, phdrs_only: false });
    }
    if !relro_secs.is_empty() {
        v.push(Seg { p_type: elf::PT_GNU_RELRO, flags: elf::PF_R, secs: relro_secs, headers: false, phdrs_only: false });
    }
    if let Some(&i) = l.synth_osec.get(&Synth::EhFrameHdr) {
        if l.synth_osec.contains_key(&Synth::EhFrame) {
            v.push(Seg { p_type: elf::PT_GNU_EH_FRAME, flags: phdr_flags(&l.osecs[i]), secs: vec![i], headers: false, phdrs_only: false });
        }
    }
    v.push(Seg {
        p_type: elf::PT_GNU_STACK,
        flags: if l.config.z_execstack { elf::PF_R | elf::PF_W | elf::PF_X } else { elf::PF_R | elf::PF_W },
        secs: vec![],
        headers: false,
        phdrs_only: false,
    });
    let mut note: Option<usize> = None;
    for (i, o) in l.osecs.iter().enumerate() {
        if o.sh_type == elf::SHT_NOTE && o.flags & elf::SHF_ALLOC as u64 != 0 {
            let start_new = match note {
                None => true,
                Some(n) => {
                    let last = *v[n].secs.last().unwrap_or(&i);
                    l.osecs[last].align != o.align || lma_expr_of(i)
                }
            };
            if start_new {
                v.push(Seg { p_type: elf::PT_NOTE, flags: elf::PF_R, secs: vec![], headers: false, phdrs_only: false });
                note = Some(v.len() - 1);
            }
            let n = note.unwrap_or(0);
            v[n].secs.push(i);
        } else {
            note = None;
        }
    }
    if let Some(&i) = l.synth_osec.get(&Synth::GnuProperty) {
        v.push(Seg { p_type: elf::PT_GNU_PROPERTY, flags: elf::PF_R, secs: vec![i], headers: false, phdrs_only: false });
    }
    v
}

/// Explicit `PHDRS`: each declared header takes the sections that name it (a section without
/// `:phdr` goes where the previous one went).
fn explicit_segments(l: &Layout, plan: &Plan) -> Result<Vec<Seg>> {
    let decls = &l.config.script.phdrs;
    let mut v: Vec<Seg> = decls
        .iter()
        .map(|d| Seg { p_type: d.p_type, flags: d.flags.unwrap_or(0), secs: vec![], headers: d.filehdr || d.phdrs, phdrs_only: d.phdrs && !d.filehdr })
        .collect();
    // A section that names no header goes where the previous one went; before any names, into
    // the first PT_LOAD (lld's adjustSectionsAfterSorting).
    let mut last: Vec<usize> = decls.iter().position(|d| d.p_type == elf::PT_LOAD).into_iter().collect();
    for (i, o) in l.osecs.iter().enumerate() {
        if o.flags & elf::SHF_ALLOC as u64 == 0 {
            continue;
        }
        let names: Vec<String> = o.script_desc.map(|d| plan.descs[d].phdrs.clone()).unwrap_or_default();
        let idx: Vec<usize> = if names.is_empty() {
            last.clone()
        } else {
            let mut r = Vec::new();
            for n in &names {
                // `:NONE` puts the section in no segment, unless PHDRS declares one by that name.
                if n == "NONE" && !decls.iter().any(|d| d.name == "NONE") {
                    continue;
                }
                match decls.iter().position(|d| &d.name == n) {
                    Some(k) => r.push(k),
                    None => {
                        let pos = o.script_desc.map(|d| plan.descs[d].pos.to_string()).unwrap_or_default();
                        return Err(Error::new(format!("{pos}: program header '{n}' is not listed in PHDRS")));
                    }
                }
            }
            r
        };
        for &k in &idx {
            v[k].secs.push(i);
            if decls[k].flags.is_none() {
                v[k].flags |= phdr_flags(o);
            }
        }
        last = idx;
    }
    for (k, d) in decls.iter().enumerate() {
        if d.flags.is_none() && v[k].flags == 0 {
            v[k].flags = elf::PF_R;
        }
    }
    Ok(v)
}

/// Headers, file offsets and program headers (lld's allocateHeaders, assignFileOffsets,
/// setPhdrs).
pub(super) fn place_segments(l: &mut Layout, plan: &Plan, extra: &Extra, relro_on: bool) -> Result<()> {
    let explicit = !l.config.script.phdrs.is_empty();
    if !explicit {
        relro_contiguous(l, relro_on)?;
    }
    let mut segs = if explicit { explicit_segments(l, plan)? } else { segments(l, plan, relro_on) };
    let nphdr = segs.len();
    let mp = max_page(l.config);
    // Do the headers fit below the lowest allocated section?
    let min = l.osecs.iter().filter(|o| o.flags & elf::SHF_ALLOC as u64 != 0).map(|o| o.addr).min().unwrap_or(u64::MAX);
    let header_size = 64 + 56 * nphdr as u64;
    let explicit_headers = explicit && l.config.script.phdrs.iter().any(|d| d.filehdr || d.phdrs);
    let base = if explicit_headers { 0 } else { min - min % mp };
    // -N/-n do not load the headers unless PHDRS asks for them (lld's allocateHeaders).
    let paged = !l.config.omagic && !l.config.nmagic;
    let headers_loaded = (paged || explicit_headers) && min != u64::MAX && header_size <= min.wrapping_sub(base) && min >= header_size;
    let mut header_addr = 0;
    if headers_loaded {
        header_addr = (min - header_size) / mp * mp;
    } else {
        if explicit_headers {
            return Err(Error::new("could not allocate headers"));
        }
        segs.retain(|s| s.p_type != elf::PT_PHDR);
        for s in segs.iter_mut() {
            s.headers = false;
        }
    }
    // Empty PT_LOADs go (lld's removeEmptyPTLoad).
    if !explicit {
        segs.retain(|s| {
            if s.p_type != elf::PT_LOAD {
                return true;
            }
            if s.headers && headers_loaded {
                return true;
            }
            let (Some(&f), Some(&la)) = (s.secs.first(), s.secs.last()) else { return false };
            l.osecs[la].addr + l.osecs[la].size != l.osecs[f].addr
        });
    }
    // Which PT_LOAD holds each section.
    let mut load_of: Vec<Option<usize>> = vec![None; l.osecs.len()];
    for (si, s) in segs.iter().enumerate() {
        if s.p_type == elf::PT_LOAD {
            for &i in &s.secs {
                if load_of[i].is_none() {
                    load_of[i] = Some(si);
                }
            }
        }
    }
    let header_load = segs.iter().position(|s| s.p_type == elf::PT_LOAD && s.headers && headers_loaded);
    // `header_size` still counts the PT_LOADs removed above: lld sizes the header table before
    // removing them (PT_PHDR covers the room, e_phnum counts the headers written).
    let end_off = file_offsets(l, &segs, &load_of, header_load, header_addr, header_size, mp);
    check_file_offsets(l)?;
    let (ph, tls) = program_headers(l, &segs, extra, headers_loaded, header_addr, header_size, mp);
    l.tls = tls;
    l.phdrs = ph;
    l.image_base = header_addr;
    let file_end = end_off;
    for (idx, os) in (1..).zip(l.osecs.iter_mut()) {
        os.shndx = idx;
    }
    l.file_size = file_end;
    Ok(())
}

/// File offsets of the output sections (lld's computeFileOffset): the first section of a
/// PT_LOAD at its address modulo the page size, the others at their distance from it; the
/// segment holding the headers tracks addresses from offset 0. Under `-z separate-code` (or
/// separate-loadable-segments) the file after the last executable PT_LOAD starts on a new page,
/// so that no other segment maps the page its trap padding fills. Returns the end of the file.
fn file_offsets(l: &mut Layout, segs: &[Seg], load_of: &[Option<usize>], header_load: Option<usize>, header_addr: u64, header_size: u64, mp: u64) -> u64 {
    let first_of = |si: usize, segs: &[Seg]| segs[si].secs.first().copied();
    let last_rx_end = (l.config.z_separate != crate::elf::config::Separate::None)
        .then(|| segs.iter().rfind(|s| s.p_type == elf::PT_LOAD && s.flags & elf::PF_X != 0).and_then(|s| s.secs.last().copied()))
        .flatten();
    let mut off = header_size;
    for i in 0..l.osecs.len() {
        let os = &l.osecs[i];
        let o = if os.flags & elf::SHF_ALLOC as u64 == 0 {
            align_up(off, os.align)
        } else {
            match load_of[i] {
                Some(si) if Some(si) == header_load => {
                    // Offset tracks the address from the headers at offset 0.
                    os.addr.wrapping_sub(header_addr)
                }
                Some(si) if first_of(si, segs) == Some(i) => {
                    // Same offset as address modulo the segment's p_align: the page size, or
                    // its most aligned section's alignment if larger (lld's computeFileOffset).
                    let a = if segs[si].p_type == elf::PT_LOAD { segs[si].secs.iter().map(|&k| l.osecs[k].align).fold(mp, u64::max) } else { mp };
                    let want = os.addr % a;
                    let cur = off % a;
                    if cur <= want {
                        off - cur + want
                    } else {
                        off - cur + a + want
                    }
                }
                _ if os.sh_type == elf::SHT_NOBITS => off,
                None => align_up(off, os.align),
                Some(si) => {
                    let f = first_of(si, segs).unwrap_or(i);
                    l.osecs[f].offset.wrapping_add(os.addr.wrapping_sub(l.osecs[f].addr))
                }
            }
        };
        l.osecs[i].offset = o;
        if l.osecs[i].sh_type != elf::SHT_NOBITS {
            off = o.wrapping_add(l.osecs[i].size);
        } else {
            off = o;
        }
        if last_rx_end == Some(i) {
            off = align_up(off, mp);
        }
    }
    off
}

/// lld's check before writing: no section past any sane file size.
fn check_file_offsets(l: &Layout) -> Result<()> {
    // A script that moves `.` backwards or wraps addresses can put a section past any sane
    // file size (lld checks the same before writing).
    const MAX_FILE: u64 = 1 << 44;
    let mut errs = Vec::new();
    for os in &l.osecs {
        if os.sh_type == elf::SHT_NOBITS {
            continue;
        }
        if os.offset > MAX_FILE || os.offset.checked_add(os.size).is_none_or(|e| e > MAX_FILE) {
            errs.push(format!(
                "unable to place section {} at file offset [0x{:X}, 0x{:X}]; check your linker script for overflows",
                os.name,
                os.offset,
                os.offset.wrapping_add(os.size).wrapping_sub(1)
            ));
        }
    }
    if !errs.is_empty() {
        return Err(Error::many(errs));
    }
    Ok(())
}

/// The program headers, from the segments and the sections' final addresses and offsets;
/// also the TLS segment's (address, size, alignment).
fn program_headers(
    l: &Layout,
    segs: &[Seg],
    extra: &Extra,
    headers_loaded: bool,
    header_addr: u64,
    hdr_end: u64,
    mp: u64,
) -> (Vec<Phdr>, Option<(u64, u64, u64)>) {
    let mut ph = Vec::new();
    let mut tls = None;
    for s in segs {
        let mut p = Phdr { p_type: s.p_type, flags: s.flags, ..Default::default() };
        let first = s.secs.first().copied();
        let last = s.secs.last().copied();
        match s.p_type {
            elf::PT_PHDR => {
                p.offset = 64;
                p.vaddr = header_addr + 64;
                p.filesz = hdr_end - 64;
                p.memsz = p.filesz;
                p.align = 8;
                ph.push(p);
                continue;
            }
            elf::PT_GNU_STACK => {
                p.memsz = l.config.z_stack_size.unwrap_or(0);
                ph.push(p);
                continue;
            }
            _ => {}
        }
        let (start_addr, start_off) = if s.headers && headers_loaded {
            // PHDRS without FILEHDR: the segment starts at the program headers.
            let skip = if s.phdrs_only { 64 } else { 0 };
            (header_addr + skip, skip)
        } else {
            match first {
                Some(f) => (l.osecs[f].addr, l.osecs[f].offset),
                None => (0, 0),
            }
        };
        p.vaddr = start_addr;
        p.offset = start_off;
        if let Some(la) = last {
            let lo = &l.osecs[la];
            p.filesz = lo.offset - start_off + if lo.sh_type != elf::SHT_NOBITS { lo.size } else { 0 };
            p.memsz = lo.addr + lo.size - start_addr;
        } else if s.headers && headers_loaded {
            p.filesz = hdr_end - start_off;
            p.memsz = hdr_end - start_off;
        }
        p.align = match s.p_type {
            // The page size, or the most aligned section's alignment if larger (-n: page 1).
            elf::PT_LOAD => s.secs.iter().map(|&i| l.osecs[i].align).fold(mp, u64::max),
            // An empty PT_TLS (declared in PHDRS) has alignment 0, as lld's.
            elf::PT_TLS if s.secs.is_empty() => 0,
            elf::PT_TLS | elf::PT_NOTE => s.secs.iter().map(|&i| l.osecs[i].align).max().unwrap_or(1),
            elf::PT_DYNAMIC => 8,
            elf::PT_GNU_EH_FRAME => 4,
            elf::PT_INTERP | elf::PT_GNU_RELRO => 1,
            elf::PT_GNU_PROPERTY => 8,
            _ => s.secs.iter().map(|&i| l.osecs[i].align).max().unwrap_or(1),
        };
        // Every header's p_paddr is its first section's load address (lld's setPhdrs), PT_TLS
        // and PT_GNU_RELRO too.
        if let Some(f) = first {
            if let Some(&lma) = extra.lma.get(&f) {
                p.paddr = Some(lma.wrapping_sub(l.osecs[f].addr - start_addr));
            }
        }
        if s.p_type == elf::PT_TLS {
            tls = Some((p.vaddr, p.memsz, p.align));
        }
        ph.push(p);
    }
    (ph, tls)
}

/// The maximum page size (`-z max-page-size`, lld's default for x86-64 otherwise).
pub(crate) fn max_page(c: &crate::elf::config::Config) -> u64 {
    c.max_page_size.unwrap_or(crate::elf::layout::model::PAGE)
}
