//! Source locations for diagnostics from an object's DWARF, as lld's `DWARFCache` finds them:
//! the line table row for a section offset (`>>> referenced by foo.c:12`) and the declaration
//! of a global variable by name. Read only when a message needs it, never on a successful link.
//!
//! Why it is format-neutral: ELF objects and MinGW's COFF objects (lld's `getFileLineDwarf`
//! with `-lldmingw`) carry the same DWARF; each format relocates its debug sections itself
//! (`elf::object`, `coff::dwarf`) and hands them here. A 64-bit address into an allocated
//! section (DW_LNE_set_address, DW_AT_low_pc) keeps the target section's index plus one in its
//! top bits (`tag`), so that the sequences of `-ffunction-sections` code, which all start at 0,
//! stay apart, as LLVM's `SectionedAddress` keeps them.

use std::collections::HashMap;

use gimli::{EndianSlice, LittleEndian, Reader as _};

type R<'a> = EndianSlice<'a, LittleEndian>;

/// Section indices sit above this bit in a relocated address (object offsets stay below 2^48).
const SEC_SHIFT: u32 = 48;

/// A relocated address `v` into section `shndx` (the format's own numbering), as `line_at`
/// finds it again.
pub fn tag(v: u64, shndx: u32) -> u64 {
    (v & ((1u64 << SEC_SHIFT) - 1)) | ((u64::from(shndx) + 1) << SEC_SHIFT)
}

/// One object's line tables and global variables.
#[derive(Default)]
pub struct Dwarf {
    tables: Vec<Table>,
    /// Variable name (linkage name, else name) -> (table, file index, line); the first wins.
    vars: HashMap<Vec<u8>, (usize, u64, u64)>,
}

struct Table {
    /// File paths by DWARF file index (None where the entry has no usable name).
    files: Vec<Option<String>>,
    /// 0-based (DWARF 5) or 1-based (earlier) file indices.
    first_file: u64,
    seqs: Vec<Seq>,
}

struct Seq {
    /// Section index of the code (u32::MAX: an absolute address), and its range.
    shndx: u32,
    low: u64,
    high: u64,
    /// (offset, file, line) in address order.
    rows: Vec<(u64, u64, u64)>,
}

impl Table {
    fn file(&self, idx: u64) -> Option<&str> {
        let k = idx.checked_sub(self.first_file)?;
        self.files.get(usize::try_from(k).ok()?)?.as_deref()
    }
}

impl Dwarf {
    /// Reads the debug information of an object whose relocated debug sections `section`
    /// gives by name (`.debug_info`, ...); unreadable DWARF gives an empty one, as lld then
    /// falls back to the file name.
    pub fn from_sections(section: impl Fn(&str) -> Option<Vec<u8>>) -> Dwarf {
        let mut d = Dwarf::default();
        let _ = d.load(section);
        d
    }

    /// The file and line of the code at `off` in section `shndx` (lld's `getDILineInfo`).
    pub fn line_at(&self, shndx: usize, off: u64) -> Option<(String, u64)> {
        for want in [shndx as u32, u32::MAX] {
            for t in &self.tables {
                for s in &t.seqs {
                    if s.shndx != want || off < s.low || off >= s.high {
                        continue;
                    }
                    let k = s.rows.partition_point(|r| r.0 <= off);
                    let &(_, file, line) = s.rows.get(k.checked_sub(1)?)?;
                    return t.file(file).map(|f| (f.to_string(), line));
                }
            }
            if want == u32::MAX {
                break;
            }
        }
        None
    }

    /// Where the global variable `name` is declared (lld's `getVariableLoc`).
    pub fn variable(&self, name: &[u8]) -> Option<(String, u64)> {
        let &(t, file, line) = self.vars.get(name)?;
        self.tables[t].file(file).map(|f| (f.to_string(), line))
    }

    fn load(&mut self, section: impl Fn(&str) -> Option<Vec<u8>>) -> gimli::Result<()> {
        let mut bufs: HashMap<&'static str, Vec<u8>> = HashMap::new();
        for id in [
            gimli::SectionId::DebugInfo,
            gimli::SectionId::DebugAbbrev,
            gimli::SectionId::DebugLine,
            gimli::SectionId::DebugStr,
            gimli::SectionId::DebugLineStr,
            gimli::SectionId::DebugStrOffsets,
            gimli::SectionId::DebugAddr,
        ] {
            if let Some(data) = section(id.name()) {
                bufs.insert(id.name(), data);
            }
        }
        let dwarf = gimli::Dwarf::load(|id| -> gimli::Result<R> { Ok(EndianSlice::new(bufs.get(id.name()).map(|v| &v[..]).unwrap_or(&[]), LittleEndian)) })?;
        let mut units = dwarf.units();
        while let Some(header) = units.next()? {
            let unit = dwarf.unit(header)?;
            let Some(program) = unit.line_program.clone() else { continue };
            let t = self.tables.len();
            self.tables.push(read_table(&dwarf, &unit, program)?);
            self.read_vars(&dwarf, &unit, t)?;
        }
        Ok(())
    }

    fn read_vars(&mut self, dwarf: &gimli::Dwarf<R>, unit: &gimli::Unit<R>, t: usize) -> gimli::Result<()> {
        let mut entries = unit.entries();
        while let Some((_, e)) = entries.next_dfs()? {
            if e.tag() != gimli::DW_TAG_variable {
                continue;
            }
            let external = matches!(e.attr_value(gimli::DW_AT_external)?, Some(gimli::AttributeValue::Flag(true)));
            if !external {
                continue;
            }
            let file = match e.attr_value(gimli::DW_AT_decl_file)? {
                Some(gimli::AttributeValue::FileIndex(i)) => i,
                Some(v) => v.udata_value().unwrap_or(0),
                None => 0,
            };
            if self.tables[t].file(file).is_none() {
                continue;
            }
            let line = e.attr_value(gimli::DW_AT_decl_line)?.and_then(|v| v.udata_value()).unwrap_or(0);
            let mut name = None;
            for at in [gimli::DW_AT_linkage_name, gimli::DW_AT_name] {
                if let Some(v) = e.attr_value(at)? {
                    if let Ok(s) = dwarf.attr_string(unit, v) {
                        name = Some(s.to_slice()?.into_owned());
                        break;
                    }
                }
            }
            if let Some(n) = name.filter(|n| !n.is_empty()) {
                self.vars.entry(n).or_insert((t, file, line));
            }
        }
        Ok(())
    }
}

/// The files and sequences of one unit's line program; paths as LLVM's `AbsoluteFilePath`
/// without a compilation directory: the file's name under its include directory.
fn read_table(dwarf: &gimli::Dwarf<R>, unit: &gimli::Unit<R>, program: gimli::IncompleteLineProgram<R>) -> gimli::Result<Table> {
    let header = program.header();
    let v5 = header.version() >= 5;
    let string = |v: gimli::AttributeValue<R>| -> Option<String> {
        let s = dwarf.attr_string(unit, v).ok()?;
        Some(String::from_utf8_lossy(&s.to_slice().ok()?).into_owned())
    };
    let dirs: Vec<Option<String>> = header.include_directories().iter().map(|d| string(*d)).collect();
    let files = header
        .file_names()
        .iter()
        .map(|f| {
            let name = string(f.path_name())?;
            if name.starts_with('/') {
                return Some(name);
            }
            let di = f.directory_index();
            let dir = if v5 { dirs.get(di as usize) } else { di.checked_sub(1).and_then(|k| dirs.get(k as usize)) };
            Some(match dir.and_then(|d| d.as_deref()).filter(|d| !d.is_empty()) {
                Some(d) if d.ends_with('/') => format!("{d}{name}"),
                Some(d) => format!("{d}/{name}"),
                None => name,
            })
        })
        .collect();
    let mut seqs = Vec::new();
    let mut rows = program.rows();
    let mut cur: Vec<(u64, u64, u64)> = Vec::new();
    while let Some((_, row)) = rows.next_row()? {
        let addr = row.address();
        if row.end_sequence() {
            if let Some(&(first, _, _)) = cur.first() {
                let shndx = (first >> SEC_SHIFT) as u32;
                let mask = (1u64 << SEC_SHIFT) - 1;
                let shndx = if shndx == 0 { u32::MAX } else { shndx - 1 };
                let low = first & mask;
                let high = addr & mask;
                if low < high {
                    let rows = cur.iter().map(|&(a, f, l)| (a & mask, f, l)).collect();
                    seqs.push(Seq { shndx, low, high, rows });
                }
            }
            cur.clear();
            continue;
        }
        cur.push((addr, row.file_index(), row.line().map(|l| l.get()).unwrap_or(0)));
    }
    Ok(Table { files, first_file: if v5 { 0 } else { 1 }, seqs })
}
