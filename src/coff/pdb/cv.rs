//! CodeView record knowledge the PDB writer needs and nothing else does: where type indices
//! sit in type and symbol records (so merged types can be renumbered), which symbol records
//! open and close scopes, which go to the globals stream, and the names of the records the
//! global hash table is keyed on. The layouts are the ones LLVM's `TypeIndexDiscovery` and
//! Microsoft's `cvinfo.h` describe.

pub const S_END: u16 = 0x0006;
pub const S_SKIP: u16 = 0x0007;
pub const S_FRAMEPROC: u16 = 0x1012;
pub const S_OBJNAME: u16 = 0x1101;
pub const S_THUNK32: u16 = 0x1102;
pub const S_BLOCK32: u16 = 0x1103;
pub const S_LABEL32: u16 = 0x1105;
pub const S_REGISTER: u16 = 0x1106;
pub const S_CONSTANT: u16 = 0x1107;
pub const S_UDT: u16 = 0x1108;
pub const S_BPREL32: u16 = 0x110b;
pub const S_LDATA32: u16 = 0x110c;
pub const S_GDATA32: u16 = 0x110d;
pub const S_LPROC32: u16 = 0x110f;
pub const S_GPROC32: u16 = 0x1110;
pub const S_REGREL32: u16 = 0x1111;
pub const S_LTHREAD32: u16 = 0x1112;
pub const S_GTHREAD32: u16 = 0x1113;
pub const S_COMPILE2: u16 = 0x1116;
pub const S_UNAMESPACE: u16 = 0x1124;
pub const S_PROCREF: u16 = 0x1125;
pub const S_LPROCREF: u16 = 0x1127;
pub const S_SEPCODE: u16 = 0x1132;
pub const S_SECTION: u16 = 0x1136;
pub const S_COFFGROUP: u16 = 0x1137;
pub const S_CALLSITEINFO: u16 = 0x1139;
pub const S_FRAMECOOKIE: u16 = 0x113a;
pub const S_COMPILE3: u16 = 0x113c;
pub const S_ENVBLOCK: u16 = 0x113d;
pub const S_LOCAL: u16 = 0x113e;
pub const S_LPROC32_ID: u16 = 0x1146;
pub const S_GPROC32_ID: u16 = 0x1147;
pub const S_BUILDINFO: u16 = 0x114c;
pub const S_INLINESITE: u16 = 0x114d;
pub const S_INLINESITE_END: u16 = 0x114e;
pub const S_PROC_ID_END: u16 = 0x114f;
pub const S_FILESTATIC: u16 = 0x1153;
pub const S_LPROC32_DPC: u16 = 0x1155;
pub const S_LPROC32_DPC_ID: u16 = 0x1156;
pub const S_ARMSWITCHTABLE: u16 = 0x1159;
pub const S_CALLEES: u16 = 0x115a;
pub const S_CALLERS: u16 = 0x115b;
pub const S_INLINESITE2: u16 = 0x115d;
pub const S_HEAPALLOCSITE: u16 = 0x115e;
pub const S_INLINEES: u16 = 0x1168;

pub const LF_FUNC_ID: u16 = 0x1601;
pub const LF_MFUNC_ID: u16 = 0x1602;

/// A run of `count` type indices at `offset` bytes into the record's content (after the
/// 4-byte length and kind). Whether a field names a type or an id does not matter here: an
/// object's types and ids share one index space, mapped by one `IndexMap`.
#[derive(Clone, Copy, Debug)]
pub struct TiRef {
    pub offset: usize,
    pub count: usize,
}

pub fn u16_at(b: &[u8], o: usize) -> u16 {
    b.get(o..o + 2).map_or(0, |s| u16::from_le_bytes([s[0], s[1]]))
}

pub fn u32_at(b: &[u8], o: usize) -> u32 {
    b.get(o..o + 4).map_or(0, |s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

/// Splits a record stream (type or symbol records: 2-byte length, then that many bytes) into
/// records, each with its prefix. `None` if a record runs past the end.
pub fn records(mut data: &[u8]) -> Option<Vec<&[u8]>> {
    let mut out = Vec::new();
    while data.len() >= 4 {
        let len = u16_at(data, 0) as usize + 2;
        if len < 4 || len > data.len() {
            return None;
        }
        out.push(&data[..len]);
        data = &data[len..];
    }
    if !data.is_empty() {
        return None;
    }
    Some(out)
}

/// The length of a numeric leaf at the start of `b` (LLVM's `getEncodedIntegerLength`).
pub fn numeric_len(b: &[u8]) -> usize {
    let n = u16_at(b, 0);
    if n < 0x8000 {
        return 2;
    }
    const SIZES: [usize; 27] = [1, 2, 2, 4, 4, 4, 8, 10, 16, 8, 8, 6, 8, 16, 20, 32, 0, 0, 0, 0, 0, 0, 0, 16, 16, 16, 8];
    match SIZES.get((n - 0x8000) as usize) {
        Some(&s) => 2 + s,
        None => 0,
    }
}

fn cstr_len(b: &[u8]) -> usize {
    b.iter().position(|&c| c == 0).map_or(b.len(), |p| p + 1)
}

/// The NUL-terminated string at the start of `b`.
pub fn cstr(b: &[u8]) -> &[u8] {
    &b[..b.iter().position(|&c| c == 0).unwrap_or(b.len())]
}

fn intro_virtual(attrs: u16) -> bool {
    matches!((attrs >> 2) & 7, 4 | 6)
}

fn field_list(c: &[u8], refs: &mut Vec<TiRef>) {
    let t = |offset| TiRef { offset, count: 1 };
    let mut o = 0;
    while o + 2 <= c.len() {
        let d = &c[o..];
        let len = match u16_at(d, 0) {
            0x1400 => {
                // LF_BCLASS
                refs.push(t(o + 4));
                8 + numeric_len(d.get(8..).unwrap_or(&[]))
            }
            0x1502 => {
                // LF_ENUMERATE
                let n = 4 + numeric_len(d.get(4..).unwrap_or(&[]));
                n + cstr_len(d.get(n..).unwrap_or(&[]))
            }
            0x150d => {
                // LF_MEMBER
                refs.push(t(o + 4));
                let n = 8 + numeric_len(d.get(8..).unwrap_or(&[]));
                n + cstr_len(d.get(n..).unwrap_or(&[]))
            }
            0x150e..=0x1510 => {
                // LF_METHOD, LF_NESTTYPE, LF_STMEMBER
                refs.push(t(o + 4));
                8 + cstr_len(d.get(8..).unwrap_or(&[]))
            }
            0x1511 => {
                // LF_ONEMETHOD
                refs.push(t(o + 4));
                let n = if intro_virtual(u16_at(d, 2)) { 12 } else { 8 };
                n + cstr_len(d.get(n..).unwrap_or(&[]))
            }
            0x1401 | 0x1402 => {
                // LF_VBCLASS, LF_IVBCLASS
                refs.push(TiRef { offset: o + 4, count: 2 });
                let n = 12 + numeric_len(d.get(12..).unwrap_or(&[]));
                n + numeric_len(d.get(n..).unwrap_or(&[]))
            }
            0x1409 | 0x1404 => {
                // LF_VFUNCTAB, LF_INDEX
                refs.push(t(o + 4));
                8
            }
            _ => return,
        };
        o += len;
        if let Some(&pad) = c.get(o) {
            if pad >= 0xf0 {
                o += (pad & 0x0f) as usize;
            }
        }
    }
    refs.retain(|r| r.offset + 4 * r.count <= c.len());
}

/// Type-index references in a type record's content (`kind` is the leaf kind).
pub fn type_refs(kind: u16, c: &[u8]) -> Vec<TiRef> {
    let t = |offset, count| TiRef { offset, count };
    let i = |offset, count| TiRef { offset, count };
    let mut refs = Vec::new();
    match kind {
        LF_FUNC_ID => refs.extend([i(0, 1), t(4, 1)]),
        LF_MFUNC_ID => refs.push(t(0, 2)),
        0x1605 => refs.push(i(0, 1)), // LF_STRING_ID
        0x1604 => {
            // LF_SUBSTR_LIST
            let n = u32_at(c, 0) as usize;
            if n > 0 {
                refs.push(i(4, n));
            }
        }
        0x1603 => {
            // LF_BUILDINFO
            let n = u16_at(c, 0) as usize;
            if n > 0 {
                refs.push(i(2, n));
            }
        }
        0x1606 => refs.extend([t(0, 1), i(4, 1)]),  // LF_UDT_SRC_LINE
        0x1607 => refs.push(t(0, 1)),               // LF_UDT_MOD_SRC_LINE
        0x1001 | 0x1205 => refs.push(t(0, 1)),      // LF_MODIFIER, LF_BITFIELD
        0x1008 => refs.extend([t(0, 1), t(8, 1)]),  // LF_PROCEDURE
        0x1009 => refs.extend([t(0, 3), t(16, 1)]), // LF_MFUNCTION
        0x1201 => {
            // LF_ARGLIST
            let n = u32_at(c, 0) as usize;
            if n > 0 {
                refs.push(t(4, n));
            }
        }
        0x1503 | 0x151d => refs.push(t(0, 2)),          // LF_ARRAY, LF_VFTABLE
        0x1504..=0x1505 | 0x1519 => refs.push(t(4, 3)), // LF_CLASS, LF_STRUCTURE, LF_INTERFACE
        0x1506 => refs.push(t(4, 1)),                   // LF_UNION
        0x1507 => refs.push(t(4, 2)),                   // LF_ENUM
        0x1206 => {
            // LF_METHODLIST
            let mut o = 0;
            while o + 8 <= c.len() {
                refs.push(t(o + 4, 1));
                o += if intro_virtual(u16_at(c, o)) { 12 } else { 8 };
            }
        }
        0x1203 => field_list(c, &mut refs), // LF_FIELDLIST
        0x1002 => {
            // LF_POINTER: member pointers name their class too.
            refs.push(t(0, 1));
            let mode = (u32_at(c, 4) >> 5) & 7;
            if mode == 2 || mode == 3 {
                refs.push(t(8, 1));
            }
        }
        _ => {}
    }
    refs.retain(|r| r.offset + 4 * r.count <= c.len());
    refs
}

/// Type-index references in a symbol record's content, `None` for a kind lld does not know
/// (such records become `S_SKIP`).
pub fn symbol_refs(kind: u16, c: &[u8]) -> Option<Vec<TiRef>> {
    let t = |offset| TiRef { offset, count: 1 };
    let i = |offset| TiRef { offset, count: 1 };
    let refs = match kind {
        S_GPROC32_ID | S_LPROC32_ID | S_LPROC32_DPC | S_LPROC32_DPC_ID => vec![i(24)],
        S_GPROC32 | S_LPROC32 => vec![t(24)],
        S_UDT | S_GDATA32 | S_LDATA32 | S_LTHREAD32 | S_GTHREAD32 | S_FILESTATIC | S_LOCAL | S_REGISTER | S_CONSTANT => vec![t(0)],
        S_BUILDINFO => vec![i(0)],
        S_BPREL32 | S_REGREL32 | 0x1171 => vec![t(4)],
        S_CALLSITEINFO | S_HEAPALLOCSITE => vec![t(8)],
        S_CALLERS | S_CALLEES | S_INLINEES => vec![TiRef { offset: 4, count: u32_at(c, 0) as usize }],
        S_INLINESITE => vec![i(8)],
        0x1141 | 0x1145 | 0x1176 | 0x1142 | 0x1144 | 0x1143 | 0x1140 => vec![],
        S_LABEL32 | S_OBJNAME | 0x0001 | S_COMPILE2 | S_COMPILE3 | S_ENVBLOCK | S_BLOCK32 | S_FRAMEPROC | S_THUNK32 | S_FRAMECOOKIE | S_UNAMESPACE
        | S_ARMSWITCHTABLE => vec![],
        S_END | S_INLINESITE_END | S_PROC_ID_END => vec![],
        _ => return None,
    };
    if refs.iter().any(|r| r.offset + 4 * r.count > c.len()) {
        return None;
    }
    Some(refs)
}

pub fn opens_scope(kind: u16) -> bool {
    matches!(kind, S_GPROC32 | S_LPROC32 | S_LPROC32_ID | S_GPROC32_ID | S_BLOCK32 | S_SEPCODE | S_THUNK32 | S_INLINESITE | S_INLINESITE2)
}

pub fn ends_scope(kind: u16) -> bool {
    matches!(kind, S_END | S_PROC_ID_END | S_INLINESITE_END)
}

/// lld's `symbolGoesInModuleStream`.
pub fn goes_in_module(kind: u16, depth: usize) -> bool {
    match kind {
        S_GDATA32 | S_GTHREAD32 | S_PROCREF | S_LPROCREF => false,
        S_UDT | S_CONSTANT => depth > 0,
        _ => true,
    }
}

/// lld's `symbolGoesInGlobalsStream`.
pub fn goes_in_globals(kind: u16, depth: usize) -> bool {
    match kind {
        S_GDATA32 | S_GTHREAD32 | S_GPROC32 | S_LPROC32 | S_GPROC32_ID | S_LPROC32_ID | S_PROCREF | S_LPROCREF => true,
        S_UDT | S_LDATA32 | S_LTHREAD32 | S_CONSTANT => depth == 0,
        _ => false,
    }
}

/// The name of a symbol record the global hash table indexes (`rec` with its prefix).
pub fn symbol_name(rec: &[u8]) -> &[u8] {
    let kind = u16_at(rec, 2);
    let at = match kind {
        S_GDATA32 | S_LDATA32 | S_GTHREAD32 | S_LTHREAD32 => 14,
        S_UDT => 8,
        S_CONSTANT => 8 + numeric_len(rec.get(8..).unwrap_or(&[])),
        S_PROCREF | S_LPROCREF => 14,
        S_GPROC32 | S_LPROC32 | S_GPROC32_ID | S_LPROC32_ID => 39,
        _ => return &[],
    };
    cstr(rec.get(at..).unwrap_or(&[]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_leaves() {
        assert_eq!(numeric_len(&[4, 0]), 2);
        assert_eq!(numeric_len(&[0x03, 0x80, 0, 0, 0, 0]), 6); // LF_LONG
        assert_eq!(numeric_len(&[0x0a, 0x80]), 10); // LF_UQUADWORD
    }

    #[test]
    fn pointer_and_procedure_refs() {
        let p = type_refs(0x1002, &[0x74, 0, 0, 0, 0x0c, 0, 1, 0]);
        assert_eq!(p.len(), 1);
        let f = type_refs(0x1008, &[0; 12]);
        assert_eq!(f.iter().map(|r| r.offset).collect::<Vec<_>>(), vec![0, 8]);
        assert!(symbol_refs(0x9999, &[]).is_none());
    }
}
