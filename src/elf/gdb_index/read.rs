//! What `--gdb-index` takes from one object's DWARF: its compilation units, the address ranges
//! each covers and the names of `.debug_gnu_pubnames` / `.debug_gnu_pubtypes`. It reads them
//! as lld does through LLVM's DWARF reader (`LLDDwarfObj`), so that the index comes out the
//! same: every relocated field reads as S + A of its relocation (the symbol's value within its
//! section, never an output address) together with the index of the symbol's section, and a
//! range whose field was not relocated, or whose section is not in the output, is left out.
//!
//! gimli parses the unit headers and the unit DIE; the range lists (`.debug_ranges`,
//! `.debug_rnglists`) and the address pool (`.debug_addr`) are read here, with LLVM's rules for
//! base addresses, tombstones and the section a range belongs to.

use gimli::{AttributeValue, LittleEndian, Reader as _};
use object::elf;
use object::read::elf::{Rela as _, SectionHeader as _, Sym as _};

use crate::elf::object::{ObjFile, SecKind};
use crate::elf::symtab::{Def, FileId, Resolved};
use crate::elf::types::LE;

type R = gimli::EndianSlice<'static, LittleEndian>;

/// A value read from a debug section: `sec` is the section of the relocation's symbol (None:
/// the field has no relocation, LLVM's -1; Some(0): the symbol is undefined or absolute).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SAddr {
    pub addr: u64,
    pub sec: Option<u32>,
}

/// An address range of a compilation unit, in section `sec` of the object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Area {
    pub sec: u32,
    pub low: u64,
    pub high: u64,
    pub cu: u32,
}

/// A name of the pub tables: `value` is the descriptor byte << 24 | the unit's index in this
/// object (the units of earlier objects are added later).
#[derive(Debug, Clone, Copy)]
pub struct NameEntry {
    pub name: &'static [u8],
    pub hash: u32,
    pub value: u32,
}

/// Everything `--gdb-index` needs from one object.
#[derive(Default)]
pub struct ObjIndex {
    /// The `.debug_info` the unit offsets are relative to.
    pub info_sec: Option<u32>,
    /// (offset in that section, the unit's size with its initial length).
    pub cus: Vec<(u64, u64)>,
    pub areas: Vec<Area>,
    pub names: Vec<NameEntry>,
    pub warnings: Vec<String>,
}

/// gdb's string hash (case-insensitive for ASCII).
pub fn gdb_hash(s: &[u8]) -> u32 {
    s.iter().fold(0u32, |h, &c| h.wrapping_mul(67).wrapping_add(c.to_ascii_lowercase() as u32).wrapping_sub(113))
}

/// One debug section of the object with its relocations: (offset, S + A, symbol's section).
#[derive(Default)]
struct Sect {
    data: &'static [u8],
    rels: Vec<(u64, u64, u32)>,
}

impl Sect {
    fn new(r: &Resolved, f: FileId, o: &ObjFile, idx: Option<u32>) -> Sect {
        let Some(idx) = idx else { return Sect::default() };
        let sec = &o.sections[idx as usize];
        let mut rels: Vec<(u64, u64, u32)> = sec
            .relocs
            .iter()
            .map(|rel| {
                let si = rel.r_sym(LE, false) as usize;
                let (value, shndx) = symbol_value(r, f, o, si);
                (rel.r_offset(LE), value.wrapping_add(rel.r_addend(LE) as u64), shndx)
            })
            .collect();
        rels.sort_by_key(|r| r.0);
        Sect { data: sec.data, rels }
    }

    fn reloc(&self, off: u64) -> Option<(u64, u32)> {
        let k = self.rels.partition_point(|r| r.0 < off);
        self.rels.get(k).filter(|r| r.0 == off).map(|r| (r.1, r.2))
    }

    /// The value of a field at `off` whose bytes read `raw`, relocated as LLVM's
    /// `getRelocatedValue`.
    fn relocated(&self, off: u64, raw: u64) -> SAddr {
        match self.reloc(off) {
            Some((v, s)) => SAddr { addr: v, sec: Some(s) },
            None => SAddr { addr: raw, sec: None },
        }
    }

    /// Reads a relocated field of `size` bytes at `off`; None past the end.
    fn read(&self, off: u64, size: u8) -> Option<SAddr> {
        let o = usize::try_from(off).ok()?;
        let b = self.data.get(o..o.checked_add(size as usize)?)?;
        let mut v = [0u8; 8];
        v[..b.len()].copy_from_slice(b);
        Some(self.relocated(off, u64::from_le_bytes(v)))
    }
}

/// The value lld's DWARF reader gives a relocation's symbol (`Defined::value`, the resolved
/// definition's for a global; 0 for an undefined one) and the section index of the object's
/// own symbol (0 when undefined or absolute).
fn symbol_value(r: &Resolved, f: FileId, o: &ObjFile, si: usize) -> (u64, u32) {
    let Some(sym) = o.symbols.get(si) else { return (0, 0) };
    let shndx = o.sym_section(si).unwrap_or(0);
    let value = match r.global_of(f, si) {
        Some(id) => match r.symbols[id].def {
            Def::Defined(df, di) => r.obj(df).symbols[di].st_value(LE),
            _ => 0,
        },
        None => sym.st_value(LE),
    };
    (value, shndx)
}

fn tombstone(addr_size: u8) -> u64 {
    if addr_size >= 8 {
        u64::MAX
    } else {
        (1u64 << (addr_size as u32 * 8)) - 1
    }
}

/// Reads `o`'s units, ranges and names (`f` is its file id).
pub fn read_object(r: &Resolved, f: FileId, o: &ObjFile) -> ObjIndex {
    // LLDDwarfObj: the last section of each name wins; a `.debug_info` in a group holds type
    // units (`-fdebug-types-section`) and is not read.
    let find = |name: &[u8]| -> Option<u32> {
        o.sections
            .iter()
            .enumerate()
            .filter(|(_, s)| s.name == name && s.kind != SecKind::Ignored)
            .filter(|(_, s)| name != b".debug_info" || s.hdr.sh_flags(LE) & elf::SHF_GROUP as u64 == 0)
            .map(|(i, _)| i as u32)
            .next_back()
    };
    let info_sec = find(b".debug_info");
    let secs = Secs {
        info: Sect::new(r, f, o, info_sec),
        abbrev: find(b".debug_abbrev").map_or(&[][..], |i| o.sections[i as usize].data),
        addr: Sect::new(r, f, o, find(b".debug_addr")),
        ranges: Sect::new(r, f, o, find(b".debug_ranges")),
        rnglists: Sect::new(r, f, o, find(b".debug_rnglists")),
    };
    let pubs = [find(b".debug_gnu_pubnames"), find(b".debug_gnu_pubtypes")];
    let mut out = ObjIndex { info_sec, ..Default::default() };
    let where_ = |s: u32| format!("{}:({})", o.name(), String::from_utf8_lossy(o.sections[s as usize].name));
    if let Some(info) = info_sec {
        let units = read_units(&secs, &mut out.cus);
        if let Err(e) = read_areas(&secs, &units, &mut out.areas) {
            out.warnings.push(format!("{}: {e}", where_(info)));
            out.areas.clear();
        }
    }
    for p in pubs.into_iter().flatten() {
        let s = Sect::new(r, f, o, Some(p));
        if let Err(e) = read_pub(&s, &out.cus, &mut out.names) {
            out.warnings.push(format!("{}: {e}", where_(p)));
        }
    }
    out
}

struct Secs {
    info: Sect,
    abbrev: &'static [u8],
    addr: Sect,
    ranges: Sect,
    rnglists: Sect,
}

/// The unit headers of `.debug_info` (reading stops at the first bad one, as LLVM's).
fn read_units(s: &Secs, cus: &mut Vec<(u64, u64)>) -> Vec<gimli::UnitHeader<R>> {
    let mut units = Vec::new();
    let mut it = gimli::DebugInfo::new(s.info.data, LittleEndian).units();
    while let Ok(Some(h)) = it.next() {
        let off = h.offset().as_debug_info_offset().map_or(0, |o| o.0 as u64);
        // The whole unit, its initial length included. lld writes the unit length + 4 for
        // DWARF64 units too, 8 bytes short, and gdb (13) then stops on an internal error
        // (`set_length: Assertion m_length == length`); DWARF32 units are as lld's.
        let initial = if h.format() == gimli::Format::Dwarf64 { 12 } else { 4 };
        cus.push((off, h.unit_length() as u64 + initial));
        units.push(h);
    }
    units
}

/// The unit DIE's attributes that locate its code.
#[derive(Default)]
struct UnitDie {
    low_pc: Option<Pc>,
    entry_pc: Option<Pc>,
    high_pc: Option<HighPc>,
    ranges: Option<RangesAttr>,
    addr_base: Option<u64>,
    rnglists_base: u64,
}

#[derive(Clone, Copy)]
enum Pc {
    Addr(SAddr),
    Index(u64),
}

#[derive(Clone, Copy)]
enum HighPc {
    Addr(u64),
    Offset(u64),
}

#[derive(Clone, Copy)]
enum RangesAttr {
    Offset(u64),
    Index(u64),
}

/// Every unit's ranges, in unit order; `Err` is LLVM's complaint, after which lld keeps no
/// range of the object.
fn read_areas(s: &Secs, units: &[gimli::UnitHeader<R>], areas: &mut Vec<Area>) -> Result<(), String> {
    for (cu, h) in units.iter().enumerate() {
        let die = read_unit_die(s, h).map_err(|e| format!("{e}"))?;
        let Some(die) = die else { continue };
        for r in unit_ranges(s, h, &die)? {
            let Some(sec) = r.2 else { continue };
            if r.0 != r.1 {
                areas.push(Area { sec, low: r.0, high: r.1, cu: cu as u32 });
            }
        }
    }
    Ok(())
}

fn read_unit_die(s: &Secs, h: &gimli::UnitHeader<R>) -> gimli::Result<Option<UnitDie>> {
    let abbrevs = h.abbreviations(&gimli::DebugAbbrev::new(s.abbrev, LittleEndian))?;
    let mut raw = h.entries_raw(&abbrevs, None)?;
    let Some(abbrev) = raw.read_abbreviation()? else { return Ok(None) };
    let unit_off = h.offset().as_debug_info_offset().map_or(0, |o| o.0 as u64);
    let mut die = UnitDie::default();
    for spec in abbrev.attributes() {
        let at = unit_off + raw.next_offset().0 as u64;
        let attr = raw.read_attribute(*spec)?;
        let raw_u64 = match attr.raw_value() {
            AttributeValue::Addr(v) | AttributeValue::Udata(v) | AttributeValue::Data8(v) => Some(v),
            AttributeValue::Data1(v) => Some(v as u64),
            AttributeValue::Data2(v) => Some(v as u64),
            AttributeValue::Data4(v) => Some(v as u64),
            AttributeValue::SecOffset(v) => Some(v as u64),
            AttributeValue::Sdata(v) => Some(v as u64),
            _ => None,
        };
        let rel = |v: u64| s.info.relocated(at, v);
        let index = match attr.raw_value() {
            AttributeValue::DebugAddrIndex(i) => Some(i.0 as u64),
            _ => None,
        };
        let is_addr = matches!(attr.raw_value(), AttributeValue::Addr(_));
        match attr.name() {
            gimli::DW_AT_low_pc | gimli::DW_AT_entry_pc => {
                let pc = match (index, raw_u64) {
                    (Some(i), _) => Some(Pc::Index(i)),
                    (None, Some(v)) if is_addr => Some(Pc::Addr(rel(v))),
                    _ => None,
                };
                if attr.name() == gimli::DW_AT_low_pc {
                    die.low_pc = pc;
                } else {
                    die.entry_pc = pc;
                }
            }
            gimli::DW_AT_high_pc => {
                die.high_pc = match raw_u64 {
                    Some(v) if is_addr => Some(HighPc::Addr(rel(v).addr)),
                    Some(v) if !matches!(attr.raw_value(), AttributeValue::Sdata(_)) => Some(HighPc::Offset(rel(v).addr)),
                    _ => None,
                }
            }
            gimli::DW_AT_ranges => {
                die.ranges = match attr.raw_value() {
                    AttributeValue::DebugRngListsIndex(i) => Some(RangesAttr::Index(i.0 as u64)),
                    _ => raw_u64.map(|v| RangesAttr::Offset(rel(v).addr)),
                }
            }
            // DW_AT_addr_base wins over the GNU extension (LLVM).
            gimli::DW_AT_addr_base => die.addr_base = raw_u64.map(|v| rel(v).addr),
            gimli::DW_AT_GNU_addr_base if die.addr_base.is_none() => die.addr_base = raw_u64.map(|v| rel(v).addr),
            gimli::DW_AT_rnglists_base => die.rnglists_base = raw_u64.map_or(0, |v| rel(v).addr),
            _ => {}
        }
    }
    Ok(Some(die))
}

/// LLVM's `getAddrOffsetSectionItem`: entry `index` of the unit's `.debug_addr` contribution.
fn pooled(s: &Secs, die: &UnitDie, asz: u8, index: u64) -> Option<SAddr> {
    let base = die.addr_base?;
    let off = base.checked_add(index.checked_mul(asz as u64)?)?;
    s.addr.read(off, asz)
}

fn pc(s: &Secs, die: &UnitDie, asz: u8, p: Option<Pc>) -> Option<SAddr> {
    match p? {
        Pc::Addr(a) => Some(a),
        Pc::Index(i) => pooled(s, die, asz, i),
    }
}

type Range = (u64, u64, Option<u32>);

/// LLVM's `DWARFDie::getAddressRanges` on the unit DIE: low/high pc, else `DW_AT_ranges`.
fn unit_ranges(s: &Secs, h: &gimli::UnitHeader<R>, die: &UnitDie) -> Result<Vec<Range>, String> {
    let asz = h.address_size();
    if let Some(low) = pc(s, die, asz, die.low_pc) {
        if low.addr != tombstone(asz) {
            let high = match die.high_pc {
                Some(HighPc::Addr(a)) => Some(a),
                Some(HighPc::Offset(o)) => Some(low.addr.wrapping_add(o)),
                None => None,
            };
            if let Some(high) = high {
                return Ok(vec![(low.addr, high, low.sec)]);
            }
        }
    }
    let Some(ranges) = die.ranges else { return Ok(Vec::new()) };
    let base = pc(s, die, asz, die.low_pc.or(die.entry_pc));
    if h.version() <= 4 {
        let RangesAttr::Offset(off) = ranges else { return Ok(Vec::new()) };
        return debug_ranges(&s.ranges, off, asz, base);
    }
    let off = match ranges {
        RangesAttr::Offset(o) => o,
        RangesAttr::Index(i) => {
            let osz = if h.format() == gimli::Format::Dwarf64 { 8 } else { 4 };
            let at = die.rnglists_base.wrapping_add(i.wrapping_mul(osz));
            let e = s.rnglists.read(at, osz as u8).ok_or_else(|| format!("invalid range list table index {i}"))?;
            die.rnglists_base.wrapping_add(e.addr)
        }
    };
    rnglist(s, die, off, asz, base)
}

/// A `.debug_ranges` list (DWARF 2 to 4), LLVM's `DWARFDebugRangeList`: each entry's section
/// is its end address's; a base address selection entry (start all ones) moves the base.
fn debug_ranges(sec: &Sect, mut off: u64, asz: u8, mut base: Option<SAddr>) -> Result<Vec<Range>, String> {
    if off >= sec.data.len() as u64 {
        return Err(format!("decoding address ranges: invalid range list offset 0x{off:x}"));
    }
    if asz != 4 && asz != 8 {
        return Err(format!("decoding address ranges: range list at offset 0x{off:x} has unsupported address size: {asz}"));
    }
    let all_ones = tombstone(asz);
    let tomb = all_ones - 1;
    let mut out = Vec::new();
    loop {
        let (Some(start), Some(end)) = (sec.read(off, asz), sec.read(off + asz as u64, asz)) else {
            return Err(format!("decoding address ranges: invalid range list entry at offset 0x{off:x}"));
        };
        off += 2 * asz as u64;
        if start.addr == 0 && end.addr == 0 {
            break;
        }
        if start.addr == all_ones {
            base = Some(end);
            continue;
        }
        if start.addr == tomb {
            continue;
        }
        let (mut lo, mut hi, mut s) = (start.addr, end.addr, end.sec);
        if let Some(b) = base {
            if b.addr == tomb {
                continue;
            }
            lo = lo.wrapping_add(b.addr);
            hi = hi.wrapping_add(b.addr);
            if s.is_none() {
                s = b.sec;
            }
        }
        out.push((lo, hi, s));
    }
    Ok(out)
}

fn uleb(d: &[u8], off: &mut u64) -> Option<u64> {
    let mut r = gimli::EndianSlice::new(d.get(usize::try_from(*off).ok()?..)?, LittleEndian);
    let before = r.len();
    let v = r.read_uleb128().ok()?;
    *off += (before - r.len()) as u64;
    Some(v)
}

/// A `.debug_rnglists` list (DWARF 5), LLVM's `DWARFDebugRnglist::getAbsoluteRanges`.
fn rnglist(s: &Secs, die: &UnitDie, mut off: u64, asz: u8, mut base: Option<SAddr>) -> Result<Vec<Range>, String> {
    let d = s.rnglists.data;
    let tomb = tombstone(asz);
    let bad = |at: u64| format!("decoding address ranges: invalid range list entry at offset 0x{at:x}");
    let pool = |i: u64| pooled(s, die, asz, i);
    let mut out = Vec::new();
    loop {
        let at = off;
        let kind = *d.get(usize::try_from(off).map_err(|_| bad(at))?).ok_or_else(|| bad(at))?;
        off += 1;
        let addr = |off: &mut u64| -> Result<SAddr, String> {
            let v = s.rnglists.read(*off, asz).ok_or_else(|| bad(at))?;
            *off += asz as u64;
            Ok(v)
        };
        let e = match kind {
            0 => break,
            // DW_RLE_base_addressx
            1 => {
                let i = uleb(d, &mut off).ok_or_else(|| bad(at))?;
                base = Some(pool(i).unwrap_or(SAddr { addr: i, sec: None }));
                continue;
            }
            // DW_RLE_startx_endx, DW_RLE_startx_length
            2 | 3 => {
                let i = uleb(d, &mut off).ok_or_else(|| bad(at))?;
                let v = uleb(d, &mut off).ok_or_else(|| bad(at))?;
                let start = pool(i).unwrap_or(SAddr { addr: 0, sec: None });
                let high = if kind == 2 { pool(v).map_or(0, |a| a.addr) } else { start.addr.wrapping_add(v) };
                (start.addr, high, start.sec)
            }
            // DW_RLE_offset_pair
            4 => {
                let a = uleb(d, &mut off).ok_or_else(|| bad(at))?;
                let b = uleb(d, &mut off).ok_or_else(|| bad(at))?;
                let Some(bs) = base.filter(|b| b.addr != tomb) else { continue };
                (a.wrapping_add(bs.addr), b.wrapping_add(bs.addr), bs.sec)
            }
            // DW_RLE_base_address
            5 => {
                base = Some(addr(&mut off)?);
                continue;
            }
            // DW_RLE_start_end
            6 => {
                let a = addr(&mut off)?;
                let b = addr(&mut off)?;
                (a.addr, b.addr, a.sec.or(base.and_then(|b| b.sec)))
            }
            // DW_RLE_start_length
            7 => {
                let a = addr(&mut off)?;
                let len = uleb(d, &mut off).ok_or_else(|| bad(at))?;
                (a.addr, a.addr.wrapping_add(len), a.sec.or(base.and_then(|b| b.sec)))
            }
            k => return Err(format!("decoding address ranges: unknown rnglists encoding 0x{k:x} at offset 0x{at:x}")),
        };
        if e.0 != tomb {
            out.push(e);
        }
    }
    Ok(out)
}

/// One `.debug_gnu_pubnames` or `.debug_gnu_pubtypes` section (LLVM's `DWARFDebugPubTable`,
/// GNU style): each set names its unit by a relocated offset into `.debug_info`; its entries
/// go to the first unit at or after that offset.
fn read_pub(s: &Sect, cus: &[(u64, u64)], names: &mut Vec<NameEntry>) -> Result<(), String> {
    let d = s.data;
    let mut off = 0u64;
    while off < d.len() as u64 {
        let set_off = off;
        let fail = |msg: &str| format!("name lookup table at offset 0x{set_off:x} parsing failed: {msg}");
        let get = |at: u64, n: u8, end: u64| -> Option<SAddr> {
            if at + n as u64 > end {
                None
            } else {
                s.read(at, n)
            }
        };
        let len32 = get(off, 4, d.len() as u64).ok_or_else(|| fail("unexpected end of data"))?.addr;
        let (len, osz, mut p) = if len32 == 0xffff_ffff {
            (get(off + 4, 8, d.len() as u64).ok_or_else(|| fail("unexpected end of data"))?.addr, 8u8, off + 12)
        } else if len32 >= 0xffff_fff0 {
            return Err(fail(&format!("unsupported reserved unit length of value 0x{len32:x}")));
        } else {
            (len32, 4u8, off + 4)
        };
        let end = p.saturating_add(len);
        off = end;
        let eod = || fail("unexpected end of data");
        let _version = get(p, 2, end).ok_or_else(eod)?;
        p += 2;
        let cu_off = get(p, osz, end).ok_or_else(eod)?.addr;
        p += 2 * osz as u64;
        if p > end {
            return Err(eod());
        }
        let cu = cus.partition_point(|c| c.0 < cu_off) as u32;
        loop {
            let die = get(p, osz, end).ok_or_else(eod)?.addr;
            p += osz as u64;
            if die == 0 {
                break;
            }
            let kind = get(p, 1, end).ok_or_else(eod)?.addr as u8;
            p += 1;
            let start = p as usize;
            let lim = (end as usize).min(d.len());
            let n = d.get(start..lim).and_then(|r| memchr::memchr(0, r)).ok_or_else(eod)?;
            let name = &d[start..start + n];
            p += n as u64 + 1;
            names.push(NameEntry { name, hash: gdb_hash(name), value: (u32::from(kind & 0xf0) << 24) | cu });
        }
    }
    Ok(())
}

pub struct GdbIndex {
    pub(crate) chunks: Vec<Chunk>,
    pub(crate) symbols: Vec<GdbSymbol>,
    pub size: u64,
}

pub(crate) struct Chunk {
    pub(crate) file: FileId,
    pub(crate) info_sec: Option<u32>,
    pub(crate) cus: Vec<(u64, u64)>,
    pub(crate) areas: Vec<Area>,
}

pub(crate) struct GdbSymbol {
    pub(crate) name: &'static [u8],
    pub(crate) hash: u32,
    pub(crate) cu_vector: Vec<u32>,
    pub(crate) cu_vector_off: u32,
    pub(crate) name_off: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gdb_hash_is_case_insensitive() {
        assert_eq!(gdb_hash(b"main"), gdb_hash(b"MAIN"));
        // h = h * 67 + c - 113, from 0.
        assert_eq!(gdb_hash(b"a"), (b'a' as u32).wrapping_sub(113));
        assert_ne!(gdb_hash(b"foo"), gdb_hash(b"bar"));
    }

    #[test]
    fn range_lists_follow_llvm() {
        // .debug_ranges: base selection, a pair relative to it, a tombstoned pair, the end.
        let mut d = Vec::new();
        for v in [u64::MAX, 0x10, 1, 3, u64::MAX - 1, 5, 0, 0] {
            d.extend_from_slice(&v.to_le_bytes());
        }
        let sec = Sect { data: crate::util::keep::slice(d), rels: vec![(8, 0x10, 7)] };
        let r = debug_ranges(&sec, 0, 8, None).unwrap();
        assert_eq!(r, vec![(0x11, 0x13, Some(7))]);
        assert!(debug_ranges(&sec, 64, 8, None).is_err());
    }
}
