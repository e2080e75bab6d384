//! How lld names the things of an LTO link, and how dtld names what it stages: module names
//! (archive members decorated as lld and lld-link decorate them, `--thinlto-object-suffix-replace`
//! and `--thinlto-prefix-replace`), the names of LTO objects (`a.out.lto.t1.o`), and the
//! content-tagged module IDs of the staging tree. Pure functions of names; no I/O but the
//! current directory.

use std::path::Path;

use crate::input::InputFile;

use super::irsymtab;
use super::options::LtoOptions;
use super::request::{LtoRequest, ObjectOf};
use super::{temps, thinlink};

/// The name of an LTO object of a link writing `out`, given each module's ID (`ids`).
pub(super) fn object_name(out: &str, of: ObjectOf, ids: &[String], format: irsymtab::ObjectFormat) -> String {
    let ext = if format == irsymtab::ObjectFormat::Coff { "obj" } else { "o" };
    match of {
        ObjectOf::Regular => format!("{out}.lto.{ext}"),
        ObjectOf::Module(i) => lto_object_name(out, &ids[i], ext),
        ObjectOf::Task(k) => format!("{out}.lto.{}.{ext}", k + 1),
    }
}

/// lld's module name, with `--thinlto-object-suffix-replace=` applied (lld applies it in
/// index-only mode, to the file or member name before the archive decoration). An archive
/// member is `lib.a(m.o at 8)` for ELF and `lib.libm.obj8` for COFF (lld-link's `BitcodeFile`).
pub(super) fn module_name(input: &InputFile, o: Option<&LtoOptions>, format: irsymtab::ObjectFormat) -> String {
    let replace = |s: &str| match o {
        Some(o) if o.index_only => suffix_replaced(s, o),
        _ => s.to_string(),
    };
    match &input.archive {
        Some((archive, member)) => {
            let member = replace(member);
            let file = Path::new(&member).file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or(member.clone());
            if format == irsymtab::ObjectFormat::Coff {
                format!("{archive}{file}{}", input.archive_offset)
            } else {
                format!("{archive}({file} at {})", input.archive_offset)
            }
        }
        None => replace(&input.name),
    }
}

/// A short content hash (of the module's XXH3-128 fingerprint), so that staged module paths are the same for
/// the same bitcode in every link (backend cache keys then do not depend on the output name or
/// directory).
pub(super) fn content_tag(digest: &[u8]) -> String {
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

pub(super) fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// Applies `--thinlto-object-suffix-replace=old;new` to a module name.
pub(super) fn suffix_replaced(name: &str, o: &LtoOptions) -> String {
    match &o.object_suffix_replace {
        Some((old, new)) => match name.strip_suffix(old.as_str()) {
            Some(stem) => format!("{stem}{new}"),
            None => name.to_string(),
        },
        None => name.to_string(),
    }
}

/// Applies `--thinlto-prefix-replace=old;new` to a path (lld's `getThinLTOOutputFile`).
pub(super) fn prefix_replaced(path: &str, old: &str, new: &str) -> String {
    match path.strip_prefix(old) {
        Some(rest) => format!("{new}{rest}"),
        None => path.to_string(),
    }
}

/// The file name a module gets in the staging tree: the last component of lld's name (so no
/// directory, absolute or not, enters a backend job), the member's for an archive member
/// (`lib.a(m.o at 8)` becomes `m.o`: the content tag in front of it keeps IDs apart), ending in
/// an extension clang compiles (`.o`/`.bc`). Short because the thin link and its cache keys
/// hash and compare module IDs millions of times (11.8 million string-map lookups for an
/// OpenSSL relink): `<tag>-libcrypto.a(libcrypto-lib-cms_env.o at 2083662).o` was 27 bytes
/// longer.
pub(super) fn stage_name(name: &str) -> String {
    let member = name.strip_suffix(')').and_then(|n| n.rsplit_once('(')).map(|(_, m)| m.rsplit_once(" at ").map_or(m, |(m, _)| m));
    let n = thinlink::normalize(Path::new(member.unwrap_or(name)));
    let mut s = n.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
    if s.is_empty() {
        s.push_str("module");
    }
    let ext_ok = Path::new(&s).extension().is_some_and(|e| e == "o" || e == "bc" || e == "obj");
    if !ext_ok {
        s.push_str(".o");
    }
    s
}

/// `p` relative to the current directory when it is inside it (so a job file written for an
/// absolute `-o` does not carry the build directory).
pub(super) fn relative_to_cwd(p: &str) -> String {
    let path = Path::new(p);
    if path.is_absolute() {
        if let Ok(cwd) = std::env::current_dir() {
            if let Ok(rel) = path.strip_prefix(&cwd) {
                if !rel.as_os_str().is_empty() {
                    return rel.to_string_lossy().into_owned();
                }
            }
        }
    }
    p.to_string()
}

/// Each module's ID in the staging tree: `<prefix><rank>-<content hash>-<file name>`, so the
/// same bitcode under the same names gets the same ID in every link; the same bytes under the
/// same name twice (a file named twice, or copies in two directories) get `-2`, `-3`... after
/// the hash. The rank (zero-padded) is the module name's place in sorted order, so the IDs sort
/// as lld's module names do: a backend imports from its source modules in that order, and the
/// first one a declaration comes from decides its attributes (see `inproc::ModuleIds`). All
/// in one directory: a directory per module was an inode more to allocate and free per module.
pub(super) fn module_ids(req: &LtoRequest, names: &[String], digests: &[[u8; 16]], prefix: &str) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut sorted: Vec<&str> = names.iter().map(String::as_str).collect();
    sorted.sort_unstable();
    let width = names.len().saturating_sub(1).to_string().len();
    req.modules
        .iter()
        .zip(names)
        .zip(digests)
        .map(|((_, n), digest)| {
            let tag = content_tag(digest);
            let file = stage_name(n);
            let rank = sorted.partition_point(|m| *m < n.as_str());
            let mut id = format!("{prefix}{rank:0width$}-{tag}-{file}");
            let mut k = 1;
            while !seen.insert(id.clone()) {
                k += 1;
                id = format!("{prefix}{rank:0width$}-{tag}-{k}-{file}");
            }
            id
        })
        .collect()
}

/// A staged module ID without its rank (`<hash>-<file>` of `<rank>-<hash>-<file>`).
pub(super) fn unranked(id: &[u8]) -> Option<&[u8]> {
    let dash = id.iter().position(|&b| b == b'-')?;
    (dash > 0 && id[..dash].iter().all(u8::is_ascii_digit)).then(|| &id[dash + 1..])
}

/// The name lld gives the object compiled from `module` (a module ID, or `ld-temp.o` for the
/// regular-LTO partition) when `out` is the output: `<module's directory>/<output's file
/// name>.lto.<module's stem>.<ext>` with `.`/`..` removed (an archive member `d/a.a(m.o at 8)`
/// keeps its whole file name), so `a.out.lto.t1.o`. Messages about the object use it, and
/// `--save-temps` writes it.
pub(super) fn lto_object_name(out: &str, module: &str, ext: &str) -> String {
    let base = if module.ends_with(')') { temps::llvm_filename(module) } else { temps::llvm_stem(module) };
    let dir = Path::new(module).parent().unwrap_or(Path::new(""));
    let file = format!("{}.lto.{base}.{ext}", temps::llvm_filename(out));
    thinlink::normalize(&dir.join(file)).to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stage_names() {
        assert_eq!(stage_name("main.o"), "main.o");
        assert_eq!(stage_name("../lib/x.o"), "x.o");
        assert_eq!(stage_name("/abs/y.bc"), "y.bc");
        assert_eq!(stage_name("lib/libb.a(b.o at 100)"), "b.o");
        assert_eq!(stage_name("libt.a(dir/t.o)"), "t.o");
        assert_eq!(stage_name("libb.a(b at 8)"), "b.o");
        assert_eq!(stage_name("./a/../m.lto"), "m.lto.o");
        assert_eq!(relative_to_cwd("x/y"), "x/y");
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(relative_to_cwd(&cwd.join("out/prog").to_string_lossy()), "out/prog");
    }

    #[test]
    fn replacements() {
        assert_eq!(prefix_replaced("obj/a.o", "obj/", "idx/"), "idx/a.o");
        assert_eq!(prefix_replaced("a.o", "", "idx/"), "idx/a.o");
        assert_eq!(prefix_replaced("x/a.o", "obj/", "idx/"), "x/a.o");
    }
}
