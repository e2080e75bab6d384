//! Writing a file so that it replaces the old one whole, or not at all.
//!
//! Every file dtld produces (the output, `-Map`, `--time-trace`, `--reproduce`, the import
//! library, index files) is written to a new inode in the destination's directory and renamed
//! over the destination at the end. So:
//!
//! * a failure, ENOSPC or SIGKILL in the middle leaves the previous file byte-identical;
//! * an input that is also the output (`-o main.o main.o`, `-Map=main.o`) is never truncated
//!   while it is still mapped and read: the old inode lives on until the link ends;
//! * links racing to the same destination each replace it atomically, so it is always exactly
//!   one link's result;
//! * the space is reserved up front (`fallocate`), so a full disk is an error before the memory
//!   map is written, never a SIGBUS halfway;
//! * the temporary has no name at all where the file system can make one (`O_TMPFILE`): a
//!   SIGKILL leaves nothing behind. It gets a name only for the instant between `linkat` and
//!   `rename`. Elsewhere it is `.<name>.dtld-tmp-<pid>`, created with `O_EXCL|O_NOFOLLOW`
//!   and removed on failure and on SIGINT/SIGTERM/SIGHUP.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// A temporary that becomes `out` with `persist`, and disappears otherwise.
pub struct TmpFile {
    pub file: File,
    dir: File,
    /// The fallback's name (`None` for an `O_TMPFILE` file).
    named: Option<PathBuf>,
    _on_signal: Option<crate::cleanup::Registered>,
    done: bool,
}

fn cstr(p: &Path) -> io::Result<CString> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}

fn parent_of(out: &Path) -> PathBuf {
    match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

fn open_raw(dir: libc::c_int, path: &CString, flags: libc::c_int, mode: libc::mode_t) -> io::Result<File> {
    // SAFETY: openat with a NUL-terminated path; the result is a new descriptor we own.
    let fd = unsafe { libc::openat(dir, path.as_ptr(), flags | libc::O_CLOEXEC, mode as libc::c_uint) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by a successful open and is owned by nothing else.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// The name the fallback temporary and the link step use: `.<name>.dtld-tmp-<pid>[-k]`.
fn temp_name(out: &Path, k: u32) -> String {
    let name = out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "a.out".into());
    if k == 0 {
        format!(".{name}.dtld-tmp-{}", std::process::id())
    } else {
        format!(".{name}.dtld-tmp-{}-{k}", std::process::id())
    }
}

impl TmpFile {
    /// A temporary of `size` bytes (space reserved) in `out`'s directory.
    pub fn create(out: &Path, size: u64) -> io::Result<TmpFile> {
        let parent = parent_of(out);
        let dir = open_raw(libc::AT_FDCWD, &cstr(&parent)?, libc::O_RDONLY | libc::O_DIRECTORY, 0)?;
        let mut t = match open_raw(dir.as_raw_fd(), &CString::from(c"."), libc::O_TMPFILE | libc::O_RDWR, 0o600) {
            Ok(file) => TmpFile { file, dir, named: None, _on_signal: None, done: false },
            Err(e) if matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP) | Some(libc::EISDIR) | Some(libc::EINVAL) | Some(libc::ENOENT)) => {
                // No O_TMPFILE on this file system: a named temporary, never through a link.
                let mut k = 0;
                loop {
                    let name = temp_name(out, k);
                    match open_raw(
                        dir.as_raw_fd(),
                        &CString::new(name.clone()).unwrap_or_default(),
                        libc::O_RDWR | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW,
                        0o600,
                    ) {
                        Ok(file) => {
                            let path = parent.join(&name);
                            let reg = crate::cleanup::register(path.clone());
                            break TmpFile { file, dir, named: Some(PathBuf::from(name)), _on_signal: Some(reg), done: false };
                        }
                        Err(e) if e.raw_os_error() == Some(libc::EEXIST) && k < 100 => k += 1,
                        Err(e) => return Err(e),
                    }
                }
            }
            Err(e) => return Err(e),
        };
        t.reserve(size)?;
        Ok(t)
    }

    /// Reserves `size` bytes on disk (the file becomes that long).
    pub fn reserve(&mut self, size: u64) -> io::Result<()> {
        if size == 0 {
            return Ok(());
        }
        let Ok(len) = libc::off_t::try_from(size) else {
            return Err(io::Error::from_raw_os_error(libc::EFBIG));
        };
        // SAFETY: fallocate on a descriptor we own.
        let r = unsafe { libc::fallocate(self.file.as_raw_fd(), 0, 0, len) };
        if r != 0 {
            let e = io::Error::last_os_error();
            if !matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP) | Some(libc::ENOSYS) | Some(libc::EINVAL)) {
                return Err(e);
            }
            // A file system without fallocate: a sparse file, as before.
        }
        self.file.set_len(size)
    }

    /// Gives the file permissions `mode` and puts it in place of `out` (replacing whatever
    /// was there, a symlink included, as lld does).
    pub fn persist(mut self, out: &Path, mode: u32) -> io::Result<()> {
        // SAFETY: fchmod on a descriptor we own.
        unsafe { libc::fchmod(self.file.as_raw_fd(), mode as libc::mode_t) };
        let base = out.file_name().ok_or_else(|| io::Error::from_raw_os_error(libc::EISDIR))?;
        let base = CString::new(base.as_bytes()).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
        let dirfd = self.dir.as_raw_fd();
        // The file being replaced, held open across the rename: the rename then only unlinks
        // it, and freeing its blocks (on ext4 mounted with `discard`, a synchronous discard of
        // every block: 10-200 ms for a large output, measured) happens when this descriptor is
        // closed, on a thread of its own. lld removes the old output on a thread too; mold
        // keeps it open until it exits. Not a regular file, or unreadable: nothing to hold.
        let old = open_raw(dirfd, &base, libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK, 0)
            .ok()
            .filter(|f| f.metadata().is_ok_and(|m| m.file_type().is_file()));
        // From here to the rename the temporary has a name: a kill of the process that started
        // the link must not land in between and leave it (detach.rs).
        let named = &self.named;
        let file_fd = self.file.as_raw_fd();
        let r = crate::detach::shielded(|| -> io::Result<()> {
            let name = match named {
                Some(n) => cstr(n)?,
                None => {
                    // Give the unnamed inode a name for the rename (linkat cannot replace).
                    let proc_path = CString::new(format!("/proc/self/fd/{file_fd}")).unwrap_or_default();
                    let mut k = 0;
                    loop {
                        let n = CString::new(temp_name(out, k)).unwrap_or_default();
                        // SAFETY: linkat with NUL-terminated paths and descriptors we own.
                        let r = unsafe { libc::linkat(libc::AT_FDCWD, proc_path.as_ptr(), dirfd, n.as_ptr(), libc::AT_SYMLINK_FOLLOW) };
                        if r == 0 {
                            break n;
                        }
                        let e = io::Error::last_os_error();
                        if e.raw_os_error() == Some(libc::EEXIST) && k < 100 {
                            k += 1;
                            continue;
                        }
                        return Err(e);
                    }
                }
            };
            // SAFETY: renameat within the directory we hold open.
            let r = unsafe { libc::renameat(dirfd, name.as_ptr(), dirfd, base.as_ptr()) };
            if r != 0 {
                let e = io::Error::last_os_error();
                // SAFETY: `dirfd` is an open directory descriptor and the name is NUL-terminated.
                unsafe { libc::unlinkat(dirfd, name.as_ptr(), 0) };
                return Err(e);
            }
            Ok(())
        });
        if let Some(old) = old {
            if let Err(e) = std::thread::Builder::new().name("dtld-unlink".into()).spawn(move || drop(old)) {
                // No thread: it is closed here, as before.
                drop(e);
            }
        }
        // A failed rename removed the name it made; the fallback's own name goes in Drop.
        self.done = r.is_ok();
        r
    }
}

impl Drop for TmpFile {
    fn drop(&mut self) {
        if !self.done {
            if let Some(n) = &self.named {
                if let Ok(n) = cstr(n) {
                    // SAFETY: unlinkat relative to the directory we hold open.
                    unsafe { libc::unlinkat(self.dir.as_raw_fd(), n.as_ptr(), 0) };
                }
            }
        }
    }
}

/// Whether a file can be created in `out`'s directory (lld's `tryCreateFile`, run before the
/// link so that a long link does not end in "cannot open"): a temporary is made and dropped;
/// nothing is left and `out` itself is not touched.
pub fn check_writable(out: &Path) -> io::Result<()> {
    if out.as_os_str() == "-" || crate::output::is_special_output(out) {
        return Ok(());
    }
    if out.is_dir() {
        return Err(io::Error::from_raw_os_error(21)); // EISDIR: "Is a directory"
    }
    TmpFile::create(out, 0).map(drop)
}

/// Writes `bytes` to `out` through a temporary (see the module comment). Special files
/// (`/dev/null`, a FIFO, `/dev/stdout`) are written in place.
pub fn write_atomic(out: &Path, bytes: &[u8]) -> io::Result<()> {
    if crate::output::is_special_output(out) {
        return std::fs::write(out, bytes);
    }
    let mut t = TmpFile::create(out, 0)?;
    use std::io::Write;
    t.file.write_all(bytes)?;
    t.persist(out, 0o666 & !crate::output::umask())
}
