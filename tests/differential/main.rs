//! The differential harness: every fixture in `fixtures/elf/` is compiled once with clang-22
//! (clang++-22 for C++ sources), linked twice with the same compiler-driver command (once with
//! dtld, once with ld.lld-22), and the two programs must behave identically (exit status,
//! stdout, stderr) and have the same structural fingerprint (see `fingerprint.rs`). dtld's link
//! must also be deterministic. This is how dtld stays a drop-in replacement: lld is the oracle
//! for every behaviour we test.
//!
//! Shared libraries (`//#Shared:` and `//#Dlopen:`) are built by both linkers too: each linker
//! gets its own directory (`<trial>/dtld/`, `<trial>/lld/`) in which it links every library and
//! then the program against its own libraries; the program runs there. The fingerprints of the
//! libraries are part of the comparison (keys `lib:<name>:<key>`), and the two mixed
//! combinations (dtld's program with lld's libraries and the reverse) must behave like lld's
//! program with lld's libraries.
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

#[allow(dead_code)]
mod common;
mod debugger;
mod directives;
mod fingerprint;
mod sizes;

use std::collections::HashSet;
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use common::{check_links, compare_mixed_run, top_level_names, verdict, without_program_lines, Step};
use directives::{Driver, Fixture, Mode};
use dtld_tests::{
    check_tools, command_line, find_distributor, find_dtld, first_difference, fresh_dir, lock_target_subdir, run_tool, run_tool_ok, run_with_timeout,
    target_dir, workspace_root, wrapper_dir, CompileCache, Linker, Outcome, CLANG, CLANGXX, GCC, GXX, LLD, LLVM_AR,
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
        check_tools(&[CLANG, CLANGXX, LLD, LLVM_AR])?;
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
            keep: common::keep_build_dirs(),
            determinism: common::check_determinism(),
            distributor: find_distributor(),
        })
    }
}

fn main() {
    let args = Arguments::from_args();
    // Two runs sharing a target directory would recreate each other's build directories;
    // the lock (released when the process exits) makes the second one wait.
    let _lock = lock_target_subdir("differential", "differential harness");
    let trials = make_trials();
    libtest_mimic::run(&args, trials).exit();
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
                trials.push(common::bad_fixture_trial(format!("elf/{name}"), e));
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
fn run_trial(ctx: &Context, fx: &Fixture, mode: Mode, driver: Driver, dtlto: bool) -> Result<(), String> {
    let distributor = if dtlto { Some(ctx.distributor.clone()?) } else { None };
    let leaf = match (driver, dtlto) {
        (Driver::Clang, false) => mode.name().to_string(),
        (Driver::Clang, true) => format!("{}-dtlto", mode.name()),
        (Driver::Gcc, _) => format!("{}-gcc", mode.name()),
    };
    let dir = ctx.build_root.join(&fx.name).join(leaf);
    fresh_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let sides = [Linker::Dtld, Linker::Lld].map(|linker| Side::new(&dir, fx, linker));
    let mut t = TrialRun {
        ctx,
        fx,
        mode,
        driver,
        dir: dir.clone(),
        sides,
        inputs: Vec::new(),
        lib_objects: Vec::new(),
        repro: Vec::new(),
        bitcode_objects: 0,
        distributor,
    };
    let result = match (t.run(), &fx.open) {
        (r, None) => r,
        (Ok(()), Some(why)) => {
            Err(format!("this known divergence is fixed (it was: {why}): remove `//#Open:` from the fixture (and its bucket stays closed in tests/fuzzlink)"))
        }
        (Err(_), Some(_)) => Ok(()),
    };
    common::finish_trial(result, &dir, ctx.keep, "", &t.repro)
}

/// Where one linker's links run and its outputs (and program runs) live.
struct Side {
    linker: Linker,
    /// Absolute. The trial's build directory for fixtures without shared libraries, else
    /// `<build>/dtld` or `<build>/lld`, so that every path (`-L.`, rpaths, `LD_LIBRARY_PATH`,
    /// `dlopen` by name) reaches this linker's own libraries.
    dir: PathBuf,
    /// What turns a path relative to the build directory into one relative to `dir`.
    up: &'static str,
    /// The program's file name in `dir`.
    prog: String,
}

impl Side {
    fn new(build: &Path, fx: &Fixture, linker: Linker) -> Side {
        let (dir, up) = if fx.libraries.is_empty() { (build.to_path_buf(), "") } else { (build.join(linker.name()), "../") };
        Side { linker, dir, up, prog: format!("prog.{}", linker.name()) }
    }
}

struct TrialRun<'a> {
    ctx: &'a Context,
    fx: &'a Fixture,
    mode: Mode,
    driver: Driver,
    /// The trial's build directory (objects and archives).
    dir: PathBuf,
    /// dtld's side, then lld's.
    sides: [Side; 2],
    /// The program's objects and archives, relative to `dir`.
    inputs: Vec<String>,
    /// Each library's objects, relative to `dir`.
    lib_objects: Vec<Vec<String>>,
    repro: Vec<String>,
    /// How many compiled objects are LLVM bitcode (checked for `Lto` fixtures).
    bitcode_objects: usize,
    /// `/dtlto` trials: both links add `-fthinlto-distributor=<this>`.
    distributor: Option<PathBuf>,
}

impl TrialRun<'_> {
    fn run(&mut self) -> Result<(), String> {
        self.build_inputs()?;
        for side in &self.sides {
            fs::create_dir_all(&side.dir).map_err(|e| format!("cannot create {}: {e}", side.dir.display()))?;
        }
        let mut problems = Vec::new();

        // Every library, by both linkers, in directive order (a library may link against the
        // ones before it, which are in the same directory).
        for index in 0..self.fx.libraries.len() {
            let step = Step::Library(index);
            let (ours, theirs) = self.link_both(step)?;
            if self.fx.expect_error.is_some() && !theirs.success() {
                return self.expected_error(step, &ours, &theirs, None);
            }
            check_links(&self.step_name(step), &ours, &theirs, &mut problems)?;
            self.soname_links(index)?;
        }

        let before = self.snapshot()?;
        let (ours, theirs) = self.link_both(Step::Program)?;
        if self.fx.expect_error.is_some() {
            return self.expected_error(Step::Program, &ours, &theirs, Some(&before));
        }
        if let Err(e) = check_links("link", &ours, &theirs, &mut problems) {
            // The libraries were linked by both: their differences explain more than the
            // program's link error alone.
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
        self.compare_section_sizes(&mut problems)?;
        self.compare_section_bytes(&mut problems)?;
        self.compare_dwarf_dumps(&mut problems)?;
        self.compare_readelf(&mut problems)?;
        self.compare_gdb_sessions(&mut problems)?;
        if self.driver == Driver::Clang && self.ctx.determinism {
            self.check_determinism(&mut problems)?;
        }
        if let Err(e) = self.check_leftovers(&before) {
            problems.push(e);
        }
        verdict(problems)
    }

    /// The output file of `step` in a side's directory.
    fn output_name(&self, step: Step, side: &Side) -> String {
        match step {
            Step::Library(i) => self.fx.libraries[i].name.clone(),
            Step::Program => side.prog.clone(),
        }
    }

    /// What the messages call `step`.
    fn step_name(&self, step: Step) -> String {
        step.describe(self.fx)
    }

    /// Runs `step` with dtld, then with ld.lld; returns (dtld's outcome, ld.lld's).
    fn link_both(&mut self, step: Step) -> Result<(Outcome, Outcome), String> {
        let dtld_cmd = self.link_command(step, &self.sides[0], &self.output_name(step, &self.sides[0]), &[]);
        let lld_cmd = self.link_command(step, &self.sides[1], &self.output_name(step, &self.sides[1]), &[]);
        self.repro.push(command_line(&dtld_cmd));
        self.repro.push(command_line(&lld_cmd));
        let mut ours = run_tool(&mut { dtld_cmd })?;
        let mut theirs = run_tool(&mut { lld_cmd })?;
        if let (Some(d), Step::Program) = (&self.distributor, step) {
            // The distributor's own messages name temporary files, which differ by design
            // (lld's carry its PID): they are not link diagnostics.
            for o in [&mut ours, &mut theirs] {
                o.stderr = without_program_lines(&o.stderr, d);
            }
        }
        Ok((ours, theirs))
    }

    /// The result of an `ExpectError` trial whose failing link is `step`.
    fn expected_error(&mut self, step: Step, ours: &Outcome, theirs: &Outcome, before: Option<&Snapshot>) -> Result<(), String> {
        let re = self.fx.expect_error.clone().expect("ExpectError fixture");
        let mut result = self.check_expected_error(&re, step, ours, theirs);
        if let Some(before) = before {
            if let Err(e) = self.check_leftovers(before) {
                result = Err(match result {
                    Ok(()) => e,
                    Err(first) => format!("{first}\n{e}"),
                });
            }
        }
        result
    }

    /// When a library's soname differs from its file name, adds `<soname> -> <file>` in the
    /// side's directory (what ldconfig would do), so the loader finds it by its DT_NEEDED name.
    fn soname_links(&self, index: usize) -> Result<(), String> {
        let name = &self.fx.libraries[index].name;
        for side in &self.sides {
            if let Some(soname) = soname_of(&side.dir.join(name))? {
                link_soname(&side.dir, &soname, name)?;
            }
        }
        Ok(())
    }

    /// Flags for one source: the defaults, `-flto=` (program sources of an `Lto` fixture;
    /// shared libraries are always native), `CFlags`, then the group's own flags, so that a
    /// per-source `-fno-lto` or `-flto=full` wins.
    fn compile_flags(&self, shared_lib: bool, extra: &[String]) -> Vec<String> {
        let pic = if shared_lib { "-fPIC" } else { self.mode.compile_flag() };
        let mut flags: Vec<String> = ["-g0", "-O1", pic].iter().map(|s| s.to_string()).collect();
        if let (false, Some(lto)) = (shared_lib, self.fx.lto) {
            flags.push(lto.flag().to_string());
        }
        flags.extend(self.fx.cflags.iter().cloned());
        flags.extend(extra.iter().cloned());
        flags
    }

    /// Compiles every source and builds the archives. Sets the program's link inputs (relative
    /// to the build directory, in order: objects, archives) and each shared library's objects.
    fn build_inputs(&mut self) -> Result<(), String> {
        let fx = self.fx;
        let mut repro = std::mem::take(&mut self.repro);
        let built =
            common::build_inputs(fx, &self.dir, &self.ctx.cache, |shared_lib, extra| self.compile_flags(shared_lib, extra), &mut |line| repro.push(line));
        self.repro = repro;
        let built = built?;
        self.bitcode_objects = built.bitcode_objects;
        // An `Lto` fixture whose sources all ended up native (say, `-fno-lto` in `CFlags`)
        // would silently test ordinary linking.
        if let (Some(lto), 0) = (fx.lto, self.bitcode_objects) {
            return Err(format!("the fixture says `Lto: {}` but no source was compiled to LLVM bitcode", lto.name()));
        }
        self.inputs = built.program;
        self.lib_objects = built.libraries;
        Ok(())
    }

    /// The command for one link in `side`'s directory; identical for both linkers except for
    /// the linker selection (and `$DIR`, which is each side's directory). The program links its
    /// objects, archives and `Shared` libraries (file names in the side's directory), a library
    /// its objects with `-shared -Wl,-soname,<name>` and its `--` arguments.
    fn link_command(&self, step: Step, side: &Side, out: &str, extra: &[&str]) -> Command {
        let cxx = match step {
            Step::Library(i) => self.fx.libraries[i].sources.is_cxx(),
            Step::Program => self.fx.program_is_cxx(),
        };
        let mut cmd = Command::new(match (self.driver, cxx) {
            (Driver::Clang, false) => CLANG,
            (Driver::Clang, true) => CLANGXX,
            (Driver::Gcc, false) => GCC,
            (Driver::Gcc, true) => GXX,
        });
        cmd.current_dir(&side.dir);
        let link_args = match step {
            Step::Library(i) => {
                let lib = &self.fx.libraries[i];
                cmd.arg("-shared").arg(format!("-Wl,-soname,{}", lib.name)).args(self.lib_objects[i].iter().map(|o| format!("{}{o}", side.up)));
                &lib.link_args
            }
            Step::Program => {
                cmd.args(self.inputs.iter().map(|i| format!("{}{i}", side.up))).args(self.fx.libraries.iter().filter(|l| l.linked).map(|l| &l.name));
                &self.fx.link_args
            }
        };
        cmd.arg("-o").arg(out);
        match (self.driver, side.linker) {
            (Driver::Clang, linker) => {
                cmd.arg(linker.fuse_ld(&self.ctx.dtld));
            }
            (Driver::Gcc, Linker::Dtld) => {
                cmd.arg(format!("-B{}/", self.ctx.gcc_dtld_dir.display()));
            }
            (Driver::Gcc, Linker::Lld) => {
                cmd.arg("-fuse-ld=lld").arg(format!("-B{}/", self.ctx.gcc_lld_dir.display()));
            }
        }
        if step == Step::Program {
            cmd.arg(self.mode.link_flag());
            if let Some(lto) = self.fx.lto {
                // Makes clang pass `-plugin .../LLVMgold.so -plugin-opt=...` to dtld (nothing
                // but `-plugin-opt=...` to ld.lld), as a real LTO build would.
                cmd.arg(lto.flag());
            }
            if let Some(d) = &self.distributor {
                // clang turns this into `--thinlto-distributor=<d>` and
                // `--thinlto-remote-compiler=<its own path>` for either linker.
                cmd.arg(common::distributor_flag(d));
            }
        }
        cmd.args(extra).args(common::expand_link_args(link_args, &side.dir, &self.dir));
        cmd
    }

    /// The names in each distinct side directory (taken before the program links).
    fn snapshot(&self) -> Result<Snapshot, String> {
        let mut snap: Snapshot = Vec::new();
        for side in &self.sides {
            if !snap.iter().any(|(d, _)| *d == side.dir) {
                snap.push((side.dir.clone(), top_level_names(&side.dir)?));
            }
        }
        Ok(snap)
    }

    /// `/dtlto` trials: nothing but the links' outputs (and the harness's own files) may have
    /// appeared in the directories the program links ran in: no job file, shard, native
    /// object, extracted archive member or `<output>.dtld-lto/` directory.
    fn check_leftovers(&self, before: &Snapshot) -> Result<(), String> {
        if self.distributor.is_none() {
            return Ok(());
        }
        let expected = |name: &str| {
            name.starts_with("fingerprint.")
                || name == "sizes.txt"
                || (name.starts_with("dwarfdump") || name.starts_with("gdb.")) && name.ends_with(".txt")
                || name.contains(".threads")
                || name.ends_with(".direct")
                || self.sides.iter().any(|s| s.prog == name)
        };
        let mut left = Vec::new();
        for (dir, names) in before {
            for n in top_level_names(dir)? {
                if !names.contains(&n) && !expected(&n) {
                    left.push(dir.join(n).strip_prefix(&self.dir).map_or_else(|_| dir.display().to_string(), |p| p.display().to_string()));
                }
            }
        }
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

    fn check_expected_error(&mut self, re: &regex::Regex, step: Step, ours: &Outcome, theirs: &Outcome) -> Result<(), String> {
        let mut problems = Vec::new();
        common::check_expected_error(re, &self.step_name(step), ours, theirs, &mut problems);
        let side = &self.sides[0];
        let out = self.output_name(step, side);
        if !ours.success() && side.dir.join(&out).exists() {
            problems.push("dtld failed but left an output file".to_string());
        }
        // The drivers delete a failed link's output themselves, so check the linker's own exit
        // code and cleanup by running the exact linker command clang would run.
        if self.driver == Driver::Clang && !ours.success() {
            let direct_out = match step {
                Step::Program => "prog.direct".to_string(),
                Step::Library(_) => format!("{out}.direct"),
            };
            let mut probe = self.link_command(step, side, &direct_out, &["-###"]);
            let listed = run_tool(&mut probe)?;
            match linker_line(&listed.stderr_text(), &self.ctx.dtld) {
                Some(argv) => {
                    let mut direct = Command::new(&argv[0]);
                    direct.current_dir(&side.dir).args(&argv[1..]);
                    self.repro.push(format!("# the linker alone:\n  {}", command_line(&direct)));
                    let outcome = run_tool(&mut direct)?;
                    if outcome.status_text() != "exit 1" {
                        problems.push(format!("dtld run directly: {}, expected exit 1", outcome.status_text()));
                    }
                    if self.sides[0].dir.join(&direct_out).exists() {
                        problems.push("dtld run directly failed but left its output file".to_string());
                    }
                }
                None => problems.push(format!("no linker command in `clang -###` output:\n{}", listed.stderr_text())),
            }
        }
        verdict(problems)
    }

    /// Runs `dir/exe` in `dir` (with `LD_LIBRARY_PATH=dir` when the fixture has libraries).
    fn run_program(&mut self, dir: &Path, exe: &str) -> Result<Outcome, String> {
        let fx = self.fx;
        let mut cmd = Command::new(dir.join(exe));
        // Same argv[0] for both programs, in case a fixture prints it.
        cmd.arg0("./prog").current_dir(dir).args(&fx.run_args);
        if !fx.libraries.is_empty() {
            cmd.env("LD_LIBRARY_PATH", dir);
        }
        for (k, v) in &fx.env {
            cmd.env(k, v);
        }
        self.repro.push(command_line(&cmd));
        let mut outcome = run_with_timeout(&mut cmd, &fx.stdin, RUN_TIMEOUT).map_err(|e| format!("cannot run {exe}: {e}"))?;
        if !fx.scrub.is_empty() {
            let replacements = self.path_replacements(dir);
            for stream in [&mut outcome.stdout, &mut outcome.stderr] {
                *stream = scrub(stream, &fx.scrub, &replacements, exe);
            }
        }
        Ok(outcome)
    }

    /// The absolute paths a transcript may contain, longest first, with their placeholders:
    /// the directory a program ran in (`$DIR`) and the trial's build directory (`$BUILD`).
    fn path_replacements(&self, dir: &Path) -> Vec<(String, &'static str)> {
        vec![(dir.to_string_lossy().into_owned(), "$DIR"), (self.dir.to_string_lossy().into_owned(), "$BUILD")]
    }

    /// `SectionSizes`: the sizes of the sections the fixture names, dtld's against ld.lld's
    /// (the table is written to `sizes.txt`).
    fn compare_section_sizes(&mut self, problems: &mut Vec<String>) -> Result<(), String> {
        if self.fx.section_sizes.is_empty() {
            return Ok(());
        }
        let read = |side: &Side| -> Result<sizes::Sizes, String> {
            let path = side.dir.join(&side.prog);
            let data = fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            sizes::section_sizes(&data).map_err(|e| format!("{}'s program: {e}", side.linker.name()))
        };
        let (ours, theirs) = (read(&self.sides[0])?, read(&self.sides[1])?);
        let (table, found) = sizes::compare(&ours, &theirs, &self.fx.section_sizes);
        fs::write(self.dir.join("sizes.txt"), table).map_err(|e| e.to_string())?;
        problems.extend(found);
        Ok(())
    }

    /// `SectionBytes`: the contents of each named section must be ld.lld's, byte for byte (for
    /// sections whose bytes the linker makes, such as `.gdb_index`). The first differing
    /// offset is reported.
    fn compare_section_bytes(&mut self, problems: &mut Vec<String>) -> Result<(), String> {
        for name in &self.fx.section_bytes {
            let mut got = Vec::new();
            for side in &self.sides {
                let path = side.dir.join(&side.prog);
                let data = fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
                got.push(sizes::section_contents(&data, name).map_err(|e| format!("{}'s program: {e}", side.linker.name()))?);
            }
            match (&got[0], &got[1]) {
                (_, None) => problems.push(format!("ld.lld's program has no {name} (fixture bug?)")),
                (None, Some(_)) => problems.push(format!("dtld's program has no {name}")),
                (Some(a), Some(b)) if a != b => {
                    let at = a.iter().zip(b.iter()).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
                    problems.push(format!("{name} differs: {} bytes (dtld) vs {} (ld.lld), first difference at offset {at:#x}", a.len(), b.len()));
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// `DwarfDump`: `llvm-dwarfdump-22 <args>` of both programs, normalised (addresses and
    /// string offsets, see `debugger::normalize_dwarfdump`), must be equal and not empty. The
    /// dumps are written to `dwarfdump<N>.{dtld,lld}.txt`.
    fn compare_dwarf_dumps(&mut self, problems: &mut Vec<String>) -> Result<(), String> {
        let fx = self.fx;
        for (n, args) in fx.dwarf_dump.iter().enumerate() {
            let mut dumps = Vec::new();
            for side in &self.sides {
                let mut cmd = debugger::dwarfdump_command(&side.dir, args, &side.prog);
                self.repro.push(command_line(&cmd));
                let out = run_tool_ok(&mut cmd)?;
                let text = debugger::normalize_dwarfdump(&String::from_utf8_lossy(&out.stdout), &self.path_replacements(&side.dir), &side.prog);
                let file = self.dir.join(format!("dwarfdump{n}.{}.txt", side.linker.name()));
                fs::write(&file, &text).map_err(|e| e.to_string())?;
                dumps.push(text);
            }
            let what = format!("llvm-dwarfdump {}", args.join(" "));
            // The first line names the file; a dump with nothing else shows nothing.
            if dumps[1].lines().filter(|l| !l.trim().is_empty()).count() < 3 {
                problems.push(format!("{what} of ld.lld's program is empty (fixture bug? is it built with -g?)"));
            } else if dumps[0] != dumps[1] {
                problems.push(format!(
                    "{what} differs (normalised dumps in dwarfdump{n}.{{dtld,lld}}.txt):\n{}",
                    debugger::first_line_difference(&dumps[0], &dumps[1])
                ));
            }
        }
        Ok(())
    }

    /// `Readelf`: `llvm-readelf-22 --wide <args>` of both programs must be equal, except what
    /// only describes non-allocated sections (`.comment` names each linker, so their offsets
    /// and the symbol tables' sizes differ): see `debugger::normalize_readelf`. The outputs are
    /// written to `readelf<N>.{dtld,lld}.txt`.
    fn compare_readelf(&mut self, problems: &mut Vec<String>) -> Result<(), String> {
        let fx = self.fx;
        for (n, args) in fx.readelf.iter().enumerate() {
            let mut dumps = Vec::new();
            for side in &self.sides {
                let mut cmd = Command::new(debugger::LLVM_READELF);
                cmd.current_dir(&side.dir).arg("--wide").args(args).arg(&side.prog);
                self.repro.push(command_line(&cmd));
                let out = run_tool_ok(&mut cmd)?;
                let text = debugger::normalize_readelf(&String::from_utf8_lossy(&out.stdout), &side.prog);
                let file = self.dir.join(format!("readelf{n}.{}.txt", side.linker.name()));
                fs::write(&file, &text).map_err(|e| e.to_string())?;
                dumps.push(text);
            }
            if dumps[0] != dumps[1] {
                problems.push(format!(
                    "llvm-readelf {} differs (outputs in readelf{n}.{{dtld,lld}}.txt):\n{}",
                    args.join(" "),
                    debugger::first_line_difference(&dumps[0], &dumps[1])
                ));
            }
        }
        Ok(())
    }

    /// `Gdb`: both programs under `gdb -batch` with the fixture's commands; the normalised
    /// transcripts (written to `gdb.{dtld,lld}.txt`) must be equal and match every `GdbExpect`.
    fn compare_gdb_sessions(&mut self, problems: &mut Vec<String>) -> Result<(), String> {
        let fx = self.fx;
        if fx.gdb.is_empty() {
            return Ok(());
        }
        check_tools(&[debugger::GDB]).map_err(|e| format!("{e} (the `Gdb` directive needs it; scripts/setup.sh installs it)"))?;
        let mut sessions = Vec::new();
        for side in &self.sides {
            let mut cmd = debugger::gdb_command(fx, &side.dir, &side.prog);
            self.repro.push(command_line(&cmd));
            let outcome = debugger::run_gdb(&mut cmd)?;
            let replacements = self.path_replacements(&side.dir);
            let norm = |b: &[u8]| debugger::normalize_gdb(&String::from_utf8_lossy(b), &replacements, &side.prog);
            let (out, err) = (norm(&outcome.stdout), norm(&outcome.stderr));
            let file = self.dir.join(format!("gdb.{}.txt", side.linker.name()));
            fs::write(&file, format!("{out}--- stderr ---\n{err}")).map_err(|e| e.to_string())?;
            sessions.push((outcome.status_text(), out, err));
        }
        let (ours, theirs) = (&sessions[0], &sessions[1]);
        for re in &fx.gdb_expect {
            if !re.is_match(&theirs.1) {
                problems.push(format!("gdb on ld.lld's program does not show /{re}/ (fixture bug? see gdb.lld.txt)"));
            } else if !re.is_match(&ours.1) {
                problems.push(format!("gdb on dtld's program does not show /{re}/"));
            }
        }
        if ours.0 != theirs.0 {
            problems.push(format!("gdb ended differently: dtld's {}, ld.lld's {}", ours.0, theirs.0));
        }
        for (what, a, b) in [("output", &ours.1, &theirs.1), ("stderr", &ours.2, &theirs.2)] {
            if a != b {
                problems.push(format!("gdb {what} differs (normalised transcripts in gdb.{{dtld,lld}}.txt):\n{}", debugger::first_line_difference(a, b)));
            }
        }
        Ok(())
    }

    /// Runs both programs and compares them; returns the lld-linked program's outcome.
    fn compare_runs(&mut self, problems: &mut Vec<String>) -> Result<Outcome, String> {
        let (dtld_dir, dtld_prog) = (self.sides[0].dir.clone(), self.sides[0].prog.clone());
        let (lld_dir, lld_prog) = (self.sides[1].dir.clone(), self.sides[1].prog.clone());
        let ours = self.run_program(&dtld_dir, &dtld_prog)?;
        let theirs = self.run_program(&lld_dir, &lld_prog)?;
        common::compare_program_runs(&ours, &theirs, "", problems);
        Ok(theirs)
    }

    /// Runs each linker's program with the other linker's libraries (copied together into
    /// `<build>/mixed-<prog linker>-prog/`, soname links included) and compares them with the
    /// lld program with lld libraries.
    fn compare_mixed_runs(&mut self, reference: &Outcome, problems: &mut Vec<String>) -> Result<(), String> {
        for (p, l) in [(0, 1), (1, 0)] {
            let (prog_side, lib_side) = (&self.sides[p], &self.sides[l]);
            let label = format!("{} program with {} libraries", prog_side.linker.name(), lib_side.linker.name());
            let dir = self.dir.join(format!("mixed-{}-prog", prog_side.linker.name()));
            let io = |e: std::io::Error| format!("cannot set up {}: {e}", dir.display());
            fresh_dir(&dir).map_err(io)?;
            fs::copy(prog_side.dir.join(&prog_side.prog), dir.join(&prog_side.prog)).map_err(io)?;
            for lib in &self.fx.libraries {
                fs::copy(lib_side.dir.join(&lib.name), dir.join(&lib.name)).map_err(io)?;
                // The program was linked against its own side's library: its DT_NEEDED is
                // that one's soname.
                for side in [prog_side, lib_side] {
                    if let Some(soname) = soname_of(&side.dir.join(&lib.name))? {
                        link_soname(&dir, &soname, &lib.name)?;
                    }
                }
            }
            let prog = prog_side.prog.clone();
            let outcome = self.run_program(&dir, &prog)?;
            compare_mixed_run(&outcome, reference, &label, "lld program with lld libraries", problems);
        }
        Ok(())
    }

    /// The fingerprint of one side: its program's keys (unless `with_program` is false), then
    /// every library's keys under `lib:<name>:`, with the side's directory written as `$DIR` and
    /// the build directory as `$BUILD`.
    fn side_fingerprint(&self, side: &Side, with_program: bool) -> Result<fingerprint::Fingerprint, String> {
        let read = |name: &str| {
            let path = side.dir.join(name);
            fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))
        };
        let who = side.linker.name();
        let mut fp = if with_program {
            fingerprint::fingerprint(&read(&side.prog)?).map_err(|e| format!("{who}'s program: {e}"))?
        } else {
            fingerprint::Fingerprint::new()
        };
        for lib in &self.fx.libraries {
            let lib_fp = fingerprint::fingerprint(&read(&lib.name)?).map_err(|e| format!("{who}'s {}: {e}", lib.name))?;
            common::extend_prefixed(&mut fp, &common::library_prefix(&lib.name), lib_fp);
        }
        fingerprint::replace_paths(&mut fp, &[(side.dir.to_string_lossy().into_owned(), "$DIR"), (self.dir.to_string_lossy().into_owned(), "$BUILD")]);
        Ok(fp)
    }

    /// Compares the two sides' fingerprints (only the libraries' when `with_program` is false,
    /// after a failed program link).
    fn compare_fingerprints(&mut self, problems: &mut Vec<String>, with_program: bool) -> Result<(), String> {
        let ours = self.side_fingerprint(&self.sides[0], with_program)?;
        let theirs = self.side_fingerprint(&self.sides[1], with_program)?;
        let mut diffs = common::fingerprint_diffs(&self.dir, &ours, &theirs, |key| fingerprint::is_ignored(key, &self.fx.diff_ignore))?;
        // A broken hash table in the reference means the fixture found an lld bug, not ours.
        for (key, v) in &theirs {
            let plain = common::library_key(key).map_or(key.as_str(), |(_, k)| k);
            if !["gnu_hash", "hash"].contains(&plain) {
                continue;
            }
            if let Some(v) = v.as_str().filter(|v| v.starts_with("invalid")) {
                diffs.push(format!("  {key}: the harness rejects ld.lld's table too: {v}"));
            }
        }
        common::push_fingerprint_problem(diffs, problems);
        Ok(())
    }

    /// Links every dtld output (libraries and program) twice more, with `--threads=1` and
    /// `--threads=2`, and requires byte-identical files.
    fn check_determinism(&mut self, problems: &mut Vec<String>) -> Result<(), String> {
        for step in Step::all(self.fx) {
            let side = &self.sides[0];
            let main_out = self.output_name(step, side);
            let main = fs::read(side.dir.join(&main_out)).map_err(|e| e.to_string())?;
            for threads in [1, 2] {
                let out = format!("{main_out}.threads{threads}");
                let flag = format!("-Wl,--threads={threads}");
                let mut cmd = self.link_command(step, &self.sides[0], &out, &[&flag]);
                self.repro.push(command_line(&cmd));
                let outcome = run_tool(&mut cmd)?;
                if !outcome.success() {
                    problems.push(format!("determinism link with {flag} failed (set DTLD_HARNESS_DETERMINISM=0 to skip):\n{}", outcome.stderr_text()));
                    continue;
                }
                let bytes = fs::read(self.sides[0].dir.join(&out)).map_err(|e| e.to_string())?;
                if bytes != main {
                    let at = first_difference(&bytes, &main);
                    problems.push(format!(
                        "nondeterministic output: {out} differs from {main_out} (sizes {} and {}, first difference at offset {at:#x})",
                        bytes.len(),
                        main.len()
                    ));
                }
            }
        }
        Ok(())
    }
}

/// A run's output with the build paths and the program's name replaced (`replacements`, then
/// `exe` → `prog`), then every match of the fixture's `Scrub` patterns replaced by `…`.
fn scrub(stream: &[u8], patterns: &[regex::Regex], replacements: &[(String, &str)], exe: &str) -> Vec<u8> {
    let mut text = String::from_utf8_lossy(stream).into_owned();
    for (from, to) in replacements {
        if !from.is_empty() {
            text = text.replace(from.as_str(), to);
        }
    }
    let name = regex::Regex::new(&format!(r"\b{}\b", regex::escape(exe))).expect("valid regex");
    text = name.replace_all(&text, "prog").into_owned();
    for re in patterns {
        text = re.replace_all(&text, "…").into_owned();
    }
    text.into_bytes()
}

/// The names in each directory the program links run in, before they run.
type Snapshot = Vec<(PathBuf, HashSet<String>)>;

/// The DT_SONAME of a shared library, if it has one that is not a path.
fn soname_of(path: &Path) -> Result<Option<String>, String> {
    let data = fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let elf = goblin::elf::Elf::parse(&data).map_err(|e| format!("goblin cannot parse {}: {e}", path.display()))?;
    Ok(elf.soname.filter(|s| !s.is_empty() && !s.contains('/')).map(String::from))
}

/// Makes `dir/soname` a symlink to `file` (nothing when they are the same name).
fn link_soname(dir: &Path, soname: &str, file: &str) -> Result<(), String> {
    if soname == file {
        return Ok(());
    }
    let link = dir.join(soname);
    let _ = fs::remove_file(&link);
    std::os::unix::fs::symlink(file, &link).map_err(|e| format!("cannot create {}: {e}", link.display()))
}

/// Finds the linker invocation in `clang -###` output and splits it into argv.
fn linker_line(listing: &str, linker: &Path) -> Option<Vec<String>> {
    listing.lines().find_map(|line| {
        let argv = dtld_tests::split_words(line).ok()?;
        (argv.first().map(Path::new) == Some(linker)).then_some(argv)
    })
}
