//! The LTO stage's file writes and its objects as link inputs: every file LTO writes outside
//! the staging directory (index, imports, `--lto-obj-path`, `-save-temps`) goes through
//! `write_file` (atomically, lld's `cannot open` words), and every object it returns becomes an
//! `InputFile` through `lto_input`. Below the stage's drivers so that each of them can write.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::input::{FileKind, InputFile};

pub(super) fn create_dir(p: &Path) -> Result<()> {
    std::fs::create_dir_all(p).map_err(|e| Error::new(format!("cannot create directory {}: {}", p.display(), crate::error::io_error(&e))))
}

/// `lto_input` of bytes that may already live as long as the process.
pub(super) fn lto_input_bytes(name: String, data: Cow<'static, [u8]>) -> InputFile {
    match data {
        Cow::Owned(v) => lto_input(name, v),
        Cow::Borrowed(b) => InputFile { data: b, ..lto_input(name, Vec::new()) },
    }
}

pub(crate) fn lto_input(name: String, data: Vec<u8>) -> InputFile {
    InputFile {
        path: PathBuf::from(&name),
        name,
        data: crate::util::keep::slice(data),
        kind: FileKind::Object,
        lazy: false,
        archive: None,
        as_needed: false,
        needed_name: String::new(),
        archive_offset: 0,
        thin_member: false,
        fat_lto: false,
        group: 0,
    }
}

pub(super) fn write_file(p: &Path, data: &[u8]) -> Result<()> {
    if let Some(parent) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
        create_dir(parent)?;
    }
    crate::outfile::write_atomic(p, data).map_err(|e| Error::new(format!("cannot open {}: {}", p.display(), crate::error::io_error(&e))))
}

pub(super) fn copy_file(from: &Path, to: &Path) -> Result<()> {
    let data = std::fs::read(from).map_err(|e| Error::new(format!("cannot open {}: {}", from.display(), crate::error::io_error(&e))))?;
    write_file(to, &data)
}

/// `write_file` for the index and imports files of `--thinlto-index-only`, which a relink
/// mostly writes again with the same bytes: a regular file that already holds exactly `data`
/// only gets a new modification time (as if written: build systems compare it), so a relink
/// does not replace a thousand files (each a new inode and a freed one) for nothing.
pub(super) fn write_file_if_changed(p: &Path, data: &[u8]) -> Result<()> {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt;
    let same = (|| {
        let f = std::fs::File::options().read(true).write(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(p).ok()?;
        let m = f.metadata().ok()?;
        if !m.is_file() || m.len() != data.len() as u64 {
            return None;
        }
        let mut old = Vec::with_capacity(data.len());
        (&f).take(data.len() as u64 + 1).read_to_end(&mut old).ok()?;
        (old == data).then(|| f.set_modified(std::time::SystemTime::now()).ok()).flatten()
    })();
    match same {
        Some(()) => Ok(()),
        None => write_file(p, data),
    }
}

pub(super) fn copy_file_if_changed(from: &Path, to: &Path) -> Result<()> {
    let data = std::fs::read(from).map_err(|e| Error::new(format!("cannot open {}: {}", from.display(), crate::error::io_error(&e))))?;
    write_file_if_changed(to, &data)
}

/// Gives the memory freed so far back to the system: glibc keeps freed blocks, and the blocks
/// LLVM's threads allocated stay in those threads' arenas, resident, until trimmed.
pub(super) fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory of the allocator's own arenas.
    unsafe {
        libc::malloc_trim(0);
    }
}
