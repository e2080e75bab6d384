//! Reading one COFF x86-64 object: sections, symbols and relocations, validated once.
//!
//! Parsing goes through `object`'s low-level COFF reader (regular and `/bigobj` headers). Every
//! offset a later stage indexes with is checked here (section data and relocation tables in the
//! file, symbol section numbers, relocation symbol indices, weak-external tags), so a corrupt
//! object fails with the file named, never with a panic. No symbol is resolved here: the
//! resolver decides what each symbol binds to (lld's `ObjFile::initializeSymbols`).

use object::pe;
use object::read::coff::{CoffHeader, ImageSymbol as _};
use object::LittleEndian as LE;

/// One section header, with its bytes and relocations.
#[derive(Debug)]
pub struct Section {
    /// The full name (`.text$foo`, `.debug_info`), long names resolved.
    pub name: &'static str,
    pub chars: u32,
    pub align: u32,
    /// The raw bytes (empty for uninitialized data).
    pub data: &'static [u8],
    /// SizeOfRawData (the virtual size for `.bss`-like sections).
    pub size: u32,
    pub relocs: &'static [pe::ImageRelocation],
    /// Whether the header points at raw data in the file (LLVM's `getSectionContents` gives
    /// no buffer at all otherwise; the PDB's section contribution checksums tell the two
    /// empty cases apart).
    pub has_raw: bool,
}

impl Section {
    pub fn is_comdat(&self) -> bool {
        self.chars & pe::IMAGE_SCN_LNK_COMDAT != 0
    }
    pub fn is_bss(&self) -> bool {
        self.chars & pe::IMAGE_SCN_CNT_UNINITIALIZED_DATA != 0
    }
    /// lld's output characteristics: type and memory-permission bits only.
    pub fn out_chars(&self) -> u32 {
        self.chars & (0xFE00_0000 | 0xE0)
    }
}

/// One symbol-table entry (aux entries are `Aux`).
#[derive(Debug, Clone)]
pub struct Sym {
    pub name: &'static str,
    pub value: u32,
    pub section: i32,
    pub class: u8,
    pub typ: u16,
    pub naux: u8,
    /// For a section-definition symbol: (COMDAT selection, associated section number).
    pub secdef: Option<(u8, u32)>,
    /// For a weak external: the symbol index of its default definition.
    pub weak_tag: Option<u32>,
    /// For a section-definition symbol: the COMDAT checksum of its aux record (ICF compares it).
    pub checksum: u32,
    /// For a section-definition symbol: the section length its aux record states (MinGW's
    /// "same size" COMDAT check compares it).
    pub sec_length: u32,
    pub is_aux: bool,
}

impl Sym {
    pub fn is_external(&self) -> bool {
        self.class == pe::IMAGE_SYM_CLASS_EXTERNAL
    }
    pub fn is_undefined(&self) -> bool {
        self.section == 0 && self.value == 0 && self.is_external()
    }
    pub fn is_common(&self) -> bool {
        self.section == 0 && self.value != 0 && self.is_external()
    }
    pub fn is_weak_external(&self) -> bool {
        self.class == pe::IMAGE_SYM_CLASS_WEAK_EXTERNAL
    }
    pub fn is_absolute(&self) -> bool {
        self.section == pe::IMAGE_SYM_ABSOLUTE
    }
}

#[derive(Debug)]
pub struct ObjFile {
    pub sections: Vec<Section>,
    pub symbols: Vec<Sym>,
    /// The `.drectve` section's text, if any.
    pub directives: Option<&'static [u8]>,
}

/// Whether the bytes start like an x86-64 or machine-neutral COFF object (regular or bigobj).
pub fn is_coff_object(data: &[u8]) -> bool {
    // `identify_magic` looks at the first four bytes only: a shorter header is an object that
    // cannot be parsed (lld: "Could not parse").
    if data.len() >= 4 && u16::from_le_bytes([data[0], data[1]]) == pe::IMAGE_FILE_MACHINE_AMD64 {
        return true;
    }
    // IMAGE_FILE_MACHINE_UNKNOWN (LLVM's `identify_magic`: two zero bytes not followed by
    // the 0xFFFF of an import or anonymous object): machine-neutral objects, such as one
    // holding only weak aliases.
    if data.len() >= 4 && data[0..2] == [0, 0] && data[2..4] != [0xff, 0xff] {
        return true;
    }
    is_bigobj(data)
}

/// Whether the bytes are a cl.exe `/GL` object (an anonymous object header with LLVM's
/// `ClGlObjMagic` class id): no native code, only MSVC's LTCG IR.
pub fn is_cl_gl_object(data: &[u8]) -> bool {
    const CL_GL: [u8; 16] = [0x38, 0xfe, 0xb3, 0x0c, 0xa5, 0xd9, 0xab, 0x4d, 0xac, 0x9b, 0xd6, 0xb6, 0x22, 0x26, 0x53, 0xc2];
    data.len() >= 28 && data[0..4] == [0, 0, 0xff, 0xff] && data[12..28] == CL_GL
}

fn is_bigobj(data: &[u8]) -> bool {
    data.len() >= 56
        && data[0..2] == [0, 0]
        && data[2..4] == [0xff, 0xff]
        && u16::from_le_bytes([data[4], data[5]]) >= 2
        && data[12..28] == pe::ANON_OBJECT_HEADER_BIGOBJ_CLASS_ID.0
}

fn leak_str(b: &'static [u8]) -> &'static str {
    match std::str::from_utf8(b) {
        Ok(s) => s,
        Err(_) => crate::util::keep::str(String::from_utf8_lossy(b).into_owned()),
    }
}

/// The header, section table or symbol table cannot be read: lld says `Could not parse <file>`.
pub const NOT_PARSED: &str = "\0could not parse";
const INVALID: &str = "Invalid data was encountered while parsing the file";

/// An error lld prints without the file name (`fatal` with its own wording).
pub const NO_FILE: char = '\u{1}';

/// lld's `getSectionName failed: #n: reason` for a long section name (`/offset`) that cannot be
/// read, with LLVM's reasons.
fn section_name_error<H: CoffHeader>(data: &[u8], header: &H, raw: &[u8; 8], number: usize) -> String {
    let reason = match raw.strip_prefix(b"/") {
        Some(rest) if !rest.starts_with(b"/") => {
            let digits: Vec<u8> = rest.iter().copied().take_while(|&b| b != 0).collect();
            let offset = std::str::from_utf8(&digits).ok().and_then(|d| d.parse::<u64>().ok());
            let ptr = header.pointer_to_symbol_table() as u64;
            let entry = if H::is_type_bigobj() { 20 } else { 18 };
            let table = ptr + header.number_of_symbols() as u64 * entry;
            let size = if ptr == 0 { 0 } else { data.get(table as usize..table as usize + 4).map_or(0, |b| u32::from_le_bytes(b.try_into().unwrap()) as u64) };
            match offset {
                None => "invalid section name".to_string(),
                Some(_) if size <= 4 => "string table empty".to_string(),
                Some(_) => "The end of the file was unexpectedly encountered".to_string(),
            }
        }
        _ => "invalid section name".to_string(),
    };
    format!("{NO_FILE}getSectionName failed: #{number}: {reason}")
}

/// Parses an object. Errors carry LLVM's wording without the file name.
pub fn parse(data: &'static [u8]) -> Result<ObjFile, String> {
    if is_bigobj(data) {
        parse_with::<pe::AnonObjectHeaderBigobj>(data)
    } else {
        parse_with::<pe::ImageFileHeader>(data)
    }
}

fn parse_with<H: CoffHeader>(data: &'static [u8]) -> Result<ObjFile, String> {
    let mut off = 0u64;
    let header = H::parse(data, &mut off).map_err(|_| NOT_PARSED.to_string())?;
    if header.machine() != pe::IMAGE_FILE_MACHINE_AMD64 && header.machine() != pe::IMAGE_FILE_MACHINE_UNKNOWN {
        return Err(format!("machine type {:#x} is not x64", header.machine()));
    }
    let table = header.sections(data, off).map_err(|_| NOT_PARSED.to_string())?;
    let symtab = header.symbols(data).map_err(|_| NOT_PARSED.to_string())?;
    let strings = symtab.strings();
    let mut sections = Vec::with_capacity(table.len());
    let mut directives = None;
    for (i, s) in table.iter().enumerate() {
        let name = s.name(strings).map_err(|_| section_name_error(data, header, &s.name, i + 1))?;
        let name = leak_str(name);
        let chars = s.characteristics.get(LE);
        let size = s.size_of_raw_data.get(LE);
        let sdata: &'static [u8] =
            if chars & pe::IMAGE_SCN_CNT_UNINITIALIZED_DATA != 0 { &[] } else { s.coff_data(data).map_err(|_| format!("section {name}: {INVALID}"))? };
        let relocs = s.coff_relocations(data).map_err(|_| INVALID.to_string())?;
        let align = if chars & pe::IMAGE_SCN_TYPE_NO_PAD != 0 {
            1
        } else {
            match (chars >> 20) & 0xf {
                0 => 16,
                n => 1u32 << (n - 1).min(13),
            }
        };
        if name == ".drectve" {
            directives = Some(sdata);
        }
        let has_raw = chars & pe::IMAGE_SCN_CNT_UNINITIALIZED_DATA == 0 && s.pointer_to_raw_data.get(LE) != 0;
        sections.push(Section { name, chars, align, data: sdata, size, relocs, has_raw });
    }
    let nsyms = symtab.len();
    let mut symbols = Vec::with_capacity(nsyms);
    let mut i = 0;
    while i < nsyms {
        let s = symtab.symbol(object::SymbolIndex(i)).map_err(|_| INVALID.to_string())?;
        let name = leak_str(s.name(strings).map_err(|_| INVALID.to_string())?);
        let naux = s.number_of_aux_symbols();
        if naux > 0 && i + naux as usize >= nsyms {
            return Err(INVALID.to_string());
        }
        let section = s.section_number();
        // lld's createDefined: -1 is absolute and -2 debug; any other number below one names
        // none of the sections.
        if section < pe::IMAGE_SYM_DEBUG {
            return Err(format!("{name} should not refer to special section {section}"));
        }
        if section > 0 && section as usize > sections.len() {
            return Err(format!("{name} should not refer to non-existent section {section}"));
        }
        let mut secdef = None;
        let mut weak_tag = None;
        let mut checksum = 0;
        let mut sec_length = 0;
        if naux > 0 {
            if s.storage_class() == pe::IMAGE_SYM_CLASS_STATIC && section > 0 && s.value() == 0 {
                let aux = symtab.aux_section(object::SymbolIndex(i)).map_err(|_| INVALID.to_string())?;
                let mut assoc = u32::from(aux.number.get(LE));
                if H::is_type_bigobj() {
                    assoc |= u32::from(aux.high_number.get(LE)) << 16;
                }
                secdef = Some((aux.selection, assoc));
                checksum = aux.check_sum.get(LE);
                sec_length = aux.length.get(LE);
            } else if s.storage_class() == pe::IMAGE_SYM_CLASS_WEAK_EXTERNAL {
                let aux: &pe::ImageAuxSymbolWeak = symtab.get(object::SymbolIndex(i + 1), 0).map_err(|_| INVALID.to_string())?;
                let tag = aux.weak_default_sym_index.get(LE);
                if tag as usize >= nsyms {
                    return Err(format!("{name}: weak external refers to invalid symbol index {tag}"));
                }
                weak_tag = Some(tag);
            }
        }
        symbols.push(Sym {
            name,
            value: s.value(),
            section,
            class: s.storage_class(),
            typ: s.typ(),
            naux,
            secdef,
            weak_tag,
            checksum,
            sec_length,
            is_aux: false,
        });
        for _ in 0..naux {
            symbols.push(Sym {
                name: "",
                value: 0,
                section: 0,
                class: 0,
                typ: 0,
                naux: 0,
                secdef: None,
                weak_tag: None,
                checksum: 0,
                sec_length: 0,
                is_aux: true,
            });
        }
        i += 1 + naux as usize;
    }
    symbols.truncate(nsyms);
    for s in &sections {
        for r in s.relocs {
            let idx = r.symbol_table_index.get(LE) as usize;
            if idx >= symbols.len() || symbols[idx].is_aux {
                return Err(format!("{}: relocation refers to invalid symbol index {idx}", s.name));
            }
            let end = r.virtual_address.get(LE) as u64 + 8;
            let ty = r.typ.get(LE);
            let width = dtld_arch::coff_x86_64::kind(ty).map(dtld_arch::coff_x86_64::width).unwrap_or(0) as u64;
            if r.virtual_address.get(LE) as u64 + width > s.data.len() as u64 && !s.data.is_empty() {
                let _ = end;
                return Err(format!("{}: relocation offset {:#x} is out of bounds", s.name, r.virtual_address.get(LE)));
            }
        }
    }
    Ok(ObjFile { sections, symbols, directives })
}
