//! Raw files as link inputs (`-b binary`, `--format=binary`, a script's `TARGET(binary)`).
//!
//! Why this exists: embedding a blob (a font, a shader, a firmware image) with `ld -b binary`
//! is an everyday use of a linker, and dtld used to reject the option. As lld's BinaryFile
//! does, the file's bytes become a writable `.data` section (alignment 8) with three global
//! symbols named after the path as given, every character that is not a letter or a digit
//! turned into `_`: `_binary_<path>_start` and `_end` in that section, `_size` absolute.
//! The input is written as a small ELF relocatable object, so resolution, layout and `-r`
//! treat it as they treat any object and nothing downstream needs to know.

use object::elf;

use crate::output::{put16, put32, put64};

/// The symbol-name stem lld derives from the path: `_binary_` + path, non-alphanumerics as `_`.
pub fn symbol_stem(path: &str) -> String {
    let s = format!("_binary_{path}");
    s.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect()
}

/// An ELF64 x86-64 relocatable object holding `data` as `.data` and the three symbols.
pub fn object_for(path: &str, data: &[u8]) -> Vec<u8> {
    let stem = symbol_stem(path);
    // String tables.
    let mut strtab = vec![0u8];
    let mut name_off = Vec::new();
    for suffix in ["_start", "_end", "_size"] {
        name_off.push(strtab.len() as u32);
        strtab.extend_from_slice(stem.as_bytes());
        strtab.extend_from_slice(suffix.as_bytes());
        strtab.push(0);
    }
    let shstrtab: &[u8] = b"\0.data\0.symtab\0.strtab\0.shstrtab\0";
    let (n_data, n_symtab, n_strtab, n_shstrtab) = (1u32, 7u32, 15u32, 23u32);
    // File layout: header, .data (8-aligned), .symtab (8-aligned), .strtab, .shstrtab,
    // section headers (8-aligned).
    let align8 = |x: usize| x.div_ceil(8) * 8;
    let data_off = 64usize;
    let symtab_off = align8(data_off + data.len());
    let symtab_size = 4 * 24;
    let strtab_off = symtab_off + symtab_size;
    let shstrtab_off = strtab_off + strtab.len();
    let shoff = align8(shstrtab_off + shstrtab.len());
    let shnum = 5usize;
    let mut out = vec![0u8; shoff + shnum * 64];
    // ELF header.
    out[..4].copy_from_slice(b"\x7fELF");
    out[4] = elf::ELFCLASS64;
    out[5] = elf::ELFDATA2LSB;
    out[6] = elf::EV_CURRENT;
    put16(&mut out, 16, elf::ET_REL);
    put16(&mut out, 18, elf::EM_X86_64);
    put32(&mut out, 20, elf::EV_CURRENT as u32);
    put64(&mut out, 40, shoff as u64);
    put16(&mut out, 52, 64);
    put16(&mut out, 58, 64);
    put16(&mut out, 60, shnum as u16);
    put16(&mut out, 62, 4);
    out[data_off..data_off + data.len()].copy_from_slice(data);
    // Symbols: null, then _start and _end in .data (section 1), _size absolute; all global
    // objects of size 0, as lld defines them.
    let info = (elf::STB_GLOBAL << 4) | elf::STT_OBJECT;
    let syms = [(name_off[0], 1u16, 0u64), (name_off[1], 1, data.len() as u64), (name_off[2], elf::SHN_ABS, data.len() as u64)];
    for (k, &(name, shndx, value)) in syms.iter().enumerate() {
        let o = symtab_off + 24 * (k + 1);
        put32(&mut out, o, name);
        out[o + 4] = info;
        put16(&mut out, o + 6, shndx);
        put64(&mut out, o + 8, value);
    }
    out[strtab_off..strtab_off + strtab.len()].copy_from_slice(&strtab);
    out[shstrtab_off..shstrtab_off + shstrtab.len()].copy_from_slice(shstrtab);
    // Section headers: (name, type, flags, offset, size, link, info, align, entsize).
    let w = (elf::SHF_ALLOC | elf::SHF_WRITE) as u64;
    let headers = [
        (n_data, elf::SHT_PROGBITS, w, data_off, data.len(), 0, 0, 8, 0),
        (n_symtab, elf::SHT_SYMTAB, 0, symtab_off, symtab_size, 3, 1, 8, 24),
        (n_strtab, elf::SHT_STRTAB, 0, strtab_off, strtab.len(), 0, 0, 1, 0),
        (n_shstrtab, elf::SHT_STRTAB, 0, shstrtab_off, shstrtab.len(), 0, 0, 1, 0),
    ];
    for (k, &(name, ty, flags, off, size, link, info, align, entsize)) in headers.iter().enumerate() {
        let o = shoff + 64 * (k + 1);
        put32(&mut out, o, name);
        put32(&mut out, o + 4, ty);
        put64(&mut out, o + 8, flags);
        put64(&mut out, o + 24, off as u64);
        put64(&mut out, o + 32, size as u64);
        put32(&mut out, o + 40, link);
        put32(&mut out, o + 44, info);
        put64(&mut out, o + 48, align);
        put64(&mut out, o + 56, entsize);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use object::read::elf::{ElfFile64, FileHeader};
    use object::{Object, ObjectSection, ObjectSymbol};

    #[test]
    fn stem_replaces_non_alphanumerics() {
        assert_eq!(symbol_stem("./dir/blob-1.bin"), "_binary___dir_blob_1_bin");
    }

    #[test]
    fn object_reads_back() {
        let o = object_for("a.bin", b"hello");
        let f: ElfFile64 = ElfFile64::parse(&o[..]).unwrap();
        assert_eq!(f.elf_header().e_type(object::Endianness::Little), elf::ET_REL);
        let data = f.section_by_name(".data").unwrap();
        assert_eq!(data.data().unwrap(), b"hello");
        assert_eq!(data.align(), 8);
        let names: Vec<(String, u64)> = f.symbols().map(|s| (s.name().unwrap().to_string(), s.address())).collect();
        assert_eq!(names, vec![("_binary_a_bin_start".into(), 0), ("_binary_a_bin_end".into(), 5), ("_binary_a_bin_size".into(), 5)]);
    }
}
