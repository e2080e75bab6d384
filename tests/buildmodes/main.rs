//! The build modes that take more than one link: profile-guided optimization and source
//! coverage. Each fixture in `fixtures/buildmodes/` is one story, built the way real projects
//! build, with dtld and with ld.lld-22 side by side:
//!
//! - `Flow: pgo`: compile with `-fprofile-instr-generate`, link both, run both (each writes
//!   its raw profile through `LLVM_PROFILE_FILE`), `llvm-profdata-22 merge` each, compare the
//!   merged profiles' function counts (`llvm-profdata-22 show`) and binary IDs, merge both raw
//!   profiles together; then compile again with `-fprofile-instr-use=` (ld.lld's profile, so
//!   the second half tests dtld's link of the same objects even when its first program wrote
//!   nothing), check that the objects carry `.llvm.call-graph-profile` with REL relocations,
//!   link both, run both, and compare fingerprints, section sizes and the order of the
//!   functions in `.text` (lld sorts them by the call graph profile). For ThinLTO fixtures
//!   (`-flto=thin` in `CFlags`) the profile-use bitcode must carry the profile summary (the
//!   backends write the call-graph section into objects the harness cannot see), and the
//!   functions compared are those `llvm-nm-22` lists in the bitcode.
//! - `Flow: coverage`: compile with `-fprofile-instr-generate -fcoverage-mapping`, link, run,
//!   merge, and compare `llvm-cov-22 report` and `llvm-cov-22 show` of the two programs, and
//!   the report of dtld's program read with ld.lld's profile.
//!
//! One libtest-mimic trial per fixture and mode, `buildmodes/<fixture>/<mode>`, working in
//! `<target>/buildmodes/<fixture>/<mode>/` (kept when the trial fails). The directive
//! vocabulary is the differential harness's (`fixtures/README.md`, "Build modes"), whose
//! parser, compile cache, comparisons and fingerprint this target shares.
//!
//! Environment: `DTLD` (the linker under test, as for the differential harness),
//! `DTLD_HARNESS_KEEP=1` (keep every trial's directory).

#[allow(dead_code)]
#[path = "../differential/common.rs"]
mod common;
#[allow(dead_code)]
#[path = "../differential/debugger.rs"]
mod debugger;
#[allow(dead_code)]
#[path = "../differential/directives.rs"]
mod directives;
#[allow(dead_code)]
#[path = "../differential/fingerprint.rs"]
mod fingerprint;
#[allow(dead_code)]
#[path = "../differential/sizes.rs"]
mod sizes;

use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use directives::{Fixture, Flow, Mode, Target};
use dtld_tests::{
    check_tools, command_line, find_dtld, fresh_dir, lock_target_subdir, run_tool, run_tool_ok, run_with_timeout, target_dir, workspace_root, CompileCache,
    Linker, Outcome, CLANG, CLANGXX, LLD, LLVM_AR,
};
use libtest_mimic::{Arguments, Failed, Trial};

const LLVM_PROFDATA: &str = "llvm-profdata-22";
const LLVM_COV: &str = "llvm-cov-22";
const LLVM_NM: &str = "llvm-nm-22";
const BITCODE_MAGIC: &[u8] = b"BC\xC0\xDE";

/// How long a fixture program may run (instrumented programs are slower).
const RUN_TIMEOUT: Duration = Duration::from_secs(10);

struct Context {
    build_root: PathBuf,
    cache: CompileCache,
    dtld: PathBuf,
    keep: bool,
}

impl Context {
    fn new() -> Result<Context, String> {
        check_tools(&[CLANG, CLANGXX, LLD, LLVM_AR, LLVM_PROFDATA, LLVM_COV])?;
        let dtld = find_dtld()?;
        let build_root = target_dir().join("buildmodes");
        let cache = CompileCache::new(build_root.join(".cache")).map_err(|e| format!("cannot set up {}: {e}", build_root.display()))?;
        Ok(Context { build_root, cache, dtld, keep: common::keep_build_dirs() })
    }
}

fn main() {
    let args = Arguments::from_args();
    let _lock = lock_target_subdir("buildmodes", "build-modes harness");
    libtest_mimic::run(&args, make_trials()).exit();
}

fn make_trials() -> Vec<Trial> {
    let dir = workspace_root().join("fixtures").join("buildmodes");
    let found = match directives::discover(&dir) {
        Ok(found) => found,
        Err(e) => return vec![Trial::test("buildmodes/discover", move || Err(e.into()))],
    };
    let ctx: Result<Arc<Context>, String> = Context::new().map(Arc::new);
    let mut trials = Vec::new();
    for (name, primary) in found {
        let fx = match directives::parse_for(Target::BuildModes, &name, &primary, fingerprint::KEYS) {
            Ok(fx) => Arc::new(fx),
            Err(e) => {
                trials.push(common::bad_fixture_trial(format!("buildmodes/{name}"), e));
                continue;
            }
        };
        for &mode in &fx.modes {
            let (ctx, fx) = (ctx.clone(), fx.clone());
            trials.push(Trial::test(format!("buildmodes/{name}/{}", mode.name()), move || {
                let ctx = ctx.map_err(Failed::from)?;
                run_trial(&ctx, &fx, mode).map_err(Failed::from)
            }));
        }
    }
    trials
}

fn run_trial(ctx: &Context, fx: &Fixture, mode: Mode) -> Result<(), String> {
    let dir = ctx.build_root.join(&fx.name).join(mode.name());
    fresh_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut run = FlowRun { ctx, fx, mode, dir: dir.clone(), repro: Vec::new(), problems: Vec::new() };
    let result = match fx.flow.expect("buildmodes fixtures have a flow") {
        Flow::Pgo => run.pgo(),
        Flow::Coverage => run.coverage(),
    };
    // Differences found before a step that could not go on come first.
    let mut problems = std::mem::take(&mut run.problems);
    if let Err(e) = result {
        problems.push(e);
    }
    let result = common::verdict(problems);
    common::finish_trial(result, &dir, ctx.keep, "", &run.repro)
}

/// The two programs of one step, in `<trial>/<step>/`: `prog.dtld` and `prog.lld`.
const SIDES: [Linker; 2] = [Linker::Dtld, Linker::Lld];

fn prog(linker: Linker) -> String {
    format!("prog.{}", linker.name())
}

struct FlowRun<'a> {
    ctx: &'a Context,
    fx: &'a Fixture,
    mode: Mode,
    dir: PathBuf,
    repro: Vec<String>,
    /// Differences found so far (the trial goes on after a difference, so that one run shows
    /// everything that differs; an `Err` stops it).
    problems: Vec<String>,
}

impl FlowRun<'_> {
    // -----------------------------------------------------------------------------------------
    // The flows.

    fn pgo(&mut self) -> Result<(), String> {
        // The optimized half uses ld.lld's profile, so it runs even when dtld's instrumented
        // half failed.
        if let Err(e) = self.pgo_generate() {
            self.problems.push(e);
        }
        let profile = self.dir.join("gen").join("lld.profdata");
        if !profile.is_file() {
            return Err("no merged profile from ld.lld's instrumented program: the \
                        profile-use half cannot run"
                .into());
        }
        self.pgo_use(&profile)
    }

    /// Instrumented build, runs, profiles (`<trial>/gen/`).
    fn pgo_generate(&mut self) -> Result<(), String> {
        let gen = self.compile("gen", &["-fprofile-instr-generate"])?;
        self.link_both("gen", &gen, &["-fprofile-instr-generate"])?;
        self.compare_fingerprints("gen")?;
        let wrote = self.run_with_profiles("gen")?;
        self.merge("gen", Linker::Lld)?;
        if wrote && self.merge("gen", Linker::Dtld)? {
            self.compare_tool_output("gen", "llvm-profdata show --all-functions --counts", |dir, side| {
                let mut cmd = Command::new(LLVM_PROFDATA);
                cmd.current_dir(dir).args(["show", "--all-functions", "--counts"]).arg(format!("{}.profdata", side.name()));
                cmd
            })?;
            self.compare_binary_ids("gen")?;
            // Profiles of the two programs are one program's profiles: they must merge.
            let mut both = Command::new(LLVM_PROFDATA);
            both.current_dir(self.dir.join("gen")).args(["merge", "-o", "both.profdata", "dtld.profraw", "lld.profraw"]);
            let outcome = self.tool(&mut both)?;
            if !outcome.success() {
                self.problems.push(format!("llvm-profdata cannot merge dtld's raw profile with ld.lld's:\n{}", outcome.stderr_text()));
            }
        }

        Ok(())
    }

    /// The optimized build from ld.lld's profile (`<trial>/use/`; the same objects for both
    /// links).
    fn pgo_use(&mut self, profile: &Path) -> Result<(), String> {
        let use_flag = format!("-fprofile-instr-use={}", profile.display());
        let objects = self.compile("use", &[&use_flag])?;
        self.require_call_graph_profile("use", &objects)?;
        self.link_both("use", &objects, &[])?;
        self.compare_runs("use", None)?;
        self.compare_fingerprints("use")?;
        self.compare_section_sizes("use")?;
        self.compare_function_order("use", &objects)?;
        Ok(())
    }

    fn coverage(&mut self) -> Result<(), String> {
        let flags = ["-fprofile-instr-generate", "-fcoverage-mapping"];
        let objects = self.compile("cov", &flags)?;
        self.link_both("cov", &objects, &flags)?;
        self.compare_fingerprints("cov")?;
        self.compare_section_sizes("cov")?;
        let wrote = self.run_with_profiles("cov")?;
        self.merge("cov", Linker::Lld)?;
        let merged = wrote && self.merge("cov", Linker::Dtld)?;
        // llvm-cov names the files relative to their common directory.
        let primary = self.fx.primary.file_name().unwrap_or_default().to_string_lossy().into_owned();
        let report = |prog_side: Linker, profile_side: Linker| {
            move |dir: &Path, _: Linker| {
                let mut cmd = Command::new(LLVM_COV);
                cmd.current_dir(dir).arg("report").arg(prog(prog_side)).arg(format!("-instr-profile={}.profdata", profile_side.name()));
                cmd
            }
        };
        // dtld's program read with ld.lld's profile: its coverage mapping on its own.
        let lld_report = self.tool_text("cov", &report(Linker::Lld, Linker::Lld), Linker::Lld)?;
        if !lld_report.contains(&primary) || !lld_report.contains("TOTAL") {
            return Err(format!("llvm-cov report of ld.lld's program does not cover {primary} (fixture bug?):\n{lld_report}"));
        }
        let mixed = self.tool_text("cov", &report(Linker::Dtld, Linker::Lld), Linker::Dtld)?;
        self.compare_texts("llvm-cov report of dtld's program with ld.lld's profile", "cov/report.mixed.txt", &mixed, &lld_report)?;
        if merged {
            self.compare_tool_output("cov", "llvm-cov report", |dir, side| report(side, side)(dir, side))?;
            self.compare_tool_output("cov", "llvm-cov show", |dir, side| {
                let mut cmd = Command::new(LLVM_COV);
                cmd.current_dir(dir).arg("show").arg(prog(side)).arg(format!("-instr-profile={}.profdata", side.name()));
                cmd
            })?;
        }
        Ok(())
    }

    // -----------------------------------------------------------------------------------------
    // Steps.

    /// Compiles every source into `<trial>/<step>/` with `-g0 -O2 <mode> <extra> <CFlags>
    /// <group flags>`; returns the program's inputs (relative to that directory).
    fn compile(&mut self, step: &str, extra: &[&str]) -> Result<Vec<String>, String> {
        let dir = self.dir.join(step);
        fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let (fx, mode) = (self.fx, self.mode);
        let flags = |_shared: bool, group: &[String]| {
            let mut f: Vec<String> = ["-g0", "-O2", mode.compile_flag()].iter().chain(extra).map(|s| s.to_string()).collect();
            f.extend(fx.cflags.iter().cloned());
            f.extend(group.iter().cloned());
            f
        };
        let mut repro = Vec::new();
        let built = common::build_inputs(fx, &dir, &self.ctx.cache, flags, &mut |l| repro.push(l));
        self.repro.extend(repro);
        Ok(built?.program)
    }

    /// Links `inputs` in `<trial>/<step>/` with both linkers through clang (`extra` before the
    /// fixture's `LinkArgs`); both must succeed, with the same diagnostics.
    fn link_both(&mut self, step: &str, inputs: &[String], extra: &[&str]) -> Result<(), String> {
        let dir = self.dir.join(step);
        let mut outcomes = Vec::new();
        for side in SIDES {
            let mut cmd = Command::new(if self.fx.program_is_cxx() { CLANGXX } else { CLANG });
            cmd.current_dir(&dir)
                .args(inputs)
                .arg("-o")
                .arg(prog(side))
                .arg(side.fuse_ld(&self.ctx.dtld))
                .arg(self.mode.link_flag())
                .args(extra)
                .args(common::expand_link_args(&self.fx.link_args, &dir, &dir));
            self.repro.push(command_line(&cmd));
            outcomes.push(run_tool(&mut cmd)?);
        }
        common::check_links(&format!("{step} link"), &outcomes[0], &outcomes[1], &mut self.problems)
    }

    /// Runs `<step>/prog.<side>` in `<step>/` (argv[0] `./prog`, the fixture's arguments,
    /// stdin and environment, plus `LLVM_PROFILE_FILE` when `profile` is given).
    fn run(&mut self, step: &str, side: Linker, profile: Option<&Path>) -> Result<Outcome, String> {
        let dir = self.dir.join(step);
        let mut cmd = Command::new(dir.join(prog(side)));
        cmd.arg0("./prog").current_dir(&dir).args(&self.fx.run_args);
        for (k, v) in &self.fx.env {
            cmd.env(k, v);
        }
        if let Some(p) = profile {
            cmd.env("LLVM_PROFILE_FILE", p);
        }
        self.repro.push(command_line(&cmd));
        run_with_timeout(&mut cmd, &self.fx.stdin, RUN_TIMEOUT).map_err(|e| format!("cannot run {step}/{}: {e}", prog(side)))
    }

    /// Runs both programs of `step` and compares them; returns ld.lld's run.
    fn compare_runs(&mut self, step: &str, profiles: Option<[&Path; 2]>) -> Result<Outcome, String> {
        let ours = self.run(step, Linker::Dtld, profiles.map(|p| p[0]))?;
        let theirs = self.run(step, Linker::Lld, profiles.map(|p| p[1]))?;
        let mut found = Vec::new();
        common::compare_program_runs(&ours, &theirs, &format!(" ({step})"), &mut found);
        self.problems.extend(found.into_iter().map(|f| format!("{step} programs: {f}")));
        Ok(theirs)
    }

    /// Runs both instrumented programs with `LLVM_PROFILE_FILE=<step>/<side>.profraw` and
    /// compares them. ld.lld's must succeed and write its profile (else the fixture is
    /// broken); returns whether dtld's wrote one (a missing profile is a problem).
    fn run_with_profiles(&mut self, step: &str) -> Result<bool, String> {
        let dir = self.dir.join(step);
        let raw = |side: Linker| dir.join(format!("{}.profraw", side.name()));
        let (ours, theirs) = (raw(Linker::Dtld), raw(Linker::Lld));
        let reference = self.compare_runs(step, Some([&ours, &theirs]))?;
        if !reference.success() {
            return Err(format!("ld.lld's instrumented program failed ({}): the fixture is broken:\n{}", reference.status_text(), reference.stderr_text()));
        }
        let size = |p: &Path| fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        if size(&theirs) == 0 {
            return Err(format!("ld.lld's instrumented program wrote no profile to {}", theirs.display()));
        }
        if size(&ours) == 0 {
            self.problems.push(format!(
                "dtld's instrumented program wrote no profile (LLVM_PROFILE_FILE={}{})",
                ours.display(),
                if ours.exists() { ": empty file" } else { "" }
            ));
            return Ok(false);
        }
        Ok(true)
    }

    /// `llvm-profdata merge -o <side>.profdata <side>.profraw` in `<step>/`; ld.lld's must
    /// merge (else the fixture is broken), dtld's failing is a problem. Returns whether it
    /// merged.
    fn merge(&mut self, step: &str, side: Linker) -> Result<bool, String> {
        let mut cmd = Command::new(LLVM_PROFDATA);
        cmd.current_dir(self.dir.join(step)).arg("merge").arg("-o").arg(format!("{}.profdata", side.name())).arg(format!("{}.profraw", side.name()));
        let outcome = self.tool(&mut cmd)?;
        match (outcome.success(), side) {
            (true, _) => Ok(true),
            (false, Linker::Lld) => Err(format!("llvm-profdata cannot merge ld.lld's profile:\n{}", outcome.stderr_text())),
            (false, Linker::Dtld) => {
                self.problems.push(format!("llvm-profdata cannot merge dtld's profile:\n{}", outcome.stderr_text()));
                Ok(false)
            }
        }
    }

    /// The binary IDs each raw profile carries (the profile runtime reads the program's
    /// build-ID note): the same number, of the same lengths (the values differ: each linker
    /// hashes its own output).
    fn compare_binary_ids(&mut self, step: &str) -> Result<(), String> {
        let mut shapes = Vec::new();
        for side in SIDES {
            let mut cmd = Command::new(LLVM_PROFDATA);
            cmd.current_dir(self.dir.join(step)).args(["show", "--binary-ids"]).arg(format!("{}.profraw", side.name()));
            let text = String::from_utf8_lossy(&run_tool_ok(&mut cmd)?.stdout).into_owned();
            self.repro.push(command_line(&cmd));
            let ids: Vec<usize> = text
                .lines()
                .skip_while(|l| !l.starts_with("Binary IDs:"))
                .skip(1)
                .map(|l| l.trim())
                .filter(|l| !l.is_empty() && l.chars().all(|c| c.is_ascii_hexdigit()))
                .map(|l| l.len() / 2)
                .collect();
            shapes.push(ids);
        }
        if shapes[1].is_empty() {
            return Err("ld.lld's raw profile has no binary ID (fixture bug?)".into());
        }
        if shapes[0] != shapes[1] {
            self.problems.push(format!("binary IDs in the raw profiles differ: dtld's {:?} bytes, ld.lld's {:?} bytes", shapes[0], shapes[1]));
        }
        Ok(())
    }

    /// Runs `tool(<step dir>, side)` for both sides and compares the outputs (written to
    /// `<step>/<what>.<side>.txt`); ld.lld's must succeed and say something.
    fn compare_tool_output(&mut self, step: &str, what: &str, tool: impl Fn(&Path, Linker) -> Command) -> Result<(), String> {
        let theirs = self.tool_text(step, &tool, Linker::Lld)?;
        let ours = self.tool_text(step, &tool, Linker::Dtld)?;
        let file = format!("{step}/{}", what.replace([' ', '-'], "_"));
        self.compare_texts(what, &file, &ours, &theirs)
    }

    /// The output of `tool(<step dir>, side)`; ld.lld's side must succeed with output, dtld's
    /// failing gives its stderr as its text (so the comparison shows it).
    fn tool_text(&mut self, step: &str, tool: &dyn Fn(&Path, Linker) -> Command, side: Linker) -> Result<String, String> {
        let mut cmd = tool(&self.dir.join(step), side);
        let outcome = self.tool(&mut cmd)?;
        if side == Linker::Lld && (!outcome.success() || outcome.stdout.is_empty()) {
            return Err(format!(
                "`{}` failed on ld.lld's side ({}), so the fixture is broken:\n{}",
                command_line(&cmd),
                outcome.status_text(),
                outcome.stderr_text()
            ));
        }
        if !outcome.success() {
            return Ok(format!("(failed: {})\n{}", outcome.status_text(), outcome.stderr_text()));
        }
        Ok(String::from_utf8_lossy(&outcome.stdout).into_owned())
    }

    /// Writes both texts (`<file>.dtld.txt`, `<file>.lld.txt` under the trial) and records a
    /// problem when they differ.
    fn compare_texts(&mut self, what: &str, file: &str, ours: &str, theirs: &str) -> Result<(), String> {
        for (side, text) in [("dtld", ours), ("lld", theirs)] {
            let path = self.dir.join(format!("{file}.{side}.txt"));
            fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
        if ours != theirs {
            self.problems.push(format!("{what} differs ({file}.{{dtld,lld}}.txt):\n{}", debugger::first_line_difference(ours, theirs)));
        }
        Ok(())
    }

    fn tool(&mut self, cmd: &mut Command) -> Result<Outcome, String> {
        self.repro.push(command_line(cmd));
        run_tool(cmd)
    }

    fn read_program(&self, step: &str, side: Linker) -> Result<Vec<u8>, String> {
        let path = self.dir.join(step).join(prog(side));
        fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))
    }

    fn compare_fingerprints(&mut self, step: &str) -> Result<(), String> {
        let dir = self.dir.join(step);
        let mut fps = Vec::new();
        for side in SIDES {
            let mut fp = fingerprint::fingerprint(&self.read_program(step, side)?).map_err(|e| format!("{}'s {step} program: {e}", side.name()))?;
            fingerprint::replace_paths(&mut fp, &[(dir.to_string_lossy().into_owned(), "$DIR")]);
            fps.push(fp);
        }
        let diffs = common::fingerprint_diffs(&dir, &fps[0], &fps[1], |key| fingerprint::is_ignored(key, &self.fx.diff_ignore))?;
        let mut found = Vec::new();
        common::push_fingerprint_problem(diffs, &mut found);
        self.problems.extend(found.into_iter().map(|f| format!("{step} programs: {f}")));
        Ok(())
    }

    fn compare_section_sizes(&mut self, step: &str) -> Result<(), String> {
        if self.fx.section_sizes.is_empty() {
            return Ok(());
        }
        let read = |side| -> Result<sizes::Sizes, String> { sizes::section_sizes(&self.read_program(step, side)?) };
        let (ours, theirs) = (read(Linker::Dtld)?, read(Linker::Lld)?);
        let (table, found) = sizes::compare(&ours, &theirs, &self.fx.section_sizes);
        fs::write(self.dir.join(step).join("sizes.txt"), table).map_err(|e| e.to_string())?;
        self.problems.extend(found.into_iter().map(|f| format!("{step} programs: {f}")));
        Ok(())
    }

    /// The profile-use objects must carry what this flow is about: a `.llvm.call-graph-profile`
    /// section and a REL (not RELA) relocation section for it. ThinLTO bitcode carries the
    /// profile instead (its summary in the module flags), and the LTO backends write the
    /// section into the objects they hand the linker, which the tests cannot see: only the
    /// function order then tells.
    fn require_call_graph_profile(&mut self, step: &str, objects: &[String]) -> Result<(), String> {
        use goblin::elf::section_header::SHT_REL;
        let mut found = false;
        for o in objects {
            let path = self.dir.join(step).join(o);
            let data = fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            if data.starts_with(BITCODE_MAGIC) {
                found |= data.windows(b"ProfileSummary".len()).any(|w| w == b"ProfileSummary");
                continue;
            }
            let Ok(elf) = goblin::elf::Elf::parse(&data) else { continue };
            let name = |i: usize| elf.section_headers.get(i).and_then(|sh| elf.shdr_strtab.get_at(sh.sh_name)).unwrap_or("");
            found |= elf.section_headers.iter().any(|sh| sh.sh_type == SHT_REL && name(sh.sh_info as usize) == ".llvm.call-graph-profile");
        }
        if found {
            Ok(())
        } else {
            Err(format!(
                "no {step} object has a .llvm.call-graph-profile section with REL relocations \
                 (fixture bug? the profile must make calls between functions hot)"
            ))
        }
    }

    /// The order in which the fixture's functions (the FUNC symbols its objects define) are
    /// placed in each output: ld.lld sorts input sections by the call graph profile
    /// (`--call-graph-profile-sort`, on by default), so a linker that uses the profile as lld
    /// does places them in the same order.
    fn compare_function_order(&mut self, step: &str, objects: &[String]) -> Result<(), String> {
        use goblin::elf::sym::STT_FUNC;
        let mut names = std::collections::BTreeSet::new();
        for o in objects {
            let path = self.dir.join(step).join(o);
            let data = fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            if data.starts_with(BITCODE_MAGIC) {
                // ThinLTO bitcode: its defined functions as llvm-nm lists them.
                let mut nm = Command::new(LLVM_NM);
                nm.arg("--defined-only").arg(&path);
                let out = self.tool(&mut nm)?;
                if !out.success() {
                    return Err(format!("{LLVM_NM} {}: {}", path.display(), out.stderr_text()));
                }
                for l in String::from_utf8_lossy(&out.stdout).lines() {
                    let f: Vec<&str> = l.split_whitespace().collect();
                    if let [_, "T" | "t", name] = f[..] {
                        names.insert(name.to_string());
                    }
                }
                continue;
            }
            let Ok(elf) = goblin::elf::Elf::parse(&data) else { continue };
            for sym in elf.syms.iter() {
                if sym.st_type() == STT_FUNC && sym.st_shndx != 0 {
                    if let Some(n) = elf.strtab.get_at(sym.st_name) {
                        names.insert(n.to_string());
                    }
                }
            }
        }
        let mut orders = Vec::new();
        for side in SIDES {
            let data = self.read_program(step, side)?;
            let elf = goblin::elf::Elf::parse(&data).map_err(|e| format!("goblin cannot parse {}'s {step} program: {e}", side.name()))?;
            let mut placed: Vec<(u64, String)> = elf
                .syms
                .iter()
                .filter(|s| s.st_type() == STT_FUNC && s.st_shndx != 0)
                .filter_map(|s| {
                    let n = elf.strtab.get_at(s.st_name)?;
                    names.contains(n).then(|| (s.st_value, n.to_string()))
                })
                .collect();
            placed.sort();
            placed.dedup_by(|a, b| a.1 == b.1);
            orders.push(placed.into_iter().map(|(_, n)| n).collect::<Vec<_>>().join("\n") + "\n");
        }
        if orders[1].trim().is_empty() {
            return Err(format!("none of the fixture's functions is in ld.lld's {step} program (fixture bug?)"));
        }
        let (ours, theirs) = (orders[0].clone(), orders[1].clone());
        self.compare_texts("the order of the fixture's functions in the output (call-graph profile sort)", &format!("{step}/function_order"), &ours, &theirs)
    }
}
