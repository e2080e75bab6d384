//! The PDB's modules: one per object file with its CodeView carried over (lld's `PDBLinker::
//! addDebug`), one pair per imported DLL with the import thunks, and the `* Linker *` module
//! with the output sections. For an object, each live `.debug$S` section is relocated like
//! an output section would be, then split into subsections: symbol records are renumbered
//! into the merged type streams and go to the module stream (with their scopes' parent/end
//! offsets rewritten) or to the globals stream (data, constants, typedefs, and a procedure
//! reference for every procedure); line and inlinee-line tables are copied; the file checksum
//! table is rewritten to name files by their offset in the PDB's `/names` table.

use std::path::{Component, Path, PathBuf};

use dtld_arch::coff_x86_64 as arch;
use object::LittleEndian as LE;

use super::cv::{self, u16_at, u32_at};
use super::strtab::StringTable;
use super::types::{jam_crc, IndexMap, Merger, NOT_TRANSLATED};
use crate::coff::layout::model::{ChunkKind, Layout};
use crate::coff::symtab::{ChunkSrc, FileId, Kind};

/// A section contribution (DBI's `SectionContrib`).
#[derive(Clone, Copy)]
pub struct Contrib {
    pub isect: u16,
    pub off: u32,
    pub size: u32,
    pub chars: u32,
    pub imod: u16,
    pub data_crc: u32,
}

impl Contrib {
    /// lld's contribution for "no chunk".
    pub fn none() -> Contrib {
        Contrib { isect: 0xffff, off: 0, size: u32::MAX, chars: 0, imod: 0xffff, data_crc: 0 }
    }

    pub fn bytes(&self) -> [u8; 28] {
        let mut b = [0u8; 28];
        b[0..2].copy_from_slice(&self.isect.to_le_bytes());
        b[4..8].copy_from_slice(&self.off.to_le_bytes());
        b[8..12].copy_from_slice(&self.size.to_le_bytes());
        b[12..16].copy_from_slice(&self.chars.to_le_bytes());
        b[16..18].copy_from_slice(&self.imod.to_le_bytes());
        b[20..24].copy_from_slice(&self.data_crc.to_le_bytes());
        b
    }
}

/// One module of the DBI stream and its symbol stream's contents.
pub struct Module {
    pub name: Vec<u8>,
    pub obj_name: Vec<u8>,
    pub contrib: Contrib,
    /// Symbol records (the stream's 4-byte signature not included).
    pub symbols: Vec<u8>,
    /// C13 subsections, serialized.
    pub c13: Vec<u8>,
    pub files: Vec<Vec<u8>>,
    pub pdb_path_ni: u32,
}

impl Module {
    fn new(name: Vec<u8>, obj_name: Vec<u8>) -> Module {
        Module { name, obj_name, contrib: Contrib::none(), symbols: Vec::new(), c13: Vec::new(), files: Vec::new(), pdb_path_ni: 0 }
    }

    pub fn has_stream(&self) -> bool {
        !self.symbols.is_empty() || !self.c13.is_empty()
    }
}

/// What the modules add to the PDB-wide state.
pub struct Shared<'m> {
    pub merger: &'m mut Merger,
    pub names: &'m mut StringTable,
    pub globals: &'m mut Vec<Vec<u8>>,
    pub warnings: &'m mut Vec<String>,
}

/// lld's `pdbMakeAbsolute`: absolute paths (POSIX or Windows) unchanged, others made native,
/// absolute and without `.`/`..`.
pub fn make_absolute(name: &str) -> String {
    let b = name.as_bytes();
    let windows_abs = (b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && (b[2] == b'\\' || b[2] == b'/')) || name.starts_with("\\\\");
    if name.starts_with('/') || windows_abs {
        return name.to_string();
    }
    // sys::path::native on POSIX: single backslashes become slashes.
    let mut native = String::with_capacity(name.len());
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if chars.peek() == Some(&'\\') {
                chars.next();
                native.push_str("\\\\");
            } else {
                native.push('/');
            }
        } else {
            native.push(c);
        }
    }
    let abs = std::env::current_dir().map(|d| d.join(&native)).unwrap_or_else(|_| PathBuf::from(&native));
    remove_dots(&abs)
}

fn remove_dots(p: &Path) -> String {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out.to_string_lossy().into_owned()
}

/// Serializes a symbol record: prefix, content, zero padding to 4 bytes.
pub fn record(kind: u16, content: &[u8]) -> Vec<u8> {
    let len = (4 + content.len()).next_multiple_of(4);
    let mut r = Vec::with_capacity(len);
    r.extend_from_slice(&((len - 2) as u16).to_le_bytes());
    r.extend_from_slice(&kind.to_le_bytes());
    r.extend_from_slice(content);
    r.resize(len, 0);
    r
}

/// `.debug$S` data of section `k` of file `f` with its relocations applied: section-relative
/// offsets and section numbers of the output, targets without an output section left as in
/// the object (lld skips them in debug sections).
fn relocate(l: &Layout, f: FileId, k: usize) -> Vec<u8> {
    let s = &l.r.obj(f).sections[k];
    let mut out = s.data.to_vec();
    for rel in s.relocs {
        let ty = rel.typ.get(LE);
        let va = rel.virtual_address.get(LE) as usize;
        let idx = rel.symbol_table_index.get(LE) as usize;
        let Some(kind) = arch::kind(ty) else { continue };
        let Some((srva, schunk, _)) = l.target(f, idx) else { continue };
        let (section_rva, section_index) = l.target_section(schunk);
        if kind == arch::CoffRelKind::SecRel && section_rva.is_none() {
            continue;
        }
        if va + arch::width(kind) > out.len() {
            continue;
        }
        let place = arch::Place { p: va as u64, image_base: l.image_base, section_rva, section_index };
        arch::apply(kind, &mut out[va..], srva, place);
    }
    out
}

/// Whether a `.debug$S`/`.debug$T` section of an object is part of the link: non-COMDAT ones
/// always, COMDAT ones when the section they are associated with is live.
fn debug_section_live(l: &Layout, f: FileId, k: usize) -> bool {
    let obj = l.r.obj(f);
    if !obj.sections[k].is_comdat() {
        return true;
    }
    let def = obj.symbols.iter().find(|s| !s.is_aux && s.section == k as i32 + 1 && s.secdef.is_some());
    match def.and_then(|s| s.secdef) {
        Some((5, assoc)) => assoc.checked_sub(1).is_some_and(|p| l.r.files[f].live.get(p as usize).copied().unwrap_or(false)),
        _ => false,
    }
}

/// The contribution of chunk `c` (a section of module `imod`, or a synthetic chunk of the
/// linker module `linker`).
pub fn chunk_contrib(l: &Layout, c: usize, linker: u16, module_of: &dyn Fn(FileId) -> u16) -> Contrib {
    let ch = &l.chunks[c];
    let os = &l.osecs[ch.osec];
    let mut sc = Contrib { isect: os.index, off: ch.rva - os.rva, size: ch.size, chars: os.chars, imod: linker, data_crc: 0 };
    if let ChunkKind::Section { file, sec } = ch.kind {
        let s = &l.r.obj(file).sections[sec as usize];
        sc.chars = s.chars;
        sc.imod = module_of(file);
        // LLVM's JamCRC goes through zlib's crc32, which answers 0 for no buffer: the CRC of
        // a section without raw data is then the inverted initial value.
        sc.data_crc = if s.has_raw { jam_crc(s.data) } else { u32::MAX };
    }
    sc
}

/// The module of object `f`, number `imod`, with its CodeView merged.
pub fn object_module(l: &Layout, f: FileId, imod: u16, sh: &mut Shared) -> Module {
    let file = &l.r.files[f];
    let in_archive = !file.parent.is_empty();
    let obj_name = make_absolute(if in_archive { &file.parent } else { &file.name });
    let mod_name = if in_archive { file.obj_name.clone() } else { obj_name.clone() };
    let mut m = Module::new(mod_name.into_bytes(), obj_name.into_bytes());
    let obj = l.r.obj(f);
    for src in &file.chunks {
        let ChunkSrc::Sec(k) = *src else { continue };
        if let Some(c) = l.sec_chunk[f].get(k as usize).copied().flatten() {
            if l.chunks[c].osec != usize::MAX {
                m.contrib = chunk_contrib(l, c, imod, &|_| imod);
                break;
            }
        }
    }
    // Types first: the symbols refer to them.
    let debug_t = obj.sections.iter().enumerate().find(|(_, s)| s.name == ".debug$T").map(|(_, s)| s.data);
    let map = match debug_t {
        Some(d) if d.len() >= 4 && u32_at(d, 0) == 4 => {
            let body = &d[4..];
            if matches!(u16_at(body, 2), 0x1515 | 0x1509) {
                // A type server or precompiled-header reference: the types are elsewhere
                // (typeserver.rs warned); lld ignores the symbols when it cannot merge them.
                return m;
            }
            match sh.merger.merge(body) {
                Ok(map) => map,
                Err(e) => {
                    sh.warnings.push(format!("Cannot use debug info for '{}' [LNK4099]\n>>> failed to load reference {e}", file.name));
                    return m;
                }
            }
        }
        _ => IndexMap(Vec::new()),
    };
    let mut ds = DebugS { m: &mut m, map: &map, imod, str_tab: None, checksums: None, strtab_fixups: Vec::new(), name: &file.name };
    for (k, s) in obj.sections.iter().enumerate() {
        if s.name != ".debug$S" || s.data.is_empty() || !debug_section_live(l, f, k) {
            continue;
        }
        let data = relocate(l, f, k);
        ds.section(&data, s.data, sh);
    }
    ds.finish(sh);
    m
}

struct DebugS<'a> {
    m: &'a mut Module,
    map: &'a IndexMap,
    imod: u16,
    /// The object's string table and file checksums (unrelocated bytes).
    str_tab: Option<Vec<u8>>,
    checksums: Option<Vec<u8>>,
    /// (offset in the module stream, object string table offset) of `S_FILESTATIC` names.
    strtab_fixups: Vec<(usize, u32)>,
    name: &'a str,
}

fn push_subsection(out: &mut Vec<u8>, kind: u32, data: &[u8]) {
    out.extend_from_slice(&kind.to_le_bytes());
    out.extend_from_slice(&(data.len().next_multiple_of(4) as u32).to_le_bytes());
    out.extend_from_slice(data);
    out.resize(out.len().next_multiple_of(4), 0);
}

/// The subsections of a `.debug$S` section that starts with the CodeView magic: (kind, start,
/// end of the body), the kinds the producer marked ignorable left out.
fn subsections(data: &[u8]) -> Vec<(u32, usize, usize)> {
    let mut out = Vec::new();
    let mut p = 4;
    while p + 8 <= data.len() {
        let kind = u32_at(data, p);
        let len = u32_at(data, p + 4) as usize;
        let end = (p + 8 + len).min(data.len());
        if kind & 0x8000_0000 == 0 {
            out.push((kind, p + 8, end));
        }
        p = (p + 8 + len).next_multiple_of(4);
    }
    out
}

/// lld's fatal error for an object whose live `.debug$S` sections hold file checksums but no
/// string table to name the files with. dtld writes the PDB after the image, so this is asked
/// before the image is written: lld stops before committing it.
pub fn check_checksums(l: &Layout) -> Result<(), String> {
    for &f in &l.r.obj_order {
        let Kind::Obj(obj) = &l.r.files[f].kind else { continue };
        let (mut checksums, mut strings) = (false, false);
        for (k, s) in obj.sections.iter().enumerate() {
            if s.name != ".debug$S" || s.data.len() < 4 || u32_at(s.data, 0) != 4 || !debug_section_live(l, f, k) {
                continue;
            }
            for (kind, _, _) in subsections(s.data) {
                checksums |= kind == 0xf4;
                strings |= kind == 0xf3;
            }
        }
        if checksums && !strings {
            return Err(".debug$S sections with a checksums subsection must also contain a string table subsection".into());
        }
    }
    Ok(())
}

impl DebugS<'_> {
    fn section(&mut self, data: &[u8], raw: &[u8], sh: &mut Shared) {
        if data.len() < 4 {
            return;
        }
        if u32_at(data, 0) != 4 {
            sh.warnings.push(format!("ignoring section .debug$S with unrecognized magic 0x{:X}", u32_at(data, 0)));
            return;
        }
        for (kind, start, end) in subsections(data) {
            let body = &data[start..end];
            let raw_body = &raw[start..end];
            match kind {
                0xf1 => self.symbols(body, sh),
                0xf2 => push_subsection(&mut self.m.c13, kind, body),
                0xf6 => {
                    let mut b = body.to_vec();
                    // Inlinee lines: signature, then (inlinee id, file, line[, extra files]).
                    let sig = u32_at(&b, 0);
                    let mut q = 4;
                    while q + 12 <= b.len() {
                        let mut id = u32_at(&b, q);
                        self.map.remap(&mut id);
                        b[q..q + 4].copy_from_slice(&id.to_le_bytes());
                        let extra = if sig == 1 { u32_at(&b, q + 12) as usize } else { 0 };
                        q += 12 + if sig == 1 { 4 + 4 * extra } else { 0 };
                    }
                    push_subsection(&mut self.m.c13, kind, &b);
                }
                0xf3 => self.str_tab = Some(raw_body.to_vec()),
                0xf4 => self.checksums = Some(raw_body.to_vec()),
                0xf5 | 0xf7..=0xfd | 0xfe | 0xff => {}
                _ => sh.warnings.push(format!("ignoring unknown debug$S subsection kind 0x{kind:X} in file {}", self.name)),
            }
        }
    }

    /// One symbol subsection: records to the module stream and the globals.
    fn symbols(&mut self, body: &[u8], sh: &mut Shared) {
        if body.is_empty() {
            sh.warnings.push(format!("empty symbols subsection in {}", self.name));
            return;
        }
        let Some(recs) = cv::records(body) else {
            sh.warnings.push(format!("corrupt symbol records in {}", self.name));
            return;
        };
        let base = 4 + self.m.symbols.len();
        let mut storage: Vec<u8> = Vec::new();
        let mut scopes: Vec<usize> = Vec::new();
        for r in recs {
            let kind = u16_at(r, 2);
            if cv::opens_scope(kind) {
                scopes.push(storage.len());
            } else if cv::ends_scope(kind) {
                match scopes.pop() {
                    Some(open) => {
                        let parent = scopes.last().map_or(0, |&o| (o + base) as u32);
                        let end = (base + storage.len()) as u32;
                        storage[open + 4..open + 8].copy_from_slice(&parent.to_le_bytes());
                        storage[open + 8..open + 12].copy_from_slice(&end.to_le_bytes());
                    }
                    None => sh.warnings.push(format!("symbol scopes are not balanced in {}", self.name)),
                }
            }
            let depth = scopes.len();
            let rec = self.rewrite(r, sh);
            if cv::goes_in_globals(kind, depth) {
                let module_offset = (base + storage.len()) as u32;
                add_global(sh.globals, &rec, self.imod, module_offset);
            }
            if cv::goes_in_module(kind, depth) {
                if kind == cv::S_FILESTATIC {
                    self.strtab_fixups.push((base + storage.len() + 8, u32_at(r, 8)));
                }
                storage.extend_from_slice(&rec);
            }
        }
        self.m.symbols.extend_from_slice(&storage);
    }

    /// lld's `writeSymbolRecord`: aligned copy, type indices renumbered (unknown kinds become
    /// `S_SKIP`), `_ID` procedures turned into plain ones.
    fn rewrite(&self, r: &[u8], sh: &mut Shared) -> Vec<u8> {
        let len = r.len().next_multiple_of(4);
        let mut rec = r.to_vec();
        rec.resize(len, 0);
        rec[0..2].copy_from_slice(&((len - 2) as u16).to_le_bytes());
        let kind = u16_at(r, 2);
        match cv::symbol_refs(kind, &r[4..]) {
            Some(refs) => self.map.remap_record(&mut rec, &refs),
            None => {
                rec.fill(0);
                rec[0..2].copy_from_slice(&((len - 2) as u16).to_le_bytes());
                rec[2..4].copy_from_slice(&cv::S_SKIP.to_le_bytes());
                return rec;
            }
        }
        match kind {
            cv::S_PROC_ID_END => rec[2..4].copy_from_slice(&cv::S_END.to_le_bytes()),
            cv::S_GPROC32_ID | cv::S_LPROC32_ID => {
                let ti = u32_at(&rec, 28);
                if ti >= 0x1000 {
                    let ty = sh.merger.func_type(ti).unwrap_or_else(|| {
                        let name = String::from_utf8_lossy(cv::cstr(rec.get(39..).unwrap_or(&[]))).into_owned();
                        sh.warnings.push(format!(
                            "procedure symbol record for `{name}` in {} refers to PDB item index 0x{ti:X} which is not a valid function ID record",
                            self.name
                        ));
                        NOT_TRANSLATED
                    });
                    rec[28..32].copy_from_slice(&ty.to_le_bytes());
                }
                let plain = if kind == cv::S_GPROC32_ID { cv::S_GPROC32 } else { cv::S_LPROC32 };
                rec[2..4].copy_from_slice(&plain.to_le_bytes());
            }
            _ => {}
        }
        rec
    }

    /// lld's `DebugSHandler::finish`: string table references and the new checksum table.
    fn finish(&mut self, sh: &mut Shared) {
        let Some(strs) = self.str_tab.take() else {
            // (Checksums without a string table were refused before the image was written.)
            if !self.strtab_fixups.is_empty() {
                sh.warnings.push("No StringTable subsection was encountered, but there are string table references".into());
            }
            return;
        };
        let string_at = |o: u32| -> Vec<u8> { cv::cstr(strs.get(o as usize..).unwrap_or(&[])).to_vec() };
        for &(at, o) in &self.strtab_fixups {
            let ni = sh.names.add(&string_at(o));
            let at = at - 4;
            if at + 4 <= self.m.symbols.len() {
                self.m.symbols[at..at + 4].copy_from_slice(&ni.to_le_bytes());
            }
        }
        // With a string table, lld always writes a checksum table (maybe empty).
        let ck = self.checksums.take().unwrap_or_default();
        let mut out = ck.clone();
        let mut q = 0;
        while q + 6 <= ck.len() {
            let name = string_at(u32_at(&ck, q));
            let abs = make_absolute(&String::from_utf8_lossy(&name));
            let ni = sh.names.add(abs.as_bytes());
            out[q..q + 4].copy_from_slice(&ni.to_le_bytes());
            self.m.files.push(abs.into_bytes());
            let size = ck[q + 4] as usize;
            q = (q + 6 + size).next_multiple_of(4);
        }
        push_subsection(&mut self.m.c13, 0xf4, &out);
    }
}

/// lld's `addGlobalSymbol`: procedures become `S_PROCREF`/`S_LPROCREF` to their module
/// record; data, constants and typedefs are copied.
fn add_global(globals: &mut Vec<Vec<u8>>, rec: &[u8], imod: u16, module_offset: u32) {
    let kind = u16_at(rec, 2);
    match kind {
        cv::S_GPROC32 | cv::S_LPROC32 => {
            let name = cv::cstr(rec.get(39..).unwrap_or(&[]));
            let mut c = Vec::with_capacity(11 + name.len());
            c.extend_from_slice(&0u32.to_le_bytes());
            c.extend_from_slice(&module_offset.to_le_bytes());
            c.extend_from_slice(&(imod + 1).to_le_bytes());
            c.extend_from_slice(name);
            c.push(0);
            let k = if kind == cv::S_GPROC32 { cv::S_PROCREF } else { cv::S_LPROCREF };
            globals.push(record(k, &c));
        }
        _ => globals.push(rec.to_vec()),
    }
}

/// `S_COMPILE3` of the linker's modules (lld's `fillLinkerVerRecord`).
fn linker_compile3() -> Vec<u8> {
    let mut c = Vec::new();
    c.extend_from_slice(&7u32.to_le_bytes()); // language: Link
    c.extend_from_slice(&0xd0u16.to_le_bytes()); // X64
    for v in [0u16, 0, 0, 0, 14, 10, 25019, 0] {
        c.extend_from_slice(&v.to_le_bytes());
    }
    c.extend_from_slice(b"LLVM Linker\0");
    record(cv::S_COMPILE3, &c)
}

fn objname(name: &[u8]) -> Vec<u8> {
    let mut c = 0u32.to_le_bytes().to_vec();
    c.extend_from_slice(name);
    c.push(0);
    record(cv::S_OBJNAME, &c)
}

/// MSVC's quoting of the command line in `S_ENVBLOCK`.
fn quote(args: &[String]) -> String {
    let mut r = String::new();
    for a in args {
        if !r.is_empty() {
            r.push(' ');
        }
        let q = a.contains(' ') || a.contains('"');
        if q {
            r.push('"');
        }
        r.push_str(&a.replace('"', "\"\""));
        if q {
            r.push('"');
        }
    }
    r
}

/// The `* Linker *` module: its records, and one `S_SECTION` per output section with the
/// COFF groups (runs of input sections of one name) in it, except for MinGW.
pub fn linker_module(l: &Layout, pdb_path: &str, pdb_ni: u32) -> Module {
    let mut m = Module::new(b"* Linker *".to_vec(), Vec::new());
    m.pdb_path_ni = pdb_ni;
    m.symbols.extend(objname(b"* Linker *"));
    m.symbols.extend(linker_compile3());
    // lld's `config.argv`: the program as invoked, then the options (input files left out).
    let inputs: Vec<String> = l.config.inputs.iter().map(|i| i.path.to_string_lossy().into_owned()).collect();
    let mut args: Vec<String> = Vec::new();
    let mut it = std::env::args();
    args.extend(it.next());
    while let Some(a) = it.next() {
        if a == "-flavor" {
            it.next();
            continue;
        }
        if !inputs.contains(&a) {
            args.push(a);
        }
    }
    let cwd = std::env::current_dir().map(|d| d.to_string_lossy().into_owned()).unwrap_or_default();
    let exe = make_absolute(args.first().map(String::as_str).unwrap_or(""));
    let mut env = vec![0u8];
    for s in ["cwd", &cwd, "exe", &exe, "pdb", pdb_path, "cmd", &quote(args.get(1..).unwrap_or(&[]))] {
        env.extend_from_slice(s.as_bytes());
        env.push(0);
    }
    env.push(0);
    m.symbols.extend(record(cv::S_ENVBLOCK, &env));
    for os in &l.osecs {
        let mut c = Vec::new();
        c.extend_from_slice(&os.index.to_le_bytes());
        c.push(12);
        c.push(0);
        for v in [os.rva, os.vsize, os.chars] {
            c.extend_from_slice(&v.to_le_bytes());
        }
        c.extend_from_slice(os.name.as_bytes());
        c.push(0);
        m.symbols.extend(record(cv::S_SECTION, &c));
        if l.config.mingw {
            continue;
        }
        // COFF groups: consecutive chunks of one input section name and characteristics.
        let mut groups: Vec<(String, u32, u32, u32)> = Vec::new();
        for &ci in &os.chunks {
            let ch = &l.chunks[ci];
            let (name, chars) = match ch.kind {
                ChunkKind::Section { file, sec } => {
                    let s = &l.r.obj(file).sections[sec as usize];
                    (s.name.to_string(), s.out_chars())
                }
                _ => continue,
            };
            match groups.last_mut() {
                Some(g) if g.0 == name && g.1 == chars => g.3 = ch.rva + ch.size,
                _ => groups.push((name, chars, ch.rva, ch.rva + ch.size)),
            }
        }
        for (name, mut chars, start, end) in groups {
            if name.starts_with(".idata") {
                chars |= 0x8000_0000;
            }
            let mut c = Vec::new();
            for v in [end - start, chars, start - os.rva] {
                c.extend_from_slice(&v.to_le_bytes());
            }
            c.extend_from_slice(&os.index.to_le_bytes());
            c.extend_from_slice(name.as_bytes());
            c.push(0);
            m.symbols.extend(record(cv::S_COFFGROUP, &c));
        }
    }
    m
}

/// lld's import modules: per DLL (by lower-case name), a module named after the DLL and an
/// `Import:` module with an `S_THUNK32` for each live import thunk.
pub fn import_modules(l: &Layout, first_index: u16) -> Vec<Module> {
    let mut mods: Vec<Module> = Vec::new();
    let mut by_dll: Vec<(String, usize)> = Vec::new();
    for &(f, c) in &l.thunk_chunk {
        let Kind::Import(imp) = &l.r.files[f].kind else { continue };
        if l.r.gc_dead_thunks.contains(&f) || l.chunks[c].osec == usize::MAX {
            continue;
        }
        let key = imp.dll.to_lowercase();
        let at = match by_dll.iter().find(|(d, _)| *d == key) {
            Some(&(_, i)) => i,
            None => {
                let lib = make_absolute(&l.r.files[f].parent);
                let mut first = Module::new(imp.dll.clone().into_bytes(), lib.clone().into_bytes());
                first.contrib = Contrib::none();
                mods.push(first);
                let mut second = Module::new(format!("Import:{}", imp.dll).into_bytes(), lib.into_bytes());
                second.contrib = Contrib::none();
                mods.push(second);
                by_dll.push((key, mods.len() - 1));
                mods.len() - 1
            }
        };
        let imod = first_index + at as u16;
        let ch = &l.chunks[c];
        let os = &l.osecs[ch.osec];
        let m = &mut mods[at];
        m.symbols.extend(objname(imp.dll.as_bytes()));
        m.symbols.extend(linker_compile3());
        let thunk_at = 4 + m.symbols.len();
        let mut t = Vec::new();
        for v in [0u32, 0, 0, ch.rva - os.rva] {
            t.extend_from_slice(&v.to_le_bytes());
        }
        t.extend_from_slice(&os.index.to_le_bytes());
        t.extend_from_slice(&(ch.size as u16).to_le_bytes());
        t.push(0); // ordinal: standard
        t.extend_from_slice(imp.symbol.as_bytes());
        t.push(0);
        let rec = record(cv::S_THUNK32, &t);
        let end = (thunk_at + rec.len()) as u32;
        m.symbols.extend(rec);
        let e = m.symbols.len() - (end as usize - thunk_at);
        m.symbols[e + 8..e + 12].copy_from_slice(&end.to_le_bytes());
        m.symbols.extend(record(cv::S_END, &[]));
        m.contrib = chunk_contrib(l, c, imod, &|_| imod);
        m.contrib.imod = imod;
    }
    mods
}
