//! The structural fingerprint of a linked PE image (an EXE or a DLL) and of an import library,
//! computed with goblin's PE and archive parsers (independent of the `object` crate dtld uses).
//!
//! Like the ELF fingerprint (`fingerprint.rs`), it leaves out what legitimately depends on
//! layout: RVAs, file offsets, section order and sizes, padding, the time stamps. What it keeps
//! is what the linker decided: imported DLLs and functions, exports, the subsystem and the
//! header's characteristics, the set of sections (name and characteristics), the data
//! directories present, TLS, base-relocation and pseudo-relocation counts, the image's COFF
//! symbol table (external definitions) and, for an import library, the symbols it defines.

use std::collections::{BTreeMap, BTreeSet};

pub use crate::common::Fingerprint;
use crate::common::{bit_names, read_u32, set};

use goblin::pe::optional_header::OptionalHeader;
use goblin::pe::PE;
use serde_json::json;

/// Every key a PE fingerprint can contain (`DiffIgnore` in fixtures/coff/ is checked against
/// this list).
pub const KEYS: &[&str] = &[
    "header.kind",
    "header.machine",
    "header.characteristics",
    "header.entry",
    "optional.subsystem",
    "optional.dll_characteristics",
    "optional.image_base",
    "optional.versions",
    "optional.stack_heap",
    "optional.alignment",
    "data_directories",
    "imports.dlls",
    "imports",
    "exports",
    "exports.dll_name",
    "exports.unnamed",
    "sections",
    "tls",
    "base_relocs",
    "pseudo_relocs",
    "debug",
    "symtab",
    "symtab.externals",
    "implib.symbols",
];

/// Keys that are never compared, with the reason.
pub const DEFAULT_IGNORE: &[(&str, &str)] = &[];

/// Whether `key` is left out of the comparison (see `common::is_ignored`; the same pattern
/// rules, with this module's defaults).
pub fn is_ignored(key: &str, extra: &[String]) -> bool {
    crate::common::is_ignored(DEFAULT_IGNORE, key, extra)
}

const FILE_CHARACTERISTICS: &[(u64, &str)] = &[
    (0x0001, "RELOCS_STRIPPED"),
    (0x0002, "EXECUTABLE_IMAGE"),
    (0x0004, "LINE_NUMS_STRIPPED"),
    (0x0008, "LOCAL_SYMS_STRIPPED"),
    (0x0010, "AGGRESSIVE_WS_TRIM"),
    (0x0020, "LARGE_ADDRESS_AWARE"),
    (0x0080, "BYTES_REVERSED_LO"),
    (0x0100, "32BIT_MACHINE"),
    (0x0200, "DEBUG_STRIPPED"),
    (0x0400, "REMOVABLE_RUN_FROM_SWAP"),
    (0x0800, "NET_RUN_FROM_SWAP"),
    (0x1000, "SYSTEM"),
    (0x2000, "DLL"),
    (0x4000, "UP_SYSTEM_ONLY"),
    (0x8000, "BYTES_REVERSED_HI"),
];

const DLL_CHARACTERISTICS: &[(u64, &str)] = &[
    (0x0020, "HIGH_ENTROPY_VA"),
    (0x0040, "DYNAMIC_BASE"),
    (0x0080, "FORCE_INTEGRITY"),
    (0x0100, "NX_COMPAT"),
    (0x0200, "NO_ISOLATION"),
    (0x0400, "NO_SEH"),
    (0x0800, "NO_BIND"),
    (0x1000, "APPCONTAINER"),
    (0x2000, "WDM_DRIVER"),
    (0x4000, "GUARD_CF"),
    (0x8000, "TERMINAL_SERVER_AWARE"),
];

const SECTION_CHARACTERISTICS: &[(u64, &str)] = &[
    (0x0000_0020, "CODE"),
    (0x0000_0040, "IDATA"),
    (0x0000_0080, "UDATA"),
    (0x0200_0000, "DISCARDABLE"),
    (0x0400_0000, "NOT_CACHED"),
    (0x0800_0000, "NOT_PAGED"),
    (0x1000_0000, "SHARED"),
    (0x2000_0000, "X"),
    (0x4000_0000, "R"),
    (0x8000_0000, "W"),
];

fn subsystem_name(s: u16) -> String {
    match s {
        0 => "UNKNOWN".into(),
        1 => "NATIVE".into(),
        2 => "WINDOWS_GUI".into(),
        3 => "WINDOWS_CUI".into(),
        7 => "POSIX_CUI".into(),
        9 => "WINDOWS_CE_GUI".into(),
        10 => "EFI_APPLICATION".into(),
        11 => "EFI_BOOT_SERVICE_DRIVER".into(),
        12 => "EFI_RUNTIME_DRIVER".into(),
        13 => "EFI_ROM".into(),
        14 => "XBOX".into(),
        16 => "WINDOWS_BOOT_APPLICATION".into(),
        n => format!("{n}"),
    }
}

const DATA_DIRECTORY_NAMES: [&str; 16] = [
    "export",
    "import",
    "resource",
    "exception",
    "certificate",
    "base_reloc",
    "debug",
    "architecture",
    "global_ptr",
    "tls",
    "load_config",
    "bound_import",
    "iat",
    "delay_import",
    "clr",
    "reserved",
];

fn read_u16(data: &[u8], off: usize) -> Option<u16> {
    Some(u16::from_le_bytes(data.get(off..off + 2)?.try_into().ok()?))
}

/// The file offset of an RVA, through the section table.
fn rva_to_offset(pe: &PE, rva: u32) -> Option<usize> {
    pe.sections
        .iter()
        .find(|s| rva >= s.virtual_address && rva < s.virtual_address + s.size_of_raw_data.max(1))
        .map(|s| (rva - s.virtual_address + s.pointer_to_raw_data) as usize)
}

/// A section's name (long names resolved through the string table).
fn section_name(s: &goblin::pe::section_table::SectionTable) -> String {
    if let Some(real) = &s.real_name {
        return real.clone();
    }
    s.name().map(str::to_string).unwrap_or_else(|_| String::from_utf8_lossy(&s.name).into_owned())
}

/// The section containing `rva`, and the offset into it.
fn section_of(pe: &PE, rva: u32) -> Option<(String, u32)> {
    pe.sections.iter().find(|s| rva >= s.virtual_address && rva < s.virtual_address + s.virtual_size.max(1)).map(|s| (section_name(s), rva - s.virtual_address))
}

/// One symbol of the image's COFF symbol table.
struct ImageSymbol {
    name: String,
    section: i16,
    value: u32,
    class: u8,
}

fn image_symbols(pe: &PE, data: &[u8]) -> Option<Vec<ImageSymbol>> {
    let coff = &pe.header.coff_header;
    let table = coff.symbols(data).ok()??;
    let strings = coff.strings(data).ok().flatten();
    let mut out = Vec::new();
    for (_, inline_name, sym) in table.iter() {
        let name = match (inline_name, sym.name_offset(), &strings) {
            (Some(n), _, _) => n.to_string(),
            (None, Some(off), Some(strtab)) => strtab.get_at(off as usize).map(str::to_string).unwrap_or_else(|| format!("<bad name offset {off}>")),
            _ => String::from_utf8_lossy(&sym.name).trim_end_matches('\0').to_string(),
        };
        out.push(ImageSymbol { name, section: sym.section_number, value: sym.value, class: sym.storage_class });
    }
    Some(out)
}

/// Computes the fingerprint of a PE image.
pub fn fingerprint(data: &[u8]) -> Result<Fingerprint, String> {
    let pe = PE::parse(data).map_err(|e| format!("goblin cannot parse the PE image: {e}"))?;
    let mut fp = Fingerprint::new();
    let coff = &pe.header.coff_header;
    fp.insert("header.kind".into(), json!(if pe.is_lib { "DLL" } else { "EXE" }));
    fp.insert("header.machine".into(), json!(goblin::pe::header::machine_to_str(coff.machine)));
    fp.insert("header.characteristics".into(), bit_names(coff.characteristics.into(), FILE_CHARACTERISTICS));
    let opt = pe.header.optional_header.ok_or("the image has no optional header")?;
    let w = &opt.windows_fields;
    fp.insert("optional.subsystem".into(), json!(subsystem_name(w.subsystem)));
    fp.insert("optional.dll_characteristics".into(), bit_names(w.dll_characteristics.into(), DLL_CHARACTERISTICS));
    fp.insert("optional.image_base".into(), json!(format!("{:#x}", w.image_base)));
    fp.insert(
        "optional.versions".into(),
        json!(format!(
            "os {}.{} image {}.{} subsystem {}.{} linker-major-set {}",
            w.major_operating_system_version,
            w.minor_operating_system_version,
            w.major_image_version,
            w.minor_image_version,
            w.major_subsystem_version,
            w.minor_subsystem_version,
            opt.standard_fields.major_linker_version != 0
        )),
    );
    fp.insert(
        "optional.stack_heap".into(),
        json!(format!("stack {:#x}/{:#x} heap {:#x}/{:#x}", w.size_of_stack_reserve, w.size_of_stack_commit, w.size_of_heap_reserve, w.size_of_heap_commit)),
    );
    fp.insert("optional.alignment".into(), json!(format!("section {:#x} file {:#x}", w.section_alignment, w.file_alignment)));
    fp.insert(
        "data_directories".into(),
        set(opt
            .data_directories
            .dirs()
            .filter(|(_, d)| d.virtual_address != 0 || d.size != 0)
            .map(|(t, _)| DATA_DIRECTORY_NAMES.get(t as usize).map_or_else(|| format!("{t:?}"), |n| n.to_string()))),
    );

    let symbols = image_symbols(&pe, data);
    let entry = entry_name(&pe, &opt, symbols.as_deref());
    fp.insert("header.entry".into(), json!(entry));

    fp.insert("imports.dlls".into(), set(pe.libraries.iter().map(|l| l.to_string())));
    fp.insert(
        "imports".into(),
        set(pe.imports.iter().map(|i| {
            if i.name.starts_with("ORDINAL ") || i.name.is_empty() {
                format!("{}!#{}", i.dll, i.ordinal)
            } else {
                format!("{}!{}", i.dll, i.name)
            }
        })),
    );
    fp.insert(
        "exports".into(),
        set(pe.exports.iter().filter_map(|e| {
            let name = e.name?;
            Some(match &e.reexport {
                Some(r) => format!("{name} -> {r:?}"),
                None => name.to_string(),
            })
        })),
    );
    fp.insert("exports.unnamed".into(), json!(pe.exports.iter().filter(|e| e.name.is_none()).count()));
    fp.insert("exports.dll_name".into(), json!(pe.export_data.as_ref().map_or("absent", |d| d.name.unwrap_or(""))));
    fp.insert(
        "sections".into(),
        set(pe.sections.iter().map(|s| {
            let flags = bit_names((s.characteristics & !0x00f0_0000).into(), SECTION_CHARACTERISTICS);
            let flags: Vec<String> = flags.as_array().expect("array").iter().map(|v| v.as_str().unwrap_or("").to_string()).collect();
            format!("{} {}", section_name(s), flags.join(","))
        })),
    );
    fp.insert("tls".into(), json!(tls_text(&pe)));
    fp.insert("base_relocs".into(), base_reloc_counts(&pe)?);
    fp.insert("debug".into(), json!(debug_kinds(&pe)));

    match &symbols {
        None => {
            fp.insert("symtab".into(), json!("absent"));
            fp.insert("pseudo_relocs".into(), json!("no symbol table"));
        }
        Some(syms) => {
            fp.insert("symtab".into(), json!("present"));
            fp.insert(
                "symtab.externals".into(),
                set(syms.iter().filter(|s| s.class == 2 && s.section > 0).map(|s| {
                    let sec = pe.sections.get(s.section as usize - 1).map_or_else(|| format!("#{}", s.section), section_name);
                    format!("{} {sec}", s.name)
                })),
            );
            fp.insert("pseudo_relocs".into(), json!(pseudo_relocs(&pe, data, syms)));
        }
    }
    Ok(fp)
}

/// The entry point as a symbol name (the COFF symbol table of an image is optional: lld writes
/// one for MinGW unless -s), else `section+offset`.
fn entry_name(pe: &PE, opt: &OptionalHeader, symbols: Option<&[ImageSymbol]>) -> String {
    if opt.standard_fields.address_of_entry_point == 0 {
        "none".to_string()
    } else {
        let rva = opt.standard_fields.address_of_entry_point;
        let by_symbol = symbols.and_then(|syms| {
            let mut names: Vec<&str> = syms
                .iter()
                .filter(|s| s.section > 0 && s.class == 2)
                .filter(|s| pe.sections.get(s.section as usize - 1).is_some_and(|sec| sec.virtual_address + s.value == rva))
                .map(|s| s.name.as_str())
                .collect();
            names.sort();
            names.first().map(|n| n.to_string())
        });
        by_symbol.unwrap_or_else(|| match section_of(pe, rva) {
            Some((name, off)) => format!("{name}+{off:#x}"),
            None => format!("rva {rva:#x} outside every section"),
        })
    }
}

/// The TLS directory: template and zero-fill sizes, callbacks, index slot.
fn tls_text(pe: &PE) -> String {
    match &pe.tls_data {
        None => "absent".to_string(),
        Some(t) => {
            let d = &t.image_tls_directory;
            format!(
                "template {} zero-fill {} callbacks {} index {}",
                d.end_address_of_raw_data.saturating_sub(d.start_address_of_raw_data),
                d.size_of_zero_fill,
                t.callbacks.len(),
                if d.address_of_index != 0 { "set" } else { "none" }
            )
        }
    }
}

/// The base relocations counted by type.
fn base_reloc_counts(pe: &PE) -> Result<serde_json::Value, String> {
    let mut relocs: BTreeMap<u8, usize> = BTreeMap::new();
    if let Some(rd) = &pe.relocation_data {
        for block in rd.blocks() {
            let block = block.map_err(|e| format!("base relocations: {e}"))?;
            for word in block.words() {
                let word = word.map_err(|e| format!("base relocations: {e}"))?;
                if word.reloc_type() != 0 {
                    *relocs.entry(word.reloc_type()).or_default() += 1;
                }
            }
        }
    }
    Ok(json!(relocs
        .iter()
        .map(|(t, n)| match t {
            3 => format!("HIGHLOW={n}"),
            10 => format!("DIR64={n}"),
            t => format!("type{t}={n}"),
        })
        .collect::<Vec<_>>()))
}

/// The kinds of debug directory entries.
fn debug_kinds(pe: &PE) -> Vec<String> {
    match &pe.debug_data {
        None => Vec::new(),
        Some(d) => {
            let mut kinds: Vec<String> = Vec::new();
            for (present, name) in [
                (d.codeview_pdb70_debug_info.is_some(), "codeview-pdb70"),
                (d.codeview_pdb20_debug_info.is_some(), "codeview-pdb20"),
                (d.vcfeature_info.is_some(), "vc-feature"),
                (d.ex_dll_characteristics_info.is_some(), "ex-dllcharacteristics"),
                (d.repro_info.is_some(), "repro"),
                (d.pogo_info.is_some(), "pogo"),
            ] {
                if present {
                    kinds.push(name.to_string());
                }
            }
            if kinds.is_empty() {
                kinds.push("other".into());
            }
            kinds
        }
    }
}

/// The runtime pseudo-relocation list of a MinGW image (auto-imported data): the entries
/// between `__RUNTIME_PSEUDO_RELOC_LIST__` and `__RUNTIME_PSEUDO_RELOC_LIST_END__`, as
/// `v2 entries=N sizes=[..]` (the bit sizes of the fixups).
fn pseudo_relocs(pe: &PE, data: &[u8], syms: &[ImageSymbol]) -> String {
    let rva_of = |name: &str| {
        syms.iter().find(|s| s.name == name && s.section > 0).and_then(|s| {
            let sec = pe.sections.get(s.section as usize - 1)?;
            Some(sec.virtual_address + s.value)
        })
    };
    let (Some(start), Some(end)) = (rva_of("__RUNTIME_PSEUDO_RELOC_LIST__"), rva_of("__RUNTIME_PSEUDO_RELOC_LIST_END__")) else {
        return "no list symbols".into();
    };
    if start == end {
        return "empty".into();
    }
    let Some(off) = rva_to_offset(pe, start) else {
        return format!("list at rva {start:#x} not in the file");
    };
    let len = end.wrapping_sub(start) as usize;
    // Version 2: a 12-byte header (0, 0, 1), then 12-byte entries (symbol, target, flags).
    if len < 12 || read_u32(data, off) != Some(0) || read_u32(data, off + 4) != Some(0) {
        return format!("unknown format ({len} bytes)");
    }
    let version = read_u32(data, off + 8).unwrap_or(0);
    let n = (len - 12) / 12;
    let mut sizes = BTreeMap::<u32, usize>::new();
    for i in 0..n {
        let flags = read_u32(data, off + 12 + 12 * i + 8).unwrap_or(0);
        *sizes.entry(flags & 0xff).or_default() += 1;
    }
    let _ = read_u16;
    format!("v{version} entries={n} bits={sizes:?}")
}

/// The fingerprint of an import library: the symbols of its archive index.
pub fn implib_fingerprint(data: &[u8]) -> Result<Fingerprint, String> {
    let ar = goblin::archive::Archive::parse(data).map_err(|e| format!("goblin cannot parse the import library: {e}"))?;
    let mut fp = Fingerprint::new();
    let mut symbols = BTreeSet::new();
    for (_, _, syms) in ar.summarize() {
        symbols.extend(syms.into_iter().map(str::to_string));
    }
    fp.insert("implib.symbols".into(), json!(symbols.into_iter().collect::<Vec<_>>()));
    Ok(fp)
}

/// `data` with the fields that hold the link's time stamp zeroed (the COFF header's
/// TimeDateStamp, every debug directory entry's, the export directory's), so that two links of
/// the same inputs at different times compare byte for byte. lld writes the current time there
/// unless `--no-insert-timestamp`.
pub fn without_timestamps(data: &[u8]) -> Vec<u8> {
    let mut out = data.to_vec();
    let Ok(pe) = PE::parse(data) else {
        return out;
    };
    let mut zero = |off: usize| {
        if let Some(b) = out.get_mut(off..off + 4) {
            b.fill(0);
        }
    };
    let pe_off = pe.header.dos_header.pe_pointer as usize;
    zero(pe_off + 8);
    if let Some(opt) = &pe.header.optional_header {
        let dd = &opt.data_directories;
        if let Some(debug) = dd.get_debug_table() {
            if let Some(off) = rva_to_offset(&pe, debug.virtual_address) {
                for i in 0..(debug.size as usize / 28) {
                    zero(off + 28 * i + 4);
                }
            }
        }
        if let Some(export) = dd.get_export_table() {
            if let Some(off) = rva_to_offset(&pe, export.virtual_address) {
                zero(off + 4);
            }
        }
    }
    out
}
