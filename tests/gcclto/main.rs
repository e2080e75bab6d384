//! Why this exists: `gcc -flto` links go through GCC's LTO plugin, which ld.lld cannot host, so
//! the differential harness (dtld against ld.lld-22, structural fingerprints of two lld-style
//! outputs) has no reference for them. Here GNU ld (`ld.bfd`, GCC's own linker) is the
//! reference and mold a second opinion. Each fixture in `fixtures/gcc-lto/` (directives in
//! fixtures/README.md, "GCC LTO fixtures") is compiled once with `gcc -flto` (`g++` for C++,
//! archives with `gcc-ar`), then every shared library and the program are linked by the same
//! gcc command three times — with dtld (`-B<dir>` holding `ld` → dtld), with GNU ld
//! (`-fuse-ld=bfd`) and with mold (`-fuse-ld=mold`), each in a directory of its own, with
//! `-save-temps` so GCC keeps its LTO files. Then:
//!
//! * the programs run; exit status, stdout and stderr must equal GNU ld's program's (which must
//!   exit 0: the fixtures check themselves), and mold's too when mold links the fixture;
//! * for every link, the resolution file the plugin wrote from dtld's answers (`<out>.res`)
//!   must equal GNU ld's: the files in the same order (the order the plugin claimed them,
//!   which is the order GCC reads them in), and the same lines for each file, except that where GNU ld says
//!   `UNDEF` for a reference bound to a *versioned* definition in a shared library (a quirk of
//!   its hash table: `_Znwm@@GLIBCXX_3.4` does not answer for `_Znwm`), dtld says `RESOLVED_DYN`
//!   as mold does; both mean "not in this link unit" to GCC;
//! * the objects GCC compiled for dtld (`<out>.ltrans<N>.ltrans.o`) must be byte-identical to the
//!   ones it compiled for GNU ld, debug sections aside (they name the link's directory and the
//!   driver's `-fuse-ld=`): the strongest evidence that the plugin was told the same thing and
//!   GCC optimized the same way; on a difference, the section sizes are reported;
//! * every output's DT_NEEDED list and set of exported (defined dynamic) symbols must be GNU
//!   ld's, except `_edata`, `_end`, `__bss_start`, `_init`, `_fini` (GNU ld's own).
//!
//! Besides the fixtures: a slim object linked without the plugin (dtld run directly) and GCC IR
//! mixed with LLVM bitcode must fail with dtld's clear error (exit 1, no output; GNU ld fails
//! on the latter too, and links the former only because it loads `/usr/lib/bfd-plugins/*`
//! unasked); an lto-wrapper failure must fail the link cleanly; fat objects linked without the plugin
//! use their native code; `-r` with GCC IR (merged IR, and `nolto-rel` when native objects are
//! mixed in) against GNU ld's `-r`; and `-flto=jobserver` under `make -j2` must find make's
//! jobserver through dtld.
//!
//! Every trial works in `<target>/gcc-lto-tests/<trial>/`, recreated for each run and deleted
//! when the trial passes (kept on failure, or always with `DTLD_HARNESS_KEEP=1`).
//! Environment: `DTLD` (linker under test, default `<target>/release/dtld`).

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use dtld_tests::trial::{run_in, TrialDir};
use dtld_tests::{find_dtld, run_with_timeout, split_words, target_dir, workspace_root, wrapper_dir, Outcome, CLANG, GCC, GXX};
use libtest_mimic::{Arguments, Failed, Trial};

const GCC_AR: &str = "gcc-ar";
const BFD: &str = "ld.bfd";
const MOLD: &str = "mold";
const RUN_TIMEOUT: Duration = Duration::from_secs(10);

struct Context {
    dtld: PathBuf,
    /// Holds `ld`, a wrapper that runs dtld (`gcc -B<dir>/`).
    dtld_dir: PathBuf,
    root: PathBuf,
    keep: bool,
    /// mold is installed (it is a second opinion, not the reference).
    mold: bool,
}

impl Context {
    fn new() -> Result<Context, String> {
        dtld_tests::check_tools(&[GCC, GXX, GCC_AR, BFD])?;
        let dtld = find_dtld()?;
        let root = target_dir().join("gcc-lto-tests");
        let dtld_dir = wrapper_dir(&root.join(".tools"), "ld", &dtld).map_err(|e| format!("cannot set up {}: {e}", root.display()))?;
        Ok(Context {
            dtld,
            dtld_dir,
            root,
            keep: std::env::var("DTLD_HARNESS_KEEP").is_ok_and(|v| !v.is_empty() && v != "0"),
            mold: dtld_tests::find_in_path(MOLD).is_some(),
        })
    }
}

/// The three linkers, in the order they link (the reference first).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Linker {
    Bfd,
    Dtld,
    Mold,
}

impl Linker {
    fn name(self) -> &'static str {
        match self {
            Linker::Bfd => "bfd",
            Linker::Dtld => "dtld",
            Linker::Mold => "mold",
        }
    }
    /// The gcc flag that selects this linker.
    fn flag(self, ctx: &Context) -> OsString {
        match self {
            Linker::Bfd => "-fuse-ld=bfd".into(),
            Linker::Mold => "-fuse-ld=mold".into(),
            Linker::Dtld => {
                let mut s = OsString::from("-B");
                s.push(&ctx.dtld_dir);
                s.push("/");
                s
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Fixtures.

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Pie,
    NoPie,
    Static,
}

impl Mode {
    fn parse(s: &str) -> Option<Mode> {
        match s {
            "pie" => Some(Mode::Pie),
            "nopie" => Some(Mode::NoPie),
            "static" => Some(Mode::Static),
            _ => None,
        }
    }
    fn name(self) -> &'static str {
        match self {
            Mode::Pie => "pie",
            Mode::NoPie => "nopie",
            Mode::Static => "static",
        }
    }
    fn compile_flag(self) -> &'static str {
        match self {
            Mode::Pie => "-fPIE",
            _ => "-fno-pic",
        }
    }
    fn link_flag(self) -> &'static str {
        match self {
            Mode::Pie => "-pie",
            Mode::NoPie => "-no-pie",
            Mode::Static => "-static",
        }
    }
}

/// Sources with their own compile flags.
#[derive(Default, Clone)]
struct Group {
    files: Vec<PathBuf>,
    flags: Vec<String>,
}

struct Library {
    name: String,
    sources: Group,
    link_args: Vec<String>,
}

struct Fixture {
    name: String,
    dir: PathBuf,
    primary: PathBuf,
    modes: Vec<Mode>,
    cflags: Vec<String>,
    objects: Vec<Group>,
    /// (thin, archive name, members).
    archives: Vec<(bool, String, Group)>,
    libraries: Vec<Library>,
    link_args: Vec<String>,
    /// `//#Mold: skip <reason>`.
    mold_skip: Option<String>,
}

fn is_cxx(p: &Path) -> bool {
    matches!(p.extension().and_then(|e| e.to_str()), Some("cc" | "cpp"))
}

impl Fixture {
    fn is_cxx(&self) -> bool {
        is_cxx(&self.primary) || self.objects.iter().chain(self.archives.iter().map(|(_, _, g)| g)).any(|g| g.files.iter().any(|f| is_cxx(f)))
    }

    /// Parses `//#Key: value` lines of the primary file.
    fn parse(name: &str, dir: &Path) -> Result<Fixture, String> {
        let primary = ["main.c", "main.cc"].iter().map(|f| dir.join(f)).find(|p| p.is_file()).ok_or_else(|| format!("{name}: no main.c or main.cc"))?;
        let text = fs::read_to_string(&primary).map_err(|e| format!("{}: {e}", primary.display()))?;
        let mut fx = Fixture {
            name: name.to_string(),
            dir: dir.to_path_buf(),
            primary: primary.clone(),
            modes: vec![Mode::Pie, Mode::NoPie],
            cflags: Vec::new(),
            objects: Vec::new(),
            archives: Vec::new(),
            libraries: Vec::new(),
            link_args: Vec::new(),
            mold_skip: None,
        };
        let group = |words: &[String]| -> Result<Group, String> {
            let mut g = Group::default();
            for w in words {
                if w.starts_with('-') {
                    g.flags.push(w.replace("$SRC", &dir.to_string_lossy()));
                } else {
                    let p = dir.join(w);
                    if !p.is_file() {
                        return Err(format!("{name}: no source {w}"));
                    }
                    g.files.push(p);
                }
            }
            Ok(g)
        };
        for (n, line) in text.lines().enumerate() {
            let Some(rest) = line.trim_start().strip_prefix("//#") else {
                continue;
            };
            let at = |e: String| format!("{}:{}: {e}", primary.display(), n + 1);
            let (key, value) = rest.split_once(':').ok_or_else(|| at("expected `//#Key: value`".into()))?;
            let words = split_words(value).map_err(at)?;
            match key.trim() {
                "Modes" => fx.modes = words.iter().map(|w| Mode::parse(w).ok_or_else(|| at(format!("unknown mode {w}")))).collect::<Result<_, _>>()?,
                "CFlags" => fx.cflags.extend(words),
                "Object" => fx.objects.push(group(&words).map_err(at)?),
                "LinkArgs" => fx.link_args.extend(words),
                "Mold" => fx.mold_skip = Some(value.trim().to_string()),
                k @ ("Archive" | "ThinArchive" | "Shared") => {
                    let (lib, srcs) = value.split_once(':').ok_or_else(|| at(format!("expected `{k}: libname: sources`")))?;
                    let lib = lib.trim().to_string();
                    let words = split_words(srcs).map_err(at)?;
                    if k == "Shared" {
                        let (srcs, link) = match words.iter().position(|w| w == "--") {
                            Some(p) => (&words[..p], words[p + 1..].to_vec()),
                            None => (&words[..], Vec::new()),
                        };
                        fx.libraries.push(Library { name: lib, sources: group(srcs).map_err(at)?, link_args: link });
                    } else {
                        fx.archives.push((k == "ThinArchive", lib, group(&words).map_err(at)?));
                    }
                }
                k => return Err(at(format!("unknown directive `{k}`"))),
            }
        }
        Ok(fx)
    }
}

fn discover() -> Result<Vec<Fixture>, String> {
    let root = workspace_root().join("fixtures").join("gcc-lto");
    let mut names: Vec<String> = fs::read_dir(&root)
        .map_err(|e| format!("{}: {e}", root.display()))?
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names.iter().map(|n| Fixture::parse(n, &root.join(n))).collect()
}

// ---------------------------------------------------------------------------------------------
// Trials.

fn main() {
    let args = Arguments::from_args();
    let _lock = dtld_tests::lock_target_subdir("gcc-lto-tests", "GCC LTO test");
    let ctx = Context::new().map(Arc::new);
    let mut trials = Vec::new();
    match discover() {
        Ok(fixtures) => {
            for fx in fixtures {
                let fx = Arc::new(fx);
                for &mode in &fx.modes {
                    let (ctx, fx) = (ctx.clone(), fx.clone());
                    trials.push(Trial::test(format!("gcc-lto/{}/{}", fx.name, mode.name()), move || {
                        let ctx = ctx.map_err(Failed::from)?;
                        let dir = ctx.root.join(&fx.name).join(mode.name());
                        finish(&ctx, &dir, |w| fixture_trial(w, &fx, mode)).map_err(Failed::from)
                    }));
                }
            }
        }
        Err(e) => trials.push(Trial::test("gcc-lto/discover", move || Err(e.into()))),
    }
    type Check = fn(&mut Work) -> Result<(), String>;
    let special: [(&str, Check); 6] = [
        ("errors/no-plugin", no_plugin),
        ("errors/llvm-bitcode", llvm_bitcode),
        ("errors/lto-wrapper-fails", lto_wrapper_fails),
        ("fat-without-plugin", fat_without_plugin),
        ("relocatable", relocatable),
        ("jobserver", jobserver),
    ];
    for (name, f) in special {
        let ctx = ctx.clone();
        trials.push(Trial::test(format!("gcc-lto/{name}"), move || {
            let ctx = ctx.map_err(Failed::from)?;
            let dir = ctx.root.join(name.replace('/', "-"));
            finish(&ctx, &dir, f).map_err(Failed::from)
        }));
    }
    libtest_mimic::run(&args, trials).exit();
}

/// A trial's working state: the shared trial directory and command log (`dtld_tests::trial`),
/// this target's context, and the problems found so far (a trial reports all of them).
struct Work<'a> {
    ctx: &'a Context,
    t: &'a TrialDir,
    problems: Vec<String>,
}

impl std::ops::Deref for Work<'_> {
    type Target = TrialDir;
    fn deref(&self) -> &TrialDir {
        self.t
    }
}

impl Work<'_> {
    /// A command run in `dir` (a subdirectory of the trial, or the fixture's sources).
    fn cmd_in(&self, program: impl AsRef<std::ffi::OsStr>, dir: &Path) -> Command {
        let mut c = Command::new(program);
        c.current_dir(dir);
        c
    }
    fn problem(&mut self, p: String) {
        self.problems.push(p);
    }
}

fn finish(ctx: &Context, dir: &Path, f: impl FnOnce(&mut Work) -> Result<(), String>) -> Result<(), String> {
    run_in(dir, ctx.keep, &[], |t| {
        let mut w = Work { ctx, t, problems: Vec::new() };
        let mut problems = match f(&mut w) {
            Err(e) => vec![e],
            Ok(()) => Vec::new(),
        };
        problems.append(&mut w.problems);
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("\n"))
        }
    })?;
    // The fixture's directory, once its last mode is done (fails while others remain).
    if !ctx.keep {
        if let Some(parent) = dir.parent().filter(|p| *p != ctx.root) {
            let _ = fs::remove_dir(parent);
        }
    }
    Ok(())
}

/// Compiles `src` into `dir/<subdir><stem>.o` with gcc (g++ for C++) and `flags`; returns the
/// object's path relative to `dir`.
fn compile(w: &mut Work, src: &Path, flags: &[String], subdir: &str) -> Result<String, String> {
    let stem = src.file_stem().unwrap_or_default().to_string_lossy().into_owned();
    let rel = format!("{subdir}{stem}.o");
    if let Some(parent) = w.dir.join(&rel).parent() {
        fs::create_dir_all(parent).map_err(|e| e.to_string())?;
    }
    let mut c = w.cmd_in(if is_cxx(src) { GXX } else { GCC }, &w.dir.clone());
    c.arg("-c").args(flags).arg(src).arg("-o").arg(&rel);
    w.ok(&mut c)?;
    Ok(rel)
}

fn is_gcc_ir(path: &Path) -> bool {
    let Ok(data) = fs::read(path) else {
        return false;
    };
    goblin::elf::Elf::parse(&data)
        .is_ok_and(|e| e.section_headers.iter().any(|s| e.shdr_strtab.get_at(s.sh_name).is_some_and(|n| n.starts_with(".gnu.lto_.symtab"))))
}

/// What one linker produced for one fixture.
struct SideResult {
    linker: Linker,
    /// The link that failed first: (output, gcc's outcome).
    failed: Option<(String, Outcome)>,
    run: Option<Outcome>,
}

fn fixture_trial(w: &mut Work, fx: &Fixture, mode: Mode) -> Result<(), String> {
    // Compile once.
    let base = |pic: &str| -> Vec<String> {
        let mut f: Vec<String> = vec!["-O2".into(), "-flto".into(), pic.into()];
        f.extend(fx.cflags.iter().cloned());
        f
    };
    let prog_flags = |g: &Group| [base(mode.compile_flag()), g.flags.clone()].concat();
    let mut inputs = vec![compile(w, &fx.primary, &prog_flags(&Group::default()), "")?];
    for g in &fx.objects {
        for s in &g.files {
            inputs.push(compile(w, s, &prog_flags(g), "")?);
        }
    }
    for (thin, name, g) in &fx.archives {
        let mut objs = Vec::new();
        for s in &g.files {
            objs.push(compile(w, s, &prog_flags(g), &format!("{name}.objs/"))?);
        }
        let mut ar = w.cmd_in(GCC_AR, &w.dir.clone());
        ar.arg(if *thin { "rcsT" } else { "rcs" }).arg(name).args(&objs);
        w.ok(&mut ar)?;
        inputs.push(name.clone());
    }
    let mut lib_objs = Vec::new();
    for lib in &fx.libraries {
        let mut objs = Vec::new();
        for s in &lib.sources.files {
            objs.push(compile(w, s, &[base("-fPIC"), lib.sources.flags.clone()].concat(), &format!("{}.objs/", lib.name))?);
        }
        lib_objs.push(objs);
    }
    if !inputs.iter().any(|i| is_gcc_ir(&w.dir.join(i))) {
        return Err("no source of the program was compiled to GCC LTO IR".into());
    }

    let driver = if fx.is_cxx() { GXX } else { GCC };
    let mut linkers = vec![Linker::Bfd, Linker::Dtld];
    if w.ctx.mold && fx.mold_skip.is_none() {
        linkers.push(Linker::Mold);
    }
    let mut results = Vec::new();
    for &linker in &linkers {
        let side = w.dir.join(linker.name());
        fs::create_dir_all(&side).map_err(|e| e.to_string())?;
        let subst = |a: &String| a.replace("$SRC", &fx.dir.to_string_lossy()).replace("$DIR", &side.to_string_lossy());
        let mut failed = None;
        for (i, lib) in fx.libraries.iter().enumerate() {
            let mut c = w.cmd_in(driver, &side);
            c.arg("-flto").arg("-save-temps").arg(linker.flag(w.ctx)).arg("-shared").arg(format!("-Wl,-soname,{}", lib.name));
            c.args(lib_objs[i].iter().map(|o| format!("../{o}"))).arg("-o").arg(&lib.name).args(lib.link_args.iter().map(subst));
            let out = w.run(&mut c)?;
            if !out.success() {
                failed = Some((lib.name.clone(), out));
                break;
            }
        }
        if failed.is_none() {
            let mut c = w.cmd_in(driver, &side);
            c.arg("-flto").arg("-save-temps").arg(linker.flag(w.ctx)).arg(mode.link_flag());
            c.args(inputs.iter().map(|i| format!("../{i}"))).args(fx.libraries.iter().map(|l| &l.name)).arg("-o").arg("prog");
            c.args(fx.link_args.iter().map(subst));
            let out = w.run(&mut c)?;
            if !out.success() {
                failed = Some(("prog".into(), out));
            }
        }
        let run = if failed.is_none() {
            let mut c = Command::new(side.join("prog"));
            c.current_dir(&side).env("LD_LIBRARY_PATH", &side);
            w.note(&c);
            Some(run_with_timeout(&mut c, b"", RUN_TIMEOUT).map_err(|e| format!("cannot run {}: {e}", side.join("prog").display()))?)
        } else {
            None
        };
        results.push(SideResult { linker, failed, run });
    }

    let reference = &results[0];
    if let Some((out, o)) = &reference.failed {
        return Err(format!("GNU ld's link of {out} failed (a broken fixture?):\n{}", o.stderr_text()));
    }
    let ref_run = reference.run.as_ref().expect("reference ran");
    if !ref_run.success() {
        return Err(format!(
            "GNU ld's program {} (a broken fixture?):\n{}{}",
            ref_run.status_text(),
            String::from_utf8_lossy(&ref_run.stdout),
            ref_run.stderr_text()
        ));
    }
    for r in &results[1..] {
        let who = r.linker.name();
        if let Some((out, o)) = &r.failed {
            if r.linker == Linker::Mold {
                eprintln!("note: gcc-lto/{}/{}: mold could not link {out} (not dtld's problem):\n{}", fx.name, mode.name(), o.stderr_text());
                continue;
            }
            w.problem(format!("{who}'s link of {out} failed:\n{}", o.stderr_text()));
            continue;
        }
        let run = r.run.as_ref().expect("ran");
        if run.status_text() != ref_run.status_text() || run.stdout != ref_run.stdout || run.stderr != ref_run.stderr {
            w.problem(format!(
                "{who}'s program behaves differently from GNU ld's: {} vs {}\n--- {who} stdout:\n{}--- bfd stdout:\n{}--- {who} stderr:\n{}--- bfd stderr:\n{}",
                run.status_text(),
                ref_run.status_text(),
                String::from_utf8_lossy(&run.stdout),
                String::from_utf8_lossy(&ref_run.stdout),
                run.stderr_text(),
                ref_run.stderr_text()
            ));
        }
    }
    if results[1].failed.is_some() {
        return Ok(());
    }
    // What GCC was told, and what it compiled, for each link.
    let outputs: Vec<String> = fx.libraries.iter().map(|l| l.name.clone()).chain(["prog".to_string()]).collect();
    let (bfd, dtld) = (w.dir.join("bfd"), w.dir.join("dtld"));
    for out in &outputs {
        compare_resolutions(w, &bfd, &dtld, out)?;
        compare_ltrans(w, &bfd, &dtld, out)?;
        compare_dynamic(w, &bfd, &dtld, out)?;
    }
    Ok(())
}

/// DT_NEEDED and the names of the defined dynamic symbols (what LTO kept exported), without
/// the few symbols GNU ld defines on its own in shared objects.
fn dynamic_view(path: &Path) -> Result<(Vec<String>, BTreeSet<String>), String> {
    let data = fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let elf = goblin::elf::Elf::parse(&data).map_err(|e| format!("goblin cannot parse {}: {e}", path.display()))?;
    let needed = elf.libraries.iter().map(|s| s.to_string()).collect();
    let linker_own = ["_edata", "_end", "__bss_start", "_init", "_fini"];
    let exported = elf
        .dynsyms
        .iter()
        .filter(|s| s.st_shndx != 0)
        .filter_map(|s| elf.dynstrtab.get_at(s.st_name))
        .filter(|n| !n.is_empty() && !linker_own.contains(n))
        .map(str::to_string)
        .collect();
    Ok((needed, exported))
}

fn compare_dynamic(w: &mut Work, bfd: &Path, dtld: &Path, out: &str) -> Result<(), String> {
    let (tn, te) = dynamic_view(&bfd.join(out))?;
    let (on, oe) = dynamic_view(&dtld.join(out))?;
    if tn != on {
        w.problem(format!("{out}: DT_NEEDED {on:?} with dtld, {tn:?} with GNU ld"));
    }
    if te != oe {
        w.problem(format!(
            "{out}: exported symbols differ: only with dtld {:?}, only with GNU ld {:?}",
            oe.difference(&te).collect::<Vec<_>>(),
            te.difference(&oe).collect::<Vec<_>>()
        ));
    }
    Ok(())
}

/// `<out>.res` as (file → set of `slot id RESOLUTION name` lines). GNU ld's quirk (see the
/// top of this file) is folded: `UNDEF` on the reference side may be `RESOLVED_DYN` here.
type Resolutions = (Vec<String>, BTreeMap<String, BTreeSet<String>>);

fn read_res(path: &Path) -> Result<Resolutions, String> {
    let text = fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut lines = text.lines();
    let count: usize = lines.next().and_then(|l| l.trim().parse().ok()).ok_or_else(|| format!("{}: no file count", path.display()))?;
    let mut files = BTreeMap::new();
    let mut order = Vec::new();
    for _ in 0..count {
        let head = lines.next().ok_or_else(|| format!("{}: truncated", path.display()))?;
        let (name, n) = head.rsplit_once(' ').ok_or_else(|| format!("{}: bad line {head}", path.display()))?;
        let n: usize = n.parse().map_err(|_| format!("{}: bad line {head}", path.display()))?;
        let mut set = BTreeSet::new();
        for _ in 0..n {
            set.insert(lines.next().ok_or_else(|| format!("{}: truncated", path.display()))?.to_string());
        }
        files.insert(name.to_string(), set);
        order.push(name.to_string());
    }
    Ok((order, files))
}

fn compare_resolutions(w: &mut Work, bfd: &Path, dtld: &Path, out: &str) -> Result<(), String> {
    let (their_order, theirs) = read_res(&bfd.join(format!("{out}.res")))?;
    let (our_order, ours) = read_res(&dtld.join(format!("{out}.res")))?;
    let mut diffs = Vec::new();
    // The plugin lists files in the order it claimed them, which is the order GCC reads them.
    if their_order != our_order && theirs.keys().eq(ours.keys()) {
        diffs.push(format!("  the plugin claimed the files in another order:\n    dtld:   {our_order:?}\n    GNU ld: {their_order:?}"));
    }
    let names: BTreeSet<&String> = theirs.keys().chain(ours.keys()).collect();
    for name in names {
        let (t, o) = (theirs.get(name), ours.get(name));
        let (Some(t), Some(o)) = (t, o) else {
            diffs.push(format!("  {name}: {}", if t.is_none() { "claimed only with dtld" } else { "claimed only with GNU ld" }));
            continue;
        };
        let folded: BTreeSet<String> = o
            .iter()
            .map(|l| {
                let undef = l.replacen(" RESOLVED_DYN ", " UNDEF ", 1);
                if l.contains(" RESOLVED_DYN ") && t.contains(&undef) {
                    undef
                } else {
                    l.clone()
                }
            })
            .collect();
        for l in t.difference(&folded) {
            diffs.push(format!("  {name}: GNU ld: {l}"));
        }
        for l in folded.difference(t) {
            diffs.push(format!("  {name}: dtld:   {l}"));
        }
    }
    if !diffs.is_empty() {
        diffs.truncate(30);
        w.problem(format!("{out}: the resolutions dtld gave GCC's plugin differ from GNU ld's ({out}.res):\n{}", diffs.join("\n")));
    }
    Ok(())
}

/// The names of a link's LTRANS objects (`<out>.ltrans<N>.ltrans.o`, kept by `-save-temps`).
fn ltrans_objects(dir: &Path, out: &str) -> Result<BTreeSet<String>, String> {
    let re = regex::Regex::new(&format!(r"^{}\.ltrans\d+\.ltrans\.o$", regex::escape(out))).expect("regex");
    Ok(fs::read_dir(dir).map_err(|e| e.to_string())?.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).filter(|n| re.is_match(n)).collect())
}

/// Section name → size of an object (for a readable message when objects differ).
fn section_sizes(data: &[u8]) -> BTreeMap<String, u64> {
    let Ok(elf) = goblin::elf::Elf::parse(data) else {
        return BTreeMap::new();
    };
    elf.section_headers.iter().filter(|s| s.sh_size > 0).filter_map(|s| Some((elf.shdr_strtab.get_at(s.sh_name)?.to_string(), s.sh_size))).collect()
}

/// The object without its debug sections (`objcopy --strip-debug`), as bytes.
fn strip_debug(w: &mut Work, obj: &Path) -> Result<Vec<u8>, String> {
    let out = obj.with_extension("nodebug.o");
    let mut c = w.cmd_in("objcopy", &w.dir.clone());
    c.arg("--strip-debug").arg(obj).arg(&out);
    w.ok(&mut c)?;
    fs::read(&out).map_err(|e| format!("cannot read {}: {e}", out.display()))
}

fn compare_ltrans(w: &mut Work, bfd: &Path, dtld: &Path, out: &str) -> Result<(), String> {
    let theirs = ltrans_objects(bfd, out)?;
    let ours = ltrans_objects(dtld, out)?;
    if theirs.is_empty() {
        return Err(format!("GNU ld's link of {out} left no LTRANS object (-save-temps)"));
    }
    if theirs != ours {
        w.problem(format!("{out}: GCC compiled other LTRANS partitions for dtld: {ours:?} vs GNU ld's {theirs:?}"));
        return Ok(());
    }
    for name in &theirs {
        // Debug information names the directory of the link and the driver's options
        // (`-fuse-ld=bfd`), which differ by design: compare without it.
        let (o, t) = (&strip_debug(w, &dtld.join(name))?, &strip_debug(w, &bfd.join(name))?);
        if o != t {
            let (so, st) = (section_sizes(o), section_sizes(t));
            let diff: Vec<String> =
                st.iter().filter(|(k, v)| so.get(*k) != Some(v)).map(|(k, v)| format!("{k}: {v} with GNU ld, {:?} with dtld", so.get(k))).collect();
            w.problem(format!(
                "{out}: {name} differs from GNU ld's ({} vs {} bytes; sections: {})",
                o.len(),
                t.len(),
                if diff.is_empty() { "same sizes".into() } else { diff.join(", ") }
            ));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The other trials.

const MAIN_C: &str = "int helper(int);\nint main(void) { return helper(2) - 42; }\n";
const HELPER_C: &str = "int helper(int x) { return x * 21; }\n";

fn write(w: &Work, name: &str, text: &str) -> Result<(), String> {
    fs::write(w.dir.join(name), text).map_err(|e| e.to_string())
}

fn gcc_c(w: &mut Work, src: &str, flags: &[&str]) -> Result<String, String> {
    let obj = src.replace(".c", ".o");
    let mut c = w.cmd_in(GCC, &w.dir.clone());
    c.args(["-O2", "-c"]).args(flags).arg(src).arg("-o").arg(&obj);
    w.ok(&mut c)?;
    Ok(obj)
}

/// A failing link: exit 1 (the linker's own, through collect2's message when gcc drove it), the
/// expected message, and no output left.
fn expect_failure(w: &mut Work, who: &str, o: &Outcome, out: &Path, needle: &str) {
    let err = o.stderr_text();
    if o.success() {
        w.problem(format!("{who}: the link succeeded, expected a failure"));
        return;
    }
    if !needle.is_empty() && !err.contains(needle) {
        w.problem(format!("{who}: expected `{needle}` in:\n{err}"));
    }
    if out.exists() {
        w.problem(format!("{who}: failed but left {}", out.display()));
    }
}

/// A slim GCC LTO object given to dtld without GCC's plugin.
fn no_plugin(w: &mut Work) -> Result<(), String> {
    write(w, "main.c", MAIN_C)?;
    write(w, "helper.c", HELPER_C)?;
    let (m, h) = (gcc_c(w, "main.c", &["-flto"])?, gcc_c(w, "helper.c", &["-flto"])?);
    let dtld = w.ctx.dtld.clone();
    let mut c = w.cmd_in(&dtld, &w.dir.clone());
    c.args([&m, &h, "-o", "out.dtld"]);
    let o = w.run(&mut c)?;
    if o.status_text() != "exit 1" {
        w.problem(format!("dtld: {}, expected exit 1", o.status_text()));
    }
    let out = w.dir.join("out.dtld");
    expect_failure(w, "dtld", &o, &out, "main.o: this object holds only GCC LTO IR (it was compiled with gcc -flto) and needs GCC's LTO plugin");
    if !o.stderr_text().contains("helper.o: this object holds only GCC LTO IR") {
        w.problem(format!("dtld names every slim object:\n{}", o.stderr_text()));
    }
    if o.stderr_text().contains("undefined symbol") {
        w.problem(format!("dtld reports undefined symbols besides the real problem:\n{}", o.stderr_text()));
    }
    // (GNU ld is no reference here: it loads every plugin in /usr/lib/bfd-plugins by itself,
    // GCC's included, so it links these. dtld loads only what -plugin names.)
    // LLVMgold.so is not GCC's plugin either.
    let mut c = w.cmd_in(&dtld, &w.dir.clone());
    c.args(["-plugin", "/usr/lib/llvm-22/lib/LLVMgold.so", &m, &h, "-o", "out2.dtld"]);
    let o = w.run(&mut c)?;
    let out = w.dir.join("out2.dtld");
    expect_failure(w, "dtld with LLVMgold.so", &o, &out, "but the plugin given, /usr/lib/llvm-22/lib/LLVMgold.so, is not GCC's");
    Ok(())
}

/// GCC IR and LLVM bitcode in one `gcc -flto` link.
fn llvm_bitcode(w: &mut Work) -> Result<(), String> {
    write(w, "main.c", MAIN_C)?;
    write(w, "helper.c", HELPER_C)?;
    let m = gcc_c(w, "main.c", &["-flto"])?;
    let mut c = w.cmd_in(CLANG, &w.dir.clone());
    c.args(["-O2", "-flto=thin", "-c", "helper.c", "-o", "helper.o"]);
    w.ok(&mut c)?;
    for linker in [Linker::Dtld, Linker::Bfd] {
        let out = format!("prog.{}", linker.name());
        let mut c = w.cmd_in(GCC, &w.dir.clone());
        c.arg("-flto").arg(linker.flag(w.ctx)).args([&m, "helper.o", "-o", &out]);
        let o = w.run(&mut c)?;
        let needle = if linker == Linker::Dtld { "main.o: GCC LTO object and LLVM bitcode (helper.o) in one link" } else { "" };
        let path = w.dir.join(&out);
        expect_failure(w, linker.name(), &o, &path, needle);
    }
    Ok(())
}

/// lto-wrapper fails (an option it rejects): a clean failure.
fn lto_wrapper_fails(w: &mut Work) -> Result<(), String> {
    write(w, "main.c", MAIN_C)?;
    write(w, "helper.c", HELPER_C)?;
    let (m, h) = (gcc_c(w, "main.c", &["-flto"])?, gcc_c(w, "helper.c", &["-flto"])?);
    for linker in [Linker::Dtld, Linker::Bfd] {
        let out = format!("prog.{}", linker.name());
        let mut c = w.cmd_in(GCC, &w.dir.clone());
        c.arg("-flto").arg(linker.flag(w.ctx)).args(["-Wl,-plugin-opt=-fno-such-option-for-lto", &m, &h, "-o", &out]);
        let o = w.run(&mut c)?;
        let needle = if linker == Linker::Dtld { "dtld: error: GCC LTO: lto-wrapper failed" } else { "lto-wrapper failed" };
        let path = w.dir.join(&out);
        expect_failure(w, linker.name(), &o, &path, needle);
        if linker == Linker::Dtld && !o.stderr_text().contains("-fno-such-option-for-lto") {
            w.problem(format!("GCC's own diagnostic did not reach the user:\n{}", o.stderr_text()));
        }
    }
    let left: Vec<String> = fs::read_dir(&w.dir)
        .map_err(|e| e.to_string())?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("ltrans") || n.contains("dtld-"))
        .collect();
    if !left.is_empty() {
        w.problem(format!("temporaries left behind: {left:?}"));
    }
    Ok(())
}

fn run_prog(w: &mut Work, prog: &str) -> Result<Outcome, String> {
    let mut c = Command::new(w.dir.join(prog));
    c.current_dir(&w.dir);
    w.note(&c);
    run_with_timeout(&mut c, b"", RUN_TIMEOUT).map_err(|e| format!("cannot run {prog}: {e}"))
}

/// Fat LTO objects linked without the plugin (`-fno-use-linker-plugin`: collect2 passes none)
/// use their native code; with it, their IR.
fn fat_without_plugin(w: &mut Work) -> Result<(), String> {
    write(w, "main.c", MAIN_C)?;
    write(w, "helper.c", HELPER_C)?;
    let (m, h) = (gcc_c(w, "main.c", &["-flto", "-ffat-lto-objects"])?, gcc_c(w, "helper.c", &["-flto", "-ffat-lto-objects"])?);
    for (how, flags) in [("native", &["-fno-use-linker-plugin"][..]), ("ir", &["-flto", "-save-temps"][..])] {
        let mut runs = Vec::new();
        for linker in [Linker::Bfd, Linker::Dtld] {
            let out = format!("prog-{how}.{}", linker.name());
            let mut c = w.cmd_in(GCC, &w.dir.clone());
            c.args(flags).arg(linker.flag(w.ctx)).args([&m, &h, "-o", &out]);
            let o = w.run(&mut c)?;
            if !o.success() {
                w.problem(format!("{} ({how}): link failed:\n{}", linker.name(), o.stderr_text()));
                continue;
            }
            runs.push(run_prog(w, &out)?.status_text());
        }
        if runs != ["exit 0", "exit 0"] {
            w.problem(format!("{how}: the programs ended {runs:?}, expected exit 0 from both"));
        }
    }
    // With the plugin, GCC compiled the IR for dtld (an LTRANS object exists); without, nothing
    // was compiled at link time.
    if !w.dir.join("prog-ir.dtld.ltrans0.ltrans.o").is_file() {
        w.problem("with the plugin, dtld's link of fat objects did not go through LTO".into());
    }
    Ok(())
}

/// `-r` with GCC IR: GNU ld hands the plugin `LDPO_REL`, and lto-wrapper merges the IR into one
/// GCC LTO object (`-flinker-output=rel`), or compiles it when native objects are mixed in
/// (`nolto-rel`, with GCC's warning).
fn relocatable(w: &mut Work) -> Result<(), String> {
    write(w, "main.c", MAIN_C)?;
    write(w, "helper.c", "int twice(int);\nint helper(int x) { return twice(x) * 21 / 2; }\n")?;
    write(w, "twice.c", "int twice(int x) { return x + x; }\n")?;
    let m = gcc_c(w, "main.c", &["-flto"])?;
    let h = gcc_c(w, "helper.c", &["-flto"])?;
    let t = gcc_c(w, "twice.c", &["-flto"])?;
    let mut c = w.cmd_in(GCC, &w.dir.clone());
    c.args(["-O2", "-c", "twice.c", "-o", "twice-native.o"]);
    w.ok(&mut c)?;
    for (case, second, ir) in [("ir", t.as_str(), true), ("mixed", "twice-native.o", false)] {
        let mut runs = Vec::new();
        for linker in [Linker::Bfd, Linker::Dtld] {
            let r = format!("r-{case}.{}.o", linker.name());
            let mut c = w.cmd_in(GCC, &w.dir.clone());
            c.arg("-flto").arg(linker.flag(w.ctx)).args(["-r", &h, second, "-o", &r]);
            let o = w.run(&mut c)?;
            if !o.success() {
                w.problem(format!("{} -r ({case}) failed:\n{}", linker.name(), o.stderr_text()));
                continue;
            }
            // GNU ld prints the plugin's warnings on stdout, dtld on stderr.
            let said = format!("{}{}", String::from_utf8_lossy(&o.stdout), o.stderr_text());
            if said.contains("incremental linking of LTO and non-LTO objects") == ir {
                w.problem(format!("{} -r ({case}): GCC's nolto-rel warning {}expected:\n{}", linker.name(), if ir { "not " } else { "" }, o.stderr_text()));
            }
            if is_gcc_ir(&w.dir.join(&r)) != ir {
                w.problem(format!("{} -r ({case}): the output {} GCC IR", linker.name(), if ir { "lacks" } else { "still holds" }));
            }
            // The final link, by GNU ld for both, so only the -r output differs.
            let prog = format!("prog-{case}.{}", linker.name());
            let mut c = w.cmd_in(GCC, &w.dir.clone());
            c.arg("-flto").arg("-fuse-ld=bfd").args([&m, &r, "-o", &prog]);
            let o = w.run(&mut c)?;
            if !o.success() {
                w.problem(format!("final link of {r} failed:\n{}", o.stderr_text()));
                continue;
            }
            runs.push(run_prog(w, &prog)?.status_text());
        }
        if runs != ["exit 0", "exit 0"] {
            w.problem(format!("-r ({case}): the programs ended {runs:?}, expected exit 0 from both"));
        }
    }
    Ok(())
}

/// `-flto=jobserver` under `make -j2`: lto-wrapper must find make's jobserver through dtld (the
/// environment and the descriptors reach it), as through GNU ld.
fn jobserver(w: &mut Work) -> Result<(), String> {
    write(w, "main.c", MAIN_C)?;
    write(w, "helper.c", HELPER_C)?;
    let (m, h) = (gcc_c(w, "main.c", &["-flto"])?, gcc_c(w, "helper.c", &["-flto"])?);
    let mut mk = String::new();
    for linker in [Linker::Bfd, Linker::Dtld] {
        let flag = linker.flag(w.ctx).to_string_lossy().into_owned();
        mk.push_str(&format!("prog.{0}: {m} {h}\n\t+{GCC} -v -flto=jobserver {flag} {m} {h} -o prog.{0} > link.{0}.log 2>&1\n", linker.name()));
    }
    write(w, "Makefile", &mk)?;
    let mut c = w.cmd_in("make", &w.dir.clone());
    c.args(["-j2", "prog.bfd", "prog.dtld"]);
    let o = w.run(&mut c)?;
    if !o.success() {
        return Err(format!("make failed:\n{}{}", o.stderr_text(), fs::read_to_string(w.dir.join("link.dtld.log")).unwrap_or_default()));
    }
    for linker in [Linker::Bfd, Linker::Dtld] {
        let log = fs::read_to_string(w.dir.join(format!("link.{}.log", linker.name()))).map_err(|e| e.to_string())?;
        if !log.contains("Using make jobserver") {
            w.problem(format!(
                "{}: lto-wrapper did not use make's jobserver:\n{}",
                linker.name(),
                log.lines().filter(|l| l.contains("lto") || l.contains("job")).collect::<Vec<_>>().join("\n")
            ));
        }
        let prog = format!("prog.{}", linker.name());
        let st = run_prog(w, &prog)?.status_text();
        if st != "exit 0" {
            w.problem(format!("{prog}: {st}"));
        }
    }
    Ok(())
}
