//! The output image while it is written, for the ELF and the PE writers alike.
//!
//! `MappedOutput` is a pre-sized memory map of a temporary that replaces the output at the end
//! (`outfile.rs`), or, for an output that is a device (`-o /dev/null`), an anonymous map
//! written in place. The error wording follows the lld port that links (`Wording`). The
//! little-endian stores are what the synthetic-section and header writers use.

use std::fs;
use std::path::Path;

use crate::error::{Error, Result};

/// An existing output that is neither a regular file nor a directory (`/dev/null`, a FIFO):
/// written in place, never replaced by a renamed temporary.
pub(crate) fn is_special_output(out: &Path) -> bool {
    fs::metadata(out).map(|m| !m.file_type().is_file() && !m.file_type().is_dir()).unwrap_or(false)
}

/// `-o -`: the image goes to standard output (as lld writes it).
pub(crate) fn is_stdout(out: &Path) -> bool {
    out.as_os_str() == "-"
}

/// Which lld port's wording an output's open and rename errors follow.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wording {
    /// ld.lld: "cannot open output file X: ..." for creating, reopening and renaming.
    Elf,
    /// lld-link: "failed to open X: ..." for creating the temporary; reopening and renaming fail
    /// as writes do.
    Coff,
}

impl Wording {
    fn create_error(self, out: &Path, e: &std::io::Error) -> Error {
        match self {
            Wording::Elf => Error::new(format!("cannot open output file {}: {}", out.display(), crate::io_error(e))),
            Wording::Coff => Error::new(format!("failed to open {}: {}", out.display(), crate::io_error(e))),
        }
    }
    fn replace_error(self, out: &Path, e: &std::io::Error) -> Error {
        match self {
            Wording::Elf => Error::new(format!("cannot open output file {}: {}", out.display(), crate::io_error(e))),
            Wording::Coff => write_error(out, e),
        }
    }
}

fn write_error(out: &Path, e: &std::io::Error) -> Error {
    Error::new(format!("failed to write output '{}': {}", out.display(), crate::io_error(e)))
}

/// The output image while it is filled, for the ELF and the PE writers alike: a pre-sized
/// memory map of a temporary in the output's directory (`outfile::TmpFile`: unnamed where the
/// file system allows, space reserved up front), put in place of the output by `finish`. An
/// existing output that is not a regular file (`-o /dev/null`, a FIFO) is written in place
/// from an anonymous map instead, as lld does: renaming a temporary over it would replace the
/// device.
pub(crate) struct MappedOutput<'p> {
    pub map: memmap2::MmapMut,
    tmp: Option<crate::outfile::TmpFile>,
    out: &'p Path,
    wording: Wording,
}

impl<'p> MappedOutput<'p> {
    /// The map of `size` bytes for the output `out`.
    pub(crate) fn create(out: &'p Path, size: u64, wording: Wording) -> Result<MappedOutput<'p>> {
        let write_err = |e: std::io::Error| write_error(out, &e);
        if is_special_output(out) || is_stdout(out) {
            let map = memmap2::MmapMut::map_anon(size as usize).map_err(write_err)?;
            return Ok(MappedOutput { map, tmp: None, out, wording });
        }
        let tmp = crate::outfile::TmpFile::create(out, size).map_err(|e| {
            if e.raw_os_error() == Some(libc::ENOSPC) || e.raw_os_error() == Some(libc::EFBIG) || e.raw_os_error() == Some(libc::EDQUOT) {
                write_error(out, &e)
            } else {
                wording.create_error(out, &e)
            }
        })?;
        // SAFETY: the temporary is ours alone (unnamed, or created O_EXCL) and sized above.
        let map = unsafe { memmap2::MmapMut::map_mut(&tmp.file) }.map_err(write_err)?;
        Ok(MappedOutput { map, tmp: Some(tmp), out, wording })
    }

    /// Puts the finished image in place: the temporary, given permissions `mode`, replaces
    /// the output; or a special output is written in place.
    pub(crate) fn finish(self, mode: u32) -> Result<()> {
        let MappedOutput { map, tmp, out, wording } = self;
        let write_err = |e: std::io::Error| write_error(out, &e);
        let Some(tmp) = tmp else {
            use std::io::Write as _;
            if is_stdout(out) {
                let mut so = std::io::stdout().lock();
                return so.write_all(&map).and_then(|_| so.flush()).map_err(write_err);
            }
            let mut f = fs::OpenOptions::new().write(true).open(out).map_err(|e| wording.replace_error(out, &e))?;
            return f.write_all(&map).map_err(write_err);
        };
        // No msync: the page cache is coherent with the file, so the renamed output reads
        // back complete at once; writing it to disk is the kernel's business, as for lld's
        // and mold's outputs (an MS_SYNC flush waited for the disk: 50 ms for a 76 MB output).
        // A full disk was already an error at `fallocate`.
        drop(map);
        tmp.persist(out, mode).map_err(|e| wording.replace_error(out, &e))
    }
}

/// Little-endian stores at a byte offset, for the ELF synthetic sections and the PE writer.
pub(crate) fn put16(b: &mut [u8], off: usize, v: u16) {
    b[off..off + 2].copy_from_slice(&v.to_le_bytes());
}
pub(crate) fn put32(b: &mut [u8], off: usize, v: u32) {
    b[off..off + 4].copy_from_slice(&v.to_le_bytes());
}
pub(crate) fn put64(b: &mut [u8], off: usize, v: u64) {
    b[off..off + 8].copy_from_slice(&v.to_le_bytes());
}

/// The process umask (output files get `0o755 & !umask`, as lld's do).
pub(crate) fn umask() -> u32 {
    // The process umask, read without changing it for longer than this call.
    unsafe extern "C" {
        fn umask(mask: u32) -> u32;
    }
    // SAFETY: umask only swaps the process's file-mode mask; it is restored right away.
    unsafe {
        let old = umask(0o022);
        umask(old);
        old
    }
}
