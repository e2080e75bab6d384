//! `ar` archives: GNU and BSD formats, long-name tables, and GNU thin archives.
//!
//! The parser walks the member headers once and hands back each regular member's name and bytes
//! (for a thin archive, only the name: the bytes live in a file beside the archive). The symbol
//! table (`/`, `/SYM64/`, `__.SYMDEF`) is skipped: the resolver reads members' own symbol tables.
//!
//! Archives come from anywhere, so every length and offset is checked; a corrupt archive is an
//! `Error` worded as lld (LLVM's `object::Archive`) words it, never a panic, an out-of-bounds read
//! or an endless loop (each step moves forward by at least one 60-byte header).

use crate::error::{Error, Result};

pub const MAGIC: &[u8; 8] = b"!<arch>\n";
pub const THIN_MAGIC: &[u8; 8] = b"!<thin>\n";

const HDR: usize = 60;

/// One regular member of an archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member<'a> {
    /// The member's name (long names resolved). For a thin archive this is the member's path
    /// relative to the archive's directory (or absolute).
    pub name: String,
    /// The member's bytes; `None` for a thin-archive member.
    pub data: Option<&'a [u8]>,
    /// Offset of the member's header in the archive (for diagnostics).
    pub offset: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    Gnu,
    Bsd,
    /// LLVM's `K_COFF`: a second linker member (what `llvm-ar`, `llvm-lib` and `lib.exe` write
    /// for COFF members); its long-name table ends names with NUL, not `/\n`.
    Coff,
}

/// Where an error came from; lld prefixes each kind differently.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Reading the archive's leading special members (LLVM's `Archive::create`).
    Create,
    /// Walking the members (`Archive::children`).
    Children,
}

struct Parser<'a> {
    data: &'a [u8],
    thin: bool,
    format: Format,
    strtab: &'a [u8],
}

fn malformed(msg: impl AsRef<str>) -> String {
    format!("truncated or malformed archive ({})", msg.as_ref())
}

/// LLVM's `raw_ostream::write_escaped`.
fn escape(b: &[u8]) -> String {
    let mut s = String::new();
    for &c in b {
        match c {
            b'\\' => s.push_str("\\\\"),
            b'\t' => s.push_str("\\t"),
            b'\n' => s.push_str("\\n"),
            b'"' => s.push_str("\\\""),
            0x20..=0x7e => s.push(c as char),
            _ => s.push_str(&format!("\\{:03o}", c)),
        }
    }
    s
}

fn rtrim(mut b: &[u8], c: u8) -> &[u8] {
    while let [rest @ .., last] = b {
        if *last != c {
            break;
        }
        b = rest;
    }
    b
}

/// Strict decimal, as LLVM's `StringRef::getAsInteger(10, ..)`: digits only, no sign or spaces.
fn dec(b: &[u8]) -> Option<u64> {
    if b.is_empty() || !b.iter().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let mut v: u64 = 0;
    for &c in b {
        v = v.checked_mul(10)?.checked_add((c - b'0') as u64)?;
    }
    Some(v)
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

impl<'a> Parser<'a> {
    /// The raw name field, cut at its terminator (LLVM's `getRawName`).
    fn raw_name(&self, start: usize) -> std::result::Result<&'a [u8], String> {
        let end = (start + 16).min(self.data.len());
        let field = &self.data[start..end];
        if field.is_empty() {
            return Ok(field);
        }
        let end_cond = if self.format == Format::Bsd {
            if field[0] == b' ' {
                return Err(malformed(format!("name contains a leading space for archive member header at offset {start}")));
            }
            b' '
        } else if field[0] == b'/' || field[0] == b'#' {
            b' '
        } else {
            b'/'
        };
        let n = field.iter().position(|&c| c == end_cond).unwrap_or(field.len());
        Ok(&field[..n])
    }

    /// The member size field.
    fn raw_size(&self, start: usize) -> std::result::Result<u64, String> {
        let field = rtrim(&self.data[start + 48..start + 58], b' ');
        dec(field).ok_or_else(|| {
            malformed(format!(
                "characters in size field in archive member header are not all decimal numbers: '{}' for the \
                 archive member header at offset {start}",
                lossy(field)
            ))
        })
    }

    /// The member's full name (LLVM's `getName(Size)`), where `size` bounds a BSD `#1/` name.
    fn name(&self, start: usize, size: u64) -> std::result::Result<String, String> {
        if size < 16 || self.data.len() - start < 16 {
            return Err(malformed(format!("archive header truncated before the name field for archive member header at offset {start}")));
        }
        let raw = self.raw_name(start)?;
        if raw.is_empty() {
            return Ok(String::new());
        }
        if raw[0] == b'/' {
            if raw == b"/" || raw == b"//" || raw == b"/SYM64/" || raw == b"/<XFGHASHMAP>/" || raw == b"/<ECSYMBOLS>/" {
                return Ok(lossy(raw));
            }
            let digits = rtrim(&raw[1..], b' ');
            let Some(off) = dec(digits) else {
                return Err(malformed(format!(
                    "long name offset characters after the '/' are not all decimal numbers: '{}' for archive \
                     member header at offset {start}",
                    escape(digits)
                )));
            };
            if off >= self.strtab.len() as u64 {
                return Err(malformed(format!(
                    "long name offset {off} past the end of the string table for archive member header at offset \
                     {start}"
                )));
            }
            let off = off as usize;
            let rest = &self.strtab[off..];
            if self.format == Format::Gnu {
                let end = rest.iter().position(|&c| c == b'\n').map(|p| p + off);
                match end {
                    Some(e) if e > off && self.strtab[e - 1] == b'/' => {
                        return Ok(lossy(&self.strtab[off..e - 1]));
                    }
                    _ => return Err(malformed(format!("string table at long name offset {off} not terminated"))),
                }
            }
            let n = rest.iter().position(|&c| c == 0).unwrap_or(rest.len());
            return Ok(lossy(&rest[..n]));
        }
        if let Some(len_digits) = raw.strip_prefix(b"#1/") {
            let digits = rtrim(len_digits, b' ');
            let Some(len) = dec(digits) else {
                return Err(malformed(format!(
                    "long name length characters after the #1/ are not all decimal numbers: '{}' for archive \
                     member header at offset {start}",
                    escape(digits)
                )));
            };
            if (HDR as u64).saturating_add(len) > size || start + HDR + len as usize > self.data.len() {
                return Err(malformed(format!(
                    "long name length: {len} extends past the end of the member or archive for archive member \
                     header at offset {start}"
                )));
            }
            let b = &self.data[start + HDR..start + HDR + len as usize];
            return Ok(lossy(rtrim(b, 0)));
        }
        if raw.last() != Some(&b'/') {
            return Ok(lossy(rtrim(raw, b' ')));
        }
        Ok(lossy(&raw[..raw.len() - 1]))
    }

    /// Reads the header at `start` (LLVM's `Child` constructor). Returns the data range
    /// (start of member data, data length), honouring BSD `#1/` names, and the raw name.
    fn header(&self, start: usize) -> std::result::Result<(usize, u64, &'a [u8]), String> {
        let remaining = self.data.len() - start;
        if remaining < HDR {
            let msg = "remaining size of archive too small for next archive member header ";
            return Err(match self.name(start, remaining as u64) {
                Ok(n) => malformed(format!("{msg}for {n}")),
                Err(_) => malformed(format!("{msg}at offset {start}")),
            });
        }
        let term = &self.data[start + 58..start + 60];
        if term != b"`\n" {
            let msg = format!(
                "terminator characters in archive member \"{}\" not the correct \"`\\n\" values for the archive \
                 member header ",
                escape(term)
            );
            return Err(match self.name(start, remaining as u64) {
                Ok(n) => malformed(format!("{msg}for {n}")),
                Err(_) => malformed(format!("{msg}at offset {start}")),
            });
        }
        let raw = self.raw_name(start)?;
        let is_thin_member = self.thin && raw != b"/" && raw != b"//" && raw != b"/SYM64/";
        let size = if is_thin_member { 0 } else { self.raw_size(start)? };
        let mut data_start = start + HDR;
        let mut data_len = size;
        if let Some(len_digits) = raw.strip_prefix(b"#1/") {
            let digits = rtrim(len_digits, b' ');
            let Some(len) = dec(digits) else {
                return Err(malformed(format!(
                    "long name length characters after the #1/ are not all decimal numbers: '{}' for archive \
                     member header at offset {start}",
                    lossy(digits)
                )));
            };
            // A name longer than the member is reported when the name is read.
            let len = len.min(size);
            data_start = data_start.saturating_add(len as usize);
            data_len = size - len;
        }
        Ok((data_start, data_len, raw))
    }

    /// Where the member after the one at `start` begins, or `None` at the end of the archive
    /// (LLVM's `getNext`).
    fn next(&self, start: usize, phase_name: impl FnOnce() -> std::result::Result<String, String>) -> std::result::Result<Option<usize>, String> {
        let raw = self.raw_name(start)?;
        let is_thin_member = self.thin && raw != b"/" && raw != b"//" && raw != b"/SYM64/";
        let mut size = HDR as u64;
        if !is_thin_member {
            size = size.saturating_add(self.raw_size(start)?);
        }
        let size = size.saturating_add(size & 1);
        let next = (start as u64).saturating_add(size);
        if next == self.data.len() as u64 {
            return Ok(None);
        }
        if next > self.data.len() as u64 {
            let msg = "offset to next archive member past the end of the archive after member ";
            return Err(match phase_name() {
                Ok(n) => malformed(format!("{msg}{n}")),
                Err(_) => malformed(format!("{msg}at offset {start}")),
            });
        }
        Ok(Some(next as usize))
    }

    fn member_size_bound(&self, start: usize) -> u64 {
        (HDR as u64).saturating_add(self.raw_size(start).unwrap_or(0))
    }
}

fn fail(phase: Phase, msg: String) -> Error {
    match phase {
        Phase::Create => Error::new(format!("failed to parse archive: {msg}")),
        Phase::Children => Error::new(format!("Archive::children failed: {msg}")),
    }
}

/// Splits an archive (`!<arch>\n` or `!<thin>\n`) into its regular members, in order.
///
/// Errors carry lld's text without the file name; the caller adds `path: ` in front.
pub fn parse(data: &[u8]) -> Result<Vec<Member<'_>>> {
    let thin = if data.starts_with(THIN_MAGIC) {
        true
    } else if data.starts_with(MAGIC) {
        false
    } else {
        crate::bail!("failed to parse archive: file too small to be an archive");
    };
    let mut p = Parser { data, thin, format: Format::Gnu, strtab: &[] };
    let mut members = Vec::new();
    if data.len() == MAGIC.len() {
        return Ok(members);
    }

    // Archive::create: identify the format and skip the symbol table and long-name table.
    let mut pos = MAGIC.len();
    let create = Phase::Create;
    let advance = |p: &Parser, pos: usize| -> Result<Option<usize>> { p.next(pos, || p.name(pos, p.member_size_bound(pos))).map_err(|m| fail(create, m)) };
    p.header(pos).map_err(|m| fail(create, m))?;
    let first_raw = p.raw_name(pos).map_err(|m| fail(create, m))?;
    let first_regular: Option<usize>;
    if first_raw == b"__.SYMDEF" || first_raw == b"__.SYMDEF_64" {
        p.format = Format::Bsd;
        first_regular = advance(&p, pos)?;
    } else if first_raw.starts_with(b"#1/") {
        p.format = Format::Bsd;
        let name = p.name(pos, p.member_size_bound(pos)).map_err(|m| fail(create, m))?;
        if name.starts_with("__.SYMDEF") {
            first_regular = advance(&p, pos)?;
        } else {
            first_regular = Some(pos);
        }
    } else {
        let mut raw = first_raw;
        let mut cur = Some(pos);
        if raw == b"/" || raw == b"/SYM64/" {
            cur = advance(&p, pos)?;
            if let Some(c) = cur {
                p.header(c).map_err(|m| fail(create, m))?;
                raw = p.raw_name(c).map_err(|m| fail(create, m))?;
                pos = c;
            }
        }
        match cur {
            None => first_regular = None,
            Some(c) if raw == b"//" => {
                let (ds, dl, _) = p.header(c).map_err(|m| fail(create, m))?;
                let end = (ds as u64).saturating_add(dl).min(data.len() as u64) as usize;
                p.strtab = &data[ds.min(end)..end];
                first_regular = advance(&p, c)?;
            }
            Some(c) if raw.first() != Some(&b'/') => first_regular = Some(c),
            Some(_) if raw != b"/" => {
                return Err(fail(create, "Invalid data was encountered while parsing the file".into()));
            }
            Some(c) => {
                // COFF-style second linker member, then an optional long-name table.
                let _ = pos;
                p.format = Format::Coff;
                let mut n = advance(&p, c)?;
                if let Some(c2) = n {
                    p.header(c2).map_err(|m| fail(create, m))?;
                    if p.raw_name(c2).map_err(|m| fail(create, m))? == b"//" {
                        let (ds, dl, _) = p.header(c2).map_err(|m| fail(create, m))?;
                        let end = (ds as u64).saturating_add(dl).min(data.len() as u64) as usize;
                        p.strtab = &data[ds.min(end)..end];
                        n = advance(&p, c2)?;
                    }
                }
                first_regular = n;
            }
        }
    }

    // Archive::children: every regular member.
    let mut cur = first_regular;
    let mut first = true;
    while let Some(start) = cur {
        let phase = if first { Phase::Create } else { Phase::Children };
        first = false;
        let (data_start, data_len, _raw) = p.header(start).map_err(|m| fail(phase, m))?;
        let size_bound = p.member_size_bound(start);
        let name = p.name(start, size_bound).map_err(|m| Error::new(format!("could not get the buffer for a child of the archive: {m}")))?;
        // The member's bytes must lie inside the archive; otherwise lld fails when stepping to
        // the next member.
        let next = p.next(start, || p.name(start, size_bound)).map_err(|m| fail(Phase::Children, m))?;
        let member_data = if thin && !is_special(&name) {
            None
        } else {
            let end = (data_start as u64).saturating_add(data_len);
            if end > data.len() as u64 {
                // Only reachable when a BSD name pushes the data past the end (`next` checked the rest).
                return Err(fail(Phase::Children, malformed(format!("offset to next archive member past the end of the archive after member {name}"))));
            }
            Some(&data[data_start..end as usize])
        };
        members.push(Member { name, data: member_data, offset: start });
        cur = next;
    }
    Ok(members)
}

fn is_special(name: &str) -> bool {
    name == "/" || name == "//" || name == "/SYM64/"
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds a GNU-format member header.
    fn hdr(name: &str, size: usize) -> Vec<u8> {
        let h = format!("{:<16}{:<12}{:<6}{:<6}{:<8}{:<10}`\n", name, 0, 0, 0, 644, size);
        assert_eq!(h.len(), 60);
        h.into_bytes()
    }

    fn member(out: &mut Vec<u8>, name: &str, body: &[u8]) {
        out.extend(hdr(name, body.len()));
        out.extend_from_slice(body);
        if body.len() % 2 == 1 {
            out.push(b'\n');
        }
    }

    fn gnu_archive() -> Vec<u8> {
        let mut a = MAGIC.to_vec();
        member(&mut a, "/", &[0, 0, 0, 0]);
        let strtab = b"a_very_long_member_name.o/\nanother_long_member_name.o/\n";
        member(&mut a, "//", strtab);
        member(&mut a, "short.o/", b"SHORT");
        member(&mut a, "/0", b"LONG1!");
        member(&mut a, "/27", b"LONG2");
        a
    }

    #[test]
    fn gnu_with_long_names() {
        let a = gnu_archive();
        let m = parse(&a).unwrap();
        let names: Vec<_> = m.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["short.o", "a_very_long_member_name.o", "another_long_member_name.o"]);
        assert_eq!(m[0].data, Some(&b"SHORT"[..]));
        assert_eq!(m[1].data, Some(&b"LONG1!"[..]));
        assert_eq!(m[2].data, Some(&b"LONG2"[..]));
    }

    /// A COFF archive as llvm-ar, llvm-lib and lib.exe write it for COFF members: two linker
    /// members named `/`, then `//` whose names end with NUL (no `/\n`).
    #[test]
    fn coff_long_names_end_with_nul() {
        let mut a = MAGIC.to_vec();
        member(&mut a, "/", &[0, 0, 0, 0]);
        member(&mut a, "/", &[0, 0, 0, 0, 0, 0, 0, 0]);
        member(&mut a, "//", b"a_very_long_member_name.obj\0x.obj\0");
        member(&mut a, "/0", b"LONG");
        member(&mut a, "/28", b"SHORT");
        let m = parse(&a).unwrap();
        let names: Vec<_> = m.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["a_very_long_member_name.obj", "x.obj"]);
        assert_eq!(m[0].data, Some(&b"LONG"[..]));
        // The same table in a GNU archive (one linker member) is not terminated.
        let mut g = MAGIC.to_vec();
        member(&mut g, "/", &[0, 0, 0, 0]);
        member(&mut g, "//", b"a_very_long_member_name.obj\0x.obj\0");
        member(&mut g, "/0", b"LONG");
        assert!(parse(&g).unwrap_err().messages[0].contains("string table at long name offset 0 not terminated"));
    }

    #[test]
    fn empty_and_no_symtab() {
        assert!(parse(MAGIC).unwrap().is_empty());
        let mut a = MAGIC.to_vec();
        member(&mut a, "x.o/", b"X");
        member(&mut a, "y.o/", b"YY");
        let m = parse(&a).unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(m[1].data, Some(&b"YY"[..]));
        // SYM64 symbol table.
        let mut a = MAGIC.to_vec();
        member(&mut a, "/SYM64/", &[0; 8]);
        member(&mut a, "z.o/", b"Z");
        assert_eq!(parse(&a).unwrap()[0].name, "z.o");
    }

    #[test]
    fn bsd_names() {
        let mut a = MAGIC.to_vec();
        let mut body = b"__.SYMDEF SORTED".to_vec();
        body.extend([0u8; 8]);
        let mut h = hdr("#1/16", body.len());
        h.truncate(60);
        a.extend(h);
        a.extend(&body);
        let mut body = b"long name with spaces.o\0".to_vec();
        let n = body.len();
        body.extend(b"DATA");
        a.extend(hdr(&format!("#1/{n}"), body.len()));
        a.extend(&body);
        a.extend(hdr("plain.o", 3));
        a.extend(b"abc\n");
        let m = parse(&a).unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].name, "long name with spaces.o");
        assert_eq!(m[0].data, Some(&b"DATA"[..]));
        assert_eq!(m[1].name, "plain.o");
        assert_eq!(m[1].data, Some(&b"abc"[..]));
    }

    #[test]
    fn thin_archive() {
        let mut a = THIN_MAGIC.to_vec();
        member(&mut a, "/", &[0, 0, 0, 0]);
        member(&mut a, "//", b"longname_object_file.o/\n../m.o/\n");
        a.extend(hdr("/0", 960));
        a.extend(hdr("/24", 1234));
        let m = parse(&a).unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].name, "longname_object_file.o");
        assert_eq!(m[1].name, "../m.o");
        assert!(m[0].data.is_none() && m[1].data.is_none());
    }

    fn err(a: &[u8]) -> String {
        parse(a).unwrap_err().to_string()
    }

    #[test]
    fn corrupt_archives_in_lld_wording() {
        let a = gnu_archive();
        // Truncated inside the second header (at offset 72: 8 + 60 + 4).
        assert_eq!(
            err(&a[..100]),
            "failed to parse archive: truncated or malformed archive (remaining size of archive too small for \
             next archive member header for //)"
        );
        assert_eq!(
            err(&a[..80]),
            "failed to parse archive: truncated or malformed archive (remaining size of archive too small for \
             next archive member header at offset 72)"
        );
        assert_eq!(
            err(&a[..30]),
            "failed to parse archive: truncated or malformed archive (remaining size of archive too small for \
             next archive member header for /)"
        );
        assert_eq!(
            err(b"!<arch>\nabc"),
            "failed to parse archive: truncated or malformed archive (remaining size of archive too small for \
             next archive member header at offset 8)"
        );
        // Last member cut short.
        assert_eq!(
            err(&a[..a.len() - 2]),
            "Archive::children failed: truncated or malformed archive (offset to next archive member past the \
             end of the archive after member another_long_member_name.o)"
        );
        // Bad terminator.
        let mut b = a.clone();
        let i = find(&b, b"short.o/");
        b[i + 58] = b'x';
        b[i + 59] = b'x';
        assert_eq!(
            err(&b),
            "failed to parse archive: truncated or malformed archive (terminator characters in archive member \
             \"xx\" not the correct \"`\\n\" values for the archive member header for short.o)"
        );
        // Bad size.
        let mut b = a.clone();
        b[i + 48..i + 58].copy_from_slice(b"abc       ");
        assert_eq!(
            err(&b),
            format!(
                "failed to parse archive: truncated or malformed archive (characters in size field in archive \
                 member header are not all decimal numbers: 'abc' for the archive member header at offset {i})"
            )
        );
        // Long-name reference past the table.
        let mut b = a.clone();
        let j = find(&b, b"/27 ");
        b[j..j + 4].copy_from_slice(b"/999");
        assert_eq!(
            err(&b),
            format!(
                "could not get the buffer for a child of the archive: truncated or malformed archive (long name \
                 offset 999 past the end of the string table for archive member header at offset {j})"
            )
        );
        // Huge size.
        let mut b = a.clone();
        b[i + 48..i + 58].copy_from_slice(b"9999999999");
        assert!(err(&b).starts_with("Archive::children failed: truncated or malformed archive (offset to next"));
        // A long name as the first member without a table.
        let mut b = MAGIC.to_vec();
        member(&mut b, "/", &[0; 4]);
        member(&mut b, "/5", b"x");
        assert_eq!(err(&b), "failed to parse archive: Invalid data was encountered while parsing the file");
    }

    fn find(h: &[u8], n: &[u8]) -> usize {
        h.windows(n.len()).position(|w| w == n).unwrap()
    }

    /// Every truncation and many single-byte corruptions must give Ok or Err, never a panic.
    #[test]
    fn mutations_never_panic() {
        let a = gnu_archive();
        for n in 0..=a.len() {
            let _ = parse(&a[..n]);
        }
        let mut seed: u64 = 0x9e3779b97f4a7c15;
        for _ in 0..20000 {
            let mut b = a.clone();
            for _ in 0..3 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let pos = (seed % b.len() as u64) as usize;
                let val = (seed >> 32) as u8;
                b[pos] = match val % 4 {
                    0 => b'0' + val % 10,
                    1 => b' ',
                    2 => b'/',
                    _ => val,
                };
            }
            let _ = parse(&b);
            let mut t = b.clone();
            t[..8].copy_from_slice(THIN_MAGIC);
            let _ = parse(&t);
        }
    }
}
