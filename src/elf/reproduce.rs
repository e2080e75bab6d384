//! `--reproduce=<path.tar>` (or `LLD_REPRODUCE=<path.tar>`): a self-contained copy of a link.
//!
//! Why this exists: a link that fails or misbehaves on one machine must be replayable on another
//! (a bug report, a CI artefact). As lld does, dtld then writes a POSIX ustar archive whose
//! single root directory is the archive's file name without its extension (`r.tar` → `r/`):
//!
//! * `r/response.txt`: the command line, one argument per line, starting with `--chroot .`;
//!   every input path, `-L` directory and script option (`--script`, `--version-script`,
//!   `--dynamic-list`, `--export-dynamic-symbol-list`, `--sysroot`, `-rpath`) that names an
//!   existing file is rewritten to its absolute path without the leading `/` (relative to the
//!   root, as lld's `relativeToRoot`), `-o`/`--Map` keep only the file name, `--reproduce` is
//!   dropped; a word containing a space is double-quoted (lld's `quote`);
//! * `r/version.txt`: `dtld --version`'s line;
//! * every file the link read (objects, whole archives, thin-archive members, shared libraries,
//!   linker scripts such as libc.so and the files they name, version scripts and dynamic lists),
//!   stored under its absolute path below the root.
//!
//! `cd r && dtld @response.txt` then links the same inputs: relative paths resolve in the tree,
//! and `--chroot .` sends the absolute paths written inside linker scripts there too.
//!
//! The archive itself (LLVM TarWriter's format) is written by `crate::tar`, shared with
//! lld-link's `/linkrepro`. The link goes on normally after the archive is written.

use std::path::{Path, PathBuf};

use crate::elf::config::Config;
use crate::elf::input::ReadLog;
use crate::error::{Error, Result};
use crate::input::InputFile;
use crate::tar::{relative_to_root, TarWriter};

pub use crate::cmdline::CmdArg;

/// The archive to write, if any: the last `--reproduce`, else `$LLD_REPRODUCE`.
pub fn tar_path(config: &Config) -> Option<PathBuf> {
    config.reproduce.clone().or_else(|| std::env::var_os("LLD_REPRODUCE").map(PathBuf::from))
}

/// The hook after input loading: writes the archive when one is asked for (whether or not
/// loading succeeded, so a failing link can be reported), then hands back the loaded inputs.
/// A `--reproduce` error comes first, then the loader's, as lld reports them.
pub fn after_load(config: &Config, loaded: Result<Vec<InputFile>>, read: &ReadLog) -> Result<Vec<InputFile>> {
    let Some(tar) = tar_path(config) else { return loaded };
    match (write_reproduce(config, &tar, read), loaded) {
        (Ok(()), loaded) => loaded,
        (Err(e), Ok(_)) => Err(e),
        (Err(mut e), Err(l)) => {
            e.messages.extend(l.messages);
            Err(e)
        }
    }
}

/// Writes the archive `tar` for this link.
pub fn write_reproduce(config: &Config, tar: &Path, read: &ReadLog) -> Result<()> {
    let root = tar.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    // Through a temporary in the archive's directory (outfile.rs): an interrupted link
    // leaves no half archive, and an archive named like an input does not truncate it.
    let tmp = crate::outfile::TmpFile::create(tar, 0).map_err(|_| Error::new(format!("--reproduce: cannot open {}", tar.display())))?;
    let mut w = TarWriter::new(std::io::BufWriter::new(&tmp.file), root);
    let fail = |e: std::io::Error| Error::new(format!("--reproduce: cannot write {}: {}", tar.display(), crate::error::io_error(&e)));
    w.append("response.txt", response_file(config).as_bytes()).map_err(fail)?;
    w.append("version.txt", format!("{}\n", crate::cmdline::version_string()).as_bytes()).map_err(fail)?;
    for (path, data) in read {
        w.append(&relative_to_root(path), data).map_err(fail)?;
    }
    // Version scripts and dynamic lists are read by the resolver: found as it finds them (as
    // given, else in the -L directories), copied when they exist.
    let scripts = config.version_scripts.iter().chain(&config.dynamic_lists).chain(&config.export_dynamic_symbol_lists);
    for p in scripts {
        let found = if p.exists() || p.is_absolute() { Some(p.clone()) } else { config.library_paths.iter().map(|d| d.join(p)).find(|q| q.exists()) };
        if let Some(data) = found.as_ref().and_then(|f| std::fs::read(f).ok()) {
            w.append(&relative_to_root(found.as_deref().unwrap_or(p)), &data).map_err(fail)?;
        }
    }
    w.finish().map_err(fail)?;
    tmp.persist(tar, 0o666 & !crate::output::umask()).map_err(fail)
}

/// lld's `createResponseFile`: the command line with paths rewritten into the archive.
pub fn response_file(config: &Config) -> String {
    let mut out = String::from("--chroot .\n");
    for arg in &config.cmdline {
        match arg {
            CmdArg::Input(p) => out.push_str(&quote(&rewrite_path(p))),
            CmdArg::Raw(a) => out.push_str(&quote(a)),
            CmdArg::Opt { canon, spelling, value, joined } => {
                if *canon == "reproduce" {
                    continue;
                }
                if *canon == "build-id" && value.is_none() {
                    // lld's bare `--build-id` is an alias carrying the value `sha1`.
                    out.push_str("--build-id=sha1\n");
                    continue;
                }
                let spelling = render_spelling(canon, spelling);
                out.push_str(&spelling);
                if let Some(v) = value {
                    let v = match *canon {
                        // The archive holds no directories for outputs: keep the file name.
                        "o" | "Map" => Path::new(v).file_name().map_or_else(|| v.clone(), |n| n.to_string_lossy().into_owned()),
                        "L" | "script" | "version-script" | "dynamic-list" | "export-dynamic-symbol-list" | "sysroot" | "rpath" => rewrite_path(v),
                        _ => v.clone(),
                    };
                    out.push(if *joined { '=' } else { ' ' });
                    out.push_str(&quote(&v));
                }
            }
        }
        out.push('\n');
    }
    out
}

/// The option as lld's response file spells it: as written when it is the option's own name,
/// else (an alias: `-T`, `-e`, `-soname=`) the canonical name (`--script`, `--entry`).
fn render_spelling(canon: &str, spelling: &str) -> String {
    let name = spelling.trim_start_matches('-');
    if name == canon {
        return spelling.to_string();
    }
    if canon.chars().count() == 1 {
        format!("-{canon}")
    } else {
        format!("--{canon}")
    }
}

/// lld's `rewritePath`: a path that exists becomes relative to the archive root.
fn rewrite_path(s: &str) -> String {
    if !s.is_empty() && Path::new(s).exists() {
        relative_to_root(Path::new(s))
    } else {
        s.to_string()
    }
}

/// lld's `quote` (a word with a space is double-quoted), made safe for dtld's response-file
/// reader: quotes and backslashes inside are escaped, and an empty word is `""`.
fn quote(s: &str) -> String {
    let special = |c: char| c.is_whitespace() || c == '"' || c == '\'' || c == '\\';
    if !s.is_empty() && !s.chars().any(special) {
        return s.to_string();
    }
    let mut q = String::from("\"");
    for c in s.chars() {
        if c == '"' || c == '\\' {
            q.push('\\');
        }
        q.push(c);
    }
    q.push('"');
    q
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_quotes() {
        assert_eq!(relative_to_root(Path::new("/a/./b/../c.o")), "a/c.o");
        assert_eq!(relative_to_root(Path::new("/")), "");
        assert_eq!(quote("a b"), "\"a b\"");
        assert_eq!(quote(""), "\"\"");
        assert_eq!(quote("plain"), "plain");
        assert_eq!(quote("q\"\\"), "\"q\\\"\\\\\"");
        let words = crate::driver::tokenize_gnu(&format!("{} {}\n", quote("a b\"c\\"), quote("")));
        assert_eq!(words, vec!["a b\"c\\".to_string(), String::new()]);
        assert_eq!(render_spelling("script", "-T"), "--script");
        assert_eq!(render_spelling("version-script", "-version-script"), "-version-script");
        assert_eq!(render_spelling("l", "-l"), "-l");
    }

    #[test]
    fn response_file_spells_options_as_lld() {
        // No `-T`: a script that does not exist is an error of the command line (lld's
        // searchScript); render_spelling covers its spelling.
        let argv: Vec<String> = [
            "--version-script=no/v.map",
            "-lc",
            "-znow",
            "--build-id",
            "--build-id=md5",
            "--Map=x/y.map",
            "-o",
            "out/p",
            "no/a b.o",
            "--reproduce",
            "r.tar",
            "--hash-style=gnu",
            "-soname=foo",
            "-e",
            "main",
            "--lto-O2",
            "-L",
            "no/dir",
            "--chroot",
            "/c",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let crate::driver::Action::Link(c) = crate::driver::gnu::parse(&argv).unwrap() else { panic!("not a link") };
        assert_eq!(c.reproduce.as_deref(), Some(Path::new("r.tar")));
        assert_eq!(c.chroot.as_deref(), Some(Path::new("/c")));
        assert_eq!(
            response_file(&c),
            "--chroot .\n--version-script no/v.map\n-l c\n-z now\n--build-id=sha1\n\
             --build-id=md5\n--Map y.map\n-o p\n\"no/a b.o\"\n--hash-style gnu\n-soname foo\n--entry main\n\
             --lto-O2\n-L no/dir\n--chroot /c\n"
        );
    }
}
