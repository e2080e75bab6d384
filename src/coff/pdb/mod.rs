//! PDB output for lld-link's `/debug`: after the image is written, its section headers, its
//! CodeView debug record (GUID and age), the objects' CodeView (types, symbols, line tables)
//! and the link's public symbols become a PDB file that debuggers and `llvm-pdbutil` read.
//! Each stream has its own module (`types` merges TPI/IPI, `modules` builds the module
//! streams and globals, `dbi`, `gsi`, `strtab`); `msf` packs them into the container. Streams
//! are numbered as lld-link numbers them.

mod cv;
mod dbi;
mod gsi;
mod modules;
mod msf;
pub mod strtab;
mod types;
mod typeserver;

pub use modules::check_checksums;
pub use typeserver::check as check_type_servers;

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use super::layout::model::Layout;
use super::symtab::{Def, Kind};
use crate::error::{Error, Result};

const S_INFO: usize = 1;
const S_TPI: usize = 2;
const S_DBI: usize = 3;
const S_IPI: usize = 4;
const S_LINKINFO: usize = 5;
const S_GLOBALS: usize = 6;
const S_PUBLICS: usize = 7;
const S_SYMS: usize = 8;

/// The PDB path as the image's debug record names it: `/pdbaltpath:` as given, otherwise
/// the PDB's absolute path with `.` and `..` components removed (lld's `remove_dots`).
pub fn cv_path(config: &super::config::CoffConfig) -> Option<String> {
    if !config.debug_pdb {
        return None;
    }
    if let Some(alt) = &config.pdb_altpath {
        return Some(alt.clone());
    }
    let p = config.pdb.as_ref()?;
    let abs = if p.is_absolute() { p.clone() } else { std::env::current_dir().map(|d| d.join(p)).unwrap_or_else(|_| p.clone()) };
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    Some(out.to_string_lossy().into_owned())
}

/// Writes the PDB for the image `l` describes, already written to `config.output`: the GUID
/// and age come from the image's CodeView record, the signature from its time stamp.
pub fn write(l: &Layout) -> Result<()> {
    let (Some(path), Some((_, cv))) = (l.config.pdb.as_deref(), l.debug_dir) else {
        return Ok(());
    };
    if !l.config.debug_pdb {
        return Ok(());
    }
    let image =
        std::fs::read(&l.config.output).map_err(|e| Error::new(format!("cannot read {}: {}", l.config.output.display(), crate::error::io_error(&e))))?;
    let ch = &l.chunks[cv];
    let os = &l.osecs[ch.osec];
    let rec = (os.file_off + ch.rva - os.rva) as usize;
    let guid: [u8; 16] = image[rec + 4..rec + 20].try_into().unwrap_or([0; 16]);
    let age = u32_at(&image, rec + 20);
    let timestamp = u32_at(&image, u32_at(&image, 0x3c) as usize + 8);
    let sections = section_headers(&image);
    let pdb_abs = modules::make_absolute(&path.to_string_lossy());

    // Modules: objects, imported DLLs, the linker.
    let mut merger = types::Merger::default();
    let mut names = strtab::StringTable::new();
    names.add(b"");
    let mut globals: Vec<Vec<u8>> = Vec::new();
    let mut warnings: Vec<String> = Vec::new();
    let mut mods: Vec<modules::Module> = Vec::new();
    let mut module_of: HashMap<usize, u16> = HashMap::new();
    {
        let mut sh = modules::Shared { merger: &mut merger, names: &mut names, globals: &mut globals, warnings: &mut warnings };
        for &f in &l.r.obj_order {
            if !matches!(l.r.files[f].kind, Kind::Obj(_)) {
                continue;
            }
            let imod = mods.len() as u16;
            module_of.insert(f, imod);
            mods.push(modules::object_module(l, f, imod, &mut sh));
        }
    }
    mods.extend(modules::import_modules(l, mods.len() as u16));
    let mut ec_names = strtab::StringTable::new();
    let pdb_ni = ec_names.add(pdb_abs.as_bytes());
    let linker = mods.len() as u16;
    mods.push(modules::linker_module(l, &pdb_abs, pdb_ni));
    let mut contribs = Vec::new();
    for os in &l.osecs {
        for &c in &os.chunks {
            if l.chunks[c].osec != usize::MAX {
                contribs.push(modules::chunk_contrib(l, c, linker, &|f| module_of.get(&f).copied().unwrap_or(linker)));
            }
        }
    }
    for w in &warnings {
        l.config.diag.warn(w);
    }

    // Stream numbers, in lld's order.
    let mut streams: Vec<Vec<u8>> = vec![Vec::new(); S_SYMS + 1];
    let g = gsi::build(publics(l), &globals);
    streams[S_GLOBALS] = g.globals;
    streams[S_PUBLICS] = g.publics;
    streams[S_SYMS] = g.sym_records;
    let add = |streams: &mut Vec<Vec<u8>>, data: Vec<u8>| {
        streams.push(data);
        (streams.len() - 1) as u16
    };
    let tpi_hash = if merger.tpi.is_empty() { 0xffff } else { add(&mut streams, Vec::new()) };
    let sechdr = add(&mut streams, sections.clone());
    let mut module_streams = Vec::new();
    for m in &mods {
        if m.has_stream() {
            let mut s = 4u32.to_le_bytes().to_vec();
            s.extend_from_slice(&m.symbols);
            s.extend_from_slice(&m.c13);
            s.extend_from_slice(&0u32.to_le_bytes());
            module_streams.push(add(&mut streams, s));
        } else {
            module_streams.push(0xffff);
        }
    }
    let names_stream = add(&mut streams, names.serialize());
    let ipi_hash = if merger.ipi.is_empty() { 0xffff } else { add(&mut streams, Vec::new()) };
    let (tpi, tpi_h) = types::serialize(&merger.tpi, tpi_hash);
    let (ipi, ipi_h) = types::serialize(&merger.ipi, ipi_hash);
    streams[S_TPI] = tpi;
    streams[S_IPI] = ipi;
    if tpi_hash != 0xffff {
        streams[tpi_hash as usize] = tpi_h;
    }
    if ipi_hash != 0xffff {
        streams[ipi_hash as usize] = ipi_h;
    }
    streams[S_INFO] = info_stream(guid, age, timestamp, names_stream as u32, !merger.ipi.is_empty());
    let dbi_sections: Vec<dbi::Section> = sections.chunks(40).map(|h| dbi::Section { chars: u32_at(h, 36), vsize: u32_at(h, 8) }).collect();
    let refs = dbi::StreamRefs { globals: S_GLOBALS as u16, publics: S_PUBLICS as u16, sym_records: S_SYMS as u16, section_headers: sechdr };
    let contents =
        dbi::Contents { modules: &mods, module_streams: &module_streams, contribs: &contribs, sections: &dbi_sections, ec_names: &ec_names, machine: 0x8664 };
    streams[S_DBI] = dbi::build(&refs, &contents);
    let file = msf::build(&streams);
    write_file(path, &file)
}

/// lld reports the file system's words, then that the PDB was not written.
fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    crate::outfile::write_atomic(path, bytes).map_err(|e| Error::many(vec![crate::error::io_error(&e), format!("failed to write PDB file {}", path.display())]))
}

fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}

/// The image's section header table (40 bytes per section).
fn section_headers(image: &[u8]) -> Vec<u8> {
    let pe = u32_at(image, 0x3c) as usize;
    let count = u16::from_le_bytes([image[pe + 6], image[pe + 7]]) as usize;
    let opt = u16::from_le_bytes([image[pe + 20], image[pe + 21]]) as usize;
    let start = pe + 24 + opt;
    image[start..start + 40 * count].to_vec()
}

/// The PDB info stream: version VC70, signature, age, GUID, the named stream map
/// (`/LinkInfo` and `/names`) and, when there are id records, the VC140 feature (LLVM's
/// readers see an IPI stream only then).
fn info_stream(guid: [u8; 16], age: u32, signature: u32, names_stream: u32, vc140: bool) -> Vec<u8> {
    let mut out = Vec::new();
    for v in [20000404u32, signature, age] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&guid);
    // Named stream map: the names, then a hash table from name offset to stream (LLVM's
    // `HashTable`: capacity 4 for two entries, linear probing on the 16-bit name hash).
    let entries: [(&[u8], u32, u32); 2] = [(b"/LinkInfo", 0, S_LINKINFO as u32), (b"/names", 10, names_stream)];
    let buf = b"/LinkInfo\0/names\0";
    out.extend_from_slice(&(buf.len() as u32).to_le_bytes());
    out.extend_from_slice(buf);
    let cap = 4usize;
    let mut slots: [Option<(u32, u32)>; 4] = [None; 4];
    for (name, off, stream) in entries {
        let mut i = (strtab::hash_v1(name) & 0xffff) as usize % cap;
        while slots[i].is_some() {
            i = (i + 1) % cap;
        }
        slots[i] = Some((off, stream));
    }
    let present: u32 = slots.iter().enumerate().filter(|(_, s)| s.is_some()).map(|(i, _)| 1u32 << i).sum();
    for v in [2u32, cap as u32, 1, present, 0] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for (k, v) in slots.iter().flatten() {
        out.extend_from_slice(&k.to_le_bytes());
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&0u32.to_le_bytes());
    if vc140 {
        out.extend_from_slice(&20140508u32.to_le_bytes());
    }
    out
}

/// lld's publics: every live external definition with a chunk (coverage counters left out),
/// a function when its COFF symbol says so (and import thunks).
fn publics(l: &Layout) -> Vec<gsi::Public> {
    let mut out = Vec::new();
    for (id, s) in l.r.symbols.iter().enumerate() {
        let function = match s.def {
            Def::Regular(f, idx) => l.r.obj(f).symbols[idx as usize].typ >> 4 == 2,
            Def::Common(..) | Def::LocalImport(_) | Def::ImportData(_) => false,
            Def::ImportThunk(_) => true,
            Def::Synthetic(_) => false,
            // `/guard:cf`'s tables (lld made them synthetic symbols).
            Def::Absolute(_) if l.guard.table_chunk(id).is_some() => false,
            _ => continue,
        };
        let name = s.name;
        if ["__profd_", "__profc_", "__covrec_"].iter().any(|p| name.starts_with(p)) {
            continue;
        }
        let Some(rva) = l.sym_rva(id) else { continue };
        let os = match (l.sym_chunk(id), s.def) {
            (Some(c), _) => &l.osecs[l.chunks[c].osec],
            // Bounds such as `__data_end__`: the section holding (or ending at) the address.
            (None, Def::Synthetic(_)) if rva != 0 => {
                match l.osecs.iter().find(|o| o.vsize > 0 && (o.rva as u64..=o.rva as u64 + o.vsize as u64).contains(&rva)) {
                    Some(o) => o,
                    None => continue,
                }
            }
            _ => continue,
        };
        out.push(gsi::Public { name: name.as_bytes().to_vec(), function, segment: os.index, offset: (rva - os.rva as u64) as u32 });
    }
    out
}
