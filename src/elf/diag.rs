//! How ELF diagnostics name things, as lld's do: symbols demangled, the source file an object
//! was compiled from, and `file.o:(function)` locations.

use object::elf;
use object::read::elf::Sym as _;

use crate::elf::object::ObjFile;
use crate::elf::LE;

/// Symbol names as lld shows them in ELF diagnostics (C++ and Rust demangled).
pub fn demangle(name: &[u8]) -> String {
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

/// `file.o:(function)` or `file.o:(.section+0xoff)` for a location inside an object, naming the
/// function that contains the offset when there is one, as lld does.
pub fn location(o: &ObjFile, shndx: usize, off: u64) -> String {
    let mut best: Option<(&[u8], u64)> = None;
    for (i, s) in o.symbols.iter().enumerate() {
        if s.st_shndx(LE) as usize != shndx || i == 0 {
            continue;
        }
        let t = s.st_type();
        if t != elf::STT_FUNC && t != elf::STT_OBJECT {
            continue;
        }
        let v = s.st_value(LE);
        let sz = s.st_size(LE);
        if v <= off && off < v + sz.max(1) {
            best = Some((o.sym_name(i), v));
            break;
        }
    }
    match best {
        Some((name, _)) => format!("{}:({})", o.input.name, demangle(name)),
        None => {
            let sec = o.sections.get(shndx).map(|s| String::from_utf8_lossy(s.name).into_owned()).unwrap_or_default();
            format!("{}:({}+0x{:x})", o.input.name, sec, off)
        }
    }
}
