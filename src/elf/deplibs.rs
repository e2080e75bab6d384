//! Dependent libraries: the libraries an input asks to be linked with, which clang writes for
//! `#pragma comment(lib, "m")` into a SHT_LLVM_DEPENDENT_LIBRARIES section (`.deplibs`) of an
//! object, or into the irsymtab of a bitcode file.
//!
//! lld adds each specifier's library after the files of the command line, as if it had been
//! named there (`addDependentLibrary`): first as a library base name (`libX.so`, `libX.a` in the
//! search directories), then as a file name in the search directories, then as a path. This
//! module only reads the specifiers; the loader (`input`) finds and adds the libraries of the
//! objects always in the link, and the driver (`link`) reloads once more when a file the resolver
//! holds asks for a library that is not in the link yet: an archive member it extracted (lld
//! reads a member's specifiers when it extracts it) or a bitcode file.

use object::elf;
use object::read::elf::{FileHeader as _, SectionHeader as _};

use crate::elf::symtab::{File, Resolved};
use crate::elf::types::LE;

/// The section type of `.deplibs`.
const SHT_LLVM_DEPENDENT_LIBRARIES: u32 = 0x6fff_4c04;

/// The dependent library specifiers of an ELF object, in order, read from its section headers
/// (the loader needs them before the resolver parses the object). An object that cannot be read
/// yields none: the resolver reports what is wrong with it.
pub fn object_specifiers(data: &'static [u8]) -> Vec<&'static [u8]> {
    let Ok(ehdr) = elf::FileHeader64::<LE>::parse(data) else { return Vec::new() };
    let Ok(sections) = ehdr.sections(LE, data) else { return Vec::new() };
    let mut out = Vec::new();
    for sh in sections.iter().filter(|sh| sh.sh_type(LE) == SHT_LLVM_DEPENDENT_LIBRARIES) {
        match sh.data(LE, data).ok().and_then(strings) {
            Some(specs) => out.extend(specs),
            None => return Vec::new(),
        }
    }
    out
}

/// The NUL-terminated strings of one `.deplibs` section; `None` when the last one is not
/// terminated, an error the object parser reports before any library is looked for (as lld).
fn strings(bytes: &'static [u8]) -> Option<impl Iterator<Item = &'static [u8]>> {
    let body = if bytes.is_empty() { bytes } else { bytes.strip_suffix(&[0])? };
    Some(body.split(|&c| c == 0).filter(|s| !s.is_empty()))
}

/// The (file name, specifier) pairs the loader has not seen (`seen`), of the files the resolver
/// holds: the archive members and `--start-lib` objects it extracted (the loader reads only the
/// files always in the link), and every bitcode file (whose irsymtab only the resolver parses, so
/// that it is not read twice); in load order.
pub fn from_resolved(r: &Resolved, seen: &[(String, String)]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for &f in &r.load_order {
        let input = r.inputs[f];
        let specs: Vec<&[u8]> = match &r.files[f] {
            File::Bitcode(b) => b.ir.dependent_libraries.clone(),
            File::Obj(o) if input.lazy => {
                o.sections.iter().filter(|s| s.sh_type == SHT_LLVM_DEPENDENT_LIBRARIES).filter_map(|s| strings(s.data)).flatten().collect()
            }
            _ => continue,
        };
        for spec in specs {
            let pair = (input.name.clone(), String::from_utf8_lossy(spec).into_owned());
            if !seen.contains(&pair) && !out.contains(&pair) {
                out.push(pair);
            }
        }
    }
    out
}
