//! Fixture discovery and the `//#Key: value` directive parser for the differential harness.
//! The directive vocabulary is specified in `fixtures/README.md`; keep the two in sync. Parsing
//! is strict: an unknown key, a malformed value or a missing source file is reported as a
//! failing test, so that a typo can never silently disable a check.

use std::fs;
use std::path::{Path, PathBuf};

use regex::Regex;

/// A link mode: how every object is compiled and what the link adds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Pie,
    NoPie,
    Static,
    StaticPie,
}

impl Mode {
    pub const ALL: [Mode; 4] = [Mode::Pie, Mode::NoPie, Mode::Static, Mode::StaticPie];

    pub fn name(self) -> &'static str {
        match self {
            Mode::Pie => "pie",
            Mode::NoPie => "nopie",
            Mode::Static => "static",
            Mode::StaticPie => "static-pie",
        }
    }

    fn parse(word: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.name() == word)
    }

    pub fn compile_flag(self) -> &'static str {
        match self {
            Mode::Pie | Mode::StaticPie => "-fPIE",
            Mode::NoPie | Mode::Static => "-fno-pic",
        }
    }

    pub fn link_flag(self) -> &'static str {
        match self {
            Mode::Pie => "-pie",
            Mode::NoPie => "-no-pie",
            Mode::Static => "-static",
            Mode::StaticPie => "-static-pie",
        }
    }

    pub fn is_static(self) -> bool {
        matches!(self, Mode::Static | Mode::StaticPie)
    }
}

/// The compiler driver that performs both links.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Driver {
    Clang,
    Gcc,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LibKind {
    /// `llvm-ar rcs`
    Archive,
    /// `llvm-ar rcsT` (GNU thin archive)
    Thin,
    /// `llvm-ar rcS` (no symbol index)
    NoIndex,
    /// `llvm-lib /out:` (PE only): a COFF archive with both linker members and a long-name
    /// table that ends names with NUL, as `lib.exe` writes it
    Lib,
}

impl LibKind {
    pub fn ar_flags(self) -> &'static str {
        match self {
            LibKind::Archive => "rcs",
            LibKind::Thin => "rcsT",
            LibKind::NoIndex => "rcS",
            LibKind::Lib => "",
        }
    }
}

/// A group of sources compiled with extra flags (an `Object`, the sources of an archive, or
/// the sources of a shared library).
#[derive(Clone, Debug)]
pub struct Sources {
    /// Absolute paths.
    pub files: Vec<PathBuf>,
    pub cflags: Vec<String>,
}

impl Sources {
    /// Whether any source is C++ (then the group's link is driven by the C++ driver).
    pub fn is_cxx(&self) -> bool {
        self.files.iter().any(|f| is_cxx(f))
    }
}

/// Whether a source is C++ by its extension (`.cc`, `.cpp`): it is compiled with `clang++-22`.
pub fn is_cxx(path: &Path) -> bool {
    matches!(path.extension().and_then(|e| e.to_str()), Some("cc" | "cpp"))
}

/// A shared library from `//#Shared:` or `//#Dlopen:`, built by each linker for its own side.
#[derive(Clone, Debug)]
pub struct SharedLib {
    /// The output file name (`libfoo.so`); also the default soname.
    pub name: String,
    pub sources: Sources,
    /// The words after `--`: extra arguments for the library's link (`$SRC` already expanded;
    /// `$DIR` and `$BUILD` are expanded per trial).
    pub link_args: Vec<String>,
    /// `Shared:` libraries go on the program's link line; `Dlopen:` ones are only built.
    pub linked: bool,
}

#[derive(Clone, Debug)]
pub struct Library {
    /// The output file name (`libfoo.a`, `libfoo.so`).
    pub name: String,
    pub sources: Sources,
    /// Whether the archive goes on the link line (false for PE `SearchArchive`s, which only
    /// `-l` search finds).
    pub linked: bool,
}

/// Which fixture tree a fixture comes from: `fixtures/elf/` (the ELF harness, `main.rs`) or
/// `fixtures/coff/` (the PE harness, `pe.rs`: programs for `x86_64-w64-mingw32`, run under
/// wine). The vocabulary differs a little: see `fixtures/README.md`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Elf,
    Pe,
    /// `fixtures/buildmodes/`: the multi-step flows of `tests/buildmodes/` (PGO generate → run
    /// → merge → use, source coverage), ELF programs without shared libraries.
    BuildModes,
}

/// A PE trial variant (`//#Variants:`): how the fixture's sources are compiled and linked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// Native objects.
    Native,
    /// Every source compiled with `-flto=thin`, both links with `-flto=thin` (in-process).
    Lto,
    /// Like `Lto`, but dtld's links add `-fthinlto-distributor=<distributor>`; lld's stay
    /// in-process (ld.lld-22's MinGW driver rejects `--thinlto-distributor`).
    Dtlto,
}

impl Variant {
    pub const ALL: [Variant; 3] = [Variant::Native, Variant::Lto, Variant::Dtlto];

    pub fn name(self) -> &'static str {
        match self {
            Variant::Native => "native",
            Variant::Lto => "lto",
            Variant::Dtlto => "dtlto",
        }
    }
}

/// Link-time optimization requested by `//#Lto:`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lto {
    Thin,
    Full,
}

impl Lto {
    pub fn name(self) -> &'static str {
        match self {
            Lto::Thin => "thin",
            Lto::Full => "full",
        }
    }

    /// The flag for both the compile of the program's sources and the link.
    pub fn flag(self) -> &'static str {
        match self {
            Lto::Thin => "-flto=thin",
            Lto::Full => "-flto=full",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Fixture {
    /// `<name>` for `fixtures/elf/<name>.c` or `fixtures/elf/<name>/main.c`.
    pub name: String,
    pub primary: PathBuf,
    pub modes: Vec<Mode>,
    pub drivers: Vec<Driver>,
    pub cflags: Vec<String>,
    /// `//#Lto:`: compile the primary, `Object` and archive sources to bitcode and link with
    /// the same `-flto=` flag.
    pub lto: Option<Lto>,
    pub objects: Vec<Sources>,
    pub archives: Vec<(LibKind, Library)>,
    /// `Shared:` and `Dlopen:` libraries, in directive order (a library may link against the
    /// ones before it).
    pub libraries: Vec<SharedLib>,
    /// `$SRC` expanded; `$DIR` and `$BUILD` are replaced per trial.
    pub link_args: Vec<String>,
    pub run_args: Vec<String>,
    pub stdin: Vec<u8>,
    pub env: Vec<(String, String)>,
    pub expect_error: Option<Regex>,
    /// `//#Open: <why>`: a known divergence from ld.lld-22 that dtld does not fix yet (a
    /// reproducer of the link fuzzer, issue 39). The trial passes while the fixture still
    /// fails, and fails once it passes, so that the directive is removed with the fix.
    pub open: Option<String>,
    pub diff_ignore: Vec<String>,
    /// PE fixtures: the variants to run (`//#Variants:`, default all three). Empty for ELF.
    pub variants: Vec<Variant>,
    /// `//#SectionSizes:` lines: sections whose sizes are compared between the two outputs.
    pub section_sizes: Vec<SectionSizes>,
    /// `//#Compiler: gcc`: the sources are compiled with gcc/g++ instead of clang-22.
    pub gcc_compile: bool,
    /// `//#SectionBytes:` sections whose contents must be byte for byte ld.lld's.
    pub section_bytes: Vec<String>,
    /// `//#Gdb:` commands, in order: both programs are run under gdb in batch mode with them.
    pub gdb: Vec<String>,
    /// `//#GdbExpect:` patterns both (normalised) gdb transcripts must match.
    pub gdb_expect: Vec<Regex>,
    /// `//#DwarfDump:` lines: `llvm-dwarfdump-22` arguments whose (normalised) dumps of the two
    /// outputs are compared.
    pub dwarf_dump: Vec<Vec<String>>,
    /// `//#Readelf:` lines: `llvm-readelf-22 --wide` options (`-l`, `-S`) whose outputs for the
    /// two programs must be equal: addresses, file offsets, load addresses, sizes and flags.
    pub readelf: Vec<Vec<String>>,
    /// `//#PdbDump:` lines (PE only): `llvm-pdbutil-22 dump` options whose dumps of the two
    /// programs' `prog.pdb` are compared.
    pub pdb_dump: Vec<Vec<String>>,
    /// `//#Scrub:` patterns replaced in both runs' output before they are compared.
    pub scrub: Vec<Regex>,
    /// `//#Flow:` (fixtures/buildmodes/ only): the multi-step flow the fixture runs.
    pub flow: Option<Flow>,
}

/// One `//#SectionSizes:` line: section names (or `prefix*` globs) and how far dtld's size of
/// each may be from ld.lld's.
#[derive(Clone, Debug)]
pub struct SectionSizes {
    pub patterns: Vec<String>,
    /// The allowed difference in per mille of ld.lld's size (`within=1%` is 10); 0 = exact.
    pub tolerance_permille: u64,
}

impl SectionSizes {
    /// Whether `name` is one of this line's sections.
    pub fn matches(&self, name: &str) -> bool {
        self.patterns.iter().any(|p| match p.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => name == p,
        })
    }
}

/// The flow of a `fixtures/buildmodes/` fixture (`//#Flow:`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// `-fprofile-instr-generate` → run → `llvm-profdata merge` → `-fprofile-instr-use=`.
    Pgo,
    /// `-fprofile-instr-generate -fcoverage-mapping` → run → merge → `llvm-cov report`.
    Coverage,
}

impl Flow {
    #[allow(dead_code)] // used by tests/buildmodes/, not by the differential harness
    pub fn name(self) -> &'static str {
        match self {
            Flow::Pgo => "pgo",
            Flow::Coverage => "coverage",
        }
    }
}

impl Fixture {
    /// Whether the program is C++ (any of its own sources is): it is linked with `clang++-22`
    /// (or `g++`).
    pub fn program_is_cxx(&self) -> bool {
        is_cxx(&self.primary) || self.objects.iter().any(Sources::is_cxx) || self.archives.iter().any(|(_, lib)| lib.sources.is_cxx())
    }
}

/// Finds every fixture under `dir` (sorted by name).
pub fn discover(dir: &Path) -> Result<Vec<(String, PathBuf)>, String> {
    let entries = fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut found = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| e.to_string())?;
        let path = entry.path();
        let file_name = entry.file_name().to_string_lossy().into_owned();
        if file_name.starts_with('.') {
            continue;
        }
        if path.is_dir() {
            let mains: Vec<PathBuf> = ["main.c", "main.cc"].iter().map(|m| path.join(m)).filter(|m| m.is_file()).collect();
            match mains.as_slice() {
                [] => {}
                [main] => found.push((file_name, main.clone())),
                _ => return Err(format!("{} has both main.c and main.cc", path.display())),
            }
        } else if let Some(stem) = file_name.strip_suffix(".c").or_else(|| file_name.strip_suffix(".cc")) {
            found.push((stem.to_string(), path));
        }
    }
    found.sort();
    Ok(found)
}

/// Every directive key, for the "unknown key" message.
const KEYS: &[&str] = &[
    "Modes",
    "Drivers",
    "CFlags",
    "Lto",
    "Object",
    "Archive",
    "ThinArchive",
    "NoIndexArchive",
    "Shared",
    "Dlopen",
    "LinkArgs",
    "RunArgs",
    "Stdin",
    "Env",
    "ExpectError",
    "Open",
    "DiffIgnore",
    "SectionSizes",
    "SectionBytes",
    "Compiler",
    "Gdb",
    "GdbExpect",
    "DwarfDump",
    "Readelf",
    "Scrub",
];

/// Parses the directives of one fixture. `known_keys` are the fingerprint keys that
/// `DiffIgnore` may name.
pub fn parse(name: &str, primary: &Path, known_keys: &[&str]) -> Result<Fixture, String> {
    parse_for(Target::Elf, name, primary, known_keys)
}

/// Directive keys that PE fixtures do not take (they have no link modes and no gcc driver, and
/// every PE fixture runs with and without ThinLTO through `Variants`; the debug-build and
/// output-scrubbing comparisons are ELF-only).
const ELF_ONLY_KEYS: &[&str] =
    &["Modes", "Drivers", "Lto", "SectionSizes", "SectionBytes", "Compiler", "Gdb", "GdbExpect", "DwarfDump", "Readelf", "Scrub", "Open"];
/// Directive keys only PE fixtures take.
const PE_ONLY_KEYS: &[&str] = &["Variants", "SearchArchive", "LibArchive", "PdbDump"];
/// Directive keys only `fixtures/buildmodes/` fixtures take.
const BUILDMODES_ONLY_KEYS: &[&str] = &["Flow"];
/// Directive keys `fixtures/buildmodes/` fixtures do not take: their flows link programs only,
/// with the clang driver and native objects, and compare what the profile tools report.
const NOT_BUILDMODES_KEYS: &[&str] = &[
    "Open",
    "Drivers",
    "Compiler",
    "SectionBytes",
    "Lto",
    "Shared",
    "Dlopen",
    "ExpectError",
    "Gdb",
    "GdbExpect",
    "DwarfDump",
    "Scrub",
    "Variants",
    "SearchArchive",
    "LibArchive",
    "ThinArchive",
    "NoIndexArchive",
];

/// Parses the directives of one fixture of `target`'s tree.
pub fn parse_for(target: Target, name: &str, primary: &Path, known_keys: &[&str]) -> Result<Fixture, String> {
    let text = fs::read_to_string(primary).map_err(|e| format!("cannot read {}: {e}", primary.display()))?;
    let src_dir = primary.parent().expect("fixture file has a parent").to_path_buf();
    let mut fx = Fixture {
        name: name.to_string(),
        primary: primary.to_path_buf(),
        modes: Mode::ALL.to_vec(),
        drivers: vec![Driver::Clang],
        cflags: Vec::new(),
        lto: None,
        objects: Vec::new(),
        archives: Vec::new(),
        libraries: Vec::new(),
        link_args: Vec::new(),
        run_args: Vec::new(),
        stdin: Vec::new(),
        env: Vec::new(),
        expect_error: None,
        open: None,
        diff_ignore: Vec::new(),
        variants: match target {
            Target::Elf | Target::BuildModes => Vec::new(),
            Target::Pe => Variant::ALL.to_vec(),
        },
        section_sizes: Vec::new(),
        section_bytes: Vec::new(),
        gcc_compile: false,
        gdb: Vec::new(),
        gdb_expect: Vec::new(),
        dwarf_dump: Vec::new(),
        readelf: Vec::new(),
        pdb_dump: Vec::new(),
        scrub: Vec::new(),
        flow: None,
    };
    let mut modes_given = false;
    for (lineno, line) in text.lines().enumerate() {
        let Some(rest) = line.trim_start().strip_prefix("//#") else {
            continue;
        };
        let at = |msg: String| format!("{}:{}: {msg}", primary.display(), lineno + 1);
        let (key, value) = rest.split_once(':').ok_or_else(|| at(format!("directive `//#{rest}` has no `Key:`")))?;
        let (key, value) = (key.trim(), value.trim());
        key_allowed(target, key).map_err(&at)?;
        modes_given |= key == "Modes";
        if !build_directive(&mut fx, target, &src_dir, key, value).map_err(&at)? && !check_directive(&mut fx, key, value, known_keys).map_err(&at)? {
            return Err(at(unknown_key(target, key)));
        }
    }
    validate(&mut fx, target, modes_given).map_err(|e| format!("{}: {e}", primary.display()))?;
    Ok(fx)
}

/// Refuses a directive the fixture's target does not use.
fn key_allowed(target: Target, key: &str) -> Result<(), String> {
    if target == Target::Pe && ELF_ONLY_KEYS.contains(&key) {
        return Err(format!(
            "`{key}` is not used by PE fixtures (fixtures/coff/ has no link modes, gcc \
             driver or debug-build comparisons; ThinLTO runs as the `lto` and `dtlto` \
             variants, see `Variants`)"
        ));
    }
    if target != Target::Pe && PE_ONLY_KEYS.contains(&key) {
        return Err(format!("`{key}` is only used by PE fixtures (fixtures/coff/)"));
    }
    if target != Target::BuildModes && BUILDMODES_ONLY_KEYS.contains(&key) {
        return Err(format!("`{key}` is only used by fixtures/buildmodes/ (tests/buildmodes/)"));
    }
    if target == Target::BuildModes && NOT_BUILDMODES_KEYS.contains(&key) {
        return Err(format!(
            "`{key}` is not used by fixtures/buildmodes/ (their flows link one program per \
             linker with the clang driver and native objects)"
        ));
    }
    Ok(())
}

/// The error for a directive key nobody knows, listing the keys the target knows.
fn unknown_key(target: Target, key: &str) -> String {
    let known: Vec<&str> = KEYS
        .iter()
        .chain(PE_ONLY_KEYS)
        .chain(BUILDMODES_ONLY_KEYS)
        .copied()
        .filter(|k| match target {
            Target::Elf => !PE_ONLY_KEYS.contains(k) && !BUILDMODES_ONLY_KEYS.contains(k),
            Target::Pe => !ELF_ONLY_KEYS.contains(k) && !BUILDMODES_ONLY_KEYS.contains(k),
            Target::BuildModes => !NOT_BUILDMODES_KEYS.contains(k),
        })
        .collect();
    format!("unknown directive key `{key}`; known keys: {}", known.join(", "))
}

/// Applies a directive that says how the fixture is built, linked and run; false if `key` is
/// not one of them.
fn build_directive(fx: &mut Fixture, target: Target, src_dir: &Path, key: &str, value: &str) -> Result<bool, String> {
    let src_text = src_dir.to_string_lossy().into_owned();
    let expand = |words: Vec<String>| -> Vec<String> { words.into_iter().map(|w| w.replace("$SRC", &src_text)).collect() };
    match key {
        "Variants" => {
            fx.variants.clear();
            for w in split(value)? {
                let v = Variant::ALL.into_iter().find(|v| v.name() == w).ok_or_else(|| format!("unknown variant `{w}` (expected native, lto, dtlto)"))?;
                if !fx.variants.contains(&v) {
                    fx.variants.push(v);
                }
            }
            if fx.variants.is_empty() {
                return Err("`Variants:` lists no variant".into());
            }
        }
        "Modes" => {
            fx.modes.clear();
            for w in split(value)? {
                let mode = Mode::parse(&w).ok_or_else(|| format!("unknown mode `{w}` (expected pie, nopie, static, static-pie)"))?;
                if !fx.modes.contains(&mode) {
                    fx.modes.push(mode);
                }
            }
            if fx.modes.is_empty() {
                return Err("`Modes:` lists no mode".into());
            }
        }
        "Compiler" => match value {
            "gcc" => fx.gcc_compile = true,
            "clang" => fx.gcc_compile = false,
            _ => return Err(format!("expected `Compiler: gcc` or `Compiler: clang`, got `{value}`")),
        },
        "Drivers" => {
            fx.drivers.clear();
            for w in split(value)? {
                let driver = match w.as_str() {
                    "clang" => Driver::Clang,
                    "gcc" => Driver::Gcc,
                    _ => return Err(format!("unknown driver `{w}` (expected clang, gcc)")),
                };
                if !fx.drivers.contains(&driver) {
                    fx.drivers.push(driver);
                }
            }
            if fx.drivers.is_empty() {
                return Err("`Drivers:` lists no driver".into());
            }
        }
        "CFlags" => fx.cflags.extend(expand(split(value)?)),
        "Lto" => {
            if fx.lto.is_some() {
                return Err("more than one `Lto`".into());
            }
            fx.lto = Some(match split(value)?.as_slice() {
                [w] if w == "thin" => Lto::Thin,
                [w] if w == "full" => Lto::Full,
                _ => return Err(format!("expected `Lto: thin` or `Lto: full`, got `{value}`")),
            });
        }
        "Object" => fx.objects.push(sources(src_dir, expand(split(value)?))?),
        "Shared" | "Dlopen" => {
            let (lib, rest) = value.split_once(':').ok_or_else(|| format!("expected `{key}: libname.so: sources... [cflags...] [-- link args...]`"))?;
            let lib = lib.trim().to_string();
            let bad = match target {
                Target::Elf | Target::BuildModes => !lib.contains(".so"),
                Target::Pe => !lib.ends_with(".dll") || lib.len() <= 4,
            };
            if lib.is_empty() || lib.contains('/') || bad {
                return Err(format!(
                    "bad shared library name `{lib}` (expected a file name like {})",
                    match target {
                        Target::Elf | Target::BuildModes => "libfoo.so",
                        Target::Pe => "foo.dll",
                    }
                ));
            }
            if fx.libraries.iter().any(|l| l.name == lib) {
                return Err(format!("library `{lib}` is defined twice"));
            }
            let mut words = expand(split(rest)?);
            let link_args = match words.iter().position(|w| w == "--") {
                Some(p) => {
                    let tail = words.split_off(p);
                    tail[1..].to_vec()
                }
                None => Vec::new(),
            };
            fx.libraries.push(SharedLib { name: lib, sources: sources(src_dir, words)?, link_args, linked: key == "Shared" });
        }
        "Archive" | "ThinArchive" | "NoIndexArchive" | "SearchArchive" | "LibArchive" => {
            let (lib, rest) = value.split_once(':').ok_or_else(|| format!("expected `{key}: libname: sources...`"))?;
            let lib = lib.trim().to_string();
            if lib.is_empty() || lib.contains('/') {
                return Err(format!("bad library name `{lib}`"));
            }
            let library = Library { name: lib, sources: sources(src_dir, expand(split(rest)?))?, linked: key != "SearchArchive" };
            let kind = match key {
                "Archive" | "SearchArchive" => LibKind::Archive,
                "ThinArchive" => LibKind::Thin,
                "LibArchive" => LibKind::Lib,
                _ => LibKind::NoIndex,
            };
            fx.archives.push((kind, library));
        }
        "LinkArgs" => fx.link_args.extend(expand(split(value)?)),
        "RunArgs" => fx.run_args.extend(split(value)?),
        "Stdin" => fx.stdin.extend(unescape(value)?),
        "Env" => {
            let (k, v) = value.split_once('=').ok_or_else(|| format!("expected `Env: KEY=VALUE`, got `{value}`"))?;
            fx.env.push((k.trim().to_string(), v.to_string()));
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// Applies a directive that says what is expected or compared; false if `key` is not one of
/// them.
fn check_directive(fx: &mut Fixture, key: &str, value: &str, known_keys: &[&str]) -> Result<bool, String> {
    match key {
        "Open" => {
            if value.trim().is_empty() {
                return Err("`Open` needs a reason (what dtld does differently)".into());
            }
            fx.open = Some(value.trim().to_string());
        }
        "ExpectError" => {
            if fx.expect_error.is_some() {
                return Err("more than one `ExpectError`".into());
            }
            let re = Regex::new(value).map_err(|e| format!("bad ExpectError regex: {e}"))?;
            fx.expect_error = Some(re);
        }
        "DiffIgnore" => {
            // The first word is the key; the rest is the (recommended) reason. A library's
            // keys (`lib:<name>:<key>`) are checked once every library is known.
            let key = value.split_whitespace().next().unwrap_or("");
            let plain = match key.strip_prefix("lib:") {
                Some(rest) => match rest.split_once(':') {
                    Some((_, k)) => k,
                    None => return Err(format!("`DiffIgnore: {key}`: expected `lib:<library>:<key>`")),
                },
                None => key,
            };
            if !is_known_key(plain, known_keys) {
                return Err(format!("`DiffIgnore: {key}` names no fingerprint key; known keys: {}", known_keys.join(", ")));
            }
            fx.diff_ignore.push(key.to_string());
        }
        "SectionBytes" => {
            let names = split(value)?;
            if names.is_empty() || names.iter().any(|w| !w.starts_with('.') || w.contains('*')) {
                return Err(format!("expected `SectionBytes: .name ...` (section names), got `{value}`"));
            }
            fx.section_bytes.extend(names);
        }
        "SectionSizes" => {
            let mut line = SectionSizes { patterns: Vec::new(), tolerance_permille: 0 };
            for w in split(value)? {
                if let Some(t) = w.strip_prefix("within=") {
                    line.tolerance_permille = parse_permille(t).ok_or_else(|| format!("bad tolerance `{w}` (expected `within=N%` or `within=N.N%`)"))?;
                } else if w.starts_with('.') || w.starts_with('_') || w.ends_with('*') {
                    if w[..w.len() - usize::from(w.ends_with('*'))].contains('*') {
                        return Err(format!("bad section pattern `{w}` (`*` only at the end)"));
                    }
                    line.patterns.push(w);
                } else {
                    return Err(format!(
                        "`{w}` is neither a section name (`.text`, `.debug_*`) nor \
                         `within=N%`"
                    ));
                }
            }
            if line.patterns.is_empty() {
                return Err("`SectionSizes:` names no section".into());
            }
            fx.section_sizes.push(line);
        }
        "Gdb" => {
            if value.is_empty() {
                return Err("empty `Gdb:` command".into());
            }
            fx.gdb.push(value.to_string());
        }
        "GdbExpect" => {
            let re = Regex::new(&format!("(?m){value}")).map_err(|e| format!("bad GdbExpect regex: {e}"))?;
            fx.gdb_expect.push(re);
        }
        "PdbDump" => {
            let args = split(value)?;
            if args.is_empty() || args.iter().any(|a| !a.starts_with('-')) {
                return Err(format!(
                    "expected `PdbDump: -publics [-section-map ...]` (llvm-pdbutil dump \
                     options), got `{value}`"
                ));
            }
            fx.pdb_dump.push(args);
        }
        "DwarfDump" => {
            let args = split(value)?;
            if args.is_empty() || args.iter().any(|a| !a.starts_with("--")) {
                return Err(format!(
                    "expected `DwarfDump: --debug-info [--debug-line ...]` (llvm-dwarfdump \
                     options), got `{value}`"
                ));
            }
            fx.dwarf_dump.push(args);
        }
        "Readelf" => {
            let args = split(value)?;
            if args.is_empty() || args.iter().any(|a| !matches!(a.as_str(), "-l" | "-S" | "-lS" | "-Sl" | "-s" | "-d" | "-r" | "-n")) {
                return Err(format!("expected `Readelf: -l [-S ...]` (llvm-readelf options -l, -S, -s, -d, -r, -n), got `{value}`"));
            }
            fx.readelf.push(args);
        }
        "Scrub" => {
            let re = Regex::new(value).map_err(|e| format!("bad Scrub regex: {e}"))?;
            if re.is_match("") {
                return Err(format!("`Scrub: {value}` matches the empty string"));
            }
            fx.scrub.push(re);
        }
        "Flow" => {
            if fx.flow.is_some() {
                return Err("more than one `Flow`".into());
            }
            fx.flow = Some(match value {
                "pgo" => Flow::Pgo,
                "coverage" => Flow::Coverage,
                _ => return Err(format!("unknown flow `{value}` (expected pgo, coverage)")),
            });
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// The checks that need the whole fixture (directives that only make sense together).
fn validate(fx: &mut Fixture, target: Target, modes_given: bool) -> Result<(), String> {
    if !fx.gdb_expect.is_empty() && fx.gdb.is_empty() {
        return Err("`GdbExpect` without `Gdb` commands".to_string());
    }
    if !fx.gdb.is_empty() && fx.gdb_expect.is_empty() {
        // A transcript that is equal because gdb saw nothing on either side proves nothing.
        return Err("`Gdb` needs at least one `GdbExpect` (what the debugger must see)".to_string());
    }
    if target == Target::BuildModes && fx.flow.is_none() {
        return Err("fixtures/buildmodes/ fixtures need `Flow: pgo` or `Flow: coverage`".to_string());
    }
    if fx.lto.is_some() && fx.drivers.contains(&Driver::Gcc) {
        // gcc would hand LLVM bitcode to GCC's own LTO plugin (liblto_plugin.so).
        return Err("`Lto` fixtures can only use the clang driver, not gcc".to_string());
    }
    for key in &fx.diff_ignore {
        if let Some((lib, _)) = key.strip_prefix("lib:").and_then(|r| r.split_once(':')) {
            if !fx.libraries.iter().any(|l| l.name == lib) {
                return Err(format!("`DiffIgnore: {key}` names no `Shared`/`Dlopen` library of the fixture"));
            }
        }
    }
    if !fx.libraries.is_empty() && target != Target::Pe {
        if modes_given {
            if let Some(m) = fx.modes.iter().find(|m| m.is_static()) {
                return Err(format!("`Shared`/`Dlopen` libraries cannot be used in mode `{}`", m.name()));
            }
        } else {
            fx.modes.retain(|m| !m.is_static());
        }
    }
    Ok(())
}

/// `1%` → 10, `0.5%` → 5, `0` → 0 (per mille of the reference size).
fn parse_permille(text: &str) -> Option<u64> {
    if text == "0" {
        return Some(0);
    }
    let number = text.strip_suffix('%')?;
    let (whole, frac) = number.split_once('.').unwrap_or((number, "0"));
    if whole.is_empty() || frac.len() != 1 {
        return None;
    }
    Some(whole.parse::<u64>().ok()? * 10 + frac.parse::<u64>().ok()?)
}

fn is_known_key(key: &str, known_keys: &[&str]) -> bool {
    match key.strip_suffix(".*") {
        Some(prefix) => known_keys.iter().any(|k| k.starts_with(&format!("{prefix}."))),
        None => known_keys.contains(&key),
    }
}

fn split(text: &str) -> Result<Vec<String>, String> {
    dtld_tests::split_words(text)
}

/// Splits `a.c b.c -DX` into source files (resolved against the fixture directory) and flags.
fn sources(dir: &Path, words: Vec<String>) -> Result<Sources, String> {
    let mut files = Vec::new();
    let mut cflags = Vec::new();
    for w in words {
        if w.starts_with('-') {
            cflags.push(w);
        } else {
            let path = dir.join(&w);
            if !path.is_file() {
                return Err(format!("source `{w}` not found (looked for {})", path.display()));
            }
            if ![".c", ".s", ".S", ".cc", ".cpp", ".rc"].iter().any(|e| w.ends_with(e)) {
                return Err(format!("source `{w}` must be .c, .cc, .cpp, .s, .S or .rc (PE resource script)"));
            }
            files.push(path);
        }
    }
    if files.is_empty() {
        return Err("no source files given".into());
    }
    Ok(Sources { files, cflags })
}

/// Expands `\n`, `\t`, `\r`, `\0` and `\\` in a `Stdin:` value.
fn unescape(text: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            let mut buf = [0; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            continue;
        }
        match chars.next() {
            Some('n') => out.push(b'\n'),
            Some('t') => out.push(b'\t'),
            Some('r') => out.push(b'\r'),
            Some('0') => out.push(0),
            Some('\\') => out.push(b'\\'),
            other => return Err(format!("unknown escape `\\{}` in Stdin", other.map(String::from).unwrap_or_default())),
        }
    }
    Ok(out)
}
