//! The ELF integer types every stage reads and writes (little-endian 64-bit headers, symbols,
//! relocations) and the section-index encoding the symbol-table writers share. They sit below
//! every stage so that no stage imports `elf/mod.rs`, which drives them all.

use ::object::elf;

pub type LE = ::object::LittleEndian;
pub const LE: ::object::LittleEndian = ::object::LittleEndian;
pub type Sym = ::object::elf::Sym64<LE>;

/// An output symbol's section as the symbol table writers take it: an output section index of
/// any size, 0 (undefined), or a reserved index (SHN_ABS, SHN_COMMON) as `reserved_shndx`
/// gives it, above every real index, so that section 0xfff1 of a huge output is never SHN_ABS.
pub const fn reserved_shndx(raw: u16) -> u32 {
    0xffff_0000 | raw as u32
}

/// What a symbol table entry holds for section `shndx` (see `reserved_shndx`): its 16-bit
/// `st_shndx`, and its SHT_SYMTAB_SHNDX word, which is the index itself when it does not fit
/// (`st_shndx` is then SHN_XINDEX) and 0 otherwise.
pub const fn split_shndx(shndx: u32) -> (u16, u32) {
    if shndx >= reserved_shndx(0) {
        (shndx as u16, 0)
    } else if shndx >= ::object::elf::SHN_LORESERVE as u32 {
        (::object::elf::SHN_XINDEX, shndx)
    } else {
        (shndx as u16, 0)
    }
}

/// The ELF header's `e_shnum` and `e_shstrndx` for `nsections` section headers whose name table
/// is header `shstrtab_index`. A value of SHN_LORESERVE or more does not fit: it goes to the null
/// section header `null` (its sh_size holds the count, its sh_link the index) and the header
/// field says 0 or SHN_XINDEX, as ELF's extended section numbering says. Both writers (final
/// links and `-r`) use it.
pub fn section_header_counts(null: &mut [u8], nsections: usize, shstrtab_index: usize) -> (u16, u16) {
    let lore = ::object::elf::SHN_LORESERVE as usize;
    let shnum = if nsections >= lore {
        null[32..40].copy_from_slice(&(nsections as u64).to_le_bytes());
        0
    } else {
        nsections as u16
    };
    let shstrndx = if shstrtab_index >= lore {
        null[40..44].copy_from_slice(&(shstrtab_index as u32).to_le_bytes());
        ::object::elf::SHN_XINDEX
    } else {
        shstrtab_index as u16
    };
    (shnum, shstrndx)
}
pub type Rela = ::object::elf::Rela64<LE>;
pub type Shdr = ::object::elf::SectionHeader64<LE>;
pub type Ehdr = ::object::elf::FileHeader64<LE>;

/// A section type as lld names it in messages (`SHT_PROGBITS`, or the number).
pub(crate) fn type_name(t: u32) -> String {
    match t {
        elf::SHT_NULL => "SHT_NULL".into(),
        elf::SHT_PROGBITS => "SHT_PROGBITS".into(),
        elf::SHT_SYMTAB => "SHT_SYMTAB".into(),
        elf::SHT_STRTAB => "SHT_STRTAB".into(),
        elf::SHT_RELA => "SHT_RELA".into(),
        elf::SHT_NOTE => "SHT_NOTE".into(),
        elf::SHT_NOBITS => "SHT_NOBITS".into(),
        elf::SHT_INIT_ARRAY => "SHT_INIT_ARRAY".into(),
        elf::SHT_FINI_ARRAY => "SHT_FINI_ARRAY".into(),
        elf::SHT_PREINIT_ARRAY => "SHT_PREINIT_ARRAY".into(),
        elf::SHT_GROUP => "SHT_GROUP".into(),
        elf::SHT_X86_64_UNWIND => "SHT_X86_64_UNWIND".into(),
        _ => format!("0x{t:x}"),
    }
}

/// lld's `canMergeToProgbits`: types that may share an output section (which becomes
/// SHT_PROGBITS).
pub(crate) fn progbits_like(t: u32) -> bool {
    matches!(
        t,
        elf::SHT_NOBITS | elf::SHT_PROGBITS | elf::SHT_INIT_ARRAY | elf::SHT_PREINIT_ARRAY | elf::SHT_FINI_ARRAY | elf::SHT_NOTE | elf::SHT_X86_64_UNWIND
    )
}

// The ELF hash functions of `.gnu.hash` and `.hash`.

/// GNU hash function (`dl_new_hash`).
pub fn gnu_hash(name: &[u8]) -> u32 {
    let mut h: u32 = 5381;
    for &c in name {
        h = h.wrapping_mul(33).wrapping_add(c as u32);
    }
    h
}

/// SysV ELF hash.
pub fn sysv_hash(name: &[u8]) -> u32 {
    let mut h: u32 = 0;
    for &c in name {
        h = (h << 4).wrapping_add(c as u32);
        let g = h & 0xf000_0000;
        if g != 0 {
            h ^= g >> 24;
        }
        h &= !g;
    }
    h
}

/// The bucket count of `.gnu.hash` for `ndefined` defined dynamic symbols.
pub fn gnu_hash_nbuckets(ndefined: usize) -> u32 {
    (ndefined as u32 / 4).max(1)
}
