//! The object of an empty regular-LTO partition, for `--lto-obj-path` with `--thinlto-index-only`.
//!
//! Why this exists: lld always runs LTO's regular partition, even when every module is ThinLTO
//! and the link stops after the thin link; with `--lto-obj-path=<file>` (`-lto-obj-path:` for
//! lld-link) it writes that partition's object, then empty, to `<file>`. Build rules list that
//! file as an output, so dtld writes one too. No module means no code to generate: the object is
//! the one LLVM's code generator makes of an empty module, written here directly (ELF: a FILE
//! symbol `ld-temp.o`, empty `.text` and `.note.GNU-stack`; COFF: empty `.text`, `.data`, `.bss`
//! and the absolute `@feat.00`).

use crate::lto::irsymtab::ObjectFormat;

/// An empty x86-64 relocatable object of `format` (ELF or COFF; None for the others).
pub fn empty_object(format: ObjectFormat) -> Option<Vec<u8>> {
    match format {
        ObjectFormat::Elf => Some(elf()),
        ObjectFormat::Coff => Some(coff()),
        ObjectFormat::MachO | ObjectFormat::Other => None,
    }
}

fn elf() -> Vec<u8> {
    // One string table for section and symbol names, as LLVM writes it.
    let strtab = b"\0.text\0.note.GNU-stack\0.strtab\0.symtab\0ld-temp.o\0";
    let (n_text, n_note, n_strtab, n_symtab, n_file) = (1u32, 7u32, 23u32, 31u32, 39u32);
    let symtab_off = 64u64;
    let symtab_size = 48u64;
    let strtab_off = symtab_off + symtab_size;
    let shoff = (strtab_off + strtab.len() as u64).next_multiple_of(8);
    let mut o = Vec::with_capacity(shoff as usize + 5 * 64);
    o.extend_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    o.extend_from_slice(&1u16.to_le_bytes()); // ET_REL
    o.extend_from_slice(&62u16.to_le_bytes()); // EM_X86_64
    o.extend_from_slice(&1u32.to_le_bytes());
    o.extend_from_slice(&0u64.to_le_bytes()); // e_entry
    o.extend_from_slice(&0u64.to_le_bytes()); // e_phoff
    o.extend_from_slice(&shoff.to_le_bytes());
    o.extend_from_slice(&0u32.to_le_bytes()); // e_flags
    for v in [64u16, 0, 0, 64, 5, 1] {
        // e_ehsize, e_phentsize, e_phnum, e_shentsize, e_shnum, e_shstrndx
        o.extend_from_slice(&v.to_le_bytes());
    }
    // .symtab: the null symbol, then `ld-temp.o` (STT_FILE, local, SHN_ABS).
    o.extend_from_slice(&[0u8; 24]);
    o.extend_from_slice(&n_file.to_le_bytes());
    o.extend_from_slice(&[4, 0]);
    o.extend_from_slice(&0xfff1u16.to_le_bytes());
    o.extend_from_slice(&[0u8; 16]);
    o.extend_from_slice(strtab);
    o.resize(shoff as usize, 0);
    // name, type, flags, addr, offset, size, link, info, align, entsize
    let sections: [(u32, u32, u64, u64, u64, u32, u32, u64, u64); 5] = [
        (0, 0, 0, 0, 0, 0, 0, 0, 0),
        (n_strtab, 3, 0, strtab_off, strtab.len() as u64, 0, 0, 1, 0),
        (n_text, 1, 6, symtab_off, 0, 0, 0, 4, 0),
        (n_note, 1, 0, symtab_off, 0, 0, 0, 1, 0),
        (n_symtab, 2, 0, symtab_off, symtab_size, 1, 2, 8, 24),
    ];
    for (name, ty, flags, off, size, link, info, align, entsize) in sections {
        o.extend_from_slice(&name.to_le_bytes());
        o.extend_from_slice(&ty.to_le_bytes());
        o.extend_from_slice(&flags.to_le_bytes());
        o.extend_from_slice(&0u64.to_le_bytes());
        o.extend_from_slice(&off.to_le_bytes());
        o.extend_from_slice(&size.to_le_bytes());
        o.extend_from_slice(&link.to_le_bytes());
        o.extend_from_slice(&info.to_le_bytes());
        o.extend_from_slice(&align.to_le_bytes());
        o.extend_from_slice(&entsize.to_le_bytes());
    }
    o
}

fn coff() -> Vec<u8> {
    let sections: [(&[u8; 8], u32); 3] = [(b".text\0\0\0", 0x6030_0020), (b".data\0\0\0", 0xc030_0040), (b".bss\0\0\0\0", 0xc030_0080)];
    let symtab = 20 + 40 * sections.len() as u32;
    let mut o = Vec::new();
    o.extend_from_slice(&0x8664u16.to_le_bytes());
    o.extend_from_slice(&(sections.len() as u16).to_le_bytes());
    o.extend_from_slice(&0u32.to_le_bytes()); // TimeDateStamp
    o.extend_from_slice(&symtab.to_le_bytes());
    o.extend_from_slice(&1u32.to_le_bytes()); // NumberOfSymbols
    o.extend_from_slice(&0u16.to_le_bytes()); // SizeOfOptionalHeader
    o.extend_from_slice(&0u16.to_le_bytes()); // Characteristics
    for (name, characteristics) in sections {
        o.extend_from_slice(name);
        o.extend_from_slice(&[0u8; 28]);
        o.extend_from_slice(&characteristics.to_le_bytes());
    }
    // `@feat.00`: absolute, static, no flags set.
    o.extend_from_slice(b"@feat.00");
    o.extend_from_slice(&0u32.to_le_bytes());
    o.extend_from_slice(&0xffffu16.to_le_bytes());
    o.extend_from_slice(&0u16.to_le_bytes());
    o.extend_from_slice(&[3, 0]);
    o.extend_from_slice(&4u32.to_le_bytes()); // an empty string table
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_parse() {
        let e = empty_object(ObjectFormat::Elf).unwrap();
        let f = object::File::parse(&*e).expect("ELF parses");
        assert_eq!(f.format(), object::BinaryFormat::Elf);
        let c = empty_object(ObjectFormat::Coff).unwrap();
        let f = object::File::parse(&*c).expect("COFF parses");
        assert_eq!(f.format(), object::BinaryFormat::Coff);
    }
}
