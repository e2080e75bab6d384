//! Shared helpers for dtld's test targets (the differential harness and anything else that
//! drives the linker as a black box): locating the workspace, the linker under test and the
//! host tools, running commands with a timeout, shell-quoting commands for reproduction
//! messages, and a content-addressed cache of compiled objects so that the same source compiled
//! with the same flags is only compiled once across trials and runs.
//!
//! This crate must not depend on the root `dtld` crate: tests have to build while the linker
//! does not.

use std::ffi::OsStr;
use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

use wait_timeout::ChildExt;

pub mod trial;

/// The C compiler used for every compile step (and the clang driver link).
pub const CLANG: &str = "clang-22";
/// The C++ compiler (compiles `.cc` sources and drives the link of C++ programs and libraries,
/// so that libstdc++ is linked).
pub const CLANGXX: &str = "clang++-22";
/// The reference linker.
pub const LLD: &str = "ld.lld-22";
/// The archiver.
pub const LLVM_AR: &str = "llvm-ar-22";
/// `llvm-lib` (lib.exe's LLVM counterpart) for COFF archives in the PE harness.
pub const LLVM_LIB: &str = "llvm-lib-22";
/// MinGW's resource compiler (binutils), for `.rc` sources of PE fixtures.
pub const WINDRES: &str = "x86_64-w64-mingw32-windres";
/// The GNU compiler driver (used only to drive links).
pub const GCC: &str = "gcc";
/// The GNU C++ compiler driver (used only to drive links of C++ programs and libraries).
pub const GXX: &str = "g++";

/// Environment variable naming the linker under test (an absolute path).
pub const DTLD_ENV: &str = "DTLD";

/// The workspace root (the directory holding the root `Cargo.toml`). `cargo test` sets
/// `CARGO_MANIFEST_DIR` when it runs a test binary; the compile-time value is the fallback
/// for a binary run by hand.
pub fn workspace_root() -> PathBuf {
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from).unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    // This crate lives in `<root>/tests`.
    manifest.parent().expect("tests crate has a parent directory").to_path_buf()
}

/// The cargo target directory the running test binary was built into
/// (`<target>/<profile>/deps/<test>`), so that `--target-dir`, `CARGO_TARGET_DIR` and
/// config files are all honoured; else `CARGO_TARGET_DIR`, else `<root>/target`.
pub fn target_dir() -> PathBuf {
    if let Ok(exe) = std::env::current_exe() {
        let deps = exe.parent();
        if deps.and_then(|d| d.file_name()).is_some_and(|n| n == "deps") {
            if let Some(target) = deps.and_then(Path::parent).and_then(Path::parent) {
                return target.to_path_buf();
            }
        }
    }
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => workspace_root().join(dir),
        _ => workspace_root().join("target"),
    }
}

/// Finds the linker under test: `$DTLD` if set, else `target/release/dtld`, else
/// `target/debug/dtld`. The error says how to build it.
pub fn find_dtld() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os(DTLD_ENV) {
        let path = PathBuf::from(path);
        if !path.is_absolute() {
            return Err(format!("${DTLD_ENV}={} must be an absolute path (clang's -fuse-ld needs one)", path.display()));
        }
        if !path.is_file() {
            return Err(format!("${DTLD_ENV}={} does not exist", path.display()));
        }
        return Ok(path);
    }
    let target = target_dir();
    for profile in ["release", "debug"] {
        let candidate = target.join(profile).join("dtld");
        if candidate.is_file() {
            return Ok(candidate);
        }
    }
    Err(format!(
        "no dtld binary found: looked for {0}/release/dtld and {0}/debug/dtld. \
         Run `cargo build --release` first, or set {DTLD_ENV}=<absolute path of a linker>",
        target.display()
    ))
}

/// Environment variable naming the DTLTO distributor the tests use (an absolute path).
pub const DISTRIBUTOR_ENV: &str = "DTLD_DISTRIBUTOR";

/// Finds dtld's local DTLTO distributor: `$DTLD_DISTRIBUTOR` if set, else
/// `<target>/release/dtld-distribute`. There is no silent fallback: a trial that needs it fails
/// with this error, which says how to build it.
pub fn find_distributor() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os(DISTRIBUTOR_ENV) {
        let path = PathBuf::from(path);
        if !path.is_absolute() {
            return Err(format!("${DISTRIBUTOR_ENV}={} must be an absolute path", path.display()));
        }
        if !path.is_file() {
            return Err(format!("${DISTRIBUTOR_ENV}={} does not exist", path.display()));
        }
        return Ok(path);
    }
    let candidate = target_dir().join("release").join("dtld-distribute");
    if candidate.is_file() {
        return Ok(candidate);
    }
    Err(format!(
        "no DTLTO distributor: {} does not exist. Build dtld-distribute (workspace member \
         distributor/) with `cargo build --release --workspace`, or set \
         {DISTRIBUTOR_ENV}=<absolute path of a distributor>, e.g. the stand-in \
         tests/dtlto/recorder.py",
        candidate.display()
    ))
}

/// Looks a program up in `PATH`.
pub fn find_in_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|p| p.is_file())
}

/// Checks that every host tool the harness needs is installed.
pub fn check_tools(tools: &[&str]) -> Result<(), String> {
    let missing: Vec<&str> = tools.iter().copied().filter(|t| find_in_path(t).is_none()).collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!("missing host tools in PATH: {}", missing.join(", ")))
    }
}

/// Creates (idempotently) a directory containing a wrapper script `name` that execs `target`
/// with all arguments. A wrapper (not a symlink) keeps `argv[0]` meaningful for linkers that
/// pick their flavour from it. The script is written to a temporary name and renamed, so
/// concurrent callers never see a half-written file.
pub fn wrapper_dir(dir: &Path, name: &str, target: &Path) -> io::Result<PathBuf> {
    fs::create_dir_all(dir)?;
    let script = format!("#!/bin/sh\nexec {} \"$@\"\n", shell_quote(target.as_os_str()));
    let path = dir.join(name);
    if fs::read_to_string(&path).ok().as_deref() == Some(script.as_str()) {
        return Ok(dir.to_path_buf());
    }
    let tmp = dir.join(format!(".{name}.{}", unique_suffix()));
    fs::write(&tmp, script)?;
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&tmp, fs::Permissions::from_mode(0o755))?;
    fs::rename(&tmp, &path)?;
    Ok(dir.to_path_buf())
}

fn unique_suffix() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    format!("{}-{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed))
}

/// Quotes one word for a POSIX shell (for printing reproducible commands).
pub fn shell_quote(word: &OsStr) -> String {
    let s = word.to_string_lossy();
    let safe = !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%^".contains(c));
    if safe {
        s.into_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// Renders a command (with its working directory and explicit env) as a shell line.
pub fn command_line(cmd: &Command) -> String {
    let mut out = String::new();
    if let Some(dir) = cmd.get_current_dir() {
        out.push_str(&format!("cd {} && ", shell_quote(dir.as_os_str())));
    }
    for (key, value) in cmd.get_envs() {
        if let Some(value) = value {
            out.push_str(&format!("{}={} ", key.to_string_lossy(), shell_quote(value)));
        }
    }
    out.push_str(&shell_quote(cmd.get_program()));
    for arg in cmd.get_args() {
        out.push(' ');
        out.push_str(&shell_quote(arg));
    }
    out
}

/// What a finished (or timed-out) process did.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// `None` when the process was killed after the timeout.
    pub status: Option<ExitStatus>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

impl Outcome {
    pub fn success(&self) -> bool {
        self.status.is_some_and(|s| s.success())
    }

    /// A comparable description of how the process ended: `exit N`, `signal N` or `timeout`.
    pub fn status_text(&self) -> String {
        use std::os::unix::process::ExitStatusExt;
        match self.status {
            None => "timeout".to_string(),
            Some(s) => match (s.code(), s.signal()) {
                (Some(code), _) => format!("exit {code}"),
                (None, Some(sig)) => format!("signal {sig}"),
                (None, None) => format!("{s:?}"),
            },
        }
    }

    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
}

const ETXTBSY: i32 = 26;

/// Runs `cmd` with `stdin` as its standard input, killing it after `timeout`. Spawning is
/// retried when it fails with ETXTBSY: a program that was just written by a linker in another
/// thread can still be open for writing in a forked-but-not-yet-exec'd child.
pub fn run_with_timeout(cmd: &mut Command, stdin: &[u8], timeout: Duration) -> io::Result<Outcome> {
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut attempts = 0;
    let mut child = loop {
        match cmd.spawn() {
            Ok(child) => break child,
            Err(e) if e.raw_os_error() == Some(ETXTBSY) && attempts < 50 => {
                attempts += 1;
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => return Err(e),
        }
    };
    // Feed stdin and drain stdout/stderr on threads so that no pipe can fill up and block.
    let mut child_stdin = child.stdin.take().expect("stdin piped");
    let input = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        // A program that does not read its input closes the pipe: that is not an error.
        let _ = child_stdin.write_all(&input);
    });
    let mut out_pipe = child.stdout.take().expect("stdout piped");
    let mut err_pipe = child.stderr.take().expect("stderr piped");
    let out_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = out_pipe.read_to_end(&mut buf);
        buf
    });
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = err_pipe.read_to_end(&mut buf);
        buf
    });
    let status = match child.wait_timeout(timeout)? {
        Some(status) => Some(status),
        None => {
            let _ = child.kill();
            let _ = child.wait();
            None
        }
    };
    let _ = writer.join();
    let stdout = out_reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    Ok(Outcome { status, stdout, stderr })
}

/// Runs a build step (compiler, archiver, linker) with a generous timeout.
pub fn run_tool(cmd: &mut Command) -> Result<Outcome, String> {
    run_with_timeout(cmd, &[], Duration::from_secs(120)).map_err(|e| format!("cannot run `{}`: {e}", command_line(cmd)))
}

/// Like [`run_tool`], but a failure (or timeout) is an error that includes the command and its
/// stderr.
pub fn run_tool_ok(cmd: &mut Command) -> Result<Outcome, String> {
    let outcome = run_tool(cmd)?;
    if outcome.success() {
        Ok(outcome)
    } else {
        Err(format!("command failed ({}):\n  {}\n{}", outcome.status_text(), command_line(cmd), outcome.stderr_text()))
    }
}

/// A stable 64-bit FNV-1a hash (stable across Rust versions, unlike `DefaultHasher`).
#[derive(Clone)]
pub struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    pub fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// Writes a length-prefixed field so that concatenations cannot collide.
    pub fn field(&mut self, bytes: &[u8]) {
        self.write(&(bytes.len() as u64).to_le_bytes());
        self.write(bytes);
    }

    pub fn finish(&self) -> u64 {
        self.0
    }
}

fn file_hash(path: &Path) -> Option<u64> {
    let bytes = fs::read(path).ok()?;
    let mut h = Fnv::default();
    h.write(&bytes);
    Some(h.finish())
}

/// A cache of compiler outputs in a directory, keyed by the full compile command line and the
/// contents of the primary source. Each entry also records the non-system files the compiler
/// read (from a `-MD` depfile) with their hashes, and is only reused while they are unchanged.
/// Entries are published by rename, so parallel trials compiling the same thing are safe.
pub struct CompileCache {
    dir: PathBuf,
    /// `clang-22 --version`, so a compiler upgrade (whose system headers are not tracked)
    /// misses the cache.
    compiler_version: Vec<u8>,
}

impl CompileCache {
    pub fn new(dir: PathBuf) -> io::Result<Self> {
        fs::create_dir_all(&dir)?;
        let compiler_version = Command::new(CLANG).arg("--version").output()?.stdout;
        Ok(CompileCache { dir, compiler_version })
    }

    /// Compiles `source` to an object with `clang-22 -c <flags> source` and copies the result
    /// to `out`. Returns the command line used (for reproduction messages).
    pub fn compile(&self, source: &Path, flags: &[String], out: &Path) -> Result<String, String> {
        self.compile_with(CLANG, source, flags, out)
    }

    /// Like [`CompileCache::compile`] with another compiler of the same LLVM installation
    /// (`clang++-22` for C++ sources; the compiler's name is part of the cache key).
    pub fn compile_with(&self, compiler: &str, source: &Path, flags: &[String], out: &Path) -> Result<String, String> {
        let mut key = Fnv::default();
        key.field(compiler.as_bytes());
        key.field(&self.compiler_version);
        key.field(source.as_os_str().as_encoded_bytes());
        for f in flags {
            key.field(f.as_bytes());
        }
        key.field(&file_hash(source).ok_or_else(|| format!("cannot read {}", source.display()))?.to_le_bytes());
        let stem = format!("{:016x}", key.finish());
        let cached_obj = self.dir.join(format!("{stem}.o"));
        let cached_deps = self.dir.join(format!("{stem}.deps"));

        let mut cmd = Command::new(compiler);
        cmd.arg("-c").args(flags).arg(source).arg("-o").arg(out);
        let shown = command_line(&cmd);

        // Split DWARF: the object names its `.dwo` file (written next to it, from the `-o`
        // path) in its skeleton unit, and the debugger reads that file. A cached object would
        // name a file in the cache, so these are compiled in place, uncached.
        if flags.iter().any(|f| f.starts_with("-gsplit-dwarf")) {
            run_tool_ok(&mut cmd)?;
            return Ok(shown);
        }

        if cached_obj.is_file() && deps_unchanged(&cached_deps) {
            fs::copy(&cached_obj, out).map_err(|e| format!("copy {}: {e}", cached_obj.display()))?;
            return Ok(shown);
        }

        // Recreated each time in case someone cleaned the cache during the run.
        fs::create_dir_all(&self.dir).map_err(|e| format!("cannot create {}: {e}", self.dir.display()))?;
        // Unique per compile: parallel trials may compile the same key at the same time.
        let tmp = format!("{stem}.{}", unique_suffix());
        let tmp_obj = self.dir.join(format!("{tmp}.o.tmp"));
        let tmp_dep = self.dir.join(format!("{tmp}.d.tmp"));
        let mut real = Command::new(compiler);
        real.arg("-c").args(flags).arg(source).arg("-o").arg(&tmp_obj);
        real.arg("-MD").arg("-MF").arg(&tmp_dep);
        let result = run_tool_ok(&mut real);
        if let Err(e) = result {
            let _ = fs::remove_file(&tmp_obj);
            let _ = fs::remove_file(&tmp_dep);
            return Err(e.replace(&command_line(&real), &shown));
        }
        let depfile = fs::read_to_string(&tmp_dep).unwrap_or_default();
        let _ = fs::remove_file(&tmp_dep);
        let mut deps = String::new();
        for dep in parse_depfile(&depfile) {
            // System headers only change with the toolchain; fixture headers change often.
            if dep.starts_with("/usr/") {
                continue;
            }
            let hash = file_hash(Path::new(&dep)).unwrap_or(0);
            deps.push_str(&format!("{hash:016x} {dep}\n"));
        }
        let tmp_deps = self.dir.join(format!("{tmp}.deps.tmp"));
        let publish = || -> io::Result<()> {
            fs::write(&tmp_deps, deps)?;
            fs::rename(&tmp_deps, &cached_deps)?;
            fs::rename(&tmp_obj, &cached_obj)
        };
        publish().map_err(|e| format!("cannot store {} in the compile cache: {e}", cached_obj.display()))?;
        fs::copy(&cached_obj, out).map_err(|e| format!("copy {}: {e}", cached_obj.display()))?;
        Ok(shown)
    }
}

fn deps_unchanged(deps_file: &Path) -> bool {
    let Ok(text) = fs::read_to_string(deps_file) else {
        return false;
    };
    text.lines().all(|line| {
        let Some((hash, path)) = line.split_once(' ') else {
            return false;
        };
        file_hash(Path::new(path)).map(|h| format!("{h:016x}")) == Some(hash.to_string())
    })
}

/// Extracts the prerequisites from a Makefile-style depfile (`out.o: a.c b.h \` ...).
fn parse_depfile(text: &str) -> Vec<String> {
    let joined = text.replace("\\\n", " ");
    let Some((_, deps)) = joined.split_once(": ") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = deps.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&' ') => {
                cur.push(' ');
                chars.next();
            }
            c if c.is_whitespace() => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Splits a directive value into words: whitespace separates, `'...'` and `"..."` quote,
/// backslash escapes the next character outside single quotes.
pub fn split_words(text: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => cur.push(c),
                        None => return Err(format!("unterminated ' in `{text}`")),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c) => cur.push(c),
                            None => return Err(format!("trailing \\ in `{text}`")),
                        },
                        Some(c) => cur.push(c),
                        None => return Err(format!("unterminated \" in `{text}`")),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some(c) => cur.push(c),
                    None => return Err(format!("trailing \\ in `{text}`")),
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    Ok(words)
}

/// Removes and recreates a directory.
pub fn fresh_dir(dir: &Path) -> io::Result<()> {
    match fs::remove_dir_all(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    fs::create_dir_all(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words() {
        assert_eq!(split_words(r#"a 'b c' "d\"e" f\ g"#).unwrap(), ["a", "b c", "d\"e", "f g"]);
        assert_eq!(split_words("  ").unwrap(), Vec::<String>::new());
        assert_eq!(split_words("''").unwrap(), [""]);
    }

    #[test]
    fn depfile() {
        let deps = parse_depfile("x.o: /a/b.c /a/my\\ h.h \\\n  /usr/include/stdio.h\n");
        assert_eq!(deps, ["/a/b.c", "/a/my h.h", "/usr/include/stdio.h"]);
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote(OsStr::new("a-b/c.o")), "a-b/c.o");
        assert_eq!(shell_quote(OsStr::new("it's")), "'it'\\''s'");
    }
}

/// Every file and directory under `dir` (relative path → content hash; directories end in
/// `/`), to see what a command created, changed or deleted.
pub fn snapshot(dir: &std::path::Path) -> Result<std::collections::BTreeMap<String, u64>, String> {
    use std::collections::BTreeMap;
    use std::path::Path;
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, u64>) -> Result<(), String> {
        let entries = std::fs::read_dir(dir).map_err(|e| format!("read {}: {e}", dir.display()))?;
        for entry in entries {
            let entry = entry.map_err(|e| e.to_string())?;
            let path = entry.path();
            let rel = path.strip_prefix(base).expect("under base").to_string_lossy().into_owned();
            if entry.file_type().map_err(|e| e.to_string())?.is_dir() {
                out.insert(format!("{rel}/"), 0);
                walk(base, &path, out)?;
            } else {
                let bytes = std::fs::read(&path).map_err(|e| format!("read {}: {e}", path.display()))?;
                let mut h = Fnv::default();
                h.write(&bytes);
                out.insert(rel, h.finish());
            }
        }
        Ok(())
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out)?;
    Ok(out)
}

/// Paths created or changed (`name`, directories ending in `/`) and deleted (`name (deleted)`)
/// between two snapshots.
pub fn changes(before: &std::collections::BTreeMap<String, u64>, after: &std::collections::BTreeMap<String, u64>) -> Vec<String> {
    let mut out: Vec<String> = after.iter().filter(|(k, v)| before.get(*k) != Some(v)).map(|(k, _)| k.clone()).collect();
    out.extend(before.keys().filter(|k| !after.contains_key(*k)).map(|k| format!("{k} (deleted)")));
    out
}

/// Copies the directory tree `from` to `to`.
pub fn copy_tree(from: &std::path::Path, to: &std::path::Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("mkdir {}: {e}", to.display()))?;
    for entry in std::fs::read_dir(from).map_err(|e| format!("read {}: {e}", from.display()))? {
        let entry = entry.map_err(|e| e.to_string())?;
        let dest = to.join(entry.file_name());
        if entry.file_type().map_err(|e| e.to_string())?.is_dir() {
            copy_tree(&entry.path(), &dest)?;
        } else {
            std::fs::copy(entry.path(), &dest).map_err(|e| format!("copy {}: {e}", entry.path().display()))?;
        }
    }
    Ok(())
}

/// Which linker a link uses: the one under test or the reference, ld.lld-22. The discriminants
/// (0 and 1) index the harnesses' `[dtld's, lld's]` pairs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Linker {
    /// The linker under test.
    Dtld,
    Lld,
}

impl Linker {
    pub fn name(self) -> &'static str {
        match self {
            Linker::Dtld => "dtld",
            Linker::Lld => "lld",
        }
    }

    /// The compiler-driver flag that selects this linker: `-fuse-ld=<dtld>` (an absolute path)
    /// or `-fuse-ld=lld`.
    pub fn fuse_ld(self, dtld: &Path) -> std::ffi::OsString {
        match self {
            Linker::Dtld => {
                let mut arg = std::ffi::OsString::from("-fuse-ld=");
                arg.push(dtld);
                arg
            }
            Linker::Lld => "-fuse-ld=lld".into(),
        }
    }
}

/// Takes the lock `<target>/<subdir>/.lock` (released when the returned file is dropped, i.e.
/// when the process exits), so that two runs of a test target sharing a target directory do
/// not recreate each other's directories: the second one says so (naming `what`) and waits.
/// `None` when the lock cannot be taken at all (the run goes on unlocked).
pub fn lock_target_subdir(subdir: &str, what: &str) -> Option<fs::File> {
    let root = target_dir().join(subdir);
    fs::create_dir_all(&root).ok()?;
    let file = fs::File::create(root.join(".lock")).ok()?;
    if file.try_lock().is_err() {
        eprintln!("waiting for another {what} run using {}", root.display());
        file.lock().ok()?;
    }
    Some(file)
}

/// Runs `cmd` (its stdin as the caller set it) in its own process group with stdout and stderr
/// going to the files `out` and `err` (so that no pipe can be held open by a stray grandchild,
/// e.g. a helper process wine starts), and kills the whole group after `timeout`. The files are
/// left for the caller.
pub fn run_in_group(cmd: &mut Command, timeout: Duration, out: &Path, err: &Path) -> io::Result<Outcome> {
    use std::os::unix::process::CommandExt;
    cmd.process_group(0).stdout(fs::File::create(out)?).stderr(fs::File::create(err)?);
    let mut child = cmd.spawn()?;
    let status = match child.wait_timeout(timeout)? {
        Some(status) => Some(status),
        None => {
            let _ = Command::new("kill").args(["-KILL", "--", &format!("-{}", child.id())]).status();
            let _ = child.kill();
            let _ = child.wait();
            None
        }
    };
    Ok(Outcome { status, stdout: fs::read(out).unwrap_or_default(), stderr: fs::read(err).unwrap_or_default() })
}

/// The offset of the first byte at which `a` and `b` differ (the shorter length when one is a
/// prefix of the other).
pub fn first_difference(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()))
}
