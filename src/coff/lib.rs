//! Writing `ar` archives the way LLVM's `writeArchive` does for Windows tools: the COFF format
//! (`llvm-lib`, `lld-link /lib`, import libraries) and the GNU format (`llvm-lib /llvmlibthin`
//! thin archives, and COFF archives of more than 65,534 members).
//!
//! This exists so that dtld's archives are byte-identical to LLVM's, which build systems compare
//! and cache: both import-library writing (`implib.rs`) and dtld's llvm-lib (`driver/lib.rs`)
//! come here. The layout, in LLVM's deterministic mode (dates, uid and gid 0, mode 644):
//!
//! * `!<arch>\n` (`!<thin>\n` for a thin archive);
//! * the first linker member `/`: the symbol count and each symbol's member offset as big-endian
//!   32-bit words, then the NUL-terminated names, in member order;
//! * COFF only: the second linker member `/` (Microsoft's): the member count, each member's
//!   offset (little-endian), the symbol count, each symbol's 1-based 16-bit member index and
//!   the names, sorted bytewise. A name defined by two members is listed once, for the first
//!   one, in both tables;
//! * the long-name table `//` when a name has 16 bytes or more or contains `/` (every name in
//!   a thin archive): names end with NUL in the COFF format, with `/\n` in the GNU one; a
//!   regular archive stores a repeated name once;
//! * the members, each padded with `\n` to an even size; a thin archive's headers have the
//!   file's size but no data.
//!
//! A GNU archive without symbols gets no symbol table, except that one with an object among
//! its members gets an empty table (three NULs, for old Solaris tools). Pure: no I/O.

use std::collections::BTreeMap;

/// One member to write.
pub struct NewMember<'a> {
    /// The name stored in the archive (for a thin archive, the path it refers to).
    pub name: String,
    pub data: &'a [u8],
    /// The symbols the member defines for the archive's index, in the member's order;
    /// `None` for a file that has no symbol table at all (a resource file), which LLVM does not
    /// count as an object.
    pub symbols: Option<Vec<Vec<u8>>>,
}

/// LLVM's `Archive::Kind`, of the two kinds written here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Coff,
    Gnu,
}

#[derive(Clone, Copy, Debug)]
pub struct Options {
    pub format: Format,
    pub thin: bool,
    /// Write the symbol tables (`/llvmlibindex`, the default).
    pub symtab: bool,
}

const HEADER: usize = 60;

/// Appends `s` padded with spaces to `width` (the archive header fields).
fn field(out: &mut Vec<u8>, s: &[u8], width: usize) {
    out.extend_from_slice(s);
    out.resize(out.len() + width.saturating_sub(s.len()), b' ');
}

/// The header fields after the name: date, uid, gid (0), mode (octal), size.
fn rest_of_header(out: &mut Vec<u8>, mode: &str, size: usize) {
    field(out, b"0", 12);
    field(out, b"0", 6);
    field(out, b"0", 6);
    field(out, mode.as_bytes(), 8);
    field(out, size.to_string().as_bytes(), 10);
    out.extend_from_slice(b"`\n");
}

/// The header of a linker member (`/`, mode 0).
fn symtab_header(out: &mut Vec<u8>, size: usize) {
    field(out, b"/", 16);
    rest_of_header(out, "0", size);
}

fn pad2(n: usize) -> usize {
    n + n % 2
}

/// The headers of the members, and the long-name table they refer to.
fn member_headers(members: &[NewMember], opts: Options, format: Format) -> (Vec<Vec<u8>>, Vec<u8>) {
    let mut strtab = Vec::new();
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    let mut headers = Vec::with_capacity(members.len());
    for m in members {
        let mut h = Vec::with_capacity(HEADER);
        let name = m.name.as_str();
        if !opts.thin && name.len() < 16 && !name.contains('/') {
            field(&mut h, format!("{name}/").as_bytes(), 16);
        } else {
            let pos = match seen.get(name) {
                Some(&p) if !opts.thin => p,
                _ => {
                    let p = strtab.len();
                    strtab.extend_from_slice(name.as_bytes());
                    if format == Format::Coff && !opts.thin {
                        strtab.push(0);
                    } else {
                        strtab.extend_from_slice(b"/\n");
                    }
                    if !opts.thin {
                        seen.insert(name, p);
                    }
                    p
                }
            };
            h.push(b'/');
            field(&mut h, pos.to_string().as_bytes(), 15);
        }
        rest_of_header(&mut h, "644", m.data.len());
        headers.push(h);
    }
    (headers, strtab)
}

/// The symbol tables' contents: for each symbol of the first table its member, the names of
/// the first table, and (COFF) the sorted map name -> 1-based member index.
struct Symbols<'a> {
    members: Vec<usize>,
    names: Vec<u8>,
    map: BTreeMap<&'a [u8], u16>,
}

fn collect_symbols<'a>(members: &'a [NewMember<'a>], format: Format) -> Symbols<'a> {
    let mut s = Symbols { members: Vec::new(), names: Vec::new(), map: BTreeMap::new() };
    let mut has_object = false;
    for (i, m) in members.iter().enumerate() {
        let Some(syms) = &m.symbols else { continue };
        has_object = true;
        for name in syms {
            if format == Format::Coff {
                if s.map.contains_key(name.as_slice()) {
                    continue;
                }
                // At most 0xfffe members in the COFF format (`write` switches to GNU above).
                s.map.insert(name, (i + 1) as u16);
            }
            s.members.push(i);
            s.names.extend_from_slice(name);
            s.names.push(0);
        }
    }
    if has_object && s.names.is_empty() && format == Format::Gnu {
        s.names.extend_from_slice(&[0, 0, 0]);
    }
    s
}

/// Writes the archive (LLVM's `writeArchiveToStream`, deterministic).
pub fn write(members: &[NewMember], opts: Options) -> Vec<u8> {
    // The COFF symbol map has 16-bit member indices.
    let format = if opts.format == Format::Coff && members.len() > 0xfffe { Format::Gnu } else { opts.format };
    let (headers, strtab) = member_headers(members, opts, format);
    let syms = if opts.symtab { collect_symbols(members, format) } else { Symbols { members: Vec::new(), names: Vec::new(), map: BTreeMap::new() } };

    let symtab_size = pad2(4 + 4 * syms.members.len() + syms.names.len());
    let map_names: usize = syms.map.keys().map(|k| k.len() + 1).sum();
    let symmap_size = pad2(8 + 4 * members.len() + 2 * syms.map.len() + map_names);
    let strtab_member = if strtab.is_empty() { 0 } else { HEADER + pad2(strtab.len()) };
    // A GNU archive without symbols gets no symbol table at all (llvm-lib's writer).
    let write_symtab = opts.symtab && (format == Format::Coff || !syms.names.is_empty());
    let mut headers_size = 8 + strtab_member;
    if write_symtab {
        headers_size += HEADER + symtab_size;
        if format == Format::Coff {
            headers_size += HEADER + symmap_size;
        }
    }
    let mut offsets = Vec::with_capacity(members.len());
    let mut pos = headers_size;
    for (m, h) in members.iter().zip(&headers) {
        offsets.push(pos as u32);
        pos += h.len() + if opts.thin { 0 } else { pad2(m.data.len()) };
    }

    let mut out = Vec::with_capacity(pos);
    out.extend_from_slice(if opts.thin { b"!<thin>\n" } else { b"!<arch>\n" });
    if write_symtab {
        symtab_header(&mut out, symtab_size);
        let start = out.len();
        out.extend_from_slice(&(syms.members.len() as u32).to_be_bytes());
        for &i in &syms.members {
            out.extend_from_slice(&offsets[i].to_be_bytes());
        }
        out.extend_from_slice(&syms.names);
        out.resize(start + symtab_size, 0);
    }
    if opts.symtab && format == Format::Coff {
        symtab_header(&mut out, symmap_size);
        let start = out.len();
        out.extend_from_slice(&(members.len() as u32).to_le_bytes());
        for off in &offsets {
            out.extend_from_slice(&off.to_le_bytes());
        }
        out.extend_from_slice(&(syms.map.len() as u32).to_le_bytes());
        for idx in syms.map.values() {
            out.extend_from_slice(&idx.to_le_bytes());
        }
        for name in syms.map.keys() {
            out.extend_from_slice(name);
            out.push(0);
        }
        out.resize(start + symmap_size, 0);
    }
    if !strtab.is_empty() {
        field(&mut out, b"//", 48);
        field(&mut out, pad2(strtab.len()).to_string().as_bytes(), 10);
        out.extend_from_slice(b"`\n");
        out.extend_from_slice(&strtab);
        if strtab.len() % 2 == 1 {
            out.push(b'\n');
        }
    }
    for (m, h) in members.iter().zip(&headers) {
        out.extend_from_slice(h);
        if !opts.thin {
            out.extend_from_slice(m.data);
            if m.data.len() % 2 == 1 {
                out.push(b'\n');
            }
        }
    }
    debug_assert_eq!(out.len(), pos);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member<'a>(name: &str, data: &'a [u8], syms: Option<&[&str]>) -> NewMember<'a> {
        NewMember { name: name.into(), data, symbols: syms.map(|s| s.iter().map(|n| n.as_bytes().to_vec()).collect()) }
    }

    #[test]
    fn coff_tables_deduplicate_and_sort() {
        let ms = [member("b.o", b"abc", Some(&["zed", "alpha"])), member("a-long-member-name.o", b"wxyz", Some(&["zed", "mid"]))];
        let ar = write(&ms, Options { format: Format::Coff, thin: false, symtab: true });
        let parsed = crate::archive::parse(&ar).unwrap();
        assert_eq!(parsed.iter().map(|m| m.name.as_str()).collect::<Vec<_>>(), ["b.o", "a-long-member-name.o"]);
        assert_eq!(parsed[0].data.unwrap(), b"abc");
        let table = crate::coff::armap::symbols(&ar).unwrap();
        let names: Vec<&str> = table.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["alpha", "mid", "zed"]);
        assert_eq!(table[2].1, parsed[0].offset);
        assert_eq!(table[1].1, parsed[1].offset);
    }

    #[test]
    fn thin_gnu_names_all_in_table() {
        let ms = [member("x.o", b"12345", Some(&[])), member("res.res", b"r", None)];
        let ar = write(&ms, Options { format: Format::Gnu, thin: true, symtab: true });
        assert!(ar.starts_with(b"!<thin>\n/               "));
        // An object without symbols: an empty table of three NULs, padded to 8 bytes.
        assert_eq!(&ar[8 + 48..8 + 58], b"8         ");
        assert!(ar.windows(8).any(|w| w == b"x.o/\nres"));
        let parsed = crate::archive::parse(&ar).unwrap();
        assert_eq!(parsed.iter().map(|m| m.name.as_str()).collect::<Vec<_>>(), ["x.o", "res.res"]);
        assert!(parsed.iter().all(|m| m.data.is_none()));
        // No symbol table without objects.
        let ar = write(&ms[1..], Options { format: Format::Gnu, thin: true, symtab: true });
        assert!(ar.starts_with(b"!<thin>\n//"));
    }

    #[test]
    fn empty_coff_archive_has_both_tables() {
        let ar = write(&[], Options { format: Format::Coff, thin: false, symtab: true });
        assert_eq!(ar.len(), 8 + 60 + 4 + 60 + 8);
        let ar = write(&[], Options { format: Format::Coff, thin: false, symtab: false });
        assert_eq!(ar, b"!<arch>\n");
    }
}
