//! The differential harness: every fixture in `fixtures/elf/` is compiled once with clang-22,
//! linked twice with the same compiler-driver command (once with dtld, once with ld.lld-22),
//! and the two programs must behave identically (exit status, stdout, stderr) and have the same
//! structural fingerprint (see `fingerprint.rs`). dtld's link must also be deterministic. This is
//! how dtld stays a drop-in replacement: lld is the oracle for every behaviour we test.
//!
//! One libtest-mimic trial per fixture × mode × driver, named `elf/<fixture>/<mode>[/gcc]`, so
//! `cargo test -p dtld-tests --test differential -- tls` filters. The directive vocabulary is
//! documented in `fixtures/README.md`.
//!
//! Environment:
//! - `DTLD`: absolute path of the linker under test (default `target/release/dtld`, then
//!   `target/debug/dtld`).
//! - `DTLD_HARNESS_KEEP=1`: keep every trial's build directory (failed trials always keep it).
//! - `DTLD_HARNESS_DETERMINISM=0`: skip the determinism links (`-Wl,--threads=1` / `=2`).
//! - `DTLD_DISTRIBUTOR`: the DTLTO distributor for the `/dtlto` trials (default
//!   `<target>/release/dtld-distribute`; when it is missing those trials fail, they are never
//!   skipped).
//!
//! Every fixture with `//#Lto: thin` also gets trials `elf/<fixture>/<mode>/dtlto` (modes `pie`
//! and `nopie`, when the fixture runs them): both links add `-fthinlto-distributor=<distributor>`,
//! so clang hands the backends of both linkers to the same distributor (for ld.lld-22 that
//! proves the distributor serves lld unchanged), and neither linker may leave a file besides its
//! output in the build directory.

mod directives;
mod fingerprint;

use std::collections::HashSet;
use std::ffi::OsString;
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use directives::{Driver, Fixture, Mode};
use dtld_tests::{
    check_tools, command_line, find_distributor, find_dtld, fresh_dir, run_tool, run_tool_ok,
    run_with_timeout, target_dir, workspace_root, wrapper_dir, CompileCache, Outcome, CLANG, GCC,
    LLD, LLVM_AR,
};
use libtest_mimic::{Arguments, Failed, Trial};

/// How long a fixture program may run.
const RUN_TIMEOUT: Duration = Duration::from_secs(5);

/// State shared by all trials.
struct Context {
    build_root: PathBuf,
    cache: CompileCache,
    dtld: PathBuf,
    /// Contains `ld`, a wrapper that runs dtld (for `gcc -B`).
    gcc_dtld_dir: PathBuf,
    /// Contains `ld.lld`, a wrapper for ld.lld-22 (Debian installs only the suffixed name, so
    /// `gcc -fuse-ld=lld` would not find it otherwise).
    gcc_lld_dir: PathBuf,
    keep: bool,
    determinism: bool,
    /// The DTLTO distributor for the `/dtlto` trials (an error says why there is none).
    distributor: Result<PathBuf, String>,
}

impl Context {
    fn new() -> Result<Context, String> {
        check_tools(&[CLANG, LLD, LLVM_AR])?;
        let dtld = find_dtld()?;
        let build_root = target_dir().join("differential");
        let tools = build_root.join(".tools");
        let lld = dtld_tests::find_in_path(LLD).ok_or("ld.lld-22 not in PATH")?;
        let io = |e: std::io::Error| format!("cannot set up {}: {e}", tools.display());
        let gcc_dtld_dir = wrapper_dir(&tools.join("gcc-dtld"), "ld", &dtld).map_err(io)?;
        let gcc_lld_dir = wrapper_dir(&tools.join("gcc-lld"), "ld.lld", &lld).map_err(io)?;
        let cache = CompileCache::new(build_root.join(".cache")).map_err(io)?;
        Ok(Context {
            build_root,
            cache,
            dtld,
            gcc_dtld_dir,
            gcc_lld_dir,
            keep: std::env::var("DTLD_HARNESS_KEEP").is_ok_and(|v| !v.is_empty() && v != "0"),
            determinism: std::env::var("DTLD_HARNESS_DETERMINISM").map_or(true, |v| v != "0"),
            distributor: find_distributor(),
        })
    }
}

fn main() {
    let args = Arguments::from_args();
    // Two runs sharing a target directory would recreate each other's build directories;
    // the lock (released when the process exits) makes the second one wait.
    let _lock = lock_build_root();
    let trials = make_trials();
    libtest_mimic::run(&args, trials).exit();
}

fn lock_build_root() -> Option<fs::File> {
    let root = target_dir().join("differential");
    fs::create_dir_all(&root).ok()?;
    let file = fs::File::create(root.join(".lock")).ok()?;
    if file.try_lock().is_err() {
        eprintln!("waiting for another differential harness run using {}", root.display());
        file.lock().ok()?;
    }
    Some(file)
}

fn make_trials() -> Vec<Trial> {
    let fixtures_dir = workspace_root().join("fixtures").join("elf");
    let found = match directives::discover(&fixtures_dir) {
        Ok(found) => found,
        Err(e) => return vec![Trial::test("elf/discover", move || Err(e.into()))],
    };
    let ctx: Result<Arc<Context>, String> = Context::new().map(Arc::new);
    let mut trials = Vec::new();
    for (name, primary) in found {
        let fixture = match directives::parse(&name, &primary, fingerprint::KEYS) {
            Ok(f) => Arc::new(f),
            Err(e) => {
                trials.push(Trial::test(format!("elf/{name}"), move || {
                    Err(format!("bad fixture: {e}").into())
                }));
                continue;
            }
        };
        for &driver in &fixture.drivers {
            for &mode in &fixture.modes {
                let suffix = if driver == Driver::Gcc { "/gcc" } else { "" };
                let trial_name = format!("elf/{name}/{}{suffix}", mode.name());
                let ctx = ctx.clone();
                let fixture = fixture.clone();
                trials.push(Trial::test(trial_name, move || {
                    let ctx = ctx.map_err(Failed::from)?;
                    run_trial(&ctx, &fixture, mode, driver, false).map_err(Failed::from)
                }));
            }
        }
        // The same links with the ThinLTO backends handed to a DTLTO distributor (two modes,
        // to keep the run short).
        if fixture.lto == Some(directives::Lto::Thin) && fixture.drivers.contains(&Driver::Clang) {
            for &mode in &fixture.modes {
                if !matches!(mode, Mode::Pie | Mode::NoPie) {
                    continue;
                }
                let trial_name = format!("elf/{name}/{}/dtlto", mode.name());
                let ctx = ctx.clone();
                let fixture = fixture.clone();
                trials.push(Trial::test(trial_name, move || {
                    let ctx = ctx.map_err(Failed::from)?;
                    run_trial(&ctx, &fixture, mode, Driver::Clang, true).map_err(Failed::from)
                }));
            }
        }
    }
    trials
}

/// One trial: build, link twice, compare. On failure the build directory is kept and the
/// message ends with the commands to reproduce.
fn run_trial(
    ctx: &Context,
    fx: &Fixture,
    mode: Mode,
    driver: Driver,
    dtlto: bool,
) -> Result<(), String> {
    let distributor = if dtlto {
        Some(ctx.distributor.clone()?)
    } else {
        None
    };
    let leaf = match (driver, dtlto) {
        (Driver::Clang, false) => mode.name().to_string(),
        (Driver::Clang, true) => format!("{}-dtlto", mode.name()),
        (Driver::Gcc, _) => format!("{}-gcc", mode.name()),
    };
    let dir = ctx.build_root.join(&fx.name).join(leaf);
    fresh_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut t = TrialRun {
        ctx,
        fx,
        mode,
        driver,
        dir: dir.clone(),
        repro: Vec::new(),
        bitcode_objects: 0,
        distributor,
    };
    match t.run() {
        Ok(()) => {
            if !ctx.keep {
                let _ = fs::remove_dir_all(&dir);
                // Removes the fixture's directory once its last trial is cleaned (fails, harmlessly,
                // while other trials of the fixture still have theirs).
                let _ = fs::remove_dir(dir.parent().expect("trial dir has a parent"));
            }
            Ok(())
        }
        Err(msg) => Err(format!(
            "{msg}\n\nbuild directory (kept): {}\ncommands to reproduce:\n  {}",
            dir.display(),
            t.repro.join("\n  ")
        )),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Linker {
    Dtld,
    Lld,
}

struct TrialRun<'a> {
    ctx: &'a Context,
    fx: &'a Fixture,
    mode: Mode,
    driver: Driver,
    dir: PathBuf,
    repro: Vec<String>,
    /// How many compiled objects are LLVM bitcode (checked for `Lto` fixtures).
    bitcode_objects: usize,
    /// `/dtlto` trials: both links add `-fthinlto-distributor=<this>`.
    distributor: Option<PathBuf>,
}

impl TrialRun<'_> {
    fn run(&mut self) -> Result<(), String> {
        let inputs = self.build_inputs()?;
        let before = top_level_names(&self.dir)?;

        let dtld_cmd = self.link_command(&inputs, "prog.dtld", Linker::Dtld, &[]);
        let lld_cmd = self.link_command(&inputs, "prog.lld", Linker::Lld, &[]);
        self.repro.push(command_line(&dtld_cmd));
        self.repro.push(command_line(&lld_cmd));
        let mut ours = run_tool(&mut { dtld_cmd })?;
        let mut theirs = run_tool(&mut { lld_cmd })?;
        if let Some(d) = &self.distributor {
            // The distributor's own messages name temporary files, which differ by design
            // (lld's carry its PID): they are not link diagnostics.
            for o in [&mut ours, &mut theirs] {
                o.stderr = without_program_lines(&o.stderr, d);
            }
        }

        if let Some(re) = &self.fx.expect_error {
            let mut result = self.check_expected_error(re, &inputs, &ours, &theirs);
            if let Err(e) = self.check_leftovers(&before) {
                result = Err(match result {
                    Ok(()) => e,
                    Err(first) => format!("{first}\n{e}"),
                });
            }
            return result;
        }
        if !theirs.success() {
            return Err(format!(
                "the reference link (ld.lld) failed ({}), so the fixture is broken:\n{}",
                theirs.status_text(),
                theirs.stderr_text()
            ));
        }
        if !ours.success() {
            return Err(format!(
                "dtld's link failed ({}):\n{}",
                ours.status_text(),
                ours.stderr_text()
            ));
        }
        let mut problems = Vec::new();
        if ours.stderr != theirs.stderr {
            problems.push(format!(
                "link diagnostics differ:\n--- dtld (through the driver) ---\n{}--- ld.lld ---\n{}",
                ours.stderr_text(),
                theirs.stderr_text()
            ));
        }

        self.compare_runs(&mut problems)?;
        self.compare_fingerprints(&mut problems)?;
        if self.driver == Driver::Clang && self.ctx.determinism {
            self.check_determinism(&inputs, &mut problems)?;
        }
        if let Err(e) = self.check_leftovers(&before) {
            problems.push(e);
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("\n"))
        }
    }

    /// Flags for one source: the defaults, `-flto=` (program sources of an `Lto` fixture;
    /// shared libraries are always native), `CFlags`, then the group's own flags, so that a
    /// per-source `-fno-lto` or `-flto=full` wins.
    fn compile_flags(&self, shared_lib: bool, extra: &[String]) -> Vec<String> {
        let pic = if shared_lib {
            "-fPIC"
        } else {
            self.mode.compile_flag()
        };
        let mut flags: Vec<String> = ["-g0", "-O1", pic].iter().map(|s| s.to_string()).collect();
        if let (false, Some(lto)) = (shared_lib, self.fx.lto) {
            flags.push(lto.flag().to_string());
        }
        flags.extend(self.fx.cflags.iter().cloned());
        flags.extend(extra.iter().cloned());
        flags
    }

    /// Compiles `src` into `subdir` (relative to the build dir) and returns the object path
    /// relative to the build dir.
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
        let shown = self.ctx.cache.compile(src, flags, &out)?;
        self.repro.push(shown);
        if is_bitcode(&out) {
            self.bitcode_objects += 1;
        }
        Ok(rel)
    }

    /// Compiles every source, builds archives and shared libraries. Returns the link inputs
    /// (relative to the build directory) in order: objects, archives, shared libraries.
    fn build_inputs(&mut self) -> Result<Vec<String>, String> {
        let fx = self.fx;
        let mut taken = HashSet::new();
        let mut inputs = Vec::new();
        let flags = self.compile_flags(false, &[]);
        inputs.push(self.compile(&fx.primary, &flags, "", &mut taken)?);
        for group in &fx.objects {
            let flags = self.compile_flags(false, &group.cflags);
            for src in &group.files {
                inputs.push(self.compile(src, &flags, "", &mut taken)?);
            }
        }
        for (kind, lib) in &fx.archives {
            let flags = self.compile_flags(false, &lib.sources.cflags);
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
            self.repro.push(command_line(&ar));
            run_tool_ok(&mut ar)?;
            inputs.push(lib.name.clone());
        }
        for lib in &fx.shared {
            let flags = self.compile_flags(true, &lib.sources.cflags);
            let subdir = format!("{}.objs/", lib.name);
            let mut objs = Vec::new();
            for src in &lib.sources.files {
                objs.push(self.compile(src, &flags, &subdir, &mut taken)?);
            }
            let mut link = Command::new(CLANG);
            link.current_dir(&self.dir)
                .arg("-shared")
                .arg("-fuse-ld=lld")
                .arg(format!("-Wl,-soname,{}", lib.name))
                .args(&objs)
                .arg("-o")
                .arg(&lib.name);
            self.repro.push(command_line(&link));
            run_tool_ok(&mut link)?;
            inputs.push(lib.name.clone());
        }
        // An `Lto` fixture whose sources all ended up native (say, `-fno-lto` in `CFlags`)
        // would silently test ordinary linking.
        if let (Some(lto), 0) = (fx.lto, self.bitcode_objects) {
            return Err(format!(
                "the fixture says `Lto: {}` but no source was compiled to LLVM bitcode",
                lto.name()
            ));
        }
        Ok(inputs)
    }

    /// The link command; identical for both linkers except for the linker selection.
    fn link_command(
        &self,
        inputs: &[String],
        out: &str,
        linker: Linker,
        extra: &[&str],
    ) -> Command {
        let mut cmd = match self.driver {
            Driver::Clang => Command::new(CLANG),
            Driver::Gcc => Command::new(GCC),
        };
        cmd.current_dir(&self.dir).args(inputs).arg("-o").arg(out);
        match (self.driver, linker) {
            (Driver::Clang, Linker::Dtld) => {
                let mut arg = OsString::from("-fuse-ld=");
                arg.push(&self.ctx.dtld);
                cmd.arg(arg);
            }
            (Driver::Clang, Linker::Lld) => {
                cmd.arg("-fuse-ld=lld");
            }
            (Driver::Gcc, Linker::Dtld) => {
                cmd.arg(format!("-B{}/", self.ctx.gcc_dtld_dir.display()));
            }
            (Driver::Gcc, Linker::Lld) => {
                cmd.arg("-fuse-ld=lld")
                    .arg(format!("-B{}/", self.ctx.gcc_lld_dir.display()));
            }
        }
        cmd.arg(self.mode.link_flag());
        if let Some(lto) = self.fx.lto {
            // Makes clang pass `-plugin .../LLVMgold.so -plugin-opt=...` to dtld (nothing but
            // `-plugin-opt=...` to ld.lld), as a real LTO build would.
            cmd.arg(lto.flag());
        }
        if let Some(d) = &self.distributor {
            // clang turns this into `--thinlto-distributor=<d>` and
            // `--thinlto-remote-compiler=<its own path>` for either linker.
            let mut arg = OsString::from("-fthinlto-distributor=");
            arg.push(d);
            cmd.arg(arg);
        }
        cmd.args(extra);
        let dir = self.dir.to_string_lossy();
        cmd.args(self.fx.link_args.iter().map(|a| a.replace("$DIR", &dir)));
        cmd
    }

    /// `/dtlto` trials: nothing but the links' outputs (and the harness's own files) may have
    /// appeared in the build directory: no job file, shard, native object, extracted archive
    /// member or `<output>.dtld-lto/` directory.
    fn check_leftovers(&self, before: &HashSet<String>) -> Result<(), String> {
        if self.distributor.is_none() {
            return Ok(());
        }
        let expected = |name: &str| {
            name.starts_with("prog.dtld.threads")
                || name.starts_with("fingerprint.")
                || ["prog.dtld", "prog.lld", "prog.direct"].contains(&name)
        };
        let mut left: Vec<String> = top_level_names(&self.dir)?
            .into_iter()
            .filter(|n| !before.contains(n) && !expected(n))
            .collect();
        left.sort();
        if left.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "DTLTO temporaries left in the build directory (by either linker or the \
                 distributor): {left:?}"
            ))
        }
    }

    fn check_expected_error(
        &mut self,
        re: &regex::Regex,
        inputs: &[String],
        ours: &Outcome,
        theirs: &Outcome,
    ) -> Result<(), String> {
        let mut problems = Vec::new();
        if theirs.success() {
            problems.push(
                "ld.lld succeeded but the fixture says ExpectError (fixture bug?)".to_string(),
            );
        }
        if ours.success() {
            problems.push("dtld succeeded but the fixture says ExpectError".to_string());
        }
        let our_err = first_error(&ours.stderr_text());
        let their_err = first_error(&theirs.stderr_text());
        match (&our_err, &their_err) {
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
                if our_err.is_none() && !ours.success() {
                    problems.push(format!(
                        "dtld printed no `error:` line:\n{}",
                        ours.stderr_text()
                    ));
                }
                if their_err.is_none() && !theirs.success() {
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
        }
        if !ours.success() && self.dir.join("prog.dtld").exists() {
            problems.push("dtld failed but left an output file".to_string());
        }
        // The drivers delete a failed link's output themselves, so check the linker's own exit
        // code and cleanup by running the exact linker command clang would run.
        if self.driver == Driver::Clang && !ours.success() {
            let mut probe = self.link_command(inputs, "prog.direct", Linker::Dtld, &["-###"]);
            let listed = run_tool(&mut probe)?;
            match linker_line(&listed.stderr_text(), &self.ctx.dtld) {
                Some(argv) => {
                    let mut direct = Command::new(&argv[0]);
                    direct.current_dir(&self.dir).args(&argv[1..]);
                    self.repro
                        .push(format!("# the linker alone:\n  {}", command_line(&direct)));
                    let outcome = run_tool(&mut direct)?;
                    if outcome.status_text() != "exit 1" {
                        problems.push(format!(
                            "dtld run directly: {}, expected exit 1",
                            outcome.status_text()
                        ));
                    }
                    if self.dir.join("prog.direct").exists() {
                        problems
                            .push("dtld run directly failed but left its output file".to_string());
                    }
                }
                None => problems.push(format!(
                    "no linker command in `clang -###` output:\n{}",
                    listed.stderr_text()
                )),
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("\n"))
        }
    }

    fn run_program(&mut self, exe: &str) -> Result<Outcome, String> {
        let fx = self.fx;
        let mut cmd = Command::new(self.dir.join(exe));
        // Same argv[0] for both programs, in case a fixture prints it.
        cmd.arg0("./prog").current_dir(&self.dir).args(&fx.run_args);
        if !fx.shared.is_empty() {
            cmd.env("LD_LIBRARY_PATH", &self.dir);
        }
        for (k, v) in &fx.env {
            cmd.env(k, v);
        }
        self.repro.push(command_line(&cmd));
        run_with_timeout(&mut cmd, &fx.stdin, RUN_TIMEOUT)
            .map_err(|e| format!("cannot run {exe}: {e}"))
    }

    fn compare_runs(&mut self, problems: &mut Vec<String>) -> Result<(), String> {
        let ours = self.run_program("prog.dtld")?;
        let theirs = self.run_program("prog.lld")?;
        if theirs.status.is_none() {
            problems.push("the lld-linked program timed out (fixture bug?)".to_string());
        }
        if ours.status_text() != theirs.status_text() {
            problems.push(format!(
                "exit status differs: dtld-linked program: {}, lld-linked program: {}",
                ours.status_text(),
                theirs.status_text()
            ));
        }
        for (what, a, b) in [
            ("stdout", &ours.stdout, &theirs.stdout),
            ("stderr", &ours.stderr, &theirs.stderr),
        ] {
            if a != b {
                problems.push(format!("{what} differs:\n{}", text_diff(a, b)));
            }
        }
        Ok(())
    }

    fn compare_fingerprints(&mut self, problems: &mut Vec<String>) -> Result<(), String> {
        let read = |name: &str| {
            fs::read(self.dir.join(name)).map_err(|e| format!("cannot read {name}: {e}"))
        };
        let ours = fingerprint::fingerprint(&read("prog.dtld")?)
            .map_err(|e| format!("dtld's output: {e}"))?;
        let theirs = fingerprint::fingerprint(&read("prog.lld")?)
            .map_err(|e| format!("lld's output: {e}"))?;
        for (name, fp) in [
            ("fingerprint.dtld.json", &ours),
            ("fingerprint.lld.json", &theirs),
        ] {
            let text = serde_json::to_string_pretty(fp).expect("fingerprint serialises");
            fs::write(self.dir.join(name), text).map_err(|e| e.to_string())?;
        }
        let mut diffs = Vec::new();
        let null = serde_json::Value::Null;
        let keys: std::collections::BTreeSet<&String> = ours.keys().chain(theirs.keys()).collect();
        for key in keys {
            if fingerprint::is_ignored(key, &self.fx.diff_ignore) {
                continue;
            }
            let (a, b) = (
                ours.get(key).unwrap_or(&null),
                theirs.get(key).unwrap_or(&null),
            );
            if a != b {
                diffs.push(format!("  {key}:\n{}", fingerprint::describe_diff(a, b)));
            }
        }
        // A broken hash table in the reference means the fixture found an lld bug, not ours.
        for key in ["gnu_hash", "hash"] {
            if let Some(v) = theirs.get(key).and_then(|v| v.as_str()) {
                if v.starts_with("invalid") {
                    diffs.push(format!(
                        "  {key}: the harness rejects ld.lld's table too: {v}"
                    ));
                }
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

    fn check_determinism(
        &mut self,
        inputs: &[String],
        problems: &mut Vec<String>,
    ) -> Result<(), String> {
        let main = fs::read(self.dir.join("prog.dtld")).map_err(|e| e.to_string())?;
        for threads in [1, 2] {
            let out = format!("prog.dtld.threads{threads}");
            let flag = format!("-Wl,--threads={threads}");
            let mut cmd = self.link_command(inputs, &out, Linker::Dtld, &[&flag]);
            self.repro.push(command_line(&cmd));
            let outcome = run_tool(&mut cmd)?;
            if !outcome.success() {
                problems.push(format!(
                    "determinism link with {flag} failed (set DTLD_HARNESS_DETERMINISM=0 to skip):\n{}",
                    outcome.stderr_text()
                ));
                continue;
            }
            let bytes = fs::read(self.dir.join(&out)).map_err(|e| e.to_string())?;
            if bytes != main {
                let at = bytes
                    .iter()
                    .zip(&main)
                    .position(|(a, b)| a != b)
                    .unwrap_or(bytes.len().min(main.len()));
                problems.push(format!(
                    "nondeterministic output: {out} differs from prog.dtld (sizes {} and {}, first difference at offset {at:#x})",
                    bytes.len(),
                    main.len()
                ));
            }
        }
        Ok(())
    }
}

/// `stderr` without the lines `program` printed with its usual `<file name>: ` prefix.
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

/// The names of the entries directly in `dir`.
fn top_level_names(dir: &Path) -> Result<HashSet<String>, String> {
    let entries = fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    let mut names = HashSet::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
        names.insert(entry.file_name().to_string_lossy().into_owned());
    }
    Ok(names)
}

/// Whether `path` starts with the LLVM bitcode magic (`BC\xC0\xDE`; clang writes raw bitcode,
/// never the wrapper header).
fn is_bitcode(path: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 4];
    fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok()
        && magic == *b"BC\xC0\xDE"
}

/// The message of the first `error:` line of a linker's stderr: the text after `error: `, with
/// the program prefix (`dtld: `, `ld.lld: `, `ld.lld-22: `, a path...) removed. Lines from the compiler drivers themselves
/// (`clang-22: error: linker command failed`, `collect2: error: ld returned 1`) are skipped.
fn first_error(stderr: &str) -> Option<String> {
    let re = regex::Regex::new(r"^(\S+): error: (.*)$").expect("valid regex");
    stderr.lines().find_map(|line| {
        let caps = re.captures(line)?;
        let program = Path::new(&caps[1])
            .file_name()?
            .to_string_lossy()
            .into_owned();
        let is_driver = ["clang", "gcc", "collect2", "cc"]
            .iter()
            .any(|d| program.starts_with(d));
        (!is_driver).then(|| caps[2].to_string())
    })
}

/// The linker's exit code as reported by clang or collect2.
fn linker_exit_code(stderr: &str) -> Option<i32> {
    let re = regex::Regex::new(
        r"linker command failed with exit code (\d+)|ld returned (\d+) exit status",
    )
    .expect("valid regex");
    let caps = re.captures(stderr)?;
    caps.get(1).or(caps.get(2))?.as_str().parse().ok()
}

/// Finds the linker invocation in `clang -###` output and splits it into argv.
fn linker_line(listing: &str, linker: &Path) -> Option<Vec<String>> {
    listing.lines().find_map(|line| {
        let argv = dtld_tests::split_words(line).ok()?;
        (argv.first().map(Path::new) == Some(linker)).then_some(argv)
    })
}

/// Shows two outputs and where they first differ.
fn text_diff(ours: &[u8], theirs: &[u8]) -> String {
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
        "  first difference at line {}\n  --- dtld-linked program ---\n{}  --- lld-linked program ---\n{}",
        first + 1,
        show(ours),
        show(theirs)
    )
}
