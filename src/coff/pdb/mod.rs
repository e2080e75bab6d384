//! PDB output for lld-link's `/debug`: after the image is written, its section headers, its
//! CodeView debug record (GUID and age) and the link's public symbols become a PDB file that
//! debuggers and `llvm-pdbutil` read. Each stream has its own module (info and type streams
//! here, `dbi`, `gsi`, `strtab`); `msf` packs them into the container.
//!
//! What is written so far: the PDB info stream (GUID, age, `/names`, VC140), empty TPI and
//! IPI streams with their hash streams, the DBI stream without modules, publics, globals and
//! the section headers. Types, module symbols and line tables are not carried over yet.

mod dbi;
mod gsi;
mod msf;
pub mod strtab;
mod typeserver;

pub use typeserver::check as check_type_servers;

use std::path::{Component, Path, PathBuf};

use super::layout::Layout;
use super::resolve::Def;
use crate::error::{Error, Result};

/// Stream numbers of this writer's layout.
const S_INFO: usize = 1;
const S_TPI: usize = 2;
const S_DBI: usize = 3;
const S_IPI: usize = 4;
const S_NAMES: usize = 5;
const S_TPI_HASH: usize = 6;
const S_IPI_HASH: usize = 7;
const S_GLOBALS: usize = 8;
const S_PUBLICS: usize = 9;
const S_SYMS: usize = 10;
const S_SECHDR: usize = 11;
const NUM_STREAMS: usize = 12;

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
    let image = std::fs::read(&l.config.output).map_err(|e| Error::new(format!("cannot read {}: {}", l.config.output.display(), crate::io_error(&e))))?;
    let ch = &l.chunks[cv];
    let os = &l.osecs[ch.osec];
    let rec = (os.file_off + ch.rva - os.rva) as usize;
    let guid: [u8; 16] = image[rec + 4..rec + 20].try_into().unwrap_or([0; 16]);
    let age = u32_at(&image, rec + 20);
    let timestamp = u32_at(&image, u32_at(&image, 0x3c) as usize + 8);
    let sections = section_headers(&image);
    let mut streams = vec![Vec::new(); NUM_STREAMS];
    let names = strtab::StringTable::new();
    streams[S_INFO] = info_stream(guid, age, timestamp);
    streams[S_TPI] = type_stream_header(S_TPI_HASH as u16);
    streams[S_IPI] = type_stream_header(S_IPI_HASH as u16);
    streams[S_NAMES] = names.serialize();
    let g = gsi::build(publics(l));
    streams[S_GLOBALS] = g.globals;
    streams[S_PUBLICS] = g.publics;
    streams[S_SYMS] = g.sym_records;
    let dbi_sections: Vec<dbi::Section> = sections.chunks(40).map(|h| dbi::Section { chars: u32_at(h, 36), vsize: u32_at(h, 8) }).collect();
    let refs = dbi::StreamRefs { globals: S_GLOBALS as u16, publics: S_PUBLICS as u16, sym_records: S_SYMS as u16, section_headers: S_SECHDR as u16 };
    streams[S_DBI] = dbi::build(&refs, &dbi_sections, 0x8664);
    streams[S_SECHDR] = sections;
    let file = msf::build(&streams);
    write_file(path, &file)
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    crate::outfile::write_atomic(path, bytes).map_err(|e| Error::new(format!("cannot open {}: {}", path.display(), crate::io_error(&e))))
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

/// The PDB info stream: version VC70, signature, age, GUID, the named stream map (only
/// `/names`) and the VC140 feature (the PDB has an IPI stream).
fn info_stream(guid: [u8; 16], age: u32, signature: u32) -> Vec<u8> {
    let mut out = Vec::new();
    for v in [20000404u32, signature, age] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&guid);
    // Named stream map: the names, then a one-bucket hash table from name offset to stream.
    let names = b"/names\0";
    out.extend_from_slice(&(names.len() as u32).to_le_bytes());
    out.extend_from_slice(names);
    // size 1, capacity 1, present bit vector {0}, empty deleted bit vector, (key, value).
    for v in [1u32, 1, 1, 1, 0, 0, S_NAMES as u32] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&20140508u32.to_le_bytes()); // VC140
    out
}

/// A TPI or IPI stream header with no records (type indices start at 0x1000), naming its
/// (empty) hash stream.
fn type_stream_header(hash_stream: u16) -> Vec<u8> {
    let mut out = Vec::new();
    for v in [20040203u32, 56, 0x1000, 0x1000, 0] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&hash_stream.to_le_bytes());
    out.extend_from_slice(&0xffffu16.to_le_bytes());
    for v in [4u32, 0x3ffff, 0, 0, 0, 0, 0, 0] {
        out.extend_from_slice(&v.to_le_bytes());
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
