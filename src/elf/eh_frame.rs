//! `.eh_frame` records: an input `.eh_frame` section is a sequence of CIEs and FDEs, each with a
//! length header. Liveness reads them (personality routines, LSDAs) and layout copies the ones
//! whose function survives, so both split the section the same way here.

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

/// What is wrong with a malformed `.eh_frame`, and the offset of the record (lld reports both:
/// `corrupted .eh_frame: <msg>` / `>>> defined in <file>:(.eh_frame+0x<offset>)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Corrupt {
    pub msg: String,
    pub offset: u64,
}

impl Corrupt {
    /// lld's message for this problem in `file`.
    pub fn message(&self, file: &str) -> String {
        format!("corrupted .eh_frame: {}\n>>> defined in {file}:(.eh_frame+0x{:x})", self.msg, self.offset)
    }
}

/// Splits an `.eh_frame` section into records, with lld's messages for malformed ones.
pub fn split(d: &[u8]) -> std::result::Result<Vec<Record>, Corrupt> {
    let mut out = Vec::new();
    let mut off = 0usize;
    while off < d.len() {
        let bad = |msg: &str| Err(Corrupt { msg: msg.to_string(), offset: off as u64 });
        if off + 4 > d.len() {
            return bad("CIE/FDE too small");
        }
        let len = u32::from_le_bytes(d[off..off + 4].try_into().unwrap()) as usize;
        if len == 0 {
            out.push(Record { offset: off as u64, len: 4, is_cie: true, cie_offset: 0 });
            break;
        }
        if len == 0xffff_ffff {
            return bad("CIE/FDE too large");
        }
        let total = len + 4;
        if off + total > d.len() {
            return bad("CIE/FDE ends past the end of the section");
        }
        if len < 4 {
            // Too short to hold its CIE id / CIE pointer.
            return bad("CIE is too small");
        }
        let id = u32::from_le_bytes(d[off + 4..off + 8].try_into().unwrap()) as usize;
        if id == 0 {
            out.push(Record { offset: off as u64, len: total as u64, is_cie: true, cie_offset: 0 });
        } else {
            let Some(cie) = (off + 4).checked_sub(id) else { return bad("invalid CIE reference") };
            out.push(Record { offset: off as u64, len: total as u64, is_cie: false, cie_offset: cie as u64 });
        }
        off += total;
    }
    Ok(out)
}

/// The pointer encoding of the FDEs that use CIE `rec` (the whole record, length field
/// included), read the way lld's `EhReader::getFdeEncoding` reads it when it builds
/// `.eh_frame_hdr`, and with its errors: a CIE lld cannot read is an error, not a silently
/// wrong `.eh_frame_hdr`. Offsets in the error are relative to the record.
pub fn fde_encoding(rec: &[u8]) -> std::result::Result<u8, Corrupt> {
    let fail = |msg: String, at: usize| Err(Corrupt { msg, offset: at as u64 });
    let byte = |p: &mut usize| -> std::result::Result<u8, Corrupt> {
        match rec.get(*p) {
            Some(&b) => {
                *p += 1;
                Ok(b)
            }
            None => Err(Corrupt { msg: "unexpected end of CIE".into(), offset: *p as u64 }),
        }
    };
    let leb = |p: &mut usize| -> std::result::Result<(), Corrupt> {
        let start = *p;
        while let Some(&b) = rec.get(*p) {
            *p += 1;
            if b & 0x80 == 0 {
                return Ok(());
            }
        }
        Err(Corrupt { msg: "corrupted CIE".into(), offset: start as u64 })
    };
    // Length, CIE id.
    if rec.len() < 8 {
        return fail("CIE is too small".into(), 0);
    }
    let mut p = 8;
    let version = byte(&mut p)?;
    if version != 1 && version != 3 {
        return fail(format!("FDE version 1 or 3 expected, but got {version}"), p - 1);
    }
    let aug_start = p;
    let Some(nul) = rec[p..].iter().position(|&b| b == 0) else {
        return fail("corrupted CIE (failed to read string)".into(), p);
    };
    let aug = &rec[p..p + nul];
    p += nul + 1;
    // Code and data alignment factors, the return address register (a byte in version 1).
    leb(&mut p)?;
    leb(&mut p)?;
    if version == 1 {
        byte(&mut p)?;
    } else {
        leb(&mut p)?;
    }
    for &c in aug {
        match c {
            b'R' => return byte(&mut p),
            b'z' => leb(&mut p)?,
            b'L' => {
                byte(&mut p)?;
            }
            b'P' => {
                let enc = byte(&mut p)?;
                if enc & 0xf0 == 0x50 {
                    return fail("DW_EH_PE_aligned encoding is not supported".into(), p - 1);
                }
                let size = match enc & 0x0f {
                    0x00 | 0x08 | 0x04 | 0x0c => 8,
                    0x02 | 0x0a => 2,
                    0x03 | 0x0b => 4,
                    _ => return fail("unknown FDE encoding".into(), p - 1),
                };
                if size >= rec.len() - p {
                    return fail("corrupted CIE".into(), p - 1);
                }
                p += size;
            }
            b'B' | b'S' | b'G' => {}
            _ => return fail(format!("unknown .eh_frame augmentation string: {}", String::from_utf8_lossy(aug)), aug_start),
        }
    }
    Ok(0) // DW_EH_PE_absptr
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
        assert_eq!(split(&[1, 0]).unwrap_err().msg, "CIE/FDE too small");
        assert_eq!(split(&100u32.to_le_bytes()).unwrap_err().msg, "CIE/FDE ends past the end of the section");
        assert_eq!(split(&u32::MAX.to_le_bytes()).unwrap_err().msg, "CIE/FDE too large");
        let mut d = vec![12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0];
        assert_eq!(split(&d).unwrap_err(), Corrupt { msg: "CIE is too small".into(), offset: 16 });
        d.truncate(17);
        assert_eq!(split(&d).unwrap_err().message("a.o"), "corrupted .eh_frame: CIE/FDE too small\n>>> defined in a.o:(.eh_frame+0x10)");
    }

    #[test]
    fn cie_checks_as_lld() {
        // length, id 0, version 1, "zR", code align 1, data align -8, RA 16, aug len 1, pcrel|sdata4.
        let good = [20, 0, 0, 0, 0, 0, 0, 0, 1, b'z', b'R', 0, 1, 0x78, 16, 1, 0x1b, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(fde_encoding(&good), Ok(0x1b));
        let msg = |r: &[u8]| fde_encoding(r).unwrap_err();
        assert_eq!(msg(&good[..8]), Corrupt { msg: "unexpected end of CIE".into(), offset: 8 });
        let mut v2 = good;
        v2[8] = 2;
        assert_eq!(msg(&v2).msg, "FDE version 1 or 3 expected, but got 2");
        assert_eq!(msg(&good[..11]), Corrupt { msg: "corrupted CIE (failed to read string)".into(), offset: 9 });
        let mut unknown = good;
        unknown[10] = b'X';
        assert_eq!(msg(&unknown).msg, "unknown .eh_frame augmentation string: zX");
        let aligned = [0, 0, 0, 0, 0, 0, 0, 0, 1, b'P', 0, 1, 1, 1, 0x50, 0, 0];
        assert_eq!(msg(&aligned).msg, "DW_EH_PE_aligned encoding is not supported");
        let unterminated_leb = [0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0x80, 0x80];
        assert_eq!(msg(&unterminated_leb), Corrupt { msg: "corrupted CIE".into(), offset: 10 });
    }
}
