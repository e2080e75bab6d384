//! The reproducer archives of both flavours (`--reproduce` for ELF; `/linkrepro`, `/reproduce`
//! for lld-link): LLVM TarWriter's format and lld's `relativeToRoot`.
//!
//! Why this exists: the ELF and COFF links each write their own response file and choose their
//! own files, but the archive around them is one format, so it is written by one writer:
//! ustar headers (mode 0664, owner 0, mtime 0), a name longer than the 100-byte field split into
//! the 155-byte prefix (at most 137 bytes used, as LLVM does) or else carried by a pax extended
//! header (`x`, `path=`) before an unnamed ustar header, contents padded to 512 bytes, two zero
//! blocks at the end; a path is stored once. Everything lives below one root directory, the
//! archive's file name without its extension (`r.tar` → `r/`).

use std::collections::HashSet;
use std::io::Write;
use std::path::{Component, Path};

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

const BLOCK: usize = 512;

/// A streaming writer of LLVM TarWriter-style archives.
pub struct TarWriter<W: Write> {
    w: W,
    root: String,
    seen: HashSet<String>,
}

impl<W: Write> TarWriter<W> {
    pub fn new(w: W, root: String) -> Self {
        TarWriter { w, root, seen: HashSet::new() }
    }

    /// Adds `data` as `<root>/<path>` (once per path).
    pub fn append(&mut self, path: &str, data: &[u8]) -> std::io::Result<()> {
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
    pub fn finish(mut self) -> std::io::Result<()> {
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
    fn relative_paths() {
        assert_eq!(relative_to_root(Path::new("/a/./b/../c.o")), "a/c.o");
        assert_eq!(relative_to_root(Path::new("/")), "");
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
