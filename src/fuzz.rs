//! Entry points for the fuzz targets in `fuzz/` (cargo-fuzz, libFuzzer) and their regression
//! tests.
//!
//! Every parser that reads bytes a stranger may have produced (objects, shared libraries,
//! archives, import libraries, `.def` files, `.drectve` text, bitcode symbol tables, linker
//! scripts, version scripts, dynamic lists, response files) gets one function here taking the
//! raw bytes. The fuzz targets and `tests/fuzz_regressions` call only this module, so the
//! parsers themselves can stay crate-private (the architecture work of issue 13) without the
//! fuzzers following every move. Each function returns normally for every input: an error is
//! a correct answer, a panic, a hang or an abort is the bug the fuzzer looks for.
//!
//! The parsers take `'static` borrows (inputs live as long as the process in a real link);
//! the binary entry points widen the fuzzer's borrow instead of leaking a copy (`with_static`).
//! What the parsers leak themselves (decompressed sections, some names) and what the whole
//! link leaks (mappings) is why fuzz/run.sh uses libFuzzer's fork mode, which restarts the
//! worker from time to time.
//! `link` drives the whole `dtld` command line on files written to a scratch directory (see
//! docs/reliability.md for the container format of its corpus).

use std::path::{Path, PathBuf};

use crate::input::{FileKind, InputFile};

/// Runs `f` on `data` as the `'static` bytes the parsers expect (in a real link, inputs are
/// mapped for the life of the process). Copying and leaking every fuzz input would exhaust
/// memory within seconds at libFuzzer's rates, so the borrow is widened instead.
///
/// SAFETY (of the callers' use): the parsers keep no reference to their input beyond the value
/// they return (dtld has no global state but the signal cleanup list, which holds paths), and
/// every caller drops that value inside `f`.
fn with_static<R>(data: &[u8], f: impl FnOnce(&'static [u8]) -> R) -> R {
    // SAFETY: see above; `data` outlives the call and nothing borrowed escapes `f`.
    let data: &'static [u8] = unsafe { std::mem::transmute::<&[u8], &'static [u8]>(data) };
    f(data)
}

fn with_input<R>(name: &str, data: &[u8], kind: FileKind, f: impl FnOnce(&'static InputFile) -> R) -> R {
    with_static(data, |data| {
        let file = InputFile {
            name: name.to_string(),
            path: PathBuf::from(name),
            data,
            kind,
            lazy: false,
            archive: None,
            as_needed: false,
            needed_name: name.to_string(),
            archive_offset: 0,
            thin_member: false,
            fat_lto: false,
            group: 0,
        };
        // SAFETY: as `with_static`: `file` lives until `f` returns and nothing keeps it.
        let file: &'static InputFile = unsafe { std::mem::transmute::<&InputFile, &'static InputFile>(&file) };
        f(file)
    })
}

/// An ELF relocatable object: header, sections (compressed ones decompressed), symbols,
/// groups, and every symbol name.
pub fn elf_object(data: &[u8]) {
    with_input("fuzz.o", data, FileKind::Object, |f| {
        if let Ok(o) = crate::elf::object::ObjFile::parse(f, crate::elf::object::ParseOpts { merge: true, relocatable: false, execstack: false }) {
            for i in 0..o.symbols.len() {
                let _ = o.sym_name(i);
            }
        }
    })
}

/// An ELF shared library: dynamic section, dynamic symbols, version definitions and needs.
pub fn elf_shared(data: &[u8]) {
    with_input("libfuzz.so", data, FileKind::Shared, |f| {
        let _ = crate::elf::shared::SharedFile::parse(f);
    })
}

/// An archive of any flavour dtld reads: GNU and BSD long names, the COFF linker members
/// (`armap`), thin archives (`!<thin>`: member names only, nothing is opened).
pub fn archive(data: &[u8]) {
    if let Ok(members) = crate::archive::parse(data) {
        for m in &members {
            // Members are then identified by their first bytes, as the loader does.
            if let Some(d) = m.data.filter(|d| crate::coff::implib::is_short_import(d)) {
                let _ = crate::coff::implib::parse_short_import(d);
            }
        }
    }
    let _ = crate::coff::armap::symbols(data);
}

/// A COFF object (regular or `/bigobj`), including GNU dlltool's long-form import members,
/// and its `.drectve` text.
pub fn coff_object(data: &[u8]) {
    with_static(data, |data| {
        if let Ok(o) = crate::coff::object::parse(data) {
            if let Some(d) = o.directives {
                let _ = crate::coff::drectve::parse(d);
            }
        }
    })
}

/// A short import object (`llvm-dlltool`, `lib.exe`).
pub fn short_import(data: &[u8]) {
    let _ = crate::coff::implib::is_short_import(data);
    let _ = crate::coff::implib::parse_short_import(data);
}

/// A module-definition (`.def`) file.
pub fn def_file(data: &[u8]) {
    let _ = crate::coff::deffile::parse(data);
}

/// `.drectve` directives, and each `/export:` spec on its own.
pub fn drectve(data: &[u8]) {
    let _ = crate::coff::drectve::parse(data);
    if let Ok(s) = std::str::from_utf8(data) {
        let _ = crate::coff::drectve::parse_export(s);
    }
}

/// An LLVM bitcode file's irsymtab (raw bitcode or the wrapper header).
pub fn irsymtab(data: &[u8]) {
    let _ = crate::lto::irsymtab::is_bitcode(data);
    if let Ok(f) = crate::lto::irsymtab::parse(data) {
        let _ = f.dump();
    }
}

/// A linker script, as an input file (`parse`) and as `-T` (`parse_partial`).
pub fn linker_script(data: &[u8]) {
    let _ = crate::elf::script::parse("fuzz.lds", data);
    let _ = crate::elf::script::parse_partial("fuzz.lds", data);
}

/// A version script; the result is also merged and queried, as the layout stage does.
pub fn version_script(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(v) = crate::elf::version_script::parse(&text, "fuzz.ver") {
        let merged = crate::elf::version_script::VersionScript::merge(vec![v]);
        let _ = merged.warnings();
        let _ = merged.version_names();
        for name in [&b"main"[..], b"_Z3fooi", b"foo@@V1", b"bar@V2", b""] {
            let _ = merged.assign(name);
            let _ = merged.version_index(name);
        }
    }
}

/// A `--dynamic-list` file, compiled into its matcher and queried.
pub fn dynamic_list(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(p) = crate::elf::version_script::parse_dynamic_list(&text, "fuzz.list") {
        let m = crate::elf::version_script::DynamicListMatcher::new(&p);
        for name in [&b"main"[..], b"_Z3fooi", b"foo", b""] {
            let _ = m.matches(name);
        }
    }
}

/// A response file (`@file`), written to `dir` and expanded; the words are then parsed as
/// both GNU-flavour and MinGW command lines (nothing is linked).
pub fn response_file(data: &[u8], dir: &Path) {
    let rsp = dir.join("fuzz.rsp");
    if std::fs::write(&rsp, data).is_err() {
        return;
    }
    let words = match crate::driver::expand_response_files(&[format!("@{}", rsp.display())]) {
        Ok(w) => w,
        Err(_) => return,
    };
    // Options that name files to write are dropped: parsing does not write, but keep the
    // fuzzer from ever pointing a later stage at the file system.
    let _ = crate::driver::gnu::parse(&words);
    let _ = crate::driver::mingw::parse(&words);
}

/// The container of a whole-link corpus entry: a flavour byte, then records of
/// `name NUL, u32 length (little-endian), bytes`. Names are file names only (anything with a
/// path separator or `..` is renamed), so a link only ever reads and writes inside `dir`.
pub fn split_container(data: &[u8]) -> (u8, Vec<(String, &[u8])>) {
    let Some((&flavour, mut rest)) = data.split_first() else {
        return (0, Vec::new());
    };
    let mut files = Vec::new();
    while let Some(nul) = rest.iter().position(|&b| b == 0) {
        let name = String::from_utf8_lossy(&rest[..nul]).into_owned();
        rest = &rest[nul + 1..];
        if rest.len() < 4 {
            break;
        }
        let len = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
        rest = &rest[4..];
        let body = &rest[..len.min(rest.len())];
        rest = &rest[body.len()..];
        let safe = !name.is_empty() && !name.contains(['/', '\\']) && !name.starts_with(['.', '-', '@']) && name.len() < 64;
        let name = if safe { name } else { format!("f{}.o", files.len()) };
        files.push((name, body));
        if files.len() >= 64 {
            break;
        }
    }
    (flavour, files)
}

/// Builds a container (the inverse of `split_container`), for seeding corpora.
pub fn make_container(flavour: u8, files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = vec![flavour];
    for (name, body) in files {
        out.extend_from_slice(name.as_bytes());
        out.push(0);
        out.extend_from_slice(&(body.len() as u32).to_le_bytes());
        out.extend_from_slice(body);
    }
    out
}

/// The fixed command lines of the whole-link targets; the container's flavour byte picks one.
/// All of them write only into the scratch directory.
fn link_args(flavour: u8, coff: bool) -> Vec<&'static str> {
    if coff {
        match flavour % 4 {
            0 => vec!["-m", "i386pep", "-e", "main", "--subsystem", "console"],
            1 => vec!["-m", "i386pep", "-e", "main", "--gc-sections", "-Map", "out.map"],
            2 => vec!["-m", "i386pep", "--shared", "--export-all-symbols", "--out-implib", "out.lib"],
            _ => vec!["-m", "i386pep", "-e", "main", "--allow-multiple-definition", "--unresolved-symbols=ignore-all"],
        }
    } else {
        match flavour % 8 {
            0 => vec!["-e", "main", "--unresolved-symbols=ignore-all"],
            1 => vec!["-pie", "-e", "main", "--unresolved-symbols=ignore-all", "--hash-style=both"],
            2 => vec!["-shared", "--export-dynamic", "--build-id", "-z", "now"],
            3 => vec!["-e", "main", "--gc-sections", "--icf=all", "--unresolved-symbols=ignore-all", "-Map", "out.map"],
            4 => vec!["-r"],
            5 => vec!["--emit-relocs", "-e", "main", "--unresolved-symbols=ignore-all", "--allow-multiple-definition"],
            6 => vec!["-static", "-e", "main", "--whole-archive", "--unresolved-symbols=ignore-all", "--compress-debug-sections=zlib"],
            _ => vec!["-shared", "-z", "defs", "--version-script", "ver", "--no-undefined-version"],
        }
    }
}

/// The whole link on a container (see `split_container`): the files are written to `dir`
/// (emptied first), and `dtld -o out <flavour's options> <files>` runs with `dir` as every
/// path's base. Returns the exit code. A panic propagates (that is a finding).
pub fn link(data: &[u8], dir: &Path, coff: bool) -> i32 {
    let _ = std::fs::remove_dir_all(dir);
    if std::fs::create_dir_all(dir).is_err() {
        return 0;
    }
    let (flavour, files) = split_container(data);
    let mut argv: Vec<String> = vec!["-o".into(), dir.join("out").to_string_lossy().into_owned()];
    for a in link_args(flavour, coff) {
        // Options naming an output file get it inside `dir`.
        if matches!(a, "out.map" | "out.lib" | "ver") {
            argv.push(dir.join(a).to_string_lossy().into_owned());
        } else {
            argv.push(a.to_string());
        }
    }
    let mut seen = std::collections::HashSet::new();
    for (name, body) in &files {
        if !seen.insert(name.clone()) {
            continue;
        }
        let p = dir.join(name);
        if std::fs::write(&p, body).is_err() {
            return 0;
        }
        if name != "ver" {
            argv.push(p.to_string_lossy().into_owned());
        }
    }
    if !seen.contains("ver") {
        let _ = std::fs::write(dir.join("ver"), "{ global: *; };\n");
    }
    argv.push("--threads=1".into());
    crate::main_with_args(&argv)
}

#[cfg(test)]
mod tests {
    //! Every committed corpus input and every finding (fuzz/corpus/<target>/,
    //! fuzz/regressions/<target>/) through its entry point: what the fuzzers found stays
    //! fixed, and the corpora keep parsing without a panic.
    use super::*;

    fn replay(target: &str, f: &dyn Fn(&[u8])) -> usize {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
        let mut n = 0;
        for dir in ["corpus", "regressions"] {
            let Ok(rd) = std::fs::read_dir(root.join(dir).join(target)) else {
                continue;
            };
            let mut files: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
            files.sort();
            for p in files {
                let data = std::fs::read(&p).unwrap();
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&data)));
                assert!(r.is_ok(), "{}: panicked", p.display());
                n += 1;
            }
        }
        n
    }

    #[test]
    fn replay_parsers() {
        let scratch = std::env::temp_dir().join(format!("dtld-fuzz-replay-{}", std::process::id()));
        std::fs::create_dir_all(&scratch).unwrap();
        let mut total = 0;
        total += replay("elf", &|d| {
            if d.len() > 17 && d[16] == 3 {
                elf_shared(d)
            } else {
                elf_object(d)
            }
        });
        total += replay("archive", &archive);
        total += replay("coff", &|d| {
            if d.len() >= 6 && d[0..4] == [0, 0, 0xff, 0xff] && d[4..6] == [0, 0] {
                short_import(d)
            } else {
                coff_object(d)
            }
        });
        total += replay("def_file", &def_file);
        total += replay("drectve", &drectve);
        total += replay("irsymtab", &irsymtab);
        total += replay("linker_script", &linker_script);
        total += replay("version_script", &version_script);
        total += replay("dynamic_list", &dynamic_list);
        total += replay("response_file", &|d| response_file(d, &scratch));
        let _ = std::fs::remove_dir_all(&scratch);
        assert!(total > 0, "no committed corpus under fuzz/corpus");
    }

    #[test]
    fn replay_links() {
        let scratch = std::env::temp_dir().join(format!("dtld-fuzz-replay-link-{}", std::process::id()));
        let mut total = 0;
        total += replay("link_elf", &|d| {
            let code = link(d, &scratch, false);
            assert!(code == 0 || code == 1, "exit code {code}");
        });
        total += replay("link_coff", &|d| {
            let code = link(d, &scratch, true);
            assert!(code == 0 || code == 1, "exit code {code}");
        });
        let _ = std::fs::remove_dir_all(&scratch);
        assert!(total > 0, "no committed link corpus under fuzz/corpus");
    }

    #[test]
    fn container_round_trip() {
        let c = make_container(3, &[("a.o", b"xyz"), ("../evil", b"q")]);
        let (fl, files) = split_container(&c);
        assert_eq!(fl, 3);
        assert_eq!(files[0], ("a.o".to_string(), &b"xyz"[..]));
        // Path separators never reach the file system.
        assert_eq!(files[1].0, "f1.o");
    }
}
