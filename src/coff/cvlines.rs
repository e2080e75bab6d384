//! Source positions from an object's CodeView line tables, for diagnostics (lld's
//! `getFileLineCodeView`): `>>> referenced by file.cpp:12`. A `.debug$S` line table names its
//! code by a SECREL relocation against a symbol of the section; the table covering the
//! address gives the line of the last entry at or before it, the file through the checksum
//! table and the string table of the same object.

use object::LittleEndian as LE;

use super::object::ObjFile;

fn u32_at(b: &[u8], o: usize) -> Option<u32> {
    b.get(o..o + 4).map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

const SECREL: u16 = 0x0B;

/// The file name and line of offset `addr` in section `sec` (1-based) of `obj`.
pub fn file_line(obj: &ObjFile, sec: u32, addr: u32) -> Option<(String, u32)> {
    let mut strtab: Option<&[u8]> = None;
    let mut checksums: Option<&[u8]> = None;
    let mut lines: Option<(&[u8], u32)> = None;
    for s in obj.sections.iter().filter(|s| s.name == ".debug$S") {
        // SECREL relocations against symbols of `sec`: offset in the debug section → value.
        let secrels: Vec<(u32, u32)> = s
            .relocs
            .iter()
            .filter(|r| r.typ.get(LE) == SECREL)
            .filter_map(|r| {
                let sym = obj.symbols.get(r.symbol_table_index.get(LE) as usize)?;
                (sym.section == sec as i32 && !sym.is_aux).then_some((r.virtual_address.get(LE), sym.value))
            })
            .collect();
        let d = s.data;
        if u32_at(d, 0) != Some(4) {
            continue;
        }
        let mut p = 4;
        while p + 8 <= d.len() {
            let kind = u32_at(d, p)?;
            let len = u32_at(d, p + 4)? as usize;
            let body = d.get(p + 8..(p + 8 + len).min(d.len()))?;
            match kind {
                0xf3 => strtab = strtab.or(Some(body)),
                0xf4 => checksums = checksums.or(Some(body)),
                0xf2 if lines.is_none() => {
                    let at = (p + 8) as u32;
                    if let Some(&(_, value)) = secrels.iter().find(|(va, _)| *va == at) {
                        let start = value.wrapping_add(u32_at(body, 0)?);
                        let size = u32_at(body, 8)?;
                        if addr >= start && addr < start.wrapping_add(size) {
                            lines = Some((body, addr - start));
                        }
                    }
                }
                _ => {}
            }
            if strtab.is_some() && checksums.is_some() && lines.is_some() {
                break;
            }
            p = (p + 8 + len).next_multiple_of(4);
        }
        if strtab.is_some() && checksums.is_some() && lines.is_some() {
            break;
        }
    }
    let (strtab, checksums, (body, offset)) = (strtab?, checksums?, lines?);
    let mut found: Option<(u32, u32)> = None;
    let mut q = 12;
    'blocks: while q + 12 <= body.len() {
        let name_index = u32_at(body, q)?;
        let n = u32_at(body, q + 4)? as usize;
        let block_size = u32_at(body, q + 8)? as usize;
        for i in 0..n {
            let e = q + 12 + 8 * i;
            let (off, flags) = (u32_at(body, e)?, u32_at(body, e + 4)?);
            if off > offset {
                found = Some(found.unwrap_or((name_index, flags & 0xff_ffff)));
                break 'blocks;
            }
            found = Some((name_index, flags & 0xff_ffff));
        }
        q += block_size.max(12);
    }
    let (name_index, line) = found?;
    let name_off = u32_at(checksums, name_index as usize)? as usize;
    let rest = strtab.get(name_off..)?;
    let name = &rest[..rest.iter().position(|&b| b == 0).unwrap_or(rest.len())];
    Some((String::from_utf8_lossy(name).into_owned(), line))
}
