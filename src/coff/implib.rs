//! COFF short import members and import-library writing.
//!
//! Import libraries (`libfoo.dll.a`, `foo.lib`) tell the linker which DLL
//! provides a symbol. Modern ones consist mostly of "short import" members
//! (PE/COFF spec 8, "Import Library Format"): a 20-byte
//! `IMPORT_OBJECT_HEADER` followed by the symbol name, the DLL name and,
//! for `IMPORT_NAME_EXPORTAS`, the exported name, each NUL-terminated. The
//! linker synthesizes `__imp_<sym>` (and, for code, a `<sym>` jump thunk)
//! from such a member.
//!
//! This module parses short import members strictly ([`parse_short_import`])
//! and writes a complete import library for a DLL
//! ([`write_import_library`]) byte-identical to what ld.lld-22 writes for
//! MinGW `--out-implib` (`llvm::object::writeImportLibrary` with
//! `MinGW = true`, x86-64): a COFF-style `ar` archive (first and second
//! linker members, `//` long-name member when needed), the import
//! descriptor object `__IMPORT_DESCRIPTOR_<lib>`, the
//! `__NULL_IMPORT_DESCRIPTOR` object, the `\x7f<lib>_NULL_THUNK_DATA`
//! object, then one short import per non-private export. The archive itself
//! is written by LLVM's deterministic archive writer's rules (`lib.rs`).
//!
//! Pure: no I/O, no global state, deterministic.

use object::pe::{
    IMAGE_FILE_MACHINE_AMD64, IMAGE_FILE_MACHINE_ARM64, IMAGE_FILE_MACHINE_ARM64EC, IMAGE_FILE_MACHINE_ARM64X, IMAGE_FILE_MACHINE_ARMNT,
    IMAGE_FILE_MACHINE_I386, IMAGE_REL_AMD64_ADDR32NB, IMAGE_SCN_ALIGN_2BYTES, IMAGE_SCN_ALIGN_4BYTES, IMAGE_SCN_ALIGN_8BYTES, IMAGE_SCN_CNT_INITIALIZED_DATA,
    IMAGE_SCN_MEM_READ, IMAGE_SCN_MEM_WRITE, IMAGE_SYM_CLASS_EXTERNAL, IMAGE_SYM_CLASS_SECTION, IMAGE_SYM_CLASS_STATIC, IMPORT_OBJECT_CODE,
    IMPORT_OBJECT_CONST, IMPORT_OBJECT_DATA, IMPORT_OBJECT_HDR_SIG2, IMPORT_OBJECT_NAME, IMPORT_OBJECT_NAME_EXPORTAS, IMPORT_OBJECT_NAME_MASK,
    IMPORT_OBJECT_NAME_NO_PREFIX, IMPORT_OBJECT_NAME_SHIFT, IMPORT_OBJECT_NAME_UNDECORATE, IMPORT_OBJECT_ORDINAL, IMPORT_OBJECT_TYPE_MASK,
};

/// Import type of a short import (`IMPORT_OBJECT_CODE/DATA/CONST`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImportKind {
    /// A function: the linker provides both `__imp_<sym>` and a `<sym>`
    /// thunk.
    Code,
    /// Data: only `__imp_<sym>`.
    Data,
    /// `CONST` (obsolete MSVC form); in LLVM it provides `__imp_<sym>` and
    /// `<sym>` like code, but lld creates no thunk for it.
    Const,
}

/// A parsed short import member.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShortImport {
    /// DLL name (second string).
    pub dll: String,
    /// Symbol name (first string); the linker defines `__imp_<symbol>`.
    pub symbol: String,
    pub kind: ImportKind,
    /// Raw `OrdinalHint` field: the hint for name imports, the ordinal for
    /// ordinal imports.
    pub hint: u16,
    /// `Some(ordinal)` for `IMPORT_ORDINAL`, otherwise `None`.
    pub ordinal: Option<u16>,
    /// Name placed in the hint/name table, after the name-type rules:
    /// `IMPORT_NAME`: the symbol; `IMPORT_NAME_NOPREFIX`: the symbol
    /// without one leading `?`, `@` or `_`; `IMPORT_NAME_UNDECORATE`: that,
    /// cut at the first `@`; `IMPORT_NAME_EXPORTAS`: the third string.
    /// `None` for `IMPORT_ORDINAL`.
    pub import_name: Option<String>,
}

/// Size of `IMPORT_OBJECT_HEADER`.
const SHORT_HEADER_SIZE: usize = 20;

fn rd16(b: &[u8], off: usize) -> u16 {
    u16::from_le_bytes([b[off], b[off + 1]])
}

fn rd32(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes([b[off], b[off + 1], b[off + 2], b[off + 3]])
}

/// True if `member` starts like a short import object: `Sig1` =
/// `IMAGE_FILE_MACHINE_UNKNOWN` (0), `Sig2` = 0xFFFF and `Version` = 0.
/// (`Version` >= 1 with the same signatures is an anonymous object, e.g. a
/// `/bigobj` file, which is not a short import.) The machine and the rest
/// are checked by [`parse_short_import`], which reports e.g. an i386 import
/// as an error rather than this function silently rejecting it.
pub fn is_short_import(member: &[u8]) -> bool {
    member.len() >= 6 && rd16(member, 0) == 0 && rd16(member, 2) == IMPORT_OBJECT_HDR_SIG2 && rd16(member, 4) == 0
}

/// lld's spelling of a machine type in "conflicts with" errors.
fn machine_name(m: u16) -> String {
    match m {
        IMAGE_FILE_MACHINE_AMD64 => "x64".into(),
        IMAGE_FILE_MACHINE_I386 => "x86".into(),
        IMAGE_FILE_MACHINE_ARMNT => "arm".into(),
        IMAGE_FILE_MACHINE_ARM64 => "arm64".into(),
        IMAGE_FILE_MACHINE_ARM64EC => "arm64ec".into(),
        IMAGE_FILE_MACHINE_ARM64X => "arm64x".into(),
        _ => format!("{m:#x}"),
    }
}

/// Reads a NUL-terminated string at `*pos` and advances past the NUL.
fn take_cstr(data: &[u8], pos: &mut usize, what: &str) -> Result<String, String> {
    let rest = &data[*pos..];
    let len = rest.iter().position(|&c| c == 0).ok_or_else(|| format!("broken import library: missing NUL after {what}"))?;
    let s = std::str::from_utf8(&rest[..len]).map_err(|_| format!("broken import library: {what} is not valid UTF-8"))?;
    *pos += len + 1;
    Ok(s.to_string())
}

/// `ltrim1(s, "?@_")` from lld: drop one leading `?`, `@` or `_`.
fn ltrim1(s: &str) -> &str {
    match s.as_bytes().first() {
        Some(b'?' | b'@' | b'_') => &s[1..],
        _ => s,
    }
}

/// lld's fatal error for an import member whose size disagrees with its header.
pub const BROKEN: &str = "broken import library";

/// Parses a short import member (the archive member's data, without the
/// archive's padding byte).
///
/// Strict; errors (to be wrapped by the caller as
/// `<archive>(<member>): <msg>`):
/// * not a short import (wrong signatures or version);
/// * [`BROKEN`] (lld's only words, with no file name) for a truncated header, or a member that
///   is not exactly 20 + `SizeOfData` bytes;
/// * missing NUL after the symbol name, DLL name or export-as name; empty
///   symbol or DLL name; names that are not UTF-8;
/// * `unknown import type N`, `unknown import name type N`;
/// * `machine type x86 conflicts with x64` for any machine other than
///   `IMAGE_FILE_MACHINE_AMD64` (lld's wording).
pub fn parse_short_import(member: &[u8]) -> Result<ShortImport, String> {
    if member.len() < SHORT_HEADER_SIZE {
        if member.len() >= 6 && !is_short_import(member) {
            return Err("not a short import object".into());
        }
        return Err(BROKEN.into());
    }
    if !is_short_import(member) {
        return Err("not a short import object".into());
    }
    let machine = rd16(member, 6);
    let size_of_data = rd32(member, 12) as usize;
    let hint = rd16(member, 16);
    let type_info = rd16(member, 18);
    if SHORT_HEADER_SIZE.checked_add(size_of_data) != Some(member.len()) {
        return Err(BROKEN.into());
    }
    if machine != IMAGE_FILE_MACHINE_AMD64 {
        return Err(format!("machine type {} conflicts with x64", machine_name(machine)));
    }
    let kind = match type_info & IMPORT_OBJECT_TYPE_MASK {
        IMPORT_OBJECT_CODE => ImportKind::Code,
        IMPORT_OBJECT_DATA => ImportKind::Data,
        IMPORT_OBJECT_CONST => ImportKind::Const,
        t => return Err(format!("broken import library: unknown import type {t}")),
    };
    let name_type = (type_info >> IMPORT_OBJECT_NAME_SHIFT) & IMPORT_OBJECT_NAME_MASK;

    let mut pos = SHORT_HEADER_SIZE;
    let symbol = take_cstr(member, &mut pos, "symbol name")?;
    let dll = take_cstr(member, &mut pos, "DLL name")?;
    if symbol.is_empty() {
        return Err("broken import library: empty symbol name".into());
    }
    if dll.is_empty() {
        return Err("broken import library: empty DLL name".into());
    }
    let (ordinal, import_name) = match name_type {
        IMPORT_OBJECT_ORDINAL => (Some(hint), None),
        IMPORT_OBJECT_NAME => (None, Some(symbol.clone())),
        IMPORT_OBJECT_NAME_NO_PREFIX => (None, Some(ltrim1(&symbol).to_string())),
        IMPORT_OBJECT_NAME_UNDECORATE => {
            let s = ltrim1(&symbol);
            (None, Some(s.split('@').next().unwrap_or(s).to_string()))
        }
        IMPORT_OBJECT_NAME_EXPORTAS => (None, Some(take_cstr(member, &mut pos, "export name")?)),
        t => return Err(format!("broken import library: unknown import name type {t}")),
    };
    Ok(ShortImport { dll, symbol, kind, hint, ordinal, import_name })
}

/// One export to describe in the import library.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImplibExport {
    /// Symbol name clients link against (and, unless `export_as` or
    /// `noname`, the name imported from the DLL).
    pub name: String,
    /// Explicit ordinal, or 0. lld writes the import library before it
    /// assigns ordinals to the other exports, so only explicit (`@N`)
    /// ordinals appear as hints; pass 0 for the rest to match lld.
    pub ordinal: u16,
    /// `DATA`: only `__imp_<name>` is defined.
    pub data: bool,
    /// `NONAME`: imported by ordinal (`IMPORT_ORDINAL`).
    pub noname: bool,
    /// `PRIVATE`: left out of the import library.
    pub private: bool,
    /// `CONSTANT`: `IMPORT_CONST` (takes precedence over `data`).
    pub constant: bool,
    /// `EXPORTAS`: import this name from the DLL
    /// (`IMPORT_NAME_EXPORTAS`) while linking against `name`.
    pub export_as: Option<String>,
    /// `==name` of a `.def` file: import this name from the DLL. LLVM's
    /// writer puts such a member after all the others (its "renames"),
    /// with `IMPORT_NAME_EXPORTAS`, unless it equals `name`.
    pub import_name: Option<String>,
}

/// `llvm::sys::path::filename` on a POSIX host.
fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// `llvm::sys::path::stem`: the file name without its last extension.
fn stem(name: &str) -> &str {
    if name == "." || name == ".." {
        return name;
    }
    match name.rfind('.') {
        Some(i) => &name[..i],
        None => name,
    }
}

// --- COFF object construction -------------------------------------------

const FILE_HEADER_SIZE: usize = 20;
const SECTION_HEADER_SIZE: usize = 40;
const RELOC_SIZE: usize = 10;
const IMPORT_DESCRIPTOR_SIZE: usize = 20;

fn push16(b: &mut Vec<u8>, v: u16) {
    b.extend_from_slice(&v.to_le_bytes());
}

fn push32(b: &mut Vec<u8>, v: u32) {
    b.extend_from_slice(&v.to_le_bytes());
}

fn file_header(b: &mut Vec<u8>, nsections: u16, symtab_off: usize, nsyms: u32) {
    push16(b, IMAGE_FILE_MACHINE_AMD64);
    push16(b, nsections);
    push32(b, 0); // TimeDateStamp
    push32(b, symtab_off as u32);
    push32(b, nsyms);
    push16(b, 0); // SizeOfOptionalHeader
    push16(b, 0); // Characteristics: none for 64-bit machines
}

/// Section header with no relocations unless given.
fn section_header(b: &mut Vec<u8>, name: &[u8; 8], size: usize, data_off: usize, reloc_off: usize, nrelocs: u16, chars: u32) {
    b.extend_from_slice(name);
    push32(b, 0); // VirtualSize
    push32(b, 0); // VirtualAddress
    push32(b, size as u32);
    push32(b, data_off as u32);
    push32(b, reloc_off as u32);
    push32(b, 0); // PointerToLinenumbers
    push16(b, nrelocs);
    push16(b, 0); // NumberOfLinenumbers
    push32(b, chars);
}

/// Symbol table entry; `name` is either a short name or a string-table
/// offset.
enum SymName<'a> {
    Short(&'a [u8; 8]),
    Offset(u32),
}

fn symbol(b: &mut Vec<u8>, name: SymName<'_>, section: u16, class: u8) {
    match name {
        SymName::Short(n) => b.extend_from_slice(n),
        SymName::Offset(off) => {
            push32(b, 0);
            push32(b, off);
        }
    }
    push32(b, 0); // Value
    push16(b, section);
    push16(b, 0); // Type
    b.push(class);
    b.push(0); // NumberOfAuxSymbols
}

fn string_table(b: &mut Vec<u8>, strings: &[&[u8]]) {
    let len: usize = 4 + strings.iter().map(|s| s.len() + 1).sum::<usize>();
    push32(b, len as u32);
    for s in strings {
        b.extend_from_slice(s);
        b.push(0);
    }
}

const DATA_RW: u32 = IMAGE_SCN_CNT_INITIALIZED_DATA | IMAGE_SCN_MEM_READ | IMAGE_SCN_MEM_WRITE;
const NULL_IMPORT_DESCRIPTOR: &str = "__NULL_IMPORT_DESCRIPTOR";

/// The `__IMPORT_DESCRIPTOR_<lib>` object: an `.idata$2` import directory
/// entry with relocations to the DLL name (`.idata$6`), the lookup table
/// (`.idata$4`) and the address table (`.idata$5`), referencing the null
/// descriptor and null thunk so they get pulled in.
fn import_descriptor(import_name: &str, desc_sym: &str, thunk_sym: &str) -> Vec<u8> {
    let name_size = import_name.len() + 1;
    let sec2_data = FILE_HEADER_SIZE + 2 * SECTION_HEADER_SIZE;
    let sec2_relocs = sec2_data + IMPORT_DESCRIPTOR_SIZE;
    let sec6_data = sec2_relocs + 3 * RELOC_SIZE;
    let symtab = sec6_data + name_size;
    let mut b = Vec::new();
    file_header(&mut b, 2, symtab, 7);
    section_header(&mut b, b".idata$2", IMPORT_DESCRIPTOR_SIZE, sec2_data, sec2_relocs, 3, IMAGE_SCN_ALIGN_4BYTES | DATA_RW);
    section_header(&mut b, b".idata$6", name_size, sec6_data, 0, 0, IMAGE_SCN_ALIGN_2BYTES | DATA_RW);
    b.extend_from_slice(&[0u8; IMPORT_DESCRIPTOR_SIZE]);
    // (offset in the import directory entry, symbol index)
    for (off, sym) in [(12u32, 2u32), (0, 3), (16, 4)] {
        push32(&mut b, off); // NameRVA / ImportLookupTableRVA / ImportAddressTableRVA
        push32(&mut b, sym);
        push16(&mut b, IMAGE_REL_AMD64_ADDR32NB);
    }
    b.extend_from_slice(import_name.as_bytes());
    b.push(0);
    debug_assert_eq!(b.len(), symtab);
    symbol(&mut b, SymName::Offset(4), 1, IMAGE_SYM_CLASS_EXTERNAL);
    symbol(&mut b, SymName::Short(b".idata$2"), 1, IMAGE_SYM_CLASS_SECTION);
    symbol(&mut b, SymName::Short(b".idata$6"), 2, IMAGE_SYM_CLASS_STATIC);
    symbol(&mut b, SymName::Short(b".idata$4"), 0, IMAGE_SYM_CLASS_SECTION);
    symbol(&mut b, SymName::Short(b".idata$5"), 0, IMAGE_SYM_CLASS_SECTION);
    let off_null = 4 + desc_sym.len() as u32 + 1;
    symbol(&mut b, SymName::Offset(off_null), 0, IMAGE_SYM_CLASS_EXTERNAL);
    symbol(&mut b, SymName::Offset(off_null + NULL_IMPORT_DESCRIPTOR.len() as u32 + 1), 0, IMAGE_SYM_CLASS_EXTERNAL);
    string_table(&mut b, &[desc_sym.as_bytes(), NULL_IMPORT_DESCRIPTOR.as_bytes(), thunk_sym.as_bytes()]);
    b
}

/// The `__NULL_IMPORT_DESCRIPTOR` object: a zero `.idata$3` entry that
/// terminates the import directory.
fn null_import_descriptor() -> Vec<u8> {
    let data = FILE_HEADER_SIZE + SECTION_HEADER_SIZE;
    let mut b = Vec::new();
    file_header(&mut b, 1, data + IMPORT_DESCRIPTOR_SIZE, 1);
    section_header(&mut b, b".idata$3", IMPORT_DESCRIPTOR_SIZE, data, 0, 0, IMAGE_SCN_ALIGN_4BYTES | DATA_RW);
    b.extend_from_slice(&[0u8; IMPORT_DESCRIPTOR_SIZE]);
    symbol(&mut b, SymName::Offset(4), 1, IMAGE_SYM_CLASS_EXTERNAL);
    string_table(&mut b, &[NULL_IMPORT_DESCRIPTOR.as_bytes()]);
    b
}

/// The `\x7f<lib>_NULL_THUNK_DATA` object: zero `.idata$5` and `.idata$4`
/// entries terminating this DLL's address and lookup tables.
fn null_thunk(thunk_sym: &str) -> Vec<u8> {
    const VA_SIZE: usize = 8;
    let data = FILE_HEADER_SIZE + 2 * SECTION_HEADER_SIZE;
    let mut b = Vec::new();
    file_header(&mut b, 2, data + 2 * VA_SIZE, 1);
    section_header(&mut b, b".idata$5", VA_SIZE, data, 0, 0, IMAGE_SCN_ALIGN_8BYTES | DATA_RW);
    section_header(&mut b, b".idata$4", VA_SIZE, data + VA_SIZE, 0, 0, IMAGE_SCN_ALIGN_8BYTES | DATA_RW);
    b.extend_from_slice(&[0u8; 2 * VA_SIZE]);
    symbol(&mut b, SymName::Offset(4), 1, IMAGE_SYM_CLASS_EXTERNAL);
    string_table(&mut b, &[thunk_sym.as_bytes()]);
    b
}

/// A short import member (`createShortImport`).
fn short_import(import_name: &str, sym: &str, ordinal: u16, kind: u16, name_type: u16, export_name: &str) -> Vec<u8> {
    let mut size = import_name.len() + sym.len() + 2;
    if !export_name.is_empty() {
        size += export_name.len() + 1;
    }
    let mut b = Vec::with_capacity(SHORT_HEADER_SIZE + size);
    push16(&mut b, 0); // Sig1 = IMAGE_FILE_MACHINE_UNKNOWN
    push16(&mut b, IMPORT_OBJECT_HDR_SIG2);
    push16(&mut b, 0); // Version
    push16(&mut b, IMAGE_FILE_MACHINE_AMD64);
    push32(&mut b, 0); // TimeDateStamp
    push32(&mut b, size as u32);
    push16(&mut b, ordinal);
    push16(&mut b, (name_type << IMPORT_OBJECT_NAME_SHIFT) | kind);
    b.extend_from_slice(sym.as_bytes());
    b.push(0);
    b.extend_from_slice(import_name.as_bytes());
    b.push(0);
    if !export_name.is_empty() {
        b.extend_from_slice(export_name.as_bytes());
        b.push(0);
    }
    b
}

// --- Archive writing ---------------------------------------------------------

/// One archive member: data plus the archive symbols it defines.
struct Member {
    data: Vec<u8>,
    symbols: Vec<String>,
}

/// Writes the complete MinGW import library for `dll_name`, as ld.lld-22
/// `--out-implib` does on x86-64.
///
/// `dll_name` is the DLL's file name (directories are stripped); the
/// library name used in `__IMPORT_DESCRIPTOR_<lib>` and
/// `\x7f<lib>_NULL_THUNK_DATA` is its stem. Every member is named after
/// the DLL (through the `//` table when the name is 16 bytes or longer or
/// contains `/`). The exports are written in the order given; lld passes
/// them sorted by export name, as returned by
/// `exports::assign_ordinals`, with only explicit ordinals (see
/// [`ImplibExport::ordinal`]). Private exports are skipped.
///
/// Archive symbols per member: `__IMPORT_DESCRIPTOR_<lib>`,
/// `__NULL_IMPORT_DESCRIPTOR`, `\x7f<lib>_NULL_THUNK_DATA`, then
/// `__imp_<name>` and `<name>` for code and const imports, only
/// `__imp_<name>` for data. A symbol already defined by an earlier member
/// is not listed again (LLVM's COFF archive writer drops duplicates).
pub fn write_import_library(dll_name: &str, exports: &[ImplibExport]) -> Vec<u8> {
    let import_name = file_name(dll_name);
    let lib = stem(import_name);
    let desc_sym = format!("__IMPORT_DESCRIPTOR_{lib}");
    let thunk_sym = format!("\x7f{lib}_NULL_THUNK_DATA");

    let mut members = vec![
        Member { data: import_descriptor(import_name, &desc_sym, &thunk_sym), symbols: vec![desc_sym.clone()] },
        Member { data: null_import_descriptor(), symbols: vec![NULL_IMPORT_DESCRIPTOR.to_string()] },
        Member { data: null_thunk(&thunk_sym), symbols: vec![thunk_sym.clone()] },
    ];
    let renamed = |e: &&ImplibExport| {
        !e.noname && e.export_as.as_deref().is_none_or(str::is_empty) && e.import_name.as_deref().is_some_and(|n| !n.is_empty() && n != e.name)
    };
    let regular = exports.iter().filter(|e| !e.private && !renamed(e));
    // LLVM's deferred renames. (When another export of this library already
    // imports that name, LLVM writes weak-external aliases instead; dtld
    // does not, and imports the name directly.)
    let renames = exports.iter().filter(|e| !e.private && renamed(e));
    for e in regular.chain(renames) {
        let kind = if e.constant {
            IMPORT_OBJECT_CONST
        } else if e.data {
            IMPORT_OBJECT_DATA
        } else {
            IMPORT_OBJECT_CODE
        };
        let (name_type, export_name) = if e.noname {
            (IMPORT_OBJECT_ORDINAL, "")
        } else if let Some(as_name) = e.export_as.as_deref().filter(|s| !s.is_empty()) {
            (IMPORT_OBJECT_NAME_EXPORTAS, as_name)
        } else if let Some(as_name) = e.import_name.as_deref().filter(|n| !n.is_empty() && *n != e.name) {
            (IMPORT_OBJECT_NAME_EXPORTAS, as_name)
        } else {
            (IMPORT_OBJECT_NAME, "")
        };
        let mut symbols = vec![format!("__imp_{}", e.name)];
        if kind != IMPORT_OBJECT_DATA {
            symbols.push(e.name.clone());
        }
        members.push(Member { data: short_import(import_name, &e.name, e.ordinal, kind, name_type, export_name), symbols });
    }
    write_coff_archive(import_name, &members)
}

/// LLVM's `writeArchive(..., K_COFF, Deterministic = true)` for members that all carry the same
/// name (`lib.rs`).
fn write_coff_archive(member_name: &str, members: &[Member]) -> Vec<u8> {
    let members: Vec<super::lib::NewMember> = members
        .iter()
        .map(|m| super::lib::NewMember {
            name: member_name.to_string(),
            data: &m.data,
            symbols: Some(m.symbols.iter().map(|s| s.as_bytes().to_vec()).collect()),
        })
        .collect();
    super::lib::write(&members, super::lib::Options { format: super::lib::Format::Coff, thin: false, symtab: true })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use std::process::Command;

    fn short(sym: &str, dll: &str, ord: u16, kind: u16, name_type: u16, exp: &str) -> Vec<u8> {
        short_import(dll, sym, ord, kind, name_type, exp)
    }

    #[test]
    fn parse_name_types() {
        let m = short("bar", "x.dll", 0, IMPORT_OBJECT_CODE, IMPORT_OBJECT_NAME, "");
        assert!(is_short_import(&m));
        let s = parse_short_import(&m).unwrap();
        assert_eq!(
            s,
            ShortImport { dll: "x.dll".into(), symbol: "bar".into(), kind: ImportKind::Code, hint: 0, ordinal: None, import_name: Some("bar".into()) }
        );
        let s = parse_short_import(&short("_f@8", "k.dll", 3, IMPORT_OBJECT_DATA, IMPORT_OBJECT_NAME_NO_PREFIX, "")).unwrap();
        assert_eq!((s.kind, s.hint, s.import_name.as_deref()), (ImportKind::Data, 3, Some("f@8")));
        let s = parse_short_import(&short("?f@x@@Z", "k.dll", 0, IMPORT_OBJECT_CONST, IMPORT_OBJECT_NAME_UNDECORATE, "")).unwrap();
        assert_eq!((s.kind, s.import_name.as_deref()), (ImportKind::Const, Some("f")));
        let s = parse_short_import(&short("f", "k.dll", 0, IMPORT_OBJECT_CODE, IMPORT_OBJECT_NAME_EXPORTAS, "g")).unwrap();
        assert_eq!(s.import_name.as_deref(), Some("g"));
        let s = parse_short_import(&short("f", "k.dll", 7, IMPORT_OBJECT_CODE, IMPORT_OBJECT_ORDINAL, "")).unwrap();
        assert_eq!((s.ordinal, s.import_name), (Some(7), None));
    }

    #[test]
    fn parse_errors() {
        let good = short("bar", "x.dll", 0, IMPORT_OBJECT_CODE, IMPORT_OBJECT_NAME, "");
        assert_eq!(parse_short_import(&good[..10]).unwrap_err(), BROKEN);
        // SizeOfData larger than the data.
        let mut big = good.clone();
        big[12] += 1;
        assert_eq!(parse_short_import(&big).unwrap_err(), BROKEN);
        // Extra bytes after the strings are also rejected (lld: exact size).
        let mut extra = good.clone();
        extra.push(0);
        assert_eq!(parse_short_import(&extra).unwrap_err(), BROKEN);
        // Missing NUL after the DLL name.
        let mut nonul = good.clone();
        *nonul.last_mut().unwrap() = b'x';
        assert!(parse_short_import(&nonul).unwrap_err().contains("missing NUL after DLL name"));
        // Missing NUL after the symbol name: a single string.
        let mut one = good[..20].to_vec();
        one.extend_from_slice(b"barbaz");
        one[12..16].copy_from_slice(&6u32.to_le_bytes());
        assert!(parse_short_import(&one).unwrap_err().contains("missing NUL after symbol name"));
        // EXPORTAS without its third string.
        let mut ea = good.clone();
        ea[18..20].copy_from_slice(&(IMPORT_OBJECT_NAME_EXPORTAS << 2).to_le_bytes());
        assert!(parse_short_import(&ea).unwrap_err().contains("missing NUL after export name"));
        let mut bad_type = good.clone();
        bad_type[18..20].copy_from_slice(&((IMPORT_OBJECT_NAME << 2) | 3).to_le_bytes());
        assert_eq!(parse_short_import(&bad_type).unwrap_err(), "broken import library: unknown import type 3");
        let mut bad_nt = good.clone();
        bad_nt[18..20].copy_from_slice(&(5u16 << 2).to_le_bytes());
        assert_eq!(parse_short_import(&bad_nt).unwrap_err(), "broken import library: unknown import name type 5");
        let mut i386 = good.clone();
        i386[6..8].copy_from_slice(&IMAGE_FILE_MACHINE_I386.to_le_bytes());
        assert_eq!(parse_short_import(&i386).unwrap_err(), "machine type x86 conflicts with x64");
        let mut anon = good.clone();
        anon[4] = 1; // Version 1: anonymous object, not a short import.
        assert!(!is_short_import(&anon));
        assert_eq!(parse_short_import(&anon).unwrap_err(), "not a short import object");
        let mut empty = good[..20].to_vec();
        empty.extend_from_slice(b"\0x.dll\0");
        empty[12..16].copy_from_slice(&7u32.to_le_bytes());
        assert!(parse_short_import(&empty).unwrap_err().contains("empty symbol name"));
        assert!(!is_short_import(b"\x64\x86\x02\x00"));
    }

    #[test]
    fn long_dll_name_uses_string_table() {
        let lib = write_import_library("a-very-long-library-name.dll", &[ImplibExport { name: "f".into(), ..Default::default() }]);
        assert!(lib.windows(16).any(|w| w == b"//              "));
        // Every member header refers to offset 0 of the string table.
        assert!(lib.windows(16).filter(|w| *w == b"/0              ").count() == 4);
    }

    fn run(dir: &Path, args: &[&str]) -> std::process::Output {
        let out = Command::new(args[0]).args(&args[1..]).current_dir(dir).output().unwrap_or_else(|e| panic!("{} must be installed: {e}", args[0]));
        assert!(out.status.success(), "{args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
        out
    }

    /// Builds a DLL with clang-22/ld.lld-22 (`--out-implib`) and checks that
    /// `write_import_library` reproduces lld's import library byte for byte.
    /// Needs clang-22 and ld.lld-22 on PATH (always installed in CI).
    fn compare_with_lld(tag: &str, dll: &str, c_src: &str, def: Option<&str>, exports: &[ImplibExport], main_src: Option<&str>) {
        let dir = std::env::temp_dir().join(format!("dtld-implib-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("x.c"), c_src).unwrap();
        let implib = format!("lib{dll}.a");
        let mut args: Vec<String> = vec!["clang-22".into(), "--target=x86_64-w64-mingw32".into(), "-shared".into(), "-fuse-ld=lld".into(), "x.c".into()];
        if let Some(d) = def {
            std::fs::write(dir.join("x.def"), d).unwrap();
            args.push("x.def".into());
        }
        args.extend(["-o".into(), dll.to_string(), format!("-Wl,--out-implib,{implib}")]);
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        run(&dir, &argv);
        let lld = std::fs::read(dir.join(&implib)).unwrap();
        let ours = write_import_library(dll, exports);
        if ours != lld {
            std::fs::write(dir.join("ours.a"), &ours).unwrap();
            panic!("import library differs from lld's; see {}", dir.display());
        }
        if let Some(main_src) = main_src {
            // ld.lld-22 links a program against our library.
            std::fs::write(dir.join("ours.a"), &ours).unwrap();
            std::fs::write(dir.join("main.c"), main_src).unwrap();
            run(&dir, &["clang-22", "--target=x86_64-w64-mingw32", "-fuse-ld=lld", "main.c", "ours.a", "-o", "main.exe"]);
            let exe = std::fs::read(dir.join("main.exe")).unwrap();
            assert!(exe.windows(dll.len()).any(|w| w == dll.as_bytes()), "main.exe does not import {dll}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn matches_lld_dllexport() {
        let src = "__declspec(dllexport) int foo(int a) { return a + 1; }\n\
                   __declspec(dllexport) int bar(void) { return 42; }\n\
                   __declspec(dllexport) int var = 7;\n\
                   __declspec(dllexport) const char *zeta_str = \"hi\";\n\
                   int notexp(void) { return 0; }\n";
        let e = |name: &str, data: bool| ImplibExport { name: name.into(), data, ..Default::default() };
        let main = "__declspec(dllimport) int foo(int); int bar(void);\n\
                    __declspec(dllimport) int var; __declspec(dllimport) const char *zeta_str;\n\
                    int main(void) { return foo(1) + bar() + var + zeta_str[0] == 2 + 42 + 7 + 'h' ? 0 : 1; }\n";
        let exports = [e("bar", false), e("foo", false), e("var", true), e("zeta_str", true)];
        compare_with_lld("dllexport", "x.dll", src, None, &exports, Some(main));
    }

    #[test]
    fn matches_lld_def_features_and_long_name() {
        let src = "int alpha(void){return 1;} int beta(void){return 2;} int gamma_(void){return 3;}\n\
                   int delta(void){return 4;} int dv = 5; int cv = 6; int zed(void){return 7;}\n\
                   int inner(void){return 8;}\n";
        let def = "EXPORTS\n  zed\n  alpha @10\n  beta @3 NONAME\n  gamma_\n  delta PRIVATE\n  dv DATA\n  \
                   cv CONSTANT\n  outer = inner\n  fwd = kernel32.Sleep\n  ren EXPORTAS renamed_in_dll\n";
        // What lld hands to writeImportLibrary: exports sorted by export name,
        // explicit ordinals only.
        let exports = [
            ImplibExport { name: "alpha".into(), ordinal: 10, ..Default::default() },
            ImplibExport { name: "beta".into(), ordinal: 3, noname: true, ..Default::default() },
            ImplibExport { name: "cv".into(), constant: true, ..Default::default() },
            ImplibExport { name: "delta".into(), private: true, ..Default::default() },
            ImplibExport { name: "dv".into(), data: true, ..Default::default() },
            ImplibExport { name: "fwd".into(), ..Default::default() },
            ImplibExport { name: "gamma_".into(), ..Default::default() },
            ImplibExport { name: "outer".into(), ..Default::default() },
            ImplibExport { name: "ren".into(), export_as: Some("renamed_in_dll".into()), ..Default::default() },
            ImplibExport { name: "zed".into(), ..Default::default() },
        ];
        let src = format!("{src}int ren(void){{return 9;}}\n");
        compare_with_lld("def", "a-long-library-name.dll", &src, Some(def), &exports, None);
    }

    /// Round trip: every short import we write parses back.
    #[test]
    fn written_members_parse() {
        let lib = write_import_library(
            "k.dll",
            &[
                ImplibExport { name: "f".into(), ordinal: 4, ..Default::default() },
                ImplibExport { name: "d".into(), data: true, ..Default::default() },
                ImplibExport { name: "n".into(), ordinal: 9, noname: true, ..Default::default() },
            ],
        );
        let ar = object::read::archive::ArchiveFile::parse(&*lib).unwrap();
        let mut got = Vec::new();
        for m in ar.members() {
            let m = m.unwrap();
            assert_eq!(m.name(), b"k.dll");
            let data = m.data(&*lib).unwrap();
            if is_short_import(data) {
                let s = parse_short_import(data).unwrap();
                got.push((s.symbol, s.kind, s.ordinal, s.import_name, s.hint));
            }
        }
        assert_eq!(
            got,
            [
                ("f".to_string(), ImportKind::Code, None, Some("f".to_string()), 4),
                ("d".to_string(), ImportKind::Data, None, Some("d".to_string()), 0),
                ("n".to_string(), ImportKind::Code, Some(9), None, 9),
            ]
        );
    }
}
