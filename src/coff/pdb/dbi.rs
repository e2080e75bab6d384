//! The DBI stream: which streams hold the publics, globals and symbol records, the module
//! list, section contributions, the section map, source files per module, and the optional
//! debug header that points at the copy of the image's section headers. This first version
//! has no modules (no object file's CodeView is carried over yet).

/// Stream numbers the DBI header and debug header name.
pub struct StreamRefs {
    pub globals: u16,
    pub publics: u16,
    pub sym_records: u16,
    pub section_headers: u16,
}

/// One output section for the section map: its characteristics and virtual size.
pub struct Section {
    pub chars: u32,
    pub vsize: u32,
}

const SEC_CONTRIB_V60: u32 = 0xeffe_0000 + 19970605;

pub fn build(refs: &StreamRefs, sections: &[Section], machine: u16) -> Vec<u8> {
    let modi: Vec<u8> = Vec::new();
    let sec_contr = SEC_CONTRIB_V60.to_le_bytes().to_vec();
    let sec_map = section_map(sections);
    // File info: no modules, no source files.
    let file_info = vec![0u8; 4];
    let ec = super::strtab::StringTable::new().serialize();
    let mut dbg = vec![0xffu8; 22];
    dbg[10..12].copy_from_slice(&refs.section_headers.to_le_bytes());
    let mut out = Vec::new();
    let w32 = |out: &mut Vec<u8>, v: u32| out.extend_from_slice(&v.to_le_bytes());
    let w16 = |out: &mut Vec<u8>, v: u16| out.extend_from_slice(&v.to_le_bytes());
    w32(&mut out, u32::MAX); // version signature -1
    w32(&mut out, 19990903); // V70
    w32(&mut out, 1); // age
    w16(&mut out, refs.globals);
    w16(&mut out, 0x8000 | (14 << 8) | 11); // build number: new format, toolset 14.11 as lld
    w16(&mut out, refs.publics);
    w16(&mut out, 0); // mspdb dll version
    w16(&mut out, refs.sym_records);
    w16(&mut out, 0); // mspdb dll build
    for size in [modi.len(), sec_contr.len(), sec_map.len(), file_info.len(), 0] {
        w32(&mut out, size as u32);
    }
    w32(&mut out, 0); // MFC type server index
    w32(&mut out, dbg.len() as u32);
    w32(&mut out, ec.len() as u32);
    w16(&mut out, 0); // flags
    w16(&mut out, machine);
    w32(&mut out, 0); // padding
    for part in [&modi, &sec_contr, &sec_map, &file_info, &ec, &dbg] {
        out.extend_from_slice(part);
    }
    out
}

/// LLVM's `toSecMapFlags`: read/write/execute, 32-bit addresses, and the selector bit.
fn sec_map_flags(chars: u32) -> u16 {
    let mut f = 0x100; // IsSelector, always set
    if chars & 0x4000_0000 != 0 {
        f |= 1;
    }
    if chars & 0x8000_0000 != 0 {
        f |= 2;
    }
    if chars & 0x2000_0000 != 0 {
        f |= 4;
    }
    if chars & 0x0002_0000 == 0 {
        f |= 8;
    }
    f
}

/// One entry per output section (frame = section number), then the absolute pseudo-section.
fn section_map(sections: &[Section]) -> Vec<u8> {
    let n = sections.len() as u16 + 1;
    let mut out = Vec::new();
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(&n.to_le_bytes());
    let entries = sections.iter().map(|s| (sec_map_flags(s.chars), s.vsize)).chain([(0x208, u32::MAX)]);
    for (i, (flags, len)) in entries.enumerate() {
        for v in [flags, 0, 0, i as u16 + 1, 0xffff, 0xffff] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&len.to_le_bytes());
    }
    out
}
