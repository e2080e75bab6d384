//! What the PDB leaves out, said before the image is written. Objects compiled with cl.exe's
//! `/Zi` keep their types in a separate PDB (a "type server") and name it in an
//! `LF_TYPESERVER2` record in `.debug$T`: lld's LNK4099 warning when the type server cannot be
//! loaded (missing, or not an MSF file), a warning of dtld's own when it could have been (types
//! from type servers are not merged yet; the object's symbols are left out). And lld's warning
//! that the type hashes of a precompiled-header object go unused.

use std::path::Path;

use super::super::layout::model::Layout;
use super::super::symtab::Kind;

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
/// A PDB read goes into `/linkrepro`'s archive.
fn load_problem(path: &str, obj_dir: &Path, repro: Option<&crate::coff::reproduce::Repro>) -> Option<String> {
    let file_name = path.rsplit(['\\', '/']).next().unwrap_or(path);
    let beside = obj_dir.join(file_name);
    let data = std::fs::read(path).map(|d| (Path::new(path), d)).or_else(|_| std::fs::read(&beside).map(|d| (beside.as_path(), d)));
    if let (Ok((p, d)), Some(r)) = (&data, repro) {
        r.read_owned(p, d.clone());
    }
    match data.map(|(_, d)| d) {
        Err(_) => Some("No such file or directory".to_string()),
        Ok(d) if !d.starts_with(MSF_MAGIC) => Some("The PDB file is corrupt. MSF superblock is missing".to_string()),
        Ok(_) => None,
    }
}

/// Whether `.debug$H` holds global type hashes lld can use: its header (magic 0x133C9C5,
/// version 0, BLAKE3) and whole 8-byte hashes.
fn usable_ghashes(h: &[u8]) -> bool {
    h.len() >= 8 && h[0..4] == [0xC5, 0xC9, 0x33, 0x01] && h[4..6] == [0, 0] && h[6..8] == [2, 0] && (h.len() - 8).is_multiple_of(8)
}

/// Warns for every live object whose CodeView types live in a type server (LNK4099), after
/// lld's warning for a precompiled-header object (types in `.debug$P`) with type hashes, which
/// lld's ghash merging (on with `/debug`, off with `/debug:noghash`) does not use.
pub fn check(l: &Layout) {
    if l.config.debug_ghash {
        for &f in &l.r.obj_order {
            let Kind::Obj(obj) = &l.r.files[f].kind else { continue };
            let pch = obj.sections.iter().find(|s| s.name == ".debug$P").is_some_and(|s| s.data.len() > 4);
            if pch && obj.sections.iter().find(|s| s.name == ".debug$H").is_some_and(|s| usable_ghashes(s.data)) {
                l.config.diag.warn("ignoring .debug$H section; pch with ghash is not implemented");
            }
        }
    }
    for &f in &l.r.obj_order {
        let file = &l.r.files[f];
        let Kind::Obj(obj) = &file.kind else { continue };
        let server = obj.sections.iter().find(|s| s.name == ".debug$T").and_then(|s| type_server_path(s.data));
        let Some(path) = server else {
            continue;
        };
        let dir = Path::new(&file.name).parent().unwrap_or(Path::new("."));
        let msg = match load_problem(&path, dir, l.config.repro.as_ref()) {
            Some(why) => format!("Cannot use debug info for '{}' [LNK4099]\n>>> failed to load reference '{path}': {why}", file.name),
            None => {
                format!("Cannot use debug info for '{}' [LNK4099]\n>>> type server '{path}': dtld does not merge types from type server PDBs yet", file.name)
            }
        };
        if l.config.diag.ignored.iter().any(|c| c == "4099") {
            continue;
        }
        // (Diag separates multi-line messages by a blank line, as lld.)
        l.config.diag.warn(&msg);
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
    fn missing_and_corrupt_servers() {
        let dir = std::env::temp_dir().join(format!("dtld-ts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("bad.pdb"), b"not an msf").unwrap();
        assert_eq!(load_problem("C:\\nowhere\\gone.pdb", &dir, None).as_deref(), Some("No such file or directory"));
        // Found by its file name next to the object.
        assert_eq!(load_problem("C:\\elsewhere\\bad.pdb", &dir, None).as_deref(), Some("The PDB file is corrupt. MSF superblock is missing"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
