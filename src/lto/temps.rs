//! DTLTO's temporary files, named and placed as ld.lld 22 names and places them.
//!
//! Why it exists: what a DTLTO link leaves on disk, and the paths its job file names, are part of
//! lld's observable contract (LLVM's own DTLTO tests list the files; distributors and build
//! systems see the paths). ld.lld 22 (`llvm/lib/LTO/LTO.cpp`'s out-of-process backend and
//! `llvm/lib/DTLTO/`) writes every temporary in the directory of the output, named after the
//! link's process id:
//!
//! * the job file `<dir>/<stem of the output>.<pid>.dist-file.json`;
//! * for the module of backend task `T`, the native object
//!   `<dir>/<stem of the module ID>.<T>.<pid>.native.o` and its summary shard, the same name
//!   with `.thinlto.bc` added;
//! * a ThinLTO member of a regular archive, written out for the backends:
//!   `<dir>/<file name of lld's name for it>.<seq>.<PID in upper-case hex>.o`, `seq` counting the
//!   bitcode files given to LTO (so `lib.a(m.o at 8).3.1A2B.o`).
//!
//! `--save-temps` keeps all of them; `--thinlto-emit-index-files` keeps the shards; otherwise
//! they are removed after the link, after an error, and on SIGINT/SIGTERM/SIGHUP
//! (`cleanup.rs`). dtld itself creates each file exclusively (`O_EXCL`: a file already at that
//! name, a leftover of a killed link or anything planted there, is unlinked first, never
//! written through), and removes only names it registered.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::error::{Error, Result};

/// What a temporary is, which decides whether it is kept.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    /// The job file.
    JobFile,
    /// A summary shard.
    Shard,
    /// A native object a backend writes.
    Native,
    /// A regular-archive member written out for the backends.
    Member,
}

/// The temporaries of one DTLTO link.
pub struct Temps {
    /// lld's `parent_path` of the output, as given ("" when it has none).
    dir: String,
    out_stem: String,
    pid: u32,
    keep_all: bool,
    keep_shards: bool,
    /// What this link registered, removed at the end unless kept.
    files: Mutex<Vec<(PathBuf, Kind)>>,
    /// The same paths, removed on a signal while the link runs.
    on_signal: crate::cleanup::Registered,
}

/// LLVM's `sys::path::filename`: the last component (after the last `/`).
pub fn llvm_filename(p: &str) -> &str {
    let p = p.trim_end_matches('/');
    p.rsplit('/').next().unwrap_or(p)
}

/// LLVM's `sys::path::stem`: the file name without its last extension (`.o` gives "").
pub fn llvm_stem(p: &str) -> &str {
    let f = llvm_filename(p);
    if f == "." || f == ".." {
        return f;
    }
    match f.rfind('.') {
        Some(i) => &f[..i],
        None => f,
    }
}

/// LLVM's `sys::path::parent_path` of the output, as lld's DTLTO takes it (not normalized):
/// everything before the last `/` (`/` for `/x`), "" for a bare name.
fn llvm_parent(p: &str) -> &str {
    match p.rfind('/') {
        None => "",
        Some(i) => match p[..i].trim_end_matches('/') {
            "" => "/",
            d => d,
        },
    }
}

impl Temps {
    /// The temporaries of a link whose output is `output` (`-o` as given). `dir` overrides the
    /// directory (an output that is no regular file, `-o /dev/null`, gets a private one).
    pub fn new(output: &str, dir: Option<String>, keep_all: bool, keep_shards: bool) -> Temps {
        Temps {
            dir: dir.unwrap_or_else(|| llvm_parent(output).to_string()),
            out_stem: llvm_stem(output).to_string(),
            pid: std::process::id(),
            keep_all,
            keep_shards,
            files: Mutex::new(Vec::new()),
            on_signal: crate::cleanup::register_group(),
        }
    }

    /// `name` in the output's directory (lld's `sys::path::append`).
    fn in_dir(&self, name: &str) -> String {
        match self.dir.as_str() {
            "" => name.to_string(),
            d if d.ends_with('/') => format!("{d}{name}"),
            d => format!("{d}/{name}"),
        }
    }

    pub fn job_file(&self) -> String {
        self.in_dir(&format!("{}.{}.dist-file.json", self.out_stem, self.pid))
    }

    /// The module ID of a regular-archive member that lld names `lld_name`, the `seq`-th
    /// bitcode file of the link.
    pub fn member(&self, lld_name: &str, seq: usize) -> String {
        self.in_dir(&format!("{}.{seq}.{:X}.o", llvm_filename(lld_name), self.pid))
    }

    /// The native object of backend task `task` for module `module_id`.
    pub fn native(&self, module_id: &str, task: usize) -> String {
        self.in_dir(&format!("{}.{task}.{}.native.o", llvm_stem(module_id), self.pid))
    }

    /// Whether a temporary of this kind stays after the link.
    pub fn kept(&self, kind: Kind) -> bool {
        self.keep_all || (kind == Kind::Shard && self.keep_shards)
    }

    /// Registers `path` (relative to the working directory, or absolute) for removal at the end
    /// of the link and on a signal: a file that someone else (a backend) creates.
    pub fn expect(&self, path: &Path, kind: Kind) {
        if self.kept(kind) {
            return;
        }
        self.on_signal.add(path.to_path_buf());
        self.files.lock().unwrap_or_else(|e| e.into_inner()).push((path.to_path_buf(), kind));
    }

    /// Creates the temporary `path` holding `data`, exclusively: whatever is at that name
    /// already (a leftover of a killed link, or a planted link) is unlinked, never followed.
    /// `what` words the error as lld does for this kind of file.
    pub fn create(&self, path: &Path, data: &[u8], kind: Kind) -> Result<()> {
        self.expect(path, kind);
        create_exclusive(path, data).map_err(|e| match kind {
            Kind::Member => Error::new(format!("Failed to create file {}: {}", path.display(), crate::error::io_error(&e))),
            Kind::JobFile => Error::new(format!("DTLTO backend compilation: failed to generate distributor JSON script: {}", path.display())),
            _ => Error::new(format!("'cannot open {}': {}", path.display(), crate::error::io_error(&e))),
        })
    }

    /// Removes what was registered and is not kept, on a thread of its own (the link goes on;
    /// dropping the `Removal` waits for it), in lld's two steps: the job's temporaries, then the
    /// written-out inputs.
    pub fn remove_in_background(self) -> crate::staging::Removal {
        if self.files.lock().unwrap_or_else(|e| e.into_inner()).is_empty() {
            return crate::staging::Removal::thread(None);
        }
        crate::staging::Removal::timed("dtld-rm-temps", move |steps| {
            let files = std::mem::take(&mut *self.files.lock().unwrap_or_else(|e| e.into_inner()));
            let (members, others): (Vec<_>, Vec<_>) = files.into_iter().partition(|(_, k)| *k == Kind::Member);
            steps.time("Remove DTLTO temporary files", "", || remove(&others));
            steps.time("Remove temporary inputs for DTLTO", "", || remove(&members));
        })
    }
}

/// Removes the files; one that is missing is no error (lld ignores ENOENT too: a backend that
/// failed wrote nothing).
fn remove(files: &[(PathBuf, Kind)]) {
    for (p, _) in files {
        let _ = std::fs::remove_file(p);
    }
}

impl Drop for Temps {
    fn drop(&mut self) {
        remove(&std::mem::take(&mut *self.files.lock().unwrap_or_else(|e| e.into_inner())));
    }
}

/// Creates `path` with `data`, never through an existing name: a file (or link) already there is
/// unlinked, and the new one is opened with `O_CREAT|O_EXCL` (which fails on a name created in
/// between, symbolic links included).
pub fn create_exclusive(path: &Path, data: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt;
    if std::fs::symlink_metadata(path).is_ok_and(|m| !m.is_dir()) {
        let _ = std::fs::remove_file(path);
    }
    let mut f = std::fs::File::options().write(true).create_new(true).custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC).mode(0o666).open(path)?;
    f.write_all(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lld_names() {
        assert_eq!(llvm_stem("a.out"), "a");
        assert_eq!(llvm_stem("dir/my.elf"), "my");
        assert_eq!(llvm_stem("sub/libreg.a(a.o at 90).2.7AB4.o"), "libreg.a(a.o at 90).2.7AB4");
        assert_eq!(llvm_stem(".o"), "");
        assert_eq!(llvm_stem("noext"), "noext");
        assert_eq!(llvm_filename("../lib/libreg.a(t3.o at 86)"), "libreg.a(t3.o at 86)");
        assert_eq!(llvm_parent("out"), "");
        assert_eq!(llvm_parent("sub/out.elf"), "sub");
        assert_eq!(llvm_parent("/tmp/x/out"), "/tmp/x");
        assert_eq!(llvm_parent("/out"), "/");
        let mut t = Temps::new("sub/out.elf", None, false, false);
        t.pid = 0x1a2b;
        assert_eq!(t.job_file(), "sub/out.6699.dist-file.json");
        assert_eq!(t.member("../lib/libreg.a(t3.o at 86)", 3), "sub/libreg.a(t3.o at 86).3.1A2B.o");
        assert_eq!(t.native("sub/libreg.a(t3.o at 86).3.1A2B.o", 3), "sub/libreg.a(t3.o at 86).3.1A2B.3.6699.native.o");
        assert_eq!(t.native("t1.o", 1), "sub/t1.1.6699.native.o");
        let mut t = Temps::new("/abs/out", None, false, false);
        t.pid = 7;
        assert_eq!(t.native("../t4.o", 4), "/abs/t4.4.7.native.o");
        let mut t = Temps::new("/out", None, false, false);
        t.pid = 7;
        assert_eq!(t.job_file(), "/out.7.dist-file.json");
    }

    /// A temporary's name taken by a planted symbolic link (or a leftover file) is unlinked and
    /// created anew: the link's target is never written; registered files go at the end unless
    /// kept, and an expected file that never appeared is no error.
    #[test]
    fn exclusive_and_removed() {
        let d = std::env::temp_dir().join(format!("dtld-temps-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let victim = d.join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        let out = d.join("out").to_string_lossy().into_owned();
        let t = Temps::new(&out, None, false, true);
        let job = PathBuf::from(t.job_file());
        std::os::unix::fs::symlink(&victim, &job).unwrap();
        t.create(&job, b"{}", Kind::JobFile).unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert!(!std::fs::symlink_metadata(&job).unwrap().file_type().is_symlink());
        let shard = PathBuf::from(format!("{}.thinlto.bc", t.native("m.o", 1)));
        std::fs::write(&shard, b"stale").unwrap();
        t.create(&shard, b"new", Kind::Shard).unwrap();
        assert_eq!(std::fs::read(&shard).unwrap(), b"new");
        t.expect(Path::new(&t.native("m.o", 1)), Kind::Native);
        drop(t.remove_in_background());
        assert!(!job.exists(), "the job file is removed");
        assert!(shard.exists(), "--thinlto-emit-index-files keeps the shards");
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
