//! What llvm-lib (`lld-link /lib`) learns from one input file: its kind (LLVM's
//! `identify_magic`, for the kinds a Windows library may hold), its machine, and the symbols it
//! puts in the archive's index.
//!
//! This exists apart from the archive writer (`lib.rs`, which only lays out bytes) and from the
//! command line (`driver/lib.rs`) because these are LLVM's object-file rules, and the index must
//! list exactly the symbols LLVM lists (`isArchiveSymbol`: global, defined, not format-specific)
//! in the same order for the archive to be byte-identical:
//!
//! * a COFF object (regular or `/bigobj`): its symbol table in order; a symbol is global when its
//!   class is external or weak external, undefined when external in section 0 with value 0 (a
//!   common symbol has a size there and is listed) or a weak external whose search kind is not
//!   "alias", and format-specific for file records and section definitions;
//! * a short import member: `__imp_<name>`, then `<name>` unless it imports data;
//! * LLVM bitcode: the irsymtab's symbols (`lto/irsymtab.rs`; rebuilt by the user's LLVM for a
//!   file that has none, as LLVM rebuilds it), whose names are already mangled as in an object;
//! * a resource file: no symbol table at all.
//!
//! Errors are LLVM's messages without the file name.

use object::pe;
use object::read::coff::{CoffHeader, ImageSymbol as _};
use object::LittleEndian as LE;

use crate::lto::irsymtab::{self, IrFile};

/// LLVM's `file_magic`, for what llvm-lib accepts (everything else is `Other`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Magic {
    CoffObject,
    Bitcode,
    Archive,
    Resource,
    ImportLibrary,
    Other,
}

/// The first bytes of a `.res` file (an empty resource entry).
const RES_MAGIC: [u8; 16] = [0, 0, 0, 0, 0x20, 0, 0, 0, 0xff, 0xff, 0, 0, 0xff, 0xff, 0, 0];

/// LLVM's `identify_magic`, reduced to the kinds llvm-lib takes.
pub fn identify(data: &[u8]) -> Magic {
    if data.len() < 4 {
        return Magic::Other;
    }
    if data.starts_with(crate::archive::MAGIC) || data.starts_with(crate::archive::THIN_MAGIC) {
        return Magic::Archive;
    }
    if irsymtab::is_bitcode(data) {
        return Magic::Bitcode;
    }
    match (data[0], data[1]) {
        (0, _) if data[..4] == [0, 0, 0xff, 0xff] => {
            // An anonymous object header: `/bigobj`, cl.exe's `/GL` IR, or a short import.
            if data.len() < 28 {
                return Magic::ImportLibrary;
            }
            if data[12..28] == pe::ANON_OBJECT_HEADER_BIGOBJ_CLASS_ID.0 {
                return Magic::CoffObject;
            }
            if crate::coff::object::is_cl_gl_object(data) {
                return Magic::Other;
            }
            Magic::ImportLibrary
        }
        (0, _) if data.len() >= RES_MAGIC.len() && data[..16] == RES_MAGIC => Magic::Resource,
        // Machine 0 (IMAGE_FILE_MACHINE_UNKNOWN).
        (0, 0) => Magic::CoffObject,
        (0x4c | 0xc4, 0x01) | (0x4c | 0xc4 | 0x90 | 0x68, 0x02) => Magic::CoffObject,
        (0x64, 0x86 | 0xaa) | (0x41 | 0x4e, 0xa6) => Magic::CoffObject,
        _ => Magic::Other,
    }
}

const EOF: &str = "The end of the file was unexpectedly encountered";
const INVALID: &str = "Invalid data was encountered while parsing the file";

/// Whether `m` is one of the ARM64 machines (ARM64, ARM64EC, ARM64X).
pub fn is_any_arm64(m: u16) -> bool {
    matches!(m, pe::IMAGE_FILE_MACHINE_ARM64 | pe::IMAGE_FILE_MACHINE_ARM64EC | pe::IMAGE_FILE_MACHINE_ARM64X)
}

/// LLVM's `machineToStr`.
pub fn machine_name(m: u16) -> &'static str {
    match m {
        pe::IMAGE_FILE_MACHINE_AMD64 => "x64",
        pe::IMAGE_FILE_MACHINE_ARMNT => "arm",
        pe::IMAGE_FILE_MACHINE_ARM64 => "arm64",
        pe::IMAGE_FILE_MACHINE_ARM64EC => "arm64ec",
        pe::IMAGE_FILE_MACHINE_ARM64X => "arm64x",
        pe::IMAGE_FILE_MACHINE_I386 => "x86",
        _ => "unknown",
    }
}

/// LLVM's `getMachineType` (`/machine:` values, any case); `None` for an unknown name.
pub fn machine_from_name(s: &str) -> Option<u16> {
    Some(match s.to_ascii_lowercase().as_str() {
        "x64" | "amd64" => pe::IMAGE_FILE_MACHINE_AMD64,
        "x86" | "i386" => pe::IMAGE_FILE_MACHINE_I386,
        "arm" => pe::IMAGE_FILE_MACHINE_ARMNT,
        "arm64" => pe::IMAGE_FILE_MACHINE_ARM64,
        "arm64ec" => pe::IMAGE_FILE_MACHINE_ARM64EC,
        "arm64x" => pe::IMAGE_FILE_MACHINE_ARM64X,
        _ => return None,
    })
}

/// A COFF object's header, checked as LLVM's `COFFObjectFile::create` checks it (section
/// table and symbol table inside the file).
fn with_header<T>(data: &[u8], f: impl FnOnce(&dyn CoffView) -> Result<T, String>) -> Result<T, String> {
    if data.len() >= 4 && data[..4] == [0, 0, 0xff, 0xff] {
        f(&View::<pe::AnonObjectHeaderBigobj>::parse(data)?)
    } else {
        f(&View::<pe::ImageFileHeader>::parse(data)?)
    }
}

/// The parts of a COFF object llvm-lib reads, for either header kind.
trait CoffView {
    fn machine(&self) -> u16;
    fn archive_symbols(&self) -> Result<Vec<Vec<u8>>, String>;
}

struct View<'a, H: CoffHeader> {
    header: &'a H,
    /// `None` when the symbol or string table does not fit in the file: LLVM then reads the
    /// object as one without symbols (as it reads stripped images).
    symbols: Option<object::read::coff::SymbolTable<'a, &'a [u8], H>>,
}

impl<'a, H: CoffHeader> View<'a, H> {
    fn parse(data: &'a [u8]) -> Result<Self, String> {
        let mut off = 0u64;
        let header = H::parse(data, &mut off).map_err(|_| EOF.to_string())?;
        header.sections(data, off).map_err(|_| EOF.to_string())?;
        Ok(View { header, symbols: header.symbols(data).ok() })
    }
}

impl<H: CoffHeader> CoffView for View<'_, H> {
    fn machine(&self) -> u16 {
        self.header.machine()
    }

    fn archive_symbols(&self) -> Result<Vec<Vec<u8>>, String> {
        let mut out = Vec::new();
        let Some(symbols) = &self.symbols else { return Ok(out) };
        let strings = symbols.strings();
        for (index, s) in symbols.iter() {
            let class = s.storage_class();
            let external = class == pe::IMAGE_SYM_CLASS_EXTERNAL;
            let weak = class == pe::IMAGE_SYM_CLASS_WEAK_EXTERNAL;
            if !external && !weak {
                continue;
            }
            let naux = s.number_of_aux_symbols();
            let undefined = if weak {
                naux > 0 && {
                    let aux: &pe::ImageAuxSymbolWeak = symbols.get(object::SymbolIndex(index.0 + 1), 0).map_err(|_| INVALID.to_string())?;
                    aux.weak_search_type.get(LE) != u32::from(pe::IMAGE_WEAK_EXTERN_SEARCH_ALIAS)
                }
            } else {
                s.section_number() == pe::IMAGE_SYM_UNDEFINED && s.value() == 0
            };
            // C++/CLI's external absolute symbols followed by a section definition.
            let section_definition = external && naux > 0 && s.section_number() == pe::IMAGE_SYM_ABSOLUTE;
            if undefined || section_definition {
                continue;
            }
            out.push(s.name(strings).map_err(|_| INVALID.to_string())?.to_vec());
        }
        Ok(out)
    }
}

/// The machine of a COFF object (LibDriver's `getCOFFFileMachine`): only the Windows
/// architectures are accepted.
pub fn coff_machine(data: &[u8]) -> Result<u16, String> {
    let m = with_header(data, |v| Ok(v.machine()))?;
    match m {
        pe::IMAGE_FILE_MACHINE_I386 | pe::IMAGE_FILE_MACHINE_AMD64 | pe::IMAGE_FILE_MACHINE_ARMNT => Ok(m),
        _ if is_any_arm64(m) => Ok(m),
        _ => Err(format!("unknown machine: {m}")),
    }
}

/// The symbols a COFF object puts in an archive's index, in its symbol table's order.
pub fn coff_symbols(data: &[u8]) -> Result<Vec<Vec<u8>>, String> {
    with_header(data, |v| v.archive_symbols())
}

/// The symbols of a short import member: `__imp_<name>`, and `<name>` for code and constants.
pub fn import_symbols(data: &[u8]) -> Vec<Vec<u8>> {
    let rest = data.get(20..).unwrap_or(&[]);
    let name = &rest[..rest.iter().position(|&b| b == 0).unwrap_or(rest.len())];
    let mut imp = b"__imp_".to_vec();
    imp.extend_from_slice(name);
    let type_info = data.get(18..20).map_or(0, |b| u16::from_le_bytes([b[0], b[1]]));
    if type_info & pe::IMPORT_OBJECT_TYPE_MASK == pe::IMPORT_OBJECT_DATA {
        vec![imp]
    } else {
        vec![imp, name.to_vec()]
    }
}

/// A bitcode file's irsymtab; for a file without a usable one, the table the user's LLVM builds
/// (`lto/llvm_symtab.rs`, with the LLVM of `$DTLD_LLVM_DIR` or of the clang that ran dtld), as
/// LLVM builds it when it reads such a file.
pub fn read_bitcode(name: &str, data: &'static [u8]) -> Result<IrFile<'static>, String> {
    match irsymtab::parse(data) {
        Err(e) if e.starts_with(irsymtab::NO_IRSYMTAB) => {
            let input = crate::input::InputFile {
                name: name.to_string(),
                path: name.into(),
                data,
                kind: crate::input::FileKind::Bitcode,
                lazy: false,
                archive: None,
                as_needed: false,
                needed_name: String::new(),
                archive_offset: 0,
                thin_member: false,
                fat_lto: false,
                group: 0,
            };
            // The LLVM to ask: `$DTLD_LLVM_DIR`, or the clang that started dtld.
            let opts =
                crate::lto::options::LtoOptions { llvm_dir: std::env::var_os("DTLD_LLVM_DIR").filter(|d| !d.is_empty()).map(Into::into), ..Default::default() };
            crate::lto::llvm_symtab::rebuild(&input, &opts, &e)
        }
        r => r,
    }
}

/// The machine of a bitcode file, from its target triple's architecture (LibDriver's
/// `getBitcodeFileMachine`).
pub fn bitcode_machine(ir: &IrFile) -> Result<u16, String> {
    let triple = String::from_utf8_lossy(ir.target_triple);
    let arch = triple.split('-').next().unwrap_or("");
    let m = match arch {
        "i386" | "i486" | "i586" | "i686" | "i786" | "i886" | "i986" => pe::IMAGE_FILE_MACHINE_I386,
        "x86_64" | "amd64" | "x86_64h" => pe::IMAGE_FILE_MACHINE_AMD64,
        "arm64ec" => pe::IMAGE_FILE_MACHINE_ARM64EC,
        "aarch64" | "arm64" if triple.contains("arm64ec") => pe::IMAGE_FILE_MACHINE_ARM64EC,
        "aarch64" | "arm64" => pe::IMAGE_FILE_MACHINE_ARM64,
        a if (a.starts_with("arm") || a.starts_with("thumb")) && !a.ends_with("eb") && !a.starts_with("arm64") => pe::IMAGE_FILE_MACHINE_ARMNT,
        _ => return Err(format!("unknown arch in target triple: {triple}")),
    };
    Ok(m)
}

/// The symbols a bitcode file puts in an archive's index: every module's global, defined,
/// not format-specific symbols, in the irsymtab's order.
pub fn bitcode_symbols(ir: &IrFile) -> Vec<Vec<u8>> {
    ir.modules.iter().flat_map(|m| ir.module_symbols(m)).filter(|s| s.global() && !s.format_specific() && !s.undefined()).map(|s| s.name.to_vec()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifies_as_llvm() {
        assert_eq!(identify(b"!<arch>\n"), Magic::Archive);
        assert_eq!(identify(b"!<thin>\n"), Magic::Archive);
        assert_eq!(identify(b"BC\xc0\xde\x35\x14"), Magic::Bitcode);
        assert_eq!(identify(&[0x64, 0x86, 0, 0, 0, 0]), Magic::CoffObject);
        assert_eq!(identify(&[0x4c, 0x01, 0, 0]), Magic::CoffObject);
        assert_eq!(identify(&[0x64, 0x86]), Magic::Other);
        assert_eq!(identify(&[0, 0, 0xff, 0xff, 0, 0, 0x64, 0x86]), Magic::ImportLibrary);
        assert_eq!(identify(&RES_MAGIC), Magic::Resource);
        assert_eq!(identify(b"hello\n"), Magic::Other);
        assert_eq!(identify(b"\x7fELF\x02\x01"), Magic::Other);
    }

    #[test]
    fn import_member_symbols() {
        let mut m = vec![0, 0, 0xff, 0xff, 0, 0, 0x64, 0x86, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        m.extend_from_slice(&(pe::IMPORT_OBJECT_CODE | (pe::IMPORT_OBJECT_NAME << 2)).to_le_bytes());
        m.extend_from_slice(b"f\0x.dll\0");
        assert_eq!(import_symbols(&m), [b"__imp_f".to_vec(), b"f".to_vec()]);
        m[18] = pe::IMPORT_OBJECT_DATA as u8;
        assert_eq!(import_symbols(&m), [b"__imp_f".to_vec()]);
    }

    #[test]
    fn machines() {
        assert_eq!(machine_from_name("X64"), Some(pe::IMAGE_FILE_MACHINE_AMD64));
        assert_eq!(machine_from_name("i386"), Some(pe::IMAGE_FILE_MACHINE_I386));
        assert_eq!(machine_from_name("foo"), None);
        assert_eq!(machine_name(pe::IMAGE_FILE_MACHINE_I386), "x86");
        assert_eq!(coff_machine(&[0x64, 0x86, 0, 0]).unwrap_err(), EOF);
    }
}
