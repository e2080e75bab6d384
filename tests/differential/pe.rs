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
mod directives;
mod pe_fingerprint;

use std::collections::{BTreeSet, HashSet};
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use directives::{Fixture, Target, Variant};
use dtld_tests::{
    check_tools, command_line, find_distributor, find_dtld, fresh_dir, run_tool, run_tool_ok,
    target_dir, workspace_root, CompileCache, Outcome, CLANG, CLANGXX, LLD, LLVM_AR,
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
            keep: std::env::var("DTLD_HARNESS_KEEP").is_ok_and(|v| !v.is_empty() && v != "0"),
            determinism: std::env::var("DTLD_HARNESS_DETERMINISM").map_or(true, |v| v != "0"),
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
        let loader = std::env::var_os("DTLD_WINE")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/usr/lib/wine/wine64"));
        if !loader.is_file() {
            return Err(format!(
                "wine's loader {} does not exist (install wine64: scripts/setup.sh; or set DTLD_WINE)",
                loader.display()
            ));
        }
        let server = std::env::var_os("DTLD_WINESERVER")
            .map(PathBuf::from)
            .unwrap_or_else(|| loader.with_file_name("wineserver"));
        let prefix = std::env::var_os("DTLD_WINE_PREFIX")
            .map(PathBuf::from)
            .unwrap_or_else(|| build_root.join(".wine"));
        Ok(Wine {
            loader,
            server,
            prefix,
            ready: OnceLock::new(),
        })
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
                fs::create_dir_all(&self.prefix)
                    .map_err(|e| format!("cannot create {}: {e}", self.prefix.display()))?;
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
                        return Err(format!(
                            "wineboot did not create the prefix {} ({})",
                            self.prefix.display(),
                            outcome
                        ));
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
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run `{shown}`: {e}"))?;
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
    let _lock = lock_build_root();
    let ctx: Result<Arc<Context>, String> = Context::new().map(Arc::new);
    let trials = make_trials(&ctx);
    let conclusion = libtest_mimic::run(&args, trials);
    if let Ok(ctx) = &ctx {
        ctx.wine.shutdown();
    }
    conclusion.exit();
}

fn lock_build_root() -> Option<fs::File> {
    let root = target_dir().join("differential-pe");
    fs::create_dir_all(&root).ok()?;
    let file = fs::File::create(root.join(".lock")).ok()?;
    if file.try_lock().is_err() {
        eprintln!(
            "waiting for another PE harness run using {}",
            root.display()
        );
        file.lock().ok()?;
    }
    Some(file)
}

fn make_trials(ctx: &Result<Arc<Context>, String>) -> Vec<Trial> {
    let fixtures_dir = workspace_root().join("fixtures").join("coff");
    let found = match directives::discover(&fixtures_dir) {
        Ok(found) => found,
        Err(e) => return vec![Trial::test("coff/discover", move || Err(e.into()))],
    };
    let mut trials = Vec::new();
    for (name, primary) in found {
        let fixture = match directives::parse_for(Target::Pe, &name, &primary, pe_fingerprint::KEYS)
        {
            Ok(f) => Arc::new(f),
            Err(e) => {
                trials.push(Trial::test(format!("coff/{name}"), move || {
                    Err(format!("bad fixture: {e}").into())
                }));
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
    match t.run() {
        Ok(()) => {
            if !ctx.keep {
                let _ = fs::remove_dir_all(&dir);
                let _ = fs::remove_dir(dir.parent().expect("trial dir has a parent"));
            }
            Ok(())
        }
        Err(msg) => Err(format!(
            "{msg}\n\nbuild directory (kept): {}\ncommands to reproduce (wine runs with \
             WINEPREFIX={} WINEDEBUG=-all WINEPATH={MINGW_DLL_DIR}):\n  {}",
            dir.display(),
            ctx.wine.prefix.display(),
            t.repro.lock().unwrap().join("\n  ")
        )),
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Linker {
    Dtld,
    Lld,
}

impl Linker {
    fn name(self) -> &'static str {
        match self {
            Linker::Dtld => "dtld",
            Linker::Lld => "lld",
        }
    }
}

/// A link of the trial: one of the fixture's DLLs (by index) or the program.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Step {
    Library(usize),
    Program,
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
            fs::create_dir_all(side)
                .map_err(|e| format!("cannot create {}: {e}", side.display()))?;
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
        if self.ctx.determinism {
            self.check_determinism(&mut problems)?;
        }
        if self.distributor.is_some() {
            if let Err(e) = self.check_leftovers(&before) {
                problems.push(e);
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("\n"))
        }
    }

    fn step_name(&self, step: Step) -> String {
        match step {
            Step::Library(i) => format!("link of {}", self.fx.libraries[i].name),
            Step::Program => "link".to_string(),
        }
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
        let mut flags: Vec<String> = [TRIPLE, "-g0", "-O1"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        if self.lto() {
            flags.push("-flto=thin".into());
        }
        flags.extend(self.fx.cflags.iter().cloned());
        flags.extend(extra.iter().cloned());
        flags
    }

    fn compile(
        &mut self,
        src: &Path,
        flags: &[String],
        subdir: &str,
        taken: &mut HashSet<String>,
    ) -> Result<String, String> {
        let stem = src
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let mut rel = format!("{subdir}{stem}.o");
        let mut n = 1;
        while !taken.insert(rel.clone()) {
            n += 1;
            rel = format!("{subdir}{stem}-{n}.o");
        }
        let out = self.dir.join(&rel);
        if let Some(parent) = out.parent() {
            fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        let compiler = if directives::is_cxx(src) {
            CLANGXX
        } else {
            CLANG
        };
        let shown = self.ctx.cache.compile_with(compiler, src, flags, &out)?;
        self.note(shown);
        if is_bitcode(&out) {
            self.bitcode_objects += 1;
        }
        Ok(rel)
    }

    fn build_inputs(&mut self) -> Result<(), String> {
        let fx = self.fx;
        let mut taken = HashSet::new();
        let mut inputs = Vec::new();
        let flags = self.compile_flags(&[]);
        inputs.push(self.compile(&fx.primary, &flags, "", &mut taken)?);
        for group in &fx.objects {
            let flags = self.compile_flags(&group.cflags);
            for src in &group.files {
                inputs.push(self.compile(src, &flags, "", &mut taken)?);
            }
        }
        for (kind, lib) in &fx.archives {
            let flags = self.compile_flags(&lib.sources.cflags);
            let subdir = format!("{}.objs/", lib.name);
            let mut objs = Vec::new();
            for src in &lib.sources.files {
                objs.push(self.compile(src, &flags, &subdir, &mut taken)?);
            }
            let mut ar = Command::new(LLVM_AR);
            ar.current_dir(&self.dir)
                .arg(kind.ar_flags())
                .arg(&lib.name)
                .args(&objs);
            self.note(command_line(&ar));
            run_tool_ok(&mut ar)?;
            if lib.linked {
                inputs.push(lib.name.clone());
            }
        }
        let mut lib_objects = Vec::new();
        for lib in &fx.libraries {
            let flags = self.compile_flags(&lib.sources.cflags);
            let subdir = format!("{}.objs/", lib.name);
            let mut objs = Vec::new();
            for src in &lib.sources.files {
                objs.push(self.compile(src, &flags, &subdir, &mut taken)?);
            }
            lib_objects.push(objs);
        }
        if self.lto() && self.bitcode_objects == 0 {
            return Err(format!(
                "the `{}` variant compiled no source to LLVM bitcode",
                self.variant.name()
            ));
        }
        self.inputs = inputs;
        self.lib_objects = lib_objects;
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
                cmd.arg("-shared")
                    .args(self.lib_objects[i].iter().map(|o| format!("../{o}")));
                cmd.arg(format!("-Wl,--out-implib,{}", implib_name(out)));
                &lib.link_args
            }
            Step::Program => {
                cmd.args(self.inputs.iter().map(|i| format!("../{i}")));
                let prefix = Path::new(out).parent().map_or(String::new(), |p| {
                    if p.as_os_str().is_empty() {
                        String::new()
                    } else {
                        format!("{}/", p.display())
                    }
                });
                // The import libraries of this side's DLLs (of the same subdirectory for the
                // determinism links).
                cmd.args(
                    self.fx
                        .libraries
                        .iter()
                        .filter(|l| l.linked)
                        .map(|l| format!("{prefix}{}", implib_name(&l.name))),
                );
                &self.fx.link_args
            }
        };
        cmd.arg("-o").arg(out);
        match linker {
            Linker::Dtld => {
                let mut arg = OsString::from("-fuse-ld=");
                arg.push(&self.ctx.dtld);
                cmd.arg(arg);
            }
            Linker::Lld => {
                cmd.arg("-fuse-ld=lld");
            }
        }
        if self.lto() {
            cmd.arg("-flto=thin");
        }
        if let (Some(d), Linker::Dtld) = (&self.distributor, linker) {
            let mut arg = OsString::from("-fthinlto-distributor=");
            arg.push(d);
            cmd.arg(arg);
        }
        cmd.args(extra);
        let dir = side.to_string_lossy();
        let build = self.dir.to_string_lossy();
        cmd.args(
            link_args
                .iter()
                .map(|a| a.replace("$DIR", &dir).replace("$BUILD", &build)),
        );
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
        run_in_group(&mut cmd, &self.fx.stdin, RUN_TIMEOUT, dir)
            .map_err(|e| format!("cannot run {exe} under wine: {e}"))
    }

    fn compare_runs(&mut self, problems: &mut Vec<String>) -> Result<Outcome, String> {
        let ours = self.run_program(&self.sides[0], PROG)?;
        let theirs = self.run_program(&self.sides[1], PROG)?;
        if theirs.status.is_none() {
            problems.push("the lld-linked program timed out under wine (fixture bug?)".into());
        }
        compare_outcomes(
            &ours,
            &theirs,
            "dtld-linked program",
            "lld-linked program",
            problems,
        );
        Ok(theirs)
    }

    /// dtld's EXE with lld's DLLs and lld's EXE with dtld's DLLs, each copied into its own
    /// directory, must behave like lld's EXE with lld's DLLs.
    fn compare_mixed_runs(
        &mut self,
        reference: &Outcome,
        problems: &mut Vec<String>,
    ) -> Result<(), String> {
        for (p, l) in [(Linker::Dtld, Linker::Lld), (Linker::Lld, Linker::Dtld)] {
            let label = format!("{} EXE with {} DLLs", p.name(), l.name());
            let dir = self.dir.join(format!("mixed-{}-prog", p.name()));
            let io = |e: std::io::Error| format!("cannot set up {}: {e}", dir.display());
            fresh_dir(&dir).map_err(io)?;
            fs::copy(self.sides[p as usize].join(PROG), dir.join(PROG)).map_err(io)?;
            for lib in &self.fx.libraries {
                fs::copy(self.sides[l as usize].join(&lib.name), dir.join(&lib.name))
                    .map_err(io)?;
            }
            let outcome = self.run_program(&dir, PROG)?;
            let mut found = Vec::new();
            compare_outcomes(
                &outcome,
                reference,
                &label,
                "lld EXE with lld DLLs",
                &mut found,
            );
            problems.extend(
                found
                    .into_iter()
                    .map(|f| format!("mixed run ({label}): {f}")),
            );
        }
        Ok(())
    }

    fn side_fingerprint(
        &self,
        linker: Linker,
        with_program: bool,
    ) -> Result<pe_fingerprint::Fingerprint, String> {
        let side = &self.sides[linker as usize];
        let read = |name: &str| {
            let path = side.join(name);
            fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))
        };
        let who = linker.name();
        let mut fp = if with_program {
            pe_fingerprint::fingerprint(&read(PROG)?)
                .map_err(|e| format!("{who}'s program: {e}"))?
        } else {
            pe_fingerprint::Fingerprint::new()
        };
        for lib in &self.fx.libraries {
            let prefix = format!("lib:{}:", lib.name);
            let lib_fp = pe_fingerprint::fingerprint(&read(&lib.name)?)
                .map_err(|e| format!("{who}'s {}: {e}", lib.name))?;
            fp.extend(lib_fp.into_iter().map(|(k, v)| (format!("{prefix}{k}"), v)));
            let implib = implib_name(&lib.name);
            let imp_fp = pe_fingerprint::implib_fingerprint(&read(&implib)?)
                .map_err(|e| format!("{who}'s {implib}: {e}"))?;
            fp.extend(imp_fp.into_iter().map(|(k, v)| (format!("{prefix}{k}"), v)));
        }
        Ok(fp)
    }

    fn compare_fingerprints(
        &mut self,
        problems: &mut Vec<String>,
        with_program: bool,
    ) -> Result<(), String> {
        let ours = self.side_fingerprint(Linker::Dtld, with_program)?;
        let theirs = self.side_fingerprint(Linker::Lld, with_program)?;
        for (name, fp) in [
            ("fingerprint.dtld.json", &ours),
            ("fingerprint.lld.json", &theirs),
        ] {
            let text = serde_json::to_string_pretty(fp).expect("fingerprint serialises");
            fs::write(self.dir.join(name), text).map_err(|e| e.to_string())?;
        }
        let null = serde_json::Value::Null;
        let keys: BTreeSet<&String> = ours.keys().chain(theirs.keys()).collect();
        let mut diffs = Vec::new();
        for key in keys {
            if pe_fingerprint::is_ignored(key, &self.fx.diff_ignore) {
                continue;
            }
            let (a, b) = (
                ours.get(key).unwrap_or(&null),
                theirs.get(key).unwrap_or(&null),
            );
            if a != b {
                diffs.push(format!("  {key}:\n{}", describe_diff(a, b)));
            }
        }
        if !diffs.is_empty() {
            problems.push(format!(
                "fingerprints differ (silence a key with `//#DiffIgnore: <key> <reason>`; full \
                 fingerprints in fingerprint.{{dtld,lld}}.json):\n{}",
                diffs.join("")
            ));
        }
        Ok(())
    }

    /// Links every dtld output twice more (`--threads=1`, `--threads=2`) into `threadsN/`
    /// (same file names, so the DLL names inside are the same) and requires identical bytes,
    /// time stamps aside.
    fn check_determinism(&mut self, problems: &mut Vec<String>) -> Result<(), String> {
        let steps: Vec<Step> = (0..self.fx.libraries.len())
            .map(Step::Library)
            .chain([Step::Program])
            .collect();
        let side = self.sides[0].clone();
        for threads in [1, 2] {
            let sub = format!("threads{threads}");
            fs::create_dir_all(side.join(&sub)).map_err(|e| e.to_string())?;
            for &step in &steps {
                let name = self.output_name(step);
                let out = format!("{sub}/{name}");
                let flag = format!("-Wl,--threads={threads}");
                let mut cmd = self.link_command(step, Linker::Dtld, &out, &[flag.clone()]);
                self.note(command_line(&cmd));
                let outcome = run_tool(&mut cmd)?;
                if !outcome.success() {
                    problems.push(format!(
                        "determinism link of {name} with {flag} failed (set DTLD_HARNESS_DETERMINISM=0 to skip):\n{}",
                        outcome.stderr_text()
                    ));
                    continue;
                }
                let read = |p: PathBuf| {
                    fs::read(&p).map_err(|e| format!("cannot read {}: {e}", p.display()))
                };
                let main = pe_fingerprint::without_timestamps(&read(side.join(&name))?);
                let again = pe_fingerprint::without_timestamps(&read(side.join(&out))?);
                if main != again {
                    let at = main
                        .iter()
                        .zip(&again)
                        .position(|(a, b)| a != b)
                        .unwrap_or(main.len().min(again.len()));
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

    fn snapshot(&self) -> Result<Vec<(PathBuf, HashSet<String>)>, String> {
        self.sides
            .iter()
            .map(|d| Ok((d.clone(), top_level_names(d)?)))
            .collect()
    }

    /// DTLTO: nothing but the program (and the harness's own files) may have appeared in the
    /// directories the program links ran in.
    fn check_leftovers(&self, before: &[(PathBuf, HashSet<String>)]) -> Result<(), String> {
        let mut left = Vec::new();
        for (dir, names) in before {
            for n in top_level_names(dir)? {
                if !names.contains(&n) && n != PROG && !n.starts_with("threads") {
                    left.push(format!(
                        "{}/{n}",
                        dir.file_name().unwrap_or_default().to_string_lossy()
                    ));
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
    fn expected_error(
        &mut self,
        step: Step,
        ours: &Outcome,
        theirs: &Outcome,
    ) -> Result<(), String> {
        let re = self.fx.expect_error.clone().expect("ExpectError fixture");
        let what = self.step_name(step);
        let mut problems = Vec::new();
        if theirs.success() {
            problems.push(format!(
                "ld.lld's {what} succeeded but the fixture says ExpectError (fixture bug?)"
            ));
        }
        if ours.success() {
            problems.push(format!(
                "dtld's {what} succeeded but the fixture says ExpectError"
            ));
        }
        let (o, t) = (
            first_error(&ours.stderr_text()),
            first_error(&theirs.stderr_text()),
        );
        match (&o, &t) {
            (Some(o), Some(t)) => {
                if !re.is_match(t) {
                    problems.push(format!(
                        "ld.lld's error does not match /{re}/ (fixture bug?):\n  {t}"
                    ));
                }
                if !re.is_match(o) {
                    problems.push(format!("dtld's error does not match /{re}/:\n  {o}"));
                }
                if o != t {
                    problems.push(format!(
                        "first error lines differ:\n  dtld:   {o}\n  ld.lld: {t}"
                    ));
                }
            }
            _ => {
                if o.is_none() && !ours.success() {
                    problems.push(format!(
                        "dtld printed no `error:` line:\n{}",
                        ours.stderr_text()
                    ));
                }
                if t.is_none() && !theirs.success() {
                    problems.push(format!(
                        "ld.lld printed no `error:` line:\n{}",
                        theirs.stderr_text()
                    ));
                }
            }
        }
        if !ours.success() {
            match linker_exit_code(&ours.stderr_text()) {
                Some(1) => {}
                Some(n) => problems.push(format!("dtld exited with {n}, expected 1")),
                None => problems.push(format!(
                    "cannot tell dtld's exit code from:\n{}",
                    ours.stderr_text()
                )),
            }
            let out = self.output_name(step);
            let side = &self.sides[0];
            let mut left: Vec<String> = top_level_names(side)?
                .into_iter()
                .filter(|n| *n == out || n.starts_with(&format!("{out}.")) || n.starts_with(PROG))
                .collect();
            left.sort();
            if !left.is_empty() {
                problems.push(format!("dtld failed but left {left:?}"));
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("\n"))
        }
    }
}

/// Both links must succeed (an error ends the trial); differing diagnostics are a problem.
fn check_links(
    what: &str,
    ours: &Outcome,
    theirs: &Outcome,
    problems: &mut Vec<String>,
) -> Result<(), String> {
    if !theirs.success() {
        return Err(format!(
            "the reference {what} (ld.lld) failed ({}), so the fixture is broken:\n{}",
            theirs.status_text(),
            theirs.stderr_text()
        ));
    }
    if !ours.success() {
        return Err(format!(
            "dtld's {what} failed ({}):\n{}",
            ours.status_text(),
            ours.stderr_text()
        ));
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

/// Runs `cmd` in its own process group with stdin from a file and stdout/stderr to files in
/// `dir` (wine may start helper processes that would hold pipes open), killing the whole group
/// after `timeout`. The files are removed afterwards.
fn run_in_group(
    cmd: &mut Command,
    stdin: &[u8],
    timeout: Duration,
    dir: &Path,
) -> std::io::Result<Outcome> {
    use std::os::unix::process::CommandExt;
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let base = dir.join(format!(".run{}-{n}", std::process::id()));
    let (in_path, out_path, err_path) = (
        base.with_extension("stdin"),
        base.with_extension("stdout"),
        base.with_extension("stderr"),
    );
    fs::write(&in_path, stdin)?;
    cmd.process_group(0)
        .stdin(fs::File::open(&in_path)?)
        .stdout(fs::File::create(&out_path)?)
        .stderr(fs::File::create(&err_path)?);
    let result = (|| {
        let mut child = cmd.spawn()?;
        let status = match child.wait_timeout(timeout)? {
            Some(s) => Some(s),
            None => {
                let _ = Command::new("kill")
                    .args(["-KILL", "--", &format!("-{}", child.id())])
                    .status();
                let _ = child.kill();
                let _ = child.wait();
                None
            }
        };
        Ok(Outcome {
            status,
            stdout: fs::read(&out_path).unwrap_or_default(),
            stderr: fs::read(&err_path).unwrap_or_default(),
        })
    })();
    for p in [&in_path, &out_path, &err_path] {
        let _ = fs::remove_file(p);
    }
    result
}

fn compare_outcomes(
    ours: &Outcome,
    theirs: &Outcome,
    our_label: &str,
    their_label: &str,
    problems: &mut Vec<String>,
) {
    if ours.status_text() != theirs.status_text() {
        problems.push(format!(
            "exit status differs: {our_label}: {}, {their_label}: {}",
            ours.status_text(),
            theirs.status_text()
        ));
    }
    for (what, a, b) in [
        ("stdout", &ours.stdout, &theirs.stdout),
        ("stderr", &ours.stderr, &theirs.stderr),
    ] {
        if a != b {
            problems.push(format!(
                "{what} differs:\n{}",
                text_diff(a, b, our_label, their_label)
            ));
        }
    }
}

fn describe_diff(a: &serde_json::Value, b: &serde_json::Value) -> String {
    use serde_json::Value;
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => {
            let only = |p: &[Value], q: &[Value]| -> Vec<String> {
                p.iter()
                    .filter(|v| !q.contains(v))
                    .map(|v| v.to_string())
                    .collect()
            };
            let (ours, theirs) = (only(x, y), only(y, x));
            let mut s = String::new();
            for (label, items) in [("only dtld", ours), ("only lld ", theirs)] {
                for i in items.iter().take(20) {
                    s += &format!("    {label}: {i}\n");
                }
                if items.len() > 20 {
                    s += &format!("    {label}: ... {} more\n", items.len() - 20);
                }
            }
            if s.is_empty() {
                s = format!("    dtld: {a}\n    lld:  {b}\n");
            }
            s
        }
        _ => format!("    dtld: {a}\n    lld:  {b}\n"),
    }
}

fn without_program_lines(stderr: &[u8], program: &Path) -> Vec<u8> {
    let Some(name) = program.file_name() else {
        return stderr.to_vec();
    };
    let mut prefix = name.as_encoded_bytes().to_vec();
    prefix.extend_from_slice(b": ");
    stderr
        .split_inclusive(|&c| c == b'\n')
        .filter(|line| !line.starts_with(&prefix))
        .flatten()
        .copied()
        .collect()
}

fn top_level_names(dir: &Path) -> Result<HashSet<String>, String> {
    let entries = fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    let mut names = HashSet::new();
    for entry in entries {
        let entry = entry.map_err(|e| e.to_string())?;
        names.insert(entry.file_name().to_string_lossy().into_owned());
    }
    Ok(names)
}

fn is_bitcode(path: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 4];
    fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok()
        && magic == *b"BC\xC0\xDE"
}

fn first_error(stderr: &str) -> Option<String> {
    let re = regex::Regex::new(r"^(\S+): error: (.*)$").expect("valid regex");
    stderr.lines().find_map(|line| {
        let caps = re.captures(line)?;
        let program = Path::new(&caps[1])
            .file_name()?
            .to_string_lossy()
            .into_owned();
        let is_driver = ["clang", "gcc", "g++", "c++", "collect2", "cc"]
            .iter()
            .any(|d| program.starts_with(d));
        (!is_driver).then(|| caps[2].to_string())
    })
}

fn linker_exit_code(stderr: &str) -> Option<i32> {
    let re = regex::Regex::new(r"linker command failed with exit code (\d+)").expect("valid regex");
    re.captures(stderr)?.get(1)?.as_str().parse().ok()
}

fn text_diff(ours: &[u8], theirs: &[u8], our_label: &str, their_label: &str) -> String {
    const LIMIT: usize = 2000;
    let show = |b: &[u8]| {
        let text = String::from_utf8_lossy(&b[..b.len().min(LIMIT)]).into_owned();
        let more = if b.len() > LIMIT {
            format!("\n  ... ({} bytes in all)", b.len())
        } else {
            String::new()
        };
        text.lines()
            .map(|l| format!("  | {l}\n"))
            .collect::<String>()
            + &more
    };
    let a: Vec<&[u8]> = ours.split(|&c| c == b'\n').collect();
    let b: Vec<&[u8]> = theirs.split(|&c| c == b'\n').collect();
    let first = a
        .iter()
        .zip(&b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    format!(
        "  first difference at line {}\n  --- {our_label} ---\n{}  --- {their_label} ---\n{}",
        first + 1,
        show(ours),
        show(theirs)
    )
}
