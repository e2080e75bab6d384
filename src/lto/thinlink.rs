//! The thin link: summary analysis by the user's `llvm-lto2 run`, from a staging directory.
//!
//! `llvm-lto2` names every module by the path it was given and writes `<path>.thinlto.bc` and
//! `<path>.imports` next to it. So dtld never hands it the user's files directly: it builds a
//! staging tree whose entries are symlinks to plain inputs and thin-archive members, and real
//! files for regular-archive members, at exactly the paths dtld wants as module IDs. Concurrent
//! links then never write next to shared inputs, and the module paths that end up inside the
//! index shards are chosen by dtld (no process id, no random part, no absolute build directory).

use std::collections::HashMap;
use std::io::Write as _;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

use crate::error::{Error, Result};
use crate::lto::bitcode::Module;
use crate::lto::llvm::Llvm;
use crate::lto::options::LtoOptions;
use crate::util::path::abs;

/// Settings of the code generator for both the regular-LTO partition (compiled by llvm-lto2)
/// and the ThinLTO backends.
#[derive(Debug, Clone)]
pub struct CodegenSettings {
    pub opt_level: u32,
    pub cg_opt_level: Option<u32>,
    pub pic: bool,
    /// `-r`: no relocation model is imposed (each module keeps its own, as in lld).
    pub relocatable: bool,
    pub mcpu: Option<String>,
    pub mattrs: Vec<String>,
    pub threads: usize,
}

/// Lexically normalizes `p` (`a/./b/../c` → `a/c`), keeping leading `..` components.
pub fn normalize(p: &Path) -> PathBuf {
    let mut out: Vec<Component> = Vec::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => match out.last() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir) => {}
                _ => out.push(c),
            },
            _ => out.push(c),
        }
    }
    out.iter().collect()
}

/// Number of leading `..` components of a normalized relative path.
pub fn leading_parents(p: &Path) -> usize {
    p.components().take_while(|c| matches!(c, Component::ParentDir)).count()
}

/// Puts module `m` at `path`: a symlink to its source file, a hard link to its member store
/// entry, or else a file holding its bytes. An entry already there that is exactly what would
/// be made (a persistent staging tree, or the same module staged twice) is kept as it is.
fn place(path: &Path, m: &Module) -> Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.is_dir()) {
        std::fs::create_dir_all(parent).map_err(|e| Error::new(format!("cannot create directory {}: {}", parent.display(), crate::error::io_error(&e))))?;
    }
    let linked = match &m.source {
        Some(src) => {
            let abs = std::fs::canonicalize(src).unwrap_or_else(|_| src.clone());
            if std::fs::read_link(path).is_ok_and(|l| l == abs) {
                return Ok(());
            }
            let _ = std::fs::remove_file(path);
            std::os::unix::fs::symlink(&abs, path).is_ok()
        }
        None => false,
    };
    let linked = linked || m.store.as_ref().is_some_and(|store| link_from_store(store, m.data, path));
    if !linked {
        let _ = std::fs::remove_file(path);
        std::fs::write(path, m.data).map_err(|e| Error::new(format!("Failed to create file {}: {}", path.display(), crate::error::io_error(&e))))?;
    }
    Ok(())
}

/// Hard-links `path` to the member store entry `store` holding exactly `data` (keeping a link
/// to the same entry that is already there). A missing entry is written first (a new file
/// renamed into place). The staged file (sharing the entry's
/// inode) is then checked: a regular file of ours that nobody else may write, holding exactly
/// `data`; otherwise (a damaged or planted entry) both go and the result is false, as when the
/// store cannot be used at all (another file system): the caller writes the file instead.
pub(crate) fn link_from_store(store: &Path, data: &[u8], path: &Path) -> bool {
    use std::io::{Read as _, Write as _};
    use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt};
    if std::fs::symlink_metadata(store).is_err() {
        // Per thread too: two modules with the same bytes may be staged at once (by the
        // staging's parallel workers).
        let thread = rayon::current_thread_index().map_or_else(|| "main".to_string(), |i| i.to_string());
        let tmp = PathBuf::from(format!("{}.tmp-{}-{thread}", store.display(), std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        let written = std::fs::File::options()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW)
            .mode(0o644)
            .open(&tmp)
            .and_then(|mut f| f.write_all(data))
            .and_then(|()| std::fs::rename(&tmp, store));
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
            return false;
        }
    }
    let same_inode = match (std::fs::symlink_metadata(store), std::fs::symlink_metadata(path)) {
        (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
        _ => false,
    };
    if !same_inode {
        let _ = std::fs::remove_file(path);
        if std::fs::hard_link(store, path).is_err() {
            return false;
        }
    }
    let good = (|| {
        let f = std::fs::File::options().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(path).ok()?;
        let m = f.metadata().ok()?;
        // SAFETY: geteuid has no preconditions.
        let ours = m.uid() == unsafe { libc::geteuid() } && m.mode() & 0o022 == 0;
        if !m.is_file() || !ours || m.len() != data.len() as u64 {
            return None;
        }
        let mut staged = Vec::with_capacity(data.len());
        (&f).take(data.len() as u64 + 1).read_to_end(&mut staged).ok()?;
        (staged == data).then_some(())
    })()
    .is_some();
    if !good {
        let _ = std::fs::remove_file(path);
        let _ = std::fs::remove_file(store);
    }
    good
}

/// Checks that module IDs are unique and puts every module to be placed at `cwd/<id>` (shared
/// with the LLVMgold fallback, `goldhost.rs`). The modules are placed in parallel: each is a
/// handful of system calls and, for a member hard-linked from the store, a read-back of its
/// bytes (38-55 ms for OpenSSL's 1,000 members one after the other).
pub(crate) fn stage(cwd: &Path, modules: &[Module]) -> Result<()> {
    unique_ids(modules)?;
    let all: Vec<usize> = (0..modules.len()).collect();
    stage_some(cwd, modules, &all)
}

/// An internal error if two modules would be staged at one path.
pub(crate) fn unique_ids(modules: &[Module]) -> Result<()> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (i, m) in modules.iter().enumerate() {
        if let Some(j) = seen.insert(m.id.as_str(), i) {
            crate::bail!("internal error: two LTO modules share the ID {} ({} and {})", m.id, j, i);
        }
    }
    Ok(())
}

/// Stages the modules `which` (indices into `modules`) under `cwd`, in parallel.
pub(crate) fn stage_some(cwd: &Path, modules: &[Module], which: &[usize]) -> Result<()> {
    use rayon::prelude::*;
    // The first error in module order, whichever thread met it.
    let errors: Vec<(usize, Error)> = which
        .par_iter()
        .with_min_len(8)
        .filter(|&&i| modules[i].place)
        .filter_map(|&i| place(&cwd.join(&modules[i].id), &modules[i]).err().map(|e| (i, e)))
        .collect();
    match errors.into_iter().min_by_key(|(i, _)| *i) {
        Some((_, e)) => Err(e),
        None => Ok(()),
    }
}

#[cfg(test)]
fn rsp_quote(s: &str) -> String {
    let mut q = String::with_capacity(s.len() + 2);
    rsp_quote_into(&mut q, s);
    q
}

/// `s` in double quotes, `"` and `\` escaped, as LLVM's response-file reader takes it.
fn rsp_quote_into(out: &mut String, s: &str) {
    out.push('"');
    rsp_escape_into(out, s);
    out.push('"');
}

fn rsp_escape_into(out: &mut String, s: &str) {
    if !s.contains(['"', '\\']) {
        out.push_str(s);
        return;
    }
    for c in s.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
}

/// What the thin link produced, per module (same order as the input modules).
pub struct ThinLinkOutput {
    /// What LLVM said during a successful thin link, as `dtld: warning: ...` lines and report
    /// text (`diagnostics::render`), for the caller to pass on through the link's `Diag`.
    pub messages: String,
    /// `Some(shard path)` for ThinLTO modules (relative to the working directory), `None` for
    /// regular-LTO modules.
    pub shards: Vec<Option<PathBuf>>,
    /// Import sources (module IDs) per module, from its `.imports` file.
    pub imports: Vec<Vec<String>>,
    /// The regular-LTO object compiled by llvm-lto2, if any module was regular LTO.
    pub regular_object: Option<Vec<u8>>,
    /// `Mode::InProcess`: the ThinLTO backends' objects, in task order.
    pub thin_objects: Vec<Vec<u8>>,
    /// The shards by module when they are still only in memory (the in-process thin link for
    /// DTLTO): then neither they nor the modules are on disk yet; `None`: both are.
    pub in_memory: Option<Vec<Option<Vec<u8>>>>,
    /// By module: what the backend cache said when the thin link asked (DTLTO in process with
    /// a cache directory); empty otherwise.
    pub known: Vec<Option<super::backend::Known>>,
    /// When staging, `llvm-lto2` and reading its outputs started, for `--time-trace`.
    pub times: [std::time::Instant; 4],
}

/// What `llvm-lto2 run` does after the thin link.
#[derive(Debug, Clone)]
pub enum Mode {
    /// Write one index shard per module, and one imports file when `imports` (the backend jobs
    /// need the import lists; `--thinlto-index-only` only for `--thinlto-emit-imports-files`,
    /// and a thousand files not written are a thousand inodes not allocated and freed);
    /// dtld runs the backends.
    DistributedIndexes { imports: bool },
    /// Run the backends in llvm-lto2's thread pool (in-process ThinLTO, as lld), with LLVM's
    /// ThinLTO cache when a directory is given; optionally also write the shards and imports,
    /// and with `save_temps` LLVM's intermediate bitcode (`lto.<task>.<stage>.bc`, `lto.index.bc`).
    InProcess { cache_dir: Option<PathBuf>, emit_indexes: bool, save_temps: bool },
}

/// Stages `modules` under `cwd` and runs `llvm-lto2 run` in `cwd` in distributed-index mode.
/// `work` is a directory for the response file and the regular-LTO output.
pub fn run(llvm: &Llvm, opts: &LtoOptions, cg: &CodegenSettings, cwd: &Path, work: &Path, modules: &[Module], mode: &Mode) -> Result<ThinLinkOutput> {
    let t_stage = std::time::Instant::now();
    stage(cwd, modules)?;
    let out_base = work.join("lto");
    let args = lto2_args(opts, cg, modules, mode, &out_base);
    // The response file: the arguments above, then one `-r=` per symbol (39,000 for an
    // OpenSSL relink), quoted straight into one buffer.
    let mut text =
        String::with_capacity(args.iter().map(|a| a.len() + 3).sum::<usize>() + modules.iter().map(|m| m.resolutions.len() * (m.id.len() + 32)).sum::<usize>());
    for a in &args {
        rsp_quote_into(&mut text, a);
        text.push('\n');
    }
    for m in modules {
        for (name, flags) in &m.resolutions {
            let name = String::from_utf8_lossy(name);
            if name.contains(',') || m.id.contains(',') {
                crate::bail!("{}: symbol '{}': names containing ',' cannot be passed to llvm-lto2", m.id, name);
            }
            text.push('"');
            for part in ["-r=", m.id.as_str(), ",", &name, ",", flags.as_str()] {
                rsp_escape_into(&mut text, part);
            }
            text.push_str("\"\n");
        }
    }
    let rsp = work.join("thinlink.rsp");
    {
        let mut f = std::fs::File::create(&rsp).map_err(|e| Error::new(format!("cannot open {}: {}", rsp.display(), crate::error::io_error(&e))))?;
        f.write_all(text.as_bytes()).map_err(|e| Error::new(format!("cannot write {}: {}", rsp.display(), crate::error::io_error(&e))))?;
    }
    mark_outputs_stale(work);
    let t_run = std::time::Instant::now();
    let out = Command::new(&llvm.lto2)
        .arg("run")
        .arg(format!("@{}", abs(&rsp).display()))
        .current_dir(cwd)
        .output()
        .map_err(|e| Error::new(format!("cannot run {}: {}", llvm.lto2.display(), crate::error::io_error(&e))))?;
    if !out.status.success() {
        let text = String::from_utf8_lossy(&out.stderr);
        let mut msgs: Vec<String> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                // "llvm-lto2: error: x" → "thin link: x" (the tool is an implementation detail).
                let l = l.trim();
                let l = l.strip_prefix(&format!("{}: ", llvm.lto2.display())).unwrap_or(l);
                let l = l.split_once(": ").filter(|(p, _)| p.starts_with("llvm-lto2")).map(|(_, r)| r).unwrap_or(l);
                format!("thin link (LLVM {}): {}", llvm.version, l.trim_start_matches("error: "))
            })
            .collect();
        if msgs.is_empty() {
            msgs.push(format!("thin link (LLVM {}): {} failed with {}", llvm.version, llvm.lto2.display(), out.status));
        }
        return Err(Error::many(msgs));
    }
    let messages = super::diagnostics::render(&out.stderr, modules);
    let t_read = std::time::Instant::now();
    // In-process backends without index files write no shards: nothing to look for (two
    // failing system calls per module).
    let (shards, imports) = if matches!(mode, Mode::InProcess { emit_indexes: false, .. }) {
        (vec![None; modules.len()], vec![Vec::new(); modules.len()])
    } else {
        index_outputs(cwd, modules)
    };
    let regular = out_base.with_file_name("lto.0");
    let regular_object = if is_stale(&regular) { None } else { std::fs::read(&regular).ok() };
    // In-process: `lto.1`, `lto.2`, ... one per ThinLTO task, in task order.
    let mut thin_objects = Vec::new();
    if let Mode::InProcess { .. } = mode {
        let mut tasks: Vec<(u32, PathBuf)> = std::fs::read_dir(work)
            .map(|rd| {
                rd.flatten()
                    .filter_map(|e| {
                        let n = task_output(e.file_name().as_encoded_bytes())?;
                        (n > 0 && !is_stale(&e.path())).then(|| (n, e.path()))
                    })
                    .collect()
            })
            .unwrap_or_default();
        tasks.sort();
        // In parallel: a relink of OpenSSL reads 998 objects (18 MB) back.
        use rayon::prelude::*;
        thin_objects = tasks
            .par_iter()
            .map(|(_, p)| std::fs::read(p).map_err(|e| Error::new(format!("cannot open {}: {}", p.display(), crate::error::io_error(&e)))))
            .collect::<Result<Vec<_>>>()?;
    }
    Ok(ThinLinkOutput {
        shards,
        imports,
        regular_object,
        thin_objects,
        in_memory: None,
        known: Vec::new(),
        times: [t_stage, t_run, t_read, std::time::Instant::now()],
        messages,
    })
}

/// llvm-lto2's options for the thin link of `modules` in `mode`, its output files based at
/// `out_base`, and the modules (the `-r=` resolutions follow in the response file).
fn lto2_args(opts: &LtoOptions, cg: &CodegenSettings, modules: &[Module], mode: &Mode, out_base: &Path) -> Vec<String> {
    let mut args: Vec<String> = match mode {
        Mode::DistributedIndexes { imports } => {
            let mut a = vec!["-thinlto-distributed-indexes".to_string()];
            if *imports {
                a.push("-thinlto-emit-imports".into());
            }
            a
        }
        Mode::InProcess { cache_dir, emit_indexes, save_temps } => {
            let mut a = Vec::new();
            if *save_temps {
                a.push("-save-temps".into());
            }
            if *emit_indexes {
                a.push("-thinlto-emit-indexes".into());
                a.push("-thinlto-emit-imports".into());
            }
            if let Some(d) = cache_dir {
                a.push(format!("--cache-dir={}", abs(d).display()));
            }
            a
        }
    };
    args.push(format!("-O{}", cg.opt_level));
    if !cg.relocatable {
        args.push(format!("--relocation-model={}", if cg.pic { "pic" } else { "static" }));
    }
    args.extend([
        "--function-sections".into(),
        "--data-sections".into(),
        "--addrsig".into(),
        format!("--thinlto-threads={}", cg.threads.max(1)),
        "-o".into(),
        abs(out_base).to_string_lossy().into_owned(),
    ]);
    if let Some(l) = cg.cg_opt_level {
        args.push(format!("--cg-opt-level={l}"));
    }
    if let Some(c) = &cg.mcpu {
        args.push(format!("--mcpu={c}"));
    }
    if !cg.mattrs.is_empty() {
        args.push(format!("--mattr={}", cg.mattrs.join(",")));
    }
    if opts.debug_pass_manager {
        args.push("--debug-pass-manager".into());
    }
    if let Some(p) = &opts.sample_profile {
        args.push(format!("--lto-sample-profile-file={p}"));
    }
    if opts.no_pgo_warn_mismatch {
        args.push("--no-pgo-warn-mismatch".into());
    }
    for t in opts.tuning.iter().filter(|t| t.knob.honoured_by(super::options::Way::Lto2)) {
        args.extend(t.knob.lto2_args(&t.value));
    }
    args.extend(opts.mllvm.iter().cloned());
    for m in modules {
        args.push(m.id.clone());
    }
    args
}

/// What a thin link wrote next to each module (its ID, relative to `cwd`): the shard
/// `<id>.thinlto.bc` if there is one, and the import sources listed in `<id>.imports`.
pub(crate) fn index_outputs(cwd: &Path, modules: &[Module]) -> (Vec<Option<PathBuf>>, Vec<Vec<String>>) {
    modules
        .iter()
        .map(|m| {
            let shard = PathBuf::from(format!("{}.thinlto.bc", m.id));
            let has_shard = cwd.join(&shard).is_file();
            let list = std::fs::read_to_string(cwd.join(format!("{}.imports", m.id))).unwrap_or_default();
            (has_shard.then_some(shard), list.lines().filter(|l| !l.is_empty()).map(str::to_string).collect())
        })
        .unzip()
}

/// The task of one of llvm-lto2's outputs (`lto.<task>`, digits only), `None` for any other
/// file name: the staging directory holds them next to the staged modules.
pub(crate) fn task_output(name: &[u8]) -> Option<u32> {
    let digits = name.strip_prefix(b"lto.")?;
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(digits).ok()?.parse().ok()
}

/// `llvm-lto2`'s objects (`lto.<task>`) left in `work` by a previous link (a persistent
/// staging tree, `staging.rs`): llvm-lto2 truncates and rewrites each it produces again, in
/// place (no new inode), which sets its modification time; one it does not produce must not be
/// taken for this link's. So each gets the modification time 0 before the run (`is_stale`).
fn mark_outputs_stale(work: &Path) {
    use rayon::prelude::*;
    let Ok(rd) = std::fs::read_dir(work) else { return };
    let outputs: Vec<std::fs::DirEntry> = rd.flatten().filter(|e| task_output(e.file_name().as_encoded_bytes()).is_some()).collect();
    // A metadata update each (998 for an OpenSSL relink): in parallel.
    outputs.par_iter().for_each(|e| {
        let Ok(c) = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(e.path().as_os_str())) else { return };
        let times = [libc::timespec { tv_sec: 0, tv_nsec: 0 }; 2];
        // SAFETY: utimensat on a NUL-terminated path with two valid timespecs, not following a link.
        if unsafe { libc::utimensat(libc::AT_FDCWD, c.as_ptr(), times.as_ptr(), libc::AT_SYMLINK_NOFOLLOW) } != 0 {
            // A file whose time cannot be set cannot be told apart: it goes.
            let _ = std::fs::remove_file(e.path());
        }
    });
}

/// Whether `p` is an output of an earlier link that this run of `llvm-lto2` did not rewrite
/// (`mark_outputs_stale`).
fn is_stale(p: &Path) -> bool {
    std::fs::symlink_metadata(p).and_then(|m| m.modified()).is_ok_and(|t| t == std::time::UNIX_EPOCH)
}

impl ThinLinkOutput {
    /// Records the thin link's steps (staging, `llvm-lto2`, reading its outputs) in `trace`.
    pub fn record(&self, trace: &mut crate::trace::Trace, what: &str) {
        let [a, b, c, d] = self.times;
        trace.span("Stage LTO modules", "", a, b - a);
        trace.span(what, "llvm-lto2", b, c - b);
        trace.span("Read thin link outputs", "", c, d - c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizing() {
        assert_eq!(normalize(Path::new("a/./b/../c")), PathBuf::from("a/c"));
        assert_eq!(normalize(Path::new("../x/../../y")), PathBuf::from("../../y"));
        assert_eq!(leading_parents(&normalize(Path::new("../x/../../y"))), 2);
        assert_eq!(normalize(Path::new("/a/../../b")), PathBuf::from("/b"));
        assert_eq!(rsp_quote(r#"a "b"\c"#), r#""a \"b\"\\c""#);
    }
}
