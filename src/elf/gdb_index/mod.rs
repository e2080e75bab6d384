//! `--gdb-index`: the `.gdb_index` section (version 7) that lets gdb find a function, type or
//! address without reading every unit's DWARF first. Built as lld's `GdbIndexSection`, so the
//! bytes are lld's:
//!
//! - one chunk per object whose `.debug_info` is in the output, in input order, read in
//!   parallel (`read`): its units (offset in the output `.debug_info`, length), the address
//!   ranges of each unit (in sections that are in the output; ICF-folded ones at the address of
//!   the section kept) and the names of `.debug_gnu_pubnames` / `.debug_gnu_pubtypes`, which
//!   are then left out of the output;
//! - the names made unique in 32 shards by the top bits of gdb's hash (in parallel), each name
//!   with the vector of `kind << 24 | unit index` of every set naming it;
//! - the section: header, unit list, address area, an open-addressing hash table of at least
//!   1024 slots (75% full at most), then the constant pool (every unit vector, then every
//!   name).
//!
//! Sizes are decided with the other synthetic sections; the writer fills in the addresses.

pub(crate) mod read;

pub use read::GdbIndex;
use read::{Chunk, GdbSymbol};

use rayon::prelude::*;

use crate::elf::gc::Live;
use crate::elf::layout::model::Layout;
use crate::elf::object::SecKind;
use crate::elf::symtab::{File, FileId, Resolved};
use crate::error::{Error, Result};

const HEADER: u64 = 24;
const SHARDS: usize = 32;

/// `.debug_gnu_pubnames` and `.debug_gnu_pubtypes` serve only the index: with `--gdb-index`
/// they are not copied to the output (lld).
pub fn drop_pub_sections(r: &Resolved, live: &mut Live) {
    for (f, file) in r.files.iter().enumerate() {
        let File::Obj(o) = file else { continue };
        for (i, s) in o.sections.iter().enumerate() {
            if s.name == b".debug_gnu_pubnames" || s.name == b".debug_gnu_pubtypes" {
                if let Some(v) = live.get_mut(f).and_then(|v| v.get_mut(i)) {
                    *v = false;
                }
            }
        }
    }
}

/// Reads every object's DWARF and adds the `.gdb_index` output section (none when no object
/// has a `.debug_info` in the output).
pub fn create(l: &mut Layout) -> Result<()> {
    let r = l.r;
    let in_output = |f: FileId, i: usize| l.sec_osec[f].get(i).is_some_and(|&o| o != u32::MAX);
    let files: Vec<FileId> = (0..r.files.len())
        .filter(|&f| match &r.files[f] {
            File::Obj(o) => r.loaded[f] && o.sections.iter().enumerate().any(|(i, s)| s.name == b".debug_info" && in_output(f, i)),
            _ => false,
        })
        .collect();
    if files.is_empty() {
        return Ok(());
    }
    let read: Vec<read::ObjIndex> = files.par_iter().map(|&f| read::read_object(r, f, r.obj(f))).collect();
    let mut chunks = Vec::with_capacity(files.len());
    let mut names = Vec::with_capacity(files.len());
    for (&f, mut o) in files.iter().zip(read) {
        for w in &o.warnings {
            l.config.diag.warn(w);
        }
        let obj = r.obj(f);
        o.areas.retain(|a| obj.sections.get(a.sec as usize).is_some_and(|s| s.kind == SecKind::Regular) && in_output(f, a.sec as usize));
        chunks.push(Chunk { file: f, info_sec: o.info_sec, cus: o.cus, areas: o.areas });
        names.push(o.names);
    }
    let (symbols, pool) = create_symbols(&chunks, &names);
    if pool > u32::MAX as u64 {
        return Err(Error::new(format!("--gdb-index: constant pool size ({pool}) exceeds UINT32_MAX")));
    }
    let mut size = HEADER + symtab_size(symbols.len()) as u64 * 8 + pool;
    for c in &chunks {
        size += c.cus.len() as u64 * 16 + c.areas.len() as u64 * 20;
    }
    l.gdb_index = Some(GdbIndex { chunks, symbols, size });
    Ok(())
}

/// Slots of the hash table: at least 1024, a power of two above 4/3 of the names.
fn symtab_size(n: usize) -> usize {
    ((n * 4 / 3) + 1).next_power_of_two().max(1024)
}

/// The names made unique, shard by shard (the top five bits of the hash), each shard in the
/// order names first appear; and the size of the constant pool.
fn create_symbols(chunks: &[Chunk], names: &[Vec<read::NameEntry>]) -> (Vec<GdbSymbol>, u64) {
    let mut shards: Vec<Vec<(&read::NameEntry, u32)>> = vec![Vec::new(); SHARDS];
    let mut cu_base = 0u32;
    for (c, entries) in chunks.iter().zip(names) {
        for e in entries {
            shards[(e.hash >> 27) as usize].push((e, e.value.wrapping_add(cu_base)));
        }
        cu_base += c.cus.len() as u32;
    }
    let per_shard: Vec<Vec<GdbSymbol>> = shards
        .into_par_iter()
        .map(|entries| {
            let mut index: std::collections::HashMap<&[u8], usize> = Default::default();
            let mut syms: Vec<GdbSymbol> = Vec::new();
            for (e, v) in entries {
                match index.entry(e.name) {
                    std::collections::hash_map::Entry::Occupied(o) => syms[*o.get()].cu_vector.push(v),
                    std::collections::hash_map::Entry::Vacant(slot) => {
                        slot.insert(syms.len());
                        syms.push(GdbSymbol { name: e.name, hash: e.hash, cu_vector: vec![v], cu_vector_off: 0, name_off: 0 });
                    }
                }
            }
            syms
        })
        .collect();
    let mut symbols: Vec<GdbSymbol> = per_shard.into_iter().flatten().collect();
    // Unit vectors, then names, in the constant pool.
    let mut off = 0u64;
    for s in &mut symbols {
        s.cu_vector_off = off as u32;
        off += (s.cu_vector.len() as u64 + 1) * 4;
    }
    for s in &mut symbols {
        s.name_off = off as u32;
        off += s.name.len() as u64 + 1;
    }
    (symbols, off)
}

fn put32(buf: &mut [u8], at: usize, v: u32) {
    buf[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn put64(buf: &mut [u8], at: usize, v: u64) {
    buf[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// Writes the section (exactly `size` bytes) once addresses are final.
pub fn write(l: &Layout, buf: &mut [u8]) {
    let Some(g) = &l.gdb_index else { return };
    buf.fill(0);
    put32(buf, 0, 7);
    let mut p = HEADER as usize;
    put32(buf, 4, p as u32);
    for c in &g.chunks {
        let base = c.info_sec.map_or(0, |s| l.sec_off[c.file][s as usize]);
        for &(off, len) in &c.cus {
            put64(buf, p, base + off);
            put64(buf, p + 8, len);
            p += 16;
        }
    }
    put32(buf, 8, p as u32);
    put32(buf, 12, p as u32);
    let mut cu_base = 0u32;
    for c in &g.chunks {
        for a in &c.areas {
            let at = l.section_addr(c.file, a.sec, 0).unwrap_or(0);
            put64(buf, p, at.wrapping_add(a.low));
            put64(buf, p + 8, at.wrapping_add(a.high));
            put32(buf, p + 16, a.cu + cu_base);
            p += 20;
        }
        cu_base += c.cus.len() as u32;
    }
    put32(buf, 16, p as u32);
    let slots = symtab_size(g.symbols.len());
    let mask = slots as u32 - 1;
    let table = &mut buf[p..p + slots * 8];
    for s in &g.symbols {
        let mut i = s.hash & mask;
        let step = (s.hash.wrapping_mul(17) & mask) | 1;
        while table[i as usize * 8..i as usize * 8 + 4] != [0; 4] {
            i = (i + step) & mask;
        }
        put32(table, i as usize * 8, s.name_off);
        put32(table, i as usize * 8 + 4, s.cu_vector_off);
    }
    p += slots * 8;
    put32(buf, 20, p as u32);
    let pool = &mut buf[p..];
    for s in &g.symbols {
        let at = s.cu_vector_off as usize;
        put32(pool, at, s.cu_vector.len() as u32);
        for (k, v) in s.cu_vector.iter().enumerate() {
            put32(pool, at + 4 + 4 * k, *v);
        }
        let n = s.name_off as usize;
        pool[n..n + s.name.len()].copy_from_slice(s.name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_size_is_lld_s() {
        assert_eq!(symtab_size(0), 1024);
        assert_eq!(symtab_size(767), 1024);
        // 768 * 4 / 3 = 1024: LLVM's NextPowerOf2 is strictly above, 2048.
        assert_eq!(symtab_size(768), 2048);
        assert_eq!(symtab_size(3072), 8192);
    }
}
