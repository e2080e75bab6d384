//! The PDB's public symbols: the `S_PUB32` records in the symbol record stream, the publics
//! stream (a name hash table over them plus an address map) and the globals stream (the same
//! hash table over the global records: data, constants, typedefs, procedure references). lld emits a public for every live external definition;
//! debuggers find functions and data by name through the hash table and by address through
//! the address map.

use super::strtab::hash_v1;

/// The hash table's bucket count (Microsoft's `IPHR_HASH`).
const IPHR_HASH: usize = 4096;
const S_PUB32: u16 = 0x110e;
const PUB_FUNCTION: u32 = 2;

/// One public symbol: its name, whether it is a function, and its section:offset.
pub struct Public {
    pub name: Vec<u8>,
    pub function: bool,
    pub segment: u16,
    pub offset: u32,
}

/// The three streams built here.
pub struct Streams {
    pub sym_records: Vec<u8>,
    pub publics: Vec<u8>,
    pub globals: Vec<u8>,
}

/// Builds the record stream (publics sorted by name, as LLVM writes them, then the global
/// records in the order given, repeated `S_UDT`/`S_CONSTANT` records once), the publics
/// stream and the globals stream.
pub fn build(mut publics: Vec<Public>, globals: &[Vec<u8>]) -> Streams {
    publics.sort_by(|a, b| a.name.cmp(&b.name));
    let mut records = Vec::new();
    let mut offsets = Vec::with_capacity(publics.len());
    for p in &publics {
        offsets.push(records.len() as u32);
        let len = (14 + p.name.len() + 1).next_multiple_of(4);
        records.extend_from_slice(&((len - 2) as u16).to_le_bytes());
        records.extend_from_slice(&S_PUB32.to_le_bytes());
        records.extend_from_slice(&(if p.function { PUB_FUNCTION } else { 0 }).to_le_bytes());
        records.extend_from_slice(&p.offset.to_le_bytes());
        records.extend_from_slice(&p.segment.to_le_bytes());
        records.extend_from_slice(&p.name);
        records.resize(offsets[offsets.len() - 1] as usize + len, 0);
    }
    let names: Vec<&[u8]> = publics.iter().map(|p| p.name.as_slice()).collect();
    let hash = hash_table(&names, &offsets);
    let mut by_addr: Vec<usize> = (0..publics.len()).collect();
    by_addr.sort_by(|&a, &b| {
        let (x, y) = (&publics[a], &publics[b]);
        (x.segment, x.offset, &x.name).cmp(&(y.segment, y.offset, &y.name))
    });
    let mut pubs = Vec::new();
    for v in [hash.len() as u32, 4 * publics.len() as u32, 0, 0] {
        pubs.extend_from_slice(&v.to_le_bytes());
    }
    pubs.extend_from_slice(&[0; 4]); // thunk table section, padding
    pubs.extend_from_slice(&[0; 8]); // thunk table offset, section count
    pubs.extend_from_slice(&hash);
    for i in by_addr {
        pubs.extend_from_slice(&offsets[i].to_le_bytes());
    }
    let mut seen: std::collections::HashSet<&[u8]> = std::collections::HashSet::new();
    let mut gnames: Vec<&[u8]> = Vec::new();
    let mut goffsets: Vec<u32> = Vec::new();
    for g in globals {
        let kind = u16::from_le_bytes([g[2], g[3]]);
        if (kind == super::cv::S_UDT || kind == super::cv::S_CONSTANT) && !seen.insert(g.as_slice()) {
            continue;
        }
        goffsets.push(records.len() as u32);
        gnames.push(super::cv::symbol_name(g));
        records.extend_from_slice(g);
    }
    Streams { sym_records: records, publics: pubs, globals: hash_table(&gnames, &goffsets) }
}

/// LLVM's `gsiRecordCmp`: shorter names first, then ASCII case-insensitively (bytewise when
/// either is not ASCII).
fn gsi_cmp(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    if a.len() != b.len() {
        return a.len().cmp(&b.len());
    }
    if !a.is_ascii() || !b.is_ascii() {
        return a.cmp(b);
    }
    a.iter().map(u8::to_ascii_lowercase).cmp(b.iter().map(u8::to_ascii_lowercase))
}

/// A GSI hash table over records named `names` at `offsets` in the record stream: header,
/// the hash records bucket by bucket, the bitmap of used buckets and each used bucket's start.
fn hash_table(names: &[&[u8]], offsets: &[u32]) -> Vec<u8> {
    let mut buckets: Vec<Vec<usize>> = vec![Vec::new(); IPHR_HASH];
    for (i, n) in names.iter().enumerate() {
        buckets[hash_v1(n) as usize % IPHR_HASH].push(i);
    }
    let mut records = Vec::new();
    let mut bitmap = vec![0u32; (IPHR_HASH + 32) / 32];
    let mut starts = Vec::new();
    for (b, members) in buckets.iter_mut().enumerate() {
        if members.is_empty() {
            continue;
        }
        members.sort_by(|&x, &y| gsi_cmp(names[x], names[y]).then(offsets[x].cmp(&offsets[y])));
        bitmap[b / 32] |= 1 << (b % 32);
        // Chain starts count 12-byte records (the in-memory size on 32-bit hosts).
        starts.push((records.len() / 8 * 12) as u32);
        for &i in members.iter() {
            records.extend_from_slice(&(offsets[i] + 1).to_le_bytes());
            records.extend_from_slice(&1u32.to_le_bytes());
        }
    }
    let mut out = Vec::new();
    let tail = 4 * (bitmap.len() + starts.len());
    for v in [0xffff_ffffu32, 0xeffe_0000 + 19990810, records.len() as u32, tail as u32] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&records);
    for w in bitmap.into_iter().chain(starts) {
        out.extend_from_slice(&w.to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn publics_sorted_and_padded() {
        let p = |n: &str, off| Public { name: n.as_bytes().to_vec(), function: true, segment: 1, offset: off };
        let s = build(vec![p("main", 0x10), p("f", 0)], &[]);
        // "f" first (name order), 14 + 2 bytes padded to 16.
        assert_eq!(&s.sym_records[0..4], &[14, 0, 0x0e, 0x11]);
        assert_eq!(s.sym_records.len(), 16 + 20);
        // Address map: f (offset 0) then main.
        let map = &s.publics[s.publics.len() - 8..];
        assert_eq!(map, &[0, 0, 0, 0, 16, 0, 0, 0]);
    }

    #[test]
    fn gsi_order() {
        assert!(gsi_cmp(b"zz", b"aaa").is_lt());
        assert!(gsi_cmp(b"ABC", b"abd").is_lt());
    }
}
