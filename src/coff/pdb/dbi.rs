//! The DBI stream: which streams hold the publics, globals and symbol records, the module
//! list, section contributions, the section map, source files per module, and the optional
//! debug header that points at the copy of the image's section headers.

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

/// What the DBI stream lists besides the stream numbers.
pub struct Contents<'a> {
    pub modules: &'a [super::modules::Module],
    /// Each module's symbol stream number (0xffff: none).
    pub module_streams: &'a [u16],
    pub contribs: &'a [super::modules::Contrib],
    pub sections: &'a [Section],
    pub ec_names: &'a super::strtab::StringTable,
    pub machine: u16,
}

pub fn build(refs: &StreamRefs, c: &Contents) -> Vec<u8> {
    let mut modi: Vec<u8> = Vec::new();
    for (m, &stream) in c.modules.iter().zip(c.module_streams) {
        let sym_bytes = if stream == 0xffff { 0 } else { 4 + m.symbols.len() as u32 };
        modi.extend_from_slice(&0u32.to_le_bytes());
        modi.extend_from_slice(&m.contrib.bytes());
        modi.extend_from_slice(&0u16.to_le_bytes()); // flags
        modi.extend_from_slice(&stream.to_le_bytes());
        for v in [sym_bytes, 0, m.c13.len() as u32] {
            modi.extend_from_slice(&v.to_le_bytes());
        }
        modi.extend_from_slice(&(m.files.len() as u16).to_le_bytes());
        modi.extend_from_slice(&[0, 0]);
        for v in [0u32, 0, m.pdb_path_ni] {
            modi.extend_from_slice(&v.to_le_bytes());
        }
        modi.extend_from_slice(&m.name);
        modi.push(0);
        modi.extend_from_slice(&m.obj_name);
        modi.push(0);
        modi.resize(modi.len().next_multiple_of(4), 0);
    }
    let mut sec_contr = Vec::new();
    if !c.contribs.is_empty() {
        sec_contr.extend_from_slice(&SEC_CONTRIB_V60.to_le_bytes());
        for sc in c.contribs {
            sec_contr.extend_from_slice(&sc.bytes());
        }
    }
    let sec_map = section_map(c.sections);
    let file_info = file_info(c.modules);
    let ec = c.ec_names.serialize();
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
    w16(&mut out, c.machine);
    w32(&mut out, 0); // padding
    for part in [&modi, &sec_contr, &sec_map, &file_info, &ec, &dbg] {
        out.extend_from_slice(part);
    }
    out
}

/// The file info substream: module and file counts, each module's first file index and file
/// count, then per module its files as offsets into a buffer of the distinct names.
fn file_info(modules: &[super::modules::Module]) -> Vec<u8> {
    let mut names: Vec<u8> = Vec::new();
    let mut offsets: std::collections::HashMap<&[u8], u32> = std::collections::HashMap::new();
    for m in modules {
        for f in &m.files {
            offsets.entry(f.as_slice()).or_insert_with(|| {
                let o = names.len() as u32;
                names.extend_from_slice(f);
                names.push(0);
                o
            });
        }
    }
    let n = modules.len().min(0xffff);
    let mut out = Vec::new();
    out.extend_from_slice(&(n as u16).to_le_bytes());
    out.extend_from_slice(&(offsets.len().min(0xffff) as u16).to_le_bytes());
    for i in 0..n {
        out.extend_from_slice(&(i as u16).to_le_bytes());
    }
    for m in modules {
        out.extend_from_slice(&(m.files.len() as u16).to_le_bytes());
    }
    for m in modules {
        for f in &m.files {
            out.extend_from_slice(&offsets[f.as_slice()].to_le_bytes());
        }
    }
    out.extend_from_slice(&names);
    out.resize(out.len().next_multiple_of(4), 0);
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
