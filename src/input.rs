//! An input file as every stage sees it, whatever its format: its bytes (mapped for the whole
//! link), the name lld prints for it, where it came from (an archive member, a thin member)
//! and what it is. The ELF loader (`elf/input.rs`) and the COFF resolver make these; the LTO
//! stage and the parsers read them.

use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// ELF relocatable object (ET_REL).
    Object,
    /// ELF shared object (ET_DYN).
    Shared,
    /// LLVM bitcode (raw or wrapper); read by the LTO stage.
    Bitcode,
}

#[derive(Debug, Clone)]
pub struct InputFile {
    /// Name as lld prints it in diagnostics: `dir/foo.o`, `libfoo.a(bar.o)`.
    pub name: String,
    /// Path of the file on disk (for an archive member: the archive's path; for a thin-archive
    /// member: the member's own path).
    pub path: PathBuf,
    /// The file's bytes. Mappings live until the process exits (as in mold and wild, unmapping is
    /// wasted work for a linker), which lets every later stage borrow them freely.
    pub data: &'static [u8],
    pub kind: FileKind,
    /// Set for archive members that are not under `--whole-archive`: they join the link only if
    /// they define a symbol that is otherwise undefined.
    pub lazy: bool,
    /// For archive members: (archive path as given, member name).
    pub archive: Option<(String, String)>,
    /// `--as-needed` was in effect (shared libraries only).
    pub as_needed: bool,
    /// The shared library's name for DT_NEEDED when it has no DT_SONAME: the path as given
    /// (or, for `-lfoo`, the file name found).
    pub needed_name: String,
    /// For archive members: the offset of the member's header in the archive (lld names
    /// bitcode members `lib.a(m.o at <offset>)` for LTO), and whether the archive is thin.
    pub archive_offset: u64,
    pub thin_member: bool,
    /// The bitcode of a FatLTO object (its `.llvm.lto` section, `--fat-lto-objects`): no file
    /// of its own holds exactly these bytes.
    pub fat_lto: bool,
    /// lld's group ID for `--warn-backrefs`: each file named outside `--start-group`,
    /// `--start-lib` and `GROUP(...)` gets the next number, the files inside one of those share
    /// one, and so do an archive's members. A reference that extracts a member of a group
    /// with a smaller number is a backward reference (GNU ld would not resolve it).
    pub group: u32,
}

/// Maps a file read-only for the rest of the process.
pub fn map_file(path: &Path) -> std::io::Result<&'static [u8]> {
    let file = std::fs::File::open(path)?;
    let meta = file.metadata()?;
    if meta.is_dir() {
        return Err(std::io::Error::from_raw_os_error(21)); // EISDIR: "Is a directory"
    }
    if !meta.is_file() {
        // Pipes and other special files cannot be mapped.
        let v = std::fs::read(path)?;
        return Ok(crate::util::keep::slice(v));
    }
    if meta.len() == 0 {
        return Ok(&[]);
    }
    // SAFETY: the mapping is read-only and private; like every linker we assume inputs are not
    // truncated while we run.
    let m = unsafe { memmap2::Mmap::map(&file)? };
    let m: &'static memmap2::Mmap = crate::util::keep::value(m);
    Ok(&m[..])
}
