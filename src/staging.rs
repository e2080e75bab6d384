//! Private directories next to the output (`<output>.dtld-lto`, `<output>.dtld-index`) that no
//! one else can redirect.
//!
//! Their names are fixed, because remote caches key on the paths a backend job names. A fixed
//! name in a shared directory can be planted in advance (a symlink to somewhere else, a
//! directory someone else owns) or swapped during the link. So a staging directory is:
//!
//! * created with `mkdirat` mode 0700, or reused only when it is a real directory owned by the
//!   user (a symlink, a non-directory or someone else's directory is refused with an error
//!   naming it); nobody else can then create an entry inside it;
//! * held open (`O_DIRECTORY|O_NOFOLLOW`), and everything dtld itself does inside it goes
//!   through that descriptor: clearing it (`unlinkat`, never following a link), the lock file
//!   (`openat` with `O_NOFOLLOW`), and the path dtld and the local LLVM tools use for it,
//!   `/proc/self/fd/N` (the descriptor is inherited by children, and a child's working
//!   directory set through it is the directory itself, whatever its name points to later);
//! * checked by identity (device, inode) after every child that reaches it by name (the
//!   distributor, whose contract is paths relative to the linker's directory): a directory
//!   renamed away or replaced during the link is an error, and nothing is read through it;
//! * removed only while its name still refers to it; what the name points to otherwise is not
//!   dtld's and is left alone.
//!
//! A lock file inside serializes links that share the directory (two links of one output).
//!
//! A *persistent* staging directory (`open_persistent`, in-process ThinLTO with a cache
//! directory) is not emptied when opened nor removed at the end: the next link of the same
//! output keeps the entries that are still right and has `llvm-lto2` rewrite its outputs in
//! place, so a relink allocates and frees no inodes for the modules that did not change.

use std::ffi::{CStr, CString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// An open, verified staging directory.
pub struct StagingDir {
    name: PathBuf,
    parent: OwnedFd,
    base: CString,
    fd: OwnedFd,
    id: (u64, u64),
    pinned: PathBuf,
    keep: bool,
    _lock: Option<OwnedFd>,
    _signal: Option<crate::cleanup::Registered>,
}

fn last_os_error() -> std::io::Error {
    std::io::Error::last_os_error()
}

fn cstr(b: &[u8]) -> std::io::Result<CString> {
    CString::new(b).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))
}

fn fstat(fd: RawFd) -> std::io::Result<libc::stat> {
    // SAFETY: `stat` is plain old data; all-zero bytes are a valid value.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat on a descriptor we own, into a zeroed stat buffer.
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return Err(last_os_error());
    }
    Ok(st)
}

fn lstat_at(dir: RawFd, name: &CStr) -> std::io::Result<libc::stat> {
    // SAFETY: `stat` is plain old data; all-zero bytes are a valid value.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstatat without following a final symlink, into a zeroed stat buffer.
    if unsafe { libc::fstatat(dir, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) } != 0 {
        return Err(last_os_error());
    }
    Ok(st)
}

fn open_at(dir: RawFd, name: &CStr, flags: libc::c_int, mode: libc::mode_t) -> std::io::Result<OwnedFd> {
    // SAFETY: openat with a NUL-terminated name; the result is a new descriptor we own.
    let fd = unsafe { libc::openat(dir, name.as_ptr(), flags | libc::O_CLOEXEC | libc::O_NOFOLLOW, mode as libc::c_uint) };
    if fd < 0 {
        return Err(last_os_error());
    }
    // SAFETY: `fd` was just returned by a successful openat and is owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn is_dir(st: &libc::stat) -> bool {
    st.st_mode & libc::S_IFMT == libc::S_IFDIR
}

fn is_symlink(st: &libc::stat) -> bool {
    st.st_mode & libc::S_IFMT == libc::S_IFLNK
}

/// The names in directory `fd` (without `.` and `..`), read through a fresh descriptor.
fn list(fd: RawFd) -> std::io::Result<Vec<CString>> {
    let own = open_at(fd, c".", libc::O_RDONLY | libc::O_DIRECTORY, 0)?;
    let raw = std::os::fd::IntoRawFd::into_raw_fd(own);
    // SAFETY: fdopendir takes ownership of `raw`; closedir releases both.
    let dir = unsafe { libc::fdopendir(raw) };
    if dir.is_null() {
        let e = last_os_error();
        // SAFETY: `raw` is an open directory descriptor we own; fdopendir takes it over on success.
        unsafe { libc::close(raw) };
        return Err(e);
    }
    let mut names = Vec::new();
    loop {
        // SAFETY: readdir on a live DIR*; the entry is copied before the next call.
        let ent = unsafe { libc::readdir(dir) };
        if ent.is_null() {
            break;
        }
        // SAFETY: `ent` is non-null and points at readdir's entry, valid until the next readdir call.
        let name = unsafe { CStr::from_ptr((*ent).d_name.as_ptr()) };
        if name.to_bytes() != b"." && name.to_bytes() != b".." {
            names.push(name.to_owned());
        }
    }
    // SAFETY: `dir` came from a successful fdopendir and is closed exactly once.
    unsafe { libc::closedir(dir) };
    Ok(names)
}

/// Removes everything inside directory `fd` except the names `keep` accepts, never following a
/// symlink: a link is removed as a link, a directory is entered through `openat(O_NOFOLLOW)`.
fn clear_at(fd: RawFd, keep: &dyn Fn(&CStr) -> bool, depth: usize) {
    let Ok(names) = list(fd) else { return };
    for name in names {
        if keep(&name) {
            continue;
        }
        let Ok(st) = lstat_at(fd, &name) else {
            continue;
        };
        if is_dir(&st) && depth < 64 {
            if let Ok(sub) = open_at(fd, &name, libc::O_RDONLY | libc::O_DIRECTORY, 0) {
                clear_at(sub.as_raw_fd(), &|_| false, depth + 1);
            }
            // SAFETY: unlinkat relative to a descriptor we own.
            unsafe { libc::unlinkat(fd, name.as_ptr(), libc::AT_REMOVEDIR) };
        } else {
            // SAFETY: unlinkat relative to a descriptor we own, with a NUL-terminated name.
            unsafe { libc::unlinkat(fd, name.as_ptr(), 0) };
        }
    }
}

impl StagingDir {
    /// Creates (or reuses, see the module comment) the staging directory `name`, takes its
    /// lock (waiting for another link that holds it) and empties it. `keep` (`--save-temps`)
    /// leaves it in place at the end.
    pub fn open(name: &Path, keep: bool) -> Result<StagingDir> {
        Self::open_impl(name, keep, false)
    }

    /// Opens (or creates) the persistent staging directory `name` as `open` does, but leaves
    /// its contents for the caller to reconcile (`retain`) and the directory in place at the end.
    pub fn open_persistent(name: &Path) -> Result<StagingDir> {
        Self::open_impl(name, true, true)
    }

    /// Renames each entry for which `rename` gives a new name that no entry has yet (a rename
    /// keeps the file: its inode, its bytes, its page cache).
    pub fn rename_entries(&self, rename: &dyn Fn(&CStr) -> Option<CString>) {
        let fd = self.fd.as_raw_fd();
        let Ok(names) = list(fd) else { return };
        for name in names {
            let Some(new) = rename(&name) else { continue };
            if new.as_c_str() == name.as_c_str() || lstat_at(fd, &new).is_ok() {
                continue;
            }
            // SAFETY: renameat within a directory descriptor we own, NUL-terminated names.
            unsafe { libc::renameat(fd, name.as_ptr(), fd, new.as_ptr()) };
        }
    }

    /// Removes every entry of the directory whose name `keep` rejects (the lock always stays).
    pub fn retain(&self, keep: &dyn Fn(&CStr) -> bool) {
        clear_at(self.fd.as_raw_fd(), &|n: &CStr| n == c".lock" || keep(n), 0);
    }

    fn open_impl(name: &Path, keep: bool, persistent: bool) -> Result<StagingDir> {
        let shown = name.display().to_string();
        let err = |what: &str, e: std::io::Error| Error::new(format!("cannot create directory {shown}: {what}{}", crate::error::io_error(&e)));
        let parent_path = match name.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let base = name.file_name().ok_or_else(|| Error::new(format!("cannot create directory {shown}: invalid name")))?;
        let base = cstr(base.as_bytes()).map_err(|e| err("", e))?;
        let parent_c = cstr(parent_path.as_os_str().as_bytes()).map_err(|e| err("", e))?;
        // The parent is the user's output directory, reached as they named it.
        let parent = open_at(libc::AT_FDCWD, &parent_c, libc::O_RDONLY | libc::O_DIRECTORY, 0).or_else(|e| {
            if e.raw_os_error() == Some(libc::ELOOP) {
                // A symlinked output directory is the user's own choice.
                // SAFETY: open of a NUL-terminated path; the result is a descriptor we own.
                let fd = unsafe { libc::open(parent_c.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC) };
                if fd < 0 {
                    return Err(last_os_error());
                }
                // SAFETY: `fd` was just returned by a successful openat and is owned by nothing else.
                Ok(unsafe { OwnedFd::from_raw_fd(fd) })
            } else {
                Err(e)
            }
        });
        let parent = parent.map_err(|e| err("", e))?;
        // SAFETY: geteuid has no preconditions.
        let uid = unsafe { libc::geteuid() };
        for _attempt in 0..16 {
            // SAFETY: mkdirat relative to a descriptor we own, with a NUL-terminated name.
            if unsafe { libc::mkdirat(parent.as_raw_fd(), base.as_ptr(), 0o700) } != 0 {
                let e = last_os_error();
                if e.raw_os_error() != Some(libc::EEXIST) {
                    return Err(err("", e));
                }
                let st = lstat_at(parent.as_raw_fd(), &base).map_err(|e| err("", e))?;
                if is_symlink(&st) {
                    crate::bail!("cannot use {shown} as the staging directory: it is a symbolic link (dtld never follows one there; remove it)");
                }
                if !is_dir(&st) {
                    crate::bail!("cannot use {shown} as the staging directory: it exists and is not a directory");
                }
                if st.st_uid != uid {
                    crate::bail!("cannot use {shown} as the staging directory: it is owned by another user (uid {})", st.st_uid);
                }
            }
            let fd = match open_at(parent.as_raw_fd(), &base, libc::O_RDONLY | libc::O_DIRECTORY, 0) {
                Ok(fd) => fd,
                // Replaced by a symlink or removed between mkdirat and openat: look again.
                Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP) | Some(libc::ENOENT) | Some(libc::ENOTDIR)) => continue,
                Err(e) => return Err(err("", e)),
            };
            let st = fstat(fd.as_raw_fd()).map_err(|e| err("", e))?;
            if st.st_uid != uid {
                crate::bail!("cannot use {shown} as the staging directory: it is owned by another user (uid {})", st.st_uid);
            }
            if st.st_mode & 0o077 != 0 {
                // An older dtld made it 0755: ours, so tighten it.
                // SAFETY: fchmod on a descriptor we own.
                unsafe { libc::fchmod(fd.as_raw_fd(), 0o700) };
            }
            let id = (st.st_dev, st.st_ino);
            let lock = open_at(fd.as_raw_fd(), c".lock", libc::O_RDWR | libc::O_CREAT, 0o600).map_err(|e| err("", e))?;
            // Another link of the same output waits here. SAFETY: flock on our descriptor.
            unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) };
            // The holder we waited for may have removed (or someone renamed) the directory.
            let still = lstat_at(parent.as_raw_fd(), &base).map(|s| (s.st_dev, s.st_ino) == id).unwrap_or(false);
            let live = fstat(fd.as_raw_fd()).map(|s| s.st_nlink > 0).unwrap_or(false);
            if !still || !live {
                continue;
            }
            if !persistent {
                clear_at(fd.as_raw_fd(), &|n: &CStr| n == c".lock", 0);
            }
            let pinned = pin(&fd, id).unwrap_or_else(|| crate::util::path::abs(name));
            let _signal = (!keep).then(|| crate::cleanup::register_dir(crate::util::path::abs(name), id));
            return Ok(StagingDir { name: name.to_path_buf(), parent, base, fd, id, pinned, keep, _lock: Some(lock), _signal });
        }
        crate::bail!("cannot create directory {shown}: it keeps being replaced")
    }

    /// The path dtld and the local LLVM tools use for the directory: `/proc/self/fd/N`, which
    /// is the directory itself whatever its name refers to (the name made absolute where
    /// /proc is missing).
    pub fn path(&self) -> &Path {
        &self.pinned
    }

    /// Whether the name still refers to this directory; an error naming it otherwise (a child
    /// that reached it by name may have written elsewhere, so nothing it made is used).
    pub fn check(&self) -> Result<()> {
        match lstat_at(self.parent.as_raw_fd(), &self.base) {
            Ok(st) if (st.st_dev, st.st_ino) == self.id && is_dir(&st) => Ok(()),
            _ => crate::bail!(
                "the staging directory {} was replaced during the link (renamed, removed or made a symbolic link); its contents are not used",
                self.name.display()
            ),
        }
    }
}

/// A staging directory being removed by a thread of its own (`StagingDir::remove_in_background`):
/// the link goes on meanwhile (thousands of `unlinkat` wait on the file system, not the CPU),
/// and dropping this waits until the directory is gone, so nothing is left behind at exit.
/// Work started with `timed` also says how long its steps took (`join_into` a trace).
#[must_use]
pub struct Removal(Vec<(std::thread::JoinHandle<()>, Option<std::sync::Arc<Steps>>)>);

/// The steps a background task timed: (name, detail, start, duration).
#[derive(Default)]
pub struct Steps(std::sync::Mutex<Vec<(&'static str, String, std::time::Instant, std::time::Duration)>>);

impl Steps {
    /// Gives the steps called `name` the detail `relabel` returns for theirs (a step recorded
    /// before its final detail was known).
    pub fn relabel(&self, name: &str, relabel: &dyn Fn(&str) -> Option<String>) {
        for step in self.0.lock().unwrap_or_else(|e| e.into_inner()).iter_mut().filter(|s| s.0 == name) {
            if let Some(d) = relabel(&step.1) {
                step.1 = d;
            }
        }
    }

    /// Moves the steps recorded so far into `trace`, as steps of the stage under way.
    pub fn record(&self, trace: &mut crate::trace::Trace) {
        for (name, detail, start, dur) in std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner())) {
            trace.part(name, &detail, start, dur);
        }
    }

    /// Runs `f` as the step `name` (with `detail`), timed.
    pub fn time<T>(&self, name: &'static str, detail: &str, f: impl FnOnce() -> T) -> T {
        let start = std::time::Instant::now();
        let r = f();
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push((name, detail.to_string(), start, start.elapsed()));
        r
    }
}

impl Removal {
    /// Other work under way in a thread of its own (`h`), waited for in the same way.
    pub fn thread(h: Option<std::thread::JoinHandle<()>>) -> Removal {
        Removal(h.into_iter().map(|h| (h, None)).collect())
    }

    /// `f` on a thread of its own (`thread_name`), recording its steps (`Steps::time`); if no
    /// thread can be started, it runs here.
    pub fn timed(thread_name: &str, f: impl FnOnce(&Steps) + Send + 'static) -> Removal {
        let steps = std::sync::Arc::new(Steps::default());
        let s = steps.clone();
        let f = std::sync::Arc::new(std::sync::Mutex::new(Some(f)));
        let g = f.clone();
        let h = std::thread::Builder::new().name(thread_name.into()).spawn(move || {
            if let Some(f) = g.lock().unwrap_or_else(|e| e.into_inner()).take() {
                f(&s);
            }
        });
        match h {
            Ok(h) => Removal(vec![(h, Some(steps))]),
            Err(_) => {
                if let Some(f) = f.lock().unwrap_or_else(|e| e.into_inner()).take() {
                    f(&steps);
                }
                Removal(Vec::new())
            }
        }
    }

    /// This work and `other`'s, waited for together.
    pub fn and(mut self, mut other: Removal) -> Removal {
        self.0.append(&mut other.0);
        self
    }

    /// Waits for all of it and records the timed steps in `trace` (on its second track: they
    /// ran alongside the link).
    pub fn join_into(mut self, trace: &mut crate::trace::Trace) {
        for (h, steps) in self.0.drain(..) {
            let _ = h.join();
            for (name, detail, start, dur) in steps.map(|s| std::mem::take(&mut *s.0.lock().unwrap_or_else(|e| e.into_inner()))).unwrap_or_default() {
                trace.background(name, &detail, start, dur);
            }
        }
    }
}

impl Drop for Removal {
    fn drop(&mut self) {
        for (h, _) in self.0.drain(..) {
            let _ = h.join();
        }
    }
}

impl StagingDir {
    /// Removes the directory (as dropping it does) in another thread; see `Removal`.
    pub fn remove_in_background(self) -> Removal {
        if self.keep {
            return Removal(Vec::new());
        }
        // If no thread can be started, the closure (and with it the directory) is dropped here.
        Removal::thread(std::thread::Builder::new().name("dtld-rm-staging".into()).spawn(move || drop(self)).ok())
    }
}

/// `/proc/self/fd/N` for the directory, inherited by children (so a child's working directory
/// or path through it is the same directory), if /proc shows it.
fn pin(fd: &OwnedFd, id: (u64, u64)) -> Option<PathBuf> {
    let raw = fd.as_raw_fd();
    // SAFETY: clearing FD_CLOEXEC on a descriptor we own; children then inherit it.
    unsafe { libc::fcntl(raw, libc::F_SETFD, 0) };
    let p = PathBuf::from(format!("/proc/self/fd/{raw}"));
    let m = std::fs::metadata(&p).ok()?;
    use std::os::unix::fs::MetadataExt;
    ((m.dev(), m.ino()) == id).then_some(p)
}

impl Drop for StagingDir {
    fn drop(&mut self) {
        if self.keep {
            return;
        }
        clear_at(self.fd.as_raw_fd(), &|_| false, 0);
        // Only our directory, under the name it still has.
        if let Ok(st) = lstat_at(self.parent.as_raw_fd(), &self.base) {
            if (st.st_dev, st.st_ino) == self.id && is_dir(&st) {
                // SAFETY: unlinkat relative to a descriptor we own.
                unsafe { libc::unlinkat(self.parent.as_raw_fd(), self.base.as_ptr(), libc::AT_REMOVEDIR) };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("dtld-staging-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// A new directory is private; a stale one of the user's is emptied, made private and
    /// removed at the end; a symlink or a file at the name is refused and left as it was.
    #[test]
    fn private_reused_refused() {
        let d = scratch("open");
        let s = d.join("out.dtld-lto");
        {
            let st = StagingDir::open(&s, false).unwrap();
            assert_eq!(std::fs::metadata(&s).unwrap().permissions().mode() & 0o777, 0o700);
            std::fs::write(st.path().join("x"), b"x").unwrap();
        }
        assert!(!s.exists());
        std::fs::create_dir_all(s.join("old")).unwrap();
        std::fs::write(s.join("old/stale.o"), b"stale").unwrap();
        std::fs::set_permissions(&s, std::fs::Permissions::from_mode(0o755)).unwrap();
        {
            let st = StagingDir::open(&s, false).unwrap();
            assert_eq!(std::fs::metadata(&s).unwrap().permissions().mode() & 0o777, 0o700);
            let names: Vec<_> = std::fs::read_dir(st.path()).unwrap().flatten().map(|e| e.file_name()).collect();
            assert_eq!(names, [std::ffi::OsString::from(".lock")]);
        }
        assert!(!s.exists());
        let victim = d.join("victim");
        std::fs::create_dir(&victim).unwrap();
        std::os::unix::fs::symlink(&victim, &s).unwrap();
        let e = StagingDir::open(&s, false).err().unwrap();
        assert!(e.messages[0].contains("it is a symbolic link"), "{:?}", e.messages);
        assert!(std::fs::symlink_metadata(&s).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_dir(&victim).unwrap().count(), 0);
        std::fs::remove_file(&s).unwrap();
        std::fs::write(&s, b"planted").unwrap();
        let e = StagingDir::open(&s, false).err().unwrap();
        assert!(e.messages[0].contains("not a directory"), "{:?}", e.messages);
        assert_eq!(std::fs::read(&s).unwrap(), b"planted");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
