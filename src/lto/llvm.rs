//! Finding the user's LLVM: the one whose clang produced the bitcode.
//!
//! dtld never takes LLVM tools from `$PATH` (on Debian 12, `/usr/bin/llvm-lto2` is LLVM 14 and
//! cannot read LLVM 22 bitcode). It looks, in order, at `--lto-llvm-dir=`, `$DTLD_LLVM_DIR`, the
//! `-plugin <dir>/lib/LLVMgold.so` clang passes to non-lld linkers, and the
//! `--thinlto-remote-compiler=<dir>/bin/clang` clang passes with `-fthinlto-distributor=`, and
//! the clang that started dtld (its parent process), for links where clang passes no
//! `-plugin` (it omits it when it believes the linker is lld, e.g. dtld installed as `ld.lld`),
//! and finally the LLVM dtld's own thin-link library was built for (as lld has its LLVM built
//! in, dtld run by hand on bitcode then links).
//! The version of the tools found must not be older than the newest bitcode producer.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::Result;
use crate::lto::options::LtoOptions;

#[derive(Debug, Clone)]
pub struct Llvm {
    /// The installation prefix (`/usr/lib/llvm-22`).
    pub dir: PathBuf,
    /// `<dir>/bin/llvm-lto2`, the thin-link tool.
    pub lto2: PathBuf,
    /// `<dir>/bin/clang`, the backend compiler for in-process ThinLTO.
    pub clang: PathBuf,
    /// `major.minor` of the libLLVM `llvm-lto2` is linked against (read from the file), or
    /// `major.minor.patch` as printed by `llvm-lto2 --version` for a statically linked one, or
    /// by `clang --version` when the installation has only `LLVMgold.so`.
    pub version: String,
    /// `<dir>/lib/LLVMgold.so`, the thin-link fallback when `llvm-lto2` is missing.
    pub gold: Option<PathBuf>,
    /// What identifies these exact tools in cache keys: path, size, modification time and
    /// inode of `llvm-lto2` (or `LLVMgold.so`), the libLLVM it loads, and `clang`.
    pub identity: String,
}

/// `22.1.8` → (22, 1, 8); missing parts are 0.
pub fn parse_version(v: &str) -> Option<(u32, u32, u32)> {
    let v = v.trim();
    let digits: String = v.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
    let mut it = digits.split('.').map(|p| p.parse::<u32>().ok());
    let major = it.next()??;
    let minor = it.next().flatten().unwrap_or(0);
    let patch = it.next().flatten().unwrap_or(0);
    Some((major, minor, patch))
}

/// The first candidate installation that has `bin/llvm-lto2` or `lib/LLVMgold.so` (what
/// `discover` most likely picks).
pub fn first_dir(o: &LtoOptions) -> Option<PathBuf> {
    candidates(o).into_iter().map(|(d, _)| d).find(|d| d.join("bin/llvm-lto2").is_file() || d.join("lib/LLVMgold.so").is_file())
}

/// The `LLVMgold.so` of the first candidate installation that has one (what `discover` most
/// likely picks; `mod.rs`'s `preload` loads it early).
pub fn first_gold(o: &LtoOptions) -> Option<PathBuf> {
    candidates(o).into_iter().map(|(d, _)| d.join("lib/LLVMgold.so")).find(|g| g.is_file())
}

fn candidates(o: &LtoOptions) -> Vec<(PathBuf, String)> {
    let mut c = Vec::new();
    if let Some(d) = &o.llvm_dir {
        c.push((d.clone(), "--lto-llvm-dir / DTLD_LLVM_DIR".to_string()));
    }
    if let Some(p) = &o.plugin {
        // <dir>/lib/LLVMgold.so (clang passes `<dir>/bin/../lib/LLVMgold.so`).
        let p = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
        if let Some(dir) = p.parent().and_then(Path::parent) {
            c.push((dir.to_path_buf(), format!("-plugin {}", p.display())));
        }
    }
    if let Some(r) = &o.remote_compiler {
        let p = PathBuf::from(r);
        let p = std::fs::canonicalize(&p).unwrap_or(p);
        if let Some(dir) = p.parent().and_then(Path::parent) {
            c.push((dir.to_path_buf(), format!("--thinlto-remote-compiler={r}")));
        }
    }
    if let Some(clang) = parent_clang() {
        if let Some(dir) = clang.parent().and_then(Path::parent) {
            c.push((dir.to_path_buf(), format!("the clang that ran dtld ({})", clang.display())));
        }
    }
    // Last, the LLVM dtld's own thin-link library was built for: dtld run on bitcode by hand,
    // by a build system that is not clang or from a `--reproduce` tar links as lld does.
    for (dir, lib) in own_llvm_dirs() {
        c.push((dir, format!("dtld's thin-link library {}", lib.display())));
    }
    c
}

/// The LLVM installations of dtld's in-process libraries (`libdtld-lto-<major>.so` next to the
/// executable or in its install layout's `lib/dtld/`), newest first: each was linked with the
/// `RUNPATH` of the libLLVM it was built against, `<dir>/lib`.
fn own_llvm_dirs() -> Vec<(PathBuf, PathBuf)> {
    let Some(exe_dir) = std::env::current_exe().ok().and_then(|e| e.parent().map(Path::to_path_buf)) else { return Vec::new() };
    let mut libs: Vec<(u32, PathBuf)> = [exe_dir.clone(), exe_dir.join("../lib/dtld")]
        .iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let major = name.strip_prefix("libdtld-lto-")?.strip_suffix(".so")?.parse().ok()?;
            Some((major, e.path()))
        })
        .collect();
    libs.sort_by_key(|l| std::cmp::Reverse(l.0));
    libs.into_iter()
        .filter_map(|(_, lib)| {
            let file = std::fs::File::open(&lib).ok()?;
            // SAFETY: a read-only private map of a file we only read, as for the tools above.
            let map = unsafe { memmap2::Mmap::map(&file) }.ok()?;
            let runpath = dynamic_strings(&map, object::elf::DT_RUNPATH).filter(|r| !r.is_empty()).or_else(|| dynamic_strings(&map, object::elf::DT_RPATH))?;
            let dir = runpath
                .iter()
                .flat_map(|r| r.split(':'))
                .map(|d| Path::new(d).parent().map(Path::to_path_buf))
                .find_map(|d| d.filter(|d| d.join("bin/llvm-lto2").is_file() || d.join("lib/LLVMgold.so").is_file()))?;
            Some((dir, lib))
        })
        .collect()
}

/// The executable of the parent process when it is a clang driver (`clang`, `clang++`,
/// `clang-22`): the compiler that produced the bitcode and started this link. A link runs in a
/// child dtld forked from itself (detach.rs): when the parent is this very executable, the
/// process that started the link is the parent's parent.
fn parent_clang() -> Option<PathBuf> {
    let me = std::env::current_exe().ok();
    let mut pid = std::os::unix::process::parent_id();
    for _ in 0..2 {
        let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok()?;
        let name = exe.file_name()?.to_string_lossy().into_owned();
        if name.starts_with("clang") {
            return Some(exe);
        }
        if me.as_ref() != Some(&exe) {
            return None;
        }
        // /proc/<pid>/stat: "pid (comm) state ppid ..."; comm may hold spaces and parentheses.
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        pid = stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()?;
    }
    None
}

/// The `major.minor` version of a tool linked against a shared libLLVM, read from its
/// `DT_NEEDED` entry (`libLLVM.so.22.1`, or `libLLVM-22.so` on older releases) without running
/// it: starting an LLVM tool only to print its version costs as much as a small thin link
/// (loading libLLVM). With the library found too (`<dir>/lib`, the tool's `RUNPATH`-style
/// neighbours, the system directories), returns its path for the tools' identity.
fn linked_llvm(tool: &Path, dir: &Path) -> Option<(String, Option<PathBuf>)> {
    let file = std::fs::File::open(tool).ok()?;
    // SAFETY: a read-only private map of a file we only read; a concurrent truncation by
    // someone else could fault, as for every input the linker maps.
    let map = unsafe { memmap2::Mmap::map(&file) }.ok()?;
    let needed = needed_libs(&map)?;
    for lib in needed {
        let v = if let Some(rest) = lib.strip_prefix("libLLVM.so.") {
            rest.to_string()
        } else if let Some(rest) = lib.strip_prefix("libLLVM-").and_then(|r| r.split_once(".so")) {
            rest.0.to_string()
        } else {
            continue;
        };
        let (major, minor, _) = parse_version(&v)?;
        let found = [
            dir.join("lib"),
            PathBuf::from("/lib/x86_64-linux-gnu"),
            PathBuf::from("/usr/lib/x86_64-linux-gnu"),
            PathBuf::from("/usr/lib64"),
            PathBuf::from("/usr/lib"),
        ]
        .into_iter()
        .map(|d| d.join(&lib))
        .find(|p| p.is_file());
        return Some((format!("{major}.{minor}"), found));
    }
    None
}

/// The shared libLLVM `tool` (an LLVM tool or LLVMgold.so of the installation at `dir`) loads:
/// its `DT_NEEDED` name and the file it resolves to.
pub fn linked_llvm_lib(tool: &Path, dir: &Path) -> Option<(String, PathBuf)> {
    let file = std::fs::File::open(tool).ok()?;
    // SAFETY: a read-only private map of a file we only read.
    let map = unsafe { memmap2::Mmap::map(&file) }.ok()?;
    let name = needed_libs(&map)?.into_iter().find(|l| l.starts_with("libLLVM.so.") || l.starts_with("libLLVM-"))?;
    let (_, found) = linked_llvm(tool, dir)?;
    Some((name, found?))
}

/// Whether the shared library at `path` loads exactly `lib` (a canonical path): one of its
/// `DT_NEEDED` names found in its `RUNPATH`/`RPATH` directories is that file.
pub fn links_library(path: &Path, lib: &Path) -> bool {
    let Ok(file) = std::fs::File::open(path) else { return false };
    // SAFETY: a read-only private map of a file we only read.
    let Ok(map) = (unsafe { memmap2::Mmap::map(&file) }) else { return false };
    let (Some(needed), Some(runpath)) = (needed_libs(&map), dynamic_string(&map, &[object::elf::DT_RUNPATH, object::elf::DT_RPATH])) else {
        return false;
    };
    let origin = path.parent().unwrap_or(Path::new("."));
    needed.iter().any(|n| {
        runpath.split(':').any(|d| {
            let d = d.replace("$ORIGIN", &origin.to_string_lossy());
            std::fs::canonicalize(Path::new(&d).join(n)).is_ok_and(|p| p == lib)
        })
    })
}

/// The first of the dynamic entries `tags` that names a string.
fn dynamic_string(data: &[u8], tags: &[u32]) -> Option<String> {
    use object::read::elf::{Dyn as _, FileHeader as _, SectionHeader as _};
    let h = object::elf::FileHeader64::<object::Endianness>::parse(data).ok()?;
    let e = h.endian().ok()?;
    let sections = h.sections(e, data).ok()?;
    for s in sections.iter() {
        let Ok(Some((dyns, link))) = s.dynamic(e, data) else { continue };
        let strings = sections.strings(e, data, link).ok()?;
        for d in dyns {
            if d.tag32(e).is_some_and(|t| tags.contains(&t)) {
                if let Ok(v) = d.string(e, strings) {
                    return Some(String::from_utf8_lossy(v).into_owned());
                }
            }
        }
    }
    None
}

/// The `DT_NEEDED` names of an ELF executable.
fn needed_libs(data: &[u8]) -> Option<Vec<String>> {
    dynamic_strings(data, object::elf::DT_NEEDED)
}

/// The strings of the dynamic entries tagged `tag` (`DT_NEEDED`, `DT_RUNPATH`) of an ELF file.
fn dynamic_strings(data: &[u8], tag: u32) -> Option<Vec<String>> {
    use object::read::elf::{Dyn as _, FileHeader as _, SectionHeader as _};
    let h = object::elf::FileHeader64::<object::Endianness>::parse(data).ok()?;
    let e = h.endian().ok()?;
    let sections = h.sections(e, data).ok()?;
    let mut out = Vec::new();
    for s in sections.iter() {
        let Ok(Some((dyns, link))) = s.dynamic(e, data) else { continue };
        let strings = sections.strings(e, data, link).ok()?;
        for d in dyns {
            if d.tag32(e) == Some(tag) {
                if let Ok(name) = d.string(e, strings) {
                    out.push(String::from_utf8_lossy(name).into_owned());
                }
            }
        }
    }
    Some(out)
}

/// `path|size|mtime|inode` of a file (canonical path), or `path|missing`.
pub fn file_identity(p: &Path) -> String {
    use std::os::unix::fs::MetadataExt;
    let canon = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    match std::fs::metadata(&canon) {
        Ok(m) => format!("{}|{}|{}.{}|{}", canon.display(), m.len(), m.mtime(), m.mtime_nsec(), m.ino()),
        Err(_) => format!("{}|missing", canon.display()),
    }
}

fn tool_version(lto2: &Path) -> Option<String> {
    // `llvm-lto2 run --version` works on every release (LLVM 14 rejects a bare `--version`).
    let out = Command::new(lto2).args(["run", "--version"]).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    // "LLVM version 22.1.8" (possibly with a vendor prefix line).
    // "LLVM version 22.1.8", or with a vendor prefix: "Debian LLVM version 22.1.8".
    text.lines().find_map(|l| l.split_once("LLVM version ").map(|(_, v)| v.trim().to_string()))
}

fn clang_version(clang: &Path) -> Option<String> {
    let out = Command::new(clang).arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    // "clang version 22.1.8 (...)", possibly "Debian clang version 22.1.8 (...)".
    text.lines().find_map(|l| l.split_once("clang version ").map(|(_, v)| v.split_whitespace().next().unwrap_or("").to_string()))
}

/// Finds a usable LLVM for bitcode produced by `producers` (irsymtab producer strings such as
/// `22.1.8`), or explains why there is none.
pub fn discover(o: &LtoOptions, producers: &[(String, String)]) -> Result<Llvm> {
    let cands = candidates(o);
    if cands.is_empty() {
        let first = producers.first().map(|(f, _)| f.as_str()).unwrap_or("bitcode input");
        crate::bail!(
            "{first}: unable to handle this LLVM bitcode file: no LLVM to run the thin link with; \
             link through clang -flto (which passes -plugin <llvm>/lib/LLVMgold.so), or name the LLVM \
             installation with --lto-llvm-dir=<dir> or DTLD_LLVM_DIR (e.g. /usr/lib/llvm-22)"
        );
    }
    let mut problems = Vec::new();
    for (dir, source) in cands {
        let lto2 = dir.join("bin/llvm-lto2");
        let clang = dir.join("bin/clang");
        let gold_path = dir.join("lib/LLVMgold.so");
        let gold = gold_path.is_file().then_some(gold_path);
        // Without llvm-lto2, the thin link can still run through LLVMgold.so (goldhost.rs);
        // the version is then clang's.
        let tool = if lto2.is_file() {
            lto2.clone()
        } else if gold.is_some() {
            clang.clone()
        } else {
            problems.push(format!("{}: llvm-lto2 not found (from {source}; on Debian it is in the llvm-NN package)", lto2.display()));
            continue;
        };
        let linked = if lto2.is_file() { linked_llvm(&lto2, &dir) } else { None };
        let version = match &linked {
            Some((v, _)) => Some(v.clone()),
            None if lto2.is_file() => tool_version(&lto2),
            None => clang_version(&clang),
        };
        let Some(version) = version else {
            problems.push(format!("{}: cannot run it or read its version", tool.display()));
            continue;
        };
        let Some(tv) = parse_version(&version) else {
            problems.push(format!("{}: unrecognized version '{version}'", tool.display()));
            continue;
        };
        // Bitcode from a newer LLVM cannot be read; from an older one it can (LLVM reads old
        // bitcode and rebuilds the symbol table).
        if let Some((file, prod)) = producers.iter().find(|(_, p)| parse_version(p).is_some_and(|pv| (pv.0, pv.1) > (tv.0, tv.1))) {
            problems.push(format!("{file}: bitcode was produced by LLVM {prod}, which is newer than LLVM {version} at {} (from {source})", dir.display()));
            continue;
        }
        let mut identity = vec![file_identity(&tool), file_identity(&clang)];
        if let Some((_, Some(lib))) = &linked {
            identity.push(file_identity(lib));
        }
        if let Some(g) = gold.as_ref().filter(|_| !lto2.is_file()) {
            identity.push(file_identity(g));
        }
        return Ok(Llvm { dir, lto2, clang, version, gold, identity: identity.join(";") });
    }
    Err(crate::error::Error::many(problems))
}

/// Whether `DTLD_THIN_LINK` chooses the thin link's way `how` (`llvm-lto2`: never LLVMgold nor
/// the in-process library; `gold`: LLVMgold in a fork of dtld; `helper`: LLVMgold in the exec'd
/// helper).
pub(crate) fn thin_link_forced(how: &str) -> bool {
    std::env::var_os("DTLD_THIN_LINK").is_some_and(|v| v == how)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(parse_version("22.1.8"), Some((22, 1, 8)));
        assert_eq!(parse_version("14.0.6"), Some((14, 0, 6)));
        assert_eq!(parse_version("23.0.0git"), Some((23, 0, 0)));
        assert_eq!(parse_version("x"), None);
    }

    #[test]
    fn no_llvm_is_a_clear_error() {
        let o = LtoOptions::default();
        let e = discover(&o, &[("a.o".into(), "22.1.8".into())]).unwrap_err();
        assert!(e.messages[0].starts_with("a.o: unable to handle this LLVM bitcode file"), "{:?}", e.messages);
    }

    #[test]
    fn gold_only_installation() {
        let real = PathBuf::from("/usr/lib/llvm-22");
        if !real.join("lib/LLVMgold.so").is_file() || !real.join("bin/clang").is_file() {
            return;
        }
        let dir = std::env::temp_dir().join(format!("dtld-goldonly-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        std::fs::create_dir_all(dir.join("lib")).unwrap();
        std::os::unix::fs::symlink(real.join("bin/clang"), dir.join("bin/clang")).unwrap();
        std::os::unix::fs::symlink(real.join("lib/LLVMgold.so"), dir.join("lib/LLVMgold.so")).unwrap();
        let o = LtoOptions { llvm_dir: Some(dir.clone()), ..Default::default() };
        let l = discover(&o, &[("a.o".into(), "22.1.0".into())]).unwrap();
        assert!(!l.lto2.is_file());
        assert_eq!(l.gold, Some(dir.join("lib/LLVMgold.so")));
        assert_eq!(parse_version(&l.version).map(|v| v.0), Some(22), "{}", l.version);
        std::fs::remove_file(dir.join("lib/LLVMgold.so")).unwrap();
        assert!(discover(&o, &[("a.o".into(), "22.1.0".into())]).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn newer_producer_is_rejected() {
        let dir = PathBuf::from("/usr/lib/llvm-22");
        if !dir.join("bin/llvm-lto2").is_file() {
            return;
        }
        let o = LtoOptions { llvm_dir: Some(dir.clone()), ..Default::default() };
        let ok = discover(&o, &[("a.o".into(), "22.1.8".into())]).unwrap();
        assert_eq!(ok.dir, dir);
        // Read from llvm-lto2's DT_NEEDED libLLVM, without running it.
        assert_eq!(parse_version(&ok.version).map(|v| (v.0, v.1)), linked_llvm(&ok.lto2, &dir).and_then(|(v, _)| parse_version(&v)).map(|v| (v.0, v.1)));
        assert_eq!(parse_version(&ok.version).map(|v| v.0), Some(22), "{}", ok.version);
        let e = discover(&o, &[("a.o".into(), "99.0.0".into())]).unwrap_err();
        assert!(e.messages[0].contains("newer than LLVM"), "{:?}", e.messages);
    }
}
