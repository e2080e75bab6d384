//! Where an object refers to a symbol, for diagnostics (lld's `getSymbolLocations`).
//!
//! lld names every relocation site of a symbol as `>>> referenced by file:(function)`, with a
//! `source.cpp:line` line first when the object's debug information says where the site is
//! (CodeView line tables; DWARF in MinGW mode). Undefined-symbol errors and relocations
//! against discarded sections both print these lines.

use super::demangle::display as demangle;
use super::object::ObjFile;
use super::symtab::{FileId, Kind, Resolved};

/// The nearest symbol at or before `addr` in section `sec` (1-based; lld's `getSymbol`). The
/// section's own symbol (`.data`) names the site only when no other symbol does, as lld's
/// `>>> referenced by c2.obj:(.data)`.
pub fn containing_symbol(obj: &ObjFile, sec: u32, addr: u32) -> Option<&'static str> {
    let mut best: Option<(u32, &'static str)> = None;
    let mut section_sym = None;
    for s in &obj.symbols {
        if s.is_aux || s.section != sec as i32 || s.value > addr || s.class == object::pe::IMAGE_SYM_CLASS_LABEL {
            continue;
        }
        if s.secdef.is_some() {
            section_sym = section_sym.or(Some(s.name));
            continue;
        }
        if !(s.is_external() || s.class == object::pe::IMAGE_SYM_CLASS_STATIC) {
            continue;
        }
        if best.is_some_and(|(v, _)| s.value <= v) {
            continue;
        }
        best = Some((s.value, s.name));
    }
    best.map(|b| b.1).or(section_sym)
}

/// A source position for an offset in a section: (file name, line).
pub type FileLine = (String, u32);

/// lld's `getFileLine`: CodeView line information, and DWARF's in MinGW mode.
pub fn file_line(r: &Resolved, f: FileId, sec: u32, addr: u32, mingw: bool) -> Option<FileLine> {
    let Kind::Obj(obj) = &r.files[f].kind else { return None };
    // lld's getFileLine: DWARF in MinGW mode, CodeView otherwise.
    if mingw {
        let (file, line) = super::dwarf::read(obj).line_at(sec as usize, u64::from(addr))?;
        return Some((file, u32::try_from(line).unwrap_or(u32::MAX)));
    }
    super::cvlines::file_line(obj, sec, addr)
}

/// Every site in object `f` that relocates against symbol-table index `sym_index`: the
/// `\n>>> referenced by ...` strings (at most `max`) and how many sites there are.
pub fn symbol_locations(r: &Resolved, f: FileId, sym_index: usize, max: usize, mingw: bool, demangle_names: bool) -> (Vec<String>, usize) {
    let file = &r.files[f];
    let Kind::Obj(obj) = &file.kind else { return (Vec::new(), 0) };
    let mut locs: Vec<(Option<&'static str>, Option<FileLine>)> = Vec::new();
    let mut total = 0;
    // Sections read (lld's `getChunks()`: live or collected later, not discarded COMDATs).
    let mut read = vec![false; obj.sections.len()];
    for c in &file.chunks {
        if let super::symtab::ChunkSrc::Sec(k) = *c {
            read[k as usize] = true;
        }
    }
    for (si, sec) in obj.sections.iter().enumerate() {
        if !read[si] {
            continue;
        }
        for rel in sec.relocs {
            if rel.symbol_table_index.get(object::LittleEndian) as usize != sym_index {
                continue;
            }
            total += 1;
            if locs.len() >= max {
                continue;
            }
            let addr = rel.virtual_address.get(object::LittleEndian);
            let fl = file_line(r, f, si as u32 + 1, addr, mingw);
            let sym = containing_symbol(obj, si as u32 + 1, addr);
            if fl.is_some() || sym.is_some() {
                locs.push((sym, fl));
            }
        }
    }
    if max == 0 {
        return (Vec::new(), total);
    }
    if total == 0 && locs.is_empty() {
        return (vec![format!("\n>>> referenced by {}", file.name)], 1);
    }
    let out = locs
        .into_iter()
        .map(|(sym, fl)| {
            let mut s = String::from("\n>>> referenced by ");
            if let Some((name, line)) = fl {
                s.push_str(&format!("{name}:{line}\n>>>               "));
            }
            s.push_str(&file.name);
            if let Some(sym) = sym {
                s.push_str(&format!(":({})", demangle(sym, demangle_names)));
            }
            s
        })
        .collect();
    (out, total)
}

/// lld's `maybeReportRelocationToDiscarded`: a relocation in a live section of `f` against
/// symbol index `idx` whose target was discarded. Not reported from CodeView or DWARF sections
/// (`.debug*`, and `.eh_frame`, which lld counts as DWARF) or in MinGW mode (GCC leaves such
/// references in sections it expects to be dropped).
pub fn discarded_reference(r: &Resolved, f: FileId, sec_name: &str, idx: usize, mingw: bool, demangle_names: bool) -> Option<String> {
    if mingw || sec_name.starts_with(".debug") || sec_name == ".eh_frame" {
        return None;
    }
    let name = match r.files[f].syms.get(idx) {
        Some(super::symtab::SymRef::Global(id)) => r.symbols[*id].name,
        _ => r.obj(f).symbols.get(idx).map_or("", |s| s.name),
    };
    let (locs, _) = symbol_locations(r, f, idx, usize::MAX, mingw, demangle_names);
    Some(format!("relocation against symbol in discarded section: {}{}", demangle(name, demangle_names), locs.concat()))
}

/// lld's `getSourceLocation` for a duplicate definition in file `f`: `\n>>> defined at ...`,
/// with the source position of (section, offset) when debug information has it, and a
/// bitcode module's source file name.
pub fn defined_at(r: &Resolved, f: FileId, at: Option<(u32, u32)>, mingw: bool) -> String {
    let file = &r.files[f];
    match &file.kind {
        Kind::Obj(_) => {
            let fl = at.and_then(|(sec, off)| file_line(r, f, sec, off, mingw));
            match fl {
                Some((name, line)) => format!("\n>>> defined at {name}:{line}\n>>>            {}", file.name),
                None => format!("\n>>> defined at {}", file.name),
            }
        }
        Kind::Bitcode(b) => {
            let src = String::from_utf8_lossy(b.ir.source_filename);
            if src.is_empty() {
                format!("\n>>> defined at {}", file.name)
            } else {
                format!("\n>>> defined at {src}\n>>>            {}", file.name)
            }
        }
        Kind::Import(_) => format!("\n>>> defined at {}", file.name),
    }
}

/// lld's `getSymbolLocations` for a bitcode file: its source file name, then the file.
pub fn bitcode_reference(r: &Resolved, f: FileId) -> String {
    let file = &r.files[f];
    let src = match &file.kind {
        Kind::Bitcode(b) => String::from_utf8_lossy(b.ir.source_filename).into_owned(),
        _ => String::new(),
    };
    if src.is_empty() {
        format!("\n>>> referenced by {}", file.name)
    } else {
        format!("\n>>> referenced by {src}\n>>>               {}", file.name)
    }
}
