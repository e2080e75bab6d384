//! DLLs given to a MinGW link as inputs (lld's `DLLFile`). MinGW's linker links against a DLL
//! directly, as if against the import library its export table describes (the `-l` search
//! finds `lib<name>.dll` and `<name>.dll` too). This module reads the export table into the
//! short import members such a library would hold, one per named export, for the resolver to
//! offer lazily: `__imp_<name>` always, `<name>` too for code.

use object::pe;
use object::read::pe::{ImageNtHeaders, PeFile};

/// Whether LLVM's `identify_magic` calls the bytes a PE image: `MZ`, and a PE signature where
/// the DOS header's `e_lfanew` points.
pub fn is_pe_image(data: &[u8]) -> bool {
    if data.len() < 0x40 || !data.starts_with(b"MZ") {
        return false;
    }
    let off = u32::from_le_bytes([data[0x3c], data[0x3d], data[0x3e], data[0x3f]]) as usize;
    data.get(off..).is_some_and(|d| d.starts_with(b"PE\0\0"))
}

/// One export as an import member: the symbols it defines and the member's bytes.
#[derive(Debug)]
pub struct DllExport {
    pub symbols: Vec<String>,
    pub member: Vec<u8>,
}

/// The exports of the DLL, or lld's errors about the file (`display` names it).
pub fn read(data: &[u8], display: &str) -> Result<Vec<DllExport>, Vec<String>> {
    if data.len() < 68 {
        // Too short for LLVM to look for a PE header after the DOS header: it reads the bytes
        // as a COFF object of machine 0x5a4d ("MZ"), without an optional header. lld's machine
        // check then names the machine it does not know as x64.
        return Err(vec![format!("{display} is not a PE-COFF executable"), format!("{display}: machine type x64 conflicts with x64")]);
    }
    let off = u32::from_le_bytes([data[0x3c], data[0x3d], data[0x3e], data[0x3f]]) as usize;
    let machine = data.get(off + 4..off + 6).map_or(0, |m| u16::from_le_bytes([m[0], m[1]]));
    let magic = data.get(off + 24..off + 26).map_or(0, |m| u16::from_le_bytes([m[0], m[1]]));
    let parsed = match magic {
        pe::IMAGE_NT_OPTIONAL_HDR64_MAGIC => exports::<pe::ImageNtHeaders64>(data),
        _ => exports::<pe::ImageNtHeaders32>(data),
    };
    let exports = parsed.map_err(|e| vec![format!("{display}: {e}")])?;
    match machine {
        pe::IMAGE_FILE_MACHINE_AMD64 => Ok(exports),
        pe::IMAGE_FILE_MACHINE_I386 => Err(vec![format!("{display}: machine type x86 conflicts with x64")]),
        pe::IMAGE_FILE_MACHINE_ARMNT => Err(vec![format!("{display}: machine type arm conflicts with x64")]),
        pe::IMAGE_FILE_MACHINE_ARM64 => Err(vec![format!("{display}: machine type arm64 conflicts with x64")]),
        _ => Err(vec![format!("{display}: machine type x64 conflicts with x64")]),
    }
}

/// The named exports in address-table order, as lld's `DLLFile::parse` walks them.
fn exports<Pe: ImageNtHeaders>(data: &[u8]) -> Result<Vec<DllExport>, String> {
    let file = PeFile::<Pe>::parse(data).map_err(|e| e.to_string())?;
    let Some(table) = file.export_table().map_err(|e| e.to_string())? else {
        return Ok(Vec::new());
    };
    let sections = file.section_table();
    let cstr = |rva: u32| -> Vec<u8> {
        let b = sections.pe_data_at(data, rva).unwrap_or(&[]);
        b[..b.iter().position(|&c| c == 0).unwrap_or(b.len())].to_vec()
    };
    let dll = cstr(table.directory().name.get(object::LittleEndian));
    let mut names: std::collections::HashMap<u16, Vec<u8>> = std::collections::HashMap::new();
    for (ptr, index) in table.name_iter() {
        names.entry(index).or_insert_with(|| cstr(ptr));
    }
    let mut out = Vec::new();
    for (index, addr) in table.addresses().iter().enumerate() {
        let Some(name) = names.get(&(index as u16)).filter(|n| !n.is_empty()) else { continue };
        let rva = addr.get(object::LittleEndian);
        // lld's `isRVACode`: the first section whose span (end included) holds the address.
        let code = sections
            .iter()
            .find(|s| {
                rva >= s.virtual_address.get(object::LittleEndian)
                    && rva - s.virtual_address.get(object::LittleEndian) <= s.virtual_size.get(object::LittleEndian)
            })
            .is_some_and(|s| s.characteristics.get(object::LittleEndian) & pe::IMAGE_SCN_CNT_CODE != 0);
        let name_str = String::from_utf8_lossy(name).into_owned();
        let mut symbols = vec![format!("__imp_{name_str}")];
        if code {
            symbols.push(name_str);
        }
        out.push(DllExport { symbols, member: member(name, &dll, code) });
    }
    Ok(out)
}

/// The short import member lld's `DLLFile::makeImport` writes: by name, no hint.
fn member(name: &[u8], dll: &[u8], code: bool) -> Vec<u8> {
    let size = (name.len() + dll.len() + 2) as u32;
    let type_info: u16 = (pe::IMPORT_OBJECT_NAME << 2) | if code { pe::IMPORT_OBJECT_CODE } else { pe::IMPORT_OBJECT_DATA };
    let mut m = Vec::with_capacity(20 + size as usize);
    m.extend_from_slice(&[0, 0, 0xff, 0xff, 0, 0]);
    m.extend_from_slice(&pe::IMAGE_FILE_MACHINE_AMD64.to_le_bytes());
    m.extend_from_slice(&0u32.to_le_bytes());
    m.extend_from_slice(&size.to_le_bytes());
    m.extend_from_slice(&0u16.to_le_bytes());
    m.extend_from_slice(&type_info.to_le_bytes());
    m.extend_from_slice(name);
    m.push(0);
    m.extend_from_slice(dll);
    m.push(0);
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pe_signature_and_members() {
        let mut d = vec![0u8; 0x48];
        d[0..2].copy_from_slice(b"MZ");
        d[0x3c] = 0x40;
        d[0x40..0x44].copy_from_slice(b"PE\0\0");
        assert!(is_pe_image(&d));
        d[0x41] = b'X';
        assert!(!is_pe_image(&d));
        let m = member(b"f", b"x.dll", true);
        assert_eq!(crate::coff::implib::parse_short_import(&m).unwrap().dll, "x.dll");
        assert_eq!(read(&[0; 64], "t.dll").unwrap_err()[0], "t.dll is not a PE-COFF executable");
    }
}
