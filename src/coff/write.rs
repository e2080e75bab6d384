//! Writing the PE32+ image.
//!
//! The layout decided everything; this fills bytes: the DOS stub and headers, each section's
//! chunks (gaps in code filled with `int3`), relocations applied in place (REL-style: addends
//! are already in the bytes), the synthesized tables (imports, exports, pseudo relocations,
//! base relocations, debug directory), the COFF symbol table that MinGW debuggers read, and
//! finally lld's build id: an xxh3 hash of the image stored in the CodeView record. The file is
//! a memory-mapped temporary next to the output, renamed into place on success.

use dtld_arch::coff_x86_64 as arch;
use object::pe;
use object::LittleEndian as LE;

use super::config::{CoffConfig, DebugMode};
use super::layout::model::{ChunkKind, Layout, CODE, DATA, DISCARD};
use super::symtab::{Def, Kind, SymRef};
use crate::error::{Error, Result};
use crate::output::{put16, put32, put64, MappedOutput, Wording};

const DOS_PROGRAM: [u8; 56] = [
    0x0e, 0x1f, 0xba, 0x0e, 0x00, 0xb4, 0x09, 0xcd, 0x21, 0xb8, 0x01, 0x4c, 0xcd, 0x21, 0x54, 0x68, 0x69, 0x73, 0x20, 0x70, 0x72, 0x6f, 0x67, 0x72, 0x61, 0x6d,
    0x20, 0x63, 0x61, 0x6e, 0x6e, 0x6f, 0x74, 0x20, 0x62, 0x65, 0x20, 0x72, 0x75, 0x6e, 0x20, 0x69, 0x6e, 0x20, 0x44, 0x4f, 0x53, 0x20, 0x6d, 0x6f, 0x64, 0x65,
    0x2e, 0x24, 0x00, 0x00,
];
const DOS_STUB_SIZE: usize = 64 + DOS_PROGRAM.len();

struct Symtab {
    syms: Vec<u8>,
    count: u32,
    strtab: Vec<u8>,
    /// Per output section: its string-table name offset (long discardable names).
    sec_names: Vec<Option<u32>>,
}

/// LLVM's `StringTableBuilder` for COFF (as lld uses it): strings sorted by their reversed
/// bytes, descending, so that a string that is a suffix of the previous one shares its bytes.
/// Offsets count the 4-byte size field.
fn finalize_strtab(names: &[String], table: &mut Vec<u8>, offsets: &mut std::collections::HashMap<String, u32>) {
    let mut uniq: Vec<&String> = names.iter().filter(|n| !offsets.contains_key(*n)).collect();
    uniq.sort_by(|a, b| b.bytes().rev().cmp(a.bytes().rev()));
    uniq.dedup();
    let mut prev: &str = "";
    for s in uniq {
        if prev.ends_with(s.as_str()) {
            let pos = table.len() + 4 - s.len() - 1;
            offsets.insert(s.clone(), pos as u32);
            continue;
        }
        offsets.insert(s.clone(), table.len() as u32 + 4);
        table.extend_from_slice(s.as_bytes());
        table.push(0);
        prev = s;
    }
}

/// lld's `createSymbolAndStringTable`.
fn build_symtab(l: &Layout) -> Symtab {
    let mut long: Vec<String> = Vec::new();
    // lld warns about the string table's long names unless it is writing DWARF or COFF symbols
    // (`/debug:dwarf`, `/debug:symtab`), which tools expect long names with, or is MinGW's.
    let warn = !l.config.mingw && (l.config.debug_pdb || l.config.debug == DebugMode::None);
    for o in &l.osecs {
        if o.name.len() > 8 && o.chars & DISCARD != 0 {
            if warn {
                l.config.diag.warn(&format!("section name {} is longer than 8 characters and will use a non-standard string table", o.name));
            }
            long.push(o.name.clone());
        }
    }
    // (name, value, section number, type, class)
    let mut entries: Vec<(&str, u32, i16, u16, u8)> = Vec::new();
    if l.config.debug != DebugMode::None && !l.config.pdb_no_symbols {
        let mut written = vec![false; l.r.symbols.len()];
        for &f in &l.r.obj_order {
            let file = &l.r.files[f];
            let Kind::Obj(obj) = &file.kind else { continue };
            for (i, sr) in file.syms.iter().enumerate() {
                let raw = &obj.symbols[i];
                match *sr {
                    SymRef::Global(id) => {
                        if written[id] {
                            continue;
                        }
                        let s = &l.r.symbols[id];
                        let (typ, class) = match s.def {
                            Def::Regular(df, di) | Def::Common(df, di, _) => {
                                let d = &l.r.obj(df).symbols[di as usize];
                                if d.class == pe::IMAGE_SYM_CLASS_LABEL {
                                    written[id] = true;
                                    continue;
                                }
                                (d.typ, d.class)
                            }
                            Def::ImportThunk(_) => (0x20, pe::IMAGE_SYM_CLASS_EXTERNAL),
                            Def::Undefined | Def::Lazy(..) | Def::Bitcode(..) => continue,
                            _ => (0, pe::IMAGE_SYM_CLASS_EXTERNAL),
                        };
                        written[id] = true;
                        if s.pseudo_reloc {
                            continue;
                        }
                        if let Def::Absolute(v) = s.def {
                            // `/guard:cf`'s counts and flags have new values; its tables are
                            // in `.rdata` (below).
                            match l.guard.value(id) {
                                Some(super::layout::model::GuardValue::Table(_)) => {}
                                Some(super::layout::model::GuardValue::Absolute(n)) => {
                                    entries.push((s.name, n as u32, -1, typ, class));
                                    continue;
                                }
                                None => {
                                    entries.push((s.name, v as u32, -1, typ, class));
                                    continue;
                                }
                            }
                        }
                        let Some(c) = l.sym_chunk(id) else { continue };
                        let Some(rva) = l.sym_rva(id) else { continue };
                        // A chunk of a section removed for being empty: lld writes no symbol.
                        let Some(os) = l.osecs.get(l.chunks[c].osec) else { continue };
                        entries.push((s.name, (rva as u32).wrapping_sub(os.rva), os.index as i16, typ, class));
                        if let Def::ImportThunk(imp) = s.def {
                            let n = format!("__imp_{}", super::idata::import(l.r, imp).symbol);
                            if let Some(iid) = l.r.find(&n) {
                                if !written[iid] {
                                    written[iid] = true;
                                    if let (Some(c), Some(rva)) = (l.sym_chunk(iid), l.sym_rva(iid)) {
                                        if let Some(os) = l.osecs.get(l.chunks[c].osec) {
                                            entries.push((
                                                l.r.symbols[iid].name,
                                                (rva as u32).wrapping_sub(os.rva),
                                                os.index as i16,
                                                0,
                                                pe::IMAGE_SYM_CLASS_EXTERNAL,
                                            ));
                                        }
                                    }
                                }
                            }
                        }
                    }
                    SymRef::Local { sec, value } => {
                        if raw.secdef.is_some() || raw.class == pe::IMAGE_SYM_CLASS_LABEL {
                            continue;
                        }
                        let Some(c) = l.sec_chunk[f].get((sec as usize).wrapping_sub(1)).copied().flatten() else { continue };
                        let Some(os) = l.osecs.get(l.chunks[c].osec) else { continue };
                        entries.push((raw.name, l.chunks[c].rva.wrapping_add(value).wrapping_sub(os.rva), os.index as i16, raw.typ, raw.class));
                    }
                    SymRef::Absolute(v) => entries.push((raw.name, v, -1, raw.typ, raw.class)),
                    SymRef::None => {}
                }
            }
        }
    }
    // Section names first, then symbol names, each block in LLVM's tail-merged order.
    let mut strtab = Vec::new();
    let mut offsets = std::collections::HashMap::new();
    finalize_strtab(&long, &mut strtab, &mut offsets);
    let names: Vec<String> = entries.iter().filter(|e| e.0.len() > 8).map(|e| e.0.to_string()).collect();
    finalize_strtab(&names, &mut strtab, &mut offsets);
    let sec_names = l.osecs.iter().map(|o| (o.name.len() > 8 && o.chars & DISCARD != 0).then(|| offsets[&o.name])).collect();
    let mut syms = Vec::with_capacity(entries.len() * 18);
    for (name, value, secnum, typ, class) in &entries {
        let mut e = [0u8; 18];
        if name.len() > 8 {
            put32(&mut e, 4, offsets[*name]);
        } else {
            e[..name.len()].copy_from_slice(name.as_bytes());
        }
        put32(&mut e, 8, *value);
        put16(&mut e, 12, *secnum as u16);
        put16(&mut e, 14, *typ);
        e[16] = *class;
        syms.extend_from_slice(&e);
    }
    Symtab { syms, count: entries.len() as u32, strtab, sec_names }
}

/// Without a `_load_config_used` definition, what needs one has no effect: lld's
/// `SymbolTable::initializeLoadConfig` warns before the image is laid out.
pub fn warn_missing_load_config(config: &super::config::CoffConfig, r: &super::symtab::Resolved) {
    if r.find("_load_config_used").is_some_and(|id| matches!(r.symbols[id].def, Def::Regular(..))) {
        return;
    }
    if config.guard_cf {
        config.diag.warn("Control Flow Guard is enabled but '_load_config_used' is missing");
    }
    if config.dependent_load_flags != 0 {
        config.diag.warn("_load_config_used not found, /dependentloadflag will have no effect");
    }
}

/// lld's checks of `_load_config_used` (`writeHeader`'s errors, then `checkLoadConfig`'s
/// warnings): where it is, what its first field (the structure's size) says, and whether it
/// holds the fields `/dependentloadflag` needs. Returns its RVA and size (`/guard:cf`'s fields
/// are checked once the image holds them, `guardcf::check_load_config`).
fn check_load_config(l: &Layout) -> Result<Option<(u32, u32)>> {
    let config = l.config;
    let lc = l.r.find("_load_config_used").filter(|&id| matches!(l.r.symbols[id].def, Def::Regular(..)));
    let (Some(id), Some(c)) = (lc, lc.and_then(|id| l.sym_chunk(id))) else {
        return Ok(None);
    };
    let Def::Regular(f, i) = l.r.symbols[id].def else { return Ok(None) };
    let off = l.r.obj(f).symbols[i as usize].value;
    let ch = &l.chunks[c];
    if !ch.has_data {
        return Err(Error::new("_load_config_used points to uninitialized data"));
    }
    if off as u64 + 4 > ch.size as u64 {
        return Err(Error::new("_load_config_used section chunk is too small"));
    }
    let data = match ch.kind {
        ChunkKind::Section { file, sec } => l.r.obj(file).sections[sec as usize].data,
        _ => &[],
    };
    let size = data.get(off as usize..off as usize + 4).map_or(0, |v| u32::from_le_bytes(v.try_into().unwrap()));
    if off as u64 + size as u64 > ch.size as u64 {
        return Err(Error::new("_load_config_used specifies a size larger than its containing section chunk"));
    }
    if ch.align < 8 {
        config.diag.warn(&format!("'_load_config_used' is misaligned (expected alignment to be 8 bytes, got {} instead)", ch.align));
    } else if !off.is_multiple_of(8) {
        config.diag.warn(&format!("'_load_config_used' is misaligned (section offset is {off:#x} not aligned to 8 bytes)"));
    }
    // DependentLoadFlags: the u16 at 78 of the 64-bit structure.
    if config.dependent_load_flags != 0 && size < 80 {
        config.diag.warn("'_load_config_used' structure too small to include DependentLoadFlags");
    }
    Ok(Some((ch.rva + off, size)))
}

pub fn write(l: &Layout) -> Result<()> {
    let config = l.config;
    let load_config = check_load_config(l)?;
    let out_path = &config.output;
    let st = build_symtab(l);
    let has_symtab = st.count != 0 || !st.strtab.is_empty();
    let mut total = l.file_size as u64;
    let symtab_off = total;
    if has_symtab {
        total += st.syms.len() as u64 + 4 + st.strtab.len() as u64;
        total = total.div_ceil(config.file_align as u64) * config.file_align as u64;
    }
    let mut out = MappedOutput::create(out_path, total, Wording::Coff)?;
    let buf: &mut [u8] = &mut out.map;
    write_headers(l, buf, if has_symtab { Some((symtab_off as u32, st.count)) } else { None }, &st.sec_names);
    let mut errors = Vec::new();
    write_sections(l, buf, &mut errors);
    if !errors.is_empty() {
        // (Diag separates a multi-line message from the next by a blank line, as lld.)
        return Err(Error::many(errors));
    }
    if let Some((rva, size)) = load_config {
        let at = l.osecs.iter().find(|os| os.rva <= rva && rva < os.rva + os.raw_size).map(|os| (os.file_off + rva - os.rva) as usize);
        if let Some(o) = at {
            if config.dependent_load_flags != 0 && size >= 80 && o + 80 <= buf.len() {
                put16(buf, o + 78, config.dependent_load_flags);
            }
            super::guardcf::check_load_config(l, &buf[o..buf.len().min(o + size as usize)], size);
        }
    }
    if has_symtab {
        let o = symtab_off as usize;
        buf[o..o + st.syms.len()].copy_from_slice(&st.syms);
        let s = o + st.syms.len();
        put32(buf, s, st.strtab.len() as u32 + 4);
        buf[s + 4..s + 4 + st.strtab.len()].copy_from_slice(&st.strtab);
    }
    sort_pdata(l, buf)?;
    fix_tls_alignment(l, buf);
    // Build id and time stamp (lld's writeBuildId).
    let timestamp =
        config.timestamp.unwrap_or_else(|| std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as u32).unwrap_or(0));
    if let Some((dd, cv)) = l.debug_dir {
        let hash = xxhash_rust::xxh3::xxh3_64(buf);
        let off = chunk_off(l, cv);
        buf[off..off + 4].copy_from_slice(b"RSDS");
        buf[off + 4..off + 12].copy_from_slice(&hash.to_le_bytes());
        buf[off + 12..off + 20].copy_from_slice(b"LLD PDB.");
        put32(buf, off + 20, 1);
        if let Some(p) = super::pdb::cv_path(config) {
            buf[off + 24..off + 24 + p.len()].copy_from_slice(p.as_bytes());
        }
        put32(buf, chunk_off(l, dd) + 4, timestamp);
    }
    put32(buf, DOS_STUB_SIZE + 4 + 4, timestamp);
    // lld-link's outputs are 0755 whatever the umask.
    out.finish(0o755)
}

fn chunk_off(l: &Layout, c: usize) -> usize {
    let ch = &l.chunks[c];
    let os = &l.osecs[ch.osec];
    (os.file_off + ch.rva - os.rva) as usize
}

/// The PE headers: DOS stub, COFF file header, optional header with its data directories, and
/// the section table (`sec_names`: string-table offsets of long section names).
fn write_headers(l: &Layout, b: &mut [u8], symtab: Option<(u32, u32)>, sec_names: &[Option<u32>]) {
    write_dos_stub(b);
    let o = DOS_STUB_SIZE;
    b[o..o + 4].copy_from_slice(b"PE\0\0");
    let file_header = o + 4;
    write_file_header(l, b, file_header, symtab);
    let optional = file_header + 20;
    write_optional_header(l, b, optional);
    let dir = optional + 112;
    write_data_directories(l, b, dir);
    write_section_table(l, b, dir + 16 * 8, sec_names);
}

/// The MS-DOS header and stub program, pointing at the PE signature.
fn write_dos_stub(b: &mut [u8]) {
    b[0] = b'M';
    b[1] = b'Z';
    put16(b, 2, (DOS_STUB_SIZE % 512) as u16);
    put16(b, 4, DOS_STUB_SIZE.div_ceil(512) as u16);
    put16(b, 8, 4);
    put16(b, 0x18, 64);
    put32(b, 0x3c, DOS_STUB_SIZE as u32);
    b[64..64 + DOS_PROGRAM.len()].copy_from_slice(&DOS_PROGRAM);
}

/// The COFF file header at `o`: machine, section count, COFF symbol table (MinGW's debug
/// builds) and characteristics.
fn write_file_header(l: &Layout, b: &mut [u8], o: usize, symtab: Option<(u32, u32)>) {
    let c = l.config;
    put16(b, o, pe::IMAGE_FILE_MACHINE_AMD64);
    put16(b, o + 2, l.osecs.len() as u16);
    if let Some((off, n)) = symtab {
        put32(b, o + 8, off);
        put32(b, o + 12, n);
    }
    put16(b, o + 16, 112 + 16 * 8);
    let mut ch = pe::IMAGE_FILE_EXECUTABLE_IMAGE;
    if c.large_address_aware {
        ch |= pe::IMAGE_FILE_LARGE_ADDRESS_AWARE;
    }
    if c.dll {
        ch |= pe::IMAGE_FILE_DLL;
    }
    if !c.relocatable() {
        ch |= pe::IMAGE_FILE_RELOCS_STRIPPED;
    }
    ch |= c.swaprun;
    if c.driver.is_some_and(|(_, uponly)| uponly) {
        ch |= pe::IMAGE_FILE_UP_SYSTEM_ONLY;
    }
    put16(b, o + 18, ch);
}

/// The PE32+ optional header at `p`, up to (not including) its data directories.
fn write_optional_header(l: &Layout, b: &mut [u8], p: usize) {
    let c = l.config;
    put16(b, p, 0x20b);
    b[p + 2] = 14;
    let text = l.osecs.iter().find(|s| s.name == ".text" && s.chars & CODE != 0);
    if let Some(t) = text {
        put32(b, p + 4, t.raw_size);
        put32(b, p + 20, t.rva);
    }
    let init: u32 = l.osecs.iter().filter(|s| s.chars & DATA != 0).map(|s| s.raw_size).sum();
    put32(b, p + 8, init);
    if let Some(e) = l.r.entry {
        if !c.no_entry {
            put32(b, p + 16, l.sym_rva(e).unwrap_or(0) as u32);
        }
    }
    put64(b, p + 24, l.image_base);
    put32(b, p + 32, c.section_align);
    put32(b, p + 36, c.file_align);
    let (osma, osmi) = c.os_version();
    put16(b, p + 40, osma);
    put16(b, p + 42, osmi);
    put16(b, p + 44, c.image_version.0);
    put16(b, p + 46, c.image_version.1);
    let (ssma, ssmi) = c.subsystem_version();
    put16(b, p + 48, ssma);
    put16(b, p + 50, ssmi);
    put32(b, p + 56, l.size_of_image);
    put32(b, p + 60, l.size_of_headers);
    put16(b, p + 68, l.r.subsystem);
    put16(b, p + 70, dll_characteristics(c));
    put64(b, p + 72, c.stack.0);
    put64(b, p + 80, c.stack.1);
    put64(b, p + 88, c.heap.0);
    put64(b, p + 96, c.heap.1);
    put32(b, p + 108, 16);
}

/// The optional header's DllCharacteristics, from the command line.
fn dll_characteristics(c: &CoffConfig) -> u16 {
    let mut dc = 0u16;
    if c.dynamic_base {
        dc |= pe::IMAGE_DLLCHARACTERISTICS_DYNAMIC_BASE;
    }
    if c.high_entropy_va {
        dc |= pe::IMAGE_DLLCHARACTERISTICS_HIGH_ENTROPY_VA;
    }
    if c.nx_compat {
        dc |= pe::IMAGE_DLLCHARACTERISTICS_NX_COMPAT;
    }
    if c.tsaware && !c.dll {
        dc |= pe::IMAGE_DLLCHARACTERISTICS_TERMINAL_SERVER_AWARE;
    }
    if !c.allow_bind {
        dc |= pe::IMAGE_DLLCHARACTERISTICS_NO_BIND;
    }
    if !c.allow_isolation {
        dc |= pe::IMAGE_DLLCHARACTERISTICS_NO_ISOLATION;
    }
    if c.appcontainer {
        dc |= pe::IMAGE_DLLCHARACTERISTICS_APPCONTAINER;
    }
    if c.integrity_check {
        dc |= pe::IMAGE_DLLCHARACTERISTICS_FORCE_INTEGRITY;
    }
    if c.driver.is_some_and(|(wdm, _)| wdm) {
        dc |= pe::IMAGE_DLLCHARACTERISTICS_WDM_DRIVER;
    }
    if c.guard_cf {
        dc |= pe::IMAGE_DLLCHARACTERISTICS_GUARD_CF;
    }
    dc
}

/// The 16 data directories at `dir`: exports, imports, resources, exceptions, base
/// relocations, debug, TLS, load config and IAT.
fn write_data_directories(l: &Layout, b: &mut [u8], dir: usize) {
    let set_dir = |b: &mut [u8], i: usize, rva: u32, size: u32| {
        put32(b, dir + 8 * i, rva);
        put32(b, dir + 8 * i + 4, size);
    };
    if let Some(e) = l.edata_chunk {
        set_dir(b, 0, l.chunks[e].rva, l.chunks[e].size);
    } else {
        // Literal `.edata` sections of the objects (lld's `edataStart`..`edataEnd`).
        let literal = l.chunks.iter().filter(|c| match c.kind {
            ChunkKind::Section { file, sec } => {
                let n = l.r.obj(file).sections[sec as usize].name;
                c.osec != usize::MAX && (n == ".edata" || n.starts_with(".edata$"))
            }
            _ => false,
        });
        let range = literal.fold(None, |acc: Option<(u32, u32)>, c| Some(acc.map_or((c.rva, c.rva + c.size), |(a, z)| (a.min(c.rva), z.max(c.rva + c.size)))));
        if let Some((a, z)) = range {
            set_dir(b, 0, a, z - a);
        }
    }
    if let Some((c0, size)) = l.import_dir {
        set_dir(b, 1, l.chunks[c0].rva, size);
    }
    if let Some(rs) = l.osecs.iter().find(|s| s.name == ".rsrc") {
        set_dir(b, 2, rs.rva, rs.vsize);
    }
    if let Some((a, z)) = l.pdata {
        set_dir(b, 3, l.chunks[a].rva, l.chunks[z].rva + l.chunks[z].size - l.chunks[a].rva);
    }
    if let Some(rc) = l.reloc_chunk {
        let os = &l.osecs[l.chunks[rc].osec];
        set_dir(b, 5, os.rva, os.vsize);
    }
    if let Some((dd, _)) = l.debug_dir {
        set_dir(b, 6, l.chunks[dd].rva, 28);
    }
    if let Some(t) = l.r.find("_tls_used") {
        if let Some(rva) = l.sym_rva(t).filter(|_| !matches!(l.r.symbols[t].def, Def::Undefined | Def::Lazy(..))) {
            set_dir(b, 9, rva as u32, 40);
        }
    }
    if let Some(lc) = l.r.find("_load_config_used") {
        // The size is the structure's first field, read from the input section (lld's
        // load-config directory; the image is not filled in yet).
        if let (Def::Regular(f, i), Some(rva)) = (l.r.symbols[lc].def, l.sym_rva(lc)) {
            let s = &l.r.obj(f).symbols[i as usize];
            let data = usize::try_from(s.section).ok().and_then(|k| k.checked_sub(1)).map_or(&[][..], |k| l.r.obj(f).sections[k].data);
            let off = s.value as usize;
            let size = data.get(off..off + 4).map_or(0, |v| u32::from_le_bytes(v.try_into().unwrap()));
            set_dir(b, 10, rva as u32, size);
        }
    }
    if let Some((c0, size)) = l.iat {
        set_dir(b, 12, l.chunks[c0].rva, size);
    }
}

/// The section table at `s`; names longer than 8 bytes as `/offset` into the string table.
fn write_section_table(l: &Layout, b: &mut [u8], mut s: usize, sec_names: &[Option<u32>]) {
    for (i, os) in l.osecs.iter().enumerate() {
        match sec_names[i] {
            Some(off) => {
                let n = format!("/{off}");
                b[s..s + n.len()].copy_from_slice(n.as_bytes());
            }
            None => {
                let n = os.name.as_bytes();
                let len = n.len().min(8);
                b[s..s + len].copy_from_slice(&n[..len]);
            }
        }
        put32(b, s + 8, os.vsize);
        put32(b, s + 12, os.rva);
        put32(b, s + 16, os.raw_size);
        put32(b, s + 20, os.file_off);
        put32(b, s + 36, os.chars);
        s += 40;
    }
}

fn rva_to_off(l: &Layout, rva: u32) -> Option<usize> {
    let os = l.osecs.iter().find(|o| rva >= o.rva && rva < o.rva + o.raw_size)?;
    Some((os.file_off + rva - os.rva) as usize)
}

fn write_sections(l: &Layout, b: &mut [u8], errors: &mut Vec<String>) {
    let r = l.r;
    for os in &l.osecs {
        if os.raw_size == 0 {
            continue;
        }
        let base = os.file_off as usize;
        if os.chars & CODE != 0 {
            let mut prev = 0usize;
            for &c in &os.chunks {
                let off = (l.chunks[c].rva - os.rva) as usize;
                if off > prev && off <= os.raw_size as usize {
                    b[base + prev..base + off].fill(0xcc);
                }
                prev = prev.max(off + l.chunks[c].size as usize);
            }
            if prev < os.raw_size as usize {
                b[base + prev..base + os.raw_size as usize].fill(0xcc);
            }
        }
        for &c in &os.chunks {
            let ch = &l.chunks[c];
            if !ch.has_data || ch.size == 0 {
                continue;
            }
            let off = base + (ch.rva - os.rva) as usize;
            let out = &mut b[off..off + ch.size as usize];
            match ch.kind {
                ChunkKind::Section { file, sec } => {
                    let obj = r.obj(file);
                    let s = &obj.sections[sec as usize];
                    let n = s.data.len().min(out.len());
                    out[..n].copy_from_slice(&s.data[..n]);
                    for rel in s.relocs {
                        let ty = rel.typ.get(LE);
                        let va = rel.virtual_address.get(LE) as usize;
                        let idx = rel.symbol_table_index.get(LE) as usize;
                        let Some(kind) = arch::kind(ty) else {
                            errors.push(format!("unsupported relocation type {:#x} in {}", ty, r.files[file].name));
                            continue;
                        };
                        let target = match l.target(file, idx) {
                            Some(t) => Some(t),
                            // `/force:unresolved`: lld made the symbol absolute 0.
                            None if l.config.force_unresolved
                                && matches!(r.files[file].syms.get(idx), Some(SymRef::Global(id)) if r.symbols[*id].def == Def::Undefined) =>
                            {
                                Some((0u64.wrapping_sub(l.image_base), None, true))
                            }
                            None => None,
                        };
                        let Some((srva, schunk, abs)) = target else {
                            if let Some(m) = super::locations::discarded_reference(r, file, s.name, idx, l.config.mingw, l.config.demangle) {
                                errors.push(m);
                            }
                            continue;
                        };
                        let (section_rva, section_index) = l.target_section(schunk);
                        if kind == arch::CoffRelKind::SecRel && section_rva.is_none() {
                            if s.name.starts_with(".debug") {
                                continue;
                            }
                            errors.push("SECREL relocation cannot be applied to absolute symbols".into());
                            continue;
                        }
                        if let (arch::CoffRelKind::SecRel, Some(base)) = (kind, section_rva) {
                            // lld adds a symbol's value to its chunk's RVA in 32 bits: a value
                            // that wraps below its output section is out of the section's reach.
                            if (srva as u32 as u64).wrapping_sub(base) > u64::from(u32::MAX) {
                                errors.push(format!("overflow in SECREL relocation in section: {}", s.name));
                                continue;
                            }
                        }
                        let place = arch::Place { p: ch.rva as u64 + va as u64, image_base: l.image_base, section_rva, section_index };
                        if va + arch::width(kind) > out.len() {
                            continue;
                        }
                        if !arch::apply(kind, &mut out[va..], srva, place) {
                            // lld does not range-check REL32 against absolute symbols (the
                            // CFG tables' `__guard_fids_table` and similar): it truncates.
                            if let (true, arch::CoffRelKind::Rel32 { extra }) = (abs, kind) {
                                let v = srva.wrapping_sub(place.p).wrapping_sub(4 + extra as u64) as u32;
                                let f = &mut out[va..va + 4];
                                let old = u32::from_le_bytes([f[0], f[1], f[2], f[3]]);
                                f.copy_from_slice(&old.wrapping_add(v).to_le_bytes());
                            } else {
                                errors.push(format!("{}: relocation {} out of range", r.files[file].name, arch::name(ty)));
                            }
                        }
                    }
                }
                ChunkKind::ImportThunk(f) => {
                    let iat = l.address_chunk.iter().find(|x| x.0 == f).map(|x| l.chunks[x.1].rva).unwrap_or(0);
                    out.copy_from_slice(&arch::import_thunk(ch.rva, iat));
                }
                ChunkKind::Lookup(f) | ChunkKind::Address(f) => {
                    let imp = super::idata::import(r, f);
                    let hint = l.chunks.iter().find(|x| x.kind == ChunkKind::HintName(f)).map(|x| x.rva).unwrap_or(0);
                    out.copy_from_slice(&super::idata::lookup_entry(imp, hint).to_le_bytes());
                }
                ChunkKind::HintName(f) => {
                    if let Some(h) = super::idata::hint_name(super::idata::import(r, f)) {
                        out.copy_from_slice(&h);
                    }
                }
                ChunkKind::DllName(d) => {
                    let n = l.dlls[d].dll.as_bytes();
                    out[..n.len()].copy_from_slice(n);
                }
                ChunkKind::ImportDir(d) => {
                    let first = l.dlls[d].entries[0];
                    let lookup = l.chunks.iter().find(|x| x.kind == ChunkKind::Lookup(first)).map(|x| x.rva).unwrap_or(0);
                    let iat = l.address_chunk.iter().find(|x| x.0 == first).map(|x| l.chunks[x.1].rva).unwrap_or(0);
                    out.copy_from_slice(&super::idata::directory(lookup, l.chunks[l.dll_name_chunk[d]].rva, iat));
                }
                ChunkKind::LocalImport(id) => {
                    if let Def::LocalImport(t) = r.symbols[id].def {
                        let v = l.sym_rva(t).unwrap_or(0).wrapping_add(l.image_base);
                        out.copy_from_slice(&v.to_le_bytes());
                    }
                }
                ChunkKind::PseudoTable => out.copy_from_slice(&super::pseudoreloc::table(&l.pseudo)),
                ChunkKind::Sentinel(v) => out.copy_from_slice(&v.to_le_bytes()),
                ChunkKind::DebugDir => {
                    let cv = l.debug_dir.unwrap().1;
                    put32(out, 12, 2); // IMAGE_DEBUG_TYPE_CODEVIEW
                    put32(out, 16, l.chunks[cv].size);
                    put32(out, 20, l.chunks[cv].rva);
                    let cos = &l.osecs[l.chunks[cv].osec];
                    put32(out, 24, cos.file_off + l.chunks[cv].rva - cos.rva);
                }
                ChunkKind::Edata => {
                    let e = super::exports::write_edata(&l.dll_name, &l.exports, ch.rva);
                    let n = e.len().min(out.len());
                    out[..n].copy_from_slice(&e[..n]);
                }
                ChunkKind::Reloc => out.copy_from_slice(&l.reloc),
                ChunkKind::Merge(k) => out.copy_from_slice(&l.merged[k].0),
                ChunkKind::GuardTable(k) => {
                    for (i, rva) in l.guard.rvas(l, k).into_iter().enumerate() {
                        put32(out, 4 * i, rva);
                    }
                }
                _ => {}
            }
        }
    }
}

/// lld's `sortExceptionTable`: `.pdata` entries by function start.
fn sort_pdata(l: &Layout, b: &mut [u8]) -> Result<()> {
    let Some((a, z)) = l.pdata else { return Ok(()) };
    // An empty `.pdata` was removed with the other empty sections.
    if l.osecs.get(l.chunks[a].osec).is_none() || l.osecs.get(l.chunks[z].osec).is_none() {
        return Ok(());
    }
    let start = chunk_off(l, a);
    let end = chunk_off(l, z) + l.chunks[z].size as usize;
    if end < start || end > b.len() {
        return Err(Error::new(format!("unexpected .pdata layout: {start:#x}..{end:#x}")));
    }
    if !(end - start).is_multiple_of(12) {
        return Err(Error::new(format!("unexpected .pdata size: {} is not a multiple of 12", end - start)));
    }
    let mut entries: Vec<[u8; 12]> = b[start..end].chunks(12).map(|c| c.try_into().unwrap()).collect();
    entries.sort_by_key(|e| u32::from_le_bytes(e[0..4].try_into().unwrap()));
    for (i, e) in entries.iter().enumerate() {
        b[start + 12 * i..start + 12 * i + 12].copy_from_slice(e);
    }
    Ok(())
}

/// lld's `fixTlsAlignment`: the TLS directory's alignment field from the largest `.tls` chunk.
fn fix_tls_alignment(l: &Layout, b: &mut [u8]) {
    let mut align = 0u32;
    for c in &l.chunks {
        if let ChunkKind::Section { file, sec } = c.kind {
            if l.r.obj(file).sections[sec as usize].name.starts_with(".tls") {
                align = align.max(c.align);
            }
        }
    }
    if align == 0 {
        return;
    }
    let Some(t) = l.r.find("_tls_used") else { return };
    let Some(rva) = l.sym_rva(t) else { return };
    let Some(off) = rva_to_off(l, rva as u32) else { return };
    if off + 40 > b.len() {
        return;
    }
    let ch = u32::from_le_bytes(b[off + 36..off + 40].try_into().unwrap());
    let bits = (align.trailing_zeros() + 1) << 20;
    put32(b, off + 36, (ch & !0x00F0_0000) | bits);
}
