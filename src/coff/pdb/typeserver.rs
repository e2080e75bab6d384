//! What the PDB leaves out, said before the image is written. Objects compiled with cl.exe's
//! `/Zi` keep their types in a separate PDB (a "type server") and name it in an
//! `LF_TYPESERVER2` record in `.debug$T`: lld's LNK4099 warning when the type server cannot be
//! loaded (missing, or not an MSF file), a warning of dtld's own when it could have been (types
//! are not merged yet). Other objects with CodeView get one warning for all: the PDB does not
//! carry their types, symbols and lines yet.

use std::path::Path;

use super::super::layout::Layout;
use super::super::resolve::Kind;

const LF_TYPESERVER2: u16 = 0x1515;
const MSF_MAGIC: &[u8] = b"Microsoft C/C++ MSF 7.00\r\n\x1aDS\0\0\0";

/// The type server path an object's `.debug$T` names, if it starts with `LF_TYPESERVER2`.
fn type_server_path(data: &[u8]) -> Option<String> {
    // CodeView signature (4), record length (2), kind (2), GUID (16), age (4), name.
    let kind = u16::from_le_bytes(data.get(6..8)?.try_into().ok()?);
    if kind != LF_TYPESERVER2 {
        return None;
    }
    let name = data.get(28..)?;
    let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
    Some(String::from_utf8_lossy(&name[..end]).into_owned())
}

/// Why the type server at `path` (as named, or its file name next to the object) cannot be
/// used, in LLVM's words; `None` if a PDB is there.
fn load_problem(path: &str, obj_dir: &Path) -> Option<String> {
    let file_name = path.rsplit(['\\', '/']).next().unwrap_or(path);
    let data = std::fs::read(path).or_else(|_| std::fs::read(obj_dir.join(file_name)));
    match data {
        Err(_) => Some("No such file or directory".to_string()),
        Ok(d) if !d.starts_with(MSF_MAGIC) => Some("The PDB file is corrupt. MSF superblock is missing".to_string()),
        Ok(_) => None,
    }
}

/// Whether a `.debug$S` section says more than which compiler made the object: any
/// subsection but symbols (lines, files, strings...), or a symbol other than `S_OBJNAME`,
/// `S_COMPILE2/3` and `S_ENVBLOCK` (MinGW's DWARF builds carry just those).
fn substantive_symbols(data: &[u8]) -> bool {
    let mut p = 4;
    while p + 8 <= data.len() {
        let kind = u32::from_le_bytes(data[p..p + 4].try_into().unwrap());
        let len = u32::from_le_bytes(data[p + 4..p + 8].try_into().unwrap()) as usize;
        let body = &data[(p + 8).min(data.len())..(p + 8 + len).min(data.len())];
        if kind != 0xf1 {
            return true;
        }
        let mut q = 0;
        while q + 4 <= body.len() {
            let rlen = u16::from_le_bytes([body[q], body[q + 1]]) as usize;
            let rkind = u16::from_le_bytes([body[q + 2], body[q + 3]]);
            if !matches!(rkind, 0x1101 | 0x1116 | 0x113c | 0x113d) {
                return true;
            }
            q += 2 + rlen.max(2);
        }
        p += 8 + len.next_multiple_of(4);
    }
    false
}

/// Warns for every live object whose CodeView types live in a type server (LNK4099), then
/// once for the other objects with CodeView, whose types, symbols and lines the PDB does not
/// carry yet (never silently).
pub fn check(l: &Layout) {
    let mut printed = 0;
    let mut not_carried = 0;
    for &f in &l.r.obj_order {
        let file = &l.r.files[f];
        let Kind::Obj(obj) = &file.kind else { continue };
        let server = obj.sections.iter().find(|s| s.name == ".debug$T").and_then(|s| type_server_path(s.data));
        let Some(path) = server else {
            not_carried += obj.sections.iter().any(|s| s.name == ".debug$T" || (s.name == ".debug$S" && substantive_symbols(s.data))) as usize;
            continue;
        };
        let dir = Path::new(&file.name).parent().unwrap_or(Path::new("."));
        let msg = match load_problem(&path, dir) {
            Some(why) => format!("Cannot use debug info for '{}' [LNK4099]\n>>> failed to load reference '{path}': {why}", file.name),
            None => {
                format!("Cannot use debug info for '{}' [LNK4099]\n>>> type server '{path}': dtld does not merge types from type server PDBs yet", file.name)
            }
        };
        if l.config.diag.ignored.iter().any(|c| c == "4099") {
            continue;
        }
        // lld separates multi-line diagnostics by a blank line.
        if printed > 0 {
            eprintln!();
        }
        l.config.diag.warn(&msg);
        printed += 1;
    }
    if not_carried > 0 {
        if printed > 0 {
            eprintln!();
        }
        l.config.diag.warn(&format!("/debug: the PDB has publics but no type records, module symbols or line tables yet; the CodeView debug info of {not_carried} object file(s) is not carried over"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_type_server_name() {
        let mut d = vec![4, 0, 0, 0, 0, 0, 0x15, 0x15];
        d.extend_from_slice(&[0; 20]);
        d.extend_from_slice(b"C:\\b\\x.pdb\0");
        assert_eq!(type_server_path(&d).as_deref(), Some("C:\\b\\x.pdb"));
        d[6] = 0x03; // LF_ARGLIST: ordinary types
        assert_eq!(type_server_path(&d), None);
    }

    #[test]
    fn compiler_records_alone_are_not_debug_info() {
        let sub = |kind: u32, body: &[u8]| {
            let mut v = kind.to_le_bytes().to_vec();
            v.extend_from_slice(&(body.len() as u32).to_le_bytes());
            v.extend_from_slice(body);
            v.resize(v.len().next_multiple_of(4), 0);
            v
        };
        // S_OBJNAME (len 6: kind, signature) only: MinGW's DWARF build.
        let mut d = vec![4, 0, 0, 0];
        d.extend(sub(0xf1, &[6, 0, 0x01, 0x11, 0, 0, 0, 0]));
        assert!(!substantive_symbols(&d));
        // A line table subsection: real CodeView.
        d.extend(sub(0xf2, &[0; 12]));
        assert!(substantive_symbols(&d));
        // An S_GPROC32 record.
        let mut e = vec![4, 0, 0, 0];
        e.extend(sub(0xf1, &[2, 0, 0x10, 0x11]));
        assert!(substantive_symbols(&e));
    }

    #[test]
    fn missing_and_corrupt_servers() {
        let dir = std::env::temp_dir().join(format!("dtld-ts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("bad.pdb"), b"not an msf").unwrap();
        assert_eq!(load_problem("C:\\nowhere\\gone.pdb", &dir).as_deref(), Some("No such file or directory"));
        // Found by its file name next to the object.
        assert_eq!(load_problem("C:\\elsewhere\\bad.pdb", &dir).as_deref(), Some("The PDB file is corrupt. MSF superblock is missing"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
