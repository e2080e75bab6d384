//! Why this exists: a linker is handed corrupt files in real life (truncated downloads, stale
//! archives, other tools' bugs). This test makes sure dtld turns every such input into a clean
//! diagnostic instead of a crash, a hang, a Rust panic or a half-written output. It compiles a
//! few small C programs with clang-22 into objects, a regular archive and a thin archive, then
//! links 10,000 deterministic corruptions of them (see `mutate.rs`) and checks for each:
//!
//! * the linker was not killed by a signal and did not run past the timeout;
//! * its exit code is 0 or 1;
//! * on exit 1, stderr contains the error prefix (`dtld: error:`) and no panic message, and
//!   the output directory is empty (no output file, no temporary files left behind);
//! * on exit 0, the output directory holds exactly the output file.
//!
//! COFF inputs (the MinGW flavour, `-m i386pep`) get their own corpus: COFF objects compiled
//! with `clang-22 --target=x86_64-w64-mingw32`, an archive of COFF members, import libraries
//! with short import members (`llvm-dlltool-22`) and with GNU dlltool's long-form import
//! members (`x86_64-w64-mingw32-dlltool`), linked directly, through the link line clang would
//! run for a MinGW program (CRT, mingw-w64 libraries) and through clang itself
//! (`--target=x86_64-w64-mingw32 -fuse-ld=<dtld>`). COFF variants are numbered from 100000
//! (`MUTATION_COFF_COUNT`, default 2000) so that the ELF variants keep their numbers.
//!
//! Real-program members (issue 18): variants from 200000 (`MUTATION_REAL_COUNT`, default 2000)
//! corrupt a GNU `ar` archive of members of the system's static libraries, bzip2 (libbz2.a),
//! OpenSSL's SHA-256 in C and perlasm assembly (libcrypto.a) and GCC's libstdc++, linked with
//! clang's link line against libc, libcrypto and libstdc++; variants from 300000
//! (`MUTATION_COFF_REAL_COUNT`, default 1000) do the same with mingw-w64's libmingwex.a members
//! (printf's pformat, getopt, strtof, basename, dirent) and clang's MinGW link line.
//!
//! Knobs (environment): `DTLD` (linker under test, else target/release/dtld),
//! `DTLD_ERROR_PREFIX` (default `dtld: error:`; `ld.lld: error:` to self-test with lld),
//! `MUTATION_SEED`, `MUTATION_COUNT` (default 5000), `MUTATION_ONLY=i,j,...` (run only these
//! variant indexes), `MUTATION_KEEP=1` (keep every variant's directory), `MUTATION_THREADS`
//! (default 2), `MUTATION_TIMEOUT_SECS` (default 5), `MUTATION_SKIP=libc,driver,...` (skip
//! scenarios by name; `coff` skips every COFF scenario), `MUTATION_COFF_COUNT` (default 2000),
//! `MUTATION_REAL_COUNT` (default 2000), `MUTATION_COFF_REAL_COUNT` (default 1000),
//! `MUTATION_VERBOSE=1` (print every variant's mutation and verdict).

mod layout;
mod mutate;

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use dtld_tests::{command_line, find_dtld, run_in_group, run_tool_ok, target_dir, Outcome, CLANG, LLVM_AR};
use layout::Layout;
use mutate::{mutate, Rng};

const DEFAULT_SEED: u64 = 0xd71d_5eed_2026_0001;
const DEFAULT_COUNT: usize = 5000;
const DEFAULT_COFF_COUNT: usize = 2000;
/// The first index of the COFF variants.
const COFF_BASE: usize = 100_000;
/// The first index of the real-program variants (ELF), and of the COFF ones.
const REAL_BASE: usize = 200_000;
const COFF_REAL_BASE: usize = 300_000;
const DEFAULT_REAL_COUNT: usize = 2000;
const DEFAULT_COFF_REAL_COUNT: usize = 1000;
/// The MinGW target of the COFF corpus.
const MINGW: &str = "--target=x86_64-w64-mingw32";

// ---- the programs that get corrupted ------------------------------------------------------

/// Entry point for the libc-free links (`-e main`); never run, only linked.
const MAIN_C: &str = r#"
extern int counter;
extern const char *names[];
int add(int, int);
int dispatch(int);
int main(void) {
    int s = add(counter, 3);
    s += dispatch(s & 7);
    return names[s & 3][0] == 'a' ? 0 : s;
}
"#;

/// Data, a pointer table (absolute relocations), a weak definition; built with
/// -ffunction-sections -fdata-sections so it has many sections.
const A_C: &str = r#"
int counter = 2;
static int hidden_state[64];
const char *names[] = {"alpha", "beta", "gamma", "delta"};
int twice(int);
int add(int a, int b) { hidden_state[a & 63] += b; return twice(a) + b; }
__attribute__((weak)) int weak_hook(int x) { return x + hidden_state[x & 63]; }
int (*const ops[])(int, int) = {add};
int apply(int i, int a, int b) { return ops[i](a, b); }
"#;

/// TLS, a jump table, calls back into a.c.
const B_C: &str = r#"
_Thread_local int tls_counter;
int weak_hook(int);
int twice(int x) { tls_counter++; return 2 * x; }
int dispatch(int k) {
    switch (k) {
    case 0: return 11;
    case 1: return weak_hook(22);
    case 2: return 33;
    case 3: return 44 + tls_counter;
    case 4: return 55;
    case 5: return 66;
    case 6: return twice(k);
    default: return 0;
    }
}
"#;

/// Entry point for the links with crt files and libc.
const MAIN_LIBC_C: &str = r#"
#include <stdio.h>
int add(int, int);
int dispatch(int);
extern int counter;
int main(void) {
    int s = add(counter, 3) + dispatch(4);
    printf("sum %d\n", s);
    return s == 64 ? 0 : 1;
}
"#;

/// b.c without TLS: a libc-free COFF link has no `_tls_index` (the MinGW CRT defines it).
const B_COFF_C: &str = r#"
int weak_hook(int);
static int calls;
int twice(int x) { calls++; return 2 * x; }
int dispatch(int k) {
    switch (k) {
    case 0: return 11;
    case 1: return weak_hook(22);
    case 2: return 33;
    case 3: return 44 + calls;
    case 4: return 55;
    case 5: return 66;
    case 6: return twice(k);
    default: return 0;
    }
}
"#;

/// A MinGW program with TLS, an import from kernel32 and the archive's code.
const MAIN_MINGW_C: &str = r#"
#include <stdio.h>
#include <windows.h>
int add(int, int);
int dispatch(int);
extern int counter;
static __thread int tls_value = 5;
int main(void) {
    int s = add(counter, 3) + dispatch(4) + tls_value;
    printf("sum %d pid-ish %d\n", s, GetCurrentProcessId() != 0);
    return s == 69 ? 0 : 1;
}
"#;

/// Calls into two import libraries: functions through import thunks, data through `__imp_`.
const MAIN_IMP_C: &str = r#"
int foo_fn(int);
int foo_other(void);
int bar_fn(int);
__declspec(dllimport) extern int bar_data;
int main(void) { return foo_fn(1) + foo_other() + bar_fn(2) + bar_data; }
"#;

/// Calls into the real members (bzip2, OpenSSL SHA-256, libstdc++).
const MAIN_REAL_C: &str = r#"
#include <stddef.h>
int BZ2_bzBuffToBuffCompress(char *, unsigned *, char *, unsigned, int, int, int);
unsigned char *SHA256(const unsigned char *, size_t, unsigned char *);
void _ZSt20__throw_length_errorPKc(const char *);
int main(int argc, char **argv) {
    char out[600];
    unsigned n = sizeof out;
    unsigned char md[32];
    if (argc > 5) _ZSt20__throw_length_errorPKc(argv[0]);
    SHA256((const unsigned char *)"abc", 3, md);
    return BZ2_bzBuffToBuffCompress(out, &n, (char *)"hello hello hello", 17, 9, 0, 0) + (md[0] != 0xba);
}
"#;

/// Calls into the real mingw-w64 members.
const MAIN_COFF_REAL_C: &str = r#"
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <libgen.h>
#include <dirent.h>
int __mingw_vsnprintf(char *, size_t, const char *, va_list);
int getopt(int, char *const[], const char *);
static int fmt(char *b, size_t n, const char *f, ...) {
    va_list ap; va_start(ap, f); int r = __mingw_vsnprintf(b, n, f, ap); va_end(ap); return r;
}
int main(int argc, char **argv) {
    char buf[64];
    DIR *d = opendir(".");
    if (d) closedir(d);
    fmt(buf, sizeof buf, "%Lf %s", (long double)strtof("1.5", 0), basename(argv[0]));
    return getopt(argc, argv, "ab") == 'a';
}
"#;

const FOO_DEF: &str = "LIBRARY foo.dll\nEXPORTS\n    foo_fn\n    foo_other @3\n    foo_data DATA\n";
const BAR_DEF: &str = "LIBRARY bar.dll\nEXPORTS\n    bar_fn\n    bar_data DATA\n";

// ---- scenarios ----------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scenario {
    /// `dtld -o out -e main main.o a.o b.o`
    Objects,
    /// `dtld -o out -e main main.o libab.a`
    Archive,
    /// `dtld -o out -e main main.o libthin.a` (members a.o, b.o next to the thin archive)
    Thin,
    /// The linker command clang-22 would run for `main_libc.o libab.a` (crt files, libc,
    /// -pie, dynamic linker), captured once with `-###` and run directly.
    Libc,
    /// The real clang-22 driver with `-fuse-ld=<dtld>` (its process group is killed on timeout).
    Driver,
    /// `dtld -m i386pep -o out -e start --subsystem console cmain.o ca.o cb.o` (COFF objects).
    CoffObjects,
    /// The same with `cmain.o libcab.a` (an archive of COFF members).
    CoffArchive,
    /// The same with `cmain_imp.o libfoo_short.a libbar_gnu.a`: short import
    /// members (llvm-dlltool) and GNU dlltool's import objects.
    CoffImplib,
    /// The linker command clang-22 would run for the MinGW program `cmain_mingw.o libcab.a`
    /// (crt2.o, mingw-w64 and libgcc archives, msvcrt/kernel32 import libraries), run directly.
    CoffLibc,
    /// clang-22 --target=x86_64-w64-mingw32 -fuse-ld=<dtld>.
    CoffDriver,
    /// Real-program members: `main_real.o libreal.a` with clang's link line (crt, libc,
    /// -lcrypto, -lstdc++), where libreal.a is a GNU `ar` archive of members of the system's
    /// static libraries: bzip2 (libbz2.a), OpenSSL's SHA-256 in C and in perlasm assembly
    /// (libcrypto.a), GCC's libstdc++ (functexcept.o, C++ with COMDAT groups and .eh_frame).
    Real,
    /// The same for MinGW: `cmain_real.o libcreal.a`, members of mingw-w64's libmingwex.a
    /// (mingw_pformat, getopt, strtof, basename, dirent) built by GCC, in a GNU `ar` archive.
    CoffReal,
}

impl Scenario {
    fn name(self) -> &'static str {
        match self {
            Scenario::Objects => "objects",
            Scenario::Archive => "archive",
            Scenario::Thin => "thin",
            Scenario::Libc => "libc",
            Scenario::Driver => "driver",
            Scenario::CoffObjects => "coff-objects",
            Scenario::CoffArchive => "coff-archive",
            Scenario::CoffImplib => "coff-implib",
            Scenario::CoffLibc => "coff-libc",
            Scenario::CoffDriver => "coff-driver",
            Scenario::Real => "real",
            Scenario::CoffReal => "coff-real",
        }
    }

    fn is_coff(self) -> bool {
        self.name().starts_with("coff-")
    }

    const ALL: [Scenario; 12] = [
        Scenario::Objects,
        Scenario::Archive,
        Scenario::Thin,
        Scenario::Libc,
        Scenario::Driver,
        Scenario::CoffObjects,
        Scenario::CoffArchive,
        Scenario::CoffImplib,
        Scenario::CoffLibc,
        Scenario::CoffDriver,
        Scenario::Real,
        Scenario::CoffReal,
    ];

    /// The input files of the link; the mutation hits one of them.
    fn inputs(self) -> &'static [&'static str] {
        match self {
            Scenario::Objects => &["main.o", "a.o", "b.o"],
            Scenario::Archive => &["main.o", "libab.a"],
            Scenario::Thin => &["main.o", "libthin.a", "a.o", "b.o"],
            Scenario::Libc | Scenario::Driver => &["main_libc.o", "libab.a"],
            Scenario::CoffObjects => &["cmain.o", "ca.o", "cb.o"],
            Scenario::CoffArchive => &["cmain.o", "libcab.a"],
            Scenario::CoffImplib => &["cmain_imp.o", "libfoo_short.a", "libbar_gnu.a"],
            Scenario::CoffLibc | Scenario::CoffDriver => &["cmain_mingw.o", "libcab.a"],
            Scenario::Real => &["main_real.o", "libreal.a"],
            Scenario::CoffReal => &["cmain_real.o", "libcreal.a"],
        }
    }

    /// Which input to corrupt (archives are favoured where they are part of the link).
    fn pick_target(self, rng: &mut Rng) -> &'static str {
        match self {
            Scenario::Archive | Scenario::Libc | Scenario::Driver if rng.chance(70) => "libab.a",
            Scenario::Thin if rng.chance(60) => "libthin.a",
            Scenario::CoffArchive | Scenario::CoffLibc | Scenario::CoffDriver if rng.chance(65) => "libcab.a",
            Scenario::Real if rng.chance(85) => "libreal.a",
            Scenario::CoffReal if rng.chance(85) => "libcreal.a",
            Scenario::CoffImplib if rng.chance(80) => {
                if rng.chance(50) {
                    "libfoo_short.a"
                } else {
                    "libbar_gnu.a"
                }
            }
            _ => self.inputs()[rng.below(self.inputs().len())],
        }
    }
}

fn scenario_for(rng: &mut Rng) -> Scenario {
    // Variants numbered from REAL_BASE are real-program ones (so that the synthetic variants
    // keep their numbers when the counts change).
    match rng.below(100) {
        0..=27 => Scenario::Objects,
        28..=52 => Scenario::Archive,
        53..=69 => Scenario::Thin,
        70..=95 => Scenario::Libc,
        _ => Scenario::Driver,
    }
}

fn coff_scenario_for(rng: &mut Rng) -> Scenario {
    match rng.below(100) {
        0..=24 => Scenario::CoffObjects,
        25..=44 => Scenario::CoffArchive,
        45..=69 => Scenario::CoffImplib,
        70..=94 => Scenario::CoffLibc,
        _ => Scenario::CoffDriver,
    }
}

/// The scenario of variant `index` (COFF variants are numbered from [`COFF_BASE`]).
fn scenario_of(seed: u64, index: usize) -> Scenario {
    let mut rng = Rng::for_variant(seed, index as u64);
    pick_scenario(&mut rng, index)
}

/// Variants from [`REAL_BASE`] link real-program members ([`Scenario::Real`] and, from
/// [`COFF_REAL_BASE`], [`Scenario::CoffReal`]); from [`COFF_BASE`] the COFF corpus.
fn pick_scenario(rng: &mut Rng, index: usize) -> Scenario {
    if index >= COFF_REAL_BASE {
        Scenario::CoffReal
    } else if index >= REAL_BASE {
        Scenario::Real
    } else if index >= COFF_BASE {
        coff_scenario_for(rng)
    } else {
        scenario_for(rng)
    }
}

fn is_skipped(skip: &[String], sc: Scenario) -> bool {
    skip.iter().any(|x| x == sc.name() || (x == "coff" && sc.is_coff()))
}

struct Settings {
    dtld: PathBuf,
    error_prefix: String,
    seed: u64,
    timeout: Duration,
    keep: bool,
    skip: Vec<String>,
}

struct Inputs {
    base: PathBuf,
    files: HashMap<&'static str, (Vec<u8>, Layout)>,
    /// The captured linker argv for [`Scenario::Libc`]: argv[0] is the linker.
    libc_argv: Vec<String>,
    /// The same for [`Scenario::CoffLibc`] (clang's MinGW link line).
    coff_libc_argv: Vec<String>,
    /// The same for [`Scenario::Real`] and [`Scenario::CoffReal`].
    real_argv: Vec<String>,
    coff_real_argv: Vec<String>,
}

// ---- setup --------------------------------------------------------------------------------

fn setup(work: &Path, dtld: &Path) -> Result<Inputs, String> {
    let base = work.join("base");
    fs::create_dir_all(&base).map_err(|e| format!("mkdir {}: {e}", base.display()))?;
    let compile = |name: &str, src: &str, extra: &[&str]| -> Result<(), String> {
        let c = base.join(format!("{name}.c"));
        fs::write(&c, src).map_err(|e| e.to_string())?;
        run_tool_ok(Command::new(CLANG).current_dir(&base).args(["-O1", "-c"]).args(extra).arg(&c).arg("-o").arg(format!("{name}.o"))).map(|_| ())
    };
    compile("main", MAIN_C, &[])?;
    compile("a", A_C, &["-ffunction-sections", "-fdata-sections"])?;
    compile("b", B_C, &[])?;
    compile("main_libc", MAIN_LIBC_C, &[])?;
    compile("main_real", MAIN_REAL_C, &[])?;
    real_archives(&base)?;
    run_tool_ok(Command::new(LLVM_AR).current_dir(&base).args(["rcs", "libab.a", "a.o", "b.o"]))?;
    // A thin archive stores member paths relative to itself.
    run_tool_ok(Command::new(LLVM_AR).current_dir(&base).args(["rcsT", "libthin.a", "a.o", "b.o"]))?;

    // The COFF corpus.
    let compile_coff = |name: &str, src: &str, extra: &[&str]| -> Result<(), String> {
        let c = base.join(format!("{name}.c"));
        fs::write(&c, src).map_err(|e| e.to_string())?;
        run_tool_ok(Command::new(CLANG).current_dir(&base).args([MINGW, "-O1", "-c"]).args(extra).arg(&c).arg("-o").arg(format!("{name}.o"))).map(|_| ())
    };
    // A MinGW `main` calls the CRT's `__main`: the libc-free entry is named `start` instead.
    compile_coff("cmain", MAIN_C, &["-Dmain=start"])?;
    compile_coff("ca", A_C, &["-ffunction-sections", "-fdata-sections"])?;
    compile_coff("cb", B_COFF_C, &[])?;
    compile_coff("cmain_mingw", MAIN_MINGW_C, &[])?;
    compile_coff("cmain_imp", MAIN_IMP_C, &["-Dmain=start"])?;
    compile_coff("cmain_real", MAIN_COFF_REAL_C, &[])?;
    run_tool_ok(Command::new(LLVM_AR).current_dir(&base).args(["rcs", "libcab.a", "ca.o", "cb.o"]))?;
    fs::write(base.join("foo.def"), FOO_DEF).map_err(|e| e.to_string())?;
    fs::write(base.join("bar.def"), BAR_DEF).map_err(|e| e.to_string())?;
    run_tool_ok(Command::new("llvm-dlltool-22").current_dir(&base).args(["-m", "i386:x86-64", "-d", "foo.def", "-l", "libfoo_short.a"]))?;
    run_tool_ok(Command::new("x86_64-w64-mingw32-dlltool").current_dir(&base).args(["-d", "bar.def", "-l", "libbar_gnu.a"]))?;

    let mut files = HashMap::new();
    for name in [
        "main.o",
        "a.o",
        "b.o",
        "main_libc.o",
        "libab.a",
        "libthin.a",
        "cmain.o",
        "ca.o",
        "cb.o",
        "cmain_mingw.o",
        "cmain_imp.o",
        "libcab.a",
        "libfoo_short.a",
        "libbar_gnu.a",
        "main_real.o",
        "libreal.a",
        "cmain_real.o",
        "libcreal.a",
    ] {
        let bytes = fs::read(base.join(name)).map_err(|e| format!("read {name}: {e}"))?;
        let layout = Layout::of(&bytes);
        if layout.fields.is_empty() {
            return Err(format!("{name}: no structure found (not ELF64 / COFF / ar?)"));
        }
        files.insert(name, (bytes, layout));
    }

    let libc_argv = capture_link_line(&base, dtld, &[], "main_libc.o", "libab.a")?;
    let coff_libc_argv = capture_link_line(&base, dtld, &[MINGW], "cmain_mingw.o", "libcab.a")?;
    let real_argv = capture_link_line(&base, dtld, &["-lcrypto", "-lstdc++"], "main_real.o", "libreal.a")?;
    let coff_real_argv = capture_link_line(&base, dtld, &[MINGW], "cmain_real.o", "libcreal.a")?;
    Ok(Inputs { base, files, libc_argv, coff_libc_argv, real_argv, coff_real_argv })
}

/// libreal.a and libcreal.a: members of the system's static libraries (see
/// [`Scenario::Real`]), extracted and archived again with GNU ar.
fn real_archives(base: &Path) -> Result<(), String> {
    let sets: [(&str, &str, &[&str]); 4] = [
        (
            "libreal.a",
            "/usr/lib/x86_64-linux-gnu/libbz2.a",
            &["blocksort.o", "bzlib.o", "compress.o", "crctable.o", "decompress.o", "huffman.o", "randtable.o"],
        ),
        ("libreal.a", "/usr/lib/x86_64-linux-gnu/libcrypto.a", &["libcrypto-lib-sha256.o", "libcrypto-lib-sha256-x86_64.o"]),
        ("libreal.a", "/usr/lib/gcc/x86_64-linux-gnu/12/libstdc++.a", &["functexcept.o"]),
        (
            "libcreal.a",
            "/usr/x86_64-w64-mingw32/lib/libmingwex.a",
            &[
                "lib64_libmingwex_a-mingw_vsnprintf.o",
                "lib64_libmingwex_a-mingw_pformat.o",
                "lib64_libmingwex_a-getopt.o",
                "lib64_libmingwex_a-strtof.o",
                "lib64_libmingwex_a-basename.o",
                "lib64_libmingwex_a-dirent.o",
            ],
        ),
    ];
    for (out, lib, members) in sets {
        if !Path::new(lib).is_file() {
            return Err(format!("{lib} is missing (scripts/setup.sh installs it: libbz2-dev, libssl-dev, g++, mingw-w64)"));
        }
        let dir = base.join(format!("x-{}", out.trim_end_matches(".a")));
        fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        run_tool_ok(Command::new("ar").current_dir(&dir).arg("x").arg(lib).args(members))?;
        let ar = if out == "libcreal.a" { "x86_64-w64-mingw32-ar" } else { "ar" };
        run_tool_ok(Command::new(ar).current_dir(&dir).arg("rcs").arg(base.join(out)).args(members))?;
    }
    Ok(())
}

/// The link command clang-22 runs for `<object> <archive>` (with `extra` driver flags),
/// captured with `-###`; the output is `OUTPUT.placeholder`.
fn capture_link_line(base: &Path, dtld: &Path, extra: &[&str], object: &str, archive: &str) -> Result<Vec<String>, String> {
    let out = run_tool_ok(Command::new(CLANG).current_dir(base).arg("-###").args(extra).arg(format!("-fuse-ld={}", dtld.display())).args([
        "-o",
        "OUTPUT.placeholder",
        object,
        archive,
    ]))?;
    let text = String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    let line = text.lines().rfind(|l| l.starts_with(" \"")).ok_or_else(|| format!("clang -### printed no command:\n{text}"))?;
    let argv = parse_quoted(line);
    if !argv.iter().any(|a| a == "OUTPUT.placeholder") || !argv.iter().any(|a| a == object) {
        return Err(format!("unexpected clang -### link line: {line}"));
    }
    Ok(argv)
}

/// Splits a clang `-###` line (`"a" "b c" "d\"e"`) into its words.
fn parse_quoted(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c != '"' {
            continue;
        }
        let mut word = String::new();
        while let Some(c) = chars.next() {
            match c {
                '\\' => {
                    if let Some(n) = chars.next() {
                        word.push(n);
                    }
                }
                '"' => break,
                _ => word.push(c),
            }
        }
        words.push(word);
    }
    words
}

// ---- one variant --------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Linked,
    CleanError,
}

struct Run {
    index: Option<usize>,
    scenario: Scenario,
    description: String,
    command: String,
    verdict: Result<Verdict, String>,
    outcome: Option<Outcome>,
    dir: PathBuf,
}

/// Builds and runs variant `index` (None: the unmutated baseline of `forced`).
fn run_variant(s: &Settings, inp: &Inputs, work: &Path, index: Option<usize>, forced: Option<Scenario>) -> Run {
    let mut rng = Rng::for_variant(s.seed, index.map_or(u64::MAX, |i| i as u64));
    let scenario = forced.unwrap_or_else(|| pick_scenario(&mut rng, index.unwrap_or(0)));
    let dir = match index {
        Some(i) => work.join(format!("v{i:05}")),
        None => work.join(format!("baseline-{}", scenario.name())),
    };
    let _ = fs::remove_dir_all(&dir);
    let out_dir = dir.join("out");
    let mut run = Run { index, scenario, description: String::new(), command: String::new(), verdict: Ok(Verdict::Linked), outcome: None, dir: dir.clone() };
    if let Err(e) = fs::create_dir_all(&out_dir) {
        run.verdict = Err(format!("harness: mkdir {}: {e}", out_dir.display()));
        return run;
    }

    // Materialize the inputs: the mutated one in the variant directory, the others from base
    // (the thin scenario copies all, since members are found relative to the archive).
    let target = if index.is_some() { Some(scenario.pick_target(&mut rng)) } else { None };
    let mut paths: HashMap<&str, PathBuf> = HashMap::new();
    for &name in scenario.inputs() {
        let (bytes, layout) = &inp.files[name];
        if Some(name) == target {
            let mut data = bytes.clone();
            run.description = format!("{name}: {}", mutate(&mut rng, &mut data, layout));
            if let Err(e) = fs::write(dir.join(name), &data) {
                run.verdict = Err(format!("harness: write: {e}"));
                return run;
            }
            paths.insert(name, dir.join(name));
        } else if scenario == Scenario::Thin {
            if let Err(e) = fs::write(dir.join(name), bytes) {
                run.verdict = Err(format!("harness: write: {e}"));
                return run;
            }
            paths.insert(name, dir.join(name));
        } else {
            paths.insert(name, inp.base.join(name));
        }
    }
    if index.is_none() {
        run.description = "unmutated baseline".into();
    }
    let output = out_dir.join("a.out");

    let mut cmd;
    match scenario {
        Scenario::Objects | Scenario::Archive | Scenario::Thin => {
            cmd = Command::new(&s.dtld);
            cmd.current_dir(&dir).arg("-o").arg(&output).args(["-e", "main"]);
            for &name in scenario.inputs() {
                // The thin archive's members are not given on the command line.
                if scenario == Scenario::Thin && (name == "a.o" || name == "b.o") {
                    continue;
                }
                cmd.arg(&paths[name]);
            }
        }
        Scenario::Libc => {
            cmd = Command::new(&inp.libc_argv[0]);
            cmd.current_dir(&dir);
            for a in &inp.libc_argv[1..] {
                match a.as_str() {
                    "OUTPUT.placeholder" => cmd.arg(&output),
                    "main_libc.o" => cmd.arg(&paths["main_libc.o"]),
                    "libab.a" => cmd.arg(&paths["libab.a"]),
                    _ => cmd.arg(a),
                };
            }
        }
        Scenario::Driver => {
            cmd = Command::new(CLANG);
            cmd.current_dir(&dir).arg(format!("-fuse-ld={}", s.dtld.display())).arg("-o").arg(&output).arg(&paths["main_libc.o"]).arg(&paths["libab.a"]);
        }
        Scenario::CoffObjects | Scenario::CoffArchive | Scenario::CoffImplib => {
            cmd = Command::new(&s.dtld);
            cmd.current_dir(&dir).args(["-m", "i386pep", "-o"]).arg(&output).args(["-e", "start", "--subsystem", "console"]);
            for &name in scenario.inputs() {
                cmd.arg(&paths[name]);
            }
        }
        Scenario::CoffLibc => {
            cmd = Command::new(&inp.coff_libc_argv[0]);
            cmd.current_dir(&dir);
            for a in &inp.coff_libc_argv[1..] {
                match a.as_str() {
                    "OUTPUT.placeholder" => cmd.arg(&output),
                    "cmain_mingw.o" => cmd.arg(&paths["cmain_mingw.o"]),
                    "libcab.a" => cmd.arg(&paths["libcab.a"]),
                    _ => cmd.arg(a),
                };
            }
        }
        Scenario::Real | Scenario::CoffReal => {
            let argv = if scenario == Scenario::Real { &inp.real_argv } else { &inp.coff_real_argv };
            cmd = Command::new(&argv[0]);
            cmd.current_dir(&dir);
            for a in &argv[1..] {
                match a.as_str() {
                    "OUTPUT.placeholder" => cmd.arg(&output),
                    n if paths.contains_key(n) => cmd.arg(&paths[n]),
                    _ => cmd.arg(a),
                };
            }
        }
        Scenario::CoffDriver => {
            cmd = Command::new(CLANG);
            cmd.current_dir(&dir)
                .arg(MINGW)
                .arg(format!("-fuse-ld={}", s.dtld.display()))
                .arg("-o")
                .arg(&output)
                .arg(&paths["cmain_mingw.o"])
                .arg(&paths["libcab.a"]);
        }
    }
    cmd.env("RUST_BACKTRACE", "0");
    run.command = command_line(&cmd);
    // Its own process group, killed as a whole after the timeout (clang and the linker it
    // started, or anything the linker spawned); output to files, so that no pipe can be held
    // open by a stray grandchild.
    cmd.stdin(std::process::Stdio::null());
    let (out_path, err_path) = (dir.join("linker.stdout"), dir.join("linker.stderr"));
    let outcome = match run_in_group(&mut cmd, s.timeout, &out_path, &err_path) {
        Ok(o) => o,
        Err(e) => {
            run.verdict = Err(format!("harness: cannot run linker: {e}"));
            return run;
        }
    };
    run.verdict = judge(s, scenario, &outcome, &out_dir);
    run.outcome = Some(outcome);
    run
}

fn judge(s: &Settings, scenario: Scenario, o: &Outcome, out_dir: &Path) -> Result<Verdict, String> {
    use std::os::unix::process::ExitStatusExt;
    let stderr = o.stderr_text();
    let status = o.status.ok_or_else(|| format!("hang: still running after {:?} (killed)", s.timeout))?;
    if let Some(sig) = status.signal() {
        return Err(format!("crash: killed by signal {sig}"));
    }
    let code = status.code().unwrap_or(-1);
    if matches!(scenario, Scenario::Driver | Scenario::CoffDriver) {
        if stderr.contains("due to signal") || stderr.contains("unable to execute command") {
            return Err("crash: clang reports the linker died by a signal".into());
        }
        if let Some(pos) = stderr.find("linker command failed with exit code ") {
            let rest = &stderr[pos + "linker command failed with exit code ".len()..];
            let n: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
            if n != "1" {
                return Err(format!("bad exit code: linker exited {n} under clang"));
            }
        }
    }
    if stderr.contains("panicked") || stderr.contains("RUST_BACKTRACE") {
        return Err("panic: stderr contains a Rust panic message".into());
    }
    let left: Vec<String> = match fs::read_dir(out_dir) {
        Ok(rd) => rd.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect(),
        Err(e) => return Err(format!("harness: read_dir: {e}")),
    };
    match code {
        0 => {
            if left != ["a.out"] {
                return Err(format!("exit 0 but the output directory holds {left:?} (want exactly [\"a.out\"])"));
            }
            Ok(Verdict::Linked)
        }
        1 => {
            if !stderr.contains(&s.error_prefix) {
                return Err(format!("exit 1 without `{}` on stderr", s.error_prefix));
            }
            if !left.is_empty() {
                return Err(format!("exit 1 but files were left in the output directory: {left:?}"));
            }
            Ok(Verdict::CleanError)
        }
        n => Err(format!("bad exit code {n} (want 0 or 1)")),
    }
}

fn report(s: &Settings, r: &Run, why: &str) -> String {
    let mut msg = String::new();
    let id = r.index.map_or("baseline".to_string(), |i| format!("variant {i}"));
    msg += &format!("\nFAIL {id} [{}]: {why}\n", r.scenario.name());
    msg += &format!("  mutation: {}\n", r.description);
    msg += &format!("  command:  {}\n", r.command);
    if let Some(o) = &r.outcome {
        msg += &format!("  status:   {}\n", o.status_text());
        for line in o.stderr_text().lines().take(15) {
            msg += &format!("  | {line}\n");
        }
    }
    msg += &format!("  kept in:  {}\n", r.dir.display());
    if let Some(i) = r.index {
        msg += &format!(
            "  reproduce: MUTATION_SEED={:#x} MUTATION_ONLY={i} MUTATION_KEEP=1 DTLD={}{} cargo test --release -p dtld-tests --test mutation\n",
            s.seed,
            s.dtld.display(),
            if s.error_prefix == "dtld: error:" { String::new() } else { format!(" DTLD_ERROR_PREFIX='{}'", s.error_prefix) }
        );
    }
    msg
}

// ---- driver -------------------------------------------------------------------------------

fn env_num(name: &str, default: u64) -> Result<u64, String> {
    match std::env::var(name) {
        Ok(v) => {
            let v = v.trim();
            let parsed = if let Some(hex) = v.strip_prefix("0x") { u64::from_str_radix(hex, 16) } else { v.parse() };
            parsed.map_err(|e| format!("${name}={v}: {e}"))
        }
        Err(_) => Ok(default),
    }
}

fn main() -> ExitCode {
    match real_main() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("mutation: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn real_main() -> Result<bool, String> {
    // `cargo test -- --list` and friends: this target has no individual tests to list.
    if std::env::args().any(|a| a == "--list") {
        return Ok(true);
    }
    let started = Instant::now();
    let s = Settings {
        dtld: find_dtld()?,
        error_prefix: std::env::var("DTLD_ERROR_PREFIX").unwrap_or_else(|_| "dtld: error:".into()),
        seed: env_num("MUTATION_SEED", DEFAULT_SEED)?,
        timeout: Duration::from_secs(env_num("MUTATION_TIMEOUT_SECS", 5)?),
        keep: std::env::var("MUTATION_KEEP").is_ok_and(|v| v == "1"),
        skip: std::env::var("MUTATION_SKIP").unwrap_or_default().split(',').map(|x| x.trim().to_string()).filter(|x| !x.is_empty()).collect(),
    };
    let count = env_num("MUTATION_COUNT", DEFAULT_COUNT as u64)? as usize;
    let coff_count = env_num("MUTATION_COFF_COUNT", DEFAULT_COFF_COUNT as u64)? as usize;
    let real_count = env_num("MUTATION_REAL_COUNT", DEFAULT_REAL_COUNT as u64)? as usize;
    let coff_real_count = env_num("MUTATION_COFF_REAL_COUNT", DEFAULT_COFF_REAL_COUNT as u64)? as usize;
    let threads = env_num("MUTATION_THREADS", 2)?.max(1) as usize;
    let verbose = std::env::var("MUTATION_VERBOSE").is_ok_and(|v| v == "1");
    let only: Option<Vec<usize>> = match std::env::var("MUTATION_ONLY") {
        Ok(v) => Some(v.split(',').map(|x| x.trim().parse().map_err(|e| format!("$MUTATION_ONLY: {e}"))).collect::<Result<_, _>>()?),
        Err(_) => None,
    };

    let work = target_dir().join("mutation");
    let _ = fs::remove_dir_all(&work);
    let inputs = setup(&work, &s.dtld)?;
    println!("mutation: linker {} (error prefix `{}`), seed {:#x}, {} threads, timeout {:?}", s.dtld.display(), s.error_prefix, s.seed, threads, s.timeout);

    let mut failures: Vec<String> = Vec::new();
    // Baselines: every scenario must link when nothing is corrupted, or the variants prove
    // nothing (they would all be "clean errors").
    for sc in Scenario::ALL {
        if is_skipped(&s.skip, sc) {
            println!("mutation: scenario {} skipped ($MUTATION_SKIP)", sc.name());
            continue;
        }
        let r = run_variant(&s, &inputs, &work, None, Some(sc));
        match &r.verdict {
            Ok(Verdict::Linked) => {
                if !s.keep {
                    let _ = fs::remove_dir_all(&r.dir);
                }
            }
            Ok(Verdict::CleanError) => failures.push(report(&s, &r, "the unmutated inputs do not link")),
            Err(why) => failures.push(report(&s, &r, why)),
        }
    }

    let baseline_failures = failures.len();
    let indexes: Vec<usize> = only.unwrap_or_else(|| {
        (0..count)
            .chain(COFF_BASE..COFF_BASE + coff_count)
            .chain(REAL_BASE..REAL_BASE + real_count)
            .chain(COFF_REAL_BASE..COFF_REAL_BASE + coff_real_count)
            .collect()
    });
    let next = AtomicUsize::new(0);
    let linked = AtomicUsize::new(0);
    let clean = AtomicUsize::new(0);
    let skipped = AtomicUsize::new(0);
    let per_scenario: Mutex<HashMap<&'static str, usize>> = Mutex::new(HashMap::new());
    let variant_failures: Mutex<Vec<(usize, String)>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&i) = indexes.get(k) else { break };
                // Decide the scenario first so skipped scenarios cost nothing.
                let sc = scenario_of(s.seed, i);
                if is_skipped(&s.skip, sc) {
                    skipped.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
                let r = run_variant(&s, &inputs, &work, Some(i), None);
                if verbose {
                    let v = match &r.verdict {
                        Ok(Verdict::Linked) => "linked",
                        Ok(Verdict::CleanError) => "clean error",
                        Err(_) => "FAIL",
                    };
                    println!("variant {i} [{}] {v}: {}", r.scenario.name(), r.description);
                }
                *per_scenario.lock().unwrap().entry(r.scenario.name()).or_default() += 1;
                match &r.verdict {
                    Ok(v) => {
                        if *v == Verdict::Linked {
                            linked.fetch_add(1, Ordering::Relaxed);
                        } else {
                            clean.fetch_add(1, Ordering::Relaxed);
                        }
                        if !s.keep {
                            let _ = fs::remove_dir_all(&r.dir);
                        }
                    }
                    Err(why) => variant_failures.lock().unwrap().push((i, report(&s, &r, why))),
                }
            });
        }
    });
    let mut vf = variant_failures.into_inner().unwrap();
    vf.sort_by_key(|(i, _)| *i);
    let n_variant_failures = vf.len();
    const SHOWN: usize = 25;
    for (_, msg) in vf.iter().take(SHOWN) {
        failures.push(msg.clone());
    }
    for f in &failures {
        print!("{f}");
    }
    if n_variant_failures > SHOWN {
        println!("\n... and {} more failing variants", n_variant_failures - SHOWN);
    }

    let ran = indexes.len() - skipped.load(Ordering::Relaxed);
    let mut mix: Vec<_> = per_scenario.into_inner().unwrap().into_iter().collect();
    mix.sort();
    let mix: Vec<String> = mix.iter().map(|(k, v)| format!("{k} {v}")).collect();
    println!("\nmutation: scenarios: {}; {} skipped; {:.1}s", mix.join(", "), skipped.load(Ordering::Relaxed), started.elapsed().as_secs_f64());
    println!("mutation: {} variants, {} linked, {} clean errors", ran, linked.load(Ordering::Relaxed), clean.load(Ordering::Relaxed));
    println!("mutation: {} passed, {} failed", ran - n_variant_failures, n_variant_failures + baseline_failures);
    if failures.is_empty() && !s.keep {
        let _ = fs::remove_dir_all(&work);
    }
    Ok(failures.is_empty())
}
