//! ELF relocatable objects, read lazily and without copying.
//!
//! An `ObjFile` is a view over the mapped file: section headers, the symbol table and relocation
//! arrays are borrowed straight from the mapping (`object`'s low-level, zero-copy readers), and
//! nothing is decoded that the link does not need. Parsing validates every offset the later stages
//! rely on, so corrupt inputs fail here with a message naming the file, never later with a panic;
//! only relocation offsets are checked where a field is read or written, as lld checks them.

use object::elf;
use object::read::elf::{FileHeader, SectionHeader, Sym as _};

use crate::bail;
use crate::elf::types::{Ehdr, Rela, Shdr, Sym, LE};
use crate::error::{Error, Result};
use crate::input::InputFile;

/// How the linker treats an input section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecKind {
    /// Not part of the output (null, symtab, strtab, rela, group, .note.GNU-stack, discarded
    /// COMDAT members, ...).
    Ignored,
    /// Copied to the output and relocated.
    Regular,
    /// `.eh_frame`: split into CIE/FDE records; FDEs of dead functions are dropped.
    EhFrame,
    /// SHF_MERGE: split into pieces and deduplicated with other sections of the same output
    /// section.
    Merge,
}

#[derive(Debug, Clone)]
pub struct InputSection {
    pub name: &'static [u8],
    pub hdr: &'static Shdr,
    pub kind: SecKind,
    /// Contents (empty for NOBITS).
    pub data: &'static [u8],
    pub relocs: &'static [Rela],
    pub flags: u64,
    pub sh_type: u32,
    pub align: u64,
    pub size: u64,
    /// Member of a COMDAT group (index of the SHT_GROUP section), for discarding.
    pub group: Option<u32>,
}

/// How objects are read for this link.
#[derive(Debug, Clone, Copy)]
pub struct ParseOpts {
    /// SHF_MERGE sections are split into pieces and deduplicated (lld does so at `-O1` and
    /// above and with -r; `-O0` copies them whole).
    pub merge: bool,
    /// `-r`: sections the final link consumes (`.deplibs`) are kept as regular ones.
    pub relocatable: bool,
    /// `-z execstack`: an executable `.note.GNU-stack` is then no error.
    pub execstack: bool,
}

pub struct ObjFile {
    pub input: &'static InputFile,
    pub sections: Vec<InputSection>,
    pub symbols: &'static [Sym],
    /// SHT_SYMTAB_SHNDX: the section index of each symbol whose `st_shndx` is SHN_XINDEX
    /// (objects with 65,280 sections or more); empty when the object has none.
    pub xindex: &'static [object::U32<LE>],
    pub strtab: &'static [u8],
    pub first_global: usize,
    /// COMDAT groups: (SHT_GROUP section index, signature, member section indices).
    pub groups: Vec<(u32, &'static [u8], Vec<u32>)>,
    /// Groups without GRP_COMDAT: member section indices (for liveness only).
    pub plain_groups: Vec<Vec<u32>>,
    /// The DWARF line tables and variables, read the first time a diagnostic asks (`dwarf()`).
    pub dwarf: std::sync::OnceLock<crate::dwarf::Dwarf>,
}

fn corrupt(msg: impl std::fmt::Display) -> Error {
    Error::new(msg.to_string())
}

pub fn c_str(tab: &'static [u8], off: u32) -> Result<&'static [u8]> {
    let off = off as usize;
    if off >= tab.len() && !(off == 0 && tab.is_empty()) {
        bail!("invalid string offset {off}");
    }
    if tab.is_empty() {
        return Ok(b"");
    }
    let rest = &tab[off..];
    // Called for every symbol name the link reads (resolution, .symtab): memchr scans a word
    // at a time.
    match memchr::memchr(0, rest) {
        Some(n) => Ok(&rest[..n]),
        None => bail!("string table is not null-terminated"),
    }
}

/// How much one object may inflate to, in all its compressed sections together: 64 times the
/// object's size, and at least 64 MiB. Real debug sections compress 3 to 10 times; a file
/// beyond this is a decompression bomb, refused before a byte is inflated, so the memory a
/// link can be made to use stays proportional to its inputs (docs/reliability.md).
pub(crate) fn inflate_budget(file_size: usize) -> u64 {
    (file_size as u64).saturating_mul(64).max(64 << 20)
}

type Rel = object::elf::Rel64<crate::elf::types::LE>;

/// REL entries of `target` as RELA: each addend is the value the relocated field holds.
fn rel_to_rela(rels: &[Rel], target: &InputSection) -> Result<&'static [Rela]> {
    let mut out = Vec::with_capacity(rels.len());
    for r in rels {
        let off = r.r_offset.get(LE);
        let info = r.r_info.get(LE);
        let r_type = (info & 0xffff_ffff) as u32;
        // A field past the section's end has no addend to read: the relocation scan refuses
        // it in a final link, and `-r` copies it as it is (as lld does).
        let addend = if target.sh_type == elf::SHT_NOBITS {
            0
        } else {
            let loc = usize::try_from(off).ok().and_then(|o| target.data.get(o..)).unwrap_or(&[]);
            dtld_arch::x86_64::implicit_addend(r_type, loc).unwrap_or(0)
        };
        out.push(Rela { r_offset: r.r_offset, r_info: r.r_info, r_addend: object::I64::new(LE, addend) });
    }
    Ok(crate::util::keep::slice(out))
}

/// `SHT_CREL`: LLVM's compact relocations (`clang -Wa,--crel,--allow-experimental-crel`).
pub(crate) const SHT_CREL: u32 = 0x4000_0014;

/// CREL entries of `target` as RELA (LLVM's `decodeCrel`): a ULEB128 header `count << 3 |
/// has-addend << 2 | shift`, then per entry a first byte holding flags (symbol, type and addend
/// deltas follow) and the low bits of the offset delta, the rest of that delta in ULEB128, and
/// SLEB128 deltas of the symbol index, type and addend. Without explicit addends (REL-style),
/// each addend is what the relocated field holds.
fn crel_to_rela(raw: &[u8], target: &InputSection) -> Result<&'static [Rela]> {
    let bad = || corrupt("invalid CREL relocation section");
    let mut pos = 0usize;
    let uleb = |pos: &mut usize| -> Result<u64> {
        let (mut v, mut shift) = (0u64, 0u32);
        loop {
            let b = *raw.get(*pos).ok_or_else(bad)?;
            *pos += 1;
            if shift < 64 {
                v |= u64::from(b & 0x7f) << shift;
            }
            shift += 7;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
    };
    let sleb = |pos: &mut usize| -> Result<i64> {
        let (mut v, mut shift) = (0i64, 0u32);
        loop {
            let b = *raw.get(*pos).ok_or_else(bad)?;
            *pos += 1;
            if shift < 64 {
                v |= i64::from(b & 0x7f) << shift;
            }
            shift += 7;
            if b & 0x80 == 0 {
                if shift < 64 && b & 0x40 != 0 {
                    v |= -1i64 << shift;
                }
                return Ok(v);
            }
        }
    };
    let hdr = uleb(&mut pos)?;
    let count = usize::try_from(hdr / 8).map_err(|_| bad())?;
    let explicit = hdr & 4 != 0;
    let flag_bits = if explicit { 3 } else { 2 };
    let shift = hdr % 4;
    // Every entry takes a byte at least.
    if count > raw.len() {
        return Err(bad());
    }
    let (mut offset, mut sym, mut ty, mut addend) = (0u64, 0u64, 0u64, 0u64);
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        let b = *raw.get(pos).ok_or_else(bad)?;
        pos += 1;
        offset = offset.wrapping_add(u64::from(b) >> flag_bits);
        if b >= 0x80 {
            offset = offset.wrapping_add(uleb(&mut pos)?.wrapping_shl(7 - flag_bits)).wrapping_sub(0x80 >> flag_bits);
        }
        if b & 1 != 0 {
            sym = sym.wrapping_add(sleb(&mut pos)? as u64);
        }
        if b & 2 != 0 {
            ty = ty.wrapping_add(sleb(&mut pos)? as u64);
        }
        if b & 4 != 0 && explicit {
            addend = addend.wrapping_add(sleb(&mut pos)? as u64);
        }
        let (sym, r_type) = (u32::try_from(sym).map_err(|_| bad())?, u32::try_from(ty).map_err(|_| bad())?);
        let off = offset.wrapping_shl(shift as u32);
        let a = if explicit {
            addend as i64
        } else if target.sh_type == elf::SHT_NOBITS {
            0
        } else {
            let loc = usize::try_from(off).ok().and_then(|o| target.data.get(o..)).unwrap_or(&[]);
            dtld_arch::x86_64::implicit_addend(r_type, loc).unwrap_or(0)
        };
        out.push(Rela {
            r_offset: object::U64::new(LE, off),
            r_info: object::U64::new(LE, (u64::from(sym) << 32) | u64::from(r_type)),
            r_addend: object::I64::new(LE, a),
        });
    }
    if pos != raw.len() {
        return Err(bad());
    }
    Ok(crate::util::keep::slice(out))
}

fn slice_at(data: &'static [u8], off: u64, size: u64) -> Option<&'static [u8]> {
    let end = off.checked_add(size)?;
    if end > data.len() as u64 {
        return None;
    }
    Some(&data[off as usize..end as usize])
}

impl ObjFile {
    pub fn name(&self) -> &str {
        &self.input.name
    }

    /// Source locations from this object's debug information (read on first use).
    pub fn dwarf(&self) -> &crate::dwarf::Dwarf {
        self.dwarf.get_or_init(|| read_dwarf(self))
    }

    pub fn parse(input: &'static InputFile, opts: ParseOpts) -> Result<ObjFile> {
        let o = Self::parse_inner(input, opts).map_err(|e| e.context(&input.name))?;
        let errors = o.link_order_errors();
        if !errors.is_empty() {
            return Err(Error::many(errors));
        }
        Ok(o)
    }

    /// lld's checks of SHF_LINK_ORDER sections: `sh_link` names a section of the file, and
    /// one that is not split into pieces (mergeable or `.eh_frame`).
    fn link_order_errors(&self) -> Vec<String> {
        let mut errors = Vec::new();
        for sec in &self.sections {
            if sec.flags & u64::from(elf::SHF_LINK_ORDER) == 0 || sec.kind == SecKind::Ignored {
                continue;
            }
            let link = object::read::elf::SectionHeader::sh_link(sec.hdr, LE);
            match self.sections.get(link as usize) {
                None => errors.push(format!("{}: invalid sh_link index: {link}", self.input.name)),
                Some(to) if matches!(to.kind, SecKind::Merge | SecKind::EhFrame) => errors.push(format!(
                    "a section {} with SHF_LINK_ORDER should not refer a non-regular section: {}:({})",
                    String::from_utf8_lossy(sec.name),
                    self.input.name,
                    String::from_utf8_lossy(to.name)
                )),
                Some(_) => {}
            }
        }
        errors
    }

    /// The passes over one object: its section headers, its symbol table, each section (with
    /// its group), the relocation sections attached to their targets, then the symbols checked.
    fn parse_inner(input: &'static InputFile, opts: ParseOpts) -> Result<ObjFile> {
        let data = input.data;
        let (shdrs, shstrtab) = section_headers(input)?;
        let shnum = shdrs.len();
        let SymbolTable { symbols, xindex, strtab, first_global } = symbol_table(data, shdrs)?;

        let mut sections = Vec::with_capacity(shnum);
        let mut groups = Vec::new();
        let mut plain_groups = Vec::new();
        let mut inflate = inflate_budget(data.len());
        for (i, h) in shdrs.iter().enumerate() {
            let sec = read_section(input, opts, i, h, shstrtab, &mut inflate)?;
            if sec.sh_type == elf::SHT_GROUP {
                let (flag, sig, members) = read_group(h, sec.data, (symbols, xindex), strtab, shdrs, shstrtab)?;
                if flag & elf::GRP_COMDAT != 0 {
                    groups.push((i as u32, sig, members));
                } else {
                    // A plain group (LLVM puts each function's profile counters and data in
                    // one): no deduplication, but its members live and die together.
                    plain_groups.push(members);
                }
            }
            sections.push(sec);
        }
        for (gi, _, members) in &groups {
            for &m in members {
                sections[m as usize].group = Some(*gi);
            }
        }
        attach_relocs(data, shdrs, symbols, &mut sections)?;
        check_symbols(symbols, xindex, strtab, shnum)?;
        Ok(ObjFile { input, sections, symbols, xindex, strtab, first_global, groups, plain_groups, dwarf: Default::default() })
    }

    /// The section symbol `i` is defined in; None when it is undefined, absolute or common.
    /// Reads the extended index (SHT_SYMTAB_SHNDX) where `st_shndx` is SHN_XINDEX: every use
    /// of a symbol's section as an index goes through here (or `shndx`), never `st_shndx`.
    pub fn sym_section(&self, i: usize) -> Option<u32> {
        sym_section_in(self.symbols, self.xindex, i)
    }

    /// Symbol `i`'s section index with SHN_XINDEX resolved, for comparing two symbols'
    /// sections or indexing `sections` (`usize::MAX`-like values never index a section):
    /// undefined is 0, a reserved index (SHN_ABS, SHN_COMMON, ...) is `0xffff_0000 | st_shndx`
    /// so that it cannot be mistaken for a section numbered 0xff00 or above. Tests for
    /// SHN_ABS or SHN_COMMON read the raw `st_shndx`.
    pub fn shndx(&self, i: usize) -> u32 {
        let Some(s) = self.symbols.get(i) else { return 0 };
        match s.st_shndx(LE) {
            elf::SHN_XINDEX => self.xindex.get(i).map_or(0, |x| x.get(LE)),
            raw if raw >= elf::SHN_LORESERVE => 0xffff_0000 | u32::from(raw),
            raw => u32::from(raw),
        }
    }

    pub fn sym_name(&self, i: usize) -> &'static [u8] {
        c_str(self.strtab, self.symbols[i].st_name(LE)).unwrap_or(b"")
    }
}

/// The section header table and the section name table: an x86-64 object whose headers
/// lie inside the file (lld's wording for a truncated one), else an error.
fn section_headers(input: &'static InputFile) -> Result<(&'static [Shdr], &'static [u8])> {
    let data = input.data;
    let ehdr = Ehdr::parse(data).map_err(|_| corrupt("invalid ELF header"))?;
    if ehdr.e_machine(LE) != elf::EM_X86_64 {
        bail!("{} is incompatible with elf_x86_64", input.name);
    }
    let shoff = ehdr.e_shoff(LE);
    let shentsize = ehdr.e_shentsize(LE);
    if shoff != 0 && shentsize as usize != std::mem::size_of::<Shdr>() {
        bail!("invalid sh_entsize");
    }
    // lld's wording for the commonest corruption, a truncated file.
    let shnum_raw = ehdr.e_shnum(LE) as u64;
    if shoff != 0 && shoff.checked_add(shnum_raw.max(1) * 64).is_none_or(|end| end > data.len() as u64) {
        bail!("section header table goes past the end of the file: e_shoff = 0x{shoff:x}");
    }
    let shdrs = ehdr.section_headers(LE, data).map_err(|e| corrupt(format!("{e}")))?;
    let shnum = shdrs.len();
    let shstrndx = ehdr.shstrndx(LE, data).map_err(|e| corrupt(e.to_string()))? as usize;
    let shstrtab: &'static [u8] = if shnum == 0 {
        &[]
    } else {
        let h = shdrs.get(shstrndx).ok_or_else(|| corrupt("invalid e_shstrndx"))?;
        slice_at(data, h.sh_offset(LE), h.sh_size(LE)).ok_or_else(|| corrupt("section header string table is out of bounds"))?
    };
    Ok((shdrs, shstrtab))
}

/// The section symbol `i` of `symbols` is defined in (None: undefined, absolute, common), its
/// extended index read from `xindex` (SHT_SYMTAB_SHNDX) when `st_shndx` is SHN_XINDEX.
fn sym_section_in(symbols: &[Sym], xindex: &[object::U32<LE>], i: usize) -> Option<u32> {
    match symbols.get(i)?.st_shndx(LE) {
        elf::SHN_UNDEF => None,
        elf::SHN_XINDEX => xindex.get(i).map(|x| x.get(LE)).filter(|&x| x != 0),
        raw if raw >= elf::SHN_LORESERVE => None,
        raw => Some(u32::from(raw)),
    }
}

/// An object's symbols, borrowed from the mapping.
struct SymbolTable {
    symbols: &'static [Sym],
    xindex: &'static [object::U32<LE>],
    strtab: &'static [u8],
    first_global: usize,
}

/// The one SHT_SYMTAB (none: no symbols), its string table and first global, each checked
/// against the file and the ELF rules.
fn symbol_table(data: &'static [u8], shdrs: &'static [Shdr]) -> Result<SymbolTable> {
    let mut symbols: &'static [Sym] = &[];
    let mut strtab: &'static [u8] = &[];
    let mut first_global = 0usize;
    let mut symtab_index = None;
    for (i, h) in shdrs.iter().enumerate() {
        if h.sh_type(LE) == elf::SHT_SYMTAB {
            if symtab_index.is_some() {
                bail!("multiple SHT_SYMTAB sections");
            }
            symtab_index = Some(i);
            if h.sh_entsize(LE) != std::mem::size_of::<Sym>() as u64 {
                bail!("invalid sh_entsize");
            }
            let raw = slice_at(data, h.sh_offset(LE), h.sh_size(LE)).ok_or_else(|| corrupt("symbol table is out of bounds"))?;
            symbols = object::pod::slice_from_all_bytes::<Sym>(raw).map_err(|_| corrupt("invalid symbol table"))?;
            let link = h.sh_link(LE) as usize;
            let sh = shdrs.get(link).ok_or_else(|| corrupt("invalid sh_link"))?;
            if sh.sh_type(LE) != elf::SHT_STRTAB {
                bail!("invalid sh_link");
            }
            strtab = slice_at(data, sh.sh_offset(LE), sh.sh_size(LE)).ok_or_else(|| corrupt("string table is out of bounds"))?;
            first_global = h.sh_info(LE) as usize;
            if first_global > symbols.len() || (first_global == 0 && !symbols.is_empty()) {
                bail!("invalid sh_info in symbol table");
            }
        }
    }
    // The extended section indices of that symbol table (sh_link names it), one word per
    // symbol, as lld reads them.
    let mut xindex: &'static [object::U32<LE>] = &[];
    if let Some(st) = symtab_index {
        for h in shdrs.iter().filter(|h| h.sh_type(LE) == elf::SHT_SYMTAB_SHNDX && h.sh_link(LE) as usize == st) {
            let raw = slice_at(data, h.sh_offset(LE), h.sh_size(LE)).ok_or_else(|| corrupt("SHT_SYMTAB_SHNDX section is out of bounds"))?;
            xindex = object::pod::slice_from_all_bytes(raw).map_err(|_| corrupt("invalid SHT_SYMTAB_SHNDX section"))?;
        }
    }
    Ok(SymbolTable { symbols, xindex, strtab, first_global })
}

/// Section `i` (header `h`) as the link sees it: its name, contents (inflated when
/// SHF_COMPRESSED, charged to `inflate`), alignment and `SecKind`; no relocations or group
/// yet.
fn read_section(input: &'static InputFile, opts: ParseOpts, i: usize, h: &'static Shdr, shstrtab: &'static [u8], inflate: &mut u64) -> Result<InputSection> {
    let name = c_str(shstrtab, h.sh_name(LE))?;
    let sh_type = h.sh_type(LE);
    let flags = h.sh_flags(LE);
    let size = h.sh_size(LE);
    let data_slice: &'static [u8] = if sh_type == elf::SHT_NOBITS || i == 0 {
        &[]
    } else {
        slice_at(input.data, h.sh_offset(LE), size).ok_or_else(|| corrupt(format!("section {} is out of bounds", String::from_utf8_lossy(name))))?
    };
    let mut align = h.sh_addralign(LE).max(1);
    let (mut data_slice, mut size, mut flags) = (data_slice, size, flags);
    if flags & elf::SHF_COMPRESSED as u64 != 0 && sh_type != elf::SHT_NOBITS {
        // Compressed debug sections (`-gz`): relocations address the uncompressed bytes.
        let (d, al) = crate::elf::compress::decompress(name, data_slice, inflate)?;
        size = d.len() as u64;
        data_slice = d;
        align = al.max(1);
        flags &= !(elf::SHF_COMPRESSED as u64);
    }
    if !align.is_power_of_two() {
        bail!(":({}): sh_addralign is not a power of 2", String::from_utf8_lossy(name));
    }
    let kind = if i == 0 { SecKind::Ignored } else { section_kind(input, opts, h, name, sh_type, flags, size)? };
    Ok(InputSection { name, hdr: h, kind, data: data_slice, relocs: &[], flags, sh_type, align, size, group: None })
}

/// How the link treats section `name` (after decompression: `flags`, `size`): ignored,
/// regular, `.eh_frame`, or split and merged (`merge`); a SHF_MERGE section that cannot be
/// split is an error.
fn section_kind(input: &InputFile, opts: ParseOpts, h: &Shdr, name: &[u8], sh_type: u32, flags: u64, size: u64) -> Result<SecKind> {
    Ok(match sh_type {
        elf::SHT_NULL | elf::SHT_SYMTAB | elf::SHT_STRTAB | elf::SHT_RELA | elf::SHT_REL | SHT_CREL | elf::SHT_GROUP | elf::SHT_SYMTAB_SHNDX | 0x6fff_4c03 => {
            SecKind::Ignored
        }
        _ if flags & elf::SHF_EXCLUDE as u64 != 0 => SecKind::Ignored,
        // SHT_LLVM_DEPENDENT_LIBRARIES: NUL-terminated library names (`deplibs`), output only
        // by -r (merged, as lld does).
        0x6fff_4c04 if !opts.relocatable => {
            if h.sh_size(LE) > 0 && input.data.get(h.sh_offset(LE) as usize + h.sh_size(LE) as usize - 1) != Some(&0) {
                bail!("{}: corrupted dependent libraries section (unterminated string): {}", input.name, String::from_utf8_lossy(name));
            }
            SecKind::Ignored
        }
        // lld asks for an executable stack to be said on the command line.
        _ if name == b".note.GNU-stack" => {
            if flags & elf::SHF_EXECINSTR as u64 != 0 && !opts.relocatable && !opts.execstack {
                bail!("{}: requires an executable stack, but -z execstack is not specified", input.name);
            }
            SecKind::Ignored
        }
        // -fsplit-stack objects: -r cannot say which functions were compiled so (lld).
        _ if name == b".note.GNU-split-stack" && opts.relocatable => {
            bail!("{}cannot mix split-stack and non-split-stack in a relocatable link", crate::error::NO_CONTEXT)
        }
        // lld's section types: the generic ones it knows, any processor-specific one, OS and
        // user ones unless marked otherwise; an unknown generic type is refused.
        t if !known_section_type(t, flags) => bail!("{}:({}): unknown section type 0x{t:x}", input.name, String::from_utf8_lossy(name)),
        _ if name == b".note.gnu.property" => SecKind::Ignored,
        _ if name == b".eh_frame" && sh_type == elf::SHT_PROGBITS || sh_type == elf::SHT_X86_64_UNWIND => SecKind::EhFrame,
        // lld's shouldMerge: non-alloc sections too (`.debug_str`), not empty ones,
        // not without an entry size.
        _ if opts.merge && flags & elf::SHF_MERGE as u64 != 0 && size > 0 && h.sh_entsize(LE) > 0 => {
            if !size.is_multiple_of(h.sh_entsize(LE)) {
                bail!(
                    "{}:({}): SHF_MERGE section size ({size}) must be a multiple of sh_entsize ({})",
                    input.name,
                    String::from_utf8_lossy(name),
                    h.sh_entsize(LE)
                );
            }
            if flags & elf::SHF_WRITE as u64 != 0 {
                bail!("{}:({}): writable SHF_MERGE section is not supported", input.name, String::from_utf8_lossy(name));
            }
            SecKind::Merge
        }
        _ if name.starts_with(b".gnu.lto_") || name == b".llvm_addrsig" => SecKind::Ignored,
        _ => SecKind::Regular,
    })
}

/// lld's section types: the generic ones it reads, and its `isKnownSpecificSectionType`.
fn known_section_type(t: u32, flags: u64) -> bool {
    const GENERIC: &[u32] = &[
        elf::SHT_PROGBITS,
        elf::SHT_NOTE,
        elf::SHT_NOBITS,
        elf::SHT_INIT_ARRAY,
        elf::SHT_FINI_ARRAY,
        elf::SHT_PREINIT_ARRAY,
        elf::SHT_NULL,
        elf::SHT_SYMTAB,
        elf::SHT_STRTAB,
        elf::SHT_REL,
        elf::SHT_RELA,
        elf::SHT_GROUP,
        elf::SHT_SYMTAB_SHNDX,
    ];
    if GENERIC.contains(&t) {
        return true;
    }
    if (elf::SHT_LOUSER..=elf::SHT_HIUSER).contains(&t) && flags & elf::SHF_ALLOC as u64 == 0 {
        return true;
    }
    if (elf::SHT_LOOS..=elf::SHT_HIOS).contains(&t) && flags & elf::SHF_OS_NONCONFORMING as u64 == 0 {
        return true;
    }
    (elf::SHT_LOPROC..=elf::SHT_HIPROC).contains(&t)
}

/// A SHT_GROUP section (header `h`, contents `words`): its flag word, its signature (the
/// signature symbol's name, or its section's name for an unnamed section symbol) and its
/// member section indices, each checked.
fn read_group(
    h: &Shdr,
    words: &'static [u8],
    (symbols, xindex): (&'static [Sym], &[object::U32<LE>]),
    strtab: &'static [u8],
    shdrs: &[Shdr],
    shstrtab: &'static [u8],
) -> Result<(u32, &'static [u8], Vec<u32>)> {
    if words.len() < 4 {
        bail!("empty SHT_GROUP");
    }
    if !words.len().is_multiple_of(4) {
        bail!("invalid SHT_GROUP section");
    }
    let flag = u32::from_le_bytes(words[..4].try_into().unwrap());
    // GRP_COMDAT or no flag (a plain group) are the only formats lld knows; any other flag word
    // is a group whose meaning the link would guess.
    if flag != 0 && flag != elf::GRP_COMDAT {
        bail!("unsupported SHT_GROUP format");
    }
    let sig_sym = h.sh_info(LE) as usize;
    let sym = symbols.get(sig_sym).ok_or_else(|| corrupt("invalid symbol index in SHT_GROUP"))?;
    let sig = c_str(strtab, sym.st_name(LE))?;
    let sig = if sig.is_empty() && sym.st_type() == elf::STT_SECTION {
        // Signature is the name of the section the symbol refers to.
        let sidx = sym_section_in(symbols, xindex, sig_sym).map_or(usize::MAX, |x| x as usize);
        let sh = shdrs.get(sidx).ok_or_else(|| corrupt("invalid section index"))?;
        c_str(shstrtab, sh.sh_name(LE))?
    } else {
        sig
    };
    let members: Vec<u32> = words[4..].chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    for &m in &members {
        if m as usize >= shdrs.len() || m == 0 {
            bail!("invalid section index in group: {m}");
        }
    }
    Ok((flag, sig, members))
}

/// Attaches relocation sections to their targets, each relocation's symbol checked. RELA is
/// borrowed from the mapping; REL (LLVM writes it for `.llvm.call-graph-profile`, and other
/// producers may use it on x86-64 too) is converted once into RELA with the addends read from
/// the relocated bytes, and so is CREL (`crel_to_rela`), so every later stage sees one format.
fn attach_relocs(data: &'static [u8], shdrs: &'static [Shdr], symbols: &[Sym], sections: &mut [InputSection]) -> Result<()> {
    let shnum = shdrs.len();
    for h in shdrs.iter() {
        let is_rel = h.sh_type(LE) == elf::SHT_REL;
        let is_crel = h.sh_type(LE) == SHT_CREL;
        if h.sh_type(LE) != elf::SHT_RELA && !is_rel && !is_crel {
            continue;
        }
        let target = h.sh_info(LE) as usize;
        if target == 0 || target >= shnum {
            bail!("invalid relocated section index {target}");
        }
        let entsize = if is_rel { std::mem::size_of::<Rel>() } else { std::mem::size_of::<Rela>() };
        if !is_crel && h.sh_entsize(LE) != entsize as u64 {
            bail!("invalid sh_entsize");
        }
        let raw = slice_at(data, h.sh_offset(LE), h.sh_size(LE)).ok_or_else(|| corrupt("relocation section is out of bounds"))?;
        let relocs: &'static [Rela] = if is_crel {
            crel_to_rela(raw, &sections[target])?
        } else if is_rel {
            let rels = object::pod::slice_from_all_bytes::<Rel>(raw).map_err(|_| corrupt("invalid relocation section"))?;
            rel_to_rela(rels, &sections[target])?
        } else {
            object::pod::slice_from_all_bytes::<Rela>(raw).map_err(|_| corrupt("invalid relocation section"))?
        };
        // Offsets are checked where a field is read or written (the relocation scan, the
        // writer): lld accepts relocations of empty sections in `-r` links, and reports an
        // unknown relocation type before anything about its place.
        for r in relocs {
            let sym = r.r_sym(LE, false) as usize;
            if sym >= symbols.len().max(1) {
                bail!("invalid symbol index {sym} in relocation");
            }
        }
        sections[target].relocs = relocs;
    }
    Ok(())
}

/// Validates the symbols once (names, section indices) so later stages can index freely.
fn check_symbols(symbols: &[Sym], xindex: &[object::U32<LE>], strtab: &'static [u8], shnum: usize) -> Result<()> {
    for (i, s) in symbols.iter().enumerate() {
        c_str(strtab, s.st_name(LE))?;
        if i == 0 {
            continue;
        }
        let shndx = match s.st_shndx(LE) {
            // lld's (LLVM's) words for a missing table and a short one.
            elf::SHN_XINDEX => match xindex.get(i) {
                Some(x) => x.get(LE),
                None if xindex.is_empty() => bail!("found an extended symbol index ({i}), but unable to locate the extended symbol index table"),
                None => bail!("extended symbol index ({i}) is past the end of the SHT_SYMTAB_SHNDX section of size {}", xindex.len() * 4),
            },
            raw if raw >= elf::SHN_LORESERVE => continue,
            raw => u32::from(raw),
        };
        if shndx != 0 && shndx as usize >= shnum {
            bail!("invalid section index {shndx} for symbol {i}");
        }
    }
    Ok(())
}

/// The x86 feature property of `.note.gnu.property` (`GNU_PROPERTY_X86_FEATURE_1_AND`).
pub(crate) const GNU_PROPERTY_X86_FEATURE_1_AND: u32 = 0xc000_0002;

/// The AND-able x86 feature bits of an object's `.note.gnu.property` (0 when it has none).
pub(crate) fn x86_features(o: &ObjFile) -> u32 {
    let mut found = None;
    for s in &o.sections {
        if s.name != b".note.gnu.property" || s.sh_type != elf::SHT_NOTE {
            continue;
        }
        let d = s.data;
        let mut p = 0usize;
        let rd = |o: usize| d.get(o..o + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        while p + 12 <= d.len() {
            let (Some(namesz), Some(descsz), Some(ty)) = (rd(p), rd(p + 4), rd(p + 8)) else { break };
            let name_end = p + 12 + namesz as usize;
            let desc = (name_end + 7) & !7;
            let end = desc.saturating_add(descsz as usize);
            if end > d.len() || name_end > d.len() {
                break;
            }
            if ty == elf::NT_GNU_PROPERTY_TYPE_0 && &d[p + 12..name_end] == b"GNU\0" {
                let mut q = desc;
                while q + 8 <= end {
                    let (Some(pt), Some(sz)) = (rd(q), rd(q + 4)) else { break };
                    if pt == GNU_PROPERTY_X86_FEATURE_1_AND && sz >= 4 {
                        // Several FEATURE_1_AND properties of one object add up (lld).
                        found = Some(found.unwrap_or(0) | rd(q + 8).unwrap_or(0));
                    }
                    q = (q + 8 + sz as usize + 7) & !7;
                }
            }
            p = (end + 7) & !7;
        }
    }
    found.unwrap_or(0)
}

// ------------------------------------------------------------------------------------------------
// Debug information for diagnostics: the object's debug sections relocated for `crate::dwarf`
// (lld's `DWARFCache` over an ELF object): the reader is format-neutral, only the relocations
// are ELF's.
// ------------------------------------------------------------------------------------------------

/// Reads `o`'s debug information; an object without (or with unreadable) DWARF gives an empty
/// one, as lld then falls back to the STT_FILE name.
fn read_dwarf(o: &ObjFile) -> crate::dwarf::Dwarf {
    if !o.sections.iter().any(|s| s.name == b".debug_info") {
        return crate::dwarf::Dwarf::default();
    }
    crate::dwarf::Dwarf::from_sections(|name| relocated(o, name.as_bytes()))
}

/// A copy of debug section `name` of `o` with its relocations applied: absolute references to
/// other debug sections resolve to offsets, 64-bit references into allocated sections to the
/// offset tagged with the section's index (plus one, so that 0 means "absolute").
fn relocated(o: &ObjFile, name: &[u8]) -> Option<Vec<u8>> {
    use object::read::elf::Rela as _;
    let sec = o.sections.iter().find(|s| s.name == name)?;
    let mut data = sec.data.to_vec();
    for rel in sec.relocs {
        let r_type = rel.r_type(LE, false);
        let size = match r_type {
            elf::R_X86_64_64 => 8,
            elf::R_X86_64_32 | elf::R_X86_64_32S => 4,
            _ => continue,
        };
        let off = rel.r_offset(LE) as usize;
        let Some(field) = data.get_mut(off..off + size) else { continue };
        let si = rel.r_sym(LE, false) as usize;
        let Some(sym) = o.symbols.get(si) else { continue };
        let mut v = sym.st_value(LE).wrapping_add(rel.r_addend(LE) as u64);
        if let Some(shndx) = o.sym_section(si) {
            let alloc = o.sections.get(shndx as usize).is_some_and(|s| s.flags & u64::from(elf::SHF_ALLOC) != 0);
            if size == 8 && alloc {
                v = crate::dwarf::tag(v, shndx);
            }
        }
        field.copy_from_slice(&v.to_le_bytes()[..size]);
    }
    Some(data)
}
