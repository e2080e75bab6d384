//! Why this exists: DTLTO (`clang -flto=thin -fthinlto-distributor=<d>`) hands the ThinLTO
//! backends to an external distributor through a JSON job file, and the differential fixtures
//! only see the linked programs. This target checks what they cannot: the job file itself against
//! ld.lld-22's, the distributor's argv and working directory, the failure contract when the
//! distributor misbehaves, the cache, `--save-temps`, signals and concurrent links.
//!
//! The distributor is usually `recorder.py` (next to this file), written only from LLVM's
//! documented contract: read the job file named by the last argument and run
//! `common.args + job.args` for every job in the current directory. Each trial writes its own
//! copy with a log directory (every call: argv, cwd, pid and a copy of the job file) and, for the
//! fault trials, a way to misbehave. So these trials also show that a distributor written to
//! LLVM's contract works with dtld. The `distributor/dtld-distribute-*` and
//! `faults/compiler-fails` trials use dtld's own distributor, `dtld-distribute`.
//!
//! Inputs (built once per run with `/usr/lib/llvm-22/bin/clang -flto=thin -O2 -c`): `main.o`,
//! `mid.o`, `leaf.o` (bitcode), `libarch.a` (a regular archive with the bitcode member `arch.o`),
//! `lib/libthin.a` (a thin archive with the bitcode member `lib/thin.o`) and `native.o` (a native
//! object): five ThinLTO modules. main calls mid_value, arch_fn and thin_fn, so it imports from
//! mid.o, arch.o and thin.o; arch.o imports from mid.o; leaf_value is reached only through a
//! function pointer, so leaf.o imports nothing and nobody imports from it.
//!
//! Trials (each in `<target>/dtlto-tests/<trial>/`, deleted when it passes, kept on failure or
//! with `DTLD_HARNESS_KEEP=1`; links run in its `work/` (or `dtld/` and `lld/`), distributor
//! scripts and logs live in its `tools/`, outside what is compared):
//!
//! * `job-file/vs-lld[/nopie|/options]`: the same link by the linker under test and by
//!   ld.lld-22, both through `clang -fthinlto-distributor=<recorder> -Xthinlto-distributor=a,b`.
//!   Both programs print the expected line, neither leaves a file besides `prog`, each runs the
//!   distributor once as `[recorder, a, b, <job file>]` in the linker's cwd, and the two job
//!   files agree: one line; the same keys in lld's order; `common.linker_output`, `common.args`
//!   and `common.inputs` equal; as many jobs, in the same module order; every job is
//!   `args = [module, -fthinlto-index=<shard>, -o, <object>]`, `inputs = [module, shard,
//!   import sources sorted byte-wise]`, `outputs = [<object>]`; and each module imports from the
//!   same modules. Paths are compared as module identities (see [`module_identity`]), since the
//!   temporary file names differ (lld's contain its PID). `/options` adds `--lto-O3`,
//!   `--thinlto-remote-compiler-prepend-arg=` and `--thinlto-remote-compiler-arg=`.
//! * `job-file/layout/dtld-only`: every temporary the job file names (job file, shards, native
//!   objects, staged modules) is a relative path inside `<output>.dtld-lto/`, and a relink writes
//!   a byte-identical job file (no PID or random part).
//! * `distributor/dtld-distribute-with-lld`, `distributor/dtld-distribute-with-dtld`: ld.lld-22
//!   (and the linker under test) with `dtld-distribute -j 2`: the program is right and no file is
//!   left besides it. `distributor/not-run-without-thin-modules`: a link of native objects runs
//!   no distributor.
//! * `faults/*`: the linker under test, run directly (the command clang would run), must exit 1
//!   with a `dtld: error:` line, write no output and leave the directory exactly as it was, when
//!   the distributor is missing, exits 3 (the message says `exit status 3`), is killed by SIGKILL
//!   (the message names the signal), writes no objects (every missing object is listed, one line
//!   each), writes empty objects (linked as no code, as lld does: the link then fails with
//!   lld's first error, and dtld warns naming each empty object) or non-ELF objects (the message
//!   names a module), or when a backend
//!   compile fails under dtld-distribute (the message names a module). `faults/bare-name-on-path`
//!   links successfully with a distributor given as a bare name found on `PATH`.
//! * `cache/*`: `--thinlto-cache-dir=`. The first link runs the distributor once with 5 jobs; an
//!   identical relink runs no distributor and writes an identical program
//!   (`cache/unchanged-relink`); after changing leaf.c the job file holds exactly leaf.o's job
//!   (`cache/changed-leaf`); after changing mid.c it holds mid.o's job and the jobs of the
//!   modules that import from mid.o in the first link's job file (`cache/changed-imported`).
//! * `save-temps/default`: nothing is left; `save-temps/kept`: with `--save-temps` the job file,
//!   every shard and every native object are still there afterwards (for dtld: in
//!   `<output>.dtld-lto/`).
//! * `signal/sigint`, `signal/sigterm`: the signal to the linker alone while the distributor
//!   sleeps (5 s, writing nothing): the linker must end (non-zero exit or death by the signal)
//!   within ~2 s and leave nothing; the orphaned distributor is then killed by the test.
//!   `signal/sigint-group`: SIGINT to the linker's whole process group, as Ctrl-C does.
//! * `concurrent`: four links of the same inputs to different outputs, in parallel, in one
//!   directory: all succeed, all programs are right, nothing else is left.
//!
//! `.../dtld-only` trials check dtld's own contract where lld 22 behaves differently (the
//! distributor's path, exit status and signal are not reported, only the first missing object
//! is named, temporaries are not in one directory and carry
//! the PID, a bare distributor name is not looked up on `PATH`); they are ignored when the
//! linker under test is ld.lld (the self-test below). Every other trial passes with lld on both
//! sides.
//!
//! Environment: `DTLD` (linker under test, default `<target>/release/dtld`), `DTLD_DISTRIBUTOR`
//! (dtld-distribute, default `<target>/release/dtld-distribute`; trials that need it fail when it
//! is missing), `DTLD_ERROR_PREFIX` (as in tests/lto), `DTLD_HARNESS_KEEP=1`. Self-test with lld
//! on both sides: `DTLD=/tmp/fake-dtld/dtld cargo test -p dtld-tests --test dtlto` (see
//! fixtures/README.md for the wrapper).

mod jobfile;

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::fs;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use dtld_tests::trial::{run_in, TrialDir};
use dtld_tests::{
    changes, command_line, copy_tree, find_distributor, find_dtld, find_in_path, fresh_dir, lock_target_subdir, run_tool, run_tool_ok, snapshot, split_words,
    target_dir, Linker, Outcome,
};
use jobfile::{import_map, module_identity, parse_job_file, without_pids};
use libtest_mimic::{Arguments, Failed, Trial};
use regex::Regex;
use serde_json::Value;

/// The LLVM that builds the inputs and whose clang drives the links.
const LLVM_BIN: &str = "/usr/lib/llvm-22/bin";

/// The recording distributor (see the file's header).
const RECORDER: &str = include_str!("recorder.py");

/// What the test program prints.
const EXPECTED: &str = "mid=33 leaf=104 arch=56 thin=18 native=6\n";

/// The link inputs, relative to the link's working directory.
const INPUTS: [&str; 6] = ["main.o", "mid.o", "leaf.o", "libarch.a", "lib/libthin.a", "native.o"];

/// The module identities of the five ThinLTO modules, in lld's task order (load order).
const MODULES: [&str; 5] = ["main.o", "mid.o", "leaf.o", "arch.o", "thin.o"];

const MAIN_C: &str = r#"#include <stdio.h>
int mid_value(int);
int leaf_value(int);
int arch_fn(int);
int thin_fn(int);
int native_fn(int);
/* Only through a pointer: ThinLTO imports along call edges, so nobody imports from leaf.o. */
int (*volatile leaf_ptr)(int) = leaf_value;
int main(void) {
  printf("mid=%d leaf=%d arch=%d thin=%d native=%d\n", mid_value(3), leaf_ptr(4), arch_fn(5),
         thin_fn(6), native_fn(7));
  return 0;
}
"#;
const ARCH_C: &str = "int mid_value(int);\nint arch_fn(int x) { return mid_value(x) + 1; }\n";
const THIN_C: &str = "int thin_fn(int x) { return x * 3; }\n";
const NATIVE_C: &str = "int native_fn(int x) { return x - 1; }\n";

fn mid_c(factor: i32) -> String {
    format!("int mid_value(int x) {{ return x * {factor}; }}\n")
}

fn leaf_c(add: i32) -> String {
    format!("int leaf_value(int x) {{ return x + {add}; }}\n")
}

fn llvm(tool: &str) -> PathBuf {
    Path::new(LLVM_BIN).join(tool)
}

struct Context {
    dtld: PathBuf,
    /// The linker under test says it is LLD (`--version`): the self-test with a wrapper.
    dtld_is_lld: bool,
    /// dtld-distribute, or why there is none.
    distributor: Result<PathBuf, String>,
    python: PathBuf,
    root: PathBuf,
    keep: bool,
    /// The inputs, built once per run (`<root>/.inputs`).
    inputs: OnceLock<Result<PathBuf, String>>,
    /// Lua's ThinLTO objects, built once per run (`<root>/.lua`).
    lua: OnceLock<Result<PathBuf, String>>,
}

type TrialFn = fn(&Work) -> Result<(), String>;

fn main() {
    let args = Arguments::from_args();
    let _lock = lock_target_subdir("dtlto-tests", "dtlto test");
    let ctx = Context::new().map(Arc::new);
    let lld = ctx.as_ref().is_ok_and(|c| c.dtld_is_lld);
    let mut trials = Vec::new();
    let mut add = |name: &str, dtld_only: bool, f: TrialFn| {
        let ctx = ctx.clone();
        let owned = name.to_string();
        trials.push(
            Trial::test(name, move || {
                let ctx = ctx.map_err(Failed::from)?;
                run_trial(&ctx, &owned, f).map_err(Failed::from)
            })
            // dtld's own contract, where lld 22 behaves differently: not run in the self-test.
            .with_ignored_flag(dtld_only && lld),
        );
    };
    add("job-file/vs-lld", false, |t| vs_lld(t, Variant::Pie));
    add("job-file/vs-lld/nopie", false, |t| vs_lld(t, Variant::NoPie));
    add("job-file/vs-lld/options", false, |t| vs_lld(t, Variant::Options));
    add("job-file/vs-lld/lua", false, lua);
    add("temporaries/vs-lld/default", false, |t| temporaries(t, &[]));
    add("temporaries/vs-lld/save-temps", false, |t| temporaries(t, &["-Wl,--save-temps"]));
    add("temporaries/vs-lld/emit-index-files", false, |t| temporaries(t, &["-Wl,--thinlto-emit-index-files"]));
    add("temporaries/vs-lld/emit-imports-files", false, |t| temporaries(t, &["-Wl,--thinlto-emit-imports-files"]));
    add("temporaries/vs-lld/emit-both", false, |t| temporaries(t, &["-Wl,--thinlto-emit-index-files", "-Wl,--thinlto-emit-imports-files"]));
    add("temporaries/vs-lld/cache-dir", false, |t| temporaries(t, &["-Wl,--thinlto-cache-dir=cache"]));
    add("time-trace/vs-lld", false, time_trace);
    add("job-file/vs-lld-link/msvc", false, vs_lld_link);
    add("errors/vs-lld-link/bitcode-other-machine", false, coff_other_machine);
    add("distributor/dtld-distribute-with-lld", false, |t| with_dtld_distribute(t, Linker::Lld));
    add("distributor/dtld-distribute-with-dtld", false, |t| with_dtld_distribute(t, Linker::Dtld));
    add("distributor/not-run-without-thin-modules", false, no_thin_modules);
    add("faults/missing-distributor", false, |t| fault(t, Fault::Missing));
    add("faults/exit-status", false, |t| fault(t, Fault::Exit3));
    add("faults/killed", false, |t| fault(t, Fault::Killed));
    add("faults/no-outputs", false, |t| fault(t, Fault::NoOutputs));
    add("faults/empty-objects", false, |t| fault(t, Fault::Empty));
    add("faults/garbage-objects", false, |t| fault(t, Fault::Garbage));
    add("faults/compiler-fails", false, |t| fault(t, Fault::CompilerFails));
    add("faults/bare-name-on-path/dtld-only", true, bare_name_on_path);
    add("cache/unchanged-relink", false, |t| cache(t, Change::None));
    add("cache/changed-leaf", false, |t| cache(t, Change::Leaf));
    add("cache/changed-imported", false, |t| cache(t, Change::Imported));
    add("cache/other-output", false, |t| cache(t, Change::OtherOutput));
    add("cache/changed-sample-profile", false, |t| cache_profile(t, false));
    add("cache/changed-sample-profile-own-key", false, |t| cache_profile(t, true));
    add("cache/keys-as-llvm/dtld-only", true, keys_as_llvm);
    add("shards/renamed-modules", false, renamed_shards);
    add("save-temps/default", false, |t| save_temps(t, false));
    add("save-temps/kept", false, |t| save_temps(t, true));
    add("signal/sigint-group", false, |t| signal(t, libc::SIGINT, true));
    add("signal/sigint", false, |t| signal(t, libc::SIGINT, false));
    add("signal/sigterm", false, |t| signal(t, libc::SIGTERM, false));
    add("concurrent", false, concurrent);
    add("staging/planted-symlink/dtld-only", true, |t| planted(t, Plant::Symlink, LtoMode::Dtlto));
    add("staging/planted-symlink/in-process/dtld-only", true, |t| planted(t, Plant::Symlink, LtoMode::InProcessLto2));
    add("staging/planted-symlink/in-process-library/dtld-only", true, |t| planted(t, Plant::Symlink, LtoMode::InProcessLibrary));
    add("staging/planted-file/dtld-only", true, |t| planted(t, Plant::File, LtoMode::Dtlto));
    add("staging/planted-symlink/dtlto-library/dtld-only", true, |t| planted(t, Plant::Symlink, LtoMode::DtltoLibrary));
    add("staging/private-and-reused/dtld-only", true, private_dir);
    add("self-check/module-identity", false, identities);
    libtest_mimic::run(&args, trials).exit();
}

impl Context {
    fn new() -> Result<Context, String> {
        for tool in ["clang", "llvm-ar"] {
            if !llvm(tool).is_file() {
                return Err(format!("{} is missing (install clang-22 / llvm-22)", llvm(tool).display()));
            }
        }
        if find_in_path("ld.lld-22").is_none() && !llvm("ld.lld").is_file() {
            return Err("ld.lld-22 is missing (install lld-22)".into());
        }
        let python = [PathBuf::from("/usr/bin/python3")]
            .into_iter()
            .find(|p| p.is_file())
            .or_else(|| find_in_path("python3"))
            .ok_or("python3 is missing (the recording distributor is a Python script)")?;
        let dtld = find_dtld()?;
        let version = Command::new(&dtld).arg("--version").output().map_err(|e| format!("cannot run {} --version: {e}", dtld.display()))?;
        let text = String::from_utf8_lossy(&version.stdout);
        let dtld_is_lld = text.contains("LLD ") && !text.starts_with("dtld");
        Ok(Context {
            dtld,
            dtld_is_lld,
            distributor: find_distributor(),
            python,
            root: target_dir().join("dtlto-tests"),
            keep: std::env::var("DTLD_HARNESS_KEEP").is_ok_and(|v| !v.is_empty() && v != "0"),
            inputs: OnceLock::new(),
            lua: OnceLock::new(),
        })
    }

    /// Whether `line` is an error line of the linker under test.
    fn is_error_line(&self, line: &str) -> bool {
        if let Ok(prefix) = std::env::var("DTLD_ERROR_PREFIX") {
            return line.starts_with(&prefix);
        }
        if self.dtld_is_lld {
            Regex::new(r"^\S*ld\.lld\S*: error: ").expect("valid regex").is_match(line)
        } else {
            line.starts_with("dtld: error: ")
        }
    }

    /// Lua's objects as ThinLTO bitcode (`lua.o`, `liblua.a`), built on first use into
    /// `<root>/.lua/`.
    fn lua_objects(&self) -> Result<&Path, String> {
        self.lua.get_or_init(|| build_lua(&self.root.join(".lua"))).as_deref().map_err(|e| format!("building Lua failed: {e}"))
    }

    /// The inputs, built on first use into `<root>/.inputs/` (the commands are in
    /// `commands.txt` there).
    fn inputs(&self) -> Result<&Path, String> {
        self.inputs.get_or_init(|| build_inputs(&self.root.join(".inputs"))).as_deref().map_err(|e| format!("building the inputs failed: {e}"))
    }
}

fn compile_cmd(cwd: &Path, src: &str, out: &str, flags: &[&str]) -> Command {
    let mut cmd = Command::new(llvm("clang"));
    cmd.current_dir(cwd).arg("-c").args(flags).arg(src).arg("-o").arg(out);
    cmd
}

const LTO_FLAGS: [&str; 2] = ["-flto=thin", "-O2"];

fn build_inputs(dir: &Path) -> Result<PathBuf, String> {
    fresh_dir(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let write = |rel: &str, text: &str| {
        let p = dir.join(rel);
        fs::create_dir_all(p.parent().expect("has a parent")).map_err(|e| e.to_string())?;
        fs::write(&p, text).map_err(|e| format!("write {}: {e}", p.display()))
    };
    write("main.c", MAIN_C)?;
    write("mid.c", &mid_c(11))?;
    write("leaf.c", &leaf_c(100))?;
    write("archobj/arch.c", ARCH_C)?;
    write("lib/thin.c", THIN_C)?;
    write("native.c", NATIVE_C)?;
    let mut log = Vec::new();
    let mut step = |mut cmd: Command| -> Result<(), String> {
        log.push(command_line(&cmd));
        run_tool_ok(&mut cmd).map(drop)
    };
    for stem in ["main", "mid", "leaf"] {
        step(compile_cmd(dir, &format!("{stem}.c"), &format!("{stem}.o"), &LTO_FLAGS))?;
    }
    step(compile_cmd(dir, "archobj/arch.c", "archobj/arch.o", &LTO_FLAGS))?;
    step(compile_cmd(dir, "lib/thin.c", "lib/thin.o", &LTO_FLAGS))?;
    step(compile_cmd(dir, "native.c", "native.o", &["-O2"]))?;
    let mut ar = Command::new(llvm("llvm-ar"));
    ar.current_dir(dir).args(["rcs", "libarch.a", "archobj/arch.o"]);
    step(ar)?;
    let mut ar = Command::new(llvm("llvm-ar"));
    ar.current_dir(dir.join("lib")).args(["rcsT", "libthin.a", "thin.o"]);
    step(ar)?;
    let _ = fs::write(dir.join("commands.txt"), log.join("\n") + "\n");
    Ok(dir.to_path_buf())
}

/// Lua's objects for the `job-file/vs-lld/lua` trial: the source from Debian's package (fetched
/// into the shared cache by `scripts/real-programs/lua-source.sh`), compiled as Lua's `linux`
/// target with `-flto=thin -g`, its library members in a regular archive.
fn build_lua(dir: &Path) -> Result<PathBuf, String> {
    let script = dtld_tests::workspace_root().join("scripts/real-programs/lua-source.sh");
    let out = run_tool_ok(Command::new("bash").arg(&script))?;
    let tree = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    let src = tree.join("src");
    if !src.join("lua.c").is_file() {
        return Err(format!("{} printed {}, which has no src/lua.c", script.display(), tree.display()));
    }
    fresh_dir(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut members = Vec::new();
    let mut sources: Vec<PathBuf> =
        fs::read_dir(&src).map_err(|e| e.to_string())?.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "c")).collect();
    sources.sort();
    for c in &sources {
        let stem = c.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let obj = format!("{stem}.o");
        let mut cmd = Command::new(llvm("clang"));
        cmd.current_dir(dir).args(["-std=gnu99", "-O2", "-g", "-fPIE", "-flto=thin", "-DLUA_COMPAT_5_3", "-DLUA_USE_LINUX", "-c"]).arg(c).args(["-o", &obj]);
        run_tool_ok(&mut cmd)?;
        if stem != "lua" && stem != "luac" {
            members.push(obj);
        }
    }
    run_tool_ok(Command::new(llvm("llvm-ar")).current_dir(dir).args(["rcs", "liblua.a"]).args(&members))?;
    for m in &members {
        fs::remove_file(dir.join(m)).map_err(|e| e.to_string())?;
    }
    let _ = fs::remove_file(dir.join("luac.o"));
    Ok(dir.to_path_buf())
}

/// One trial's state: the shared trial directory and command log (`dtld_tests::trial`) with
/// this target's context.
struct Work<'a> {
    ctx: &'a Context,
    t: &'a TrialDir,
}

impl std::ops::Deref for Work<'_> {
    type Target = TrialDir;
    fn deref(&self) -> &TrialDir {
        self.t
    }
}

fn run_trial(ctx: &Context, name: &str, f: TrialFn) -> Result<(), String> {
    let context = [format!("linker under test: {}", ctx.dtld.display()), format!("inputs built by: {}", ctx.root.join(".inputs/commands.txt").display())];
    run_in(&ctx.root.join(name.replace('/', "-")), ctx.keep, &context, |t| f(&Work { ctx, t }))
}

/// A copy of the recording distributor with its own log directory.
struct Recorder {
    script: PathBuf,
    log: PathBuf,
}

/// One recorded distributor call.
struct Call {
    argv: Vec<String>,
    cwd: PathBuf,
    pid: u32,
    /// The job file as the distributor read it.
    text: String,
    json: Value,
    /// The names in the job file's directory when the distributor started.
    staged: BTreeSet<String>,
}

impl Recorder {
    fn calls(&self) -> Result<Vec<Call>, String> {
        let list = self.log.join("calls.jsonl");
        let text = match fs::read_to_string(&list) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(format!("read {}: {e}", list.display())),
        };
        let mut calls = Vec::new();
        for line in text.lines() {
            let v: Value = serde_json::from_str(line).map_err(|e| format!("bad line in {}: {e}: {line}", list.display()))?;
            let argv = v["argv"].as_array().map(|a| a.iter().map(|s| s.as_str().unwrap_or_default().to_string()).collect()).unwrap_or_default();
            let copy = self.log.join(v["copy"].as_str().unwrap_or_default());
            let job_text = fs::read_to_string(&copy).map_err(|e| format!("read {}: {e}", copy.display()))?;
            let json = serde_json::from_str(&job_text).map_err(|e| format!("the job file is not valid JSON ({e}): {job_text}"))?;
            calls.push(Call {
                argv,
                cwd: PathBuf::from(v["cwd"].as_str().unwrap_or_default()),
                pid: v["pid"].as_u64().unwrap_or(0) as u32,
                text: job_text,
                json,
                staged: v["staged"].as_array().map(|a| a.iter().filter_map(|s| s.as_str()).map(str::to_string).collect()).unwrap_or_default(),
            });
        }
        Ok(calls)
    }

    /// Exactly one call so far.
    fn one_call(&self, what: &str) -> Result<Call, String> {
        let mut calls = self.calls()?;
        match calls.len() {
            1 => Ok(calls.remove(0)),
            n => Err(format!("{what}: the distributor was run {n} times, expected once")),
        }
    }
}

impl Work<'_> {
    fn write_executable(&self, rel: &str, contents: &str) -> Result<PathBuf, String> {
        self.write(rel, contents)?;
        let p = self.path(rel);
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).map_err(|e| format!("chmod {}: {e}", p.display()))?;
        Ok(p)
    }

    /// Copies the inputs (sources included) into `rel` and returns its path.
    fn inputs(&self, rel: &str) -> Result<PathBuf, String> {
        let to = self.path(rel);
        copy_tree(self.ctx.inputs()?, &to)?;
        Ok(to)
    }

    /// Writes `tools/<name>.py`, a recorder logging to `tools/<name>.log/`.
    fn recorder(&self, name: &str, mode: &str) -> Result<Recorder, String> {
        let log = self.path(&format!("tools/{name}.log"));
        let config = serde_json::json!({"log": log.to_string_lossy(), "mode": mode});
        let shebang = "#!/usr/bin/env python3\n";
        let placeholder = "\nCONFIG = {}\n";
        if !RECORDER.starts_with(shebang) || RECORDER.matches(placeholder).count() != 1 {
            return Err("recorder.py lost its shebang or its `CONFIG = {}` line".into());
        }
        let text = RECORDER.replacen(shebang, &format!("#!{}\n", self.ctx.python.display()), 1).replacen(placeholder, &format!("\nCONFIG = {config}\n"), 1);
        let script = self.write_executable(&format!("tools/{name}.py"), &text)?;
        Ok(Recorder { script, log })
    }

    fn dtld_distribute(&self) -> Result<PathBuf, String> {
        self.ctx.distributor.clone()
    }

    /// `clang -flto=thin -fuse-ld=<linker> -fthinlto-distributor=<distributor> <extra>
    /// <inputs> -o <out>` in `cwd`.
    fn link_cmd(&self, cwd: &Path, linker: Linker, distributor: &OsString, out: &str, extra: &[&str]) -> Command {
        let mut cmd = Command::new(llvm("clang"));
        cmd.current_dir(cwd);
        cmd.arg(linker.fuse_ld(&self.ctx.dtld));
        let mut arg = OsString::from("-fthinlto-distributor=");
        arg.push(distributor);
        cmd.arg("-flto=thin").arg(arg).args(extra).args(INPUTS).arg("-o").arg(out);
        cmd
    }

    /// Links, runs the program and checks it prints [`EXPECTED`], and checks that the link
    /// created nothing in `cwd` besides `out` and the names in `allowed` (a name, a directory, or
    /// `*<suffix>`).
    fn link_and_run(
        &self,
        cwd: &Path,
        linker: Linker,
        distributor: &OsString,
        out: &str,
        extra: &[&str],
        expected: &str,
        allowed: &[&str],
    ) -> Result<(), String> {
        let before = snapshot(cwd)?;
        let mut cmd = self.link_cmd(cwd, linker, distributor, out, extra);
        let o = self.run(&mut cmd)?;
        if !o.success() {
            return Err(format!("the {} link of {out} failed ({}):\n{}", linker.name(), o.status_text(), o.stderr_text()));
        }
        let after = snapshot(cwd)?;
        let left: Vec<String> = changes(&before, &after)
            .into_iter()
            .filter(|f| f != out && !allowed.iter().any(|a| f == a || f.starts_with(&format!("{a}/")) || a.strip_prefix('*').is_some_and(|s| f.ends_with(s))))
            .collect();
        if !left.is_empty() {
            return Err(format!("the {} link of {out} left files besides {out}: {left:?}", linker.name()));
        }
        self.run_program(cwd, out, expected)
    }

    fn run_program(&self, cwd: &Path, exe: &str, expected: &str) -> Result<(), String> {
        let mut cmd = Command::new(cwd.join(exe));
        cmd.current_dir(cwd);
        let r = self.run(&mut cmd)?;
        let stdout = String::from_utf8_lossy(&r.stdout);
        if !r.success() || stdout != expected {
            return Err(format!("{exe} ({}) printed {stdout:?}, expected {expected:?}; stderr:\n{}", r.status_text(), r.stderr_text()));
        }
        Ok(())
    }

    /// The linker command clang would run (argv, from `clang -###`).
    fn linker_argv(&self, cwd: &Path, linker: Linker, distributor: &OsString, extra: &[&str]) -> Result<Vec<String>, String> {
        let mut cmd = self.link_cmd(cwd, linker, distributor, "prog", extra);
        cmd.arg("-###");
        let out = self.ok(&mut cmd)?;
        let listing = out.stderr_text();
        let want = |argv0: &str| match linker {
            Linker::Dtld => Path::new(argv0) == self.ctx.dtld,
            Linker::Lld => argv0.ends_with("ld.lld"),
        };
        listing
            .lines()
            .filter_map(|l| split_words(l).ok())
            .find(|argv| argv.first().is_some_and(|a| want(a)))
            .ok_or_else(|| format!("no {} command in `clang -###` output:\n{listing}", linker.name()))
    }

    /// The linker command for `cwd` with the environment of the fault and signal trials:
    /// `TMPDIR` inside `cwd`, so that a temporary file put there counts as left behind.
    fn direct(&self, cwd: &Path, argv: &[String]) -> Command {
        let mut cmd = Command::new(&argv[0]);
        cmd.current_dir(cwd).args(&argv[1..]).env("TMPDIR", cwd.join("tmp"));
        cmd
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Variant {
    /// clang's default (PIE): `-fpic` in `common.args`.
    Pie,
    NoPie,
    /// `--lto-O3` and remote-compiler prepend/append arguments.
    Options,
}

fn vs_lld(t: &Work, variant: Variant) -> Result<(), String> {
    let extra: &[&str] = match variant {
        Variant::Pie => &["-Xthinlto-distributor=a,b"],
        Variant::NoPie => &["-Xthinlto-distributor=a,b", "-no-pie"],
        Variant::Options => &[
            "-Xthinlto-distributor=a,b",
            "-Wl,--lto-O3",
            "-Wl,--thinlto-remote-compiler-prepend-arg=-fno-ident",
            "-Wl,--thinlto-remote-compiler-arg=-fno-ident",
            "-Wl,--thinlto-remote-compiler-arg=-Wno-unused-command-line-argument",
        ],
    };
    let mut calls = Vec::new();
    for linker in [Linker::Dtld, Linker::Lld] {
        let cwd = t.inputs(linker.name())?;
        let rec = t.recorder(&format!("rec-{}", linker.name()), "run")?;
        t.link_and_run(&cwd, linker, &rec.script.clone().into_os_string(), "prog", extra, EXPECTED, &[])?;
        let call = rec.one_call(linker.name())?;
        // The distributor's argv: [distributor, a, b, <job file>], in the linker's cwd.
        let mut problems = Vec::new();
        let argv = &call.argv;
        if argv.len() != 4 || Path::new(&argv[0]) != rec.script || argv[1..3] != ["a".to_string(), "b".to_string()] {
            problems.push(format!("distributor argv {argv:?}, expected [{}, a, b, <job file>]", rec.script.display()));
        }
        let canon = |p: &Path| fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        if canon(&call.cwd) != canon(&cwd) {
            problems.push(format!("the distributor ran in {}, not in the linker's cwd {}", call.cwd.display(), cwd.display()));
        }
        if !problems.is_empty() {
            return Err(format!("{}: {}", linker.name(), problems.join("\n")));
        }
        calls.push(call);
    }
    let (ours, theirs) = (&calls[0], &calls[1]);
    let our_jobs = parse_job_file(&ours.text, &ours.json).map_err(|e| format!("the job file of the linker under test:\n{e}\n{}", ours.text))?;
    let their_jobs = parse_job_file(&theirs.text, &theirs.json).map_err(|e| format!("ld.lld's job file (trial bug?):\n{e}\n{}", theirs.text))?;

    let mut problems = Vec::new();
    // lld's contract to the letter: the same job file once process ids are replaced (module
    // IDs, temporary names and places included), and the same files next to it when the
    // distributor starts.
    if without_pids(&ours.text) != without_pids(&theirs.text) {
        problems.push(format!(
            "the job files differ once process ids are replaced:\n  dtld: {}\n  lld:  {}",
            without_pids(&ours.text),
            without_pids(&theirs.text)
        ));
    }
    let listing = |c: &Call| -> Vec<String> { c.staged.iter().map(|n| without_pids(n)).collect() };
    if listing(ours) != listing(theirs) {
        problems.push(format!("the job file's directory when the distributor starts:\n  dtld: {:?}\n  lld:  {:?}", listing(ours), listing(theirs)));
    }
    for key in ["linker_output", "args", "inputs"] {
        if ours.json["common"][key] != theirs.json["common"][key] {
            problems.push(format!("common.{key} differs:\n  dtld: {}\n  lld:  {}", ours.json["common"][key], theirs.json["common"][key]));
        }
    }
    let out = "prog";
    let (a, b) = (import_map(&our_jobs, out), import_map(&their_jobs, out));
    let modules = |m: &[(String, BTreeSet<String>)]| -> Vec<String> { m.iter().map(|(k, _)| k.clone()).collect() };
    // Guards against a broken trial: lld must have five jobs and main.o must import.
    if modules(&b) != MODULES {
        return Err(format!("lld's jobs are for {:?}, expected {MODULES:?} (trial bug?)", modules(&b)));
    }
    if b[0].1.is_empty() {
        return Err("lld's job for main.o has no import sources (trial bug?)".into());
    }
    if our_jobs.len() != their_jobs.len() {
        problems.push(format!("{} jobs, lld has {}", our_jobs.len(), their_jobs.len()));
    }
    if modules(&a) != modules(&b) {
        problems.push(format!("jobs are for modules {:?}, lld's (task order) for {:?}", modules(&a), modules(&b)));
    }
    for (module, theirs_imports) in &b {
        if let Some((_, ours_imports)) = a.iter().find(|(m, _)| m == module) {
            if ours_imports != theirs_imports {
                problems.push(format!("{module} imports from {ours_imports:?}, with lld from {theirs_imports:?}"));
            }
        }
    }
    if variant == Variant::NoPie && theirs.json["common"]["args"].as_array().is_some_and(|a| a.iter().any(|s| s == "-fpic")) {
        problems.push("lld put -fpic in common.args of a -no-pie link (trial bug?)".into());
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("{}\njob file of the linker under test: {}\nld.lld's job file: {}", problems.join("\n"), ours.text, theirs.text))
    }
}

/// Bitcode for another machine in a COFF link: lld-link's "machine type arm64 conflicts with
/// x64" (dtld links x86-64 alone; its thin-link library registers only LLVM's X86 target), the
/// same message from both, exit 1, no image.
fn coff_other_machine(t: &Work) -> Result<(), String> {
    let lld_link = llvm("lld-link");
    let dtld_link = t.path("tools/lld-link");
    fs::create_dir_all(t.path("tools")).map_err(|e| e.to_string())?;
    std::os::unix::fs::symlink(&t.ctx.dtld, &dtld_link).map_err(|e| format!("symlink {}: {e}", dtld_link.display()))?;
    let dir = t.path("w");
    t.write("w/main.c", "int main(void) { return 0; }\n")?;
    t.write("w/arm.c", "int arm_fn(void) { return 1; }\n")?;
    t.ok(&mut compile_cmd(&dir, "main.c", "main.obj", &["--target=x86_64-pc-windows-msvc", "-flto=thin", "-O2"]))?;
    t.ok(&mut compile_cmd(&dir, "arm.c", "arm.obj", &["--target=aarch64-pc-windows-msvc", "-flto=thin", "-O2"]))?;
    let mut said = Vec::new();
    for (who, program) in [("dtld", &dtld_link), ("lld-link", &lld_link)] {
        let out = format!("{who}.exe");
        let mut cmd = Command::new(program);
        cmd.current_dir(&dir).args(["/machine:x64", "/entry:main", "/nodefaultlib", "main.obj", "arm.obj"]).arg(format!("/out:{out}"));
        let o = t.run(&mut cmd)?;
        if o.status.is_none_or(|s| s.success()) || dir.join(&out).exists() {
            return Err(format!("{who}: {} (expected exit 1 and no image):\n{}", o.status_text(), o.stderr_text()));
        }
        let text = o.stderr_text();
        said.push(text.split_once("error: ").map(|(_, m)| m.trim_end().to_string()).unwrap_or(text));
    }
    if said[0] != said[1] || !said[0].contains("conflicts with x64") {
        return Err(format!("the errors differ or are not lld-link's:\n  dtld:     {}\n  lld-link: {}", said[0], said[1]));
    }
    Ok(())
}

/// lld-link's flavour (MSVC targets): dtld run under the name `lld-link` with lld-link's
/// DTLTO options against lld-link-22, on self-contained `x86_64-pc-windows-msvc` bitcode
/// (`/entry:main /nodefaultlib`: no Windows SDK here). The job files must agree as for ELF
/// (no `-fpic` for COFF), lld-link's missing-remote-compiler error must match, and both images
/// must run under wine with the same exit code.
fn vs_lld_link(t: &Work) -> Result<(), String> {
    let lld_link = llvm("lld-link");
    if !lld_link.is_file() {
        return Err(format!("{} is missing (install lld-22)", lld_link.display()));
    }
    // dtld selects the lld-link flavour by its program name, like lld.
    let dtld_link = t.path("tools/lld-link");
    fs::create_dir_all(t.path("tools")).map_err(|e| e.to_string())?;
    std::os::unix::fs::symlink(&t.ctx.dtld, &dtld_link).map_err(|e| format!("symlink {}: {e}", dtld_link.display()))?;
    let sources = [
        ("main.c", "int mid(int);\nint leaf(int);\nint main(void) { return mid(3) + leaf(4); }\n"),
        ("mid.c", "int leaf(int);\nint mid(int x) { return leaf(x) * 2; }\n"),
        ("leaf.c", "int leaf(int x) { return x + 1; }\n"),
    ];
    let mut calls = Vec::new();
    for linker in [Linker::Dtld, Linker::Lld] {
        let dir = t.path(linker.name());
        for (name, text) in sources {
            t.write(&format!("{}/{name}", linker.name()), text)?;
            let obj = name.replace(".c", ".obj");
            t.ok(&mut compile_cmd(&dir, name, &obj, &["--target=x86_64-pc-windows-msvc", "-flto=thin", "-O2"]))?;
        }
        let rec = t.recorder(&format!("rec-link-{}", linker.name()), "run")?;
        let program = match linker {
            Linker::Dtld => dtld_link.clone(),
            Linker::Lld => lld_link.clone(),
        };
        // mid.obj in a thin archive in another directory (lld-link keeps its member path as
        // `lib/../mid.obj`), leaf.obj in a regular archive loaded whole (lld-link names
        // /wholearchive members with offset 0): both named in the job file.
        fs::create_dir_all(dir.join("lib")).map_err(|e| e.to_string())?;
        t.ok(Command::new(llvm("llvm-lib")).current_dir(&dir).args(["/llvmlibthin", "/out:lib/mid.lib", "mid.obj"]))?;
        t.ok(Command::new(llvm("llvm-lib")).current_dir(&dir).args(["/out:leaf.lib", "leaf.obj"]))?;
        let base = |cmd: &mut Command| {
            cmd.current_dir(&dir).args([
                "/entry:main",
                "/nodefaultlib",
                "/subsystem:console",
                "/out:prog.exe",
                "main.obj",
                "lib/mid.lib",
                "/wholearchive:leaf.lib",
            ]);
        };
        // Without /thinlto-remote-compiler: lld-link's own error.
        let mut cmd = Command::new(&program);
        base(&mut cmd);
        cmd.arg(format!("/thinlto-distributor:{}", rec.script.display()));
        let o = t.run(&mut cmd)?;
        let want = "A value must be specified for /thinlto-remote-compiler if /thinlto-distributor is specified.";
        let stderr = String::from_utf8_lossy(&o.stderr);
        if o.status.is_none_or(|s| s.success()) || !stderr.contains(want) {
            return Err(format!(
                "{}: without /thinlto-remote-compiler: exit {:?}, stderr {stderr:?}; expected lld-link's error '{want}'",
                linker.name(),
                o.status.and_then(|s| s.code())
            ));
        }
        let mut cmd = Command::new(&program);
        base(&mut cmd);
        cmd.arg(format!("/thinlto-distributor:{}", rec.script.display()))
            .arg("/thinlto-distributor-arg:a")
            .arg("-thinlto-distributor-arg:b")
            .arg(format!("/thinlto-remote-compiler:{}", llvm("clang").display()))
            .arg("/thinlto-remote-compiler-arg:-fno-ident");
        t.ok(&mut cmd)?;
        let call = rec.one_call(linker.name())?;
        if call.argv.len() != 4 || call.argv[1..3] != ["a".to_string(), "b".to_string()] {
            return Err(format!("{}: distributor argv {:?}, expected [<distributor>, a, b, <job file>]", linker.name(), call.argv));
        }
        calls.push((call, dir));
    }
    let ((ours, our_dir), (theirs, their_dir)) = (&calls[0], &calls[1]);
    let our_jobs = parse_job_file(&ours.text, &ours.json).map_err(|e| format!("dtld's job file:\n{e}\n{}", ours.text))?;
    let their_jobs = parse_job_file(&theirs.text, &theirs.json).map_err(|e| format!("lld-link's job file (trial bug?):\n{e}\n{}", theirs.text))?;
    let mut problems = Vec::new();
    // lld's contract to the letter: the same job file once process ids are replaced (module
    // IDs, temporary names and places included), and the same files next to it when the
    // distributor starts.
    if without_pids(&ours.text) != without_pids(&theirs.text) {
        problems.push(format!(
            "the job files differ once process ids are replaced:\n  dtld: {}\n  lld:  {}",
            without_pids(&ours.text),
            without_pids(&theirs.text)
        ));
    }
    let listing = |c: &Call| -> Vec<String> { c.staged.iter().map(|n| without_pids(n)).collect() };
    if listing(ours) != listing(theirs) {
        problems.push(format!("the job file's directory when the distributor starts:\n  dtld: {:?}\n  lld:  {:?}", listing(ours), listing(theirs)));
    }
    for key in ["linker_output", "args", "inputs"] {
        if ours.json["common"][key] != theirs.json["common"][key] {
            problems.push(format!("common.{key} differs:\n  dtld:     {}\n  lld-link: {}", ours.json["common"][key], theirs.json["common"][key]));
        }
    }
    if theirs.json["common"]["args"].as_array().is_some_and(|a| a.iter().any(|s| s == "-fpic")) {
        problems.push("lld-link put -fpic in common.args (trial bug?)".into());
    }
    let (a, b) = (import_map(&our_jobs, "prog.exe"), import_map(&their_jobs, "prog.exe"));
    if b.len() != 3 || b.iter().all(|(_, imports)| imports.is_empty()) {
        return Err(format!("lld-link's jobs {b:?}: expected 3 modules with some importing (trial bug?)"));
    }
    let sorted = |m: &[(String, BTreeSet<String>)]| m.iter().cloned().collect::<BTreeMap<_, _>>();
    if sorted(&a) != sorted(&b) {
        problems.push(format!("modules and their import sources differ:\n  dtld:     {a:?}\n  lld-link: {b:?}"));
    }
    // Both images run (wine) and exit with main's value: mid(3) + leaf(4) = 8 + 5.
    let wine = PathBuf::from(std::env::var_os("DTLD_WINE").unwrap_or_else(|| "/usr/lib/wine/wine64".into()));
    if wine.is_file() {
        for dir in [our_dir, their_dir] {
            let mut cmd = Command::new(&wine);
            cmd.current_dir(dir).arg("prog.exe").env("WINEDEBUG", "-all").env("WINEPREFIX", t.ctx.root.join(".wine"));
            let o = t.run(&mut cmd)?;
            let code = o.status.and_then(|s| s.code());
            if code != Some(13) {
                problems.push(format!("{}/prog.exe exited with {code:?} under wine, expected 13", dir.display()));
            }
        }
        let _ = Command::new(wine.with_file_name("wineserver")).arg("-k").env("WINEPREFIX", t.ctx.root.join(".wine")).status();
    } else {
        problems.push(format!("{} is missing (install wine64)", wine.display()));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("{}\ndtld's job file: {}\nlld-link's job file: {}", problems.join("\n"), ours.text, theirs.text))
    }
}

/// dtld's layout: every temporary in `<output>.dtld-lto/`, relative paths, no PID.
/// What a DTLTO link leaves next to its inputs and output with the options that decide it
/// (`--save-temps`, the emit options, a cache directory): exactly the files ld.lld-22 leaves
/// (names with process ids and cache keys replaced; empty and non-empty alike; dtld's own
/// hidden `.dtld/` in a cache directory aside), and both programs right.
fn temporaries(t: &Work, flags: &[&str]) -> Result<(), String> {
    let key = Regex::new(r"llvmcache-[0-9A-F]{40}").expect("valid regex");
    let mut left = Vec::new();
    for linker in [Linker::Dtld, Linker::Lld] {
        let cwd = t.inputs(linker.name())?;
        let rec = t.recorder(&format!("rec-{}", linker.name()), "run")?;
        let before = snapshot(&cwd)?;
        let o = t.run(&mut t.link_cmd(&cwd, linker, &rec.script.clone().into_os_string(), "prog", flags))?;
        if !o.success() {
            return Err(format!("the {} link failed ({}):\n{}", linker.name(), o.status_text(), o.stderr_text()));
        }
        t.run_program(&cwd, "prog", EXPECTED)?;
        let after = snapshot(&cwd)?;
        let files: BTreeSet<String> = changes(&before, &after)
            .into_iter()
            .filter(|f| !f.split('/').any(|c| c == ".dtld"))
            .map(|f| {
                let empty = !f.ends_with('/') && fs::metadata(cwd.join(&f)).is_ok_and(|m| m.len() == 0);
                let name = key.replace_all(&without_pids(&f), "llvmcache-KEY").into_owned();
                if empty {
                    format!("{name} (empty)")
                } else {
                    name
                }
            })
            .collect();
        left.push(files);
    }
    if left[0] == left[1] {
        return Ok(());
    }
    let only = |a: &BTreeSet<String>, b: &BTreeSet<String>| a.difference(b).cloned().collect::<Vec<_>>();
    Err(format!(
        "the links left different files (process ids replaced):\n  only dtld: {:?}\n  only lld:  {:?}",
        only(&left[0], &left[1]),
        only(&left[1], &left[0])
    ))
}

/// Lua 5.4 (Debian's source, `scripts/real-programs/lua-source.sh`) as ThinLTO bitcode, `lua.o`
/// and `liblua.a` (a regular archive: its members are written out for the backends), linked
/// through the recording distributor by the linker under test and by ld.lld-22, each in its own
/// copy of the objects: the job files are equal once process ids are replaced, the distributor
/// sees the same files next to the job file, both links leave exactly `lua`, and both
/// interpreters compute the same.
fn lua(t: &Work) -> Result<(), String> {
    let objs = t.ctx.lua_objects()?;
    let mut calls = Vec::new();
    for linker in [Linker::Dtld, Linker::Lld] {
        let cwd = t.path(linker.name());
        copy_tree(objs, &cwd)?;
        let rec = t.recorder(&format!("rec-{}", linker.name()), "run")?;
        let before = snapshot(&cwd)?;
        let mut cmd = Command::new(llvm("clang"));
        let mut dist = OsString::from("-fthinlto-distributor=");
        dist.push(&rec.script);
        cmd.current_dir(&cwd).arg(linker.fuse_ld(&t.ctx.dtld)).args(["-flto=thin", "-Wl,-E"]).arg(dist).args(["lua.o", "liblua.a", "-lm", "-ldl", "-o", "lua"]);
        let o = t.run(&mut cmd)?;
        if !o.success() {
            return Err(format!("the {} link of lua failed ({}):\n{}", linker.name(), o.status_text(), o.stderr_text()));
        }
        let left: Vec<String> = changes(&before, &snapshot(&cwd)?).into_iter().filter(|f| f != "lua").collect();
        if !left.is_empty() {
            return Err(format!("the {} link left files besides lua: {left:?}", linker.name()));
        }
        let mut run = Command::new(cwd.join("lua"));
        run.current_dir(&cwd).args(["-e", "local t = {} for i = 1, 100 do t[i] = i * i end print(#t, t[7], string.format('%5.2f', math.pi), ('x'):rep(3))"]);
        let r = t.run(&mut run)?;
        if !r.success() || String::from_utf8_lossy(&r.stdout) != "100\t49\t 3.14\txxx\n" {
            return Err(format!("{}'s lua printed {:?} ({})", linker.name(), String::from_utf8_lossy(&r.stdout), r.status_text()));
        }
        calls.push(rec.one_call(linker.name())?);
    }
    let (ours, theirs) = (&calls[0], &calls[1]);
    if theirs.json["jobs"].as_array().map_or(0, Vec::len) < 30 {
        return Err(format!("ld.lld-22's job file has fewer jobs than Lua has modules (trial bug?): {}", theirs.text));
    }
    let mut problems = Vec::new();
    if without_pids(&ours.text) != without_pids(&theirs.text) {
        problems.push(format!(
            "the job files differ once process ids are replaced:\n  dtld: {}\n  lld:  {}",
            without_pids(&ours.text),
            without_pids(&theirs.text)
        ));
    }
    let listing = |c: &Call| -> Vec<String> { c.staged.iter().map(|n| without_pids(n)).collect() };
    if listing(ours) != listing(theirs) {
        problems.push(format!("the job file's directory when the distributor starts:\n  dtld: {:?}\n  lld:  {:?}", listing(ours), listing(theirs)));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// `--time-trace`: the DTLTO steps under lld 22's names, as many of each (the `Total <name>`
/// events' counts) as ld.lld-22 records, and the same details for the per-file ones once
/// process ids are replaced.
fn time_trace(t: &Work) -> Result<(), String> {
    let mut seen = Vec::new();
    for linker in [Linker::Dtld, Linker::Lld] {
        let cwd = t.inputs(linker.name())?;
        let rec = t.recorder(&format!("rec-{}", linker.name()), "run")?;
        let flags = ["-Wl,--time-trace=trace.json", "-Wl,--time-trace-granularity=0", "-Wl,--thinlto-cache-dir=cache"];
        t.link_and_run(&cwd, linker, &rec.script.clone().into_os_string(), "prog", &flags, EXPECTED, &["trace.json", "cache"])?;
        let text = fs::read_to_string(cwd.join("trace.json")).map_err(|e| format!("{}: trace.json: {e}", linker.name()))?;
        let json: Value = serde_json::from_str(&text).map_err(|e| format!("{}: trace.json is not JSON: {e}", linker.name()))?;
        let mut steps = BTreeMap::new();
        for e in json["traceEvents"].as_array().into_iter().flatten() {
            let name = e["name"].as_str().unwrap_or_default();
            if !name.contains("DTLTO") {
                continue;
            }
            match name.strip_prefix("Total ") {
                Some(n) => {
                    steps.insert(format!("{n}: count"), e["args"]["count"].to_string());
                }
                None if ["Serialize bitcode input for DTLTO", "Emit individual index for DTLTO", "Check cache for DTLTO"].contains(&name) => {
                    steps
                        .entry(format!("{name}: details"))
                        .or_insert_with(String::new)
                        .push_str(&format!("{} ", without_pids(e["args"]["detail"].as_str().unwrap_or_default())));
                }
                None => {}
            }
        }
        for v in steps.values_mut() {
            let mut words: Vec<&str> = v.split_whitespace().collect();
            words.sort_unstable();
            *v = words.join(" ");
        }
        seen.push(steps);
    }
    if seen[1].is_empty() {
        return Err("ld.lld-22 recorded no DTLTO steps (trial bug?)".into());
    }
    if seen[0] == seen[1] {
        Ok(())
    } else {
        Err(format!("DTLTO steps in the time trace:\n  dtld: {:?}\n  lld:  {:?}", seen[0], seen[1]))
    }
}

// ---- dtld-distribute ----------------------------------------------------------------------

fn with_dtld_distribute(t: &Work, linker: Linker) -> Result<(), String> {
    let d = t.dtld_distribute()?;
    let cwd = t.inputs("work")?;
    t.link_and_run(&cwd, linker, &d.into_os_string(), "prog", &["-Xthinlto-distributor=-j,2"], EXPECTED, &[])
}

/// Native objects only: no ThinLTO module, so no distributor may run (as with lld 22).
fn no_thin_modules(t: &Work) -> Result<(), String> {
    let cwd = t.path("work");
    t.write("work/plain.c", "#include <stdio.h>\nint main(void) { puts(\"plain\"); return 0; }\n")?;
    t.ok(&mut compile_cmd(&cwd, "plain.c", "plain.o", &["-O2"]))?;
    let rec = t.recorder("rec", "run")?;
    for linker in [Linker::Dtld, Linker::Lld] {
        let out = format!("prog.{}", linker.name());
        let mut cmd = Command::new(llvm("clang"));
        cmd.current_dir(&cwd);
        match linker {
            Linker::Dtld => cmd.arg(format!("-fuse-ld={}", t.ctx.dtld.display())),
            Linker::Lld => cmd.arg("-fuse-ld=lld"),
        };
        cmd.arg("-flto=thin").arg(format!("-fthinlto-distributor={}", rec.script.display())).args(["plain.o", "-o", &out]);
        let o = t.run(&mut cmd)?;
        if !o.success() {
            return Err(format!("the {} link failed ({}):\n{}", linker.name(), o.status_text(), o.stderr_text()));
        }
        t.run_program(&cwd, &out, "plain\n")?;
        let calls = rec.calls()?;
        if !calls.is_empty() {
            return Err(format!("{} ran the distributor without ThinLTO modules: {:?}", linker.name(), calls.iter().map(|c| &c.text).collect::<Vec<_>>()));
        }
    }
    Ok(())
}

// ---- faults -------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq)]
enum Fault {
    Missing,
    Exit3,
    Killed,
    NoOutputs,
    Empty,
    Garbage,
    CompilerFails,
}

/// One faulty link: its status, stderr, the first error's message (after `<program>: error: `,
/// process ids replaced), what it left in its directory, and the jobs the distributor got.
struct FaultRun {
    status: String,
    stderr: String,
    first_error: Option<String>,
    errors: usize,
    left: Vec<String>,
    jobs: Vec<jobfile::JobView>,
}

/// A link whose distributor misbehaves, by the linker under test and (except where dtld's
/// contract is its own) by ld.lld-22, each run directly as clang would run it in a copy of the
/// inputs: both exit 1 with the same first error (words after the program name, process ids
/// replaced), write no output and leave their directory as it was. dtld's own additions: every
/// missing object is listed (lld names the first), and an empty object is an error naming its
/// module (lld links it as if it had no code).
fn fault(t: &Work, kind: Fault) -> Result<(), String> {
    let mode = match kind {
        Fault::Exit3 => "exit3",
        Fault::Killed => "sigkill",
        Fault::NoOutputs => "nothing",
        Fault::Empty => "empty",
        Fault::Garbage => "garbage",
        Fault::Missing | Fault::CompilerFails => "run",
    };
    let dtld_only = matches!(kind, Fault::CompilerFails);
    let linkers: &[Linker] = if dtld_only { &[Linker::Dtld] } else { &[Linker::Dtld, Linker::Lld] };
    let error = Regex::new(r"^\S+: error: (.*)$").expect("valid regex");
    let mut runs = Vec::new();
    for &linker in linkers {
        let cwd = t.inputs(&format!("work-{}", linker.name()))?;
        let rec = t.recorder(&format!("rec-{}", linker.name()), mode)?;
        let mut extra: Vec<String> = Vec::new();
        let distributor: OsString = match kind {
            Fault::Missing => t.path("tools/no-such-distributor").into_os_string(),
            Fault::CompilerFails => {
                // A remote compiler that fails silently: naming the job is up to the distributor
                // and the linker. A later --thinlto-remote-compiler= wins over clang's.
                let cc = t.write_executable("tools/failing-cc", "#!/bin/sh\nexit 1\n")?;
                extra.push(format!("-Wl,--thinlto-remote-compiler={}", cc.display()));
                t.dtld_distribute()?.into_os_string()
            }
            _ => rec.script.clone().into_os_string(),
        };
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        let argv = t.linker_argv(&cwd, linker, &distributor, &extra)?;
        fs::create_dir_all(cwd.join("tmp")).map_err(|e| e.to_string())?;
        let before = snapshot(&cwd)?;
        let out = t.run(&mut t.direct(&cwd, &argv))?;
        let stderr = out.stderr_text();
        let errors: Vec<String> = stderr.lines().filter_map(|l| error.captures(l)).map(|c| without_pids(&c[1])).collect();
        let jobs = match kind {
            Fault::Missing | Fault::CompilerFails => Vec::new(),
            _ => {
                let call = rec.one_call(&format!("the faulty {} link", linker.name()))?;
                parse_job_file(&call.text, &call.json)?
            }
        };
        runs.push(FaultRun {
            status: out.status_text(),
            first_error: errors.first().cloned(),
            errors: errors.len(),
            left: changes(&before, &snapshot(&cwd)?),
            stderr,
            jobs,
        });
    }
    let ours = &runs[0];
    let mut problems = Vec::new();
    if ours.status != "exit 1" {
        problems.push(format!("the linker under test: {}, expected exit 1", ours.status));
    }
    if !ours.stderr.lines().any(|l| t.ctx.is_error_line(l)) {
        problems.push("no error line with the expected prefix (`dtld: error: `)".to_string());
    }
    if !ours.left.is_empty() {
        problems.push(format!("files left behind or changed (the output, temporaries): {:?}", ours.left));
    }
    if let Some(lld) = runs.get(1) {
        if lld.status != "exit 1" || lld.first_error.is_none() {
            problems.push(format!("ld.lld-22: {} without an error (trial bug?)\n{}", lld.status, lld.stderr));
        } else if ours.first_error != lld.first_error {
            problems.push(format!("the first error differs from ld.lld-22's:\n  dtld: {:?}\n  lld:  {:?}", ours.first_error, lld.first_error));
        }
    }
    let names_a_module =
        |text: &str| MODULES.iter().any(|m| text.contains(m)) || ours.jobs.iter().any(|j| text.contains(&j.module) || text.contains(&j.output));
    match kind {
        Fault::NoOutputs if !t.ctx.dtld_is_lld => {
            if ours.jobs.len() != MODULES.len() {
                problems.push(format!("the job file has {} jobs, expected {} (trial bug?)", ours.jobs.len(), MODULES.len()));
            }
            let unnamed: Vec<&str> = ours.jobs.iter().filter(|j| !ours.stderr.contains(&j.output)).map(|j| j.output.as_str()).collect();
            if !unnamed.is_empty() || ours.errors < ours.jobs.len() {
                problems.push(format!("missing objects not listed one per line: {unnamed:?} ({} error lines)", ours.errors));
            }
        }
        // lld links an empty object as no code, silently; dtld does too, and warns, naming it.
        Fault::Empty
            if !t.ctx.dtld_is_lld
                && !ours.stderr.lines().any(|l| l.contains("warning: DTLTO backend compilation: native object file") && l.contains("is empty")) =>
        {
            problems.push("no warning naming an empty native object".to_string());
        }
        Fault::Empty | Fault::CompilerFails if !names_a_module(&ours.stderr) => {
            problems.push(format!("the message names no module (none of {MODULES:?} or the job file's paths)"));
        }
        _ => {}
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("{}\nstderr:\n{}", problems.join("\n"), ours.stderr))
    }
}

/// A distributor given as a bare name is looked up on `PATH` (lld 22 does not).
fn bare_name_on_path(t: &Work) -> Result<(), String> {
    let cwd = t.inputs("work")?;
    let rec = t.recorder("rec", "run")?;
    let bin = t.path("tools/bin");
    fs::create_dir_all(&bin).map_err(|e| e.to_string())?;
    fs::copy(&rec.script, bin.join("dtlto-recorder")).map_err(|e| format!("copy the recorder: {e}"))?;
    fs::set_permissions(bin.join("dtlto-recorder"), fs::Permissions::from_mode(0o755)).map_err(|e| e.to_string())?;
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut new_path = bin.clone().into_os_string();
    new_path.push(":");
    new_path.push(path);
    let before = snapshot(&cwd)?;
    let mut cmd = t.link_cmd(&cwd, Linker::Dtld, &"dtlto-recorder".into(), "prog", &[]);
    cmd.env("PATH", &new_path);
    let o = t.run(&mut cmd)?;
    if !o.success() {
        return Err(format!("the link with -fthinlto-distributor=dtlto-recorder (on PATH) failed ({}):\n{}", o.status_text(), o.stderr_text()));
    }
    let left: Vec<String> = changes(&before, &snapshot(&cwd)?).into_iter().filter(|f| f != "prog").collect();
    if !left.is_empty() {
        return Err(format!("files left besides prog: {left:?}"));
    }
    t.run_program(&cwd, "prog", EXPECTED)?;
    rec.one_call("the link").map(drop)
}

// ---- cache --------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq)]
enum Change {
    None,
    /// leaf.c: imports nothing, imported by nobody.
    Leaf,
    /// mid.c: imported by main.o and arch.o.
    Imported,
    /// Nothing changed, but the relink writes another output in another directory: the link
    /// cache (per output) misses, the thin link runs, and every backend is found in the cache
    /// all the same (its keys name no path of the link), so the distributor does not run.
    OtherOutput,
}

/// A sample profile changed under the same name: every backend reads it, so none may come from
/// the cache (then a relink with the profile unchanged again finds them all). `own_key`: with
/// `--thinlto-emit-index-files` every shard is written and the cache is keyed by dtld's own key
/// over the job's command line and files (which names the profile, not what is in it), else
/// by LLVM's key from the thin link in dtld's process (which reads the profile).
fn cache_profile(t: &Work, own_key: bool) -> Result<(), String> {
    let cwd = t.inputs("work")?;
    fs::create_dir_all(cwd.join("cache")).map_err(|e| e.to_string())?;
    let rec = t.recorder("rec", "run")?;
    let d = rec.script.clone().into_os_string();
    t.write("work/prof.txt", "main:1000:1\n 1: 100\n")?;
    let mut flags = vec!["-Wl,--thinlto-cache-dir=cache", "-Wl,--lto-sample-profile=prof.txt"];
    let mut allowed = vec!["cache", "prof.txt"];
    if own_key {
        // The index files go next to the inputs (lld refuses --thinlto-prefix-replace with
        // --thinlto-emit-index-files outside --thinlto-index-only).
        flags.push("-Wl,--thinlto-emit-index-files");
        // lld keeps the jobs' shards with --thinlto-emit-index-files.
        allowed.extend(["*.thinlto.bc"]);
    }
    let jobs_of = |k: usize| -> Result<usize, String> {
        let calls = rec.calls()?;
        if calls.len() != k + 1 {
            return Err(format!("link {} ran the distributor {} times in all, expected {}", k + 1, calls.len(), k + 1));
        }
        Ok(calls[k].json["jobs"].as_array().map_or(0, Vec::len))
    };
    t.link_and_run(&cwd, Linker::Dtld, &d, "prog", &flags, EXPECTED, &allowed)?;
    let first = jobs_of(0)?;
    if first != MODULES.len() {
        return Err(format!("the first link ran {first} jobs, expected {}", MODULES.len()));
    }
    // Same name, other contents (and the same size, so that only the bytes differ).
    t.write("work/prof.txt", "main:2000:1\n 1: 200\n")?;
    t.link_and_run(&cwd, Linker::Dtld, &d, "prog", &flags, EXPECTED, &allowed)?;
    let second = jobs_of(1)?;
    if second != MODULES.len() {
        return Err(format!("after the sample profile changed, the relink ran {second} jobs; every backend reads the profile, expected {}", MODULES.len()));
    }
    t.link_and_run(&cwd, Linker::Dtld, &d, "prog", &flags, EXPECTED, &allowed)?;
    let calls = rec.calls()?.len();
    if calls != 2 {
        return Err(format!("a relink with the profile unchanged since the last link ran the distributor again ({calls} calls in all)"));
    }
    Ok(())
}

// ---- the backend cache's keys are LLVM's (the shim's own key computation) --------------

const KEYS_SHAPES_H: &str = r#"struct Shape {
  virtual ~Shape();
  virtual int area() const = 0;
  virtual const char *name() const;
};
struct Square : Shape {
  int s;
  explicit Square(int s) : s(s) {}
  int area() const override;
  const char *name() const override;
};
struct Rect : Shape {
  int w, h;
  Rect(int w, int h) : w(w), h(h) {}
  int area() const override;
};
inline int twice(int x) { return 2 * x; }
template <typename T> T clampit(T v, T lo, T hi) { return v < lo ? lo : v > hi ? hi : v; }
Shape *make(int kind, int v);
int apply(int (*f)(int), int v);
int bump(int v);
extern int counter;
extern const int limits[4];
extern "C" int base_alias(int);
"#;

const KEYS_SHAPES_CC: &str = r#"#include "shapes.h"
Shape::~Shape() {}
const char *Shape::name() const { return "shape"; }
int Square::area() const { return twice(s) * s / 2; }
const char *Square::name() const { return "square"; }
int Rect::area() const { return clampit(w * h, 0, 1000); }
Shape *make(int kind, int v) {
  if (kind == 0)
    return new Square(v);
  return new Rect(v, v + 1);
}
"#;

const KEYS_OPS_CC: &str = r#"#include "shapes.h"
int counter;
const int limits[4] = {1, 2, 3, 4};
static int helper(int v) { return v * 3 + limits[v & 3]; }
int apply(int (*f)(int), int v) { return f(v) + helper(v); }
int bump(int v) { counter += v; return clampit(counter, 0, 50); }
extern "C" int base_impl(int x) { return x + 7; }
extern "C" int base_alias(int) __attribute__((alias("base_impl")));
"#;

const KEYS_MAIN_CC: &str = r#"#include <cstdio>
#include "shapes.h"
static int plus1(int v) { return v + 1; }
int main() {
  int total = 0;
  for (int k = 0; k < 2; ++k) {
    Shape *s = make(k, 4 + k);
    total += s->area();
    std::printf("%s %d\n", s->name(), s->area());
    delete s;
  }
  total += apply(plus1, 5) + apply(twice, 6) + bump(3) + base_alias(1) + limits[2];
  std::printf("total %d counter %d\n", total, counter);
  return 0;
}
"#;

/// dtld's DTLTO backend cache keys its jobs with LLVM's `computeLTOCacheKey`, computed by the
/// shim's own faster code (`cache_key.h`), and so does its in-process backends' cache. With `DTLD_CHECK_CACHE_KEYS=1` the shim computes
/// LLVM's key too for every module and fails the link on any difference: this links a C++
/// program that has every part the key covers (imports with their module hashes and kinds,
/// exports, resolved ODR copies, aliases, read-only and write-only variables, CFI and
/// whole-program-devirtualization type identifiers, a sample profile) with the check on.
fn keys_as_llvm(t: &Work) -> Result<(), String> {
    let cwd = t.path("keys");
    fs::create_dir_all(cwd.join("cache")).map_err(|e| e.to_string())?;
    t.write("keys/shapes.h", KEYS_SHAPES_H)?;
    t.write("keys/shapes.cc", KEYS_SHAPES_CC)?;
    t.write("keys/ops.cc", KEYS_OPS_CC)?;
    t.write("keys/main.cc", KEYS_MAIN_CC)?;
    t.write("keys/prof.txt", "main:1000:1\n 1: 100\n")?;
    let cflags = ["-flto=thin", "-O2", "-fvisibility=hidden", "-fwhole-program-vtables", "-fsanitize=cfi", "-fsanitize-trap=cfi"];
    for stem in ["shapes", "ops", "main"] {
        let mut cmd = Command::new(llvm("clang++"));
        cmd.current_dir(&cwd).arg("-c").args(cflags).arg(format!("{stem}.cc")).arg("-o").arg(format!("{stem}.o"));
        t.ok(&mut cmd)?;
    }
    // ld.lld-22's program (in-process ThinLTO) says what dtld's must print.
    let mut lld = Command::new(llvm("clang++"));
    lld.current_dir(&cwd).arg(Linker::Lld.fuse_ld(&t.ctx.dtld)).args(cflags).args(["main.o", "shapes.o", "ops.o", "-o", "prog-lld"]);
    t.ok(&mut lld)?;
    let run = t.ok(Command::new(cwd.join("prog-lld")).current_dir(&cwd))?;
    let expected = String::from_utf8_lossy(&run.stdout).into_owned();
    if !expected.contains("total ") {
        return Err(format!("ld.lld-22's program printed {expected:?}"));
    }
    let distributor = t.dtld_distribute()?;
    // DTLTO, then in-process backends (their cache's keys are computed by the same code).
    let profile = "-Wl,--lto-sample-profile=prof.txt";
    let links = [(true, None), (true, Some(profile)), (false, None), (false, Some(profile))];
    fs::create_dir_all(cwd.join("cache-in-process")).map_err(|e| e.to_string())?;
    for (i, (dtlto, extra)) in links.into_iter().enumerate() {
        let mut cmd = Command::new(llvm("clang++"));
        cmd.current_dir(&cwd).arg(Linker::Dtld.fuse_ld(&t.ctx.dtld)).args(cflags);
        if dtlto {
            let mut d = OsString::from("-fthinlto-distributor=");
            d.push(&distributor);
            cmd.arg(d).arg("-Wl,--thinlto-cache-dir=cache");
        } else {
            cmd.arg("-Wl,--thinlto-cache-dir=cache-in-process");
        }
        cmd.args(extra).args(["main.o", "shapes.o", "ops.o", "-o", "prog"]).env("DTLD_CHECK_CACHE_KEYS", "1");
        let o = t.run(&mut cmd)?;
        if !o.success() {
            return Err(format!("link {} with DTLD_CHECK_CACHE_KEYS=1 failed ({}):\n{}", i + 1, o.status_text(), o.stderr_text()));
        }
        t.run_program(&cwd, "prog", &expected)?;
    }
    for dir in ["cache", "cache-in-process"] {
        let entries = fs::read_dir(cwd.join(dir)).map_err(|e| e.to_string())?.count();
        if entries < 6 {
            return Err(format!("{dir} holds {entries} entries after two links of three modules, expected at least 6"));
        }
    }
    Ok(())
}

fn cache(t: &Work, change: Change) -> Result<(), String> {
    let cwd = t.inputs("work")?;
    fs::create_dir_all(cwd.join("cache")).map_err(|e| e.to_string())?;
    let rec = t.recorder("rec", "run")?;
    let d = rec.script.clone().into_os_string();
    let flags = ["-Wl,--thinlto-cache-dir=cache"];
    let allowed = ["cache"];
    t.link_and_run(&cwd, Linker::Dtld, &d, "prog", &flags, EXPECTED, &allowed)?;
    let first = rec.one_call("the first link (empty cache)")?;
    let first_jobs = parse_job_file(&first.text, &first.json)?;
    let map = import_map(&first_jobs, "prog");
    let ids: Vec<&str> = map.iter().map(|(m, _)| m.as_str()).collect();
    if ids != MODULES {
        return Err(format!("the first link's job file has jobs for {ids:?}, expected {MODULES:?}"));
    }
    if fs::read_dir(cwd.join("cache")).map_err(|e| e.to_string())?.count() == 0 {
        return Err("the first link left the cache directory empty".into());
    }
    let program = fs::read(cwd.join("prog")).map_err(|e| e.to_string())?;

    let mut out = "prog";
    let (expected_out, expected_jobs): (String, BTreeSet<String>) = match change {
        Change::None => (EXPECTED.to_string(), BTreeSet::new()),
        Change::OtherOutput => {
            fs::create_dir_all(cwd.join("elsewhere")).map_err(|e| e.to_string())?;
            out = "elsewhere/prog";
            (EXPECTED.to_string(), BTreeSet::new())
        }
        Change::Leaf => {
            // Guard: leaf.o must import nothing and be imported by nobody.
            let leaf = "leaf.o".to_string();
            if map.iter().any(|(m, imp)| (m == &leaf && !imp.is_empty()) || imp.contains(&leaf)) {
                return Err(format!("leaf.o is not a leaf in the first job file (trial bug?): {map:?}"));
            }
            t.write("work/leaf.c", leaf_c(200))?;
            t.ok(&mut compile_cmd(&cwd, "leaf.c", "leaf.o", &LTO_FLAGS))?;
            (EXPECTED.replace("leaf=104", "leaf=204"), [leaf].into())
        }
        Change::Imported => {
            let mid = "mid.o".to_string();
            let mut set: BTreeSet<String> = map.iter().filter(|(_, imp)| imp.contains(&mid)).map(|(m, _)| m.clone()).collect();
            if set.is_empty() {
                return Err(format!("nobody imports from mid.o in the first job file (trial bug?): {map:?}"));
            }
            set.insert(mid);
            t.write("work/mid.c", mid_c(12))?;
            t.ok(&mut compile_cmd(&cwd, "mid.c", "mid.o", &LTO_FLAGS))?;
            (EXPECTED.replace("mid=33", "mid=36").replace("arch=56", "arch=61"), set)
        }
    };
    // Another output also links with another thread count: an option of the link cache's key
    // (so its entry for the first link does not serve) that no backend sees.
    let relink_flags: Vec<&str> = match change {
        Change::OtherOutput => flags.iter().copied().chain(["-Wl,--thinlto-jobs=1"]).collect(),
        _ => flags.to_vec(),
    };
    t.link_and_run(&cwd, Linker::Dtld, &d, out, &relink_flags, &expected_out, &allowed)?;
    let calls = rec.calls()?;
    match change {
        Change::None | Change::OtherOutput => {
            if calls.len() != 1 {
                return Err(format!(
                    "a relink with every backend in the cache ran the distributor (job file: {})",
                    calls.last().map_or("", |c| c.text.as_str())
                ));
            }
            let again = fs::read(cwd.join(out)).map_err(|e| e.to_string())?;
            if again != program {
                return Err("the relink from the cache wrote a different program".into());
            }
        }
        Change::Leaf | Change::Imported => {
            if calls.len() != 2 {
                return Err(format!("the relink ran the distributor {} times, expected once", calls.len() - 1));
            }
            let jobs = parse_job_file(&calls[1].text, &calls[1].json)?;
            // A relink writes only what its jobs read: the job file, and the shards and the
            // written-out archive members of the jobs that missed the cache (the in-process
            // thin link keeps the other shards in memory).
            let job_file = Path::new(calls[1].argv.last().map_or("", String::as_str));
            let dir = job_file.parent().unwrap_or(Path::new(""));
            let existing: BTreeSet<String> =
                fs::read_dir(cwd.join(dir)).map_err(|e| e.to_string())?.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect();
            let new: BTreeSet<String> = calls[1].staged.difference(&existing).cloned().collect();
            let mut needed: BTreeSet<String> = job_file.file_name().map(|n| n.to_string_lossy().into_owned()).into_iter().collect();
            for j in calls[1].json["jobs"].as_array().into_iter().flatten() {
                for input in j["inputs"].as_array().into_iter().flatten().filter_map(Value::as_str) {
                    let p = Path::new(input);
                    let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                    if p.parent() == Some(dir) && !existing.contains(&name) {
                        needed.insert(name);
                    }
                }
            }
            if new != needed {
                return Err(format!("the relink wrote {new:?} next to its job file, expected exactly the job file and its jobs' new inputs {needed:?}"));
            }
            let got: BTreeSet<String> = jobs.iter().map(|j| module_identity(&j.module, "prog")).collect();
            if got != expected_jobs || jobs.len() != expected_jobs.len() {
                return Err(format!(
                    "the relink's job file has jobs for {got:?} ({} jobs), expected exactly {expected_jobs:?}\n\
                     first job file: {}\nrelink's job file: {}",
                    jobs.len(),
                    first.text,
                    calls[1].text
                ));
            }
        }
    }
    Ok(())
}

// ---- shards -------------------------------------------------------------------------------

/// dtld's thin link knows the modules by short IDs and gives the shards their paths back
/// (src/lto/shardpaths.rs); with --thinlto-emit-index-files it keeps LLVM's own shards. The two
/// links' shards must name the same modules with the same hashes, and every backend must
/// compile the same object from either (byte for byte).
fn renamed_shards(t: &Work) -> Result<(), String> {
    let cwd = t.inputs("work")?;
    let mut kept = Vec::new();
    for (i, extra) in [&[][..], &["-Wl,--thinlto-emit-index-files"][..]].into_iter().enumerate() {
        let rec = t.recorder(&format!("keep{i}"), "keep")?;
        let d = rec.script.clone().into_os_string();
        // --thinlto-emit-index-files writes `<module>.thinlto.bc` next to the inputs, as lld.
        let allowed = |f: &str| !extra.is_empty() && f.ends_with(".thinlto.bc");
        let before = snapshot(&cwd)?;
        let mut cmd = t.link_cmd(&cwd, Linker::Dtld, &d, "prog", extra);
        let o = t.run(&mut cmd)?;
        if !o.success() {
            return Err(format!("the link {extra:?} failed ({}):\n{}", o.status_text(), o.stderr_text()));
        }
        let left: Vec<String> = changes(&before, &snapshot(&cwd)?).into_iter().filter(|f| f != "prog" && !allowed(f)).collect();
        if !left.is_empty() {
            return Err(format!("the link {extra:?} left {left:?}"));
        }
        t.run_program(&cwd, "prog", EXPECTED)?;
        kept.push(rec.log.join("kept"));
    }
    // The kept files by name with process ids replaced (the two links ran as two processes).
    let names = |d: &Path| -> Result<BTreeMap<String, PathBuf>, String> {
        Ok(fs::read_dir(d)
            .map_err(|e| format!("{}: {e}", d.display()))?
            .filter_map(|e| e.ok())
            .map(|e| (without_pids(&e.file_name().to_string_lossy()), e.path()))
            .collect())
    };
    let (a, b) = (names(&kept[0])?, names(&kept[1])?);
    if a.keys().ne(b.keys()) || a.keys().filter(|n| n.ends_with(".native.o")).count() != MODULES.len() {
        return Err(format!("the two links' jobs differ: {:?} against {:?}", a.keys(), b.keys()));
    }
    // The module table of a shard, as LLVM reads it: (path, hash) in the table's order.
    let table = |p: &Path| -> Result<Vec<String>, String> {
        let out = t.ok(Command::new(llvm("llvm-bcanalyzer")).arg("-dump").arg(p))?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let entries: Vec<String> = text
            .lines()
            .filter(|l| l.trim_start().starts_with("<ENTRY") || l.trim_start().starts_with("<HASH"))
            .map(|l| {
                let ops = Regex::new(r"op\d+=(\d+)").expect("valid regex");
                let v: Vec<u64> = ops.captures_iter(l).filter_map(|c| c[1].parse().ok()).collect();
                if l.trim_start().starts_with("<ENTRY") {
                    format!("entry {}", v.iter().skip(1).map(|&c| c as u8 as char).collect::<String>())
                } else {
                    format!("hash {v:?}")
                }
            })
            .collect();
        if entries.is_empty() {
            return Err(format!("{}: no module table:\n{text}", p.display()));
        }
        Ok(entries)
    };
    for (n, pa) in &a {
        let pb = &b[n];
        let (x, y) = (fs::read(pa).map_err(|e| e.to_string())?, fs::read(pb).map_err(|e| e.to_string())?);
        if n.ends_with(".thinlto.bc") {
            let (tx, ty) = (table(pa)?, table(pb)?);
            // The same modules, paths and hashes (the order may differ: LLVM writes the table
            // sorted by module ID).
            let mut sx = tx.chunks(2).map(|c| without_pids(&c.join(" "))).collect::<Vec<_>>();
            let mut sy = ty.chunks(2).map(|c| without_pids(&c.join(" "))).collect::<Vec<_>>();
            sx.sort();
            sy.sort();
            if sx != sy || sx.iter().any(|e| e.contains('\u{1}')) {
                return Err(format!("{n}: renamed module table {sx:?}, LLVM's {sy:?}"));
            }
        } else if x != y {
            return Err(format!("{n}: the object compiled from the renamed shard differs from the one compiled from LLVM's"));
        }
    }
    Ok(())
}

// ---- save-temps ---------------------------------------------------------------------------

fn save_temps(t: &Work, keep: bool) -> Result<(), String> {
    let cwd = t.inputs("work")?;
    let rec = t.recorder("rec", "run")?;
    let d = rec.script.clone().into_os_string();
    if !keep {
        t.link_and_run(&cwd, Linker::Dtld, &d, "prog", &[], EXPECTED, &[])?;
        let call = rec.one_call("the link")?;
        let job_file = call.argv.last().cloned().unwrap_or_default();
        if cwd.join(&job_file).exists() {
            return Err(format!("the job file {job_file} is still there"));
        }
        return Ok(());
    }
    let mut cmd = t.link_cmd(&cwd, Linker::Dtld, &d, "prog", &["-Wl,--save-temps"]);
    let o = t.run(&mut cmd)?;
    if !o.success() {
        return Err(format!("the link with --save-temps failed ({}):\n{}", o.status_text(), o.stderr_text()));
    }
    t.run_program(&cwd, "prog", EXPECTED)?;
    let call = rec.one_call("the link")?;
    let jobs = parse_job_file(&call.text, &call.json)?;
    let job_file = call.argv.last().cloned().unwrap_or_default();
    let mut problems = Vec::new();
    match fs::read_to_string(cwd.join(&job_file)) {
        Ok(text) if text == call.text => {}
        Ok(_) => problems.push(format!("the kept job file {job_file} differs from what the distributor read")),
        Err(e) => problems.push(format!("the job file {job_file} was not kept: {e}")),
    }
    for j in &jobs {
        if !cwd.join(&j.shard).is_file() {
            problems.push(format!("the shard {} was not kept", j.shard));
        }
        match fs::read(cwd.join(&j.output)) {
            Ok(bytes) if bytes.starts_with(b"\x7fELF") => {}
            Ok(_) => problems.push(format!("the kept native object {} is not ELF", j.output)),
            Err(e) => problems.push(format!("the native object {} was not kept: {e}", j.output)),
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("{}\njob file: {}", problems.join("\n"), call.text))
    }
}

// ---- signals ------------------------------------------------------------------------------

/// Sends `sig` to the linker (or to its process group, as Ctrl-C does) while a distributor that
/// sleeps 5 s and writes nothing is running.
fn signal(t: &Work, sig: i32, group: bool) -> Result<(), String> {
    let cwd = t.inputs("work")?;
    let rec = t.recorder("rec", "sleep")?;
    let argv = t.linker_argv(&cwd, Linker::Dtld, &rec.script.clone().into_os_string(), &[])?;
    fs::create_dir_all(cwd.join("tmp")).map_err(|e| e.to_string())?;
    let before = snapshot(&cwd)?;
    let mut cmd = t.direct(&cwd, &argv);
    // Its own process group, so that a group signal reaches the linker and the distributor
    // but not this test.
    cmd.process_group(0).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
    t.note(&cmd);
    let mut child = cmd.spawn().map_err(|e| format!("cannot run {}: {e}", argv[0]))?;
    let mut err_pipe = child.stderr.take().expect("stderr piped");
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = err_pipe.read_to_end(&mut buf);
        buf
    });
    let pid = child.id() as i32;

    // Wait for the distributor to start.
    let start = Instant::now();
    let call = loop {
        if let Some(c) = rec.calls()?.into_iter().next() {
            break Some(c);
        }
        if child.try_wait().map_err(|e| e.to_string())?.is_some() || start.elapsed() > Duration::from_secs(60) {
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let Some(call) = call else {
        let _ = child.kill();
        let status = child.wait().map_err(|e| e.to_string())?;
        let stderr = String::from_utf8_lossy(&reader.join().unwrap_or_default()).into_owned();
        return Err(format!("the distributor never started (linker: {status:?}):\n{stderr}"));
    };
    let target = if group { -pid } else { pid };
    // SAFETY: kill(2) with a pid (or process group) this test started.
    unsafe {
        libc::kill(target, sig);
    }
    let sent = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            break Some(s);
        }
        if sent.elapsed() > Duration::from_secs(10) {
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let took = sent.elapsed();
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    // The distributor may outlive the linker (a signal to the linker alone): stop it, so that
    // it cannot touch the directory any more.
    stop_process(call.pid, &rec.script);
    let stderr = String::from_utf8_lossy(&reader.join().unwrap_or_default()).into_owned();
    let after = snapshot(&cwd)?;
    let mut problems = Vec::new();
    match status {
        None => problems.push("the linker did not exit within 10 s of the signal".to_string()),
        Some(s) if s.success() => problems.push("the linker exited 0 after the signal".into()),
        Some(_) if took > Duration::from_millis(2500) => {
            problems.push(format!("the linker took {:.1} s to exit after the signal, expected at most ~2 s", took.as_secs_f64()))
        }
        Some(_) => {}
    }
    let left = changes(&before, &after);
    if !left.is_empty() {
        problems.push(format!("files left behind: {left:?}"));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("{} (linker status {status:?})\nstderr:\n{stderr}", problems.join("\n")))
    }
}

/// Kills `pid` if it is still the recorder `script` (checked through /proc, so that a reused
/// pid is left alone) and waits until it is gone.
fn stop_process(pid: u32, script: &Path) {
    let cmdline = format!("/proc/{pid}/cmdline");
    let is_ours = || {
        fs::read(&cmdline).is_ok_and(|c| {
            let needle = script.as_os_str().as_encoded_bytes();
            c.windows(needle.len()).any(|w| w == needle)
        })
    };
    if pid == 0 || !is_ours() {
        return;
    }
    // SAFETY: kill(2) of the distributor this trial started (verified above).
    unsafe {
        libc::kill(pid as i32, libc::SIGKILL);
    }
    let start = Instant::now();
    while is_ours() && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(10));
    }
}

// ---- concurrency --------------------------------------------------------------------------

fn concurrent(t: &Work) -> Result<(), String> {
    let cwd = t.inputs("work")?;
    let rec = t.recorder("rec", "run")?;
    let before = snapshot(&cwd)?;
    let outs = ["prog1", "prog2", "prog3", "prog4"];
    let cmds: Vec<Command> = outs.iter().map(|o| t.link_cmd(&cwd, Linker::Dtld, &rec.script.clone().into_os_string(), o, &[])).collect();
    for c in &cmds {
        t.note_background(c);
    }
    let results: Vec<Result<Outcome, String>> = std::thread::scope(|s| {
        let handles: Vec<_> = cmds.into_iter().map(|mut c| s.spawn(move || run_tool(&mut c))).collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("thread panicked".into()))).collect()
    });
    let mut problems = Vec::new();
    for (out, r) in outs.iter().zip(results) {
        let r = r?;
        if !r.success() {
            problems.push(format!("the link of {out} failed ({}):\n{}", r.status_text(), r.stderr_text()));
        } else if let Err(e) = t.run_program(&cwd, out, EXPECTED) {
            problems.push(e);
        }
    }
    let left: Vec<String> = changes(&before, &snapshot(&cwd)?).into_iter().filter(|f| !outs.contains(&f.as_str())).collect();
    if !left.is_empty() {
        problems.push(format!("files left besides the programs: {left:?}"));
    }
    let calls = rec.calls()?;
    let files: BTreeSet<&str> = calls.iter().filter_map(|c| c.argv.last().map(String::as_str)).collect();
    if calls.len() != outs.len() || files.len() != outs.len() {
        problems.push(format!("{} distributor runs with {} distinct job files, expected {} of each", calls.len(), files.len(), outs.len()));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// The path normalisation the job-file comparisons rely on, on names seen from both linkers.
fn identities(_: &Work) -> Result<(), String> {
    let cases = [
        ("main.o", "main.o"),
        ("lib/thin.o", "thin.o"),
        ("libarch.a(arch.o at 84).4.1D16.o", "arch.o"),
        ("prog.dtld-lto/6e9c37d19279c63a/libarch.a(arch.o at 84).o", "arch.o"),
        ("prog.dtld-lto/18944eb01577e022/lib/libthin.a(thin.o at 152).o", "thin.o"),
        ("prog.dtld-lto/48f39467fb40c176/main.o", "main.o"),
        ("prog.dtld-lto/6e9c37d19279c63a-libarch.a(arch.o at 84).o", "arch.o"),
        ("prog.dtld-lto/48f39467fb40c176-main.o", "main.o"),
        ("prog.dtld-lto/48f39467fb40c176-2-main.o", "main.o"),
        ("prog.dtld-lto/48f39467fb40c176-main.o.native.o", "main.o"),
        ("prog.dtld-lto/main.o", "main.o"),
        ("mid.2.7446.native.o", "mid"),
        ("prog.dtld-lto/x/mid.o.native.o", "mid.o"),
    ];
    let mut wrong: Vec<String> = cases
        .iter()
        .filter(|(p, want)| module_identity(p, "prog") != *want)
        .map(|(p, want)| format!("{p} -> {} (expected {want})", module_identity(p, "prog")))
        .collect();
    let pids = [
        (
            "libarch.a(arch.o at 84).4.DB8.4.3512.native.o.thinlto.bc main.1.77.native.o prog.3512.dist-file.json",
            "libarch.a(arch.o at 84).4.HEXPID.4.PID.native.o.thinlto.bc main.1.PID.native.o prog.PID.dist-file.json",
        ),
        ("sub/libarch.a(arch.o at 84).4.1A2B.o", "sub/libarch.a(arch.o at 84).4.HEXPID.o"),
        ("main.o mid.2.99.native.o", "main.o mid.2.PID.native.o"),
        ("leaf.libleaf.obj0.2.7296.2.55.native.o leaf.libleaf.obj0.2.72BC.o", "leaf.libleaf.obj0.2.HEXPID.2.PID.native.o leaf.libleaf.obj0.2.HEXPID.o"),
    ];
    wrong.extend(pids.iter().filter(|(p, want)| without_pids(p) != *want).map(|(p, want)| format!("{p} -> {} (expected {want})", without_pids(p))));
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(wrong.join("\n"))
    }
}

// ---- the staging directory cannot be redirected (issue 18) ---------------------------------

#[derive(Clone, Copy)]
enum Plant {
    Symlink,
    File,
}

/// Every file under `dir` with its contents (a victim directory's state).
fn tree_state(dir: &Path) -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut out = Vec::new();
    for e in walkdir(dir)? {
        let data = fs::read(&e).unwrap_or_default();
        out.push((e.strip_prefix(dir).unwrap_or(&e).display().to_string(), data));
    }
    out.sort();
    Ok(out)
}

fn walkdir(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in fs::read_dir(&d).map_err(|e| format!("read_dir {}: {e}", d.display()))? {
            let e = e.map_err(|e| e.to_string())?;
            let ft = e.file_type().map_err(|e| e.to_string())?;
            if ft.is_dir() {
                todo.push(e.path());
            }
            out.push(e.path());
        }
    }
    Ok(out)
}

/// How `planted`'s link runs LTO.
#[derive(Clone, Copy, PartialEq, Eq)]
enum LtoMode {
    /// DTLTO with dtld-distribute and the thin link by `llvm-lto2` (`DTLD_THIN_LINK=llvm-lto2`;
    /// its inputs staged in `prog.dtld-lto`).
    Dtlto,
    /// DTLTO with the thin link in dtld's process (the default; stages nothing: the jobs read
    /// the inputs and lld's temporaries).
    DtltoLibrary,
    /// In-process ThinLTO by `llvm-lto2` (`DTLD_THIN_LINK=llvm-lto2`; staged in `prog.dtld-lto`).
    InProcessLto2,
    /// In-process ThinLTO in dtld's process through its library (the default; stages nothing).
    InProcessLibrary,
}

/// `prog.dtld-lto` planted before the link (a symlink to another directory, or a file): the
/// link fails with an error naming it, writes nothing into the link's target, and leaves the
/// planted entry as it was (it is not dtld's to remove). In-process ThinLTO through dtld's
/// library stages nothing: that link succeeds, and the planted entry and its target stay as
/// they were all the same.
fn planted(t: &Work, plant: Plant, mode: LtoMode) -> Result<(), String> {
    let dtlto = matches!(mode, LtoMode::Dtlto | LtoMode::DtltoLibrary);
    let staged = matches!(mode, LtoMode::Dtlto | LtoMode::InProcessLto2);
    let cwd = t.inputs("work")?;
    let victim = t.path("victim");
    fs::create_dir_all(&victim).map_err(|e| e.to_string())?;
    fs::write(victim.join("keep.txt"), "precious\n").map_err(|e| e.to_string())?;
    let staging = cwd.join("prog.dtld-lto");
    let victim_before = tree_state(&victim)?;
    let distributor = t.dtld_distribute()?.into_os_string();
    let mut argv = t.linker_argv(&cwd, Linker::Dtld, &distributor, &[])?;
    if !dtlto {
        argv.retain(|a| !a.starts_with("--thinlto-distributor") && !a.starts_with("--thinlto-remote-compiler"));
    }
    fs::create_dir_all(cwd.join("tmp")).map_err(|e| e.to_string())?;
    // The planted entry is not in the snapshots (which would read through the link).
    let before = snapshot(&cwd)?;
    match plant {
        Plant::Symlink => std::os::unix::fs::symlink(&victim, &staging).map_err(|e| e.to_string())?,
        Plant::File => fs::write(&staging, "planted\n").map_err(|e| e.to_string())?,
    }
    let mut cmd = t.direct(&cwd, &argv);
    if staged {
        cmd.env("DTLD_THIN_LINK", "llvm-lto2");
    } else {
        cmd.arg("--verbose");
    }
    let out = t.run(&mut cmd)?;
    let meta = fs::symlink_metadata(&staging).map_err(|e| format!("the planted {} was removed: {e}", staging.display()))?;
    let _ = fs::remove_file(&staging);
    let after = snapshot(&cwd)?;
    let stderr = out.stderr_text();
    let mut problems = Vec::new();
    if out.status_text() != if staged { "exit 1" } else { "exit 0" } {
        problems.push(format!("the link: {}, expected {}", out.status_text(), if staged { "exit 1" } else { "exit 0" }));
    }
    let want = match plant {
        Plant::Symlink => "prog.dtld-lto as the staging directory: it is a symbolic link",
        Plant::File => "prog.dtld-lto as the staging directory: it exists and is not a directory",
    };
    if staged && !stderr.lines().any(|l| t.ctx.is_error_line(l) && l.contains(want)) {
        problems.push(format!("no error line saying `{want}`"));
    }
    if !staged && !stderr.contains("dtld: thinlto: thin link in process") {
        problems.push("--verbose does not say that the thin link ran in dtld's process".into());
    }
    if tree_state(&victim)? != victim_before {
        problems.push(format!("the link wrote into the symlink's target: {:?}", walkdir(&victim)?));
    }
    let left = changes(&before, &after);
    let expected: &[&str] = if staged { &[] } else { &["prog"] };
    if left != expected {
        problems.push(format!("files left behind or changed: {left:?} (expected {expected:?})"));
    }
    match plant {
        Plant::Symlink if !meta.file_type().is_symlink() => problems.push("the planted symlink was replaced".into()),
        Plant::File if !meta.is_file() => problems.push("the planted file was replaced".into()),
        _ => {}
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("{}\nstderr:\n{stderr}", problems.join("\n")))
    }
}

/// A stale `prog.dtld-lto` of the user's (left by `--save-temps` of an older dtld, mode 0755,
/// with files in it) where a DTLTO link whose thin link runs in `llvm-lto2` stages its inputs:
/// reused (emptied and made private: `staging.rs`'s unit tests), and gone after the link.
fn private_dir(t: &Work) -> Result<(), String> {
    let cwd = t.inputs("work")?;
    let staging = cwd.join("prog.dtld-lto");
    fs::create_dir_all(staging.join("old")).map_err(|e| e.to_string())?;
    fs::write(staging.join("old/stale.o"), "stale").map_err(|e| e.to_string())?;
    fs::set_permissions(&staging, fs::Permissions::from_mode(0o755)).map_err(|e| e.to_string())?;
    let distributor = t.dtld_distribute()?.into_os_string();
    let argv = t.linker_argv(&cwd, Linker::Dtld, &distributor, &[])?;
    let out = t.run(t.direct(&cwd, &argv).env("DTLD_THIN_LINK", "llvm-lto2"))?;
    if !out.success() {
        return Err(format!("the link failed ({}):\n{}", out.status_text(), out.stderr_text()));
    }
    if staging.exists() {
        return Err("the staging directory was left behind".into());
    }
    t.run_program(&cwd, "prog", EXPECTED)
}
