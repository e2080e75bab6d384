//! ELF shared libraries as link inputs.
//!
//! From a DSO the linker needs only its dynamic symbol table (with symbol versions, so references
//! bind to `memcpy@@GLIBC_2.14` and not to a hidden older version), its SONAME for DT_NEEDED, and
//! its undefined symbols (an executable must export the symbols its libraries call back into).

use object::elf;
use object::read::elf::{FileHeader, SectionHeader, Sym as _};

use super::object::c_str;
use crate::bail;
use crate::elf::types::{Ehdr, Sym, LE};
use crate::error::{Error, Result};
use crate::input::InputFile;

#[derive(Debug, Clone)]
pub struct DsoSym {
    pub name: &'static [u8],
    /// Its version's name, if it has one beyond the base: from the version definitions for a
    /// definition, from the version needs (`SHT_GNU_verneed`) for an undefined reference, which
    /// the resolver then names `name@version`, as lld does (a reference such as libstdc++'s
    /// `__udivti3@GCC_3.0` binds to libgcc_s's definition, never to a libgcc.a member).
    pub version: Option<&'static [u8]>,
    /// VERSYM_HIDDEN: only reachable with an explicit `name@version` reference.
    pub hidden: bool,
    pub defined: bool,
    pub sym: &'static Sym,
}

pub struct SharedFile {
    pub input: &'static InputFile,
    pub soname: String,
    /// Its `DT_NEEDED` entries (`--no-allow-shlib-undefined` checks a library only when all of
    /// them are in the link, as lld).
    pub needed: Vec<String>,
    pub syms: Vec<DsoSym>,
    /// Address ranges of the library's read-only allocated sections: a copy relocation of data
    /// that lives there goes to `.bss.rel.ro`, which becomes read-only after relocation.
    pub ro_ranges: Vec<(u64, u64)>,
    /// `sh_addralign` of every section (a copy relocation takes its symbol's alignment from it).
    pub section_aligns: Vec<u64>,
    /// Whether the library has a SHT_GNU_versym section, and how many dynamic symbols (the
    /// null one included) it versions: checked once parsed.
    has_versym: bool,
    dynsym_count: usize,
}

impl SharedFile {
    pub fn is_read_only(&self, addr: u64) -> bool {
        self.ro_ranges.iter().any(|&(a, sz)| a <= addr && addr < a + sz)
    }

    /// The alignment of section `shndx` (None for a reserved or missing index).
    pub fn section_align(&self, shndx: usize) -> Option<u64> {
        if shndx == 0 {
            return None;
        }
        self.section_aligns.get(shndx).copied()
    }
}

fn bounds(data: &'static [u8], off: u64, size: u64) -> Result<&'static [u8]> {
    let end = off.checked_add(size).ok_or_else(|| Error::new("section is out of bounds"))?;
    if end > data.len() as u64 {
        bail!("section is out of bounds");
    }
    Ok(&data[off as usize..end as usize])
}

/// The version needs (`SHT_GNU_verneed` with `sh_info` entries): version index → name, as lld
/// reads them (an index no entry names reads as the empty name).
fn version_needs(verneed: Option<(&'static [u8], u32)>, dynstr: &'static [u8], file: &str) -> Result<Vec<&'static [u8]>> {
    let mut names: Vec<&'static [u8]> = Vec::new();
    let Some((vn, count)) = verneed else { return Ok(names) };
    let rd16 = |o: usize| vn.get(o..o + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
    let rd32 = |o: usize| vn.get(o..o + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize);
    let mut off = 0usize;
    for _ in 0..count {
        // Verneed: vn_version, vn_cnt (u16), vn_file, vn_aux, vn_next (u32).
        let (Some(cnt), Some(aux), Some(next)) = (rd16(off + 2), rd32(off + 8), rd32(off + 12)) else {
            bail!("{file} has an invalid Verneed");
        };
        let mut a = off.saturating_add(aux);
        for _ in 0..cnt {
            // Vernaux: vna_hash (u32), vna_flags, vna_other (u16), vna_name, vna_next (u32).
            let (Some(other), Some(name), Some(anext)) = (rd16(a + 6), rd32(a + 8), rd32(a + 12)) else {
                bail!("{file} has an invalid Vernaux");
            };
            if name >= dynstr.len() {
                bail!("{file} has a Vernaux with an invalid vna_name");
            }
            let ndx = (other & 0x7fff) as usize;
            if ndx >= names.len() {
                names.resize(ndx + 1, b"");
            }
            names[ndx] = c_str(dynstr, name as u32)?;
            // A zero vna_next would read the same entry again with the same effect: lld loops
            // on (to vn_cnt), dtld stops, with the same result in a bounded time.
            if anext == 0 {
                break;
            }
            a = a.saturating_add(anext);
        }
        // Likewise a zero vn_next (sh_info may claim four billion entries).
        if next == 0 {
            break;
        }
        off = off.saturating_add(next);
    }
    Ok(names)
}

impl SharedFile {
    pub fn parse(input: &'static InputFile) -> Result<SharedFile> {
        let dso = Self::parse_inner(input).map_err(|e| e.context(&input.name))?;
        // lld's wording names no file: symbol versions with no dynamic symbols to version.
        if dso.has_versym && dso.dynsym_count == 0 {
            bail!("SHT_GNU_versym should be associated with symbol table");
        }
        Ok(dso)
    }

    fn parse_inner(input: &'static InputFile) -> Result<SharedFile> {
        let data = input.data;
        let ehdr = Ehdr::parse(data).map_err(|_| Error::new("invalid ELF header"))?;
        if ehdr.e_machine(LE) != elf::EM_X86_64 {
            bail!("{} is incompatible with elf_x86_64", input.name);
        }
        let shdrs = ehdr.section_headers(LE, data).map_err(|e| Error::new(e.to_string()))?;
        let mut dynsym: &'static [Sym] = &[];
        let mut dynstr: &'static [u8] = &[];
        let mut versym: &'static [u8] = &[];
        let mut has_versym = false;
        let mut verdef: Option<(&'static [u8], u32)> = None;
        let mut verneed: Option<(&'static [u8], u32)> = None;
        let mut dynamic: &'static [u8] = &[];
        let mut ro_ranges = Vec::new();
        // lld's isReadOnly: inside a non-writable PT_LOAD or PT_GNU_RELRO (vtables and
        // typeinfo in .data.rel.ro count as read-only).
        let at = |o: usize, n: usize| o.checked_add(n).and_then(|end| data.get(o..end));
        let rd16 = |o: usize| at(o, 2).map(|b| u16::from_le_bytes([b[0], b[1]]) as usize);
        let rd32 = |o: usize| at(o, 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        let rd64 = |o: usize| at(o, 8).map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])));
        if let (Some(phoff), Some(phentsize), Some(phnum)) = (rd64(0x20), rd16(0x36), rd16(0x38)) {
            for k in 0..phnum.min(4096) {
                let Some(base) = (phoff as usize).checked_add(k.saturating_mul(phentsize)) else { break };
                let (Some(ty), Some(flags), Some(vaddr), Some(memsz)) =
                    (rd32(base), rd32(base.saturating_add(4)), rd64(base.saturating_add(16)), rd64(base.saturating_add(40)))
                else {
                    break;
                };
                if (ty == elf::PT_LOAD || ty == elf::PT_GNU_RELRO) && flags & elf::PF_W == 0 {
                    ro_ranges.push((vaddr, memsz));
                }
            }
        }
        for h in shdrs.iter() {
            let fl = h.sh_flags(LE);
            if fl & elf::SHF_ALLOC as u64 != 0 && fl & elf::SHF_WRITE as u64 == 0 && h.sh_type(LE) != elf::SHT_NOBITS {
                ro_ranges.push((h.sh_addr(LE), h.sh_size(LE)));
            }
            match h.sh_type(LE) {
                elf::SHT_DYNSYM => {
                    let raw = bounds(data, h.sh_offset(LE), h.sh_size(LE))?;
                    dynsym = object::pod::slice_from_all_bytes::<Sym>(raw).map_err(|_| Error::new("invalid dynamic symbol table"))?;
                    let link = shdrs.get(h.sh_link(LE) as usize).ok_or_else(|| Error::new("invalid sh_link"))?;
                    dynstr = bounds(data, link.sh_offset(LE), link.sh_size(LE))?;
                }
                elf::SHT_GNU_VERSYM => {
                    has_versym = true;
                    versym = bounds(data, h.sh_offset(LE), h.sh_size(LE))?;
                }
                elf::SHT_GNU_VERDEF => verdef = Some((bounds(data, h.sh_offset(LE), h.sh_size(LE))?, h.sh_info(LE))),
                elf::SHT_GNU_VERNEED => verneed = Some((bounds(data, h.sh_offset(LE), h.sh_size(LE))?, h.sh_info(LE))),
                elf::SHT_DYNAMIC => dynamic = bounds(data, h.sh_offset(LE), h.sh_size(LE))?,
                _ => {}
            }
        }
        // Version definitions: index → name.
        let mut ver_names: Vec<Option<&'static [u8]>> = Vec::new();
        if let Some((vd, count)) = verdef {
            let mut off = 0usize;
            for _ in 0..count.min(65535) {
                if off + 20 > vd.len() {
                    bail!("invalid verdef section");
                }
                let ndx = u16::from_le_bytes([vd[off + 4], vd[off + 5]]) as usize;
                let aux = u32::from_le_bytes(vd[off + 12..off + 16].try_into().unwrap()) as usize;
                let next = u32::from_le_bytes(vd[off + 16..off + 20].try_into().unwrap()) as usize;
                let a = off.checked_add(aux).filter(|a| a + 8 <= vd.len());
                let Some(a) = a else { bail!("invalid verdef section") };
                let name_off = u32::from_le_bytes(vd[a..a + 4].try_into().unwrap());
                let name = c_str(dynstr, name_off)?;
                if ndx >= ver_names.len() {
                    ver_names.resize(ndx + 1, None);
                }
                ver_names[ndx] = Some(name);
                if next == 0 {
                    break;
                }
                off = off.checked_add(next).ok_or_else(|| Error::new("invalid verdef section"))?;
            }
        }
        let need_names = version_needs(verneed, dynstr, &input.name)?;
        let mut soname = None;
        let mut needed = Vec::new();
        for d in dynamic.chunks_exact(16) {
            let tag = u64::from_le_bytes(d[..8].try_into().unwrap());
            let val = u64::from_le_bytes(d[8..].try_into().unwrap());
            if tag == elf::DT_SONAME as u64 {
                if val >= dynstr.len() as u64 {
                    bail!("invalid DT_SONAME entry");
                }
                soname = Some(String::from_utf8_lossy(c_str(dynstr, val as u32)?).into_owned());
            }
            if tag == elf::DT_NEEDED as u64 {
                if val >= dynstr.len() as u64 {
                    bail!("invalid DT_NEEDED entry");
                }
                needed.push(String::from_utf8_lossy(c_str(dynstr, val as u32)?).into_owned());
            }
            if tag == elf::DT_NULL as u64 {
                break;
            }
        }
        let mut syms = Vec::with_capacity(dynsym.len());
        for (i, s) in dynsym.iter().enumerate().skip(1) {
            if s.st_bind() == elf::STB_LOCAL {
                continue;
            }
            let name = c_str(dynstr, s.st_name(LE))?;
            let vs = if versym.len() >= (i + 1) * 2 { u16::from_le_bytes([versym[i * 2], versym[i * 2 + 1]]) } else { 1 };
            let ndx = (vs & 0x7fff) as usize;
            let hidden = vs & 0x8000 != 0;
            let defined = s.st_shndx(LE) != elf::SHN_UNDEF;
            if defined && ndx == 0 {
                // VER_NDX_LOCAL: not visible.
                continue;
            }
            // Index 1 is the base (global) version: the file's own name, not a symbol version.
            let version = if ndx < 2 {
                None
            } else if defined {
                ver_names.get(ndx).copied().flatten()
            } else {
                // lld's check and words.
                let Some(&v) = need_names.get(ndx) else {
                    bail!(
                        "corrupt input file: version need index {ndx} for symbol {} is out of bounds\n>>> defined in {}",
                        String::from_utf8_lossy(name),
                        input.name
                    );
                };
                Some(v)
            };
            syms.push(DsoSym { name, version, hidden, defined, sym: s });
        }
        let soname = soname.unwrap_or_else(|| input.needed_name.clone());
        let section_aligns = shdrs.iter().map(|h| h.sh_addralign(LE)).collect();
        Ok(SharedFile { input, soname, needed, syms, ro_ranges, section_aligns, has_versym, dynsym_count: dynsym.len() })
    }
}
