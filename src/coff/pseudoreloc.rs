//! MinGW runtime pseudo relocations: data imported from a DLL by code that did not say
//! `dllimport`.
//!
//! When `foo` is undefined but `__imp_foo` exists, the resolver binds `foo` to the IAT slot and
//! marks it (lld's `handleMinGWAutomaticImport`). Every relocation against such a symbol then
//! points at the slot, and the MinGW runtime (`_pei386_runtime_relocator`) rewrites each site at
//! start-up from the table built here: a version-1 header (0, 0, 1) and one
//! (symbol RVA, site RVA, width in bits) triple per site, bracketed by
//! `__RUNTIME_PSEUDO_RELOC_LIST__` and `__RUNTIME_PSEUDO_RELOC_LIST_END__`.

/// One site: the IAT slot's RVA, the patched field's RVA, its width in bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PseudoReloc {
    pub sym_rva: u32,
    pub target_rva: u32,
    pub bits: u32,
}

/// Size of the table for `n` sites (empty when there are none, as lld lays it out).
pub fn table_size(n: usize) -> u32 {
    if n == 0 {
        0
    } else {
        12 + 12 * n as u32
    }
}

/// The table's bytes.
pub fn table(relocs: &[PseudoReloc]) -> Vec<u8> {
    if relocs.is_empty() {
        return Vec::new();
    }
    let mut v = Vec::with_capacity(12 + 12 * relocs.len());
    for w in [0u32, 0, 1] {
        v.extend_from_slice(&w.to_le_bytes());
    }
    for r in relocs {
        for w in [r.sym_rva, r.target_rva, r.bits] {
            v.extend_from_slice(&w.to_le_bytes());
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout() {
        assert_eq!(table_size(0), 0);
        let t = table(&[PseudoReloc { sym_rva: 0x10, target_rva: 0x20, bits: 64 }]);
        assert_eq!(t.len(), 24);
        assert_eq!(&t[8..12], &1u32.to_le_bytes());
        assert_eq!(&t[20..24], &64u32.to_le_bytes());
    }
}
