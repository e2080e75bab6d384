//! Writing the output file.
//!
//! Every decision was made by the layout stage; this stage only fills bytes. The output is a
//! pre-sized memory-mapped temporary file next to the final path. Output sections occupy disjoint
//! byte ranges, so they are split into disjoint mutable slices and filled in parallel (copy the
//! input bytes, then apply relocations in place). The build-id is computed last over the finished
//! image, the file replaces the output atomically (src/outfile.rs: a failed link never leaves a
//! partial file, nor touches the previous output), and
//! the result is identical whatever the thread count. The output-file handling (`MappedOutput`)
//! and the little-endian stores are shared with the PE writer (`coff::write`).

use std::fs;

use dtld_arch::x86_64::{self as arch, RelKind};
use object::elf;
use object::read::elf::{Rela as _, Sym as _};
use rayon::prelude::*;

use crate::elf::layout::model::{Chunk, Layout, Synth};
use crate::elf::relocate::{apply_merged_relocs, apply_relocs, out_of_range, relocation_errors, RangeAt};
use crate::elf::symtab::Def;
use crate::elf::synthetic;
use crate::elf::types::LE;
use crate::error::{Error, Result};
use crate::output::{umask, MappedOutput, Wording};

/// SHN_ABS as the symbol table builder takes it (`reserved_shndx`).
use crate::elf::symentry::{global_entry, osec_index, ABS};

struct SymtabOut {
    symtab: Vec<u8>,
    /// The `.symtab_shndx` words, one per symbol (see `SymtabBuilder::xindex`).
    xindex: Vec<u32>,
    strtab: Vec<u8>,
    first_global: u32,
    /// Where symbols landed (for `--emit-relocs`).
    index: crate::elf::emit_relocs::SymIndex,
}

pub fn write_output(l: &Layout, laps: &mut crate::trace::Laps) -> Result<()> {
    let out_path = &l.config.output;
    let with_symtab = !l.config.strip_all;
    // Section names.
    let mut shstrtab = vec![0u8];
    let mut name_off = Vec::new();
    let add_name = |n: &str, t: &mut Vec<u8>| -> u32 {
        let o = t.len() as u32;
        t.extend_from_slice(n.as_bytes());
        t.push(0);
        o
    };
    for os in &l.osecs {
        name_off.push(add_name(&os.name, &mut shstrtab));
    }
    let symtab_name = add_name(".symtab", &mut shstrtab);
    // ELF's extended section numbering: with 65,280 sections or more, symbols of the sections
    // past SHN_LORESERVE keep their index in `.symtab_shndx` (lld's rule: written whenever the
    // output has that many sections).
    let xindex_name = (with_symtab && l.osecs.len() + 1 >= elf::SHN_LORESERVE as usize).then(|| add_name(".symtab_shndx", &mut shstrtab));
    let shstrtab_name = add_name(".shstrtab", &mut shstrtab);
    let strtab_name = add_name(".strtab", &mut shstrtab);
    let place = place_sections(l)?;
    let nsections = 1 + l.osecs.len() + if with_symtab { 3 } else { 1 } + usize::from(xindex_name.is_some());
    let tail = |symtab: Option<&SymtabOut>| Tail::new(place.end, symtab, xindex_name.is_some(), shstrtab.len() as u64, nsections);
    laps.lap("Place sections");
    // The symbol table (it reads only the layout, and most of its work is one thread's) is
    // built while the sections are written, into an image made large enough for it
    // (`symtab_bound`); an image too large for memory is written after the table, as before.
    let concurrent = match with_symtab {
        true => MappedOutput::create_unsized(out_path, tail(None).total + symtab_bound(l), Wording::Elf)?,
        false => None,
    };
    let (mut out, symtab, errors) = match concurrent {
        Some(mut out) => {
            let sections = &mut out.map[..place.end as usize];
            write_traps(l, sections);
            let (symtab, errors) = rayon::join(|| build_symtab(l), || write_sections(l, &place, sections));
            let total = tail(Some(&symtab)).total;
            if total as usize <= out.map.len() {
                out.set_len(total as usize);
            } else {
                // More than the bound: the written sections move to an image of the right size.
                let mut fit = MappedOutput::create(out_path, total, Wording::Elf)?;
                fit.map[..place.end as usize].copy_from_slice(&out.map[..place.end as usize]);
                out = fit;
            }
            (out, Some(symtab), errors?)
        }
        None => {
            let symtab = with_symtab.then(|| build_symtab(l));
            let mut out = MappedOutput::create(out_path, tail(symtab.as_ref()).total, Wording::Elf)?;
            write_traps(l, &mut out.map);
            let errors = write_sections(l, &place, &mut out.map)?;
            (out, symtab, errors)
        }
    };
    relocation_errors(l, errors)?;
    laps.lap("Write sections and symbol table");
    let Tail { symtab_off, xindex_off, shstrtab_off, strtab_off, shoff, .. } = tail(symtab.as_ref());
    let xindex = xindex_name.zip(symtab.as_ref()).map(|(name, s)| (name, s.xindex.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>()));
    let buf: &mut [u8] = out.image();
    write_headers(l, buf, shoff, nsections, nsections - if symtab.is_some() { 2 } else { 1 });
    if let (true, Some(s)) = (l.config.emit_relocs, &symtab) {
        crate::elf::emit_relocs::write(l, &s.index, &place.offset, buf);
    }
    if let Some(s) = &symtab {
        buf[symtab_off as usize..symtab_off as usize + s.symtab.len()].copy_from_slice(&s.symtab);
        buf[strtab_off as usize..strtab_off as usize + s.strtab.len()].copy_from_slice(&s.strtab);
    }
    if let Some((_, d)) = &xindex {
        buf[xindex_off as usize..xindex_off as usize + d.len()].copy_from_slice(d);
    }
    buf[shstrtab_off as usize..shstrtab_off as usize + shstrtab.len()].copy_from_slice(&shstrtab);
    // Section headers.
    let mut sh = shoff as usize + 64;
    let idx_of = |s: Synth| l.synth_osec.get(&s).map(|&i| l.osecs[i].shndx).unwrap_or(0);
    for (i, os) in l.osecs.iter().enumerate() {
        let (link, info, entsize) = match os.chunks.first() {
            Some(Chunk::Synthetic(s)) => match s {
                Synth::DynSym => (idx_of(Synth::DynStr), 1, 24),
                Synth::Versym => (idx_of(Synth::DynSym), 0, 2),
                Synth::Verneed => (idx_of(Synth::DynStr), l.verneed.len() as u32, 0),
                Synth::Verdef => (idx_of(Synth::DynStr), crate::elf::synthetic::verdef_count(l) as u32, 0),
                Synth::GnuHash => (idx_of(Synth::DynSym), 0, 0),
                Synth::SysvHash => (idx_of(Synth::DynSym), 0, 4),
                // Android's packed format is a byte stream (lld: entsize 1).
                Synth::RelaDyn => (idx_of(Synth::DynSym), 0, if crate::elf::android_rela::enabled(l) { 1 } else { 24 }),
                Synth::RelrDyn => (0, 0, 8),
                Synth::RelaPlt => (idx_of(Synth::DynSym), idx_of(Synth::GotPlt), 24),
                Synth::Dynamic => (idx_of(Synth::DynStr), 0, 16),
                Synth::Comment => (0, 0, 1),
                _ => (0, 0, 0),
            },
            // An SHF_LINK_ORDER section links to the output section its first input's linked
            // section went to, as lld.
            // `--emit-relocs`: the symbol table, and the section relocated.
            Some(Chunk::Input(..)) if crate::elf::emit_relocs::is_rela_osec(l, os) => (l.osecs.len() as u32 + 1, crate::elf::emit_relocs::info_of(l, os), 24),
            Some(&Chunk::Input(f, s)) if os.flags & elf::SHF_LINK_ORDER as u64 != 0 => {
                let link = crate::elf::layout::sections::link_order_dep(l, f, s)
                    .and_then(|d| l.sec_osec[f].get(d as usize).copied())
                    .filter(|&o| o != u32::MAX)
                    .map_or(0, |o| l.osecs[o as usize].shndx);
                (link, 0, os.entsize)
            }
            _ => (0, 0, if matches!(os.sh_type, elf::SHT_INIT_ARRAY | elf::SHT_FINI_ARRAY | elf::SHT_PREINIT_ARRAY) { 8 } else { os.entsize }),
        };
        let (flags, align) = match place.compressed[i] {
            Some(_) => (os.flags | elf::SHF_COMPRESSED as u64, 1),
            None => (os.flags, os.align),
        };
        write_shdr(&mut buf[sh..sh + 64], name_off[i], os.sh_type, flags, os.addr, place.offset[i], place.size[i], link, info, align, entsize);
        sh += 64;
    }
    let n = l.osecs.len() as u32;
    if let Some(s) = &symtab {
        let strtab_index = n + 3 + u32::from(xindex.is_some());
        write_shdr(&mut buf[sh..sh + 64], symtab_name, elf::SHT_SYMTAB, 0, 0, symtab_off, s.symtab.len() as u64, strtab_index, s.first_global, 8, 24);
        sh += 64;
        if let Some((name, d)) = &xindex {
            write_shdr(&mut buf[sh..sh + 64], *name, elf::SHT_SYMTAB_SHNDX, 0, 0, xindex_off, d.len() as u64, n + 1, 0, 4, 4);
            sh += 64;
        }
        write_shdr(&mut buf[sh..sh + 64], shstrtab_name, elf::SHT_STRTAB, 0, 0, shstrtab_off, shstrtab.len() as u64, 0, 0, 1, 0);
        sh += 64;
        write_shdr(&mut buf[sh..sh + 64], strtab_name, elf::SHT_STRTAB, 0, 0, strtab_off, s.strtab.len() as u64, 0, 0, 1, 0);
    } else {
        write_shdr(&mut buf[sh..sh + 64], shstrtab_name, elf::SHT_STRTAB, 0, 0, shstrtab_off, shstrtab.len() as u64, 0, 0, 1, 0);
    }
    laps.lap("Write headers and tables");
    // Build ID over the finished image.
    if let Some(&i) = l.synth_osec.get(&Synth::BuildId) {
        let off = l.osecs[i].offset as usize + 16;
        let id = compute_build_id(l, buf);
        buf[off..off + id.len()].copy_from_slice(&id);
        laps.lap("Compute build ID");
    }
    let mode = if l.config.relocatable { 0o644 } else { 0o755 };
    out.finish(mode & !umask())?;
    laps.lap("Commit output file");
    Ok(())
}

/// Where the parts after the sections go: the symbol table, its extended section indices,
/// the section names, the symbol names and the section headers, and the file's size.
struct Tail {
    symtab_off: u64,
    xindex_off: u64,
    shstrtab_off: u64,
    strtab_off: u64,
    shoff: u64,
    total: u64,
}

impl Tail {
    /// The parts after sections ending at `end`, for a symbol table `symtab` (`None`: none, or
    /// not built yet: then only what does not depend on it).
    fn new(end: u64, symtab: Option<&SymtabOut>, xindex: bool, shstrtab: u64, nsections: usize) -> Tail {
        let mut off = end;
        let mut symtab_off = 0;
        if let Some(s) = symtab {
            off = crate::elf::layout::model::align_up(off, 8);
            symtab_off = off;
            off += s.symtab.len() as u64;
        }
        let xindex_off = off;
        if let (true, Some(s)) = (xindex, symtab) {
            off += 4 * s.xindex.len() as u64;
        }
        let shstrtab_off = off;
        off += shstrtab;
        let strtab_off = off;
        off += symtab.map_or(0, |s| s.strtab.len() as u64);
        let shoff = crate::elf::layout::model::align_up(off, 8);
        Tail { symtab_off, xindex_off, shstrtab_off, strtab_off, shoff, total: shoff + nsections as u64 * 64 }
    }
}

/// At least the bytes that `.symtab`, `.symtab_shndx` and `.strtab` take, most likely (an
/// image made for it that turns out too small is replaced, `write_output`): every symbol of
/// every object, every global, a section symbol per output section, and all their names.
fn symtab_bound(l: &Layout) -> u64 {
    let (mut syms, mut names) = (l.r.symbols.len() as u64 + l.osecs.len() as u64 + 64, 4096u64);
    for (_, o) in l.r.objects_in_load_order() {
        syms += o.symbols.len() as u64;
        names += o.strtab.len() as u64;
    }
    for s in &l.r.symbols {
        names += s.name.len() as u64 + 1;
    }
    // 24 bytes of `.symtab` and 4 of `.symtab_shndx` per symbol, and the alignment.
    syms * 28 + names + 8
}

/// -z separate-code / separate-loadable-segments: the gaps between the sections of an
/// executable segment and the rest of its last page hold trap instructions (int3), as lld's
/// writeTrapInstr; written before the sections, which may share that page.
fn write_traps(l: &Layout, buf: &mut [u8]) {
    if l.config.z_separate == crate::elf::config::Separate::None {
        return;
    }
    let page = l.config.max_page_size.unwrap_or(crate::elf::layout::model::PAGE);
    let mut fill = |from: u64, to: u64| {
        let (mut i, end) = ((from & !3) as usize, (to as usize).min(buf.len()));
        while i + 4 <= end {
            buf[i..i + 4].fill(0xcc);
            i += 4;
        }
    };
    for ph in l.phdrs.iter().filter(|p| p.p_type == elf::PT_LOAD && p.flags & elf::PF_X != 0) {
        let mut secs: Vec<&crate::elf::layout::model::OutSec> = l
            .osecs
            .iter()
            .filter(|o| o.flags & elf::SHF_ALLOC as u64 != 0 && !(o.flags & elf::SHF_TLS as u64 != 0 && o.sh_type == elf::SHT_NOBITS))
            .filter(|o| o.addr >= ph.vaddr && o.addr + o.size <= ph.vaddr + ph.memsz && o.offset >= ph.offset)
            .collect();
        secs.sort_by_key(|o| o.offset);
        let end_of = |o: &crate::elf::layout::model::OutSec| o.offset + if o.sh_type == elf::SHT_NOBITS { 0 } else { o.size };
        for w in secs.windows(2) {
            fill(end_of(w[0]), w[1].offset);
        }
        let end = secs.iter().map(|o| end_of(o)).max().unwrap_or(ph.offset + ph.filesz);
        fill(end, crate::elf::layout::model::align_up(end, page));
    }
}

#[allow(clippy::too_many_arguments)]
fn write_shdr(b: &mut [u8], name: u32, ty: u32, flags: u64, addr: u64, off: u64, size: u64, link: u32, info: u32, align: u64, entsize: u64) {
    b[0..4].copy_from_slice(&name.to_le_bytes());
    b[4..8].copy_from_slice(&ty.to_le_bytes());
    b[8..16].copy_from_slice(&flags.to_le_bytes());
    b[16..24].copy_from_slice(&addr.to_le_bytes());
    b[24..32].copy_from_slice(&off.to_le_bytes());
    b[32..40].copy_from_slice(&size.to_le_bytes());
    b[40..44].copy_from_slice(&link.to_le_bytes());
    b[44..48].copy_from_slice(&info.to_le_bytes());
    b[48..56].copy_from_slice(&align.to_le_bytes());
    b[56..64].copy_from_slice(&entsize.to_le_bytes());
}

/// The ELF and program headers. A section count or `.shstrtab` index of SHN_LORESERVE or more
/// escapes to the null section header (its sh_size and sh_link), as extended section numbering
/// says.
fn write_headers(l: &Layout, buf: &mut [u8], shoff: u64, nsections: usize, shstrtab_index: usize) {
    let null = shoff as usize;
    let (shnum, shstrndx) = crate::elf::types::section_header_counts(&mut buf[null..null + 64], nsections, shstrtab_index);
    let h = &mut buf[..64];
    h[..4].copy_from_slice(b"\x7fELF");
    h[4] = 2; // ELFCLASS64
    h[5] = 1; // little endian
    h[6] = 1; // EV_CURRENT
              // EI_OSABI: the first input file's, as lld (FreeBSD objects give a FreeBSD executable).
    h[7] = l.r.inputs.iter().find(|f| f.archive.is_none() && f.data.len() > 7 && f.data.starts_with(b"\x7fELF")).map(|f| f.data[7]).unwrap_or(0);
    let ty = if l.config.relocatable {
        elf::ET_REL
    } else if l.is_pic {
        elf::ET_DYN
    } else {
        elf::ET_EXEC
    };
    h[16..18].copy_from_slice(&ty.to_le_bytes());
    h[18..20].copy_from_slice(&elf::EM_X86_64.to_le_bytes());
    h[20..24].copy_from_slice(&1u32.to_le_bytes());
    h[24..32].copy_from_slice(&l.entry.to_le_bytes());
    h[32..40].copy_from_slice(&64u64.to_le_bytes());
    h[40..48].copy_from_slice(&shoff.to_le_bytes());
    h[48..52].copy_from_slice(&0u32.to_le_bytes());
    h[52..54].copy_from_slice(&64u16.to_le_bytes());
    h[54..56].copy_from_slice(&56u16.to_le_bytes());
    h[56..58].copy_from_slice(&(l.phdrs.len() as u16).to_le_bytes());
    h[58..60].copy_from_slice(&64u16.to_le_bytes());
    h[60..62].copy_from_slice(&shnum.to_le_bytes());
    h[62..64].copy_from_slice(&shstrndx.to_le_bytes());
    for (i, p) in l.phdrs.iter().enumerate() {
        let o = 64 + i * 56;
        let b = &mut buf[o..o + 56];
        b[0..4].copy_from_slice(&p.p_type.to_le_bytes());
        b[4..8].copy_from_slice(&p.flags.to_le_bytes());
        b[8..16].copy_from_slice(&p.offset.to_le_bytes());
        b[16..24].copy_from_slice(&p.vaddr.to_le_bytes());
        b[24..32].copy_from_slice(&p.paddr.unwrap_or(p.vaddr).to_le_bytes());
        b[32..40].copy_from_slice(&p.filesz.to_le_bytes());
        b[40..48].copy_from_slice(&p.memsz.to_le_bytes());
        b[48..56].copy_from_slice(&p.align.to_le_bytes());
    }
}

/// Where each output section lands in the file. It is the layout's placement unless
/// `--compress-debug-sections` shrinks the debug sections: they are rendered and compressed
/// here (the layout's addresses are final, and debug sections are not loaded), and the non-alloc
/// sections move up behind them, as lld's `OutputSection::maybeCompress` does.
struct Placement {
    offset: Vec<u64>,
    size: Vec<u64>,
    /// The compressed contents (an `Elf64_Chdr`, then the zlib or zstd data) of a compressed section.
    compressed: Vec<Option<Vec<u8>>>,
    /// The end of the last section's contents.
    end: u64,
}

fn place_sections(l: &Layout) -> Result<Placement> {
    let n = l.osecs.len();
    let mut p = Placement {
        offset: l.osecs.iter().map(|os| os.offset).collect(),
        size: l.osecs.iter().map(|os| os.size).collect(),
        compressed: vec![None; n],
        end: l.file_size,
    };
    let alloc = |i: usize| l.osecs[i].flags & elf::SHF_ALLOC as u64 != 0;
    let compress: Vec<usize> = (0..n)
        .filter(|&i| {
            let os = &l.osecs[i];
            crate::elf::compress::wants(l.config.compress_debug, &os.name, alloc(i), os.sh_type == elf::SHT_NOBITS, os.size)
        })
        .collect();
    let Some(kind) = l.config.compress_debug.filter(|_| !compress.is_empty()) else {
        return Ok(p);
    };
    // Sections in parallel, and each one's 1 MiB shards in parallel too (`elf::compress`).
    let done: Vec<(usize, Option<Vec<u8>>, Vec<String>)> = compress
        .into_par_iter()
        .map(|i| {
            let mut raw = vec![0u8; l.osecs[i].size as usize];
            let errs = fill_section(l, i, &mut raw);
            (i, crate::elf::compress::compress_section(kind, &raw), errs)
        })
        .collect();
    let mut errors = Vec::new();
    for (i, data, errs) in done {
        errors.extend(errs);
        // As lld: a section that would not shrink stays uncompressed.
        let Some(data) = data else { continue };
        p.size[i] = data.len() as u64;
        p.compressed[i] = Some(data);
    }
    relocation_errors(l, errors)?;
    // Non-alloc sections follow the loaded image; lay them out again from where they began.
    let mut rest: Vec<usize> = (0..n).filter(|&i| !alloc(i)).collect();
    rest.sort_by_key(|&i| l.osecs[i].offset);
    let mut end = (0..n).filter(|&i| alloc(i) && l.osecs[i].sh_type != elf::SHT_NOBITS).map(|i| l.osecs[i].offset + l.osecs[i].size).max().unwrap_or(0);
    if let Some(&first) = rest.first() {
        let mut cursor = l.osecs[first].offset;
        for i in rest {
            // A compressed section is aligned to 1 (lld), the others keep their alignment.
            let align = if p.compressed[i].is_some() { 1 } else { l.osecs[i].align.max(1) };
            cursor = crate::elf::layout::model::align_up(cursor, align);
            p.offset[i] = cursor;
            cursor += p.size[i];
        }
        end = end.max(cursor);
    }
    p.end = end;
    Ok(p)
}

/// Splits the output buffer into one mutable slice per output section and fills them in parallel.
fn write_sections(l: &Layout, place: &Placement, buf: &mut [u8]) -> Result<Vec<String>> {
    let mut order: Vec<usize> = (0..l.osecs.len()).filter(|&i| l.osecs[i].sh_type != elf::SHT_NOBITS && place.size[i] > 0).collect();
    order.sort_by_key(|&i| place.offset[i]);
    let mut slices: Vec<(usize, &mut [u8])> = Vec::with_capacity(order.len());
    let mut rest: &mut [u8] = buf;
    let mut pos = 0u64;
    for i in order {
        let (offset, size) = (place.offset[i], place.size[i]);
        if offset < pos {
            return Err(Error::new(format!("internal error: section {} overlaps the previous one", l.osecs[i].name)));
        }
        let tmp = std::mem::take(&mut rest);
        let (_, tail) = tmp.split_at_mut((offset - pos) as usize);
        let (mine, tail) = tail.split_at_mut(size as usize);
        rest = tail;
        pos = offset + size;
        slices.push((i, mine));
    }
    let mut work: Vec<(usize, Option<std::ops::Range<usize>>, &mut [u8])> = Vec::with_capacity(slices.len());
    for (i, slice) in slices {
        split_work(l, i, place.compressed[i].is_some(), slice, &mut work);
    }
    let errors: Vec<String> = work
        .into_par_iter()
        .flat_map(|(i, part, slice)| match (&place.compressed[i], part) {
            (Some(data), _) => {
                slice.copy_from_slice(data);
                Vec::new()
            }
            (None, None) => fill_section(l, i, slice),
            (None, Some(range)) => {
                if flag_exec(l.osecs[i].flags) {
                    slice.fill(arch::TRAP);
                }
                let start = l.osecs[i].chunk_off[range.start];
                let mut errs = Vec::new();
                fill_chunks(l, i, range, start, slice, &mut errs);
                errs
            }
        })
        .collect();
    Ok(errors)
}

/// Output sections larger than this are written in parts of about this size, in parallel: a
/// large link's `.debug_info` or `.text` alone would otherwise keep one thread busy while the
/// others wait.
const PART: u64 = 2 << 20;

/// Adds output section `i`'s work to `work`: the whole section (`None`), or runs of its chunks,
/// each with the part of `slice` from its first chunk to the next run's. A section with a
/// linker script's fill or data, or compressed, is one piece of work.
fn split_work<'a>(l: &Layout, i: usize, compressed: bool, slice: &'a mut [u8], work: &mut Vec<(usize, Option<std::ops::Range<usize>>, &'a mut [u8])>) {
    let os = &l.osecs[i];
    let whole = compressed
        || (slice.len() as u64) < 2 * PART
        || l.script_extra.fill.contains_key(&i)
        || l.script_extra.data.contains_key(&i)
        || os.chunk_off.len() != os.chunks.len()
        || os.chunk_off.first() != Some(&0)
        || !os.chunk_off.is_sorted();
    if whole {
        work.push((i, None, slice));
        return;
    }
    let mut rest = slice;
    let mut first = 0usize;
    let mut pos = 0u64;
    for k in 1..=os.chunks.len() {
        let end = os.chunk_off.get(k).copied();
        // Cut before chunk k once the run is large enough (and at the section's end).
        let cut = match end {
            Some(e) => e - pos >= PART,
            None => true,
        };
        if !cut {
            continue;
        }
        let len = end.map_or(rest.len() as u64, |e| e - pos);
        let tmp = std::mem::take(&mut rest);
        let (mine, tail) = tmp.split_at_mut(len as usize);
        rest = tail;
        work.push((i, Some(first..k), mine));
        first = k;
        pos += len;
    }
}

/// Writes output section `i`'s contents (relocated) into `slice`; returns relocation errors.
fn fill_section(l: &Layout, i: usize, slice: &mut [u8]) -> Vec<String> {
    let os = &l.osecs[i];
    let mut errs = Vec::new();
    if let Some(&f) = l.script_extra.fill.get(&i) {
        // A linker script's `=fill` / FILL: the 4-byte pattern, big-endian, repeated from the
        // start of each gap between input sections (as lld's OutputSection::writeTo).
        let pat = f.to_be_bytes();
        let mut ranges: Vec<(usize, usize)> =
            os.chunks.iter().zip(&os.chunk_off).map(|(c, &o)| (o as usize, o as usize + chunk_size(l, *c).0 as usize)).collect();
        ranges.sort_unstable();
        let mut pos = 0usize;
        for (a, b) in ranges.into_iter().chain([(slice.len(), slice.len())]) {
            let gap_end = a.min(slice.len());
            for (k, byte) in slice[pos.min(gap_end)..gap_end].iter_mut().enumerate() {
                *byte = pat[k % 4];
            }
            pos = pos.max(b);
        }
    } else if flag_exec(os.flags) {
        slice.fill(arch::TRAP);
    }
    if let Some(data) = l.script_extra.data.get(&i) {
        for &(off, size, v) in data {
            let (o, n) = (off as usize, size as usize);
            if o + n <= slice.len() {
                slice[o..o + n].copy_from_slice(&v.to_le_bytes()[..n]);
            }
        }
    }
    fill_chunks(l, i, 0..os.chunks.len(), 0, slice, &mut errs);
    errs
}

/// Writes chunks `range` of output section `i` into `slice`, which starts at offset `start`
/// of the section.
fn fill_chunks(l: &Layout, i: usize, range: std::ops::Range<usize>, start: u64, slice: &mut [u8], errs: &mut Vec<String>) {
    let os = &l.osecs[i];
    for (c, &off) in os.chunks[range.clone()].iter().zip(&os.chunk_off[range]) {
        let (size, _) = chunk_size(l, *c);
        let coff = off - start;
        let dst = &mut slice[coff as usize..(coff + size) as usize];
        match *c {
            Chunk::Input(f, s) => {
                let sec = &l.obj(f).sections[s as usize];
                if sec.sh_type != elf::SHT_NOBITS {
                    dst.copy_from_slice(sec.data);
                    apply_relocs(l, f, s, os.addr + off, dst, errs);
                }
            }
            Chunk::Merged(m) => {
                l.merged[m].write_to(dst);
                apply_merged_relocs(l, m, os.addr + off, dst, errs);
            }
            Chunk::Bss(_) => {}
            Chunk::Synthetic(Synth::EhFrame) => write_eh_frame(l, dst, errs),
            Chunk::Synthetic(Synth::EhFrameHdr) => write_eh_frame_hdr(l, dst, errs),
            Chunk::Synthetic(s) => synthetic::write(l, s, dst),
        }
    }
}

fn flag_exec(f: u64) -> bool {
    f & elf::SHF_EXECINSTR as u64 != 0
}

fn chunk_size(l: &Layout, c: Chunk) -> (u64, u64) {
    match c {
        Chunk::Input(f, s) => (l.obj(f).sections[s as usize].size, 1),
        Chunk::Merged(m) => (l.merged[m].size(), 1),
        Chunk::Bss(id) => (crate::elf::layout::sizes::bss_size(l, id), 1),
        Chunk::Synthetic(Synth::RelroPadding) => (0, 1),
        Chunk::Synthetic(s) => (synthetic::size(l, s), 1),
    }
}

/// Rebuilds `.eh_frame` from the kept records: copies each record, rewrites FDE→CIE pointers
/// (records moved when FDEs of dead functions were dropped), and applies relocations.
fn write_eh_frame(l: &Layout, dst: &mut [u8], errs: &mut Vec<String>) {
    let base = l.synth_addr(Synth::EhFrame);
    // The terminator after the last record.
    let end = l.eh_size as usize;
    if end >= 4 && end <= dst.len() {
        dst[end - 4..end].fill(0);
    }
    for rec in &l.eh_records {
        let sec = &l.obj(rec.file).sections[rec.sec as usize];
        let src = &sec.data[rec.in_off as usize..(rec.in_off + rec.len) as usize];
        let out = &mut dst[rec.out_off as usize..(rec.out_off + rec.len) as usize];
        out.copy_from_slice(src);
        if !rec.is_cie {
            // The CIE pointer: distance from this field back to the (deduplicated) CIE.
            let ptr = (rec.out_off + 4 - rec.cie_out_off) as u32;
            out[4..8].copy_from_slice(&ptr.to_le_bytes());
        }
    }
    // Relocations: apply each to the kept record that contains it.
    for (&(f, s), recs) in &l.eh_index {
        let sec = &l.obj(f).sections[s as usize];
        for rel in sec.relocs {
            let off = rel.r_offset(LE);
            let Some(rec) = eh_record_at(l, recs, off) else { continue };
            let r_type = rel.r_type(LE, false);
            let info = arch::rel_info(r_type);
            let out_off = rec.out_off + (off - rec.in_off);
            if (out_off as usize).saturating_add(info.field.size()) > dst.len() {
                continue;
            }
            let t = l.target_of(f, rel.r_sym(LE, false) as usize);
            let a = rel.r_addend(LE);
            let sa = l.addr_with_addend(t, a);
            let p = base + out_off;
            let v = match info.kind {
                RelKind::Pc | RelKind::PltPc => sa.wrapping_sub(p),
                RelKind::Abs => sa,
                RelKind::GotPc | RelKind::GotPcRelax | RelKind::GotPcRelaxRex => l.got_addr(t).unwrap_or(0).wrapping_add(a as u64).wrapping_sub(p),
                _ => continue,
            };
            if !arch::write_field(&mut dst[out_off as usize..], info.field, v) {
                errs.push(out_of_range(l, RangeAt::EhFrame(out_off), r_type, v, Some(t)));
            }
        }
    }
}

/// The kept record of one input `.eh_frame` section (`recs`, by input offset) that holds `off`.
fn eh_record_at<'l>(l: &'l Layout, recs: &[u32], off: u64) -> Option<&'l crate::elf::layout::model::EhRecord> {
    let k = recs.partition_point(|&i| l.eh_records[i as usize].in_off <= off);
    let rec = &l.eh_records[*recs.get(k.checked_sub(1)?)? as usize];
    (off < rec.in_off + rec.len).then_some(rec)
}

/// `.eh_frame_hdr`: version 1, pointer to .eh_frame, FDE count, and a sorted binary-search table
/// of (initial location, FDE address), all relative to the header.
fn write_eh_frame_hdr(l: &Layout, dst: &mut [u8], errs: &mut Vec<String>) {
    let hdr = l.synth_addr(Synth::EhFrameHdr);
    let eh = l.synth_addr(Synth::EhFrame);
    dst[0] = 1;
    dst[1] = 0x1b; // DW_EH_PE_pcrel | sdata4
    dst[2] = 0x03; // udata4
    dst[3] = 0x3b; // DW_EH_PE_datarel | sdata4
    dst[4..8].copy_from_slice(&((eh.wrapping_sub(hdr + 4)) as u32).to_le_bytes());
    // Initial location of each FDE: its pc_begin (pcrel sdata4 at offset 8) after relocation.
    let mut pc_begin: std::collections::HashMap<u64, u64> = Default::default();
    for (&(f, s), recs) in &l.eh_index {
        for rel in l.obj(f).sections[s as usize].relocs {
            let off = rel.r_offset(LE);
            if let Some(rec) = eh_record_at(l, recs, off) {
                if !rec.is_cie && off == rec.in_off + 8 {
                    let t = l.target_of(f, rel.r_sym(LE, false) as usize);
                    pc_begin.insert(rec.out_off, l.addr_with_addend(t, rel.r_addend(LE)));
                }
            }
        }
    }
    // Each entry is 32 bits relative to the header: a function farther away than that cannot
    // be found by the unwinder (lld's getFdeData refuses it).
    let mut table: Vec<(u64, u64)> = Vec::new();
    for r in l.eh_records.iter().filter(|r| !r.is_cie) {
        let pc = pc_begin.get(&r.out_off).copied().unwrap_or(0);
        if i32::try_from(pc.wrapping_sub(hdr) as i64).is_err() {
            errs.push(format!("{}:(.eh_frame): PC offset is too large: 0x{:x}", l.r.inputs[r.file].name, pc.wrapping_sub(hdr)));
            continue;
        }
        table.push((pc, eh + r.out_off));
    }
    table.sort();
    dst[8..12].copy_from_slice(&(table.len() as u32).to_le_bytes());
    for (i, (pc, fde)) in table.iter().enumerate() {
        let o = 12 + i * 8;
        dst[o..o + 4].copy_from_slice(&(pc.wrapping_sub(hdr) as u32).to_le_bytes());
        dst[o + 4..o + 8].copy_from_slice(&(fde.wrapping_sub(hdr) as u32).to_le_bytes());
    }
}

/// Sizes of `.symtab` and `.strtab` as written (None under --strip-all), for the map file.
pub fn symtab_sizes(l: &Layout) -> Option<(u64, u64)> {
    (!l.config.strip_all).then(|| {
        let s = build_symtab(l);
        (s.symtab.len() as u64, s.strtab.len() as u64)
    })
}

/// The output's `.symtab` and `.strtab`: the objects' locals, then the globals that are local
/// to the output (hidden, internal, forced local, linker-defined), then the other globals.
/// The local part is then grouped by the file each symbol came from, as lld's
/// sortSymTabSymbols does: a file's STT_FILE, its locals, the section symbols of the output
/// sections its sections open and its hidden globals stay together.
fn build_symtab(l: &Layout) -> SymtabOut {
    let mut t = SymtabBuilder {
        symtab: Vec::with_capacity(24 * (l.r.symbols.len() + 1)),
        xindex: vec![0],
        strtab: vec![0u8],
        index: Default::default(),
        track: l.config.emit_relocs,
        later: Vec::new(),
        group: INTERNAL_GROUP,
        groups: vec![INTERNAL_GROUP],
    };
    t.symtab.extend_from_slice(&[0u8; 24]);
    push_locals(l, &mut t);
    // --emit-relocs: a section symbol per output section with input data, after the objects'
    // locals, in the order lld creates the output sections (lld's addSectionSymbols runs
    // before it sorts them); it belongs to the file of the output section's first
    // input section, or to the linker for merged strings and `.comment`.
    for i in crate::elf::emit_relocs::creation_order(l) {
        let os = &l.osecs[i];
        if crate::elf::emit_relocs::wants_section_symbol(l, os) {
            t.group = crate::elf::emit_relocs::section_symbol_file(l, os).unwrap_or(INTERNAL_GROUP);
            let n = t.push(b"", elf::STB_LOCAL << 4 | elf::STT_SECTION, 0, os.shndx, os.addr, 0);
            t.index.sections.insert(i, n);
        }
    }
    // Globals with hidden or internal visibility, and linker-defined symbols, are local to the
    // output: lld writes them among the locals, so do we (two passes: locals, then globals).
    let rows: Vec<Option<GlobalRow>> = {
        use rayon::prelude::*;
        (0..l.r.symbols.len()).into_par_iter().map(|id| global_row(l, id)).collect()
    };
    push_globals(l, true, &rows, &mut t);
    let first_global = (t.symtab.len() / 24) as u32;
    t.group_locals(first_global);
    push_globals(l, false, &rows, &mut t);
    t.name_globals();
    SymtabOut { symtab: t.symtab, xindex: t.xindex, strtab: t.strtab, first_global, index: t.index }
}

/// `.symtab` and `.strtab` being filled (names are not deduplicated).
struct SymtabBuilder {
    symtab: Vec<u8>,
    /// Per symbol: its section index when `st_shndx` cannot hold it (SHN_XINDEX), else 0; the
    /// `.symtab_shndx` contents of an output with 65,280 sections or more.
    xindex: Vec<u32>,
    strtab: Vec<u8>,
    index: crate::elf::emit_relocs::SymIndex,
    /// Whether `index` is filled: only `--emit-relocs` reads it (a hashed insert per symbol,
    /// about 1 ms of OpenSSL's 20,000-symbol table otherwise).
    track: bool,
    /// Globals whose names go to `.strtab` at the end, in resolver order whether they were
    /// written among the locals or not: (order, symbol index, name). lld names its symbols as it
    /// adds them, before it moves the ones local to the output ahead of the others.
    later: Vec<(usize, u32, &'static [u8])>,
    /// The group (input file) of the symbols pushed next, and of each symbol pushed so far.
    group: usize,
    groups: Vec<usize>,
}

/// The group of symbols the linker itself defines (lld's internal file): linker-defined
/// symbols, the section symbols of merged and synthetic sections.
const INTERNAL_GROUP: usize = usize::MAX;

/// The group of a `--defsym` or script symbol: lld gives each assignment a file of its own.
fn script_group(id: crate::elf::symtab::SymbolId) -> usize {
    usize::MAX - 1 - id
}

impl SymtabBuilder {
    /// Appends one symbol, its name (if any) to the string table; returns its index. `shndx`
    /// is an output section index, 0 or a `reserved_shndx`.
    fn push(&mut self, name: &[u8], info: u8, other: u8, shndx: u32, value: u64, size: u64) -> u32 {
        let (shndx, x) = crate::elf::types::split_shndx(shndx);
        self.xindex.push(x);
        let name_off = if name.is_empty() {
            0
        } else {
            let o = self.strtab.len() as u32;
            self.strtab.extend_from_slice(name);
            self.strtab.push(0);
            o
        };
        let mut e = [0u8; 24];
        e[0..4].copy_from_slice(&name_off.to_le_bytes());
        e[4] = info;
        e[5] = other;
        e[6..8].copy_from_slice(&shndx.to_le_bytes());
        e[8..16].copy_from_slice(&value.to_le_bytes());
        e[16..24].copy_from_slice(&size.to_le_bytes());
        self.symtab.extend_from_slice(&e);
        self.groups.push(self.group);
        (self.symtab.len() / 24 - 1) as u32
    }

    /// Reorders symbols 1..`end` (the locals) so that each group's symbols are together, the
    /// groups in the order they first appear and each keeping its symbols' order (lld's
    /// sortSymTabSymbols); the indices already handed out follow.
    fn group_locals(&mut self, end: u32) {
        let end = end as usize;
        let mut slot: crate::util::fasthash::FastMap<usize, usize> = Default::default();
        let mut members: Vec<Vec<u32>> = Vec::new();
        for n in 1..end {
            let g = self.groups[n];
            let k = *slot.entry(g).or_insert_with(|| {
                members.push(Vec::new());
                members.len() - 1
            });
            members[k].push(n as u32);
        }
        let order: Vec<u32> = members.into_iter().flatten().collect();
        if order.iter().enumerate().all(|(k, &n)| n as usize == k + 1) {
            return;
        }
        // new_of[old] = new index.
        let mut new_of = vec![0u32; end];
        let mut symtab = Vec::with_capacity(self.symtab.len());
        symtab.extend_from_slice(&self.symtab[..24]);
        let mut xindex = Vec::with_capacity(self.xindex.len());
        xindex.push(self.xindex[0]);
        for (k, &old) in order.iter().enumerate() {
            let old = old as usize;
            new_of[old] = (k + 1) as u32;
            symtab.extend_from_slice(&self.symtab[old * 24..old * 24 + 24]);
            xindex.push(self.xindex[old]);
        }
        symtab.extend_from_slice(&self.symtab[end * 24..]);
        xindex.extend_from_slice(&self.xindex[end..]);
        self.symtab = symtab;
        self.xindex = xindex;
        let remap = |n: &mut u32| {
            if (*n as usize) < end && *n != 0 {
                *n = new_of[*n as usize];
            }
        };
        self.index.locals.values_mut().for_each(remap);
        self.index.globals.values_mut().for_each(remap);
        self.index.sections.values_mut().for_each(remap);
        for (_, n, _) in self.later.iter_mut() {
            remap(n);
        }
    }

    /// Appends one global whose name `name_globals` adds later, at `order` among the others.
    #[allow(clippy::too_many_arguments)]
    fn push_global(&mut self, order: usize, name: &'static [u8], info: u8, other: u8, shndx: u32, value: u64, size: u64) -> u32 {
        let n = self.push(b"", info, other, shndx, value, size);
        self.later.push((order, n, name));
        n
    }

    /// Adds the globals' names to the string table in their order.
    fn name_globals(&mut self) {
        let mut later = std::mem::take(&mut self.later);
        later.sort_by_key(|&(order, ..)| order);
        self.strtab.reserve(later.iter().map(|(_, _, n)| n.len() + 1).sum());
        for (_, n, name) in later {
            if name.is_empty() {
                continue;
            }
            let o = self.strtab.len() as u32;
            self.strtab.extend_from_slice(name);
            self.strtab.push(0);
            let e = n as usize * 24;
            self.symtab[e..e + 4].copy_from_slice(&o.to_le_bytes());
        }
    }
}

/// The objects' locals, file by file (in the order the files joined the link, as lld), under
/// lld's discard policy: -x drops every local, -X every `.L` temporary, and by default `.L`
/// symbols go only when they point into mergeable sections; section symbols and locals of
/// sections not in the output are not written, TLS values are relative to the TLS segment.
fn push_locals(l: &Layout, t: &mut SymtabBuilder) {
    use rayon::prelude::*;
    // --emit-relocs keeps the locals its relocations name, whatever the discard policy.
    let used = crate::elf::emit_relocs::referenced_locals(l);
    // Which locals each file contributes, and their values, decided for all files in parallel
    // (lookups all over the layout: a large debug link has millions of locals); then appended
    // in load order.
    let files: Vec<(crate::elf::symtab::FileId, &crate::elf::object::ObjFile)> = l.r.objects_in_load_order().collect();
    let entries: Vec<Vec<(usize, u32, u64)>> = files
        .par_iter()
        .map(|&(f, o)| {
            let mut v = Vec::new();
            for i in 1..o.first_global {
                let s = &o.symbols[i];
                let ty = s.st_type();
                if ty == elf::STT_SECTION {
                    continue;
                }
                let name = o.sym_name(i);
                let keep = used.contains(&(f, i));
                let in_merge = || o.sections.get(o.shndx(i) as usize).is_some_and(|x| x.flags & elf::SHF_MERGE as u64 != 0);
                if name.is_empty() || (!keep && l.config.discards_local(name, in_merge)) {
                    continue;
                }
                // lld leaves out a local defined in a merge piece that --gc-sections dropped.
                if let Some(sh) = o.sym_section(i) {
                    if !keep && !l.merge_piece_live(f, sh, s.st_value(LE)) {
                        continue;
                    }
                }
                let (shndx, value) = if ty == elf::STT_FILE {
                    (ABS, 0)
                } else {
                    match osec_index(l, f, i) {
                        Some(x) => (x, if x == ABS { s.st_value(LE) } else { l.local_value(f, i) }),
                        None => continue,
                    }
                };
                let value = if ty == elf::STT_TLS && shndx != ABS { value.wrapping_sub(l.tls_start()) } else { value };
                v.push((i, shndx, value));
            }
            v
        })
        .collect();
    t.strtab.reserve(files.iter().zip(&entries).map(|(&(_, o), list)| list.iter().map(|&(i, ..)| o.sym_name(i).len() + 1).sum::<usize>()).sum());
    for (&(f, o), list) in files.iter().zip(entries) {
        t.group = f;
        for (i, shndx, value) in list {
            let s = &o.symbols[i];
            let n = t.push(o.sym_name(i), s.st_info(), s.st_other, shndx, value, s.st_size(LE));
            if t.track {
                t.index.locals.insert((f, i), n);
            }
        }
    }
}

/// Global `id`'s `.symtab` entry, if it has one: (local to the output, name, st_info, st_other,
/// st_shndx, st_value, st_size, group).
type GlobalRow = (bool, &'static [u8], u8, u8, u32, u64, u64, usize);

/// Global `id`'s row: STB_LOCAL when local to the output, the bare name (versions are in
/// `.gnu.version`), lld's visibility for `__start_`/`__stop_`, and the file it belongs to for
/// lld's grouping of the locals.
fn global_row(l: &Layout, id: crate::elf::symtab::SymbolId) -> Option<GlobalRow> {
    {
        // First whether it is written at all: most symbols of a large link are not (archive
        // members never extracted), and the rest only matters for those that are.
        let (info, shndx, value, size) = global_entry(l, id)?;
        let sym = &l.r.symbols[id];
        let start_stop = sym.name.starts_with(b"__start_") || sym.name.starts_with(b"__stop_");
        let linker_defined = l.synthetic_syms.contains_key(&id) && matches!(sym.def, Def::Undefined | Def::Lazy(_));
        // lld defines `_end`, `_etext`, `_edata` (and their unprefixed forms) and `__bss_start`
        // as ordinary globals; the other linker-defined symbols are hidden.
        let public = crate::elf::reserved::is_public_linker_defined(sym.name);
        let local = matches!(l.visibility(id), elf::STV_HIDDEN | elf::STV_INTERNAL)
            || (linker_defined && !start_stop && !public)
            || (sym.forced_local && (matches!(sym.def, Def::Defined(..) | Def::Common(..)) || linker_defined));
        let name = sym.name;
        let vis = l.visibility(id);
        // Versions are in .gnu.version; .symtab holds the bare name (`foo@VER` → `foo`).
        let name = match name.iter().position(|&c| c == b'@') {
            Some(p) if matches!(sym.def, Def::Shared(..)) || (matches!(sym.def, Def::Defined(..) | Def::Common(..)) && !sym.forced_local) => &name[..p],
            _ => name,
        };
        let info = if local { (elf::STB_LOCAL << 4) | (info & 0xf) } else { info };
        // lld gives `__start_`/`__stop_` protected visibility (-z start-stop-visibility), and
        // defines the other reserved symbols, except the public end markers, hidden.
        let vis = if start_stop && linker_defined {
            // A reference's stricter visibility (`.hidden __start_x`) wins, as in lld.
            if matches!(vis, elf::STV_HIDDEN | elf::STV_INTERNAL) {
                vis
            } else {
                elf::STV_PROTECTED
            }
        } else if linker_defined && !public && matches!(vis, elf::STV_DEFAULT | elf::STV_PROTECTED) {
            elf::STV_HIDDEN
        } else {
            vis
        };
        // The file it belongs to for lld's grouping of the locals: its definition's.
        let group = match sym.def {
            Def::Defined(f, _) | Def::Common(f, _) => f,
            Def::Synthetic => script_group(id),
            _ => INTERNAL_GROUP,
        };
        Some((local, name, info, vis, shndx, value, size, group))
    }
}

/// The globals that are local to the output (`locals`) or the others, in resolver order, from
/// their `rows` (computed once for both passes, in parallel).
fn push_globals(l: &Layout, locals: bool, rows: &[Option<GlobalRow>], t: &mut SymtabBuilder) {
    for (id, row) in rows.iter().enumerate() {
        let Some((local, name, info, vis, shndx, value, size, group)) = *row else { continue };
        if local != locals {
            continue;
        }
        t.group = group;
        let n = t.push_global(id, name, info, vis, shndx, value, size);
        if t.track {
            t.index.globals.insert(id, n);
        }
    }
    // lld defines `_DYNAMIC` (hidden, at .dynamic) in every output with a dynamic section,
    // referenced or not; a referenced one was written above.
    if locals {
        if let Some(&i) = l.synth_osec.get(&Synth::Dynamic) {
            let referenced =
                l.r.lookup(b"_DYNAMIC").is_some_and(|id| l.synthetic_syms.contains_key(&id) || !matches!(l.r.symbols[id].def, Def::Undefined | Def::Lazy(_)));
            if !referenced && !l.config.strip_all {
                let o = &l.osecs[i];
                // lld adds it after every input's symbols.
                t.group = INTERNAL_GROUP;
                t.push_global(usize::MAX, b"_DYNAMIC", elf::STB_LOCAL << 4 | elf::STT_NOTYPE, elf::STV_HIDDEN, o.shndx, o.addr, 0);
            }
        }
    }
}

fn compute_build_id(l: &Layout, buf: &[u8]) -> Vec<u8> {
    build_id_bytes(l.config.build_id, &l.config.build_id_hex, buf)
}

/// The build ID of a finished image `buf` (`--build-id=0x…` bytes when `hex` is not empty).
/// Shared by the executable writer and the `-r` writer.
pub(crate) fn build_id_bytes(kind: crate::elf::config::BuildId, hex: &[u8], buf: &[u8]) -> Vec<u8> {
    use crate::elf::config::BuildId;
    // Hash 1 MiB chunks in parallel, then hash the list of chunk hashes (as lld does), so the
    // result is the same for any thread count.
    let chunk_hashes = |f: &(dyn Fn(&[u8]) -> Vec<u8> + Sync)| -> Vec<u8> {
        let parts: Vec<Vec<u8>> = buf.par_chunks(1 << 20).map(f).collect();
        parts.concat()
    };
    if !hex.is_empty() {
        return hex.to_vec();
    }
    match kind {
        BuildId::None => Vec::new(),
        BuildId::Fast => {
            let h = chunk_hashes(&|c| xxhash_rust::xxh3::xxh3_64(c).to_le_bytes().to_vec());
            xxhash_rust::xxh3::xxh3_64(&h).to_le_bytes().to_vec()
        }
        BuildId::Md5 => {
            use md5::Digest;
            let h = chunk_hashes(&|c| md5::Md5::digest(c).to_vec());
            md5::Md5::digest(&h).to_vec()
        }
        BuildId::Sha1 => {
            use sha1::Digest;
            let h = chunk_hashes(&|c| sha1::Sha1::digest(c).to_vec());
            sha1::Sha1::digest(&h).to_vec()
        }
        BuildId::Uuid => {
            let mut b = [0u8; 16];
            if let Ok(mut f) = fs::File::open("/dev/urandom") {
                use std::io::Read;
                let _ = f.read_exact(&mut b);
            }
            b[6] = (b[6] & 0x0f) | 0x40;
            b[8] = (b[8] & 0x3f) | 0x80;
            b.to_vec()
        }
    }
}
