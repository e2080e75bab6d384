//! The irsymtab: the symbol table LLVM stores in every bitcode file, read without LLVM.
//!
//! Symbol resolution for bitcode inputs needs each file's symbols (names, flags, comdats,
//! common sizes) and whether each module is ThinLTO or regular LTO. LLVM writes all of that
//! into the file (`llvm/Object/IRSymtab.h`): a SYMTAB_BLOCK blob of little-endian 32-bit words
//! whose strings live in the STRTAB_BLOCK blob that follows it. Reading it here keeps the user's
//! LLVM out of the resolution phase and makes bitcode files as cheap to scan as objects.
//!
//! `parse` walks the top-level blocks (skipping module contents by their length), checks every
//! offset and count in the table against the blobs, and reports for each module whether it
//! carries a ThinLTO summary. `IrFile::lto_symbols` is exactly the list
//! `lto::InputFile::symbols()` gives, the list LTO wants a resolution for, in its order.

use std::ops::Range;

use dtld_bitcode::bitstream::{BitstreamCursor, Entry};

/// Top-level and module block ids (`llvm/Bitcode/LLVMBitCodes.h`).
const MODULE_BLOCK_ID: u32 = 8;
const IDENTIFICATION_BLOCK_ID: u32 = 13;
const GLOBALVAL_SUMMARY_BLOCK_ID: u32 = 20;
const STRTAB_BLOCK_ID: u32 = 23;
const FULL_LTO_GLOBALVAL_SUMMARY_BLOCK_ID: u32 = 24;
const SYMTAB_BLOCK_ID: u32 = 25;
const BLOCKINFO_BLOCK_ID: u32 = 0;

/// Record codes.
const IDENTIFICATION_CODE_STRING: u32 = 1;
const STRTAB_BLOB: u32 = 1;
const SYMTAB_BLOB: u32 = 1;
const FS_FLAGS: u32 = 20;

/// The irsymtab version this reader understands (`storage::Header::kCurrentVersion`).
pub const IRSYMTAB_VERSION: u32 = 3;

/// Every error meaning "this file has no irsymtab dtld can use" starts with this text. LLVM
/// rebuilds the table from the IR in those cases (no table, a table of another version, or one
/// that does not cover every module, as after `llvm-cat -b`); the caller decides what to do.
pub const NO_IRSYMTAB: &str = "bitcode file has no usable irsymtab";

/// Sizes of the storage structures, in bytes.
const HEADER_SIZE: usize = 76;
const MODULE_SIZE: usize = 12;
const COMDAT_SIZE: usize = 12;
const SYMBOL_SIZE: usize = 24;
const UNCOMMON_SIZE: usize = 24;
const STR_SIZE: usize = 8;

/// `storage::Symbol::FlagBits`.
pub mod flags {
    pub const VISIBILITY_MASK: u32 = 3;
    pub const HAS_UNCOMMON: u32 = 1 << 2;
    pub const UNDEFINED: u32 = 1 << 3;
    pub const WEAK: u32 = 1 << 4;
    pub const COMMON: u32 = 1 << 5;
    pub const INDIRECT: u32 = 1 << 6;
    #[cfg(test)]
    pub const USED: u32 = 1 << 7;
    pub const TLS: u32 = 1 << 8;
    pub const MAY_OMIT: u32 = 1 << 9;
    pub const GLOBAL: u32 = 1 << 10;
    pub const FORMAT_SPECIFIC: u32 = 1 << 11;
    pub const EXECUTABLE: u32 = 1 << 13;
}

/// `GlobalValue::VisibilityTypes`.
pub const VISIBILITY_DEFAULT: u8 = 0;
pub const VISIBILITY_HIDDEN: u8 = 1;
pub const VISIBILITY_PROTECTED: u8 = 2;

/// One module of a bitcode file (a file holds several after `-fsplit-lto-unit` or `llvm-cat`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IrModule {
    /// This module's symbols: `IrFile::symbols[begin..end]`.
    pub begin: u32,
    pub end: u32,
    /// Index of this module's first `Uncommon` in the table.
    pub unc_begin: u32,
    /// The module has a GLOBALVAL_SUMMARY_BLOCK: it is a ThinLTO module.
    pub thin: bool,
    /// The module has a summary block of either kind (ThinLTO, or regular LTO with a summary).
    pub has_summary: bool,
    /// The summary's FS_FLAGS say the module was compiled with `-fsplit-lto-unit`.
    pub split_lto_unit: bool,
    /// The summary's FS_FLAGS say the module was compiled with `-funified-lto`.
    pub unified_lto: bool,
    /// The module's bytes in the input, as LLVM's `BitcodeModule` sees them: from the end of the
    /// previous top-level block (just after the magic for the first module) to the end of its
    /// MODULE_BLOCK, so including its IDENTIFICATION block.
    pub bitcode: Range<usize>,
}

/// A comdat: its name and `Comdat::SelectionKind` (0 any, 1 exactmatch, 2 largest,
/// 3 nodeduplicate, 4 samesize).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IrComdat<'a> {
    pub name: &'a [u8],
    pub selection_kind: u32,
}

impl IrComdat<'_> {
    /// The selection kind as `llvm-lto2 dump-symtab` names it (empty if unknown).
    pub fn selection_name(&self) -> &'static str {
        match self.selection_kind {
            0 => "any",
            1 => "exactmatch",
            2 => "largest",
            3 => "nodeduplicate",
            4 => "samesize",
            _ => "",
        }
    }
}

/// A symbol. The fields of its `Uncommon` entry, which few symbols have, are apart
/// (`IrFile::uncommon`): a symbol is 32 bytes, and OpenSSL's thin link holds 76,000 of them
/// until it ends (they were 88 bytes: 4 MiB of its peak memory). LLVM's IR name of the symbol
/// is not kept (the linker resolves the mangled name).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IrSymbol<'a> {
    /// The mangled name (what the linker resolves).
    pub name: &'a [u8],
    /// Index into `IrFile::comdats`.
    pub comdat: Option<u32>,
    /// `flags::*` bits.
    pub flags: u32,
    /// Index into `IrFile::uncommons`, `NO_UNCOMMON` if none.
    pub uncommon: u32,
}

/// `IrSymbol::uncommon` of a symbol without an `Uncommon` entry.
pub const NO_UNCOMMON: u32 = u32::MAX;

/// The fields of a symbol's `Uncommon` entry (zero or empty for a symbol without one).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IrUncommon<'a> {
    pub common_size: u32,
    pub common_align: u32,
    pub section_name: &'a [u8],
    pub coff_weak_fallback: &'a [u8],
}

impl IrSymbol<'_> {
    /// `VISIBILITY_DEFAULT`, `VISIBILITY_HIDDEN` or `VISIBILITY_PROTECTED`.
    pub fn visibility(&self) -> u8 {
        (self.flags & flags::VISIBILITY_MASK) as u8
    }
    pub fn has_uncommon(&self) -> bool {
        self.flags & flags::HAS_UNCOMMON != 0
    }
    pub fn undefined(&self) -> bool {
        self.flags & flags::UNDEFINED != 0
    }
    pub fn weak(&self) -> bool {
        self.flags & flags::WEAK != 0
    }
    pub fn common(&self) -> bool {
        self.flags & flags::COMMON != 0
    }
    pub fn indirect(&self) -> bool {
        self.flags & flags::INDIRECT != 0
    }
    #[cfg(test)]
    pub fn used(&self) -> bool {
        self.flags & flags::USED != 0
    }
    pub fn tls(&self) -> bool {
        self.flags & flags::TLS != 0
    }
    /// `canBeOmittedFromSymbolTable`: linkonce_odr + unnamed_addr and the like.
    pub fn may_omit(&self) -> bool {
        self.flags & flags::MAY_OMIT != 0
    }
    pub fn global(&self) -> bool {
        self.flags & flags::GLOBAL != 0
    }
    pub fn format_specific(&self) -> bool {
        self.flags & flags::FORMAT_SPECIFIC != 0
    }
    pub fn executable(&self) -> bool {
        self.flags & flags::EXECUTABLE != 0
    }
    /// Whether LTO wants a resolution for this symbol (`lto::InputFile::create`'s filter).
    pub fn is_lto_symbol(&self) -> bool {
        self.global() && !self.format_specific()
    }
}

/// A bitcode file's irsymtab and module facts.
#[derive(Clone, Debug)]
pub struct IrFile<'a> {
    /// `storage::Header::Version` (always `IRSYMTAB_VERSION`: other versions are errors).
    pub version: u32,
    /// The producer of the table, `LLVM_VERSION_STRING [" " LLVM_REVISION]`, e.g. `22.1.8`.
    /// LLVM ignores (rebuilds) a table whose producer is not itself.
    pub producer: &'a [u8],
    /// The first IDENTIFICATION block's producer string, e.g. `LLVM22.1.8`.
    pub ident_producer: Option<String>,
    pub target_triple: &'a [u8],
    pub source_filename: &'a [u8],
    pub coff_linker_opts: &'a [u8],
    pub dependent_libraries: Vec<&'a [u8]>,
    pub modules: Vec<IrModule>,
    pub comdats: Vec<IrComdat<'a>>,
    /// All symbols in storage order (the modules' ranges tile this list).
    pub symbols: Vec<IrSymbol<'a>>,
    /// The `Uncommon` entries of the symbols that have one (`IrSymbol::uncommon`).
    pub uncommons: Vec<IrUncommon<'a>>,
}

impl<'a> IrFile<'a> {
    /// The `Uncommon` fields of `s`, one of this file's symbols (all zero or empty if it has
    /// no such entry).
    pub fn uncommon(&self, s: &IrSymbol) -> IrUncommon<'a> {
        self.uncommons.get(s.uncommon as usize).copied().unwrap_or_default()
    }

    /// The symbols LTO wants resolutions for, in the order it wants them: each module's
    /// symbols that are global and not format-specific (`lto::InputFile::symbols()`).
    pub fn lto_symbols(&self) -> impl Iterator<Item = &IrSymbol<'a>> + '_ {
        self.modules.iter().flat_map(move |m| self.module_symbols(m)).filter(|s| s.is_lto_symbol())
    }

    /// All of one module's symbols.
    pub fn module_symbols(&self, m: &IrModule) -> &[IrSymbol<'a>] {
        self.symbols.get(m.begin as usize..m.end as usize).unwrap_or(&[])
    }

    /// The object file format the target triple implies (as LLVM's `Triple` decides it).
    pub fn object_format(&self) -> ObjectFormat {
        object_format(self.target_triple)
    }

    /// The text `llvm-lto2 dump-symtab FILE` prints for this file, as bytes.
    pub fn dump_bytes(&self) -> Vec<u8> {
        let mut o = Vec::new();
        o.extend_from_slice(format!("version: {}\n", self.version).as_bytes());
        if self.version == IRSYMTAB_VERSION {
            line(&mut o, &[b"producer: ", self.producer]);
        }
        line(&mut o, &[b"target triple: ", self.target_triple]);
        line(&mut o, &[b"source filename: ", self.source_filename]);
        let format = self.object_format();
        if format == ObjectFormat::Coff {
            line(&mut o, &[b"linker opts: ", self.coff_linker_opts]);
        }
        if format == ObjectFormat::Elf {
            o.extend_from_slice(b"dependent libraries:");
            for l in &self.dependent_libraries {
                o.extend_from_slice(b" \"");
                o.extend_from_slice(l);
                o.push(b'"');
            }
            o.push(b'\n');
        }
        for s in self.lto_symbols() {
            match s.visibility() {
                VISIBILITY_HIDDEN => o.push(b'H'),
                VISIBILITY_PROTECTED => o.push(b'P'),
                VISIBILITY_DEFAULT => o.push(b'D'),
                _ => {}
            }
            for (c, b) in [
                (b'U', s.undefined()),
                (b'C', s.common()),
                (b'W', s.weak()),
                (b'I', s.indirect()),
                (b'O', s.may_omit()),
                (b'T', s.tls()),
                (b'X', s.executable()),
            ] {
                o.push(if b { c } else { b'-' });
            }
            line(&mut o, &[b" ", s.name]);
            let u = self.uncommon(s);
            if s.common() {
                o.extend_from_slice(format!("         size {} align {}\n", u.common_size, u.common_align).as_bytes());
            }
            if let Some(c) = s.comdat.and_then(|c| self.comdats.get(c as usize)) {
                line(&mut o, &[b"         comdat ", c.selection_name().as_bytes(), b" ", c.name]);
            }
            if format == ObjectFormat::Coff && s.weak() && s.indirect() {
                line(&mut o, &[b"         fallback ", u.coff_weak_fallback]);
            }
            if !u.section_name.is_empty() {
                line(&mut o, &[b"         section ", u.section_name]);
            }
        }
        o.push(b'\n');
        o
    }

    /// The text `llvm-lto2 dump-symtab FILE` prints for this file (names that are not UTF-8
    /// are shown lossily; `dump_bytes` has the exact bytes).
    pub fn dump(&self) -> String {
        String::from_utf8_lossy(&self.dump_bytes()).into_owned()
    }
}

fn line(o: &mut Vec<u8>, parts: &[&[u8]]) {
    for p in parts {
        o.extend_from_slice(p);
    }
    o.push(b'\n');
}

/// Object file formats, as far as bitcode symbol handling cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectFormat {
    Elf,
    Coff,
    MachO,
    Other,
}

/// The object format LLVM's `Triple` gives `triple`: an explicit format suffix on the
/// environment (`-elf`, `-coff`, `-macho`, ...), else the default for the arch and OS.
pub fn object_format(triple: &[u8]) -> ObjectFormat {
    let t = String::from_utf8_lossy(triple);
    let c: Vec<&str> = t.splitn(4, '-').collect();
    if let Some(env) = c.get(3) {
        for (suffix, f) in [
            ("xcoff", ObjectFormat::Other),
            ("coff", ObjectFormat::Coff),
            ("elf", ObjectFormat::Elf),
            ("goff", ObjectFormat::Other),
            ("macho", ObjectFormat::MachO),
            ("wasm", ObjectFormat::Other),
            ("spirv", ObjectFormat::Other),
        ] {
            if env.ends_with(suffix) {
                return f;
            }
        }
    }
    let arch = c.first().copied().unwrap_or("");
    let os = c.get(2).copied().unwrap_or("");
    if arch.starts_with("wasm") || arch.starts_with("spirv") || arch.starts_with("dxil") {
        return ObjectFormat::Other;
    }
    let darwin = ["darwin", "macos", "ios", "tvos", "watchos", "xros", "driverkit", "bridgeos"];
    if darwin.iter().any(|d| os.starts_with(d)) && !arch.starts_with("s390") {
        return ObjectFormat::MachO;
    }
    if os.starts_with("aix") || os.starts_with("zos") {
        return ObjectFormat::Other;
    }
    let pe_arch = ["x86_64", "amd64", "i386", "i486", "i586", "i686", "x86", "aarch64", "arm", "thumb"];
    if (os.starts_with("windows") || os.starts_with("win32") || os.starts_with("uefi"))
        && (arch.is_empty() || arch == "unknown" || pe_arch.iter().any(|a| arch.starts_with(a)))
    {
        return ObjectFormat::Coff;
    }
    ObjectFormat::Elf
}

/// True if `data` starts with the bitcode magic (`BC` 0xC0DE) or the bitcode wrapper magic.
pub fn is_bitcode(data: &[u8]) -> bool {
    data.starts_with(&[0xDE, 0xC0, 0x17, 0x0B]) || data.starts_with(b"BC\xC0\xDE")
}

/// The bitstream inside `data` (unwrapping the wrapper header) and its offset in `data`.
fn bitcode_stream(data: &[u8]) -> Result<(&[u8], usize), String> {
    if !data.len().is_multiple_of(4) {
        return Err("Invalid bitcode signature".into());
    }
    let mut start = 0;
    let mut stream = data;
    if data.starts_with(&[0xDE, 0xC0, 0x17, 0x0B]) {
        // Magic, version, offset, size, cputype: little-endian 32-bit words.
        if data.len() < 16 {
            return Err("Invalid bitcode wrapper header".into());
        }
        let offset = u32_le(data, 8) as usize;
        let size = u32_le(data, 12) as usize;
        let end = offset.checked_add(size).filter(|&e| e <= data.len());
        let Some(end) = end else {
            return Err("Invalid bitcode wrapper header".into());
        };
        start = offset;
        stream = &data[offset..end];
    }
    if stream.len() < 4 {
        return Err("file too small to contain bitcode header".into());
    }
    if !stream.starts_with(b"BC\xC0\xDE") {
        return Err("file doesn't start with bitcode header".into());
    }
    Ok((stream, start))
}

/// A little-endian u32 at `off`; the caller has checked the bounds.
fn u32_le(b: &[u8], off: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[off..off + 4]);
    u32::from_le_bytes(w)
}

/// Where a module's blocks are in the stream.
struct ModuleLoc {
    /// Byte where the module's bytes start (its IDENTIFICATION block, if any).
    begin: usize,
    /// Bit where the MODULE_BLOCK header (after its id) starts.
    module_bit: u64,
    /// Byte after the MODULE_BLOCK.
    end: usize,
}

/// Facts about a module gathered from its MODULE_BLOCK (`BitcodeModule::getLTOInfo`).
#[derive(Default)]
struct LtoInfo {
    thin: bool,
    has_summary: bool,
    split_lto_unit: bool,
    unified_lto: bool,
}

/// What a walk over a bitcode file's top-level blocks finds.
struct Scan<'a> {
    stream: &'a [u8],
    stream_start: usize,
    mods: Vec<ModuleLoc>,
    ident_bit: Option<u64>,
    symtab: &'a [u8],
    strtab_for_symtab: &'a [u8],
}

/// Walks the top level, as LLVM's getBitcodeFileContents does.
fn scan(data: &[u8]) -> Result<Scan<'_>, String> {
    let (stream, stream_start) = bitcode_stream(data)?;
    let mut cur = BitstreamCursor::new(stream);
    cur.jump_to_bit(32)?;
    let mut s = Scan { stream, stream_start, mods: Vec::new(), ident_bit: None, symtab: &[], strtab_for_symtab: &[] };
    loop {
        let begin = cur.byte_pos();
        // Trailing garbage (as Apple's ar leaves) too short to hold another module ends the walk.
        if begin + 8 >= stream.len() as u64 {
            break;
        }
        match cur.advance()? {
            Entry::EndBlock => return Err("Malformed block".into()),
            Entry::Record(abbrev) => {
                cur.skip_record(abbrev)?;
            }
            Entry::SubBlock(mut id) => {
                if id == IDENTIFICATION_BLOCK_ID {
                    if s.ident_bit.is_none() {
                        s.ident_bit = Some(cur.bit_pos());
                    }
                    cur.skip_block()?;
                    match cur.advance()? {
                        Entry::SubBlock(MODULE_BLOCK_ID) => id = MODULE_BLOCK_ID,
                        _ => return Err("Malformed block".into()),
                    }
                }
                match id {
                    MODULE_BLOCK_ID => {
                        let module_bit = cur.bit_pos();
                        cur.skip_block()?;
                        s.mods.push(ModuleLoc { begin: begin as usize, module_bit, end: cur.byte_pos() as usize });
                    }
                    STRTAB_BLOCK_ID => {
                        let blob = read_blob_in_block(&mut cur, STRTAB_BLOCK_ID, STRTAB_BLOB)?;
                        // The first string table after the symbol table is the one it uses.
                        if !s.symtab.is_empty() && s.strtab_for_symtab.is_empty() {
                            s.strtab_for_symtab = blob;
                        }
                    }
                    SYMTAB_BLOCK_ID => {
                        let blob = read_blob_in_block(&mut cur, SYMTAB_BLOCK_ID, SYMTAB_BLOB)?;
                        // Later tables (binary concatenation) are ignored, as LLVM does.
                        if s.symtab.is_empty() {
                            s.symtab = blob;
                        }
                    }
                    _ => cur.skip_block()?,
                }
            }
        }
    }
    if s.mods.is_empty() {
        return Err("Bitcode file does not contain any modules".into());
    }
    Ok(s)
}

impl Scan<'_> {
    /// Fills in each module's LTO facts and byte range (`modules` pairs with `self.mods`).
    fn module_facts(&self, modules: &mut [IrModule]) -> Result<(), String> {
        for (m, loc) in modules.iter_mut().zip(&self.mods) {
            let info = read_lto_info(self.stream, loc.module_bit)?;
            m.thin = info.thin;
            m.has_summary = info.has_summary;
            m.split_lto_unit = info.split_lto_unit;
            m.unified_lto = info.unified_lto;
            m.bitcode = self.stream_start + loc.begin..self.stream_start + loc.end;
        }
        Ok(())
    }
}

/// Reads a bitcode file's irsymtab. `data` is the whole file (or archive member).
///
/// Errors that start with `NO_IRSYMTAB` mean the file is valid as far as read but LLVM would
/// have to rebuild its symbol table from the IR.
pub fn parse(data: &[u8]) -> Result<IrFile<'_>, String> {
    let s = scan(data)?;
    if s.symtab.len() < HEADER_SIZE || s.strtab_for_symtab.is_empty() {
        return Err(NO_IRSYMTAB.into());
    }
    let ident_producer = s.ident_bit.and_then(|bit| read_identification(s.stream, bit));

    let mut file = read_symtab(s.symtab, s.strtab_for_symtab)?;
    file.ident_producer = ident_producer;
    if file.modules.len() != s.mods.len() {
        return Err(format!("{NO_IRSYMTAB} (it describes {} modules, the file has {})", file.modules.len(), s.mods.len()));
    }
    s.module_facts(&mut file.modules)?;
    Ok(file)
}

/// The modules of a bitcode file whose symbol table must come from elsewhere: their LTO facts
/// and byte ranges, with empty symbol ranges, and the IDENTIFICATION block's producer.
pub fn modules_only(data: &[u8]) -> Result<(Vec<IrModule>, Option<String>), String> {
    let s = scan(data)?;
    let mut modules =
        vec![
            IrModule { begin: 0, end: 0, unc_begin: 0, thin: false, has_summary: false, split_lto_unit: false, unified_lto: false, bitcode: 0..0 };
            s.mods.len()
        ];
    s.module_facts(&mut modules)?;
    Ok((modules, s.ident_bit.and_then(|bit| read_identification(s.stream, bit))))
}

/// Enters the block `block_id` whose id was just read and returns the blob of its last record
/// with code `code` (empty if none), skipping sub-blocks (LLVM's readBlobInRecord).
fn read_blob_in_block<'a>(cur: &mut BitstreamCursor<'a>, block_id: u32, code: u32) -> Result<&'a [u8], String> {
    cur.enter_block(block_id)?;
    let mut blob: &[u8] = &[];
    loop {
        match cur.advance()? {
            Entry::EndBlock => return Ok(blob),
            Entry::SubBlock(_) => cur.skip_block()?,
            Entry::Record(abbrev) => {
                let (c, b) = cur.read_record_blob(abbrev)?;
                if c == code {
                    blob = b.unwrap_or(&[]);
                }
            }
        }
    }
}

/// The producer string of the IDENTIFICATION block whose header starts at `bit`, if readable.
fn read_identification(stream: &[u8], bit: u64) -> Option<String> {
    let mut cur = BitstreamCursor::new(stream);
    cur.jump_to_bit(bit).ok()?;
    cur.enter_block(IDENTIFICATION_BLOCK_ID).ok()?;
    let mut producer = None;
    loop {
        match cur.advance().ok()? {
            Entry::EndBlock => return producer,
            Entry::SubBlock(_) => cur.skip_block().ok()?,
            Entry::Record(abbrev) => {
                let rec = cur.read_record(abbrev).ok()?;
                if rec.code == IDENTIFICATION_CODE_STRING {
                    let bytes: Vec<u8> = rec.ops.iter().map(|&c| c as u8).collect();
                    producer = Some(String::from_utf8_lossy(&bytes).into_owned());
                }
            }
        }
    }
}

/// Walks the MODULE_BLOCK whose header starts at `bit` for a summary block (getLTOInfo).
fn read_lto_info(stream: &[u8], bit: u64) -> Result<LtoInfo, String> {
    // LLVM's BLOCKINFO holds abbreviations for the value symbol table, constants and function
    // blocks only, none of which this walk enters: it is skipped (a quarter of the walk's
    // instructions, 999 times in an OpenSSL link). A file that needs it after all (a summary
    // block using BLOCKINFO abbreviations) is read again with it.
    read_lto_info_with(stream, bit, false).or_else(|_| read_lto_info_with(stream, bit, true))
}

fn read_lto_info_with(stream: &[u8], bit: u64, blockinfo: bool) -> Result<LtoInfo, String> {
    let mut cur = BitstreamCursor::new(stream);
    cur.jump_to_bit(bit)?;
    cur.enter_block(MODULE_BLOCK_ID)?;
    loop {
        match cur.advance()? {
            Entry::EndBlock => return Ok(LtoInfo::default()),
            Entry::Record(abbrev) => {
                cur.skip_record(abbrev)?;
            }
            Entry::SubBlock(BLOCKINFO_BLOCK_ID) if blockinfo => cur.read_blockinfo_block()?,
            Entry::SubBlock(id @ (GLOBALVAL_SUMMARY_BLOCK_ID | FULL_LTO_GLOBALVAL_SUMMARY_BLOCK_ID)) => {
                let (split_lto_unit, unified_lto) = read_summary_flags(&mut cur, id)?;
                return Ok(LtoInfo { thin: id == GLOBALVAL_SUMMARY_BLOCK_ID, has_summary: true, split_lto_unit, unified_lto });
            }
            Entry::SubBlock(_) => cur.skip_block()?,
        }
    }
}

/// Enters a summary block and reads its FS_FLAGS record: (EnableSplitLTOUnit, UnifiedLTO).
fn read_summary_flags(cur: &mut BitstreamCursor, id: u32) -> Result<(bool, bool), String> {
    cur.enter_block(id)?;
    loop {
        match cur.advance()? {
            Entry::EndBlock => return Ok((false, false)),
            Entry::SubBlock(_) => cur.skip_block()?,
            Entry::Record(abbrev) => {
                // Skip cheaply; re-read only the FLAGS record.
                let at = cur.bit_pos();
                if cur.skip_record(abbrev)? != FS_FLAGS {
                    continue;
                }
                cur.jump_to_bit(at)?;
                let rec = cur.read_record(abbrev)?;
                let Some(&f) = rec.ops.first() else {
                    return Err("Invalid record".into());
                };
                return Ok((f & 0x8 != 0, f & 0x200 != 0));
            }
        }
    }
}

/// Bounds-checked views of the symbol table and its string table.
struct Tables<'a> {
    symtab: &'a [u8],
    strtab: &'a [u8],
}

impl<'a> Tables<'a> {
    fn word(&self, off: usize) -> Result<u32, String> {
        if off.checked_add(4).is_none_or(|e| e > self.symtab.len()) {
            return Err("Invalid irsymtab: truncated".into());
        }
        Ok(u32_le(self.symtab, off))
    }

    /// The string a `storage::Str` at `off` refers to.
    fn str(&self, off: usize) -> Result<&'a [u8], String> {
        let (o, n) = (self.word(off)? as usize, self.word(off + 4)? as usize);
        o.checked_add(n).and_then(|e| self.strtab.get(o..e)).ok_or_else(|| "Invalid irsymtab: string out of bounds".to_string())
    }

    /// The (byte offset, count) of a `storage::Range` at `off` of `elem`-byte entries.
    fn range(&self, off: usize, elem: usize) -> Result<(usize, usize), String> {
        let (o, n) = (self.word(off)? as u64, self.word(off + 4)? as u64);
        if o + n * elem as u64 > self.symtab.len() as u64 {
            return Err("Invalid irsymtab: range out of bounds".into());
        }
        Ok((o as usize, n as usize))
    }
}

/// Decodes an irsymtab (`storage::Header` and what it points to), checking every reference.
fn read_symtab<'a>(symtab: &'a [u8], strtab: &'a [u8]) -> Result<IrFile<'a>, String> {
    let t = Tables { symtab, strtab };
    let version = t.word(0)?;
    if version != IRSYMTAB_VERSION {
        return Err(format!("{NO_IRSYMTAB} (version {version}, expected {IRSYMTAB_VERSION})"));
    }
    let producer = t.str(4)?;
    let (mods_off, nmods) = t.range(12, MODULE_SIZE)?;
    let (comdats_off, ncomdats) = t.range(20, COMDAT_SIZE)?;
    let (syms_off, nsyms) = t.range(28, SYMBOL_SIZE)?;
    let (uncs_off, nuncs) = t.range(36, UNCOMMON_SIZE)?;
    let target_triple = t.str(44)?;
    let source_filename = t.str(52)?;
    let coff_linker_opts = t.str(60)?;
    let (libs_off, nlibs) = t.range(68, STR_SIZE)?;

    // Counts were checked against the table's size, so these allocations are bounded by it.
    let mut dependent_libraries = Vec::with_capacity(nlibs);
    for i in 0..nlibs {
        dependent_libraries.push(t.str(libs_off + i * STR_SIZE)?);
    }

    let mut comdats = Vec::with_capacity(ncomdats);
    for i in 0..ncomdats {
        let off = comdats_off + i * COMDAT_SIZE;
        comdats.push(IrComdat { name: t.str(off)?, selection_kind: t.word(off + 8)? });
    }

    let mut symbols = Vec::with_capacity(nsyms);
    for i in 0..nsyms {
        let off = syms_off + i * SYMBOL_SIZE;
        let comdat = match t.word(off + 16)? {
            u32::MAX => None,
            c if (c as usize) < ncomdats => Some(c),
            c => return Err(format!("Invalid irsymtab: comdat index {c} out of range")),
        };
        // (The IR name at `off + 8` is not kept, but must be a valid string all the same.)
        t.str(off + 8)?;
        symbols.push(IrSymbol { name: t.str(off)?, comdat, flags: t.word(off + 20)?, uncommon: NO_UNCOMMON });
    }

    // Modules must tile the symbol list in order, each starting at the Uncommon entry that
    // follows the previous module's, as irsymtab::build lays them out. Then reading the
    // Uncommons in one pass gives every symbol the entry LLVM's per-module reader gives it.
    let mut modules = Vec::with_capacity(nmods);
    let mut uncommons = Vec::with_capacity(nuncs);
    let mut next_sym = 0usize;
    let mut next_unc = 0usize;
    for i in 0..nmods {
        let off = mods_off + i * MODULE_SIZE;
        let (begin, end, unc_begin) = (t.word(off)?, t.word(off + 4)?, t.word(off + 8)?);
        if begin as usize != next_sym || end < begin || end as usize > nsyms || unc_begin as usize != next_unc {
            return Err(format!("Invalid irsymtab: bad symbol range for module {i}"));
        }
        for s in &mut symbols[begin as usize..end as usize] {
            if !s.has_uncommon() {
                continue;
            }
            if next_unc >= nuncs {
                return Err("Invalid irsymtab: missing uncommon symbol entry".into());
            }
            let u = uncs_off + next_unc * UNCOMMON_SIZE;
            s.uncommon = uncommons.len() as u32;
            uncommons.push(IrUncommon {
                common_size: t.word(u)?,
                common_align: t.word(u + 4)?,
                coff_weak_fallback: t.str(u + 8)?,
                section_name: t.str(u + 16)?,
            });
            next_unc += 1;
        }
        next_sym = end as usize;
        modules.push(IrModule { begin, end, unc_begin, thin: false, has_summary: false, split_lto_unit: false, unified_lto: false, bitcode: 0..0 });
    }
    if next_sym != nsyms {
        return Err("Invalid irsymtab: symbols outside every module".into());
    }

    Ok(IrFile {
        version,
        producer,
        ident_producer: None,
        target_triple,
        source_filename,
        coff_linker_opts,
        dependent_libraries,
        modules,
        comdats,
        symbols,
        uncommons,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};
    use std::process::Command;

    const LLVM_BIN: &str = "/usr/lib/llvm-22/bin";

    fn tool(name: &str) -> PathBuf {
        Path::new(LLVM_BIN).join(name)
    }

    fn have_llvm() -> bool {
        let ok = ["clang", "clang++", "llvm-lto2", "llvm-bcanalyzer"].iter().all(|t| tool(t).exists());
        if !ok {
            eprintln!("note: {LLVM_BIN}/clang (or llvm-lto2, llvm-bcanalyzer) missing; skipping");
        }
        ok
    }

    /// A scratch directory removed on drop.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Scratch {
            let d = std::env::temp_dir().join(format!("dtld-irsymtab-{}-{name}", std::process::id()));
            let _ = std::fs::remove_dir_all(&d);
            std::fs::create_dir_all(&d).unwrap();
            Scratch(d)
        }
        fn path(&self, f: &str) -> PathBuf {
            self.0.join(f)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn run(cmd: &mut Command) -> Vec<u8> {
        let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
        assert!(out.status.success(), "{cmd:?} failed:\n{}", String::from_utf8_lossy(&out.stderr));
        out.stdout
    }

    /// Compiles `src` (file name `name`, which sets the language) with `compiler` and `args`.
    fn compile(dir: &Scratch, compiler: &str, name: &str, src: &str, args: &[&str], env: &[(&str, &str)]) -> PathBuf {
        let input = dir.path(name);
        std::fs::write(&input, src).unwrap();
        let output = dir.path(&format!("{name}.{}.o", args.join("").replace(['=', '-', '/'], "")));
        let mut cmd = Command::new(tool(compiler));
        cmd.current_dir(&dir.0).args(args).arg("-c").arg(name).arg("-o").arg(&output);
        for (k, v) in env {
            cmd.env(k, v);
        }
        run(&mut cmd);
        output
    }

    /// Summary kind and FS_FLAGS of each module, from llvm-bcanalyzer's dump: (thin, flags).
    fn bcanalyzer_modules(path: &Path) -> Vec<(Option<bool>, u64)> {
        let out = run(Command::new(tool("llvm-bcanalyzer")).arg("--dump").arg(path));
        let text = String::from_utf8_lossy(&out);
        let mut mods: Vec<(Option<bool>, u64)> = Vec::new();
        let mut in_summary = false;
        for l in text.lines() {
            if l.starts_with("<MODULE_BLOCK") {
                mods.push((None, 0));
            } else if l.starts_with("  <GLOBALVAL_SUMMARY_BLOCK") {
                mods.last_mut().unwrap().0 = Some(true);
                in_summary = true;
            } else if l.starts_with("  <FULL_LTO_GLOBALVAL_SUMMARY_BLOCK") {
                mods.last_mut().unwrap().0 = Some(false);
                in_summary = true;
            } else if l.starts_with("  </") {
                in_summary = false;
            } else if in_summary && l.trim_start().starts_with("<FLAGS ") {
                let v = l.split("op0=").nth(1).unwrap();
                let v: String = v.chars().take_while(|c| c.is_ascii_digit()).collect();
                mods.last_mut().unwrap().1 = v.parse().unwrap();
            }
        }
        mods
    }

    /// Parses `path`, compares `dump()` with `llvm-lto2 dump-symtab` and the module kinds with
    /// llvm-bcanalyzer, and checks that truncations and bit flips of it fail cleanly.
    fn check(path: &Path) -> Vec<u8> {
        let data = std::fs::read(path).unwrap();
        assert!(is_bitcode(&data));
        let file = parse(&data).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let expected = run(Command::new(tool("llvm-lto2")).arg("dump-symtab").arg(path));
        let ours = file.dump_bytes();
        assert_eq!(String::from_utf8_lossy(&ours), String::from_utf8_lossy(&expected), "dump-symtab mismatch for {}", path.display());
        assert_eq!(ours, expected);

        let truth = bcanalyzer_modules(path);
        assert_eq!(file.modules.len(), truth.len(), "module count of {}", path.display());
        for (m, (kind, fl)) in file.modules.iter().zip(&truth) {
            assert_eq!(m.thin, *kind == Some(true), "thin flag of {}", path.display());
            assert_eq!(m.has_summary, kind.is_some());
            assert_eq!(m.split_lto_unit, fl & 8 != 0);
            assert_eq!(m.unified_lto, fl & 0x200 != 0);
            assert!(m.bitcode.end <= data.len() && m.bitcode.start < m.bitcode.end);
        }
        assert!(file.ident_producer.as_deref().is_some_and(|p| p.starts_with("LLVM")));
        assert_eq!(file.lto_symbols().count(), file.symbols.iter().filter(|s| s.is_lto_symbol()).count());
        robustness(&data);
        data
    }

    /// Every truncation and a few hundred deterministic bit flips give Ok or Err, never a panic.
    fn robustness(data: &[u8]) {
        // The stream's end: the wrapper's offset + size, or the end of the data.
        let needed = match bitcode_stream(data) {
            Ok((stream, start)) => start + stream.len(),
            Err(_) => data.len(),
        };
        for len in 0..data.len() {
            // Every prefix that cuts the stream cuts a block or misses the string table.
            let r = parse(&data[..len]);
            assert!(len >= needed || r.is_err(), "prefix of {len} bytes parsed");
        }
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut copy = data.to_vec();
        for _ in 0..400 {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let bit = (seed >> 11) as usize % (data.len() * 8);
            copy[bit / 8] ^= 1 << (bit % 8);
            if let Ok(f) = parse(&copy) {
                let _ = f.dump_bytes();
                let _ = f.lto_symbols().count();
            }
            copy[bit / 8] ^= 1 << (bit % 8);
        }
    }

    /// A longer mutation run (`cargo test -- --ignored`): bit flips, byte and word stores.
    #[test]
    #[ignore]
    fn mutation_fuzz_long() {
        if !have_llvm() {
            return;
        }
        let d = Scratch::new("fuzz");
        let files = [
            compile(&d, "clang", "a.c", C_SRC, &["-flto=thin", "-fcommon"], &[]),
            compile(&d, "clang++", "b.cc", CXX_SRC, &["-flto=thin", "-fsplit-lto-unit", "-fwhole-program-vtables"], &[]),
            compile(&d, "clang", "m.c", "int f(void) { return 1; }\n", &["--target=x86_64-apple-macosx11", "-flto=full"], &[]),
        ];
        let mut seed = 42u64;
        let mut next = move || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            seed >> 16
        };
        for f in &files {
            let data = std::fs::read(f).unwrap();
            let mut ok = 0;
            for _ in 0..100_000 {
                let mut copy = data.clone();
                for _ in 0..1 + next() % 4 {
                    let at = next() as usize % copy.len();
                    match next() % 3 {
                        0 => copy[at] ^= 1 << (next() % 8),
                        1 => copy[at] = next() as u8,
                        _ => {
                            let at = at & !3;
                            if at + 4 <= copy.len() {
                                copy[at..at + 4].copy_from_slice(&(next() as u32).to_le_bytes());
                            }
                        }
                    }
                }
                if let Ok(p) = parse(&copy) {
                    ok += 1;
                    let _ = p.dump_bytes();
                }
            }
            eprintln!("{}: {ok} of 100000 mutants parsed", f.display());
        }
    }

    const C_SRC: &str = r#"
#pragma comment(lib, "m")
int common_var;
int common_arr[100] __attribute__((aligned(64)));
__attribute__((weak)) int weak_var = 1;
__attribute__((visibility("hidden"))) int hidden_var = 2;
__attribute__((visibility("protected"))) int protected_fn(void) { return 3; }
__thread int tls_var;
static __thread int tls_static;
__attribute__((section("foo"))) int in_foo = 4;
__attribute__((section("bar"))) int in_bar_fn(void) { return 5; }
__attribute__((used)) static int used_static = 5;
__attribute__((used)) int used_global = 6;
__attribute__((retain, used)) int retained = 7;
extern int undef_var;
extern void undef_fn(void);
__attribute__((weak)) void weak_undef(void);
static int local_fn(void) { return undef_var + tls_static; }
int real_fn(void) { undef_fn(); if (weak_undef) weak_undef(); return local_fn(); }
int alias_fn(void) __attribute__((alias("real_fn")));
__attribute__((weak)) int weak_alias(void) __attribute__((alias("real_fn")));
static int (*resolve_ifn(void))(void) { return real_fn; }
int ifn(void) __attribute__((ifunc("resolve_ifn")));
__asm__(".globl asm_sym\nasm_sym:\n .long 0\n.weak asm_weak\nasm_weak:\n .long 1\n.local asm_local\nasm_local:\n .long 2\n call asm_undef\n");
const char *str(void) { return "hello"; }
const int ro_const = 9;
int __attribute__((visibility("hidden"))) hidden_fn(void) { return in_bar_fn() + common_arr[3]; }
"#;

    const CXX_SRC: &str = r#"
template <class T> T tmpl(T x) { return x + 1; }
inline int inl(int x) { return x * 2; }
struct S { virtual int f(); virtual ~S(); };
int S::f() { return 1; }
S::~S() {}
struct T { virtual int g() { return 2; } };
int useT() { T t; return t.g(); }
int use(int x) { static int guard = inl(x); return tmpl(x) + tmpl<long>(x) + guard; }
namespace { int anon() { return 3; } }
int callanon() { return anon(); }
template <class T> struct V { static int v; };
template <class T> int V<T>::v = 4;
int usev() { return V<int>::v + V<char>::v; }
extern "C" int c_linkage(int x) { return x; }
thread_local int tl = 5;
inline thread_local int itl = 6;
int usetl() { return tl + itl; }
"#;

    #[test]
    fn matches_llvm_lto2_elf_c() {
        if !have_llvm() {
            return;
        }
        let d = Scratch::new("elf-c");
        for args in [
            &["-flto=thin", "-fcommon", "-O2"][..],
            &["-flto=full", "-fcommon"],
            &["-flto=thin", "-fsplit-lto-unit", "-fcommon"],
            &["-flto=thin", "-fno-common", "-fPIC"],
            &["-flto=full", "-funified-lto", "-fcommon"],
            &["-flto=thin", "-funified-lto"],
            &["-flto=thin", "-ffunction-sections", "-fdata-sections", "-fcommon", "-fvisibility=hidden"],
        ] {
            let o = compile(&d, "clang", "a.c", C_SRC, args, &[]);
            let data = check(&o);
            let f = parse(&data).unwrap();
            // Unified LTO writes the ThinLTO summary whatever the -flto mode.
            let unified = args.contains(&"-funified-lto");
            let thin = args.contains(&"-flto=thin") || unified;
            assert!(f.modules.iter().all(|m| m.thin == thin && m.unified_lto == unified), "{args:?}");
            assert_eq!(f.producer, b"22.1.8");
            assert_eq!(f.target_triple, b"x86_64-pc-linux-gnu");
            assert_eq!(f.source_filename, b"a.c");
            assert_eq!(f.dependent_libraries, vec![&b"m"[..]]);
            let sym = |n: &str| f.symbols.iter().find(|s| s.name == n.as_bytes()).unwrap_or_else(|| panic!("{n}"));
            if args.contains(&"-fcommon") {
                let c = sym("common_arr");
                assert!(c.common() && c.has_uncommon());
                assert_eq!((f.uncommon(c).common_size, f.uncommon(c).common_align), (400, 64));
            }
            if !args.contains(&"-fvisibility=hidden") {
                assert_eq!(sym("protected_fn").visibility(), VISIBILITY_PROTECTED);
            }
            assert_eq!(sym("hidden_var").visibility(), VISIBILITY_HIDDEN);
            assert!(sym("tls_var").tls());
            assert!(sym("weak_var").weak());
            assert!(sym("undef_fn").undefined());
            assert!(sym("weak_undef").undefined() && sym("weak_undef").weak());
            assert!(sym("used_global").used());
            assert!(sym("alias_fn").global() && sym("ifn").global());
            assert!(sym("asm_sym").global());
            assert!(sym("real_fn").executable() && !sym("real_fn").tls());
            // Local symbols are in the table but not in the LTO list.
            assert!(f.symbols.iter().any(|s| !s.global()));
            assert!(f.lto_symbols().all(|s| s.global() && !s.format_specific()));
        }
    }

    #[test]
    fn matches_llvm_lto2_cxx() {
        if !have_llvm() {
            return;
        }
        let d = Scratch::new("cxx");
        for args in [
            &["-flto=thin", "-O1"][..],
            &["-flto=full"],
            &["-flto=thin", "-fsplit-lto-unit", "-fwhole-program-vtables", "-O2"],
            &["-flto=full", "-fwhole-program-vtables"],
            &["-flto=thin", "-fsanitize=cfi", "-fvisibility=hidden", "-fsplit-lto-unit"],
        ] {
            let o = compile(&d, "clang++", "b.cc", CXX_SRC, args, &[]);
            let data = check(&o);
            let f = parse(&data).unwrap();
            assert!(!f.comdats.is_empty(), "{args:?}");
            assert!(f.symbols.iter().any(|s| s.comdat.is_some()));
            if args.contains(&"-fwhole-program-vtables") && args.contains(&"-flto=thin") {
                // A split LTO unit: a ThinLTO module, then a regular LTO one with type metadata.
                assert_eq!(f.modules.len(), 2, "split LTO unit gives two modules");
                assert!(f.modules[0].thin && f.modules[0].split_lto_unit);
                assert!(!f.modules[1].thin && f.modules[1].has_summary);
                assert_eq!(f.modules[0].begin, 0);
                assert_eq!(f.modules[0].end, f.modules[1].begin);
                assert!(f.modules[0].bitcode.end <= f.modules[1].bitcode.start);
            }
            if args.contains(&"-flto=full") {
                assert!(f.modules.iter().all(|m| !m.thin));
            }
        }
    }

    #[test]
    fn matches_llvm_lto2_other_targets() {
        if !have_llvm() {
            return;
        }
        let d = Scratch::new("targets");
        let src = r#"
#pragma comment(lib, "foo")
#ifdef _WIN32
__declspec(dllexport)
#endif
int exported(void) { return 1; }
int common_var;
static int hidden(void) { return 2; }
int real(void) { return hidden() + common_var; }
__attribute__((weak)) int weak_alias(void) __attribute__((alias("real")));
__attribute__((section(".mysec"))) int in_sec = 3;
"#;
        for (target, args) in [
            ("x86_64-pc-windows-msvc", &["-flto=thin"][..]),
            ("x86_64-w64-windows-gnu", &["-flto=thin", "-fcommon"]),
            ("i686-pc-windows-msvc", &["-flto=full"]),
            ("aarch64-linux-gnu", &["-flto=thin", "-fcommon"]),
            ("x86_64-pc-windows-msvc-elf", &["-flto=thin"]),
        ] {
            let t = format!("--target={target}");
            let mut a = vec![t.as_str()];
            a.extend_from_slice(args);
            let o = compile(&d, "clang", "w.c", src, &a, &[]);
            check(&o);
        }
        // Darwin bitcode comes in the wrapper header.
        let darwin = "int f(void) { return 1; }\nint g;\n";
        let o = compile(&d, "clang", "m.c", darwin, &["--target=x86_64-apple-macosx11", "-flto=thin"], &[]);
        let data = check(&o);
        assert!(data.starts_with(&[0xDE, 0xC0, 0x17, 0x0B]));
        assert_eq!(parse(&data).unwrap().object_format(), ObjectFormat::MachO);
    }

    #[test]
    fn other_producer_is_reported() {
        if !have_llvm() {
            return;
        }
        let d = Scratch::new("producer");
        let o = compile(&d, "clang", "p.c", "int f(void) { return 0; }\n", &["-flto=thin"], &[("LLVM_OVERRIDE_PRODUCER", "other 1.0")]);
        let data = check(&o);
        assert_eq!(parse(&data).unwrap().producer, b"other 1.0");
    }

    #[test]
    fn wrapper_header_and_trailing_garbage() {
        if !have_llvm() {
            return;
        }
        let d = Scratch::new("wrapper");
        let o = compile(&d, "clang", "a.c", C_SRC, &["-flto=thin", "-fcommon"], &[]);
        let raw = std::fs::read(&o).unwrap();
        let plain = parse(&raw).unwrap().dump_bytes();
        let mut wrapped = Vec::new();
        for w in [0x0B17_C0DEu32, 0, 20, raw.len() as u32, 7] {
            wrapped.extend_from_slice(&w.to_le_bytes());
        }
        wrapped.extend_from_slice(&raw);
        wrapped.extend_from_slice(&[0; 8]);
        let f = parse(&wrapped).unwrap();
        assert_eq!(f.dump_bytes(), plain);
        // As in LLVM's BitcodeModule, the first module's bytes start after the magic.
        assert_eq!(f.modules[0].bitcode.start, 24);
        // A wrapper whose size runs past the end is rejected.
        wrapped[12..16].copy_from_slice(&(raw.len() as u32 + 12).to_le_bytes());
        assert_eq!(parse(&wrapped).unwrap_err(), "Invalid bitcode wrapper header");
        // Garbage after the stream that is too short for a module is ignored, as LLVM does.
        let mut tail = raw.clone();
        tail.extend_from_slice(&[0xAB; 8]);
        assert_eq!(parse(&tail).unwrap().dump_bytes(), plain);
    }

    #[test]
    fn tables_llvm_would_rebuild() {
        if !have_llvm() || !tool("llvm-as").exists() || !tool("llvm-cat").exists() {
            return;
        }
        let d = Scratch::new("rebuild");
        // No data layout and no triple: LLVM writes no irsymtab.
        std::fs::write(d.path("n.ll"), "define void @f() {\n  ret void\n}\n").unwrap();
        run(Command::new(tool("llvm-as")).arg(d.path("n.ll")).arg("-o").arg(d.path("n.bc")));
        let data = std::fs::read(d.path("n.bc")).unwrap();
        assert!(parse(&data).unwrap_err().starts_with(NO_IRSYMTAB));
        robustness(&data);
        // Binary concatenation: two modules, the first table describes one.
        let a = compile(&d, "clang", "a.c", "int a(void) { return 1; }\n", &["-flto=thin"], &[]);
        let b = compile(&d, "clang", "b.c", "int b(void) { return 2; }\n", &["-flto=full"], &[]);
        run(Command::new(tool("llvm-cat")).arg("-b").arg(&a).arg(&b).arg("-o").arg(d.path("ab.bc")));
        let data = std::fs::read(d.path("ab.bc")).unwrap();
        let e = parse(&data).unwrap_err();
        assert!(e.starts_with(NO_IRSYMTAB), "{e}");
    }

    #[test]
    fn bad_inputs() {
        assert!(!is_bitcode(b""));
        assert!(is_bitcode(b"BC\xC0\xDE"));
        assert_eq!(parse(b"").unwrap_err(), "file too small to contain bitcode header");
        assert_eq!(parse(b"abc").unwrap_err(), "Invalid bitcode signature");
        assert_eq!(parse(b"\x7fELF").unwrap_err(), "file doesn't start with bitcode header");
        assert_eq!(parse(b"BC\xC0\xDE").unwrap_err(), "Bitcode file does not contain any modules");
        assert_eq!(parse(b"\xDE\xC0\x17\x0B\0\0\0\0").unwrap_err(), "Invalid bitcode wrapper header");
        // Wrapper offset + size overflowing.
        let mut w = vec![0xDE, 0xC0, 0x17, 0x0B, 0, 0, 0, 0];
        w.extend_from_slice(&u32::MAX.to_le_bytes());
        w.extend_from_slice(&u32::MAX.to_le_bytes());
        w.extend_from_slice(&[0; 4]);
        assert_eq!(parse(&w).unwrap_err(), "Invalid bitcode wrapper header");
        // A block whose length runs past the end.
        let mut b = b"BC\xC0\xDE".to_vec();
        b.extend_from_slice(&[0x21, 0x0C, 0, 0, 0xFF, 0xFF, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert!(parse(&b).is_err());
        // END_BLOCK at the top level.
        let mut b = b"BC\xC0\xDE".to_vec();
        b.extend_from_slice(&[0; 12]);
        assert_eq!(parse(&b).unwrap_err(), "Malformed block");
        // All-ones and pseudo-random garbage after the magic never panic.
        let mut seed = 1u64;
        for len in (4..2048).step_by(4) {
            let mut g = b"BC\xC0\xDE".to_vec();
            for _ in 4..len {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                g.push((seed >> 33) as u8);
            }
            let _ = parse(&g);
            let ones: Vec<u8> = b"BC\xC0\xDE".iter().copied().chain(std::iter::repeat_n(0xFF, len - 4)).collect();
            let _ = parse(&ones);
        }
    }

    /// A hand-built table: every out-of-range reference is an error, not a panic.
    #[test]
    fn symtab_validation() {
        let strtab = b"prodtriplefilesym";
        let mut s = Vec::new();
        let words = |s: &mut Vec<u8>, w: &[u32]| w.iter().for_each(|w| s.extend_from_slice(&w.to_le_bytes()));
        // Header: version, producer, modules, comdats, symbols, uncommons, triple, file, opts, libs.
        words(&mut s, &[3, 0, 4, 76, 1, 88, 0, 88, 1, 112, 0, 4, 6, 10, 4, 0, 0, 112, 0]);
        words(&mut s, &[0, 1, 0]); // module
        words(&mut s, &[14, 3, 14, 3, u32::MAX, flags::GLOBAL]); // symbol
        let f = read_symtab(&s, strtab).unwrap();
        assert_eq!(f.producer, b"prod");
        assert_eq!(f.target_triple, b"triple");
        assert_eq!(f.source_filename, b"file");
        assert_eq!(f.symbols[0].name, b"sym");
        assert_eq!(f.lto_symbols().count(), 1);
        let corrupt = |i: usize, v: u32| {
            let mut c = s.clone();
            c[i * 4..i * 4 + 4].copy_from_slice(&v.to_le_bytes());
            read_symtab(&c, strtab).map(|_| ())
        };
        assert!(corrupt(0, 2).unwrap_err().starts_with(NO_IRSYMTAB));
        assert!(corrupt(1, 100).is_err()); // producer offset
        assert!(corrupt(2, u32::MAX).is_err()); // producer size
        assert!(corrupt(3, 1000).is_err()); // modules offset
        assert!(corrupt(8, u32::MAX).is_err()); // symbol count
        assert!(corrupt(20, 5).is_err()); // module end
        assert!(corrupt(19, 1).is_err()); // module begin
        assert!(corrupt(26, 0).is_err()); // comdat index 0 of none
        assert!(corrupt(27, flags::HAS_UNCOMMON).is_err()); // no uncommon entries
        for len in 0..s.len() {
            let _ = read_symtab(&s[..len], strtab);
        }
    }

    #[test]
    fn object_formats() {
        assert_eq!(object_format(b"x86_64-pc-linux-gnu"), ObjectFormat::Elf);
        assert_eq!(object_format(b"x86_64-pc-windows-msvc"), ObjectFormat::Coff);
        assert_eq!(object_format(b"x86_64-w64-windows-gnu"), ObjectFormat::Coff);
        assert_eq!(object_format(b"x86_64-pc-windows-msvc-elf"), ObjectFormat::Elf);
        assert_eq!(object_format(b"x86_64-apple-macosx11.0.0"), ObjectFormat::MachO);
        assert_eq!(object_format(b"arm64-apple-ios"), ObjectFormat::MachO);
        assert_eq!(object_format(b"wasm32-unknown-unknown"), ObjectFormat::Other);
        assert_eq!(object_format(b""), ObjectFormat::Elf);
    }
}
