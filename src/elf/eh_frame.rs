//! `.eh_frame` records: an input `.eh_frame` section is a sequence of CIEs and FDEs, each with a
//! length header. Liveness reads them (personality routines, LSDAs) and layout copies the ones
//! whose function survives, so both split the section the same way here.

use crate::error::{Error, Result};

/// One CIE or FDE of an input `.eh_frame` section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    /// Offset of the record (its length field) in the section.
    pub offset: u64,
    /// Length including the 4-byte length field (4 for the zero terminator).
    pub len: u64,
    pub is_cie: bool,
    /// For an FDE: the offset of the CIE it refers to.
    pub cie_offset: u64,
}

impl Record {
    /// The zero-length record some producers put at the end.
    pub fn is_terminator(&self) -> bool {
        self.len == 4
    }
}

/// Splits an `.eh_frame` section into records, with lld's messages for malformed ones.
pub fn split(d: &[u8]) -> Result<Vec<Record>> {
    let mut out = Vec::new();
    let mut off = 0usize;
    while off < d.len() {
        if off + 4 > d.len() {
            return Err(Error::new("CIE/FDE too small"));
        }
        let len = u32::from_le_bytes(d[off..off + 4].try_into().unwrap()) as usize;
        if len == 0 {
            out.push(Record { offset: off as u64, len: 4, is_cie: true, cie_offset: 0 });
            break;
        }
        if len == 0xffff_ffff {
            return Err(Error::new("CIE/FDE too large"));
        }
        let total = len + 4;
        if off + total > d.len() || len < 4 {
            return Err(Error::new("CIE/FDE ends past the end of the section"));
        }
        let id = u32::from_le_bytes(d[off + 4..off + 8].try_into().unwrap()) as usize;
        if id == 0 {
            out.push(Record { offset: off as u64, len: total as u64, is_cie: true, cie_offset: 0 });
        } else {
            let cie = (off + 4).checked_sub(id).ok_or_else(|| Error::new("invalid CIE reference"))?;
            out.push(Record { offset: off as u64, len: total as u64, is_cie: false, cie_offset: cie as u64 });
        }
        off += total;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_cie_fde_and_terminator() {
        let mut d = Vec::new();
        // CIE: length 12, id 0, 8 bytes of body.
        d.extend_from_slice(&12u32.to_le_bytes());
        d.extend_from_slice(&0u32.to_le_bytes());
        d.extend_from_slice(&[0; 8]);
        // FDE at 16: length 12, CIE pointer = 20 (distance from its own field at 20 to 0).
        d.extend_from_slice(&12u32.to_le_bytes());
        d.extend_from_slice(&20u32.to_le_bytes());
        d.extend_from_slice(&[0; 8]);
        d.extend_from_slice(&0u32.to_le_bytes());
        let r = split(&d).unwrap();
        assert_eq!(r.len(), 3);
        assert!(r[0].is_cie && r[0].len == 16);
        assert!(!r[1].is_cie && r[1].offset == 16 && r[1].cie_offset == 0);
        assert!(r[2].is_terminator());
    }

    #[test]
    fn rejects_truncated() {
        assert!(split(&[1, 0]).is_err());
        assert!(split(&100u32.to_le_bytes()).is_err());
    }
}
