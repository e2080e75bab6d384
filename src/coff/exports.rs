//! DLL export handling: ordinal assignment, the export directory (`.edata`)
//! and MinGW's automatic `--export-all-symbols` filter.
//!
//! A DLL publishes its exports through the export directory
//! (`IMAGE_EXPORT_DIRECTORY`, PE/COFF spec 6.3): an export address table
//! indexed by ordinal, a name pointer table sorted by name (the loader binary
//! searches it), a parallel ordinal table, and the strings. This module
//! reproduces what lld does so that dtld-built DLLs and their import
//! libraries match lld's:
//!
//! * [`assign_ordinals`] follows `SymbolTable::fixupExports` and
//!   `assignExportOrdinals` (lld/COFF): duplicate explicit ordinals are an
//!   error, exports are deduplicated by name and sorted by name, explicit
//!   ordinals are kept and the others get consecutive ordinals, in name
//!   order, starting after the largest explicit ordinal.
//! * [`write_edata`] lays the table out like lld's `EdataContents`
//!   (lld/COFF/DLL.cpp): directory, DLL name, address table, name pointers,
//!   ordinals, names, forwarder strings, all packed without padding, with
//!   `OrdinalBase` = the smallest ordinal and a zero time stamp (lld never
//!   stores a time stamp in the export directory, even with
//!   `--insert-timestamp`; verified against ld.lld-22).
//! * [`AutoExporter`] is lld's MinGW `AutoExporter` (lld/COFF/MinGW.cpp)
//!   with the x86-64 exclusion lists of lld 22 (verified by linking test
//!   DLLs with `ld.lld-22 --export-all-symbols`).
//!
//! Pure: no I/O, no global state, deterministic.

use std::collections::{BTreeSet, HashSet};

/// One exported symbol.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Export {
    /// The name under which the symbol is exported (lld's `exportName`).
    pub name: String,
    /// Explicit ordinal (`@N`), or `None` to have one assigned. After
    /// [`assign_ordinals`] every export has `Some`.
    pub ordinal: Option<u16>,
    /// RVA of the exported symbol. Ignored for forwarders.
    pub rva: u32,
    /// Forwarder target (`otherdll.func` or `otherdll.#5`); the address
    /// table entry then points at this string inside the export directory.
    pub forward: Option<String>,
    /// Exported data (`DATA`); only matters for the import library.
    pub data: bool,
    /// `PRIVATE`: in the export table but not in the import library.
    pub private: bool,
    /// `NONAME`: exported by ordinal only (no name table entry).
    pub noname: bool,
}

/// Deduplicates, sorts and numbers the exports like lld.
///
/// 1. Explicit ordinals must be unique over the list as given (before
///    deduplication, as in lld): otherwise
///    `Err("duplicate export ordinal: <name>")` naming the later export.
/// 2. Exports with the same name are merged, keeping the first one (lld
///    keeps the first among equal-priority sources and lets `/export` and
///    `.def` entries override `.drectve` ones, so the caller should put
///    higher-priority sources first). lld warns when the merged entries
///    differ; this function does not diagnose.
/// 3. The list is sorted by name (byte order).
/// 4. Exports without an ordinal get `max_explicit + 1`, `+ 2`, ... in name
///    order; more than 65535 gives
///    `Err("too many exported symbols (got N, max 65535)")`.
///
/// `Some(0)` is treated as "no ordinal" (lld uses 0 for that and never
/// accepts `@0`).
pub fn assign_ordinals(exports: &mut Vec<Export>) -> Result<(), String> {
    let mut seen_ords = HashSet::new();
    for e in exports.iter() {
        if let Some(ord) = e.ordinal.filter(|&o| o != 0) {
            if !seen_ords.insert(ord) {
                return Err(format!("duplicate export ordinal: {}", e.name));
            }
        }
    }

    let mut seen_names = HashSet::new();
    exports.retain(|e| seen_names.insert(e.name.clone()));
    exports.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));

    let mut max: u32 = exports.iter().filter_map(|e| e.ordinal).map(u32::from).max().unwrap_or(0);
    let mut assigned = Vec::with_capacity(exports.len());
    for e in exports.iter() {
        match e.ordinal.filter(|&o| o != 0) {
            Some(o) => assigned.push(u32::from(o)),
            None => {
                max += 1;
                assigned.push(max);
            }
        }
    }
    if max > u32::from(u16::MAX) {
        return Err(format!("too many exported symbols (got {max}, max {})", u16::MAX));
    }
    for (e, ord) in exports.iter_mut().zip(assigned) {
        e.ordinal = Some(ord as u16);
    }
    Ok(())
}

/// Size in bytes of `IMAGE_EXPORT_DIRECTORY`.
const DIR_SIZE: usize = 40;

/// Export with its ordinal unwrapped; see [`write_edata`].
fn ordinal_of(e: &Export) -> u16 {
    match e.ordinal {
        Some(o) if o != 0 => o,
        _ => panic!("export {:?} has no ordinal; call assign_ordinals first", e.name),
    }
}

/// Layout shared by [`edata_size`] and [`write_edata`]: offsets relative to
/// the start of the chunk.
struct Layout {
    base: u16,
    num_functions: usize,
    /// Exports with a name, in name order.
    named: Vec<usize>,
    /// Forwarders, in name order.
    forwards: Vec<usize>,
    /// Exports in name order (indices into the caller's slice).
    order: Vec<usize>,
    name_off: usize,
    eat_off: usize,
    npt_off: usize,
    ot_off: usize,
    strings_off: usize,
    size: usize,
}

fn layout(dll_name: &str, exports: &[Export]) -> Layout {
    let mut order: Vec<usize> = (0..exports.len()).collect();
    // Stable: equal names keep their relative order.
    order.sort_by(|&a, &b| exports[a].name.as_bytes().cmp(exports[b].name.as_bytes()));
    let base = exports.iter().map(ordinal_of).min().unwrap_or(1);
    let max = exports.iter().map(ordinal_of).max().unwrap_or(0);
    let num_functions = if exports.is_empty() { 0 } else { usize::from(max - base) + 1 };
    let named: Vec<usize> = order.iter().copied().filter(|&i| !exports[i].noname).collect();
    let forwards: Vec<usize> = order.iter().copied().filter(|&i| exports[i].forward.is_some()).collect();

    let name_off = DIR_SIZE;
    let eat_off = name_off + dll_name.len() + 1;
    let npt_off = eat_off + num_functions * 4;
    let ot_off = npt_off + named.len() * 4;
    let strings_off = ot_off + named.len() * 2;
    let mut size = strings_off;
    for &i in &named {
        size += exports[i].name.len() + 1;
    }
    for &i in &forwards {
        size += exports[i].forward.as_ref().unwrap().len() + 1;
    }
    Layout { base, num_functions, named, forwards, order, name_off, eat_off, npt_off, ot_off, strings_off, size }
}

/// Size of the export directory chunk that [`write_edata`] produces; 0 when
/// there are no exports (lld emits no export table then).
pub fn edata_size(dll_name: &str, exports: &[Export]) -> u32 {
    if exports.is_empty() {
        return 0;
    }
    layout(dll_name, exports).size as u32
}

/// Writes the complete export directory for a chunk placed at `rva`.
///
/// `dll_name` is the file name stored in the directory (lld uses the
/// output file's name without directories). Every export must have an
/// ordinal (run [`assign_ordinals`] first; this panics otherwise). The
/// exports are emitted in name order whatever the slice order, so the name
/// pointer table is always sorted; for lld parity pass the list produced by
/// [`assign_ordinals`]. Returns an empty vector when there are no exports.
///
/// Layout (no padding anywhere, exactly as lld): `IMAGE_EXPORT_DIRECTORY`
/// (characteristics, time stamp, version all 0; `Base` = smallest ordinal;
/// `NumberOfFunctions` = largest - smallest + 1), DLL name, export address
/// table (unused slots 0; forwarders point at their string), name pointer
/// table, ordinal table (biased by `Base`), export names, forwarder strings.
pub fn write_edata(dll_name: &str, exports: &[Export], rva: u32) -> Vec<u8> {
    if exports.is_empty() {
        return Vec::new();
    }
    let l = layout(dll_name, exports);
    let mut out = vec![0u8; l.size];
    let put32 = |out: &mut Vec<u8>, off: usize, v: u32| out[off..off + 4].copy_from_slice(&v.to_le_bytes());
    let at = |off: usize| rva + off as u32;

    // String area: names then forwarders.
    let mut name_rva = vec![0u32; exports.len()];
    let mut fwd_rva = vec![0u32; exports.len()];
    let mut off = l.strings_off;
    for &i in &l.named {
        let s = exports[i].name.as_bytes();
        out[off..off + s.len()].copy_from_slice(s);
        name_rva[i] = at(off);
        off += s.len() + 1;
    }
    for &i in &l.forwards {
        let s = exports[i].forward.as_ref().unwrap().as_bytes();
        out[off..off + s.len()].copy_from_slice(s);
        fwd_rva[i] = at(off);
        off += s.len() + 1;
    }
    debug_assert_eq!(off, l.size);

    // IMAGE_EXPORT_DIRECTORY. Characteristics, TimeDateStamp and the
    // version fields stay 0.
    put32(&mut out, 12, at(l.name_off));
    put32(&mut out, 16, u32::from(l.base));
    put32(&mut out, 20, l.num_functions as u32);
    put32(&mut out, 24, l.named.len() as u32);
    put32(&mut out, 28, at(l.eat_off));
    put32(&mut out, 32, at(l.npt_off));
    put32(&mut out, 36, at(l.ot_off));

    out[l.name_off..l.name_off + dll_name.len()].copy_from_slice(dll_name.as_bytes());

    for &i in &l.order {
        let e = &exports[i];
        let slot = l.eat_off + usize::from(ordinal_of(e) - l.base) * 4;
        let v = if e.forward.is_some() { fwd_rva[i] } else { e.rva };
        put32(&mut out, slot, v);
    }
    for (k, &i) in l.named.iter().enumerate() {
        put32(&mut out, l.npt_off + k * 4, name_rva[i]);
        let biased = ordinal_of(&exports[i]) - l.base;
        out[l.ot_off + k * 2..l.ot_off + k * 2 + 2].copy_from_slice(&biased.to_le_bytes());
    }
    out
}

/// lld's MinGW automatic-export filter (`AutoExporter` in
/// lld/COFF/MinGW.cpp), x86-64 flavour, as in lld 22.
///
/// Decides which defined symbols a MinGW DLL exports when it exports
/// everything: when no symbol is explicitly exported (no `dllexport`, no
/// `.def`, no `/export`), or always with `--export-all-symbols`. Use
/// [`AutoExporter::enabled`] to decide whether auto-export runs at all,
/// then [`AutoExporter::should_export`] per symbol.
///
/// What the core must check itself (lld checks these before the name and
/// file rules): only regular defined symbols and common symbols that belong
/// to a chunk qualify (no absolute, synthetic, import or undefined symbols);
/// a symbol is not exported if a symbol named `__imp_<name>` exists in the
/// symbol table; symbols not from an object file are not exported. An
/// exported symbol is `DATA` when its output section is not executable, and
/// becomes a GC root.
#[derive(Clone, Debug)]
pub struct AutoExporter {
    exclude_symbols: BTreeSet<String>,
    exclude_libs: BTreeSet<String>,
    exclude_all_libs: bool,
    exclude_all_symbols: bool,
}

/// Archives whose members are never auto-exported (file name without the
/// last extension).
const EXCLUDE_LIBS: &[&str] = &[
    "libgcc",
    "libgcc_s",
    "libstdc++",
    "libmingw32",
    "libmingwex",
    "libg2c",
    "libsupc++",
    "libobjc",
    "libgcj",
    "libclang_rt.builtins",
    "libclang_rt.builtins-aarch64",
    "libclang_rt.builtins-arm",
    "libclang_rt.builtins-i386",
    "libclang_rt.builtins-x86_64",
    "libclang_rt.profile",
    "libclang_rt.profile-aarch64",
    "libclang_rt.profile-arm",
    "libclang_rt.profile-i386",
    "libclang_rt.profile-x86_64",
    "libcygwin",
    "libmsys-2.0",
    "libc++",
    "libc++abi",
    "libflang_rt.runtime",
    "libunwind",
    "libmsvcrt",
    "libmsvcrt-os",
    "libucrtbase",
    "libucrt",
    "libucrtapp",
    "libpthread",
    "libwinpthread",
];

/// Object files (outside archives) whose symbols are never auto-exported.
const EXCLUDE_OBJECTS: &[&str] =
    &["crt0.o", "crt1.o", "crt1u.o", "crt2.o", "crt2u.o", "dllcrt1.o", "dllcrt2.o", "gcrt0.o", "gcrt1.o", "gcrt2.o", "crtbegin.o", "crtend.o"];

/// Symbol name prefixes never auto-exported (x86-64 list, which adds
/// `_head_` to the common ones).
const EXCLUDE_PREFIXES: &[&str] = &[
    // Import symbols.
    "__imp_",
    "__IMPORT_DESCRIPTOR_",
    // Extra import symbols from GNU import libraries.
    "__nm_",
    // C++ symbols.
    "__rtti_",
    "__builtin_",
    // Artificial symbols such as .refptr.
    ".",
    // Profile generation.
    "__profc_",
    "__profd_",
    "__profvp_",
    // GNU import library heads (x86-64 spelling).
    "_head_",
];

/// Symbol name suffixes never auto-exported.
const EXCLUDE_SUFFIXES: &[&str] = &["_iname", "_NULL_THUNK_DATA"];

/// Exact symbol names never auto-exported (x86-64 list).
const EXCLUDE_SYMBOLS: &[&str] = &[
    "__NULL_IMPORT_DESCRIPTOR",
    "_pei386_runtime_relocator",
    "do_pseudo_reloc",
    "impure_ptr",
    "_impure_ptr",
    "_fmode",
    "environ",
    "__dso_handle",
    "_load_config_used",
    // MinGW names that differ from the standard ones (no extra underscore).
    "DllMain",
    "DllEntryPoint",
    "DllMainCRTStartup",
];

/// `llvm::sys::path::filename` on a POSIX host: the part after the last `/`.
fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// lld's "drop the file extension": everything before the last `.`, or the
/// whole name if there is none.
fn drop_extension(name: &str) -> &str {
    match name.rfind('.') {
        Some(i) => &name[..i],
        None => name,
    }
}

impl AutoExporter {
    /// Creates the filter.
    ///
    /// * `exclude_symbols`: names from `--exclude-symbols=a,b` and from
    ///   `-exclude-symbols:` directives in object files, already split at
    ///   commas (x86-64 needs no mangling).
    /// * `exclude_libs`: extra archives to exclude, GNU ld
    ///   `--exclude-libs` style (`libfoo.a`, `libfoo`, or a path); `ALL`
    ///   excludes every archive. lld 22's MinGW driver has no such option,
    ///   so pass `&[]` for lld parity.
    /// * `exclude_all_symbols`: `--exclude-all-symbols`; only consulted by
    ///   [`AutoExporter::enabled`].
    pub fn new(exclude_symbols: &[String], exclude_libs: &[String], exclude_all_symbols: bool) -> AutoExporter {
        let mut libs: BTreeSet<String> = EXCLUDE_LIBS.iter().map(|s| s.to_string()).collect();
        let mut exclude_all_libs = false;
        for l in exclude_libs {
            if l == "ALL" {
                exclude_all_libs = true;
            } else {
                libs.insert(drop_extension(file_name(l)).to_string());
            }
        }
        AutoExporter { exclude_symbols: exclude_symbols.iter().cloned().collect(), exclude_libs: libs, exclude_all_libs, exclude_all_symbols }
    }

    /// lld's `maybeExportMinGWSymbols` gate: auto-export runs if
    /// `--export-all-symbols` is given, or if the output is a DLL, nothing
    /// was explicitly exported (`dllexport` directives, `.def` exports,
    /// `/export`) and `--exclude-all-symbols` was not given.
    pub fn enabled(&self, is_dll: bool, export_all_symbols: bool, had_explicit_exports: bool) -> bool {
        export_all_symbols || (is_dll && !had_explicit_exports && !self.exclude_all_symbols)
    }

    /// `--whole-archive` exception (lld's `addWholeArchive`): members of an
    /// archive given under `--whole-archive` are exported even if the
    /// archive is on the built-in exclusion list.
    pub fn add_whole_archive(&mut self, path: &str) {
        self.exclude_libs.remove(drop_extension(file_name(path)));
    }

    #[cfg(test)]
    /// Name and file rules for one defined symbol.
    ///
    /// `file` names where the symbol comes from: the archive (`libgcc.a`,
    /// `/usr/lib/libmingwex.a`), an archive member as `libfoo.a(bar.o)`,
    /// or a plain object file (`crt2.o`, `dir/dllcrt2.o`). A name ending in
    /// `.a` or `.lib` (or of the `archive(member)` form) is taken as an
    /// archive; anything else as an object file. Use
    /// [`AutoExporter::should_export_from`] to pass the two parts
    /// separately.
    pub fn should_export(&self, name: &str, file: &str) -> bool {
        if let Some(open) = file.find('(') {
            if file.ends_with(')') {
                let archive = &file[..open];
                let member = &file[open + 1..file.len() - 1];
                return self.should_export_from(name, Some(archive), member);
            }
        }
        if file.ends_with(".a") || file.ends_with(".lib") {
            self.should_export_from(name, Some(file), "")
        } else {
            self.should_export_from(name, None, file)
        }
    }

    /// Like [`AutoExporter::should_export`] with the archive path (lld's
    /// `parentName`; `None` or empty for a plain object file) and the object
    /// file path given separately. As in lld, a symbol from an archive is
    /// judged by the archive's name only, one from a plain object by the
    /// object's file name only.
    pub fn should_export_from(&self, name: &str, archive: Option<&str>, object: &str) -> bool {
        if EXCLUDE_SYMBOLS.contains(&name) || self.exclude_symbols.contains(name) {
            return false;
        }
        if EXCLUDE_PREFIXES.iter().any(|p| name.starts_with(p)) {
            return false;
        }
        if EXCLUDE_SUFFIXES.iter().any(|s| name.ends_with(s)) {
            return false;
        }
        let lib = drop_extension(file_name(archive.unwrap_or("")));
        if !lib.is_empty() {
            return !self.exclude_all_libs && !self.exclude_libs.contains(lib);
        }
        !EXCLUDE_OBJECTS.contains(&file_name(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ex(name: &str, ord: Option<u16>) -> Export {
        Export { name: name.into(), ordinal: ord, rva: 0x1000, ..Default::default() }
    }

    #[test]
    fn ordinals_sorted_and_after_max_explicit() {
        let mut v = vec![ex("zeta", None), ex("alpha", None), ex("mid", Some(5)), ex("beta", None)];
        assign_ordinals(&mut v).unwrap();
        let got: Vec<_> = v.iter().map(|e| (e.name.as_str(), e.ordinal.unwrap())).collect();
        assert_eq!(got, [("alpha", 6), ("beta", 7), ("mid", 5), ("zeta", 8)]);
    }

    #[test]
    fn ordinals_plain() {
        let mut v = vec![ex("foo", None), ex("bar", None), ex("var", None), ex("zeta_str", None)];
        assign_ordinals(&mut v).unwrap();
        let got: Vec<_> = v.iter().map(|e| (e.name.as_str(), e.ordinal.unwrap())).collect();
        assert_eq!(got, [("bar", 1), ("foo", 2), ("var", 3), ("zeta_str", 4)]);
    }

    #[test]
    fn duplicate_ordinal_is_error_naming_later_export() {
        let mut v = vec![ex("a", Some(3)), ex("b", Some(3))];
        assert_eq!(assign_ordinals(&mut v).unwrap_err(), "duplicate export ordinal: b");
        // Checked before deduplication, as lld does.
        let mut v = vec![ex("a", Some(3)), ex("a", Some(3))];
        assert_eq!(assign_ordinals(&mut v).unwrap_err(), "duplicate export ordinal: a");
    }

    #[test]
    fn dedupe_keeps_first() {
        let mut a = ex("f", None);
        a.rva = 1;
        let mut b = ex("f", None);
        b.rva = 2;
        b.data = true;
        let mut v = vec![a.clone(), b];
        assign_ordinals(&mut v).unwrap();
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].rva, 1);
        assert!(!v[0].data);
    }

    #[test]
    fn too_many() {
        let mut v = vec![ex("a", Some(65535)), ex("b", None)];
        assert_eq!(assign_ordinals(&mut v).unwrap_err(), "too many exported symbols (got 65536, max 65535)");
    }

    /// The export directory ld.lld-22 wrote for x.dll (`-export:foo
    /// -export:bar -export:var,data -export:zeta_str,data`), placed at RVA
    /// 0x35a0.
    #[test]
    fn matches_lld_x_dll() {
        let mut v = vec![
            Export { name: "foo".into(), rva: 0x1370, ..Default::default() },
            Export { name: "bar".into(), rva: 0x1380, ..Default::default() },
            Export { name: "var".into(), rva: 0x5010, data: true, ..Default::default() },
            Export { name: "zeta_str".into(), rva: 0x5018, data: true, ..Default::default() },
        ];
        assign_ordinals(&mut v).unwrap();
        let want: &[u8] = &[
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xc8, 0x35, 0x00, 0x00, //
            0x01, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0xce, 0x35, 0x00, 0x00, //
            0xde, 0x35, 0x00, 0x00, 0xee, 0x35, 0x00, 0x00, b'x', b'.', b'd', b'l', b'l', 0x00, 0x80, 0x13, //
            0x00, 0x00, 0x70, 0x13, 0x00, 0x00, 0x10, 0x50, 0x00, 0x00, 0x18, 0x50, 0x00, 0x00, 0xf6, 0x35, //
            0x00, 0x00, 0xfa, 0x35, 0x00, 0x00, 0xfe, 0x35, 0x00, 0x00, 0x02, 0x36, 0x00, 0x00, 0x00, 0x00, //
            0x01, 0x00, 0x02, 0x00, 0x03, 0x00, b'b', b'a', b'r', 0x00, b'f', b'o', b'o', 0x00, b'v', b'a', //
            b'r', 0x00, b'z', b'e', b't', b'a', b'_', b's', b't', b'r', 0x00,
        ];
        assert_eq!(edata_size("x.dll", &v), 0x6b);
        assert_eq!(write_edata("x.dll", &v, 0x35a0), want);
    }

    #[test]
    fn empty_edata() {
        assert_eq!(edata_size("a.dll", &[]), 0);
        assert!(write_edata("a.dll", &[], 0x1000).is_empty());
    }

    #[test]
    fn size_matches_len_with_forwards_and_noname() {
        let mut v = vec![
            Export { name: "b".into(), ordinal: Some(7), noname: true, rva: 0x2000, ..Default::default() },
            Export { name: "a".into(), forward: Some("kernel32.Sleep".into()), ..Default::default() },
            Export { name: "c".into(), private: true, rva: 0x3000, ..Default::default() },
        ];
        assign_ordinals(&mut v).unwrap();
        let d = write_edata("lib.dll", &v, 0x4000);
        assert_eq!(d.len() as u32, edata_size("lib.dll", &v));
        // Base 7, ordinals a=8, b=7, c=9 → three slots, two names.
        assert_eq!(u32::from_le_bytes(d[16..20].try_into().unwrap()), 7);
        assert_eq!(u32::from_le_bytes(d[20..24].try_into().unwrap()), 3);
        assert_eq!(u32::from_le_bytes(d[24..28].try_into().unwrap()), 2);
    }

    fn u16_at(b: &[u8], off: usize) -> u16 {
        u16::from_le_bytes([b[off], b[off + 1]])
    }
    fn u32_at(b: &[u8], off: usize) -> u32 {
        u32::from_le_bytes(b[off..off + 4].try_into().unwrap())
    }

    /// Links a DLL with ld.lld-22 from an object plus a `.def` file with
    /// explicit ordinals, NONAME, PRIVATE, DATA and a forwarder, then
    /// rebuilds the export directory from the same spec (RVAs of the
    /// non-forwarded symbols taken from lld's address table) and compares
    /// bytes. Needs clang-22 and ld.lld-22 on PATH (always installed in CI).
    #[test]
    fn matches_lld_def_file_exports() {
        let dir = std::env::temp_dir().join(format!("dtld-edata-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("e.c"),
            "int alpha(void){return 1;} int beta(void){return 2;} int gamma_(void){return 3;}\n\
             int delta(void){return 4;} int dv = 5; int zed(void){return 6;}\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("e.def"),
            "LIBRARY lib-e.dll\nEXPORTS\n  zed\n  alpha @10\n  beta @3 NONAME\n  gamma_\n  \
             delta PRIVATE\n  dv DATA\n  fwd = kernel32.Sleep\n",
        )
        .unwrap();
        let run = |args: &[&str]| {
            let st = std::process::Command::new(args[0])
                .args(&args[1..])
                .current_dir(&dir)
                .status()
                .unwrap_or_else(|e| panic!("{} must be installed: {e}", args[0]));
            assert!(st.success(), "{args:?} failed");
        };
        run(&["clang-22", "--target=x86_64-w64-mingw32", "-c", "e.c", "-o", "e.o"]);
        run(&["ld.lld-22", "-m", "i386pep", "--shared", "--entry=", "-o", "lib-e.dll", "e.o", "e.def"]);
        let img = std::fs::read(dir.join("lib-e.dll")).unwrap();
        let _ = std::fs::remove_dir_all(&dir);

        let pe = u32_at(&img, 0x3c) as usize;
        let nsec = u16_at(&img, pe + 6) as usize;
        let opt = pe + 24;
        let shdrs = opt + u16_at(&img, pe + 20) as usize;
        let exp_rva = u32_at(&img, opt + 112);
        let exp_size = u32_at(&img, opt + 116) as usize;
        let to_off = |rva: u32| -> usize {
            for i in 0..nsec {
                let sh = shdrs + i * 40;
                let va = u32_at(&img, sh + 12);
                let vs = u32_at(&img, sh + 8);
                if rva >= va && rva < va + vs {
                    return (rva - va + u32_at(&img, sh + 20)) as usize;
                }
            }
            panic!("rva {rva:#x} not mapped");
        };
        let lld = &img[to_off(exp_rva)..to_off(exp_rva) + exp_size];
        let base = u32_at(lld, 16);
        let eat = to_off(u32_at(lld, 28));
        let rva_of = |ord: u32| u32_at(&img, eat + ((ord - base) * 4) as usize);

        // (name, ordinal, noname, private, data, forward)
        type Spec<'a> = (&'a str, Option<u16>, bool, bool, bool, Option<&'a str>);
        let spec: &[Spec] = &[
            ("zed", None, false, false, false, None),
            ("alpha", Some(10), false, false, false, None),
            ("beta", Some(3), true, false, false, None),
            ("gamma_", None, false, false, false, None),
            ("delta", None, false, true, false, None),
            ("dv", None, false, false, true, None),
            ("fwd", None, false, false, false, Some("kernel32.Sleep")),
        ];
        let mut v: Vec<Export> = spec
            .iter()
            .map(|&(n, o, noname, private, data, fwd)| Export { name: n.into(), ordinal: o, rva: 0, forward: fwd.map(String::from), data, private, noname })
            .collect();
        assign_ordinals(&mut v).unwrap();
        for e in v.iter_mut() {
            if e.forward.is_none() {
                e.rva = rva_of(u32::from(e.ordinal.unwrap()));
                assert_ne!(e.rva, 0, "{} has no address in lld's table", e.name);
            }
        }
        let ours = write_edata("lib-e.dll", &v, exp_rva);
        assert_eq!(edata_size("lib-e.dll", &v) as usize, ours.len());
        assert_eq!(ours, lld);
    }

    fn ae() -> AutoExporter {
        AutoExporter::new(&["mine".to_string()], &[], false)
    }

    #[test]
    fn auto_export_symbol_rules() {
        let a = ae();
        for s in [
            "__imp_foo",
            "__IMPORT_DESCRIPTOR_x",
            "__nm_foo",
            "__rtti_x",
            "__builtin_x",
            ".refptr.foo",
            "__profc_f",
            "__profd_f",
            "__profvp_f",
            "_head_libfoo",
            "foo_iname",
            "x_NULL_THUNK_DATA",
            "__NULL_IMPORT_DESCRIPTOR",
            "_pei386_runtime_relocator",
            "do_pseudo_reloc",
            "impure_ptr",
            "_impure_ptr",
            "_fmode",
            "environ",
            "__dso_handle",
            "_load_config_used",
            "DllMain",
            "DllEntryPoint",
            "DllMainCRTStartup",
            "mine",
        ] {
            assert!(!a.should_export(s, "foo.o"), "{s} should be excluded");
        }
        // Verified exported by ld.lld-22 --export-all-symbols.
        for s in ["ok", "_DllMainCRTStartup", "__head_x", "__load_config_used", "__rtc_x", "_nm_x", "__chpe_metadata"] {
            assert!(a.should_export(s, "foo.o"), "{s} should be exported");
        }
    }

    #[test]
    fn auto_export_file_rules() {
        let a = ae();
        for lib in [
            "libgcc.a",
            "/usr/lib/gcc/x86_64-w64-mingw32/12/libgcc.a",
            "libclang_rt.builtins-x86_64.a",
            "libmingwex.a",
            "libwinpthread.a",
            "libflang_rt.runtime.a",
            "libc++.a",
            "libmsvcrt-os.a",
        ] {
            assert!(!a.should_export("f", lib), "{lib}");
        }
        assert!(!a.should_export("f", "libmingw32.a(crtexe.o)"));
        assert!(a.should_export("f", "libfoo.a"));
        assert!(a.should_export("f", "libFortranRuntime.a"));
        for o in ["crt2.o", "/x/dllcrt2.o", "crtbegin.o", "crtend.o", "gcrt2.o", "crt1u.o"] {
            assert!(!a.should_export("f", o), "{o}");
        }
        assert!(a.should_export("f", "crt3.o"));
        assert!(a.should_export("f", "main.o"));
        // An object inside a non-excluded archive is judged by the archive.
        assert!(a.should_export_from("f", Some("libfoo.a"), "crt2.o"));
        assert!(!a.should_export_from("f", Some("libgcc.a"), "main.o"));
    }

    #[test]
    fn auto_export_whole_archive_and_extra_libs() {
        let mut a = AutoExporter::new(&[], &["libbar.a".to_string()], false);
        assert!(!a.should_export("f", "libbar.a"));
        a.add_whole_archive("/path/libgcc.a");
        assert!(a.should_export("f", "libgcc.a"));
        let all = AutoExporter::new(&[], &["ALL".to_string()], false);
        assert!(!all.should_export("f", "libanything.a"));
        assert!(all.should_export("f", "plain.o"));
    }

    #[test]
    fn auto_export_gate() {
        let a = AutoExporter::new(&[], &[], false);
        assert!(a.enabled(true, false, false));
        assert!(!a.enabled(true, false, true));
        assert!(!a.enabled(false, false, false));
        assert!(a.enabled(false, true, true));
        let x = AutoExporter::new(&[], &[], true);
        assert!(!x.enabled(true, false, false));
        assert!(x.enabled(true, true, false));
    }
}
