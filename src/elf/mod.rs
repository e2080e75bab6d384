//! ELF-specific input parsing and output construction.

pub mod cdsort;
pub mod cgsort;
pub mod eh_frame;
pub mod gc;
pub mod merge;
pub mod object;
pub mod relocatable;
pub mod shared;
pub mod synthetic;
pub mod version_script;

pub type LE = ::object::LittleEndian;
pub const LE: ::object::LittleEndian = ::object::LittleEndian;
pub type Sym = ::object::elf::Sym64<LE>;
pub type Rela = ::object::elf::Rela64<LE>;
pub type Shdr = ::object::elf::SectionHeader64<LE>;
pub type Ehdr = ::object::elf::FileHeader64<LE>;
