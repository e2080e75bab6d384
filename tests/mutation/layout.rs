//! Why this exists: the mutation test must hit the bytes that matter (ELF header fields,
//! section headers, symbols, relocations, archive member headers and the archive symbol index),
//! not just random offsets. This module walks a *pristine* relocatable ELF64 object or a
//! (thin) `ar` archive (members: ELF, COFF or short import objects), or a COFF x86-64 object,
//! once and records where those fields and regions are, so mutations can
//! aim at them. It is deliberately tiny and trusts its input (it only ever sees files that
//! clang-22 and llvm-ar-22 just produced); it is not a parser for the linker.

/// How a field is encoded, which decides the boundary values written into it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enc {
    /// Little-endian unsigned integer of the field's size.
    Le,
    /// Big-endian unsigned integer (the archive symbol index).
    Be,
    /// Space-padded decimal ASCII (archive member header).
    Ascii,
    /// Raw bytes (names, magic).
    Raw,
}

/// A field at a fixed position in the file.
#[derive(Clone, Debug)]
pub struct Field {
    pub name: String,
    /// Category, used to spread mutations evenly over kinds of fields.
    pub group: &'static str,
    pub offset: usize,
    pub size: usize,
    pub enc: Enc,
}

/// A byte range with a meaning (a header table, a section body, an archive member).
#[derive(Clone, Debug)]
pub struct Region {
    pub name: String,
    pub start: usize,
    pub end: usize,
}

#[derive(Default, Debug)]
pub struct Layout {
    pub fields: Vec<Field>,
    pub regions: Vec<Region>,
}

/// The first bytes of a COFF object for x86-64 (IMAGE_FILE_MACHINE_AMD64, little-endian).
const COFF_AMD64: &[u8] = &[0x64, 0x86];
/// The first bytes of a short import member (Sig1 = 0, Sig2 = 0xffff).
const SHORT_IMPORT: &[u8] = &[0, 0, 0xff, 0xff];

fn rd(data: &[u8], off: usize, size: usize) -> u64 {
    let mut v = 0u64;
    for i in (0..size).rev() {
        v = (v << 8) | u64::from(*data.get(off + i).unwrap_or(&0));
    }
    v
}

fn rd_be(data: &[u8], off: usize, size: usize) -> u64 {
    let mut v = 0u64;
    for i in 0..size {
        v = (v << 8) | u64::from(*data.get(off + i).unwrap_or(&0));
    }
    v
}

impl Layout {
    fn field(&mut self, group: &'static str, name: String, offset: usize, size: usize, enc: Enc) {
        self.fields.push(Field { name, group, offset, size, enc });
    }

    fn region(&mut self, name: String, start: usize, end: usize) {
        if start < end {
            self.regions.push(Region { name, start, end });
        }
    }

    /// Describes `data`, which is an ELF object, a regular archive or a thin archive.
    pub fn of(data: &[u8]) -> Layout {
        let mut layout = Layout::default();
        if data.starts_with(b"!<arch>\n") {
            layout.archive(data, false);
        } else if data.starts_with(b"!<thin>\n") {
            layout.archive(data, true);
        } else if data.starts_with(b"\x7fELF") {
            layout.elf(data, 0, "");
        } else if data.starts_with(COFF_AMD64) {
            layout.coff(data, 0, "");
        } else if data.starts_with(SHORT_IMPORT) {
            layout.short_import(data, 0, "");
        }
        layout
    }

    /// Records a COFF (x86-64) relocatable object that starts at `base`: the file header,
    /// section headers, section bodies, relocations, the symbol table and the string table.
    fn coff(&mut self, data: &[u8], base: usize, prefix: &str) {
        let e = |s: &str| format!("{prefix}{s}");
        let obj = &data[base..];
        if obj.len() < 20 {
            return;
        }
        self.region(e("coff.header"), base, base + 20);
        for (name, off, size) in [
            ("machine", 0, 2),
            ("number_of_sections", 2, 2),
            ("time_date_stamp", 4, 4),
            ("pointer_to_symbol_table", 8, 4),
            ("number_of_symbols", 12, 4),
            ("size_of_optional_header", 16, 2),
            ("characteristics", 18, 2),
        ] {
            self.field("coffhdr", e(&format!("coff.{name}")), base + off, size, Enc::Le);
        }
        let nsec = rd(obj, 2, 2) as usize;
        let symptr = rd(obj, 8, 4) as usize;
        let nsyms = rd(obj, 12, 4) as usize;
        let opt = rd(obj, 16, 2) as usize;
        let sh0 = 20 + opt;
        if sh0 + nsec * 40 > obj.len() {
            return;
        }
        self.region(e("coff.sections"), base + sh0, base + sh0 + nsec * 40);
        for i in 0..nsec {
            let sh = sh0 + i * 40;
            for (name, o, sz) in [
                ("name", 0, 8),
                ("virtual_size", 8, 4),
                ("virtual_address", 12, 4),
                ("size_of_raw_data", 16, 4),
                ("pointer_to_raw_data", 20, 4),
                ("pointer_to_relocations", 24, 4),
                ("number_of_relocations", 32, 2),
                ("characteristics", 36, 4),
            ] {
                let enc = if name == "name" { Enc::Raw } else { Enc::Le };
                self.field("coffsec", e(&format!("sec[{i}].{name}")), base + sh + o, sz, enc);
            }
            let (size, ptr) = (rd(obj, sh + 16, 4) as usize, rd(obj, sh + 20, 4) as usize);
            if ptr != 0 && ptr + size <= obj.len() {
                self.region(e(&format!("section[{i}]")), base + ptr, base + ptr + size);
            }
            let (relptr, nrel) = (rd(obj, sh + 24, 4) as usize, rd(obj, sh + 32, 2) as usize);
            if relptr != 0 && relptr + nrel * 10 <= obj.len() {
                self.region(e(&format!("relocs[{i}]")), base + relptr, base + relptr + nrel * 10);
                for j in 0..nrel {
                    let r = relptr + j * 10;
                    for (name, o, sz) in [("virtual_address", 0, 4), ("symbol", 4, 4), ("type", 8, 2)] {
                        self.field("coffrel", e(&format!("rel[{i}][{j}].{name}")), base + r + o, sz, Enc::Le);
                    }
                }
            }
        }
        if symptr == 0 || symptr + nsyms * 18 > obj.len() {
            return;
        }
        self.region(e("coff.symtab"), base + symptr, base + symptr + nsyms * 18);
        let mut j = 0;
        while j < nsyms {
            let sym = symptr + j * 18;
            for (name, o, sz) in
                [("name", 0, 8), ("value", 8, 4), ("section_number", 12, 2), ("type", 14, 2), ("storage_class", 16, 1), ("number_of_aux_symbols", 17, 1)]
            {
                let enc = if name == "name" { Enc::Raw } else { Enc::Le };
                self.field("coffsym", e(&format!("sym[{j}].{name}")), base + sym + o, sz, enc);
            }
            j += 1 + obj[sym + 17] as usize;
        }
        let strtab = symptr + nsyms * 18;
        if strtab + 4 <= obj.len() {
            self.field("coffstr", e("strtab.size"), base + strtab, 4, Enc::Le);
            let size = (rd(obj, strtab, 4) as usize).min(obj.len() - strtab);
            self.region(e("coff.strtab"), base + strtab, base + strtab + size);
        }
    }

    /// Records a short import member (`IMPORT_OBJECT_HEADER` and its two names).
    fn short_import(&mut self, data: &[u8], base: usize, prefix: &str) {
        let e = |s: &str| format!("{prefix}{s}");
        if data.len() < base + 20 {
            return;
        }
        for (name, off, size) in [
            ("sig1", 0, 2),
            ("sig2", 2, 2),
            ("version", 4, 2),
            ("machine", 6, 2),
            ("time_date_stamp", 8, 4),
            ("size_of_data", 12, 4),
            ("ordinal_hint", 16, 2),
            ("type_bits", 18, 2),
        ] {
            self.field("import", e(&format!("import.{name}")), base + off, size, Enc::Le);
        }
        let len = rd(data, base + 12, 4) as usize;
        self.region(e("import.header"), base, base + 20);
        self.region(e("import.names"), base + 20, (base + 20 + len).min(data.len()));
    }

    /// Records an ELF64 little-endian relocatable object that starts at `base`.
    fn elf(&mut self, data: &[u8], base: usize, prefix: &str) {
        let e = |s: &str| format!("{prefix}{s}");
        let obj = &data[base..];
        if obj.len() < 64 {
            return;
        }
        self.region(e("ehdr"), base, base + 64);
        for (name, off, size, enc) in [
            ("e_ident.magic", 0, 4, Enc::Raw),
            ("e_ident.class", 4, 1, Enc::Le),
            ("e_ident.data", 5, 1, Enc::Le),
            ("e_ident.version", 6, 1, Enc::Le),
            ("e_type", 16, 2, Enc::Le),
            ("e_machine", 18, 2, Enc::Le),
            ("e_version", 20, 4, Enc::Le),
            ("e_phoff", 32, 8, Enc::Le),
            ("e_shoff", 40, 8, Enc::Le),
            ("e_flags", 48, 4, Enc::Le),
            ("e_ehsize", 52, 2, Enc::Le),
            ("e_phnum", 56, 2, Enc::Le),
            ("e_shentsize", 58, 2, Enc::Le),
            ("e_shnum", 60, 2, Enc::Le),
            ("e_shstrndx", 62, 2, Enc::Le),
        ] {
            self.field("ehdr", e(name), base + off, size, enc);
        }
        let shoff = rd(obj, 40, 8) as usize;
        let shnum = rd(obj, 60, 2) as usize;
        if shoff == 0 || shoff + shnum * 64 > obj.len() {
            return;
        }
        self.region(e("shdrs"), base + shoff, base + shoff + shnum * 64);
        let shstrndx = rd(obj, 62, 2) as usize;
        for i in 0..shnum {
            let sh = shoff + i * 64;
            let (sh_type, off, size, entsize) = (rd(obj, sh + 4, 4), rd(obj, sh + 24, 8) as usize, rd(obj, sh + 32, 8) as usize, rd(obj, sh + 56, 8) as usize);
            for (name, o, s) in [
                ("sh_name", 0, 4),
                ("sh_type", 4, 4),
                ("sh_flags", 8, 8),
                ("sh_addr", 16, 8),
                ("sh_offset", 24, 8),
                ("sh_size", 32, 8),
                ("sh_link", 40, 4),
                ("sh_info", 44, 4),
                ("sh_addralign", 48, 8),
                ("sh_entsize", 56, 8),
            ] {
                self.field("shdr", e(&format!("shdr[{i}].{name}")), base + sh + o, s, Enc::Le);
            }
            // SHT_NOBITS has no bytes in the file.
            if sh_type == 8 || off + size > obj.len() {
                continue;
            }
            let kind = match sh_type {
                2 => "symtab",
                3 if i == shstrndx => "shstrtab",
                3 => "strtab",
                4 => "rela",
                17 => "group",
                _ => "section",
            };
            self.region(e(&format!("{kind}[{i}]")), base + off, base + off + size);
            match sh_type {
                2 if entsize == 24 => {
                    for j in 0..size / 24 {
                        let s = off + j * 24;
                        for (name, o, sz) in
                            [("st_name", 0, 4), ("st_info", 4, 1), ("st_other", 5, 1), ("st_shndx", 6, 2), ("st_value", 8, 8), ("st_size", 16, 8)]
                        {
                            self.field("sym", e(&format!("sym[{j}].{name}")), base + s + o, sz, Enc::Le);
                        }
                    }
                }
                4 if entsize == 24 => {
                    for j in 0..size / 24 {
                        let r = off + j * 24;
                        for (name, o, sz) in [("r_offset", 0, 8), ("r_info", 8, 8), ("r_info.type", 8, 4), ("r_info.sym", 12, 4), ("r_addend", 16, 8)] {
                            self.field("rela", e(&format!("rela[{i}][{j}].{name}")), base + r + o, sz, Enc::Le);
                        }
                    }
                }
                17 => {
                    for j in 0..size / 4 {
                        self.field("group", e(&format!("group[{i}][{j}]")), base + off + j * 4, 4, Enc::Le);
                    }
                }
                _ => {}
            }
        }
    }

    /// Records an archive: member headers, the symbol index, the long-name table and (for a
    /// regular archive) each member's ELF structure.
    fn archive(&mut self, data: &[u8], thin: bool) {
        self.field("arhdr", "ar.magic".into(), 0, 8, Enc::Raw);
        self.region("ar.magic".into(), 0, 8);
        let mut off = 8;
        let mut index = 0;
        while off + 60 <= data.len() {
            let name = String::from_utf8_lossy(&data[off..off + 16]).trim_end().to_string();
            let size_text = String::from_utf8_lossy(&data[off + 48..off + 58]).trim().to_string();
            let Ok(size) = size_text.parse::<usize>() else {
                break;
            };
            let m = format!("ar[{index}]({name})");
            self.region(format!("{m}.header"), off, off + 60);
            for (f, o, s, enc) in
                [("name", 0, 16, Enc::Raw), ("date", 16, 12, Enc::Ascii), ("mode", 40, 8, Enc::Ascii), ("size", 48, 10, Enc::Ascii), ("fmag", 58, 2, Enc::Raw)]
            {
                self.field("arhdr", format!("{m}.{f}"), off + o, s, enc);
            }
            let body = off + 60;
            let special = name == "/" || name == "//" || name == "/SYM64/";
            // Thin archives store only the index and the name table inline.
            let stored = if thin && !special { 0 } else { size };
            if body + stored > data.len() {
                break;
            }
            self.region(format!("{m}.body"), body, body + stored);
            if name == "/" && stored >= 4 {
                let count = rd_be(data, body, 4) as usize;
                self.field("armap", format!("{m}.count"), body, 4, Enc::Be);
                for k in 0..count.min((stored - 4) / 4) {
                    self.field("armap", format!("{m}.offset[{k}]"), body + 4 + 4 * k, 4, Enc::Be);
                }
            } else if !special && stored > 0 && data[body..].starts_with(b"\x7fELF") {
                self.elf(data, body, &format!("{m}:"));
            } else if !special && stored >= 20 && data[body..].starts_with(COFF_AMD64) {
                self.coff(&data[..body + stored], body, &format!("{m}:"));
            } else if !special && stored >= 20 && data[body..].starts_with(SHORT_IMPORT) {
                self.short_import(&data[..body + stored], body, &format!("{m}:"));
            }
            off = body + stored;
            off += off & 1; // members are 2-aligned
            index += 1;
        }
    }
}
