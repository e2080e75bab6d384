//! PDB string tables: the `/names` stream (file names and other strings other streams refer
//! to by offset) and the DBI stream's EC names, in the layout LLVM's `PDBStringTable` reads:
//! a header, the NUL-terminated strings (offset 0 is the empty string), an open-addressing hash
//! table of their offsets and the string count. Also the PDB's string hash (`hashStringV1`),
//! which the named stream map and the symbol hash tables use too.

/// The PDB string hash (Microsoft's `LHashPbCb`, LLVM's `hashStringV1`): the string's
/// little-endian 32-bit words XORed, then a 16-bit and an 8-bit tail, folded case-insensitively.
pub fn hash_v1(s: &[u8]) -> u32 {
    let mut h: u32 = 0;
    let words = s.len() / 4;
    for w in s[..words * 4].chunks(4) {
        h ^= u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
    }
    let mut rest = &s[words * 4..];
    if rest.len() >= 2 {
        h ^= u16::from_le_bytes([rest[0], rest[1]]) as u32;
        rest = &rest[2..];
    }
    if let Some(&b) = rest.first() {
        h ^= b as u32;
    }
    h |= 0x2020_2020;
    h ^= h >> 11;
    h ^ (h >> 16)
}

/// A string table being built: strings in insertion order, deduplicated.
#[derive(Default)]
pub struct StringTable {
    bytes: Vec<u8>,
    offsets: std::collections::HashMap<Vec<u8>, u32>,
    order: Vec<u32>,
}

impl StringTable {
    pub fn new() -> StringTable {
        StringTable { bytes: vec![0], ..Default::default() }
    }

    /// The offset of `s`, added if new. Offset 0 is an implicit empty string; an explicitly
    /// added empty string gets its own offset, as in LLVM's `DebugStringTableSubsection`
    /// (lld adds one first to its `/names`, as link.exe does).
    pub fn add(&mut self, s: &[u8]) -> u32 {
        if let Some(&o) = self.offsets.get(s) {
            return o;
        }
        let o = self.bytes.len() as u32;
        self.bytes.extend_from_slice(s);
        self.bytes.push(0);
        self.offsets.insert(s.to_vec(), o);
        self.order.push(o);
        o
    }

    /// The serialized table: header (signature, hash version 1, string bytes), strings, the
    /// bucket array (linear probing on `hash_v1 % buckets`) and the string count.
    pub fn serialize(&self) -> Vec<u8> {
        let n = self.order.len();
        let buckets = bucket_count(n);
        let mut table = vec![0u32; buckets];
        for &o in &self.order {
            let s = self.string_at(o);
            let mut i = hash_v1(s) as usize % buckets;
            while table[i] != 0 {
                i = (i + 1) % buckets;
            }
            table[i] = o;
        }
        let mut out = Vec::with_capacity(self.bytes.len() + 4 * buckets + 20);
        out.extend_from_slice(&0xEFFE_EFFEu32.to_le_bytes());
        out.extend_from_slice(&1u32.to_le_bytes());
        out.extend_from_slice(&(self.bytes.len() as u32).to_le_bytes());
        out.extend_from_slice(&self.bytes);
        out.extend_from_slice(&(buckets as u32).to_le_bytes());
        for b in table {
            out.extend_from_slice(&b.to_le_bytes());
        }
        out.extend_from_slice(&(n as u32).to_le_bytes());
        out
    }

    fn string_at(&self, o: u32) -> &[u8] {
        let rest = &self.bytes[o as usize..];
        &rest[..rest.iter().position(|&b| b == 0).unwrap_or(rest.len())]
    }
}

/// Buckets for `n` strings: the reference implementation's growth (`NMT::grow`: from one
/// bucket, ×3/2+1 whenever 3/4 of them are used), as LLVM's precomputed table.
fn bucket_count(n: usize) -> usize {
    // LLVM looks up the first (count, buckets) growth point with count >= n.
    let (mut b, mut c) = (1usize, 0usize);
    if n == 0 {
        return 1;
    }
    loop {
        c += 1;
        if b * 3 / 4 < c {
            b = b * 3 / 2 + 1;
            if c >= n {
                return b;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_folds_case() {
        // The hash is case-insensitive for ASCII letters (LLVM's toLowerMask).
        assert_eq!(hash_v1(b"Main.Obj"), hash_v1(b"main.obj"));
        assert_ne!(hash_v1(b"main.obj"), hash_v1(b"main.obk"));
    }

    #[test]
    fn table_roundtrip_offsets() {
        let mut t = StringTable::new();
        assert_eq!(t.add(b"a.c"), 1);
        assert_eq!(t.add(b"b.c"), 5);
        assert_eq!(t.add(b"a.c"), 1);
        assert_eq!(t.add(b""), 9);
        let s = t.serialize();
        assert_eq!(&s[0..4], &0xEFFE_EFFEu32.to_le_bytes());
        assert_eq!(u32::from_le_bytes(s[8..12].try_into().unwrap()), 10);
        assert_eq!(u32::from_le_bytes(s[s.len() - 4..].try_into().unwrap()), 3);
        assert_eq!([0, 1, 2, 3, 4, 5, 6, 9, 13].map(bucket_count), [1, 2, 4, 7, 7, 11, 11, 17, 26]);
    }
}
