//! The output image while it is written, for the ELF and the PE writers alike.
//!
//! `MappedOutput` is the image in anonymous memory, written with one `pwrite` to a pre-sized
//! temporary that replaces the output at the end (`outfile.rs`), or, for an output that is a
//! device (`-o /dev/null`), written in place. The error wording follows the lld port that links
//! (`Wording`). The little-endian stores are what the synthetic-section and header writers use.
//!
//! Why not always a shared map of the temporary, as lld and mold write: every first store to a
//! page of a fresh file's map is a page fault that allocates a page-cache page, charges it and
//! marks it dirty through the file system (~1,700 faults for OpenSSL's 6.9 MB image, 3-4 of the
//! link's 40 ms, measured). Anonymous memory faults without the file system, and the kernel
//! then copies the finished image into the page cache in one call (1.5-2 ms): OpenSSL's links
//! (6.9 and 21 MB) are 3 ms faster. Not with transparent huge pages (`MADV_HUGEPAGE`, until
//! stop 34): back-to-back links were 2-6 ms faster with them, but a huge page is zeroed (and,
//! with the kernel's default `defrag=madvise`, compacted for) at its first touch, and when the
//! machine's free memory is cold (on a VM that hands freed memory back to its host, seconds
//! after another process freed it) the 21 MB image of OpenSSL's `-g` link took 71-139 ms
//! (median 131.6) against 75-82 ms in 4 KiB pages; in the benchmark, where the links
//! alternate with lld's and mold's, the `-g` link went from 106-117 to 72.6 ms (mold: 88 ms).
//! But the copy is one serial call, and on ext4 a large one now and then waits 50-200 ms for
//! the file system (a 76 MB debug image, back-to-back links) where the map's faults, spread over
//! the fill's threads, do not: so images above `ANON_LIMIT` are still written through a shared
//! map of the temporary. Memory is the same either way: the image is resident once (file pages
//! of a shared map count in RSS too).

use std::fs;
use std::path::Path;

use crate::error::{Error, Result};

pub(crate) use crate::outfile::{is_special_output, umask};

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
            Wording::Elf => Error::new(format!("cannot open output file {}: {}", out.display(), crate::error::io_error(e))),
            Wording::Coff => Error::new(format!("failed to open {}: {}", out.display(), crate::error::io_error(e))),
        }
    }
    fn replace_error(self, out: &Path, e: &std::io::Error) -> Error {
        match self {
            Wording::Elf => Error::new(format!("cannot open output file {}: {}", out.display(), crate::error::io_error(e))),
            Wording::Coff => write_error(out, e),
        }
    }
}

fn write_error(out: &Path, e: &std::io::Error) -> Error {
    Error::new(format!("failed to write output '{}': {}", out.display(), crate::error::io_error(e)))
}

/// The output image while it is filled, for the ELF and the PE writers alike: a temporary in the
/// output's directory (`outfile::TmpFile`: unnamed where the file system allows, space reserved
/// up front) and the image, in anonymous memory that `finish` copies into the temporary (up to
/// `ANON_LIMIT`) or a shared map of the temporary; `finish` puts the temporary in place of the
/// output. An existing output that is not a regular file (`-o /dev/null`,
/// a FIFO) is written in place instead, as lld does: renaming a temporary over it would replace
/// the device.
pub(crate) struct MappedOutput<'p> {
    pub map: memmap2::MmapMut,
    tmp: Option<crate::outfile::TmpFile>,
    out: &'p Path,
    wording: Wording,
    /// `map` is a shared map of `tmp` (the image is in the file already).
    in_file: bool,
    /// How many bytes of `map` the output has (`set_len`; the whole map unless it was made
    /// larger than needed with `create_unsized`).
    len: usize,
}

/// The largest image written from anonymous memory (see the module comment).
const ANON_LIMIT: u64 = 32 << 20;

impl<'p> MappedOutput<'p> {
    /// The map of `size` bytes for the output `out`.
    pub(crate) fn create(out: &'p Path, size: u64, wording: Wording) -> Result<MappedOutput<'p>> {
        MappedOutput::create_as(out, size, wording, true)
    }

    /// `create`; `reserve`: the temporary's space is reserved now (else by `finish`, for an
    /// image in memory only).
    fn create_as(out: &'p Path, size: u64, wording: Wording, reserve: bool) -> Result<MappedOutput<'p>> {
        let write_err = |e: std::io::Error| write_error(out, &e);
        let image = || -> Result<memmap2::MmapMut> {
            // In 4 KiB pages (no `MADV_HUGEPAGE`: see the top of this file).
            memmap2::MmapMut::map_anon(size as usize).map_err(write_err)
        };
        if is_special_output(out) || is_stdout(out) {
            return Ok(MappedOutput { map: image()?, tmp: None, out, wording, in_file: false, len: size as usize });
        }
        let tmp = crate::outfile::TmpFile::create(out, if reserve { size } else { 0 }).map_err(|e| {
            if e.raw_os_error() == Some(libc::ENOSPC) || e.raw_os_error() == Some(libc::EFBIG) || e.raw_os_error() == Some(libc::EDQUOT) {
                write_error(out, &e)
            } else {
                wording.create_error(out, &e)
            }
        })?;
        if size > ANON_LIMIT {
            // SAFETY: the temporary is ours alone (unnamed, or created O_EXCL) and sized above.
            let map = unsafe { memmap2::MmapMut::map_mut(&tmp.file) }.map_err(write_err)?;
            return Ok(MappedOutput { map, tmp: Some(tmp), out, wording, in_file: true, len: size as usize });
        }
        Ok(MappedOutput { map: image()?, tmp: Some(tmp), out, wording, in_file: false, len: size as usize })
    }

    /// An image of at most `cap` bytes whose length is only known once part of it is written
    /// (`set_len` gives it): anonymous memory, where pages never touched cost nothing, so only
    /// for images that `create` would keep in memory (`None` above `ANON_LIMIT`). The space on
    /// disk is reserved for the length, by `finish`: a full disk is still an error before
    /// anything is written.
    pub(crate) fn create_unsized(out: &'p Path, cap: u64, wording: Wording) -> Result<Option<MappedOutput<'p>>> {
        if cap > ANON_LIMIT {
            return Ok(None);
        }
        MappedOutput::create_as(out, cap, wording, false).map(Some)
    }

    /// The output's length, at most the size the image was created with.
    pub(crate) fn set_len(&mut self, len: usize) {
        assert!(len <= self.map.len() && !self.in_file, "output length beyond its image");
        self.len = len;
    }

    /// The output's bytes so far (`len` of them).
    pub(crate) fn image(&mut self) -> &mut [u8] {
        let len = self.len;
        &mut self.map[..len]
    }

    /// Puts the finished image in place: the temporary, given permissions `mode`, replaces
    /// the output; or a special output is written in place.
    pub(crate) fn finish(self, mode: u32) -> Result<()> {
        let MappedOutput { map, tmp, out, wording, in_file, len } = self;
        let write_err = |e: std::io::Error| write_error(out, &e);
        let Some(mut tmp) = tmp else {
            use std::io::Write as _;
            if is_stdout(out) {
                let mut so = std::io::stdout().lock();
                return so.write_all(&map[..len]).and_then(|_| so.flush()).map_err(write_err);
            }
            let mut f = fs::OpenOptions::new().write(true).open(out).map_err(|e| wording.replace_error(out, &e))?;
            return f.write_all(&map[..len]).map_err(write_err);
        };
        // Into the page cache, not to the disk: no fsync or msync, as lld and mold (the page
        // cache is coherent with the file, so the renamed output reads back complete at once;
        // writing it to disk is the kernel's business: an MS_SYNC flush waited for the disk,
        // 50 ms for a 76 MB output). A full disk was already an error at `fallocate`.
        if in_file {
            // Unmapped now, although that costs 2-5 ms for a 76 MB output: a writable shared map
            // keeps the file open for writing, and the caller, released before this process
            // exits (detach.rs), could not execute it (ETXTBSY; mold's range-extension-thunk
            // tests run the output right away).
            drop(map);
        } else {
            use std::os::unix::fs::FileExt;
            if tmp.file.metadata().map_err(write_err)?.len() != len as u64 {
                // Not reserved yet (`create_unsized`).
                tmp.reserve(len as u64).map_err(write_err)?;
            }
            tmp.file.write_all_at(&map[..len], 0).map_err(write_err)?;
            // Anonymous memory: freed with the process, after the caller is released.
            crate::util::keep::skip_drop(map);
        }
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
