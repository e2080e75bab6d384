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
//!
//! While the link runs, the file about to be replaced gives back its page cache when it is all
//! clean (`recycle_replaced`): its bytes stay as they are, only its memory is reused.

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

/// Drops the page cache of the file `out` is about to replace, when every cached page of it is
/// clean, so that the link's memory and the new output's pages can reuse that memory: the old
/// file's contents are on disk and unchanged, and it is deleted once the new one is in place.
/// mold gets the same effect by overwriting the old output's inode, which a failed link then
/// cannot keep; here the old file stays byte-identical, only uncached.
///
/// Why it pays: memory a process touches for the first time costs more than memory it reuses
/// (zeroing, and on a virtual machine that hands free memory back to its host, a fault in the
/// host as well); a 76 MB debug build's link was 10-13% faster, a 20 MB one 4%, on 2 cores of
/// such a machine (interleaved A/B runs, docs/bench.md).
///
/// The old file is opened here, on the caller's thread, so that the work (5 ms for 76 MB)
/// runs on a thread of its own while the link goes on and can never reach the new output.
/// Nothing is dropped from a file with dirty or in-flight pages (dropping would start
/// writing out a file that is about to be deleted), nor where the kernel cannot say
/// (`cachestat`, Linux 6.5); special outputs (`-o /dev/null`, `-o -`), symbolic links and
/// anything but a regular file are left alone.
pub fn recycle_replaced(out: &Path) -> Option<Recycle> {
    #[cfg(target_os = "linux")]
    {
        // Only a regular file is opened (a device could do something on open); O_NONBLOCK in
        // case it was swapped for a FIFO since.
        if out.as_os_str() == "-" || !std::fs::symlink_metadata(out).is_ok_and(|m| m.file_type().is_file()) {
            return None;
        }
        let path = cstr(out).ok()?;
        let file = open_raw(libc::AT_FDCWD, &path, libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK, 0).ok()?;
        if !file.metadata().is_ok_and(|m| m.file_type().is_file() && m.len() > 0) {
            return None;
        }
        let start = std::time::Instant::now();
        // Advice only: a thread that cannot be started changes nothing but speed.
        let thread = std::thread::Builder::new()
            .name("dtld-recycle".into())
            .spawn(move || {
                let what = drop_clean_cache(&file);
                (what, std::time::Instant::now())
            })
            .ok()?;
        Some(Recycle { start, thread })
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = out;
        None
    }
}

/// The thread `recycle_replaced` started.
pub struct Recycle {
    start: std::time::Instant,
    thread: std::thread::JoinHandle<(String, std::time::Instant)>,
}

impl Recycle {
    /// Waits for the thread (done long before in all but the smallest links): what it did, when
    /// it started and how long it took (`Trace::recycled` records it).
    pub fn join(self) -> Option<(String, std::time::Instant, std::time::Duration)> {
        self.thread.join().ok().map(|(what, end)| (what, self.start, end - self.start))
    }
}

/// `recycle_replaced`'s work on the open file; says what it did.
#[cfg(target_os = "linux")]
fn drop_clean_cache(file: &File) -> String {
    /// `struct cachestat_range` and `struct cachestat` of <linux/mman.h>.
    #[repr(C)]
    struct Range {
        off: u64,
        len: u64,
    }
    #[repr(C)]
    #[derive(Default)]
    struct Stat {
        cache: u64,
        dirty: u64,
        writeback: u64,
        evicted: u64,
        recently_evicted: u64,
    }
    const SYS_CACHESTAT: libc::c_long = 451;
    let range = Range { off: 0, len: 0 };
    let mut st = Stat::default();
    // SAFETY: cachestat reads `range` and writes `st`, both live repr(C) structs of the
    // kernel's layout; a kernel without it returns ENOSYS.
    let r = unsafe { libc::syscall(SYS_CACHESTAT, file.as_raw_fd(), &range as *const Range, &mut st as *mut Stat, 0) };
    if r != 0 {
        return "kept: the kernel cannot tell its dirty pages (no cachestat)".into();
    }
    if st.cache == 0 {
        return "nothing cached".into();
    }
    if st.dirty != 0 || st.writeback != 0 {
        return format!("kept: {} of {} pages not yet written back", st.dirty + st.writeback, st.cache);
    }
    // SAFETY: fadvise on a descriptor we own; advice only, the file is not changed.
    let r = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if r != 0 {
        return format!("kept: {}", io::Error::from_raw_os_error(r));
    }
    format!("dropped {} pages", st.cache)
}

/// Whether a file can be created in `out`'s directory (lld's `tryCreateFile`, run before the
/// link so that a long link does not end in "cannot open"): a temporary is made and dropped;
/// nothing is left and `out` itself is not touched.
pub fn check_writable(out: &Path) -> io::Result<()> {
    if out.as_os_str() == "-" || is_special_output(out) {
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
    if is_special_output(out) {
        return std::fs::write(out, bytes);
    }
    let mut t = TmpFile::create(out, 0)?;
    use std::io::Write;
    t.file.write_all(bytes)?;
    t.persist(out, 0o666 & !umask())
}

/// An existing output that is neither a regular file nor a directory (`/dev/null`, a FIFO):
/// written in place, never replaced by a renamed temporary.
pub(crate) fn is_special_output(out: &std::path::Path) -> bool {
    std::fs::metadata(out).map(|m| !m.file_type().is_file() && !m.file_type().is_dir()).unwrap_or(false)
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
