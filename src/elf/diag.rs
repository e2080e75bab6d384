//! How ELF diagnostics name things, as lld's do: symbols demangled, the source file and line of
//! a place (DWARF, else the object's STT_FILE), `file.o:(function)` and
//! `file.o:(function f: .text+0x3)` locations, and the `>>> defined in` / `>>> referenced by`
//! lines that follow a relocation's message.

use object::elf;
use object::read::elf::Sym as _;

use crate::elf::object::ObjFile;
use crate::elf::types::LE;

/// A symbol name in an ELF diagnostic: marked for the diagnostics context, which prints it
/// demangled (C++ and Rust) unless `--no-demangle`.
pub fn demangle(name: &[u8]) -> String {
    crate::diag::mark_name(&String::from_utf8_lossy(name))
}

/// The demangled name itself, for code that reasons about it (not for messages).
pub fn demangled(name: &[u8]) -> String {
    crate::util::demangle::demangle(&String::from_utf8_lossy(name))
}

/// The source file an object was compiled from (its first STT_FILE symbol), as lld prints in
/// `>>> defined at` / `>>> referenced by` lines when there is no debug information.
pub fn source_file(o: &ObjFile) -> Option<String> {
    o.symbols
        .iter()
        .take(o.first_global)
        .find(|s| s.st_type() == elf::STT_FILE)
        .map(|s| String::from_utf8_lossy(crate::elf::object::c_str(o.strtab, s.st_name(LE)).unwrap_or(b"")).into_owned())
}

/// lld's `getEnclosingSymbol`: the first symbol of `o` defined in section `shndx` whose
/// `[value, value + size)` holds `off` (only STT_FUNC ones with `func`; only local ones with
/// `locals_only`, for an object whose globals are not bound yet).
pub fn enclosing_symbol(o: &ObjFile, shndx: usize, off: u64, func: bool, locals_only: bool) -> Option<usize> {
    let end = if locals_only { o.first_global } else { o.symbols.len() };
    (1..end).find(|&i| {
        let s = &o.symbols[i];
        let t = s.st_type();
        o.shndx(i) as usize == shndx
            && t != elf::STT_SECTION
            && t != elf::STT_FILE
            && (!func || t == elf::STT_FUNC)
            && s.st_value(LE) <= off
            && off < s.st_value(LE).wrapping_add(s.st_size(LE))
    })
}

fn section_name(o: &ObjFile, shndx: usize) -> String {
    o.sections.get(shndx).map(|s| String::from_utf8_lossy(s.name).into_owned()).unwrap_or_default()
}

/// lld's `getObjMsg`: `file.o:(function)` or `file.o:(.section+0xoff)` for a place inside an
/// object, naming the symbol that encloses it; an archive member is `member.o:(...) in archive
/// lib.a`.
pub fn location(o: &ObjFile, shndx: usize, off: u64) -> String {
    obj_msg(o, shndx, off, false)
}

/// `location` for an object whose global symbols are not bound yet (only its locals can
/// enclose the place, as in lld while it reads the object).
pub fn obj_msg(o: &ObjFile, shndx: usize, off: u64, locals_only: bool) -> String {
    let what = match enclosing_symbol(o, shndx, off, false, locals_only) {
        Some(i) => demangle(o.sym_name(i)),
        None => format!("{}+0x{:x}", section_name(o, shndx), off),
    };
    match &o.input.archive {
        Some((archive, member)) => format!("{member}:({what}) in archive {archive}"),
        None => format!("{}:({what})", o.input.name),
    }
}

/// lld's `getLocation`, the place a relocation error starts with: `file.o:(function f:
/// .text+0x3)` inside a function, else `file.o:(.text+0x3)`.
pub fn reloc_location(o: &ObjFile, shndx: usize, off: u64) -> String {
    let sec = section_name(o, shndx);
    match enclosing_symbol(o, shndx, off, true, false) {
        Some(i) => format!("{}:(function {}: {sec}+0x{off:x})", o.input.name, demangle(o.sym_name(i))),
        None => format!("{}:({sec}+0x{off:x})", o.input.name),
    }
}

/// `foo.c:12`, or `foo.c:12 (dir/foo.c:12)` when the path has a directory (lld's
/// `printFileLine`).
fn file_line(path: &str, line: u64) -> String {
    let base = path.rsplit('/').next().unwrap_or(path);
    if base == path {
        format!("{base}:{line}")
    } else {
        format!("{base}:{line} ({path}:{line})")
    }
}

/// lld's `getSrcMsg`: the source line of the code at `off` in section `shndx` from the line
/// table, else the declaration of the variable `name`, else the STT_FILE name ("" if none).
pub fn src_msg(o: &ObjFile, shndx: usize, off: u64, name: &[u8]) -> String {
    let dw = o.dwarf();
    if let Some((path, line)) = dw.line_at(shndx, off) {
        return file_line(&path, line);
    }
    if let Some((path, line)) = dw.variable(name) {
        return file_line(&path, line);
    }
    source_file(o).unwrap_or_default()
}

/// `\n>>> referenced by SRC\n>>>               OBJ` (the source line only when known), for
/// the symbol `name` referenced at `off` in section `shndx`.
pub fn referenced_by(o: &ObjFile, shndx: usize, off: u64, name: &[u8]) -> String {
    let src = src_msg(o, shndx, off, name);
    if src.is_empty() {
        format!("\n>>> referenced by {}", location(o, shndx, off))
    } else {
        format!("\n>>> referenced by {src}\n>>>               {}", location(o, shndx, off))
    }
}

/// lld's `printLocation`: `\n>>> defined in FILE` and the `referenced by` lines.
pub fn print_location(defined_in: &str, o: &ObjFile, shndx: usize, off: u64, name: &[u8]) -> String {
    format!("\n>>> defined in {defined_in}{}", referenced_by(o, shndx, off, name))
}
