//! Type merging: every object's `.debug$T` records (one index space for types and ids) go
//! into the PDB's two streams, TPI for types and IPI for ids (`LF_FUNC_ID`, `LF_BUILDINFO`,
//! ...), each record once. Records are renumbered as they are copied: a record's type-index
//! fields are rewritten through the map of the records before it, then the rewritten bytes
//! are looked up among the records already merged. The result is the order lld's global-hash
//! merge produces (first occurrence, by object then position). The streams carry LLVM's
//! per-record hashes (`hashTypeRecord`) and an index-offset table every 8 KiB.

use std::collections::HashMap;

use super::cv;
use super::strtab::hash_v1;

/// One merged stream (TPI or IPI).
#[derive(Default)]
pub struct Table {
    records: Vec<Vec<u8>>,
    index: HashMap<Vec<u8>, u32>,
}

impl Table {
    fn insert(&mut self, rec: Vec<u8>) -> u32 {
        if let Some(&i) = self.index.get(&rec) {
            return i;
        }
        let i = 0x1000 + self.records.len() as u32;
        self.index.insert(rec.clone(), i);
        self.records.push(rec);
        i
    }

    pub fn get(&self, ti: u32) -> Option<&[u8]> {
        self.records.get(ti.checked_sub(0x1000)? as usize).map(|r| r.as_slice())
    }
}

#[derive(Default)]
pub struct Merger {
    pub tpi: Table,
    pub ipi: Table,
}

/// An object's map from its type indices (0x1000 + position) to merged ones.
pub struct IndexMap(pub Vec<u32>);

/// `LF_NOTTRANSLATED`: what an index that cannot be mapped becomes.
pub const NOT_TRANSLATED: u32 = 0x0007;

impl IndexMap {
    /// Remaps one index; false (and `NOT_TRANSLATED`) when it is out of range.
    pub fn remap(&self, ti: &mut u32) -> bool {
        if *ti < 0x1000 {
            return true;
        }
        match self.0.get((*ti - 0x1000) as usize) {
            Some(&t) => {
                *ti = t;
                true
            }
            None => {
                *ti = NOT_TRANSLATED;
                false
            }
        }
    }

    /// Rewrites the type-index runs `refs` of the record `rec` (with its 4-byte prefix).
    pub fn remap_record(&self, rec: &mut [u8], refs: &[cv::TiRef]) {
        for r in refs {
            for k in 0..r.count {
                let o = 4 + r.offset + 4 * k;
                let mut ti = cv::u32_at(rec, o);
                self.remap(&mut ti);
                rec[o..o + 4].copy_from_slice(&ti.to_le_bytes());
            }
        }
    }
}

fn is_id_record(kind: u16) -> bool {
    (0x1601..=0x1607).contains(&kind)
}

impl Merger {
    /// Merges one object's `.debug$T` contents (after the 4-byte signature). Errors when the
    /// records cannot be split.
    pub fn merge(&mut self, data: &[u8]) -> Result<IndexMap, String> {
        let recs = cv::records(data).ok_or_else(|| "the .debug$T section is corrupt".to_string())?;
        let mut map = IndexMap(Vec::with_capacity(recs.len()));
        for r in recs {
            let kind = cv::u16_at(r, 2);
            let mut rec = r.to_vec();
            // Records are 4-byte aligned in a PDB: pad with LF_PAD3.. as LLVM does.
            let align = rec.len() % 4;
            if align != 0 {
                for k in align..4 {
                    rec.push(0xf4 - k as u8);
                }
                let len = (rec.len() - 2) as u16;
                rec[0..2].copy_from_slice(&len.to_le_bytes());
            }
            let refs = cv::type_refs(kind, &r[4..]);
            map.remap_record(&mut rec, &refs);
            let ti = if is_id_record(kind) { self.ipi.insert(rec) } else { self.tpi.insert(rec) };
            map.0.push(ti);
        }
        Ok(map)
    }

    /// For an `LF_FUNC_ID`/`LF_MFUNC_ID` id: its function type (how `S_GPROC32_ID` becomes
    /// `S_GPROC32`).
    pub fn func_type(&self, id: u32) -> Option<u32> {
        let r = self.ipi.get(id)?;
        let kind = cv::u16_at(r, 2);
        (r.len() >= 12 && (kind == cv::LF_FUNC_ID || kind == cv::LF_MFUNC_ID)).then(|| cv::u32_at(r, 8))
    }
}

/// CRC-32 (reflected 0xEDB88320) with initial value 0 and no final inversion: LLVM's
/// `JamCRC(0)`, the PDB's `hashBufv8`.
pub fn jam_crc(data: &[u8]) -> u32 {
    let mut crc = 0u32;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    crc
}

fn is_anonymous(name: &[u8]) -> bool {
    name == b"<unnamed-tag>" || name == b"__unnamed" || name.ends_with(b"::<unnamed-tag>") || name.ends_with(b"::__unnamed")
}

/// LLVM's `hashTypeRecord`.
pub fn hash_record(rec: &[u8]) -> u32 {
    let kind = cv::u16_at(rec, 2);
    let c = &rec[4..];
    // (options offset, name offset) for tag records.
    let tag = match kind {
        0x1504 | 0x1505 | 0x1519 => {
            let at = 16;
            Some(at + cv::numeric_len(c.get(at..).unwrap_or(&[])))
        }
        0x1506 => {
            let at = 8;
            Some(at + cv::numeric_len(c.get(at..).unwrap_or(&[])))
        }
        0x1507 => Some(12),
        _ => None,
    };
    if let Some(name_at) = tag {
        let opts = cv::u16_at(c, 2);
        let name = cv::cstr(c.get(name_at..).unwrap_or(&[]));
        let unique = cv::cstr(c.get(name_at + name.len() + 1..).unwrap_or(&[]));
        let forward = opts & 0x80 != 0;
        let scoped = opts & 0x100 != 0;
        let has_unique = opts & 0x200 != 0;
        let anon = has_unique && is_anonymous(name);
        if !forward && !scoped && !anon {
            return hash_v1(name);
        }
        if !forward && has_unique && !anon {
            return hash_v1(unique);
        }
        return jam_crc(rec);
    }
    match kind {
        0x1010 => hash_v1(cv::cstr(c.get(4..).unwrap_or(&[]))), // LF_ALIAS
        0x1606 | 0x1607 => hash_v1(&c[..4.min(c.len())]),
        _ => jam_crc(rec),
    }
}

/// A TPI or IPI stream and its hash stream's contents.
pub fn serialize(t: &Table, hash_stream: u16) -> (Vec<u8>, Vec<u8>) {
    let mut bytes = 0usize;
    let mut offsets: Vec<(u32, u32)> = Vec::new();
    for (i, r) in t.records.iter().enumerate() {
        let new = bytes + r.len();
        if new / 8192 > bytes / 8192 || i == 0 {
            offsets.push((0x1000 + i as u32, bytes as u32));
        }
        bytes = new;
    }
    let hashes: Vec<u32> = t.records.iter().map(|r| hash_record(r) % 0x3ffff).collect();
    let hash_len = 4 * hashes.len() as u32;
    let mut out = Vec::with_capacity(56 + bytes);
    for v in [20040203u32, 56, 0x1000, 0x1000 + t.records.len() as u32, bytes as u32] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&hash_stream.to_le_bytes());
    out.extend_from_slice(&0xffffu16.to_le_bytes());
    // Hash key size, buckets, hash values (offset, length), index offsets, hash adjusters.
    for v in [4u32, 0x3ffff, 0, hash_len, hash_len, 8 * offsets.len() as u32, hash_len, 0] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for r in &t.records {
        out.extend_from_slice(r);
    }
    let mut hs = Vec::new();
    for h in hashes {
        hs.extend_from_slice(&h.to_le_bytes());
    }
    for (ti, off) in offsets {
        hs.extend_from_slice(&ti.to_le_bytes());
        hs.extend_from_slice(&off.to_le_bytes());
    }
    (out, hs)
}

impl Table {
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jam_crc_matches_crc32_without_inversion() {
        // CRC-32 of "123456789" is 0xCBF43926 with init/xorout 0xFFFFFFFF.
        assert_eq!(jam_crc(b""), 0);
        assert_ne!(jam_crc(b"123456789"), 0xCBF43926);
    }

    #[test]
    fn dedup_and_remap() {
        let mut m = Merger::default();
        // LF_POINTER to int (0x74), then LF_MODIFIER of 0x1000, twice over two objects.
        let ptr = [10u8, 0, 0x02, 0x10, 0x74, 0, 0, 0, 0x0c, 0, 1, 0];
        let modi = [10u8, 0, 0x01, 0x10, 0x00, 0x10, 0, 0, 1, 0, 0xf2, 0xf1];
        let mut obj = ptr.to_vec();
        obj.extend_from_slice(&modi);
        let a = m.merge(&obj).unwrap();
        let b = m.merge(&obj).unwrap();
        assert_eq!(a.0, vec![0x1000, 0x1001]);
        assert_eq!(b.0, a.0);
        assert_eq!(m.tpi.records.len(), 2);
    }
}
