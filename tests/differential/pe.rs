//! The differential harness's PE mode: every fixture in `fixtures/coff/` is compiled once for
//! `x86_64-w64-mingw32` with clang-22 (clang++-22 for C++; Debian's mingw-w64 headers, CRT and
//! libraries, gcc 12's libgcc/libstdc++), linked twice by the same compiler-driver command
//! (`-fuse-ld=<dtld>`, which clang runs with `-m i386pep`, and `-fuse-ld=lld`, ld.lld-22's MinGW
//! driver), and both programs run under wine. Exit status, stdout and stderr must be identical
//! and the structural fingerprints (`pe_fingerprint.rs`, goblin's PE parser) equal.
//!
//! DLLs (`//#Shared: foo.dll: ...`) are built by both linkers, each with its import library
//! (`-Wl,--out-implib,foo.dll.a`) that the same side's program links against; then the mixed
//! combinations (dtld's EXE with lld's DLLs and the reverse) must behave like lld's EXE with
//! lld's DLLs.
//!
//! Every fixture runs as three trials (see `//#Variants:`):
//! - `coff/<fixture>`: native objects;
//! - `coff/<fixture>/lto`: every source (DLLs' too) compiled with `-flto=thin`, both links
//!   with `-flto=thin` (in-process ThinLTO on both sides);
//! - `coff/<fixture>/dtlto`: the same bitcode; dtld's links add
//!   `-fthinlto-distributor=<distributor>` (DTLTO), lld's stay in-process, because ld.lld-22's
//!   MinGW driver rejects `--thinlto-distributor`. Nothing but the outputs may be left behind.
//!
//! The fixture vocabulary is documented in `fixtures/README.md` (section "PE fixtures").
//!
//! Environment (besides `DTLD`, `DTLD_HARNESS_KEEP`, `DTLD_HARNESS_DETERMINISM` and
//! `DTLD_DISTRIBUTOR`, which mean what they mean for the ELF harness):
//! - `DTLD_WINE`: wine's loader (default `/usr/lib/wine/wine64`, which Debian does not put in
//!   PATH); `DTLD_WINESERVER`: its server (default `wineserver` next to the loader).
//! - `DTLD_WINE_PREFIX`: the wine prefix (default `<target>/differential-pe/.wine`, created by
//!   the first trial that runs a program, ~5 s, and reused by later runs).

#[allow(dead_code)]
mod common;
#[allow(dead_code)]
mod directives;
mod pe_fingerprint;

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use common::{check_links, compare_mixed_run, top_level_names, verdict, without_program_lines, Step};
use directives::{Fixture, Target, Variant};
use dtld_tests::{
    check_tools, command_line, find_distributor, find_dtld, first_difference, fresh_dir, lock_target_subdir, run_in_group, run_tool, target_dir,
    workspace_root, CompileCache, Linker, Outcome, CLANG, CLANGXX, LLD, LLVM_AR,
};
use libtest_mimic::{Arguments, Failed, Trial};
use wait_timeout::ChildExt;

/// The target triple of every compile and link.
const TRIPLE: &str = "--target=x86_64-w64-mingw32";
/// How long a fixture program may run under wine (wine's own start-up included).
const RUN_TIMEOUT: Duration = Duration::from_secs(20);
/// Where gcc's MinGW runtime DLLs live (libstdc++-6.dll, libgcc_s_seh-1.dll): the programs
/// linked against the dynamic libstdc++ find them through `WINEPATH`.
const MINGW_DLL_DIR: &str = "/usr/lib/gcc/x86_64-w64-mingw32/12-win32";
/// How many more times a program run under wine is tried when it exited non-zero with empty
/// stdout and stderr (see `TrialRun::run_program`).
const SILENT_FAILURE_RETRIES: u32 = 2;
/// The PDB dumper `PdbDump` runs (Debian's llvm-22).
const LLVM_PDBUTIL: &str = "llvm-pdbutil-22";

/// State shared by all trials.
struct Context {
    build_root: PathBuf,
    cache: CompileCache,
    dtld: PathBuf,
    keep: bool,
    determinism: bool,
    distributor: Result<PathBuf, String>,
    wine: Wine,
}

impl Context {
    fn new() -> Result<Context, String> {
        check_tools(&[CLANG, CLANGXX, LLD, LLVM_AR])?;
        let dtld = find_dtld()?;
        let build_root = target_dir().join("differential-pe");
        let io = |e: std::io::Error| format!("cannot set up {}: {e}", build_root.display());
        let cache = CompileCache::new(build_root.join(".cache")).map_err(io)?;
        Ok(Context {
            wine: Wine::new(&build_root)?,
            build_root,
            cache,
            dtld,
            keep: common::keep_build_dirs(),
            determinism: common::check_determinism(),
            distributor: find_distributor(),
        })
    }
}

/// Wine: the loader, the server and a project-local prefix, set up once (lazily, by the first
/// trial that runs a program) and shut down when the harness ends.
struct Wine {
    loader: PathBuf,
    server: PathBuf,
    prefix: PathBuf,
    ready: OnceLock<Result<(), String>>,
}

impl Wine {
    fn new(build_root: &Path) -> Result<Wine, String> {
        let loader = std::env::var_os("DTLD_WINE").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/usr/lib/wine/wine64"));
        if !loader.is_file() {
            return Err(format!("wine's loader {} does not exist (install wine64: scripts/setup.sh; or set DTLD_WINE)", loader.display()));
        }
        let server = std::env::var_os("DTLD_WINESERVER").map(PathBuf::from).unwrap_or_else(|| loader.with_file_name("wineserver"));
        let prefix = std::env::var_os("DTLD_WINE_PREFIX").map(PathBuf::from).unwrap_or_else(|| build_root.join(".wine"));
        Ok(Wine { loader, server, prefix, ready: OnceLock::new() })
    }

    /// The environment every wine process gets.
    fn env(&self, cmd: &mut Command) {
        cmd.env("WINEPREFIX", &self.prefix)
            .env("WINEDEBUG", "-all")
            .env("WINEPATH", MINGW_DLL_DIR)
            // No Mono / Gecko installer prompts (nothing here needs .NET or HTML).
            .env("WINEDLLOVERRIDES", "mscoree,mshtml=")
            .env_remove("DISPLAY");
    }

    /// Creates the prefix if needed and starts a wineserver that stays up for the run (so
    /// that no program run starts one holding its output open).
    fn ensure(&self) -> Result<(), String> {
        self.ready
            .get_or_init(|| {
                fs::create_dir_all(&self.prefix).map_err(|e| format!("cannot create {}: {e}", self.prefix.display()))?;
                if !self.prefix.join("system.reg").is_file() {
                    let mut boot = Command::new(&self.loader);
                    self.env(&mut boot);
                    boot.args(["wineboot", "-i"]);
                    let outcome = run_quiet(&mut boot, Duration::from_secs(300))?;
                    // The server writes the registry files when it exits.
                    let mut wait = Command::new(&self.server);
                    self.env(&mut wait);
                    wait.arg("-w");
                    run_quiet(&mut wait, Duration::from_secs(120))?;
                    if !self.prefix.join("system.reg").is_file() {
                        return Err(format!("wineboot did not create the prefix {} ({})", self.prefix.display(), outcome));
                    }
                }
                let mut server = Command::new(&self.server);
                self.env(&mut server);
                // Persistent, but exits 60 s after the last client if the harness dies
                // before it can stop it.
                server.arg("-p60");
                run_quiet(&mut server, Duration::from_secs(60))?;
                Ok(())
            })
            .clone()
    }

    /// Stops the prefix's wineserver (and every wine process left in it).
    fn shutdown(&self) {
        if self.ready.get().is_none() {
            return;
        }
        let mut kill = Command::new(&self.server);
        self.env(&mut kill);
        kill.arg("-k");
        let _ = run_quiet(&mut kill, Duration::from_secs(30));
        let mut wait = Command::new(&self.server);
        self.env(&mut wait);
        wait.arg("-w");
        let _ = run_quiet(&mut wait, Duration::from_secs(30));
    }
}

/// Runs a setup command with its output discarded; returns its status text.
fn run_quiet(cmd: &mut Command, timeout: Duration) -> Result<String, String> {
    let shown = command_line(cmd);
    let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).spawn().map_err(|e| format!("cannot run `{shown}`: {e}"))?;
    match child.wait_timeout(timeout).map_err(|e| e.to_string())? {
        Some(status) => Ok(format!("{status}")),
        None => {
            let _ = child.kill();
            let _ = child.wait();
            Err(format!("`{shown}` timed out"))
        }
    }
}

fn main() {
    let args = Arguments::from_args();
    let _lock = lock_target_subdir("differential-pe", "PE harness");
    let ctx: Result<Arc<Context>, String> = Context::new().map(Arc::new);
    let trials = make_trials(&ctx);
    let conclusion = libtest_mimic::run(&args, trials);
    if let Ok(ctx) = &ctx {
        ctx.wine.shutdown();
    }
    conclusion.exit();
}

fn make_trials(ctx: &Result<Arc<Context>, String>) -> Vec<Trial> {
    let fixtures_dir = workspace_root().join("fixtures").join("coff");
    let found = match directives::discover(&fixtures_dir) {
        Ok(found) => found,
        Err(e) => return vec![Trial::test("coff/discover", move || Err(e.into()))],
    };
    let mut trials = Vec::new();
    for (name, primary) in found {
        let fixture = match directives::parse_for(Target::Pe, &name, &primary, pe_fingerprint::KEYS) {
            Ok(f) => Arc::new(f),
            Err(e) => {
                trials.push(common::bad_fixture_trial(format!("coff/{name}"), e));
                continue;
            }
        };
        for &variant in &fixture.variants {
            let trial_name = match variant {
                Variant::Native => format!("coff/{name}"),
                v => format!("coff/{name}/{}", v.name()),
            };
            let ctx = ctx.clone();
            let fixture = fixture.clone();
            trials.push(Trial::test(trial_name, move || {
                let ctx = ctx.map_err(Failed::from)?;
                run_trial(&ctx, &fixture, variant).map_err(Failed::from)
            }));
        }
    }
    trials
}

fn run_trial(ctx: &Context, fx: &Fixture, variant: Variant) -> Result<(), String> {
    let distributor = match variant {
        Variant::Dtlto => Some(ctx.distributor.clone()?),
        _ => None,
    };
    let dir = ctx.build_root.join(&fx.name).join(variant.name());
    fresh_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut t = TrialRun {
        ctx,
        fx,
        variant,
        dir: dir.clone(),
        sides: [Linker::Dtld, Linker::Lld].map(|l| dir.join(l.name())),
        inputs: Vec::new(),
        lib_objects: Vec::new(),
        repro: Mutex::new(Vec::new()),
        bitcode_objects: 0,
        distributor,
    };
    let result = t.run();
    let note = format!(" (wine runs with WINEPREFIX={} WINEDEBUG=-all WINEPATH={MINGW_DLL_DIR})", ctx.wine.prefix.display());
    let repro = t.repro.into_inner().unwrap();
    common::finish_trial(result, &dir, ctx.keep, &note, &repro)
}

/// The program's file name in each side's directory (the same for both, so argv[0] is too).
const PROG: &str = "prog.exe";

struct TrialRun<'a> {
    ctx: &'a Context,
    fx: &'a Fixture,
    variant: Variant,
    /// The trial's build directory (objects and archives).
    dir: PathBuf,
    /// `<dir>/dtld` and `<dir>/lld`: each linker's DLLs, import libraries and program.
    sides: [PathBuf; 2],
    /// The program's objects and archives, relative to `dir`.
    inputs: Vec<String>,
    lib_objects: Vec<Vec<String>>,
    repro: Mutex<Vec<String>>,
    bitcode_objects: usize,
    distributor: Option<PathBuf>,
}

/// The import library written next to DLL `name` (`foo.dll` → `foo.dll.a`).
fn implib_name(dll: &str) -> String {
    format!("{dll}.a")
}

impl TrialRun<'_> {
    fn note(&self, line: String) {
        self.repro.lock().unwrap().push(line);
    }

    fn run(&mut self) -> Result<(), String> {
        self.build_inputs()?;
        for side in &self.sides {
            fs::create_dir_all(side).map_err(|e| format!("cannot create {}: {e}", side.display()))?;
        }
        let mut problems = Vec::new();
        for index in 0..self.fx.libraries.len() {
            let step = Step::Library(index);
            let (ours, theirs) = self.link_both(step)?;
            if self.fx.expect_error.is_some() && !theirs.success() {
                return self.expected_error(step, &ours, &theirs);
            }
            check_links(&self.step_name(step), &ours, &theirs, &mut problems)?;
        }
        let before = self.snapshot()?;
        let (ours, theirs) = self.link_both(Step::Program)?;
        if self.fx.expect_error.is_some() {
            return self.expected_error(Step::Program, &ours, &theirs);
        }
        if let Err(e) = check_links("link", &ours, &theirs, &mut problems) {
            problems.insert(0, e);
            if !self.fx.libraries.is_empty() && theirs.success() {
                self.compare_fingerprints(&mut problems, false)?;
            }
            return Err(problems.join("\n"));
        }
        let reference = self.compare_runs(&mut problems)?;
        if !self.fx.libraries.is_empty() {
            self.compare_mixed_runs(&reference, &mut problems)?;
        }
        self.compare_fingerprints(&mut problems, true)?;
        self.compare_pdb_dumps(&mut problems)?;
        if self.ctx.determinism {
            self.check_determinism(&mut problems)?;
        }
        if self.distributor.is_some() {
            if let Err(e) = self.check_leftovers(&before) {
                problems.push(e);
            }
        }
        verdict(problems)
    }

    fn step_name(&self, step: Step) -> String {
        step.describe(self.fx)
    }

    fn output_name(&self, step: Step) -> String {
        match step {
            Step::Library(i) => self.fx.libraries[i].name.clone(),
            Step::Program => PROG.to_string(),
        }
    }

    fn lto(&self) -> bool {
        self.variant != Variant::Native
    }

    /// Compile flags: the target, `-g0 -O1`, `-flto=thin` in the LTO variants (DLL sources
    /// too), `CFlags`, then the group's own flags.
    fn compile_flags(&self, extra: &[String]) -> Vec<String> {
        let mut flags: Vec<String> = [TRIPLE, "-g0", "-O1"].iter().map(|s| s.to_string()).collect();
        if self.lto() {
            flags.push("-flto=thin".into());
        }
        flags.extend(self.fx.cflags.iter().cloned());
        flags.extend(extra.iter().cloned());
        flags
    }

    fn build_inputs(&mut self) -> Result<(), String> {
        let built = common::build_inputs(self.fx, &self.dir, &self.ctx.cache, |_, extra| self.compile_flags(extra), &mut |line| self.note(line))?;
        self.bitcode_objects = built.bitcode_objects;
        if self.lto() && self.bitcode_objects == 0 {
            return Err(format!("the `{}` variant compiled no source to LLVM bitcode", self.variant.name()));
        }
        self.inputs = built.program;
        self.lib_objects = built.libraries;
        Ok(())
    }

    /// The link command of `step` in `side`'s directory, writing `out` (relative to it).
    /// Identical for both linkers except for the linker selection (and the distributor, which
    /// only dtld gets).
    fn link_command(&self, step: Step, linker: Linker, out: &str, extra: &[String]) -> Command {
        let side = &self.sides[linker as usize];
        let cxx = match step {
            Step::Library(i) => self.fx.libraries[i].sources.is_cxx(),
            Step::Program => self.fx.program_is_cxx(),
        };
        let mut cmd = Command::new(if cxx { CLANGXX } else { CLANG });
        cmd.current_dir(side).arg(TRIPLE);
        let link_args = match step {
            Step::Library(i) => {
                let lib = &self.fx.libraries[i];
                cmd.arg("-shared").args(self.lib_objects[i].iter().map(|o| format!("../{o}")));
                cmd.arg(format!("-Wl,--out-implib,{}", implib_name(out)));
                &lib.link_args
            }
            Step::Program => {
                cmd.args(self.inputs.iter().map(|i| format!("../{i}")));
                let prefix =
                    Path::new(out).parent().map_or(String::new(), |p| if p.as_os_str().is_empty() { String::new() } else { format!("{}/", p.display()) });
                // The import libraries of this side's DLLs (of the same subdirectory for the
                // determinism links).
                cmd.args(self.fx.libraries.iter().filter(|l| l.linked).map(|l| format!("{prefix}{}", implib_name(&l.name))));
                &self.fx.link_args
            }
        };
        cmd.arg("-o").arg(out).arg(linker.fuse_ld(&self.ctx.dtld));
        if self.lto() {
            cmd.arg("-flto=thin");
        }
        if let (Some(d), Linker::Dtld) = (&self.distributor, linker) {
            cmd.arg(common::distributor_flag(d));
        }
        cmd.args(extra).args(common::expand_link_args(link_args, side, &self.dir));
        cmd
    }

    fn link_both(&mut self, step: Step) -> Result<(Outcome, Outcome), String> {
        let out = self.output_name(step);
        let mut ours = self.link_command(step, Linker::Dtld, &out, &[]);
        let mut theirs = self.link_command(step, Linker::Lld, &out, &[]);
        self.note(command_line(&ours));
        self.note(command_line(&theirs));
        let mut a = run_tool(&mut ours)?;
        let b = run_tool(&mut theirs)?;
        if let Some(d) = &self.distributor {
            a.stderr = without_program_lines(&a.stderr, d);
        }
        Ok((a, b))
    }

    /// Runs `exe` under wine in `dir` (the Windows loader searches the program's directory for
    /// DLLs first; gcc's runtime DLLs come from `WINEPATH`).
    fn run_program(&self, dir: &Path, exe: &str) -> Result<Outcome, String> {
        self.ctx.wine.ensure()?;
        let mut cmd = Command::new(&self.ctx.wine.loader);
        self.ctx.wine.env(&mut cmd);
        cmd.current_dir(dir).arg(exe).args(&self.fx.run_args);
        for (k, v) in &self.fx.env {
            cmd.env(k, v);
        }
        self.note(format!("(cd {} && {})", dir.display(), command_line(&cmd)));
        let mut outcome = self.run_once(&mut cmd, dir, exe)?;
        // Under load, wine sometimes fails to start a program at all: it exits non-zero having
        // printed nothing (seen once for lld's EXE of coff/large-bss; a rerun worked). Such a
        // run says nothing about the image, so it is retried, for either linker's program
        // alike. A run that still fails this way is compared as it is, so a program that
        // really exits non-zero silently is still caught by the comparison.
        for retry in 1..=SILENT_FAILURE_RETRIES {
            if !is_silent_failure(&outcome) {
                break;
            }
            eprintln!(
                "note: {}: {} in {} exited with {} and printed nothing; running it again (retry {retry} of {SILENT_FAILURE_RETRIES})",
                self.fx.name,
                exe,
                dir.display(),
                outcome.status_text()
            );
            outcome = self.run_once(&mut cmd, dir, exe)?;
        }
        Ok(outcome)
    }

    fn run_once(&self, cmd: &mut Command, dir: &Path, exe: &str) -> Result<Outcome, String> {
        run_with_input_file(cmd, &self.fx.stdin, RUN_TIMEOUT, dir).map_err(|e| format!("cannot run {exe} under wine: {e}"))
    }

    fn compare_runs(&mut self, problems: &mut Vec<String>) -> Result<Outcome, String> {
        let ours = self.run_program(&self.sides[0], PROG)?;
        let theirs = self.run_program(&self.sides[1], PROG)?;
        common::compare_program_runs(&ours, &theirs, " under wine", problems);
        Ok(theirs)
    }

    /// dtld's EXE with lld's DLLs and lld's EXE with dtld's DLLs, each copied into its own
    /// directory, must behave like lld's EXE with lld's DLLs.
    fn compare_mixed_runs(&mut self, reference: &Outcome, problems: &mut Vec<String>) -> Result<(), String> {
        for (p, l) in [(Linker::Dtld, Linker::Lld), (Linker::Lld, Linker::Dtld)] {
            let label = format!("{} EXE with {} DLLs", p.name(), l.name());
            let dir = self.dir.join(format!("mixed-{}-prog", p.name()));
            let io = |e: std::io::Error| format!("cannot set up {}: {e}", dir.display());
            fresh_dir(&dir).map_err(io)?;
            fs::copy(self.sides[p as usize].join(PROG), dir.join(PROG)).map_err(io)?;
            for lib in &self.fx.libraries {
                fs::copy(self.sides[l as usize].join(&lib.name), dir.join(&lib.name)).map_err(io)?;
            }
            let outcome = self.run_program(&dir, PROG)?;
            compare_mixed_run(&outcome, reference, &label, "lld EXE with lld DLLs", problems);
        }
        Ok(())
    }

    fn side_fingerprint(&self, linker: Linker, with_program: bool) -> Result<pe_fingerprint::Fingerprint, String> {
        let side = &self.sides[linker as usize];
        let read = |name: &str| {
            let path = side.join(name);
            fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))
        };
        let who = linker.name();
        let mut fp = if with_program {
            pe_fingerprint::fingerprint(&read(PROG)?).map_err(|e| format!("{who}'s program: {e}"))?
        } else {
            pe_fingerprint::Fingerprint::new()
        };
        for lib in &self.fx.libraries {
            let prefix = common::library_prefix(&lib.name);
            let lib_fp = pe_fingerprint::fingerprint(&read(&lib.name)?).map_err(|e| format!("{who}'s {}: {e}", lib.name))?;
            common::extend_prefixed(&mut fp, &prefix, lib_fp);
            let implib = implib_name(&lib.name);
            let imp_fp = pe_fingerprint::implib_fingerprint(&read(&implib)?).map_err(|e| format!("{who}'s {implib}: {e}"))?;
            common::extend_prefixed(&mut fp, &prefix, imp_fp);
        }
        Ok(fp)
    }

    fn compare_fingerprints(&mut self, problems: &mut Vec<String>, with_program: bool) -> Result<(), String> {
        let ours = self.side_fingerprint(Linker::Dtld, with_program)?;
        let theirs = self.side_fingerprint(Linker::Lld, with_program)?;
        let diffs = common::fingerprint_diffs(&self.dir, &ours, &theirs, |key| pe_fingerprint::is_ignored(key, &self.fx.diff_ignore))?;
        common::push_fingerprint_problem(diffs, problems);
        Ok(())
    }

    /// Links every dtld output twice more (`--threads=1`, `--threads=2`) into `threadsN/`
    /// (same file names, so the DLL names inside are the same) and requires identical bytes,
    /// time stamps aside.
    fn check_determinism(&mut self, problems: &mut Vec<String>) -> Result<(), String> {
        let steps = Step::all(self.fx);
        let side = self.sides[0].clone();
        for threads in [1, 2] {
            let sub = format!("threads{threads}");
            fs::create_dir_all(side.join(&sub)).map_err(|e| e.to_string())?;
            for &step in &steps {
                let name = self.output_name(step);
                let out = format!("{sub}/{name}");
                let flag = format!("-Wl,--threads={threads}");
                let mut cmd = self.link_command(step, Linker::Dtld, &out, std::slice::from_ref(&flag));
                self.note(command_line(&cmd));
                let outcome = run_tool(&mut cmd)?;
                if !outcome.success() {
                    problems
                        .push(format!("determinism link of {name} with {flag} failed (set DTLD_HARNESS_DETERMINISM=0 to skip):\n{}", outcome.stderr_text()));
                    continue;
                }
                let read = |p: PathBuf| fs::read(&p).map_err(|e| format!("cannot read {}: {e}", p.display()));
                let main = pe_fingerprint::without_timestamps(&read(side.join(&name))?);
                let again = pe_fingerprint::without_timestamps(&read(side.join(&out))?);
                if main != again {
                    let at = first_difference(&main, &again);
                    problems.push(format!(
                        "nondeterministic output: {out} differs from {name} (time stamps aside; sizes {} and {}, first difference at offset {at:#x})",
                        again.len(),
                        main.len()
                    ));
                }
            }
        }
        Ok(())
    }

    /// `PdbDump`: `llvm-pdbutil-22 dump <options> prog.pdb` on both sides (the PDB the
    /// fixture's `-Wl,--pdb=prog.pdb` asks for) must be equal, with the symbol record offsets
    /// (`  1234 | S_PUB32 ...`, which depend on the module symbols before the publics) left
    /// out. The dumps are written to `pdbdump<N>.{dtld,lld}.txt`.
    fn compare_pdb_dumps(&mut self, problems: &mut Vec<String>) -> Result<(), String> {
        let offset = regex::Regex::new(r"(?m)^( +)[0-9]+ \| ").unwrap();
        for (n, args) in self.fx.pdb_dump.iter().enumerate() {
            let mut dumps = Vec::new();
            for (side, linker) in self.sides.iter().zip([Linker::Dtld, Linker::Lld]) {
                let mut cmd = Command::new(LLVM_PDBUTIL);
                cmd.current_dir(side).arg("dump").args(args).arg("prog.pdb");
                self.note(command_line(&cmd));
                let out = run_tool(&mut cmd)?;
                if !out.success() {
                    problems.push(format!("{LLVM_PDBUTIL} dump {} of {}'s prog.pdb failed:\n{}", args.join(" "), linker.name(), out.stderr_text()));
                    return Ok(());
                }
                let text = offset.replace_all(&String::from_utf8_lossy(&out.stdout), "${1}N | ").into_owned();
                let text = without_linker_env(&text);
                let file = self.dir.join(format!("pdbdump{n}.{}.txt", linker.name()));
                fs::write(&file, &text).map_err(|e| e.to_string())?;
                dumps.push(text);
            }
            if dumps[1].lines().filter(|l| !l.trim().is_empty()).count() < 3 {
                problems.push(format!("llvm-pdbutil dump {} of lld's PDB is empty (fixture bug?)", args.join(" ")));
            } else if dumps[0] != dumps[1] {
                let (a, b) = (&dumps[0], &dumps[1]);
                let line = a.lines().zip(b.lines()).position(|(x, y)| x != y).unwrap_or(a.lines().count().min(b.lines().count()));
                problems.push(format!(
                    "llvm-pdbutil dump {} differs (pdbdump{n}.{{dtld,lld}}.txt), first at line {}:\n  dtld: {}\n  lld:  {}",
                    args.join(" "),
                    line + 1,
                    a.lines().nth(line).unwrap_or("<end>"),
                    b.lines().nth(line).unwrap_or("<end>")
                ));
            }
        }
        Ok(())
    }

    fn snapshot(&self) -> Result<Vec<(PathBuf, HashSet<String>)>, String> {
        self.sides.iter().map(|d| Ok((d.clone(), top_level_names(d)?))).collect()
    }

    /// DTLTO: nothing but the program (and the harness's own files) may have appeared in the
    /// directories the program links ran in.
    fn check_leftovers(&self, before: &[(PathBuf, HashSet<String>)]) -> Result<(), String> {
        let mut left = Vec::new();
        for (dir, names) in before {
            for n in top_level_names(dir)? {
                // A `PdbDump` fixture asks for `prog.pdb` next to the program.
                let pdb = n == "prog.pdb" && !self.fx.pdb_dump.is_empty();
                if !names.contains(&n) && n != PROG && !pdb && !n.starts_with("threads") {
                    left.push(format!("{}/{n}", dir.file_name().unwrap_or_default().to_string_lossy()));
                }
            }
        }
        left.sort();
        if left.is_empty() {
            Ok(())
        } else {
            Err(format!("DTLTO temporaries left next to the program (by either linker or the distributor): {left:?}"))
        }
    }

    /// An `ExpectError` fixture: both links of `step` must fail with the same first error
    /// message, matching the regex; dtld must exit 1 and leave no output.
    fn expected_error(&mut self, step: Step, ours: &Outcome, theirs: &Outcome) -> Result<(), String> {
        let re = self.fx.expect_error.clone().expect("ExpectError fixture");
        let mut problems = Vec::new();
        common::check_expected_error(&re, &self.step_name(step), ours, theirs, &mut problems);
        if !ours.success() {
            let out = self.output_name(step);
            let side = &self.sides[0];
            let mut left: Vec<String> =
                top_level_names(side)?.into_iter().filter(|n| *n == out || n.starts_with(&format!("{out}.")) || n.starts_with(PROG)).collect();
            left.sort();
            if !left.is_empty() {
                problems.push(format!("dtld failed but left {left:?}"));
            }
        }
        verdict(problems)
    }
}

/// Runs `cmd` in its own process group with stdin from a file and stdout/stderr to files in
/// `dir` (wine may start helper processes that would hold pipes open), killing the whole group
/// after `timeout`. The files are removed afterwards.
/// A PDB dump without what depends on the side's directory and the linker's own command
/// line: the `* Linker *` module (its `S_ENVBLOCK` names the linker, the PDB path and the
/// command line; its section records the size of the image's CodeView record, which holds
/// the PDB's absolute path, one byte longer under `dtld/` than under `lld/`), up to the next
/// empty line.
fn without_linker_env(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut skipping = false;
    for line in text.lines() {
        if line.contains("| `* Linker *`:") {
            skipping = true;
            out.push_str(line);
            out.push_str("\n  <the linker module>\n");
            continue;
        }
        if skipping && !line.trim().is_empty() {
            continue;
        }
        skipping = false;
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// A run that ended with a non-zero exit (or a signal; not a timeout, which would only repeat
/// the wait) without a byte on stdout or stderr: what wine failing to start looks like.
fn is_silent_failure(outcome: &Outcome) -> bool {
    outcome.status.is_some() && !outcome.success() && outcome.stdout.is_empty() && outcome.stderr.is_empty()
}

fn run_with_input_file(cmd: &mut Command, stdin: &[u8], timeout: Duration, dir: &Path) -> std::io::Result<Outcome> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let base = dir.join(format!(".run{}-{n}", std::process::id()));
    let (in_path, out_path, err_path) = (base.with_extension("stdin"), base.with_extension("stdout"), base.with_extension("stderr"));
    let result =
        fs::write(&in_path, stdin).and_then(|()| fs::File::open(&in_path)).and_then(|input| run_in_group(cmd.stdin(input), timeout, &out_path, &err_path));
    for p in [&in_path, &out_path, &err_path] {
        let _ = fs::remove_file(p);
    }
    result
}
