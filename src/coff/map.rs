//! `/lldmap[:file]` (MinGW's `-Map <file>`): lld's COFF map (`lld/COFF/LLDMapFile.cpp`).
//!
//! ```text
//! Address  Size     Align Out     In      Symbol
//! 00001000 00006cd0  4096 .text
//! 00001530 00000084    16         main.o:(.text)
//! 00001530 00000000     0                 main
//! ```
//!
//! One line per output section (RVA, virtual size, and lld's page size 4096 as alignment, not
//! the section alignment), then one per section chunk (RVA, size, alignment, the file's name as
//! lld's `getName()` gives it — the path as given, or the archive member's name — and the input
//! section's full name). Chunks the linker makes (import tables and thunks, commons, sentinels,
//! the export table, ...) are not listed. Under each section chunk come its symbols, sorted by
//! RVA with a stable sort (size and alignment 0): every symbol-table entry of every object file,
//! in object order, that is a regular definition — its own static symbols (not the section
//! definitions), and each external it defines *or refers to* that ends up defined in an input
//! section. lld walks the files' symbol tables, so a global is listed once per object that names
//! it; dtld keeps that, so the map is byte-identical to lld's.

use std::collections::HashMap;
use std::path::Path;

use super::demangle::display as demangle;
use super::layout::model::{ChunkKind, Layout};
use super::symtab::{Def, Kind, SymRef};
use crate::error::{Error, Result};

/// lld's COFF `pageSize`: the alignment printed for every output section.
const PAGE_SIZE: u32 = 4096;

/// Writes the map of `l` to `path`; an unwritable path fails the link (lld's `fatal`).
pub fn write_lldmap(l: &Layout, path: &Path) -> Result<()> {
    let text = lldmap_text(l);
    let fail = |e: std::io::Error| Error::new(format!("cannot open {}: {}", path.display(), crate::error::io_error(&e)));
    if path.as_os_str() == "-" {
        // LLVM's `raw_fd_ostream` reads `-` as standard output.
        return std::io::Write::write_all(&mut std::io::stdout().lock(), text.as_bytes()).map_err(fail);
    }
    crate::outfile::write_atomic(path, text.as_bytes()).map_err(fail)
}

/// The map as text.
pub fn lldmap_text(l: &Layout) -> String {
    // (chunk) → (RVA, name), in lld's collection order, then stably sorted by RVA.
    let mut syms: HashMap<usize, Vec<(u64, String)>> = HashMap::new();
    for &f in &l.r.obj_order {
        let Kind::Obj(obj) = &l.r.files[f].kind else { continue };
        for (i, r) in l.r.files[f].syms.iter().enumerate() {
            let (chunk, value, name) = match *r {
                SymRef::Global(id) => {
                    let s = &l.r.symbols[id];
                    let Def::Regular(df, di) = s.def else { continue };
                    let Kind::Obj(dobj) = &l.r.files[df].kind else { continue };
                    let d = &dobj.symbols[di as usize];
                    let Some(c) = (d.section as usize).checked_sub(1).and_then(|k| l.sec_chunk[df].get(k).copied().flatten()) else { continue };
                    (c, d.value, s.name)
                }
                SymRef::Local { sec, value } => {
                    let s = &obj.symbols[i];
                    // COFFSymbolRef::isSectionDefinition: a static symbol with aux entries.
                    if s.class == ::object::pe::IMAGE_SYM_CLASS_STATIC && s.naux > 0 {
                        continue;
                    }
                    let Some(c) = (sec as usize).checked_sub(1).and_then(|k| l.sec_chunk[f].get(k).copied().flatten()) else { continue };
                    (c, value, s.name)
                }
                SymRef::None | SymRef::Absolute(_) => continue,
            };
            syms.entry(chunk).or_default().push((l.chunks[chunk].rva as u64 + value as u64, demangle(name, l.config.demangle)));
        }
    }
    for v in syms.values_mut() {
        v.sort_by_key(|s| s.0);
    }

    let mut out = String::from("Address  Size     Align Out     In      Symbol\n");
    let head = |out: &mut String, addr: u64, size: u64, align: u64| out.push_str(&format!("{addr:08x} {size:08x} {align:5} "));
    for o in &l.osecs {
        head(&mut out, o.rva as u64, o.vsize as u64, PAGE_SIZE as u64);
        out.push_str(&o.name);
        out.push('\n');
        for &c in &o.chunks {
            let ch = &l.chunks[c];
            let ChunkKind::Section { file, sec } = ch.kind else { continue };
            head(&mut out, ch.rva as u64, ch.size as u64, ch.align as u64);
            let fname = &l.r.files[file].obj_name;
            out.push_str(&format!("        {fname}:({})\n", l.r.obj(file).sections[sec as usize].name));
            for (rva, name) in syms.get(&c).map(Vec::as_slice).unwrap_or(&[]) {
                head(&mut out, *rva, 0, 0);
                out.push_str("                ");
                out.push_str(name);
                out.push('\n');
            }
        }
    }
    out
}
