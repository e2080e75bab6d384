//! Dependent libraries: the libraries an input asks to be linked with, which clang writes for
//! `#pragma comment(lib, "m")` into a SHT_LLVM_DEPENDENT_LIBRARIES section (`.deplibs`) of an
//! object, or into the irsymtab of a bitcode file.
//!
//! lld adds each specifier's library after the files of the command line, as if it had been
//! named there (`addDependentLibrary`): first as a library base name (`libX.so`, `libX.a` in the
//! search directories), then as a file name in the search directories, then as a path. This
//! module only reads the specifiers; the loader (`input`) finds and adds the libraries, and the
//! driver (`link`) reloads once more when an archive member pulled in by the resolver asks for a
//! library that is not in the link yet (lld reads a member's specifiers when it extracts it).

use object::elf;
use object::read::elf::{FileHeader as _, SectionHeader as _};

use crate::elf::resolve::Resolved;
use crate::elf::LE;
use crate::input::{FileKind, InputFile};

/// The section type of `.deplibs`.
const SHT_LLVM_DEPENDENT_LIBRARIES: u32 = 0x6fff_4c04;

/// The dependent library specifiers of `file` (an ELF object or a bitcode file), in order.
/// A file that cannot be read yields none: the resolver reports what is wrong with it.
pub fn specifiers(file: &InputFile) -> Vec<&'static [u8]> {
    match file.kind {
        FileKind::Object => object_specifiers(file.data).unwrap_or_default(),
        FileKind::Bitcode => crate::lto::irsymtab::parse(file.data).map(|ir| ir.dependent_libraries).unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// The NUL-terminated strings of every SHT_LLVM_DEPENDENT_LIBRARIES section of an ELF object.
fn object_specifiers(data: &'static [u8]) -> Option<Vec<&'static [u8]>> {
    let ehdr = elf::FileHeader64::<LE>::parse(data).ok()?;
    let sections = ehdr.sections(LE, data).ok()?;
    let mut out = Vec::new();
    for sh in sections.iter().filter(|sh| sh.sh_type(LE) == SHT_LLVM_DEPENDENT_LIBRARIES) {
        let bytes = sh.data(LE, data).ok()?;
        // An unterminated last string is an error the object parser reports (before any
        // library is looked for, as in lld).
        let body = bytes.strip_suffix(&[0]).or(bytes.is_empty().then_some(bytes))?;
        out.extend(body.split(|&c| c == 0).filter(|s| !s.is_empty()));
    }
    Some(out)
}

/// The (file name, specifier) pairs of the archive members and `--start-lib` objects the
/// resolver pulled into the link, whose specifiers the loader has not seen (it reads those of
/// the files that are always in the link); in load order.
pub fn from_extracted(r: &Resolved, seen: &[(String, String)]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for &f in &r.load_order {
        let input = r.inputs[f];
        if !input.lazy {
            continue;
        }
        // A bitcode member's irsymtab is parsed already (or rebuilt by LLVM).
        let specs = match &r.files[f] {
            crate::elf::resolve::File::Bitcode(b) => b.ir.dependent_libraries.clone(),
            _ => specifiers(input),
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
