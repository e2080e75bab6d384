//! Bitcode inputs as every LTO stage sees them: a file's irsymtab with the symbols LTO wants a
//! resolution for (`BitcodeFile`), a file that joined the link with those resolutions
//! (`LtoModule`), and one resolution (`Res`). Format-neutral and below everything that runs
//! LTO: the ELF and COFF resolvers build these, the thin-link hosts (`inproc`, `goldhost`,
//! `thinlink`) read them.

use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::input::InputFile;

use super::irsymtab::{self, IrFile, IrSymbol};
use super::llvm_symtab;
use super::options::LtoOptions;

/// A bitcode input: its irsymtab, and the symbols LTO wants a resolution for, in LTO's order.
/// Format-neutral: the ELF and the COFF resolvers both keep their bitcode inputs as these.
pub struct BitcodeFile {
    pub input: &'static InputFile,
    pub ir: IrFile<'static>,
    /// Indices into `ir.symbols` of the symbols `lto::InputFile::symbols()` lists.
    pub syms: Vec<u32>,
}

impl BitcodeFile {
    /// Reads `input`'s symbols; with `llvm` (the link's LTO options, which say where the
    /// user's LLVM is), a file without a usable irsymtab gets its table from that LLVM
    /// (`llvm_symtab.rs`), as LLVM itself rebuilds one; without, that is an error.
    pub fn parse(input: &'static InputFile, llvm: Option<&LtoOptions>) -> Result<BitcodeFile> {
        let ir = match (irsymtab::parse(input.data), llvm) {
            (Err(e), Some(o)) if e.starts_with(irsymtab::NO_IRSYMTAB) => llvm_symtab::rebuild(input, o, &e),
            (r, _) => r,
        };
        let ir = ir.map_err(|e| Error::new(format!("{}: {e}", input.name)))?;
        // `lto_symbols()` order, as indices (the table's size bounds them well below 2^32).
        let syms = ir.modules.iter().flat_map(|m| m.begin..m.end).filter(|&i| ir.symbols.get(i as usize).is_some_and(|s| s.is_lto_symbol())).collect();
        Ok(BitcodeFile { input, ir, syms })
    }
    /// The machine of a module for another machine than x86-64, by its triple's arch: lld-link's
    /// name for it ("x86", "arm", "arm64", "arm64ec"), or "" for an arch lld-link does not map
    /// to a machine type; `None` for x86-64 or no triple. dtld links x86-64 alone (its thin-link
    /// library registers only LLVM's X86 target), so the resolvers refuse such a module as lld
    /// refuses it, rather than LLVM failing on it ("No available targets").
    pub fn foreign_machine(&self) -> Option<&'static str> {
        let arch = self.ir.target_triple.split(|&b| b == b'-').next().unwrap_or_default();
        Some(match arch {
            b"" | b"x86_64" | b"amd64" | b"x86_64h" => return None,
            b"i386" | b"i486" | b"i586" | b"i686" | b"x86" => "x86",
            b"aarch64" | b"arm64" => "arm64",
            b"arm64ec" => "arm64ec",
            a if a.starts_with(b"arm") || a.starts_with(b"thumb") => "arm",
            _ => "",
        })
    }

    pub fn sym(&self, k: usize) -> &IrSymbol<'static> {
        &self.ir.symbols[self.syms[k] as usize]
    }
}

/// One bitcode file that joined the link, with the resolution of each of its LTO symbols
/// (`BitcodeFile::syms` order).
pub struct LtoModule<'a> {
    pub bitcode: &'a BitcodeFile,
    pub flags: Vec<Res>,
}

/// One symbol's LTO resolution: `llvm-lto2`'s `-r` letters `p` (prevailing), `l` (final
/// definition in the linkage unit), `x` (visible to regular objects), `r` (linker-redefined), as
/// bits (the in-process library's resolution byte); it reads as its letters, in that order. A
/// byte instead of a string per symbol: OpenSSL's thin link has 76,000 of them.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub struct Res(pub u8);

impl Res {
    pub const PREVAILING: u8 = 1;
    pub const FINAL_IN_UNIT: u8 = 2;
    pub const VISIBLE_TO_REGULAR: u8 = 4;
    pub const LINKER_REDEFINED: u8 = 8;

    /// The letters, e.g. `plx`.
    pub fn as_str(&self) -> &'static str {
        const LETTERS: [&str; 16] = ["", "p", "l", "pl", "x", "px", "lx", "plx", "r", "pr", "lr", "plr", "xr", "pxr", "lxr", "plxr"];
        LETTERS[(self.0 & 15) as usize]
    }
}

impl std::ops::Deref for Res {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl std::fmt::Display for Res {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One bitcode module handed to the thin link.
#[derive(Debug, Clone)]
pub struct Module {
    /// The module ID (path relative to the thin link's working directory, or absolute).
    pub id: String,
    /// lld's name for the module in diagnostics (`lib.a(m.o at 8)`): LLVM's messages about it
    /// name `id`, and are shown with this instead (`diagnostics.rs`).
    pub name: String,
    /// The bytes to stage at that path (the input's or member's data).
    pub data: &'static [u8],
    /// A file on disk with exactly those bytes, to symlink to instead of copying.
    pub source: Option<PathBuf>,
    /// `-r` lines: (symbol name, flags).
    pub resolutions: Vec<(&'static [u8], super::bitcode::Res)>,
    /// Whether to create the file at `id` (false: it already exists there, e.g. an absolute
    /// path to the user's own file).
    pub place: bool,
    /// A content-addressed copy of `data` in the ThinLTO cache directory to hard-link from,
    /// for modules that are no file of their own (archive members): written once, linked into
    /// every link's staging tree (no new inode per member and link, nothing written again).
    pub store: Option<PathBuf>,
}

/// One symbol's resolution as the ELF and COFF resolvers decide it, before it is packed into a
/// `Res` (lld's `SymbolResolution` fields).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SymRes {
    pub prevailing: bool,
    pub visible_to_regular: bool,
    pub final_in_unit: bool,
    pub linker_redefined: bool,
}

impl SymRes {
    /// The resolution LTO gets (read as the letters `llvm-lto2 run -r` expects).
    pub fn flags(&self) -> Res {
        let bit = |on: bool, b: u8| if on { b } else { 0 };
        Res(bit(self.prevailing, Res::PREVAILING)
            | bit(self.final_in_unit, Res::FINAL_IN_UNIT)
            | bit(self.visible_to_regular, Res::VISIBLE_TO_REGULAR)
            | bit(self.linker_redefined, Res::LINKER_REDEFINED))
    }
}
