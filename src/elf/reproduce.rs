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
//! The archive is LLVM TarWriter's format: ustar headers (mode 0664, owner 0, mtime 0), a name
//! longer than the 100-byte field split into the 155-byte prefix (at most 137 bytes used, as
//! LLVM does) or else carried by a pax extended header (`x`, `path=`) before an unnamed ustar
//! header, contents padded to 512 bytes, two zero blocks at the end; a path is stored once.
//! The link goes on normally after the archive is written.

use std::collections::HashSet;
use std::io::Write;
use std::path::{Component, Path, PathBuf};

use crate::elf::config::Config;
use crate::elf::input::ReadLog;
use crate::error::{Error, Result};
use crate::input::InputFile;

pub use crate::driver::CmdArg;

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
    w.append("version.txt", format!("{}\n", crate::driver::version_string()).as_bytes()).map_err(fail)?;
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

/// lld's `relativeToRoot`: the absolute path with `.` and `..` removed (lexically) and without
/// the leading `/`.
pub fn relative_to_root(path: &Path) -> String {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        match std::env::current_dir() {
            Ok(d) => d.join(path),
            Err(_) => return path.to_string_lossy().into_owned(),
        }
    };
    let mut parts: Vec<String> = Vec::new();
    for c in abs.components() {
        match c {
            Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
            Component::ParentDir => {
                parts.pop();
            }
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    parts.join("/")
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

const BLOCK: usize = 512;

/// A streaming writer of LLVM TarWriter-style archives.
struct TarWriter<W: Write> {
    w: W,
    root: String,
    seen: HashSet<String>,
}

impl<W: Write> TarWriter<W> {
    fn new(w: W, root: String) -> Self {
        TarWriter { w, root, seen: HashSet::new() }
    }

    /// Adds `data` as `<root>/<path>` (once per path).
    fn append(&mut self, path: &str, data: &[u8]) -> std::io::Result<()> {
        let full = format!("{}/{}", self.root, path);
        if !self.seen.insert(full.clone()) {
            return Ok(());
        }
        let size = data.len() as u64;
        // The size field holds 11 octal digits; larger files carry their size in the pax header.
        let big = size >= 1 << 33;
        match split_ustar(&full) {
            Some((prefix, name)) if !big => self.w.write_all(&ustar_header(prefix, name, size))?,
            _ => {
                let mut records = pax_record("path", &full);
                if big {
                    records.push_str(&pax_record("size", &size.to_string()));
                }
                let mut h = empty_header();
                put_octal(&mut h[124..136], records.len() as u64);
                h[156] = b'x';
                checksum(&mut h);
                self.w.write_all(&h)?;
                self.w.write_all(records.as_bytes())?;
                self.pad(records.len() as u64)?;
                let (prefix, name) = split_ustar(&full).filter(|_| !big).unwrap_or(("", ""));
                self.w.write_all(&ustar_header(prefix, name, if big { 0 } else { size }))?;
            }
        }
        self.w.write_all(data)?;
        self.pad(size)
    }

    fn pad(&mut self, len: u64) -> std::io::Result<()> {
        let rem = (len % BLOCK as u64) as usize;
        if rem != 0 {
            self.w.write_all(&[0u8; BLOCK][..BLOCK - rem])?;
        }
        Ok(())
    }

    /// POSIX ends an archive with two zero blocks.
    fn finish(mut self) -> std::io::Result<()> {
        self.w.write_all(&[0u8; 2 * BLOCK])?;
        self.w.flush()
    }
}

/// LLVM's `splitUstar`: a path fits a ustar header if it is shorter than 100 bytes, or splits at
/// a `/` into a prefix of at most 137 bytes and a name shorter than 100.
fn split_ustar(path: &str) -> Option<(&str, &str)> {
    if path.len() < 100 {
        return Some(("", path));
    }
    let b = path.as_bytes();
    let sep = b[..path.len().min(138)].iter().rposition(|&c| c == b'/')?;
    if path.len() - sep > 100 {
        return None;
    }
    Some((&path[..sep], &path[sep + 1..]))
}

/// A pax record: `<length> <key>=<value>\n`, where the length counts itself.
fn pax_record(key: &str, value: &str) -> String {
    let len = key.len() + value.len() + 3;
    let mut total = len + len.to_string().len();
    total = len + total.to_string().len();
    format!("{total} {key}={value}\n")
}

fn empty_header() -> [u8; BLOCK] {
    let mut h = [0u8; BLOCK];
    h[257..262].copy_from_slice(b"ustar");
    h[263..265].copy_from_slice(b"00");
    h
}

fn ustar_header(prefix: &str, name: &str, size: u64) -> [u8; BLOCK] {
    let mut h = empty_header();
    let n = name.len().min(100);
    h[..n].copy_from_slice(&name.as_bytes()[..n]);
    h[100..108].copy_from_slice(b"0000664\0");
    put_octal(&mut h[124..136], size);
    let p = prefix.len().min(155);
    h[345..345 + p].copy_from_slice(&prefix.as_bytes()[..p]);
    checksum(&mut h);
    h
}

/// `%011o` and a NUL into a 12-byte field (the value must fit 11 digits).
fn put_octal(field: &mut [u8], v: u64) {
    let s = format!("{:011o}", v & ((1 << 33) - 1));
    field[..11].copy_from_slice(&s.as_bytes()[..11]);
    field[11] = 0;
}

/// The header checksum: the byte sum with the checksum field read as spaces, written as six
/// octal digits, a NUL and (left over) a space.
fn checksum(h: &mut [u8; BLOCK]) {
    h[148..156].fill(b' ');
    let sum: u32 = h.iter().map(|&b| b as u32).sum();
    let s = format!("{:06o}\0", sum & 0o777777);
    h[148..155].copy_from_slice(s.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pax_lengths_count_themselves() {
        assert_eq!(pax_record("path", "a"), "9 path=a\n");
        let r = pax_record("path", &"x".repeat(90));
        assert_eq!(r.len().to_string(), r.split(' ').next().unwrap());
        let r = pax_record("path", &"y".repeat(94));
        assert_eq!(r.len().to_string(), r.split(' ').next().unwrap());
    }

    #[test]
    fn ustar_split() {
        assert_eq!(split_ustar("r/a.o"), Some(("", "r/a.o")));
        let long = format!("r/{}/{}", "d".repeat(120), "f".repeat(20));
        assert_eq!(split_ustar(&long), Some((&long[..122], &long[123..])));
        assert_eq!(split_ustar(&format!("r/{}", "f".repeat(120))), None);
        assert_eq!(split_ustar(&format!("{}/f", "d".repeat(150))), None);
    }

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

    #[test]
    fn header_checksum_and_layout() {
        let mut buf = Vec::new();
        let mut w = TarWriter::new(&mut buf, "r".into());
        w.append("response.txt", b"abc").unwrap();
        w.append("response.txt", b"again").unwrap();
        w.append(&"n".repeat(200), b"long").unwrap();
        w.finish().unwrap();
        // Header, one data block; pax header, records, ustar header, data; two zero blocks.
        assert_eq!(buf.len(), 512 * 2 + 512 * 4 + 1024);
        assert_eq!(&buf[..14], b"r/response.txt");
        assert_eq!(&buf[124..136], b"00000000003\0");
        let mut h = [0u8; 512];
        h.copy_from_slice(&buf[..512]);
        let stored = std::str::from_utf8(&buf[148..154]).unwrap();
        h[148..156].fill(b' ');
        let sum: u32 = h.iter().map(|&b| b as u32).sum();
        assert_eq!(u32::from_str_radix(stored, 8).unwrap(), sum);
        assert_eq!(buf[1024 + 156], b'x');
        assert!(buf[1536..1536 + 512].starts_with(b"212 path=r/nnn"));
    }
}
