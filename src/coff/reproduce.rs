//! `/linkrepro:<dir>` (`<dir>/repro.tar`), `/reproduce:<file>` and `LLD_REPRODUCE`: lld-link's
//! reproducer archive.
//!
//! Why this exists: a COFF link that fails or misbehaves on one machine must be replayable on
//! another, with the archive lld-link would write, so that the same bug report works with both
//! linkers. The archive (`crate::tar`, shared with ELF's `--reproduce`) holds, below a root
//! named after the archive (`repro/` for `/linkrepro`):
//!
//! * every file the link read, under its absolute path without the leading `/`, in the order
//!   lld reads them: the command line's inputs and default libraries, what their `.drectve`
//!   sections pull in, thin-archive members when they are extracted, then the module-definition
//!   file, the `/order` file, type-server PDBs;
//! * `response.txt` (no `version.txt`, unlike ELF), placed where lld appends it: after the
//!   command line's files were read without error or clash. It is lld's `createResponseFile`:
//!   every argument as given (`toString`: the spelling as typed, a value with a space quoted),
//!   inputs, `/wholearchive:`, `/def:`, `/natvis:`, `/manifestinput:`,
//!   `/call-graph-ordering-file:`, `/order:@` and `/pdbstream:` files rewritten below the root
//!   when they exist, `/out:`, `/implib:`, `/pdb:`, `/pdbstripped:` and `/manifestfile:` cut to
//!   their file name, `/linkrepro`, `/reproduce`, `/libpath` and `/winsysroot` dropped, and
//!   then one `/libpath:` per search directory (`/libpath:`s, clang's library directories,
//!   `LIB`), rewritten below the root.
//!
//! As with lld, the archive is written whatever the link's outcome (a failed link is what one
//! wants to report): with the files read up to the failure. It is written when the link ends,
//! through a temporary (`outfile.rs`), where lld appends as it goes.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::cmdline::CmdArg;
use crate::error::{Error, Result};
use crate::tar::{relative_to_root, TarWriter};

/// The archive asked for, and what goes into it as the link reads.
#[derive(Debug, Clone)]
pub struct Repro {
    pub tar: PathBuf,
    /// `/def:`, which lld reads right after `response.txt` (dtld's driver read it earlier).
    pub def_file: Option<PathBuf>,
    response: String,
    log: Arc<Mutex<Vec<Entry>>>,
}

#[derive(Debug)]
enum Entry {
    File(PathBuf, Cow<'static, [u8]>),
    Response,
}

impl Repro {
    pub fn new(tar: PathBuf, response: String) -> Repro {
        Repro { tar, def_file: None, response, log: Arc::new(Mutex::new(Vec::new())) }
    }

    fn push(&self, e: Entry) {
        if let Ok(mut l) = self.log.lock() {
            l.push(e);
        }
    }

    /// A file the link read (mapped for the rest of the process).
    pub fn read(&self, path: &Path, data: &'static [u8]) {
        self.push(Entry::File(path.to_path_buf(), Cow::Borrowed(data)));
    }

    /// A file the link read into memory of its own.
    pub fn read_owned(&self, path: &Path, data: Vec<u8>) {
        self.push(Entry::File(path.to_path_buf(), Cow::Owned(data)));
    }

    /// The command line's files are read: `response.txt` goes here.
    pub fn response_point(&self) {
        self.push(Entry::Response);
        if let Some(d) = &self.def_file {
            if let Ok(data) = std::fs::read(d) {
                self.read_owned(d, data);
            }
        }
    }

    /// Writes the archive with what was logged so far.
    pub fn write(&self) -> Result<()> {
        let tar = &self.tar;
        let root = tar.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let fail = |e: std::io::Error| Error::new(format!("/linkrepro: failed to write {}: {}", tar.display(), crate::error::io_error(&e)));
        let tmp = crate::outfile::TmpFile::create(tar, 0).map_err(fail)?;
        let mut w = TarWriter::new(std::io::BufWriter::new(&tmp.file), root);
        let log = self.log.lock().map_err(|_| Error::new("/linkrepro: the read log is poisoned"))?;
        for e in log.iter() {
            match e {
                Entry::File(p, data) => w.append(&relative_to_root(p), data),
                Entry::Response => w.append("response.txt", self.response.as_bytes()),
            }
            .map_err(fail)?;
        }
        w.finish().map_err(fail)?;
        tmp.persist(tar, 0o666 & !crate::output::umask()).map_err(fail)
    }
}

/// The archive a command line asks for: the last `/reproduce:`, else the last `/linkrepro:`
/// directory's `repro.tar`, else `$LLD_REPRODUCE` (read even with `/lldignoreenv`, as lld does:
/// it does not change the output).
pub fn tar_path(reproduce: Option<&str>, linkrepro: Option<&str>) -> Option<PathBuf> {
    if let Some(r) = reproduce {
        return Some(PathBuf::from(r));
    }
    if let Some(d) = linkrepro {
        // LLVM's `path::append`: no separator doubled, none added to an empty directory.
        return Some(PathBuf::from(if d.is_empty() || d.ends_with('/') { format!("{d}repro.tar") } else { format!("{d}/repro.tar") }));
    }
    std::env::var_os("LLD_REPRODUCE").map(PathBuf::from)
}

/// lld's `TarWriter::create` check: the archive can be created (nothing is left behind).
pub fn check_tar(tar: &Path) -> std::result::Result<(), String> {
    let bad = tar.as_os_str().is_empty() || tar.is_dir() || crate::outfile::TmpFile::create(tar, 0).is_err();
    if bad {
        return Err(format!("/linkrepro: failed to open {0}: cannot open {0}", tar.display()));
    }
    Ok(())
}

/// lld's `quote`: a word with a space in double quotes.
fn quote(s: &str) -> Cow<'_, str> {
    if s.contains(' ') {
        Cow::Owned(format!("\"{s}\""))
    } else {
        Cow::Borrowed(s)
    }
}

/// lld's `rewritePath`: a path that exists, relative to the archive's root.
fn rewrite(s: &str) -> String {
    if !s.is_empty() && Path::new(s).exists() {
        relative_to_root(Path::new(s))
    } else {
        s.to_string()
    }
}

/// lld-link's `createResponseFile` (see the module comment). `args`: the command line after
/// `LINK`, `_LINK_` and response files were expanded; `search`: the library search directories
/// after the current one.
pub fn response_file(args: &[CmdArg], search: &[PathBuf]) -> String {
    let mut out = String::new();
    for a in args {
        match a {
            CmdArg::Input(p) => out.push_str(&quote(&rewrite(p))),
            CmdArg::Raw(r) => out.push_str(r),
            CmdArg::Opt { canon, spelling, value: None, .. } => {
                if matches!(*canon, "linkrepro" | "reproduce" | "libpath" | "winsysroot") {
                    continue;
                }
                out.push_str(spelling)
            }
            CmdArg::Opt { canon, spelling, value: Some(v), .. } => {
                let v = match *canon {
                    "linkrepro" | "reproduce" | "libpath" | "winsysroot" => continue,
                    "wholearchive" | "def" | "natvis" | "manifestinput" | "call-graph-ordering-file" => quote(&rewrite(v)).into_owned(),
                    "order" => format!("@{}", quote(&rewrite(v.strip_prefix('@').unwrap_or(v)))),
                    "pdbstream" => {
                        let (name, file) = v.split_once('=').unwrap_or((v, ""));
                        format!("{name}={}", quote(&rewrite(file)))
                    }
                    "out" | "implib" | "pdb" | "pdbstripped" | "manifestfile" => {
                        Path::new(v).file_name().map_or_else(|| v.clone(), |n| n.to_string_lossy().into_owned())
                    }
                    _ => quote(v).into_owned(),
                };
                out.push_str(spelling);
                out.push(':');
                out.push_str(&v);
            }
        }
        out.push('\n');
    }
    for d in search {
        out.push_str("/libpath:");
        out.push_str(&quote(&relative_to_root(d)));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opt(canon: &'static str, spelling: &str, value: Option<&str>) -> CmdArg {
        CmdArg::option(canon, spelling, value, true)
    }

    #[test]
    fn response_file_as_lld_link() {
        let args = [
            CmdArg::Input("no/a b.obj".into()),
            opt("out", "/OUT", Some("dir/x.exe")),
            opt("linkrepro", "/linkrepro", Some(".")),
            opt("libpath", "-libpath", Some("lib")),
            opt("failifmismatch", "/failifmismatch", Some("a=b c")),
            opt("order", "/order", Some("@no/o.txt")),
            opt("pdbstream", "/pdbstream", Some("s=no/f")),
            opt("lldmap", "/lldmap", None),
            CmdArg::Raw("--rsp-quoting=posix".into()),
        ];
        assert_eq!(
            response_file(&args, &[PathBuf::from("/l/a b"), PathBuf::from("/l/./c/../d")]),
            "\"no/a b.obj\"\n/OUT:x.exe\n/failifmismatch:\"a=b c\"\n/order:@no/o.txt\n/pdbstream:s=no/f\n/lldmap\n\
             --rsp-quoting=posix\n/libpath:\"l/a b\"\n/libpath:l/d\n"
        );
    }

    #[test]
    fn archive_paths() {
        assert_eq!(tar_path(Some("r.tar"), Some("d")), Some(PathBuf::from("r.tar")));
        assert_eq!(tar_path(None, Some("d")), Some(PathBuf::from("d/repro.tar")));
        assert_eq!(tar_path(None, Some("d/")), Some(PathBuf::from("d/repro.tar")));
        assert_eq!(tar_path(None, Some("")), Some(PathBuf::from("repro.tar")));
        assert_eq!(check_tar(Path::new("")), Err("/linkrepro: failed to open : cannot open ".into()));
        assert!(check_tar(Path::new("/nonexistent-dir/x.tar")).is_err());
    }
}
