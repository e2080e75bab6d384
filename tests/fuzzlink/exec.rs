//! Running one case: compile its sources (through a content-addressed cache shared by every
//! shape of a program), build its archives, link every library and then the program with dtld
//! and with ld.lld-22 (in separate directories when there are libraries, as the differential
//! harness does), run both programs, and compare: the link verdicts (both link, or both fail
//! with the same first error), then the programs' exit status, stdout and stderr.

use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use dtld_tests::{command_line, fresh_dir, run_with_timeout, Fnv, Outcome, CLANG, CLANGXX, GCC, GXX, LLVM_AR};

use crate::case::Case;

const LINK_TIMEOUT: Duration = Duration::from_secs(60);
const COMPILE_TIMEOUT: Duration = Duration::from_secs(120);
const RUN_TIMEOUT: Duration = Duration::from_secs(5);

/// What the whole run shares.
pub struct Env {
    pub dtld: PathBuf,
    /// `<target>/fuzzlink`.
    pub root: PathBuf,
    /// Contains `ld`, a wrapper running dtld (for `gcc -B`).
    pub gcc_dtld_dir: PathBuf,
    /// Contains `ld.lld`, a wrapper running ld.lld-22.
    pub gcc_lld_dir: PathBuf,
    /// `clang-22 --version` and `gcc --version` (part of every cache key).
    pub versions: Vec<u8>,
    /// Run every link through the compiler driver (`FUZZLINK_DRIVER=1`) instead of running
    /// the linker command the driver would run (see `LinkTemplates`).
    pub via_driver: bool,
    pub templates: LinkTemplates,
}

/// The linker command lines clang builds, one per kind of link. A clang link is a fixed
/// command with the inputs and `-Wl,` arguments in the middle, in their order; asking
/// `clang -###` once per kind (driver, linker, `-shared` or mode flag, `-flto=thin`) and
/// running the linker directly saves the driver's start-up (half of a small link's time).
/// The linker sees exactly the arguments the driver would give it.
pub struct LinkTemplates {
    /// Holds an empty `FZMARK.o` for `clang -###` to find.
    dir: PathBuf,
    map: std::sync::Mutex<std::collections::HashMap<Vec<String>, Result<Vec<String>, String>>>,
}

impl LinkTemplates {
    pub fn new(dir: PathBuf) -> std::io::Result<LinkTemplates> {
        fs::create_dir_all(&dir)?;
        fs::write(dir.join("FZMARK.o"), b"")?;
        Ok(LinkTemplates { dir, map: Default::default() })
    }

    /// The linker's argv for `driver <flags> FZMARK.o -o FZOUT`.
    fn get(&self, driver: &str, flags: &[String]) -> Result<Vec<String>, String> {
        let mut key = vec![driver.to_string()];
        key.extend(flags.iter().cloned());
        if let Some(t) = self.map.lock().unwrap().get(&key) {
            return t.clone();
        }
        let mut cmd = Command::new(driver);
        cmd.current_dir(&self.dir).arg("-###").args(flags).arg("FZMARK.o").arg("-o").arg("FZOUT");
        let t = run_with_timeout(&mut cmd, &[], COMPILE_TIMEOUT).map_err(|e| e.to_string()).and_then(|o| {
            let text = o.stderr_text();
            let line = text.lines().rev().find(|l| l.starts_with(" \"")).ok_or_else(|| format!("no command in `{}`:\n{text}", command_line(&cmd)))?;
            let argv = dtld_tests::split_words(line)?;
            if argv.iter().filter(|a| *a == "FZMARK.o").count() != 1 || !argv.iter().any(|a| a == "FZOUT") {
                return Err(format!("unexpected link command from `{}`: {line}", command_line(&cmd)));
            }
            Ok(argv)
        });
        self.map.lock().unwrap().insert(key, t.clone());
        t
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DivKind {
    /// One side linked a library, the other did not.
    LibVerdict,
    /// Both failed a library link with different errors.
    LibError,
    /// One side linked the program, the other did not.
    LinkVerdict,
    /// Both failed the program link with different errors.
    LinkError,
    /// The programs ended differently (exit code, signal, timeout).
    Exit,
    Stdout,
    Stderr,
}

impl DivKind {
    pub fn name(self) -> &'static str {
        match self {
            DivKind::LibVerdict => "lib-verdict",
            DivKind::LibError => "lib-error",
            DivKind::LinkVerdict => "link-verdict",
            DivKind::LinkError => "link-error",
            DivKind::Exit => "exit",
            DivKind::Stdout => "stdout",
            DivKind::Stderr => "stderr",
        }
    }
}

#[derive(Clone, Debug)]
pub enum Verdict {
    /// Both linked and the programs behaved the same.
    Same,
    /// Both failed the same link (the first error message).
    BothFailed(String),
    /// How, what was seen, and for a link that diverged, a signature of the errors (see
    /// `link_signature`) by which divergences of one cause are told apart.
    Diverged(DivKind, String, Option<String>),
    /// The case itself is broken: a compile failed, a tool could not run.
    Broken(String),
}

/// A finished case: the verdict and every command run (to replay by hand).
pub struct Ran {
    pub verdict: Verdict,
    pub commands: Vec<String>,
    /// Seconds spent compiling (cache misses), linking and running programs.
    pub times: [f64; 3],
    /// ld.lld's first error when it refused a link (a fixture of the case says `ExpectError`).
    pub lld_error: Option<String>,
    /// When both programs ran: dtld's and the other linker's exit status and stdout.
    pub programs: Vec<(String, Vec<u8>)>,
}

/// The linkers a case is linked with: dtld against ld.lld-22, and for a divergence that is a
/// known ld.lld-22 bug, dtld against GNU ld (the referee, `run_case_against`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Who {
    Dtld,
    Lld,
    /// GNU ld (`ld.bfd`): the third opinion on a case where ld.lld-22's program is wrong.
    Bfd,
}

impl Who {
    pub fn name(self) -> &'static str {
        match self {
            Who::Dtld => "dtld",
            Who::Lld => "lld",
            Who::Bfd => "bfd",
        }
    }

    /// How messages and signatures name it.
    pub fn label(self) -> &'static str {
        match self {
            Who::Dtld => "dtld",
            Who::Lld => "ld.lld",
            Who::Bfd => "GNU ld",
        }
    }
}

struct Side {
    linker: Who,
    dir: PathBuf,
    up: &'static str,
    prog: String,
}

struct Run<'a> {
    env: &'a Env,
    case: &'a Case,
    src: PathBuf,
    build: PathBuf,
    cache: &'a Path,
    commands: Vec<String>,
    times: [f64; 3],
    lld_error: Option<String>,
    /// The linker dtld is compared with (ld.lld-22, or GNU ld as the referee).
    other: Who,
    programs: Vec<(String, Vec<u8>)>,
}

/// Runs `case` in `dir` (recreated), compiling through the cache directory `cache`.
pub fn run_case(env: &Env, case: &Case, dir: &Path, cache: &Path) -> Ran {
    run_case_against(env, case, dir, cache, Who::Lld)
}

/// Runs `case` as `run_case` does, comparing dtld with `other`: `Who::Bfd` asks GNU ld for a
/// third opinion on a case where ld.lld-22's program is known to be wrong (its `Verdict::Same`
/// says GNU ld's link and program behave as dtld's).
pub fn run_case_against(env: &Env, case: &Case, dir: &Path, cache: &Path, other: Who) -> Ran {
    let mut run = Run {
        env,
        case,
        src: dir.join("src"),
        build: dir.join("build"),
        cache,
        commands: Vec::new(),
        times: [0.0; 3],
        lld_error: None,
        other,
        programs: Vec::new(),
    };
    let verdict = match run.go() {
        Ok(v) => v,
        Err(e) => Verdict::Broken(e),
    };
    Ran { verdict, commands: run.commands, times: run.times, lld_error: run.lld_error, programs: run.programs }
}

impl Run<'_> {
    fn go(&mut self) -> Result<Verdict, String> {
        let case = self.case;
        for d in [&self.src, &self.build] {
            fresh_dir(d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
        }
        for (name, text) in &case.files {
            fs::write(self.src.join(name), text).map_err(|e| format!("write {name}: {e}"))?;
        }
        // Compile and archive, as the harness does: objects in the build directory, archive
        // and library members in `<name>.objs/`.
        let mut inputs = vec![self.compile(&case.primary, &case.compile_flags(false, &[]), "")?];
        for g in &case.objects {
            for f in &g.files {
                inputs.push(self.compile(f, &case.compile_flags(false, &g.cflags), "")?);
            }
        }
        for (name, kind, g) in &case.archives {
            let mut objs = Vec::new();
            for f in &g.files {
                objs.push(self.compile(f, &case.compile_flags(false, &g.cflags), &format!("{name}.objs/"))?);
            }
            let mut ar = Command::new(LLVM_AR);
            ar.current_dir(&self.build).arg(kind.ar_flags()).arg(name).args(&objs);
            self.tool(&mut ar, COMPILE_TIMEOUT)?;
            inputs.push(name.clone());
        }
        let mut lib_objs = Vec::new();
        for l in &case.libs {
            let mut objs = Vec::new();
            for f in &l.group.files {
                objs.push(self.compile(f, &case.compile_flags(true, &l.group.cflags), &format!("{}.objs/", l.name))?);
            }
            lib_objs.push(objs);
        }
        let sides = [Who::Dtld, self.other].map(|linker| {
            let (dir, up) = if case.libs.is_empty() { (self.build.clone(), "") } else { (self.build.join(linker.name()), "../") };
            Side { linker, dir, up, prog: format!("prog.{}", linker.name()) }
        });
        for side in &sides {
            fs::create_dir_all(&side.dir).map_err(|e| format!("mkdir {}: {e}", side.dir.display()))?;
        }
        for (i, l) in case.libs.iter().enumerate() {
            let mut outs = Vec::new();
            for side in &sides {
                let cxx = l.group.files.iter().any(|f| crate::case::is_cxx(f));
                let mut user = vec![format!("-Wl,-soname,{}", l.name)];
                user.extend(lib_objs[i].iter().map(|o| format!("{}{o}", side.up)));
                user.extend(self.expand(&l.link_args, side)?);
                outs.push(self.link(side, cxx, &["-shared".to_string()], &user, &l.name)?);
            }
            self.note_lld_error(&outs[1]);
            match compare_links(&outs[0], &outs[1], self.other) {
                LinkCmp::BothOk => {}
                LinkCmp::BothFailed(e) => return Ok(Verdict::BothFailed(format!("{}: {e}", l.name))),
                LinkCmp::Verdict(d) => {
                    let sig = format!("lib: {}", link_signature(&outs, self.other));
                    return Ok(Verdict::Diverged(DivKind::LibVerdict, format!("link of {}: {d}", l.name), Some(sig)));
                }
                LinkCmp::Error(d) => {
                    let sig = format!("lib: {}", link_signature(&outs, self.other));
                    return Ok(Verdict::Diverged(DivKind::LibError, format!("link of {}: {d}", l.name), Some(sig)));
                }
            }
        }
        let mut outs = Vec::new();
        for side in &sides {
            let mut user: Vec<String> = inputs.iter().map(|i| format!("{}{i}", side.up)).collect();
            user.extend(case.libs.iter().filter(|l| l.linked).map(|l| l.name.clone()));
            let mut kind = vec![case.mode.link_flag().to_string()];
            if case.lto {
                kind.push("-flto=thin".to_string());
            }
            user.extend(self.expand(&case.link_args, side)?);
            outs.push(self.link(side, case.program_is_cxx(), &kind, &user, &side.prog)?);
        }
        self.note_lld_error(&outs[1]);
        match compare_links(&outs[0], &outs[1], self.other) {
            LinkCmp::BothOk => {}
            LinkCmp::BothFailed(e) => return Ok(Verdict::BothFailed(e)),
            LinkCmp::Verdict(d) => return Ok(Verdict::Diverged(DivKind::LinkVerdict, d, Some(link_signature(&outs, self.other)))),
            LinkCmp::Error(d) => return Ok(Verdict::Diverged(DivKind::LinkError, d, Some(link_signature(&outs, self.other)))),
        }
        let mut runs = Vec::new();
        for side in &sides {
            let mut cmd = Command::new(side.dir.join(&side.prog));
            cmd.arg0("./prog").current_dir(&side.dir);
            if !case.libs.is_empty() {
                cmd.env("LD_LIBRARY_PATH", &side.dir);
            }
            self.commands.push(command_line(&cmd));
            let t0 = std::time::Instant::now();
            let mut o = run_with_timeout(&mut cmd, &[], RUN_TIMEOUT).map_err(|e| format!("cannot run {}: {e}", side.prog))?;
            self.times[2] += t0.elapsed().as_secs_f64();
            o.stderr = normalize(&o.stderr, &[(&side.dir, "$DIR"), (&self.build, "$BUILD")]);
            runs.push(o);
        }
        self.programs = runs.iter().map(|o| (o.status_text(), o.stdout.clone())).collect();
        let (ours, theirs) = (&runs[0], &runs[1]);
        let show = |o: &Outcome| format!("{}\n--- stdout ---\n{}--- stderr ---\n{}", o.status_text(), String::from_utf8_lossy(&o.stdout), o.stderr_text());
        let other = self.other;
        let detail = || format!("=== dtld-linked program: {}\n=== {}-linked program: {}", show(ours), other.name(), show(theirs));
        if ours.status_text() != theirs.status_text() {
            // The two statuses are the signature: a bucket may name "ld.lld's program crashes,
            // dtld's runs" (an lld bug) without claiming other exit divergences of its features.
            let signature = format!("run: dtld {}, {} {}", ours.status_text(), other.label(), theirs.status_text());
            return Ok(Verdict::Diverged(DivKind::Exit, detail(), Some(signature)));
        }
        // GNU ld's default script orders .ctors and .init_array sections another way than
        // ld.lld: against GNU ld, what constructors and destructors print is compared as a set.
        let order_free = |b: &[u8]| -> Vec<u8> {
            let text = String::from_utf8_lossy(b);
            let (mut rest, mut ctors): (Vec<&str>, Vec<&str>) = text.lines().partition(|l| !["ctor ", "init ", "dtor "].iter().any(|p| l.starts_with(p)));
            ctors.sort_unstable();
            rest.push("--- constructors and destructors, sorted ---");
            rest.extend(ctors);
            rest.join("\n").into_bytes()
        };
        if other == Who::Bfd && order_free(&ours.stdout) == order_free(&theirs.stdout) && ours.stderr == theirs.stderr {
            return Ok(Verdict::Same);
        }
        if ours.stdout != theirs.stdout {
            return Ok(Verdict::Diverged(DivKind::Stdout, format!("{}\n{}", first_line_difference(&ours.stdout, &theirs.stdout, other), detail()), None));
        }
        if ours.stderr != theirs.stderr {
            return Ok(Verdict::Diverged(DivKind::Stderr, detail(), None));
        }
        Ok(Verdict::Same)
    }

    /// Compiles `file` (from the source directory) into `subdir` of the build directory;
    /// returns the object's path relative to the build directory.
    fn compile(&mut self, file: &str, flags: &[String], subdir: &str) -> Result<String, String> {
        let compiler = self.case.compiler(file);
        let text = fs::read(self.src.join(file)).map_err(|e| format!("read {file}: {e}"))?;
        let mut key = Fnv::default();
        key.field(compiler.as_bytes());
        key.field(&self.env.versions);
        key.field(file.as_bytes());
        for f in canonical_flags(flags) {
            key.field(f.as_bytes());
        }
        key.field(&text);
        let cached = self.cache.join(format!("{:016x}.o", key.finish()));
        let stem = file.rsplit_once('.').map_or(file, |(s, _)| s);
        let rel = format!("{subdir}{stem}.o");
        let out = self.build.join(&rel);
        if let Some(parent) = out.parent() {
            fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        let mut cmd = Command::new(compiler);
        cmd.current_dir(&self.src).arg("-c").args(flags).arg(file).arg("-o").arg(&out);
        self.commands.push(command_line(&cmd));
        if !cached.is_file() {
            let tmp = self.cache.join(format!("{:016x}.{}.tmp", key.finish(), std::process::id()));
            let mut real = Command::new(compiler);
            real.current_dir(&self.src).arg("-c").args(flags).arg(file).arg("-o").arg(&tmp);
            let t0 = std::time::Instant::now();
            let o = run_with_timeout(&mut real, &[], COMPILE_TIMEOUT).map_err(|e| format!("cannot run {compiler}: {e}"))?;
            self.times[0] += t0.elapsed().as_secs_f64();
            if !o.success() {
                let _ = fs::remove_file(&tmp);
                return Err(format!("compile failed ({}):\n  {}\n{}", o.status_text(), command_line(&cmd), o.stderr_text()));
            }
            fs::rename(&tmp, &cached).map_err(|e| format!("cache {}: {e}", cached.display()))?;
        }
        if fs::hard_link(&cached, &out).is_err() {
            fs::copy(&cached, &out).map_err(|e| format!("copy {}: {e}", cached.display()))?;
        }
        Ok(rel)
    }

    fn note_lld_error(&mut self, lld: &Outcome) {
        if !lld.success() && self.lld_error.is_none() {
            self.lld_error = Some(first_error(&lld.stderr_text()).unwrap_or_default());
        }
    }

    fn tool(&mut self, cmd: &mut Command, timeout: Duration) -> Result<Outcome, String> {
        self.commands.push(command_line(cmd));
        let o = run_with_timeout(cmd, &[], timeout).map_err(|e| format!("cannot run `{}`: {e}", command_line(cmd)))?;
        if !o.success() {
            return Err(format!("command failed ({}):\n  {}\n{}", o.status_text(), command_line(cmd), o.stderr_text()));
        }
        Ok(o)
    }

    /// Links `out` in the side's directory: the driver command is `<driver> <user args in
    /// order> -o <out> <linker selection> <kind flags>` (the harness's order; `-flto=thin` among
    /// the user arguments of a library moves to the kind flags: it selects the link's kind).
    fn link(&mut self, side: &Side, cxx: bool, kind: &[String], user: &[String], out: &str) -> Result<Outcome, String> {
        let (lto, mut user): (Vec<String>, Vec<String>) = user.iter().cloned().partition(|a| a == "-flto=thin");
        // Every error, not the first 20: ld.lld scans relocations in parallel, so which 20 it
        // prints varies, and the first errors are compared as sets (`compare_links`). GNU ld
        // has no limit (nor the option).
        if side.linker != Who::Bfd {
            user.push("-Wl,--error-limit=0".to_string());
        }
        let mut kind = kind.to_vec();
        kind.extend(lto);
        let mut drv = self.driver(side, cxx);
        drv.args(&user).arg("-o").arg(out);
        self.select(&mut drv, side);
        drv.args(&kind);
        if self.case.gcc_driver || self.env.via_driver {
            return self.run_link(&mut drv);
        }
        self.commands.push(format!("# {}", command_line(&drv)));
        let mut flags = vec![self.selection(side)];
        flags.extend(kind);
        let template = self.env.templates.get(drv.get_program().to_str().unwrap_or_default(), &flags)?;
        let mut argv = Vec::new();
        for a in template {
            match a.as_str() {
                "FZOUT" => argv.push(out.to_string()),
                "FZMARK.o" => {
                    for u in &user {
                        match u.strip_prefix("-Wl,") {
                            Some(list) => argv.extend(list.split(',').map(String::from)),
                            None => argv.push(u.clone()),
                        }
                    }
                }
                _ => argv.push(a),
            }
        }
        let mut cmd = Command::new(&argv[0]);
        cmd.current_dir(&side.dir).args(&argv[1..]);
        self.run_link(&mut cmd)
    }

    fn run_link(&mut self, cmd: &mut Command) -> Result<Outcome, String> {
        self.commands.push(command_line(cmd));
        let t0 = std::time::Instant::now();
        let o = run_with_timeout(cmd, &[], LINK_TIMEOUT).map_err(|e| format!("cannot run `{}`: {e}", command_line(cmd)));
        self.times[1] += t0.elapsed().as_secs_f64();
        o
    }

    /// The compiler driver that links, in the side's directory.
    fn driver(&self, side: &Side, cxx: bool) -> Command {
        let mut cmd = Command::new(match (self.case.gcc_driver, cxx) {
            (false, false) => CLANG,
            (false, true) => CLANGXX,
            (true, false) => GCC,
            (true, true) => GXX,
        });
        cmd.current_dir(&side.dir);
        cmd
    }

    /// clang's linker selection.
    fn selection(&self, side: &Side) -> String {
        match side.linker {
            Who::Dtld => format!("-fuse-ld={}", self.env.dtld.display()),
            Who::Lld => "-fuse-ld=lld".to_string(),
            Who::Bfd => "-fuse-ld=bfd".to_string(),
        }
    }

    /// The linker selection: `-fuse-ld=` for clang, `-B` wrappers for gcc.
    fn select(&self, cmd: &mut Command, side: &Side) {
        match (self.case.gcc_driver, side.linker) {
            (false, _) | (true, Who::Bfd) => {
                cmd.arg(self.selection(side));
            }
            (true, Who::Dtld) => {
                cmd.arg(format!("-B{}/", self.env.gcc_dtld_dir.display()));
            }
            (true, Who::Lld) => {
                cmd.arg("-fuse-ld=lld").arg(format!("-B{}/", self.env.gcc_lld_dir.display()));
            }
        }
    }

    fn expand(&self, args: &[String], side: &Side) -> Result<Vec<String>, String> {
        let (src, dir, build) = (self.src.to_string_lossy(), side.dir.to_string_lossy(), self.build.to_string_lossy());
        let mut out = Vec::new();
        for a in args {
            let a = a.replace("$SRC", &src).replace("$DIR", &dir).replace("$BUILD", &build);
            match a.strip_prefix("-Wl,-T,") {
                // ld.lld adds a script without SECTIONS to its default layout; GNU ld's -T
                // replaces its default script, and a script given as an input file adds to it.
                Some(script) if side.linker == Who::Bfd => {
                    let text = fs::read_to_string(script).map_err(|e| format!("read {script}: {e}"))?;
                    if text.contains("SECTIONS") {
                        return Err("a SECTIONS script: GNU ld's -T replaces its whole default layout, ld.lld's does not".to_string());
                    }
                    out.push(script.to_string());
                }
                // Safe ICF folds only what no program can tell apart; GNU ld has no ICF.
                _ if side.linker == Who::Bfd && a == "-Wl,--icf=safe" => {}
                _ => out.push(a),
            }
        }
        Ok(out)
    }
}

enum LinkCmp {
    BothOk,
    BothFailed(String),
    Verdict(String),
    Error(String),
}

fn compare_links(ours: &Outcome, theirs: &Outcome, other: Who) -> LinkCmp {
    match (ours.success(), theirs.success()) {
        (true, true) => LinkCmp::BothOk,
        (false, false) => {
            // The programs are named after their linker (prog.dtld, prog.lld), and so are LTO's
            // objects in messages (`../prog.lld.lto.main.o`).
            let (os, ts) =
                (ours.stderr_text().replace("prog.dtld", "prog.$LINKER"), theirs.stderr_text().replace(&format!("prog.{}", other.name()), "prog.$LINKER"));
            let (o, t) = (first_error(&os), first_error(&ts));
            // ld.lld reports undefined symbols in an order that changes from run to run: the
            // first errors agree when each is among the other side's errors.
            let agree = o == t || o.as_ref().is_some_and(|o| all_errors(&ts).contains(o)) && t.as_ref().is_some_and(|t| all_errors(&os).contains(t));
            if agree {
                LinkCmp::BothFailed(t.unwrap_or_else(|| format!("no error line ({})", theirs.status_text())))
            } else {
                LinkCmp::Error(format!("first errors differ:\n  dtld:   {}\n  {}: {}", o.unwrap_or_default(), other.label(), t.unwrap_or_default()))
            }
        }
        (ok, _) => {
            let (failed, who) = if ok { (theirs, other.label()) } else { (ours, "dtld") };
            LinkCmp::Verdict(format!("only {who} failed ({}):\n{}", failed.status_text(), failed.stderr_text()))
        }
    }
}

/// The compile flags as a set of settings (the last of each kind wins), so that the same
/// compile spelled differently (a group flag undoing a `CFlags` one) hits the cache.
fn canonical_flags(flags: &[String]) -> Vec<String> {
    let mut settings: std::collections::BTreeMap<String, String> = std::collections::BTreeMap::new();
    for f in flags {
        let kind = match f.as_str() {
            "-fPIC" | "-fPIE" | "-fno-pic" | "-fpic" | "-fpie" => "pic",
            "-ffunction-sections" | "-fno-function-sections" => "fsect",
            "-fdata-sections" | "-fno-data-sections" => "dsect",
            "-flto=thin" | "-flto=full" | "-fno-lto" | "-flto" => "lto",
            crate::shape::CREL | "-Wa,--no-crel" => "crel",
            "-fsemantic-interposition" | "-fno-semantic-interposition" => "semint",
            "-fplt" | "-fno-plt" => "plt",
            "-fcommon" | "-fno-common" => "common",
            f if f.starts_with("-O") => "opt",
            f if f.starts_with("-mtls-dialect=") => "tlsdialect",
            f if f.starts_with("-fvisibility=") => "visibility",
            f => f,
        };
        settings.insert(kind.to_string(), f.clone());
    }
    settings.into_iter().map(|(k, v)| format!("{k}={v}")).collect()
}

/// What each linker did with a link that diverged, `dtld fails: <first error> | ld.lld links`
/// (or `dtld links | ld.lld fails: ...`, or both failing), generated names and paths blanked.
fn link_signature(outs: &[Outcome], other: Who) -> String {
    let side = |who: &str, o: &Outcome| {
        if o.success() {
            format!("{who} links")
        } else {
            format!("{who} fails: {}", error_class(&first_error(&o.stderr_text()).unwrap_or_else(|| o.status_text())))
        }
    };
    format!("{} | {}", side("dtld", &outs[0]), side(other.label(), &outs[1]))
}

/// An error message with the names of generated symbols and files blanked, so that messages
/// of one kind count together.
pub fn error_class(e: &str) -> String {
    // Quoted file names (ThinLTO's objects are named like `'../prog.lto.libx.a(u2.o at 258).o'`)
    // and paths.
    let files = regex::Regex::new(r"'[^']*(\.o|\.a|\.so|\.lds|\.map|\))'|[^ ']*/[^ ':]*").expect("valid regex");
    let names = regex::Regex::new(r"\b(fz\d+_[a-z0-9_]+|[gftvckx]\d+(_a\d+|_old|_\d)?|u\d+|main|libfz\w*\.(so|a|map))\b").expect("valid regex");
    names.replace_all(&files.replace_all(e, "_"), "_").chars().take(120).collect()
}

fn all_errors(stderr: &str) -> Vec<String> {
    stderr.lines().filter_map(first_error).collect()
}

/// The message of the first `error:` line of a link's stderr, without the program prefix
/// (`dtld: `, `ld.lld: `, a path); the drivers' own lines are skipped (as the harness does).
pub fn first_error(stderr: &str) -> Option<String> {
    stderr.lines().find_map(|line| {
        let (program, msg) = line.split_once(": error: ")?;
        if program.contains(' ') {
            return None;
        }
        let name = Path::new(program).file_name()?.to_string_lossy().into_owned();
        let is_driver = ["clang", "gcc", "g++", "c++", "collect2", "cc"].iter().any(|d| name.starts_with(d));
        (!is_driver).then(|| msg.to_string())
    })
}

fn normalize(bytes: &[u8], paths: &[(&Path, &str)]) -> Vec<u8> {
    let mut text = String::from_utf8_lossy(bytes).into_owned();
    for (p, with) in paths {
        let p = p.to_string_lossy();
        if !p.is_empty() {
            text = text.replace(p.as_ref(), with);
        }
    }
    text.into_bytes()
}

fn first_line_difference(a: &[u8], b: &[u8], other: Who) -> String {
    let (a, b) = (String::from_utf8_lossy(a), String::from_utf8_lossy(b));
    let (la, lb): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let i = la.iter().zip(&lb).position(|(x, y)| x != y).unwrap_or(la.len().min(lb.len()));
    format!("first difference at stdout line {}:\n  dtld:   {}\n  {}: {}", i + 1, la.get(i).unwrap_or(&"<end>"), other.label(), lb.get(i).unwrap_or(&"<end>"))
}
