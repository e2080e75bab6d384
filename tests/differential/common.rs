//! What the differential harness's two modes share: the ELF harness (`main.rs`, fixtures/elf/)
//! and the PE harness (`pe.rs`, fixtures/coff/) compile a fixture's sources the same way,
//! compare the two linkers' links, programs and fingerprints with the same rules and report a
//! failure the same way. Each mode keeps what is its own (link commands, how a program runs,
//! what a fingerprint holds). Included by both test targets (`mod common;`), so it may use their
//! `directives` module.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fs;
use std::path::Path;
use std::process::Command;

use dtld_tests::{command_line, run_tool_ok, CompileCache, Outcome, CLANG, CLANGXX, LLVM_AR, LLVM_LIB, WINDRES};
use serde_json::{json, Value};

use crate::directives::{self, Fixture, LibKind};

/// `DTLD_HARNESS_KEEP=1`: keep every trial's build directory (failed trials always keep it).
pub fn keep_build_dirs() -> bool {
    std::env::var("DTLD_HARNESS_KEEP").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// `DTLD_HARNESS_DETERMINISM=0` skips the determinism links.
pub fn check_determinism() -> bool {
    std::env::var("DTLD_HARNESS_DETERMINISM").map_or(true, |v| v != "0")
}

/// The trial for a fixture whose directives do not parse: it fails with the parser's error.
pub fn bad_fixture_trial(name: String, error: String) -> libtest_mimic::Trial {
    libtest_mimic::Trial::test(name, move || Err(format!("bad fixture: {error}").into()))
}

/// A link of the trial: one of the fixture's shared libraries / DLLs (by index) or the program.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Library(usize),
    Program,
}

impl Step {
    /// Every link of `fx` in order: the libraries, then the program.
    pub fn all(fx: &Fixture) -> Vec<Step> {
        (0..fx.libraries.len()).map(Step::Library).chain([Step::Program]).collect()
    }

    /// What the messages call this link.
    pub fn describe(self, fx: &Fixture) -> String {
        match self {
            Step::Library(i) => format!("link of {}", fx.libraries[i].name),
            Step::Program => "link".to_string(),
        }
    }
}

/// The end of a trial in `dir`: on success the directory is removed (unless `keep`), and so is
/// the fixture's directory once its last trial is cleaned (that fails, harmlessly, while other
/// trials of the fixture still have theirs); on failure the directory is kept and the message
/// ends with the commands to reproduce (`repro_note` says what they need besides).
pub fn finish_trial(result: Result<(), String>, dir: &Path, keep: bool, repro_note: &str, repro: &[String]) -> Result<(), String> {
    match result {
        Ok(()) => {
            if !keep {
                let _ = fs::remove_dir_all(dir);
                let _ = fs::remove_dir(dir.parent().expect("trial dir has a parent"));
            }
            Ok(())
        }
        Err(msg) => Err(format!("{msg}\n\nbuild directory (kept): {}\ncommands to reproduce{repro_note}:\n  {}", dir.display(), repro.join("\n  "))),
    }
}

/// A trial's compiled inputs, relative to its build directory.
pub struct Inputs {
    /// The program's objects and (linked) archives, in order: objects, archives.
    pub program: Vec<String>,
    /// Each shared library's (DLL's) objects.
    pub libraries: Vec<Vec<String>>,
    /// How many compiled objects are LLVM bitcode.
    pub bitcode_objects: usize,
}

/// Compiles every source of `fx` into `dir` (through the compile cache) and builds its archives.
/// `flags(shared_lib, group_flags)` gives a source's compile flags; every command goes to
/// `repro`. Archives that are only found by `-l` search (`SearchArchive`) are built but not put
/// on the program's link line.
pub fn build_inputs(
    fx: &Fixture,
    dir: &Path,
    cache: &CompileCache,
    flags: impl Fn(bool, &[String]) -> Vec<String>,
    repro: &mut dyn FnMut(String),
) -> Result<Inputs, String> {
    let mut taken = HashSet::new();
    let mut bitcode_objects = 0;
    let mut compile = |src: &Path, flags: &[String], subdir: &str, repro: &mut dyn FnMut(String)| -> Result<String, String> {
        let rel = compile(cache, dir, src, flags, subdir, fx.gcc_compile, &mut taken, repro)?;
        if is_bitcode(&dir.join(&rel)) {
            bitcode_objects += 1;
        }
        Ok(rel)
    };
    let mut program = Vec::new();
    program.push(compile(&fx.primary, &flags(false, &[]), "", repro)?);
    for group in &fx.objects {
        let flags = flags(false, &group.cflags);
        for src in &group.files {
            program.push(compile(src, &flags, "", repro)?);
        }
    }
    for (kind, lib) in &fx.archives {
        let flags = flags(false, &lib.sources.cflags);
        let subdir = format!("{}.objs/", lib.name);
        let mut objs = Vec::new();
        for src in &lib.sources.files {
            objs.push(compile(src, &flags, &subdir, repro)?);
        }
        let mut ar = if *kind == LibKind::Lib {
            let mut c = Command::new(LLVM_LIB);
            c.current_dir(dir).arg(format!("/out:{}", lib.name)).args(&objs);
            c
        } else {
            let mut c = Command::new(LLVM_AR);
            c.current_dir(dir).arg(kind.ar_flags()).arg(&lib.name).args(&objs);
            c
        };
        repro(command_line(&ar));
        run_tool_ok(&mut ar)?;
        if lib.linked {
            program.push(lib.name.clone());
        }
    }
    let mut libraries = Vec::new();
    for lib in &fx.libraries {
        let flags = flags(true, &lib.sources.cflags);
        let subdir = format!("{}.objs/", lib.name);
        let mut objs = Vec::new();
        for src in &lib.sources.files {
            objs.push(compile(src, &flags, &subdir, repro)?);
        }
        libraries.push(objs);
    }
    Ok(Inputs { program, libraries, bitcode_objects })
}

/// Compiles `src` (with clang++-22 when it is C++; gcc/g++ with `gcc`) into `subdir` of `dir`
/// under a name not yet in `taken`; returns the object's path relative to `dir`.
#[allow(clippy::too_many_arguments)]
fn compile(
    cache: &CompileCache,
    dir: &Path,
    src: &Path,
    flags: &[String],
    subdir: &str,
    gcc: bool,
    taken: &mut HashSet<String>,
    repro: &mut dyn FnMut(String),
) -> Result<String, String> {
    let stem = src.file_stem().unwrap_or_default().to_string_lossy().into_owned();
    let mut rel = format!("{subdir}{stem}.o");
    let mut n = 1;
    while !taken.insert(rel.clone()) {
        n += 1;
        rel = format!("{subdir}{stem}-{n}.o");
    }
    let out = dir.join(&rel);
    if let Some(parent) = out.parent() {
        fs::create_dir_all(parent).map_err(|e| e.to_string())?;
    }
    if src.extension().is_some_and(|e| e == "rc") {
        // A resource script: MinGW's resource compiler writes a COFF object with `.rsrc`.
        let mut c = Command::new(WINDRES);
        c.arg("-O").arg("coff").arg("-I").arg(src.parent().unwrap_or(Path::new("."))).arg("-i").arg(src).arg("-o").arg(&out);
        repro(command_line(&c));
        run_tool_ok(&mut c)?;
        return Ok(rel);
    }
    let compiler = match (gcc, directives::is_cxx(src)) {
        (false, false) => CLANG,
        (false, true) => CLANGXX,
        (true, false) => dtld_tests::GCC,
        (true, true) => dtld_tests::GXX,
    };
    repro(cache.compile_with(compiler, src, flags, &out)?);
    Ok(rel)
}

/// Whether `path` starts with the LLVM bitcode magic (`BC\xC0\xDE`; clang writes raw bitcode,
/// never the wrapper header).
pub fn is_bitcode(path: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 4];
    fs::File::open(path).and_then(|mut f| f.read_exact(&mut magic)).is_ok() && magic == *b"BC\xC0\xDE"
}

/// Substitutes each side's `$DIR` and the build directory's `$BUILD` in a fixture's link
/// arguments.
pub fn expand_link_args<'a>(args: &'a [String], dir: &Path, build: &Path) -> impl Iterator<Item = String> + 'a {
    let dir = dir.to_string_lossy().into_owned();
    let build = build.to_string_lossy().into_owned();
    args.iter().map(move |a| a.replace("$DIR", &dir).replace("$BUILD", &build))
}

/// `-fthinlto-distributor=<distributor>`: clang turns it into `--thinlto-distributor=<d>` and
/// `--thinlto-remote-compiler=<its own path>` for the linker.
pub fn distributor_flag(distributor: &Path) -> std::ffi::OsString {
    let mut arg = std::ffi::OsString::from("-fthinlto-distributor=");
    arg.push(distributor);
    arg
}

/// Both links of `what` must succeed (an error ends the trial); differing diagnostics are a
/// problem.
pub fn check_links(what: &str, ours: &Outcome, theirs: &Outcome, problems: &mut Vec<String>) -> Result<(), String> {
    if !theirs.success() {
        return Err(format!("the reference {what} (ld.lld) failed ({}), so the fixture is broken:\n{}", theirs.status_text(), theirs.stderr_text()));
    }
    if !ours.success() {
        return Err(format!("dtld's {what} failed ({}):\n{}", ours.status_text(), ours.stderr_text()));
    }
    if ours.stderr != theirs.stderr {
        problems.push(format!(
            "{what}: diagnostics differ:\n--- dtld (through the driver) ---\n{}--- ld.lld ---\n{}",
            ours.stderr_text(),
            theirs.stderr_text()
        ));
    }
    Ok(())
}

/// The checks of an `ExpectError` fixture's failing link `what` that both modes make: both links
/// fail, with the same first error message, matching `re`, and clang reports dtld's exit code
/// as 1. The caller adds its own checks of what dtld left behind.
pub fn check_expected_error(re: &regex::Regex, what: &str, ours: &Outcome, theirs: &Outcome, problems: &mut Vec<String>) {
    if theirs.success() {
        problems.push(format!("ld.lld's {what} succeeded but the fixture says ExpectError (fixture bug?)"));
    }
    if ours.success() {
        problems.push(format!("dtld's {what} succeeded but the fixture says ExpectError"));
    }
    let our_err = first_error(&ours.stderr_text());
    let their_err = first_error(&theirs.stderr_text());
    match (&our_err, &their_err) {
        (Some(o), Some(t)) => {
            if !re.is_match(t) {
                problems.push(format!("ld.lld's error does not match /{re}/ (fixture bug?):\n  {t}"));
            }
            if !re.is_match(o) {
                problems.push(format!("dtld's error does not match /{re}/:\n  {o}"));
            }
            if o != t {
                problems.push(format!("first error lines differ:\n  dtld:   {o}\n  ld.lld: {t}"));
            }
        }
        _ => {
            if our_err.is_none() && !ours.success() {
                problems.push(format!("dtld printed no `error:` line:\n{}", ours.stderr_text()));
            }
            if their_err.is_none() && !theirs.success() {
                problems.push(format!("ld.lld printed no `error:` line:\n{}", theirs.stderr_text()));
            }
        }
    }
    if !ours.success() {
        match linker_exit_code(&ours.stderr_text()) {
            Some(1) => {}
            Some(n) => problems.push(format!("dtld exited with {n}, expected 1")),
            None => problems.push(format!("cannot tell dtld's exit code from:\n{}", ours.stderr_text())),
        }
    }
}

/// `Ok` when nothing was found, else every problem, one a line.
pub fn verdict(problems: Vec<String>) -> Result<(), String> {
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// The message of the first `error:` line of a linker's stderr: the text after `error: `, with
/// the program prefix (`dtld: `, `ld.lld: `, `ld.lld-22: `, a path...) removed. Lines from the
/// compiler drivers themselves (`clang-22: error: linker command failed`, `clang++-22: ...`,
/// `collect2: error: ld returned 1`) are skipped.
pub fn first_error(stderr: &str) -> Option<String> {
    let re = regex::Regex::new(r"^(\S+): error: (.*)$").expect("valid regex");
    stderr.lines().find_map(|line| {
        let caps = re.captures(line)?;
        let program = Path::new(&caps[1]).file_name()?.to_string_lossy().into_owned();
        let is_driver = ["clang", "gcc", "g++", "c++", "collect2", "cc"].iter().any(|d| program.starts_with(d));
        (!is_driver).then(|| caps[2].to_string())
    })
}

/// The linker's exit code as reported by clang or collect2.
pub fn linker_exit_code(stderr: &str) -> Option<i32> {
    let re = regex::Regex::new(r"linker command failed with exit code (\d+)|ld returned (\d+) exit status").expect("valid regex");
    let caps = re.captures(stderr)?;
    caps.get(1).or(caps.get(2))?.as_str().parse().ok()
}

/// `stderr` without the lines `program` printed with its usual `<file name>: ` prefix.
pub fn without_program_lines(stderr: &[u8], program: &Path) -> Vec<u8> {
    let Some(name) = program.file_name() else {
        return stderr.to_vec();
    };
    let mut prefix = name.as_encoded_bytes().to_vec();
    prefix.extend_from_slice(b": ");
    stderr.split_inclusive(|&c| c == b'\n').filter(|line| !line.starts_with(&prefix)).flatten().copied().collect()
}

/// The names of the entries directly in `dir`.
pub fn top_level_names(dir: &Path) -> Result<HashSet<String>, String> {
    let entries = fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    let mut names = HashSet::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
        names.insert(entry.file_name().to_string_lossy().into_owned());
    }
    Ok(names)
}

/// Compares how two program runs ended and what they printed.
pub fn compare_outcomes(ours: &Outcome, theirs: &Outcome, our_label: &str, their_label: &str, problems: &mut Vec<String>) {
    if ours.status_text() != theirs.status_text() {
        problems.push(format!("exit status differs: {our_label}: {}, {their_label}: {}", ours.status_text(), theirs.status_text()));
    }
    for (what, a, b) in [("stdout", &ours.stdout, &theirs.stdout), ("stderr", &ours.stderr, &theirs.stderr)] {
        if a != b {
            problems.push(format!("{what} differs:\n{}", text_diff(a, b, our_label, their_label)));
        }
    }
}

/// Compares the dtld-linked program's run with the lld-linked one's, which must not have timed
/// out (`where_` says where it ran, for that message).
pub fn compare_program_runs(ours: &Outcome, theirs: &Outcome, where_: &str, problems: &mut Vec<String>) {
    if theirs.status.is_none() {
        problems.push(format!("the lld-linked program timed out{where_} (fixture bug?)"));
    }
    compare_outcomes(ours, theirs, "dtld-linked program", "lld-linked program", problems);
}

/// Compares a mixed run (`label`: one linker's program with the other's libraries) with the
/// reference run (lld's program with lld's libraries); its problems say which run it was.
pub fn compare_mixed_run(ours: &Outcome, reference: &Outcome, label: &str, reference_label: &str, problems: &mut Vec<String>) {
    let mut found = Vec::new();
    compare_outcomes(ours, reference, label, reference_label, &mut found);
    problems.extend(found.into_iter().map(|f| format!("mixed run ({label}): {f}")));
}

/// Shows two outputs and where they first differ.
fn text_diff(ours: &[u8], theirs: &[u8], our_label: &str, their_label: &str) -> String {
    const LIMIT: usize = 2000;
    let show = |b: &[u8]| {
        let text = String::from_utf8_lossy(&b[..b.len().min(LIMIT)]).into_owned();
        let more = if b.len() > LIMIT { format!("\n  ... ({} bytes in all)", b.len()) } else { String::new() };
        text.lines().map(|l| format!("  | {l}\n")).collect::<String>() + &more
    };
    let a: Vec<&[u8]> = ours.split(|&c| c == b'\n').collect();
    let b: Vec<&[u8]> = theirs.split(|&c| c == b'\n').collect();
    let first = a.iter().zip(&b).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
    format!("  first difference at line {}\n  --- {our_label} ---\n{}  --- {their_label} ---\n{}", first + 1, show(ours), show(theirs))
}

// ---------------------------------------------------------------------------------------------
// Fingerprints (`fingerprint.rs` for ELF, `pe_fingerprint.rs` for PE): a map from key to JSON
// value, compared key by key.

pub type Fingerprint = BTreeMap<String, Value>;

/// The prefix of the keys of a shared library's (DLL's) fingerprint in a trial's combined
/// fingerprint.
pub fn library_prefix(name: &str) -> String {
    format!("lib:{name}:")
}

/// Splits `lib:<name>:<key>` into the library name and the plain key.
pub fn library_key(key: &str) -> Option<(&str, &str)> {
    key.strip_prefix("lib:")?.split_once(':')
}

/// Whether `key` is left out of the comparison: by a mode's `defaults` (which also apply to
/// every library's `lib:<name>:` keys) or by a fixture's `DiffIgnore` patterns (matched against
/// the full key, so `lib:libfoo.so:dynsym` names one library's key; `foo.*` matches `foo.bar`).
pub fn is_ignored(defaults: &[(&str, &str)], key: &str, extra: &[String]) -> bool {
    let matches = |key: &str, pattern: &str| match pattern.strip_suffix(".*") {
        Some(prefix) => key.starts_with(&format!("{prefix}.")),
        None => key == pattern,
    };
    let plain = library_key(key).map_or(key, |(_, k)| k);
    defaults.iter().any(|(k, _)| matches(plain, k)) || extra.iter().any(|k| matches(key, k))
}

/// Adds `lib`'s keys to `fp` under `prefix`.
pub fn extend_prefixed(fp: &mut Fingerprint, prefix: &str, lib: Fingerprint) {
    fp.extend(lib.into_iter().map(|(k, v)| (format!("{prefix}{k}"), v)));
}

/// Writes both fingerprints next to the trial (`fingerprint.dtld.json`, `fingerprint.lld.json`)
/// and describes every key, not ignored by `ignored`, whose values differ.
pub fn fingerprint_diffs(dir: &Path, ours: &Fingerprint, theirs: &Fingerprint, ignored: impl Fn(&str) -> bool) -> Result<Vec<String>, String> {
    for (name, fp) in [("fingerprint.dtld.json", ours), ("fingerprint.lld.json", theirs)] {
        let text = serde_json::to_string_pretty(fp).expect("fingerprint serialises");
        fs::write(dir.join(name), text).map_err(|e| e.to_string())?;
    }
    let mut diffs = Vec::new();
    let null = Value::Null;
    let keys: BTreeSet<&String> = ours.keys().chain(theirs.keys()).collect();
    for key in keys {
        if ignored(key) {
            continue;
        }
        let (a, b) = (ours.get(key).unwrap_or(&null), theirs.get(key).unwrap_or(&null));
        if a != b {
            diffs.push(format!("  {key}:\n{}", describe_diff(a, b)));
        }
    }
    Ok(diffs)
}

/// The problem for fingerprints that differ by `diffs` (none when they do not).
pub fn push_fingerprint_problem(diffs: Vec<String>, problems: &mut Vec<String>) {
    if !diffs.is_empty() {
        problems.push(format!(
            "fingerprints differ (silence a key with `//#DiffIgnore: <key> <reason>`; full \
             fingerprints in fingerprint.{{dtld,lld}}.json):\n{}",
            diffs.join("")
        ));
    }
}

/// Describes how two values of one key differ (multiset differences for lists).
pub fn describe_diff(ours: &Value, reference: &Value) -> String {
    match (ours, reference) {
        (Value::Array(a), Value::Array(b)) => {
            let mut only_a: Vec<&Value> = Vec::new();
            let mut rest_b: Vec<&Value> = b.iter().collect();
            for x in a {
                match rest_b.iter().position(|y| *y == x) {
                    Some(p) => {
                        rest_b.remove(p);
                    }
                    None => only_a.push(x),
                }
            }
            let show = |v: &[&Value]| v.iter().map(|x| format!("      {x}")).collect::<Vec<_>>().join("\n");
            let mut out = String::new();
            if !only_a.is_empty() {
                out.push_str(&format!("    only in dtld:\n{}\n", show(&only_a)));
            }
            if !rest_b.is_empty() {
                out.push_str(&format!("    only in ld.lld:\n{}\n", show(&rest_b)));
            }
            if out.is_empty() {
                out.push_str("    same elements, different order\n");
            }
            out
        }
        _ => format!("    dtld:   {ours}\n    ld.lld: {reference}\n"),
    }
}

/// A sorted list without repeats.
pub fn set<I: IntoIterator<Item = String>>(items: I) -> Value {
    let s: BTreeSet<String> = items.into_iter().collect();
    json!(s.into_iter().collect::<Vec<_>>())
}

/// The names of the bits set in `value` (`names` in order), then what is left, in hex.
pub fn bit_names(value: u64, names: &[(u64, &str)]) -> Value {
    let mut out = Vec::new();
    let mut rest = value;
    for &(bit, name) in names {
        if value & bit != 0 {
            out.push(name.to_string());
            rest &= !bit;
        }
    }
    if rest != 0 {
        out.push(format!("{rest:#x}"));
    }
    json!(out)
}

/// A little-endian u32 at `off`, if `data` holds one there.
pub fn read_u32(data: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_le_bytes(data.get(off..off + 4)?.try_into().ok()?))
}
